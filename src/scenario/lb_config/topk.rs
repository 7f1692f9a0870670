//! `[lb.topk]`: uniform among the k least-loaded uplinks (`lb.policy = "topk"`).

use crate::scenario::validate::{bail_field, FieldError, Result};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// `[lb.topk]`: Top-k's k.
#[derive(Clone, Debug, Default, Deserialize, Serialize, PartialEq, JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct TopkConfig {
    /// Choose at random among the k least-loaded candidate uplinks, from 1 to the k/2 uplinks.
    /// Unset: ⌈N/2⌉ of the N candidate ports (the PSP paper's k = N/2, §IV-D).
    pub k: Option<u32>,
}

impl TopkConfig {
    /// k against the `uplinks` a switch chooses among at most.
    pub fn validate(&self, uplinks: u32) -> Result<()> {
        if let Some(k) = self.k {
            if k == 0 || k > uplinks {
                bail_field!(
                    "lb.topk.k",
                    "must be from 1 to the {uplinks} uplinks a switch chooses among (got {k})"
                );
            }
        }
        Ok(())
    }
}
