//! A partition: a set of nodes with one event queue, their runtime state and their metrics.
//! Events for nodes of other partitions go to outboxes, one per neighbouring partition, which
//! the window loop exchanges at the window's end.
//!
//! Invariants (asserted while events are processed): events pop in strictly increasing
//! `(time, tie)` order, so no two pending events ever share a key; no event is scheduled
//! before the one that causes it; an event for another partition falls at or after the
//! current window's end (the lookahead rule), and only arrivals over cut links cross.

use super::plan::{Plan, NOT_CUT, VARIES};
use super::queue::EventQueue;
use crate::metrics::{Metrics, StageStats};
use crate::model::Model;
use crate::net::event::{Event, Scheduler, TimerKind, What};
use crate::net::host::Host;
use crate::net::switch::Switch;
use crate::packet::{Packet, PacketKind};
use crate::topology::NodeId;
use serde::{Deserialize, Serialize};

// Hosts are most nodes, so boxing the larger `Host` variant would only add an indirection.
#[allow(clippy::large_enum_variant)]
#[derive(Serialize, Deserialize)]
/// A node's state: a host or a switch.
pub enum Node {
    /// A host: its NIC, transport and flows.
    Host(Host),
    /// A switch: its ports and LB policy.
    Switch(Switch),
}

/// Events a partition sends across the cut during one window, one list per outbox slot
/// (see [`Plan::out_neighbors`]). Lists keep their capacity from window to window.
pub type Outbox = Vec<Vec<Event>>;

/// One partition of the fabric: its nodes, their pending events and their measurements.
/// A partition is processed by one thread at a time.
#[derive(Serialize, Deserialize)]
pub struct Partition {
    /// Its id in the plan.
    pub id: u32,
    /// Pending events of its nodes.
    pub queue: EventQueue,
    /// Its nodes, in the plan's order (`Plan::node_local`).
    pub nodes: Vec<Node>,
    /// What its nodes measured.
    pub metrics: Metrics,
    /// Flows sent by this partition's hosts.
    pub flows_total: u64,
    /// Key of the last event processed (the order invariant).
    last_key: (u64, u64),
    /// Index of the next sample of the port queues (at `index × interval`).
    next_sample: u64,
    /// Its time, `next_sample × interval` (compared on every event: no division there).
    next_sample_ps: u64,
    /// Events processed per node, by index in `nodes` (the weights of balanced plans:
    /// `node_events.csv`, `weft partition --weights`).
    node_events: Vec<u64>,
}

/// Routes an event to the local queue or to the outbox of the link it crosses.
struct Sink<'a> {
    id: u32,
    now_ps: u64,
    window_end_ps: u64,
    queue: &'a mut EventQueue,
    outbox: &'a mut Outbox,
    node_part: &'a [u32],
    plan: &'a Plan,
}

impl Scheduler for Sink<'_> {
    #[inline]
    fn schedule(&mut self, ev: Event) {
        if ev.time_ps < self.now_ps {
            violated("event scheduled in the past", ev.time_ps, self.now_ps);
        }
        if self.node_part[ev.node() as usize] == self.id {
            self.queue.push(ev);
            return;
        }
        if ev.time_ps < self.window_end_ps {
            violated(
                "lookahead violated: an event for another partition falls inside the window",
                ev.time_ps,
                self.window_end_ps,
            );
        }
        let slot = match ev.what {
            What::Arrive { .. } => match self.plan.link_slot[(ev.tie & ((1 << 62) - 1)) as usize] {
                VARIES => self
                    .plan
                    .slot_to(self.id, self.node_part[ev.node() as usize]),
                slot => slot,
            },
            _ => NOT_CUT,
        };
        if slot == NOT_CUT {
            violated(
                "only arrivals over cut links cross partitions",
                ev.time_ps,
                0,
            );
        }
        self.outbox[slot as usize].push(ev);
    }
}

/// The failure path of the engine's invariant checks, out of line so that each check costs
/// only a comparison on the hot path.
#[cold]
#[inline(never)]
fn violated(what: &str, time_ps: u64, bound_ps: u64) -> ! {
    panic!("engine invariant: {what} (event at {time_ps} ps, bound {bound_ps} ps)")
}

impl Partition {
    /// Instantiates runtime state for the partition's `nodes` only (from [`Plan::members`]),
    /// and their first events.
    pub fn new(m: &Model, plan: &Plan, id: u32, nodes: &[NodeId]) -> (Partition, Outbox) {
        let mut queue = EventQueue::default();
        let mut outbox: Outbox = vec![Vec::new(); plan.out_neighbors[id as usize].len()];
        let mut flows_total = 0;
        let mut sink = Sink {
            id,
            now_ps: 0,
            window_end_ps: 0,
            queue: &mut queue,
            outbox: &mut outbox,
            node_part: &plan.node_part,
            plan,
        };
        let nodes = nodes
            .iter()
            .map(|&n| {
                if m.fabric.is_host(n) {
                    let mut h = Host::new(m, n);
                    h.start(m, &mut sink);
                    flows_total += h.incomplete_flows();
                    Node::Host(h)
                } else {
                    let mut s = Switch::new(m, n);
                    s.start(&mut sink);
                    Node::Switch(s)
                }
            })
            .collect();
        let p = Partition {
            id,
            queue,
            nodes,
            metrics: Metrics::recording(),
            flows_total,
            last_key: (0, 0),
            next_sample: 0,
            next_sample_ps: 0,
            node_events: vec![],
        };
        let mut p = p;
        p.node_events = vec![0; p.nodes.len()];
        let stages = m.fabric.stage_names().len();
        let tiers = m.fabric.top_tier() as usize;
        p.metrics.series = Some(crate::metrics::Timeseries::new(m.sample_ps, stages, tiers));
        (p, outbox)
    }

    /// Processes every event before `end_ps`, putting those for other partitions in `outbox`.
    pub fn run_window(&mut self, m: &Model, plan: &Plan, end_ps: u64, outbox: &mut Outbox) {
        let Partition {
            id,
            queue,
            nodes,
            metrics,
            last_key,
            next_sample,
            next_sample_ps,
            node_events,
            ..
        } = self;
        let mut sink = Sink {
            id: *id,
            now_ps: 0,
            window_end_ps: end_ps,
            queue,
            outbox,
            node_part: &plan.node_part,
            plan,
        };
        let mut events = 0u64;
        while let Some(ev) = sink.queue.pop_before(end_ps) {
            if ev.key() <= *last_key {
                violated(
                    "events out of order or sharing a key",
                    ev.time_ps,
                    last_key.0,
                );
            }
            *last_key = ev.key();
            events += 1;
            if ev.time_ps >= *next_sample_ps {
                *next_sample_ps = sample_through(m, nodes, metrics, next_sample, ev.time_ps);
            }
            sink.now_ps = ev.time_ps;
            let local = plan.node_local[ev.node() as usize] as usize;
            node_events[local] += 1;
            if let What::Timer {
                kind: TimerKind::RlbSlot,
                gen,
                ..
            } = ev.what
            {
                plan_rack_if_due(m, plan, *id, nodes, ev.node(), gen, ev.time_ps);
            }
            dispatch(m, ev, &mut nodes[local], &mut sink, metrics);
        }
        metrics.counters.events += events;
        metrics.counters.last_event_ps = metrics.counters.last_event_ps.max(last_key.0);
    }

    /// Takes the time-series samples due up to `end_ps` (the end of the run).
    pub fn finish_samples(&mut self, m: &Model, end_ps: u64) {
        let (nodes, metrics) = (&self.nodes, &mut self.metrics);
        self.next_sample_ps = sample_through(m, nodes, metrics, &mut self.next_sample, end_ps);
    }

    /// (node, events processed there) for each of this partition's nodes.
    pub fn node_events(&self) -> impl Iterator<Item = (NodeId, u64)> + '_ {
        self.nodes
            .iter()
            .zip(&self.node_events)
            .map(|(n, &e)| match n {
                Node::Host(h) => (h.id, e),
                Node::Switch(s) => (s.id, e),
            })
    }

    /// Time of its earliest pending event, in ps.
    pub fn next_time_ps(&self) -> u64 {
        self.queue.next_time_ps()
    }

    /// Whether every flow of this partition's hosts has completed.
    pub fn workload_done(&self) -> bool {
        self.metrics.counters.flows_completed == self.flows_total
    }

    /// Closes every port's statistics at `end_ps` and sums them per stage.
    pub fn stage_stats(&mut self, m: &Model, end_ps: u64) -> Vec<StageStats> {
        let mut stages = vec![StageStats::default(); m.fabric.stage_names().len()];
        for node in &mut self.nodes {
            let (id, ports): (NodeId, &mut [crate::net::Port]) = match node {
                Node::Host(h) => (h.id, std::slice::from_mut(&mut h.nic.port)),
                Node::Switch(s) => (s.id, &mut s.ports),
            };
            for (p, port) in ports.iter_mut().enumerate() {
                port.finish(end_ps);
                stages[m.fabric.stage(id, p as u16) as usize].add_port(&port.stats);
            }
        }
        stages
    }

    /// Packets still held in this partition: in port queues and in pending arrival events
    /// (`outbox`: those not yet handed to their partition), as (data, control packets: ACKs,
    /// NACKs and pulls, LB adverts, pulls alone). ACKs a NIC has not yet sent are not
    /// counted: they are not sent either.
    pub fn packets_held(&self, outbox: &Outbox) -> [u64; 4] {
        let mut held = [0; 4];
        let mut count = |pkt: &Packet| {
            held[match pkt.kind {
                PacketKind::Data => 0,
                PacketKind::Ack | PacketKind::Nack | PacketKind::Pull => 1,
                PacketKind::Advert => 2,
            }] += 1;
            held[3] += (pkt.kind == PacketKind::Pull) as u64;
        };
        for node in &self.nodes {
            let ports = match node {
                Node::Host(h) => std::slice::from_ref(&h.nic.port),
                Node::Switch(s) => &s.ports[..],
            };
            ports.iter().flat_map(|p| p.packets()).for_each(&mut count);
        }
        for ev in self.queue.iter().chain(outbox.iter().flatten()) {
            if let What::Arrive { pkt, .. } = &ev.what {
                count(pkt);
            }
        }
        held
    }

    /// Flows its hosts send that have not completed.
    pub fn incomplete_flows(&self) -> u64 {
        self.flows_total - self.metrics.counters.flows_completed
    }
}

/// Samples every port of `nodes` at each sampling instant up to `now_ps` not yet sampled
/// (the state then is the state now: no event of these nodes happened in between), and
/// every switch's total (its tier's switch occupancy). Checks each shared buffer's
/// invariant on the way: the pool's `used_bytes` is the sum of the switch's FIFOs.
#[cold]
/// Returns the time of the next sample.
fn sample_through(m: &Model, nodes: &[Node], mx: &mut Metrics, next: &mut u64, now_ps: u64) -> u64 {
    let series = mx.series.as_mut().expect("partitions record a series");
    let stages = m.fabric.stage_names().len();
    // Ports with empty queues, and their busy time, per stage: recorded at once; so are
    // empty switches, per tier.
    let mut idle = vec![(0u64, 0u128); stages];
    let mut idle_switches = vec![0u64; m.fabric.top_tier() as usize + 1];
    while *next * series.interval_ps <= now_ps {
        let i = *next as usize;
        let at_ps = *next * series.interval_ps;
        for node in nodes {
            let (id, ports) = match node {
                Node::Host(h) => (h.id, std::slice::from_ref(&h.nic.port)),
                Node::Switch(s) => (s.id, &s.ports[..]),
            };
            let mut total = 0;
            for (p, port) in ports.iter().enumerate() {
                let stage = m.fabric.stage(id, p as u16) as usize;
                total += port.queued_bytes;
                match port.queued_bytes {
                    0 => {
                        idle[stage].0 += 1;
                        idle[stage].1 += port.busy_through_ps(at_ps) as u128;
                    }
                    q => series.add_port(i, stage, q, port.busy_through_ps(at_ps)),
                }
            }
            let Node::Switch(s) = node else {
                continue;
            };
            if let Some(pool) = s.pool() {
                check_pool(s.id, pool, s.fifo_bytes());
            }
            match total {
                0 => idle_switches[m.fabric.tier(id) as usize] += 1,
                q => series.add_switch(m.fabric.tier(id), q),
            }
        }
        for (stage, (count, busy_ps)) in idle.iter_mut().enumerate() {
            series.add_idle_ports(i, stage, std::mem::take(count), std::mem::take(busy_ps));
        }
        for (tier, count) in idle_switches.iter_mut().enumerate().skip(1) {
            series.add_idle_switches(tier as u8, std::mem::take(count));
        }
        *next += 1;
    }
    *next * series.interval_ps
}

/// A shared buffer's invariant: `used` = Σ FIFO bytes ≤ the pool.
fn check_pool(node: NodeId, pool: &crate::net::qdisc::SharedPool, fifo_bytes: u64) {
    assert!(
        pool.used_bytes == fifo_bytes && fifo_bytes <= pool.pool_bytes,
        "switch {node}: shared buffer holds {} bytes by its count, {fifo_bytes} in its FIFOs (pool {})",
        pool.used_bytes,
        pool.pool_bytes
    );
}

/// Opera RotorLB with rack planning: when the slot timer of `host` (generation `gen`) is the
/// first of its rack's to fire for the superslice starting at `now_ps`, plans every host of
/// the rack together (`net::rotorlb::plan_superslice`), as the authors' central planner.
/// A rack's hosts are all in one partition (plans cut Opera by racks), and the first timer
/// is the same for any split (events at one time run in key order), so the plan is too.
fn plan_rack_if_due(
    m: &Model,
    plan: &Plan,
    part: u32,
    nodes: &mut [Node],
    host: NodeId,
    gen: u32,
    now_ps: u64,
) {
    let Some(o) = m.fabric.opera() else {
        return;
    };
    let Node::Host(h) = &mut nodes[plan.node_local[host as usize] as usize] else {
        return;
    };
    if !h
        .rotorlb_mut()
        .is_some_and(|r| r.needs_rack_plan(m, now_ps, gen))
    {
        return;
    }
    let d = o.hosts_per_rack();
    let first = host / d * d;
    let mut local: Vec<usize> = (first..first + d)
        .map(|h| {
            assert_eq!(
                plan.node_part[h as usize], part,
                "host {h} is in its rack's partition"
            );
            plan.node_local[h as usize] as usize
        })
        .collect();
    local.sort_unstable();
    let mut rack: Vec<(NodeId, &mut crate::net::rotorlb::RotorLb)> = disjoint_mut(nodes, &local)
        .into_iter()
        .filter_map(|n| match n {
            Node::Host(h) => {
                let id = h.id;
                h.rotorlb_mut().map(|r| (id, r))
            }
            Node::Switch(_) => None,
        })
        .collect();
    rack.sort_unstable_by_key(|(id, _)| *id);
    crate::net::rotorlb::plan_superslice(m, &mut rack, now_ps);
}

/// Mutable references to the elements of `items` at the increasing indices `sorted`.
fn disjoint_mut<'a, T>(mut items: &'a mut [T], sorted: &[usize]) -> Vec<&'a mut T> {
    let mut out = Vec::with_capacity(sorted.len());
    let mut base = 0;
    for &i in sorted {
        let rest = std::mem::take(&mut items);
        let (x, tail) = rest[i - base..].split_first_mut().expect("index in range");
        out.push(x);
        items = tail;
        base = i + 1;
    }
    out
}

/// Hands one event to its node.
// `always`: its one call site is the window loop, and LLVM's choice under plain `inline`
// moves with unrelated changes: after a visibility change (pub -> pub(crate) of the nodes'
// handlers) it stopped inlining it, and the k = 32 no-CC permutation ran at 0.88x the events
// per second of the commit before, side by side (0.98x with this attribute).
#[inline(always)]
fn dispatch(m: &Model, ev: Event, node: &mut Node, sink: &mut Sink<'_>, mx: &mut Metrics) {
    let t = ev.time_ps;
    match (ev.what, node) {
        (What::Arrive { in_port, pkt, .. }, Node::Switch(s)) => {
            s.on_arrive(m, t, in_port, pkt, sink, &mut mx.counters)
        }
        (What::Arrive { pkt, .. }, Node::Host(h)) => h.on_arrive(m, t, pkt, sink, mx),
        (What::TxDone { port, .. }, Node::Switch(s)) => {
            s.on_tx_done(m, t, port, sink, &mut mx.counters)
        }
        (What::TxDone { .. }, Node::Host(h)) => h.on_tx_done(m, t, sink, mx),
        (What::Timer { kind, gen, arg, .. }, Node::Host(h)) => {
            h.on_timer(m, t, kind, gen, arg, sink, mx)
        }
        (What::Timer { kind, gen, .. }, Node::Switch(s)) => {
            s.on_timer(m, t, kind, gen, sink, &mut mx.counters)
        }
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::lb::SwitchLb;
    use crate::scenario::Scenario;

    /// A scheduler that pushes straight into an event queue (tests set up nodes by hand).
    pub(crate) struct Direct<'a>(pub &'a mut EventQueue);
    impl Scheduler for Direct<'_> {
        fn schedule(&mut self, ev: Event) {
            self.0.push(ev);
        }
    }

    /// A switch's policy can keep a periodic timer: it fires exactly at every period, in
    /// key order with the packets around it, and the run ends when it stops re-arming.
    #[test]
    fn switch_timers_fire_on_time_among_packets() {
        let mut s = Scenario::default();
        s.topology.k = 4;
        s.workload.message_bytes = 20_000;
        let m = Model::build(&s).unwrap();
        let plan = Plan::automatic(&m, 1, 1).unwrap();
        let members = plan.members();
        let (mut p, mut outbox) = Partition::new(&m, &plan, 0, &members[0]);
        let period_ps = 1_234_567;
        let probe = m.fabric.num_hosts as usize; // the first switch
        let Node::Switch(sw) = &mut p.nodes[probe] else {
            panic!("node {probe} is a switch")
        };
        sw.lb = SwitchLb::Probe(crate::lb::Probe {
            period_ps,
            limit: 5,
            fired: vec![],
        });
        sw.start(&mut Direct(&mut p.queue));
        p.run_window(&m, &plan, u64::MAX, &mut outbox);
        let Node::Switch(sw) = &p.nodes[probe] else {
            unreachable!()
        };
        let SwitchLb::Probe(crate::lb::Probe { fired, .. }) = &sw.lb else {
            unreachable!()
        };
        assert_eq!(*fired, (1..=5).map(|i| i * period_ps).collect::<Vec<_>>());
        assert!(
            p.workload_done(),
            "packets were processed around the timers"
        );
        assert!(p.metrics.counters.last_event_ps > 5 * period_ps);
    }
}
