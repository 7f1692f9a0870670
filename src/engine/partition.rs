//! A partition: a set of nodes with one event queue, their runtime state, their metrics, and
//! an outbox per other partition for events that cross the cut.

use super::event::{Event, EventQueue, What};
use super::plan::Plan;
use crate::metrics::{Metrics, StageStats};
use crate::model::Model;
use crate::net::host::Host;
use crate::net::link::Scheduler;
use crate::net::switch::Switch;
use crate::topology::NodeId;

// Hosts are most nodes, so boxing the larger `Host` variant would only add an indirection.
#[allow(clippy::large_enum_variant)]
pub enum Node {
    Host(Host),
    Switch(Switch),
}

pub struct Partition {
    pub id: u32,
    pub queue: EventQueue,
    pub nodes: Vec<Node>,
    /// Events for other partitions, by destination partition; exchanged at window ends.
    pub outbox: Vec<Vec<Event>>,
    pub metrics: Metrics,
}

/// Routes an event to the local queue or to the outbox of the partition owning its node.
struct Sink<'a> {
    id: u32,
    queue: &'a mut EventQueue,
    outbox: &'a mut [Vec<Event>],
    node_part: &'a [u32],
}

impl Scheduler for Sink<'_> {
    #[inline]
    fn schedule(&mut self, ev: Event) {
        let p = self.node_part[ev.node() as usize];
        if p == self.id {
            self.queue.push(ev);
        } else {
            self.outbox[p as usize].push(ev);
        }
    }
}

impl Partition {
    /// Instantiates runtime state for the partition's `nodes` only (from [`Plan::members`]),
    /// and their first events.
    pub fn new(m: &Model, plan: &Plan, id: u32, nodes: &[NodeId]) -> Partition {
        let mut queue = EventQueue::default();
        let nodes = nodes
            .iter()
            .map(|&n| {
                if m.fabric.is_host(n) {
                    let mut h = Host::new(m, n);
                    if let Some(e) = h.initial_wake(m) {
                        queue.push(e);
                    }
                    Node::Host(h)
                } else {
                    Node::Switch(Switch::new(m, n))
                }
            })
            .collect();
        Partition {
            id,
            queue,
            nodes,
            outbox: vec![Vec::new(); plan.parts as usize],
            metrics: Metrics::recording(),
        }
    }

    /// Processes every event before `end_ps`.
    pub fn run_window(&mut self, m: &Model, plan: &Plan, end_ps: u64) {
        let Partition {
            id,
            queue,
            nodes,
            outbox,
            metrics,
        } = self;
        let mut sink = Sink {
            id: *id,
            queue,
            outbox,
            node_part: &plan.node_part,
        };
        let mut events = 0u64;
        let mut last = metrics.counters.last_event_ps;
        while let Some(ev) = sink.queue.pop_before(end_ps) {
            events += 1;
            last = ev.time_ps;
            let local = plan.node_local[ev.node() as usize] as usize;
            match (ev.what, &mut nodes[local]) {
                (What::Arrive { in_port, pkt, .. }, Node::Switch(s)) => s.on_arrive(
                    m,
                    ev.time_ps,
                    in_port,
                    pkt,
                    &mut sink,
                    &mut metrics.counters,
                ),
                (What::Arrive { pkt, .. }, Node::Host(h)) => {
                    h.on_arrive(m, ev.time_ps, pkt, &mut sink, metrics)
                }
                (What::TxDone { port, .. }, Node::Switch(s)) => {
                    s.on_tx_done(m, ev.time_ps, port, &mut sink)
                }
                (What::TxDone { .. }, Node::Host(h)) => {
                    h.on_tx_done(m, ev.time_ps, &mut sink, metrics)
                }
                (What::Wake { .. }, Node::Host(h)) => h.on_wake(m, ev.time_ps, &mut sink, metrics),
                (What::Wake { node }, Node::Switch(_)) => unreachable!("wake-up for switch {node}"),
            }
        }
        metrics.counters.events += events;
        metrics.counters.last_event_ps = last;
    }

    pub fn next_time_ps(&self) -> u64 {
        self.queue.next_time_ps()
    }

    /// Closes every port's statistics at `end_ps` and sums them per stage.
    pub fn stage_stats(&mut self, m: &Model, end_ps: u64) -> Vec<StageStats> {
        let mut stages = vec![StageStats::default(); m.fabric.stage_names().len()];
        for node in &mut self.nodes {
            let (id, ports): (NodeId, &mut [crate::net::Port]) = match node {
                Node::Host(h) => (h.id, std::slice::from_mut(&mut h.port)),
                Node::Switch(s) => (s.id, &mut s.ports),
            };
            for (p, port) in ports.iter_mut().enumerate() {
                port.finish(end_ps);
                stages[m.fabric.stage(id, p as u16) as usize].add_port(&port.stats);
            }
        }
        stages
    }

    /// Packets still held in this partition: in port queues and in pending arrival events.
    pub fn packets_held(&self) -> (u64, u64) {
        let (mut data, mut acks) = (0, 0);
        let mut count = |is_data: bool| if is_data { data += 1 } else { acks += 1 };
        for node in &self.nodes {
            let ports = match node {
                Node::Host(h) => std::slice::from_ref(&h.port),
                Node::Switch(s) => &s.ports[..],
            };
            ports
                .iter()
                .flat_map(|p| p.queue.iter())
                .for_each(|pkt| count(pkt.is_data()));
        }
        for ev in self.queue.iter().chain(self.outbox.iter().flatten()) {
            if let What::Arrive { pkt, .. } = ev.what {
                count(pkt.is_data());
            }
        }
        (data, acks)
    }

    pub fn incomplete_flows(&self) -> u64 {
        self.nodes
            .iter()
            .map(|n| {
                if let Node::Host(h) = n {
                    h.incomplete_flows()
                } else {
                    0
                }
            })
            .sum()
    }
}
