//! `weft moe-trace`: the real binary writes a trace that the library reads back, and a bad
//! flag stops it with one `error:` line naming the flag.

use std::process::Command;
use weft::workload::moe_trace::{read_csv, IMBALANCE_TOLERANCE};

fn weft(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_weft"))
        .args(args)
        .output()
        .expect("run weft")
}

#[test]
fn moe_trace_writes_a_file_that_reads_back() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("moe.csv");
    let out = weft(&[
        "moe-trace",
        "--gpus",
        "16",
        "--experts",
        "64",
        "--top-k",
        "4",
        "--tokens-per-gpu",
        "2000",
        "--imbalance",
        "1.3",
        "--eplb",
        "-o",
        path.to_str().unwrap(),
    ]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(
        stderr.contains("imbalance ") && stderr.contains("MB per GPU"),
        "{stderr}"
    );
    let text = std::fs::read_to_string(&path).unwrap();
    assert!(
        text.starts_with("# weft moe-trace --gpus 16 "),
        "the first line is the command: {text:.80}"
    );
    let t = read_csv(&path, 16).unwrap();
    assert!((t.imbalance_before_eplb - 1.3).abs() <= IMBALANCE_TOLERANCE);
    assert!(t.imbalance < t.imbalance_before_eplb);
    assert!(t.total_tokens() > 0);
    assert!(t.params_comment.contains("eplb=true redundant_experts=16"));
    // 2 servers of 8: hierarchical dispatch only crosses between equal local ranks.
    for i in 0..16 {
        for j in 0..16 {
            if i % 8 != j % 8 || i / 8 == j / 8 {
                assert_eq!(t.tokens[i * 16 + j], 0, "{i} -> {j}");
            }
        }
    }
    let wrong = read_csv(&path, 32).err().unwrap().to_string();
    assert!(
        wrong.contains("the trace has 16 GPUs, the scenario's ep_size is 32"),
        "{wrong}"
    );
}

#[test]
fn moe_trace_bad_flag_is_one_error_line() {
    let out = weft(&[
        "moe-trace",
        "--gpus",
        "16",
        "--experts",
        "100",
        "--tokens-per-gpu",
        "10",
    ]);
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(
        stderr.starts_with("error: --experts: must be a positive multiple of gpus (16)"),
        "{stderr}"
    );
    assert!(out.stdout.is_empty());
}
