//! Every policy, on fat tree and leaf-spine, under each workload: packets are conserved, every
//! flow completes, and no permutation finishes faster than its lower bound.

use crate::common;
use crate::common::{run, scenario};
use weft::scenario::{BufferBytes, LbPolicy, TopologyKind, WorkloadKind};

/// Every flow completed and nothing was lost. Policies that learn from feedback (REPS,
/// bitmap, mixed: run here with a fixed window, see `common::scenario`) may resend a packet the SACK
/// reordering rule took for lost; such a spurious copy can still be in flight when the last
/// flow completes. Every other policy runs paced, where nothing is ever resent.
fn check_complete(o: &weft::sim::RunOutput, what: &str) {
    let c = &o.metrics.counters;
    assert_eq!(o.flows_incomplete, 0, "{what}: incomplete flows");
    assert_eq!(c.flows_completed, o.flows_total, "{what}");
    assert_eq!(
        c.data_sent,
        c.data_delivered + o.data_in_flight,
        "{what}: data lost"
    );
    assert_eq!(
        c.acks_sent,
        c.acks_delivered + o.acks_in_flight,
        "{what}: acks lost"
    );
    assert_eq!(
        c.data_delivered, c.acks_sent,
        "{what}: one ACK per data packet"
    );
    assert_eq!(c.data_dropped + c.acks_dropped, 0, "{what}");
    assert_eq!(c.retransmissions, c.reorder_losses, "{what}: only spurious");
    assert!(
        o.data_in_flight + o.acks_in_flight <= c.retransmissions,
        "{what}: only resent copies left in flight"
    );
    assert_eq!(
        o.metrics.latency_ns.len(),
        c.data_delivered,
        "{what}: one latency sample per packet"
    );
    assert_eq!(
        o.metrics.fct_ns.len(),
        o.flows_total,
        "{what}: one FCT per flow"
    );
}

#[test]
fn every_policy_conserves_packets_and_completes_permutations() {
    for policy in LbPolicy::ALL {
        for (kind, k) in [
            (TopologyKind::FatTree, 4),
            (TopologyKind::FatTree, 6),
            (TopologyKind::LeafSpine, 6),
        ] {
            let s = scenario(kind, k, policy, 100_000);
            let o = run(&s, 1, 1);
            let what = format!("{policy:?} {kind:?} k={k}");
            check_complete(&o, &what);
            let packets_per_flow = 100_000u64.div_ceil(4096);
            let c = &o.metrics.counters;
            assert_eq!(
                c.data_sent - c.retransmissions,
                o.flows_total * packets_per_flow,
                "{what}"
            );
            let cct = o.cct_ps().expect("complete");
            assert!(
                cct >= o.cct_lower_bound_ps,
                "{what}: CCT {cct} below the bound {}",
                o.cct_lower_bound_ps
            );
        }
    }
}

#[test]
fn every_policy_completes_all_to_all_and_matrix() {
    let dir = tempfile::tempdir().unwrap();
    let cm = dir.path().join("t.cm");
    std::fs::write(
        &cm,
        "Nodes 16\nConnections 4\n0->15 id 1 start 0 size 50000\n3->2 id 2 start 1000000 size 9000\n15->0 id 3 start 0 size 4096\n7->8 id 4 start 250000 size 1\n",
    )
    .unwrap();
    for policy in LbPolicy::ALL {
        let mut s = scenario(TopologyKind::FatTree, 4, policy, 20_000);
        s.workload.kind = WorkloadKind::AllToAll;
        let o = run(&s, 1, 1);
        check_complete(&o, &format!("{policy:?} all_to_all"));
        assert_eq!(o.flows_total, 16 * 15);
        let cct = o.cct_ps().unwrap();
        assert!(
            cct >= o.cct_lower_bound_ps,
            "{policy:?} all_to_all below its bound"
        );

        s.workload.kind = WorkloadKind::Matrix;
        s.workload.file = Some(cm.clone());
        let o = run(&s, 2, 2);
        check_complete(&o, &format!("{policy:?} matrix"));
        assert_eq!(o.flows_total, 4);
        // The 1-byte flow is one packet; the flow that starts at 1 us cannot end before it.
        let c = &o.metrics.counters;
        assert_eq!(c.data_sent - c.retransmissions, 13 + 3 + 1 + 1);
        assert!(o.metrics.counters.last_ack_ps > 1_000_000);
    }
}

#[test]
fn finite_buffers_drop_and_still_conserve() {
    // Simple RR with a 5-packet buffer on a full-rate permutation overflows downlinks.
    let mut s = scenario(TopologyKind::FatTree, 6, LbPolicy::SimpleRr, 400_000);
    s.switch.buffer_bytes = BufferBytes::Bytes(5 * 4158);
    let o = run(&s, 2, 3);
    let c = &o.metrics.counters;
    assert!(c.data_dropped > 0, "expected drops");
    assert_eq!(
        c.data_sent,
        c.data_delivered + c.data_dropped + o.data_in_flight
    );
    assert!(
        o.flows_incomplete > 0,
        "no loss recovery without CC: dropped flows cannot complete"
    );
    assert!(o.cct_ps().is_none());
    let max_q = o.stages.iter().map(|s| s.max_bytes).max().unwrap();
    assert!(max_q <= 5 * 4158, "a queue exceeded its buffer: {max_q}");
}

#[test]
fn lower_load_paces_hosts() {
    // At load <= 0.5 the ACKs fit in the pacing gaps, so halving the load again adds exactly
    // the extra pacing time: m packets x (1/0.25 - 1/0.5) x T'd.
    let mut s = scenario(TopologyKind::FatTree, 4, LbPolicy::Ofan, 1 << 20);
    s.host.load = 0.5;
    let half = run(&s, 1, 1).cct_ps().unwrap() as f64;
    s.host.load = 0.25;
    let quarter = run(&s, 1, 1).cct_ps().unwrap() as f64;
    let expected = 256.0 * 2.0 * 41_780.0;
    let ratio = (quarter - half) / expected;
    assert!((0.98..1.02).contains(&ratio), "pacing time off: {ratio}");
}

#[test]
fn no_permutation_beats_its_lower_bound_at_any_message_size() {
    // Around the model's regime changes: one packet, a short last packet, m < i1 = 78 on a
    // k = 4 fat tree (6 hops), m = i1, m < 2·i1, and beyond.
    let sizes = [
        1u64,
        4096,
        4097,
        3 * 4096 + 1,
        64 * 4096,
        77 * 4096,
        78 * 4096,
        79 * 4096 + 5,
        160 * 4096,
    ];
    for policy in LbPolicy::ALL {
        for (kind, k) in [(TopologyKind::FatTree, 4), (TopologyKind::LeafSpine, 4)] {
            for &bytes in &sizes {
                let s = scenario(kind, k, policy, bytes);
                let o = run(&s, 1, 1);
                let cct = o.cct_ps().expect("complete");
                assert!(
                    cct >= o.cct_lower_bound_ps,
                    "{policy:?} {kind:?} {bytes} B: CCT {cct} < bound {}",
                    o.cct_lower_bound_ps
                );
            }
        }
    }
}

#[test]
fn latency_and_fct_histograms_hold_physical_values() {
    // k = 4 fat tree, 800 Gb/s, 500 ns links: the shortest path (2 hops) takes at least
    // 2 x (41.58 ns serialization + 500 ns); the longest flow ends at the CCT.
    for policy in [LbPolicy::Ofan, LbPolicy::Rps] {
        for (threads, parts) in [(1, 1), (2, 8)] {
            let s = scenario(TopologyKind::FatTree, 4, policy, 300_000);
            let o = run(&s, threads, parts);
            let lat = &o.metrics.latency_ns;
            assert!(
                lat.min() >= 1_083,
                "{policy:?}: min latency {} ns is below physics",
                lat.min()
            );
            assert!(lat.value_at_quantile(0.5) >= 1_083 && lat.max() >= lat.value_at_quantile(0.5));
            let cct_ns = o.cct_ps().unwrap() as f64 / 1000.0;
            let fct_max = o.metrics.fct_ns.max() as f64;
            assert!(
                (fct_max - cct_ns).abs() <= cct_ns * 0.002,
                "{policy:?}: max FCT {fct_max} vs CCT {cct_ns}"
            );
            assert!((lat.max() as f64) < cct_ns);
        }
    }
}

#[test]
fn a_line_rate_train_on_an_idle_path_never_queues() {
    // One 10-packet flow across pods: each packet leaves a port at the instant the next one
    // arrives, so no port ever holds more than one packet, and a one-packet buffer drops
    // nothing (departures are processed before simultaneous arrivals).
    let dir = tempfile::tempdir().unwrap();
    let cm = dir.path().join("one.cm");
    std::fs::write(
        &cm,
        "Nodes 16\nConnections 1\n0->15 id 1 start 0 size 40960\n",
    )
    .unwrap();
    let mut s = scenario(TopologyKind::FatTree, 4, LbPolicy::Ecmp, 1);
    s.workload.kind = WorkloadKind::Matrix;
    s.workload.file = Some(cm);
    s.switch.buffer_bytes = BufferBytes::Bytes(4158);
    let o = run(&s, 1, 1);
    check_complete(&o, "one flow");
    for (name, st) in o.stage_names.iter().zip(&o.stages) {
        assert!(
            st.max_pkts <= 1,
            "{name}: {} packets queued on an idle path",
            st.max_pkts
        );
    }
}

/// The non-default granularities (AR and DLB per flowlet, with short gaps so that flowlets
/// do end; Valiant per flow) also complete and conserve on both topologies.
#[test]
fn flowlet_and_per_flow_modes_complete_and_conserve() {
    for (kind, k) in [(TopologyKind::FatTree, 4), (TopologyKind::LeafSpine, 6)] {
        for policy in [LbPolicy::Ar, LbPolicy::Dlb, LbPolicy::Valiant] {
            let mut s = scenario(kind, k, policy, 100_000);
            common::flowlet_and_per_flow_modes(&mut s);
            let o = run(&s, 1, 1);
            check_complete(&o, &format!("{policy:?} {kind:?} k={k} flowlet/flow"));
        }
    }
}

/// Valiant (VLB) end to end: every data packet crosses the aggregation →
/// core stage (ACKs take minimal routes), so that stage carries at least all data bytes;
/// under ECMP the intra-pod flows of the same permutation skip it.
#[test]
fn valiant_sends_all_data_through_the_cores() {
    let data_bytes = |o: &weft::sim::RunOutput| {
        o.stages[0].bytes_sent - o.metrics.counters.acks_sent * 64 // host_edge minus ACKs
    };
    let s = scenario(TopologyKind::FatTree, 4, LbPolicy::Valiant, 100_000);
    let o = run(&s, 1, 1);
    check_complete(&o, "valiant");
    assert!(
        o.stages[2].bytes_sent >= data_bytes(&o),
        "valiant: data skipped a core"
    );
    let s = scenario(TopologyKind::FatTree, 4, LbPolicy::Ecmp, 100_000);
    let o = run(&s, 1, 1);
    assert!(
        o.stages[2].bytes_sent < data_bytes(&o),
        "guard: this permutation has intra-pod flows"
    );
}

/// A leaf-spine of explicit counts, more spines than hosts per leaf (leaves 5, spines 4,
/// 3 hosts each): every policy completes a permutation and conserves packets.
#[test]
fn every_policy_completes_on_a_leaf_spine_of_explicit_counts() {
    for policy in LbPolicy::ALL {
        let mut s = scenario(TopologyKind::LeafSpine, 4, policy, 50_000);
        (
            s.topology.leaves,
            s.topology.spines,
            s.topology.hosts_per_leaf,
        ) = (Some(5), Some(4), Some(3));
        s.validate().unwrap();
        let o = run(&s, 1, 1);
        assert_eq!(o.flows_total, 15, "{policy:?}");
        check_complete(&o, &format!("{policy:?} leaf-spine 5x4x3"));
    }
}
