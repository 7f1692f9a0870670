//! The LB policies whose state comes from other switches (CONGA's overlay and feedback,
//! SGLB's and PSP's adverts): state travels only in packets over links, so results are
//! byte-identical whatever the partitioning, adverts are accounted apart from payload, and
//! their timers sleep when the fabric is idle.

use crate::common::{results, scenario};
use serde_json::Value;
use weft::scenario::{BufferBytes, EcnMode, LbPolicy, Scenario, TopologyKind};

/// conga, sglb, psp and band_jsq with `lb.psp.remote` (stale period 700 ns: ticks fall inside
/// windows, not on their edges).
fn variants(kind: TopologyKind, k: u32, bytes: u64) -> Vec<(&'static str, Scenario)> {
    let mut out = vec![
        ("conga", scenario(kind, k, LbPolicy::Conga, bytes)),
        ("sglb", scenario(kind, k, LbPolicy::Sglb, bytes)),
    ];
    for (name, policy) in [
        ("psp_remote", LbPolicy::Psp),
        ("band_jsq_remote", LbPolicy::BandJsq),
    ] {
        let mut s = scenario(kind, k, policy, bytes);
        s.lb.state_update_period_ns = 700.0;
        s.lb.psp.remote = true;
        s.validate().unwrap();
        out.push((name, s));
    }
    out
}

fn bytes_of(v: &Value) -> String {
    serde_json::to_string(v).unwrap()
}

#[test]
fn remote_state_results_are_identical_on_1_2_and_4_partitions() {
    for (kind, k) in [(TopologyKind::FatTree, 4), (TopologyKind::LeafSpine, 8)] {
        for (name, s) in variants(kind, k, 64 * 1024) {
            let what = format!("{name} {kind:?}");
            let reference = results(&s, 1, 1);
            assert_eq!(reference["ended"], "completed", "{what}");
            let adverts = reference["lb_adverts"].as_u64().unwrap();
            if name == "conga" {
                assert_eq!(adverts, 0, "{what}: CONGA's state rides on data and ACKs");
            } else {
                assert!(adverts > 0, "{what}: no adverts sent");
                // One 64-byte control packet each.
                assert_eq!(reference["lb_advert_bytes"].as_u64(), Some(64 * adverts));
            }
            for (threads, parts) in [(1, 2), (2, 2), (1, 4), (2, 4)] {
                assert_eq!(
                    bytes_of(&results(&s, threads, parts)),
                    bytes_of(&reference),
                    "{what}: threads {threads}, partitions {parts} differ"
                );
            }
        }
    }
}

#[test]
fn remote_state_changes_decisions() {
    // Guards the test above: with the spines' state PSP decides differently than from its
    // own queues alone, and CONGA and SGLB differ from each other.
    let (kind, k, bytes) = (TopologyKind::FatTree, 4, 64 * 1024);
    let mut local = scenario(kind, k, LbPolicy::Psp, bytes);
    local.lb.state_update_period_ns = 700.0;
    local.validate().unwrap();
    let v = variants(kind, k, bytes);
    let r: Vec<Value> = v.iter().map(|(_, s)| results(s, 1, 1)).collect();
    assert_ne!(r[2], results(&local, 1, 1), "psp_remote had no effect");
    assert_ne!(r[0], r[1]);
}

#[test]
fn remote_state_runs_that_lose_packets_still_end_and_are_deterministic() {
    // No loss recovery: flows that lost packets never complete, yet the advert timers stop
    // once a switch is idle, so the run ends ("idle") at the same point on every split.
    for (name, mut s) in variants(TopologyKind::FatTree, 6, 200_000) {
        s.switch.buffer_bytes = BufferBytes::Bytes(2 * 4158);
        s.switch.ecn = EcnMode::Off;
        s.validate().unwrap();
        let reference = results(&s, 1, 1);
        assert!(
            reference["packets"]["dropped"].as_u64().unwrap() > 0,
            "{name}: the case must drop"
        );
        assert_eq!(reference["ended"], "idle", "{name}");
        for (threads, parts) in [(2, 6), (1, 4)] {
            assert_eq!(
                bytes_of(&results(&s, threads, parts)),
                bytes_of(&reference),
                "{name}: threads {threads}, partitions {parts}"
            );
        }
    }
}

#[test]
fn psp_remote_routes_around_failed_links_deterministically() {
    // Adverts go only over live links; spines cut off from a leaf advertise it unreachable.
    let mut s = scenario(TopologyKind::FatTree, 6, LbPolicy::Psp, 60_000);
    s.lb.state_update_period_ns = 700.0;
    s.lb.psp.remote = true;
    s.failures.link_probability = 0.1;
    s.seed = (5..105)
        .find(|&seed| {
            s.seed = seed;
            weft::model::Model::build(&s).is_ok()
        })
        .expect("a connected draw in 100 seeds");
    let reference = results(&s, 1, 1);
    assert_eq!(reference["ended"], "completed");
    assert!(reference["lb_adverts"].as_u64().unwrap() > 0);
    for (threads, parts) in [(1, 3), (2, 4)] {
        assert_eq!(
            bytes_of(&results(&s, threads, parts)),
            bytes_of(&reference),
            "threads {threads}, partitions {parts}"
        );
    }
}
