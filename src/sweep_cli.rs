//! The command line of `weft sweep`, `weft collect` and `weft plot` (the work is in
//! `weft::sweep`).

use anyhow::{bail, Result};
use clap::{Args, Subcommand};
use plotters::chart::SeriesLabelPosition as Corner;
use std::path::PathBuf;
use weft::sweep::plot::figure::Figure;
use weft::sweep::{collect, plot, runner, slurm, spec::SweepSpec};

#[derive(Args)]
pub struct SweepArgs {
    /// Sweep file (TOML): `scenario`, `[grid]`, optionally `[zip]`, `[set]`, `name`, `threads`.
    sweep: PathBuf,
    /// Points run at once (default: the CPUs divided by the sweep's `threads`).
    #[arg(long)]
    jobs: Option<usize>,
    /// Output folder, one subfolder per point (default: runs/<name>).
    #[arg(long, value_name = "DIR")]
    out: Option<PathBuf>,
    /// Run only point I (0-based), e.g. as a Slurm array task.
    #[arg(long, value_name = "I")]
    only: Option<usize>,
    /// Write OUT/sweep.sbatch (a Slurm job array, one task per point) instead of running.
    #[arg(long, conflicts_with = "only")]
    slurm: bool,
}

#[derive(Args)]
pub struct CollectArgs {
    /// A sweep's output folder; writes DIR/runs.csv and DIR/summary.csv.
    dir: PathBuf,
}

#[derive(Args)]
pub struct PlotArgs {
    #[command(subcommand)]
    kind: PlotKind,
}

/// Labels and size, shared by every kind.
#[derive(Args)]
struct FigureArgs {
    /// Output file: .svg or .png.
    #[arg(short = 'o', long = "output", value_name = "FILE")]
    output: PathBuf,
    #[arg(long)]
    title: Option<String>,
    /// x-axis label (default: from the data, with its unit).
    #[arg(long)]
    xlabel: Option<String>,
    /// y-axis label (default: from the data, with its unit).
    #[arg(long)]
    ylabel: Option<String>,
    /// Width in pixels.
    #[arg(long, default_value_t = 800)]
    width: u32,
    /// Height in pixels.
    #[arg(long, default_value_t = 500)]
    height: u32,
    /// Logarithmic x axis (line, cdf, timeseries).
    #[arg(long)]
    logx: bool,
    /// Logarithmic y axis (line, cdf, timeseries).
    #[arg(long)]
    logy: bool,
}

#[derive(Subcommand)]
enum PlotKind {
    /// y against x, one line per group; from summary.csv: means with ±1 standard-error bars.
    Line {
        csv: PathBuf,
        /// Column of the x axis (numbers), e.g. workload.message_bytes.
        #[arg(long)]
        x: String,
        /// Column (or, in summary.csv, the name before _mean/_se) of the y axis, e.g. cct_increase.
        #[arg(long)]
        y: String,
        /// Column whose values make the lines, e.g. lb.policy.
        #[arg(long)]
        group: Option<String>,
        #[command(flatten)]
        fig: FigureArgs,
    },
    /// A per-stage metric of summary.json files as grouped bars (one bar per file).
    Bars {
        #[arg(required = true)]
        summaries: Vec<PathBuf>,
        /// TABLE or TABLE.FIELD of results: queues.max_bytes, queues.avg_pkts, utilization, drops, ...
        #[arg(long, default_value = "queues.max_bytes")]
        metric: String,
        /// Legend label per file (default: the file path), repeatable.
        #[arg(long)]
        label: Vec<String>,
        #[command(flatten)]
        fig: FigureArgs,
    },
    /// CDF of a tagged histogram of .hlog files (one line per file).
    Cdf {
        #[arg(required = true)]
        hlogs: Vec<PathBuf>,
        /// Histogram tag, e.g. latency_ns, fct_ns, latency_ns.reduce_scatter.
        #[arg(long, default_value = "latency_ns")]
        tag: String,
        /// Legend label per file (default: the file path), repeatable.
        #[arg(long)]
        label: Vec<String>,
        #[command(flatten)]
        fig: FigureArgs,
    },
    /// Columns of a timeseries.csv against time (one line per column).
    Timeseries {
        csv: PathBuf,
        /// Columns to plot, comma-separated, e.g. edge_agg_util,agg_core_util.
        #[arg(long, value_delimiter = ',', required = true)]
        y: Vec<String>,
        /// Column of the x axis.
        #[arg(long, default_value = "time_us")]
        x: String,
        #[command(flatten)]
        fig: FigureArgs,
    },
}

/// Largest side of a figure, in pixels.
const MAX_SIDE_PX: u32 = 10_000;

impl FigureArgs {
    fn figure(
        &self,
        x_label: String,
        y_label: String,
        markers: bool,
        legend_at: Corner,
    ) -> Result<Figure> {
        for (flag, v) in [("--width", self.width), ("--height", self.height)] {
            if !(100..=MAX_SIDE_PX).contains(&v) {
                bail!("{flag}: must be from 100 to {MAX_SIDE_PX} pixels (got {v})");
            }
        }
        plot::figure::format_of(&self.output)?;
        Ok(Figure {
            title: self.title.clone(),
            x_label: self.xlabel.clone().unwrap_or(x_label),
            y_label: self.ylabel.clone().unwrap_or(y_label),
            width_px: self.width,
            height_px: self.height,
            markers,
            legend_at,
            log_x: self.logx,
            log_y: self.logy,
        })
    }
}

pub fn sweep(a: SweepArgs) -> Result<()> {
    let spec = SweepSpec::load(&a.sweep)?;
    let out = a
        .out
        .unwrap_or_else(|| PathBuf::from("runs").join(&spec.name));
    let jobs = match a.jobs {
        Some(0) => bail!("--jobs: must be at least 1"),
        Some(j) => j,
        None => {
            let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
            (cpus / spec.threads).max(1)
        }
    };
    spec.validate_points()?;
    let weft_bin = std::env::current_exe()?;
    if a.slurm {
        let path = slurm::write(&spec, &out, &weft_bin)?;
        println!(
            "wrote {} ({} array tasks); submit with: sbatch {}",
            path.display(),
            spec.len(),
            path.display()
        );
        return Ok(());
    }
    let opts = runner::RunnerOptions {
        out: out.clone(),
        jobs,
        only: a.only,
        weft_bin,
    };
    let o = runner::run(&spec, &opts)?;
    println!(
        "sweep {:?}: {} run, {} skipped (done before), {} failed; collect with: weft collect {}",
        spec.name,
        o.ran,
        o.skipped,
        o.failed.len(),
        out.display()
    );
    if !o.failed.is_empty() {
        let dirs: Vec<String> = o.failed.iter().map(|d| d.display().to_string()).collect();
        bail!(
            "{} of {} points failed (see stderr.txt in: {})",
            o.failed.len(),
            o.ran,
            dirs.join(", ")
        );
    }
    Ok(())
}

pub fn collect(a: CollectArgs) -> Result<()> {
    let c = collect::collect(&a.dir)?;
    collect::write(&a.dir, &c)?;
    println!(
        "wrote {} ({} runs) and {} ({} rows)",
        a.dir.join("runs.csv").display(),
        c.runs.rows.len(),
        a.dir.join("summary.csv").display(),
        c.summary.rows.len()
    );
    if !c.unfinished.is_empty() {
        eprintln!(
            "warning: {} points not done (left out): first {}",
            c.unfinished.len(),
            c.unfinished[0].display()
        );
    }
    Ok(())
}

/// `latency_ns` → `latency (ns)`: hlog values are always ns.
fn ns_label(tag: &str) -> String {
    let base = tag.replacen("_ns", "", 1);
    format!("{base} (ns)")
}

pub fn plot(a: PlotArgs) -> Result<()> {
    match a.kind {
        PlotKind::Line {
            csv,
            x,
            y,
            group,
            fig,
        } => {
            let f = fig.figure(x.clone(), y.clone(), true, Corner::UpperLeft)?;
            let series = plot::line::series(&csv, &x, &y, group.as_deref())?;
            plot::write_lines(&fig.output, &f, &series)?;
            done(&fig.output, series.len())
        }
        PlotKind::Bars {
            summaries,
            metric,
            label,
            fig,
        } => {
            let f = fig.figure(
                "stage".to_string(),
                metric.clone(),
                false,
                Corner::UpperRight,
            )?;
            let b = plot::bars::read(&summaries, &label, &metric)?;
            plot::write_bars(&fig.output, &f, &b)?;
            done(&fig.output, b.groups.len())
        }
        PlotKind::Cdf {
            hlogs,
            tag,
            label,
            fig,
        } => {
            let f = fig.figure(
                ns_label(&tag),
                "fraction of samples ≤ x".to_string(),
                false,
                Corner::LowerRight,
            )?;
            let series = plot::cdf::series(&hlogs, &label, &tag)?;
            plot::write_lines(&fig.output, &f, &series)?;
            done(&fig.output, series.len())
        }
        PlotKind::Timeseries { csv, y, x, fig } => {
            let x_label = if x == "time_us" {
                "time (µs)".to_string()
            } else {
                x.clone()
            };
            let y_label = if y.len() == 1 {
                y[0].clone()
            } else {
                "value".to_string()
            };
            let f = fig.figure(x_label, y_label, false, Corner::UpperRight)?;
            let series = plot::timeseries::series(&csv, &x, &y)?;
            plot::write_lines(&fig.output, &f, &series)?;
            done(&fig.output, series.len())
        }
    }
}

fn done(out: &std::path::Path, series: usize) -> Result<()> {
    println!("wrote {} ({series} series)", out.display());
    Ok(())
}
