//! UEC path-aware spraying "bitmap" (as UEC htsim's `UecMpBitmap`). Host side
//! only: switches hash (ECMP).
//!
//! Each flow's sender walks a permutation of its P entropy values (EVs), as UEC's oblivious spray
//! does (`UecMpOblivious`: `ev = idx XOR xor`, `xor` redrawn every P packets), and keeps one
//! penalty byte per EV: feedback adds to it (ECN +1, a trim before the last hop +4, a timeout +15,
//! capped at `max_penalty`). A send skips EVs with a penalty, decrementing the penalty of the first
//! one it skips only (so penalties age with sends, not time), and gives up after P skips, sending
//! on a penalised EV then. A clean ACK changes nothing.

use super::host_policy::{BuildHost, Feedback, HostPolicy, PacketAt};
use crate::packet::NO_VIA;
use crate::scenario::LbConfig;
use crate::topology::Fabric;
use rand::Rng;
use rand_pcg::Pcg32;
use serde::{Deserialize, Serialize};

/// The bitmap's parameters, the same for every flow of a run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct BitmapParams {
    /// EVs per flow P, a power of two: EVs are `0..paths`.
    pub paths: u32,
    pub ecn_penalty: u8,
    pub nack_penalty: u8,
    pub timeout_penalty: u8,
    pub max_penalty: u8,
    /// UEC 1.0.3's rule (UNVERIFIED): with more than half of the EVs penalised, skip none.
    pub no_skip_above_half: bool,
}

impl BitmapParams {
    pub(crate) fn new(cfg: &LbConfig) -> BitmapParams {
        BitmapParams {
            paths: cfg.bitmap.paths,
            // Validated: each at most 255.
            ecn_penalty: cfg.bitmap.ecn_penalty as u8,
            nack_penalty: cfg.bitmap.nack_penalty as u8,
            timeout_penalty: cfg.bitmap.timeout_penalty as u8,
            max_penalty: cfg.bitmap.max_penalty as u8,
            no_skip_above_half: cfg.bitmap.no_skip_above_half,
        }
    }

    /// What `what` adds to its EV's penalty.
    fn penalty(&self, what: Feedback) -> u8 {
        match what {
            Feedback::Delivered => 0,
            Feedback::Ecn => self.ecn_penalty,
            Feedback::Nack => self.nack_penalty,
            Feedback::Timeout { .. } => self.timeout_penalty,
        }
    }
}

/// A flow's bitmap state (sender side): P penalty bytes and the permutation walk, boxed and
/// allocated only for `bitmap` and `mixed` flows.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct BitmapState {
    /// Penalty of each EV (0: usable).
    penalty: Box<[u8]>,
    /// EVs whose penalty is above 0.
    marked: u32,
    /// Position in the current permutation round, `0..P`.
    idx: u32,
    /// The current round's XOR mask, `0..P`.
    xor: u32,
}

impl BitmapState {
    /// A new flow: no penalties, a random first permutation.
    pub(crate) fn new(p: &BitmapParams, rng: &mut Pcg32) -> BitmapState {
        BitmapState {
            penalty: vec![0; p.paths as usize].into_boxed_slice(),
            marked: 0,
            idx: 0,
            xor: rng.gen_range(0..p.paths),
        }
    }

    /// The permutation's current EV.
    fn current(&self) -> u32 {
        self.idx ^ self.xor
    }

    /// Moves to the permutation's next EV, drawing a new permutation after P.
    fn advance(&mut self, p: &BitmapParams, rng: &mut Pcg32) {
        self.idx += 1;
        if self.idx == p.paths {
            self.idx = 0;
            self.xor = rng.gen_range(0..p.paths);
        }
    }

    fn decrement(&mut self, ev: u32) {
        let pen = &mut self.penalty[ev as usize];
        *pen -= 1;
        if *pen == 0 {
            self.marked -= 1;
        }
    }

    /// The EV of the next packet (retransmissions included).
    pub(crate) fn next_entropy(&mut self, p: &BitmapParams, rng: &mut Pcg32) -> u16 {
        let mut ev = self.current();
        // UNVERIFIED UEC 1.0.3 rule: with over half the EVs marked, take the walk's EV as it
        // is. Its penalty still drops by one (as the first skipped EV's would) so that marks
        // age out and the flow leaves this mode; without that it never would.
        let skip = !(p.no_skip_above_half && 2 * self.marked > p.paths);
        if !skip && self.penalty[ev as usize] > 0 {
            self.decrement(ev);
        }
        let mut skipped = 0;
        while skip && self.penalty[ev as usize] > 0 {
            if skipped == 0 {
                self.decrement(ev);
            }
            skipped += 1;
            // htsim gives up on the (P+1)-th penalised EV in a row and sends on it.
            if skipped > p.paths {
                break;
            }
            self.advance(p, rng);
            ev = self.current();
        }
        self.advance(p, rng);
        ev as u16
    }

    /// What became of a packet sent on `ev` (taken modulo P, as htsim masks it).
    pub(crate) fn feedback(&mut self, p: &BitmapParams, ev: u16, what: Feedback) {
        let add = p.penalty(what);
        if add == 0 {
            return;
        }
        let pen = &mut self.penalty[(ev as u32 & (p.paths - 1)) as usize];
        if *pen == 0 {
            self.marked += 1;
        }
        *pen = pen.saturating_add(add).min(p.max_penalty);
    }

    #[cfg(test)]
    pub(crate) fn penalty(&self, ev: u16) -> u8 {
        self.penalty[ev as usize]
    }

    #[cfg(test)]
    /// EVs with a penalty above 0.
    pub(crate) fn marked(&self) -> u32 {
        self.marked
    }
}

impl HostPolicy for BitmapParams {
    type Flow = BitmapState;

    fn new_flow(&self, _: u64, rng: &mut Pcg32) -> Option<BitmapState> {
        Some(BitmapState::new(self, rng))
    }

    fn next_packet(
        &self,
        at: &PacketAt<'_>,
        _: &mut u32,
        flow: Option<&mut BitmapState>,
        rng: &mut Pcg32,
    ) -> (u16, u32) {
        match flow {
            Some(b) => (b.next_entropy(self, rng), NO_VIA),
            None => at.echoed(),
        }
    }

    fn feedback(&self, flow: &mut BitmapState, entropy: u16, what: Feedback, _: u64) {
        flow.feedback(self, entropy, what);
    }

    /// The state and its penalty per EV.
    fn flow_state_bytes(&self, _: u32) -> u64 {
        (std::mem::size_of::<BitmapState>() + self.paths as usize) as u64
    }
}

impl BuildHost for BitmapParams {
    fn build(cfg: &LbConfig, _: bool, _: &Fabric) -> BitmapParams {
        BitmapParams::new(cfg)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::{stream, Purpose};

    const P: u32 = 16;

    fn params() -> BitmapParams {
        BitmapParams {
            paths: P,
            ecn_penalty: 1,
            nack_penalty: 4,
            timeout_penalty: 15,
            max_penalty: 15,
            no_skip_above_half: false,
        }
    }

    fn rng() -> Pcg32 {
        stream(5, 2, Purpose::HostLb)
    }

    fn timeout() -> Feedback {
        Feedback::Timeout {
            recent_max_rtt_ps: 0,
            base_rtt_ps: 1,
        }
    }

    #[test]
    fn without_penalties_every_aligned_window_of_p_sends_is_a_permutation() {
        let p = params();
        let mut r = rng();
        let mut s = BitmapState::new(&p, &mut r);
        for _ in 0..4 {
            let mut seen: Vec<u16> = (0..P).map(|_| s.next_entropy(&p, &mut r)).collect();
            seen.sort_unstable();
            assert_eq!(seen, (0..P as u16).collect::<Vec<_>>());
        }
    }

    #[test]
    fn feedback_adds_1_4_15_and_caps_at_max_penalty() {
        let p = params();
        let mut s = BitmapState::new(&p, &mut rng());
        s.feedback(&p, 3, Feedback::Ecn);
        s.feedback(&p, 3, Feedback::Ecn);
        s.feedback(&p, 5, Feedback::Nack);
        s.feedback(&p, 7, Feedback::Delivered);
        s.feedback(&p, 9, timeout());
        s.feedback(&p, 5, Feedback::Nack);
        s.feedback(&p, 5, Feedback::Nack);
        s.feedback(&p, 5, Feedback::Nack); // 16 → capped at 15
                                           // EVs above P are masked (19 & 15 = 3).
        s.feedback(&p, 19, Feedback::Ecn);
        let pens: Vec<u8> = [3, 5, 7, 9].iter().map(|&e| s.penalty(e)).collect();
        assert_eq!(pens, [3, 15, 0, 15]);
        assert_eq!(s.marked(), 3);
    }

    /// UEC htsim's bitmap: a penalised EV is never returned while its penalty is above 0 (unless
    /// all are penalised), and each send decrements at most one EV's penalty, by exactly 1.
    #[test]
    fn penalised_evs_are_skipped_and_each_send_decrements_at_most_one_penalty_by_one() {
        let p = params();
        let mut r = rng();
        let mut s = BitmapState::new(&p, &mut r);
        // Penalise half the EVs, with assorted penalties.
        for ev in 0..P as u16 / 2 {
            s.feedback(
                &p,
                2 * ev,
                if ev % 2 == 0 {
                    timeout()
                } else {
                    Feedback::Nack
                },
            );
        }
        for _ in 0..400 {
            let before = s.penalty.clone();
            let ev = s.next_entropy(&p, &mut r);
            assert_eq!(before[ev as usize], 0, "sent on penalised EV {ev}");
            let drops: Vec<i32> = before
                .iter()
                .zip(s.penalty.iter())
                .map(|(&b, &a)| b as i32 - a as i32)
                .filter(|&d| d != 0)
                .collect();
            assert!(drops.is_empty() || drops == [1], "{drops:?}");
        }
        assert_eq!(s.marked(), 0, "400 sends age out every penalty");
    }

    #[test]
    fn the_first_skipped_ev_alone_is_decremented() {
        let p = params();
        let mut r = rng();
        let mut s = BitmapState::new(&p, &mut r);
        // Penalise the next three EVs of the walk: the send returns the fourth, and only the
        // first of the three loses a point.
        let mut probe = s.clone();
        let mut pr = r.clone();
        let walk: Vec<u16> = (0..4).map(|_| probe.next_entropy(&p, &mut pr)).collect();
        for &ev in &walk[..3] {
            s.feedback(&p, ev, Feedback::Nack);
        }
        assert_eq!(s.next_entropy(&p, &mut r), walk[3]);
        let pens: Vec<u8> = walk[..3].iter().map(|&e| s.penalty(e)).collect();
        assert_eq!(pens, [3, 4, 4]);
    }

    #[test]
    fn with_every_ev_penalised_the_walk_gives_up_after_p_skips() {
        let p = params();
        let mut r = rng();
        let mut s = BitmapState::new(&p, &mut r);
        for ev in 0..P as u16 {
            s.feedback(&p, ev, Feedback::Nack);
        }
        let ev = s.next_entropy(&p, &mut r);
        assert!(s.penalty(ev) > 0, "a penalised EV is sent");
        // One decrement in all: 16 × 4 − 1.
        let total: u32 = (0..P as u16).map(|e| s.penalty(e) as u32).sum();
        assert_eq!(total, 63);
        // P + 1 EVs were examined (a whole round and the next round's first) and the walk
        // moved past the one sent: idx advanced P + 1 times from 0, to 1 of the second round.
        assert_eq!(s.idx, 1);
    }

    #[test]
    fn above_half_marked_the_optional_rule_skips_nothing() {
        let p = BitmapParams {
            no_skip_above_half: true,
            ..params()
        };
        let mut r = rng();
        let mut s = BitmapState::new(&p, &mut r);
        // 9 of 16 marked (more than half): the walk's own EVs come out, in order.
        let mut probe = s.clone();
        let mut pr = r.clone();
        let walk: Vec<u16> = (0..3).map(|_| probe.next_entropy(&p, &mut pr)).collect();
        for ev in 0..9 {
            s.feedback(&p, ev, Feedback::Nack);
        }
        let sent: Vec<u16> = (0..3).map(|_| s.next_entropy(&p, &mut r)).collect();
        assert_eq!(sent, walk);
        // Exactly half marked: skipping resumes.
        let mut r = rng();
        let mut s = BitmapState::new(&p, &mut r);
        for ev in 0..8 {
            s.feedback(&p, ev, Feedback::Nack);
        }
        for _ in 0..8 {
            assert!(s.next_entropy(&p, &mut r) >= 8);
        }
    }
}
