//! benches/scaling_model.py (python3 stdlib): its fit recovers known parameters from
//! synthetic summaries built by hand from them, and it refuses a missing file with one line.
use serde_json::{json, Value};
use std::path::Path;
use std::process::Command;

const W: f64 = 1000.0; // windows of every synthetic run
                       // The parameters the synthetic runs are built from (s, per event / window / byte / message).
const S_EV: f64 = 100e-9;
const C_WIN: f64 = 2e-6;
const ALPHA: f64 = 1e-6;
const BETA: f64 = 3e-6;
const EPS: f64 = 2e-9;
const GAMMA: f64 = 5e-6;
const DELTA: f64 = 1e-9;
const IOTA: f64 = 50e-9;
const C_SYNC: f64 = 0.5e-6;

/// One rank's entry; `slowest` ranks carry the model's costs exactly, the others a reduce
/// that includes waiting (which the fit must ignore).
fn rank(r: usize, ranks: u32, events: u64, remote_events: u64, slowest: bool) -> Value {
    let remote_bytes = remote_events * 50;
    let process = S_EV * events as f64 + C_WIN * W;
    let reduce = if slowest {
        W * (ALPHA + BETA * (ranks as f64).log2())
    } else {
        0.02
    };
    let encode = EPS * remote_bytes as f64;
    let neighbours = ranks as f64 - 1.0;
    let exchange = if ranks > 1 {
        W * GAMMA * neighbours + DELTA * remote_bytes as f64
    } else {
        0.0
    };
    let other = IOTA * remote_events as f64 + C_SYNC * W;
    json!({
        "rank": r, "events": events, "process_wall_s": process, "reduce_wall_s": reduce,
        "encode_wall_s": encode, "exchange_wall_s": exchange,
        "sync_wall_s": reduce + encode + exchange + other,
        "remote_events": remote_events, "remote_bytes": remote_bytes,
    })
}

fn summary(ranks: u32, per_rank: Vec<Value>) -> Value {
    let events: u64 = per_rank.iter().map(|p| p["events"].as_u64().unwrap()).sum();
    // Partitions = ranks: every event crossing a partition goes to another rank.
    let crossed: u64 = per_rank
        .iter()
        .map(|p| p["remote_events"].as_u64().unwrap())
        .sum();
    json!({
        "scenario": {},
        "results": { "events": events },
        "run": { "wall_s": 1.0, "setup_wall_s": 0.0, "ranks": ranks, "threads": 1,
                 "partitions": ranks, "cut_links": 100 * (ranks - 1), "windows": W as u64,
                 "cross_partition_events": crossed,
                 "per_rank": per_rank },
    })
}

fn model(args: &[&str]) -> std::process::Output {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("benches/scaling_model.py");
    Command::new("python3")
        .arg(script)
        .args(args)
        .output()
        .expect("python3 runs (CI installs it)")
}

#[test]
fn fit_recovers_known_parameters() {
    let dir = tempfile::tempdir().unwrap();
    let runs = [
        summary(1, vec![rank(0, 1, 1_000_000, 0, true)]),
        summary(
            2,
            vec![
                rank(0, 2, 600_000, 20_000, true),
                rank(1, 2, 400_000, 20_000, false),
            ],
        ),
        summary(
            4,
            vec![
                rank(0, 4, 233_334, 30_000, false),
                rank(1, 4, 300_000, 30_000, true),
                rank(2, 4, 233_333, 30_000, false),
                rank(3, 4, 233_333, 30_000, false),
            ],
        ),
    ];
    let mut args: Vec<String> = vec![];
    for (i, r) in runs.iter().enumerate() {
        let p = dir.path().join(format!("r{i}.json"));
        std::fs::write(&p, r.to_string()).unwrap();
        args.push(p.display().to_string());
    }
    let fit = dir.path().join("fit.json");
    let csv = dir.path().join("model.csv");
    args.extend(
        [
            "--cores",
            "4",
            "--fit-json",
            fit.to_str().unwrap(),
            "--out",
            csv.to_str().unwrap(),
        ]
        .map(String::from),
    );
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let o = model(&args);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let p: Value = serde_json::from_str(&std::fs::read_to_string(&fit).unwrap()).unwrap();
    for (key, want) in [
        ("s_ev", S_EV),
        ("c_win", C_WIN),
        ("alpha", ALPHA),
        ("beta", BETA),
        ("eps", EPS),
        ("gamma", GAMMA),
        ("delta", DELTA),
        ("iota", IOTA),
        ("c_sync", C_SYNC),
    ] {
        let got = p[key].as_f64().unwrap();
        assert!(
            (got - want).abs() <= 1e-6 * want,
            "{key}: fitted {got}, built from {want}"
        );
    }
    // 50 bytes per remote event; 20,000 (2 ranks: 40,000 over 100 cut links) and 30,000
    // (4 ranks: 120,000 over 300 cut links) remote events per rank: lambda = (0.4 + 0.4) / 2.
    assert!((p["bytes_per_remote_event"].as_f64().unwrap() - 50.0).abs() < 1e-9);
    assert!((p["lambda"].as_f64().unwrap() - 0.4).abs() < 1e-9);
    // The projection at 1 rank is the 1-rank run's cost: 0.1 + 0.002 (process) + 0.001
    // (allreduce alpha) + 0.0005 (per-window rest) = 0.1035 s.
    let text = std::fs::read_to_string(&csv).unwrap();
    let one = text.lines().nth(1).unwrap();
    assert!(one.starts_with("1,0.1035,1.00,1.000,"), "{one}");
}

#[test]
fn missing_file_is_refused_in_one_line() {
    let o = model(&["/nonexistent/summary.json"]);
    assert_eq!(o.status.code(), Some(1));
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.contains("/nonexistent/summary.json: no such file"),
        "{err}"
    );
}
