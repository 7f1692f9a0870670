//! Helpers shared by the integration tests.
#![allow(dead_code)]

use serde_json::Value;
use weft::report::Summary;
use weft::scenario::{CcKind, LbPolicy, Scenario, TopologyKind, WorkloadKind};
use weft::sim::{simulate, RunOptions, RunOutput};

/// A permutation on the given fabric under `policy`, paced (`host.cc = "none"`) unless the
/// policy learns from feedback (REPS), which runs a fixed window on the reliable transport.
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

/// Switches every granular policy to its other mode: AR and DLB per flowlet (50 ns gaps,
/// DLB rebalancing half the time), Valiant per flow.
pub fn flowlet_and_per_flow_modes(s: &mut Scenario) {
    use weft::scenario::{SwitchGranularity, ValiantGranularity};
    s.lb.ar_mode = SwitchGranularity::Flowlet;
    s.lb.ar_flowlet_us = 0.05;
    s.lb.dlb_mode = SwitchGranularity::Flowlet;
    s.lb.dlb_flowlet_us = 0.05;
    s.lb.dlb_rebalance_prob = 0.5;
    s.lb.valiant_granularity = ValiantGranularity::Flow;
    s.validate().unwrap();
}
