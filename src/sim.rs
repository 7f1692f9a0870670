//! One simulation run: scenario → model → partition plan → engine → merged metrics.

use crate::engine::partition::Partition;
use crate::engine::plan::Plan;
use crate::engine::{self, LoopStats};
use crate::metrics::bound::{naive_lower_bound_ps, permutation_lower_bound_ps, BoundParams};
use crate::metrics::{Metrics, StageStats};
use crate::model::Model;
use crate::scenario::{Scenario, WorkloadKind};
use anyhow::{bail, Result};
use std::io::IsTerminal;
use std::time::Instant;

#[derive(Clone, Debug)]
pub struct RunOptions {
    pub threads: usize,
    /// None: automatic (1 for one thread, else min(2 × threads, the most the fabric allows)).
    pub partitions: Option<u32>,
    /// Print progress on stderr at most once a second.
    pub progress: bool,
}

impl Default for RunOptions {
    fn default() -> Self {
        RunOptions {
            threads: 1,
            partitions: None,
            progress: false,
        }
    }
}

/// Everything a run determined, before it is formatted.
pub struct RunOutput {
    pub metrics: Metrics,
    pub stages: Vec<StageStats>,
    pub stage_names: &'static [&'static str],
    pub flows_total: u64,
    pub flows_incomplete: u64,
    pub data_in_flight: u64,
    pub acks_in_flight: u64,
    pub cct_lower_bound_ps: u64,
    /// End of the statistics window (the last event), in ps.
    pub end_ps: u64,
    pub hosts: u32,
    pub switches: u32,
    pub loop_stats: LoopStats,
    pub wall_s: f64,
    pub threads: usize,
    pub partitions: u32,
    pub lookahead_ps: u64,
    pub cut_links: u64,
}

impl RunOutput {
    /// CCT (first data packet sent → last ACK), if every flow completed.
    pub fn cct_ps(&self) -> Option<u64> {
        let c = &self.metrics.counters;
        (self.flows_incomplete == 0 && self.flows_total > 0)
            .then(|| c.last_ack_ps - c.first_send_ps)
    }
}

pub fn default_partitions(m: &Model, threads: usize) -> u32 {
    if threads <= 1 {
        1
    } else {
        (2 * threads as u32).min(Plan::max_parts(m))
    }
}

pub fn simulate(s: &Scenario, opts: &RunOptions) -> Result<RunOutput> {
    if opts.threads == 0 {
        bail!("--threads: must be at least 1");
    }
    let start = Instant::now();
    let m = Model::build(s)?;
    let parts = opts
        .partitions
        .unwrap_or_else(|| default_partitions(&m, opts.threads));
    let plan = Plan::automatic(&m, parts)?;
    let pool = if opts.threads > 1 {
        Some(
            rayon::ThreadPoolBuilder::new()
                .num_threads(opts.threads)
                .build()?,
        )
    } else {
        None
    };
    let mut partitions: Vec<Partition> = match &pool {
        Some(pool) => pool.install(|| {
            use rayon::prelude::*;
            (0..plan.parts)
                .into_par_iter()
                .map(|i| Partition::new(&m, &plan, i))
                .collect()
        }),
        None => (0..plan.parts)
            .map(|i| Partition::new(&m, &plan, i))
            .collect(),
    };

    let mut progress = Progress::new(opts.progress || std::io::stderr().is_terminal());
    let loop_stats = engine::run(&mut partitions, &m, &plan, pool.as_ref(), |t, parts| {
        progress.tick(t, parts)
    });
    progress.finish();

    let mut metrics = Metrics::default();
    for p in &partitions {
        metrics.merge(&p.metrics);
    }
    let end_ps = metrics.counters.last_event_ps;
    let mut stages = vec![StageStats::default(); m.fabric.stage_names().len()];
    let (mut data_held, mut acks_held, mut incomplete) = (0, 0, 0);
    for p in &mut partitions {
        for (acc, s) in stages.iter_mut().zip(p.stage_stats(&m, end_ps)) {
            acc.merge(&s);
        }
        let (d, a) = p.packets_held();
        data_held += d;
        acks_held += a;
        incomplete += p.incomplete_flows();
    }
    let c = &metrics.counters;
    // Packet conservation: every packet sent was delivered, dropped, or is still held.
    if c.data_sent != c.data_delivered + c.data_dropped + data_held
        || c.acks_sent != c.acks_delivered + c.acks_dropped + acks_held
    {
        bail!(
            "packet conservation violated: data sent {} != delivered {} + dropped {} + held {}; acks sent {} != delivered {} + dropped {} + held {}",
            c.data_sent, c.data_delivered, c.data_dropped, data_held, c.acks_sent, c.acks_delivered, c.acks_dropped, acks_held
        );
    }
    Ok(RunOutput {
        cct_lower_bound_ps: lower_bound_ps(&m, s),
        metrics,
        stages,
        stage_names: m.fabric.stage_names(),
        flows_total: m.workload.flows().len() as u64,
        flows_incomplete: incomplete,
        data_in_flight: data_held,
        acks_in_flight: acks_held,
        end_ps,
        hosts: m.fabric.num_hosts,
        switches: m.fabric.num_switches(),
        loop_stats,
        wall_s: start.elapsed().as_secs_f64(),
        threads: opts.threads,
        partitions: plan.parts,
        lookahead_ps: plan.lookahead_ps,
        cut_links: plan.cut_links,
    })
}

/// The workload's CCT lower bound: SEEDS.md appendix-A model for permutations (the max over
/// flows, each with its own hop count), the naive bound otherwise.
fn lower_bound_ps(m: &Model, s: &Scenario) -> u64 {
    let f = &m.fabric;
    let host_link = f.link(0, 0);
    let ser = |b: u64| host_link.serialization_ps(b);
    let path_latency = |src: u32, dst: u32| {
        // Up/down shortest path: walk it taking the first uplink at each choice.
        let (mut n, mut lat) = (
            f.peer(src, 0).0,
            f.link(src, 0).latency_ps + m.forwarding_ps,
        );
        while n != dst {
            let p = match f.route(n, dst) {
                crate::topology::Route::Port(p) => p,
                crate::topology::Route::Up { first, .. } => first,
            };
            lat += f.link(n, p).latency_ps;
            n = f.peer(n, p).0;
            if !f.is_host(n) {
                lat += m.forwarding_ps;
            }
        }
        lat
    };
    let flows = m.workload.flows();
    match s.workload.kind {
        WorkloadKind::Permutation => flows
            .iter()
            .map(|fl| {
                let p = BoundParams {
                    td: ser((s.packet.payload_bytes + s.packet.header_bytes) as u64),
                    ta: ser(s.packet.ack_bytes as u64),
                    tg: ser(s.packet.interframe_bytes as u64),
                    tp: path_latency(fl.src, fl.dst),
                    hops: f.hops(fl.src, fl.dst) as u64,
                };
                permutation_lower_bound_ps(m.packets_for(fl.bytes), &p)
            })
            .max()
            .unwrap_or(0),
        _ => {
            let mut tx = vec![0u64; f.num_hosts as usize];
            let mut rx = vec![0u64; f.num_hosts as usize];
            let mut prop = u64::MAX;
            for fl in flows {
                let pk = m.packets_for(fl.bytes);
                let wire =
                    fl.bytes + pk * (s.packet.header_bytes + s.packet.interframe_bytes) as u64;
                tx[fl.src as usize] += wire;
                rx[fl.dst as usize] += wire;
                prop = prop.min(path_latency(fl.src, fl.dst));
            }
            let busiest = tx.iter().chain(rx.iter()).max().copied().unwrap_or(0);
            if flows.is_empty() {
                0
            } else {
                naive_lower_bound_ps(ser(busiest), prop)
            }
        }
    }
}

/// Progress on stderr: simulated time, events/s, and an estimate of what remains (from the
/// fraction of flows completed), at most once a second.
struct Progress {
    enabled: bool,
    start: Instant,
    last: Instant,
    printed: bool,
}

impl Progress {
    fn new(enabled: bool) -> Progress {
        let now = Instant::now();
        Progress {
            enabled,
            start: now,
            last: now,
            printed: false,
        }
    }
    fn tick(&mut self, t_ps: u64, parts: &[Partition]) {
        if !self.enabled || self.last.elapsed().as_secs_f64() < 1.0 {
            return;
        }
        self.last = Instant::now();
        let events: u64 = parts.iter().map(|p| p.metrics.counters.events).sum();
        let done: u64 = parts
            .iter()
            .map(|p| p.metrics.counters.flows_completed)
            .sum();
        let elapsed = self.start.elapsed().as_secs_f64();
        eprint!(
            "\r[weft] sim {:.3} us | {:.2} M events/s | {} flows done | {:.0} s elapsed   ",
            t_ps as f64 / 1e6,
            events as f64 / elapsed / 1e6,
            done,
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
