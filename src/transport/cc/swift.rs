//! `host.cc = "swift"` and `"mswift"`: Swift's delay-based AIMD (Kumar et
//! al. SIGCOMM 2020 Alg. 1, checked against `Broadcom/csg-htsim:sim/swift.cpp`), optionally
//! fed the median of recent delay samples instead of the latest one (MSwift).
//!
//! Decisions (the Swift paper and htsim leave them open, or the transport differs from htsim's):
//! - Units: windows in bytes as packets occupy buffers, MSS of the formulas = `env.mtu_bytes`
//!   (one full data packet, header included); times in ps; the window is an f64 and
//!   [`Swift::cwnd_bytes`] returns its floor.
//! - Delay = the ACK's full RTT sample `s.rtt_ps`, compared with a target that includes base and
//!   per-hop terms (the "full RTT" domain). An ACK without a sample (it answers an earlier
//!   transmission) adjusts nothing but still resets `retransmit_cnt` and refreshes srtt.
//! - `can_decrease` uses the transport's smoothed RTT `s.srtt_ps` (srtt, not the base
//!   RTT, as htsim).
//! - target = base_target + hops·h + clamp(fs_α/√(cwnd/MTU) + fs_β, 0, fs_range), cwnd in
//!   real packets, hops = `env.hops` (switches on the path).
//! - Initial window = init_cwnd_bdp × `env.bdp_bytes`, clamped to [min_cwnd, max_cwnd].
//! - Loss detection is the transport's (SACK): a `Reordering` loss or a NACK stands for
//!   htsim's end of fast recovery, `cwnd *= 1 − max_mdf` if `can_decrease`. A `Timeout`
//!   counts toward `retx_reset_threshold` (then cwnd = min_cwnd), else is the same MD.
//! - Below one packet the flow is paced at one packet per srtt·MTU/cwnd, srtt the last one
//!   seen (the base RTT before any signal).
//!
//! Differences from csg-htsim `swift.cpp` (deliberate):
//! - htsim divides `cwnd/_mss` in integers in `targetDelay`, so the flow-scaling term jumps
//!   in whole packets and is at its full range below one packet; here cwnd/MTU is real.
//! - htsim's `hop_count()` counts route elements (queues and pipes); here it is switches.
//! - htsim keeps cwnd in integer bytes (each update truncates); here an f64.
//! - htsim's timeout MD does not record `_last_decrease` (only `applySwiftLimits` after an
//!   ACK does, comparing with a cwnd taken after the timeout), so an ACK right after a
//!   timeout may decrease again; here every decrease, timeout included, starts the srtt
//!   hold-off, which is what Swift's "at most one MD per srtt" asks.
//! - htsim evaluates `can_decrease` with the srtt before this ACK's sample; the transport
//!   hands over its srtt as it stands when it signals.

use super::median::DelayHistory;
use super::CongestionControl;
use super::{AckSignal, CcEnv, LossKind, LossSignal, NackSignal};
use crate::scenario::cc::{MswiftConfig, SwiftConfig};
use crate::time::PS_PER_US;
use serde::{Deserialize, Serialize};

/// The paper's default hop scaling: h = base_target / 6.55 (htsim `_h`).
const DEFAULT_HOP_DIVISOR: f64 = 6.55;
/// The default flow-scaling range, in base targets (htsim `_fs_range = 5 * _base_delay`).
const DEFAULT_FS_RANGE_BASE_TARGETS: f64 = 5.0;

/// The fixed part of the target and the flow-scaling curve, all in ps.
#[derive(Clone, Debug, Serialize, Deserialize)]
struct Target {
    /// base_target + hops·h.
    path_ps: f64,
    fs_alpha_ps: f64,
    fs_beta_ps: f64,
    fs_range_ps: f64,
}

impl Target {
    fn new(cfg: &SwiftConfig, hops: u32) -> Target {
        let base_ps = cfg.base_target_us * PS_PER_US as f64;
        let hop_ps = match cfg.hop_scale_us {
            Some(h_us) => h_us * PS_PER_US as f64,
            None => base_ps / DEFAULT_HOP_DIVISOR,
        };
        let fs_range_ps = match cfg.fs_range_us {
            Some(r_us) => r_us * PS_PER_US as f64,
            None => DEFAULT_FS_RANGE_BASE_TARGETS * base_ps,
        };
        // fs_α and fs_β put the curve at fs_range for fs_min_cwnd and at 0 for fs_max_cwnd.
        let inv_sqrt_min = 1.0 / cfg.fs_min_cwnd_pkts.sqrt();
        let inv_sqrt_max = 1.0 / cfg.fs_max_cwnd_pkts.sqrt();
        let fs_alpha_ps = fs_range_ps / (inv_sqrt_min - inv_sqrt_max);
        Target {
            path_ps: base_ps + hops as f64 * hop_ps,
            fs_alpha_ps,
            fs_beta_ps: -fs_alpha_ps * inv_sqrt_max,
            fs_range_ps,
        }
    }

    /// Target delay for a window of `cwnd_pkts` packets: smaller windows (more competing
    /// flows) get more queueing headroom, within [path, path + fs_range].
    fn at(&self, cwnd_pkts: f64) -> f64 {
        // cwnd 0 gives +∞ here, which the clamp turns into the full range.
        let fs_ps = self.fs_alpha_ps / cwnd_pkts.sqrt() + self.fs_beta_ps;
        self.path_ps + fs_ps.clamp(0.0, self.fs_range_ps)
    }
}

#[derive(Clone, Debug, Serialize, Deserialize)]
pub(crate) struct Swift {
    ai: f64,
    beta: f64,
    max_mdf: f64,
    mtu_bytes: f64,
    min_cwnd_bytes: f64,
    max_cwnd_bytes: f64,
    retx_reset_threshold: u32,
    target: Target,
    cwnd_bytes: f64,
    /// When the window last shrank; none yet means a decrease is allowed.
    last_decrease_ps: Option<u64>,
    /// Consecutive retransmission timeouts with no ACK in between.
    retransmit_cnt: u32,
    /// The last smoothed RTT the transport reported (pacing gap, decrease hold-off).
    srtt_ps: u64,
    /// MSwift: recent delay samples, whose median replaces the latest sample.
    history: Option<DelayHistory>,
}

impl Swift {
    /// Swift, or MSwift when `median` is given.
    pub(crate) fn new(cfg: &SwiftConfig, env: &CcEnv, median: Option<&MswiftConfig>) -> Swift {
        let mtu_bytes = env.mtu_bytes as f64;
        let min_cwnd_bytes = cfg.min_cwnd_bytes;
        let max_cwnd_bytes = cfg.max_cwnd_pkts * mtu_bytes;
        let init_bytes = cfg.init_cwnd_bdp * env.bdp_bytes as f64;
        Swift {
            ai: cfg.ai,
            beta: cfg.beta,
            max_mdf: cfg.max_mdf,
            mtu_bytes,
            min_cwnd_bytes,
            max_cwnd_bytes,
            retx_reset_threshold: cfg.retx_reset_threshold,
            target: Target::new(cfg, env.hops),
            cwnd_bytes: init_bytes.clamp(min_cwnd_bytes, max_cwnd_bytes),
            last_decrease_ps: None,
            retransmit_cnt: 0,
            srtt_ps: env.base_rtt_ps,
            history: median.map(|m| DelayHistory::new(m.history_max as usize)),
        }
    }

    /// Target delay at the current window.
    fn target_ps(&self) -> f64 {
        self.target.at(self.cwnd_bytes / self.mtu_bytes)
    }

    /// The delay Swift reacts to: the sample itself, or MSwift's median of the last H.
    fn filtered_delay_ps(&mut self, rtt_ps: Option<u64>) -> Option<u64> {
        let rtt_ps = rtt_ps?;
        let Some(history) = self.history.as_mut() else {
            return Some(rtt_ps);
        };
        history.push(rtt_ps);
        // H = max(⌊W/2⌋, 1), W in packets: about half a window of samples (MSwift).
        let half_window_pkts = (self.cwnd_bytes / self.mtu_bytes / 2.0).floor() as usize;
        let h = half_window_pkts.max(1).min(history.capacity());
        history.median_of_last(h)
    }

    /// About `ai` packets per window of acknowledged bytes; below one packet, `ai` bytes per
    /// byte so a paced flow regains a packet in about one window's worth of ACKs.
    fn additive_increase(&mut self, acked_bytes: f64) {
        if self.cwnd_bytes >= self.mtu_bytes {
            self.cwnd_bytes += self.ai * self.mtu_bytes * acked_bytes / self.cwnd_bytes;
        } else {
            self.cwnd_bytes += self.ai * acked_bytes;
        }
    }

    /// Decrease in proportion to how far the delay overshoots the target, by at most max_mdf.
    fn delay_decrease_factor(&self, delay_ps: f64) -> f64 {
        let overshoot = (delay_ps - self.target_ps()) / delay_ps;
        (1.0 - self.beta * overshoot).max(1.0 - self.max_mdf)
    }

    /// At most one decrease per smoothed RTT.
    fn can_decrease(&self, now_ps: u64) -> bool {
        self.last_decrease_ps
            .is_none_or(|t| now_ps.saturating_sub(t) >= self.srtt_ps)
    }

    fn loss_decrease(&mut self, now_ps: u64) {
        let before = self.cwnd_bytes;
        if self.can_decrease(now_ps) {
            self.cwnd_bytes *= 1.0 - self.max_mdf;
        }
        self.apply_limits(before, now_ps);
    }

    /// Repeated timeouts mean the window is far too large: fall to the minimum.
    fn timeout(&mut self, now_ps: u64) {
        let before = self.cwnd_bytes;
        self.retransmit_cnt += 1;
        if self.retransmit_cnt >= self.retx_reset_threshold {
            self.cwnd_bytes = self.min_cwnd_bytes;
        } else if self.can_decrease(now_ps) {
            self.cwnd_bytes *= 1.0 - self.max_mdf;
        }
        self.apply_limits(before, now_ps);
    }

    /// Clamp to [min_cwnd, max_cwnd] and start the hold-off if the window shrank.
    fn apply_limits(&mut self, before_bytes: f64, now_ps: u64) {
        self.cwnd_bytes = self
            .cwnd_bytes
            .clamp(self.min_cwnd_bytes, self.max_cwnd_bytes);
        if self.cwnd_bytes < before_bytes {
            self.last_decrease_ps = Some(now_ps);
        }
    }
}

impl CongestionControl for Swift {
    fn on_ack(&mut self, s: &AckSignal) {
        self.srtt_ps = s.srtt_ps;
        // An ACK proves the path works again: timeouts are no longer consecutive.
        self.retransmit_cnt = 0;
        let Some(delay_ps) = self.filtered_delay_ps(s.rtt_ps) else {
            return;
        };
        let before = self.cwnd_bytes;
        if (delay_ps as f64) < self.target_ps() {
            self.additive_increase(s.newly_acked_bytes as f64);
        } else if self.can_decrease(s.now_ps) {
            self.cwnd_bytes *= self.delay_decrease_factor(delay_ps as f64);
        }
        self.apply_limits(before, s.now_ps);
    }

    /// A trimmed packet is a congestion loss: the fast-recovery decrease.
    fn on_nack(&mut self, s: &NackSignal) {
        self.srtt_ps = s.srtt_ps;
        self.loss_decrease(s.now_ps);
    }

    fn on_loss(&mut self, s: &LossSignal) {
        self.srtt_ps = s.srtt_ps;
        match s.kind {
            LossKind::Reordering => self.loss_decrease(s.now_ps),
            LossKind::Timeout => self.timeout(s.now_ps),
        }
    }

    fn cwnd_bytes(&self) -> u64 {
        self.cwnd_bytes as u64
    }

    /// Below one packet of window, one packet every srtt·MTU/cwnd (htsim `_pacing_delay`).
    fn pacing_gap_ps(&self) -> Option<u64> {
        (self.cwnd_bytes < self.mtu_bytes)
            .then(|| (self.srtt_ps as f64 * self.mtu_bytes / self.cwnd_bytes) as u64)
    }
}

#[cfg(test)]
mod tests {
    use super::super::test_support::{ack, env, loss, nack, MTU_BYTES, RTT_PS};
    use super::*;
    use rand::Rng;
    use rand_pcg::Pcg32;

    const MTU: f64 = MTU_BYTES as f64;
    const US: u64 = PS_PER_US;
    /// base 20 µs + 5 hops × 20/6.55 µs = 35.267 175 572 519 µs.
    const PATH_TARGET_PS: f64 = 35_267_175.572_519;
    /// 5 × base target.
    const FS_RANGE_PS: f64 = 100_000_000.0;

    fn swift() -> Swift {
        Swift::new(&SwiftConfig::default(), &env(), None)
    }

    #[test]
    fn initial_window_is_one_bdp() {
        // 800 Gb/s × 8 µs = 800 000 B, inside [10 B, 1000 × 4158 B].
        assert_eq!(swift().cwnd_bytes(), 800_000);
    }

    #[test]
    fn target_is_non_increasing_in_cwnd_and_clamped() {
        let t = swift().target;
        assert!((t.path_ps - PATH_TARGET_PS).abs() < 1e-3);
        let mut last = f64::INFINITY;
        // cwnd from 0 and 10⁻⁴ packets up to 10⁴ packets, 10 points per decade.
        let sweep = std::iter::once(0.0).chain((-40..=40).map(|k| 10f64.powf(k as f64 / 10.0)));
        for cwnd_pkts in sweep {
            let target = t.at(cwnd_pkts);
            assert!(target <= last, "target rises at {cwnd_pkts} packets");
            assert!(target >= t.path_ps && target <= t.path_ps + FS_RANGE_PS);
            last = target;
        }
        // Below fs_min_cwnd (0.1 packet) the full range applies; from fs_max_cwnd (100) none.
        assert_eq!(t.at(0.05), t.path_ps + FS_RANGE_PS);
        assert_eq!(t.at(0.0), t.path_ps + FS_RANGE_PS);
        assert!((t.at(100.0) - t.path_ps).abs() < 1e-6);
        assert_eq!(t.at(1000.0), t.path_ps);
        // One packet: fs_α·(1 − 1/√100) with fs_α = 100 µs / (√10 − 0.1) = 32.655 432 µs,
        // so 35.267 176 + 29.389 889 = 64.657 064 µs.
        assert!((t.at(1.0) - 64_657_064.40286485).abs() < 1.0);
    }

    #[test]
    fn below_target_the_window_grows_about_ai_packets_per_window() {
        let mut s = swift();
        let start = s.cwnd_bytes;
        // 10 µs < 35.27 µs target: ACK one window (800 000 B) in coalesced ACKs of two
        // packets each, 97 of them (8316 B each, 806 652 B in all).
        let ack_bytes = 2 * MTU_BYTES;
        let acks = (start / ack_bytes as f64).ceil() as u64;
        for i in 0..acks {
            s.on_ack(&ack(i * 10_000, ack_bytes, false, Some(10 * US)));
        }
        // Expected ≈ ai·MTU × acked/cwnd = 4158 × 806 652 / 800 000 ≈ 4192.6 B; the
        // denominator grows by < 1% during the window.
        let expected = MTU * (acks * ack_bytes) as f64 / start;
        let grown = s.cwnd_bytes - start;
        assert!((grown - expected).abs() < 0.01 * expected, "grew {grown} B");
    }

    #[test]
    fn below_one_packet_the_window_grows_by_acked_bytes() {
        let mut s = swift();
        for _ in 0..5 {
            s.on_loss(&loss(0, LossKind::Timeout));
        }
        assert_eq!(s.cwnd_bytes, 10.0);
        // ai = 1: +100 B for 100 B acknowledged.
        s.on_ack(&ack(1, 100, false, Some(10 * US)));
        assert_eq!(s.cwnd_bytes, 110.0);
    }

    #[test]
    fn decrease_is_proportional_to_overshoot_and_at_least_one_minus_max_mdf() {
        let mut s = swift();
        // 50 µs against 35.267 µs: 1 − 0.8 × 14.733/50 = 0.764 274 809 → 611 419.847 B.
        s.on_ack(&ack(0, MTU_BYTES, false, Some(50 * US)));
        assert!((s.cwnd_bytes - 611_419.8473282442).abs() < 1e-6);
        // 1 ms: 1 − 0.8 × 964.7/1000 = 0.228 is below 1 − max_mdf, so the factor is 0.5.
        let before = s.cwnd_bytes;
        s.on_ack(&ack(RTT_PS, MTU_BYTES, false, Some(1000 * US)));
        assert_eq!(s.cwnd_bytes, before * 0.5);
    }

    #[test]
    fn at_most_one_decrease_per_srtt_and_never_below_one_minus_max_mdf() {
        let mut rng = Pcg32::new(13, 11);
        let mut s = swift();
        let mut now_ps = 0;
        let mut last_decrease: Option<u64> = None;
        let mut decreases = 0;
        for _ in 0..5000 {
            now_ps += rng.gen_range(0..3 * US);
            let before = s.cwnd_bytes;
            match rng.gen_range(0..20) {
                0 => s.on_nack(&nack(now_ps)),
                1 => s.on_loss(&loss(now_ps, LossKind::Reordering)),
                _ => {
                    let rtt_ps = rng.gen_range(8 * US..300 * US);
                    s.on_ack(&ack(now_ps, MTU_BYTES, false, Some(rtt_ps)));
                }
            }
            if s.cwnd_bytes < before {
                decreases += 1;
                assert!(
                    s.cwnd_bytes >= before * 0.5 - 1e-9,
                    "factor below 1 − max_mdf"
                );
                if let Some(t) = last_decrease {
                    assert!(
                        now_ps - t >= RTT_PS,
                        "two decreases {} ps apart",
                        now_ps - t
                    );
                }
                last_decrease = Some(now_ps);
            }
        }
        assert!(
            decreases > 100,
            "the trace must exercise decreases ({decreases})"
        );
    }

    #[test]
    fn sub_packet_window_paces_at_srtt_mtu_over_cwnd() {
        let mut s = swift();
        assert_eq!(s.pacing_gap_ps(), None);
        // Five consecutive timeouts: cwnd = min_cwnd = 10 B.
        for _ in 0..5 {
            s.on_loss(&loss(0, LossKind::Timeout));
        }
        assert_eq!(s.cwnd_bytes(), 10);
        // 8 µs × 4158 / 10 = 3 326 400 000 ps between packets.
        assert_eq!(s.pacing_gap_ps(), Some(3_326_400_000));
        // The gap follows the srtt last reported: 16 µs doubles it.
        let mut slow = ack(1, 0, false, None);
        slow.srtt_ps = 2 * RTT_PS;
        s.on_ack(&slow);
        assert_eq!(s.pacing_gap_ps(), Some(6_652_800_000));
    }

    #[test]
    fn an_ack_resets_the_consecutive_timeout_count() {
        let mut s = swift();
        // Four timeouts at one instant: one MD (800 000 → 400 000 B), the rest held off.
        for _ in 0..4 {
            s.on_loss(&loss(0, LossKind::Timeout));
        }
        assert_eq!((s.retransmit_cnt, s.cwnd_bytes), (4, 400_000.0));
        // An ACK (no RTT sample, so no window change) clears the count...
        s.on_ack(&ack(1, MTU_BYTES, false, None));
        assert_eq!((s.retransmit_cnt, s.cwnd_bytes), (0, 400_000.0));
        // ...so the fifth timeout is the first of a new run, not a reset to min_cwnd.
        s.on_loss(&loss(2, LossKind::Timeout));
        assert_eq!((s.retransmit_cnt, s.cwnd_bytes), (1, 400_000.0));
        // Without the ACK, the fifth consecutive timeout drops to min_cwnd = 10 B.
        let mut t = swift();
        for _ in 0..5 {
            t.on_loss(&loss(0, LossKind::Timeout));
        }
        assert_eq!(t.cwnd_bytes, 10.0);
    }

    fn mswift(history_max: u32, init_cwnd_pkts: f64) -> Swift {
        let e = env();
        let cfg = SwiftConfig {
            init_cwnd_bdp: init_cwnd_pkts * MTU / e.bdp_bytes as f64,
            ..SwiftConfig::default()
        };
        Swift::new(&cfg, &e, Some(&MswiftConfig { history_max }))
    }

    #[test]
    fn mswift_with_one_sample_of_history_follows_swift_exactly() {
        // history_max = 1 forces H = 1: the median of the latest sample is the sample.
        let mut plain = swift();
        let mut median = mswift(1, 800_000.0 / MTU);
        assert_eq!(plain.cwnd_bytes, median.cwnd_bytes);
        let mut rng = Pcg32::new(13, 5);
        let (mut now_ps, mut ups, mut downs) = (0, 0, 0);
        for _ in 0..200 {
            now_ps += rng.gen_range(0..4 * US);
            let before = plain.cwnd_bytes;
            let kind = rng.gen_range(0..20);
            for s in [&mut plain, &mut median] {
                match kind {
                    0 => s.on_nack(&nack(now_ps)),
                    1 => s.on_loss(&loss(now_ps, LossKind::Reordering)),
                    2 => s.on_loss(&loss(now_ps, LossKind::Timeout)),
                    _ => {}
                }
            }
            if kind > 2 {
                // Delays around the 35–135 µs target; one ACK in ten has no sample.
                let rtt = rng.gen_bool(0.9).then(|| rng.gen_range(8 * US..120 * US));
                let a = ack(now_ps, rng.gen_range(0..=2 * MTU_BYTES), false, rtt);
                plain.on_ack(&a);
                median.on_ack(&a);
            }
            assert_eq!(plain.cwnd_bytes, median.cwnd_bytes);
            assert_eq!(plain.pacing_gap_ps(), median.pacing_gap_ps());
            ups += (plain.cwnd_bytes > before) as u32;
            downs += (plain.cwnd_bytes < before) as u32;
        }
        // The trace moved the window both ways.
        assert!(ups > 20 && downs > 5, "ups {ups}, downs {downs}");
    }

    /// 64 ACKs over 8 sprayed paths, one congested: every 8th ACK is 200 µs late, the rest
    /// take 10 µs. Returns how many ACKs shrank the window.
    fn decreases_on_one_congested_path_of_8(s: &mut Swift) -> u32 {
        let mut decreases = 0;
        for i in 0..64u64 {
            let rtt_us = if i % 8 == 7 { 200 } else { 10 };
            let before = s.cwnd_bytes;
            s.on_ack(&ack(i * US, MTU_BYTES, false, Some(rtt_us * US)));
            decreases += (s.cwnd_bytes < before) as u32;
        }
        decreases
    }

    #[test]
    fn one_congested_path_of_8_does_not_trigger_the_mswift_decrease() {
        // Swift cuts on each outlier at least srtt apart: 200 µs against a 35–43 µs target
        // gives 1 − 0.8 × ~0.8 < 0.5, so each cut halves (8 outliers, 8 µs apart: 8 cuts).
        let mut plain = swift();
        assert_eq!(decreases_on_one_congested_path_of_8(&mut plain), 8);
        // MSwift with H = 3 (a 6.5-packet window: ⌊6.5/2⌋ = 3) and with H = 32 (a BDP of
        // 192 packets, capped by history_max): at most one outlier among the last H ≥ 3
        // samples, so the median is 10 µs and the window only grows.
        for init_pkts in [6.5, 800_000.0 / MTU] {
            let mut median = mswift(32, init_pkts);
            let start = median.cwnd_bytes;
            assert_eq!(decreases_on_one_congested_path_of_8(&mut median), 0);
            assert!(median.cwnd_bytes > start);
        }
    }

    #[test]
    fn mswift_decrease_magnitude_uses_the_median() {
        // Window 192 packets → H = 32; samples 50, 50, 1000 µs: median 50 µs, so the cut is
        // 1 − 0.8 × (50 − 35.267)/50 = 0.764 274 809 (not the 0.5 the 1 ms sample alone gives).
        // The two 50 µs samples go straight into the history so the window has not moved yet.
        let mut m = mswift(32, 800_000.0 / MTU);
        let history = m.history.as_mut().expect("MSwift keeps a history");
        history.push(50 * US);
        history.push(50 * US);
        let before = m.cwnd_bytes;
        m.on_ack(&ack(0, MTU_BYTES, false, Some(1000 * US)));
        assert!((m.cwnd_bytes / before - 0.7642748091603053).abs() < 1e-12);
    }
}
