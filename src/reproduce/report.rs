//! `report.md` (for people: a summary per figure, then every claim) and `report.csv` (for
//! tools: `id, figure, paper, weft, verdict, note`) of a reproduction.

use super::verdict::{Outcome, Verdict};
use anyhow::{Context, Result};
use std::path::Path;

/// What one sweep of the reproduction cost.
#[derive(Clone, Debug)]
pub(crate) struct SweepCost {
    pub name: String,
    /// Points finished.
    pub points: usize,
    /// Points the sweep has at this size.
    pub planned: usize,
    /// Sum of the points' own wall times (so a resumed sweep still counts every point).
    pub run_s: f64,
}

/// One paper's part of the report.
pub(crate) struct PaperReport<'a> {
    pub paper: &'a str,
    pub title: &'a str,
    pub outcomes: &'a [Outcome],
    pub sweeps: &'a [SweepCost],
    /// Each claim's sweep keys, parallel to `outcomes`.
    pub claim_sweeps: Vec<Vec<String>>,
    pub figures: &'a [String],
}

/// Counts of each verdict.
#[derive(Default, Debug, Clone, Copy, PartialEq, Eq)]
pub struct Tally {
    /// Claims whose test passes.
    pub agrees: usize,
    /// Claims whose test fails (`known` of them explained in the claims file).
    pub disagrees: usize,
    /// Disagreements the claims file marks `known = "reason"`.
    pub known: usize,
    /// Claims whose sweeps were not run at this size.
    pub not_run: usize,
    /// Claims that could not be evaluated (a malformed metric, a missing column).
    pub errors: usize,
    /// Agreeing claims whose value lies within one standard error of the test's boundary.
    pub fragile_agrees: usize,
    /// Disagreeing claims that miss by less than one standard error.
    pub fragile_disagrees: usize,
}

impl Tally {
    pub(crate) fn of<'a>(outcomes: impl IntoIterator<Item = &'a Outcome>) -> Tally {
        let mut t = Tally::default();
        for o in outcomes {
            match o.verdict {
                Verdict::Agrees => {
                    t.agrees += 1;
                    t.fragile_agrees += o.within_se as usize;
                }
                Verdict::Disagrees => {
                    t.disagrees += 1;
                    t.known += o.known as usize;
                    t.fragile_disagrees += o.within_se as usize;
                }
                Verdict::NotRun => t.not_run += 1,
                Verdict::Error => t.errors += 1,
            }
        }
        t
    }

    /// Every claim counted (`known` is part of `disagrees`).
    pub fn total(&self) -> usize {
        self.agrees + self.disagrees + self.not_run + self.errors
    }
}

impl std::fmt::Display for Tally {
    /// `N claims: A agree, D disagree (K known), R not run, E errors`.
    fn fmt(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        write!(
            f,
            "{} claims: {} agree, {} disagree ({} known), {} not run, {} errors",
            self.total(),
            self.agrees,
            self.disagrees,
            self.known,
            self.not_run,
            self.errors
        )
    }
}

fn cell(s: &str) -> String {
    s.replace('|', "\\|").replace('\n', " ")
}

pub(crate) fn markdown(size: &str, commit: &str, papers: &[PaperReport]) -> String {
    let mut s = format!(
        "# weft reproduce, size {size}\n\nMade by `weft reproduce --size {size}` at weft commit {commit}. \
         AGREES / DISAGREES: the paper's statement holds / does not hold for weft's mean over \
         the seeds (± one standard error, first-order propagation); DISAGREES (known): the \
         claims file explains the disagreement; NOT RUN: the claim is not evaluated at this size.\n"
    );
    for p in papers {
        let t = Tally::of(p.outcomes);
        let evaluated = t.agrees + t.disagrees;
        s += &format!(
            "\n## {} ({})\n\n{t}{}.\n",
            p.title,
            p.paper,
            if evaluated > 0 {
                format!(
                    "; {:.0} % of the evaluated claims agree",
                    100.0 * t.agrees as f64 / evaluated as f64
                )
            } else {
                String::new()
            }
        );
        if t.fragile_agrees + t.fragile_disagrees > 0 {
            s += &format!(
                "\nWithin one standard error of their test's boundary, where these seeds cannot \
                 tell (the verdict reads the mean): {} of the agreeing claims and {} of the \
                 disagreeing ones.\n",
                t.fragile_agrees, t.fragile_disagrees
            );
        }
        s += "\n| figure | claims | agree | disagree (known) | not run | sweep time (s) |\n|---|---|---|---|---|---|\n";
        let mut figures: Vec<&str> = Vec::new();
        for o in p.outcomes {
            if !figures.contains(&o.figure.as_str()) {
                figures.push(&o.figure);
            }
        }
        for f in figures {
            let members: Vec<(&Outcome, &Vec<String>)> = p
                .outcomes
                .iter()
                .zip(&p.claim_sweeps)
                .filter(|(o, _)| o.figure == f)
                .collect();
            let t = Tally::of(members.iter().map(|(o, _)| *o));
            let mut sweeps: Vec<&String> = members.iter().flat_map(|(_, s)| s.iter()).collect();
            sweeps.sort();
            sweeps.dedup();
            let secs: f64 = p
                .sweeps
                .iter()
                .filter(|c| sweeps.contains(&&c.name))
                .map(|c| c.run_s)
                .sum();
            let secs = if secs > 0.0 {
                format!("{secs:.0}")
            } else {
                "—".into()
            };
            s += &format!(
                "| {} | {} | {} | {} ({}) | {} | {secs} |\n",
                cell(f),
                t.total(),
                t.agrees,
                t.disagrees,
                t.known,
                t.not_run + t.errors
            );
        }
        s += "\n| id | figure | paper | weft | test | verdict | note |\n|---|---|---|---|---|---|---|\n";
        for o in p.outcomes {
            let verdict = match (o.verdict, o.known) {
                (Verdict::Disagrees, true) => "DISAGREES (known)".to_string(),
                (v, _) => v.label().to_string(),
            };
            s += &format!(
                "| `{}` | {} | {} | {} | {} | {verdict} | {} |\n",
                o.id,
                cell(&o.figure),
                cell(&o.paper),
                cell(&o.weft),
                cell(&o.test),
                cell(&o.note)
            );
        }
        if !p.sweeps.is_empty() {
            s += "\n| sweep | points done | run time (s, sum over points) |\n|---|---|---|\n";
            for c in p.sweeps {
                s += &format!(
                    "| {} | {} of {} | {:.1} |\n",
                    c.name, c.points, c.planned, c.run_s
                );
            }
        }
        for f in p.figures {
            s += &format!("\n![{f}]({f})\n");
        }
    }
    s
}

pub(crate) fn write_csv(path: &Path, outcomes: &[&Outcome]) -> Result<()> {
    let ctx = || format!("writing {}", path.display());
    let mut w = csv::Writer::from_path(path).with_context(ctx)?;
    w.write_record(["id", "figure", "paper", "weft", "verdict", "note"])
        .with_context(ctx)?;
    for o in outcomes {
        let verdict = match (o.verdict, o.known) {
            (Verdict::Disagrees, true) => "DISAGREES (known)",
            (v, _) => v.label(),
        };
        w.write_record([
            o.id.as_str(),
            &o.figure,
            &o.paper,
            &o.weft,
            verdict,
            &o.note,
        ])
        .with_context(ctx)?;
    }
    w.flush().with_context(ctx)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn outcome(id: &str, verdict: Verdict, within_se: bool) -> Outcome {
        Outcome {
            id: id.into(),
            figure: "Fig. 1".into(),
            paper: "p".into(),
            weft: "1".into(),
            test: "< 2".into(),
            verdict,
            note: String::new(),
            known: false,
            within_se,
        }
    }

    #[test]
    fn the_summary_counts_verdicts_within_one_standard_error_on_each_side() {
        let outcomes = [
            outcome("p.a", Verdict::Agrees, true),
            outcome("p.b", Verdict::Agrees, false),
            outcome("p.c", Verdict::Disagrees, true),
            outcome("p.d", Verdict::Disagrees, true),
            outcome("p.e", Verdict::NotRun, false),
        ];
        let t = Tally::of(&outcomes);
        assert_eq!((t.fragile_agrees, t.fragile_disagrees), (1, 2));
        let report = |outcomes: &[Outcome]| {
            markdown(
                "laptop",
                "abc",
                &[PaperReport {
                    paper: "p",
                    title: "P",
                    outcomes,
                    sweeps: &[],
                    claim_sweeps: vec![Vec::new(); outcomes.len()],
                    figures: &[],
                }],
            )
        };
        let md = report(&outcomes);
        assert!(
            md.contains(": 1 of the agreeing claims and 2 of the disagreeing ones."),
            "{md}"
        );
        // No line when no verdict is that close.
        let md = report(&outcomes[1..2]);
        assert!(!md.contains("Within one standard error"), "{md}");
    }
}
