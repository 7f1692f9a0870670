//! `host.cc = "nscc"`: UEC NSCC as in UEC htsim (`uec.cpp`, NACKs as its `processNack`).
//! ECN and the per-ACK queuing delay pick one of four quadrants; increases are batched into
//! `inc_bytes_sq` and applied at a "fulfil" every 8 MTUs of ACKed data or every network RTT;
//! "quick adapt" resets the window to what the last epoch delivered after loss or a very
//! large delay, when that is far below the maximum window.
//!
//! How UEC htsim's NSCC maps onto weft's CCA interface:
//! - MTU (min window, adjust bytes) = `env.mtu_bytes`, MSS (gains) = `env.mss_bytes`;
//!   `network_rtt` / `network_bdp` = `env.network_rtt_ps` / `env.network_bdp_bytes`.
//! - base RTT starts at the network RTT (htsim's default), or with `accurate_base_rtt` at
//!   the flow's own `env.base_rtt_ps` (htsim `-enable_accurate_base_rtt`), and only falls (`min` over ACK and NACK samples); each fall recomputes
//!   bdp = base_rtt × line rate / 8 and maxwnd = `max_window_bdp` × bdp. The first window is
//!   maxwnd.
//! - target = `target_qdelay_us`, else 0.75 × network_rtt with trimming, else network_rtt.
//!   a = network_bdp / reference_bdp, b = target / reference_rtt; α = prop_gain·MSS·a·b /
//!   target (bytes/ps), fi = fair_increase_mss·MSS·a, η = eta_mss·MSS·a, fi_scale =
//!   fast_increase_scale·a, adjust period = network_rtt, qa threshold = factor × target.
//! - The transport owns `in_flight`: quick adapt reads it from the signal. `newly` is
//!   `newly_acked_bytes`. An ACK without an RTT sample (it answers an earlier transmission) uses
//!   avg_delay as its delay.
//! - Receiver flow control (the ACK's window penalty) is not modelled: penalty 255, no cut.
//! - Receiver-driven CC is not modelled, so the NACK rule's last-hop exception never applies:
//!   every NACK that quick adapt does not absorb cuts the window by the trimmed bytes.
//! - Losses: the per-RTO rule (cwnd = max(cwnd − bytes, MTU)). A loss found by the SACK
//!   reordering rule is treated the same way (htsim NSCC has no such detector).
//! - Window, increase accumulator and delays are f64 (htsim's u32 `inc_bytes` overflows at
//!   400G; its integer cwnd and avg_delay truncate at every step; we do not).
//!
//! Where we differ from htsim `uec.cpp` (checked against `updateCwndOnAck_NSCC`,
//! `quick_adapt`, `fulfill_adjustment`, `update_delay`, `processNack`,
//! `updateCwndOnNack_NSCC`, `initNsccParams`):
//! - `update_delay` there has a branch for delay > 5·base_rtt with a fixed weight 0.0125;
//!   we omit it. It equals `delay_ewma` at the default, so we keep a single weight.
//! - htsim runs the NACK hook before taking the packet out of flight, so quick adapt's
//!   `bytes_to_ignore` includes the trimmed packet; our signal's in-flight excludes it, so we
//!   add the packet back (`in_flight_bytes + bytes`) to match.
//! - htsim lowers maxwnd on a smaller base RTT without touching cwnd (the next ACK's clamp
//!   catches it); we clamp cwnd at once, so the window never exceeds maxwnd between signals.
//!   maxwnd is also kept ≥ MTU so that the clamp is well defined.

use super::CongestionControl;
use super::{AckSignal, CcEnv, LossKind, LossSignal, NackSignal};
use crate::scenario::cc::NsccConfig;
use crate::time::PS_PER_US;
use serde::{Deserialize, Serialize};

/// Picoseconds per second, for bytes = rate × time.
const PS_PER_S: f64 = 1e12;

/// Gains and thresholds, fixed at construction (htsim `initNsccParams`).
#[derive(Clone, Debug, Serialize, Deserialize)]
struct Params {
    /// min_cwnd, and the floor of a loss cut.
    mtu_bytes: f64,
    line_rate_bps: f64,
    max_window_bdp: f64,
    network_rtt_ps: u64,
    target_ps: u64,
    /// α (bytes/ps): an ACK of n bytes at delay d adds α·n·(target − d) bytes².
    alpha_bytes_per_ps: f64,
    fair_inc_bytes: f64,
    eta_bytes: f64,
    gamma: f64,
    fast_inc_scale: f64,
    fast_inc_delay_ps: f64,
    delay_ewma: f64,
    adjust_period_ps: u64,
    adjust_bytes: f64,
    qa_gate: u32,
    qa_threshold_ps: f64,
}

impl Params {
    fn new(cfg: &NsccConfig, env: &CcEnv) -> Params {
        let rtt_ps = env.network_rtt_ps;
        let target_ps = match cfg.target_qdelay_us {
            Some(us) => (us * PS_PER_US as f64).round() as u64,
            None if env.trimming => (0.75 * rtt_ps as f64) as u64,
            None => rtt_ps,
        };
        let target = target_ps as f64;
        let mss = env.mss_bytes as f64;
        let a = env.network_bdp_bytes as f64 / cfg.reference_bdp_bytes;
        let b = target / (cfg.reference_rtt_us * PS_PER_US as f64);
        let mtu = env.mtu_bytes as f64;
        Params {
            mtu_bytes: mtu,
            line_rate_bps: env.line_rate_bps as f64,
            max_window_bdp: cfg.max_window_bdp,
            network_rtt_ps: rtt_ps,
            target_ps,
            alpha_bytes_per_ps: cfg.prop_gain * mss * a * b / target,
            fair_inc_bytes: cfg.fair_increase_mss * mss * a,
            eta_bytes: cfg.eta_mss * mss * a,
            gamma: cfg.gamma,
            fast_inc_scale: cfg.fast_increase_scale * a,
            fast_inc_delay_ps: cfg.fast_increase_delay_us * PS_PER_US as f64,
            delay_ewma: cfg.delay_ewma,
            adjust_period_ps: rtt_ps,
            adjust_bytes: cfg.adjust_bytes_mtus * mtu,
            qa_gate: cfg.qa_gate,
            qa_threshold_ps: cfg.qa_threshold_factor * target,
        }
    }
}

/// One flow's NSCC sender state (htsim `UecSrc`'s NSCC fields).
#[derive(Clone, Debug, Serialize, Deserialize)]
pub(crate) struct Nscc {
    p: Params,
    cwnd_bytes: f64,
    maxwnd_bytes: f64,
    base_rtt_ps: u64,
    /// EWMA of the queuing delay: gates and sizes the multiplicative decrease.
    avg_delay_ps: f64,
    /// Increases waiting for the next fulfil, in bytes² (divided by cwnd when applied).
    inc_bytes_sq: f64,
    /// ACKed bytes since the last fulfil.
    received_bytes: u64,
    /// ACKed bytes since the quick-adapt epoch began.
    achieved_bytes: u64,
    /// After a quick adapt, ECN-marked ACKs and NACKs are ignored until this many bytes
    /// were ACKed or NACKed (the data in flight when it fired).
    bytes_to_ignore: u64,
    bytes_ignored: u64,
    trigger_qa: bool,
    qa_end_ps: u64,
    last_dec_ps: u64,
    last_adjust_ps: u64,
    /// Bytes ACKed in a row with delay below the fast-increase threshold.
    fast_count_bytes: u64,
    fast_increasing: bool,
}

impl Nscc {
    pub(crate) fn new(cfg: &NsccConfig, env: &CcEnv) -> Nscc {
        assert!(
            env.mtu_bytes > 0 && env.network_rtt_ps > 0,
            "NSCC needs an MTU and an RTT"
        );
        let start_rtt_ps = if cfg.accurate_base_rtt {
            env.base_rtt_ps
        } else {
            env.network_rtt_ps
        };
        let mut n = Nscc {
            p: Params::new(cfg, env),
            cwnd_bytes: 0.0,
            maxwnd_bytes: 0.0,
            base_rtt_ps: start_rtt_ps,
            avg_delay_ps: 0.0,
            inc_bytes_sq: 0.0,
            received_bytes: 0,
            achieved_bytes: 0,
            bytes_to_ignore: 0,
            bytes_ignored: 0,
            trigger_qa: false,
            qa_end_ps: 0,
            last_dec_ps: 0,
            last_adjust_ps: 0,
            fast_count_bytes: 0,
            fast_increasing: false,
        };
        n.maxwnd_bytes = n.maxwnd_for(start_rtt_ps);
        n.cwnd_bytes = n.maxwnd_bytes;
        n
    }

    fn maxwnd_for(&self, base_rtt_ps: u64) -> f64 {
        let bdp_bytes = base_rtt_ps as f64 * self.p.line_rate_bps / 8.0 / PS_PER_S;
        (self.p.max_window_bdp * bdp_bytes).max(self.p.mtu_bytes)
    }

    fn update_base_rtt(&mut self, raw_ps: u64) {
        if raw_ps < self.base_rtt_ps {
            self.base_rtt_ps = raw_ps;
            self.maxwnd_bytes = self.maxwnd_for(raw_ps);
            self.cwnd_bytes = self.cwnd_bytes.min(self.maxwnd_bytes);
        }
    }

    /// htsim `update_delay`: a high delay without ECN is blamed on something other than the
    /// path (e.g. the receiver), so only base_rtt / 4 is fed in.
    fn update_avg_delay(&mut self, sample_ps: u64, ecn: bool) {
        let fed_ps = if !ecn && sample_ps > self.p.target_ps {
            self.base_rtt_ps as f64 / 4.0
        } else {
            sample_ps as f64
        };
        let w = self.p.delay_ewma;
        self.avg_delay_ps = w * fed_ps + (1.0 - w) * self.avg_delay_ps;
    }

    fn update_cwnd_on_ack(&mut self, s: &AckSignal, delay_ps: f64) {
        if self.quick_adapt(s.now_ps, false, s.ecn, delay_ps, s.in_flight_bytes) {
            return;
        }
        let target_ps = self.p.target_ps as f64;
        let newly = s.newly_acked_bytes as f64;
        match (s.ecn, delay_ps >= target_ps) {
            // Delay without a mark: the queue is not on our path (or is shared fairly);
            // grow by a fixed share, independent of the delay.
            (false, true) => self.inc_bytes_sq += self.p.fair_inc_bytes * newly,
            (false, false) => {
                if !self.fast_increase(s.newly_acked_bytes, delay_ps) {
                    self.inc_bytes_sq += self.p.alpha_bytes_per_ps * newly * (target_ps - delay_ps);
                }
            }
            (true, true) => self.multiplicative_decrease(s.now_ps),
            // Marked but short delay: a transient; the load balancer moves off the path.
            (true, false) => {}
        }
        self.clamp();
        let since_adjust_ps = s.now_ps.saturating_sub(self.last_adjust_ps);
        if self.received_bytes as f64 > self.p.adjust_bytes
            || since_adjust_ps > self.p.adjust_period_ps
        {
            self.fulfil(s.now_ps);
            self.clamp();
        }
    }

    /// Fast increase: after more than a window of near-zero delay, grow per ACK. Returns
    /// whether it fired (then the proportional increase is skipped).
    fn fast_increase(&mut self, newly_bytes: u64, delay_ps: f64) -> bool {
        if delay_ps < self.p.fast_inc_delay_ps {
            self.fast_count_bytes += newly_bytes;
            if self.fast_count_bytes as f64 > self.cwnd_bytes || self.fast_increasing {
                self.cwnd_bytes += newly_bytes as f64 * self.p.fast_inc_scale;
                self.fast_increasing = true;
                return true;
            }
        } else {
            self.fast_count_bytes = 0;
        }
        self.fast_increasing = false;
        false
    }

    /// At most once per base RTT, by at most half, sized by how far avg_delay is above target.
    fn multiplicative_decrease(&mut self, now_ps: u64) {
        self.fast_increasing = false;
        self.fast_count_bytes = 0;
        let target_ps = self.p.target_ps as f64;
        let avg_ps = self.avg_delay_ps;
        if avg_ps > target_ps && now_ps.saturating_sub(self.last_dec_ps) > self.base_rtt_ps {
            let factor = (1.0 - self.p.gamma * (avg_ps - target_ps) / avg_ps).max(0.5);
            self.cwnd_bytes = (self.cwnd_bytes * factor).max(self.p.mtu_bytes);
            self.last_dec_ps = now_ps;
        }
    }

    /// Applies the batched increases (bytes² / cwnd), plus η once per adjust period.
    fn fulfil(&mut self, now_ps: u64) {
        self.cwnd_bytes += self.inc_bytes_sq / self.cwnd_bytes;
        if now_ps.saturating_sub(self.last_adjust_ps) >= self.p.adjust_period_ps {
            self.cwnd_bytes += self.p.eta_bytes;
            self.last_adjust_ps = now_ps;
        }
        self.inc_bytes_sq = 0.0;
        self.received_bytes = 0;
    }

    /// NSCC's quick adapt (htsim's `quick_adapt`). Returns true when it fired or the signal is
    /// ignored (an ECN echo or NACK still owed to data sent before the last quick adapt): no other
    /// window change.
    fn quick_adapt(
        &mut self,
        now_ps: u64,
        is_loss: bool,
        ecn: bool,
        delay_ps: f64,
        in_flight_bytes: u64,
    ) -> bool {
        let mut acted = false;
        if self.bytes_ignored < self.bytes_to_ignore && ecn {
            acted = true;
        } else if now_ps > self.qa_end_ps {
            let signalled = self.trigger_qa || is_loss || delay_ps > self.p.qa_threshold_ps;
            // htsim: `_achieved_bytes < (_maxwnd >> _qa_gate)` on integer bytes.
            let gate_bytes = (self.maxwnd_bytes as u64) >> self.p.qa_gate;
            if self.qa_end_ps != 0 && signalled && self.achieved_bytes < gate_bytes {
                self.cwnd_bytes = (self.achieved_bytes as f64).max(self.p.mtu_bytes);
                self.bytes_to_ignore = in_flight_bytes;
                self.bytes_ignored = 0;
                self.trigger_qa = false;
                acted = true;
            }
            self.achieved_bytes = 0;
            self.qa_end_ps = now_ps + self.base_rtt_ps + self.p.target_ps;
        }
        if acted {
            self.inc_bytes_sq = 0.0;
            self.received_bytes = 0;
        }
        acted
    }

    fn clamp(&mut self) {
        self.cwnd_bytes = self.cwnd_bytes.clamp(self.p.mtu_bytes, self.maxwnd_bytes);
    }
}

impl CongestionControl for Nscc {
    fn on_ack(&mut self, s: &AckSignal) {
        let newly = s.newly_acked_bytes;
        self.achieved_bytes += newly;
        self.received_bytes += newly;
        self.bytes_ignored += newly;
        // After the `min`, raw ≥ base_rtt always, so htsim's "raw < base_rtt" branch is dead.
        let delay_ps = match s.rtt_ps {
            Some(raw_ps) => {
                self.update_base_rtt(raw_ps);
                let sample_ps = raw_ps - self.base_rtt_ps;
                self.update_avg_delay(sample_ps, s.ecn);
                sample_ps as f64
            }
            None => self.avg_delay_ps,
        };
        self.update_cwnd_on_ack(s, delay_ps);
    }

    /// Per NACK (htsim's `updateCwndOnNack_NSCC`): a trim is a congestion sample of one network RTT
    /// and arms quick adapt.
    fn on_nack(&mut self, s: &NackSignal) {
        if let Some(raw_ps) = s.rtt_ps {
            self.update_base_rtt(raw_ps);
        }
        self.bytes_ignored += s.bytes;
        self.update_avg_delay(self.p.network_rtt_ps, true);
        self.trigger_qa = true;
        // htsim calls this before taking the packet out of flight.
        let in_flight_bytes = s.in_flight_bytes + s.bytes;
        if self.quick_adapt(s.now_ps, true, true, 0.0, in_flight_bytes) {
            return;
        }
        // `s.last_hop` would spare the window only under receiver-driven CC (not modelled).
        self.cwnd_bytes -= s.bytes as f64;
        self.clamp();
    }

    /// Per RTO, as htsim; a reordering loss is treated as a timeout.
    fn on_loss(&mut self, s: &LossSignal) {
        match s.kind {
            LossKind::Timeout | LossKind::Reordering => {
                self.cwnd_bytes = (self.cwnd_bytes - s.bytes as f64).max(self.p.mtu_bytes);
            }
        }
    }

    fn cwnd_bytes(&self) -> u64 {
        self.cwnd_bytes as u64
    }

    fn pacing_gap_ps(&self) -> Option<u64> {
        None
    }
}

#[cfg(test)]
mod tests {
    //! Figures for 800 Gb/s, MTU 4158, MSS 4096, base RTT = network RTT = 8 µs, trimming:
    //! bdp = network bdp = 800 000 B, maxwnd = 1 200 000 B, target = 6 µs, a = 16/3,
    //! b = 1/2, α = 4·4096·(16/3)·(1/2) / 6e6 = 131072 / 18e6 B/ps, fi = 5·4096·16/3 =
    //! 109 226.67 B, η = 0.15·4096·16/3 = 3276.8 B, fi_scale = 4/3, adjust bytes = 33 264,
    //! qa threshold = 24 µs, qa gate = 1 200 000 >> 3 = 150 000 B.
    use super::*;
    use rand::{Rng, SeedableRng};
    use rand_pcg::Pcg32;

    const US: u64 = PS_PER_US;
    const MTU: f64 = 4158.0;
    const MAXWND: f64 = 1_200_000.0;

    fn env() -> CcEnv {
        CcEnv {
            mtu_bytes: 4158,
            mss_bytes: 4096,
            line_rate_bps: 800_000_000_000,
            base_rtt_ps: 8 * US,
            network_rtt_ps: 8 * US,
            bdp_bytes: 800_000,
            network_bdp_bytes: 800_000,
            hops: 4,
            trimming: true,
        }
    }

    fn nscc() -> Nscc {
        Nscc::new(&NsccConfig::default(), &env())
    }

    #[test]
    fn the_first_window_follows_the_network_rtt_unless_asked_for_the_path_rtt() {
        // A flow whose own path takes 4 µs in a fabric whose longest takes 8 µs.
        let short = CcEnv {
            base_rtt_ps: 4 * US,
            bdp_bytes: 400_000,
            ..env()
        };
        let n = Nscc::new(&NsccConfig::default(), &short);
        assert_eq!((n.base_rtt_ps, n.cwnd_bytes()), (8 * US, 1_200_000));
        let accurate = NsccConfig {
            accurate_base_rtt: true,
            ..NsccConfig::default()
        };
        let n = Nscc::new(&accurate, &short);
        // maxwnd = 1.5 × 4 µs × 100 GB/s = 600 000 B.
        assert_eq!((n.base_rtt_ps, n.cwnd_bytes()), (4 * US, 600_000));
    }

    /// At `now_ps` with window `cwnd_bytes`, a quick-adapt epoch and an adjust period just
    /// begun: neither quick adapt nor the timed fulfil can fire for the next 8 µs.
    fn settled(now_ps: u64, cwnd_bytes: f64) -> Nscc {
        let mut n = nscc();
        n.cwnd_bytes = cwnd_bytes;
        n.last_adjust_ps = now_ps;
        n.qa_end_ps = now_ps + 14 * US;
        n
    }

    fn ack(now_ps: u64, newly_acked_bytes: u64, ecn: bool, rtt_ps: Option<u64>) -> AckSignal {
        AckSignal {
            now_ps,
            newly_acked_bytes,
            ecn,
            rtt_ps,
            srtt_ps: 8 * US,
            in_flight_bytes: 400_000,
            cum_acked_bytes: 0,
            above_point_bytes: 0,
        }
    }

    fn nack(now_ps: u64, in_flight_bytes: u64) -> NackSignal {
        NackSignal {
            now_ps,
            bytes: 4158,
            last_hop: false,
            rtt_ps: None,
            srtt_ps: 8 * US,
            in_flight_bytes,
        }
    }

    fn assert_close(got: f64, want: f64) {
        assert!(
            (got - want).abs() <= 1e-6 * want.abs().max(1.0),
            "got {got}, want {want}"
        );
    }

    #[test]
    fn parameters_follow_the_table() {
        let p = &nscc().p;
        assert_eq!(p.target_ps, 6 * US);
        assert_close(p.alpha_bytes_per_ps, 131_072.0 / 18e6);
        assert_close(p.fair_inc_bytes, 109_226.666_666_7);
        assert_close(p.eta_bytes, 3276.8);
        assert_close(p.fast_inc_scale, 4.0 / 3.0);
        assert_close(p.adjust_bytes, 33_264.0);
        assert_close(p.qa_threshold_ps, 24e6);
        assert_eq!(nscc().cwnd_bytes(), 1_200_000);
        let no_trim = Nscc::new(
            &NsccConfig::default(),
            &CcEnv {
                trimming: false,
                ..env()
            },
        );
        assert_eq!(no_trim.p.target_ps, 8 * US);
    }

    /// No ECN, delay 7 µs ≥ target: each 4096-B ACK adds fi·4096 = 447 392 426.67 B² and
    /// leaves the window alone; the 9th ACK (36 864 B > 33 264) fulfils:
    /// cwnd = 400 000 + 9·447 392 426.67 / 400 000 = 410 066.3296.
    #[test]
    fn fair_increase_accumulates_until_fulfil() {
        let t = 2 * US;
        let mut n = settled(t, 400_000.0);
        for _ in 0..8 {
            n.on_ack(&ack(t, 4096, false, Some(15 * US)));
        }
        assert_close(n.cwnd_bytes, 400_000.0);
        assert_close(n.inc_bytes_sq, 8.0 * 447_392_426.666_666_7);
        n.on_ack(&ack(t, 4096, false, Some(15 * US)));
        assert_close(n.cwnd_bytes, 410_066.329_6);
        assert_eq!((n.inc_bytes_sq, n.received_bytes), (0.0, 0));
        // The unmarked 7 µs samples fed base_rtt/4 = 2 µs: avg = 2e6·(1 − 0.9875^9).
        assert_close(n.avg_delay_ps, 2e6 * (1.0 - 0.9875f64.powi(9)));
    }

    /// No ECN, delay 2 µs (< target, ≥ 1 µs so no fast increase): each ACK adds
    /// α·4096·4e6 = 536 870 912·2/9 B²; nine make 2^30, so the fulfil adds
    /// 2^30 / 400 000 = 2684.35456 B.
    #[test]
    fn proportional_increase_scales_with_headroom() {
        let t = 2 * US;
        let mut n = settled(t, 400_000.0);
        for _ in 0..9 {
            n.on_ack(&ack(t, 4096, false, Some(10 * US)));
        }
        assert_close(n.cwnd_bytes, 402_684.354_56);
    }

    /// ECN, delay 12 µs, avg 12 µs (the 12 µs sample keeps it there), 20 µs since the last
    /// decrease: cwnd ·= max(1 − 0.8·(12 − 6)/12, 0.5) = 0.6: 1 200 000 → 720 000.
    #[test]
    fn ecn_with_delay_decreases_multiplicatively() {
        let t = 20 * US;
        let mut n = settled(t, MAXWND);
        n.avg_delay_ps = 12e6;
        n.on_ack(&ack(t, 4096, true, Some(20 * US)));
        assert_close(n.avg_delay_ps, 12e6);
        assert_close(n.cwnd_bytes, 720_000.0);
        assert_eq!(n.last_dec_ps, t);
    }

    /// ECN with delay 2 µs < target, avg 12 µs (an MD would be allowed): 20 ACKs leave the
    /// window at 400 000 and add nothing to the increase; only avg moves, by the 2 µs
    /// samples: 12e6·0.9875^20 + 2e6·(1 − 0.9875^20).
    #[test]
    fn ecn_without_delay_leaves_the_window() {
        let t = 20 * US;
        let mut n = settled(t, 400_000.0);
        n.avg_delay_ps = 12e6;
        for _ in 0..20 {
            n.on_ack(&ack(t, 4096, true, Some(10 * US)));
        }
        assert_close(n.cwnd_bytes, 400_000.0);
        assert_eq!(n.inc_bytes_sq, 0.0);
        let keep = 0.9875f64.powi(20);
        assert_close(n.avg_delay_ps, 12e6 * keep + 2e6 * (1.0 - keep));
    }

    /// ECN = 0, delay = 0 on every ACK, 36 864 B < cwnd so no fast increase: one fulfil adds
    /// α·36 864·6e6 / 400 000 = 131072·12288 / 400 000 = 4026.53184 B.
    #[test]
    fn one_fulfil_adds_alpha_times_bytes_times_target_over_cwnd() {
        let t = 2 * US;
        let mut n = settled(t, 400_000.0);
        for _ in 0..9 {
            n.on_ack(&ack(t, 4096, false, Some(8 * US)));
        }
        let want = n.p.alpha_bytes_per_ps * 36_864.0 * 6e6 / 400_000.0;
        assert_close(want, 4026.53184);
        assert_close(n.cwnd_bytes, 404_026.531_84);
        assert!(!n.fast_increasing);
    }

    /// avg = 100 µs would ask for 1 − 0.8·94/100 = 0.248: capped at 0.5 (1.2e6 → 600 000).
    /// A second marked ACK within base_rtt (8 µs, and exactly 8 µs) does nothing; 1 ps later
    /// it cuts again (× 0.5 = 300 000), then the timed fulfil adds η: 303 276.8.
    #[test]
    fn decrease_is_at_most_half_and_once_per_base_rtt() {
        let t = 20 * US;
        let mut n = settled(t, MAXWND);
        n.avg_delay_ps = 100e6;
        n.on_ack(&ack(t, 0, true, Some(108 * US)));
        assert_close(n.cwnd_bytes, 600_000.0);
        n.on_ack(&ack(t + 4 * US, 0, true, Some(108 * US)));
        n.on_ack(&ack(t + 8 * US, 0, true, Some(108 * US)));
        assert_close(n.cwnd_bytes, 600_000.0);
        n.on_ack(&ack(t + 8 * US + 1, 0, true, Some(108 * US)));
        assert_close(n.cwnd_bytes, 300_000.0 + 3276.8);
    }

    /// 1000 random signals (seeded), in phases of 100: calm (unmarked ACKs, delay < 1 µs)
    /// and congested (40% NACKs, 10% timeouts or reordering losses, ACKs marked half the
    /// time with delays up to 32 µs); in flight is random up to the window, and the least
    /// RTT drifts from 8 to 3 µs so that maxwnd keeps falling. After every signal the
    /// window is in [MTU, maxwnd] and maxwnd ≤ 1.5 × the initial BDP; the run must both
    /// collapse the window to a few packets and refill it to maxwnd.
    #[test]
    fn window_stays_in_bounds_under_random_signals() {
        let mut rng = Pcg32::seed_from_u64(1000);
        let mut n = nscc();
        let (mut now_ps, mut lo, mut refills) = (0u64, f64::MAX, 0);
        for i in 0..1000u64 {
            now_ps += rng.gen_range(0..2 * US);
            let in_flight_bytes = rng.gen_range(0..=n.cwnd_bytes());
            let floor_ps = 8 * US - i * 5_000;
            let congested = (i / 100) % 2 == 1;
            let spread_ps = if congested { 32 * US } else { US };
            // Congested ACKs may lack an RTT sample (retransmitted data).
            let rtt_ps =
                (!congested || rng.gen_bool(0.9)).then(|| floor_ps + rng.gen_range(0..spread_ps));
            let roll = if congested { rng.gen_range(0..10) } else { 9 };
            let was_below = n.cwnd_bytes < n.maxwnd_bytes;
            match roll {
                0..=3 => n.on_nack(&NackSignal {
                    last_hop: rng.gen_bool(0.5),
                    rtt_ps,
                    ..nack(now_ps, in_flight_bytes)
                }),
                4 => n.on_loss(&LossSignal {
                    now_ps,
                    kind: if rng.gen_bool(0.5) {
                        LossKind::Timeout
                    } else {
                        LossKind::Reordering
                    },
                    bytes: 4158,
                    srtt_ps: 8 * US,
                    in_flight_bytes,
                }),
                _ => n.on_ack(&AckSignal {
                    in_flight_bytes,
                    ..ack(
                        now_ps,
                        4096 * rng.gen_range(0..5),
                        congested && rng.gen_bool(0.5),
                        rtt_ps,
                    )
                }),
            }
            assert!(n.maxwnd_bytes <= MAXWND);
            assert!(
                (MTU..=n.maxwnd_bytes).contains(&n.cwnd_bytes),
                "signal {i}: cwnd {} out of [MTU, {}]",
                n.cwnd_bytes,
                n.maxwnd_bytes
            );
            lo = lo.min(n.cwnd_bytes);
            refills += (was_below && n.cwnd_bytes == n.maxwnd_bytes) as u32;
        }
        assert!(lo < 4.0 * MTU && refills >= 3, "lo {lo}, refills {refills}");
    }

    /// The epoch starts at 10 µs (ends 10 + 8 + 6 = 24 µs); 25 ACKs deliver 100 000 B
    /// < 150 000. A NACK at 30 µs: cwnd = 100 000, and ECN echoes are ignored for the
    /// 500 000 + 4158 B in flight at the trim. With 160 000 B achieved instead, quick adapt
    /// does not fire and the NACK cuts one packet: 1 200 000 − 4158 = 1 195 842.
    #[test]
    fn quick_adapt_on_loss_resets_to_achieved_bytes() {
        let run = |per_ack_bytes: u64| {
            let mut n = nscc();
            n.on_ack(&ack(10 * US, 0, false, Some(15 * US)));
            assert_eq!(n.qa_end_ps, 24 * US);
            for _ in 0..25 {
                n.on_ack(&ack(12 * US, per_ack_bytes, false, Some(15 * US)));
            }
            n.on_nack(&nack(30 * US, 500_000));
            n
        };
        let mut n = run(4000);
        assert_close(n.cwnd_bytes, 100_000.0);
        assert_eq!((n.bytes_to_ignore, n.bytes_ignored), (504_158, 0));
        assert!(!n.trigger_qa);
        assert_eq!(n.qa_end_ps, 44 * US);
        // An ECN echo still owed to old data: ignored, even with a huge delay.
        n.avg_delay_ps = 100e6;
        n.on_ack(&ack(60 * US, 4096, true, Some(108 * US)));
        assert_close(n.cwnd_bytes, 100_000.0);
        assert_close(run(6400).cwnd_bytes, 1_195_842.0);
    }

    /// A delay above 4·target (30 µs > 24 µs) is a quick-adapt signal too, on an ACK.
    #[test]
    fn quick_adapt_on_large_delay() {
        let mut n = nscc();
        n.on_ack(&ack(10 * US, 0, false, Some(15 * US)));
        n.on_ack(&ack(12 * US, 50_000, false, Some(15 * US)));
        n.on_ack(&ack(30 * US, 4096, false, Some(38 * US)));
        // achieved = 50 000 + 4096 (this ACK counts before quick adapt runs).
        assert_close(n.cwnd_bytes, 54_096.0);
    }

    /// cwnd 20 000, ACKs of 4096 B at zero delay. ACKs 1–4 (16 384 B ≤ cwnd) take the
    /// proportional path (inc = 4·α·4096·6e6 = 4·178 956 970.67 B², 16 384 B < 33 264: no
    /// fulfil); the 5th makes 20 480 B > cwnd, so cwnd += 4096·4/3 = 5461.33 per ACK from
    /// then on: 25 461.33 after ACK 5, 41 845.33 after ACK 8. An empty 2 µs ACK stops it;
    /// the next zero-delay ACK restarts the count at 4096 < cwnd, so it is proportional
    /// again (inc = 5·178 956 970.67) and, 36 864 B > 33 264 having been ACKed, fulfils:
    /// 41 845.33 + 894 784 853.33 / 41 845.33 = 63 228.4789.
    #[test]
    fn fast_increase_after_a_window_of_low_delay() {
        let t = 2 * US;
        let mut n = settled(t, 20_000.0);
        for _ in 0..4 {
            n.on_ack(&ack(t, 4096, false, Some(8 * US)));
        }
        assert_close(n.cwnd_bytes, 20_000.0);
        assert_close(n.inc_bytes_sq, 4.0 * 178_956_970.666_666_7);
        n.on_ack(&ack(t, 4096, false, Some(8 * US)));
        assert_close(n.cwnd_bytes, 25_461.333_333_3);
        for _ in 0..3 {
            n.on_ack(&ack(t, 4096, false, Some(8 * US)));
        }
        assert_close(n.cwnd_bytes, 41_845.333_333_3);
        n.on_ack(&ack(t, 0, false, Some(10 * US)));
        assert!(!n.fast_increasing && n.fast_count_bytes == 0);
        n.on_ack(&ack(t, 4096, false, Some(8 * US)));
        assert!(!n.fast_increasing && n.fast_count_bytes == 4096);
        assert_close(n.cwnd_bytes, 63_228.478_885_2);
    }

    /// A 4 µs sample lowers base_rtt to 4 µs, bdp to 400 000 B and maxwnd to 600 000 B; a
    /// 5 µs sample later changes nothing. On a NACK that quick adapt ignores (an ECN-like
    /// signal while 100 000 B are still owed) the window still follows maxwnd down at once,
    /// 1 200 000 → 600 000 (htsim would wait for the next ACK's clamp).
    #[test]
    fn smaller_rtt_samples_lower_base_rtt_and_maxwnd() {
        let mut n = settled(2 * US, MAXWND);
        n.bytes_to_ignore = 100_000;
        n.on_nack(&NackSignal {
            rtt_ps: Some(4 * US),
            ..nack(2 * US, 0)
        });
        assert_eq!((n.base_rtt_ps, n.bytes_ignored), (4 * US, 4158));
        assert_close(n.maxwnd_bytes, 600_000.0);
        assert_close(n.cwnd_bytes, 600_000.0);
        n.on_ack(&ack(3 * US, 0, false, Some(5 * US)));
        assert_eq!(n.base_rtt_ps, 4 * US);
        assert_close(n.maxwnd_bytes, 600_000.0);
    }

    /// A timeout and a reordering loss each take one packet off, floored at MTU.
    #[test]
    fn losses_cut_one_packet_down_to_an_mtu() {
        let mut n = settled(0, 10_000.0);
        let loss = |kind| LossSignal {
            now_ps: US,
            kind,
            bytes: 4158,
            srtt_ps: 8 * US,
            in_flight_bytes: 0,
        };
        n.on_loss(&loss(LossKind::Timeout));
        assert_close(n.cwnd_bytes, 10_000.0 - 4158.0);
        n.on_loss(&loss(LossKind::Reordering));
        assert_close(n.cwnd_bytes, MTU);
        assert_eq!(n.pacing_gap_ps(), None);
    }
}
