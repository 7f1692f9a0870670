//! The `weft` command line: parse, load the scenario, call the library.

use anyhow::{anyhow, Context, Result};
use clap::{Parser, Subcommand};
use std::path::PathBuf;
use weft::report::{write_hlog, Summary};
use weft::scenario::load_scenario;
use weft::sim::{simulate, RunOptions};

#[derive(Parser)]
#[command(
    name = "weft",
    version,
    about = "Packet-level parallel simulator of datacenter fabrics under AI-training traffic"
)]
struct Cli {
    #[command(subcommand)]
    cmd: Cmd,
}

#[derive(Subcommand)]
enum Cmd {
    /// Run a scenario and print a summary.
    Run {
        /// Scenario file (TOML).
        scenario: PathBuf,
        /// Override a scenario field by its dotted path, e.g. --set lb.policy=ofan (repeatable).
        #[arg(long = "set", value_name = "KEY=VALUE")]
        sets: Vec<String>,
        /// Write summary.json and latency.hlog into this folder (created if missing).
        #[arg(long, value_name = "DIR")]
        out: Option<PathBuf>,
        /// Worker threads; partitions run in parallel on them.
        #[arg(long, default_value_t = 1)]
        threads: usize,
        /// Partitions of the fabric (default: 1 with one thread, else 2 × threads up to the
        /// number of pods/leaves).
        #[arg(long)]
        partitions: Option<u32>,
        /// Print progress on stderr at most once a second (default: only when stderr is a terminal).
        #[arg(long)]
        progress: bool,
        /// Print summary.json on stdout instead of the readable summary.
        #[arg(long)]
        json: bool,
    },
    /// Check a scenario and print its size (hosts, switches, ports, estimated memory) without running it.
    Validate {
        scenario: PathBuf,
        #[arg(long = "set", value_name = "KEY=VALUE")]
        sets: Vec<String>,
    },
}

fn main() {
    if let Err(e) = real_main() {
        // One line: the chain of contexts joined, innermost last; any line breaks inside a
        // message (e.g. from a library's error text) become "; ".
        let msg: Vec<String> = e.chain().map(|c| c.to_string()).collect();
        let msg = msg.join(": ");
        let msg: Vec<&str> = msg
            .lines()
            .map(str::trim)
            .filter(|l| !l.is_empty())
            .collect();
        eprintln!("error: {}", msg.join("; "));
        std::process::exit(1);
    }
}

fn real_main() -> Result<()> {
    let cli = Cli::parse();
    match cli.cmd {
        Cmd::Run {
            scenario,
            sets,
            out,
            threads,
            partitions,
            progress,
            json,
        } => {
            if threads == 0 {
                return Err(anyhow!("--threads: must be at least 1"));
            }
            let s = load_scenario(&scenario, &sets)?;
            let output = simulate(
                &s,
                &RunOptions {
                    threads,
                    partitions,
                    plan_file: None,
                    progress,
                },
            )?;
            let summary = Summary::new(&output, serde_json::to_value(&s)?);
            if json {
                print!("{}", summary.to_json());
            } else {
                print!("{}", summary.to_text());
            }
            if let Some(dir) = out {
                std::fs::create_dir_all(&dir)
                    .with_context(|| format!("--out: cannot create {}", dir.display()))?;
                let path = dir.join("summary.json");
                std::fs::write(&path, summary.to_json())
                    .with_context(|| format!("writing {}", path.display()))?;
                let path = dir.join("latency.hlog");
                let mut f = std::io::BufWriter::new(
                    std::fs::File::create(&path)
                        .with_context(|| format!("writing {}", path.display()))?,
                );
                let m = &output.metrics;
                write_hlog(
                    &mut f,
                    output.end_ps,
                    &[("latency_ns", &m.latency_ns), ("fct_ns", &m.fct_ns)],
                )?;
            }
            if output.flows_incomplete > 0 {
                eprintln!(
                    "warning: {} of {} flows did not complete (packets dropped and host.cc = \"none\" has no loss recovery)",
                    output.flows_incomplete, output.flows_total
                );
            }
            Ok(())
        }
        Cmd::Validate { scenario, sets } => {
            let s = load_scenario(&scenario, &sets)?;
            let r = weft::validate_cmd::size_report(&s)?;
            print!("{}", r.to_text(&s));
            Ok(())
        }
    }
}
