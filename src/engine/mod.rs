//! The conservative, windowed parallel engine (DESIGN.md "Parallel engine").
//!
//! Each window starts at `t` = the earliest pending event of any partition on any rank
//! (an allreduce) and covers `[t, t + lookahead)`. An event a partition sends across the cut
//! is at least one lookahead after the event that caused it, so it falls at or after the
//! window's end: every partition processes its window independently (the partitions of a
//! rank in parallel with rayon), and outboxes are exchanged only when all have finished —
//! moved between partitions of one rank, and batched per destination rank (bincode) in one
//! all-to-all between ranks. Idle gaps are skipped because `t` jumps to the next event.

pub mod comm;
pub mod event;
#[cfg(feature = "mpi")]
pub mod mpi_comm;
pub mod partition;
pub mod plan;
pub mod plan_file;

use crate::model::Model;
use comm::Comm;
use event::Event;
use partition::Partition;
use plan::Plan;
use rayon::prelude::*;
use serde::{Deserialize, Serialize};
use std::time::Instant;

/// How the window loop went (how it ran, not what it computed).
#[derive(Clone, Copy, Debug, Default, Serialize, Deserialize)]
pub struct LoopStats {
    pub windows: u64,
    /// Wall time spent processing events (the parallel phase), in s.
    pub process_wall_s: f64,
    /// Wall time spent agreeing on the next window and exchanging events, in s.
    pub sync_wall_s: f64,
    /// Events that crossed partitions (within and between ranks).
    pub messages: u64,
    /// Events and bytes this rank sent to other ranks.
    pub remote_messages: u64,
    pub remote_bytes: u64,
}

/// Global progress, offered after every window when progress is on (one extra small
/// allreduce per window; windows hold many events, about 1.4 M each on a k = 32 permutation).
pub struct ProgressSample {
    pub sim_ps: u64,
    pub events: u64,
    pub data_sent: u64,
    pub acks_delivered: u64,
}

fn bincode_config() -> bincode::config::Configuration {
    bincode::config::standard()
}

/// Runs windows until no partition on any rank has an event left. `parts` are this rank's
/// partitions in increasing id order.
pub fn run(
    parts: &mut [Partition],
    m: &Model,
    plan: &Plan,
    comm: &dyn Comm,
    pool: Option<&rayon::ThreadPool>,
    progress: bool,
    mut on_progress: impl FnMut(ProgressSample),
) -> LoopStats {
    let mut local_index = vec![usize::MAX; plan.parts as usize];
    for (i, p) in parts.iter().enumerate() {
        assert_eq!(
            plan.part_rank[p.id as usize],
            comm.rank(),
            "partition {} is not this rank's",
            p.id
        );
        local_index[p.id as usize] = i;
    }
    let ranks = comm.ranks() as usize;
    let mut to_rank: Vec<Vec<Event>> = vec![Vec::new(); ranks];
    let mut stats = LoopStats::default();
    loop {
        let sync_start = Instant::now();
        let local_min = parts
            .iter()
            .map(Partition::next_time_ps)
            .min()
            .unwrap_or(crate::time::NEVER_PS);
        let t = comm.min_u64(local_min);
        if t == crate::time::NEVER_PS {
            stats.sync_wall_s += sync_start.elapsed().as_secs_f64();
            break;
        }
        let end = t.saturating_add(plan.lookahead_ps);
        let work_start = Instant::now();
        stats.sync_wall_s += (work_start - sync_start).as_secs_f64();
        match pool {
            Some(pool) if parts.len() > 1 => pool.install(|| {
                parts
                    .par_iter_mut()
                    .for_each(|p| p.run_window(m, plan, end))
            }),
            _ => parts.iter_mut().for_each(|p| p.run_window(m, plan, end)),
        }
        let exchange_start = Instant::now();
        stats.process_wall_s += (exchange_start - work_start).as_secs_f64();
        stats.messages += exchange_local(parts, &local_index, plan, &mut to_rank, pool);
        if ranks > 1 {
            exchange_remote(
                parts,
                &local_index,
                plan,
                comm,
                &mut to_rank,
                &mut stats,
                pool,
            );
        }
        stats.windows += 1;
        if progress {
            let c = |f: fn(&crate::metrics::Counters) -> u64| {
                parts.iter().map(|p| f(&p.metrics.counters)).sum::<u64>()
            };
            let g = comm.sum_u64(&[c(|c| c.events), c(|c| c.data_sent), c(|c| c.acks_delivered)]);
            on_progress(ProgressSample {
                sim_ps: end,
                events: g[0],
                data_sent: g[1],
                acks_delivered: g[2],
            });
        }
        stats.sync_wall_s += exchange_start.elapsed().as_secs_f64();
    }
    stats
}

/// Moves outbox events to partitions of this rank (inserting in parallel, one destination
/// partition per task); events for other ranks go to `to_rank`. Returns the events moved.
fn exchange_local(
    parts: &mut [Partition],
    local_index: &[usize],
    plan: &Plan,
    to_rank: &mut [Vec<Event>],
    pool: Option<&rayon::ThreadPool>,
) -> u64 {
    let mut moved = 0;
    let mut incoming: Vec<Vec<Vec<Event>>> = (0..parts.len()).map(|_| Vec::new()).collect();
    for src in parts.iter_mut() {
        for (dst, out) in src.outbox.iter_mut().enumerate() {
            if out.is_empty() {
                continue;
            }
            moved += out.len() as u64;
            match local_index[dst] {
                usize::MAX => to_rank[plan.part_rank[dst] as usize].append(out),
                d => incoming[d].push(std::mem::take(out)),
            }
        }
    }
    let insert = |(p, batches): (&mut Partition, &mut Vec<Vec<Event>>)| {
        for batch in batches.drain(..) {
            batch.into_iter().for_each(|ev| p.queue.push(ev));
        }
    };
    match pool {
        Some(pool) if parts.len() > 1 => pool.install(|| {
            parts
                .par_iter_mut()
                .zip(incoming.par_iter_mut())
                .for_each(insert)
        }),
        _ => parts.iter_mut().zip(incoming.iter_mut()).for_each(insert),
    }
    moved
}

/// Sends `to_rank`'s batches to their ranks (bincode, one all-to-all) and inserts what
/// arrives into this rank's partitions. Encoding, decoding and insertion run in parallel
/// (per destination rank, per source rank, per partition); only the all-to-all is serial.
fn exchange_remote(
    parts: &mut [Partition],
    local_index: &[usize],
    plan: &Plan,
    comm: &dyn Comm,
    to_rank: &mut [Vec<Event>],
    stats: &mut LoopStats,
    pool: Option<&rayon::ThreadPool>,
) {
    let pool = pool.expect("a multi-rank run has a thread pool (of one thread with --threads 1)");
    stats.remote_messages += to_rank.iter().map(|evs| evs.len() as u64).sum::<u64>();
    let mut send: Vec<Vec<u8>> = Vec::new();
    pool.install(|| {
        send = to_rank
            .par_iter_mut()
            .map(|evs| {
                let bytes = if evs.is_empty() {
                    Vec::new()
                } else {
                    bincode::serde::encode_to_vec(&*evs, bincode_config()).expect("events encode")
                };
                evs.clear();
                bytes
            })
            .collect();
    });
    stats.remote_bytes += send.iter().map(|b| b.len() as u64).sum::<u64>();
    let received = comm.all_to_all_bytes(&send);
    let mut incoming: Vec<Vec<Event>> = (0..parts.len()).map(|_| Vec::new()).collect();
    pool.install(|| {
        let decoded: Vec<Vec<Event>> = received
            .par_iter()
            .filter(|b| !b.is_empty())
            .map(|bytes| {
                bincode::serde::decode_from_slice::<Vec<Event>, _>(bytes, bincode_config())
                    .expect("events from a rank of the same build decode")
                    .0
            })
            .collect();
        for ev in decoded.into_iter().flatten() {
            let p = plan.node_part[ev.node() as usize] as usize;
            let l = local_index[p];
            assert!(
                l != usize::MAX,
                "received an event for partition {p}, which is not on this rank"
            );
            incoming[l].push(ev);
        }
        parts
            .par_iter_mut()
            .zip(incoming.par_iter_mut())
            .for_each(|(p, evs)| {
                evs.drain(..).for_each(|ev| p.queue.push(ev));
            });
    });
}
