//! Valiant load balancing (VLB, ALGORITHMS.md A16): every data packet goes through a
//! uniformly random intermediate top-tier switch (a core in a fat tree, a spine in a
//! leaf-spine), even when its destination shares its pod or its ToR (non-minimal), then down
//! to the destination.
//!
//! The sender draws the intermediate per packet (`lb.valiant_granularity = "packet"`,
//! default) or once per flow (`"flow"`) from its own stream, and names it by a path code in
//! DRB's mixed radix (`drb.rs`): the switch of tier t takes uplink digit_t(code), so the
//! codes 0..(product of the uplink counts below the top) reach every top-tier switch exactly
//! once (fat tree: edge uplink a to aggregation a, its uplink c to core (a, c)). The packet
//! carries [`flags::VALIANT_UP`] while climbing: a switch below the top sends it up its
//! uplinks by the code's digit whatever the destination ([`route`]); the top-tier switch
//! clears the flag, and the packet descends by the ordinary (unique) down route. Each leg is
//! thus minimal; the whole path is not: 2·top hops even between hosts of one ToR.
//!
//! ACKs (and NACKs) carry no code: they take the minimal route, ECMP-hashed per flow.
//!
//! Shortest-path quantities (base RTT, BDP, the CCT lower bound) stay those of the minimal
//! path: the lower bound is still a bound, and the CCT increase includes Valiant's detour.

use super::drb::digit_divisor;
use crate::packet::{flags, Packet, NO_VIA};
use crate::topology::{Fabric, NodeId, Route};
use rand::Rng;
use rand_pcg::Pcg32;

/// The number of intermediates (top-tier switches reachable as distinct codes).
pub fn intermediates(fabric: &Fabric) -> u32 {
    digit_divisor(fabric, fabric.top_tier())
}

/// The path code of the next data packet of a flow whose drawn code is `pointer`
/// (`u32::MAX`: not yet drawn): a fresh uniform draw per packet, or the flow's one.
pub fn next_via(
    fabric: &Fabric,
    src: NodeId,
    dst: NodeId,
    per_flow: bool,
    pointer: &mut u32,
    rng: &mut Pcg32,
) -> u32 {
    let n = intermediates(fabric);
    if n <= 1 {
        return NO_VIA; // one top-tier switch: the minimal route already climbs to it
    }
    if !per_flow {
        return draw(fabric, src, dst, n, rng);
    }
    if *pointer == u32::MAX {
        *pointer = draw(fabric, src, dst, n, rng);
    }
    *pointer
}

/// A uniform draw among the intermediates; under link failures, among those the source
/// reaches by its code's uplinks and that reach the destination (redrawn until one does, so
/// the draw stays uniform over the valid ones).
fn draw(fabric: &Fabric, src: NodeId, dst: NodeId, n: u32, rng: &mut Pcg32) -> u32 {
    for _ in 0..64 * n {
        let code = rng.gen_range(0..n);
        if !fabric.has_failures() || valid(fabric, src, dst, code) {
            return code;
        }
    }
    panic!(
        "no valid Valiant intermediate from {src} to {dst} in {} draws",
        64 * n
    )
}

/// Whether every uplink code `code` climbs through from `src` is live and the top-tier
/// switch it reaches still reaches `dst`.
fn valid(fabric: &Fabric, src: NodeId, dst: NodeId, code: u32) -> bool {
    let mut n = fabric.peer(src, 0, 0).0;
    while fabric.tier(n) < fabric.top_tier() {
        let Route::Choice(up) = fabric.route_up(n, 0) else {
            unreachable!("a switch below the top has uplinks")
        };
        let digit = (code / digit_divisor(fabric, fabric.tier(n))) % up.len() as u32;
        let p = up.get(digit as u16);
        if fabric.is_link_down(n, p) {
            return false;
        }
        n = fabric.peer(n, p, 0).0;
    }
    fabric.reaches(n, dst)
}

/// Where switch `node` sends a climbing packet (its flag set): up, or at the top tier down
/// by the ordinary route, clearing the flag.
#[inline]
pub fn route<'a>(fabric: &'a Fabric, node: NodeId, pkt: &mut Packet, now_ps: u64) -> Route<'a> {
    if fabric.tier(node) >= fabric.top_tier() {
        pkt.flags &= !flags::VALIANT_UP;
        return fabric.route(node, pkt.dst, now_ps);
    }
    fabric.route_up(node, now_ps)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::packet::{test_packet, PacketKind};
    use crate::rng::{stream, Purpose};
    use crate::scenario::TopologyKind;

    use crate::topology::test_fabric as fabric;

    /// Walks a data packet with code `via` from `src` to `dst` as the switches forward it
    /// (FollowPath's digit at each choice): the nodes visited, the destination last.
    fn walk(f: &Fabric, src: NodeId, dst: NodeId, via: u32) -> Vec<NodeId> {
        let mut pkt = test_packet(PacketKind::Data, 4158);
        (pkt.src, pkt.dst, pkt.via, pkt.flags) = (src, dst, via, flags::VALIANT_UP);
        let mut n = f.peer(src, 0, 0).0;
        let mut seen = vec![];
        while n != dst {
            seen.push(n);
            let r = if pkt.flags & flags::VALIANT_UP != 0 {
                route(f, n, &mut pkt, 0)
            } else {
                f.route(n, dst, 0)
            };
            let p = match r {
                Route::Port(p) => p,
                Route::Choice(c) => {
                    let below = digit_divisor(f, f.tier(n));
                    c.get(((via / below) % c.len() as u32) as u16)
                }
            };
            n = f.peer(n, p, 0).0;
            assert!(seen.len() <= 8, "loop from {src} to {dst}");
        }
        seen.push(dst);
        seen
    }

    /// ALGORITHMS.md A16: every packet traverses a top-tier switch, even between hosts of
    /// one ToR, on a path of 2·top links (each leg minimal), and reaches its destination.
    #[test]
    fn every_packet_climbs_to_the_top_even_under_one_tor() {
        for (kind, k) in [(TopologyKind::FatTree, 4), (TopologyKind::LeafSpine, 6)] {
            let f = fabric(kind, k);
            let top = f.top_tier();
            let n = intermediates(&f);
            for (src, dst) in [(0, 1), (0, 2), (0, f.num_hosts - 1), (3, 0)] {
                for via in 0..n {
                    let path = walk(&f, src, dst, via);
                    let tops = path.iter().filter(|&&x| f.tier(x) == top).count();
                    assert_eq!(tops, 1, "{kind:?} {src}->{dst} via {via}: {path:?}");
                    // Nodes after the host: 2·top − 1 switches, then the destination.
                    assert_eq!(path.len(), 2 * top as usize, "{path:?}");
                    assert_eq!(*path.last().unwrap(), dst);
                }
            }
        }
    }

    /// ALGORITHMS.md A16: the intermediate is uniform over the top tier. k = 8 fat tree:
    /// 16 cores; 32 000 packets per pair (same ToR, 0 → 1) land 2 000 per core, binomial
    /// s.d. √(32 000·(1/16)·(15/16)) = 43.3; each count within 4.5 s.d. (±195), and every
    /// code reaches a distinct core.
    #[test]
    fn the_intermediate_is_uniform_over_the_top_tier() {
        let f = fabric(TopologyKind::FatTree, 8);
        assert_eq!(intermediates(&f), 16);
        let core_of = |via| {
            walk(&f, 0, 1, via)
                .into_iter()
                .find(|&x| f.tier(x) == 3)
                .unwrap()
        };
        let cores: std::collections::BTreeSet<_> = (0..16).map(core_of).collect();
        assert_eq!(cores.len(), 16, "codes map one to one onto cores");
        let mut rng = stream(7, 0, Purpose::HostLb);
        let mut counts = std::collections::BTreeMap::new();
        let mut unused = u32::MAX;
        for _ in 0..32_000 {
            let via = next_via(&f, 0, 1, false, &mut unused, &mut rng);
            *counts.entry(core_of(via)).or_insert(0u32) += 1;
        }
        assert_eq!(counts.len(), 16);
        for (core, c) in counts {
            assert!((1_805..=2_195).contains(&c), "core {core}: {c}");
        }
    }

    #[test]
    fn per_flow_keeps_one_intermediate() {
        let f = fabric(TopologyKind::FatTree, 8);
        let mut rng = stream(3, 0, Purpose::HostLb);
        let mut pointer = u32::MAX;
        let first = next_via(&f, 0, 1, true, &mut pointer, &mut rng);
        assert!(first < 16);
        assert!((0..100).all(|_| next_via(&f, 0, 1, true, &mut pointer, &mut rng) == first));
    }
}
