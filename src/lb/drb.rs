//! DRB (host side): the sender keeps one pointer per flow (and the receiver one per flow for
//! its ACKs) and sends successive packets through the switches of the lowest common layer in
//! digit-reversed order, by source routing: the packet carries a path code `c`, and a switch
//! of tier t takes its uplink number `digit_t(c)`, where the digits of `c` in the mixed radix
//! of the tiers' uplink counts put the first hop's digit lowest. Consecutive packets therefore
//! change the first-hop uplink every packet, the second-hop uplink every w₁ packets, and so on
//! (in a fat tree: the aggregation switch every packet, the core within it every h packets).
//! The first code of a flow is random. Under link failures the pointer skips the codes
//! whose path crosses an invalid port, so it cycles over the paths both ends still reach.

use super::host_policy::{BuildHost, HostPolicy, PacketAt};
use super::switch_policy::all_candidates;
use super::switch_policy::{BuildSwitch, QueueView, SwitchCtx, SwitchPolicy};
use super::LbShared;
use crate::packet::NO_VIA;
use crate::scenario::{LbConfig, LbPolicy};
use crate::topology::{contains, Fabric, NodeId, Route};
use rand::Rng;
use rand_pcg::Pcg32;

/// Paths through the lowest common layer of `src` and `dst` (0: same edge switch, no choice).
pub(crate) fn path_count(fabric: &Fabric, src: NodeId, dst: NodeId) -> u32 {
    let top = fabric.lca_tier(src, dst);
    (1..top)
        .map(|t| fabric.tier_uplinks(t) as u32)
        .product::<u32>()
        * (top > 1) as u32
}

/// The path code of the next packet, advancing `pointer` (`u32::MAX`: not yet drawn).
pub(crate) fn next_via(
    fabric: &Fabric,
    src: NodeId,
    dst: NodeId,
    pointer: &mut u32,
    rng: &mut Pcg32,
) -> u32 {
    let n = path_count(fabric, src, dst);
    if n == 0 {
        return NO_VIA;
    }
    if *pointer == u32::MAX {
        *pointer = rng.gen_range(0..n);
    }
    let mut via = *pointer;
    if fabric.has_failures() {
        // The fabric is connected (checked when it was built), so some code is valid.
        let mut tries = 0;
        while !code_is_valid(fabric, src, dst, via) {
            via = (via + 1) % n;
            tries += 1;
            assert!(tries <= n, "no valid DRB path from {src} to {dst}");
        }
    }
    *pointer = (via + 1) % n;
    via
}

/// Whether every hop of path code `via` from `src` to `dst` leaves through a valid port.
pub(crate) fn code_is_valid(fabric: &Fabric, src: NodeId, dst: NodeId, via: u32) -> bool {
    let mut n = fabric.peer(src, 0, 0).0;
    for t in 1..fabric.lca_tier(src, dst) {
        let (Route::Choice(all), Route::Choice(valid)) =
            (fabric.route_all(n, dst), fabric.route(n, dst, 0))
        else {
            unreachable!("switches below the lowest common tier choose among uplinks")
        };
        let p = all.get(((via / digit_divisor(fabric, t)) % all.len() as u32) as u16);
        if !contains(valid, p) {
            return false;
        }
        n = fabric.peer(n, p, 0).0;
    }
    true
}

/// What a switch of tier `tier` divides a path code by before taking it modulo its uplink
/// count: the product of the uplink counts of the tiers below it.
pub(crate) fn digit_divisor(fabric: &Fabric, tier: u8) -> u32 {
    fabric.path_digit_divisor(tier)
}

/// The switch side of DRB, Valiant and Ethereal: follow the packet's path code. This switch's
/// digit is `(via / below) % candidates`, where `below` is the product of the uplink counts of
/// the tiers under it; a packet without a code is hashed.
#[derive(serde::Serialize, serde::Deserialize)]
pub(crate) struct FollowPath {
    below: u32,
}

impl SwitchPolicy for FollowPath {
    #[inline]
    fn choose<Q: QueueView>(&mut self, ctx: &mut SwitchCtx<'_, Q>) -> u16 {
        let (c, pkt) = (ctx.candidates, ctx.pkt);
        if pkt.via == NO_VIA {
            return ctx.hashed_port();
        }
        // The digit numbers the uplinks of the fault-free fabric; the sender only uses codes
        // whose every hop is valid (`next_via`).
        let all = all_candidates(ctx.fabric, ctx.node, pkt.dst, c);
        let p = all.get(((pkt.via / self.below) % all.len() as u32) as u16);
        if !contains(c, p) {
            invalid_path_code(ctx.node, p);
        }
        p
    }

    fn uplink_structured(&self) -> bool {
        true
    }
}

impl BuildSwitch for FollowPath {
    fn build(_: LbPolicy, _: &LbShared, fabric: &Fabric, node: NodeId, _: &mut Pcg32) -> Self {
        FollowPath {
            below: digit_divisor(fabric, fabric.tier(node)),
        }
    }
}

#[cold]
#[inline(never)]
fn invalid_path_code(node: NodeId, port: u16) -> ! {
    panic!("a DRB path code sends a packet through failed port {port} of switch {node}")
}

/// DRB's host side: the next digit-reversed path code from the flow's pointer, for data and
/// ACKs alike (the receiver keeps a pointer per flow too).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Codes;

impl HostPolicy for Codes {
    type Flow = ();

    fn next_packet(
        &self,
        at: &PacketAt<'_>,
        code: &mut u32,
        _: Option<&mut ()>,
        rng: &mut Pcg32,
    ) -> (u16, u32) {
        (0, next_via(at.fabric, at.src, at.dst, code, rng))
    }

    fn needs_receiver_state(&self) -> bool {
        true
    }
}

impl BuildHost for Codes {
    fn build(_: &LbConfig, _: bool, _: &Fabric) -> Codes {
        Codes
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scenario::Scenario;

    /// The uplink index (among `count`) a switch of tier `tier` takes for path code `via`,
    /// as `SwitchLb::FollowPath` computes it.
    fn digit(fabric: &Fabric, tier: u8, via: u32, count: u16) -> u16 {
        ((via / digit_divisor(fabric, tier)) % count as u32) as u16
    }

    /// Under failures DRB cycles only over the paths both ends still reach. k = 4:
    /// aggregation switch 24 (pod 0, index 0) loses its link to core 32 (its port 2), so of
    /// the 4 paths from host 0 to host 15 (pod 3) the one through (agg 0, core 0), code 0,
    /// is gone; every 3 consecutive codes are the other three, each once.
    #[test]
    fn under_failures_codes_cycle_over_the_valid_paths_only() {
        use rand::SeedableRng;
        let mut s = Scenario::default();
        s.topology.k = 4;
        s.failures.links = vec![crate::scenario::FailedLink { node: 24, port: 2 }];
        let f = Fabric::build(&s).with_failures(&s).unwrap();
        assert_eq!(path_count(&f, 0, 15), 4);
        let mut rng = Pcg32::seed_from_u64(3);
        let mut pointer = u32::MAX;
        let codes: Vec<u32> = (0..9)
            .map(|_| next_via(&f, 0, 15, &mut pointer, &mut rng))
            .collect();
        for w in codes.windows(3) {
            let mut sorted = w.to_vec();
            sorted.sort();
            assert_eq!(sorted, vec![1, 2, 3], "{codes:?}");
        }
    }

    #[test]
    fn codes_cover_every_path_and_alternate_the_first_hop() {
        let mut s = Scenario::default();
        s.topology.k = 8;
        let f = Fabric::build(&s);
        let (src, dst) = (0, 127); // different pods: 16 paths through the cores
        let n = path_count(&f, src, dst);
        assert_eq!(n, 16);
        assert_eq!(path_count(&f, 0, 5), 4); // same pod, other edge switch
        assert_eq!(path_count(&f, 0, 1), 0); // same edge switch
        let mut seen = std::collections::BTreeSet::new();
        for c in 0..n {
            let (d1, d2) = (digit(&f, 1, c, 4), digit(&f, 2, c, 4));
            assert!(seen.insert((d1, d2)), "code {c} repeats a path");
            assert_ne!(d1, digit(&f, 1, (c + 1) % n, 4), "first hop repeats");
        }
    }
}
