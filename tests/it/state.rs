//! Run-time state is serializable (the seam checkpoint/restart builds on): a run stopped at a
//! window boundary, whose partitions are encoded with bincode and decoded into a fresh
//! engine, finishes with exactly the counters, histograms and port statistics of a run that
//! was never interrupted — with packets in queues and on links, drops, and NIC and switch LB
//! timers pending at the stop.

use weft::engine::comm::LocalComm;
use weft::engine::partition::{Node, Outbox, Partition};
use weft::engine::plan::Plan;
use weft::engine::{Ending, Engine};
use weft::metrics::histogram_wire;
use weft::model::Model;
use weft::scenario::{BufferBytes, LbPolicy, Scenario};

fn scenario(policy: LbPolicy) -> Scenario {
    let mut s = Scenario::default();
    s.topology.k = 6;
    s.lb.policy = policy;
    s.workload.message_bytes = 400_000;
    s.host.load = 0.8; // paced: NIC wake-up timers are pending at any time
    s.switch.buffer_bytes = BufferBytes::Bytes(2 * 4158);
    s
}

/// What a finished run determined, as comparable values.
fn fingerprint<'a>(m: &Model, parts: impl Iterator<Item = &'a mut Partition>) -> Vec<String> {
    parts
        .map(|p| {
            let stages = p.stage_stats(m, 1 << 40);
            format!(
                "{:?} {:?} {:?} {:?}",
                p.metrics.counters,
                histogram_wire::encode(&p.metrics.latency_ns),
                histogram_wire::encode(&p.metrics.fct_ns),
                stages
            )
        })
        .collect()
}

/// Receiver states the hosts still keep.
fn receivers(e: &Engine<'_>) -> usize {
    e.parts
        .iter()
        .flat_map(|p| p.nodes.iter())
        .map(|n| match n {
            Node::Host(h) => h.receiver_states(),
            Node::Switch(_) => 0,
        })
        .sum()
}

/// Encodes every partition of a stopped engine with bincode and decodes it again, as a
/// checkpoint would (outboxes are empty at a window boundary).
fn encode_and_decode(stopped: Engine<'_>, plan: &Plan) -> Vec<(Partition, Outbox)> {
    let cfg = bincode::config::standard();
    let bytes: Vec<Vec<u8>> = stopped
        .parts
        .iter()
        .map(|p| bincode::serde::encode_to_vec(&**p, cfg).unwrap())
        .collect();
    drop(stopped);
    bytes
        .iter()
        .map(|b| {
            let (p, _): (Partition, usize) = bincode::serde::decode_from_slice(b, cfg).unwrap();
            let slots = plan.out_neighbors[p.id as usize].len();
            (p, vec![Vec::new(); slots])
        })
        .collect()
}

fn build(m: &Model, plan: &Plan) -> Vec<(Partition, Outbox)> {
    let members = plan.members();
    (0..plan.parts)
        .map(|i| Partition::new(m, plan, i, &members[i as usize]))
        .collect()
}

#[test]
fn a_run_restored_from_encoded_state_ends_exactly_like_an_uninterrupted_one() {
    // DRILL and Top-k with stale state: snapshots, DRILL's memory and refresh timers pending.
    for (policy, period_ns) in [
        (LbPolicy::Ofan, 0.0),
        (LbPolicy::Drb, 0.0),
        (LbPolicy::Rps, 0.0),
        (LbPolicy::Drill, 1_500.0),
        (LbPolicy::Topk, 700.0),
        // State from other switches: CONGA's tables; SGLB's adverts in flight and timers.
        (LbPolicy::Conga, 0.0),
        (LbPolicy::Sglb, 0.0),
    ] {
        let mut s = scenario(policy);
        s.lb.state_update_period_ns = period_ns;
        let m = Model::build(&s).unwrap();
        let plan = Plan::automatic(&m, 3, 1).unwrap();

        let mut whole = Engine::new(build(&m, &plan), &m, &plan, &LocalComm, None);
        let ending = whole.run(u64::MAX, None);
        let expected = fingerprint(&m, whole.parts.iter_mut().map(|p| &mut **p));

        for stop_ps in [1_000_000u64, 3_321_000, 6_000_000] {
            let mut first = Engine::new(build(&m, &plan), &m, &plan, &LocalComm, None);
            assert_eq!(
                first.run(stop_ps, None),
                Ending::Stopped,
                "{policy:?} at {stop_ps}"
            );
            let held: u64 = first
                .parts
                .iter()
                .zip(&first.outboxes)
                .map(|(p, o)| p.packets_held(o)[0])
                .sum();
            assert!(held > 0, "{policy:?}: nothing in flight at {stop_ps} ps");
            let restored = encode_and_decode(first, &plan);
            let mut second = Engine::new(restored, &m, &plan, &LocalComm, None);
            assert_eq!(second.run(u64::MAX, None), ending);
            assert_eq!(
                fingerprint(&m, second.parts.iter_mut().map(|p| &mut **p)),
                expected,
                "{policy:?}: restored at {stop_ps} ps"
            );
        }
        let dropped: u64 = whole
            .parts
            .iter()
            .map(|p| p.metrics.counters.data_dropped)
            .sum();
        assert!(dropped > 0, "{policy:?}: the case must drop packets");
        if policy == LbPolicy::Drb {
            // DRB keeps per-flow receiver state for ACK paths; flows whose packets all
            // arrived have dropped it (those that lost packets keep it).
            let kept = receivers(&whole) as u64;
            let incomplete: u64 = whole.parts.iter().map(|p| p.incomplete_flows()).sum();
            assert!(
                kept <= incomplete,
                "{kept} receivers kept, {incomplete} flows incomplete"
            );
            assert!(kept < 36, "every receiver kept ({kept})");
        }
    }
}

#[test]
fn reliable_transport_state_restores_exactly_with_losses_trims_and_timers_pending() {
    // Send records, retransmission queues, RTO and pacing timers, CCA state (NSCC's
    // accumulators, Swift's delay history), trimming queues, ECN-ramp RNG streams and
    // REPS's per-flow buffers and freezes, the UEC mixed policy's buffers and penalties, and
    // Ethereal's subflows and per-host path loads.
    use weft::scenario::CcKind;
    for (policy, cc) in [
        (LbPolicy::Rps, CcKind::Nscc),
        (LbPolicy::Rps, CcKind::Mswift),
        (LbPolicy::Rps, CcKind::Dctcp),
        (LbPolicy::Reps, CcKind::Nscc),
        (LbPolicy::UecMixed, CcKind::Nscc),
        (LbPolicy::Ethereal, CcKind::Dctcp),
    ] {
        let mut s = scenario(policy);
        s.host.load = 1.0;
        s.host.cc = cc;
        s.switch.buffer_bytes = BufferBytes::Bytes(30_000);
        s.switch.trim = true;
        s.switch.ecn = weft::scenario::EcnMode::Ramp;
        s.switch.loss_fraction = 0.01;
        s.validate().unwrap();
        let m = Model::build(&s).unwrap();
        let plan = Plan::automatic(&m, 3, 1).unwrap();
        let mut whole = Engine::new(build(&m, &plan), &m, &plan, &LocalComm, None);
        assert_eq!(whole.run(u64::MAX, None), Ending::WorkloadDone, "{cc:?}");
        let expected = fingerprint(&m, whole.parts.iter_mut().map(|p| &mut **p));
        let trims: u64 = whole.parts.iter().map(|p| p.metrics.counters.trims).sum();
        assert!(trims > 0, "{cc:?}: the case must trim");
        for stop_ps in [2_000_000u64, 5_500_000] {
            let mut first = Engine::new(build(&m, &plan), &m, &plan, &LocalComm, None);
            assert_eq!(first.run(stop_ps, None), Ending::Stopped, "{cc:?}");
            let restored = encode_and_decode(first, &plan);
            let mut second = Engine::new(restored, &m, &plan, &LocalComm, None);
            assert_eq!(second.run(u64::MAX, None), Ending::WorkloadDone);
            assert_eq!(
                fingerprint(&m, second.parts.iter_mut().map(|p| &mut **p)),
                expected,
                "{cc:?}: restored at {stop_ps} ps"
            );
        }
    }
}

/// A shared switch buffer restores exactly: the pools' counts travel with their switches
/// (the run asserts them against the FIFOs at every sample) and the switch occupancy
/// histograms with the series.
#[test]
fn shared_buffer_state_restores_exactly() {
    let mut s = scenario(LbPolicy::Rps);
    s.switch.buffer = weft::scenario::BufferMode::Shared;
    s.switch.shared_buffer_alpha = Some(0.5);
    s.switch.ecn_threshold_bytes = 4158;
    s.report.timeseries_us = 0.1;
    s.validate().unwrap();
    let m = Model::build(&s).unwrap();
    let plan = Plan::automatic(&m, 3, 1).unwrap();
    let with_series = |e: &mut Engine<'_>| {
        let series: Vec<_> = e.parts.iter().map(|p| p.metrics.series.clone()).collect();
        (
            fingerprint(&m, e.parts.iter_mut().map(|p| &mut **p)),
            series,
        )
    };
    let mut whole = Engine::new(build(&m, &plan), &m, &plan, &LocalComm, None);
    let ending = whole.run(u64::MAX, None);
    let expected = with_series(&mut whole);
    let dropped: u64 = whole
        .parts
        .iter()
        .map(|p| p.metrics.counters.data_dropped)
        .sum();
    assert!(dropped > 0, "the case must drop packets");
    for stop_ps in [1_000_000u64, 3_321_000] {
        let mut first = Engine::new(build(&m, &plan), &m, &plan, &LocalComm, None);
        assert_eq!(first.run(stop_ps, None), Ending::Stopped);
        let mut second = Engine::new(encode_and_decode(first, &plan), &m, &plan, &LocalComm, None);
        assert_eq!(second.run(u64::MAX, None), ending);
        assert!(
            with_series(&mut second) == expected,
            "restored at {stop_ps} ps"
        );
    }
}
