//! The conservative, windowed parallel engine (DESIGN.md "Parallel engine").
//!
//! Each window starts at `t` = the earliest pending event of any partition and covers
//! `[t, t + lookahead)`. An event a partition sends across the cut is at least one lookahead
//! after the event that caused it, so it falls at or after the window's end: every partition
//! can process its window independently (in parallel with rayon), and the outboxes are
//! exchanged only when all have finished. Idle gaps are skipped because `t` jumps.

pub mod event;
pub mod partition;
pub mod plan;

use crate::model::Model;
use partition::Partition;
use plan::Plan;
use rayon::prelude::*;
use std::time::Instant;

#[derive(Clone, Copy, Debug, Default)]
pub struct LoopStats {
    pub windows: u64,
    /// Wall time spent processing events (the parallel phase), in s.
    pub process_wall_s: f64,
    /// Wall time spent finding the next window and exchanging messages, in s.
    pub sync_wall_s: f64,
    /// Events that crossed partitions.
    pub messages: u64,
}

/// Runs windows until no partition has an event left. `on_window(t_ps, parts)` is called after
/// every window (for progress reports).
pub fn run(
    parts: &mut [Partition],
    m: &Model,
    plan: &Plan,
    pool: Option<&rayon::ThreadPool>,
    mut on_window: impl FnMut(u64, &[Partition]),
) -> LoopStats {
    let mut stats = LoopStats::default();
    loop {
        let sync_start = Instant::now();
        let t = parts
            .iter()
            .map(Partition::next_time_ps)
            .min()
            .unwrap_or(crate::time::NEVER_PS);
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
        stats.messages += exchange(parts);
        stats.windows += 1;
        stats.sync_wall_s += exchange_start.elapsed().as_secs_f64();
        on_window(end, parts);
    }
    stats
}

/// Moves every outbox's events into the destination partition's queue, keeping the outbox
/// buffers' capacity for the next window. Returns the number of events moved.
fn exchange(parts: &mut [Partition]) -> u64 {
    let mut moved = 0;
    for src in 0..parts.len() {
        for dst in 0..parts.len() {
            if src == dst || parts[src].outbox[dst].is_empty() {
                continue;
            }
            let mut batch = std::mem::take(&mut parts[src].outbox[dst]);
            moved += batch.len() as u64;
            for ev in batch.drain(..) {
                debug_assert!(ev.time_ps >= parts[dst].next_time_ps().min(ev.time_ps));
                parts[dst].queue.push(ev);
            }
            parts[src].outbox[dst] = batch;
        }
    }
    moved
}
