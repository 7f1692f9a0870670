//! UEC's "mixed" host policy (as UEC htsim's `UecMpMixed`, its default LB):
//! send on a recycled good entropy value (EV) if one is cached, else on the bitmap's next EV.
//! Every feedback goes to both halves.
//!
//! The recycling half is REPS's buffer (`lb/reps.rs`) without freezing or exploration:
//! htsim's legacy-REPS FIFO is unbounded, ours keeps the newest `lb.reps.buffer` good EVs
//! (oldest first, the oldest overwritten when full), so that a flow's state stays inline and
//! bounded; a sender re-uses at most one EV per ACK either way, so the buffer only overflows
//! when ACKs outrun sends.

use super::bitmap::{BitmapParams, BitmapState};
use super::host_policy::{BuildHost, Feedback, HostPolicy, PacketAt};
use super::reps::{RepsParams, RepsState};
use crate::packet::NO_VIA;
use crate::scenario::LbConfig;
use crate::topology::Fabric;
use rand_pcg::Pcg32;
use serde::{Deserialize, Serialize};

/// The parameters of both halves.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct MixedParams {
    pub bitmap: BitmapParams,
    /// REPS's buffer size; never freezes, never explores.
    pub reps: RepsParams,
}

impl MixedParams {
    pub(crate) fn new(cfg: &LbConfig) -> MixedParams {
        MixedParams {
            bitmap: BitmapParams::new(cfg),
            reps: RepsParams {
                freeze_ps: 0,
                explore_pkts: Some(0),
                ..RepsParams::new(cfg, false)
            },
        }
    }
}

/// A flow's mixed state (sender side).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct MixedState {
    pub recycled: RepsState,
    pub bitmap: BitmapState,
}

impl MixedState {
    pub(crate) fn new(p: &MixedParams, rng: &mut Pcg32) -> MixedState {
        MixedState {
            recycled: RepsState::new(0),
            bitmap: BitmapState::new(&p.bitmap, rng),
        }
    }

    /// A recycled good EV if one is cached, else the bitmap's (which then advances its walk).
    pub(crate) fn next_entropy(&mut self, p: &MixedParams, rng: &mut Pcg32) -> u16 {
        match self.recycled.pop_fresh(&p.reps) {
            Some(ev) => ev,
            None => self.bitmap.next_entropy(&p.bitmap, rng),
        }
    }

    /// Feedback for both halves: a good EV is cached, a bad one penalised.
    pub(crate) fn feedback(&mut self, p: &MixedParams, ev: u16, what: Feedback, now_ps: u64) {
        self.bitmap.feedback(&p.bitmap, ev, what);
        self.recycled.feedback(&p.reps, ev, what, now_ps);
    }
}

impl HostPolicy for MixedParams {
    type Flow = MixedState;

    fn new_flow(&self, _: u64, rng: &mut Pcg32) -> Option<MixedState> {
        Some(MixedState::new(self, rng))
    }

    fn next_packet(
        &self,
        at: &PacketAt<'_>,
        _: &mut u32,
        flow: Option<&mut MixedState>,
        rng: &mut Pcg32,
    ) -> (u16, u32) {
        match flow {
            Some(m) => (m.next_entropy(self, rng), NO_VIA),
            None => at.echoed(),
        }
    }

    fn feedback(&self, flow: &mut MixedState, entropy: u16, what: Feedback, now_ps: u64) {
        flow.feedback(self, entropy, what, now_ps);
    }

    /// The state and the bitmap's penalty per EV.
    fn flow_state_bytes(&self, _: u32) -> u64 {
        (std::mem::size_of::<MixedState>() + self.bitmap.paths as usize) as u64
    }
}

impl BuildHost for MixedParams {
    fn build(cfg: &LbConfig, _: bool, _: &Fabric) -> MixedParams {
        MixedParams::new(cfg)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::{stream, Purpose};

    fn params() -> MixedParams {
        MixedParams::new(&LbConfig {
            bitmap: crate::scenario::BitmapConfig {
                paths: 16,
                ..Default::default()
            },
            ..LbConfig::default()
        })
    }

    #[test]
    fn recycled_evs_come_first_oldest_first_then_the_bitmap_walk() {
        let p = params();
        let mut r = stream(3, 1, Purpose::HostLb);
        let mut s = MixedState::new(&p, &mut r);
        let (mut probe, mut pr) = (s.bitmap.clone(), r.clone());
        let walk: Vec<u16> = (0..2)
            .map(|_| probe.next_entropy(&p.bitmap, &mut pr))
            .collect();
        // An EV the walk's next two steps do not meet: its penalty only blocks it later.
        let bad = (0..16).find(|e| !walk.contains(e)).unwrap();
        for ev in [9, 4, 12] {
            s.feedback(&p, ev, Feedback::Delivered, 0);
        }
        s.feedback(&p, bad, Feedback::Ecn, 0);
        let sent: Vec<u16> = (0..5).map(|_| s.next_entropy(&p, &mut r)).collect();
        // The recycled EVs did not advance the bitmap's walk; the ECN'd EV was not cached.
        assert_eq!(sent, [9, 4, 12, walk[0], walk[1]]);
        assert_eq!(s.bitmap.penalty(bad), 1);
    }

    #[test]
    fn timeouts_penalise_and_never_freeze_the_recycling_half() {
        let p = params();
        let mut r = stream(3, 1, Purpose::HostLb);
        let mut s = MixedState::new(&p, &mut r);
        s.feedback(&p, 2, Feedback::Delivered, 0);
        let dead = Feedback::Timeout {
            recent_max_rtt_ps: 0,
            base_rtt_ps: 1,
        };
        s.feedback(&p, 3, dead, 0);
        assert!(!s.recycled.is_frozen());
        assert_eq!(s.bitmap.penalty(3), 15);
        assert_eq!(s.next_entropy(&p, &mut r), 2);
        for _ in 0..10 {
            assert_ne!(s.next_entropy(&p, &mut r), 3);
        }
    }
}
