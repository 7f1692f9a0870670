//! Background flows pinned to a path at a fixed rate (`[[workload.background]]`, the PSP
//! paper's second experiment): switches follow the path whatever their policy, the flow
//! keeps its rate, and results do not depend on threads or partitions.

use crate::common::{results, run};
use weft::scenario::{
    BackgroundEnd, BackgroundFlow, LbPolicy, LinkRateOverride, Scenario, TopologyKind, WorkloadKind,
};

/// Leaf-spine k = 8 (hosts 0-31, leaves 32-39, spines 40-43; leaf ports 4-7 go to spines
/// 40-43). Leaf 32's links to spines 40, 42 and 43 run at 1 Gb/s, its link to spine 41 at
/// 800 Gb/s. One small matrix flow elsewhere (host 8 -> 12) and a 5 µs background flow at
/// 200 Gb/s from host 0 to host 31 along `path`, under `policy`.
fn slow_leaf(policy: LbPolicy, path: Vec<u32>, dir: &std::path::Path) -> Scenario {
    let cm = dir.join("one.cm");
    std::fs::write(
        &cm,
        "Nodes 32\nConnections 1\n8->12 id 1 start 0 size 4096\n",
    )
    .unwrap();
    let mut s = Scenario::default();
    s.topology.kind = TopologyKind::LeafSpine;
    s.topology.k = 8;
    s.topology.link_rates = [4u16, 6, 7]
        .iter()
        .map(|&port| LinkRateOverride {
            rate_gbps: 1.0,
            node: Some(32),
            port: Some(port),
            ..Default::default()
        })
        .collect();
    s.lb.policy = policy;
    s.workload.kind = WorkloadKind::Matrix;
    s.workload.file = Some(cm);
    s.workload.background = vec![BackgroundFlow {
        src: 0,
        dst: 31,
        path,
        rate_gbps: 200.0,
        duration_us: Some(5.0),
        ..Default::default()
    }];
    s.validate().unwrap();
    s
}

/// 5 µs at 200 Gb/s is 29 frames (all queued behind each other on a 1 Gb/s link: ~970 µs) of 4,178 bytes, one every 167.12 ns: on the fast spine the
/// flow finishes about 29 gaps plus a few hops after it starts; through a 1 Gb/s link each
/// frame alone takes 33 µs. JSQ and PSP would choose the idle slow links on their own; the
/// pinned path overrides them.
#[test]
fn switches_follow_the_pinned_path_at_the_flows_rate() {
    let dir = tempfile::tempdir().unwrap();
    for policy in [
        LbPolicy::Jsq,
        LbPolicy::Psp,
        LbPolicy::Rsq,
        LbPolicy::Ofan,
        LbPolicy::Conga,
        LbPolicy::Sglb,
    ] {
        let o = run(&slow_leaf(policy, vec![32, 41, 39], dir.path()), 1, 1);
        assert_eq!(o.flows_incomplete, 0);
        assert_eq!(o.flows_total, 2);
        let fct_ns = o.metrics.fct_ns.max();
        // 28 gaps of 167.12 ns = 4.68 µs, plus the last frame's path and its ACK, which
        // returns by the policy and may queue behind others on a 1 Gb/s downlink to leaf
        // 32 (672 ns per ACK): far below one data frame's 33 µs at 1 Gb/s.
        assert!(
            (4_600..30_000).contains(&fct_ns),
            "{policy:?}: background FCT {fct_ns} ns"
        );
        let slow = run(&slow_leaf(policy, vec![32, 40, 39], dir.path()), 1, 1);
        assert!(
            slow.metrics.fct_ns.max() > 25 * 33_000,
            "{policy:?}: pinned to the slow spine it must crawl"
        );
    }
}

#[test]
fn background_flows_are_deterministic_across_threads_and_partitions() {
    let dir = tempfile::tempdir().unwrap();
    let mut s = slow_leaf(LbPolicy::Psp, vec![32, 41, 39], dir.path());
    s.topology.link_rates.clear();
    s.workload.kind = WorkloadKind::Continuous;
    s.workload.file = None;
    s.workload.message_bytes = 16_384;
    s.workload.duration_us = Some(5.0);
    s.workload.load = Some(0.8);
    s.lb.state_update_period_ns = 1000.0;
    s.validate().unwrap();
    let one = results(&s, 1, 1);
    for (threads, parts) in [(1, 4), (2, 3)] {
        assert_eq!(one, results(&s, threads, parts), "{threads} x {parts}");
    }
}

/// `ends = "switch"`: the last switch of the path absorbs the flow and ACKs it, so `dst`'s
/// last hop never carries it. With leaf 39's port to host 31 at 1 Gb/s the flow delivered to
/// the host crawls (29 frames of 33 µs); ended at leaf 39 it keeps its 200 Gb/s and every
/// frame counts as delivered.
#[test]
fn a_flow_ended_at_its_switch_spares_the_receivers_last_hop() {
    let dir = tempfile::tempdir().unwrap();
    let mut s = slow_leaf(LbPolicy::Psp, vec![32, 41, 39], dir.path());
    s.topology.link_rates = vec![LinkRateOverride {
        rate_gbps: 1.0,
        node: Some(39),
        port: Some(3),
        ..Default::default()
    }];
    s.validate().unwrap();
    let to_host = run(&s, 1, 1);
    assert!(
        to_host.metrics.fct_ns.max() > 25 * 33_000,
        "through the slow last hop"
    );
    s.workload.background[0].ends = BackgroundEnd::Switch;
    s.validate().unwrap();
    let to_switch = run(&s, 1, 1);
    assert_eq!(to_switch.flows_incomplete, 0);
    let c = &to_switch.metrics.counters;
    assert_eq!(
        (c.data_sent, c.data_delivered),
        (30, 30),
        "29 frames and the matrix flow's"
    );
    assert!(to_switch.metrics.fct_ns.max() < 30_000);
    // Deterministic when the absorbing leaf and the source sit in other partitions.
    s.workload.kind = WorkloadKind::Continuous;
    s.workload.file = None;
    s.workload.message_bytes = 16_384;
    s.workload.duration_us = Some(5.0);
    s.workload.load = Some(0.8);
    s.validate().unwrap();
    let one = results(&s, 1, 1);
    assert_eq!(one, results(&s, 2, 4));
}

/// A switch keeps no receiver state: `ends = "switch"` is refused with a reliable transport.
#[test]
fn a_flow_ended_at_a_switch_needs_the_paced_transport() {
    let dir = tempfile::tempdir().unwrap();
    let mut s = slow_leaf(LbPolicy::Psp, vec![32, 41, 39], dir.path());
    s.workload.background[0].ends = BackgroundEnd::Switch;
    s.host.cc = weft::scenario::CcKind::Dctcp;
    let e = s.validate().unwrap_err().to_string();
    assert!(e.contains("workload.background[0].ends"), "{e}");
    assert!(e.contains("host.cc"), "{e}");
}
