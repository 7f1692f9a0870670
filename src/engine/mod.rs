//! The conservative, windowed parallel engine.
//!
//! Each window starts at `t` = the earliest pending event of any partition on any rank and
//! covers `[t, t + lookahead)`. An event a partition sends across the cut travels a cut link,
//! so it is at least one lookahead after the event that caused it and falls at or after the
//! window's end: every partition processes its window independently (the partitions of a rank
//! in parallel with rayon), and outboxes are exchanged only when all have finished (see
//! [`exchange`]). Idle gaps are skipped because `t` jumps to the next event.
//!
//! The run ends when every flow has completed (agreed across ranks in the same allreduce that
//! finds `t`), or when no event is left anywhere (flows that lost packets under a transport
//! without loss recovery), or at a requested stop time (checkpoints).

pub mod comm;
mod exchange;
#[cfg(feature = "mpi")]
pub mod mpi_comm;
pub mod partition;
pub mod plan;
pub mod plan_file;
pub mod queue;
pub mod weights;
mod wire;

use crate::model::Model;
use crate::time::NEVER_PS;
use comm::Comm;
use crossbeam::utils::CachePadded;
use partition::{Outbox, Partition};
use plan::Plan;
use rayon::prelude::*;
use serde::{Deserialize, Serialize};
use std::time::Instant;

/// How the window loop went (how it ran, not what it computed).
#[derive(Clone, Copy, Debug, Default, Serialize, Deserialize)]
pub struct LoopStats {
    /// Synchronization windows run.
    pub windows: u64,
    /// Wall time spent processing events (the parallel phase), in s.
    pub process_wall_s: f64,
    /// Wall time spent agreeing on the next window and exchanging events, in s: the sum of
    /// the three below and the local insertion of received events.
    pub sync_wall_s: f64,
    /// Of which: the per-window allreduce (waiting for the slowest rank included).
    pub reduce_wall_s: f64,
    /// Encoding and decoding events sent to and received from other ranks.
    pub encode_wall_s: f64,
    /// Sending to and receiving from neighbour ranks (waiting for them included).
    pub exchange_wall_s: f64,
    /// Events that crossed partitions (within and between ranks).
    pub messages: u64,
    /// Events this rank sent to other ranks.
    pub remote_messages: u64,
    /// Bytes of the events this rank sent to other ranks, encoded.
    pub remote_bytes: u64,
}

/// Global progress at the end of a window, offered when the next window's allreduce has
/// summed it (progress on: no extra collective).
pub struct ProgressSample {
    /// Simulated time reached, in ps.
    pub sim_ps: u64,
    /// Events processed so far, all ranks together.
    pub events: u64,
    /// Distinct payload bytes delivered so far.
    pub payload_bytes_delivered: u64,
}

/// Why the window loop returned.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Ending {
    /// Every flow completed.
    WorkloadDone,
    /// No event is left anywhere.
    Idle,
    /// The next event is at or after the requested stop time.
    Stopped,
    /// A rank asked to pause (a wall-time checkpoint or a signal: see `run_until`).
    Interrupted,
}

/// This rank's partitions (in increasing id order), their outboxes, and how to run them.
///
/// Partitions are cache-padded: threads update their counters and queue heads at every
/// event, and two partitions processed by different threads must not share a cache line.
pub struct Engine<'a> {
    /// This rank's partitions, in increasing id order.
    pub parts: Vec<CachePadded<Partition>>,
    /// Each partition's outbox (events for other partitions), indexed like `parts`.
    pub outboxes: Vec<Outbox>,
    /// The model the partitions simulate.
    pub m: &'a Model,
    /// The partition plan (which node each partition owns, the cut links, the lookahead).
    pub plan: &'a Plan,
    /// The exchange with the other ranks.
    pub comm: &'a dyn Comm,
    /// Threads that process partitions in parallel; `None`: this thread alone.
    pub pool: Option<&'a rayon::ThreadPool>,
    /// How the loop has gone so far.
    pub stats: LoopStats,
    /// The start of the next window as last agreed by the ranks (every event before it has
    /// been processed, none at or after it): where a stopped run stands, the time of its
    /// checkpoint. `NEVER_PS` once nothing is left.
    pub boundary_ps: u64,
    /// Index in `parts` of each partition of the plan (`usize::MAX`: another rank's).
    local_index: Vec<usize>,
    /// The other ranks whose partitions share cut links with this rank's, ascending: the
    /// only ranks it exchanges events with.
    neighbor_ranks: Vec<u32>,
}

impl<'a> Engine<'a> {
    /// An engine over this rank's partitions `parts` (with their outboxes) of `plan`.
    pub fn new(
        parts: Vec<(Partition, Outbox)>,
        m: &'a Model,
        plan: &'a Plan,
        comm: &'a dyn Comm,
        pool: Option<&'a rayon::ThreadPool>,
    ) -> Engine<'a> {
        let mut local_index = vec![usize::MAX; plan.parts as usize];
        for (i, (p, _)) in parts.iter().enumerate() {
            assert_eq!(
                plan.part_rank[p.id as usize],
                comm.rank(),
                "partition {} is not this rank's",
                p.id
            );
            local_index[p.id as usize] = i;
        }
        let neighbor_ranks = neighbor_ranks(plan, comm.rank());
        let (parts, outboxes) = parts
            .into_iter()
            .map(|(p, o)| (CachePadded::new(p), o))
            .unzip();
        Engine {
            parts,
            outboxes,
            m,
            plan,
            comm,
            pool,
            stats: LoopStats::default(),
            boundary_ps: 0,
            local_index,
            neighbor_ranks,
        }
    }

    /// Runs windows until the workload is done, nothing is left, or the next window would
    /// start at or after `stop_ps`. Stopping never shortens a window: a stopped run has
    /// processed exactly the windows an uninterrupted run processes before its first window
    /// boundary at or after `stop_ps`, so resuming it continues the same window sequence.
    pub fn run(
        &mut self,
        stop_ps: u64,
        on_progress: Option<&mut dyn FnMut(ProgressSample)>,
    ) -> Ending {
        self.run_until(stop_ps, on_progress, &|| false)
    }

    /// [`Engine::run`], and also returns [`Ending::Interrupted`] at the first window boundary
    /// where `pause` is true on any rank: the request travels in the allreduce that finds the
    /// next window, so every rank stops at the same boundary (`pause` may differ by rank: a
    /// signal reaches one process, rank 0's clock decides wall-time checkpoints).
    pub fn run_until(
        &mut self,
        stop_ps: u64,
        mut on_progress: Option<&mut dyn FnMut(ProgressSample)>,
        pause: &dyn Fn() -> bool,
    ) -> Ending {
        let mut last_end_ps = None;
        loop {
            let sync_start = Instant::now();
            let local_min = self
                .parts
                .iter()
                .map(|p| p.next_time_ps())
                .min()
                .unwrap_or(NEVER_PS);
            let local_done = self.parts.iter().all(|p| p.workload_done()) as u64;
            // Progress counters ride in the same allreduce (every rank has the same
            // `on_progress.is_some()`: the run broadcasts the setting), so a window costs one
            // collective with progress on or off.
            let sums = match on_progress {
                Some(_) => self.local_progress_counters(),
                None => Vec::new(),
            };
            let reduce_start = Instant::now();
            let go_on = !pause() as u64;
            let (g, total) = self
                .comm
                .min_sum_u64s(&[local_min, local_done, go_on], &sums);
            let (t, done, paused) = (g[0], g[1] == 1, g[2] == 0);
            self.boundary_ps = t;
            self.stats.reduce_wall_s += reduce_start.elapsed().as_secs_f64();
            self.stats.sync_wall_s += sync_start.elapsed().as_secs_f64();
            if let (Some(f), Some(end_ps)) = (on_progress.as_mut(), last_end_ps) {
                f(ProgressSample {
                    sim_ps: end_ps,
                    events: total[0],
                    payload_bytes_delivered: total[1],
                });
            }
            let ending = if done {
                Some(Ending::WorkloadDone)
            } else if t == NEVER_PS {
                Some(Ending::Idle)
            } else if t >= stop_ps {
                Some(Ending::Stopped)
            } else if paused {
                Some(Ending::Interrupted)
            } else {
                None
            };
            if let Some(e) = ending {
                return e;
            }
            let end = t.saturating_add(self.plan.lookahead_ps);
            self.run_window(end);
            last_end_ps = Some(end);
        }
    }

    fn run_window(&mut self, end_ps: u64) {
        let work_start = Instant::now();
        let (m, plan) = (self.m, self.plan);
        let run =
            |(p, o): (&mut CachePadded<Partition>, &mut Outbox)| p.run_window(m, plan, end_ps, o);
        match self.pool {
            Some(pool) if self.parts.len() > 1 => pool.install(|| {
                self.parts
                    .par_iter_mut()
                    .zip(self.outboxes.par_iter_mut())
                    .for_each(run)
            }),
            _ => self
                .parts
                .iter_mut()
                .zip(self.outboxes.iter_mut())
                .for_each(run),
        }
        let exchange_start = Instant::now();
        self.stats.process_wall_s += (exchange_start - work_start).as_secs_f64();
        exchange::exchange(self);
        self.stats.windows += 1;
        self.stats.sync_wall_s += exchange_start.elapsed().as_secs_f64();
    }

    /// This rank's events and distinct payload bytes delivered so far.
    fn local_progress_counters(&self) -> Vec<u64> {
        let c = |f: fn(&crate::metrics::Counters) -> u64| {
            self.parts
                .iter()
                .map(|p| f(&p.metrics.counters))
                .sum::<u64>()
        };
        vec![c(|c| c.events), c(|c| c.payload_bytes_delivered)]
    }
}

/// The ranks other than `rank` that run a partition sharing a cut link with one of `rank`'s
/// (cut links come in both directions, so the relation is symmetric).
pub fn neighbor_ranks(plan: &Plan, rank: u32) -> Vec<u32> {
    let mut out = std::collections::BTreeSet::new();
    for p in 0..plan.parts {
        if plan.part_rank[p as usize] != rank {
            continue;
        }
        for &q in &plan.out_neighbors[p as usize] {
            out.insert(plan.part_rank[q as usize]);
        }
        for &(q, _) in &plan.in_neighbors[p as usize] {
            out.insert(plan.part_rank[q as usize]);
        }
    }
    out.remove(&rank);
    out.into_iter().collect()
}

#[cfg(test)]
mod tests {
    use super::comm::LocalComm;
    use super::partition::tests::Direct;
    use super::partition::Node;
    use super::*;
    use crate::lb::SwitchLb;
    use crate::scenario::Scenario;

    /// Ranks exchange only with ranks their partitions share cut links with: with every core
    /// switch on rank 0 and one pod per other rank (k = 4: pods reach each other only
    /// through the cores), ranks 1-3 talk to rank 0 only.
    #[test]
    fn ranks_exchange_with_their_neighbours_only() {
        let m = model();
        let f = &m.fabric;
        // Nodes: 16 hosts, then per pod 2 edge and 2 aggregation switches, then 4 cores.
        let node_part: Vec<u32> = (0..f.num_nodes())
            .map(|n| f.group_of(n, false).map_or(0, |pod| pod))
            .collect();
        assert_eq!(node_part.iter().filter(|&&p| p == 0).count(), 4 + 4 + 4);
        let plan = Plan::from_assignment(&m, node_part, vec![0, 1, 2, 3]).unwrap();
        assert_eq!(neighbor_ranks(&plan, 0), [1, 2, 3]);
        for r in 1..4 {
            assert_eq!(neighbor_ranks(&plan, r), [0], "rank {r}");
        }
        // The automatic plan spreads the cores: every pod meets every other rank.
        let auto = Plan::automatic(&m, 4, 4).unwrap();
        assert_eq!(neighbor_ranks(&auto, 2), [0, 1, 3]);
    }

    /// A k = 4 fat tree, a 30 KB permutation.
    fn model() -> Model {
        let mut s = Scenario::default();
        s.topology.k = 4;
        s.workload.message_bytes = 30_000;
        Model::build(&s).unwrap()
    }

    /// An engine whose every switch runs a probe policy with a timer every `period_ps`,
    /// forever.
    fn with_forever_timers<'a>(m: &'a Model, plan: &'a Plan, period_ps: u64) -> Engine<'a> {
        let members = plan.members();
        let mut built: Vec<_> = (0..plan.parts)
            .map(|i| Partition::new(m, plan, i, &members[i as usize]))
            .collect();
        for (p, _) in &mut built {
            for node in &mut p.nodes {
                if let Node::Switch(sw) = node {
                    sw.lb = SwitchLb::Probe(crate::lb::Probe {
                        period_ps,
                        limit: usize::MAX,
                        fired: vec![],
                    });
                    sw.start(&mut Direct(&mut p.queue));
                }
            }
        }
        Engine::new(built, m, plan, &LocalComm, None)
    }

    /// (events, last event time, windows) of a finished engine.
    fn ending(e: &Engine<'_>) -> (u64, Option<u64>, u64) {
        let events = e.parts.iter().map(|p| p.metrics.counters.events).sum();
        let last = e
            .parts
            .iter()
            .map(|p| p.metrics.counters.last_event_ps)
            .max();
        (events, last, e.stats.windows)
    }

    /// A timer that re-arms forever does not keep a run alive: it ends when every flow has
    /// completed, on one partition and on several, after the same events.
    #[test]
    fn runs_end_when_the_workload_is_done_even_with_periodic_timers() {
        let m = model();
        let mut ends = vec![];
        for parts in [1, 4] {
            let plan = Plan::automatic(&m, parts, 1).unwrap();
            let mut e = with_forever_timers(&m, &plan, 700_000);
            let why = e.run(NEVER_PS, None);
            assert_eq!(why, Ending::WorkloadDone, "{parts} partitions");
            let pending = e.parts.iter().any(|p| p.next_time_ps() != NEVER_PS);
            assert!(pending, "timers still pending");
            let (events, last, _) = ending(&e);
            ends.push((events, last));
        }
        // The events processed after the last flow completed (timers) are the same whatever
        // the partitioning: windows do not depend on the cut.
        assert_eq!(ends[0], ends[1]);
    }

    /// Stopping and resuming never changes the window sequence: with periodic timers firing
    /// after the workload is done, a run stopped anywhere ends exactly like one that was not.
    #[test]
    fn a_stopped_run_resumes_the_same_windows() {
        let m = model();
        let plan = Plan::automatic(&m, 3, 1).unwrap();
        let run = |stop_ps: u64| {
            let mut e = with_forever_timers(&m, &plan, 333_333);
            if e.run(stop_ps, None) == Ending::Stopped {
                assert_eq!(e.run(NEVER_PS, None), Ending::WorkloadDone);
            }
            ending(&e)
        };
        let whole = run(NEVER_PS);
        for stop_ps in [1_000, 777_777, 2_500_001] {
            assert_eq!(run(stop_ps), whole, "stopped at {stop_ps} ps");
        }
    }
}
