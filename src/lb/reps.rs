//! REPS, Recycled Entropy Packet Spraying (Bonato et al.; the REPS artifact's
//! `CircularBufferREPS` with freezing). Host side only: switches hash (ECMP).
//!
//! Each flow's sender keeps a small circular buffer of entropy values (EVs) whose packets
//! came back with a clean ACK, and sends each packet on the oldest of them not yet re-used;
//! with none at hand it explores with a random EV. A timeout that congestion does not explain
//! (with trimming, any timeout: a congested queue trims rather than drops; without, only if
//! the flow's recent RTTs stayed below `rtt_gate` × its base RTT) suggests a failed path:
//! the flow *freezes* for `freeze_ps`, cycling through the EVs it has cached (known-good
//! paths) instead of exploring, then forgets them and explores `explore_after_thaw` packets.
//!
//! Feedback (`Feedback`, with the EV the data packet carried): `Delivered` (an ACK without
//! ECN, or a last-hop NACK without ECN: incast, not a bad path) recycles the EV; `Ecn`,
//! `Nack` (a trim before the last hop) and `Timeout` do not.

use super::host_policy::{BuildHost, Feedback, HostPolicy, PacketAt};
use crate::packet::NO_VIA;
use crate::scenario::LbConfig;
use crate::time::PS_PER_US;
use crate::topology::Fabric;
use rand::Rng;
use rand_pcg::Pcg32;
use serde::{Deserialize, Serialize};

/// Largest `lb.reps.buffer` (the state keeps its buffer inline).
pub(crate) const MAX_BUFFER: u32 = crate::scenario::RepsConfig::MAX_BUFFER;

/// REPS's parameters, the same for every flow of a run.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct RepsParams {
    /// EVs a flow caches, B (1 to [`MAX_BUFFER`]).
    pub buffer: u8,
    /// How long a flow stays frozen; 0: never freeze.
    pub freeze_ps: u64,
    /// Packets sent on random EVs after a freeze ends; unset: BDP / MTU of the flow's path.
    pub explore_pkts: Option<u16>,
    /// Without trimming, a timeout freezes only if the flow's largest recent RTT is below
    /// this many base RTTs.
    pub rtt_gate: f64,
    /// Switches trim: every timeout is a suspected failure.
    pub trimming: bool,
}

impl RepsParams {
    pub(crate) fn new(cfg: &LbConfig, trimming: bool) -> RepsParams {
        RepsParams {
            buffer: cfg.reps.buffer as u8,
            freeze_ps: (cfg.reps.freeze_us * PS_PER_US as f64).round() as u64,
            explore_pkts: cfg.reps.explore_pkts.map(|e| e as u16),
            rtt_gate: cfg.reps.freeze_rtt_gate,
            trimming,
        }
    }

    /// Whether a timeout suggests a failed path rather than congestion.
    fn suspects_failure(&self, recent_max_rtt_ps: u64, base_rtt_ps: u64) -> bool {
        self.trimming || (recent_max_rtt_ps as f64) < self.rtt_gate * base_rtt_ps as f64
    }
}

/// A flow's REPS state (sender side): 56 bytes, boxed, allocated only for REPS flows.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct RepsState {
    /// The cached EVs; slot i holds a fresh (not yet re-used) one if bit i of `valid` is set.
    evs: [u16; MAX_BUFFER as usize],
    valid: u16,
    /// Next slot to write.
    head: u8,
    /// Slots ever written since the last reset (≤ B).
    count: u8,
    /// Slots holding a fresh EV (≤ B); outside frozen mode they are the `fresh` slots
    /// before `head`.
    fresh: u8,
    /// Frozen mode's read pointer, modulo `count`.
    head_frozen: u8,
    frozen: bool,
    /// Packets still to send on random EVs.
    explore: u16,
    /// `explore` after a freeze ends (E).
    explore_after_thaw: u16,
    /// End of the freeze: the first feedback after it thaws the flow.
    exit_ps: u64,
}

impl RepsState {
    /// A new flow: nothing cached, nothing to explore (the empty buffer makes it explore).
    pub(crate) fn new(explore_after_thaw: u16) -> RepsState {
        RepsState {
            evs: [0; MAX_BUFFER as usize],
            valid: 0,
            head: 0,
            count: 0,
            fresh: 0,
            head_frozen: 0,
            frozen: false,
            explore: 0,
            explore_after_thaw,
            exit_ps: 0,
        }
    }

    /// The EV of the next packet (retransmissions included).
    pub(crate) fn next_entropy(
        &mut self,
        p: &RepsParams,
        entropy_paths: u32,
        rng: &mut Pcg32,
    ) -> u16 {
        let mut random = || rng.gen_range(0..entropy_paths) as u16;
        if self.explore > 0 {
            self.explore -= 1;
            return random();
        }
        if self.frozen {
            // Cycle through every cached EV, fresh or already used: the last known-good set.
            if self.count == 0 {
                return random();
            }
            let i = self.head_frozen;
            self.take(i);
            self.head_frozen = (i + 1) % self.count;
            return self.evs[i as usize];
        }
        match self.pop_fresh(p) {
            Some(ev) => ev,
            None => random(),
        }
    }

    /// The oldest fresh (not yet re-used) EV, now marked used, if any: REPS's normal mode,
    /// and the recycling half of UEC's `mixed` policy (`lb/uec_mixed.rs`).
    pub(crate) fn pop_fresh(&mut self, p: &RepsParams) -> Option<u16> {
        if self.fresh == 0 {
            return None;
        }
        // `fresh ≤ B`, so no underflow.
        let b = p.buffer;
        let i = (self.head + b - self.fresh) % b;
        self.take(i);
        Some(self.evs[i as usize])
    }

    /// Marks slot `i` used.
    fn take(&mut self, i: u8) {
        if self.valid & 1 << i != 0 {
            self.valid &= !(1 << i);
            self.fresh -= 1;
        }
    }

    /// What became of a packet sent on `ev`, learnt at `now_ps`.
    pub(crate) fn feedback(&mut self, p: &RepsParams, ev: u16, what: Feedback, now_ps: u64) {
        if let Feedback::Timeout {
            recent_max_rtt_ps,
            base_rtt_ps,
        } = what
        {
            if !self.frozen
                && self.explore == 0
                && p.freeze_ps > 0
                && p.suspects_failure(recent_max_rtt_ps, base_rtt_ps)
            {
                self.frozen = true;
                self.exit_ps = now_ps.saturating_add(p.freeze_ps);
            }
        }
        if self.frozen && now_ps > self.exit_ps {
            *self = RepsState {
                explore: self.explore_after_thaw,
                ..RepsState::new(self.explore_after_thaw)
            };
        }
        if what == Feedback::Delivered {
            self.add(p.buffer, ev);
        }
    }

    /// Caches a good EV at `head`, overwriting the oldest slot when the buffer is full.
    fn add(&mut self, b: u8, ev: u16) {
        let h = self.head;
        if self.valid & 1 << h == 0 {
            self.fresh += 1;
        }
        self.evs[h as usize] = ev;
        self.valid |= 1 << h;
        self.head = (h + 1) % b;
        self.fresh = self.fresh.min(b);
        self.count = (self.count + 1).min(b);
    }

    #[cfg(test)]
    pub(crate) fn is_frozen(&self) -> bool {
        self.frozen
    }

    /// Cached EVs not yet re-used.
    #[cfg(test)]
    pub(crate) fn fresh(&self) -> u8 {
        self.fresh
    }

    /// Slots written since the last reset.
    #[cfg(test)]
    pub(crate) fn count(&self) -> u8 {
        self.count
    }
}

impl HostPolicy for RepsParams {
    type Flow = RepsState;

    /// After a freeze the flow explores `explore_pkts` packets, else its path's BDP.
    fn new_flow(&self, bdp_pkts: u64, _: &mut Pcg32) -> Option<RepsState> {
        let explore = self
            .explore_pkts
            .unwrap_or(bdp_pkts.min(u16::MAX as u64) as u16);
        Some(RepsState::new(explore))
    }

    fn next_packet(
        &self,
        at: &PacketAt<'_>,
        _: &mut u32,
        flow: Option<&mut RepsState>,
        rng: &mut Pcg32,
    ) -> (u16, u32) {
        match flow {
            Some(r) => (r.next_entropy(self, at.entropy_paths, rng), NO_VIA),
            None => at.echoed(),
        }
    }

    fn feedback(&self, flow: &mut RepsState, entropy: u16, what: Feedback, now_ps: u64) {
        flow.feedback(self, entropy, what, now_ps);
    }
}

impl BuildHost for RepsParams {
    fn build(cfg: &LbConfig, trimming: bool, _: &Fabric) -> RepsParams {
        RepsParams::new(cfg, trimming)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::{stream, Purpose};

    const P: u32 = 1 << 16;
    const FREEZE: u64 = 10_000_000_000; // 10 ms

    fn params(trimming: bool) -> RepsParams {
        RepsParams {
            buffer: 8,
            freeze_ps: FREEZE,
            explore_pkts: Some(16),
            rtt_gate: 1.65,
            trimming,
        }
    }

    fn rng() -> Pcg32 {
        stream(7, 3, Purpose::HostLb)
    }

    /// The next `n` EVs the random stream would give (what exploration returns).
    fn draws(rng: &Pcg32, n: usize) -> Vec<u16> {
        let mut r = rng.clone();
        (0..n).map(|_| r.gen_range(0..P) as u16).collect()
    }

    fn timeout(max_rtt: u64, base: u64) -> Feedback {
        Feedback::Timeout {
            recent_max_rtt_ps: max_rtt,
            base_rtt_ps: base,
        }
    }

    #[test]
    fn good_evs_come_back_oldest_first_then_random() {
        let p = params(true);
        let mut s = RepsState::new(16);
        let mut r = rng();
        for ev in 101..=108 {
            s.feedback(&p, ev, Feedback::Delivered, 0);
        }
        assert_eq!((s.count(), s.fresh()), (8, 8));
        let sent: Vec<u16> = (0..8).map(|_| s.next_entropy(&p, P, &mut r)).collect();
        assert_eq!(sent, (101..=108).collect::<Vec<_>>());
        assert_eq!(s.fresh(), 0);
        // The ninth is the random stream's next value, and the stream was untouched so far.
        let expect = draws(&r, 1)[0];
        assert_eq!(draws(&rng(), 1)[0], expect, "recycling draws nothing");
        assert_eq!(s.next_entropy(&p, P, &mut r), expect);
    }

    #[test]
    fn an_empty_buffer_explores() {
        let p = params(true);
        let mut s = RepsState::new(16);
        let mut r = rng();
        let expect = draws(&r, 5);
        let sent: Vec<u16> = (0..5).map(|_| s.next_entropy(&p, P, &mut r)).collect();
        assert_eq!(sent, expect);
        assert!(sent.windows(2).any(|w| w[0] != w[1]), "fresh values");
    }

    #[test]
    fn recycling_interleaves_with_new_feedback_in_arrival_order() {
        // Add a, b, c; send one (a); add d; the next three are b, c, d.
        let p = params(true);
        let mut s = RepsState::new(16);
        let mut r = rng();
        for ev in [1, 2, 3] {
            s.feedback(&p, ev, Feedback::Delivered, 0);
        }
        assert_eq!(s.next_entropy(&p, P, &mut r), 1);
        s.feedback(&p, 4, Feedback::Delivered, 0);
        let sent: Vec<u16> = (0..3).map(|_| s.next_entropy(&p, P, &mut r)).collect();
        assert_eq!(sent, [2, 3, 4]);
        assert_eq!((s.count(), s.fresh()), (4, 0));
    }

    #[test]
    fn the_buffer_keeps_the_newest_b_and_fresh_never_exceeds_b() {
        let p = params(true);
        let mut s = RepsState::new(16);
        let mut r = rng();
        for ev in 1..=20 {
            s.feedback(&p, ev, Feedback::Delivered, 0);
            assert!(s.fresh() <= 8 && s.count() <= 8);
        }
        assert_eq!((s.count(), s.fresh()), (8, 8));
        // 1..=12 were overwritten; the oldest fresh is 13 (slot head − 8 mod 8 = slot 4).
        let sent: Vec<u16> = (0..8).map(|_| s.next_entropy(&p, P, &mut r)).collect();
        assert_eq!(sent, (13..=20).collect::<Vec<_>>());
        // Wrapped index: head = 4, two fresh → slots 2, 3.
        for ev in [30, 31] {
            s.feedback(&p, ev, Feedback::Delivered, 0);
        }
        assert_eq!(s.next_entropy(&p, P, &mut r), 30);
        assert_eq!(s.next_entropy(&p, P, &mut r), 31);
    }

    #[test]
    fn ecn_nack_and_timeout_never_change_the_buffer() {
        let p = params(true);
        let mut s = RepsState::new(16);
        for ev in [5, 6, 7] {
            s.feedback(&p, ev, Feedback::Delivered, 0);
        }
        let before = s.clone();
        for ev in [8, 9, 5] {
            s.feedback(&p, ev, Feedback::Ecn, 10);
            s.feedback(&p, ev, Feedback::Nack, 10);
        }
        assert_eq!(s, before, "ECN and NACK leave the state alone");
        s.feedback(&p, 9, timeout(0, 1), 10);
        assert!(s.is_frozen());
        assert_eq!(
            (s.evs, s.valid, s.count(), s.fresh()),
            (before.evs, before.valid, 3, 3)
        );
    }

    #[test]
    fn frozen_flows_cycle_through_the_cached_evs() {
        let p = params(true);
        let mut s = RepsState::new(16);
        let mut r = rng();
        for ev in [10, 20, 30] {
            s.feedback(&p, ev, Feedback::Delivered, 0);
        }
        s.feedback(&p, 99, timeout(0, 1), 1_000);
        assert!(s.is_frozen());
        let sent: Vec<u16> = (0..7).map(|_| s.next_entropy(&p, P, &mut r)).collect();
        assert_eq!(sent, [10, 20, 30, 10, 20, 30, 10]);
        assert_eq!(s.fresh(), 0, "each was used");
        assert_eq!(
            draws(&r, 1),
            draws(&rng(), 1),
            "no random draw while frozen"
        );
        // Good feedback while frozen is still cached, and joins the cycle (count 4).
        s.feedback(&p, 40, Feedback::Delivered, 2_000);
        let sent: Vec<u16> = (0..5).map(|_| s.next_entropy(&p, P, &mut r)).collect();
        assert_eq!(sent, [20, 30, 40, 10, 20]);
    }

    #[test]
    fn a_frozen_flow_with_nothing_cached_explores() {
        let p = params(true);
        let mut s = RepsState::new(16);
        let mut r = rng();
        s.feedback(&p, 1, timeout(0, 1), 0);
        assert!(s.is_frozen());
        let expect = draws(&r, 2);
        assert_eq!(s.next_entropy(&p, P, &mut r), expect[0]);
        assert_eq!(s.next_entropy(&p, P, &mut r), expect[1]);
    }

    #[test]
    fn after_the_freeze_the_buffer_is_reset_and_e_sends_explore() {
        let p = params(true);
        let mut s = RepsState::new(16);
        let mut r = rng();
        for ev in [10, 20, 30] {
            s.feedback(&p, ev, Feedback::Delivered, 0);
        }
        s.feedback(&p, 10, timeout(0, 1), 1_000);
        // At exit_ps exactly it is still frozen (the rule is now > exit).
        s.feedback(&p, 11, Feedback::Ecn, 1_000 + FREEZE);
        assert!(s.is_frozen());
        s.feedback(&p, 12, Feedback::Ecn, 1_001 + FREEZE);
        assert!(!s.is_frozen());
        assert_eq!((s.count(), s.fresh()), (0, 0), "buffer reset");
        let expect = draws(&r, 16);
        let sent: Vec<u16> = (0..16).map(|_| s.next_entropy(&p, P, &mut r)).collect();
        assert_eq!(sent, expect, "E = 16 random sends");
        // Then random because the buffer is empty, which draws the stream's next value.
        let next = draws(&r, 1)[0];
        assert_eq!(s.next_entropy(&p, P, &mut r), next);
    }

    #[test]
    fn good_feedback_that_thaws_is_cached_but_exploration_comes_first() {
        let p = params(true);
        let mut s = RepsState::new(3);
        let mut r = rng();
        s.feedback(&p, 10, Feedback::Delivered, 0);
        s.feedback(&p, 10, timeout(0, 1), 0);
        s.feedback(&p, 77, Feedback::Delivered, FREEZE + 1);
        assert!(!s.is_frozen());
        assert_eq!((s.count(), s.fresh()), (1, 1));
        let expect = draws(&r, 3);
        let sent: Vec<u16> = (0..4).map(|_| s.next_entropy(&p, P, &mut r)).collect();
        assert_eq!(sent, [expect[0], expect[1], expect[2], 77]);
    }

    #[test]
    fn no_freeze_while_exploring_or_when_disabled() {
        let p = params(true);
        let mut s = RepsState::new(2);
        s.feedback(&p, 1, timeout(0, 1), 0);
        s.feedback(&p, 1, Feedback::Nack, FREEZE + 1);
        assert!(!s.is_frozen() && s.explore == 2);
        s.feedback(&p, 1, timeout(0, 1), FREEZE + 2);
        assert!(!s.is_frozen(), "explore_counter > 0 blocks freezing");
        let off = RepsParams { freeze_ps: 0, ..p };
        let mut s = RepsState::new(2);
        s.feedback(&off, 1, timeout(0, 1), 0);
        assert!(!s.is_frozen(), "freeze_ps = 0 disables freezing");
    }

    #[test]
    fn without_trimming_only_timeouts_congestion_does_not_explain_freeze() {
        let p = params(false);
        let base = 10_000_000; // 10 µs
        let mut s = RepsState::new(16);
        // Largest recent RTT 1.65 × base: explained by congestion.
        s.feedback(&p, 1, timeout(16_500_000, base), 0);
        assert!(!s.is_frozen());
        // Just below the gate: a suspected failure.
        s.feedback(&p, 1, timeout(16_499_999, base), 0);
        assert!(s.is_frozen());
        // With trimming, any timeout freezes.
        let mut s = RepsState::new(16);
        s.feedback(&params(true), 1, timeout(100 * base, base), 0);
        assert!(s.is_frozen());
    }

    #[test]
    fn a_one_slot_buffer_recycles_the_latest_good_ev() {
        let p = RepsParams {
            buffer: 1,
            ..params(true)
        };
        let mut s = RepsState::new(16);
        let mut r = rng();
        s.feedback(&p, 3, Feedback::Delivered, 0);
        s.feedback(&p, 4, Feedback::Delivered, 0);
        assert_eq!((s.count(), s.fresh()), (1, 1));
        assert_eq!(s.next_entropy(&p, P, &mut r), 4);
        let next = draws(&r, 1)[0];
        assert_eq!(s.next_entropy(&p, P, &mut r), next);
    }

    #[test]
    fn state_is_a_few_dozen_bytes() {
        assert_eq!(std::mem::size_of::<RepsState>(), 56);
    }
}
