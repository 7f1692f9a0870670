//! `weft reproduce` through the real binary on tiny claims files: every test kind agreeing and
//! disagreeing on real runs, `--strict` and `known`, bad claims reported with the others still
//! evaluated, resuming without rerunning finished points; and the shipped claims files parse.

use std::path::{Path, PathBuf};
use std::process::Output;
use weft::reproduce::claims::ClaimsFile;
use weft::reproduce::size::{derived_sweep, Size};
use weft::sweep::spec::SweepSpec;

use crate::common::weft_cmd as weft;

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

fn repo(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(rel)
}

/// A claims folder with paper "toy": a sweep of 16 KiB permutations on a k = 4 fat tree, ECMP
/// and Ofan, two seeds at size smoke; then `claims`.
fn toy(dir: &Path, claims: &str) -> PathBuf {
    let cdir = dir.join("claims");
    std::fs::create_dir_all(&cdir).unwrap();
    std::fs::write(
        dir.join("toy_sweep.toml"),
        format!(
            "scenario = {:?}\n[set]\n\"topology.k\" = 8\n\"workload.message_bytes\" = 16384\n[grid]\n\"lb.policy\" = [\"ecmp\", \"ofan\"]\nseed = [1]\n",
            s(&repo("scenarios/quickstart.toml"))
        ),
    )
    .unwrap();
    std::fs::write(
        cdir.join("toy.toml"),
        format!(
            "paper = \"toy\"\ntitle = \"A toy paper\"\n[sweep.perm]\nfile = \"../toy_sweep.toml\"\nsmoke = {{ set = {{ \"topology.k\" = 4 }}, grid = {{ seed = [1, 2] }} }}\n{claims}"
        ),
    )
    .unwrap();
    cdir
}

fn claim(id: &str, test: &str) -> String {
    format!("[[claim]]\nid = \"toy.{id}\"\nfigure = \"Fig. 1\"\npaper = \"words\"\nsweep = \"perm\"\nsizes = [\"smoke\"]\n{test}\n")
}

fn reproduce(cdir: &Path, out: &Path, extra: &[&str]) -> Output {
    let mut args = vec![
        "reproduce",
        "--claims",
        s(cdir),
        "--size",
        "smoke",
        "--out",
        s(out),
    ];
    args.extend_from_slice(extra);
    weft(&args)
}

/// report.csv as (id, verdict) pairs, checking the header.
fn verdicts(out: &Path) -> Vec<(String, String)> {
    let mut r = csv::Reader::from_path(out.join("report.csv")).unwrap();
    assert_eq!(
        r.headers().unwrap().iter().collect::<Vec<_>>(),
        ["id", "figure", "paper", "weft", "verdict", "note"]
    );
    r.records()
        .map(|rec| {
            let rec = rec.unwrap();
            (rec[0].to_string(), rec[4].to_string())
        })
        .collect()
}

const ORDER: &str =
    "ascending = [\"cct_increase[lb.policy=ofan]\", \"cct_increase[lb.policy=ecmp]\"]";
const WRONG_ORDER: &str =
    "ascending = [\"cct_increase[lb.policy=ecmp]\", \"cct_increase[lb.policy=ofan]\"]";

#[test]
fn every_test_kind_is_judged_on_real_runs_and_strict_fails_only_on_unexplained_disagreements() {
    let dir = tempfile::tempdir().unwrap();
    let claims = [
        claim("order", ORDER),
        claim("order_wrong", WRONG_ORDER),
        claim(
            "below",
            "metric = \"100 * cct_increase[lb.policy=ofan]\"\nbelow = 50",
        ),
        claim(
            "above",
            "metric = \"cct_ns[lb.policy=ecmp] / cct_ns[lb.policy=ofan]\"\nabove = 100",
        ),
        claim(
            "value",
            "metric = \"hosts[lb.policy=ofan]\"\nvalue = 16\nrel_tol = 0",
        ),
        claim(
            "between",
            "metric = \"flows.completed[lb.policy=ecmp]\"\nbetween = [16, 16]",
        ),
        claim(
            "laptop_only",
            "metric = \"hosts[lb.policy=ofan]\"\nvalue = 16\nrel_tol = 0\nsizes = [\"laptop\"]",
        )
        .replace("sizes = [\"smoke\"]\n", ""),
    ]
    .concat();
    let cdir = toy(dir.path(), &claims);
    let out = dir.path().join("out");
    let r = reproduce(&cdir, &out, &[]);
    assert!(r.status.success(), "{r:?}");
    let got = verdicts(&out);
    let want = [
        ("toy.order", "AGREES"),
        ("toy.order_wrong", "DISAGREES"),
        ("toy.below", "AGREES"),
        ("toy.above", "DISAGREES"),
        ("toy.value", "AGREES"),
        ("toy.between", "AGREES"),
        ("toy.laptop_only", "NOT RUN"),
    ];
    let got_ref: Vec<(&str, &str)> = got.iter().map(|(a, b)| (a.as_str(), b.as_str())).collect();
    assert_eq!(got_ref, want);
    let md = std::fs::read_to_string(out.join("report.md")).unwrap();
    assert!(
        md.contains("7 claims: 4 agree, 2 disagree (0 known), 1 not run, 0 errors"),
        "{md}"
    );
    // Two seeds: the ordering shows standard errors.
    assert!(md.contains(" ± "), "{md}");
    // --strict fails naming the unexplained disagreements...
    let r = reproduce(&cdir, &out, &["--strict"]);
    assert_eq!(r.status.code(), Some(1));
    let err = String::from_utf8_lossy(&r.stderr);
    assert!(
        err.contains(
            "--strict: 2 claims disagree without a known reason: toy.order_wrong, toy.above"
        ),
        "{err}"
    );
    // ... and passes once they are explained.
    let claims = claims
        .replace(
            WRONG_ORDER,
            &format!("{WRONG_ORDER}\nknown = \"a test of known\""),
        )
        .replace("above = 100", "above = 100\nknown = \"a test of known\"");
    let cdir = toy(dir.path(), &claims);
    let r = reproduce(&cdir, &out, &["--strict"]);
    assert!(r.status.success(), "{r:?}");
    assert_eq!(verdicts(&out)[1].1, "DISAGREES (known)");
}

#[test]
fn a_bad_claim_is_one_error_line_and_the_others_are_still_reported() {
    let dir = tempfile::tempdir().unwrap();
    let claims = [
        claim("good", ORDER),
        claim(
            "no_column",
            "metric = \"utilisation[lb.policy=ofan]\"\nbelow = 1",
        ),
    ]
    .concat();
    let cdir = toy(dir.path(), &claims);
    let out = dir.path().join("out");
    let r = reproduce(&cdir, &out, &[]);
    assert_eq!(r.status.code(), Some(1), "{r:?}");
    let err = String::from_utf8_lossy(&r.stderr);
    let errors: Vec<&str> = err.lines().filter(|l| l.starts_with("error: ")).collect();
    assert_eq!(errors.len(), 1, "{err}");
    assert!(
        errors[0].contains("toy.no_column") && errors[0].contains("utilisation: no such column"),
        "{err}"
    );
    let got = verdicts(&out);
    assert_eq!(got[0], ("toy.good".to_string(), "AGREES".to_string()));
    assert_eq!(got[1].1, "ERROR");
    // A malformed claim (unknown key) is reported the same way.
    let cdir = toy(
        dir.path(),
        &[
            claim("good", ORDER),
            claim("typo", "metric = \"hosts\"\nbelow = 1\nknwon = \"x\""),
        ]
        .concat(),
    );
    let r = reproduce(&cdir, &out, &[]);
    assert_eq!(r.status.code(), Some(1));
    let err = String::from_utf8_lossy(&r.stderr);
    assert!(err.contains("toy.typo: knwon: unknown field"), "{err}");
    assert_eq!(verdicts(&out)[0].1, "AGREES");
}

#[test]
fn unknown_papers_and_claim_ids_are_refused_in_one_line() {
    let dir = tempfile::tempdir().unwrap();
    let cdir = toy(dir.path(), &claim("order", ORDER));
    for (arg, want) in [
        (
            "nopaper",
            "nopaper: unknown paper or claim id (papers: toy)",
        ),
        ("toy.ord", "toy.ord: unknown paper or claim id"),
    ] {
        let r = weft(&[
            "reproduce",
            "--claims",
            s(&cdir),
            arg,
            "--size",
            "smoke",
            "--out",
            s(&dir.path().join("o")),
        ]);
        assert_eq!(r.status.code(), Some(1));
        let err = String::from_utf8_lossy(&r.stderr);
        assert_eq!(err.lines().count(), 1, "{err}");
        assert!(err.contains(want), "{err}");
    }
    let r = weft(&["reproduce", "--claims", s(&cdir), "--size", "huge"]);
    assert_eq!(r.status.code(), Some(2), "clap refuses an unknown size");
}

fn done_times(sweep_dir: &Path) -> Vec<(PathBuf, std::time::SystemTime)> {
    let mut v: Vec<_> = std::fs::read_dir(sweep_dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.join("point.toml").is_file())
        .map(|p| {
            let t = std::fs::metadata(p.join("summary.json"))
                .unwrap()
                .modified()
                .unwrap();
            (p, t)
        })
        .collect();
    v.sort();
    v
}

#[test]
fn a_killed_reproduction_resumes_without_rerunning_finished_points() {
    let dir = tempfile::tempdir().unwrap();
    let cdir = toy(dir.path(), &claim("order", ORDER));
    let out = dir.path().join("out");
    assert!(reproduce(&cdir, &out, &[]).status.success());
    let sweep = out.join("sweeps/toy-perm");
    let before = done_times(&sweep);
    assert_eq!(before.len(), 4);
    // As if killed while point 2 ran: its `done` is missing.
    std::fs::remove_file(before[2].0.join("done")).unwrap();
    // --no-run evaluates the three finished points, says the sweep is partial, runs nothing.
    let r = reproduce(&cdir, &out, &["--no-run"]);
    assert!(r.status.success(), "{r:?}");
    assert!(!before[2].0.join("done").exists());
    let md = std::fs::read_to_string(out.join("report.md")).unwrap();
    assert!(md.contains("sweep toy-perm partial: 3 of 4 points"), "{md}");
    assert!(md.contains("| perm | 3 of 4 |"), "{md}");
    // With no point finished, the claims are not run (not errors about missing columns).
    let out2 = dir.path().join("out2");
    assert!(reproduce(&cdir, &out2, &["--slurm"]).status.success());
    for p in &before {
        let twin = out2.join("sweeps/toy-perm").join(p.0.file_name().unwrap());
        std::fs::create_dir_all(&twin).unwrap();
        std::fs::copy(p.0.join("point.toml"), twin.join("point.toml")).unwrap();
    }
    let r = reproduce(&cdir, &out2, &["--no-run"]);
    assert!(r.status.success(), "{r:?}");
    assert_eq!(verdicts(&out2)[0].1, "NOT RUN");
    let r = reproduce(&cdir, &out, &[]);
    assert!(r.status.success(), "{r:?}");
    let err = String::from_utf8_lossy(&r.stderr);
    assert!(err.contains("4 points, 3 done before, 1 to run"), "{err}");
    let after = done_times(&sweep);
    for (i, ((p, t0), (_, t1))) in before.iter().zip(&after).enumerate() {
        if i == 2 {
            assert!(t1 > t0, "{} was rerun", p.display());
        } else {
            assert_eq!(t0, t1, "{} was not rerun", p.display());
        }
    }
    assert_eq!(verdicts(&out)[0].1, "AGREES");
}

/// A committed reproduction keeps each sweep's runs.csv and summary.csv, not its points:
/// `--no-run` evaluates such a folder as it evaluated the points, and reads the kept summary
/// (here edited, to show that it is the one read).
#[test]
fn a_sweep_kept_as_its_tables_is_evaluated_without_its_points() {
    let dir = tempfile::tempdir().unwrap();
    let cdir = toy(dir.path(), &claim("order", ORDER));
    let out = dir.path().join("out");
    assert!(reproduce(&cdir, &out, &[]).status.success());
    let report = std::fs::read_to_string(out.join("report.csv")).unwrap();
    let sweep = out.join("sweeps/toy-perm");
    for (p, _) in done_times(&sweep) {
        std::fs::remove_dir_all(p).unwrap();
    }
    let r = reproduce(&cdir, &out, &["--no-run"]);
    assert!(r.status.success(), "{r:?}");
    assert_eq!(
        std::fs::read_to_string(out.join("report.csv")).unwrap(),
        report
    );
    let md = std::fs::read_to_string(out.join("report.md")).unwrap();
    assert!(md.contains("| perm | 4 of 4 |"), "{md}");
    // Swap the two policies' rows' names in the kept summary: the order claim now fails.
    let summary = std::fs::read_to_string(sweep.join("summary.csv")).unwrap();
    let swapped = summary
        .replace("ecmp", "@")
        .replace("ofan", "ecmp")
        .replace('@', "ofan");
    std::fs::write(sweep.join("summary.csv"), swapped).unwrap();
    assert!(reproduce(&cdir, &out, &["--no-run"]).status.success());
    assert_eq!(verdicts(&out)[0].1, "DISAGREES");
    // Without its summary.csv the folder is not a kept sweep: nothing to evaluate.
    std::fs::remove_file(sweep.join("summary.csv")).unwrap();
    assert!(reproduce(&cdir, &out, &["--no-run"]).status.success());
    assert_eq!(verdicts(&out)[0].1, "NOT RUN");
}

#[test]
fn the_shipped_claims_files_parse_and_every_size_of_every_sweep_is_a_valid_sweep() {
    let dir = repo("scenarios/reproduce/claims");
    let mut total = 0;
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_none_or(|e| e != "toml") {
            continue;
        }
        let f = ClaimsFile::load(&path).unwrap();
        assert!(f.bad.is_empty(), "{}: {:?}", path.display(), f.bad);
        for def in &f.sweeps {
            let base = SweepSpec::load(&def.file).unwrap();
            for size in Size::ALL {
                if let Some(o) = def.sizes.get(&size) {
                    let text = derived_sweep(&base, &def.key, o).unwrap_or_else(|e| {
                        panic!("{} {} {}: {e:#}", path.display(), def.key, size.name())
                    });
                    SweepSpec::parse(&text, &def.file).unwrap();
                }
            }
        }
        total += f.claims.len();
        if f.paper == "ofan" {
            assert!(
                f.claims.len() >= 25,
                "the Ofan paper's claims: {}",
                f.claims.len()
            );
        }
    }
    assert!(total > 0);
}

#[test]
fn slurm_mode_writes_one_job_array_per_sweep_and_runs_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let cdir = toy(dir.path(), &claim("order", ORDER));
    let out = dir.path().join("out");
    let r = reproduce(&cdir, &out, &["--slurm"]);
    assert!(r.status.success(), "{r:?}");
    let script = out.join("sweeps/toy-perm/sweep.sbatch");
    let text = std::fs::read_to_string(&script).unwrap();
    // Four points: tasks 0-3, each running the derived sweep file with --only.
    assert!(text.contains("--array=0-3"), "{text}");
    assert!(text.contains("toy-perm.toml"), "{text}");
    assert!(!out.join("report.md").exists(), "--slurm evaluates nothing");
    let r = reproduce(&cdir, &out, &["--slurm", "--no-run"]);
    assert_eq!(
        r.status.code(),
        Some(2),
        "clap refuses --slurm with --no-run"
    );
}

/// Runs the shipped claims of `paper` at `size` with `--strict` into a temporary folder;
/// returns the folder and the (id, verdict) pairs of its report.
fn run_shipped(paper: &str, size: &str) -> (tempfile::TempDir, Vec<(String, String)>) {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let cdir = repo("scenarios/reproduce/claims");
    let r = weft(&[
        "reproduce",
        paper,
        "--claims",
        s(&cdir),
        "--size",
        size,
        "--strict",
        "--out",
        s(&out),
    ]);
    assert!(r.status.success(), "{r:?}");
    let v = verdicts(&out);
    (dir, v)
}

fn verdict_of<'a>(v: &'a [(String, String)], id: &str) -> Option<&'a str> {
    v.iter().find(|(i, _)| i == id).map(|(_, v)| v.as_str())
}

/// The PGFT paper's claims run `weft contention` sweeps (milliseconds at the paper's size): the
/// whole file end to end, where a wrong C_topo, a contention point that writes no
/// summary.json or a sweep that passes its options as `--set` would fail.
#[test]
fn the_pgft_claims_run_contention_sweeps_end_to_end() {
    let (dir, v) = run_shipped("pgft", "paper");
    assert_eq!(verdict_of(&v, "pgft.fig4.dmodk"), Some("AGREES"));
    assert_eq!(verdict_of(&v, "pgft.gdmodk"), Some("AGREES"));
    assert_eq!(
        verdict_of(&v, "pgft.random.three_or_four"),
        Some("DISAGREES (known)")
    );
    let summary =
        std::fs::read_to_string(dir.path().join("out/sweeps/pgft-contention/summary.csv")).unwrap();
    assert!(summary.starts_with("pattern,routing,runs,"), "{summary}");
}

/// The Opera paper's Fig. 11 claims run `weft opera-faults` sweeps (seconds): end to end, with
/// `--strict` (its one disagreement is marked known).
#[test]
fn the_opera_claims_run_opera_faults_sweeps_end_to_end() {
    let (_dir, v) = run_shipped("opera", "smoke");
    assert!(v.len() >= 25, "{v:?}");
    assert_eq!(verdict_of(&v, "opera.fig11.rotors"), Some("AGREES"));
    assert_eq!(verdict_of(&v, "opera.fig11.rotors_beyond"), Some("AGREES"));
    // The packet-level figures (minutes to an hour a point) have no smoke size.
    for (id, verdict) in &v {
        if !id.starts_with("opera.fig11.") {
            assert_eq!(verdict, "NOT RUN", "{id}");
        }
    }
}

/// A claim that compares two sweeps (two networks are two base scenarios) reads them as one
/// table selected by `sweep=KEY`: both sweeps run, and the verdict follows the real values.
#[test]
fn a_claim_over_two_sweeps_reads_each_by_its_key() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("toy_big.toml"),
        format!(
            "scenario = {:?}\n[set]\n\"lb.policy\" = \"ofan\"\n\"workload.message_bytes\" = 65536\n[grid]\nseed = [1]\n",
            s(&repo("scenarios/quickstart.toml"))
        ),
    )
    .unwrap();
    let both = "sweep = [\"perm\", \"big\"]\nmetric = \"cct_ns[sweep=big] / cct_ns[sweep=perm, lb.policy=ofan]\"\n";
    let claims = format!(
        "[sweep.big]\nfile = \"../toy_big.toml\"\nsmoke = {{ set = {{ \"topology.k\" = 4 }} }}\n\
         [[claim]]\nid = \"toy.longer\"\nfigure = \"Fig. 2\"\npaper = \"4x the bytes take longer\"\nsizes = [\"smoke\"]\n{both}above = 1\n\
         [[claim]]\nid = \"toy.shorter\"\nfigure = \"Fig. 2\"\npaper = \"4x the bytes take less\"\nsizes = [\"smoke\"]\n{both}below = 1\n"
    );
    let cdir = toy(dir.path(), &claims);
    let out = dir.path().join("out");
    let r = reproduce(&cdir, &out, &[]);
    assert!(r.status.success(), "{r:?}");
    let v = verdicts(&out);
    assert_eq!(verdict_of(&v, "toy.longer"), Some("AGREES"), "{v:?}");
    assert_eq!(verdict_of(&v, "toy.shorter"), Some("DISAGREES"), "{v:?}");
    assert!(out.join("sweeps/toy-big/summary.csv").is_file());
    assert!(out.join("sweeps/toy-perm/summary.csv").is_file());
}
