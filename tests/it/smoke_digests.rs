//! The `results` of every shipped scenario's smoke run (its first 20 µs of simulated time, two
//! threads) are byte-identical to the committed digests in `tests/data/smoke_digests.txt`,
//! which were made before the refactors they guard (the policy registry, issue 26), so a
//! change meant to keep results cannot move any of them unnoticed. A change that means to move
//! results regenerates the file, and its commit says why:
//!
//! `WEFT_WRITE_SMOKE_DIGESTS=1 cargo test --release --test it -- smoke_digests::`
//!
//! Regenerated once since the refactors: for the new `results.utilization_peak` (2026-12-06;
//! checked before, the digests of `results` without that key were the committed ones).
//!
//! (`WEFT_SMOKE_BIN=PATH` runs another `weft` binary, e.g. the parent commit's, to write
//! digests before a change.) Four scenarios are left out: building their 65,536-host fabrics
//! and schedules alone takes 10-20 s each here, and their policies, CCAs and workloads run
//! in the other scenarios at smaller sizes.

use super::scenarios::toml_files;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

const DIGESTS: &str = "tests/data/smoke_digests.txt";

/// Too large to build in a test (see the module comment).
const LEFT_OUT: [&str; 4] = [
    "scenarios/ai/llama3_405b_fsdp2_65k_ring.toml",
    "scenarios/ai/moe_qwen3_65k.toml",
    "scenarios/fat_tree_k64.toml",
    "scenarios/opera/opera_k64.toml",
];

/// FNV-1a, 64 bits: a stable digest with no dependency.
fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, &b| {
        (h ^ b as u64).wrapping_mul(0x0100_0000_01b3)
    })
}

/// The digest of `results` of one smoke run of `path` (relative to the repository root).
fn smoke_digest(bin: &Path, path: &str) -> String {
    let out = Command::new(bin)
        .args([
            "run",
            path,
            "--set",
            "end_us=20",
            "--threads",
            "2",
            "--json",
        ])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{path}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let results = serde_json::to_string(&v["results"]).unwrap();
    assert!(results.len() > 100, "{path}: no results in {results}");
    format!("{:016x}", fnv1a(results.as_bytes()))
}

fn shipped() -> Vec<String> {
    let mut files: Vec<PathBuf> = Vec::new();
    toml_files(Path::new("scenarios"), &mut files);
    let mut names: Vec<String> = files
        .iter()
        .map(|p| p.to_string_lossy().into_owned())
        .filter(|p| !LEFT_OUT.contains(&p.as_str()))
        .collect();
    names.sort();
    names
}

#[test]
fn every_shipped_scenario_gives_its_committed_smoke_results() {
    let bin = std::env::var_os("WEFT_SMOKE_BIN")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_BIN_EXE_weft")));
    let got: BTreeMap<String, String> = shipped()
        .into_iter()
        .map(|p| {
            let d = smoke_digest(&bin, &p);
            (p, d)
        })
        .collect();
    if std::env::var_os("WEFT_WRITE_SMOKE_DIGESTS").is_some() {
        let text: String = got.iter().map(|(p, d)| format!("{p} {d}\n")).collect();
        std::fs::write(DIGESTS, text).unwrap();
        return;
    }
    let want: BTreeMap<String, String> = std::fs::read_to_string(DIGESTS)
        .unwrap()
        .lines()
        .map(|l| {
            let (p, d) = l.split_once(' ').expect("`path digest` lines");
            (p.to_string(), d.to_string())
        })
        .collect();
    let moved: Vec<String> = got
        .iter()
        .filter(|(p, d)| want.get(*p) != Some(*d))
        .map(|(p, d)| format!("{p}: {d}, committed {:?}", want.get(p)))
        .collect();
    assert!(
        moved.is_empty(),
        "smoke results moved:\n{}",
        moved.join("\n")
    );
    let gone: Vec<&String> = want.keys().filter(|p| !got.contains_key(*p)).collect();
    assert!(
        gone.is_empty(),
        "committed scenarios no longer shipped: {gone:?}"
    );
}

/// The digest sees a one-byte change and is the published FNV-1a value.
#[test]
fn the_digest_is_fnv1a() {
    assert_eq!(fnv1a(b""), 0xcbf2_9ce4_8422_2325);
    assert_eq!(fnv1a(b"a"), 0xaf63_dc4c_8601_ec8c);
    assert_ne!(fnv1a(b"results 1"), fnv1a(b"results 2"));
}
