//! Every scenario shipped in scenarios/ is valid, and the congestion-control ones run to
//! completion (shrunk to a k = 4 fat tree so that the test stays short).

use std::path::{Path, PathBuf};
use std::process::Command;

pub(crate) fn toml_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        // Sweep files are not scenarios; tests/it/sweep.rs checks them.
        if p.ends_with("sweeps") || p.ends_with("reproduce") {
            continue;
        }
        if p.is_dir() {
            toml_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "toml") {
            out.push(p);
        }
    }
}

fn weft(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_weft"))
        .args(args)
        .output()
        .unwrap()
}

#[test]
fn every_shipped_scenario_validates() {
    let mut files = vec![];
    toml_files(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios"),
        &mut files,
    );
    assert!(files.len() >= 21, "found {files:?}");
    for f in files {
        let o = weft(&["validate", f.to_str().unwrap()]);
        assert!(
            o.status.success(),
            "{}: {}",
            f.display(),
            String::from_utf8_lossy(&o.stderr)
        );
    }
}

#[test]
fn the_congestion_control_scenarios_complete_on_a_small_tree() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios/ofan/cc");
    for cc in ["dctcp", "nscc", "mswift"] {
        for lb in ["rps", "ofan", "reps", "ar"] {
            let f = dir.join(format!("{cc}_{lb}.toml"));
            let o = weft(&[
                "run",
                f.to_str().unwrap(),
                "--set",
                "topology.k=4",
                "--set",
                "workload.message_bytes=524288",
                "--json",
            ]);
            assert!(
                o.status.success(),
                "{cc}_{lb}: {}",
                String::from_utf8_lossy(&o.stderr)
            );
            let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
            let r = &v["results"];
            assert_eq!(r["flows"]["incomplete"], 0, "{cc}_{lb}");
            assert_eq!(v["scenario"]["host"]["cc"], cc);
            assert!(
                r["cct_increase"].as_f64().unwrap() >= 0.0,
                "{cc}_{lb} beats its bound"
            );
        }
    }
}
