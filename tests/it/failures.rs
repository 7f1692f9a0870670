//! Link failures (`[failures]`): every policy routes around failed links (a switch panics if
//! it ever sends on one), every flow completes, results do not depend on threads or
//! partitions, paced hosts slow to `rho_max`, and bad failure input gets one clear line.

use crate::common::{results, run, scenario};
use weft::scenario::{load_scenario_str, FailedLink, LbPolicy, Scenario, TopologyKind};

/// A permutation under `policy` with 10 % of the switch-to-switch links failed: the first
/// seed from `seed` on whose draw leaves every edge switch connected (small fabrics with few
/// uplinks are often cut at this rate; the model refuses them).
fn failing(kind: TopologyKind, k: u32, policy: LbPolicy, seed: u64) -> Scenario {
    let mut s = scenario(kind, k, policy, 60_000);
    s.failures.link_probability = 0.1;
    s.seed = (seed..seed + 100)
        .find(|&seed| {
            s.seed = seed;
            weft::model::Model::build(&s).is_ok()
        })
        .expect("a connected draw in 100 seeds");
    s
}

#[test]
fn every_policy_routes_around_failed_links_and_completes() {
    for policy in LbPolicy::ALL {
        for (kind, k) in [(TopologyKind::FatTree, 6), (TopologyKind::LeafSpine, 8)] {
            let s = failing(kind, k, policy, 3);
            let o = run(&s, 1, 1);
            let what = format!("{policy:?} {kind:?} k={k}");
            assert!(o.failed_links > 0, "{what}: the draw failed no link");
            assert_eq!(o.flows_incomplete, 0, "{what}");
            let c = &o.metrics.counters;
            assert_eq!(c.data_sent, c.data_delivered + o.data_in_flight, "{what}");
            assert_eq!(c.data_dropped + c.acks_dropped, 0, "{what}");
            let r = o.rho_max.expect("rho_max is computed under failures");
            assert!(r > 0.0 && r <= 1.0, "{what}: rho_max {r}");
        }
    }
}

#[test]
fn failures_give_identical_results_across_threads_and_partitions() {
    for policy in [
        LbPolicy::Ofan,
        LbPolicy::SimpleRr,
        LbPolicy::Drb,
        LbPolicy::Drill,
        LbPolicy::Ar,
        LbPolicy::Reps,
        LbPolicy::Conga,
        LbPolicy::Sglb,
    ] {
        let s = failing(TopologyKind::FatTree, 6, policy, 5);
        let one = results(&s, 1, 1);
        for (threads, parts) in [(1, 3), (2, 4)] {
            assert_eq!(
                one,
                results(&s, threads, parts),
                "{policy:?}: {threads} threads, {parts} partitions"
            );
        }
    }
}

/// Leaf-spine k = 4 (leaves 8-11, spines 12-13; leaf port 3 goes to spine 13) with leaf
/// 8's link to spine 13 down: leaf 8's two hosts share one uplink, so rho_max = 1/2 (or
/// less, if more than two hosts send into leaf 8; `metrics::rho_max` checks the LP by hand).
/// Paced hosts then send at that rate, so even the fastest flow takes twice its
/// serialization time; with `pace_at_rho_max = false` the fastest flow beats that.
#[test]
fn paced_hosts_send_at_rho_max() {
    let bytes = 1u64 << 20;
    let mut s = scenario(TopologyKind::LeafSpine, 4, LbPolicy::Rsq, bytes);
    s.failures.links = vec![FailedLink { node: 8, port: 3 }];
    let packets = bytes.div_ceil(s.packet.payload_bytes as u64);
    let wire = s.packet.payload_bytes + s.packet.header_bytes + s.packet.interframe_bytes;
    let serialization_ps = (packets * wire as u64 * 10) as f64; // 800 Gb/s: 10 ps per byte
    let o = run(&s, 1, 1);
    let r = o.rho_max.unwrap();
    assert!(r <= 0.5 + 1e-9, "rho_max {r}");
    let fastest = o.metrics.fct_ns.min() as f64 * 1000.0;
    assert!(
        fastest >= 0.95 * serialization_ps / r,
        "fastest flow {fastest} ps with hosts paced at {r}"
    );
    s.failures.pace_at_rho_max = false;
    let o = run(&s, 1, 1);
    let fastest = o.metrics.fct_ns.min() as f64 * 1000.0;
    assert!(
        fastest < 0.95 * serialization_ps / r,
        "faster than rho_max without pacing: {fastest} ps"
    );
}

#[test]
fn bad_failure_input_names_the_field() {
    let err = |toml: &str| {
        load_scenario_str(toml, "t.toml", std::path::Path::new("."), &[])
            .unwrap_err()
            .to_string()
    };
    let e = err("[failures]\nlink_probability = 1.5\n");
    assert!(e.contains("failures.link_probability"), "{e}");
    let e = err("[failures]\nlink_probabilty = 0.1\n");
    assert!(e.contains("link_probabilty"), "{e}");
    let build = |s: &Scenario| weft::model::Model::build(s).err().unwrap().to_string();
    let mut s = Scenario::default();
    s.topology.k = 4;
    s.failures.links = vec![FailedLink { node: 0, port: 0 }];
    let e = build(&s);
    assert!(
        e.contains("failures.links[0]") && e.contains("host link"),
        "{e}"
    );
    s.failures.links = vec![FailedLink { node: 16, port: 9 }];
    let e = build(&s);
    assert!(
        e.contains("failures.links[0]") && e.contains("no port 9"),
        "{e}"
    );
    // Both uplinks of edge switch 16 down: it is cut off from every other edge switch.
    s.failures.links = vec![
        FailedLink { node: 16, port: 2 },
        FailedLink { node: 16, port: 3 },
    ];
    let e = build(&s);
    assert!(
        e.contains("failures") && e.contains("disconnect switch 16"),
        "{e}"
    );
}
