//! Runs a reproduction: picks the claims, runs (or resumes) the sweeps they need at the chosen
//! size through the sweep runner, collects each sweep, evaluates every claim and draws the
//! figures. The report is written by the caller from what this returns.
//!
//! Output layout: `OUT/sweeps/PAPER-KEY.toml` (the sweep file at this size),
//! `OUT/sweeps/PAPER-KEY/` (its points, `runs.csv`, `summary.csv`), `OUT/figures/*.svg`.

use super::claims::{BadClaim, Claim, ClaimsFile};
use super::report::SweepCost;
use super::size::{derived_sweep, write_derived, Size};
use super::table::SummaryTable;
use super::verdict::{evaluate, Outcome, Verdict};
use crate::sweep::plot::figure::Figure;
use crate::sweep::{collect, plot, runner, slurm, spec::SweepSpec};
use anyhow::{anyhow, bail, Context, Result};
use plotters::chart::SeriesLabelPosition;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// How `weft reproduce` runs.
pub struct Options {
    /// The size the sweeps run at.
    pub size: Size,
    /// Points run at once (default: the CPUs over the sweep's threads).
    pub jobs: Option<usize>,
    /// The output folder: `sweeps/`, `figures/` and the report go under it.
    pub out: PathBuf,
    /// Write each sweep's Slurm array script instead of running.
    pub slurm: bool,
    /// Evaluate what is already finished, running nothing (a sweep with points left is
    /// reported as partial).
    pub no_run: bool,
    /// The binary that runs the points.
    pub weft_bin: PathBuf,
}

/// The claims of one paper chosen by the command line.
pub struct Chosen {
    /// The paper's claims file.
    pub file: ClaimsFile,
    /// Indices into `file.claims`.
    pub claims: Vec<usize>,
    /// The malformed claims of the file that the selection covers.
    pub bad: Vec<BadClaim>,
}

/// The claims files of `dir` (`*.toml`), by paper name.
pub fn papers(dir: &Path) -> Result<Vec<PathBuf>> {
    let entries = std::fs::read_dir(dir)
        .with_context(|| format!("{}: cannot read the claims folder", dir.display()))?;
    let mut files: Vec<PathBuf> = entries
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|e| e == "toml"))
        .collect();
    files.sort();
    Ok(files)
}

fn stem(p: &Path) -> String {
    p.file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default()
}

/// Whether claim `id` falls under `prefix`, whole dot-separated parts only: `ofan.fig1`
/// covers `ofan.fig1.util`, not `ofan.fig12.dctcp`.
pub fn covered_by(id: &str, prefix: &str) -> bool {
    id == prefix
        || id
            .strip_prefix(prefix)
            .is_some_and(|rest| rest.starts_with('.'))
}

/// Resolves `args` (paper names or claim-id prefixes; none: every paper) against the claims
/// files of `dir`.
pub fn choose(dir: &Path, args: &[String]) -> Result<Vec<Chosen>> {
    let files = papers(dir)?;
    let names: Vec<String> = files.iter().map(|f| stem(f)).collect();
    if files.is_empty() {
        bail!("{}: no claims files (*.toml)", dir.display());
    }
    // Per paper: None = the whole paper, Some(prefixes) = the claims under those prefixes.
    let mut wanted: BTreeMap<String, Option<Vec<String>>> = BTreeMap::new();
    if args.is_empty() {
        for n in &names {
            wanted.insert(n.clone(), None);
        }
    }
    for a in args {
        let paper = a.split('.').next().unwrap_or("");
        if !names.iter().any(|n| n == paper) {
            bail!(
                "{a}: unknown paper or claim id (papers: {})",
                names.join(", ")
            );
        }
        let entry = wanted.entry(paper.to_string()).or_insert(Some(Vec::new()));
        if a == paper {
            *entry = None;
        } else if let Some(list) = entry {
            list.push(a.clone());
        }
    }
    let mut out = Vec::new();
    for (paper, prefixes) in wanted {
        let path = &files[names
            .iter()
            .position(|n| *n == paper)
            .expect("a known paper")];
        let file = ClaimsFile::load(path)?;
        if file.paper != paper {
            bail!(
                "{}: paper: {:?}, but the file is named {paper}.toml",
                path.display(),
                file.paper
            );
        }
        let covers = |id: &str| {
            prefixes
                .as_ref()
                .is_none_or(|ps| ps.iter().any(|p| covered_by(id, p)))
        };
        if let Some(ps) = &prefixes {
            for p in ps {
                if !file.claims.iter().any(|c| covered_by(&c.id, p))
                    && !file.bad.iter().any(|b| covered_by(&b.id, p))
                {
                    bail!(
                        "{p}: unknown paper or claim id (no claim of {} is {p} or under it)",
                        path.display()
                    );
                }
            }
        }
        let claims = (0..file.claims.len())
            .filter(|&i| covers(&file.claims[i].id))
            .collect();
        let bad = file
            .bad
            .iter()
            .filter(|b| prefixes.is_none() || covers(&b.id))
            .cloned()
            .collect();
        out.push(Chosen { file, claims, bad });
    }
    Ok(out)
}

/// One paper's results.
pub struct PaperResult {
    /// The paper's short name.
    pub paper: String,
    /// The paper's title.
    pub title: String,
    /// Each chosen claim's verdict and measured value.
    pub(crate) outcomes: Vec<Outcome>,
    /// Each claim's sweep keys, parallel to `outcomes`.
    pub claim_sweeps: Vec<Vec<String>>,
    /// What each sweep cost.
    pub(crate) sweeps: Vec<SweepCost>,
    /// The figures drawn, as paths relative to the output folder.
    pub figures: Vec<String>,
    /// Sweeps with failed points, and figures that could not be drawn.
    pub problems: Vec<String>,
}

/// The value of a TOML value as a summary.csv cell holds it (strings without quotes).
fn cell_text(v: &toml::Value) -> String {
    match v {
        toml::Value::String(s) => s.clone(),
        v => v.to_string(),
    }
}

/// Every value each field of the sweep takes at any of its sizes.
fn known_values(file: &ClaimsFile, key: &str) -> Result<BTreeMap<String, Vec<String>>> {
    let def = file.sweep(key).expect("a claim's sweep exists");
    let base = SweepSpec::load(&def.file)
        .with_context(|| format!("{}: sweep.{key}", file.path.display()))?;
    let mut out: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for o in def.sizes.values() {
        let text = derived_sweep(&base, key, o)?;
        let spec = SweepSpec::parse(&text, &def.file)?;
        let fixed = spec.fixed.iter().map(|a| (&a.field, vec![a.value.clone()]));
        let lists = spec
            .grid
            .iter()
            .chain(&spec.zip)
            .map(|(f, v)| (f, v.clone()));
        for (field, values) in fixed.chain(lists) {
            let known = out.entry(field.clone()).or_default();
            for v in values {
                let t = cell_text(&v);
                if !known.contains(&t) {
                    known.push(t);
                }
            }
        }
    }
    Ok(out)
}

/// The sweeps the chosen claims (and the figures drawn from those sweeps) need, in the order
/// of first use.
fn needed_sweeps(c: &Chosen, size: Size) -> Vec<String> {
    let mut keys: Vec<String> = Vec::new();
    for &i in &c.claims {
        let claim = &c.file.claims[i];
        if !claim.sizes.contains(&size) {
            continue;
        }
        for key in &claim.sweeps {
            let runs = c
                .file
                .sweep(key)
                .is_some_and(|s| s.sizes.contains_key(&size));
            if runs && !keys.contains(key) {
                keys.push(key.clone());
            }
        }
    }
    keys
}

fn jobs_for(spec: &SweepSpec, jobs: Option<usize>) -> usize {
    jobs.unwrap_or_else(|| {
        let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
        (cpus / spec.threads).max(1)
    })
}

/// Writes each needed sweep's Slurm array script; returns the scripts.
pub fn write_slurm(chosen: &[Chosen], o: &Options) -> Result<Vec<PathBuf>> {
    let mut scripts = Vec::new();
    for c in chosen {
        for key in needed_sweeps(c, o.size) {
            let (spec, dir) = derive(c, &key, o)?;
            spec.validate_points()?;
            scripts.push(slurm::write(&spec, &dir, &o.weft_bin)?);
        }
    }
    Ok(scripts)
}

fn derive(c: &Chosen, key: &str, o: &Options) -> Result<(SweepSpec, PathBuf)> {
    let def = c.file.sweep(key).expect("a claim's sweep exists");
    let name = format!("{}-{key}", c.file.paper);
    let sweeps = o.out.join("sweeps");
    let spec = write_derived(
        &def.file,
        &name,
        &def.sizes[&o.size],
        &sweeps.join(format!("{name}.toml")),
    )
    .with_context(|| format!("{}: sweep.{key}", c.file.path.display()))?;
    Ok((spec, sweeps.join(&name)))
}

/// Runs what the chosen claims need and evaluates them.
pub fn run(chosen: &[Chosen], o: &Options) -> Result<Vec<PaperResult>> {
    let total: usize = chosen.iter().map(|c| needed_sweeps(c, o.size).len()).sum();
    let mut step = 0;
    let mut results = Vec::new();
    for c in chosen {
        let mut ran = Ran::default();
        for key in needed_sweeps(c, o.size) {
            step += 1;
            run_sweep(c, &key, o, (step, total), &mut ran)?;
        }
        let mut outcomes = Vec::new();
        let mut claim_sweeps = Vec::new();
        for &i in &c.claims {
            let claim = &c.file.claims[i];
            let outcome = evaluate_at(claim, c, o.size, &ran.tables, &ran.why_not, &ran.partial);
            outcomes.push(outcome);
            claim_sweeps.push(claim.sweeps.clone());
        }
        for b in &c.bad {
            outcomes.push(Outcome {
                id: b.id.clone(),
                figure: String::new(),
                paper: String::new(),
                weft: String::new(),
                test: String::new(),
                verdict: Verdict::Error,
                note: b.error.clone(),
                known: false,
                within_se: false,
            });
            claim_sweeps.push(Vec::new());
        }
        let figures = draw_figures(c, &ran.tables, o, &mut ran.problems);
        results.push(PaperResult {
            paper: c.file.paper.clone(),
            title: c.file.title.clone(),
            outcomes,
            claim_sweeps,
            sweeps: ran.sweeps,
            figures,
            problems: ran.problems,
        });
    }
    Ok(results)
}

/// What one paper's sweeps left, by sweep key: the summary tables of those that ran, why the
/// others did not, the notes of partial ones, their costs and the problems met.
#[derive(Default)]
struct Ran {
    tables: BTreeMap<String, SummaryTable>,
    why_not: BTreeMap<String, String>,
    partial: BTreeMap<String, String>,
    sweeps: Vec<SweepCost>,
    problems: Vec<String>,
}

/// The points' summed run time, from `runs.csv`'s `wall_s` column, if it has one.
fn wall_seconds(runs: &collect::Table) -> Option<f64> {
    let w = runs.header.iter().position(|h| h == "wall_s")?;
    Some(
        runs.rows
            .iter()
            .filter_map(|r| r[w].parse::<f64>().ok())
            .sum(),
    )
}

/// The points' summed run time from a summary's `wall_s_mean` × `wall_s_n`, for a kept sweep
/// whose runs.csv was trimmed of `wall_s`.
fn summary_wall_seconds(path: &std::path::Path) -> Option<f64> {
    let t = collect::read_csv(path).ok()?;
    let col = |name: &str| t.header.iter().position(|c| c == name);
    let (mean, n) = (col("wall_s_mean")?, col("wall_s_n")?);
    let num = |r: &[String], i: usize| r[i].parse::<f64>().ok();
    Some(
        t.rows
            .iter()
            .filter_map(|r| Some(num(r, mean)? * num(r, n)?))
            .sum(),
    )
}

/// Runs (unless `--no-run`) and collects one sweep of a paper; `step` is (this one, of all).
fn run_sweep(
    c: &Chosen,
    key: &str,
    o: &Options,
    (step, total): (usize, usize),
    ran: &mut Ran,
) -> Result<()> {
    let (spec, dir) = derive(c, key, o)?;
    eprintln!(
        "reproduce: [{step}/{total}] sweep {} at size {}: {} points",
        spec.name,
        o.size.name(),
        spec.len()
    );
    if let Err(e) = spec.validate_points() {
        let msg = format!("{e:#}").replace('\n', "; ");
        ran.problems.push(msg.clone());
        let why = format!("sweep {} not run: {msg}", spec.name);
        ran.why_not.insert(key.to_string(), why);
        return Ok(());
    }
    let opts = runner::RunnerOptions {
        out: dir.clone(),
        jobs: jobs_for(&spec, o.jobs),
        only: None,
        weft_bin: o.weft_bin.clone(),
    };
    if !o.no_run {
        let done = runner::run(&spec, &opts)?;
        if !done.failed.is_empty() {
            ran.problems.push(format!(
                "sweep {}: {} of {} points failed (see stderr.txt in {})",
                spec.name,
                done.failed.len(),
                done.ran,
                done.failed[0].display()
            ));
        }
    }
    // A sweep kept as its collected tables only (a committed reproduction, its points
    // removed) is evaluated under `--no-run` from its summary.csv, runs.csv giving the points.
    let kept = o.no_run
        && !collect::has_points(&dir)
        && dir.join("runs.csv").is_file()
        && dir.join("summary.csv").is_file();
    let collected = match kept {
        true => collect::collect_runs_csv(&dir, &spec.varied_fields()),
        false => collect::collect(&dir),
    };
    let col = match collected {
        Ok(col) => col,
        Err(e) => {
            let why = format!("sweep {}: {e:#}", spec.name);
            ran.why_not.insert(key.to_string(), why);
            return Ok(());
        }
    };
    let (points, planned) = (col.runs.rows.len(), spec.len());
    if points == 0 {
        let why = format!(
            "sweep {}: no point finished yet (0 of {planned})",
            spec.name
        );
        ran.why_not.insert(key.to_string(), why);
        return Ok(());
    }
    // A kept sweep's summary.csv is the one its points made (its runs.csv may keep fewer
    // columns): it stays, and is what the claims read.
    if !kept {
        collect::write(&dir, &col)?;
    }
    let run_s = wall_seconds(&col.runs)
        .or_else(|| {
            kept.then(|| summary_wall_seconds(&dir.join("summary.csv")))
                .flatten()
        })
        .unwrap_or(0.0);
    ran.sweeps.push(SweepCost {
        name: key.to_string(),
        points,
        planned,
        run_s,
    });
    if points < planned {
        let note = format!("sweep {} partial: {points} of {planned} points", spec.name);
        ran.partial.insert(key.to_string(), note);
    }
    let summary = dir.join("summary.csv");
    let table = SummaryTable::read(&summary, &spec.name, known_values(&c.file, key)?)?;
    ran.tables.insert(key.to_string(), table);
    Ok(())
}

/// One claim's verdict at `size`: NOT RUN (with why) unless every sweep it reads ran there;
/// several sweeps are read as one table (`SummaryTable::concat`). The notes of partial sweeps
/// come first in its note.
fn evaluate_at(
    claim: &Claim,
    c: &Chosen,
    size: Size,
    tables: &BTreeMap<String, SummaryTable>,
    why_not: &BTreeMap<String, String>,
    partial: &BTreeMap<String, String>,
) -> Outcome {
    let notes_of = |m: &BTreeMap<String, String>| -> String {
        let found: Vec<&str> = claim
            .sweeps
            .iter()
            .filter_map(|k| m.get(k).map(String::as_str))
            .collect();
        found.join("; ")
    };
    let undefined = claim
        .sweeps
        .iter()
        .find(|k| !c.file.sweep(k).is_some_and(|s| s.sizes.contains_key(&size)));
    let why = if !claim.sizes.contains(&size) {
        format!("not evaluated at size {}", size.name())
    } else if let Some(k) = undefined {
        format!("sweep {k} has no size {}", size.name())
    } else {
        notes_of(why_not)
    };
    let parts: Option<Vec<(&str, &SummaryTable)>> = claim
        .sweeps
        .iter()
        .map(|k| tables.get(k).map(|t| (k.as_str(), t)))
        .collect();
    let parts = parts.filter(|_| claim.sizes.contains(&size) && undefined.is_none());
    let joined;
    let table = match parts.as_deref() {
        None => None,
        Some([(_, one)]) => Some(*one),
        Some(p) => {
            joined = SummaryTable::concat(p);
            Some(&joined)
        }
    };
    let mut outcome = evaluate(claim, table, &why);
    let partials = notes_of(partial);
    if !partials.is_empty() && table.is_some() {
        outcome.note = format!("{partials}. {}", outcome.note)
            .trim_end()
            .to_string();
    }
    outcome
}

/// Draws the file's figures whose sweep ran; returns their paths relative to OUT.
fn draw_figures(
    c: &Chosen,
    tables: &BTreeMap<String, SummaryTable>,
    o: &Options,
    problems: &mut Vec<String>,
) -> Vec<String> {
    let mut drawn = Vec::new();
    for f in &c.file.figures {
        if !tables.contains_key(&f.sweep) {
            continue;
        }
        let csv = o
            .out
            .join("sweeps")
            .join(format!("{}-{}", c.file.paper, f.sweep))
            .join("summary.csv");
        let rel = format!("figures/{}-{}.svg", c.file.paper, f.id);
        let path = o.out.join(&rel);
        let fig = Figure {
            title: f.title.clone(),
            x_label: f.x.clone(),
            y_label: f.y.clone(),
            width_px: 800,
            height_px: 500,
            markers: true,
            legend_at: SeriesLabelPosition::UpperLeft,
            log_x: f.logx,
            log_y: f.logy,
        };
        let made = std::fs::create_dir_all(o.out.join("figures"))
            .map_err(|e| anyhow!("{e}"))
            .and_then(|()| plot::line::series(&csv, &f.x, &f.y, f.group.as_deref()))
            .and_then(|series| plot::write_lines(&path, &fig, &series));
        match made {
            Ok(()) => drawn.push(rel),
            Err(e) => problems.push(format!("{}: figure {}: {e:#}", c.file.path.display(), f.id)),
        }
    }
    drawn
}
