//! `[lb.dlb]`: Broadcom DLB (`lb.policy = "dlb"`).

use crate::scenario::validate::{
    bail_field, check_levels, check_micros, check_table, FieldError, Result, MAX_LATENCY_NS,
};
use crate::scenario::DlbMode;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// `[lb.dlb]`: the best quality band from queue and utilization levels.
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq, JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct DlbConfig {
    /// Per packet (the default: the Ofan paper compares per-packet schemes), per flowlet, or
    /// assigned (DLB's assigned-flow mode: a flow keeps the port its first packet took for good, no
    /// inactivity re-pick, no rebalancing; re-picked only when that port stops being a candidate).
    pub mode: DlbMode,
    /// Flowlet mode: a flowset entry idle longer than this starts a new flowlet, in µs (Juniper
    /// Apstra's default, 256; htsim uses 10).
    #[schemars(range(min = 0, max = 1e6))]
    pub flowlet_us: f64,
    /// Flowlet and assigned modes: entries of the flowset table flows are hashed onto (Juniper's
    /// default, 256).
    #[schemars(range(min = 1, max = 16_777_216))]
    pub flowset_entries: u32,
    /// A port's quality band is resampled when read more than this many ns after its last sample
    /// (htsim's 100 ns update period of the queue and utilization signals).
    #[schemars(range(min = 0.001, max = 1e9))]
    pub sample_ns: f64,
    /// The time constant of the egress-load estimator, in µs (a DRE: decays by α = sample /
    /// window at every multiple of the sampling period, adds the bytes sent since; htsim's 30 µs
    /// utilization window); from `lb.dlb.sample_ns` to 10^6 µs.
    #[schemars(range(max = 1e6))]
    pub load_window_us: f64,
    /// Queue level thresholds, three, increasing, in (0, 100], percent of AR's queue capacity (the
    /// `lb.ar.capacity_bytes` rule).
    pub queue_thresholds_pct: Vec<f64>,
    /// Utilization level thresholds, three, increasing, in [0, 100], percent of the line rate; the
    /// level is the number of thresholds exceeded (htsim's 0 %, 15 %, 50 %).
    pub util_thresholds_pct: Vec<f64>,
    /// Flowlet mode, reactive rebalancing: an active flowlet moves only if the best band beats its
    /// port's by at least this many bands (2 = one signal level)...
    #[schemars(range(min = 1, max = 7))]
    pub rebalance_delta: u32,
    /// ...and a draw passes this probability; 0 = no reactive rebalancing (the Junos default:
    /// reactive rebalancing must be enabled).
    #[schemars(range(min = 0, max = 1))]
    pub rebalance_prob: f64,
}

impl DlbConfig {
    /// DLB's sampling, load window, thresholds, flowlets and rebalancing.
    pub fn validate(&self) -> Result<()> {
        check_micros("lb.dlb.flowlet_us", self.flowlet_us)?;
        check_table("lb.dlb.flowset_entries", self.flowset_entries)?;
        let t = self.sample_ns;
        if !t.is_finite() || !(0.001..=MAX_LATENCY_NS).contains(&t) {
            bail_field!(
                "lb.dlb.sample_ns",
                "must be a time in ns from 0.001 to 10^9 (got {t})"
            );
        }
        let w = self.load_window_us;
        if !w.is_finite() || w * 1e3 < t || w > MAX_LATENCY_NS / 1e3 {
            bail_field!(
                "lb.dlb.load_window_us",
                "must be a time in µs from lb.dlb.sample_ns ({t} ns) to 10^6 (got {w})"
            );
        }
        check_levels(
            "lb.dlb.queue_thresholds_pct",
            &self.queue_thresholds_pct,
            0.0,
        )?;
        check_levels(
            "lb.dlb.util_thresholds_pct",
            &self.util_thresholds_pct,
            -1.0,
        )?;
        if self.rebalance_delta == 0 || self.rebalance_delta > 7 {
            bail_field!(
                "lb.dlb.rebalance_delta",
                "must be from 1 to 7 quality bands (got {})",
                self.rebalance_delta
            );
        }
        let p = self.rebalance_prob;
        if !(0.0..=1.0).contains(&p) {
            bail_field!("lb.dlb.rebalance_prob", "must be in [0, 1] (got {p})");
        }
        Ok(())
    }
}

impl Default for DlbConfig {
    fn default() -> Self {
        DlbConfig {
            mode: DlbMode::Packet,
            flowlet_us: 256.0,
            flowset_entries: 256,
            sample_ns: 100.0,
            load_window_us: 30.0,
            queue_thresholds_pct: vec![5.0, 10.0, 20.0],
            util_thresholds_pct: vec![0.0, 15.0, 50.0],
            rebalance_delta: 2,
            rebalance_prob: 0.0,
        }
    }
}
