//! `[lb.conga]`: CONGA, adapted per packet (`lb.policy = "conga"`).

use crate::scenario::validate::{bail_field, FieldError, Result, MAX_LATENCY_NS};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// `[lb.conga]`: leaf-to-leaf congestion feedback.
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq, JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct CongaConfig {
    /// DRE decay period T_dre, in µs. The ns-3 reference's 200 µs is for 10–40 Gb/s links and
    /// millisecond flows; here τ = T_dre/α = 5 µs, about one base RTT of the 800 Gb/s k = 12 fat
    /// tree and half the time of a 1 MB message at line rate. With T_dre = 5 µs (τ = 25 µs) the
    /// metrics stayed so low in the k = 12 Ofan set-up that the remote metric never changed a
    /// decision (results identical with T_age ≈ 0).
    #[schemars(range(max = 1e6), extend("exclusiveMinimum" = 0))]
    pub t_dre_us: f64,
    /// DRE decay factor α, applied as ⌊(1−α)·2^16⌉/2^16.
    #[schemars(range(min = 1.52587890625e-5, max = 1))]
    pub alpha: f64,
    /// Bits Q of the quantized congestion metric (the top bits of the overlay's metric bytes stay
    /// clear, so that no overlay looks like a background flow's pinned path).
    #[schemars(range(min = 1, max = 6))]
    pub q_bits: u32,
    /// Remote metrics older than this (µs) read as 0 (aging every T_age/4); the reference's 10 ms
    /// = 50 T_dre, scaled with T_dre.
    #[schemars(range(max = 1e6), extend("exclusiveMinimum" = 0))]
    pub t_age_us: f64,
    /// Flowlet inactivity timeout in µs; 0 = a decision per packet (CONGA adapted per packet, as
    /// in the Ofan paper).
    #[schemars(range(min = 0, max = 1e6))]
    pub flowlet_us: f64,
}

impl CongaConfig {
    /// CONGA's DRE, quantization, aging and flowlet parameters (its uplink count, which needs
    /// the fabric, is checked by `Scenario::validate`).
    pub fn validate(&self) -> Result<()> {
        let positive_us = |field: &str, us: f64| -> Result<()> {
            if !us.is_finite() || us <= 0.0 || us * 1e3 > MAX_LATENCY_NS {
                bail_field!(
                    field,
                    "must be a time in µs above 0 and up to 10^6 (got {us})"
                );
            }
            Ok(())
        };
        positive_us("lb.conga.t_dre_us", self.t_dre_us)?;
        positive_us("lb.conga.t_age_us", self.t_age_us)?;
        let f = self.flowlet_us;
        if !f.is_finite() || !(0.0..=MAX_LATENCY_NS / 1e3).contains(&f) {
            bail_field!(
                "lb.conga.flowlet_us",
                "must be a time in µs from 0 to 10^6 (got {f})"
            );
        }
        let a = self.alpha;
        if !a.is_finite() || !(1.0 / 65_536.0..=1.0).contains(&a) {
            bail_field!(
                "lb.conga.alpha",
                "must be in (0, 1], at least 2^-16 (got {a})"
            );
        }
        if !(1..=6).contains(&self.q_bits) {
            bail_field!(
                "lb.conga.q_bits",
                "must be from 1 to 6 (the metric travels in 6 bits of the overlay; got {})",
                self.q_bits
            );
        }
        Ok(())
    }
}

impl Default for CongaConfig {
    fn default() -> Self {
        CongaConfig {
            t_dre_us: 1.0,
            alpha: 0.2,
            q_bits: 3,
            t_age_us: 50.0,
            flowlet_us: 0.0,
        }
    }
}
