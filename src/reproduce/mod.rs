//! `weft reproduce`: the seed papers' quantitative claims as data (`scenarios/reproduce/claims/`),
//! measured by sweeps at a chosen size and judged claim by claim into `report.md` and
//! `report.csv`. See docs/ARCHITECTURE.md "Reproducing the papers".
//!
//! Above `sweep` in the layers: a reproduction is sweeps (child processes of `weft run`),
//! their collected tables and a verdict per claim.

pub mod claims;
pub(crate) mod expr;
pub(crate) mod report;
pub mod run;
pub mod size;
pub(crate) mod table;
pub(crate) mod verdict;

pub use report::Tally;

use anyhow::{Context, Result};
use report::PaperReport;
use std::path::Path;
use verdict::Verdict;

/// What a finished reproduction found, for the exit status.
#[derive(Debug, Default)]
pub struct Findings {
    /// How many claims got each verdict.
    pub tally: Tally,
    /// Disagreements the claims files do not explain (`--strict` fails on them).
    pub unexplained: Vec<String>,
    /// Malformed claims, failed sweeps, figures not drawn: bad input or failed runs.
    pub problems: Vec<String>,
}

/// Writes `OUT/report.md` and `OUT/report.csv` for `results`.
pub fn write_report(
    out: &Path,
    size: size::Size,
    results: &[run::PaperResult],
) -> Result<Findings> {
    std::fs::create_dir_all(out).with_context(|| format!("{}: cannot create", out.display()))?;
    let papers: Vec<PaperReport> = results
        .iter()
        .map(|r| PaperReport {
            paper: &r.paper,
            title: &r.title,
            outcomes: &r.outcomes,
            sweeps: &r.sweeps,
            claim_sweeps: r.claim_sweeps.clone(),
            figures: &r.figures,
        })
        .collect();
    let md = report::markdown(size.name(), env!("WEFT_GIT_COMMIT"), &papers);
    let md_path = out.join("report.md");
    std::fs::write(&md_path, md).with_context(|| format!("writing {}", md_path.display()))?;
    let all: Vec<&verdict::Outcome> = results.iter().flat_map(|r| &r.outcomes).collect();
    report::write_csv(&out.join("report.csv"), &all)?;
    let mut f = Findings {
        tally: Tally::of(all.iter().copied()),
        ..Findings::default()
    };
    for o in &all {
        match o.verdict {
            Verdict::Disagrees if !o.known => f.unexplained.push(o.id.clone()),
            Verdict::Error => f.problems.push(format!("{}: {}", o.id, o.note)),
            _ => {}
        }
    }
    for r in results {
        f.problems.extend(r.problems.iter().cloned());
    }
    Ok(f)
}
