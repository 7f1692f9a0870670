//! One simulation run: scenario → model → partition plan → engine → merged metrics.

use crate::checkpoint::{self, CheckpointOptions, Drove};
pub use crate::engine::comm::{agree, ReportedElsewhere};
use crate::engine::comm::{Comm, LocalComm};
use crate::engine::partition::{Outbox, Partition};
use crate::engine::plan::Plan;
use crate::engine::{plan_file, Ending, Engine, LoopStats, ProgressSample};
use crate::metrics::workload_bound::{lower_bound_ps, phase_lower_bounds_ps, BoundInputs};
use crate::metrics::{histogram_wire, phases, Counters, Metrics, StageStats};
use crate::model::Model;
use crate::scenario::Scenario;
use crate::time::PS_PER_US;
use anyhow::{bail, Result};
use crossbeam::utils::CachePadded;
use serde::{Deserialize, Serialize};
use std::io::IsTerminal;
use std::path::PathBuf;
use std::time::Instant;

#[derive(Clone, Debug)]
/// How a run is executed (never what it simulates: results do not depend on these).
pub struct RunOptions {
    /// Worker threads of this rank.
    pub threads: usize,
    /// None: automatic (ranks × (1 for one thread, else 2 × threads), up to what the fabric
    /// allows).
    pub partitions: Option<u32>,
    /// A partition plan file (`weft partition`); overrides `partitions`.
    pub plan_file: Option<PathBuf>,
    /// Print progress on stderr (rank 0) at most once a second.
    pub progress: bool,
}

impl Default for RunOptions {
    fn default() -> Self {
        RunOptions {
            threads: 1,
            partitions: None,
            plan_file: None,
            progress: false,
        }
    }
}

/// Everything a run determined, merged over partitions and ranks, before it is formatted.
pub struct RunOutput {
    /// Flow, latency and queue measurements, merged over partitions and ranks.
    pub metrics: Metrics,
    /// Per-stage (link tier) port statistics, indexed like `stage_names`.
    pub stages: Vec<StageStats>,
    /// Names of the fabric's link stages (`Fabric::stage_names`).
    pub stage_names: &'static [&'static str],
    /// Names of the switch tiers 1, 2, ... (`Fabric::switch_tier_names`), as the series'
    /// switch occupancy histograms are indexed.
    pub switch_tier_names: Vec<String>,
    /// Flows the workload defines.
    pub flows_total: u64,
    /// Flows not completed when the run ended.
    pub flows_incomplete: u64,
    /// Data packets still in the fabric when the run ended.
    pub data_in_flight: u64,
    /// Acknowledgements and other control packets still in the fabric when the run ended.
    pub acks_in_flight: u64,
    /// Lower bound of the workload's completion time, in ps.
    pub cct_lower_bound_ps: u64,
    /// The workload's phases (collectives), in order: names and duration lower bounds; their
    /// measurements are `metrics.phases` (possibly shorter: a phase nothing sent).
    pub phase_names: Vec<String>,
    /// Upper edges of the FCT size bins (`report.fct_bins_bytes`); their histograms are
    /// `metrics.fct_by_size_ns` (possibly shorter: bins no flow reached).
    pub fct_bins_bytes: Vec<u64>,
    /// NVLink bytes that accompany the workload (GPU servers; reported, not simulated).
    pub nvlink_bytes: u64,
    /// Opera's schedule, if the fabric is one.
    pub opera: Option<crate::topology::opera::OperaFacts>,
    /// Data packets' payload and header bytes (`packet.*`), for byte ratios.
    pub payload_bytes: u32,
    /// Header bytes of a data packet.
    pub header_bytes: u32,
    /// Events processed per node, by node id (`node_events.csv`).
    pub node_events: Vec<u64>,
    /// Duration lower bound of each phase, in ps, indexed like `phase_names`.
    pub phase_lower_bounds_ps: Vec<u64>,
    /// End of the statistics window (the last event), in ps.
    pub end_ps: u64,
    /// Why the run ended.
    pub ending: Ending,
    /// Hosts of the fabric.
    pub hosts: u32,
    /// Switches of the fabric.
    pub switches: u32,
    /// Failed links (`[failures]`).
    pub failed_links: usize,
    /// The instance's max-concurrent-flow rate, where it was computed.
    pub rho_max: Option<f64>,
    /// Window-loop statistics merged over ranks (times: the slowest rank's).
    pub loop_stats: LoopStats,
    /// Each rank's own window-loop statistics (time per phase of a window), by rank.
    pub rank_loop_stats: Vec<LoopStats>,
    /// Events each rank processed (its nodes' events), by rank: the work split.
    pub rank_events: Vec<u64>,
    /// Wall-clock time of the run, in s.
    pub wall_s: f64,
    /// Of `wall_s`, building the model and the plan (rank 0; the rho_max LP included).
    pub setup_wall_s: f64,
    /// Threads per rank.
    pub threads: usize,
    /// MPI ranks (1 without MPI).
    pub ranks: u32,
    /// Partitions the fabric was split into.
    pub partitions: u32,
    /// Conservative-synchronization lookahead: the smallest positive link latency, in ps.
    pub lookahead_ps: u64,
    /// Links between nodes in different partitions.
    pub cut_links: u64,
    /// Largest peak RSS of any rank.
    pub peak_rss_bytes: u64,
    /// The checkpoint's simulated time, if this run resumed from one (`--restart`).
    pub resumed_at_ps: Option<u64>,
    /// Events processed before the resume (by the runs that wrote the checkpoints).
    pub resumed_events: u64,
}

impl RunOutput {
    /// CCT (first data packet sent → last ACK), if every flow completed.
    pub fn cct_ps(&self) -> Option<u64> {
        let c = &self.metrics.counters;
        (self.flows_incomplete == 0 && self.flows_total > 0)
            .then(|| c.last_ack_ps - c.first_send_ps)
    }

    /// Aggregate goodput: distinct payload bytes delivered over the CCT (or, if flows did
    /// not complete, from the first send to the end of the run), in bit/s.
    pub fn goodput_bps(&self) -> Option<f64> {
        let c = &self.metrics.counters;
        let span = self
            .cct_ps()
            .or_else(|| (c.first_send_ps < self.end_ps).then(|| self.end_ps - c.first_send_ps))?;
        (span > 0).then(|| c.payload_bytes_delivered as f64 * 8.0 / (span as f64 * 1e-12))
    }
}

/// What each rank sends to rank 0 at the end.
#[derive(Serialize, Deserialize)]
struct RankReport {
    counters: Counters,
    stages: Vec<StageStats>,
    incomplete: u64,
    data_held: u64,
    acks_held: u64,
    adverts_held: u64,
    pulls_held: u64,
    latency_v2: Vec<u8>,
    fct_v2: Vec<u8>,
    loop_stats: LoopStats,
    peak_rss_bytes: u64,
    series: Option<crate::metrics::Timeseries>,
    cwnd: Vec<crate::metrics::CwndPoint>,
    flow_events: Vec<crate::metrics::FlowEvent>,
    flow_log: Vec<crate::metrics::FlowRecord>,
    phases: Vec<crate::metrics::PhaseStats>,
    phase_latency_v2: Vec<Vec<u8>>,
    phase_fct_v2: Vec<Vec<u8>>,
    /// (node, events) of this rank's nodes.
    node_events: Vec<(u32, u64)>,
    /// Events this rank's partitions had processed when the run resumed (0 without a restart).
    resumed_events: u64,
    fct_by_size_v2: Vec<Vec<u8>>,
}

/// Hosts per partition the automatic choice aims at: smaller partitions keep each event
/// queue and its nodes' state in cache (measured on k = 16 and k = 32 permutations with one
/// thread: 1.8x and 3x faster than one partition), while windows cost little with a 500 ns
/// lookahead.
const HOSTS_PER_PARTITION: u32 = 256;

/// The automatic partition count: enough partitions for locality (one per
/// [`HOSTS_PER_PARTITION`] hosts) and for load balance (2 per worker thread when a rank has
/// several threads), rounded up to a multiple of ranks × threads, at most one per edge switch
/// or leaf, and at least one per rank.
pub fn default_partitions(m: &Model, threads: usize, ranks: u32) -> u32 {
    let workers = ranks * threads as u32;
    let balance = if threads > 1 { 2 * workers } else { workers };
    let want = m
        .fabric
        .num_hosts
        .div_ceil(HOSTS_PER_PARTITION)
        .max(balance);
    (want.div_ceil(workers) * workers)
        .min(Plan::max_parts(m))
        .max(ranks)
}

/// Runs a scenario in this process alone.
pub fn simulate(s: &Scenario, opts: &RunOptions) -> Result<RunOutput> {
    Ok(simulate_on(s, opts, &LocalComm)?.expect("a single process is rank 0"))
}

fn setup(s: &Scenario, opts: &RunOptions, comm: &dyn Comm) -> Result<(Model, Plan)> {
    if opts.threads == 0 {
        bail!("--threads: must be at least 1");
    }
    let m = Model::build(s)?;
    let plan = match &opts.plan_file {
        Some(path) => plan_file::read(path, &m, comm.ranks())?,
        None => {
            let parts = opts
                .partitions
                .unwrap_or_else(|| default_partitions(&m, opts.threads, comm.ranks()));
            Plan::automatic(&m, parts, comm.ranks())?
        }
    };
    Ok((m, plan))
}

/// How a run under checkpoint options ended.
pub enum Outcome {
    /// It ran to its end: rank 0 gets the merged output, other ranks `None`.
    Finished(Option<Box<RunOutput>>),
    /// It wrote a checkpoint and stopped (`--stop-at`, or a signal).
    Checkpointed(crate::checkpoint::Saved),
}

/// Runs a scenario as one rank of `comm`. Rank 0 gets the merged output; other ranks `None`.
/// Set-up errors are agreed on by all ranks, so none is left waiting in a collective.
pub fn simulate_on(s: &Scenario, opts: &RunOptions, comm: &dyn Comm) -> Result<Option<RunOutput>> {
    match simulate_checkpointed(s, opts, &CheckpointOptions::default(), comm)? {
        Outcome::Finished(out) => Ok(out.map(|o| *o)),
        Outcome::Checkpointed(_) => unreachable!("no checkpoint was asked for"),
    }
}

/// [`simulate_on`], resuming from a checkpoint and writing checkpoints as `ck` asks.
pub fn simulate_checkpointed(
    s: &Scenario,
    opts: &RunOptions,
    ck: &CheckpointOptions,
    comm: &dyn Comm,
) -> Result<Outcome> {
    let start = Instant::now();
    let (run, from) = set_up_run(s, opts, ck, comm, start)?;
    let (mut partitions, outboxes, ending, loop_stats) = match run_loop(s, ck, comm, &run, from)? {
        Ran::Ended {
            parts,
            outboxes,
            ending,
            loop_stats,
        } => (parts, outboxes, ending, loop_stats),
        Ran::Saved(saved) => return Ok(Outcome::Checkpointed(saved)),
    };

    // Close the statistics window at the global last event.
    let local_last = partitions
        .iter()
        .map(|p| p.metrics.counters.last_event_ps)
        .max()
        .unwrap_or(0);
    let end_ps = u64::MAX - comm.min_u64(u64::MAX - local_last);
    let report = rank_report(
        &run,
        &mut partitions,
        &outboxes,
        end_ps,
        loop_stats,
        run.resumed_events,
    );
    let bytes = bincode::serde::encode_to_vec(&report, bincode::config::standard())?;
    let Some(all) = comm.gather_bytes(&bytes) else {
        return Ok(Outcome::Finished(None));
    };
    let merged = merge_reports(&run.m, &all)?;
    check_conservation(&run.m, &merged)?;
    Ok(Outcome::Finished(Some(Box::new(run_output(
        s, comm, &run, merged, end_ps, ending, start,
    )))))
}

/// A run ready to start: its options (the partition count a restart takes from its
/// checkpoint filled in), model, plan and thread pool.
struct Run {
    opts: RunOptions,
    m: Model,
    plan: Plan,
    pool: Option<rayon::ThreadPool>,
    scenario_hash: u64,
    /// Building the model and the plan, from the start of the run, in s.
    setup_wall_s: f64,
    /// The checkpoint's simulated time, if the run resumes from one, in ps.
    resumed_at_ps: Option<u64>,
    /// Events this rank's partitions had processed before the resume (0 without one).
    resumed_events: u64,
}

/// Set-up or restore: opens the checkpoint `ck` restarts from, builds the model and plan,
/// and this rank's partitions, restored or fresh (a fresh start is one from time 0 with
/// empty loop statistics). Every step's errors are agreed on by all ranks.
fn set_up_run(
    s: &Scenario,
    opts: &RunOptions,
    ck: &CheckpointOptions,
    comm: &dyn Comm,
    start: Instant,
) -> Result<(Run, checkpoint::Restored)> {
    let scenario_hash = checkpoint::scenario_hash(s);
    let opened = match &ck.restart {
        Some(dir) => Some(agree(checkpoint::open(dir, s, comm), comm)?),
        None => None,
    };
    // A restart without --partitions or --partition uses the checkpoint's partition count
    // (the automatic one depends on --threads, which may change between runs).
    let mut opts = opts.clone();
    if let (Some(o), None, None) = (&opened, opts.partitions, &opts.plan_file) {
        opts.partitions = Some(o.header().partitions);
    }
    let setup = setup(s, &opts, comm);
    let setup_wall_s = start.elapsed().as_secs_f64();
    let (m, plan) = agree(setup, comm)?;
    // Multi-rank runs always get a pool: the exchange between ranks encodes and decodes on it.
    let pool = if opts.threads > 1 || comm.ranks() > 1 {
        Some(
            rayon::ThreadPoolBuilder::new()
                .num_threads(opts.threads)
                .build()?,
        )
    } else {
        None
    };
    let restored = match opened {
        Some(o) => Some(agree(
            checkpoint::load(o, &plan, comm, pool.as_ref()),
            comm,
        )?),
        None => None,
    };
    let resumed_at_ps = restored.as_ref().map(|r| r.boundary_ps);
    let resumed_events: u64 = restored.as_ref().map_or(0, |r| {
        r.parts.iter().map(|(p, _)| p.metrics.counters.events).sum()
    });
    let from = match restored {
        Some(r) => r,
        None => checkpoint::Restored {
            parts: build_partitions(&m, &plan, comm, pool.as_ref()),
            stats: LoopStats::default(),
            boundary_ps: 0,
        },
    };
    let run = Run {
        opts,
        m,
        plan,
        pool,
        scenario_hash,
        setup_wall_s,
        resumed_at_ps,
        resumed_events,
    };
    Ok((run, from))
}

/// How the run loop stopped.
enum Ran {
    /// At the run's end: the partitions, their outboxes and the loop's statistics.
    Ended {
        parts: Vec<CachePadded<Partition>>,
        outboxes: Vec<Outbox>,
        ending: Ending,
        loop_stats: LoopStats,
    },
    /// After writing a checkpoint.
    Saved(checkpoint::Saved),
}

/// The run loop: drives the engine from `from` to `end_us` (or until a checkpoint stops
/// it), with progress on rank 0's stderr when asked for or on a terminal.
fn run_loop(
    s: &Scenario,
    ck: &CheckpointOptions,
    comm: &dyn Comm,
    run: &Run,
    from: checkpoint::Restored,
) -> Result<Ran> {
    let m = &run.m;
    let progress_on = comm
        .broadcast_bytes(&[(run.opts.progress || std::io::stderr().is_terminal()) as u8])[0]
        == 1;
    let total_bytes = (0..m.fabric.num_hosts)
        .map(|h| m.workload.bytes_of(h))
        .sum();
    let mut progress = Progress::new(progress_on && comm.rank() == 0, total_bytes);
    let mut engine = Engine::new(from.parts, m, &run.plan, comm, run.pool.as_ref());
    engine.stats = from.stats;
    engine.boundary_ps = from.boundary_ps;
    let mut tick = |p: ProgressSample| progress.tick(p);
    let stop_ps = s.end_us.map_or(crate::time::NEVER_PS, |us| {
        (us * PS_PER_US as f64).round() as u64
    });
    let drove = checkpoint::drive(
        &mut engine,
        stop_ps,
        ck,
        run.scenario_hash,
        progress_on.then_some(&mut tick as &mut dyn FnMut(ProgressSample)),
    );
    progress.finish();
    Ok(match drove? {
        Drove::Ended(ending) => Ran::Ended {
            loop_stats: engine.stats,
            parts: engine.parts,
            outboxes: engine.outboxes,
            ending,
        },
        Drove::Saved(saved) => Ran::Saved(saved),
    })
}

/// This rank's report to rank 0: its partitions' metrics, with the statistics window
/// closed at `end_ps`, merged, and the packets still held in them or their outboxes.
fn rank_report(
    run: &Run,
    partitions: &mut [CachePadded<Partition>],
    outboxes: &[Outbox],
    end_ps: u64,
    loop_stats: LoopStats,
    resumed_events: u64,
) -> RankReport {
    let m = &run.m;
    let mut report = RankReport {
        counters: Counters::new(),
        stages: vec![StageStats::default(); m.fabric.stage_names().len()],
        incomplete: 0,
        data_held: 0,
        acks_held: 0,
        adverts_held: 0,
        pulls_held: 0,
        latency_v2: vec![],
        fct_v2: vec![],
        loop_stats,
        peak_rss_bytes: crate::metrics::process::peak_rss_bytes(),
        series: None,
        cwnd: vec![],
        flow_events: vec![],
        flow_log: vec![],
        phases: vec![],
        phase_latency_v2: vec![],
        phase_fct_v2: vec![],
        node_events: vec![],
        fct_by_size_v2: vec![],
        resumed_events,
    };
    let mut metrics = Metrics::default();
    for (p, outbox) in partitions.iter_mut().zip(outboxes) {
        p.finish_samples(m, end_ps);
        metrics.merge(&p.metrics);
        for (acc, st) in report.stages.iter_mut().zip(p.stage_stats(m, end_ps)) {
            acc.merge(&st);
        }
        let [d, a, adv, pulls] = p.packets_held(outbox);
        report.data_held += d;
        report.acks_held += a;
        report.adverts_held += adv;
        report.pulls_held += pulls;
        report.incomplete += p.incomplete_flows();
        report.node_events.extend(p.node_events());
    }
    report.counters = metrics.counters;
    report.series = metrics.series.take();
    report.cwnd = std::mem::take(&mut metrics.cwnd);
    report.flow_events = std::mem::take(&mut metrics.flow_events);
    report.flow_log = std::mem::take(&mut metrics.flow_log);
    report.phases = std::mem::take(&mut metrics.phases);
    report.phase_latency_v2 = metrics
        .phase_latency_ns
        .iter()
        .map(histogram_wire::encode)
        .collect();
    report.fct_by_size_v2 = metrics
        .fct_by_size_ns
        .iter()
        .map(histogram_wire::encode)
        .collect();
    report.phase_fct_v2 = metrics
        .phase_fct_ns
        .iter()
        .map(histogram_wire::encode)
        .collect();
    report.latency_v2 = histogram_wire::encode(&metrics.latency_ns);
    report.fct_v2 = histogram_wire::encode(&metrics.fct_ns);
    report
}

/// All ranks' reports merged on rank 0.
#[derive(Default)]
struct Merged {
    metrics: Metrics,
    stages: Vec<StageStats>,
    data_held: u64,
    acks_held: u64,
    adverts_held: u64,
    pulls_held: u64,
    incomplete: u64,
    /// The largest rank's peak RSS, in bytes.
    peak_rss_bytes: u64,
    resumed_events: u64,
    /// Rank 0's loop statistics, with the walls the slowest rank's and the messages summed.
    loop_stats: LoopStats,
    rank_loop_stats: Vec<LoopStats>,
    rank_events: Vec<u64>,
    node_events: Vec<u64>,
}

/// Decodes and merges the ranks' reports `all` (by rank), sorting the merged logs.
fn merge_reports(m: &Model, all: &[Vec<u8>]) -> Result<Merged> {
    let mut out = Merged {
        stages: vec![StageStats::default(); m.fabric.stage_names().len()],
        rank_loop_stats: Vec::with_capacity(all.len()),
        rank_events: Vec::with_capacity(all.len()),
        node_events: vec![0u64; m.fabric.num_nodes() as usize],
        ..Merged::default()
    };
    let merged = &mut out.metrics;
    for (rank, b) in all.iter().enumerate() {
        let (r, _): (RankReport, usize) =
            bincode::serde::decode_from_slice(b, bincode::config::standard())?;
        merged.counters.merge(&r.counters);
        merged
            .latency_ns
            .add(histogram_wire::decode(&r.latency_v2))
            .expect("histograms share bounds");
        merged
            .fct_ns
            .add(histogram_wire::decode(&r.fct_v2))
            .expect("histograms share bounds");
        merged.merge_series(r.series.as_ref(), &r.cwnd);
        merged.merge_flow_events(&r.flow_events);
        merged.merge_flow_log(&r.flow_log);
        phases::merge(&mut merged.phases, &r.phases);
        let phase_latency: Vec<_> = r
            .phase_latency_v2
            .iter()
            .map(|b| histogram_wire::decode(b))
            .collect();
        merged.merge_phase_latency(&phase_latency);
        let by_size: Vec<_> = r
            .fct_by_size_v2
            .iter()
            .map(|b| histogram_wire::decode(b))
            .collect();
        crate::metrics::merge_indexed(&mut merged.fct_by_size_ns, &by_size);
        let phase_fct: Vec<_> = r
            .phase_fct_v2
            .iter()
            .map(|b| histogram_wire::decode(b))
            .collect();
        crate::metrics::merge_indexed(&mut merged.phase_fct_ns, &phase_fct);
        for (acc, st) in out.stages.iter_mut().zip(&r.stages) {
            acc.merge(st);
        }
        for &(n, e) in &r.node_events {
            out.node_events[n as usize] += e;
        }
        out.rank_events
            .push(r.node_events.iter().map(|&(_, e)| e).sum::<u64>());
        out.data_held += r.data_held;
        out.acks_held += r.acks_held;
        out.adverts_held += r.adverts_held;
        out.pulls_held += r.pulls_held;
        out.resumed_events += r.resumed_events;
        out.incomplete += r.incomplete;
        out.peak_rss_bytes = out.peak_rss_bytes.max(r.peak_rss_bytes);
        let l = &r.loop_stats;
        out.rank_loop_stats.push(*l);
        let loop_stats = &mut out.loop_stats;
        if rank == 0 {
            *loop_stats = *l;
        }
        loop_stats.process_wall_s = loop_stats.process_wall_s.max(l.process_wall_s);
        loop_stats.sync_wall_s = loop_stats.sync_wall_s.max(l.sync_wall_s);
        if rank > 0 {
            loop_stats.messages += l.messages;
            loop_stats.remote_messages += l.remote_messages;
            loop_stats.remote_bytes += l.remote_bytes;
        }
    }
    out.metrics.sort_logs();
    Ok(out)
}

/// The conservation laws a finished run must keep, over all ranks: packets, pulls, adverts,
/// and (once every flow has completed) payload bytes.
fn check_conservation(m: &Model, merged: &Merged) -> Result<()> {
    let c = &merged.metrics.counters;
    let (data_held, acks_held) = (merged.data_held, merged.acks_held);
    // Packet conservation: every data packet sent was delivered whole, delivered as a
    // trimmed header, returned to its sender (as a NACK, counted with the ACKs), dropped,
    // or is still held; every ACK or NACK delivered, dropped or
    // held.
    // RotorLB frames also end at an intermediate host (relayed: its second leg is a new
    // send) or back at their sender (refused by the intermediate, or bounced by a ToR).
    let rlb_ended = c.rlb_relayed + c.rlb_rejected + c.rlb_bounced;
    let data_accounted = c.data_delivered
        + c.headers_delivered
        + c.headers_returned
        + c.data_dropped
        + data_held
        + rlb_ended;
    if c.data_sent != data_accounted || c.acks_sent != c.acks_delivered + c.acks_dropped + acks_held
    {
        bail!(
            "packet conservation violated: data sent {} != delivered {} + trimmed headers delivered {} + returned {} + dropped {} + held {} + RotorLB relayed/refused/bounced {}; acks sent {} != delivered {} + dropped {} + held {}",
            c.data_sent, c.data_delivered, c.headers_delivered, c.headers_returned, c.data_dropped, data_held, rlb_ended, c.acks_sent, c.acks_delivered, c.acks_dropped, acks_held
        );
    }
    // NDP pulls (counted with the control packets above) on their own: delivered, dropped
    // or held.
    if c.pulls_sent != c.pulls_delivered + c.pulls_dropped + merged.pulls_held {
        bail!(
            "pull conservation violated: sent {} != delivered {} + dropped {} + held {}",
            c.pulls_sent,
            c.pulls_delivered,
            c.pulls_dropped,
            merged.pulls_held
        );
    }
    // LB adverts (switch to switch, never dropped: they bypass admission) are consumed at
    // the other end of their link or still held.
    if c.adverts_sent != c.adverts_delivered + merged.adverts_held {
        bail!(
            "advert conservation violated: sent {} != delivered {} + held {}",
            c.adverts_sent,
            c.adverts_delivered,
            merged.adverts_held
        );
    }
    // Byte conservation: once every flow has completed, receivers got every payload byte
    // of the workload exactly once (duplicates are counted apart).
    let workload_bytes: u64 = (0..m.fabric.num_hosts)
        .map(|h| m.workload.bytes_of(h))
        .sum();
    if merged.incomplete == 0 && c.payload_bytes_delivered != workload_bytes {
        bail!(
            "byte conservation violated: receivers got {} distinct payload bytes of a {}-byte workload",
            c.payload_bytes_delivered,
            workload_bytes
        );
    }
    Ok(())
}

/// Result assembly on rank 0: the merged measurements with the model's facts, the
/// workload's lower bounds, the plan and the run's wall times (up to now, from `start`).
fn run_output(
    s: &Scenario,
    comm: &dyn Comm,
    run: &Run,
    merged: Merged,
    end_ps: u64,
    ending: Ending,
    start: Instant,
) -> RunOutput {
    let (m, plan) = (&run.m, &run.plan);
    let bound_inputs = BoundInputs {
        fabric: &m.fabric,
        workload: &m.workload,
        payload_bytes: m.payload_bytes as u64,
        header_bytes: m.header_bytes as u64,
        ack_bytes: m.ack_bytes as u64,
        gap_bytes: m.interframe_bytes as u64,
        forwarding_ps: m.forwarding_ps,
    };
    RunOutput {
        cct_lower_bound_ps: lower_bound_ps(s, &bound_inputs),
        phase_names: m.workload.phase_names().to_vec(),
        fct_bins_bytes: m.fct_bins_bytes.clone(),
        nvlink_bytes: m.workload.nvlink_bytes(),
        opera: m.fabric.opera().map(|o| o.facts()),
        payload_bytes: m.payload_bytes,
        header_bytes: m.header_bytes,
        node_events: merged.node_events,
        phase_lower_bounds_ps: phase_lower_bounds_ps(&bound_inputs),
        metrics: merged.metrics,
        stages: merged.stages,
        stage_names: m.fabric.stage_names(),
        switch_tier_names: m.fabric.switch_tier_names(),
        flows_total: m.workload.total_flows(m.fabric.num_hosts),
        flows_incomplete: merged.incomplete,
        data_in_flight: merged.data_held,
        acks_in_flight: merged.acks_held,
        end_ps,
        ending,
        hosts: m.fabric.num_hosts,
        failed_links: m.fabric.failed_links().len(),
        rho_max: m.rho_max.map(|r| r.rho_max),
        switches: m.fabric.num_switches(),
        loop_stats: merged.loop_stats,
        rank_loop_stats: merged.rank_loop_stats,
        rank_events: merged.rank_events,
        wall_s: start.elapsed().as_secs_f64(),
        setup_wall_s: run.setup_wall_s,
        threads: run.opts.threads,
        ranks: comm.ranks(),
        partitions: plan.parts,
        lookahead_ps: plan.lookahead_ps,
        cut_links: plan.cut_links,
        peak_rss_bytes: merged.peak_rss_bytes,
        resumed_at_ps: run.resumed_at_ps,
        resumed_events: merged.resumed_events,
    }
}

/// This rank's partitions, built from the model (in parallel on the pool).
fn build_partitions(
    m: &Model,
    plan: &Plan,
    comm: &dyn Comm,
    pool: Option<&rayon::ThreadPool>,
) -> Vec<(Partition, Outbox)> {
    let mine = plan.parts_of_rank(comm.rank());
    let members = plan.members();
    let build = |&i: &u32| Partition::new(m, plan, i, &members[i as usize]);
    match pool {
        Some(pool) => pool.install(|| {
            use rayon::prelude::*;
            mine.par_iter().map(build).collect()
        }),
        None => mine.iter().map(build).collect(),
    }
}

/// Progress on stderr (rank 0): simulated time, events/s, and an estimate of the wall time
/// left from the fraction of the workload's payload delivered, at most once a second. Rates
/// count from the first sample (after the first window), so a resumed run's estimate uses
/// its own progress, not the events and bytes its checkpoint already held.
struct Progress {
    enabled: bool,
    /// Payload bytes of the whole workload.
    total_bytes: u64,
    start: Instant,
    last: Instant,
    /// The first sample: its time, events and payload delivered.
    base: Option<(Instant, u64, u64)>,
    printed: bool,
}

impl Progress {
    fn new(enabled: bool, total_bytes: u64) -> Progress {
        let now = Instant::now();
        Progress {
            enabled,
            total_bytes,
            start: now,
            last: now,
            base: None,
            printed: false,
        }
    }
    fn tick(&mut self, p: ProgressSample) {
        if !self.enabled {
            return;
        }
        let (t0, events0, bytes0) =
            *self
                .base
                .get_or_insert((Instant::now(), p.events, p.payload_bytes_delivered));
        if self.last.elapsed().as_secs_f64() < 1.0 {
            return;
        }
        self.last = Instant::now();
        let elapsed = self.start.elapsed().as_secs_f64();
        let since = t0.elapsed().as_secs_f64().max(1e-9);
        // Work done: distinct payload delivered (retransmissions and coalesced ACKs do not
        // distort it).
        let total = self.total_bytes.max(1) as f64;
        let done = p.payload_bytes_delivered as f64 / total;
        let rate = p.payload_bytes_delivered.saturating_sub(bytes0) as f64 / total / since;
        let left = if rate > 0.0 {
            format!("~{} left", human_s((1.0 - done) / rate))
        } else {
            "? s left".into()
        };
        eprint!(
            "\r[weft] sim {:.3} us | {:.2} M events/s | {:.1} % done | {:.0} s elapsed, {left}   ",
            p.sim_ps as f64 / 1e6,
            p.events.saturating_sub(events0) as f64 / since / 1e6,
            done * 100.0,
            elapsed
        );
        self.printed = true;
    }
    fn finish(&mut self) {
        if self.printed {
            eprintln!();
        }
    }
}

/// A wall time for the progress line: seconds, minutes, hours or days.
fn human_s(s: f64) -> String {
    match s {
        s if s < 120.0 => format!("{s:.0} s"),
        s if s < 7200.0 => format!("{:.0} min", s / 60.0),
        s if s < 172_800.0 => format!("{:.1} h", s / 3600.0),
        s => format!("{:.1} days", s / 86_400.0),
    }
}
