//! `[lb.ar]`: Spectrum-X-style adaptive routing (`lb.policy = "ar"`).

use crate::scenario::validate::{
    bail_field, check_micros, check_table, FieldError, Result, MAX_LATENCY_NS,
};
use crate::scenario::SwitchGranularity;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// `[lb.ar]`: the uplink of the lowest quantized queue level.
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq, JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct ArConfig {
    /// A port's quantized level is recomputed when read more than this many ns after its last
    /// refresh (htsim's lazy 100 ns).
    #[schemars(range(min = 0, max = 1e9))]
    pub update_period_ns: f64,
    /// The queue capacity its levels are fractions of, in bytes (at least 1). Unset:
    /// `switch.buffer_bytes`, or the Ofan paper's 800 KB with unlimited buffers.
    #[schemars(range(min = 1))]
    pub capacity_bytes: Option<u64>,
    /// The three level thresholds, increasing, in (0, 100], percent of the capacity (levels 0 to
    /// 3; htsim 5, 10, 20).
    pub thresholds_pct: Vec<f64>,
    /// Packets smaller than this (ACKs) follow the ECMP hash (htsim: 100 B).
    pub small_bytes: u32,
    /// A decision per packet (default) or per flowlet (htsim's `PER_FLOWLET` sticky rule; the
    /// guide's Load-balancing policies page).
    pub mode: SwitchGranularity,
    /// Per flowlet: a flow may move only after a gap longer than this, in µs (htsim's sticky
    /// delta, 10 µs).
    #[schemars(range(min = 0, max = 1e6))]
    pub flowlet_us: f64,
    /// Per flowlet: entries of the per-switch table flows are hashed onto (htsim keeps exact
    /// per-flow state; collisions are rare at this size).
    #[schemars(range(min = 1, max = 16_777_216))]
    pub flowset_entries: u32,
}

impl ArConfig {
    /// AR's refresh period, capacity and level thresholds.
    pub fn validate(&self) -> Result<()> {
        let period = self.update_period_ns;
        if !period.is_finite() || !(0.0..=MAX_LATENCY_NS).contains(&period) {
            bail_field!(
                "lb.ar.update_period_ns",
                "must be a time in ns from 0 to 10^9 (got {period})"
            );
        }
        if self.capacity_bytes == Some(0) {
            bail_field!("lb.ar.capacity_bytes", "must be at least 1 byte");
        }
        check_micros("lb.ar.flowlet_us", self.flowlet_us)?;
        check_table("lb.ar.flowset_entries", self.flowset_entries)?;
        let t = &self.thresholds_pct;
        let increasing = t.windows(2).all(|w| w[0] < w[1]);
        if t.len() != 3 || !increasing || !t.iter().all(|&x| x > 0.0 && x <= 100.0) {
            bail_field!(
                "lb.ar.thresholds_pct",
                "must be three increasing percentages in (0, 100] (got {t:?})"
            );
        }
        Ok(())
    }
}

impl Default for ArConfig {
    fn default() -> Self {
        ArConfig {
            update_period_ns: 100.0,
            capacity_bytes: None,
            thresholds_pct: vec![5.0, 10.0, 20.0],
            small_bytes: 100,
            mode: SwitchGranularity::Packet,
            flowlet_us: 10.0,
            flowset_entries: 4096,
        }
    }
}
