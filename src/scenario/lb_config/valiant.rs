//! `[lb.valiant]`: Valiant load balancing (`lb.policy = "valiant"`).

use crate::scenario::validate::{bail_field, FieldError, Result};
use crate::scenario::ValiantGranularity;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// `[lb.valiant]`: through a random top-tier switch per packet or flow.
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq, JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct ValiantConfig {
    /// A fresh random intermediate per data packet (default) or one per flow (VL2 style).
    pub granularity: ValiantGranularity,
    /// Node ids of the top-tier switches (cores, spines) hosts draw the intermediate from,
    /// uniformly; empty: every top-tier switch. Each must be a top-tier switch, listed once; under
    /// `failures.links` every pair of edge switches must keep a valid one (reachable through live
    /// uplinks, still reaching the destination), among which the draw is uniform.
    pub intermediates: Vec<u32>,
}

impl ValiantConfig {
    /// The intermediate subset: no duplicates (that each is a top-tier switch needs the fabric:
    /// `Model::build`).
    pub fn validate(&self) -> Result<()> {
        let ids = &self.intermediates;
        if let Some((i, &n)) = ids.iter().enumerate().find(|(i, n)| ids[..*i].contains(n)) {
            bail_field!(
                "lb.valiant.intermediates",
                "lists switch {n} twice (entries {} and {i})",
                ids.iter().position(|&x| x == n).unwrap_or(0)
            );
        }
        Ok(())
    }
}

impl Default for ValiantConfig {
    fn default() -> Self {
        ValiantConfig {
            granularity: ValiantGranularity::Packet,
            intermediates: Vec::new(),
        }
    }
}
