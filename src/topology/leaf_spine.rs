//! Two-level leaf-spine: `leaves` leaves with `hosts_per_leaf` hosts and one uplink to each
//! of `spines` spines; by default built from k-port switches: k leaves with k/2 hosts and k/2
//! uplinks each, k/2 spines with one port per leaf (k^2/2 hosts).
//!
//! Numbering (h = hosts per leaf): hosts `0..leaves*h`; leaves `L0 + l`; spines `S0 + s`.
//! Leaf ports `0..h` down, `h + s` up to spine s; spine port l goes to leaf l.

use super::shape::ShapeRules;
use super::{Candidates, NodeId, Route, Wiring};

pub(super) const STAGES: &[&str] = &["host_leaf", "leaf_spine", "spine_leaf", "leaf_host"];

#[derive(Clone, Copy, Debug)]
pub(super) struct LeafSpine {
    leaves: u32,
    spines: u32,
    /// Hosts per leaf.
    h: u32,
    l0: u32,
    s0: u32,
}

impl LeafSpine {
    pub(super) fn new(leaves: u32, spines: u32, hosts_per_leaf: u32) -> LeafSpine {
        let h = hosts_per_leaf;
        LeafSpine {
            leaves,
            spines,
            h,
            l0: leaves * h,
            s0: leaves * h + leaves,
        }
    }
    pub(super) fn num_hosts(&self) -> u32 {
        self.l0
    }

    pub(super) fn wiring(&self) -> Wiring {
        let (leaves, spines, h) = (self.leaves, self.spines, self.h);
        let mut tiers = vec![];
        let mut ports = vec![];
        for x in 0..self.l0 {
            tiers.push(0);
            ports.push(vec![(self.l0 + x / h, (x % h) as u16, 0u8)]);
        }
        for l in 0..leaves {
            tiers.push(1);
            let mut p: Vec<_> = (0..h).map(|i| (l * h + i, 0u16, 0u8)).collect();
            p.extend((0..spines).map(|s| (self.s0 + s, l as u16, 1u8)));
            ports.push(p);
        }
        for s in 0..spines {
            tiers.push(2);
            ports.push(
                (0..leaves)
                    .map(|l| (self.l0 + l, (h + s) as u16, 1u8))
                    .collect(),
            );
        }
        Wiring {
            node_tier: tiers,
            ports,
        }
    }

    pub(super) fn leaf_of(&self, n: NodeId) -> Option<u32> {
        if n < self.l0 {
            Some(n / self.h)
        } else if n < self.s0 {
            Some(n - self.l0)
        } else {
            None
        }
    }

    /// The same fabric as PGFT(2; hosts per leaf, leaves; 1, spines; 1, 1).
    pub(super) fn as_pgft(&self) -> super::pgft::Pgft {
        super::pgft::Pgft::leaf_spine(self.leaves, self.spines, self.h)
    }
}

impl ShapeRules for LeafSpine {
    #[inline]
    fn route(&self, n: NodeId, dst: NodeId) -> Route<'_> {
        let h = self.h;
        if n < self.s0 {
            if dst / h == n - self.l0 {
                Route::Port((dst % h) as u16)
            } else {
                Route::Choice(Candidates::Range {
                    first: h as u16,
                    count: self.spines as u16,
                })
            }
        } else {
            Route::Port((dst / h) as u16)
        }
    }

    /// Every uplink of leaf switch `n` (ports `h..h + spines`).
    #[inline]
    fn route_up(&self, _n: NodeId) -> Route<'_> {
        Route::Choice(Candidates::Range {
            first: self.h as u16,
            count: self.spines as u16,
        })
    }

    /// Index and count of the subtrees of height `level` that contain hosts: leaves.
    #[inline]
    fn subtree(&self, dst: NodeId, _level: u8) -> (u32, u32) {
        (dst / self.h, self.leaves)
    }

    /// Tier of the lowest switches that are common ancestors of hosts `a` and `b`.
    fn lca_tier(&self, a: NodeId, b: NodeId) -> u8 {
        if a / self.h == b / self.h {
            1
        } else {
            2
        }
    }

    fn group_of(&self, n: NodeId, _fine: bool) -> Option<u32> {
        self.leaf_of(n)
    }

    /// Leaves, at any granularity.
    fn num_groups(&self, _fine: bool) -> u32 {
        self.leaves
    }

    /// Uplinks of a switch of tier `t` (1 = leaf).
    fn tier_uplinks(&self, _t: u8) -> u16 {
        self.spines as u16
    }
}
