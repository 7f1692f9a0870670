//! Bad input stops the real `weft` binary cleanly: a non-zero exit code and exactly one
//! non-empty stderr line starting with `error:` that names the field or file concerned, never
//! a panic. Each case runs a tiny scenario (k = 4 fat tree, 8 KiB messages) in a temp folder.

use std::path::Path;
use std::process::{Command, Output};
use tempfile::TempDir;

/// A scenario that runs in milliseconds: 16 hosts, 20 switches.
const GOOD: &str = r#"
seed = 1

[topology]
kind = "fat_tree"
k = 4

[workload]
kind = "permutation"
message_bytes = 8192
"#;

/// A valid connection matrix for the 16 hosts of `GOOD`.
const GOOD_MATRIX: &str =
    "Nodes 16\nConnections 2\n0->5 id 1 start 0 size 8192\n3->2 id 2 start 1000 size 4096\n";

/// Writes `files` (name, contents) into a fresh temp folder.
fn dir_with(files: &[(&str, &str)]) -> TempDir {
    let dir = tempfile::tempdir().expect("temp dir");
    for (name, text) in files {
        std::fs::write(dir.path().join(name), text).expect("write test file");
    }
    dir
}

/// Runs `weft ARGS` in `dir`.
fn weft(dir: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_weft"))
        .args(args)
        .current_dir(dir)
        .output()
        .expect("run weft")
}

/// Asserts a clean failure: non-zero exit (not a signal), stderr exactly one non-empty line
/// starting with `error:`, containing every needle, and no panic. Returns that line.
fn assert_fails(case: &str, out: &Output, needles: &[&str]) -> String {
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let ctx = format!(
        "case {case}: status {:?}\nstderr:\n{stderr}\nstdout:\n{stdout}",
        out.status
    );
    assert!(!stderr.contains("panicked"), "{ctx}");
    assert!(!stderr.contains("RUST_BACKTRACE"), "{ctx}");
    match out.status.code() {
        Some(0) => panic!("exit code 0 on bad input; {ctx}"),
        Some(_) => {}
        None => panic!("killed by a signal; {ctx}"),
    }
    let line = stderr
        .strip_suffix('\n')
        .unwrap_or_else(|| panic!("stderr does not end with a newline; {ctx}"));
    assert!(
        !line.contains('\n') && !line.contains('\r'),
        "stderr is more than one line; {ctx}"
    );
    assert!(
        line.starts_with("error:"),
        "stderr does not start with `error:`; {ctx}"
    );
    assert!(line.len() > "error: ".len(), "empty error message; {ctx}");
    for n in needles {
        assert!(line.contains(n), "stderr does not mention {n:?}; {ctx}");
    }
    line.to_string()
}

/// `weft run s.toml EXTRA...` on scenario `toml` (plus `files`) must fail naming `needles`.
fn run_fails(case: &str, toml: &str, files: &[(&str, &str)], extra: &[&str], needles: &[&str]) {
    let mut all = vec![("s.toml", toml)];
    all.extend_from_slice(files);
    let dir = dir_with(&all);
    let mut args = vec!["run", "s.toml"];
    args.extend_from_slice(extra);
    assert_fails(case, &weft(dir.path(), &args), needles);
}

/// `GOOD` plus `section` appended (later TOML tables may not repeat earlier ones, so sections
/// used here are ones `GOOD` does not have).
fn good_plus(section: &str) -> String {
    format!("{GOOD}\n{section}\n")
}

/// `GOOD` with `[topology]` keys replaced by `topology` (kind and k kept unless given).
fn with_topology(topology: &str) -> String {
    format!(
        "seed = 1\n\n[topology]\nkind = \"fat_tree\"\n{topology}\n\n[workload]\nkind = \"permutation\"\nmessage_bytes = 8192\n"
    )
}

// ---- The baseline is good, so every failure below is caused by what each case changes. ----

#[test]
fn good_scenario_runs() {
    let dir = dir_with(&[("s.toml", GOOD)]);
    let out = weft(dir.path(), &["run", "s.toml"]);
    assert!(
        out.status.success(),
        "good scenario failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(String::from_utf8_lossy(&out.stdout).contains("16 hosts"));
}

#[test]
fn good_matrix_scenario_runs() {
    let toml = GOOD.replace(
        "kind = \"permutation\"\nmessage_bytes = 8192",
        "kind = \"matrix\"\nfile = \"m.txt\"",
    );
    let dir = dir_with(&[("s.toml", &toml), ("m.txt", GOOD_MATRIX)]);
    let out = weft(dir.path(), &["run", "s.toml"]);
    assert!(
        out.status.success(),
        "good matrix scenario failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

// ---- Files and TOML syntax ----

#[test]
fn missing_scenario_file() {
    let dir = dir_with(&[]);
    let out = weft(dir.path(), &["run", "nope.toml"]);
    assert_fails("missing file", &out, &["nope.toml", "cannot read"]);
}

#[test]
fn scenario_path_is_a_folder() {
    let dir = dir_with(&[]);
    std::fs::create_dir(dir.path().join("sub.toml")).unwrap();
    let out = weft(dir.path(), &["run", "sub.toml"]);
    assert_fails("folder", &out, &["sub.toml"]);
}

#[test]
fn malformed_toml_names_the_line() {
    // Unclosed table header on line 3 (the toml crate's message for it spans two lines).
    run_fails(
        "unclosed header",
        "seed = 1\n\n[topology\nk = 4\n",
        &[],
        &[],
        &["s.toml", "malformed TOML", "line 3"],
    );
    // An error at the very start of a line is on that line, not the one before.
    run_fails(
        "missing key",
        "seed = 1\n= 4\n",
        &[],
        &[],
        &["s.toml", "malformed TOML", "line 2"],
    );
    run_fails(
        "unterminated string",
        "seed = 1\n[workload]\nkind = \"perm\n",
        &[],
        &[],
        &["s.toml", "malformed TOML", "line 3"],
    );
    run_fails(
        "duplicate key",
        "[topology]\nk = 4\nk = 6\n",
        &[],
        &[],
        &["s.toml", "line 3", "duplicate key"],
    );
}

// ---- Unknown keys ----

#[test]
fn unknown_top_level_key() {
    run_fails(
        "top-level",
        &format!("seedz = 3\n{GOOD}"),
        &[],
        &[],
        &["s.toml", "seedz", "unknown field"],
    );
}

#[test]
fn unknown_nested_key() {
    run_fails(
        "nested",
        &with_topology("k = 4\nkk = 3"),
        &[],
        &[],
        &["s.toml", "topology.kk", "unknown field"],
    );
    run_fails(
        "unknown table",
        &good_plus("[routing]\nmode = 1"),
        &[],
        &[],
        &["s.toml", "routing"],
    );
}

#[test]
fn unknown_key_via_set() {
    run_fails(
        "--set unknown",
        GOOD,
        &[],
        &["--set", "topology.kk=3"],
        &["topology.kk", "unknown field", "--set topology.kk=3"],
    );
}

/// The per-policy settings' old flat names (`lb.ar_mode`, now `lb.ar.mode`) fail with one
/// line naming the new key: in a file, in a `--set`, in a sweep's grid (`tests/it/sweep.rs`).
#[test]
fn old_flat_lb_names_name_the_new_key() {
    for (old, new, table) in [
        (
            "ar_mode = \"flowlet\"",
            "lb.ar.mode",
            "([lb.ar] mode = ...)",
        ),
        (
            "psp_remote = true",
            "lb.psp.remote",
            "([lb.psp] remote = ...)",
        ),
        ("drill_d = 1", "lb.drill.d", "([lb.drill] d = ...)"),
    ] {
        let key = old.split(' ').next().unwrap();
        run_fails(
            &format!("file {key}"),
            &good_plus(&format!("[lb]\n{old}")),
            &[],
            &[],
            &[
                "s.toml",
                &format!("lb.{key} was renamed: use {new} {table}"),
            ],
        );
        let set = format!("lb.{}", old.replace(" = ", "="));
        run_fails(
            &format!("--set {key}"),
            GOOD,
            &[],
            &["--set", &set],
            &[
                &format!("--set {set}"),
                &format!("lb.{key} was renamed: use {new} {table}"),
            ],
        );
    }
    // The new names are accepted where the old were refused.
    let dir = dir_with(&[("s.toml", GOOD)]);
    let out = weft(
        dir.path(),
        &["validate", "s.toml", "--set", "lb.ar.mode=flowlet"],
    );
    assert!(out.status.success(), "{out:?}");
}

#[test]
fn set_without_equals() {
    run_fails(
        "--set no =",
        GOOD,
        &[],
        &["--set", "topology.k"],
        &["--set topology.k", "key=value"],
    );
}

#[test]
fn set_through_a_non_table() {
    run_fails(
        "--set into value",
        GOOD,
        &[],
        &["--set", "topology.k.x=1"],
        &["--set", "topology.k", "not a table"],
    );
}

#[test]
fn set_value_is_checked_like_the_file() {
    run_fails(
        "--set odd k",
        GOOD,
        &[],
        &["--set", "topology.k=5"],
        &["topology.k", "(got 5)", "--set topology.k=5"],
    );
}

// ---- Types and ranges ----

#[test]
fn wrong_type() {
    run_fails(
        "k string",
        &with_topology("k = \"x\""),
        &[],
        &[],
        &["s.toml", "topology.k", "invalid type"],
    );
    run_fails(
        "negative k",
        &with_topology("k = -4"),
        &[],
        &[],
        &["s.toml", "topology.k"],
    );
}

#[test]
fn k_out_of_range() {
    for (k, case) in [(5, "odd"), (2, "too small"), (66, "too big")] {
        run_fails(
            case,
            &with_topology(&format!("k = {k}")),
            &[],
            &[],
            &["s.toml", "topology.k", &format!("(got {k})")],
        );
    }
}

#[test]
fn bad_link_rate() {
    for (rate, case) in [
        ("0", "zero"),
        ("-100", "negative"),
        ("nan", "nan"),
        ("1e300", "huge"),
    ] {
        run_fails(
            case,
            &with_topology(&format!("k = 4\nlink_rate_gbps = {rate}")),
            &[],
            &[],
            &["s.toml", "topology.link_rate_gbps"],
        );
    }
}

#[test]
fn bad_link_latency() {
    for (lat, case) in [("-1", "negative"), ("inf", "infinite"), ("1e300", "huge")] {
        run_fails(
            case,
            &with_topology(&format!("k = 4\nlink_latency_ns = {lat}")),
            &[],
            &[],
            &["s.toml", "topology.link_latency_ns"],
        );
    }
}

#[test]
fn bad_tier_override() {
    run_fails(
        "unknown tier",
        &good_plus("[topology.tiers.spine_core]\nrate_gbps = 400"),
        &[],
        &[],
        &["s.toml", "topology.tiers.spine_core", "unknown tier"],
    );
    run_fails(
        "leaf-spine tier on a fat tree",
        &good_plus("[topology.tiers.leaf_spine]\nrate_gbps = 400"),
        &[],
        &[],
        &["s.toml", "topology.tiers.leaf_spine"],
    );
    run_fails(
        "zero tier rate",
        &good_plus("[topology.tiers.edge_agg]\nrate_gbps = 0"),
        &[],
        &[],
        &["s.toml", "topology.tiers.edge_agg.rate_gbps", "(got 0)"],
    );
    run_fails(
        "negative tier latency",
        &good_plus("[topology.tiers.agg_core]\nlatency_ns = -3"),
        &[],
        &[],
        &["s.toml", "topology.tiers.agg_core.latency_ns"],
    );
    run_fails(
        "unknown tier key",
        &good_plus("[topology.tiers.edge_agg]\nrate = 400"),
        &[],
        &[],
        &["s.toml", "topology.tiers.edge_agg.rate"],
    );
}

#[test]
fn bad_host_load() {
    for load in ["0", "1.5", "-0.1"] {
        run_fails(
            load,
            &good_plus(&format!("[host]\nload = {load}")),
            &[],
            &[],
            &["s.toml", "host.load", &format!("(got {load})")],
        );
    }
}

#[test]
fn bad_switch_buffer() {
    run_fails(
        "smaller than a packet",
        &good_plus("[switch]\nbuffer_bytes = 100"),
        &[],
        &[],
        &["s.toml", "switch.buffer_bytes", "100"],
    );
    run_fails(
        "a word",
        &good_plus("[switch]\nbuffer_bytes = \"lots\""),
        &[],
        &[],
        &["s.toml", "switch.buffer_bytes", "lots"],
    );
    run_fails(
        "negative",
        &good_plus("[switch]\nbuffer_bytes = -1"),
        &[],
        &[],
        &["s.toml", "switch.buffer_bytes"],
    );
}

#[test]
fn bad_shared_buffer() {
    let shared = "[switch]\nbuffer = \"shared\"\nbuffer_bytes = 100000\n";
    for alpha in ["0", "-1.5", "nan", "inf", "-inf"] {
        run_fails(
            &format!("alpha {alpha}"),
            &good_plus(&format!("{shared}shared_buffer_alpha = {alpha}")),
            &[],
            &[],
            &["s.toml", "switch.shared_buffer_alpha", "positive finite"],
        );
    }
    run_fails(
        "alpha from --set",
        &good_plus(shared),
        &[],
        &["--set", "switch.shared_buffer_alpha=0.0"],
        &["s.toml", "switch.shared_buffer_alpha", "--set"],
    );
    run_fails(
        "unknown buffer mode",
        &good_plus("[switch]\nbuffer = \"pooled\""),
        &[],
        &[],
        &["s.toml", "switch.buffer", "pooled", "per_port", "shared"],
    );
    for field in ["shared_buffer_bytes = 1000000", "shared_buffer_alpha = 2.0"] {
        let name = field.split(' ').next().unwrap();
        run_fails(
            &format!("{name} with per-port buffers"),
            &good_plus(&format!("[switch]\nbuffer_bytes = 100000\n{field}")),
            &[],
            &[],
            &["s.toml", &format!("switch.{name}"), "buffer = \"shared\""],
        );
    }
    run_fails(
        "shared without a finite buffer",
        &good_plus("[switch]\nbuffer = \"shared\""),
        &[],
        &[],
        &[
            "s.toml",
            "switch.shared_buffer_bytes",
            "switch.buffer_bytes",
        ],
    );
    run_fails(
        "pool smaller than a packet",
        &good_plus("[switch]\nbuffer = \"shared\"\nshared_buffer_bytes = 100"),
        &[],
        &[],
        &["s.toml", "switch.shared_buffer_bytes", "100"],
    );
    run_fails(
        "alpha too small for any packet",
        &good_plus(&format!("{shared}shared_buffer_alpha = 0.001")),
        &[],
        &[],
        &["switch.shared_buffer_alpha", "no packet could enter"],
    );
}

#[test]
fn bad_lb() {
    run_fails(
        "pipe_ports 0",
        &good_plus("[lb]\npipe_ports = 0"),
        &[],
        &[],
        &["s.toml", "lb.pipe_ports", "(got 0)"],
    );
    run_fails(
        "unknown policy",
        &good_plus("[lb]\npolicy = \"fastest\""),
        &[],
        &[],
        &["s.toml", "lb.policy", "fastest"],
    );
    run_fails(
        "unknown policy via --set",
        GOOD,
        &[],
        &["--set", "lb.policy=fastest"],
        &["lb.policy", "fastest"],
    );
}

#[test]
fn bad_reps() {
    // REPS runs paced (it learns from the paced transport's ACKs), but that transport cannot
    // recover trimmed packets: the refusal names the field.
    run_fails(
        "reps paced with trimming",
        &good_plus("[lb]\npolicy = \"reps\"\n[switch]\nbuffer_bytes = 800000\ntrim = true"),
        &[],
        &[],
        &["s.toml", "switch.trim", "host.cc"],
    );
    let reps = "[lb]\npolicy = \"reps\"\n[host]\ncc = \"nscc\"";
    for (case, set, needles) in [
        (
            "buffer 0",
            "lb.reps.buffer=0",
            &["lb.reps.buffer", "(got 0)"],
        ),
        (
            "buffer 17",
            "lb.reps.buffer=17",
            &["lb.reps.buffer", "1 to 16"],
        ),
        (
            "negative freeze",
            "lb.reps.freeze_us=-1",
            &["lb.reps.freeze_us", "(got -1)"],
        ),
        (
            "explore",
            "lb.reps.explore_pkts=70000",
            &["lb.reps.explore_pkts", "65535"],
        ),
        (
            "gate",
            "lb.reps.freeze_rtt_gate=0.5",
            &["lb.reps.freeze_rtt_gate", "(got 0.5)"],
        ),
    ] {
        run_fails(case, &good_plus(reps), &[], &["--set", set], needles);
    }
}

#[test]
fn bad_bitmap_mixed_and_ethereal() {
    let bitmap = "[lb]\npolicy = \"bitmap\"\n[host]\ncc = \"nscc\"";
    for (case, set, needles) in [
        (
            "paths not a power of two",
            "lb.bitmap.paths=48",
            &["lb.bitmap.paths", "power of two", "(got 48)"][..],
        ),
        (
            "paths 0",
            "lb.bitmap.paths=0",
            &["lb.bitmap.paths", "(got 0)"],
        ),
        (
            "penalty above a byte",
            "lb.bitmap.nack_penalty=256",
            &["lb.bitmap.nack_penalty", "(got 256)"],
        ),
        (
            "max penalty 0",
            "lb.bitmap.max_penalty=0",
            &["lb.bitmap.max_penalty", "(got 0)"],
        ),
        (
            "s_max 0",
            "lb.ethereal.max_subflows=0",
            &["lb.ethereal.max_subflows", "(got 0)"],
        ),
        (
            "unknown ties",
            "lb.ethereal.ties=highest",
            &["lb.ethereal.ties", "highest"],
        ),
    ] {
        run_fails(case, &good_plus(bitmap), &[], &["--set", set], needles);
    }
}

// ---- Matrix workloads ----

fn matrix_scenario(file_line: &str) -> String {
    format!("seed = 1\n\n[topology]\nkind = \"fat_tree\"\nk = 4\n\n[workload]\nkind = \"matrix\"\n{file_line}\n")
}

#[test]
fn matrix_without_file() {
    run_fails(
        "no file",
        &matrix_scenario(""),
        &[],
        &[],
        &["s.toml", "workload.file", "required"],
    );
}

#[test]
fn matrix_file_missing() {
    run_fails(
        "missing matrix",
        &matrix_scenario("file = \"nope.txt\""),
        &[],
        &[],
        &["s.toml", "workload.file", "nope.txt"],
    );
}

#[test]
fn matrix_names_unknown_host() {
    run_fails(
        "host 99",
        &matrix_scenario("file = \"m.txt\""),
        &[(
            "m.txt",
            "Nodes 16\nConnections 1\n0->99 id 1 start 0 size 100\n",
        )],
        &[],
        &["workload.file", "m.txt", "line 3", "99"],
    );
    run_fails(
        "more nodes than hosts",
        &matrix_scenario("file = \"m.txt\""),
        &[(
            "m.txt",
            "Nodes 99\nConnections 1\n0->1 id 1 start 0 size 100\n",
        )],
        &[],
        &["workload.file", "m.txt", "Nodes 99"],
    );
}

#[test]
fn matrix_malformed_line() {
    run_fails(
        "bad start",
        &matrix_scenario("file = \"m.txt\""),
        &[(
            "m.txt",
            "Nodes 16\nConnections 2\n0->1 id 1 start 0 size 100\n2->3 id 2 start soon size 100\n",
        )],
        &[],
        &["workload.file", "m.txt", "line 4"],
    );
    run_fails(
        "bad header",
        &matrix_scenario("file = \"m.txt\""),
        &[("m.txt", "Hosts 16\nConnections 0\n")],
        &[],
        &["workload.file", "m.txt", "line 1"],
    );
}

// ---- Command-line options ----

#[test]
fn zero_threads() {
    run_fails(
        "--threads 0",
        GOOD,
        &[],
        &["--threads", "0"],
        &["--threads"],
    );
}

#[test]
fn too_many_partitions() {
    // One more than `weft validate` reports the fabric can be cut into (a k = 4 fat tree has 4
    // pods; finer plans may allow more), so the case stays right if the plan changes.
    let dir = dir_with(&[("s.toml", GOOD)]);
    let out = weft(dir.path(), &["validate", "s.toml"]);
    assert!(out.status.success());
    let stdout = String::from_utf8_lossy(&out.stdout);
    let max: u32 = stdout
        .lines()
        .find_map(|l| l.strip_prefix("max partitions"))
        .unwrap_or_else(|| panic!("no max partitions line in:\n{stdout}"))
        .trim()
        .parse()
        .unwrap();
    assert!(max >= 4, "{stdout}");
    let over = (max + 1).to_string();
    run_fails(
        "--partitions max + 1",
        GOOD,
        &[],
        &["--partitions", &over],
        &["--partitions", &over, &format!("({max}")],
    );
    run_fails(
        "--partitions huge",
        GOOD,
        &[],
        &["--partitions", "1000"],
        &["--partitions", "1000"],
    );
}

#[test]
fn zero_partitions() {
    run_fails(
        "--partitions 0",
        GOOD,
        &[],
        &["--partitions", "0"],
        &["--partitions"],
    );
}

#[test]
fn cli_syntax_errors_do_not_panic() {
    // clap's own usage errors may span several lines; they must still fail without a panic.
    let dir = dir_with(&[("s.toml", GOOD)]);
    let out = weft(dir.path(), &["run", "s.toml", "--threads", "abc"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        !out.status.success() && out.status.code().is_some(),
        "{stderr}"
    );
    assert!(
        stderr.starts_with("error:") && stderr.contains("--threads"),
        "{stderr}"
    );
    assert!(!stderr.contains("panicked"), "{stderr}");
}

// ---- weft validate ----

#[test]
fn validate_good_scenario_reports_size() {
    let dir = dir_with(&[("s.toml", GOOD)]);
    let out = weft(dir.path(), &["validate", "s.toml"]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "stderr: {stderr}");
    assert!(stderr.is_empty(), "stderr: {stderr}");
    let field = |name: &str| -> u64 {
        let line = stdout
            .lines()
            .find(|l| l.split_whitespace().next() == Some(name))
            .unwrap_or_else(|| panic!("no {name} line in:\n{stdout}"));
        line.split_whitespace().nth(1).unwrap().parse().unwrap()
    };
    // k = 4 fat tree: k^3/4 = 16 hosts, 5k^2/4 = 20 switches, 16 + 20 * 4 = 96 ports.
    assert_eq!(field("hosts"), 16, "{stdout}");
    assert_eq!(field("switches"), 20, "{stdout}");
    assert_eq!(field("ports"), 96, "{stdout}");
}

#[test]
fn validate_reports_the_lb_state_of_drill_and_stale_snapshots() {
    let dir = dir_with(&[("s.toml", GOOD)]);
    let state = |sets: &[&str]| -> String {
        let mut args = vec!["validate", "s.toml"];
        args.extend(sets.iter().flat_map(|s| ["--set", s]));
        let out = weft(dir.path(), &args);
        let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
        assert!(out.status.success(), "{sets:?}: {stdout}");
        let line = stdout.lines().find(|l| l.starts_with("LB state")).unwrap();
        line.to_string()
    };
    // k = 4: 16 edge and aggregation switches remember m = 2 ports (2 B each) for their one
    // uplink group; cores choose nothing.
    assert!(
        state(&["lb.policy=\"drill\"", "lb.drill.m=2"]).contains("64 B total, 4 B at"),
        "{}",
        state(&["lb.policy=\"drill\"", "lb.drill.m=2"])
    );
    // Stale state adds 8 B per port at each of the 16 switches that choose (4 ports each):
    // 512 B; DRILL(2, 1) remembers one port at each (32 B).
    let stale = state(&["lb.policy=\"drill\"", "lb.state_update_period_ns=500"]);
    assert!(stale.contains("544 B total, 34 B at"), "{stale}");
    let jsq = state(&["lb.policy=\"jsq\"", "lb.state_update_period_ns=500"]);
    assert!(jsq.contains("512 B total, 32 B at"), "{jsq}");
    assert!(state(&["lb.policy=\"jsq\""]).contains("0 B total"));
}

#[test]
fn validate_bad_scenario_fails_the_same_way() {
    let dir = dir_with(&[("s.toml", &with_topology("k = 5"))]);
    let out = weft(dir.path(), &["validate", "s.toml"]);
    assert_fails("validate odd k", &out, &["s.toml", "topology.k", "(got 5)"]);

    let dir = dir_with(&[("s.toml", GOOD)]);
    let out = weft(
        dir.path(),
        &["validate", "s.toml", "--set", "host.load=1.5"],
    );
    assert_fails(
        "validate --set",
        &out,
        &["host.load", "--set host.load=1.5"],
    );

    let out = weft(dir.path(), &["validate", "missing.toml"]);
    assert_fails("validate missing", &out, &["missing.toml"]);

    let dir = dir_with(&[
        ("s.toml", &matrix_scenario("file = \"m.txt\"")),
        (
            "m.txt",
            "Nodes 16\nConnections 1\n0->16 id 1 start 0 size 1\n",
        ),
    ]);
    let out = weft(dir.path(), &["validate", "s.toml"]);
    assert_fails(
        "validate bad matrix",
        &out,
        &["workload.file", "m.txt", "line 3"],
    );
}

// ---- weft run --out ----

#[test]
fn unwritable_out_fails_before_the_run() {
    // A path under a regular file cannot be created, even by root.
    let dir = dir_with(&[("s.toml", GOOD), ("file", "x")]);
    let out = weft(dir.path(), &["run", "s.toml", "--out", "file/sub"]);
    assert_fails("--out under a file", &out, &["--out", "file/sub"]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        !stdout.lines().any(|l| l.starts_with("weft:")),
        "the run went ahead before --out was found unwritable:\n{stdout}"
    );
}

#[test]
fn out_folder_is_created_and_holds_only_the_outputs() {
    let dir = dir_with(&[("s.toml", GOOD)]);
    let out = weft(dir.path(), &["run", "s.toml", "--out", "a/b"]);
    assert!(
        out.status.success(),
        "stderr: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let mut names: Vec<String> = std::fs::read_dir(dir.path().join("a/b"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert_eq!(
        names,
        [
            "latency.hlog",
            "node_events.csv",
            "summary.json",
            "timeseries.csv"
        ]
    );
}

// ---- Zero lookahead ----

/// Asserts `out` is the zero-lookahead failure: exit code 1 and one `error:` line naming
/// `field` and saying "zero lookahead".
fn assert_zero_lookahead(case: &str, out: &Output, field: &str) {
    let line = assert_fails(case, out, &[field, "zero lookahead"]);
    assert_eq!(out.status.code(), Some(1), "case {case}: {line}");
}

#[test]
fn zero_link_latency_with_partitions_fails_naming_the_field() {
    let toml = with_topology("k = 4\nlink_latency_ns = 0");
    let dir = dir_with(&[("s.toml", &toml)]);
    for parts in ["2", "4", "8"] {
        let out = weft(dir.path(), &["run", "s.toml", "--partitions", parts]);
        assert_zero_lookahead(
            &format!("link_latency_ns = 0, {parts} partitions"),
            &out,
            "topology.link_latency_ns",
        );
    }
    // The same through --set.
    let dir = dir_with(&[("s.toml", GOOD)]);
    let out = weft(
        dir.path(),
        &[
            "run",
            "s.toml",
            "--set",
            "topology.link_latency_ns=0",
            "--partitions",
            "4",
        ],
    );
    assert_zero_lookahead("--set link_latency_ns=0", &out, "topology.link_latency_ns");
}

#[test]
fn zero_link_latency_runs_on_one_partition() {
    let toml = with_topology("k = 4\nlink_latency_ns = 0");
    let dir = dir_with(&[("s.toml", &toml)]);
    for extra in [
        &["--partitions", "1"][..],
        &["--partitions", "1", "--threads", "2"],
    ] {
        let mut args = vec!["run", "s.toml", "--json"];
        args.extend_from_slice(extra);
        let out = weft(dir.path(), &args);
        assert!(
            out.status.success(),
            "{extra:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let summary: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(summary["run"]["partitions"], 1, "{extra:?}");
        assert_eq!(summary["results"]["flows"]["incomplete"], 0, "{extra:?}");
        assert_eq!(summary["results"]["flows"]["completed"], 16, "{extra:?}");
    }
}

#[test]
fn zero_tier_latency_with_partitions_fails_naming_the_tier() {
    let toml = good_plus("[topology.tiers.edge_agg]\nlatency_ns = 0");
    let dir = dir_with(&[("s.toml", &toml)]);
    // 8 partitions on a k = 4 fat tree are edge groups: edge-agg links are cut.
    let out = weft(dir.path(), &["run", "s.toml", "--partitions", "8"]);
    assert_zero_lookahead(
        "edge_agg latency 0, 8 partitions",
        &out,
        "topology.tiers.edge_agg.latency_ns",
    );
    // The default field is not blamed when a tier override set the zero.
    assert!(
        !String::from_utf8_lossy(&out.stderr).contains("topology.link_latency_ns"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let out = weft(dir.path(), &["run", "s.toml", "--partitions", "1"]);
    assert!(
        out.status.success(),
        "one partition: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    // A zero agg-core tier is named as such when whole pods are cut.
    let toml = good_plus("[topology.tiers.agg_core]\nlatency_ns = 0");
    let dir = dir_with(&[("s.toml", &toml)]);
    let out = weft(dir.path(), &["run", "s.toml", "--partitions", "2"]);
    assert_zero_lookahead(
        "agg_core latency 0, 2 partitions",
        &out,
        "topology.tiers.agg_core.latency_ns",
    );
}

#[test]
fn zero_latency_with_forwarding_latency_runs_partitioned() {
    // A switch's forwarding latency alone keeps switch-bound cut links positive, and the
    // automatic plan never cuts host links, so this runs on many partitions and gives the
    // same results as one partition.
    let toml = good_plus("[switch]\nforwarding_latency_ns = 150");
    let dir = dir_with(&[("s.toml", &toml)]);
    let run = |parts: &str| {
        let out = weft(
            dir.path(),
            &[
                "run",
                "s.toml",
                "--json",
                "--set",
                "topology.link_latency_ns=0",
                "--partitions",
                parts,
            ],
        );
        assert!(
            out.status.success(),
            "{parts} partitions: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        serde_json::from_slice::<serde_json::Value>(&out.stdout).unwrap()
    };
    let one = run("1");
    let eight = run("8");
    assert_eq!(eight["run"]["lookahead_ns"], 150.0);
    assert_eq!(one["results"], eight["results"]);
}

// ---- weft validate on huge generated workloads ----

#[test]
fn validate_reports_a_huge_all_to_all_without_building_it() {
    // k = 64: 65,536 hosts, so 65,536 x 65,535 = 4,294,901,760 flows (just under 2^32; as
    // flow records that would be hundreds of GB: validate must count them, not build them).
    let toml = "[topology]\nk = 64\n[workload]\nkind = \"all_to_all\"\nmessage_bytes = 65536\n";
    let dir = dir_with(&[("s.toml", toml)]);
    let mut child = Command::new(env!("CARGO_BIN_EXE_weft"))
        .args(["validate", "s.toml"])
        .current_dir(dir.path())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("run weft");
    // Generous: building the flows would take minutes and ~100 GB; counting them is instant.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    while child.try_wait().unwrap().is_none() {
        if std::time::Instant::now() > deadline {
            let _ = child.kill();
            panic!("weft validate did not finish within 60 s on a k = 64 all-to-all");
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let out = child.wait_with_output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "stderr: {stderr}");
    let field = |name: &str| -> u64 {
        let line = stdout
            .lines()
            .find(|l| l.split_whitespace().next() == Some(name))
            .unwrap_or_else(|| panic!("no {name} line in:\n{stdout}"));
        line.split_whitespace().nth(1).unwrap().parse().unwrap()
    };
    assert_eq!(field("hosts"), 65_536, "{stdout}");
    assert_eq!(field("flows"), 4_294_901_760, "{stdout}");
    assert_eq!(field("flows"), 65_536 * 65_535, "{stdout}");
    // k = 64 fat tree: 5k^2/4 switches.
    assert_eq!(field("switches"), 5 * 64 * 64 / 4, "{stdout}");
}

// ---- Sizes and times that would overflow ----

#[test]
fn messages_of_more_than_2_pow_32_packets_are_refused() {
    // 4096-byte payloads: 2^32 - 1 packets is 17,592,186,040,320 bytes.
    run_fails(
        "message_bytes too large",
        &with_topology("k = 4"),
        &[],
        &["--set", "workload.message_bytes=20000000000000"],
        &["workload.message_bytes", "2^32 - 1 packets"],
    );
    let big = "Nodes 16\nConnections 1\n0->1 id 1 start 0 size 40000000000000\n";
    run_fails(
        "matrix size too large",
        &matrix_scenario("file = \"m.cm\""),
        &[("m.cm", big)],
        &[],
        &["m.cm", "line 3", "size above"],
    );
}

#[test]
fn matrix_start_times_near_the_end_of_time_are_refused() {
    let late = "Nodes 16\nConnections 1\n0->1 id 1 start 18446744073709550000 size 100\n";
    run_fails(
        "start near u64::MAX",
        &matrix_scenario("file = \"m.cm\""),
        &[("m.cm", late)],
        &[],
        &["m.cm", "line 3", "start above"],
    );
}

#[test]
fn a_huge_connection_count_is_an_error_not_an_allocation() {
    let huge = "Nodes 16\nConnections 100000000000000\n0->1 id 1 start 0 size 100\n";
    run_fails(
        "Connections far above the lines",
        &matrix_scenario("file = \"m.cm\""),
        &[("m.cm", huge)],
        &[],
        &["m.cm", "Connections 100000000000000 but 1 connection lines"],
    );
}

#[test]
fn a_constant_window_below_one_packet_is_refused() {
    let out = {
        let dir = dir_with(&[("s.toml", &with_topology("k = 4"))]);
        weft(
            dir.path(),
            &[
                "run",
                "s.toml",
                "--set",
                "host.cc=constant",
                "--set",
                "host.window_bdp=0.001",
            ],
        )
    };
    assert_fails(
        "window below a packet",
        &out,
        &["host.window_bdp", "below one data packet"],
    );
    run_fails(
        "zero window",
        &with_topology("k = 4"),
        &[],
        &["--set", "host.window_bdp=0"],
        &["host.window_bdp", "positive"],
    );
}

/// Each `--set` list is a bad transport or queue setting; the error names its field.
#[test]
fn bad_transport_and_queue_settings_name_their_field() {
    let cases: &[(&[&str], &[&str])] = &[
        (
            &["host.cc=nscc", "host.nscc.gamma=-0.5"],
            &["host.nscc.gamma"],
        ),
        (&["host.cc=dctcp", "host.dctcp.g=0"], &["host.dctcp.g"]),
        (
            &["host.cc=dctcp", "host.dctcp.init_cwnd_pkts=0.5"],
            &["host.dctcp.init_cwnd_pkts", "at least 1"],
        ),
        (
            &["host.cc=dctcp", "host.dctcp.recovery=\"reno\""],
            &[
                "host.dctcp.recovery",
                "unknown variant `reno`",
                "`sack` or `newreno`",
            ],
        ),
        (
            &["host.cc=dctcp", "host.dctcp.recovery=\"newreno\""],
            &["host.dctcp.recovery", "host.loss_detection = \"dupack\""],
        ),
        (
            &["host.cc=swift", "host.swift.max_mdf=1.5"],
            &["host.swift.max_mdf"],
        ),
        (
            &["host.cc=swift", "host.swift.fs_max_cwnd_pkts=0.01"],
            &["host.swift.fs_max_cwnd_pkts"],
        ),
        (
            &["host.cc=mswift", "host.mswift.history_max=0"],
            &["host.mswift.history_max"],
        ),
        (&["host.cc=nscc", "host.nscc.unknown=1"], &["unknown"]),
        (&["host.cc=ndp"], &["switch.trim", "ndp"]),
        (
            &[
                "host.cc=ndp",
                "switch.trim=true",
                "switch.buffer_bytes=100000",
                "host.ndp.pull_rate=0",
            ],
            &["host.ndp.pull_rate", "(0, 1]"],
        ),
        (
            &[
                "host.cc=ndp",
                "switch.trim=true",
                "switch.buffer_bytes=100000",
                "host.ndp.pull_rate=1.5",
            ],
            &["host.ndp.pull_rate"],
        ),
        (
            &[
                "host.cc=ndp",
                "switch.trim=true",
                "switch.buffer_bytes=100000",
                "host.ndp.initial_window_pkts=0",
            ],
            &["host.ndp.initial_window_pkts", "at least 1"],
        ),
        (
            &[
                "host.cc=ndp",
                "switch.trim=true",
                "switch.buffer_bytes=100000",
                "host.ack_coalesce_bytes=16384",
            ],
            &["host.ack_coalesce_bytes", "ndp"],
        ),
        (&["host.cc=reno"], &["host.cc"]),
        (
            &["host.cc=dctcp", "host.rto_min_us=0"],
            &["host.rto_min_us"],
        ),
        (
            &["host.cc=dctcp", "switch.ecn=\"off\""],
            &["switch.ecn", "dctcp"],
        ),
        (
            &["host.cc=nscc", "switch.trim=true"],
            &["switch.trim", "finite switch.buffer_bytes"],
        ),
        (
            &["switch.trim=true", "switch.buffer_bytes=100000"],
            &["switch.trim", "host.cc"],
        ),
        (
            &[
                "host.cc=nscc",
                "switch.trim=true",
                "switch.buffer_bytes=100000",
                "switch.trim_bytes=5000",
            ],
            &["switch.trim_bytes"],
        ),
        (
            &[
                "host.cc=nscc",
                "switch.trim=true",
                "switch.buffer_bytes=100000",
                "switch.trim_bytes=0",
            ],
            &["switch.trim_bytes"],
        ),
        (
            &[
                "host.cc=nscc",
                "switch.trim=true",
                "switch.buffer_bytes=100000",
                "switch.priority_control=false",
            ],
            &["switch.priority_control"],
        ),
        (
            &["switch.buffer_bytes=50000"],
            &["switch.ecn_threshold_bytes", "above switch.buffer_bytes"],
        ),
        (
            &["switch.ecn=\"ramp\""],
            &["switch.ecn_min_bytes", "unlimited"],
        ),
        (
            &[
                "switch.ecn=\"ramp\"",
                "switch.buffer_bytes=100000",
                "switch.ecn_min_bytes=90000",
                "switch.ecn_max_bytes=10000",
            ],
            &["switch.ecn_min_bytes", "below"],
        ),
        (
            &[
                "switch.ecn=\"ramp\"",
                "switch.buffer_bytes=100000",
                "switch.ecn_max_bytes=200000",
            ],
            &["switch.ecn_max_bytes", "above"],
        ),
        (
            &["switch.ctrl_buffer_bytes=10"],
            &["switch.ctrl_buffer_bytes"],
        ),
        (
            &["switch.return_to_sender=true"],
            &["switch.return_to_sender", "switch.trim"],
        ),
        (
            &[
                "host.cc=ndp",
                "switch.trim=true",
                "switch.buffer_bytes=100000",
                "switch.return_to_sender=true",
            ],
            &["switch.return_to_sender", "switch.ctrl_buffer_bytes"],
        ),
        (
            &["switch.ctrl_share={ctrl_bytes = 640, data_bytes = 1500}"],
            &["switch.ctrl_share", "switch.trim"],
        ),
        (
            &[
                "switch.priority_control=true",
                "switch.ctrl_share={ctrl_bytes = 0, data_bytes = 1500}",
            ],
            &["switch.ctrl_share", "positive", "got 0"],
        ),
        (&["switch.loss_fraction=1.5"], &["switch.loss_fraction"]),
        (
            &["switch.loss_switches=[3]"],
            &["switch.loss_switches", "not a switch"],
        ),
        (
            &["host.cc=nscc", "host.reorder_threshold_pkts=-1"],
            &["host.reorder_threshold_pkts"],
        ),
        (
            &["host.ack_coalesce_bytes=16384"],
            &["host.ack_coalesce_bytes", "reliable transport"],
        ),
        (
            &["host.rto_min_us=50"],
            &["host.rto_min_us", "reliable transport"],
        ),
        (&["report.timeseries_us=0"], &["report.timeseries_us"]),
        (
            &["lb.policy=\"drill\"", "lb.drill.d=0"],
            &["lb.drill.d", "(got 0)"],
        ),
        (
            &["lb.policy=\"drill\"", "lb.drill.d=3"],
            &["lb.drill.d", "the 2 uplinks", "(got 3)"],
        ),
        (&["lb.drill.m=5"], &["lb.drill.m", "(got 5)"]),
        (&["lb.drill.m=-1"], &["lb.drill.m"]),
        (
            &["lb.policy=\"topk\"", "lb.topk.k=0"],
            &["lb.topk.k", "(got 0)"],
        ),
        (
            &["lb.policy=\"topk\"", "lb.topk.k=3"],
            &["lb.topk.k", "(got 3)"],
        ),
        (
            &["lb.policy=\"jsq\"", "lb.state_update_period_ns=-1"],
            &["lb.state_update_period_ns", "(got -1)"],
        ),
        (
            &["lb.policy=\"choice\"", "lb.state_update_period_ns=inf"],
            &["lb.state_update_period_ns"],
        ),
        (
            &["lb.policy=\"drill\"", "lb.state_update_period_ns=0.0001"],
            &["lb.state_update_period_ns", "1 ps"],
        ),
        (
            &["lb.policy=\"ofan\"", "lb.state_update_period_ns=1000"],
            &["lb.state_update_period_ns", "queue-aware", "ofan"],
        ),
        (&["end_us=-1"], &["end_us"]),
        (
            &["lb.mixed=[{policy=\"ar\", select=\"random_pods\"}]"],
            &["lb.mixed[0].fraction", "required"],
        ),
        (
            &["lb.mixed=[{policy=\"ar\", select=\"edge\", fraction=0.5}]"],
            &["lb.mixed[0].fraction"],
        ),
        (
            &["lb.mixed=[{policy=\"rps\", select=\"edge\"}]"],
            &["lb.mixed[0].policy"],
        ),
        (
            &[
                "lb.policy=\"ecmp\"",
                "lb.mixed=[{policy=\"ar\", select=\"edge\"}]",
            ],
            &["lb.mixed", "hosts"],
        ),
        (
            &["lb.mixed=[{policy=\"ar\", select=\"all\"}]"],
            &["lb.mixed"],
        ),
        (
            &["topology.link_rates=[{rate_gbps=200, tier=\"nope\", fraction=0.5}]"],
            &["topology.link_rates[0].tier"],
        ),
        (
            &["topology.link_rates=[{rate_gbps=200, tier=\"edge_agg\", fraction=2}]"],
            &["topology.link_rates[0].fraction"],
        ),
        (
            &["topology.link_rates=[{rate_gbps=200, tier=\"edge_agg\"}]"],
            &["topology.link_rates[0]", "either"],
        ),
        (
            &["topology.link_rates=[{rate_gbps=-5, node=0, port=0}]"],
            &["topology.link_rates[0].rate_gbps"],
        ),
        (
            &["topology.link_rates=[{rate_gbps=200, node=3, port=5}]"],
            &["topology.link_rates[0]", "no port 5"],
        ),
        (&["lb.policy=\"psp\"", "lb.psp.bands=0"], &["lb.psp.bands"]),
        (
            &["lb.policy=\"psp\"", "lb.psp.weights=[3, 2, 1]"],
            &["lb.psp.weights", "one weight per band"],
        ),
        (
            &["lb.policy=\"psp\"", "lb.psp.th_max_bytes=0"],
            &["lb.psp.th_max_bytes"],
        ),
        (
            &[
                "lb.policy=\"psp\"",
                "lb.psp.th_max_bytes=4",
                "lb.psp.bands=8",
            ],
            &["lb.psp.th_max_bytes", "one byte per band"],
        ),
        (
            &[
                "lb.policy=\"psp\"",
                "lb.psp.thresholds_bytes=[64000, 500000, 400000]",
            ],
            &["lb.psp.thresholds_bytes", "strictly increasing"],
        ),
        (
            &["lb.policy=\"psp\"", "lb.psp.thresholds_bytes=[]"],
            &["lb.psp.thresholds_bytes", "1 to 64"],
        ),
        (
            &[
                "lb.policy=\"psp\"",
                "lb.psp.thresholds_bytes=[64000, 960000]",
                "lb.psp.bands=3",
            ],
            &["lb.psp.bands", "number of lb.psp.thresholds_bytes"],
        ),
        (
            &[
                "lb.policy=\"psp\"",
                "lb.psp.thresholds_bytes=[64000, 960000]",
                "lb.psp.weights=[3, 2, 1]",
            ],
            &["lb.psp.weights", "2 bands"],
        ),
        (
            &["lb.policy=\"psp\"", "lb.psp.variant=\"table5\""],
            &["lb.psp.variant"],
        ),
        (
            &["workload.destinations=\"shift\""],
            &["workload.destinations", "continuous"],
        ),
        (
            &["lb.policy=\"psp\"", "lb.psp.remote_period_ns=20000"],
            &["lb.psp.remote_period_ns", "lb.psp.remote = true"],
        ),
        (
            &[
                "lb.policy=\"psp\"",
                "lb.psp.remote=true",
                "lb.state_update_period_ns=3000",
                "lb.psp.remote_period_ns=20000",
            ],
            &["lb.psp.remote_period_ns", "multiple"],
        ),
        (
            &[
                "lb.policy=\"psp\"",
                "lb.psp.remote=true",
                "lb.psp.remote_period_ns=-5",
            ],
            &["lb.psp.remote_period_ns"],
        ),
        (
            &["lb.policy=\"ar\"", "lb.ar.thresholds_pct=[10, 5, 20]"],
            &["lb.ar.thresholds_pct"],
        ),
        (
            &["lb.policy=\"ar\"", "lb.ar.capacity_bytes=0"],
            &["lb.ar.capacity_bytes"],
        ),
        (
            &["lb.policy=\"ar\"", "lb.ar.update_period_ns=-1"],
            &["lb.ar.update_period_ns"],
        ),
        (
            &["lb.policy=\"ar\"", "lb.state_update_period_ns=100"],
            &["lb.state_update_period_ns"],
        ),
        (
            &["lb.policy=\"conga\"", "lb.conga.q_bits=9"],
            &["lb.conga.q_bits"],
        ),
        (
            &["lb.policy=\"conga\"", "lb.conga.alpha=0"],
            &["lb.conga.alpha"],
        ),
        (
            &["lb.policy=\"conga\"", "lb.conga.t_dre_us=0"],
            &["lb.conga.t_dre_us"],
        ),
        (
            &["lb.policy=\"conga\"", "lb.conga.flowlet_us=-1"],
            &["lb.conga.flowlet_us"],
        ),
        (
            &["lb.policy=\"sglb\"", "lb.sglb.advert_ns=0"],
            &["lb.sglb.advert_ns"],
        ),
        (
            &["lb.policy=\"psp\"", "lb.psp.remote=true"],
            &["lb.psp.remote", "state_update_period_ns"],
        ),
        (
            &["lb.policy=\"jsq\"", "lb.psp.remote=true"],
            &["lb.psp.remote", "psp"],
        ),
        (
            &[
                "lb.policy=\"ar\"",
                "lb.mixed=[{policy=\"sglb\", select=\"edge\"}]",
            ],
            &["lb.mixed[0].policy", "every switch"],
        ),
        (
            &[
                "lb.policy=\"ar\"",
                "lb.ar.mode=\"flowlet\"",
                "lb.ar.flowlet_us=-1",
            ],
            &["lb.ar.flowlet_us"],
        ),
        (
            &["lb.policy=\"ar\"", "lb.ar.flowset_entries=0"],
            &["lb.ar.flowset_entries"],
        ),
        (&["lb.ar.mode=\"flowset\""], &["lb.ar.mode"]),
        (
            &["lb.policy=\"dlb\"", "lb.dlb.sample_ns=0"],
            &["lb.dlb.sample_ns"],
        ),
        (
            &["lb.policy=\"dlb\"", "lb.dlb.load_window_us=0.01"],
            &["lb.dlb.load_window_us"],
        ),
        (
            &["lb.policy=\"dlb\"", "lb.dlb.queue_thresholds_pct=[5, 10]"],
            &["lb.dlb.queue_thresholds_pct"],
        ),
        (
            &[
                "lb.policy=\"dlb\"",
                "lb.dlb.util_thresholds_pct=[0, 50, 15]",
            ],
            &["lb.dlb.util_thresholds_pct"],
        ),
        (
            &["lb.policy=\"dlb\"", "lb.dlb.flowset_entries=0"],
            &["lb.dlb.flowset_entries"],
        ),
        (
            &["lb.policy=\"dlb\"", "lb.dlb.flowlet_us=-3"],
            &["lb.dlb.flowlet_us"],
        ),
        (
            &["lb.policy=\"dlb\"", "lb.dlb.rebalance_delta=0"],
            &["lb.dlb.rebalance_delta"],
        ),
        (
            &["lb.policy=\"dlb\"", "lb.dlb.rebalance_prob=1.5"],
            &["lb.dlb.rebalance_prob"],
        ),
        (
            &["lb.valiant.granularity=\"flowlet\""],
            &["lb.valiant.granularity"],
        ),
        (
            &[
                "lb.policy=\"valiant\"",
                "lb.valiant.intermediates=[32, 33, 32]",
            ],
            &["lb.valiant.intermediates", "32 twice"],
        ),
        (
            &["lb.policy=\"valiant\"", "lb.valiant.intermediates=[32, 24]"],
            &["lb.valiant.intermediates", "24 is not a top-tier switch"],
        ),
        (
            // Core 32 is reached through aggregation switch 24 only, whose link to edge
            // switch 16 failed.
            &[
                "lb.policy=\"valiant\"",
                "lb.valiant.intermediates=[32]",
                "failures.links=[{node=16, port=2}]",
            ],
            &["lb.valiant.intermediates", "edge switch 16"],
        ),
        (&["lb.dlb.mode=\"pinned\""], &["lb.dlb.mode"]),
        (&["lb.sglb.mode=\"assigned\""], &["lb.sglb.mode"]),
        (
            &["lb.policy=\"sglb\"", "lb.sglb.flowlet_us=-1"],
            &["lb.sglb.flowlet_us"],
        ),
        (
            &["lb.policy=\"sglb\"", "lb.sglb.flowset_entries=0"],
            &["lb.sglb.flowset_entries"],
        ),
        (
            &["lb.mixed=[{policy=\"valiant\", select=\"edge\"}]"],
            &["lb.mixed[0].policy", "hosts"],
        ),
        (
            &["workload.kind=\"continuous\""],
            &["workload.duration_us", "required"],
        ),
        (
            &[
                "workload.kind=\"continuous\"",
                "workload.duration_us=10",
                "workload.load=1.5",
            ],
            &["workload.load"],
        ),
        (&["workload.load=0.5"], &["workload.load", "continuous"]),
        (
            &["workload.kind=\"all_to_all\"", "workload.inter_pod=true"],
            &["workload.inter_pod"],
        ),
        (
            &["report.trace_hosts=[99]"],
            &["report.trace_hosts", "not a host"],
        ),
    ];
    for (sets, needles) in cases {
        let extra: Vec<&str> = sets.iter().flat_map(|s| ["--set", s]).collect();
        run_fails(
            &sets.join(" "),
            &with_topology("k = 4"),
            &[],
            &extra,
            needles,
        );
    }
}
