//! Valiant load balancing (VLB; Valiant and Brebner 1981, VL2): every data packet goes through a
//! uniformly random intermediate top-tier switch (a core in a fat tree, a spine in a
//! leaf-spine), even when its destination shares its pod or its ToR (non-minimal), then down
//! to the destination.
//!
//! The sender draws the intermediate per packet (`lb.valiant.granularity = "packet"`,
//! default) or once per flow (`"flow"`) from its own stream, and names it by a path code in
//! DRB's mixed radix (`drb.rs`): the switch of tier t takes uplink digit_t(code), so the
//! codes 0..(product of the uplink counts below the top) reach every top-tier switch exactly
//! once (fat tree: edge uplink a to aggregation a, its uplink c to core (a, c)). The packet
//! carries [`flags::VALIANT_UP`] while climbing: a switch below the top sends it up its
//! uplinks by the code's digit whatever the destination ([`route`]); the top-tier switch
//! clears the flag, and the packet descends by the ordinary (unique) down route. Each leg is
//! thus minimal; the whole path is not: 2·top hops even between hosts of one ToR.
//!
//! `lb.valiant.intermediates` (all cores by default, or a subset) lists the top-tier
//! switches (node ids) to draw from, uniformly; empty: all of them. The list becomes the
//! codes that reach those switches ([`codes_of`]: a code reaches the same top-tier switch
//! from every source, the fabric's wiring being the same in every pod), so a subset costs
//! one index per draw. Under link failures the draw is uniform over the listed
//! intermediates still valid for the pair; `Model::build` refuses a list that leaves some
//! pair of edge switches without one ([`uncovered_pair`]).
//!
//! ACKs (and NACKs) carry no code: they take the minimal route, ECMP-hashed per flow.
//!
//! Shortest-path quantities (base RTT, BDP, the CCT lower bound) stay those of the minimal
//! path: the lower bound is still a bound, and the CCT increase includes Valiant's detour.

use super::drb::digit_divisor;
use super::host_policy::{BuildHost, HostPolicy, PacketAt};
use crate::packet::{flags, Packet, NO_VIA};
use crate::scenario::{LbConfig, ValiantGranularity};
use crate::topology::{Fabric, NodeId, Route};
use rand::Rng;
use rand_pcg::Pcg32;

/// The number of intermediates (top-tier switches reachable as distinct codes).
pub(crate) fn intermediates(fabric: &Fabric) -> u32 {
    digit_divisor(fabric, fabric.top_tier())
}

/// The top-tier switch each code 0..[`intermediates`] reaches (climbing from host 0 in the
/// fault-free fabric).
pub(crate) fn top_of_codes(fabric: &Fabric) -> Vec<NodeId> {
    (0..intermediates(fabric))
        .map(|code| {
            let mut n = fabric.peer(0, 0, 0).0;
            while fabric.tier(n) < fabric.top_tier() {
                let Route::Choice(up) = fabric.route_up(n, 0) else {
                    unreachable!("a switch below the top has uplinks")
                };
                let digit = (code / digit_divisor(fabric, fabric.tier(n))) % up.len() as u32;
                n = fabric.peer(n, up.get(digit as u16), 0).0;
            }
            n
        })
        .collect()
}

/// The codes of the top-tier switches `nodes` (`lb.valiant.intermediates`), in order; the
/// first node that is not a top-tier switch is the error.
pub(crate) fn codes_of(fabric: &Fabric, nodes: &[NodeId]) -> Result<Vec<u32>, NodeId> {
    let tops = top_of_codes(fabric);
    nodes
        .iter()
        .map(|n| tops.iter().position(|t| t == n).map(|c| c as u32).ok_or(*n))
        .collect()
}

/// Under link failures: a pair of edge switches (source, destination) for which none of the
/// intermediates `codes` is valid, if any (`Model::build` refuses such a subset).
pub(crate) fn uncovered_pair(fabric: &Fabric, codes: &[u32]) -> Option<(NodeId, NodeId)> {
    if !fabric.has_failures() || codes.is_empty() {
        return None;
    }
    let edges = fabric.subtree(0, 1).1;
    let host_of = |e: u32| e * (fabric.num_hosts / edges);
    (0..edges)
        .flat_map(|a| (0..edges).map(move |b| (host_of(a), host_of(b))))
        .find(|&(s, d)| !codes.iter().any(|&c| valid(fabric, s, d, c)))
        .map(|(s, d)| (fabric.peer(s, 0, 0).0, fabric.peer(d, 0, 0).0))
}

/// The path code of the next data packet of a flow whose drawn code is `pointer`
/// (`u32::MAX`: not yet drawn): a fresh uniform draw per packet, or the flow's one. `subset`:
/// the codes to draw from (empty: every intermediate).
pub(crate) fn next_via(
    fabric: &Fabric,
    src: NodeId,
    dst: NodeId,
    per_flow: bool,
    subset: &[u32],
    pointer: &mut u32,
    rng: &mut Pcg32,
) -> u32 {
    let n = intermediates(fabric);
    if n <= 1 {
        return NO_VIA; // one top-tier switch: the minimal route already climbs to it
    }
    if !per_flow {
        return draw(fabric, src, dst, n, subset, rng);
    }
    if *pointer == u32::MAX {
        *pointer = draw(fabric, src, dst, n, subset, rng);
    }
    *pointer
}

/// A uniform draw among the `n` intermediates, or among the codes of `subset` if it is not
/// empty; under link failures, among those the source reaches by its code's uplinks and that
/// reach the destination (redrawn until one does, so the draw stays uniform over the valid
/// ones).
fn draw(fabric: &Fabric, src: NodeId, dst: NodeId, n: u32, subset: &[u32], rng: &mut Pcg32) -> u32 {
    let count = if subset.is_empty() {
        n
    } else {
        subset.len() as u32
    };
    for _ in 0..64 * count {
        let i = rng.gen_range(0..count);
        let code = if subset.is_empty() {
            i
        } else {
            subset[i as usize]
        };
        if !fabric.has_failures() || valid(fabric, src, dst, code) {
            return code;
        }
    }
    panic!(
        "no valid Valiant intermediate from {src} to {dst} in {} draws",
        64 * count
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
pub(crate) fn route<'a>(
    fabric: &'a Fabric,
    node: NodeId,
    pkt: &mut Packet,
    now_ps: u64,
) -> Route<'a> {
    if fabric.tier(node) >= fabric.top_tier() {
        pkt.flags &= !flags::VALIANT_UP;
        return fabric.route(node, pkt.dst, now_ps);
    }
    fabric.route_up(node, now_ps)
}

/// Valiant's host side: a random intermediate top-tier switch per data packet (or per flow)
/// as a path code, from the codes of `subset` (`lb.valiant.intermediates`; empty: all).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct ValiantHost {
    per_flow: bool,
    subset: Vec<u32>,
}

impl HostPolicy for ValiantHost {
    type Flow = ();

    fn next_packet(
        &self,
        at: &PacketAt<'_>,
        code: &mut u32,
        _: Option<&mut ()>,
        rng: &mut Pcg32,
    ) -> (u16, u32) {
        if at.echo.is_some() {
            return (0, NO_VIA); // ACKs take the minimal route, hashed per flow.
        }
        let (f, per_flow) = (at.fabric, self.per_flow);
        (
            0,
            next_via(f, at.src, at.dst, per_flow, &self.subset, code, rng),
        )
    }

    /// The "climbing" mark of a data packet on its way to the intermediate.
    fn data_flags(&self, via: u32) -> u8 {
        if via != NO_VIA {
            flags::VALIANT_UP
        } else {
            0
        }
    }
}

impl BuildHost for ValiantHost {
    fn build(cfg: &LbConfig, _: bool, fabric: &Fabric) -> ValiantHost {
        ValiantHost {
            per_flow: cfg.valiant.granularity == ValiantGranularity::Flow,
            // Checked by `Model::build`.
            subset: codes_of(fabric, &cfg.valiant.intermediates)
                .expect("lb.valiant.intermediates are top-tier switches"),
        }
    }
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

    /// Non-minimal VLB: every packet traverses a top-tier switch, even between hosts of
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

    /// VLB: the intermediate is uniform over the top tier. k = 8 fat tree:
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
            let via = next_via(&f, 0, 1, false, &[], &mut unused, &mut rng);
            *counts.entry(core_of(via)).or_insert(0u32) += 1;
        }
        assert_eq!(counts.len(), 16);
        for (core, c) in counts {
            assert!((1_805..=2_195).contains(&c), "core {core}: {c}");
        }
    }

    /// VLB over a subset of the cores: with 2 of the 16 cores of a k = 8 fat tree listed,
    /// every packet (from three sources, walked switch by switch) climbs to one of them, each
    /// about half the time: 20 000 packets, 10 000 each, binomial s.d. √(20 000/4) = 70.7;
    /// each count within 4.5 s.d. (±318).
    #[test]
    fn a_subset_of_intermediates_is_drawn_uniformly() {
        let f = fabric(TopologyKind::FatTree, 8);
        // k = 8: 128 hosts, 32 edge and 32 aggregation switches, then the cores 192..208.
        assert_eq!((f.tier(191), f.tier(192), f.tier(207)), (2, 3, 3));
        let listed = [195, 204];
        let codes = codes_of(&f, &listed).unwrap();
        assert_eq!(codes_of(&f, &[195, 191]), Err(191), "an aggregation switch");
        let mut rng = stream(11, 0, Purpose::HostLb);
        let mut counts = [0u32; 2];
        let mut unused = u32::MAX;
        for i in 0..20_000 {
            let (src, dst) = [(0, 1), (5, 77), (127, 64)][i % 3];
            let via = next_via(&f, src, dst, false, &codes, &mut unused, &mut rng);
            let path = walk(&f, src, dst, via);
            let core = path.into_iter().find(|&x| f.tier(x) == 3).unwrap();
            let j = listed.iter().position(|&c| c == core);
            counts[j.unwrap_or_else(|| panic!("{src}->{dst}: core {core} not listed"))] += 1;
        }
        assert!(
            counts.iter().all(|c| (9_682..=10_318).contains(c)),
            "{counts:?}"
        );
    }

    /// Under link failures a subset is drawn among its valid members only, and a subset that
    /// leaves a pair of edge switches without one is found. k = 4 fat tree: edge 16's uplink
    /// 2 (to aggregation 24) fails; codes 0 and 2 climb through it (edge digit 0), 1 and 3 not.
    #[test]
    fn failures_restrict_a_subset_to_its_valid_members() {
        use crate::model::Model;
        use crate::scenario::{FailedLink, Scenario};
        let mut s = Scenario::default();
        s.topology.k = 4;
        s.lb.policy = crate::scenario::LbPolicy::Valiant;
        s.failures.links = vec![FailedLink { node: 16, port: 2 }];
        s.validate().unwrap();
        let m = Model::build(&s).unwrap();
        let f = &m.fabric;
        assert_eq!(uncovered_pair(f, &[0, 2]), Some((16, 16)));
        assert_eq!(uncovered_pair(f, &[0, 1]), None);
        let mut rng = stream(5, 0, Purpose::HostLb);
        let mut unused = u32::MAX;
        let mut from_0 = [0u32; 4];
        let mut from_4 = [0u32; 4];
        for _ in 0..400 {
            from_0[next_via(f, 0, 9, false, &[0, 1, 2], &mut unused, &mut rng) as usize] += 1;
            from_4[next_via(f, 4, 9, false, &[0, 1, 2], &mut unused, &mut rng) as usize] += 1;
        }
        assert_eq!(from_0, [0, 400, 0, 0], "only code 1 is valid from edge 16");
        assert!(
            from_4[0] > 80 && from_4[1] > 80 && from_4[2] > 80,
            "{from_4:?}"
        );
        assert_eq!(from_4[3], 0, "code 3 is not listed");
    }

    #[test]
    fn per_flow_keeps_one_intermediate() {
        let f = fabric(TopologyKind::FatTree, 8);
        let mut rng = stream(3, 0, Purpose::HostLb);
        let mut pointer = u32::MAX;
        let first = next_via(&f, 0, 1, true, &[], &mut pointer, &mut rng);
        assert!(first < 16);
        assert!((0..100).all(|_| next_via(&f, 0, 1, true, &[], &mut pointer, &mut rng) == first));
    }
}
