//! What every fabric shape answers ([`ShapeRules`]), and the one list of shapes ([`Shape`],
//! written through `shapes!`): a new topology is one file implementing the trait (plus its
//! numbering and `wiring()`), one line in that list and its branch in `Fabric::try_build`.
//!
//! Dispatch is a `match` per method that the macro writes over the list (static, no
//! `Box<dyn>`: `route` is called at every switch hop).

use super::{expander, fat_tree, leaf_spine, opera, pgft, NodeId, Route};

/// A shape's addressing and routing, for the fault-free fabric at any time (Opera's
/// time-varying routes are `Fabric::route`'s own branch).
pub(crate) trait ShapeRules {
    /// Where switch `n` may forward a packet for host `dst` on a shortest path.
    fn route(&self, n: NodeId, dst: NodeId) -> Route<'_>;
    /// The uplinks of switch `n` below the top tier, whatever the destination.
    fn route_up(&self, n: NodeId) -> Route<'_>;
    /// `dst`'s subtree of height `level` (index, count of subtrees with hosts).
    fn subtree(&self, dst: NodeId, level: u8) -> (u32, u32);
    /// Tier of the lowest common ancestors of hosts `a` and `b`.
    fn lca_tier(&self, a: NodeId, b: NodeId) -> u8;
    /// Uplinks of every switch of tier `t` below the top.
    fn tier_uplinks(&self, t: u8) -> u16;
    /// The partitioning group of node `n` (`None`: a top-layer switch).
    fn group_of(&self, n: NodeId, fine: bool) -> Option<u32>;
    /// Number of partitioning groups.
    fn num_groups(&self, fine: bool) -> u32;
}

/// Writes [`Shape`] with one variant per line and its `ShapeRules` impl, each method a
/// `match` over the variants.
macro_rules! shapes {
    ($($(#[$doc:meta])* $variant:ident($ty:ty),)*) => {
        /// Topology-specific addressing and routing: one variant per fabric shape.
        #[derive(Clone, Debug)]
        pub(super) enum Shape {
            $($(#[$doc])* $variant($ty),)*
        }

        impl ShapeRules for Shape {
            #[inline]
            fn route(&self, n: NodeId, dst: NodeId) -> Route<'_> {
                match self { $(Shape::$variant(s) => s.route(n, dst),)* }
            }
            #[inline]
            fn route_up(&self, n: NodeId) -> Route<'_> {
                match self { $(Shape::$variant(s) => s.route_up(n),)* }
            }
            #[inline]
            fn subtree(&self, dst: NodeId, level: u8) -> (u32, u32) {
                match self { $(Shape::$variant(s) => s.subtree(dst, level),)* }
            }
            fn lca_tier(&self, a: NodeId, b: NodeId) -> u8 {
                match self { $(Shape::$variant(s) => s.lca_tier(a, b),)* }
            }
            fn tier_uplinks(&self, t: u8) -> u16 {
                match self { $(Shape::$variant(s) => s.tier_uplinks(t),)* }
            }
            fn group_of(&self, n: NodeId, fine: bool) -> Option<u32> {
                match self { $(Shape::$variant(s) => s.group_of(n, fine),)* }
            }
            fn num_groups(&self, fine: bool) -> u32 {
                match self { $(Shape::$variant(s) => s.num_groups(fine),)* }
            }
        }
    };
}

shapes! {
    /// Three-level k-ary fat tree (`fat_tree.rs`).
    FatTree(fat_tree::FatTree),
    /// Two-level leaf-spine (`leaf_spine.rs`).
    LeafSpine(leaf_spine::LeafSpine),
    /// Parallel Generalized Fat-Tree (`pgft/`).
    Pgft(pgft::Pgft),
    /// Opera's rotor fabric (`opera/`).
    Opera(Box<opera::OperaFabric>),
    /// Static expander (`expander.rs`).
    Expander(Box<expander::Expander>),
}
