//! `[lb.bitmap]`: UEC's per-EV penalty bitmap (`lb.policy = "bitmap"` and `"mixed"`).

use crate::scenario::validate::{bail_field, FieldError, Result};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// `[lb.bitmap]`: the penalty bitmap of `bitmap` and `mixed` (htsim `UecMpBitmap`).
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq, JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct BitmapConfig {
    /// Entropy values per flow P, a power of two (EVs 0..P). Not `lb.entropy_paths`: each flow
    /// keeps a penalty byte per value, and its default 65536 would cost 64 KB a flow (an
    /// all-to-all starts every flow at once). 64 is UEC htsim's `-paths` default.
    #[schemars(range(min = 1, max = 65536))]
    pub paths: u32,
    /// Penalty an ECN-echoing ACK adds to its entropy value (htsim: 1).
    #[schemars(range(max = 255))]
    pub ecn_penalty: u32,
    /// Penalty a NACK of a trim before the last hop adds (a last-hop NACK counts as an ACK, as in
    /// UEC htsim; htsim: 4).
    #[schemars(range(max = 255))]
    pub nack_penalty: u32,
    /// Penalty a retransmission timeout adds (htsim: 15).
    #[schemars(range(max = 255))]
    pub timeout_penalty: u32,
    /// Penalties are capped at this (htsim `_max_penalty`: 15).
    #[schemars(range(min = 1, max = 255))]
    pub max_penalty: u32,
    /// UEC 1.0.3 §3.6.16.4's rule (UNVERIFIED, not in htsim): while more than half of the entropy
    /// values have a penalty, skip none (the walk's value is sent and its penalty still drops by
    /// 1). Default false, as htsim.
    pub no_skip_above_half: bool,
}

impl BitmapConfig {
    /// The bitmap's parameters, checked whatever the policy.
    pub fn validate(&self) -> Result<()> {
        let p = self.paths;
        if !p.is_power_of_two() || p > 65_536 {
            bail_field!(
                "lb.bitmap.paths",
                "must be a power of two from 1 to 65536 entropy values (got {p})"
            );
        }
        for (field, v) in [
            ("lb.bitmap.ecn_penalty", self.ecn_penalty),
            ("lb.bitmap.nack_penalty", self.nack_penalty),
            ("lb.bitmap.timeout_penalty", self.timeout_penalty),
        ] {
            if v > 255 {
                bail_field!(field, "must be from 0 to 255 (got {v})");
            }
        }
        let m = self.max_penalty;
        if m == 0 || m > 255 {
            bail_field!("lb.bitmap.max_penalty", "must be from 1 to 255 (got {m})");
        }
        Ok(())
    }
}

impl Default for BitmapConfig {
    fn default() -> Self {
        BitmapConfig {
            paths: 64,
            ecn_penalty: 1,
            nack_penalty: 4,
            timeout_penalty: 15,
            max_penalty: 15,
            no_skip_above_half: false,
        }
    }
}
