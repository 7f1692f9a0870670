//! AI-training workloads: FSDP2/HSDP rings (`kind = "fsdp2"`) and MoE dispatch/combine
//! (`kind = "moe"`) on small fabrics: the ring structure and its dependencies, GPU
//! placement, per-phase results identical across threads and partitions, the NVLink volume,
//! and bad input answered by one line naming the field.

use crate::common::{results, run, weft_run, weft_run_with};
use std::collections::BTreeMap;
use weft::metrics::FlowEventKind;
use weft::packet::{flow_index, flow_src};
use weft::scenario::{CcKind, Fsdp2Mode, GpuPlacement, Scenario, TopologyKind, WorkloadKind};

/// 8 servers of 2 GPUs on a k = 4 fat tree (16 hosts): 2 rings of 8 members; two layers of
/// 98,304 and 49,152 parameters (1 byte, 2 shards per step: 12,288 and 6,144 bytes, 3 and
/// 1.5 → 2 packets per step).
fn fsdp2(mode: Fsdp2Mode, placement: GpuPlacement) -> Scenario {
    let mut s = Scenario::default();
    s.topology.kind = TopologyKind::FatTree;
    s.topology.k = 4;
    s.workload.kind = WorkloadKind::Fsdp2;
    s.workload.gpus_per_server = 2;
    s.workload.layer_params = Some(vec![98_304, 49_152]);
    s.workload.mode = mode;
    s.workload.placement = placement;
    if mode == Fsdp2Mode::Ring {
        s.workload.step_delay_ns = 50.0;
    }
    s.report.trace_hosts = (0..16).collect();
    s.validate().expect("test scenario is valid");
    s
}

#[test]
fn phase_mode_runs_one_step_of_every_ring() {
    let s = fsdp2(Fsdp2Mode::Phase, GpuPlacement::Ordered);
    let out = run(&s, 1, 1);
    assert_eq!((out.flows_total, out.flows_incomplete), (16, 0));
    // 16 GPUs × 3 packets of the first layer's 12,288-byte step.
    assert_eq!(out.metrics.counters.data_sent, 48);
    let r = results(&s, 1, 1);
    assert_eq!(r["phases"][0]["name"], "ring_step");
    assert_eq!(r["phases"][0]["bytes"], 16 * 12_288);
    // NVLink, pro rata for one step of n − 1 = 7 per layer: 16 GPUs × 2(g − 1)/g × 98,304
    // bytes / 7 = 224,694.86.
    assert_eq!(r["nvlink_bytes"], 224_694);
}

/// One ring step of every ring is a permutation (each GPU sends one shard and receives one,
/// all at once), so its baseline is the Ofan paper's appendix-A model, as for
/// `kind = "permutation"`: with 1 MiB steps (256 packets, the farthest pairs 6 hops apart)
/// the 17,057.94 ns the permutation sweeps report, for the run and for its one phase.
#[test]
fn a_ring_step_is_a_permutation_and_gets_the_appendix_a_bound() {
    let mut s = fsdp2(Fsdp2Mode::Phase, GpuPlacement::Ordered);
    // 8,388,608 parameters × 2 shards / 16 GPUs = 1 MiB per step.
    s.workload.layer_params = Some(vec![8_388_608]);
    s.validate().expect("valid");
    let r = results(&s, 1, 1);
    assert_eq!(r["cct_lower_bound_ns"].as_f64(), Some(17_057.94));
    assert_eq!(r["phases"][0]["lower_bound_ns"].as_f64(), Some(17_057.94));
    assert!(r["cct_ns"].as_f64().unwrap() >= 17_057.94);
}

/// Ring mode: every GPU sends 2 layers × 7 steps to GPU + 2 (ordered placement), step s > 0
/// starting exactly 50 ns after step s − 1 of GPU − 2 arrived; one phase per layer with its
/// own chunk.
#[test]
fn ring_mode_chains_every_step_of_every_layer_to_its_predecessor() {
    let s = fsdp2(Fsdp2Mode::Ring, GpuPlacement::Ordered);
    let out = run(&s, 1, 1);
    assert_eq!((out.flows_total, out.flows_incomplete), (16 * 14, 0));
    let mut t = BTreeMap::new();
    for e in &out.metrics.flow_events {
        let started = e.kind == FlowEventKind::Started;
        t.insert((started, flow_src(e.flow), flow_index(e.flow)), e.time_ps);
    }
    for gpu in 0..16u32 {
        let prev = (gpu + 14) % 16;
        assert_eq!(t[&(true, gpu, 0)], 0);
        for step in 1..14 {
            assert_eq!(
                t[&(true, gpu, step)],
                t[&(false, prev, step - 1)] + 50_000,
                "GPU {gpu} step {step}"
            );
        }
    }
    let r = results(&s, 1, 1);
    let phases = r["phases"].as_array().unwrap();
    assert_eq!(phases.len(), 2);
    assert_eq!(phases[0]["name"], "layer_0");
    assert_eq!(phases[0]["bytes"], 16 * 7 * 12_288);
    assert_eq!(phases[1]["bytes"], 16 * 7 * 6_144);
    assert!(phases[1]["start_ns"].as_f64() < phases[0]["end_ns"].as_f64());
}

#[test]
fn max_steps_caps_the_chain_and_one_shard_steps_double_it() {
    let mut s = fsdp2(Fsdp2Mode::Ring, GpuPlacement::Ordered);
    s.workload.max_steps = Some(9);
    let out = run(&s, 1, 1);
    assert_eq!(out.flows_total, 16 * 9);
    assert_eq!(out.phase_names, ["layer_0", "layer_1"]);
    s.workload.max_steps = None;
    s.workload.shards_per_step = 1;
    s.workload.layers = Some(1);
    let out = run(&s, 1, 1);
    // A layer is a ring AllReduce: 2 × 7 steps of 6,144 bytes (2 packets).
    assert_eq!(out.flows_total, 16 * 14);
    assert_eq!(out.metrics.counters.data_sent, 16 * 14 * 2);
}

#[test]
fn random_placement_keeps_servers_whole_and_rings_by_local_rank() {
    let s = fsdp2(Fsdp2Mode::Phase, GpuPlacement::Random);
    let out = run(&s, 1, 1);
    assert_eq!(out.flows_incomplete, 0);
    let mut dst_of = BTreeMap::new();
    let m = weft::model::Model::build(&s).unwrap();
    for h in 0..16 {
        let f = m.workload.flow(h, 0);
        // Same local rank (host parity: slots of 2 ports), another server.
        assert_eq!(f.src % 2, f.dst % 2, "{f:?}");
        assert_ne!(f.src / 2, f.dst / 2, "{f:?}");
        dst_of.insert(f.src, f.dst);
    }
    // The server order is shuffled: not every GPU sends to the next slot.
    assert!(
        dst_of.iter().any(|(&s, &d)| d != (s + 2) % 16),
        "{dst_of:?}"
    );
    // Each ring visits all 8 servers.
    let mut h = 0;
    for _ in 0..8 {
        h = dst_of[&h];
    }
    assert_eq!(h, 0);
}

#[test]
fn fsdp2_phases_do_not_depend_on_threads_or_partitions() {
    for cc in [CcKind::None, CcKind::Dctcp] {
        let mut s = fsdp2(Fsdp2Mode::Ring, GpuPlacement::Random);
        s.host.cc = cc;
        s.validate().unwrap();
        let reference = results(&s, 1, 1);
        assert_eq!(reference["flows"]["incomplete"], 0, "{cc:?}");
        for (threads, parts) in [(2, 4), (1, 5), (2, 6)] {
            assert_eq!(
                results(&s, threads, parts),
                reference,
                "{cc:?} {threads} {parts}"
            );
        }
    }
}

// ---- Bad input: the real binary, one line naming the field. ----

fn fsdp2_toml(fields: &str) -> String {
    format!("seed = 1\n[topology]\nkind = \"fat_tree\"\nk = 4\n[workload]\nkind = \"fsdp2\"\n{fields}\n")
}

fn assert_one_line_naming(toml: &str, field: &str) {
    let (ok, err) = weft_run(toml);
    assert!(!ok, "accepted: {toml}");
    let line = err.trim_end();
    assert!(
        !line.contains('\n') && line.starts_with("error:") && !err.contains("panicked"),
        "{toml}: {err}"
    );
    assert!(line.contains(field), "{toml}: {err}");
}

#[test]
fn a_good_fsdp2_scenario_runs() {
    let (ok, err) = weft_run(&fsdp2_toml(
        "model = \"llama3-8b\"\ngpus = 16\ngpus_per_server = 4\nmode = \"ring\"\nmax_steps = 2",
    ));
    assert!(ok, "{err}");
}

#[test]
fn bad_fsdp2_input_gets_one_line_naming_the_field() {
    for (fields, field) in [
        ("model = \"llama3-13b\"", "workload.model"),
        ("gpus = 16", "workload.model"),
        ("model = \"llama3-8b\"\ngpus = 12", "workload.gpus"),
        ("model = \"llama3-8b\"\ngpus = 32", "workload.gpus"),
        ("model = \"llama3-8b\"\ngpus = 8", "workload.gpus"),
        (
            "model = \"llama3-8b\"\ngpus_per_server = 0",
            "workload.gpus_per_server",
        ),
        (
            "model = \"llama3-8b\"\nlayer_params = [5]",
            "workload.layer_params",
        ),
        ("layer_params = []", "workload.layer_params"),
        ("layer_params = [5, 0]", "workload.layer_params"),
        ("model = \"llama3-8b\"\nlayers = 2", "workload.layers"),
        (
            "model = \"llama3-8b\"\nmode = \"ring\"\nlayers = 33",
            "workload.layers",
        ),
        (
            "model = \"llama3-8b\"\nmode = \"ring\"\nmax_steps = 0",
            "workload.max_steps",
        ),
        (
            "model = \"llama3-8b\"\nshards_per_step = 3",
            "workload.shards_per_step",
        ),
        (
            "model = \"llama3-8b\"\nbytes_per_param = 0",
            "workload.bytes_per_param",
        ),
        ("model = \"llama3-8b\"\nep_size = 8", "workload.ep_size"),
        ("model = \"llama3-8b\"\nmoe.top_k = 2", "workload.moe"),
        ("model = \"llama3-8b\"\nhosts = [0, 1]", "workload.hosts"),
        (
            "model = \"llama3-8b\"\nstep_delay_ns = 5.0",
            "workload.step_delay_ns",
        ),
        ("model = \"llama3-8b\"\nmode = \"bulk\"", "mode"),
    ] {
        assert_one_line_naming(&fsdp2_toml(fields), field);
    }
    // GPU fields with a kind that has no GPUs.
    let toml = fsdp2_toml("gpus = 8").replace("kind = \"fsdp2\"", "kind = \"permutation\"");
    assert_one_line_naming(&toml, "workload.gpus");
    let toml = fsdp2_toml("model = \"llama3-8b\"").replace("kind = \"fsdp2\"", "kind = \"ring\"");
    assert_one_line_naming(&toml, "workload.model");
}

// ---- MoE: dispatch then combine. ----

/// An 8 × 8 token matrix (GPUs of one group; servers of 2 GPUs: {0,1}, {2,3}, {4,5}, {6,7})
/// with zeros on the diagonal, written as a trace file.
const TRACE_8: &str = "# hand-made: 8 GPUs\n\
0,0,3,0,1,0,0,0\n\
0,0,0,2,0,0,0,0\n\
1,0,0,0,0,0,4,0\n\
0,0,0,0,0,0,0,0\n\
0,5,0,0,0,0,0,0\n\
0,0,0,0,0,0,0,1\n\
2,0,0,0,0,0,0,0\n\
0,0,0,0,0,3,0,0\n";

/// 16 GPUs of a k = 4 fat tree in 8 servers of 2, two expert-parallel groups of 8 sharing
/// the trace, 4,096-byte token copies (one packet each), 30 ns of expert compute.
fn moe_from_trace(dir: &std::path::Path) -> Scenario {
    std::fs::write(dir.join("t.csv"), TRACE_8).unwrap();
    let toml = "[topology]\nkind = \"fat_tree\"\nk = 4\n[workload]\nkind = \"moe\"\nfile = \"t.csv\"\ngpus_per_server = 2\nep_size = 8\nstep_delay_ns = 30.0\nmoe.bytes_per_token = 4096\n[report]\ntrace_hosts = [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15]\n";
    weft::scenario::load_scenario_str(toml, "moe.toml", dir, &[]).unwrap()
}

#[test]
fn moe_combine_waits_for_every_dispatch_to_its_gpu() {
    let dir = tempfile::tempdir().unwrap();
    let s = moe_from_trace(dir.path());
    let out = run(&s, 1, 1);
    // 9 non-zero entries per group: 9 dispatch and 9 combine flows, two groups.
    assert_eq!((out.flows_total, out.flows_incomplete), (36, 0));
    assert_eq!(out.phase_names, ["dispatch", "combine"]);
    let m = weft::model::Model::build(&s).unwrap();
    let mut arrived = BTreeMap::new();
    let mut started = BTreeMap::new();
    for e in &out.metrics.flow_events {
        let key = (flow_src(e.flow), flow_index(e.flow));
        match e.kind {
            FlowEventKind::Started => started.insert(key, e.time_ps),
            _ => arrived.insert(key, e.time_ps),
        };
    }
    for gpu in 0..16u32 {
        let flows: Vec<_> = (0..m.workload.flows_of(gpu))
            .map(|i| (i, m.workload.flow(gpu, i)))
            .collect();
        // The last dispatch data into this GPU.
        let last_in = (0..16u32)
            .flat_map(|src| (0..m.workload.flows_of(src)).map(move |i| (src, i)))
            .filter(|&(src, i)| {
                m.workload.phase_of(src, i) == Some(0) && m.workload.flow(src, i).dst == gpu
            })
            .map(|k| arrived[&k])
            .max();
        for (i, f) in flows {
            match m.workload.phase_of(gpu, i) {
                Some(0) => assert_eq!(started[&(gpu, i)], 0, "dispatch starts at once"),
                _ => assert_eq!(
                    started[&(gpu, i)],
                    last_in.expect("a GPU that combines received dispatch data") + 30_000,
                    "GPU {gpu} combine {i} to {}",
                    f.dst
                ),
            }
        }
    }
    let r = results(&s, 1, 1);
    // 22 tokens per group and phase, 2 groups, 4,096 bytes each.
    assert_eq!(r["phases"][0]["bytes"], 2 * 22 * 4096);
    assert_eq!(r["phases"][1]["bytes"], 2 * 22 * 4096);
}

#[test]
fn moe_phases_do_not_depend_on_threads_or_partitions() {
    let dir = tempfile::tempdir().unwrap();
    let mut traced = moe_from_trace(dir.path());
    traced.report.trace_hosts.clear();
    let synthetic = {
        let toml = "[topology]\nkind = \"fat_tree\"\nk = 4\n[workload]\nkind = \"moe\"\ngpus_per_server = 2\nep_size = 8\nmoe.experts = 16\nmoe.top_k = 4\nmoe.tokens_per_gpu = 64\nmoe.bytes_per_token = 2048\nmoe.eplb = true\n";
        weft::scenario::load_scenario_str(toml, "moe.toml", dir.path(), &[]).unwrap()
    };
    for base in [traced, synthetic] {
        for cc in [CcKind::None, CcKind::Dctcp] {
            let mut s = base.clone();
            s.host.cc = cc;
            let reference = results(&s, 1, 1);
            assert_eq!(reference["flows"]["incomplete"], 0, "{cc:?}");
            assert!(reference["phases"][1]["bytes"].as_u64().unwrap() > 0);
            for (threads, parts) in [(2, 4), (1, 5)] {
                assert_eq!(
                    results(&s, threads, parts),
                    reference,
                    "{cc:?} {threads} {parts}"
                );
            }
        }
    }
}

fn moe_toml(fields: &str) -> String {
    format!("seed = 1\n[topology]\nkind = \"fat_tree\"\nk = 4\n[workload]\nkind = \"moe\"\ngpus_per_server = 2\n{fields}\n")
}

#[test]
fn a_good_moe_scenario_runs() {
    let (ok, err) = weft_run(&moe_toml(
        "ep_size = 8\nmoe.experts = 16\nmoe.top_k = 2\nmoe.tokens_per_gpu = 32",
    ));
    assert!(ok, "{err}");
}

#[test]
fn bad_moe_input_gets_one_line_naming_the_field_or_the_trace_line() {
    for (fields, field) in [
        (
            "ep_size = 6\nmoe.tokens_per_gpu = 8\nmoe.experts = 12",
            "workload.ep_size",
        ),
        ("ep_size = 2\nmoe.tokens_per_gpu = 8", "workload.ep_size"),
        (
            "gpus = 8\nep_size = 16\nmoe.tokens_per_gpu = 8",
            "workload.ep_size",
        ),
        ("ep_size = 8", "workload.moe.tokens_per_gpu"),
        (
            "ep_size = 8\nmoe.tokens_per_gpu = 0",
            "workload.moe.tokens_per_gpu",
        ),
        (
            "ep_size = 8\nmoe.tokens_per_gpu = 8\nmoe.top_k = 0",
            "workload.moe.top_k",
        ),
        (
            "ep_size = 8\nmoe.tokens_per_gpu = 8\nmoe.top_k = 200",
            "workload.moe.top_k",
        ),
        (
            "ep_size = 8\nmoe.tokens_per_gpu = 8\nmoe.experts = 12",
            "workload.moe.experts",
        ),
        (
            "ep_size = 8\nmoe.tokens_per_gpu = 8\nmoe.imbalance = 0.5",
            "workload.moe.imbalance",
        ),
        (
            "ep_size = 8\nmoe.tokens_per_gpu = 8\nmoe.redundant_experts = 4",
            "workload.moe.redundant_experts",
        ),
        (
            "ep_size = 8\nmoe.tokens_per_gpu = 8\nmoe.bytes_per_token = 0",
            "workload.moe.bytes_per_token",
        ),
        (
            "ep_size = 8\nmoe.tokens_per_gpu = 8\nmoe.dispatch = \"ring\"",
            "dispatch",
        ),
        (
            "ep_size = 8\nmoe.tokens_per_gpu = 8\nmoe.imbalance_of = \"servers\"",
            "imbalance_of",
        ),
        (
            "ep_size = 8\nmoe.tokens_per_gpu = 8\nmodel = \"llama3-8b\"",
            "workload.model",
        ),
        ("ep_size = 8\nfile = \"missing.csv\"", "workload.file"),
        (
            "ep_size = 8\nfile = \"t.csv\"\nmoe.tokens_per_gpu = 8",
            "workload.moe.tokens_per_gpu",
        ),
        (
            "ep_size = 8\nfile = \"t.csv\"\nmoe.eplb = true",
            "workload.moe.eplb",
        ),
        (
            "ep_size = 8\nfile = \"t.csv\"\nmoe.imbalance_of = \"network\"",
            "workload.moe.imbalance_of",
        ),
    ] {
        assert_one_line_naming(&moe_toml(fields), field);
    }
    // Traces that disagree with the scenario: the file and line are named.
    let bad_rows = TRACE_8.replace("0,0,0,2,0,0,0,0\n", "0,0,0,-2,0,0,0,0\n");
    let short = TRACE_8.replace("0,0,0,2,0,0,0,0\n", "0,0,0,2,0,0,0\n");
    for (trace, what) in [
        (bad_rows.as_str(), "t.csv"),
        (short.as_str(), "t.csv"),
        (TRACE_8, "t.csv"), // 8 GPUs, but ep_size = 16
    ] {
        let ep = if trace == TRACE_8 { 16 } else { 8 };
        let toml = moe_toml(&format!("ep_size = {ep}\nfile = \"t.csv\""));
        let (ok, err) = weft_run_with(&toml, &[("t.csv", trace)]);
        assert!(!ok, "accepted {what}");
        let line = err.trim_end();
        assert!(
            !line.contains('\n') && line.contains(what) && !err.contains("panicked"),
            "{err}"
        );
    }
}

/// A phase's lower bound counts the busiest host's wire time over all its flows in the
/// phase, not only the longest flow: with hierarchical dispatch every GPU sends to 3 other
/// servers, so its dispatch takes about 3 flows' time.
#[test]
fn moe_phase_bounds_count_the_busiest_hosts_bytes() {
    let dir = tempfile::tempdir().unwrap();
    let toml = "[topology]\nkind = \"fat_tree\"\nk = 4\n[workload]\nkind = \"moe\"\ngpus_per_server = 2\nep_size = 8\nmoe.experts = 16\nmoe.top_k = 4\nmoe.tokens_per_gpu = 512\nmoe.bytes_per_token = 4096\n";
    let s = weft::scenario::load_scenario_str(toml, "moe.toml", dir.path(), &[]).unwrap();
    let m = weft::model::Model::build(&s).unwrap();
    let (mut busiest, mut longest) = (0u64, 0u64);
    for h in 0..16 {
        let sent: Vec<u64> = (0..m.workload.flows_of(h))
            .filter(|&i| m.workload.phase_of(h, i) == Some(0))
            .map(|i| m.workload.flow(h, i).bytes)
            .collect();
        busiest = busiest.max(sent.iter().sum());
        longest = longest.max(sent.iter().copied().max().unwrap_or(0));
    }
    assert!(busiest > 2 * longest, "{busiest} vs {longest}");
    let out = run(&s, 1, 1);
    let wire_ps = m.fabric.link(0, 0).serialization_ps(busiest);
    let bound = out.phase_lower_bounds_ps[0];
    assert!(
        bound >= wire_ps,
        "dispatch bound {bound} ps < busiest host's {wire_ps} ps"
    );
    let r = results(&s, 1, 1);
    assert!(r["phases"][0]["cct_ns"].as_f64().unwrap() * 1000.0 >= bound as f64);
}
