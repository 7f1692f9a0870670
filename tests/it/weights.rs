//! Balanced plans from measured work: `weft run --out` writes every node's event count
//! (`node_events.csv`), `weft partition --weights` balances partitions by them, the plan runs
//! to the same results, and bad weight files get one line naming the file and line.

use std::path::Path;
use std::process::Command;

fn weft(dir: &Path, args: &[&str]) -> (bool, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_weft"))
        .args(args)
        .current_dir(dir)
        .output()
        .unwrap();
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// A ring over the first 24 hosts of a k = 8 fat tree: all the work sits in pod 0 and half
/// of pod 1 (6 of the 32 edge switches) and the switches above them.
const SKEWED: &str = "seed = 1\n[topology]\nkind = \"fat_tree\"\nk = 8\n[workload]\nkind = \"ring\"\nmessage_bytes = 1048576\nhosts = [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23]\n";

/// `weft partition s.toml --parts 4 --weights FILE -o p.plan` in `d`.
fn partition_with(d: &Path, weights: &str) -> (bool, String, String) {
    let args = ["partition", "s.toml", "--parts", "4", "--weights", weights];
    weft(d, &[&args[..], &["-o", "p.plan"]].concat())
}

fn results(json: &str) -> serde_json::Value {
    serde_json::from_str::<serde_json::Value>(json).unwrap()["results"].clone()
}

#[test]
fn weights_from_a_run_balance_the_plan_and_keep_the_results() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::write(d.join("s.toml"), SKEWED).unwrap();
    let (ok, out, err) = weft(d, &["run", "s.toml", "--out", "o", "--json"]);
    assert!(ok, "{err}");
    let reference = results(&out);
    let events = reference["events"].as_u64().unwrap();
    let csv = std::fs::read_to_string(d.join("o/node_events.csv")).unwrap();
    let counts: Vec<u64> = csv
        .lines()
        .filter(|l| !l.starts_with('#') && *l != "node,events")
        .map(|l| l.split_once(',').unwrap().1.parse().unwrap())
        .collect();
    // k = 8: 128 hosts, 80 switches; every event counted at exactly one node.
    assert_eq!(counts.len(), 208);
    assert_eq!(counts.iter().sum::<u64>(), events);
    assert!(
        counts[100..128].iter().all(|&c| c == 0),
        "hosts outside the ring are idle"
    );

    let (ok, auto, err) = weft(
        d,
        &[
            "partition",
            "s.toml",
            "--parts",
            "8",
            "--ranks",
            "2",
            "-o",
            "a.plan",
        ],
    );
    assert!(ok, "{err}");
    assert!(!auto.contains("event imbalance"));
    let (ok, out, err) = weft(
        d,
        &[
            "partition",
            "s.toml",
            "--parts",
            "8",
            "--ranks",
            "2",
            "--weights",
            "o/node_events.csv",
            "-o",
            "w.plan",
        ],
    );
    assert!(ok, "{err}");
    let imbalance = |tag: &str| -> f64 {
        let line = out.lines().find(|l| l.contains(tag)).expect(tag);
        line.split_whitespace()
            .find_map(|w| w.parse::<f64>().ok())
            .expect("a number")
    };
    let (automatic, weighted) = (imbalance("automatic plan"), imbalance("expected event"));
    assert!(
        weighted < 0.5 * automatic && weighted < 2.0,
        "weighted {weighted} vs automatic {automatic}"
    );
    // A plan for two ranks runs on one rank only as a plan error; rewrite it for one.
    let (ok, _, err) = weft(
        d,
        &[
            "partition",
            "s.toml",
            "--parts",
            "8",
            "--weights",
            "o/node_events.csv",
            "-o",
            "w1.plan",
        ],
    );
    assert!(ok, "{err}");
    let (ok, out, err) = weft(
        d,
        &[
            "run",
            "s.toml",
            "--partition",
            "w1.plan",
            "--threads",
            "2",
            "--json",
        ],
    );
    assert!(ok, "{err}");
    assert_eq!(results(&out), reference);
}

#[test]
fn bad_weight_files_get_one_line_naming_the_file_and_line() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::write(d.join("s.toml"), SKEWED).unwrap();
    for (text, want) in [
        ("node,events\n0,5\n1,x\n", "w.csv:3"),
        ("node,events\n0,5\n999,1\n", "w.csv:3"),
        ("node,events\n0,5\n0,6\n", "w.csv:3"),
        ("node,events\n0;5\n", "w.csv:2"),
        (
            "# weft node events: nodes=80\nnode,events\n0,5\n",
            "w.csv:1",
        ),
        ("node,events\n", "no node counts"),
    ] {
        std::fs::write(d.join("w.csv"), text).unwrap();
        let (ok, _, err) = partition_with(d, "w.csv");
        let line = err.trim_end();
        assert!(
            !ok && !line.contains('\n') && line.contains(want),
            "{text:?}: {err}"
        );
        assert!(line.contains("--weights"), "{err}");
    }
    let (ok, _, err) = partition_with(d, "missing.csv");
    assert!(
        !ok && err.contains("missing.csv") && !err.contains("panicked"),
        "{err}"
    );
}
