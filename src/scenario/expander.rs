//! `topology.kind = "expander"`: its fields (`topology.racks`, `hosts_per_rack`, `uplinks`,
//! `[topology.expander]`) and the checks that need no fabric, including the features that
//! assume a tree and are refused on a flat fabric.

use super::validate::{bail_field, FieldError, Result};
use super::{LbPolicy, Scenario, TopologyKind};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// `[topology.expander]`.
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq, Eq, JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct ExpanderConfig {
    /// Random u-regular graphs drawn from the seed; disconnected draws are discarded and the one
    /// with the least (diameter, mean ToR-to-ToR hop count) is kept, the first drawn on a tie (none
    /// connected: an error naming `topology.uplinks`).
    #[schemars(range(min = 1, max = 1000))]
    pub realizations: u32,
}

impl Default for ExpanderConfig {
    fn default() -> Self {
        ExpanderConfig { realizations: 1 }
    }
}

/// The route table is 6 N² bytes (100 MB at 4,096 racks).
pub(super) const MAX_RACKS: u32 = 4096;
const MAX_REALIZATIONS: u32 = 1000;

impl LbPolicy {
    /// Whether the policy works on a flat fabric (an expander: candidate sets of varying
    /// size per destination, every switch of one tier, paths of varying length). The others
    /// were each run on one and refused: DRB, Valiant and Ethereal code paths by one digit
    /// per tier (every ToR would read the same digit; Valiant has no tier to climb to);
    /// Simple RR, Ofan and pOfan rotate over a fixed uplink set (a candidate list of another
    /// size panics); CONGA keeps leaf-to-leaf state along a leaf-spine-leaf path (every ToR
    /// would act as a source leaf); SGLB and `lb.psp.remote` advertise toward lower switches,
    /// which an expander has none of (they would silently run without remote state).
    pub fn works_on_flat_fabric(&self) -> bool {
        !matches!(
            self,
            LbPolicy::SimpleRr
                | LbPolicy::Drb
                | LbPolicy::Ofan
                | LbPolicy::Pofan
                | LbPolicy::Valiant
                | LbPolicy::Ethereal
                | LbPolicy::Conga
                | LbPolicy::Sglb
                // Static PGFT routings address switches by PGFT digits.
                | LbPolicy::Dmodk
                | LbPolicy::Smodk
                | LbPolicy::Gdmodk
                | LbPolicy::Gsmodk
                | LbPolicy::Random
        )
    }
}

impl Scenario {
    /// `[topology.expander]` only for an expander; an expander's graph must exist (N·u
    /// even, u < N); the features it cannot run. The rack fields' ranges are
    /// `validate_racks`'s.
    pub(super) fn validate_expander(&self) -> Result<()> {
        let t = &self.topology;
        if t.kind != TopologyKind::Expander {
            if t.expander != ExpanderConfig::default() {
                bail_field!("topology.expander", "only used with kind = \"expander\"");
            }
            return Ok(());
        }
        let (n, _, u) = t.rack_dims();
        if u >= n {
            bail_field!(
                "topology.uplinks",
                "must be below topology.racks = {n}: a simple graph has at most racks − 1 links per ToR (got {u})"
            );
        }
        if (n as u64 * u as u64) % 2 != 0 {
            bail_field!(
                "topology.uplinks",
                "racks × uplinks must be even (a {u}-regular graph on {n} racks has {n} × {u} / 2 links)"
            );
        }
        let r = t.expander.realizations;
        if !(1..=MAX_REALIZATIONS).contains(&r) {
            bail_field!(
                "topology.expander.realizations",
                "must be from 1 to {MAX_REALIZATIONS} (got {r})"
            );
        }
        self.validate_flat_features()
    }

    /// Features that assume a tree: refused on an expander.
    fn validate_flat_features(&self) -> Result<()> {
        let lb = &self.lb;
        let refuse = |field: String, p: LbPolicy| {
            FieldError::new(
                field,
                format!(
                    "\"{}\" assumes a tree (path digits per tier, a fixed uplink rotation or \
                     leaf-spine state exchange); not available with kind = \"expander\" \
                     (e.g. \"ecmp\", \"rps\", \"drill\")",
                    p.name()
                ),
            )
        };
        if !lb.policy.works_on_flat_fabric() {
            return Err(refuse("lb.policy".into(), lb.policy));
        }
        if let Some((i, m)) = lb
            .mixed
            .iter()
            .enumerate()
            .find(|(_, m)| !m.policy.works_on_flat_fabric())
        {
            return Err(refuse(format!("lb.mixed[{i}].policy"), m.policy));
        }
        if lb.psp.remote {
            bail_field!(
                "lb.psp.remote",
                "spine adverts need a leaf-spine; not available with kind = \"expander\""
            );
        }
        if self.failures.link_probability > 0.0 {
            bail_field!(
                "failures.link_probability",
                "failed links are not modelled on an expander (routes would need new, longer paths)"
            );
        }
        if !self.failures.links.is_empty() {
            bail_field!(
                "failures.links",
                "failed links are not modelled on an expander (routes would need new, longer paths)"
            );
        }
        if !self.workload.background.is_empty() {
            bail_field!(
                "workload.background",
                "pinned paths are coded by tier; not available with kind = \"expander\""
            );
        }
        Ok(())
    }
}
