//! `[lb.sglb]`: ByteDance SGLB (`lb.policy = "sglb"`).

use crate::scenario::validate::{
    bail_field, check_micros, check_table, FieldError, Result, MAX_LATENCY_NS,
};
use crate::scenario::SwitchGranularity;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// `[lb.sglb]`: DLB quality combined with the upper switches' adverts.
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq, JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct SglbConfig {
    /// Period of the upper switches' quality adverts and of every SGLB switch's quality sampling,
    /// in ns (the SGLB paper publishes no period: 1–10 µs is a reasonable range).
    #[schemars(range(min = 1, max = 1e9))]
    pub advert_ns: f64,
    /// A decision per packet (default) or per flowlet (SGLB decides "per packet or flowlet as in
    /// DLB": DLB's flowlet rule on the path quality, without reactive rebalancing).
    pub mode: SwitchGranularity,
    /// Flowlet mode: a flowset entry idle longer than this starts a new flowlet, in µs (DLB's
    /// default, Juniper Apstra's 256).
    #[schemars(range(min = 0, max = 1e6))]
    pub flowlet_us: f64,
    /// Flowlet mode: entries of each choosing switch's flowset table (DLB's default, 256).
    #[schemars(range(min = 1, max = 16_777_216))]
    pub flowset_entries: u32,
}

impl SglbConfig {
    /// SGLB's advert period and flowlet table.
    pub fn validate(&self) -> Result<()> {
        let p = self.advert_ns;
        if !p.is_finite() || !(1.0..=MAX_LATENCY_NS).contains(&p) {
            bail_field!(
                "lb.sglb.advert_ns",
                "must be a time in ns from 1 to 10^9 (got {p})"
            );
        }
        check_micros("lb.sglb.flowlet_us", self.flowlet_us)?;
        check_table("lb.sglb.flowset_entries", self.flowset_entries)?;
        Ok(())
    }
}

impl Default for SglbConfig {
    fn default() -> Self {
        SglbConfig {
            advert_ns: 2_000.0,
            mode: SwitchGranularity::Packet,
            flowlet_us: 256.0,
            flowset_entries: 256,
        }
    }
}
