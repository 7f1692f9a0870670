//! `[lb.ethereal]`: Ethereal's subflows (`lb.policy = "ethereal"`).

use crate::scenario::validate::{bail_field, FieldError, Result};
use crate::scenario::Ties;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// `[lb.ethereal]`: each flow split into subflows, one per path through the lowest common
/// layer.
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq, JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct EtherealConfig {
    /// Most subflows per flow s_max (at least 1). Unset: the number of paths through the lowest
    /// common layer (one subflow per path, as in the Ofan paper, §3.4).
    #[schemars(range(min = 1))]
    pub max_subflows: Option<u32>,
    /// A subflow's hop among equally loaded uplinks: the lowest index or a random one (default
    /// random, so that hosts of an edge switch do not all favour uplink 0).
    pub ties: Ties,
}

impl EtherealConfig {
    /// Ethereal's parameters: at least 1 subflow per flow.
    pub fn validate(&self) -> Result<()> {
        if self.max_subflows == Some(0) {
            bail_field!(
                "lb.ethereal.max_subflows",
                "must be at least 1 subflow per flow (got 0)"
            );
        }
        Ok(())
    }
}

impl Default for EtherealConfig {
    fn default() -> Self {
        EtherealConfig {
            max_subflows: None,
            ties: Ties::Random,
        }
    }
}
