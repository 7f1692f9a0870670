//! Checks of the AI-training workloads' fields (`kind = "fsdp2"` and `"moe"`): what can be
//! checked without the fabric. The GPU count against the fabric's host ports, and a trace's
//! contents, are checked when the workload is built (`workload/placement.rs`,
//! `workload/moe.rs`).

use super::validate::{bail_field, FieldError, Result};
use super::{Fsdp2Mode, GpuPlacement, MoeConfig, Scenario, WorkloadKind};

/// The Llama-3 models ("The Llama 3 Herd of Models", Table 3): name, layers, nominal parameters
/// (the figure in the name, which reproduces the Ofan paper's packet counts; the exact totals are
/// 8.03 B, 70.55 B and 405.85 B).
pub(crate) const LLAMA3_MODELS: [(&str, u32, u64); 3] = [
    ("llama3-8b", 32, 8_000_000_000),
    ("llama3-70b", 80, 70_000_000_000),
    ("llama3-405b", 126, 405_000_000_000),
];

/// The most phases a workload can report (phase indices are a byte).
pub(crate) const MAX_PHASES: u32 = 255;

/// Layers and nominal parameters of a known model name.
pub(crate) fn llama3_model(name: &str) -> Option<(u32, u64)> {
    LLAMA3_MODELS
        .iter()
        .find(|m| m.0 == name)
        .map(|&(_, layers, params)| (layers, params))
}

impl Scenario {
    /// The AI workloads' fields: used only by their kinds, and sensible there.
    pub(super) fn validate_ai(&self) -> Result<()> {
        let w = &self.workload;
        match w.kind {
            WorkloadKind::Fsdp2 => {
                self.validate_gpus()?;
                self.validate_fsdp2()?;
                self.refuse_moe_fields("fsdp2")
            }
            WorkloadKind::Moe => {
                self.validate_gpus()?;
                self.validate_moe()?;
                self.refuse_fsdp2_fields("moe")
            }
            _ => {
                let set = [
                    ("workload.gpus", w.gpus.is_some()),
                    ("workload.gpus_per_server", w.gpus_per_server != 8),
                    ("workload.placement", w.placement != GpuPlacement::Ordered),
                ];
                if let Some((field, _)) = set.iter().find(|(_, on)| *on) {
                    bail_field!(*field, "only used with kind = \"fsdp2\" or \"moe\"");
                }
                self.refuse_fsdp2_fields(
                    "permutation, all_to_all, matrix, continuous, ring and pairwise",
                )?;
                self.refuse_moe_fields(
                    "permutation, all_to_all, matrix, continuous, ring and pairwise",
                )
            }
        }
    }

    fn validate_gpus(&self) -> Result<()> {
        let w = &self.workload;
        let g = w.gpus_per_server;
        if g == 0 {
            bail_field!("workload.gpus_per_server", "must be at least 1");
        }
        if let Some(n) = w.gpus {
            if n % g != 0 {
                bail_field!(
                    "workload.gpus",
                    "{n} GPUs are not a whole number of servers of {g} (workload.gpus_per_server)"
                );
            }
            if n / g < 2 {
                bail_field!(
                    "workload.gpus",
                    "the job needs at least two servers of {g} GPUs (got {n} GPUs)"
                );
            }
        }
        if w.hosts.is_some() {
            bail_field!(
                "workload.hosts",
                "not used with fsdp2 and moe: GPUs are placed by workload.gpus, gpus_per_server and placement"
            );
        }
        if w.collective != super::Collective::AllReduce {
            bail_field!("workload.collective", "not used with fsdp2 and moe");
        }
        if w.inter_pod {
            bail_field!(
                "workload.inter_pod",
                "only used with kind = \"permutation\""
            );
        }
        Ok(())
    }

    fn validate_fsdp2(&self) -> Result<()> {
        let w = &self.workload;
        let model_layers = match (&w.model, &w.layer_params) {
            (Some(_), Some(_)) => bail_field!(
                "workload.layer_params",
                "give either workload.model or workload.layer_params, not both"
            ),
            (None, None) => bail_field!(
                "workload.model",
                "required with kind = \"fsdp2\" (or give workload.layer_params)"
            ),
            (Some(name), None) => match llama3_model(name) {
                Some((layers, _)) => layers,
                None => {
                    let known: Vec<&str> = LLAMA3_MODELS.iter().map(|m| m.0).collect();
                    bail_field!(
                        "workload.model",
                        "unknown model \"{name}\" (known: {})",
                        known.join(", ")
                    )
                }
            },
            (None, Some(list)) => {
                if list.is_empty() || list.len() > MAX_PHASES as usize {
                    bail_field!(
                        "workload.layer_params",
                        "must list 1 to {MAX_PHASES} layers (got {})",
                        list.len()
                    );
                }
                if let Some(i) = list.iter().position(|&p| p == 0) {
                    bail_field!("workload.layer_params", "layer {i} has no parameters");
                }
                list.len() as u32
            }
        };
        if w.file.is_some() {
            bail_field!("workload.file", "not used with kind = \"fsdp2\"");
        }
        if !(1..=8).contains(&w.bytes_per_param) {
            bail_field!(
                "workload.bytes_per_param",
                "must be from 1 to 8 (got {})",
                w.bytes_per_param
            );
        }
        if !(1..=2).contains(&w.shards_per_step) {
            bail_field!(
                "workload.shards_per_step",
                "must be 1 (AllReduce steps) or 2 (ReduceScatter and AllGather shards together; got {})",
                w.shards_per_step
            );
        }
        if w.mode == Fsdp2Mode::Phase {
            if w.layers.is_some() {
                bail_field!("workload.layers", "only used with mode = \"ring\"");
            }
            if w.max_steps.is_some() {
                bail_field!("workload.max_steps", "only used with mode = \"ring\"");
            }
            if w.step_delay_ns != 0.0 {
                bail_field!(
                    "workload.step_delay_ns",
                    "only used with mode = \"ring\" (phase mode runs one step)"
                );
            }
        }
        if let Some(l) = w.layers {
            if l == 0 || l > model_layers {
                bail_field!(
                    "workload.layers",
                    "must be from 1 to the model's {model_layers} layers (got {l})"
                );
            }
        }
        if w.max_steps == Some(0) {
            bail_field!("workload.max_steps", "must be at least 1");
        }
        Ok(())
    }

    fn validate_moe(&self) -> Result<()> {
        let w = &self.workload;
        let m = &w.moe;
        let g = w.gpus_per_server;
        if let Some(ep) = w.ep_size {
            if ep % g != 0 || ep / g < 2 {
                bail_field!(
                    "workload.ep_size",
                    "must be a multiple of workload.gpus_per_server ({g}) spanning at least two servers (got {ep})"
                );
            }
            if let Some(n) = w.gpus {
                if n % ep != 0 {
                    bail_field!(
                        "workload.ep_size",
                        "{ep} does not divide the {n} GPUs (workload.gpus)"
                    );
                }
            }
        }
        match (&w.file, m.tokens_per_gpu) {
            (Some(_), Some(_)) => bail_field!(
                "workload.moe.tokens_per_gpu",
                "not used with a trace file (workload.file): the trace gives the tokens"
            ),
            (None, None) => bail_field!(
                "workload.moe.tokens_per_gpu",
                "required without a trace file (workload.file)"
            ),
            (None, Some(0)) => bail_field!("workload.moe.tokens_per_gpu", "must be at least 1"),
            _ => {}
        }
        if w.file.is_some() {
            if let Some(field) = generator_field_set(m) {
                bail_field!(
                    &format!("workload.moe.{field}"),
                    "not used with a trace file (workload.file): the trace gives the routing"
                );
            }
        }
        if m.top_k == 0 || m.top_k > m.experts {
            bail_field!(
                "workload.moe.top_k",
                "must be from 1 to workload.moe.experts ({}; got {})",
                m.experts,
                m.top_k
            );
        }
        if let Some(ep) = w.ep_size {
            if m.experts % ep != 0 {
                bail_field!(
                    "workload.moe.experts",
                    "{} experts do not spread evenly over ep_size = {ep} GPUs",
                    m.experts
                );
            }
        }
        if !(m.imbalance >= 1.0 && m.imbalance <= 100.0) {
            bail_field!(
                "workload.moe.imbalance",
                "must be in [1, 100] (busiest GPU over the mean; got {})",
                m.imbalance
            );
        }
        if m.redundant_experts.is_some() && !m.eplb {
            bail_field!(
                "workload.moe.redundant_experts",
                "only used with eplb = true"
            );
        }
        if m.bytes_per_token == 0 {
            bail_field!("workload.moe.bytes_per_token", "must be at least 1");
        }
        Ok(())
    }

    fn refuse_fsdp2_fields(&self, kinds: &str) -> Result<()> {
        let w = &self.workload;
        let set = [
            ("workload.model", w.model.is_some()),
            ("workload.layer_params", w.layer_params.is_some()),
            ("workload.bytes_per_param", w.bytes_per_param != 1),
            ("workload.shards_per_step", w.shards_per_step != 2),
            ("workload.mode", w.mode != Fsdp2Mode::Phase),
            ("workload.layers", w.layers.is_some()),
            ("workload.max_steps", w.max_steps.is_some()),
        ];
        match set.iter().find(|(_, on)| *on) {
            Some((field, _)) => {
                bail_field!(*field, "only used with kind = \"fsdp2\" (not {kinds})")
            }
            None => Ok(()),
        }
    }

    fn refuse_moe_fields(&self, kinds: &str) -> Result<()> {
        let w = &self.workload;
        if w.ep_size.is_some() {
            bail_field!(
                "workload.ep_size",
                "only used with kind = \"moe\" (not {kinds})"
            );
        }
        if w.moe != MoeConfig::default() {
            bail_field!(
                "workload.moe",
                "only used with kind = \"moe\" (not {kinds})"
            );
        }
        Ok(())
    }
}

/// The first `[workload.moe]` field set away from its default that only the synthetic
/// generator reads (a trace file replaces it; a silent default would hide the mistake).
fn generator_field_set(m: &MoeConfig) -> Option<&'static str> {
    let d = MoeConfig::default();
    [
        ("experts", m.experts != d.experts),
        ("top_k", m.top_k != d.top_k),
        ("imbalance", m.imbalance != d.imbalance),
        ("imbalance_of", m.imbalance_of != d.imbalance_of),
        ("eplb", m.eplb != d.eplb),
        ("redundant_experts", m.redundant_experts.is_some()),
        ("dispatch", m.dispatch != d.dispatch),
    ]
    .into_iter()
    .find_map(|(field, set)| set.then_some(field))
}
