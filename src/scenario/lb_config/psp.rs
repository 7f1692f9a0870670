//! `[lb.psp]`: the PSP paper's queue bands (`lb.policy = "psp"` and `"band_jsq"`; `topk`
//! reads its remote state).

use crate::scenario::validate::{bail_field, FieldError, Result, MAX_LATENCY_NS};
use crate::scenario::{LbPolicy, PspVariant};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// `[lb.psp]`: bands, thresholds and weights of `psp` and `band_jsq`, and the spines' remote
/// state.
#[derive(Clone, Debug, Default, Deserialize, Serialize, PartialEq, JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct PspConfig {
    /// `psp`, `band_jsq`: number of queue bands n (thresholds T_i = i·Th_max/n). Unset: 8 (the PSP
    /// paper's), or the length of `lb.psp.thresholds_bytes`.
    #[schemars(range(min = 1, max = 64))]
    pub bands: Option<u32>,
    /// `psp`, `band_jsq`: the top threshold Th_max, in bytes, at least n; thresholds are T_i =
    /// i·Th_max/n. Unset: 960 KB (the PSP paper's).
    pub th_max_bytes: Option<u64>,
    /// `psp`, `band_jsq`: the thresholds T_1..T_n themselves (1 to 64 values, positive, strictly
    /// increasing; T_n is Th_max), instead of `lb.psp.bands` and `lb.psp.th_max_bytes` (which, if
    /// given too, must agree: n and T_n). The PSP paper's Fig. 7 uses arithmetic sequences from 64
    /// to 960 KB.
    pub thresholds_bytes: Option<Vec<u64>>,
    /// `psp`, `band_jsq`: which of the PSP paper's band rules (module doc of `lb::psp`). `fig3`
    /// (its Fig. 3 pseudocode and §III-F): a queue's band is the number of T_1..T_{n−1} it exceeds
    /// (0..n−1), weights n, …, 1, never 0. `table4` (Table IV's W = {7, …, 0}, the key parameter of
    /// its Figs. 4-6): T_1..T_n compared (bands 0..n), weights n−1, …, 0 and 0 above Th_max.
    pub variant: PspVariant,
    /// `psp`: weight of bands 0..n−1 (n values, at most 10^6 each; `table4` adds 0 above Th_max).
    /// Unset: the variant's linear weights.
    pub weights: Option<Vec<u32>>,
    /// `psp`, `band_jsq`, `topk`: a leaf's uplink s toward destination leaf L is in the band of the
    /// larger of its own queue and the queue spine s last advertised toward L (the PSP paper,
    /// §II-B: the spines report their state in periodic adverts; `topk` ranks by that band, then by
    /// its own queue); spines advertise every `lb.psp.remote_period_ns`. Leaf-spines only; not
    /// with `lb.mixed`. False: exactly the results without the feature.
    pub remote: bool,
    /// With `lb.psp.remote` (else an error): the spines' advert period in ns, the remote state's
    /// staleness; 0: `lb.state_update_period_ns`. 0 or from 1 to 10^9; with
    /// `lb.state_update_period_ns` > 0 a multiple of it (a switch that snapshots and advertises
    /// does both on one timer). The PSP paper's default combines 20 µs remote with 1 µs local
    /// state: `lb.state_update_period_ns = 1000`, `lb.psp.remote_period_ns = 20000`.
    #[schemars(range(min = 0, max = 1e9))]
    pub remote_period_ns: f64,
}

impl PspConfig {
    /// PSP's thresholds T_1..T_n (validated: 1 to 64, strictly increasing).
    pub fn thresholds(&self) -> Vec<u64> {
        match &self.thresholds_bytes {
            Some(t) => t.clone(),
            None => {
                let n = self.bands.unwrap_or(8) as u64;
                let th = self.th_max_bytes.unwrap_or(960_000);
                (1..=n)
                    .map(|i| (i as u128 * th as u128 / n as u128) as u64)
                    .collect()
            }
        }
    }

    /// PSP's bands, thresholds and weights.
    pub fn validate(&self) -> Result<()> {
        if let Some(t) = &self.thresholds_bytes {
            if self.bands.is_some_and(|n| n as usize != t.len()) {
                bail_field!(
                    "lb.psp.bands",
                    "must equal the number of lb.psp.thresholds_bytes ({}) when both are given",
                    t.len()
                );
            }
            if self.th_max_bytes.is_some_and(|th| Some(&th) != t.last()) {
                bail_field!(
                    "lb.psp.th_max_bytes",
                    "must equal the last of lb.psp.thresholds_bytes when both are given"
                );
            }
            if !(1..=64).contains(&t.len()) {
                bail_field!(
                    "lb.psp.thresholds_bytes",
                    "needs 1 to 64 thresholds (got {})",
                    t.len()
                );
            }
            if t[0] == 0 || t.windows(2).any(|w| w[0] >= w[1]) {
                bail_field!(
                    "lb.psp.thresholds_bytes",
                    "must be positive and strictly increasing (got {t:?})"
                );
            }
        }
        let bands = self.bands.unwrap_or(8);
        if !(1..=64).contains(&bands) {
            bail_field!("lb.psp.bands", "must be from 1 to 64 (got {bands})");
        }
        if let Some(th) = self.th_max_bytes {
            if th < bands as u64 {
                bail_field!(
                    "lb.psp.th_max_bytes",
                    "must be at least one byte per band ({bands} bands, got {th})"
                );
            }
        }
        let n = self.thresholds().len();
        if let Some(w) = &self.weights {
            if w.len() != n {
                bail_field!(
                    "lb.psp.weights",
                    "needs one weight per band: {n} bands, got {}",
                    w.len()
                );
            }
            if w.iter().any(|&x| x > 1_000_000) {
                bail_field!("lb.psp.weights", "weights must be at most 10^6 (got {w:?})");
            }
        }
        Ok(())
    }

    /// The remote state: its period, and the policies and local period it goes with.
    /// `remote_period_ps` is [`super::LbConfig::psp_remote_period_ps`], `local_ps` the stale
    /// local state's period in ps.
    pub fn validate_remote(
        &self,
        policy: LbPolicy,
        state_update_period_ns: f64,
        remote_period_ps: u64,
        local_ps: u64,
    ) -> Result<()> {
        let ns = self.remote_period_ns;
        if ns != 0.0 {
            if !self.remote {
                bail_field!(
                    "lb.psp.remote_period_ns",
                    "applies with lb.psp.remote = true only (0: unset)"
                );
            }
            if !ns.is_finite() || !(1.0..=MAX_LATENCY_NS).contains(&ns) {
                bail_field!(
                    "lb.psp.remote_period_ns",
                    "must be 0 (unset) or a time in ns from 1 to 10^9 (got {ns})"
                );
            }
        }
        if self.remote {
            if !matches!(policy, LbPolicy::Psp | LbPolicy::BandJsq | LbPolicy::Topk) {
                bail_field!(
                    "lb.psp.remote",
                    "applies to lb.policy = \"psp\", \"band_jsq\" or \"topk\" only (got \"{}\")",
                    policy.name()
                );
            }
            if remote_period_ps == 0 {
                bail_field!(
                    "lb.psp.remote",
                    "needs lb.psp.remote_period_ns (or lb.state_update_period_ns) > 0: the spines' advert period"
                );
            }
            if local_ps > 0 && remote_period_ps % local_ps != 0 {
                bail_field!(
                    "lb.psp.remote_period_ns",
                    "must be a multiple of lb.state_update_period_ns ({} ns), got {} ns",
                    state_update_period_ns,
                    remote_period_ps as f64 / 1e3
                );
            }
        }
        Ok(())
    }
}
