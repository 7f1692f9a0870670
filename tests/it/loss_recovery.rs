//! Loss recovery under forced drops and trims: every flow completes, every payload byte is
//! delivered exactly once (the run itself checks packet and byte conservation and fails
//! otherwise), nothing hangs, and results do not depend on threads or partitions.

use crate::common::{results, run, scenario};
use weft::scenario::{BufferBytes, CcKind, LbPolicy, Scenario, TopologyKind};

/// A k = 4 permutation of 128 KiB flows with a fixed window, losing `fraction` of the
/// packets at `switches` (empty: everywhere).
fn lossy(policy: LbPolicy, fraction: f64, switches: Vec<u32>, trim: bool) -> Scenario {
    let mut s = scenario(TopologyKind::FatTree, 4, policy, 128 * 1024);
    s.host.cc = CcKind::Constant;
    s.host.window_bdp = 1.0;
    s.switch.loss_fraction = fraction;
    s.switch.loss_switches = switches;
    if trim {
        s.switch.trim = true;
        s.switch.buffer_bytes = BufferBytes::Bytes(200_000);
    }
    s.validate().expect("valid");
    s
}

fn assert_recovered(s: &Scenario, what: &str) -> weft::sim::RunOutput {
    let o = run(s, 1, 1);
    let c = &o.metrics.counters;
    assert_eq!(o.flows_incomplete, 0, "{what}: flows left incomplete");
    assert_eq!((o.data_in_flight, o.acks_in_flight), (0, 0), "{what}");
    let bytes: u64 = 16 * 128 * 1024;
    assert_eq!(c.payload_bytes_delivered, bytes, "{what}: each byte once");
    assert_eq!(
        c.data_delivered,
        c.data_sent - c.data_dropped - c.headers_delivered,
        "{what}"
    );
    o
}

#[test]
fn dropped_data_and_acks_are_recovered_everywhere() {
    for policy in [LbPolicy::Ecmp, LbPolicy::Rps, LbPolicy::Ofan] {
        let o = assert_recovered(&lossy(policy, 0.02, vec![], false), &format!("{policy:?}"));
        let c = &o.metrics.counters;
        assert!(
            c.data_dropped > 0 && c.acks_dropped > 0,
            "{policy:?}: losses injected"
        );
        assert!(
            c.retransmissions >= c.data_dropped,
            "{policy:?}: every lost packet resent"
        );
        assert!(c.timeouts + c.reorder_losses > 0);
    }
}

#[test]
fn losses_at_one_switch_only_hit_packets_through_it() {
    // Node 16 is the first edge switch of a k = 4 fat tree (16 hosts are nodes 0..16).
    let o = assert_recovered(&lossy(LbPolicy::Rps, 0.1, vec![16], false), "one switch");
    let drops: u64 = o.stages.iter().map(|s| s.drops).sum();
    assert!(drops > 0);
    // Its packets arrive from hosts 0, 1 (host_edge) and from aggregation (agg_edge); the
    // drops are counted at the ports they would have left by: edge_agg and edge_host.
    let names = o.stage_names;
    for (name, st) in names.iter().zip(&o.stages) {
        if !["edge_agg", "edge_host"].contains(name) {
            assert_eq!(st.drops, 0, "{name}: no injected loss outside switch 16");
        }
    }
}

#[test]
fn trimmed_packets_are_nacked_and_resent() {
    let o = assert_recovered(&lossy(LbPolicy::Rps, 0.05, vec![], true), "trims");
    let c = &o.metrics.counters;
    assert!(c.trims > 0 && c.headers_delivered > 0 && c.nacks_sent > 0);
    assert!(c.retransmissions >= c.nacks_sent);
    let trims: u64 = o.stages.iter().map(|s| s.trims).sum();
    assert_eq!(trims, c.trims, "per-stage trims add up");
}

#[test]
fn a_small_trimming_buffer_recovers_incast_overflow_without_timeouts() {
    let mut s = lossy(LbPolicy::Ofan, 0.0, vec![], true);
    // Two data packets per port.
    s.switch.buffer_bytes = BufferBytes::Bytes(10_000);
    s.switch.ecn_threshold_bytes = 4_000;
    s.host.window_bdp = 4.0;
    s.workload.kind = weft::scenario::WorkloadKind::AllToAll;
    s.workload.message_bytes = 32 * 1024;
    s.validate().unwrap();
    let o = run(&s, 1, 1);
    let c = &o.metrics.counters;
    assert_eq!(o.flows_incomplete, 0);
    assert!(
        c.trims > 100,
        "all-to-all into 10 KB buffers trims ({})",
        c.trims
    );
    assert_eq!(
        (c.timeouts, c.reorder_losses),
        (0, 0),
        "NACKs recover every trim"
    );
    assert_eq!(c.retransmissions, c.trims);
    // The data FIFO never exceeds its 10 KB; headers and ACKs (64 B) come on top.
    assert!(o
        .stages
        .iter()
        .all(|st| st.max_bytes <= 10_000 + 64 * st.max_pkts));
    assert_eq!(c.payload_bytes_delivered, 16 * 15 * 32 * 1024);
}

#[test]
fn recovery_is_identical_across_threads_and_partitions() {
    for s in [
        lossy(LbPolicy::Rps, 0.03, vec![], false),
        lossy(LbPolicy::Ofan, 0.03, vec![], true),
    ] {
        let reference = results(&s, 1, 1);
        for (threads, parts) in [(2, 3), (2, 8), (1, 5)] {
            assert_eq!(results(&s, threads, parts), reference, "{threads}x{parts}");
        }
    }
}

#[test]
fn a_blackholed_switch_makes_flows_retry_until_end_us_identically_for_any_split() {
    // Every packet through edge switch 16 (hosts 0 and 1) is lost: their flows and the
    // flows to them retry forever, so the run ends at end_us.
    let mut s = lossy(LbPolicy::Rps, 1.0, vec![16], false);
    s.end_us = Some(300.0);
    s.validate().unwrap();
    let o = run(&s, 1, 1);
    assert_eq!(o.ending, weft::engine::Ending::Stopped);
    // Statistics end at the last event processed; nothing was left before 300 µs.
    assert!(o.end_ps <= 300_000_000, "end {} ps", o.end_ps);
    assert!(
        (2..=4).contains(&o.flows_incomplete),
        "{} incomplete",
        o.flows_incomplete
    );
    let c = &o.metrics.counters;
    assert!(c.timeouts > 10, "the timer keeps firing ({})", c.timeouts);
    assert_eq!(c.flows_completed + o.flows_incomplete, 16);
    let reference = results(&s, 1, 1);
    assert_eq!(reference["ended"], "end_time");
    for (threads, parts) in [(2, 3), (2, 8)] {
        assert_eq!(results(&s, threads, parts), reference, "{threads}x{parts}");
    }
}

#[test]
fn a_small_rto_never_schedules_a_timer_in_the_past() {
    // An RTT sample can shrink the RTO below the age of the oldest packet still out: its
    // timer is then due at once (it used to be set in the past, which the engine refuses).
    for seed in 1..=6u64 {
        for cc in [CcKind::Constant, CcKind::Dctcp, CcKind::Swift] {
            let mut s = lossy(LbPolicy::Rps, 0.05, vec![], false);
            s.seed = seed;
            s.host.cc = cc;
            s.host.rto_min_us = Some(0.5);
            s.host.reorder_threshold_pkts = Some(1 << 30);
            s.validate().unwrap();
            // Spurious retransmissions may still be on the wire when the last flow completes.
            let o = run(&s, 1, 1);
            assert_eq!(o.flows_incomplete, 0, "seed {seed} {cc:?}");
            let c = &o.metrics.counters;
            assert_eq!(c.payload_bytes_delivered, 16 * 128 * 1024);
            assert!(c.timeouts > 0, "seed {seed} {cc:?}: the short timer fires");
        }
    }
}

#[test]
fn coalesced_acks_with_trimming_recover_without_timeouts() {
    // Packets received out of order must be reported by the ACKs that follow them (the
    // SACK bitmap ends at the answered packet), or they hold the window until the timer.
    for cc in [CcKind::Dctcp, CcKind::Nscc] {
        let mut s = lossy(LbPolicy::Rps, 0.0, vec![], true);
        s.workload.kind = weft::scenario::WorkloadKind::AllToAll;
        s.workload.message_bytes = 256 * 1024;
        s.host.cc = cc;
        s.host.ack_coalesce_bytes = 16384;
        s.switch.ecn = weft::scenario::EcnMode::Ramp;
        s.switch.buffer_bytes = BufferBytes::Bytes(60_000);
        s.validate().unwrap();
        let o = run(&s, 1, 1);
        let c = &o.metrics.counters;
        assert_eq!(o.flows_incomplete, 0, "{cc:?}");
        assert!(c.trims > 0, "{cc:?}: the buffers overflow");
        assert!(c.acks_sent < c.data_delivered, "{cc:?}: ACKs are coalesced");
        assert_eq!(c.timeouts, 0, "{cc:?}: every loss recovered by its NACK");
    }
}
