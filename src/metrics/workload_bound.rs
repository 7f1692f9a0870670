//! The CCT lower bound of a run's workload: the one place that turns the fabric, the packet
//! sizes and the workload into the formulas of [`super::bound`].
//!
//! - Every flow: [`bound::single_flow_bound_ps`] on its own path (per-hop rates and
//!   latencies, the flow's last packet size, its ACK's return path), shifted by its start
//!   time relative to the first start. No flow can beat it, whatever else runs.
//! - Permutations: per flow [`bound::permutation_bound_ps`] (the Ofan paper's appendix-A
//!   model, which also counts the ACKs a host sends for what it receives). A permutation is
//!   `workload.kind = "permutation"` or any workload of that shape ([`is_permutation`]: every
//!   sender sends one flow and receives one, all of one size and one start), e.g. one FSDP2
//!   ring step of every ring at once or a permutation read from a connection matrix: the
//!   Ofan paper uses its appendix-A baseline for every permutation workload and naive bounds
//!   for the others (§3.5).
//! - Every workload: the busiest host's bytes (data sent plus ACKs sent, or data received
//!   plus ACKs received, with headers and gaps) on its own link, plus the shortest one-way
//!   trip of any of its flows' last packet — the naive bound the Ofan paper uses for other
//!   workloads (§3.5) made exact in rate.
//!
//! - Triggered flows ([`Start::After`], collectives): the critical path. A flow starts no
//!   earlier than its dependencies' bounds end plus its delay, so its own bound is added to
//!   the latest of them (a ring AllReduce: 2(n − 1) single-chunk bounds in a row).
//!
//! The bound is the largest of these.
//!
//! Workloads of more than [`EXACT_FLOWS`] flows take the per-flow maximum over the flows of
//! a deterministic sample (every host's first flow with a fixed start, and every flow of
//! host 0, whose triggered flows walk their dependency chains): a maximum over fewer flows
//! is still a lower bound, only possibly less tight. The busiest host's wire time is exact up
//! to [`BUSIEST_FLOWS`] flows (adding each flow's bytes is cheap); above [`EXACT_FLOWS`] it
//! leaves out the path latency (walking every path is not).

use super::bound::{self, Hop};
use crate::packet::{flow_id, flow_index, flow_src, FlowId};
use crate::scenario::{Scenario, WorkloadKind};
use crate::topology::{Fabric, NodeId};
use crate::workload::{Flow, Start, Workload};
use std::collections::{HashMap, HashSet};

/// Workloads up to this many flows get the exact per-flow maximum.
pub(crate) const EXACT_FLOWS: u64 = 1 << 20;

/// Workloads up to this many flows get the busiest host's wire time.
pub(crate) const BUSIEST_FLOWS: u64 = 1 << 26;

/// Sizes and delays the bound needs, in bytes and ps.
pub(crate) struct BoundInputs<'a> {
    pub fabric: &'a Fabric,
    pub workload: &'a Workload,
    pub payload_bytes: u64,
    pub header_bytes: u64,
    pub ack_bytes: u64,
    pub gap_bytes: u64,
    pub forwarding_ps: u64,
}

impl BoundInputs<'_> {
    fn packets(&self, bytes: u64) -> u64 {
        bytes.div_ceil(self.payload_bytes)
    }

    /// The hops of the path from `src` to `dst` for a flow whose last packet carries
    /// `last_payload` bytes.
    fn hops(&self, src: NodeId, dst: NodeId, last_payload: u64) -> Vec<Hop> {
        let f = self.fabric;
        f.path(src, dst)
            .into_iter()
            .map(|(n, p)| {
                let l = f.link(n, p);
                let peer = f.peer(n, p, 0).0;
                let fwd = if f.is_host(peer) {
                    0
                } else {
                    self.forwarding_ps
                };
                Hop {
                    data_ps: l.serialization_ps(self.payload_bytes + self.header_bytes),
                    last_ps: l.serialization_ps(last_payload + self.header_bytes),
                    ack_ps: l.serialization_ps(self.ack_bytes),
                    gap_ps: l.serialization_ps(self.gap_bytes),
                    latency_ps: l.latency_ps + fwd,
                }
            })
            .collect()
    }

    fn flow_bound_ps(&self, fl: &Flow, permutation: bool) -> u64 {
        let m = self.packets(fl.bytes);
        let last = fl.bytes - (m - 1) * self.payload_bytes;
        let fwd = self.hops(fl.src, fl.dst, last);
        let rev = self.hops(fl.dst, fl.src, last);
        if permutation {
            bound::permutation_bound_ps(m, &fwd, &rev)
        } else {
            bound::single_flow_bound_ps(m, &fwd, &rev)
        }
    }

    /// When a flow's last byte reaches its destination at the earliest (what triggers its
    /// dependents), from its start.
    fn arrival_bound_ps(&self, fl: &Flow) -> u64 {
        let m = self.packets(fl.bytes);
        let last = fl.bytes - (m - 1) * self.payload_bytes;
        bound::last_data_arrival_ps(m, &self.hops(fl.src, fl.dst, last))
    }

    /// Bytes a flow puts on its source's wire (data) and on its destination's (ACKs).
    fn wire_bytes(&self, fl: &Flow) -> (u64, u64) {
        let m = self.packets(fl.bytes);
        (
            fl.bytes + m * (self.header_bytes + self.gap_bytes),
            m * (self.ack_bytes + self.gap_bytes),
        )
    }
}

/// The CCT lower bound of the run, in ps (0 for an empty workload).
pub(crate) fn lower_bound_ps(s: &Scenario, b: &BoundInputs<'_>) -> u64 {
    let hosts = b.fabric.num_hosts;
    let w = b.workload;
    let permutation = s.workload.kind == WorkloadKind::Permutation || is_permutation(w, hosts);
    let total = w.total_flows(hosts);
    if total == 0 {
        return 0;
    }
    let sample: Box<dyn Iterator<Item = (u32, u32)>> = if total <= EXACT_FLOWS {
        Box::new((0..hosts).flat_map(|h| (0..w.flows_of(h)).map(move |i| (h, i))))
    } else {
        let host0 = (0..w.flows_of(0)).map(|i| (0, i));
        let firsts = (1..hosts).filter(|&h| w.flows_of(h) > 0).map(|h| (h, 0));
        Box::new(host0.chain(firsts))
    };
    // CCTs count from the first send: the earliest fixed start.
    // (A host's fixed-start flows are in order of start time: its first one is its earliest.)
    let t0 = (0..hosts)
        .filter_map(|h| (0..w.flows_of(h)).find_map(|i| w.flow(h, i).start_at_ps()))
        .min()
        .unwrap_or(0);
    let exact = total <= EXACT_FLOWS;
    let mut path = CriticalPath::default();
    let per_flow = sample
        // Sampled: host 0's triggered flows too (each walks only its own dependency chain).
        .filter(|&(h, i)| exact || h == 0 || w.flow(h, i).start_at_ps().is_some())
        .map(|(h, i)| {
            let end = path.end_ps(b, flow_id(h, i), t0, permutation);
            path.forget_unless(exact);
            end
        })
        .max()
        .unwrap_or(0);
    per_flow.max(busiest_host_bound_ps(b))
}

/// Whether `w` has the shape of the appendix-A model: every host that sends sends exactly one
/// flow and receives exactly one, every host that receives sends, and all flows have one
/// size and one fixed start (so each NIC interleaves its own data with the ACKs of the one
/// flow it receives, from the same instant). O(hosts).
pub(crate) fn is_permutation(w: &Workload, hosts: u32) -> bool {
    let mut shape: Option<(u64, u64)> = None;
    let (mut sends, mut receives) = (vec![false; hosts as usize], vec![false; hosts as usize]);
    for h in 0..hosts {
        match w.flows_of(h) {
            0 => continue,
            1 => {}
            _ => return false,
        }
        let fl = w.flow(h, 0);
        let Some(start) = fl.start_at_ps() else {
            return false;
        };
        if fl.dst == h || fl.dst >= hosts || receives[fl.dst as usize] {
            return false;
        }
        if *shape.get_or_insert((fl.bytes, start)) != (fl.bytes, start) {
            return false;
        }
        sends[h as usize] = true;
        receives[fl.dst as usize] = true;
    }
    shape.is_some() && sends == receives
}

/// The busiest host's wire time (sent or received side) on its own link, plus the shortest
/// path latency: everything a host sends or receives crosses its link after the first send,
/// and the last of it still travels (or, received, first had to travel) at least that far.
fn busiest_host_bound_ps(b: &BoundInputs<'_>) -> u64 {
    busiest_host_bounds_ps(b, 1, |_, _| Some(0))[0]
}

/// [`busiest_host_bound_ps`] for each of `groups` groups of flows (flow `i` of host `h` is
/// in group `group_of(h, i)`, or in none): a phase's flows, data and ACKs, all cross their
/// hosts' links after the phase's first send.
fn busiest_host_bounds_ps(
    b: &BoundInputs<'_>,
    groups: usize,
    group_of: impl Fn(u32, u32) -> Option<usize>,
) -> Vec<u64> {
    let f = b.fabric;
    let w = b.workload;
    let hosts = f.num_hosts as usize;
    let total = w.total_flows(f.num_hosts);
    if total > BUSIEST_FLOWS {
        return vec![0; groups]; // the per-flow sample bounds such workloads
    }
    // Paths are walked (for the shortest latency) up to EXACT_FLOWS flows; above, the wire
    // time alone bounds (a flow's bytes are counted in O(1)).
    let with_latency = total <= EXACT_FLOWS;
    let (mut tx, mut rx) = (vec![0u64; hosts * groups], vec![0u64; hosts * groups]);
    let mut latency = vec![u64::MAX; groups];
    for h in 0..f.num_hosts {
        for i in 0..w.flows_of(h) {
            let Some(g) = group_of(h, i) else {
                continue;
            };
            let fl = w.flow(h, i);
            let (data, acks) = b.wire_bytes(&fl);
            let (src, dst) = (g * hosts + h as usize, g * hosts + fl.dst as usize);
            tx[src] += data;
            rx[dst] += data;
            tx[dst] += acks;
            rx[src] += acks;
            let path: u64 = match with_latency {
                true => f
                    .path(h, fl.dst)
                    .iter()
                    .map(|&(n, p)| f.link(n, p).latency_ps)
                    .sum(),
                false => 0,
            };
            latency[g] = latency[g].min(path);
        }
    }
    (0..groups)
        .map(|g| match latency[g] {
            u64::MAX => 0,
            lat => {
                let busiest = (0..hosts)
                    .map(|h| {
                        let bytes = tx[g * hosts + h].max(rx[g * hosts + h]);
                        f.link(h as u32, 0).serialization_ps(bytes)
                    })
                    .max()
                    .unwrap_or(0);
                busiest + lat
            }
        })
        .collect()
}

/// Each flow's earliest end relative to the first start: its earliest start plus its own
/// bound, where a triggered flow starts no earlier than its dependencies' last bytes can
/// have arrived (their earliest starts plus [`BoundInputs::arrival_bound_ps`]) plus its delay.
#[derive(Default)]
struct CriticalPath {
    /// Earliest arrival of the last byte of each triggered flow resolved so far.
    arrival_ps: HashMap<FlowId, u64>,
    arrivals: ArrivalBounds,
}

/// [`BoundInputs::arrival_bound_ps`] remembered by (source, destination, bytes): a ring's
/// chains cross the same few thousand member pairs millions of times, and each bound walks
/// a path. At most one entry per flow walked, and per member pair for a sampled ring.
#[derive(Default)]
struct ArrivalBounds {
    by_pair: HashMap<(NodeId, NodeId, u64), u64>,
}

impl ArrivalBounds {
    fn get(&mut self, b: &BoundInputs<'_>, fl: &Flow) -> u64 {
        *self
            .by_pair
            .entry((fl.src, fl.dst, fl.bytes))
            .or_insert_with(|| b.arrival_bound_ps(fl))
    }
}

impl CriticalPath {
    /// Sampled workloads forget what a flow's resolution remembered: host 0's ring steps
    /// share no dependency (step s walks (prev^k(0), s − k)), so remembering them all would
    /// grow with the square of the ring's length (3.4 × 10^7 entries, GBs, for the
    /// 65,536-GPU ring), while one chain is at most its steps. The values are the same.
    fn forget_unless(&mut self, exact: bool) {
        if !exact {
            self.arrival_ps.clear();
        }
    }

    /// Flow `id`'s earliest end (last ACK). Fixed-start flows are computed directly (no
    /// table for workloads without triggers); triggered ones depth-first over their
    /// dependencies, without recursion (chains are 2(n − 1) long), and remembered. A cycle
    /// (no generator builds one) would only loosen the bound: a dependency still being
    /// resolved counts as arriving at 0.
    fn end_ps(&mut self, b: &BoundInputs<'_>, id: FlowId, t0: u64, permutation: bool) -> u64 {
        let w = b.workload;
        let fl = w.flow_by_id(id);
        let start = match fl.start {
            Start::At(t) => t - t0,
            Start::After { delay_ps } => self.deps_arrived_ps(b, id, t0) + delay_ps,
        };
        start + b.flow_bound_ps(&fl, permutation && fl.start_at_ps().is_some())
    }

    /// The earliest time the dependencies of triggered flow `id` have all arrived.
    fn deps_arrived_ps(&mut self, b: &BoundInputs<'_>, id: FlowId, t0: u64) -> u64 {
        let w = b.workload;
        let mut open = HashSet::new();
        let mut stack = vec![(id, false)];
        while let Some((id, expanded)) = stack.pop() {
            if self.arrival_ps.contains_key(&id) {
                continue;
            }
            let (h, i) = (flow_src(id), flow_index(id));
            let mut latest = 0;
            let mut waiting = false;
            w.for_each_dep(h, i, |d| {
                let dep = w.flow_by_id(d);
                match (dep.start, self.arrival_ps.get(&d)) {
                    (Start::At(t), _) => latest = latest.max(t - t0 + self.arrivals.get(b, &dep)),
                    (_, Some(&at)) => latest = latest.max(at),
                    _ if expanded || open.contains(&d) => {}
                    _ => {
                        if !waiting {
                            stack.push((id, true));
                            open.insert(id);
                            waiting = true;
                        }
                        stack.push((d, false));
                    }
                }
            });
            if waiting {
                continue;
            }
            open.remove(&id);
            let fl = w.flow(h, i);
            let Start::After { delay_ps } = fl.start else {
                unreachable!("only triggered flows are pushed")
            };
            self.arrival_ps
                .insert(id, latest + delay_ps + self.arrivals.get(b, &fl));
        }
        // Remembered: its arrival = (dependencies' arrival + delay) + its own transfer.
        let fl = w.flow_by_id(id);
        self.arrival_ps[&id] - self.arrivals.get(b, &fl) - Self::delay_of(w, id)
    }

    fn delay_of(w: &Workload, id: FlowId) -> u64 {
        match w.flow_by_id(id).start {
            Start::After { delay_ps } => delay_ps,
            Start::At(_) => 0,
        }
    }
}

/// Each phase's duration lower bound (first send of the phase → its last ACK), in ps, in
/// the order of `Workload::phase_names`: the larger of the critical path below and the
/// busiest host's wire time for the phase's flows (its data and ACKs), plus the shortest
/// path latency (all of it crosses the host's link after the phase began).
///
/// The critical path within the phase: a flow starts no earlier than the phase's first
/// send (all its flows send at or after it), and no earlier than the last byte of each of
/// its dependencies *in the same phase* can have arrived, plus its delay. Dependencies in
/// earlier phases only say the flow starts at or after the phase began (their arrival may
/// precede the phase's first send, so their delay does not count). Fixed starts count as
/// the phase's start too (a phase's first send is not known before the run). Exact up to
/// [`EXACT_FLOWS`] flows; above, the flows of host 0 only (a maximum over fewer flows is
/// still a lower bound).
pub(crate) fn phase_lower_bounds_ps(b: &BoundInputs<'_>) -> Vec<u64> {
    let w = b.workload;
    let hosts = b.fabric.num_hosts;
    let mut bounds = vec![0u64; w.phase_names().len()];
    if bounds.is_empty() {
        return bounds;
    }
    let total = w.total_flows(hosts);
    let exact = total <= EXACT_FLOWS;
    let permutation = is_permutation(w, hosts);
    let mut path = PhasePath::default();
    for h in (0..hosts).filter(|&h| exact || h == 0) {
        for i in 0..w.flows_of(h) {
            let Some(phase) = w.phase_of(h, i) else {
                continue;
            };
            let id = flow_id(h, i);
            let end = path.start_ps(b, id) + b.flow_bound_ps(&w.flow(h, i), permutation);
            if !exact {
                // As `CriticalPath::forget_unless`: host 0's chains share nothing.
                path.start_ps.clear();
                path.expanded.clear();
            }
            let acc = &mut bounds[phase as usize];
            *acc = (*acc).max(end);
        }
    }
    let phases = bounds.len();
    let busiest = busiest_host_bounds_ps(b, phases, |h, i| w.phase_of(h, i).map(usize::from));
    bounds.iter().zip(busiest).map(|(&a, b)| a.max(b)).collect()
}

/// Earliest starts of flows relative to their phase's first send (see
/// [`phase_lower_bounds_ps`]), resolved depth-first without recursion and remembered.
#[derive(Default)]
struct PhasePath {
    start_ps: HashMap<FlowId, u64>,
    /// Flows whose dependencies were pushed: met again unresolved, they are on a cycle.
    expanded: HashSet<FlowId>,
    arrivals: ArrivalBounds,
}

impl PhasePath {
    fn start_ps(&mut self, b: &BoundInputs<'_>, id: FlowId) -> u64 {
        let w = b.workload;
        if w.dep_count(flow_src(id), flow_index(id)) == 0 {
            return 0; // a fixed start: nothing to remember (all-to-all has only these)
        }
        let mut stack = vec![id];
        while let Some(&top) = stack.last() {
            if self.start_ps.contains_key(&top) {
                stack.pop();
                continue;
            }
            let (h, i) = (flow_src(top), flow_index(top));
            let phase = w.phase_of(h, i);
            let mut latest: Option<u64> = None;
            let mut missing = false;
            w.for_each_dep(h, i, |d| {
                if w.phase_of(flow_src(d), flow_index(d)) != phase {
                    return;
                }
                match self.start_ps.get(&d) {
                    Some(&s) => {
                        let arrived = s + self.arrivals.get(b, &w.flow_by_id(d));
                        latest = Some(latest.map_or(arrived, |l| l.max(arrived)));
                    }
                    None => {
                        missing = true;
                        stack.push(d);
                    }
                }
            });
            if missing {
                // Back at an expanded flow, its dependencies (pushed above it) are resolved
                // unless one is below it on the stack: a cycle, which no generator builds
                // (`deps.rs` checks workloads up to 2^20 flows).
                assert!(self.expanded.insert(top), "dependency cycle at flow {top}");
                continue;
            }
            stack.pop();
            let start = match (latest, w.flow(h, i).start) {
                (Some(l), Start::After { delay_ps }) => l + delay_ps,
                _ => 0,
            };
            self.start_ps.insert(top, start);
        }
        self.start_ps[&id]
    }
}
