//! The Slurm templates in slurm/ on a real (one-node) Slurm cluster: each test submits a job
//! with `timeout 300 sbatch --wait` running the MPI build of `weft` and checks the job's exit
//! status and outputs. Start a cluster with `.ci/slurm-up.sh` first (stop it with
//! `.ci/slurm-down.sh`); without one the tests print "skipped" and pass, unless
//! WEFT_REQUIRE_SLURM=1, which makes them fail (only the value 1 counts: unset, 0 or any other
//! value skips). Every run is tiny: a k = 4 fat tree (16 hosts) and 64 KiB messages.

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::OnceLock;
use tempfile::TempDir;

const WEFT: &str = env!("CARGO_BIN_EXE_weft");
const REPO: &str = env!("CARGO_MANIFEST_DIR");

/// The small overrides every run uses.
const SMALL: &[&str] = &[
    "--set",
    "topology.k=4",
    "--set",
    "workload.message_bytes=65536",
];

fn quickstart() -> String {
    format!("{REPO}/scenarios/quickstart.toml")
}

fn template(name: &str) -> String {
    format!("{REPO}/slurm/{name}")
}

/// Whether a Slurm cluster with a usable node answers. Without one: `false` after printing
/// why the test is skipped, or a panic when WEFT_REQUIRE_SLURM=1.
fn slurm_up(test: &str) -> bool {
    // Asked once per test process: without a controller, sinfo takes ~10 s to give up.
    static STATE: OnceLock<Result<(), String>> = OnceLock::new();
    let why = match STATE.get_or_init(probe_slurm) {
        Ok(()) => return true,
        Err(why) => why,
    };
    if std::env::var("WEFT_REQUIRE_SLURM").as_deref() == Ok("1") {
        panic!("{test}: no Slurm cluster, and WEFT_REQUIRE_SLURM=1 ({why})");
    }
    eprintln!("{test}: skipped: no Slurm cluster (run .ci/slurm-up.sh) [{why}]");
    false
}

/// `Ok` if `sinfo` shows a node that is idle, mixed or allocated (and responding), else why not.
fn probe_slurm() -> Result<(), String> {
    let out = Command::new("timeout")
        .args(["30", "sinfo", "-h", "-N", "-o", "%T"])
        .output()
        .map_err(|e| format!("timeout sinfo: {e}"))?;
    let states = String::from_utf8_lossy(&out.stdout);
    // `idle*` etc.: the node does not respond.
    let up = out.status.success()
        && states.lines().map(str::trim).any(|s| {
            matches!(
                s,
                "idle" | "mixed" | "allocated" | "completing" | "idle+" | "mixed+"
            )
        });
    if up {
        return Ok(());
    }
    Err(format!(
        "sinfo: {}; node states {:?}; {}",
        out.status,
        states.trim(),
        String::from_utf8_lossy(&out.stderr).trim()
    ))
}

/// A fresh working folder for one job (under target/, which a cluster shares more often than
/// /tmp).
fn workdir() -> TempDir {
    tempfile::Builder::new()
        .prefix("slurm-")
        .tempdir_in(env!("CARGO_TARGET_TMPDIR"))
        .expect("temp dir")
}

/// A finished `sbatch --wait`.
struct Job {
    /// Job id (for an array: the array job id).
    id: String,
    out: Output,
    dir: PathBuf,
}

impl Job {
    fn ok(&self) -> bool {
        self.out.status.success()
    }

    /// The job logs (`*.out` in the working folder), for assertion messages.
    fn logs(&self) -> String {
        let mut names: Vec<PathBuf> = std::fs::read_dir(&self.dir)
            .map(|d| d.filter_map(|e| e.ok()).map(|e| e.path()).collect())
            .unwrap_or_default();
        names.retain(|p| p.extension().is_some_and(|e| e == "out"));
        names.sort();
        let mut s = format!(
            "sbatch: {}\nsbatch stdout: {}\nsbatch stderr: {}\n",
            self.out.status,
            String::from_utf8_lossy(&self.out.stdout).trim(),
            String::from_utf8_lossy(&self.out.stderr).trim()
        );
        for p in names {
            let text = std::fs::read_to_string(&p).unwrap_or_default();
            s += &format!("---- {}\n{text}", p.display());
        }
        s
    }

    /// The output folder `runs/NAME` of this job.
    fn run_dir(&self, name: &str) -> PathBuf {
        self.dir.join("runs").join(name)
    }
}

/// `timeout 300 sbatch --wait --parsable SBATCH_ARGS SCRIPT SCRIPT_ARGS` in `dir`, with
/// WEFT_BIN = the test binary, WEFT_OUT_ROOT = dir/runs and `env` added.
fn sbatch(
    dir: &Path,
    name: &str,
    sbatch_args: &[&str],
    script: &str,
    script_args: &[&str],
    env: &[(&str, &str)],
) -> Job {
    // A job name unique to this test process, to cancel the job if `timeout` fires.
    let job_name = format!("weft-test-{}-{name}", std::process::id());
    let mut cmd = Command::new("timeout");
    cmd.args(["300", "sbatch", "--wait", "--parsable", "--time=00:05:00"])
        .arg(format!("--job-name={job_name}"))
        .args(sbatch_args)
        .arg(script)
        .args(script_args)
        .current_dir(dir)
        .env("WEFT_BIN", WEFT)
        .env("WEFT_OUT_ROOT", dir.join("runs"));
    // Options set through the environment would change the jobs.
    for (k, _) in std::env::vars_os() {
        if k.to_string_lossy().starts_with("SBATCH_") {
            cmd.env_remove(k);
        }
    }
    for (k, v) in env {
        cmd.env(k, v);
    }
    let out = cmd.output().expect("run timeout/sbatch");
    if out.status.code() == Some(124) {
        let _ = Command::new("scancel")
            .arg(format!("--name={job_name}"))
            .status();
    }
    let stdout = String::from_utf8_lossy(&out.stdout);
    // --parsable: "JOBID" or "JOBID;CLUSTER".
    let id = stdout
        .lines()
        .next()
        .unwrap_or("")
        .split(';')
        .next()
        .unwrap_or("")
        .trim()
        .to_string();
    let job = Job {
        id,
        out,
        dir: dir.to_path_buf(),
    };
    assert!(
        job.out.status.code() != Some(124),
        "{name}: sbatch --wait timed out after 300 s (job cancelled)\n{}",
        job.logs()
    );
    assert!(
        !job.id.is_empty() && job.id.chars().all(|c| c.is_ascii_digit()),
        "{name}: no job id from sbatch --parsable\n{}",
        job.logs()
    );
    job
}

/// summary.json of a finished run folder, checking latency.hlog is there too.
fn summary(job: &Job, run: &Path) -> Value {
    let path = run.join("summary.json");
    let text = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("{}: {e}\n{}", path.display(), job.logs()));
    let hlog = run.join("latency.hlog");
    assert!(
        hlog.metadata().is_ok_and(|m| m.len() > 0),
        "{} missing or empty\n{}",
        hlog.display(),
        job.logs()
    );
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// `"results"` of a direct single-process `weft run SCENARIO ARGS --json`.
fn direct_results(args: &[&str]) -> Value {
    let out = Command::new(WEFT)
        .arg("run")
        .arg(quickstart())
        .args(args)
        .arg("--json")
        .output()
        .expect("run weft");
    assert!(
        out.status.success(),
        "direct run failed: {}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    let v: Value = serde_json::from_slice(&out.stdout).expect("--json prints JSON");
    v["results"].clone()
}

/// weft-run.sbatch with SBATCH_ARGS and LAUNCHER must succeed with `ranks` ranks and the
/// results of a direct single-process run.
fn run_template(name: &str, sbatch_args: &[&str], launcher: &str, ranks: u64) {
    let dir = workdir();
    let mut args = vec![quickstart()];
    args.extend(SMALL.iter().map(|s| s.to_string()));
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let job = sbatch(
        dir.path(),
        name,
        sbatch_args,
        &template("weft-run.sbatch"),
        &args,
        &[("WEFT_LAUNCHER", launcher)],
    );
    assert!(job.ok(), "{name}: job failed\n{}", job.logs());
    let s = summary(&job, &job.run_dir(&job.id));
    assert_eq!(
        s["run"]["ranks"],
        ranks,
        "{name}: run.ranks\n{}",
        job.logs()
    );
    assert_eq!(
        s["run"]["threads"],
        1,
        "{name}: run.threads\n{}",
        job.logs()
    );
    assert_eq!(s["scenario"]["topology"]["k"], 4, "{name}: the override");
    assert_eq!(
        s["results"],
        direct_results(SMALL),
        "{name}: results differ from a direct single-process run\n{}",
        job.logs()
    );
    let log = job.logs();
    assert!(
        log.contains(&format!("+ {launcher} ")),
        "{name}: the job log does not show the {launcher} command\n{log}"
    );
}

/// (a) 2 ranks through plain `srun` (PMIx).
#[test]
fn run_two_ranks_srun() {
    if !slurm_up("run_two_ranks_srun") {
        return;
    }
    run_template("srun2", &["--ntasks=2"], "srun", 2);
}

/// (b) 2 ranks through `mpirun` inside the allocation.
#[test]
fn run_two_ranks_mpirun() {
    if !slurm_up("run_two_ranks_mpirun") {
        return;
    }
    run_template("mpirun2", &["--ntasks=2", "--cpus-per-task=1"], "mpirun", 2);
}

/// (b) 4 ranks through `mpirun` on fewer CPUs than ranks, allowed by `--overcommit`.
#[test]
fn run_four_ranks_mpirun_overcommit() {
    if !slurm_up("run_four_ranks_mpirun_overcommit") {
        return;
    }
    run_template(
        "mpirun4",
        &["--ntasks=4", "--cpus-per-task=1", "--overcommit"],
        "mpirun",
        4,
    );
}

/// (c) A job array over a variants file: one run per line, each with its own seed; here with
/// 1 rank × 2 threads per task (SLURM_CPUS_PER_TASK → --threads).
#[test]
fn array_of_seeds() {
    if !slurm_up("array_of_seeds") {
        return;
    }
    let dir = workdir();
    let small = SMALL.join(" ");
    let q = quickstart();
    let variants = format!(
        "# seeds of the quickstart\n\n{q} {small} --set seed=11\n  # indented comment\n{q} {small} --set seed=12\n{q} {small} --set 'seed=13'\n"
    );
    let file = dir.path().join("variants.txt");
    std::fs::write(&file, variants).expect("write variants");
    let job = sbatch(
        dir.path(),
        "array",
        &["--array=1-3", "--ntasks=1", "--cpus-per-task=2"],
        &template("weft-array.sbatch"),
        &[file.to_str().unwrap()],
        &[],
    );
    assert!(job.ok(), "array: job failed\n{}", job.logs());
    let mut results = Vec::new();
    for (task, seed) in [(1, 11), (2, 12), (3, 13)] {
        let s = summary(&job, &job.run_dir(&format!("{}_{task}", job.id)));
        assert_eq!(
            s["scenario"]["seed"],
            seed,
            "array task {task} ran the wrong variant\n{}",
            job.logs()
        );
        assert_eq!(s["run"]["ranks"], 1, "array task {task}: run.ranks");
        assert_eq!(s["run"]["threads"], 2, "array task {task}: run.threads");
        assert_eq!(s["scenario"]["topology"]["k"], 4, "array task {task}");
        results.push(s["results"].clone());
    }
    for i in 0..results.len() {
        for j in i + 1..results.len() {
            assert_ne!(
                results[i],
                results[j],
                "array tasks {} and {} (different seeds) have equal results",
                i + 1,
                j + 1
            );
        }
    }
}

/// (d) Bad input: the job fails, and its log has the one `error:` line naming the field.
#[test]
fn failing_job() {
    if !slurm_up("failing_job") {
        return;
    }
    let dir = workdir();
    let q = quickstart();
    let job = sbatch(
        dir.path(),
        "fail",
        &["--ntasks=2"],
        &template("weft-run.sbatch"),
        &[
            &q,
            "--set",
            "topology.k=5",
            "--set",
            "workload.message_bytes=65536",
        ],
        &[],
    );
    let log = job.logs();
    assert!(!job.ok(), "a job with topology.k = 5 succeeded\n{log}");
    assert!(
        job.out.status.code().is_some(),
        "sbatch killed by a signal\n{log}"
    );
    let errors: Vec<&str> = log.lines().filter(|l| l.starts_with("error:")).collect();
    assert_eq!(
        errors.len(),
        1,
        "expected exactly one `error:` line in the job log\n{log}"
    );
    assert!(
        errors[0].contains("topology.k"),
        "the error line does not name topology.k\n{log}"
    );
    assert!(!log.contains("panicked"), "{log}");
    assert!(
        !job.run_dir(&job.id).join("summary.json").exists(),
        "a failed job wrote summary.json"
    );
}

/// Polls `what` every 0.5 s until it returns `Some`, for at most `secs` seconds.
fn poll<T>(secs: u64, mut what: impl FnMut() -> Option<T>) -> Option<T> {
    let start = std::time::Instant::now();
    while start.elapsed().as_secs() < secs {
        if let Some(v) = what() {
            return Some(v);
        }
        std::thread::sleep(std::time::Duration::from_millis(500));
    }
    None
}

/// `scontrol show job ID`'s text (empty once Slurm has forgotten the job).
fn show_job(id: &str) -> String {
    let out = Command::new("scontrol")
        .args(["show", "job", id])
        .output()
        .expect("run scontrol");
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// (e) Checkpoint and requeue: USR1 to the batch shell (as `--signal=B:USR1@120` sends it
/// before the time limit) makes weft checkpoint and exit 75; the job requeues itself, resumes
/// from the checkpoint and ends with the results of an uninterrupted run.
#[test]
fn signalled_job_checkpoints_requeues_and_resumes() {
    if !slurm_up("signalled_job_checkpoints_requeues_and_resumes") {
        return;
    }
    let dir = workdir();
    // 20 ms of simulated time, about 8 s on 2 ranks here (176 M events): long enough to be
    // signalled mid-run, given that the test polls every 0.5 s (a 1 ms run, 0.4 s, was not).
    let overrides = [
        "--set",
        "topology.k=4",
        "--set",
        "workload.message_bytes=2000000000",
    ];
    let q = quickstart();
    let mut args = vec![q.as_str()];
    args.extend(overrides);
    args.extend(["--checkpoint-every", "1ms"]);
    let job_name = format!("weft-test-{}-requeue", std::process::id());
    let out = Command::new("sbatch")
        .args(["--parsable", "--time=00:05:00", "--ntasks=2"])
        .arg(format!("--job-name={job_name}"))
        .arg(template("weft-run.sbatch"))
        .args(&args)
        .current_dir(dir.path())
        .env("WEFT_BIN", WEFT)
        .env("WEFT_OUT_ROOT", dir.path().join("runs"))
        .output()
        .expect("run sbatch");
    let id = String::from_utf8_lossy(&out.stdout)
        .split(';')
        .next()
        .unwrap_or("")
        .trim()
        .to_string();
    assert!(
        out.status.success() && !id.is_empty(),
        "sbatch: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let cancel = || {
        let _ = Command::new("scancel").arg(&id).status();
    };
    let run = dir.path().join("runs").join(&id);
    let log =
        || std::fs::read_to_string(dir.path().join(format!("weft-{id}.out"))).unwrap_or_default();
    // Running, with a first checkpoint written (weft's handler is installed by then).
    let running = poll(120, || {
        (show_job(&id).contains("JobState=RUNNING") && run.join("checkpoint/LATEST").exists())
            .then_some(())
    });
    if running.is_none() {
        cancel();
        panic!("the job did not start or checkpoint\n{}", log());
    }
    let signalled = Command::new("scancel")
        .args(["--signal=USR1", "--batch", &id])
        .status()
        .expect("run scancel");
    assert!(signalled.success());
    if poll(60, || show_job(&id).contains("Restarts=1").then_some(())).is_none() {
        cancel();
        panic!("the job was not requeued\n{}\n{}", show_job(&id), log());
    }
    // Slurm holds a requeued job until its old credential expires (BeginTime = requeue time
    // + cred_expire + 1 s, 121 s by default); releasing it earlier (scontrol update
    // StartTime=now) makes the restart fail with "Job credential revoked". So: wait.
    let done = poll(400, || {
        let s = show_job(&id);
        (s.is_empty() || s.contains("JobState=COMPLETED") || s.contains("JobState=FAILED"))
            .then_some(s)
    });
    let Some(state) = done else {
        cancel();
        panic!("the requeued job did not finish\n{}", log());
    };
    let text = log();
    assert!(
        state.is_empty() || state.contains("JobState=COMPLETED"),
        "{state}\n{text}"
    );
    for want in [
        "signal received, asking weft to checkpoint",
        "checkpointed in",
        "requeueing",
        "resuming from",
    ] {
        assert!(text.contains(want), "the job log lacks {want:?}\n{text}");
    }
    let path = run.join("summary.json");
    let summary: Value = serde_json::from_str(
        &std::fs::read_to_string(&path)
            .unwrap_or_else(|e| panic!("{}: {e}\n{text}", path.display())),
    )
    .unwrap();
    assert!(summary["run"]["resumed_at_ns"].as_f64().is_some(), "{text}");
    assert_eq!(summary["run"]["ranks"], 2);
    assert_eq!(
        summary["results"],
        direct_results(&overrides),
        "the resumed job's results differ from an uninterrupted run\n{text}"
    );
}
