//! Llama-3 FSDP2/HSDP (`workload.kind = "fsdp2"`, the Ofan paper, §6.7): the inter-server
//! rings of hybrid sharding. GPUs shard within a server (NVLink, not simulated) and replicate
//! across servers, so local rank l of every server forms one ring (GPU i → GPU i + g, mod
//! the GPUs), g rings side by side, each of `servers` members handling 1/g of every layer;
//! one ring step carries 1/(g · servers) = 1/gpus of a layer per shard.
//!
//! A step carries `shards_per_step` shards of `bytes_per_param` bytes per parameter: with
//! 2 (default) the backward pass's gradient ReduceScatter shard and weight AllGather shard
//! travel together, n − 1 steps per layer; with 1 a layer is a ring AllReduce of 2(n − 1)
//! one-shard steps. Both move 2(n − 1)/gpus of a layer per member and layer.
//!
//! **Rounding**: step bytes = ⌈P_layer × bytes_per_param × shards_per_step / gpus⌉ with
//! P_layer = nominal parameters / layers for a named model (computed exactly in integers),
//! then packets = ⌈bytes / payload⌉. At 1,024 GPUs, 4 KB payloads, 1 byte per parameter and
//! 2 shards this gives 120, 418 and 1,533 packets for 8B, 70B and 405B (the Ofan paper
//! reports 119, 418, 1,533: no single rounding gives all three; rounding up never drops
//! bytes).
//!
//! `mode = "phase"` runs one step of every ring at once (one phase, "ring_step", with the
//! first layer's chunk); `mode = "ring"` runs `layers` layers back to back, every step
//! waiting for its predecessor's data (`max_steps` caps the steps), one phase per layer.

use super::placement::Placement;
use super::ring::{Ring, Steps};
use crate::scenario::ai::{llama3_model, MAX_PHASES};
use crate::scenario::{FieldError, Fsdp2Mode, Scenario};

/// The FSDP2 rings of a validated scenario on `num_hosts` host ports.
pub(crate) fn build(s: &Scenario, num_hosts: u32) -> Result<Ring, FieldError> {
    let w = &s.workload;
    let place = Placement::build(s, num_hosts)?;
    let gpus = place.gpus();
    let g = place.gpus_per_server;
    let members = place.servers();
    let layer_step_bytes = layer_step_bytes(s, gpus);
    let max = super::max_flow_bytes(s);
    if let Some(&big) = layer_step_bytes.iter().find(|&&b| b > max) {
        return Err(FieldError::new(
            "workload.gpus",
            format!(
                "a ring step of {big} bytes is more than 2^32 - 1 packets of packet.payload_bytes"
            ),
        ));
    }
    let steps_per_layer = match w.shards_per_step {
        2 => members - 1,
        _ => 2 * (members - 1),
    };
    let delay_ps = (w.step_delay_ns * crate::time::PS_PER_NS as f64).round() as u64;
    let shape = match w.mode {
        Fsdp2Mode::Phase => Steps {
            steps: 1,
            steps_per_phase: 1,
            phase_chunk_bytes: vec![layer_step_bytes[0]],
            delay_ps,
            phases: vec!["ring_step".to_string()],
        },
        Fsdp2Mode::Ring => {
            let layers = w.layers.unwrap_or(layer_step_bytes.len() as u32);
            let all_steps = layers as u64 * steps_per_layer as u64;
            let steps = w.max_steps.map_or(all_steps, |m| all_steps.min(m as u64));
            if steps > u32::MAX as u64 {
                return Err(FieldError::new(
                    "workload.max_steps",
                    format!("{steps} steps per GPU are more than 2^32 - 1: cap them"),
                ));
            }
            let steps = steps as u32;
            let phases_run = steps.div_ceil(steps_per_layer);
            assert!(phases_run <= MAX_PHASES, "validated: at most 255 layers");
            Steps {
                steps,
                steps_per_phase: steps_per_layer,
                phase_chunk_bytes: layer_step_bytes[..phases_run as usize].to_vec(),
                delay_ps,
                phases: (0..phases_run).map(|l| format!("layer_{l}")).collect(),
            }
        }
    };
    let rings: Vec<Vec<u32>> = (0..g)
        .map(|local| (0..members).map(|sv| place.host(sv * g + local)).collect())
        .collect();
    let nvlink_bytes = nvlink_bytes(s, gpus, &shape, steps_per_layer);
    let mut ring = Ring::of_rings(&rings, num_hosts, shape);
    ring.nvlink_bytes = nvlink_bytes;
    ring.label = "fsdp2";
    Ok(ring)
}

/// Bytes of one ring step, per layer of the model.
fn layer_step_bytes(s: &Scenario, gpus: u32) -> Vec<u64> {
    let w = &s.workload;
    let per_param = w.bytes_per_param as u128 * w.shards_per_step as u128;
    let step = |params_num: u128, params_den: u128| {
        (params_num * per_param).div_ceil(params_den * gpus as u128) as u64
    };
    match (&w.model, &w.layer_params) {
        (Some(name), _) => {
            let (layers, params) = llama3_model(name).expect("validated: a known model");
            vec![step(params as u128, layers as u128); layers as usize]
        }
        (None, Some(list)) => list.iter().map(|&p| step(p as u128, 1)).collect(),
        (None, None) => panic!("validated: fsdp2 has a model or layer_params"),
    }
}

/// NVLink bytes accompanying the simulated steps, pro rata: per layer every GPU sends
/// 2(g − 1)/g of the layer's bytes inside its server (the intra-server gradient
/// ReduceScatter and weight AllGather of HSDP's shard dimension); a step is 1/steps_per_layer
/// of a layer. Not simulated, reported in `results.nvlink_bytes`.
fn nvlink_bytes(s: &Scenario, gpus: u32, shape: &Steps, steps_per_layer: u32) -> u64 {
    let g = s.workload.gpus_per_server as u128;
    let shards = s.workload.shards_per_step as u128;
    let mut total: u128 = 0;
    for (phase, &chunk) in shape.phase_chunk_bytes.iter().enumerate() {
        let first = phase as u32 * shape.steps_per_phase;
        let steps = shape.steps_per_phase.min(shape.steps - first) as u128;
        // chunk × gpus / shards = one layer's bytes at bytes_per_param.
        let layer_bytes = chunk as u128 * gpus as u128 / shards;
        total += gpus as u128 * 2 * (g - 1) * layer_bytes * steps / (g * steps_per_layer as u128);
    }
    total.min(u64::MAX as u128) as u64
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scenario::{load_scenario_str, WorkloadKind};
    use crate::workload::generator::Generator;

    fn scenario(model: &str, gpus: u32) -> Scenario {
        let toml = format!(
            "[topology]\nkind = \"fat_tree\"\nk = 16\n[workload]\nkind = \"fsdp2\"\nmodel = \"{model}\"\ngpus = {gpus}\n"
        );
        let s = load_scenario_str(&toml, "t.toml", std::path::Path::new("."), &[]).unwrap();
        assert_eq!(s.workload.kind, WorkloadKind::Fsdp2);
        s
    }

    #[test]
    fn packet_counts_at_1024_gpus_are_the_ofan_papers_rounded_up() {
        // Ofan paper: 119, 418, 1533 packets of 4 KB per flow per layer (§6.7); rounding up
        // gives 120 (119.2), 418 (417.2), 1533 (1532.7).
        for (model, packets) in [
            ("llama3-8b", 120),
            ("llama3-70b", 418),
            ("llama3-405b", 1533),
        ] {
            let s = scenario(model, 1024);
            let ring = build(&s, 1024).unwrap();
            let bytes = ring.flow(0, 0).bytes;
            assert_eq!(bytes.div_ceil(4096), packets, "{model}: {bytes} bytes");
            assert_eq!((ring.members, ring.steps), (128, 1));
        }
    }

    #[test]
    fn rings_join_the_same_local_rank_of_consecutive_servers() {
        let s = scenario("llama3-8b", 64);
        let ring = build(&s, 1024).unwrap();
        // 8 servers of 8: GPU i → i + 8 mod 64; hosts past the job have no flows.
        assert_eq!(ring.flow(3, 0).dst, 11);
        assert_eq!(ring.flow(59, 0).dst, 3);
        assert_eq!((ring.flows_of(63), ring.flows_of(64)), (1, 0));
    }
}
