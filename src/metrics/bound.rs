//! CCT lower bounds, the baseline of "CCT increase".
//!
//! A path is a list of [`Hop`]s in the direction of travel, each with its own serialization
//! times (so fabric tiers may run at other rates than the host links) and its latency
//! (propagation plus the forwarding latency of the node it reaches). The physics is weft's: a
//! frame of B bytes on hop j takes ser_j(B), after which the link idles for the inter-frame gap
//! ser_j(G) before the next frame; the gap does not delay the frame itself. Nodes are
//! store-and-forward. A source sends its m data packets back to back (m − 1 full packets, then
//! the last one, possibly shorter); the receiver acknowledges each on arrival; CCT runs from the
//! first data bit to the last ACK's arrival at the source.
//!
//! # One flow alone: [`single_flow_bound_ps`]
//!
//! The data packets cross a tandem of FIFO links, so the last bit of the last packet reaches
//! the receiver at the weight of the heaviest staircase path through the (packet, hop) grid
//! (the max-plus form of the recursion D(i, j) = max(arrival, link free) + ser). Such a path
//! reaches the last packet at some hop k; before that it makes its m − 2 other packet steps at
//! hops at or before k, each worth data_j + gap_j, so at the slowest of them. Hence, with
//! `slot_j = data_j + gap_j`:
//!
//! ```text
//! m = 1:  arrival = Σ_j (last_j + latency_j)
//! m ≥ 2:  arrival = Σ_j latency_j + max_k [ Σ_{j≤k} data_j + (m − 2)·max_{j≤k} slot_j
//!                                           + gap_k + Σ_{j≥k} last_j ]
//! ```
//!
//! In words: the train of full packets is paced by the slowest hop met so far, the last packet
//! trails it at hop k by one gap and its own serialization, then crosses the remaining hops at
//! its own size. Each k is a lower bound, and the maximum is exact for any path, whatever the
//! order of the rates. (Taking the pacing hop equal to k, i.e. "the bottleneck j*", is not
//! enough with a short last packet: behind a slow middle tier the last packet catches up with
//! the train again on the next, faster hop; see the test `last_packet_trails_past_the_bottleneck`.)
//! With one rate everywhere and full packets this is (m − 1)(D + G) + H·D + Σ latency, the
//! old data-limited term; with a short last packet it is (H − 1)(D − last) larger than the
//! old (m − 1)(D + G) + H·last, because the last packet cannot overtake its predecessor.
//!
//! The bound then adds the last ACK's trip, Σ_rev (ack_j + latency_j). That is exact when ACKs
//! never wait behind one another, which holds when every reverse hop serializes an ACK and a gap
//! no slower than the last forward hop serializes the last data packet and a gap (consecutive
//! arrivals at the receiver are at least that far apart): in a fat tree, whenever the fabric is
//! no slower than the host links and an ACK is no larger than the last data packet. So a flow
//! alone on an idle fat tree completes in exactly the bound; in the other cases it is a bound.
//! It is also a bound for any workload: other traffic can only delay a flow.
//!
//! # Permutations: [`permutation_bound_ps`]
//!
//! The Ofan paper's appendix-A model ("Permutation CCT Lower-Bound", Fig. 15): every host
//! sends its own m data packets and the ACKs of the flow it receives on its NIC. Three modes:
//! data only until the first data packet has arrived, then data and ACKs interleaved, then ACKs
//! only. Generalized to per-hop rates, the terms that describe a NIC use the host link (the
//! sender's NIC for data, `fwd[0]`: T'd = data + gap; the receiver's NIC for ACKs, `rev[0]`:
//! T'a = ack + gap), and the path terms become sums over the hops:
//!
//! ```text
//! t1 = Tp + H·Td               →  Σ_fwd (data_j + latency_j)       (first packet's arrival)
//! Tp + (H − 1)·Td  (in i1)     →  t1 − data_0
//! (H − 1)·T'a + Tp (mode 3)    →  Σ_{rev[1..]} (ack_j + gap_j) + Σ_rev latency_j
//! ```
//!
//! With one rate and latency everywhere this is exactly the paper's formula. Where the model is
//! silent (for m < 2·i1 the modes overlap, a case the paper leaves open) weft takes the
//! larger of the model and [`single_flow_bound_ps`], which always holds. For m < i1 (the
//! receiver has finished its own data before the first arrival, so the mode structure does not
//! apply) only the single-flow bound is used; inside the model, mode 3's look-back term is used
//! only when the packet it refers to exists. With a short last packet the model is applied to
//! the m − 1 full packets (the single-flow bound accounts for the last one).
//!
//! The tests also check the equal-rate form (`BoundParams`, `permutation_lower_bound_ps`,
//! `appendix_a_ps`, compiled only for them), a wrapper over these that states the paper's
//! formula with one rate and latency everywhere.

/// One hop (link) of a path, in the direction of travel, all in ps.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Hop {
    /// Serialization of a full data packet (payload + header), without the gap.
    pub data_ps: u64,
    /// Serialization of the flow's last data packet (≤ `data_ps`).
    pub last_ps: u64,
    /// Serialization of an ACK, without the gap.
    pub ack_ps: u64,
    /// Serialization of the inter-frame gap.
    pub gap_ps: u64,
    /// Propagation plus the forwarding latency of the node the hop reaches.
    pub latency_ps: u64,
}

impl Hop {
    /// T'd: a full data packet and its gap.
    fn data_slot(&self) -> u64 {
        self.data_ps + self.gap_ps
    }

    /// T'a: an ACK and its gap.
    fn ack_slot(&self) -> u64 {
        self.ack_ps + self.gap_ps
    }
}

/// Lower bound on the CCT of one flow of `m ≥ 1` packets alone in the fabric (no other
/// traffic): data-limited tandem bound + the last ACK's return over `rev`, in ps. Exact when
/// ACKs do not queue behind each other (see the module comment).
pub(crate) fn single_flow_bound_ps(m: u64, fwd: &[Hop], rev: &[Hop]) -> u64 {
    assert!(m >= 1 && !fwd.is_empty() && !rev.is_empty());
    last_data_arrival_ps(m, fwd) + rev.iter().map(|h| h.ack_ps + h.latency_ps).sum::<u64>()
}

/// When the last bit of the last data packet reaches the receiver (exact, see the module
/// comment).
pub(crate) fn last_data_arrival_ps(m: u64, fwd: &[Hop]) -> u64 {
    let latency: u64 = fwd.iter().map(|h| h.latency_ps).sum();
    let mut tail: u64 = fwd.iter().map(|h| h.last_ps).sum(); // Σ_{j≥k} last_j
    if m == 1 {
        return latency + tail;
    }
    let (mut head, mut slot, mut best) = (0, 0, 0); // Σ_{j≤k} data_j, max_{j≤k} slot_j
    for h in fwd {
        assert!(h.last_ps <= h.data_ps);
        head += h.data_ps;
        slot = slot.max(h.data_slot());
        best = best.max(head + (m - 2) * slot + h.gap_ps + tail);
        tail -= h.last_ps;
    }
    latency + best
}

/// Permutation bound (every host sends one flow and receives one), in ps: the larger of the
/// appendix-A model generalized to per-hop rates and [`single_flow_bound_ps`].
pub(crate) fn permutation_bound_ps(m: u64, fwd: &[Hop], rev: &[Hop]) -> u64 {
    let single = single_flow_bound_ps(m, fwd, rev);
    let short_last = fwd.iter().any(|h| h.last_ps < h.data_ps);
    let full = if short_last { m - 1 } else { m };
    if full < Modes::new(fwd, rev).i1 {
        return single;
    }
    single.max(appendix_a_model_ps(full, fwd, rev))
}

/// The appendix-A model's constants for a path.
struct Modes {
    /// T'd of the sender's NIC.
    td2: u64,
    /// T'a of the receiver's NIC.
    ta2: u64,
    /// i1: the packet the receiver is sending when the first data packet arrives.
    i1: u64,
    /// tack_1: the first ACK leaves the receiver's NIC.
    tack1: u64,
    /// An ACK's trip beyond the receiver's NIC.
    ack_beyond: u64,
}

impl Modes {
    fn new(fwd: &[Hop], rev: &[Hop]) -> Modes {
        assert!(!fwd.is_empty() && !rev.is_empty());
        let (nic_tx, nic_ack) = (fwd[0], rev[0]);
        let t1: u64 = fwd.iter().map(|h| h.data_ps + h.latency_ps).sum();
        let td2 = nic_tx.data_slot();
        let i1 = (t1 - nic_tx.data_ps).div_ceil(td2) + 1;
        let ack_gaps: u64 = rev[1..].iter().map(Hop::ack_slot).sum();
        Modes {
            td2,
            ta2: nic_ack.ack_slot(),
            i1,
            tack1: t1 + (i1 - 1) * td2 + nic_ack.ack_slot(),
            ack_beyond: ack_gaps + rev.iter().map(|h| h.latency_ps).sum::<u64>(),
        }
    }
}

/// `tack_m` of the appendix-A model generalized to per-hop rates (module comment), for
/// `m ≥ i1` packets of full size, in ps.
pub(crate) fn appendix_a_model_ps(m: u64, fwd: &[Hop], rev: &[Hop]) -> u64 {
    let md = Modes::new(fwd, rev);
    assert!(
        m >= md.i1,
        "the appendix-A model needs m >= i1 ({m} < {})",
        md.i1
    );
    let i2 = m - md.i1 + 1;
    // tack[i - 1] for i = 1..=m
    let mut tack = Vec::with_capacity(m as usize);
    tack.push(md.tack1);
    for i in 2..=m {
        let t = if i <= i2 {
            md.tack1 + (i - 1) * (md.td2 + md.ta2)
        } else {
            let acks_only = tack[i2 as usize - 1] + (i - i2) * md.ta2;
            match (i + 1).checked_sub(md.i1).filter(|&j| j >= 1) {
                Some(j) => acks_only.max(tack[j as usize - 1] + md.ack_beyond),
                None => acks_only,
            }
        };
        tack.push(t);
    }
    tack[m as usize - 1]
}

/// Times of the equal-rate model, all in ps.
#[cfg(test)]
#[derive(Clone, Copy, Debug)]
pub(crate) struct BoundParams {
    /// Data packet serialization (payload + header), without the gap.
    pub td: u64,
    /// Serialization of the flow's last data packet.
    pub td_last: u64,
    /// ACK serialization, without the gap.
    pub ta: u64,
    /// Inter-frame gap serialization.
    pub tg: u64,
    /// One-way latency over the whole path.
    pub tp: u64,
    /// Hops (links) on the path.
    pub hops: u64,
}

#[cfg(test)]
impl BoundParams {
    /// `hops` equal hops sharing the latency `tp`; the same list serves both directions.
    pub(crate) fn path(&self) -> Vec<Hop> {
        let h = self.hops;
        assert!(h >= 1);
        let hop = |j: u64| Hop {
            data_ps: self.td,
            last_ps: self.td_last,
            ack_ps: self.ta,
            gap_ps: self.tg,
            latency_ps: self.tp / h + u64::from(j < self.tp % h),
        };
        (0..h).map(hop).collect()
    }
}

/// [`permutation_bound_ps`] on an equal-rate path (0 for `m = 0`).
#[cfg(test)]
pub(crate) fn permutation_lower_bound_ps(m: u64, p: &BoundParams) -> u64 {
    if m == 0 {
        return 0;
    }
    let path = p.path();
    permutation_bound_ps(m, &path, &path)
}

/// [`appendix_a_model_ps`] on an equal-rate path: the paper's formula.
#[cfg(test)]
pub(crate) fn appendix_a_ps(m: u64, p: &BoundParams) -> u64 {
    let path = p.path();
    appendix_a_model_ps(m, &path, &path)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The Ofan paper's set-up: 4158 B data and 64 B ACKs at 800 Gb/s, 20 B gaps, 6 hops of 0.5 us.
    const OFAN_DEFAULTS: BoundParams = BoundParams {
        td: 41_580,
        td_last: 41_580,
        ta: 640,
        tg: 200,
        tp: 3_000_000,
        hops: 6,
    };

    // Hand-computed: td = 10, ta = 2, tg = 1, tp = 20, H = 2.
    // T'd = 11, T'a = 3; i1 = ceil((20 + 10)/11) + 1 = 4; t1 = 20 + 20 = 40;
    // t_i1 = 40 + 3*11 = 73; tack_1 = 76.
    const P: BoundParams = BoundParams {
        td: 10,
        td_last: 10,
        ta: 2,
        tg: 1,
        tp: 20,
        hops: 2,
    };

    fn hop(data: u64, last: u64, ack: u64, gap: u64, latency: u64) -> Hop {
        Hop {
            data_ps: data,
            last_ps: last,
            ack_ps: ack,
            gap_ps: gap,
            latency_ps: latency,
        }
    }

    /// The appendix-A function before per-hop rates, verbatim.
    fn old_appendix_a_ps(m: u64, p: &BoundParams) -> u64 {
        let i1 = (p.tp + (p.hops - 1) * p.td).div_ceil(p.td + p.tg) + 1;
        assert!(m >= i1);
        let td2 = p.td + p.tg;
        let ta2 = p.ta + p.tg;
        let t_i1 = p.tp + p.hops * p.td + (i1 - 1) * td2;
        let i2 = m - i1 + 1;
        let mut tack = vec![t_i1 + ta2];
        for i in 2..=m {
            let t = if i <= i2 {
                tack[0] + (i - 1) * (td2 + ta2)
            } else {
                let acks_only = tack[i2 as usize - 1] + (i - i2) * ta2;
                match (i + 1).checked_sub(i1).filter(|&j| j >= 1) {
                    Some(j) => acks_only.max(tack[j as usize - 1] + (p.hops - 1) * ta2 + p.tp),
                    None => acks_only,
                }
            };
            tack.push(t);
        }
        tack[m as usize - 1]
    }

    /// The data-limited term before per-hop rates.
    fn old_data_limited(m: u64, p: &BoundParams) -> u64 {
        (m - 1) * (p.td + p.tg) + p.hops * p.td_last + p.tp + p.hops * p.ta + p.tp
    }

    #[test]
    fn appendix_model_by_hand() {
        assert_eq!(Modes::new(&P.path(), &P.path()).i1, 4);
        // m = 4: i2 = 1. tack_2 = max(76 + 3, no look-back: 2 + 1 - 4 < 1) = 79;
        // tack_3 = 82 (look-back j = 0: none); tack_4: j = 1 → max(85, 76 + 3 + 20 = 99) = 99.
        assert_eq!(appendix_a_ps(4, &P), 99);
        // m = 6: i2 = 3. tack_2 = 76 + 14 = 90, tack_3 = 104.
        // i = 4: max(104 + 3, tack_1 + 1*3 + 20 = 99) = 107
        // i = 5: max(104 + 6 = 110, tack_2 + 23 = 113) = 113
        // i = 6: max(104 + 9 = 113, tack_3 + 23 = 127) = 127
        assert_eq!(appendix_a_ps(6, &P), 127);
        // The same on an explicit path whose latency sits on one hop only.
        let path = [hop(10, 10, 2, 1, 20), hop(10, 10, 2, 1, 0)];
        assert_eq!(appendix_a_model_ps(4, &path, &path), 99);
        assert_eq!(appendix_a_model_ps(6, &path, &path), 127);
    }

    #[test]
    fn equal_rates_give_the_old_model_exactly() {
        for hops in 1..=6 {
            for (td, ta, tg, tp) in [(10, 2, 1, 20), (7, 3, 2, 0), (41_580, 640, 200, 3_000_000)] {
                let p = BoundParams {
                    td,
                    td_last: td,
                    ta,
                    tg,
                    tp,
                    hops,
                };
                let i1 = Modes::new(&p.path(), &p.path()).i1;
                for m in i1..i1 + 40 {
                    assert_eq!(
                        appendix_a_ps(m, &p),
                        old_appendix_a_ps(m, &p),
                        "{p:?} m = {m}"
                    );
                }
            }
        }
    }

    #[test]
    fn single_flow_is_the_old_data_limited_term_for_equal_rates() {
        // Full packets: (m − 1)(td + tg) + H·td + tp + H·ta + tp, both ways.
        // A short last packet: (H − 1)(td − td_last) more, since it trails its predecessor.
        for hops in 1..=6 {
            for td_last in [10, 4] {
                let p = BoundParams {
                    td_last,
                    ..BoundParams { hops, ..P }
                };
                for m in 1..50 {
                    let new = single_flow_bound_ps(m, &p.path(), &p.path());
                    let lag = if m == 1 {
                        0
                    } else {
                        (hops - 1) * (10 - td_last)
                    };
                    assert_eq!(new, old_data_limited(m, &p) + lag, "H = {hops} m = {m}");
                }
            }
        }
    }

    #[test]
    fn short_flows_use_the_data_limited_bound() {
        // (m - 1) * 11 + 2 * 10 + 20 + 2 * 2 + 20
        assert_eq!(permutation_lower_bound_ps(1, &P), 64);
        assert_eq!(permutation_lower_bound_ps(3, &P), 86);
        // m = 6: data-limited 119 < model 127.
        assert_eq!(permutation_lower_bound_ps(6, &P), 127);
        // A short last packet (td_last = 4): single-flow 5*11 + 10 + 4 + 20 + 4 + 20 = 113
        // (the old data-limited term was 107); the model runs on the 5 full packets: i2 = 2,
        // tack_2 = 90, tack_3 = 93, tack_4 = max(96, 99) = 99, tack_5 = max(99, 90 + 23) = 113.
        let short = BoundParams { td_last: 4, ..P };
        assert_eq!(single_flow_bound_ps(6, &short.path(), &short.path()), 113);
        assert_eq!(permutation_lower_bound_ps(6, &short), 113);
    }

    #[test]
    fn long_flows_grow_at_data_plus_ack_rate() {
        let a = permutation_lower_bound_ps(1000, &P);
        let b = permutation_lower_bound_ps(1001, &P);
        assert_eq!(b - a, 14);
    }

    /// 4 hops: host links data 10, ack 2, gap 2; fabric twice as fast; latency 3 per hop.
    fn faster_middle(last_host: u64, last_fabric: u64) -> Vec<Hop> {
        let host = hop(10, last_host, 2, 2, 3);
        let fabric = hop(5, last_fabric, 1, 1, 3);
        vec![host, fabric, fabric, host]
    }

    /// 4 hops: host links data 5, ack 1, gap 1; fabric twice as slow; latency 3 per hop.
    fn slower_middle(last_host: u64, last_fabric: u64) -> Vec<Hop> {
        let host = hop(5, last_host, 1, 1, 3);
        let fabric = hop(10, last_fabric, 2, 2, 3);
        vec![host, fabric, fabric, host]
    }

    #[test]
    fn faster_middle_tier_by_hand() {
        let p = faster_middle(10, 5);
        // Slots (data + gap) 12, 6, 6, 12; latency 12; the ACK's trip 2 + 1 + 1 + 2 + 12 = 18.
        // m = 1: 10 + 5 + 5 + 10 + 12 + 18 = 60.
        assert_eq!(single_flow_bound_ps(1, &p, &p), 60);
        // m = 2, by packet: hop 0 [0,10] [12,22]; hop 1 [13,18] [25,30]; hop 2 [21,26]
        // [33,38]; hop 3 [29,39] [41,51]; arrival 54, + 18 = 72.
        assert_eq!(single_flow_bound_ps(2, &p, &p), 72);
        // Full packets: 12 per packet after the first: 12m + 48.
        assert_eq!(single_flow_bound_ps(10, &p, &p), 168);
        // Short last packet (6 on host links, 3 in the fabric), m = 3: k = 3 gives
        // 30 + 12 + 2 + 6 = 50; arrival 62, + 18 = 80. By packet: hop 3 carries the second
        // packet [41,51], the last one arrives at 45 and goes [53,59].
        let s = faster_middle(6, 3);
        assert_eq!(single_flow_bound_ps(3, &s, &s), 80);
        // Appendix A: T'd = 12, T'a = 4, t1 = 42, i1 = ceil(32 / 12) + 1 = 4,
        // tack_1 = 42 + 36 + 4 = 82, an ACK's trip beyond the NIC 2 + 2 + 4 + 12 = 20.
        // m = 4: tack_2 = 86, tack_3 = 90, tack_4 = max(94, 82 + 20) = 102 > 96.
        assert_eq!(permutation_bound_ps(4, &p, &p), 102);
        // m = 6: i2 = 3, tack_2 = 98, tack_3 = 114, tack_4 = max(118, 102) = 118,
        // tack_5 = max(122, 118) = 122, tack_6 = max(126, 114 + 20) = 134 > 120.
        assert_eq!(permutation_bound_ps(6, &p, &p), 134);
        // m = 3 < i1: single-flow only.
        assert_eq!(permutation_bound_ps(3, &p, &p), 84);
    }

    #[test]
    fn slower_middle_tier_by_hand() {
        let p = slower_middle(5, 10);
        // Slots 6, 12, 12, 6; the fabric paces the train: arrival 42 + 12(m − 2) + 12 for
        // m ≥ 2; the ACK's trip 1 + 2 + 2 + 1 + 12 = 18.
        assert_eq!(single_flow_bound_ps(1, &p, &p), 60);
        assert_eq!(single_flow_bound_ps(2, &p, &p), 72);
        assert_eq!(single_flow_bound_ps(10, &p, &p), 168);
        // Short last packet (3 / 6), m = 3: k = 2 gives 25 + 12 + 2 + 9 = 48; arrival 60, + 18
        // = 78. By packet: hop 2 [21,31] [33,43] [45,51], hop 3 [34,39] [46,51] [54,57].
        let s = slower_middle(3, 6);
        assert_eq!(single_flow_bound_ps(3, &s, &s), 78);
        // Appendix A sees host NICs only: T'd = 6, t1 = 42, i1 = ceil(37 / 6) + 1 = 8,
        // tack_1 = 42 + 42 + 2 = 86, trip beyond 4 + 4 + 2 + 12 = 22; m = 8: tack_8 =
        // max(86 + 14, 86 + 22) = 108 < single-flow 144.
        assert_eq!(appendix_a_model_ps(8, &p, &p), 108);
        assert_eq!(permutation_bound_ps(8, &p, &p), 144);
    }

    #[test]
    fn two_hops_by_hand() {
        let fast = |last| hop(5, last, 1, 1, 3);
        let slow = |last| hop(10, last, 2, 2, 3);
        // Slots 6 then 12, latency 3 each, m = 3, last 1 / 2: k = 1 gives
        // 5 + 10 + 12 + 2 + 2 = 31 (k = 0: 5 + 6 + 1 + 3 = 15); arrival 37;
        // the ACK's trip over the mirror image 2 + 1 + 6 = 9: 46.
        let (fwd, rev) = ([fast(1), slow(2)], [slow(2), fast(1)]);
        assert_eq!(single_flow_bound_ps(3, &fwd, &rev), 46);
        assert_eq!(brute_force_cct(3, &fwd, &rev), 46);
        // Slots 12 then 6, full packets: k = 0 gives 10 + 12(m − 2) + 2 + 15; latency 6;
        // the ACK's trip 1 + 2 + 6 = 9: 12m + 18 (m = 1: 15 + 6 + 9 = 30).
        let (fwd, rev) = ([slow(10), fast(5)], [fast(5), slow(10)]);
        assert_eq!(single_flow_bound_ps(1, &fwd, &rev), 30);
        assert_eq!(single_flow_bound_ps(4, &fwd, &rev), 66);
        assert_eq!(brute_force_cct(4, &fwd, &rev), 66);
    }

    #[test]
    fn last_packet_trails_past_the_bottleneck() {
        // Slots 11, 22, 11; m = 3, last 2 / 4 / 2, no latency. By packet: hop 0 [0,10] [11,21]
        // [22,24]; hop 1 [10,30] [32,52] [54,58]; hop 2 [30,40] [52,62] [63,65]. The last
        // packet waits for its predecessor on hop 2 too: k = 2 gives 40 + 22 + 1 + 2 = 65,
        // while pacing and trailing at the bottleneck (k = 1) gives only 30 + 22 + 2 + 6 = 60.
        let fwd = [
            hop(10, 2, 1, 1, 0),
            hop(20, 4, 1, 2, 0),
            hop(10, 2, 1, 1, 0),
        ];
        let rev = [hop(10, 2, 1, 1, 0); 3];
        assert_eq!(single_flow_bound_ps(3, &fwd, &rev), 68);
        assert_eq!(brute_force_cct(3, &fwd, &rev), 68);
    }

    #[test]
    fn ack_queueing_makes_it_a_bound_only() {
        // Slots 12 then 6, m = 4, a tiny last packet (2 / 1): arrivals at the receiver 45, 47;
        // the reverse fabric hop needs 4 per ACK, so the last ACK waits 2 there: 58 > 56.
        let fwd = [hop(10, 2, 2, 2, 3), hop(5, 1, 1, 1, 3)];
        let rev = [hop(5, 1, 1, 1, 3), hop(10, 2, 2, 2, 3)];
        assert_eq!(single_flow_bound_ps(4, &fwd, &rev), 56);
        assert_eq!(brute_force_cct(4, &fwd, &rev), 58);
    }

    fn sample_paths() -> Vec<Vec<Hop>> {
        let mut v = vec![
            P.path(),
            BoundParams { td_last: 4, ..P }.path(),
            OFAN_DEFAULTS.path(),
            BoundParams {
                td_last: 1_000,
                ..OFAN_DEFAULTS
            }
            .path(),
        ];
        v.extend([faster_middle(10, 5), faster_middle(6, 3)]);
        v.extend([slower_middle(5, 10), slower_middle(3, 6)]);
        v
    }

    #[test]
    fn monotone_in_packets() {
        let mut rng = Lcg(3);
        let random = (0..300).map(|i| random_path(&mut rng, i % 2 == 0));
        let paths: Vec<_> = sample_paths()
            .into_iter()
            .map(|p| (p.clone(), p))
            .chain(random)
            .collect();
        for (fwd, rev) in paths {
            let (mut single, mut perm) = (0, 0);
            for m in 1..300 {
                let s = single_flow_bound_ps(m, &fwd, &rev);
                let b = permutation_bound_ps(m, &fwd, &rev);
                assert!(s > single && b > perm, "m = {m} {fwd:?} {rev:?}");
                (single, perm) = (s, b);
            }
        }
    }

    #[test]
    fn permutation_bound_is_at_least_the_single_flow_bound() {
        let mut rng = Lcg(7);
        for _ in 0..300 {
            let (fwd, rev) = random_path(&mut rng, false);
            for m in 1..60 {
                let single = single_flow_bound_ps(m, &fwd, &rev);
                assert!(permutation_bound_ps(m, &fwd, &rev) >= single);
            }
        }
    }

    #[test]
    fn ofan_default_setup_is_close_to_line_rate() {
        // 1 MB at 800 Gb/s: 256 packets of 4158 B + ACKs. The bound must exceed sending all
        // data plus one propagation, and stay below sending all data and ACKs plus a round
        // trip of store-and-forward delays.
        let p = OFAN_DEFAULTS;
        let b = permutation_lower_bound_ps(256, &p);
        assert!(b > 256 * 41_780 + 3_000_000, "{b}");
        assert!(
            b < 256 * (41_780 + 840) + 2 * (3_000_000 + 6 * 41_580),
            "{b}"
        );
    }

    /// The tandem, packet by packet: (arrival times at the receiver, the last ACK's arrival).
    fn brute_force_cct(m: u64, fwd: &[Hop], rev: &[Hop]) -> u64 {
        let data = |h: &Hop, i: u64| if i + 1 == m { h.last_ps } else { h.data_ps };
        let arrivals = tandem(&vec![0; m as usize], fwd, data);
        *tandem(&arrivals, rev, |h, _| h.ack_ps).last().unwrap()
    }

    /// Frames ready at `ready` cross `hops` FIFO: D = max(arrival, free) + ser, free = D + gap,
    /// next arrival = D + latency. Returns the arrivals at the far end.
    fn tandem(ready: &[u64], hops: &[Hop], ser: impl Fn(&Hop, u64) -> u64) -> Vec<u64> {
        let mut at = ready.to_vec();
        for h in hops {
            let mut free = 0;
            for (i, t) in at.iter_mut().enumerate() {
                let done = (*t).max(free) + ser(h, i as u64);
                free = done + h.gap_ps;
                *t = done + h.latency_ps;
            }
        }
        at
    }

    /// A small fixed-seed LCG (Knuth's MMIX constants).
    struct Lcg(u64);

    impl Lcg {
        fn below(&mut self, n: u64) -> u64 {
            self.0 = self
                .0
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (self.0 >> 33) % n
        }
        fn range(&mut self, lo: u64, hi: u64) -> u64 {
            lo + self.below(hi - lo + 1)
        }
    }

    /// A random path: per-hop rates (ps per byte unit) and common frame sizes in byte units.
    /// `tree`: 1 to 3 tiers up and the same tiers down, the tiers' rates monotone (the fabric
    /// faster or slower than the host links), ACKs no larger than the last packet, and the
    /// reverse path the mirror image. Otherwise every hop and the reverse path are random.
    fn random_path(rng: &mut Lcg, tree: bool) -> (Vec<Hop>, Vec<Hop>) {
        let d = rng.range(3, 12);
        let last = rng.range(1, d);
        let ack = if tree {
            rng.range(1, last)
        } else {
            rng.range(1, d)
        };
        let gap = rng.range(0, 3);
        let make = |r: u64, rng: &mut Lcg| {
            let latency = rng.range(0, 10);
            hop(d * r, last * r, ack * r, gap * r, latency)
        };
        let (rates, rev_rates): (Vec<u64>, Vec<u64>) = if tree {
            let mut up: Vec<u64> = (0..rng.range(1, 3)).map(|_| rng.range(1, 6)).collect();
            up.sort_unstable();
            if rng.below(2) == 0 {
                up.reverse();
            }
            let path: Vec<u64> = up.iter().chain(up.iter().rev()).copied().collect();
            (path.clone(), path)
        } else {
            let random = |rng: &mut Lcg| (0..rng.range(1, 6)).map(|_| rng.range(1, 6)).collect();
            (random(rng), random(rng))
        };
        let fwd = rates.iter().map(|&r| make(r, rng)).collect();
        let rev = rev_rates.iter().map(|&r| make(r, rng)).collect();
        (fwd, rev)
    }

    /// Consecutive data packets reach the receiver at least `last + gap` of the last hop apart:
    /// if every reverse hop takes no longer for an ACK and a gap, ACKs never queue.
    fn acks_never_wait(fwd: &[Hop], rev: &[Hop]) -> bool {
        let end = fwd[fwd.len() - 1];
        rev.iter().all(|h| h.ack_slot() <= end.last_ps + end.gap_ps)
    }

    #[test]
    fn single_flow_bound_matches_a_brute_force_tandem() {
        let (mut rng, mut exact) = (Lcg(1), 0);
        for case in 0..600 {
            let (fwd, rev) = random_path(&mut rng, case % 2 == 0);
            for m in 1..=8 {
                let last_arrival = brute_force_arrivals(m, &fwd);
                assert_eq!(
                    last_data_arrival_ps(m, &fwd),
                    last_arrival,
                    "m = {m} {fwd:?}"
                );
                let bound = single_flow_bound_ps(m, &fwd, &rev);
                let sim = brute_force_cct(m, &fwd, &rev);
                if acks_never_wait(&fwd, &rev) {
                    assert_eq!(bound, sim, "m = {m} {fwd:?} {rev:?}");
                    exact += 1;
                } else {
                    assert!(bound <= sim, "m = {m} {fwd:?} {rev:?}");
                }
            }
        }
        // Most tree-like cases (fabric no slower than the hosts) qualify.
        assert!(exact > 2_000, "{exact}");
    }

    fn brute_force_arrivals(m: u64, fwd: &[Hop]) -> u64 {
        let data = |h: &Hop, i: u64| if i + 1 == m { h.last_ps } else { h.data_ps };
        *tandem(&vec![0; m as usize], fwd, data).last().unwrap()
    }
}
