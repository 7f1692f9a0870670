//! `[lb]`: the load-balancing policy and its settings. Settings every policy (or several)
//! reads are plain fields of `[lb]`; each policy's own settings are one struct nested under
//! its name (`[lb.ar]`, `[lb.psp]`, ...), in its own file here with its defaults and its
//! checks, as `[host.nscc]` and the other transports' are in `cc.rs`. The settings' old flat
//! names (`lb.ar_mode`) are refused with the new name: `renamed.rs`.

mod ar;
mod bitmap;
mod conga;
mod dlb;
mod drill;
mod ethereal;
mod psp;
mod renamed;
mod reps;
mod sglb;
mod topk;
mod valiant;

pub use ar::ArConfig;
pub use bitmap::BitmapConfig;
pub use conga::CongaConfig;
pub use dlb::DlbConfig;
pub use drill::DrillConfig;
pub use ethereal::EtherealConfig;
pub use psp::PspConfig;
pub(super) use renamed::check_renamed_keys;
pub use renamed::renamed_field;
pub use reps::RepsConfig;
pub use sglb::SglbConfig;
pub use topk::TopkConfig;
pub use valiant::ValiantConfig;

use super::validate::{bail_field, FieldError, Result, MAX_LATENCY_NS};
use super::{LbPolicy, MixSelect, MixedDeployment};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// `[lb]`: the load-balancing policy and its parameters.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct LbConfig {
    /// The load-balancing policy (the guide's Load-balancing policies page; the static routings:
    /// Fabrics, PGFT routing). `reps`, `bitmap` and `mixed` learn from ACKs, under every `host.cc`.
    pub policy: LbPolicy,
    /// pOfan: ingress ports per pipe W (1 = one pointer set per ingress port), from 1 to
    /// `topology.k`. Ignored by other policies.
    pub pipe_ports: u32,
    /// `ecmp`, `rps`, `reps`: host entropy values (EVs) per flow are drawn from [0, entropy_paths)
    /// (REPS's EV space; UEC htsim uses 64); `bitmap` and `mixed` use `lb.bitmap.paths`.
    #[schemars(range(min = 1, max = 65536))]
    pub entropy_paths: u32,
    /// `simple_rr`: reshuffle the uplink order at every full rotation (htsim `RR`); the Ofan
    /// paper's Simple RR keeps one fixed order (the default).
    pub rr_reshuffle: bool,
    /// Route ACKs by ECMP hash instead of the policy, as htsim's `RR` does for packets
    /// < 128 B. Unset: true for `simple_rr` (the htsim rule, under which the Ofan paper's
    /// linear queue growth of Simple RR is reproduced), false for every other policy.
    pub ack_ecmp: Option<bool>,
    /// `jsq`, `choice`, `drill`, `topk`, `psp`, `band_jsq`, `dlb` (its queue and sent-bytes
    /// counters): decide from a snapshot of the switch's queues refreshed at every multiple of this
    /// period, in ns (stale state, as in the PSP paper, §IV); 0 = the instantaneous queues. At
    /// least 0.001 (1 ps) when not 0; an error for other policies. `ar` keeps its own quantized
    /// snapshot, refreshed every `lb.ar.update_period_ns` (sweep that field for AR's staleness);
    /// `sglb`'s local quality uses AR's levels and its remote state is as old as
    /// `lb.sglb.advert_ns` plus the link; with `lb.psp.remote`, the spine-to-leaf state travels
    /// every period in adverts.
    #[schemars(range(min = 0, max = 1e9))]
    pub state_update_period_ns: f64,
    /// Mixed deployments: other switch policies on selected switches, applied in order (later
    /// entries win), drawn from the seed; e.g. `[{ policy = "ar", select = "random_switches",
    /// fraction = 0.5 }]` on an `ofan` base. Switch-side policies only (not `ecmp`, `rps`, `drb`,
    /// `reps`, `valiant`, `bitmap`, `mixed`, `ethereal`: hosts do nothing special; nor `conga`,
    /// `sglb` or `lb.psp.remote`, whose switches exchange state).
    pub mixed: Vec<MixedDeployment>,
    /// `[lb.reps]`: REPS's settings.
    pub reps: RepsConfig,
    /// `[lb.drill]`: DRILL's d and m.
    pub drill: DrillConfig,
    /// `[lb.topk]`: Top-k's k.
    pub topk: TopkConfig,
    /// `[lb.ar]`: adaptive routing's settings.
    pub ar: ArConfig,
    /// `[lb.dlb]`: DLB's settings.
    pub dlb: DlbConfig,
    /// `[lb.valiant]`: Valiant's settings.
    pub valiant: ValiantConfig,
    /// `[lb.psp]`: PSP's (and `band_jsq`'s) bands and remote state.
    pub psp: PspConfig,
    /// `[lb.conga]`: CONGA's settings.
    pub conga: CongaConfig,
    /// `[lb.sglb]`: SGLB's settings.
    pub sglb: SglbConfig,
    /// `[lb.bitmap]`: the UEC bitmap's settings (`bitmap`, `mixed`).
    pub bitmap: BitmapConfig,
    /// `[lb.ethereal]`: Ethereal's settings.
    pub ethereal: EtherealConfig,
}

impl LbConfig {
    /// Whether ACKs are hashed (ECMP) rather than balanced by the policy.
    pub fn acks_hashed(&self) -> bool {
        self.ack_ecmp.unwrap_or(self.policy == LbPolicy::SimpleRr)
    }

    /// The stale-state refresh period in ps (0: switches read their queues directly).
    pub fn state_update_period_ps(&self) -> u64 {
        (self.state_update_period_ns * crate::time::PS_PER_NS as f64).round() as u64
    }

    /// `lb.psp.remote`'s advert period in ps.
    pub fn psp_remote_period_ps(&self) -> u64 {
        let ns = match self.psp.remote_period_ns {
            0.0 => self.state_update_period_ns,
            ns => ns,
        };
        (ns * crate::time::PS_PER_NS as f64).round() as u64
    }

    /// Every `[lb]` check: the general fields here, each policy's in its struct. `k` is
    /// `topology.k`, `uplinks` the most uplinks a switch chooses among.
    pub fn validate(&self, k: u32, uplinks: u32) -> Result<()> {
        if self.pipe_ports == 0 || self.pipe_ports > k {
            bail_field!(
                "lb.pipe_ports",
                "must be from 1 to k = {k} (got {})",
                self.pipe_ports
            );
        }
        if self.entropy_paths == 0 || self.entropy_paths > 65_536 {
            bail_field!(
                "lb.entropy_paths",
                "must be from 1 to 65536 (got {})",
                self.entropy_paths
            );
        }
        self.reps.validate()?;
        self.bitmap.validate()?;
        self.ethereal.validate()?;
        self.drill.validate(uplinks)?;
        self.topk.validate(uplinks)?;
        self.validate_state_update_period()?;
        self.ar.validate()?;
        self.dlb.validate()?;
        self.psp.validate()?;
        self.conga.validate()?;
        if self.policy == LbPolicy::Conga && uplinks >= 255 {
            bail_field!(
                "topology",
                "conga tags uplinks with one byte: switches must have fewer than 255 uplinks (got {uplinks})"
            );
        }
        self.sglb.validate()?;
        self.psp.validate_remote(
            self.policy,
            self.state_update_period_ns,
            self.psp_remote_period_ps(),
            self.state_update_period_ps(),
        )?;
        self.valiant.validate()?;
        self.validate_mixed()
    }

    /// The stale-state period: a time, at least 1 ps, for queue-aware policies only.
    fn validate_state_update_period(&self) -> Result<()> {
        let period = self.state_update_period_ns;
        if !period.is_finite() || !(0.0..=MAX_LATENCY_NS).contains(&period) {
            bail_field!(
                "lb.state_update_period_ns",
                "must be a time in ns from 0 to 10^9 (got {period})"
            );
        }
        if period > 0.0 && self.state_update_period_ps() == 0 {
            bail_field!(
                "lb.state_update_period_ns",
                "{period} ns is below the simulator's 1 ps resolution (0 means instantaneous)"
            );
        }
        let any_queue_aware =
            self.policy.is_queue_aware() || self.mixed.iter().any(|m| m.policy.is_queue_aware());
        if period > 0.0 && !any_queue_aware {
            bail_field!(
                "lb.state_update_period_ns",
                "only used by the queue-aware policies (jsq, choice, drill, topk, psp, band_jsq, dlb), not by \"{}\"",
                self.policy.name()
            );
        }
        Ok(())
    }

    /// Mixed deployments: switch-side policies only, fractions where the selector needs one.
    fn validate_mixed(&self) -> Result<()> {
        if self.mixed.is_empty() {
            return Ok(());
        }
        if !self.policy.is_switch_only() {
            bail_field!(
                "lb.mixed",
                "mixes switch policies only: the base lb.policy \"{}\" acts at the hosts",
                self.policy.name()
            );
        }
        if self.policy.needs_every_switch() || self.psp.remote {
            bail_field!(
                "lb.mixed",
                "lb.policy \"{}\" (or lb.psp.remote) needs every switch to take part: no mixing",
                self.policy.name()
            );
        }
        for (i, m) in self.mixed.iter().enumerate() {
            if !m.policy.is_switch_only() {
                bail_field!(
                    format!("lb.mixed[{i}].policy"),
                    "\"{}\" acts at the hosts; only switch policies mix",
                    m.policy.name()
                );
            }
            if m.policy.needs_every_switch() {
                bail_field!(
                    format!("lb.mixed[{i}].policy"),
                    "\"{}\" needs every switch to take part (state travels between switches); it does not mix",
                    m.policy.name()
                );
            }
            let random = matches!(m.select, MixSelect::RandomSwitches | MixSelect::RandomPods);
            match m.fraction {
                Some(f) if !random => bail_field!(
                    format!("lb.mixed[{i}].fraction"),
                    "only used with select = \"random_switches\" or \"random_pods\" (got {f})"
                ),
                Some(f) if !(0.0..=1.0).contains(&f) => {
                    bail_field!(
                        format!("lb.mixed[{i}].fraction"),
                        "must be in [0, 1] (got {f})"
                    )
                }
                None if random => {
                    bail_field!(
                        format!("lb.mixed[{i}].fraction"),
                        "required with this select"
                    )
                }
                _ => {}
            }
        }
        Ok(())
    }
}

impl Default for LbConfig {
    fn default() -> Self {
        LbConfig {
            policy: LbPolicy::Ofan,
            pipe_ports: 4,
            entropy_paths: 65_536,
            rr_reshuffle: false,
            ack_ecmp: None,
            state_update_period_ns: 0.0,
            mixed: Vec::new(),
            reps: RepsConfig::default(),
            drill: DrillConfig::default(),
            topk: TopkConfig::default(),
            ar: ArConfig::default(),
            dlb: DlbConfig::default(),
            valiant: ValiantConfig::default(),
            psp: PspConfig::default(),
            conga: CongaConfig::default(),
            sglb: SglbConfig::default(),
            bitmap: BitmapConfig::default(),
            ethereal: EtherealConfig::default(),
        }
    }
}
