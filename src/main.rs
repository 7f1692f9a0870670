//! The `weft` command line: parse, load the scenario, call the library. With feature `mpi`
//! the same binary runs standalone or as one rank of `mpirun -n N` / `srun`.

use anyhow::{bail, Context, Result};
use clap::{Parser, Subcommand};
use std::path::{Path, PathBuf};
use weft::checkpoint::{CheckpointOptions, Saved, REQUEUE_EXIT_CODE};
use weft::engine::comm::{Comm, LocalComm};
use weft::engine::{plan::Plan, plan_file};
use weft::model::Model;
use weft::report::{write_run_hlog, Summary};
use weft::scenario::load_scenario;
use weft::sim::{simulate_checkpointed, Outcome, ReportedElsewhere, RunOptions};

mod default_threads;
mod reproduce_cli;
mod sweep_cli;

/// Most worker threads `--threads` accepts.
const MAX_THREADS: usize = 1024;

#[derive(Parser)]
#[command(
    name = "weft",
    version,
    about = "Packet-level parallel simulator of datacenter fabrics under AI-training traffic",
    after_help = "Examples:\n  weft run scenarios/quickstart.toml\n  weft run scenarios/quickstart.toml --set lb.policy=rsq --threads 2 --out out/\n  mpirun -n 4 weft run scenarios/quickstart.toml   (build with --features mpi)\n  weft partition scenarios/fat_tree_k64.toml --parts 64 --ranks 16 -o k64.plan"
)]
struct Cli {
    #[command(subcommand)]
    cmd: Cmd,
}

#[derive(Subcommand)]
enum Cmd {
    /// Run a scenario and print a summary (rank 0 prints and writes the outputs).
    Run(RunArgs),
    /// Check a scenario and print its size (hosts, switches, ports, estimated memory) without running it.
    Validate {
        scenario: PathBuf,
        #[arg(long = "set", value_name = "KEY=VALUE")]
        sets: Vec<String>,
    },
    /// Static contention analysis of a (P)GFT: C_topo, the per-port contention distribution and
    /// the worst ports of a static routing on a communication pattern (no packets simulated).
    Contention(ContentionArgs),
    /// Write a partition plan (node ranges → partition → rank) for a scenario.
    Partition(PartitionArgs),
    /// Opera's fault tolerance: per superslice, the share of live rack pairs still connected
    /// over live circuits of the stable rotors, for random failures of ToR uplinks, ToRs and
    /// rotor switches (`draws` draws of each setting; fractions may be comma-separated lists).
    OperaFaults(OperaFaultsArgs),
    /// Write a synthetic MoE routing trace (a CSV GPU × GPU token-count matrix of one EP group).
    MoeTrace(MoeTraceArgs),
    /// Run a scenario over a grid of field values (user guide: docs/guide/src/sweeps.md): locally,
    /// `--jobs` at a time, resumable, or as a Slurm job array (`--slurm`).
    Sweep(sweep_cli::SweepArgs),
    /// Gather a sweep's points into DIR/runs.csv and DIR/summary.csv (mean, standard error, count over seeds).
    Collect(sweep_cli::CollectArgs),
    /// One figure (SVG or PNG) from summary.csv, summary.json, .hlog files or timeseries.csv.
    Plot(sweep_cli::PlotArgs),
    /// Check the seed papers' claims (scenarios/reproduce/claims/): run the sweeps they need at
    /// a size, evaluate each claim, write report.md and report.csv.
    Reproduce(reproduce_cli::ReproduceArgs),
    /// Print the scenario field reference (markdown: every field's path, type, default, unit,
    /// allowed values and meaning), generated from the scenario structs and their doc
    /// comments. The user guide's copy is regenerated with
    /// `weft reference -o docs/guide/src/reference.md`.
    Reference {
        /// Write the page to FILE instead of stdout.
        #[arg(short = 'o', long = "output", value_name = "FILE")]
        output: Option<PathBuf>,
    },
}

// The arguments of `weft run`.
#[derive(clap::Args)]
struct RunArgs {
    /// Scenario file (TOML).
    scenario: PathBuf,
    /// Override a scenario field by its dotted path, e.g. --set lb.policy=ofan (repeatable).
    #[arg(long = "set", value_name = "KEY=VALUE")]
    sets: Vec<String>,
    /// Write summary.json and latency.hlog into this folder (created if missing).
    #[arg(long, value_name = "DIR")]
    out: Option<PathBuf>,
    /// Worker threads per rank; a rank's partitions run in parallel on them (default: every
    /// CPU the process may use; ranks on one node share its CPUs). Results do not depend
    /// on it.
    #[arg(long)]
    threads: Option<usize>,
    /// Partitions of the fabric (default: one per 256 hosts, at least 2 per thread, a
    /// multiple of ranks × threads, at most one per edge switch / leaf).
    #[arg(long, conflicts_with = "partition")]
    partitions: Option<u32>,
    /// Use a partition plan written by `weft partition`.
    #[arg(long, value_name = "FILE")]
    partition: Option<PathBuf>,
    /// Print progress on stderr at most once a second (default: only when stderr is a terminal).
    #[arg(long)]
    progress: bool,
    /// Print summary.json on stdout instead of the readable summary.
    #[arg(long)]
    json: bool,
    /// Write checkpoints into this folder (DIR/ckpt-<sim_ps>/, DIR/LATEST); SIGUSR1 or
    /// SIGTERM then checkpoint at the next window boundary and exit with status 75.
    #[arg(long, value_name = "DIR")]
    checkpoint: Option<PathBuf>,
    /// Checkpoint at the first window boundary at or after every multiple of this
    /// simulated time (500ns, 8us, 2ms, 1s), or every so much wall time (wall:30min,
    /// wall:90s). Needs --checkpoint.
    #[arg(long, value_name = "T")]
    checkpoint_every: Option<String>,
    /// Checkpoint at the first window boundary at or after this simulated time, then
    /// exit. Needs --checkpoint.
    #[arg(long, value_name = "T")]
    stop_at: Option<String>,
    /// Resume from the newest checkpoint in DIR (the one DIR/LATEST names); give the same
    /// scenario and --set options as the run that wrote it.
    #[arg(long, value_name = "DIR")]
    restart: Option<PathBuf>,
}

// The arguments of `weft contention`.
#[derive(clap::Args)]
struct ContentionArgs {
    scenario: PathBuf,
    #[arg(long = "set", value_name = "KEY=VALUE")]
    sets: Vec<String>,
    /// dmodk, smodk, gdmodk, gsmodk, random (the PGFT routing paper's Random: every route
    /// draws its ports independently, uniformly) or random_per_dest (lb.policy = "random":
    /// one port per switch and destination).
    #[arg(long)]
    routing: String,
    /// all-to-all, TYPE-TYPE (e.g. compute-io), permutation, shift[:K] or matrix:FILE.
    #[arg(long)]
    pattern: String,
    /// Ports C_topo covers: top (the top-level switches' ports, all down ports: the PGFT
    /// routing paper's "top-ports", the default), above-leaf (every port of the switches
    /// above the leaves, up and down) or all (every port, the leaves' up ports included).
    /// The report gives C_topo at every scope besides.
    #[arg(long, default_value = "top")]
    scope: String,
    /// Random routings only: C_topo's distribution (min, median, max, draws per value) over
    /// N draws, seeds seed, seed + 1, ..., seed + N − 1.
    #[arg(long, value_name = "N")]
    draws: Option<u64>,
    /// How many of the worst ports to list.
    #[arg(long, default_value_t = 10)]
    top: usize,
    /// Print JSON instead of text.
    #[arg(long)]
    json: bool,
    /// Also write DIR/summary.json (the JSON report as `results`, as `weft run --out`
    /// writes a run's), so that a sweep of analyses collects like a sweep of runs.
    #[arg(long, value_name = "DIR")]
    out: Option<PathBuf>,
}

// The arguments of `weft partition`.
#[derive(clap::Args)]
struct PartitionArgs {
    scenario: PathBuf,
    #[arg(long = "set", value_name = "KEY=VALUE")]
    sets: Vec<String>,
    /// Number of partitions.
    #[arg(long)]
    parts: u32,
    /// Number of ranks (MPI processes) the plan is for.
    #[arg(long, default_value_t = 1)]
    ranks: u32,
    /// Output file.
    #[arg(short = 'o', long = "output", value_name = "FILE")]
    output: PathBuf,
    /// Balance partitions by measured events per node (`node_events.csv` from `weft run
    /// --out`) instead of by ports.
    #[arg(long, value_name = "FILE")]
    weights: Option<PathBuf>,
}

// The arguments of `weft opera-faults`.
#[derive(clap::Args)]
struct OperaFaultsArgs {
    scenario: PathBuf,
    #[arg(long = "set", value_name = "KEY=VALUE")]
    sets: Vec<String>,
    /// Shares of ToR uplinks that fail, e.g. 0,0.01,0.05,0.1.
    #[arg(long, value_delimiter = ',', default_value = "0")]
    links: Vec<f64>,
    /// Shares of ToRs that fail.
    #[arg(long, value_delimiter = ',', default_value = "0")]
    tors: Vec<f64>,
    /// Shares of rotor switches that fail.
    #[arg(long, value_delimiter = ',', default_value = "0")]
    rotors: Vec<f64>,
    /// Failure draws per setting.
    #[arg(long, default_value_t = 10)]
    draws: u64,
    /// Print JSON instead of a table.
    #[arg(long)]
    json: bool,
    /// Also write DIR/summary.json with the setting's figures as `results` (one value of
    /// each share only), so that a sweep of settings collects like a sweep of runs.
    #[arg(long, value_name = "DIR")]
    out: Option<PathBuf>,
}

// The arguments of `weft moe-trace`.
#[derive(clap::Args)]
struct MoeTraceArgs {
    /// GPUs of the expert-parallel group (ep_size).
    #[arg(long)]
    gpus: u32,
    #[arg(long, default_value_t = 8)]
    gpus_per_server: u32,
    #[arg(long, default_value_t = 128)]
    experts: u32,
    #[arg(long, default_value_t = 8)]
    top_k: u32,
    /// Tokens each GPU routes.
    #[arg(long)]
    tokens_per_gpu: u32,
    /// Target max/mean per GPU, before EPLB, of what --imbalance-of names.
    #[arg(long, default_value_t = 1.48)]
    imbalance: f64,
    /// experts (token copies its experts receive) | network (tokens it receives over the
    /// scale-out network).
    #[arg(long, default_value = "experts")]
    imbalance_of: weft::scenario::MoeImbalanceOf,
    /// Replicate hot experts and repack them (EPLB).
    #[arg(long)]
    eplb: bool,
    /// Extra expert slots for EPLB (default: one per GPU).
    #[arg(long)]
    redundant_experts: Option<u32>,
    /// flat | hierarchical.
    #[arg(long, default_value = "hierarchical")]
    dispatch: weft::scenario::MoeDispatch,
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// The EP group (groups get independent draws).
    #[arg(long, default_value_t = 0)]
    group: u32,
    /// Bytes per token copy, for the figures printed on stderr.
    #[arg(long, default_value_t = 8192)]
    bytes_per_token: u64,
    /// Output file (stdout when absent).
    #[arg(short = 'o', long = "output", value_name = "FILE")]
    output: Option<PathBuf>,
}

/// The process's place in the job: a lone process, or an MPI rank.
struct Launch {
    #[cfg(feature = "mpi")]
    _universe: Option<mpi::environment::Universe>,
    comm: Box<dyn Comm>,
}

impl Launch {
    #[cfg(not(feature = "mpi"))]
    fn init() -> Launch {
        Launch {
            comm: Box::new(LocalComm),
        }
    }

    #[cfg(feature = "mpi")]
    fn init() -> Launch {
        use mpi::traits::Communicator;
        use mpi::Threading;
        // Only the main thread calls MPI (see engine::mpi_comm), so FUNNELED is all we need.
        match mpi::initialize_with_threading(Threading::Funneled) {
            Some((universe, granted)) => {
                let world = universe.world();
                let rank = world.rank();
                let main_thread = std::thread::current().id();
                // A panic on any rank (any thread) ends the whole job at once instead of
                // leaving the other ranks waiting in a collective. MPI_Abort may be called
                // only from the main thread unless MPI granted MPI_THREAD_MULTIPLE (not asked
                // for: it would slow every call). A panic on another thread (a rayon worker)
                // therefore ends just this process, without calling MPI: a rank that dies
                // without MPI_Finalize makes mpirun end the other ranks (srun too when it
                // kills a step on a bad exit: --kill-on-bad-exit or KillOnBadExit=1). Passing
                // the panic on to the main thread instead would rely on rayon re-raising it
                // there, which it does only for work run inside `install`, after the rest of
                // the window.
                let default_hook = std::panic::take_hook();
                std::panic::set_hook(Box::new(move |info| {
                    eprintln!("error: rank {rank}: {info}");
                    if std::env::var_os("RUST_BACKTRACE").is_some() {
                        default_hook(info);
                    }
                    if std::thread::current().id() == main_thread || granted >= Threading::Multiple
                    {
                        mpi::topology::SimpleCommunicator::world().abort(101);
                    }
                    std::process::abort();
                }));
                Launch {
                    comm: Box::new(weft::engine::mpi_comm::MpiComm::new(world)),
                    _universe: Some(universe),
                }
            }
            None => Launch {
                comm: Box::new(LocalComm),
                _universe: None,
            },
        }
    }
}

/// `weft contention`: the analysis of `routing` on `pattern` at `scope`, as text and as JSON;
/// with `draws`, C_topo's distribution over that many seeds.
fn contention(
    s: &weft::scenario::Scenario,
    routing: &str,
    pattern: &str,
    scope: &str,
    draws: Option<u64>,
    top: usize,
) -> Result<(String, serde_json::Value)> {
    use weft::contention::{analyze, is_random, routing_by_name, Draws, Pattern, Report, Scope};
    let scope = Scope::parse(scope)?;
    if !weft::contention::ROUTING_NAMES.contains(&routing) {
        bail!(
            "--routing: unknown routing {routing:?} (one of {})",
            weft::contention::ROUTING_NAMES.join(", ")
        );
    }
    if let Some(n) = draws {
        if !is_random(routing) {
            bail!("--draws: only the random routings (random, random_per_dest) draw; {routing:?} does not");
        }
        if !(1..=1_000_000).contains(&n) {
            bail!("--draws: {n} draws (1 to 1000000)");
        }
    }
    let started = std::time::Instant::now();
    let f = weft::topology::Fabric::build(s);
    let r = routing_by_name(&f, routing, s.seed)?;
    let p = Pattern::parse(pattern, f.host_types(), s.seed)?;
    if let Some(n) = draws {
        let per_draw: Vec<[u32; 3]> = (0..n)
            .map(|i| {
                let r = routing_by_name(&f, routing, s.seed.wrapping_add(i))?;
                let c = analyze(&f, &r, &p);
                Ok(Scope::ALL.map(|sc| c.c_topo_in(&f, sc)))
            })
            .collect::<Result<_>>()?;
        let d = Draws::new(
            routing,
            pattern,
            scope,
            s.seed,
            &per_draw,
            started.elapsed().as_secs_f64(),
        );
        return Ok((d.to_text(), d.json));
    }
    let c = analyze(&f, &r, &p);
    let report = Report::new(
        &f,
        &c,
        routing,
        pattern,
        scope,
        top,
        started.elapsed().as_secs_f64(),
    );
    Ok((report.to_text(), report.json))
}

/// `summary.json` of a static analysis (`weft contention`, `weft opera-faults`): the report
/// as `results`, its time (if it gives one) as `run`, as a sweep point's collection reads it.
fn write_analysis_summary(dir: &Path, command: &str, report: &serde_json::Value) -> Result<()> {
    std::fs::create_dir_all(dir)
        .with_context(|| format!("--out {}: cannot create the folder", dir.display()))?;
    let wall_s = report.get("elapsed_s").cloned().unwrap_or_default();
    let doc = serde_json::json!({
        "command": command,
        "results": report,
        "run": { "wall_s": wall_s },
    });
    let path = dir.join("summary.json");
    std::fs::write(&path, serde_json::to_string_pretty(&doc)? + "\n")
        .with_context(|| format!("writing {}", path.display()))
}

fn main() {
    let cli = Cli::parse();
    let code = {
        let launch = Launch::init();
        let comm = &*launch.comm;
        match real_main(cli, comm) {
            Ok(()) => 0,
            Err(e) if e.is::<Requeue>() => REQUEUE_EXIT_CODE,
            Err(e) => {
                if !e.is::<ReportedElsewhere>() {
                    // One line: the chain of contexts joined; line breaks inside a message
                    // (e.g. from a library's error text) become "; ".
                    let msg: Vec<String> = e.chain().map(|c| c.to_string()).collect();
                    let msg = msg.join(": ");
                    let msg: Vec<&str> = msg
                        .lines()
                        .map(str::trim)
                        .filter(|l| !l.is_empty())
                        .collect();
                    let who = if comm.rank() == 0 {
                        String::new()
                    } else {
                        format!("rank {}: ", comm.rank())
                    };
                    eprintln!("error: {who}{}", msg.join("; "));
                }
                1
            }
        }
        // `launch` drops here: MPI is finalized before the process exits.
    };
    std::process::exit(code);
}

fn real_main(cli: Cli, comm: &dyn Comm) -> Result<()> {
    let root = comm.rank() == 0;
    match cli.cmd {
        Cmd::Run(args) => cmd_run(args, comm),
        Cmd::Validate { scenario, sets } => {
            let s = load_scenario(&scenario, &sets)?;
            let r = weft::validate_cmd::size_report(&s)?;
            if root {
                print!("{}", r.to_text(&s));
            }
            Ok(())
        }
        Cmd::Contention(args) => cmd_contention(args, root),
        Cmd::Partition(args) => cmd_partition(args, root),
        Cmd::OperaFaults(args) => cmd_opera_faults(args, root),
        Cmd::MoeTrace(args) => cmd_moe_trace(args),
        // Not simulations: every rank would do the same work, so only rank 0 does it.
        Cmd::Sweep(a) if root => sweep_cli::sweep(a),
        Cmd::Collect(a) if root => sweep_cli::collect(a),
        Cmd::Plot(a) if root => sweep_cli::plot(a),
        Cmd::Reproduce(a) if root => reproduce_cli::reproduce(a),
        Cmd::Reference { output } if root => {
            let page = weft::scenario::reference::markdown();
            match &output {
                Some(f) => std::fs::write(f, page)
                    .with_context(|| format!("-o {}: cannot write", f.display())),
                None => std::io::Write::write_all(&mut std::io::stdout(), page.as_bytes())
                    .context("cannot write to stdout"),
            }
        }
        Cmd::Sweep(_)
        | Cmd::Collect(_)
        | Cmd::Plot(_)
        | Cmd::Reproduce(_)
        | Cmd::Reference { .. } => Ok(()),
    }
}

/// `weft run`: every rank loads the scenario and simulates its share; rank 0 writes
/// the outputs, and every rank exits with rank 0's status.
fn cmd_run(args: RunArgs, comm: &dyn Comm) -> Result<()> {
    let RunArgs {
        scenario,
        sets,
        out,
        threads,
        partitions,
        partition,
        progress,
        json,
        checkpoint,
        checkpoint_every,
        stop_at,
        restart,
    } = args;
    let root = comm.rank() == 0;
    let threads = match threads {
        Some(t) if t == 0 || t > MAX_THREADS => {
            bail!("--threads: must be from 1 to {MAX_THREADS} (got {t})")
        }
        Some(t) => t,
        None => default_threads::default_threads(comm),
    };
    let ck = checkpoint_options(checkpoint, checkpoint_every, stop_at, restart)?;
    if ck.dir.is_some() {
        weft::checkpoint::signals::install()?;
    }
    // Rank 0 also checks that it can write --out, before the run rather than after it.
    let s = load_scenario(&scenario, &sets).and_then(|s| match &out {
        Some(dir) if root => check_out_dir(dir).map(|()| s),
        _ => Ok(s),
    });
    // Every rank reads the scenario; they agree before going on, so that a rank that
    // cannot read it (or rank 0 that cannot write --out) does not leave the others
    // waiting.
    let failed = comm.sum_u64(&[s.is_err() as u64, (s.is_err() && root) as u64]);
    let s = match s {
        Ok(s) if failed[0] == 0 => s,
        Err(e) if root || failed[1] == 0 => return Err(e),
        _ => return Err(ReportedElsewhere.into()),
    };
    let opts = RunOptions {
        threads,
        partitions,
        plan_file: partition,
        progress,
    };
    // Test only (tests/it/mpi.rs): the last rank panics on a thread other than the main
    // thread, as a bug in a partition's worker would.
    #[cfg(feature = "mpi")]
    if std::env::var("WEFT_TEST_PANIC_IN_WORKER").as_deref() == Ok("1")
        && comm.rank() + 1 == comm.ranks()
    {
        let _ = std::thread::spawn(|| panic!("WEFT_TEST_PANIC_IN_WORKER=1")).join();
    }
    let output = match simulate_checkpointed(&s, &opts, &ck, comm)? {
        Outcome::Finished(output) => output,
        Outcome::Checkpointed(saved) => return stopped_at_checkpoint(&saved, root),
    };
    // Rank 0 writes; then every rank exits with rank 0's status.
    let written = match output {
        Some(output) => write_outputs(&s, &output, out.as_deref(), json),
        None => Ok(()),
    };
    let ok = comm.broadcast_bytes(&[written.is_ok() as u8])[0] == 1;
    match written {
        Err(e) => Err(e),
        Ok(()) if !ok => Err(ReportedElsewhere.into()),
        Ok(()) => Ok(()),
    }
}

/// `weft contention`: the static contention report, printed (and written) by rank 0.
fn cmd_contention(args: ContentionArgs, root: bool) -> Result<()> {
    let ContentionArgs {
        scenario,
        sets,
        routing,
        pattern,
        scope,
        draws,
        top,
        json,
        out,
    } = args;
    let s = load_scenario(&scenario, &sets)?;
    let (text, report) = contention(&s, &routing, &pattern, &scope, draws, top)?;
    if root {
        if json {
            println!("{}", serde_json::to_string_pretty(&report)?);
        } else {
            print!("{text}");
        }
        if let Some(dir) = &out {
            write_analysis_summary(dir, "contention", &report)?;
        }
    }
    Ok(())
}

/// `weft partition`: writes a partition plan, balanced by ports or by measured events
/// per node, and prints its figures.
fn cmd_partition(args: PartitionArgs, root: bool) -> Result<()> {
    let PartitionArgs {
        scenario,
        sets,
        parts,
        ranks,
        output,
        weights,
    } = args;
    let s = load_scenario(&scenario, &sets)?;
    let m = Model::build(&s)?;
    let (plan, events_imbalance) = match &weights {
        Some(path) => {
            let w = weft::engine::weights::read(path, m.fabric.num_nodes())?;
            let auto = Plan::automatic(&m, parts, ranks)?;
            let auto_imbalance = weft::engine::weights::event_imbalance(&auto, &w);
            println!("automatic plan: event imbalance {auto_imbalance:.3}");
            let (plan, imbalance) = weft::engine::weights::weighted_plan(&m, parts, ranks, &w)?;
            (plan, Some(imbalance))
        }
        None => (Plan::automatic(&m, parts, ranks)?, None),
    };
    if root {
        std::fs::write(&output, plan_file::to_text(&m, &plan))
            .with_context(|| format!("-o {}: cannot write", output.display()))?;
        println!(
            "wrote {}: {} partitions on {} ranks, lookahead {} ns, {} cut links, port imbalance {:.3}",
            output.display(),
            plan.parts,
            plan.ranks,
            plan.lookahead_ps as f64 / 1000.0,
            plan.cut_links,
            plan.imbalance()
        );
        if let Some(i) = events_imbalance {
            println!("expected event imbalance {i:.3} (busiest partition's events / mean)");
        }
        // The exchange sends one message per neighbour rank and window: the
        // scaling model (benches/scaling_model.py) reads this line.
        let n: Vec<usize> = (0..plan.ranks)
            .map(|r| weft::engine::neighbor_ranks(&plan, r).len())
            .collect();
        let mean = n.iter().sum::<usize>() as f64 / n.len() as f64;
        let max = n.iter().max().copied().unwrap_or(0);
        println!("neighbour ranks per rank: max {max}, mean {mean:.2}");
    }
    Ok(())
}

/// `weft opera-faults`: Opera's connectivity under random failures, printed (and
/// written) by rank 0.
fn cmd_opera_faults(args: OperaFaultsArgs, root: bool) -> Result<()> {
    let OperaFaultsArgs {
        scenario,
        sets,
        links,
        tors,
        rotors,
        draws,
        json,
        out,
    } = args;
    if out.is_some() && [&links, &tors, &rotors].iter().any(|v| v.len() != 1) {
        bail!("--out: give one value of --links, --tors and --rotors (a sweep varies them)");
    }
    let s = load_scenario(&scenario, &sets)?;
    let (text, rows) = weft::opera_faults_cmd::run(&s, &links, &tors, &rotors, draws)?;
    if root {
        if json {
            println!("{}", serde_json::to_string_pretty(&rows)?);
        } else {
            print!("{text}");
        }
        if let Some(dir) = &out {
            write_analysis_summary(dir, "opera-faults", &rows[0])?;
        }
    }
    Ok(())
}

/// `weft moe-trace`: writes a synthetic MoE routing trace and prints its figures on
/// stderr.
fn cmd_moe_trace(args: MoeTraceArgs) -> Result<()> {
    let MoeTraceArgs {
        gpus,
        gpus_per_server,
        experts,
        top_k,
        tokens_per_gpu,
        imbalance,
        imbalance_of,
        eplb,
        redundant_experts,
        dispatch,
        seed,
        group,
        bytes_per_token,
        output,
    } = args;
    use weft::workload::moe_trace::{generate, write_csv, GenParams};
    if redundant_experts.is_some() && !eplb {
        bail!("--redundant-experts: only used with --eplb");
    }
    let p = GenParams {
        gpus_per_server,
        experts,
        top_k,
        imbalance,
        imbalance_of,
        eplb,
        redundant_experts: redundant_experts.unwrap_or(gpus),
        dispatch,
        seed,
        group,
        ..GenParams::new(gpus, tokens_per_gpu)
    };
    let started = std::time::Instant::now();
    // The library names the parameter ("top_k: ..."); here it is the flag ("--top-k: ...").
    let t = generate(&p).map_err(|e| {
        let e = e.to_string();
        match e.split_once(": ") {
            Some((field, rest)) => anyhow::anyhow!("--{}: {rest}", field.replace('_', "-")),
            None => anyhow::anyhow!(e),
        }
    })?;
    let secs = started.elapsed().as_secs_f64();
    // The first comment line is the command that wrote the file, to regenerate it.
    let args: Vec<String> = std::env::args().skip(1).collect();
    let mut text = format!("# weft {}\n", args.join(" ")).into_bytes();
    write_csv(&t, &mut text)?;
    match &output {
        Some(f) => {
            std::fs::write(f, &text).with_context(|| format!("-o {}: cannot write", f.display()))?
        }
        None => std::io::Write::write_all(&mut std::io::stdout(), &text)?,
    }
    let total = t.total_tokens() * bytes_per_token;
    eprintln!(
        "imbalance {:.4} (before EPLB {:.4}) of the experts' token copies, {:.4} of what GPUs receive over the network, sigma {:.6}; scale-out {:.1} MB in all, {:.1} MB per GPU on average at {bytes_per_token} B per token; {} NVLink token copies; generated in {secs:.2} s",
        t.imbalance,
        t.imbalance_before_eplb,
        t.network_imbalance(),
        t.sigma,
        total as f64 / 1e6,
        total as f64 / 1e6 / gpus as f64,
        t.nvlink_token_copies
    );
    Ok(())
}

/// Not an error: the run checkpointed on a signal and asks to be requeued (exit status
/// [`REQUEUE_EXIT_CODE`]).
#[derive(Debug)]
struct Requeue;

impl std::fmt::Display for Requeue {
    fn fmt(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("checkpointed on a signal")
    }
}
impl std::error::Error for Requeue {}

/// The checkpoint flags, checked: times parsed, and --checkpoint-every and --stop-at only
/// with --checkpoint.
fn checkpoint_options(
    dir: Option<PathBuf>,
    every: Option<String>,
    stop_at: Option<String>,
    restart: Option<PathBuf>,
) -> Result<CheckpointOptions> {
    use weft::checkpoint::{parse_every, parse_sim_time};
    if dir.is_none() {
        if every.is_some() {
            bail!("--checkpoint-every: needs --checkpoint DIR");
        }
        if stop_at.is_some() {
            bail!("--stop-at: needs --checkpoint DIR");
        }
    }
    let every = every
        .map(|t| parse_every(&t).context("--checkpoint-every"))
        .transpose()?;
    let stop_at_ps = stop_at
        .map(|t| parse_sim_time(&t).context("--stop-at"))
        .transpose()?;
    Ok(CheckpointOptions {
        dir,
        every,
        stop_at_ps,
        restart,
    })
}

/// A run that stopped at a checkpoint: rank 0 says where it is; `--stop-at` exits 0, a
/// signal with [`REQUEUE_EXIT_CODE`].
fn stopped_at_checkpoint(saved: &Saved, root: bool) -> Result<()> {
    if root {
        let dir = saved.folder.parent().unwrap_or(std::path::Path::new("."));
        println!(
            "checkpoint at simulated time {} ns written to {} (resume with --restart {})",
            saved.sim_ps as f64 / 1000.0,
            saved.folder.display(),
            dir.display()
        );
    }
    if saved.requeue {
        return Err(Requeue.into());
    }
    Ok(())
}

/// Creates `dir` if missing and checks that a file can be created in it (then removes it).
fn check_out_dir(dir: &std::path::Path) -> Result<()> {
    let ctx = || format!("--out {}", dir.display());
    std::fs::create_dir_all(dir).with_context(|| format!("{}: cannot create the folder", ctx()))?;
    let probe = dir.join(format!(".weft-probe-{}", std::process::id()));
    std::fs::write(&probe, b"")
        .with_context(|| format!("{}: cannot write into the folder", ctx()))?;
    let _ = std::fs::remove_file(&probe);
    Ok(())
}

fn write_outputs(
    s: &weft::scenario::Scenario,
    output: &weft::sim::RunOutput,
    out: Option<&std::path::Path>,
    json: bool,
) -> Result<()> {
    let summary = Summary::new(output, serde_json::to_value(s)?);
    if json {
        print!("{}", summary.to_json());
    } else {
        print!("{}", summary.to_text());
    }
    if out.is_none() && s.report.flow_log {
        eprintln!("warning: report.flow_log is set but flows.csv is written only with --out DIR");
    }
    if let Some(dir) = out {
        std::fs::create_dir_all(dir)
            .with_context(|| format!("--out: cannot create {}", dir.display()))?;
        let path = dir.join("summary.json");
        std::fs::write(&path, summary.to_json())
            .with_context(|| format!("writing {}", path.display()))?;
        let path = dir.join("latency.hlog");
        let mut f = std::io::BufWriter::new(
            std::fs::File::create(&path).with_context(|| format!("writing {}", path.display()))?,
        );
        let m = &output.metrics;
        write_run_hlog(&mut f, output)?;
        if let Some(series) = &m.series {
            let ports: Vec<u64> = output.stages.iter().map(|s| s.ports).collect();
            let path = dir.join("timeseries.csv");
            std::fs::write(&path, series.to_csv(output.stage_names, &ports))
                .with_context(|| format!("writing {}", path.display()))?;
        }
        if !s.report.trace_hosts.is_empty() {
            let path = dir.join("cwnd.csv");
            std::fs::write(&path, weft::metrics::timeseries::cwnd_csv(&m.cwnd))
                .with_context(|| format!("writing {}", path.display()))?;
        }
        let path = dir.join("node_events.csv");
        let csv = weft::engine::weights::to_csv(&output.node_events);
        std::fs::write(&path, csv).with_context(|| format!("writing {}", path.display()))?;
        if s.report.flow_log {
            let path = dir.join("flows.csv");
            let csv = weft::metrics::flow_log::to_csv(&m.flow_log, &output.phase_names);
            std::fs::write(&path, csv).with_context(|| format!("writing {}", path.display()))?;
        }
        if !m.flow_events.is_empty() {
            let path = dir.join("flow_events.csv");
            let csv = weft::metrics::timeseries::flow_events_csv(&m.flow_events);
            std::fs::write(&path, csv).with_context(|| format!("writing {}", path.display()))?;
        }
    }
    if output.flows_incomplete > 0 {
        eprintln!(
            "warning: {} of {} flows did not complete ({})",
            output.flows_incomplete,
            output.flows_total,
            match output.ending {
                weft::engine::Ending::Stopped => "the run reached end_us",
                _ => "packets were lost and host.cc = \"none\" has no loss recovery",
            }
        );
    }
    Ok(())
}
