//! MPI ranks (feature `mpi`): byte-identical results for any ranks × threads split, merged
//! histograms equal to the single-process ones, and prompt, clear failures. Needs an MPI
//! launcher: `mpirun` (OpenMPI or MPICH), or the one `WEFT_MPIRUN` names (CI runs these tests
//! once against OpenMPI and once against MPICH with `WEFT_MPIRUN=mpirun.mpich`, the binary
//! built against the matching library). Without it the tests print "skipped" and pass, unless
//! WEFT_REQUIRE_MPI=1, which makes them fail (only the value 1 counts: unset, 0 or any other
//! value skips). CI sets it.

use std::path::Path;
use std::process::{Command, Output};

const BIN: &str = env!("CARGO_BIN_EXE_weft");

/// The launcher: `WEFT_MPIRUN`, else `mpirun`.
fn launcher() -> String {
    std::env::var("WEFT_MPIRUN").unwrap_or_else(|_| "mpirun".to_string())
}

/// The launcher's `--version` text, `None` when it cannot be run.
fn launcher_version() -> Option<String> {
    let o = Command::new(launcher()).arg("--version").output().ok()?;
    o.status
        .success()
        .then(|| String::from_utf8_lossy(&o.stdout).into_owned())
}

fn mpi_available() -> bool {
    let ok = launcher_version().is_some();
    if !ok {
        assert!(
            !required(std::env::var("WEFT_REQUIRE_MPI").ok().as_deref()),
            "WEFT_REQUIRE_MPI=1 but {} is not available",
            launcher()
        );
        eprintln!(
            "skipped: {} not found (install openmpi-bin or mpich, see the guide)",
            launcher()
        );
    }
    ok
}

/// Whether a WEFT_REQUIRE_MPI value (`None`: unset) makes a missing `mpirun` a failure.
fn required(value: Option<&str>) -> bool {
    value == Some("1")
}

/// Whether the launcher is OpenMPI's, which needs `--oversubscribe` to start more ranks than
/// cores (MPICH's Hydra starts them without it, and rejects the option).
fn is_open_mpi(version: &str) -> bool {
    version.contains("Open MPI") || version.contains("OpenRTE")
}

fn mpirun(n: u32, args: &[&str]) -> Output {
    mpirun_env(n, args, &[])
}

/// The launcher with extra environment variables for the ranks.
fn mpirun_env(n: u32, args: &[&str], env: &[(&str, &str)]) -> Output {
    let open_mpi = launcher_version().is_some_and(|v| is_open_mpi(&v));
    let mut c = Command::new("timeout");
    c.args(["120", &launcher()]);
    if open_mpi {
        c.arg("--oversubscribe");
    }
    c.args(["-n", &n.to_string(), BIN]).args(args);
    c.env("OMPI_ALLOW_RUN_AS_ROOT", "1")
        .env("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
        .envs(env.iter().copied());
    c.output().expect("the MPI launcher starts")
}

fn standalone(args: &[&str]) -> Output {
    Command::new(BIN).args(args).output().expect("weft starts")
}

fn scenario(dir: &Path) -> String {
    let p = dir.join("s.toml");
    std::fs::write(
        &p,
        "seed = 7\n[topology]\nk = 6\n[lb]\npolicy = \"rsq\"\n[workload]\nmessage_bytes = 131072\n",
    )
    .unwrap();
    p.to_str().unwrap().to_string()
}

fn outputs(dir: &Path) -> (serde_json::Value, Vec<u8>) {
    let summary: serde_json::Value =
        serde_json::from_slice(&std::fs::read(dir.join("summary.json")).unwrap()).unwrap();
    (
        summary["results"].clone(),
        std::fs::read(dir.join("latency.hlog")).unwrap(),
    )
}

fn error_lines(o: &Output) -> Vec<String> {
    String::from_utf8_lossy(&o.stderr)
        .lines()
        .filter(|l| l.starts_with("error:"))
        .map(String::from)
        .collect()
}

#[test]
fn results_are_identical_for_any_ranks_and_threads() {
    if !mpi_available() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let s = scenario(dir.path());
    let out = |name: &str| dir.path().join(name).to_str().unwrap().to_string();
    let o = standalone(&["run", &s, "--out", &out("ref")]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let reference = outputs(&dir.path().join("ref"));
    assert!(reference.0["flows"]["completed"].as_u64().unwrap() > 0);
    // `--progress` adds the progress counters to the per-window allreduce (summed, next to
    // the minimums): the run must not change.
    for (n, threads, progress) in [
        (1, "1", false),
        (2, "1", false),
        (4, "1", false),
        (2, "2", false),
        (3, "1", true),
    ] {
        let name = format!("n{n}t{threads}p{progress}");
        let mut args = vec!["run", &s, "--threads", threads];
        if progress {
            args.push("--progress");
        }
        let o_dir = out(&name);
        args.extend(["--out", &o_dir]);
        let o = mpirun(n, &args);
        assert!(
            o.status.success(),
            "mpirun -n {n}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
        let summary: serde_json::Value = serde_json::from_slice(
            &std::fs::read(dir.path().join(&name).join("summary.json")).unwrap(),
        )
        .unwrap();
        assert_eq!(
            summary["run"]["ranks"], n,
            "the job really ran on {n} ranks"
        );
        let got = outputs(&dir.path().join(&name));
        assert_eq!(
            got.0, reference.0,
            "results differ for mpirun -n {n} --threads {threads}"
        );
        assert_eq!(
            got.1, reference.1,
            "latency.hlog differs for mpirun -n {n} --threads {threads}"
        );
        // Only rank 0 prints the summary.
        assert_eq!(
            String::from_utf8_lossy(&o.stdout).matches("CCT ").count(),
            1
        );
    }
}

/// A ring AllReduce (flows started by triggers at their hosts, whichever rank holds them):
/// results, histograms and the traced hosts' flow events equal the single process's.
#[test]
fn ring_collectives_are_identical_for_any_ranks_and_threads() {
    if !mpi_available() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let s = dir.path().join("ring.toml");
    std::fs::write(
        &s,
        "seed = 3\n[topology]\nk = 6\n[report]\ntrace_hosts = [0, 20, 53]\nflow_log = true\n[workload]\nkind = \"ring\"\nmessage_bytes = 884736\nstep_delay_ns = 50.0\n",
    )
    .unwrap();
    let s = s.to_str().unwrap();
    let out = |name: &str| dir.path().join(name).to_str().unwrap().to_string();
    let events = |name: &str| std::fs::read(dir.path().join(name).join("flow_events.csv")).unwrap();
    let flows = |name: &str| std::fs::read(dir.path().join(name).join("flows.csv")).unwrap();
    let o = standalone(&["run", s, "--out", &out("ref")]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let reference = outputs(&dir.path().join("ref"));
    assert_eq!(reference.0["flows"]["incomplete"], 0);
    // Per-phase results and histograms are part of what must match.
    assert_eq!(reference.0["phases"].as_array().unwrap().len(), 2);
    let hlog = String::from_utf8_lossy(&reference.1);
    assert!(
        hlog.contains("Tag=latency_ns.reduce_scatter,")
            && hlog.contains("Tag=latency_ns.all_gather,")
    );
    for (n, threads) in [(2, "1"), (3, "2")] {
        let name = format!("n{n}t{threads}");
        let o = mpirun(n, &["run", s, "--threads", threads, "--out", &out(&name)]);
        assert!(
            o.status.success(),
            "mpirun -n {n}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
        assert_eq!(outputs(&dir.path().join(&name)), reference, "mpirun -n {n}");
        assert_eq!(
            events(&name),
            events("ref"),
            "flow_events.csv, mpirun -n {n}"
        );
        assert_eq!(flows(&name), flows("ref"), "flows.csv, mpirun -n {n}");
    }
}

/// An all-to-all over chosen hosts: results (its phase included) and histograms (its
/// phase's included) equal the single process's.
#[test]
fn pairwise_collectives_are_identical_for_any_ranks_and_threads() {
    if !mpi_available() {
        return;
    }
    assert_identical_across_ranks(
        "seed = 3\n[topology]\nk = 6\n[host]\ncc = \"dctcp\"\n[workload]\nkind = \"pairwise\"\ncollective = \"all_to_all\"\nhosts = [0, 7, 20, 33, 41, 53]\nmessage_bytes = 393216\n",
        &["all_to_all"],
    );
}

/// Opera: rotor uplinks change peers, so cut links change partitions with time; results
/// and histograms still equal the single process's.
#[test]
fn opera_runs_are_identical_for_any_ranks_and_threads() {
    if !mpi_available() {
        return;
    }
    assert_identical_across_ranks(include_str!("../data/opera_small.toml"), &[]);
}

/// Opera's bulk transport (RotorLB: slot timers, relays through hosts of other racks,
/// receiver-recorded completions) across ranks.
#[test]
fn opera_rotorlb_runs_are_identical_for_any_ranks_and_threads() {
    if !mpi_available() {
        return;
    }
    let toml = include_str!("../data/opera_small.toml").replace(
        "kind = \"permutation\"\nmessage_bytes = 200000",
        "kind = \"shuffle\"\nmessage_bytes = 100000\nbulk = true",
    );
    assert!(toml.contains("bulk = true"));
    assert_identical_across_ranks(&toml, &[]);
}

#[test]
fn plan_for_another_rank_count_is_refused_promptly() {
    if !mpi_available() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let s = scenario(dir.path());
    let plan = dir.path().join("p.plan");
    let o = standalone(&[
        "partition",
        &s,
        "--parts",
        "4",
        "--ranks",
        "2",
        "-o",
        plan.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    // The right rank count runs...
    let o = mpirun(2, &["run", &s, "--partition", plan.to_str().unwrap()]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    // ...a wrong one stops every rank with one message.
    let started = std::time::Instant::now();
    let o = mpirun(4, &["run", &s, "--partition", plan.to_str().unwrap()]);
    assert!(!o.status.success());
    let errs = error_lines(&o);
    assert_eq!(errs.len(), 1, "expected one error line, got {errs:?}");
    assert!(
        errs[0].contains("made for 2 ranks") && errs[0].contains("p.plan"),
        "{errs:?}"
    );
    assert!(started.elapsed().as_secs() < 60, "failure was not prompt");
}

#[test]
fn bad_scenario_and_too_many_ranks_fail_on_every_rank() {
    if !mpi_available() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let bad = dir.path().join("bad.toml");
    std::fs::write(&bad, "[topology]\nk = 7\n").unwrap();
    let o = mpirun(2, &["run", bad.to_str().unwrap()]);
    assert!(!o.status.success());
    let errs = error_lines(&o);
    assert_eq!(errs.len(), 1, "{errs:?}");
    assert!(errs[0].contains("topology.k"), "{errs:?}");

    let s = scenario(dir.path());
    let o = mpirun(4, &["run", &s, "--partitions", "2"]);
    assert!(!o.status.success());
    let errs = error_lines(&o);
    assert_eq!(errs.len(), 1, "{errs:?}");
    assert!(
        errs[0].contains("more ranks (4) than partitions (2)"),
        "{errs:?}"
    );
}

#[test]
fn only_open_mpi_launchers_get_oversubscribe() {
    assert!(is_open_mpi("mpirun (Open MPI) 4.1.4\n"));
    assert!(!is_open_mpi("HYDRA build details:\n    Version: 4.0.2\n"));
}

#[test]
fn only_weft_require_mpi_1_makes_mpi_required() {
    assert!(required(Some("1")));
    for v in [None, Some("0"), Some(""), Some("yes")] {
        assert!(!required(v), "{v:?}");
    }
}

#[test]
fn unwritable_out_stops_every_rank_before_the_run() {
    if !mpi_available() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let s = scenario(dir.path());
    // A path under a regular file cannot be created, even by root.
    let file = dir.path().join("file");
    std::fs::write(&file, "x").unwrap();
    let out = file.join("sub");
    let o = mpirun(2, &["run", &s, "--out", out.to_str().unwrap()]);
    assert!(!o.status.success());
    let errs = error_lines(&o);
    assert_eq!(errs.len(), 1, "{errs:?}");
    assert!(
        errs[0].contains("--out") && errs[0].contains("file/sub"),
        "{errs:?}"
    );
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert!(
        !stdout.lines().any(|l| l.starts_with("weft:")),
        "the run went ahead:\n{stdout}"
    );
}

#[test]
fn panic_on_a_worker_thread_ends_the_job_without_calling_mpi() {
    if !mpi_available() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let s = scenario(dir.path());
    // The last rank panics on a non-main thread; rank 0 then waits in a collective until the
    // job is ended.
    let started = std::time::Instant::now();
    let o = mpirun_env(2, &["run", &s], &[("WEFT_TEST_PANIC_IN_WORKER", "1")]);
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert!(!o.status.success(), "{stderr}");
    assert!(started.elapsed().as_secs() < 60, "failure was not prompt");
    assert!(
        error_lines(&o)
            .iter()
            .any(|l| l.starts_with("error: rank 1: ") && l.contains("panicked")),
        "{stderr}"
    );
    // MPI (FUNNELED) may not be called from that thread, so no MPI_Abort: its error code 101
    // would become mpirun's exit status, and OpenMPI says "MPI_ABORT was invoked".
    assert_ne!(o.status.code(), Some(101), "{stderr}");
    assert!(!stderr.contains("MPI_ABORT was invoked"), "{stderr}");
}

/// A k = 4 fat tree, 64 KB permutation with `policy` (and `lb_extra` lines in `[lb]`),
/// written as `name` in `dir`.
fn policy_scenario(dir: &Path, name: &str, policy: &str, lb_extra: &str) -> String {
    let p = dir.join(name);
    std::fs::write(
        &p,
        format!(
            "seed = 5\n[topology]\nk = 4\n[lb]\npolicy = \"{policy}\"\n{lb_extra}\n[workload]\nmessage_bytes = 65536\n"
        ),
    )
    .unwrap();
    p.to_str().unwrap().to_string()
}

/// `[failures]` for the k = 4 fat tree of `policy_scenario`, after its `[lb]` lines.
const FAILED: &str = "[failures]\nlinks = [{ node = 16, port = 3 }, { node = 24, port = 2 }]";

/// A file and folder name per case: the policy and its position in the list.
fn policy_index(policy: &str, i: usize) -> String {
    format!("{policy}-{i}")
}

#[test]
fn results_are_identical_for_any_ranks_and_threads_for_stateful_policies() {
    // Policies whose state lives in switches (ofan pointers, jsq queue reads, drill's memory
    // and stale snapshots refreshed by timers) or in senders (drb waypoints): each must give
    // the same results and latency.hlog on 1, 2 and 4 ranks and on 2 ranks x 2 threads as in
    // one process.
    if !mpi_available() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let out = |name: &str| dir.path().join(name).to_str().unwrap().to_string();
    let mut per_policy = vec![];
    for (i, (policy, lb_extra)) in [
        ("ofan", ""),
        ("drb", ""),
        ("jsq", ""),
        ("drill", "state_update_period_ns = 700.0"),
        // State from other switches: CONGA's overlay, SGLB's and PSP's adverts.
        ("conga", ""),
        ("sglb", ""),
        ("psp", "state_update_period_ns = 700.0\npsp.remote = true"),
        // Routes around failed links (edge 16 to aggregation 25, aggregation 24 to core 32),
        // with rho_max pacing: rotations that skip, path codes that avoid them.
        ("ofan", FAILED),
        ("drb", FAILED),
        ("valiant", FAILED),
        ("ethereal", FAILED),
    ]
    .into_iter()
    .enumerate()
    {
        let i = policy_index(policy, i);
        let s = policy_scenario(dir.path(), &format!("{i}.toml"), policy, lb_extra);
        let ref_dir = format!("{i}-ref");
        let o = standalone(&["run", &s, "--out", &out(&ref_dir)]);
        assert!(
            o.status.success(),
            "{policy}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
        let reference = outputs(&dir.path().join(&ref_dir));
        assert_eq!(reference.0["flows"]["completed"], 16, "{policy}");
        for (n, threads) in [(1, "1"), (2, "1"), (4, "1"), (2, "2")] {
            let name = format!("{i}-n{n}t{threads}");
            let o = mpirun(n, &["run", &s, "--threads", threads, "--out", &out(&name)]);
            assert!(
                o.status.success(),
                "{policy}: mpirun -n {n} --threads {threads}: {}",
                String::from_utf8_lossy(&o.stderr)
            );
            let summary: serde_json::Value = serde_json::from_slice(
                &std::fs::read(dir.path().join(&name).join("summary.json")).unwrap(),
            )
            .unwrap();
            assert_eq!(summary["run"]["ranks"], n, "{policy}: really {n} ranks");
            assert_eq!(summary["scenario"]["lb"]["policy"], policy);
            let got = outputs(&dir.path().join(&name));
            assert_eq!(
                got.0, reference.0,
                "{policy}: results differ for mpirun -n {n} --threads {threads}"
            );
            assert_eq!(
                got.1, reference.1,
                "{policy}: latency.hlog differs for mpirun -n {n} --threads {threads}"
            );
        }
        per_policy.push(reference);
    }
    // Guard against comparing constants: the policies really route differently.
    assert_ne!(per_policy[0].0, per_policy[1].0, "ofan and drb agree");
    assert_ne!(per_policy[0].0, per_policy[2].0, "ofan and jsq agree");
}

#[test]
fn zero_lookahead_fails_on_every_rank_with_one_message() {
    if !mpi_available() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let s = policy_scenario(dir.path(), "s.toml", "ofan", "");
    let o = mpirun(
        2,
        &["run", &s, "--set", "topology.tiers.agg_core.latency_ns=0"],
    );
    assert!(!o.status.success());
    let errs = error_lines(&o);
    assert_eq!(errs.len(), 1, "{errs:?}");
    assert!(
        errs[0].contains("topology.tiers.agg_core.latency_ns")
            && errs[0].contains("zero lookahead"),
        "{errs:?}"
    );
}

#[test]
fn lossy_congestion_controlled_runs_are_identical_for_any_ranks_and_threads() {
    // Retransmission timers, NACKs, trimming, ECN ramps (switch RNG) and the time series:
    // summary.json, latency.hlog and timeseries.csv match one process on 2 and 4 ranks.
    if !mpi_available() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let out = |name: &str| dir.path().join(name).to_str().unwrap().to_string();
    let p = dir.path().join("cc.toml");
    std::fs::write(
        &p,
        "seed = 3\n[topology]\nk = 4\n[lb]\npolicy = \"rps\"\n[host]\ncc = \"dctcp\"\n\
         [switch]\nbuffer_bytes = 60000\ntrim = true\necn = \"ramp\"\nloss_fraction = 0.01\n\
         [workload]\nmessage_bytes = 262144\n[report]\ntimeseries_us = 1.0\n",
    )
    .unwrap();
    let s = p.to_str().unwrap().to_string();
    let o = standalone(&["run", &s, "--out", &out("ref")]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let reference = outputs(&dir.path().join("ref"));
    let series = std::fs::read(dir.path().join("ref/timeseries.csv")).unwrap();
    let p = &reference.0["packets"];
    assert!(p["trimmed"].as_u64().unwrap() > 0 && p["retransmissions"].as_u64().unwrap() > 0);
    for (n, threads) in [(2, "1"), (4, "1"), (2, "2")] {
        let name = format!("cc-n{n}t{threads}");
        let o = mpirun(n, &["run", &s, "--threads", threads, "--out", &out(&name)]);
        assert!(
            o.status.success(),
            "mpirun -n {n}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
        let got = outputs(&dir.path().join(&name));
        assert_eq!(got, reference, "mpirun -n {n} --threads {threads}");
        let got_series = std::fs::read(dir.path().join(&name).join("timeseries.csv")).unwrap();
        assert_eq!(got_series, series, "timeseries.csv, mpirun -n {n}");
    }
}

/// Runs scenario text `toml` alone and under 2 and 3 ranks (1 and 2 threads): results and
/// histograms (every phase's tag included) equal the single process's.
/// Expander: racks on different ranks, ToR-to-ToR links cut; results and histograms equal
/// the single process's.
#[test]
fn expander_runs_are_identical_for_any_ranks_and_threads() {
    if !mpi_available() {
        return;
    }
    assert_identical_across_ranks(include_str!("../data/expander_small.toml"), &[]);
}

/// Shared switch buffers small enough to trim (an NSCC all-to-all): results, the switch
/// occupancy histograms included, equal the single process's.
#[test]
fn shared_buffer_runs_are_identical_for_any_ranks_and_threads() {
    if !mpi_available() {
        return;
    }
    assert_identical_across_ranks(
        "seed = 2\n[topology]\nk = 6\n[host]\ncc = \"nscc\"\n[switch]\nbuffer = \"shared\"\n\
         buffer_bytes = 20000\nshared_buffer_alpha = 0.5\ntrim = true\necn = \"ramp\"\n\
         [workload]\nkind = \"all_to_all\"\nmessage_bytes = 20000\n[report]\ntimeseries_us = 0.2\n",
        &[],
    );
}

fn assert_identical_across_ranks(toml: &str, phases: &[&str]) {
    let dir = tempfile::tempdir().unwrap();
    let s = dir.path().join("s.toml");
    std::fs::write(&s, toml).unwrap();
    let s = s.to_str().unwrap();
    let out = |name: &str| dir.path().join(name).to_str().unwrap().to_string();
    let o = standalone(&["run", s, "--out", &out("ref")]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let reference = outputs(&dir.path().join("ref"));
    assert_eq!(reference.0["flows"]["incomplete"], 0);
    for (i, phase) in phases.iter().enumerate() {
        assert_eq!(reference.0["phases"][i]["name"], *phase);
        let tag = format!("Tag=latency_ns.{phase},");
        assert!(
            String::from_utf8_lossy(&reference.1).contains(&tag),
            "{tag}"
        );
    }
    for (n, threads) in [(2, "1"), (3, "2")] {
        let name = format!("n{n}t{threads}");
        let o = mpirun(n, &["run", s, "--threads", threads, "--out", &out(&name)]);
        assert!(
            o.status.success(),
            "mpirun -n {n}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
        assert_eq!(outputs(&dir.path().join(&name)), reference, "mpirun -n {n}");
        let events = |d: &str| std::fs::read(dir.path().join(d).join("node_events.csv")).unwrap();
        assert_eq!(
            events(&name),
            events("ref"),
            "node_events.csv, mpirun -n {n}"
        );
    }
}

/// FSDP2 ring mode (18 servers of 3 GPUs placed at random, 2 layers): every phase equal.
#[test]
fn fsdp2_rings_are_identical_for_any_ranks_and_threads() {
    if !mpi_available() {
        return;
    }
    assert_identical_across_ranks(
        "seed = 3\n[topology]\nk = 6\n[workload]\nkind = \"fsdp2\"\ngpus_per_server = 3\nplacement = \"random\"\nlayer_params = [221184, 110592]\nmode = \"ring\"\nstep_delay_ns = 20.0\n",
        &["layer_0", "layer_1"],
    );
}

/// MoE dispatch then combine (synthetic routing with EPLB, two expert-parallel groups):
/// both phases equal.
#[test]
fn moe_phases_are_identical_for_any_ranks_and_threads() {
    if !mpi_available() {
        return;
    }
    assert_identical_across_ranks(
        "seed = 3\n[topology]\nk = 6\n[host]\ncc = \"dctcp\"\n[workload]\nkind = \"moe\"\ngpus_per_server = 3\ngpus = 36\nep_size = 18\nplacement = \"random\"\nstep_delay_ns = 40.0\nmoe.experts = 36\nmoe.top_k = 4\nmoe.tokens_per_gpu = 48\nmoe.bytes_per_token = 4096\nmoe.eplb = true\n",
        &["dispatch", "combine"],
    );
}

/// Four ranks on an uneven plan (balanced by measured events: most of the fabric on the
/// ranks that hold little work), exchanging with neighbour ranks only: the same results and
/// histograms as one process.
#[test]
fn an_uneven_weighted_plan_on_four_ranks_gives_the_same_results() {
    if !mpi_available() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let s = d.join("s.toml");
    std::fs::write(
        &s,
        "seed = 2\n[topology]\nk = 8\n[host]\ncc = \"dctcp\"\n[workload]\nkind = \"ring\"\nmessage_bytes = 262144\nhosts = [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19]\n",
    )
    .unwrap();
    let s = s.to_str().unwrap();
    let out = |name: &str| d.join(name).to_str().unwrap().to_string();
    let o = standalone(&["run", s, "--out", &out("ref")]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let reference = outputs(&d.join("ref"));
    let weights = d.join("ref/node_events.csv");
    let plan = out("w.plan");
    let o = standalone(&[
        "partition",
        s,
        "--parts",
        "8",
        "--ranks",
        "4",
        "--weights",
        weights.to_str().unwrap(),
        "-o",
        &plan,
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let o = mpirun(4, &["run", s, "--partition", &plan, "--out", &out("n4")]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert_eq!(outputs(&d.join("n4")), reference);
    // Each rank reports where its time went.
    let summary: serde_json::Value =
        serde_json::from_slice(&std::fs::read(d.join("n4/summary.json")).unwrap()).unwrap();
    let per_rank = summary["run"]["per_rank"].as_array().unwrap();
    assert_eq!(per_rank.len(), 4);
    for (r, l) in per_rank.iter().enumerate() {
        assert_eq!(l["rank"], r);
        assert!(l["process_wall_s"].as_f64().unwrap() > 0.0, "{l}");
        let parts = ["reduce_wall_s", "encode_wall_s", "exchange_wall_s"];
        let sum: f64 = parts.iter().map(|k| l[k].as_f64().unwrap()).sum();
        assert!(sum <= l["sync_wall_s"].as_f64().unwrap() + 1e-9, "{l}");
    }
}

/// NSCC with trims, drops and RTO timers (as tests/it/checkpoint.rs), on a k = 6 fat tree.
fn lossy_scenario(dir: &Path) -> String {
    let p = dir.join("lossy.toml");
    std::fs::write(
        &p,
        "seed = 5\n[topology]\nk = 6\n[lb]\npolicy = \"reps\"\n[host]\ncc = \"nscc\"\n[switch]\nbuffer_bytes = 30000\ntrim = true\necn = \"ramp\"\nloss_fraction = 0.01\n[workload]\nmessage_bytes = 400000\n",
    )
    .unwrap();
    p.to_str().unwrap().to_string()
}

#[test]
fn two_ranks_stopped_and_restarted_equal_two_ranks_uninterrupted() {
    if !mpi_available() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let s = lossy_scenario(dir.path());
    let path = |n: &str| dir.path().join(n).to_str().unwrap().to_string();
    let o = mpirun(
        2,
        &["run", &s, "--partitions", "4", "--out", &path("whole")],
    );
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let expected = outputs(&dir.path().join("whole"));
    assert!(expected.0["packets"]["dropped"].as_u64().unwrap() > 0);
    let ck = path("ck");
    for stop in ["1us", "5500ns"] {
        let o = mpirun(
            2,
            &[
                "run",
                &s,
                "--partitions",
                "4",
                "--checkpoint",
                &ck,
                "--stop-at",
                stop,
            ],
        );
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        let latest = std::fs::read_to_string(dir.path().join("ck/LATEST")).unwrap();
        for r in 0..2 {
            let f = dir
                .path()
                .join("ck")
                .join(latest.trim())
                .join(format!("rank-{r}.bin"));
            assert!(f.exists(), "{}", f.display());
        }
        let out = path(&format!("out-{stop}"));
        let o = mpirun(2, &["run", &s, "--restart", &ck, "--out", &out]);
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        assert!(outputs(Path::new(&out)) == expected, "stopped at {stop}");
    }
    // A signal on rank 1 only (raised after the first checkpoint): every rank stops at the
    // same boundary and exits 75; the restart ends like the uninterrupted run.
    let ck2 = path("ck2");
    let o = mpirun_env(
        2,
        &[
            "run",
            &s,
            "--partitions",
            "4",
            "--checkpoint",
            &ck2,
            "--checkpoint-every",
            "3us",
        ],
        &[("WEFT_TEST_SIGNAL_AFTER_CHECKPOINT", "1")],
    );
    assert_eq!(
        o.status.code(),
        Some(75),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let out = path("out-signal");
    let o = mpirun(2, &["run", &s, "--restart", &ck2, "--out", &out]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(outputs(Path::new(&out)) == expected, "after the signal");
}

#[test]
fn a_checkpoint_of_two_ranks_is_refused_by_three_and_by_one() {
    if !mpi_available() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let s = lossy_scenario(dir.path());
    let ck = dir.path().join("ck").to_str().unwrap().to_string();
    let o = mpirun(2, &["run", &s, "--checkpoint", &ck, "--stop-at", "2us"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let started = std::time::Instant::now();
    let o = mpirun(3, &["run", &s, "--restart", &ck]);
    assert!(!o.status.success());
    let errs = error_lines(&o);
    assert_eq!(errs.len(), 1, "expected one error line, got {errs:?}");
    assert!(
        errs[0].contains("is for 2 ranks, this run has 3"),
        "{errs:?}"
    );
    assert!(started.elapsed().as_secs() < 60, "failure was not prompt");
    let o = standalone(&["run", &s, "--restart", &ck]);
    assert_eq!(o.status.code(), Some(1));
    let errs = error_lines(&o);
    assert_eq!(errs.len(), 1, "{errs:?}");
    assert!(
        errs[0].contains("is for 2 ranks, this run has 1"),
        "{errs:?}"
    );
}
