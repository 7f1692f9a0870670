//! The same scenario and seed give identical results whatever the thread and partition counts.

use crate::common;
use crate::common::{results, scenario};
use weft::scenario::{LbPolicy, TopologyKind};

#[test]
fn results_do_not_depend_on_threads_or_partitions() {
    for policy in LbPolicy::ALL {
        for (kind, k) in [(TopologyKind::FatTree, 4), (TopologyKind::LeafSpine, 8)] {
            let s = scenario(kind, k, policy, 64 * 1024);
            let reference = results(&s, 1, 1);
            for (threads, parts) in [(2, 2), (2, 4), (1, 4), (2, 3), (2, 8), (1, 7)] {
                let r = results(&s, threads, parts);
                assert_eq!(
                    r, reference,
                    "{policy:?} {kind:?}: threads {threads}, partitions {parts} differ"
                );
            }
        }
    }
}

/// Every policy an expander accepts, on 12 racks of 2 hosts with 3 uplinks each: the same
/// results for any threads and partitions (a partition is a block of racks; ToR-to-ToR links
/// are cut).
#[test]
fn expander_results_do_not_depend_on_threads_or_partitions() {
    for policy in LbPolicy::ALL
        .into_iter()
        .filter(|p| p.works_on_flat_fabric())
    {
        let s = common::expander_scenario((12, 2, 3), policy, 64 * 1024);
        let reference = results(&s, 1, 1);
        for (threads, parts) in [(2, 2), (2, 5), (1, 7), (2, 12)] {
            let r = results(&s, threads, parts);
            assert_eq!(
                r, reference,
                "{policy:?} expander: threads {threads}, partitions {parts} differ"
            );
        }
    }
}

#[test]
fn different_seeds_give_different_results() {
    // Guards the test above against comparing constants.
    let mut s = scenario(TopologyKind::FatTree, 4, LbPolicy::Rsq, 64 * 1024);
    let a = results(&s, 1, 1);
    s.seed = 2;
    let b = results(&s, 1, 1);
    assert_ne!(a, b);
}

#[test]
fn cli_outputs_are_identical_across_threads() {
    let base = "[topology]\nk = 4\n[lb]\npolicy = \"rps\"\n[workload]\nmessage_bytes = 65536\n[report]\ntimeseries_us = 0.5\n";
    cli_outputs_are_identical_across_threads_for(base);
    // A shared buffer small enough to drop (switch occupancy and the pool's drops).
    let shared = format!(
        "{base}[switch]\nbuffer = \"shared\"\nbuffer_bytes = 9000\nshared_buffer_alpha = 0.5\necn_threshold_bytes = 8000\n"
    );
    cli_outputs_are_identical_across_threads_for(&shared);
}

fn cli_outputs_are_identical_across_threads_for(scenario: &str) {
    let bin = env!("CARGO_BIN_EXE_weft");
    let dir = tempfile::tempdir().unwrap();
    let scen = dir.path().join("s.toml");
    std::fs::write(&scen, scenario).unwrap();
    let mut outs = vec![];
    for (threads, parts) in [("1", "1"), ("2", "4")] {
        let out = dir.path().join(format!("out{threads}"));
        let st = std::process::Command::new(bin)
            .args([
                "run",
                scen.to_str().unwrap(),
                "--threads",
                threads,
                "--partitions",
                parts,
                "--out",
                out.to_str().unwrap(),
            ])
            .output()
            .unwrap();
        assert!(
            st.status.success(),
            "{}",
            String::from_utf8_lossy(&st.stderr)
        );
        let summary: serde_json::Value =
            serde_json::from_slice(&std::fs::read(out.join("summary.json")).unwrap()).unwrap();
        let hlog = std::fs::read(out.join("latency.hlog")).unwrap();
        assert!(String::from_utf8_lossy(&hlog).contains("Tag=latency_ns,"));
        let series = std::fs::read_to_string(out.join("timeseries.csv")).unwrap();
        assert!(series.lines().count() > 10, "a row every 0.5 µs");
        outs.push((
            summary["results"].clone(),
            summary["scenario"].clone(),
            hlog,
            series,
        ));
    }
    assert_eq!(outs[0], outs[1]);
}

#[test]
fn drops_and_incomplete_flows_are_deterministic_too() {
    let mut s = scenario(TopologyKind::FatTree, 6, LbPolicy::Rsq, 200_000);
    s.switch.buffer_bytes = weft::scenario::BufferBytes::Bytes(3 * 4158);
    let reference = results(&s, 1, 1);
    assert!(
        reference["packets"]["dropped"].as_u64().unwrap() > 0,
        "the case must drop"
    );
    for (threads, parts) in [(2, 6), (2, 18), (1, 5)] {
        assert_eq!(
            results(&s, threads, parts),
            reference,
            "threads {threads}, partitions {parts}"
        );
    }
}

/// Shared switch buffers (`switch.buffer = "shared"`) small enough to drop: the same results,
/// `switch_occupancy` included, for any threads and partitions.
#[test]
fn shared_buffer_results_do_not_depend_on_threads_or_partitions() {
    let mut dropped = 0;
    for policy in VARIANT_POLICIES {
        for (kind, k) in [(TopologyKind::FatTree, 4), (TopologyKind::LeafSpine, 8)] {
            let mut s = scenario(kind, k, policy, 200_000);
            s.switch.buffer = weft::scenario::BufferMode::Shared;
            s.switch.buffer_bytes = weft::scenario::BufferBytes::Bytes(2 * 4158);
            s.switch.shared_buffer_alpha = Some(0.5);
            s.switch.ecn_threshold_bytes = 4158;
            s.validate().unwrap();
            let reference = results(&s, 1, 1);
            assert!(reference["switch_occupancy"]["all"]["samples"].as_u64() > Some(0));
            dropped += reference["packets"]["dropped"].as_u64().unwrap();
            for (threads, parts) in [(2, 4), (1, 5), (2, 7)] {
                assert_eq!(
                    results(&s, threads, parts),
                    reference,
                    "{policy:?} {kind:?}: threads {threads}, partitions {parts}"
                );
            }
        }
    }
    assert!(dropped > 0, "the cases must drop");
}

// ---- Tier overrides, forwarding latency and staggered matrix workloads ----

/// The (threads, partitions) splits every variant below is run on; (1, 1) is the reference.
/// On a k = 4 fat tree (4 pods, 8 edge groups) 5 and 6 partitions cut pods into edge groups,
/// so edge-agg links are cut as well as agg-core ones.
const SPLITS: [(usize, u32); 3] = [(2, 4), (1, 5), (2, 6)];

/// The policies the variants are checked for: per-switch pointers (ofan), sender waypoints
/// (drb), per-flow hashing (ecmp) and queue-state decisions (jsq).
const VARIANT_POLICIES: [LbPolicy; 4] =
    [LbPolicy::Ofan, LbPolicy::Drb, LbPolicy::Ecmp, LbPolicy::Jsq];

/// Runs `s` on every split of [`SPLITS`] and asserts the results equal the (1, 1) run's.
/// Returns the reference results.
fn assert_split_invariant(s: &weft::scenario::Scenario, what: &str) -> serde_json::Value {
    let reference = results(s, 1, 1);
    let completed = reference["flows"]["completed"].as_u64().unwrap();
    assert!(completed > 0, "{what}: no flow completed: {reference}");
    assert_eq!(
        reference["flows"]["incomplete"], 0,
        "{what}: flows left incomplete"
    );
    for (threads, parts) in SPLITS {
        assert_eq!(
            results(s, threads, parts),
            reference,
            "{what}: threads {threads}, partitions {parts} differ from (1, 1)"
        );
    }
    reference
}

/// A k = 4 fat tree with a faster, shorter agg-core tier and a longer edge-agg tier.
fn with_tiers(policy: LbPolicy) -> weft::scenario::Scenario {
    use weft::scenario::TierOverride;
    let mut s = scenario(TopologyKind::FatTree, 4, policy, 64 * 1024);
    s.topology.tiers.insert(
        "agg_core".into(),
        TierOverride {
            rate_gbps: Some(1600.0),
            latency_ns: Some(300.0),
        },
    );
    s.topology.tiers.insert(
        "edge_agg".into(),
        TierOverride {
            rate_gbps: Some(800.0),
            latency_ns: Some(200.0),
        },
    );
    s.validate().expect("tier scenario is valid");
    s
}

#[test]
fn tier_overrides_are_deterministic_across_threads_and_partitions() {
    for policy in VARIANT_POLICIES {
        let s = with_tiers(policy);
        let r = assert_split_invariant(&s, &format!("{policy:?} with tier overrides"));
        // Guard against comparing constants: the overrides change the model's results.
        let plain = results(&scenario(TopologyKind::FatTree, 4, policy, 64 * 1024), 1, 1);
        assert_ne!(r, plain, "{policy:?}: tier overrides had no effect");
        assert_ne!(
            r["cct_lower_bound_ns"], plain["cct_lower_bound_ns"],
            "{policy:?}: the lower bound ignores the tier latencies"
        );
        // The splits really cut the overridden tiers: whole pods cut only agg-core links,
        // edge groups also edge-agg links. The window length is the fabric's smallest link
        // delay (edge_agg, 200 ns) whatever the cut.
        let cut = |parts| {
            let o = common::run(&s, 1, parts);
            let run = weft::report::Summary::new(&o, serde_json::to_value(&s).unwrap()).run;
            assert_eq!(
                run["lookahead_ns"].as_f64(),
                Some(200.0),
                "{policy:?}: {run}"
            );
            run["cut_links"].as_u64().unwrap()
        };
        assert!(
            cut(6) > cut(4),
            "{policy:?}: edge groups cut more links than pods"
        );
    }
}

#[test]
fn forwarding_latency_is_deterministic_across_threads_and_partitions() {
    for policy in VARIANT_POLICIES {
        let mut s = scenario(TopologyKind::FatTree, 4, policy, 64 * 1024);
        s.switch.forwarding_latency_ns = 150.0;
        s.validate().unwrap();
        let r = assert_split_invariant(&s, &format!("{policy:?} with forwarding latency"));
        let plain = results(&scenario(TopologyKind::FatTree, 4, policy, 64 * 1024), 1, 1);
        assert_ne!(r, plain, "{policy:?}: forwarding latency had no effect");
        // Every data packet crosses at least one switch, so its latency grows by >= 150 ns.
        assert!(
            r["latency_ns"]["max"].as_u64().unwrap()
                >= plain["latency_ns"]["max"].as_u64().unwrap() + 150,
            "{policy:?}: {} vs {}",
            r["latency_ns"],
            plain["latency_ns"]
        );
    }
}

/// An htsim connection matrix for the 16 hosts of a k = 4 fat tree, with flows starting at
/// 0, 1.5 us and 4 us (start times in picoseconds), crossing pods, within a pod, within an
/// edge switch, and an incast onto host 5.
const STAGGERED_MATRIX: &str = "Nodes 16
Connections 10
0->5 id 1 start 0 size 65536
3->12 id 2 start 0 size 131072
8->9 id 3 start 0 size 32768
1->5 id 4 start 1500000 size 65536
14->5 id 5 start 1500000 size 16384
6->2 id 6 start 1500000 size 131072
11->4 id 7 start 4000000 size 65536
7->13 id 8 start 4000000 size 98304
5->0 id 9 start 4000000 size 16384
15->10 id 10 start 4000000 size 65536
";

#[test]
fn staggered_matrix_is_deterministic_across_threads_and_partitions() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("m.cm"), STAGGERED_MATRIX).unwrap();
    for policy in VARIANT_POLICIES {
        let mut s = scenario(TopologyKind::FatTree, 4, policy, 64 * 1024);
        s.workload.kind = weft::scenario::WorkloadKind::Matrix;
        s.workload.file = Some("m.cm".into());
        s.base_dir = dir.path().to_path_buf();
        s.validate().unwrap();
        let r = assert_split_invariant(&s, &format!("{policy:?} staggered matrix"));
        assert_eq!(r["flows"]["total"], 10, "{r}");
        assert_eq!(r["flows"]["completed"], 10, "{r}");
        // Every payload byte arrives, in 4096-byte packets.
        let packets: u64 = [
            65536u64, 131072, 32768, 65536, 16384, 131072, 65536, 98304, 16384, 65536,
        ]
        .iter()
        .map(|b| b.div_ceil(4096))
        .sum();
        assert_eq!(r["packets"]["data_delivered"], packets, "{r}");
        // The last flows start at 4 us, so the run cannot end before then.
        assert!(r["end_ns"].as_f64().unwrap() > 4000.0, "{r}");
    }
}

#[test]
fn staggered_start_times_change_the_results() {
    // Guards the test above: the start times are read and used, not ignored.
    let dir = tempfile::tempdir().unwrap();
    let flat = STAGGERED_MATRIX
        .replace("start 1500000", "start 0")
        .replace("start 4000000", "start 0");
    std::fs::write(dir.path().join("staggered.cm"), STAGGERED_MATRIX).unwrap();
    std::fs::write(dir.path().join("flat.cm"), flat).unwrap();
    let run = |file: &str| {
        let mut s = scenario(TopologyKind::FatTree, 4, LbPolicy::Ofan, 64 * 1024);
        s.workload.kind = weft::scenario::WorkloadKind::Matrix;
        s.workload.file = Some(file.into());
        s.base_dir = dir.path().to_path_buf();
        s.validate().unwrap();
        results(&s, 1, 1)
    };
    let (staggered, flat) = (run("staggered.cm"), run("flat.cm"));
    assert_ne!(staggered, flat);
    assert!(
        staggered["end_ns"].as_f64().unwrap() > flat["end_ns"].as_f64().unwrap(),
        "staggered {} vs flat {}",
        staggered["end_ns"],
        flat["end_ns"]
    );
}

#[test]
fn leaf_spine_tier_overrides_are_deterministic_across_threads_and_partitions() {
    use weft::scenario::TierOverride;
    for policy in VARIANT_POLICIES {
        let mut s = scenario(TopologyKind::LeafSpine, 8, policy, 32 * 1024);
        s.topology.tiers.insert(
            "leaf_spine".into(),
            TierOverride {
                rate_gbps: Some(1600.0),
                latency_ns: Some(250.0),
            },
        );
        s.switch.forwarding_latency_ns = 40.0;
        s.validate().unwrap();
        let r = assert_split_invariant(&s, &format!("{policy:?} leaf-spine tiers"));
        let plain = results(
            &scenario(TopologyKind::LeafSpine, 8, policy, 32 * 1024),
            1,
            1,
        );
        assert_ne!(r, plain, "{policy:?}: leaf-spine overrides had no effect");
    }
}

// ---- Stale queue state ----

/// The policies that read their switch's queues, and so can read them stale.
const QUEUE_AWARE: [LbPolicy; 5] = [
    LbPolicy::Jsq,
    LbPolicy::Choice,
    LbPolicy::Drill,
    LbPolicy::Topk,
    LbPolicy::Dlb,
];

#[test]
fn stale_state_is_deterministic_across_threads_and_partitions() {
    // 700 ns: refreshes fall inside windows (the lookahead is 500 ns), not on their edges.
    for policy in QUEUE_AWARE {
        for (kind, k) in [(TopologyKind::FatTree, 4), (TopologyKind::LeafSpine, 8)] {
            let mut s = scenario(kind, k, policy, 64 * 1024);
            s.lb.state_update_period_ns = 700.0;
            s.validate().unwrap();
            let what = format!("{policy:?} {kind:?} stale");
            let reference = results(&s, 1, 1);
            assert_eq!(reference["flows"]["incomplete"], 0, "{what}");
            assert_eq!(reference["ended"], "completed", "{what}");
            for (threads, parts) in [(2, 2), (2, 4), (1, 4), (2, 3), (2, 8), (1, 7)] {
                assert_eq!(
                    results(&s, threads, parts),
                    reference,
                    "{what}: threads {threads}, partitions {parts} differ"
                );
            }
            // Guard: the snapshot is what decides, so the results differ from live queues.
            let live = results(&scenario(kind, k, policy, 64 * 1024), 1, 1);
            assert_ne!(reference, live, "{what}: stale state had no effect");
        }
    }
}

#[test]
fn stale_state_runs_that_lose_packets_still_end_and_are_deterministic() {
    // No loss recovery: flows that lost packets never complete, yet the refresh timers stop
    // once a switch is idle, so the run ends ("idle") at the same point on every split.
    for policy in QUEUE_AWARE {
        let mut s = scenario(TopologyKind::FatTree, 6, policy, 200_000);
        s.switch.buffer_bytes = weft::scenario::BufferBytes::Bytes(2 * 4158);
        s.switch.ecn = weft::scenario::EcnMode::Off;
        s.lb.state_update_period_ns = 2_000.0;
        s.validate().unwrap();
        let reference = results(&s, 1, 1);
        assert!(
            reference["packets"]["dropped"].as_u64().unwrap() > 0,
            "{policy:?}: the case must drop"
        );
        assert_eq!(reference["ended"], "idle", "{policy:?}");
        for (threads, parts) in [(2, 6), (2, 18), (1, 5)] {
            assert_eq!(
                results(&s, threads, parts),
                reference,
                "{policy:?}: threads {threads}, partitions {parts}"
            );
        }
    }
}

/// AR, DLB and SGLB per flowlet (flow tables, coins, rebalancing), Valiant per flow, DLB's
/// assigned flows and Valiant through a subset of the top tier give the same results on
/// every split, and differ from their per-packet defaults.
#[test]
fn flowlet_and_per_flow_modes_are_deterministic_across_threads_and_partitions() {
    let flowlet: fn(&mut weft::scenario::Scenario) = common::flowlet_and_per_flow_modes;
    let assigned: fn(&mut weft::scenario::Scenario) = common::assigned_and_subset_modes;
    let cases = [
        (LbPolicy::Ar, flowlet, "flowlet"),
        (LbPolicy::Dlb, flowlet, "flowlet"),
        (LbPolicy::Sglb, flowlet, "flowlet"),
        (LbPolicy::Valiant, flowlet, "per flow"),
        (LbPolicy::Dlb, assigned, "assigned"),
        (LbPolicy::Valiant, assigned, "subset"),
    ];
    for (policy, mode, name) in cases {
        for (kind, k) in [(TopologyKind::FatTree, 4), (TopologyKind::LeafSpine, 8)] {
            let plain = scenario(kind, k, policy, 64 * 1024);
            let mut s = plain.clone();
            mode(&mut s);
            let what = format!("{policy:?} {kind:?} {name}");
            let reference = results(&s, 1, 1);
            for (threads, parts) in [(2, 2), (2, 4), (1, 4), (2, 3)] {
                assert_eq!(
                    results(&s, threads, parts),
                    reference,
                    "{what}: threads {threads}, partitions {parts} differ"
                );
            }
            assert_ne!(
                reference,
                results(&plain, 1, 1),
                "{what}: mode had no effect"
            );
        }
    }
}

/// NDP (`host.cc = "ndp"`: trimming into small buffers, per-host pull pacers) on both
/// fabric families, under the variant policies.
#[test]
fn ndp_is_deterministic_across_threads_and_partitions() {
    for policy in VARIANT_POLICIES {
        for (kind, k) in [(TopologyKind::FatTree, 4), (TopologyKind::LeafSpine, 8)] {
            let mut s = scenario(kind, k, policy, 64 * 1024);
            s.host.cc = weft::scenario::CcKind::Ndp;
            s.switch.trim = true;
            s.switch.buffer_bytes = weft::scenario::BufferBytes::Bytes(12_500);
            s.switch.ecn_threshold_bytes = 6_000;
            s.validate().unwrap();
            let r = assert_split_invariant(&s, &format!("NDP {policy:?} {kind:?}"));
            assert!(r["packets"]["pulls_sent"].as_u64().unwrap() > 0);
        }
    }
}

/// `weft run` without `--threads` uses every CPU this process may use, and writes the same
/// `results` and `latency.hlog` as `--threads 1` (and `--threads 3`, more threads than this
/// machine may have).
#[test]
fn weft_run_defaults_to_every_cpu_with_the_same_outputs() {
    let dir = tempfile::tempdir().unwrap();
    let scenario = concat!(env!("CARGO_MANIFEST_DIR"), "/scenarios/quickstart.toml");
    let run = |name: &str, extra: &[&str]| {
        let out = dir.path().join(name);
        let o = std::process::Command::new(env!("CARGO_BIN_EXE_weft"))
            .args(["run", scenario, "--out", out.to_str().unwrap()])
            .args(extra)
            .output()
            .expect("run weft");
        assert!(
            o.status.success(),
            "{name}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
        let summary: serde_json::Value =
            serde_json::from_slice(&std::fs::read(out.join("summary.json")).unwrap()).unwrap();
        (summary, std::fs::read(out.join("latency.hlog")).unwrap())
    };
    let (default, default_hlog) = run("default", &[]);
    let cpus = std::thread::available_parallelism().unwrap().get();
    assert_eq!(default["run"]["threads"], cpus as u64);
    for threads in ["1", "3"] {
        let (s, hlog) = run(threads, &["--threads", threads]);
        assert_eq!(s["run"]["threads"], threads.parse::<u64>().unwrap());
        assert_eq!(s["results"], default["results"], "--threads {threads}");
        assert!(
            hlog == default_hlog,
            "--threads {threads}: latency.hlog differs"
        );
    }
}
