//! Helpers shared by the integration tests.
#![allow(dead_code)]

use serde_json::Value;
use weft::report::Summary;
use weft::scenario::{CcKind, LbPolicy, Scenario, TopologyKind, WorkloadKind};
use weft::sim::{simulate, RunOptions, RunOutput};

/// A permutation on the given fabric under `policy`, paced (`host.cc = "none"`) unless the
/// policy learns from feedback (REPS, bitmap, mixed), which runs a fixed window on the
/// reliable transport, so that these tests exercise its NACK and timeout feedback too (they
/// run paced as well: `tests/it/reps.rs`).
pub fn scenario(kind: TopologyKind, k: u32, policy: LbPolicy, message_bytes: u64) -> Scenario {
    let mut s = Scenario::default();
    if policy.needs_feedback() {
        s.host.cc = CcKind::Constant;
    }
    s.topology.kind = kind;
    s.topology.k = k;
    s.lb.policy = policy;
    s.workload.kind = WorkloadKind::Permutation;
    s.workload.message_bytes = message_bytes;
    s.validate().expect("test scenario is valid");
    s
}

/// [`scenario`] on an expander of `racks` ToRs with `hosts_per_rack` hosts and `uplinks`
/// ToR-to-ToR links each.
pub fn expander_scenario(
    (racks, hosts_per_rack, uplinks): (u32, u32, u32),
    policy: LbPolicy,
    message_bytes: u64,
) -> Scenario {
    let mut s = Scenario::default();
    if policy.needs_feedback() {
        s.host.cc = CcKind::Constant;
    }
    s.topology.kind = TopologyKind::Expander;
    s.topology.racks = Some(racks);
    s.topology.hosts_per_rack = Some(hosts_per_rack);
    s.topology.uplinks = Some(uplinks);
    s.lb.policy = policy;
    s.workload.kind = WorkloadKind::Permutation;
    s.workload.message_bytes = message_bytes;
    s.validate().expect("test scenario is valid");
    s
}

pub fn run(s: &Scenario, threads: usize, partitions: u32) -> RunOutput {
    simulate(
        s,
        &RunOptions {
            threads,
            partitions: Some(partitions),
            ..RunOptions::default()
        },
    )
    .expect("run succeeds")
}

/// The `"results"` object of summary.json for a run.
pub fn results(s: &Scenario, threads: usize, partitions: u32) -> Value {
    let o = run(s, threads, partitions);
    Summary::new(&o, serde_json::to_value(s).unwrap()).results
}

/// Switches every granular policy to its other mode: AR, DLB and SGLB per flowlet (50 ns
/// gaps, DLB rebalancing half the time), Valiant per flow.
pub fn flowlet_and_per_flow_modes(s: &mut Scenario) {
    use weft::scenario::{DlbMode, SwitchGranularity, ValiantGranularity};
    s.lb.ar.mode = SwitchGranularity::Flowlet;
    s.lb.ar.flowlet_us = 0.05;
    s.lb.dlb.mode = DlbMode::Flowlet;
    s.lb.dlb.flowlet_us = 0.05;
    s.lb.dlb.rebalance_prob = 0.5;
    s.lb.sglb.mode = SwitchGranularity::Flowlet;
    s.lb.sglb.flowlet_us = 0.05;
    s.lb.valiant.granularity = ValiantGranularity::Flow;
    s.validate().unwrap();
}

/// DLB in assigned mode (flows pinned); Valiant through the last two top-tier switches only.
pub fn assigned_and_subset_modes(s: &mut Scenario) {
    use weft::scenario::DlbMode;
    s.lb.dlb.mode = DlbMode::Assigned;
    let nodes = weft::topology::Fabric::build(s).num_nodes();
    s.lb.valiant.intermediates = vec![nodes - 2, nodes - 1];
    s.validate().unwrap();
}

/// Runs the real binary (`weft run s.toml`) on scenario text `toml` in a fresh folder that
/// also holds `files` (name, contents); returns whether it succeeded, and its stderr.
pub fn weft_run_with(toml: &str, files: &[(&str, &str)]) -> (bool, String) {
    let dir = tempfile::tempdir().unwrap();
    for (name, text) in files {
        std::fs::write(dir.path().join(name), text).unwrap();
    }
    std::fs::write(dir.path().join("s.toml"), toml).unwrap();
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_weft"))
        .args(["run", "s.toml"])
        .current_dir(dir.path())
        .output()
        .unwrap();
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// [`weft_run_with`] without extra files.
pub fn weft_run(toml: &str) -> (bool, String) {
    weft_run_with(toml, &[])
}

/// A small Opera (12 racks of 2 hosts, 4 rotors, 10 Gb/s, ε 20 µs, r 2 µs: superslice
/// 23.7 µs) with NDP-like 12 kB trimming queues, as TOML: `extra_opera` goes into
/// `[topology.opera]`, `host` is the `[host]` body, `workload` the `[workload]` body (and
/// whatever tables follow it).
pub fn small_opera_toml(
    extra_opera: &str,
    host: &str,
    workload: &str,
    host_latency_ns: u32,
) -> String {
    format!(
        r#"seed = 1
[topology]
kind = "opera"
racks = 12
hosts_per_rack = 2
uplinks = 4
link_rate_gbps = 10
link_latency_ns = 500
[topology.tiers.host_tor]
latency_ns = {host_latency_ns}
[topology.opera]
epsilon_ns = 20000
reconfig_ns = 2000
{extra_opera}
[packet]
payload_bytes = 1436
header_bytes = 64
[lb]
policy = "rps"
[host]
{host}
[switch]
trim = true
buffer_bytes = 12000
ecn_threshold_bytes = 12000
[workload]
{workload}
"#
    )
}

/// The `weft` binary run with `args`.
pub fn weft_cmd(args: &[&str]) -> std::process::Output {
    std::process::Command::new(env!("CARGO_BIN_EXE_weft"))
        .args(args)
        .output()
        .expect("run weft")
}
