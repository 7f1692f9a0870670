//! Bad input for the poisson and shuffle workloads and the FCT size bins stops the real
//! `weft` binary with one `error:` line naming the field, or the CDF file and its line.

use std::path::Path;
use std::process::{Command, Output};

const POISSON: &str = r#"
seed = 1

[topology]
kind = "fat_tree"
k = 4

[workload]
kind = "poisson"
size_cdf = "sizes.csv"
load = 0.2
duration_us = 5
"#;

const GOOD_CDF: &str = "bytes,cdf\n1000,0.5\n20000,1\n";

fn weft_in(files: &[(&str, &str)], extra: &[&str]) -> (tempfile::TempDir, Output) {
    let dir = tempfile::tempdir().unwrap();
    for (name, text) in files {
        std::fs::write(dir.path().join(name), text).unwrap();
    }
    let out = weft(dir.path(), extra);
    (dir, out)
}

fn weft(dir: &Path, extra: &[&str]) -> Output {
    let mut args = vec!["run", "s.toml"];
    args.extend_from_slice(extra);
    Command::new(env!("CARGO_BIN_EXE_weft"))
        .args(args)
        .current_dir(dir)
        .output()
        .unwrap()
}

/// Exit code 1, one `error:` line with every needle, no panic.
fn fails(case: &str, toml: &str, cdf: &str, extra: &[&str], needles: &[&str]) {
    let (_dir, out) = weft_in(&[("s.toml", toml), ("sizes.csv", cdf)], extra);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{case}: {stderr}");
    assert!(!stderr.contains("panicked"), "{case}: {stderr}");
    assert_eq!(stderr.lines().count(), 1, "{case}: {stderr}");
    assert!(stderr.starts_with("error:"), "{case}: {stderr}");
    for n in needles {
        assert!(stderr.contains(n), "{case}: no {n:?} in {stderr}");
    }
}

#[test]
fn good_poisson_scenario_runs() {
    let (_dir, out) = weft_in(&[("s.toml", POISSON), ("sizes.csv", GOOD_CDF)], &[]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn bad_cdf_files_name_the_file_and_line() {
    let cases = [
        ("bytes,cdf\n1000,0.5\n900,1\n", "sizes.csv:3:", "increase"),
        (
            "bytes,cdf\n1000,0.5\n2000,0.4\n3000,1\n",
            "sizes.csv:3:",
            "decreases",
        ),
        ("bytes,cdf\n1000,1.5\n", "sizes.csv:2:", "outside [0, 1]"),
        (
            "bytes,cdf\n1000,0.5\n2000,0.9\n",
            "sizes.csv:3:",
            "end at 1",
        ),
        (
            "bytes,cdf\n1000,0.5\n2000,one\n",
            "sizes.csv:3:",
            "not a number",
        ),
    ];
    for (cdf, at, what) in cases {
        fails(cdf, POISSON, cdf, &[], &[at, what]);
    }
    let missing = POISSON.replace("sizes.csv", "nope.csv");
    fails(
        "missing",
        &missing,
        GOOD_CDF,
        &[],
        &["workload.size_cdf", "nope.csv"],
    );
}

#[test]
fn bad_fields_are_named() {
    let cases: [(&[&str], &[&str]); 8] = [
        (&["--set", "workload.load=0"], &["workload.load", "(0, 1]"]),
        (&["--set", "workload.load=1.5"], &["workload.load"]),
        (
            &["--set", "workload.duration_us=-1"],
            &["workload.duration_us"],
        ),
        (
            &["--set", "workload.stagger_us=3"],
            &["workload.stagger_us", "shuffle"],
        ),
        (
            &["--set", "workload.kind=\"permutation\""],
            &["workload.", "only used"],
        ),
        (
            &["--set", "report.fct_bins_bytes=[1000, 100]"],
            &["report.fct_bins_bytes", "increase"],
        ),
        (
            &["--set", "report.fct_bins_bytes=[10.5]"],
            &["report.fct_bins_bytes"],
        ),
        (
            &["--set", "workload.inter_pod=true"],
            &["workload.inter_pod"],
        ),
    ];
    for (extra, needles) in cases {
        fails(&format!("{extra:?}"), POISSON, GOOD_CDF, extra, needles);
    }
    let no_cdf = POISSON.replace("size_cdf = \"sizes.csv\"\n", "");
    fails(
        "no cdf",
        &no_cdf,
        GOOD_CDF,
        &[],
        &["workload.size_cdf", "required"],
    );
    let no_load = POISSON.replace("load = 0.2\n", "");
    fails(
        "no load",
        &no_load,
        GOOD_CDF,
        &[],
        &["workload.load", "required"],
    );
    let shuffle = "seed = 1\n[topology]\nkind = \"fat_tree\"\nk = 4\n[workload]\nkind = \"shuffle\"\nmessage_bytes = 1000\n";
    fails(
        "shuffle cdf",
        shuffle,
        GOOD_CDF,
        &["--set", "workload.size_cdf=\"sizes.csv\""],
        &["workload.size_cdf", "poisson"],
    );
    fails(
        "shuffle stagger",
        shuffle,
        GOOD_CDF,
        &["--set", "workload.stagger_us=-1"],
        &["workload.stagger_us"],
    );
    fails(
        "shuffle load",
        shuffle,
        GOOD_CDF,
        &["--set", "workload.load=0.5"],
        &["workload.load"],
    );
}
