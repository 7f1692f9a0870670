//! `[lb.reps]`: REPS's entropy-value recycling (`lb.policy = "reps"`).

use crate::scenario::validate::{bail_field, FieldError, Result};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// `[lb.reps]`: each flow recycles entropy values acknowledged without ECN.
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq, JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct RepsConfig {
    /// Good entropy values each flow caches (B).
    #[schemars(range(min = 1, max = 16))]
    pub buffer: u32,
    /// How long a flow keeps to its cached values after a timeout that suggests a failed path
    /// (freezing mode), in µs; 0: never freeze.
    #[schemars(range(min = 0, max = 1e9))]
    pub freeze_us: f64,
    /// Packets sent on random entropy values when a freeze ends. Unset: the flow path's
    /// bandwidth-delay product / (payload + header), in full packets (the REPS artifact; UEC htsim:
    /// 16).
    #[schemars(range(max = 65535))]
    pub explore_pkts: Option<u32>,
    /// Without `switch.trim`: a timeout freezes only if the flow's largest RTT over the current
    /// two-RTO epoch is below this many base RTTs (otherwise congestion explains it).
    #[schemars(range(min = 1, max = 1e6))]
    pub freeze_rtt_gate: f64,
}

impl RepsConfig {
    /// Largest `buffer` (REPS keeps its buffer inline in a flow's state).
    pub const MAX_BUFFER: u32 = 16;

    /// REPS's parameters (checked whatever the policy, as every field is). The policies that
    /// learn from feedback (`LbPolicy::needs_feedback`) run on every transport: the paced one
    /// (`host.cc = "none"`) ACKs each data packet with its entropy value and ECN mark, which
    /// is all they learn from there (no trimming, which validation refuses there, and no
    /// timeouts: its freezing and exploration fields then change nothing).
    pub fn validate(&self) -> Result<()> {
        let max = Self::MAX_BUFFER;
        if self.buffer == 0 || self.buffer > max {
            bail_field!(
                "lb.reps.buffer",
                "must be from 1 to {max} entropy values (got {})",
                self.buffer
            );
        }
        let f = self.freeze_us;
        if !(0.0..=1e9).contains(&f) {
            bail_field!(
                "lb.reps.freeze_us",
                "must be a time in µs from 0 (never freeze) to 10^9 (got {f})"
            );
        }
        if let Some(e) = self.explore_pkts {
            if e > u16::MAX as u32 {
                bail_field!(
                    "lb.reps.explore_pkts",
                    "must be from 0 to 65535 packets (got {e})"
                );
            }
        }
        let g = self.freeze_rtt_gate;
        if !(1.0..=1e6).contains(&g) {
            bail_field!(
                "lb.reps.freeze_rtt_gate",
                "must be a number of base RTTs from 1 to 10^6 (got {g})"
            );
        }
        Ok(())
    }
}

impl Default for RepsConfig {
    fn default() -> Self {
        RepsConfig {
            buffer: 8,
            freeze_us: 10_000.0,
            explore_pkts: None,
            freeze_rtt_gate: 1.65,
        }
    }
}
