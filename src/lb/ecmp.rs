//! ECMP: a per-switch salted hash of (flow, entropy value) picks the uplink, so a flow sticks
//! to one path unless its host varies the entropy (RPS). The hash is Bob Jenkins' 96-bit mix,
//! htsim's `freeBSDHash` (known-answer tests in tests/it/known_answers.rs), on the flow key of
//! `Packet::hash_key`. Flow ids are numbered differently in the two simulators, so the same
//! traffic is spread with the same function and statistics, not onto the same paths.

use super::host_policy::{BuildHost, HostPolicy, PacketAt};
use super::switch_policy::{BuildSwitch, QueueView, SwitchCtx, SwitchPolicy};
use super::LbShared;
use crate::packet::NO_VIA;
use crate::scenario::{LbConfig, LbPolicy};
use crate::topology::{Fabric, NodeId};
use rand::Rng;
use rand_pcg::Pcg32;

/// Bob Jenkins' 96-bit mix of (`flow`, `salt`, `entropy`), as htsim's `freeBSDHash`; the
/// mixed third word.
#[inline]
pub fn jenkins_hash(flow: u32, entropy: u32, salt: u32) -> u32 {
    let mut a = 0x9e37_79b9u32.wrapping_add(flow);
    let mut b = 0x9e37_79b9u32.wrapping_add(salt);
    let mut c = entropy;
    macro_rules! step {
        ($x:ident, $y:ident, $z:ident, $op:tt, $s:expr) => {
            $x = $x.wrapping_sub($y).wrapping_sub($z) ^ ($z $op $s);
        };
    }
    step!(a, b, c, >>, 13);
    step!(b, c, a, <<, 8);
    step!(c, a, b, >>, 13);
    step!(a, b, c, >>, 12);
    step!(b, c, a, <<, 16);
    step!(c, a, b, >>, 5);
    step!(a, b, c, >>, 3);
    step!(b, c, a, <<, 10);
    step!(c, a, b, >>, 15);
    c
}

/// The uplink index for a packet of `flow_key` with entropy `ev`, among `count` uplinks.
#[inline]
pub fn choose(flow_key: u32, ev: u16, salt: u32, count: u16) -> u16 {
    (jenkins_hash(flow_key, ev as u32, salt) % count as u32) as u16
}

/// The switch side of every host-driven policy (ECMP, RPS, REPS, the UEC bitmaps): hash the
/// packet's flow key and entropy value with the switch's salt.
#[derive(serde::Serialize, serde::Deserialize)]
pub(crate) struct Hash;

impl SwitchPolicy for Hash {
    #[inline]
    fn choose<Q: QueueView>(&mut self, ctx: &mut SwitchCtx<'_, Q>) -> u16 {
        ctx.hashed_port()
    }
}

impl BuildSwitch for Hash {
    fn build(_: LbPolicy, _: &LbShared, _: &Fabric, _: NodeId, _: &mut rand_pcg::Pcg32) -> Hash {
        Hash
    }
}

/// ECMP's host side: one entropy value per flow, drawn when it starts; ACKs echo their data
/// packet's.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct PerFlow;

impl HostPolicy for PerFlow {
    type Flow = ();

    fn next_packet(
        &self,
        at: &PacketAt<'_>,
        _: &mut u32,
        _: Option<&mut ()>,
        _: &mut Pcg32,
    ) -> (u16, u32) {
        at.echoed()
    }
}

impl BuildHost for PerFlow {
    fn build(_: &LbConfig, _: bool, _: &Fabric) -> PerFlow {
        PerFlow
    }
}

// ANCHOR: host_policy
/// RPS's host side: a fresh random entropy value per packet, ACKs included.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct PerPacket;

impl HostPolicy for PerPacket {
    type Flow = ();

    fn next_packet(
        &self,
        at: &PacketAt<'_>,
        _: &mut u32,
        _: Option<&mut ()>,
        rng: &mut Pcg32,
    ) -> (u16, u32) {
        (rng.gen_range(0..at.entropy_paths) as u16, NO_VIA)
    }
}

impl BuildHost for PerPacket {
    fn build(_: &LbConfig, _: bool, _: &Fabric) -> PerPacket {
        PerPacket
    }
}
// ANCHOR_END: host_policy

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn same_flow_same_port_and_uniform_over_flows() {
        let salt = 12345;
        let mut hist = [0u32; 8];
        for f in 0..100_000u32 {
            let p = choose(f, 7, salt, 8);
            assert_eq!(p, choose(f, 7, salt, 8));
            hist[p as usize] += 1;
        }
        for h in hist {
            assert!((h as f64 / 100_000.0 - 0.125).abs() < 0.01, "{hist:?}");
        }
        assert!((0..1000).any(|f| choose(f, 0, 1, 8) != choose(f, 0, 2, 8)));
    }
}
