//! Opera on the packet simulator (`topology.kind = "opera"`): label routing keeps packets on
//! circuits that stay up, dark uplinks clip what they hold, runs complete and conserve
//! packets, and results are identical for any split.

use crate::common::weft_run;
use weft::report::Summary;
use weft::scenario::{CcKind, LbPolicy, Scenario};
use weft::sim::{simulate, RunOptions};

const SMALL: &str = include_str!("../data/opera_small.toml");

fn small() -> Scenario {
    let s: Scenario = toml::from_str(SMALL).unwrap();
    s.validate().unwrap();
    s
}

/// (results, latency.hlog bytes) of a run.
fn run(s: &Scenario, threads: usize, partitions: u32) -> (serde_json::Value, Vec<u8>) {
    let o = simulate(
        s,
        &RunOptions {
            threads,
            partitions: Some(partitions),
            ..RunOptions::default()
        },
    )
    .expect("run succeeds");
    let mut hlog = Vec::new();
    weft::report::write_run_hlog(&mut hlog, &o).unwrap();
    (Summary::new(&o, serde_json::Value::Null).results, hlog)
}

/// Shallow (trimming) queues keep every packet within its slice's ε: no packet leaves on a
/// circuit other than its label planned, none is clipped, and every flow completes.
#[test]
fn shallow_queues_keep_packets_on_their_planned_circuits() {
    let (r, _) = run(&small(), 1, 1);
    assert_eq!(r["flows"]["incomplete"], 0, "{r}");
    assert_eq!(r["opera"]["late"], 0);
    assert_eq!(r["opera"]["clipped"], 0);
    assert_eq!(r["packets"]["dropped"], 0);
    // 12 racks over 3 stable rotors per slice: paths of 1 to 4 rotor hops, mean above 1.
    let tax = r["bandwidth_tax"].as_f64().unwrap();
    let mean = r["opera"]["mean_hops"].as_f64().unwrap();
    assert!(
        tax > 1.0 && tax <= r["opera"]["worst_hops"].as_f64().unwrap(),
        "{tax}"
    );
    assert!(mean > 1.0, "{mean}");
}

/// Deep queues and no congestion control hold packets past their slice: the late ones are
/// counted, those reaching a dark uplink are clipped (and counted as drops), and packet
/// conservation still holds (the run checks it).
#[test]
fn deep_queues_make_late_and_clipped_packets_that_are_counted() {
    let mut s = small();
    s.host.cc = CcKind::None;
    s.switch.trim = false;
    s.switch.buffer_bytes = weft::scenario::BufferBytes::Unlimited;
    s.switch.ecn_threshold_bytes = 80_000;
    s.validate().unwrap();
    let (r, _) = run(&s, 1, 1);
    let late = r["opera"]["late"].as_u64().unwrap();
    let clipped = r["opera"]["clipped"].as_u64().unwrap();
    assert!(late > 0 && clipped > 0, "late {late}, clipped {clipped}");
    assert!(clipped <= late, "a clipped packet is also late");
    assert_eq!(r["packets"]["dropped"].as_u64().unwrap(), clipped);
}

#[test]
fn results_are_identical_for_any_threads_and_partitions() {
    let s = small();
    let reference = run(&s, 1, 1);
    for (threads, parts) in [(1, 3), (2, 4), (2, 12)] {
        assert!(
            run(&s, threads, parts) == reference,
            "{threads} threads, {parts} partitions"
        );
    }
    let mut s = s;
    s.lb.policy = LbPolicy::Ecmp;
    s.host.cc = CcKind::Dctcp;
    s.validate().unwrap();
    let reference = run(&s, 1, 1);
    assert!(run(&s, 2, 6) == reference, "ecmp + dctcp");
}

#[test]
fn bad_opera_input_names_the_field() {
    let cases = [
        ("racks = 12", "racks = 10", "topology.racks"),
        (
            "epsilon_ns = 20000",
            "epsilon_ns = 0",
            "topology.opera.epsilon_ns",
        ),
        (
            "epsilon_ns = 20000",
            "slice_ns = 1500",
            "topology.opera.reconfig_ns",
        ),
        (
            "epsilon_ns = 20000",
            "slice_ns = 3000",
            "topology.opera.delta_ns",
        ),
        (
            "epsilon_ns = 20000",
            "epsilon_ns = 20000\nslice_ns = 30000",
            "topology.opera.slice_ns",
        ),
        ("policy = \"rps\"", "policy = \"ofan\"", "lb.policy"),
        ("uplinks = 4", "uplinks = 65", "topology.uplinks"),
        ("kind = \"opera\"", "kind = \"fat_tree\"", "topology.racks"),
        (
            "realizations = 20",
            "realizations = 1\ngroups = 3",
            "topology.opera.groups",
        ),
    ];
    for (from, to, field) in cases {
        assert!(SMALL.contains(from), "{from}");
        let (ok, err) = weft_run(&SMALL.replacen(from, to, 1));
        assert!(!ok, "{to}: accepted");
        let lines: Vec<_> = err.lines().filter(|l| l.starts_with("error")).collect();
        assert_eq!(lines.len(), 1, "{to}: {err}");
        assert!(lines[0].contains(field), "{to}: {err}");
    }
}

/// The scaling workloads run on Opera: hot rack (one rack's hosts to another's), skew (a
/// permutation among the active racks) and the host permutation (no rack-local pair).
#[test]
fn hot_rack_skew_and_host_permutation_complete_on_opera() {
    for (kind, extra, flows) in [
        ("hot_rack", "", 2),
        ("skew", "active_racks = 0.5", 12),
        ("permutation", "inter_rack = true", 24),
    ] {
        let text = SMALL
            .replace("kind = \"permutation\"", &format!("kind = \"{kind}\""))
            .replace(
                "message_bytes = 200000",
                &format!("message_bytes = 200000\n{extra}"),
            );
        let s: Scenario = toml::from_str(&text).unwrap();
        s.validate().unwrap();
        let (r, _) = run(&s, 1, 1);
        assert_eq!(r["flows"]["total"], flows, "{kind}");
        assert_eq!(r["flows"]["incomplete"], 0, "{kind}");
    }
}

/// `weft opera-faults`: no failure keeps every pair connected; every rotor failed leaves
/// none; bad shares and non-Opera scenarios get one error line.
#[test]
fn opera_faults_reports_connectivity_and_refuses_bad_input() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s.toml");
    std::fs::write(&path, SMALL).unwrap();
    let weft = |args: &[&str]| {
        std::process::Command::new(env!("CARGO_BIN_EXE_weft"))
            .arg("opera-faults")
            .arg(&path)
            .args(args)
            .output()
            .unwrap()
    };
    let o = weft(&["--rotors", "0,1", "--draws", "2", "--json"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v[0]["worst_superslice"], 1.0);
    assert_eq!(v[0]["draws_disconnected"], 0);
    assert_eq!(v[1]["worst_superslice"], 0.0);
    assert_eq!(v[1]["draws_disconnected"], 2);
    let o = weft(&["--links", "1.5"]);
    assert!(!o.status.success());
    assert!(String::from_utf8_lossy(&o.stderr).contains("--links"));
    std::fs::write(&path, "[topology]\nk = 4\n").unwrap();
    let o = weft(&[]);
    assert!(!o.status.success());
    assert!(String::from_utf8_lossy(&o.stderr).contains("topology.kind"));
}
