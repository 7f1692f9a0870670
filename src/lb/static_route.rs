//! Static routings as switch policies (`lb.policy = "dmodk" | "smodk" | "gdmodk" | "gsmodk" |
//! "random"`): the switch takes the port `topology/pgft/routing.rs` fixes for the packet's
//! (source, destination), up and over parallel down links. They run on any fabric that is a
//! PGFT (fat trees and leaf-spines included; without node types the grouped variants equal
//! the plain ones). Under link failures the routing's port is taken when valid, else the
//! next valid one in the fault-free order (as the rotations do).

use super::switch_policy::{all_candidates, first_valid};
use super::switch_policy::{BuildSwitch, QueueView, SwitchCtx, SwitchPolicy};
use super::LbShared;
use crate::scenario::{LbConfig, LbPolicy};
use crate::topology::pgft::routing::{StaticRouting, STATIC_ROUTINGS};
use crate::topology::{Candidates, Fabric, NodeId};
use rand_pcg::Pcg32;

/// One routing per static policy the run uses (`lb.policy` or an `lb.mixed` entry).
pub(crate) fn routings(
    cfg: &LbConfig,
    fabric: &Fabric,
    seed: u64,
) -> Vec<(LbPolicy, StaticRouting)> {
    let used = |p: LbPolicy| cfg.policy == p || cfg.mixed.iter().any(|m| m.policy == p);
    STATIC_ROUTINGS
        .into_iter()
        .filter(|&p| used(p))
        .map(|p| {
            let g = fabric
                .as_pgft()
                .expect("validated: static routings need a (P)GFT");
            (p, StaticRouting::new(p, g, fabric.host_types(), seed))
        })
        .collect()
}

/// Index into `LbShared::static_routes` of `policy`'s routing.
pub(crate) fn index_of(shared: &LbShared, policy: LbPolicy) -> u8 {
    shared
        .static_routes
        .iter()
        .position(|(p, _)| *p == policy)
        .expect("a routing for every static policy in use") as u8
}

/// The port among `all` (the fault-free candidates) the routing fixes for this packet, as
/// an index into `all`.
#[inline]
pub(crate) fn choose(
    r: &StaticRouting,
    node: NodeId,
    src: NodeId,
    dst: NodeId,
    all: Candidates<'_>,
) -> u16 {
    let port = r.port(node, src, dst);
    let first = all.get(0);
    assert!(
        port >= first && port < first + all.len(),
        "static routing: port {port} of switch {node} is not among {all:?}"
    );
    port - first
}

/// A static routing at a switch: its index into `LbShared::static_routes`.
#[derive(serde::Serialize, serde::Deserialize)]
pub(crate) struct Static {
    index: u8,
}

impl SwitchPolicy for Static {
    /// The routing's port, or under failures the next valid one after it.
    #[inline]
    fn choose<Q: QueueView>(&mut self, ctx: &mut SwitchCtx<'_, Q>) -> u16 {
        let (c, pkt) = (ctx.candidates, ctx.pkt);
        let r = &ctx.shared.static_routes[self.index as usize].1;
        let all = all_candidates(ctx.fabric, ctx.node, pkt.dst, c);
        let i = choose(r, ctx.node, pkt.src, pkt.dst, all);
        let w = all.len();
        let mut k = 0;
        first_valid(all, c, || {
            k += 1;
            (i + k - 1) % w
        })
    }
}

impl BuildSwitch for Static {
    fn build(policy: LbPolicy, shared: &LbShared, _: &Fabric, _: NodeId, _: &mut Pcg32) -> Self {
        Static {
            index: index_of(shared, policy),
        }
    }
}
