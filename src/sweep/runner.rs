//! Runs a sweep's points on this machine: each point is a child process of the same binary
//! (`weft run BASE --set ... --threads T --out POINT_DIR`), `jobs` at a time. Finished points
//! (with `done`) are skipped, so a killed or failed sweep resumes by running it again. A
//! failing point does not stop the others; the sweep fails at the end naming them.

use super::layout;
use super::spec::{Command, Point, SweepSpec};
use anyhow::{bail, Context, Result};
use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::Instant;

/// How a sweep's points are run.
pub struct RunnerOptions {
    /// The sweep's output folder (one folder per point under it).
    pub out: PathBuf,
    /// Points run at once.
    pub jobs: usize,
    /// Run only this point (a Slurm array task).
    pub only: Option<usize>,
    /// The `weft` binary that runs the points.
    pub weft_bin: PathBuf,
}

/// What a sweep did.
#[derive(Debug, Default)]
pub struct Outcome {
    /// Points run now.
    pub ran: usize,
    /// Points already finished (with `done`), not run again.
    pub skipped: usize,
    /// Folders of the points that failed.
    pub failed: Vec<PathBuf>,
}

/// Progress of the points run now, printed on stderr after each one.
struct Progress {
    total: usize,
    finished: AtomicUsize,
    failed: AtomicUsize,
    started: Instant,
    tty: bool,
    lock: Mutex<()>,
}

impl Progress {
    fn report(&self, ok: bool) {
        let _guard = self.lock.lock().expect("progress lock");
        let done = self.finished.fetch_add(1, Ordering::SeqCst) + 1;
        let failed = self.failed.fetch_add(!ok as usize, Ordering::SeqCst) + !ok as usize;
        let elapsed_s = self.started.elapsed().as_secs_f64();
        let left_s = elapsed_s / done as f64 * (self.total - done) as f64;
        let line = format!(
            "sweep: {done}/{} runs done, {failed} failed, {:.1} s elapsed, about {:.1} s left",
            self.total, elapsed_s, left_s
        );
        let mut err = std::io::stderr().lock();
        if self.tty {
            let end = if done == self.total { "\n" } else { "" };
            let _ = write!(err, "\r{line}\x1b[K{end}");
        } else {
            let _ = writeln!(err, "{line}");
        }
    }
}

/// Runs the points of `spec` not yet done (all of them, or `only`). Every point's scenario
/// was validated by the caller.
pub fn run(spec: &SweepSpec, opts: &RunnerOptions) -> Result<Outcome> {
    assert!(opts.jobs >= 1, "jobs >= 1");
    let n = spec.len();
    let chosen: Vec<Point> = match opts.only {
        Some(i) if i >= n => bail!("--only {i}: the sweep has points 0 to {}", n - 1),
        Some(i) => vec![spec.point(i)],
        None => spec.points(),
    };
    std::fs::create_dir_all(&opts.out)
        .with_context(|| format!("--out {}: cannot create the folder", opts.out.display()))?;
    layout::check_same_sweep(
        &opts.out,
        &spec
            .points()
            .iter()
            .map(|p| layout::dir_name(p, n))
            .collect::<Vec<_>>(),
    )?;
    let mut outcome = Outcome::default();
    let mut todo = Vec::new();
    for p in chosen {
        let dir = layout::point_dir(&opts.out, &p, n);
        if layout::prepare(&dir, &layout::point_toml(spec, &p))? {
            outcome.skipped += 1;
        } else {
            todo.push((p, dir));
        }
    }
    eprintln!(
        "sweep {:?}: {n} points, {} done before, {} to run, {} at a time, into {}",
        spec.name,
        outcome.skipped,
        todo.len(),
        opts.jobs.min(todo.len().max(1)),
        opts.out.display()
    );
    let progress = Progress {
        total: todo.len(),
        finished: AtomicUsize::new(0),
        failed: AtomicUsize::new(0),
        started: Instant::now(),
        tty: std::io::stderr().is_terminal(),
        lock: Mutex::new(()),
    };
    let next = AtomicUsize::new(0);
    let failed = Mutex::new(Vec::new());
    std::thread::scope(|scope| {
        for _ in 0..opts.jobs.min(todo.len()) {
            scope.spawn(|| loop {
                let i = next.fetch_add(1, Ordering::SeqCst);
                let Some((p, dir)) = todo.get(i) else { break };
                let ok = match run_point(spec, p, dir, &opts.weft_bin) {
                    Ok(()) => true,
                    Err(e) => {
                        let msg = format!("{e:#}").replace('\n', "; ");
                        let nl = if progress.tty { "\n" } else { "" };
                        eprintln!("{nl}sweep: point {} failed: {msg}", p.index);
                        failed.lock().expect("failed list").push(dir.clone());
                        false
                    }
                };
                progress.report(ok);
            });
        }
    });
    outcome.ran = todo.len();
    outcome.failed = failed.into_inner().expect("failed list");
    outcome.failed.sort();
    Ok(outcome)
}

/// Runs one point in its (prepared) folder and marks it done if the run succeeded.
fn run_point(spec: &SweepSpec, p: &Point, dir: &Path, weft_bin: &Path) -> Result<()> {
    let stdout_path = dir.join("stdout.txt");
    let stderr_path = dir.join("stderr.txt");
    let stdout = std::fs::File::create(&stdout_path)
        .with_context(|| format!("writing {}", stdout_path.display()))?;
    let stderr = std::fs::File::create(&stderr_path)
        .with_context(|| format!("writing {}", stderr_path.display()))?;
    let mut cmd = std::process::Command::new(weft_bin);
    cmd.arg(spec.command.name()).arg(&spec.scenario);
    if spec.command == Command::Run {
        cmd.arg("--threads").arg(spec.threads.to_string());
    }
    cmd.arg("--out").arg(dir).args(spec.options(p));
    for set in spec.sets(p) {
        cmd.arg("--set").arg(set);
    }
    let started = Instant::now();
    let status = cmd
        .stdout(stdout)
        .stderr(stderr)
        .status()
        .with_context(|| format!("cannot start {}", weft_bin.display()))?;
    let wall_s = started.elapsed().as_secs_f64();
    if !status.success() {
        let first = std::fs::read_to_string(&stderr_path).unwrap_or_default();
        let first = first.lines().find(|l| !l.trim().is_empty()).unwrap_or("");
        bail!(
            "{} ({status}); see {}: {first}",
            dir.display(),
            stderr_path.display()
        );
    }
    layout::mark_done(dir, wall_s)
}
