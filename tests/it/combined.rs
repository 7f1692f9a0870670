//! The combined workload (`kind = "poisson"` with `[workload.with_shuffle]`, the Opera
//! paper's Fig. 10): Poisson flows and a shuffle merged per host by start time, the shuffle
//! tagged bulk on Opera (RotorLB) while the Poisson flows stay low-latency, each part
//! reported as a phase.

use crate::common;

use serde_json::Value;
use weft::report::Summary;
use weft::scenario::{load_scenario_str, Scenario};
use weft::topology::Fabric;
use weft::workload::Workload;

/// 1 000 B with probability 1/2, else 20 000 B: mean 10 500 B.
const CDF: &str = "bytes,cdf\n1000,0.5\n20000,1\n";

/// 12 racks of 2 hosts, 4 rotors (as tests/it/rotorlb.rs); Poisson at load 0.5 for 200 µs
/// plus `shuffle` (a `[workload.with_shuffle]` body, or none).
fn opera(dir: &std::path::Path, shuffle: Option<&str>) -> Scenario {
    std::fs::write(dir.join("sizes.csv"), CDF).unwrap();
    let with = shuffle.map_or(String::new(), |b| format!("[workload.with_shuffle]\n{b}\n"));
    let workload = format!(
        "kind = \"poisson\"\nsize_cdf = \"sizes.csv\"\nload = 0.5\nduration_us = 200\n{with}"
    );
    let text = common::small_opera_toml("realizations = 20", "cc = \"ndp\"", &workload, 0);
    load_scenario_str(&text, "test", dir, &[]).unwrap()
}

const BULK_SHUFFLE: &str = "message_bytes = 100000\nstart_us = 100\nbulk = true";

fn results(s: &Scenario, threads: usize, partitions: u32) -> Value {
    let o = common::run(s, threads, partitions);
    assert_eq!(o.flows_incomplete, 0, "every flow completes");
    Summary::new(&o, serde_json::to_value(s).unwrap()).results
}

fn workload(s: &Scenario) -> Workload {
    Workload::build(s, &Fabric::build(s)).unwrap()
}

#[test]
fn parts_keep_their_flows_and_each_host_starts_them_in_time_order() {
    let dir = tempfile::tempdir().unwrap();
    let combined = workload(&opera(dir.path(), Some(BULK_SHUFFLE)));
    let poisson = workload(&opera(dir.path(), None));
    let mut shuffle_scenario = opera(dir.path(), None);
    shuffle_scenario.workload.kind = weft::scenario::WorkloadKind::Shuffle;
    shuffle_scenario.workload.message_bytes = 100_000;
    shuffle_scenario.workload.size_cdf = None;
    shuffle_scenario.workload.load = None;
    shuffle_scenario.workload.duration_us = None;
    let shuffle = workload(&shuffle_scenario);
    assert_eq!(combined.phase_names(), ["poisson", "shuffle"]);
    for h in 0..24 {
        let (mut ps, mut ss) = (vec![], vec![]);
        let mut last_start = 0;
        for i in 0..combined.flows_of(h) {
            let f = combined.flow(h, i);
            let start = f.start_at_ps().unwrap();
            assert!(
                start >= last_start,
                "host {h}: flow {i} starts before flow {}",
                i - 1
            );
            last_start = start;
            match combined.phase_of(h, i) {
                Some(0) => {
                    assert_eq!(combined.bulk_tag(h, i), None, "the cutoff decides");
                    ps.push(f)
                }
                Some(1) => {
                    assert_eq!(combined.bulk_tag(h, i), Some(true));
                    ss.push(f)
                }
                p => panic!("phase {p:?}"),
            }
        }
        let expect_p: Vec<_> = (0..poisson.flows_of(h))
            .map(|i| poisson.flow(h, i))
            .collect();
        assert_eq!(
            ps, expect_p,
            "host {h}: the Poisson flows of a Poisson-only run"
        );
        assert!(
            !ps.is_empty(),
            "host {h} has Poisson flows (load 0.5 for 200 µs: ~12)"
        );
        assert_eq!(
            ss.len(),
            22,
            "one shuffle flow to each host of the other 11 racks"
        );
        for (j, f) in ss.iter().enumerate() {
            let mut alone = shuffle.flow(h, j as u32);
            alone.start = weft::workload::Start::At(100_000_000);
            assert_eq!(*f, alone, "host {h}: shuffle flow {j} starts at start_us");
        }
        assert_eq!(
            combined.bytes_of(h),
            poisson.bytes_of(h) + 22 * 100_000,
            "host {h}"
        );
    }
}

#[test]
fn on_opera_only_the_tagged_shuffle_goes_through_rotorlb() {
    let dir = tempfile::tempdir().unwrap();
    let s = opera(dir.path(), Some(BULK_SHUFFLE));
    let r = results(&s, 1, 1);
    let phases = r["phases"].as_array().unwrap();
    let (poisson, shuffle) = (&phases[0], &phases[1]);
    assert_eq!(shuffle["name"], "shuffle");
    assert_eq!(shuffle["flows_completed"], 24 * 22);
    assert_eq!(shuffle["bytes"], 24 * 22 * 100_000);
    assert!(shuffle["start_ns"].as_f64().unwrap() >= 100_000.0);
    assert_eq!(shuffle["fct_ns"]["count"], 24 * 22);
    let total = r["flows"]["completed"].as_u64().unwrap();
    assert_eq!(
        poisson["flows_completed"].as_u64().unwrap(),
        total - 24 * 22
    );
    assert_eq!(
        poisson["fct_ns"]["count"].as_u64().unwrap(),
        total - 24 * 22
    );
    // Exactly the shuffle's packets (70 per 100 KB flow) crossed rotors by RotorLB: the
    // Poisson flows (20 kB at most, below the 15 MB cutoff) stayed low-latency.
    let rlb = &r["opera"]["rotorlb"];
    let delivered = rlb["one_hop"].as_u64().unwrap() + rlb["two_hop"].as_u64().unwrap();
    assert_eq!(delivered, 24 * 22 * 70);
    // Behind the Poisson flows' low-latency packets, some of a slot's packets outlive its
    // circuit at their ToR: they go back before holding the uplink (`stale`, part of
    // `bounced`), and every one still arrives (above).
    let (stale, bounced) = (
        rlb["stale"].as_u64().unwrap(),
        rlb["bounced"].as_u64().unwrap(),
    );
    assert!(
        stale > 0 && stale <= bounced,
        "stale {stale}, bounced {bounced}"
    );
}

#[test]
fn without_the_tag_the_cutoff_decides_and_results_do_not_depend_on_the_split() {
    let dir = tempfile::tempdir().unwrap();
    // Untagged 100 KB shuffle flows are below the cutoff: nothing goes through RotorLB.
    let s = opera(dir.path(), Some("start_us = 50\nstagger_us = 100"));
    let base = results(&s, 1, 1);
    assert_eq!(base["opera"]["rotorlb"]["sent"], 0);
    assert_eq!(base["phases"][1]["flows_completed"], 24 * 22);
    assert_eq!(results(&s, 2, 6), base, "2 threads, 6 partitions");
    let tagged = opera(dir.path(), Some(BULK_SHUFFLE));
    assert_eq!(results(&tagged, 2, 4), results(&tagged, 1, 1));
}

#[test]
fn the_flow_log_holds_every_completed_flow_once_and_its_fcts_make_the_phase_histograms() {
    let dir = tempfile::tempdir().unwrap();
    let mut s = opera(dir.path(), Some(BULK_SHUFFLE));
    s.report.flow_log = true;
    let o = common::run(&s, 1, 1);
    let log = &o.metrics.flow_log;
    let r = Summary::new(&o, serde_json::to_value(&s).unwrap()).results;
    assert_eq!(log.len() as u64, r["flows"]["completed"].as_u64().unwrap());
    let w = workload(&s);
    let mut seen = std::collections::BTreeSet::new();
    for f in log {
        assert!(seen.insert((f.src, f.index)), "{f:?} logged twice");
        let flow = w.flow(f.src, f.index);
        assert_eq!((f.dst, f.bytes), (flow.dst, flow.bytes), "{f:?}");
        assert_eq!(Some(f.start_ps), flow.start_at_ps(), "{f:?}");
        assert_eq!(Some(f.phase), w.phase_of(f.src, f.index), "{f:?}");
    }
    assert!(
        log.windows(2).all(|p| p[0] < p[1]),
        "sorted by start, then flow"
    );
    // Each phase's FCT histogram, rebuilt from the log, gives the summary's percentiles.
    for (phase, p) in r["phases"].as_array().unwrap().iter().enumerate() {
        let mut h = weft::metrics::new_histogram();
        for f in log.iter().filter(|f| f.phase as usize == phase) {
            weft::metrics::record_ns(&mut h, f.fct_ps / 1000);
        }
        let fct = &p["fct_ns"];
        assert_eq!(fct["count"].as_u64().unwrap(), h.len(), "{}", p["name"]);
        for (q, key) in [(0.5, "p50"), (0.99, "p99")] {
            assert_eq!(
                fct[key].as_f64().unwrap(),
                h.value_at_quantile(q) as f64,
                "{} {key}",
                p["name"]
            );
        }
    }
    let split = common::run(&s, 2, 4);
    assert_eq!(&split.metrics.flow_log, log, "2 threads, 4 partitions");
    s.report.flow_log = false;
    assert!(
        common::run(&s, 1, 1).metrics.flow_log.is_empty(),
        "off by default"
    );
}

/// `scenarios/opera/fct_by_arrival.sh` splits a flows.csv at the shuffle's start and takes
/// nearest-rank percentiles of the small flows of one phase.
#[test]
fn fct_by_arrival_splits_the_flow_log_at_the_given_time() {
    let dir = tempfile::tempdir().unwrap();
    let mut csv = String::from("src,index,dst,bytes,start_ps,fct_ps,phase\n");
    // Before 1 µs: FCTs 1..=100 µs (p50 50, p99 99); from 1 µs: 2, 4 µs; a large flow and
    // a shuffle flow that must be left out.
    for i in 1..=100u64 {
        csv += &format!("0,{i},1,1000,{},{},poisson\n", 500_000, i * 1_000_000);
    }
    csv += "0,0,1,9000,1000000,2000000,poisson\n0,101,1,10000,2000000,4000000,poisson\n";
    csv += "0,102,1,10001,2000000,9000000,poisson\n0,103,1,100,2000000,9000000,shuffle\n";
    std::fs::write(dir.path().join("flows.csv"), csv).unwrap();
    let script = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/scenarios/opera/fct_by_arrival.sh"
    );
    let o = std::process::Command::new(script)
        .args([dir.path().to_str().unwrap(), "1"])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert_eq!(
        String::from_utf8_lossy(&o.stdout),
        "arrived before 1 us: 100 flows, FCT p50 50.0 us, p99 99.0 us\n\
         arrived from   1 us: 2 flows, FCT p50 2.0 us, p99 4.0 us\n"
    );
    let missing = std::process::Command::new(script)
        .arg(dir.path().join("nothing").to_str().unwrap())
        .output()
        .unwrap();
    assert!(!missing.status.success());
    assert!(String::from_utf8_lossy(&missing.stderr).contains("flows.csv: no such file"));
}

#[test]
fn combined_runs_on_a_static_fabric() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("sizes.csv"), CDF).unwrap();
    let text = "[topology]\nk = 4\n[workload]\nkind = \"poisson\"\nsize_cdf = \"sizes.csv\"\n\
                load = 0.3\nduration_us = 100\n[workload.with_shuffle]\nmessage_bytes = 10000\n\
                stagger_us = 50\n";
    let s = load_scenario_str(text, "test", dir.path(), &[]).unwrap();
    let r = results(&s, 1, 1);
    // k = 4: 16 hosts in 8 racks of 2, 14 shuffle flows each.
    assert_eq!(r["phases"][1]["flows_completed"], 16 * 14);
    assert!(r["phases"][0]["flows_completed"].as_u64().unwrap() > 0);
}

#[test]
fn bad_combined_fields_are_named() {
    let base = "[topology]\nk = 4\n[workload]\nkind = \"poisson\"\nsize_cdf = \"sizes.csv\"\n\
                load = 0.3\nduration_us = 100\n";
    let cases = [
        (
            "[topology]\nk = 4\n[workload]\nkind = \"shuffle\"\n[workload.with_shuffle]\n",
            "workload.with_shuffle",
        ),
        (
            "[workload.with_shuffle]\nbulk = true\n",
            "workload.with_shuffle.bulk",
        ),
        (
            "[workload.with_shuffle]\nmessage_bytes = 0\n",
            "workload.with_shuffle.message_bytes",
        ),
        (
            "[workload.with_shuffle]\nstart_us = -1\n",
            "workload.with_shuffle.start_us",
        ),
        (
            "[workload.with_shuffle]\nstagger_us = 2e9\n",
            "workload.with_shuffle.stagger_us",
        ),
        ("[workload.with_shuffle]\nstart = 1\n", "start"),
    ];
    for (extra, field) in cases {
        let toml = match extra.starts_with("[topology]") {
            true => extra.to_string(),
            false => format!("{base}{extra}"),
        };
        let (ok, err) = common::weft_run_with(&toml, &[("sizes.csv", CDF)]);
        assert!(!ok && err.contains(field), "{field}: {err}");
        assert_eq!(err.trim().lines().count(), 1, "{err}");
    }
}
