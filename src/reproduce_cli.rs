//! The command line of `weft reproduce` (the work is in `weft::reproduce`).

use anyhow::{bail, Result};
use clap::Args;
use std::path::PathBuf;
use weft::reproduce::{self, run, size::Size};

#[derive(Args)]
pub struct ReproduceArgs {
    /// Papers (a claims file's name, e.g. ofan) or claim-id prefixes (ofan.fig12); none: every paper.
    #[arg(value_name = "PAPER|CLAIM-ID-PREFIX")]
    select: Vec<String>,
    /// smoke (a few minutes, checks the machinery), laptop, or paper (the paper's set-up).
    #[arg(long, default_value = "laptop", value_parser = ["smoke", "laptop", "paper"])]
    size: String,
    /// Points run at once (default: the CPUs divided by each sweep's threads).
    #[arg(long)]
    jobs: Option<usize>,
    /// Output folder: report.md, report.csv, sweeps/, figures/ (default: runs/reproduce-SIZE).
    #[arg(long, value_name = "DIR")]
    out: Option<PathBuf>,
    /// Exit 1 on any DISAGREES that the claims file does not mark `known`.
    #[arg(long)]
    strict: bool,
    /// Write a Slurm job array per sweep (OUT/sweeps/NAME/sweep.sbatch) instead of running;
    /// once they finish, run the same command without --slurm to evaluate.
    #[arg(long)]
    slurm: bool,
    /// Run nothing: evaluate the points already finished in OUT (a sweep with points left
    /// is marked partial in the report; a sweep folder with no points but a runs.csv and a
    /// summary.csv, as a committed reproduction keeps, is evaluated from them).
    #[arg(long, conflicts_with = "slurm")]
    no_run: bool,
    /// Folder of the claims files.
    #[arg(long, value_name = "DIR", default_value = "scenarios/reproduce/claims")]
    claims: PathBuf,
}

pub fn reproduce(a: ReproduceArgs) -> Result<()> {
    let size: Size = a.size.parse()?;
    if a.jobs == Some(0) {
        bail!("--jobs: must be at least 1");
    }
    let out = a
        .out
        .unwrap_or_else(|| PathBuf::from("runs").join(format!("reproduce-{}", size.name())));
    let chosen = run::choose(&a.claims, &a.select)?;
    let opts = run::Options {
        size,
        jobs: a.jobs,
        out: out.clone(),
        slurm: a.slurm,
        no_run: a.no_run,
        weft_bin: std::env::current_exe()?,
    };
    if opts.slurm {
        for s in run::write_slurm(&chosen, &opts)? {
            println!("wrote {}; submit with: sbatch {}", s.display(), s.display());
        }
        println!("when the jobs are done, evaluate with the same command without --slurm");
        return Ok(());
    }
    let results = run::run(&chosen, &opts)?;
    let f = reproduce::write_report(&out, size, &results)?;
    println!(
        "{}; wrote {} and {}",
        f.tally,
        out.join("report.md").display(),
        out.join("report.csv").display()
    );
    // One line per problem (the last one is the command's error); the report already holds
    // every claim that could be evaluated.
    if let Some((last, rest)) = f.problems.split_last() {
        for p in rest {
            eprintln!("error: {p}");
        }
        bail!("{last}");
    }
    if a.strict && !f.unexplained.is_empty() {
        bail!(
            "--strict: {} claims disagree without a known reason: {}",
            f.unexplained.len(),
            f.unexplained.join(", ")
        );
    }
    Ok(())
}
