//! `[lb.drill]`: DRILL(d, m) (`lb.policy = "drill"`).

use crate::scenario::validate::{bail_field, FieldError, Result};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// `[lb.drill]`: the least loaded of d random uplinks and m remembered ones.
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq, JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct DrillConfig {
    /// Candidate ports sampled per packet d, from 1 to the k/2 uplinks a switch chooses among (all
    /// of them: JSQ); DRILL(2, 1) is the DRILL paper's.
    pub d: u32,
    /// Least-loaded ports remembered for the next packet m, from 0 to the k/2 uplinks.
    pub m: u32,
}

impl DrillConfig {
    /// d and m against the `uplinks` a switch chooses among at most (larger values would mean
    /// nothing).
    pub fn validate(&self, uplinks: u32) -> Result<()> {
        let w = uplinks;
        if self.d == 0 || self.d > w {
            bail_field!(
                "lb.drill.d",
                "must be from 1 to the {w} uplinks a switch chooses among (got {})",
                self.d
            );
        }
        if self.m > w {
            bail_field!(
                "lb.drill.m",
                "must be from 0 to the {w} uplinks a switch chooses among (got {})",
                self.m
            );
        }
        Ok(())
    }
}

impl Default for DrillConfig {
    fn default() -> Self {
        DrillConfig { d: 2, m: 1 }
    }
}
