//! Events and the per-partition event queue.
//!
//! Order is `(time_ps, tie)` where `tie` depends only on the model, never on the partitioning
//! or on insertion order: arrivals first (keyed by the id of the link they travel), then
//! transmission ends (keyed by port id), then host wake-ups (keyed by node id). Two pending
//! events never share a key except duplicate wake-ups of one host, which are identical.

use crate::net::Packet;
use serde::{Deserialize, Serialize};
use std::cmp::Ordering;
use std::collections::BinaryHeap;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum What {
    /// `pkt` reaches `node` through its port `in_port`.
    Arrive {
        node: u32,
        in_port: u16,
        pkt: Packet,
    },
    /// Port `port` of `node` has put the last bit of its head packet on the wire.
    TxDone { node: u32, port: u16 },
    /// Host `node` re-examines its NIC (pacing gap over, or a flow starts).
    Wake { node: u32 },
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Event {
    pub time_ps: u64,
    pub tie: u64,
    pub what: What,
}

const CLASS_SHIFT: u32 = 62;

impl Event {
    pub fn arrive(time_ps: u64, link_id: u32, node: u32, in_port: u16, pkt: Packet) -> Event {
        Event {
            time_ps,
            tie: link_id as u64,
            what: What::Arrive { node, in_port, pkt },
        }
    }
    pub fn tx_done(time_ps: u64, port_id: u32, node: u32, port: u16) -> Event {
        Event {
            time_ps,
            tie: (1 << CLASS_SHIFT) | port_id as u64,
            what: What::TxDone { node, port },
        }
    }
    pub fn wake(time_ps: u64, node: u32) -> Event {
        Event {
            time_ps,
            tie: (2 << CLASS_SHIFT) | node as u64,
            what: What::Wake { node },
        }
    }
    /// The node whose state this event touches.
    pub fn node(&self) -> u32 {
        match self.what {
            What::Arrive { node, .. } | What::TxDone { node, .. } | What::Wake { node } => node,
        }
    }
    #[inline]
    fn key(&self) -> (u64, u64) {
        (self.time_ps, self.tie)
    }
}

/// Min-ordered wrapper for the max-heap.
struct Entry(Event);

impl PartialEq for Entry {
    fn eq(&self, o: &Self) -> bool {
        self.0.key() == o.0.key()
    }
}
impl Eq for Entry {}
impl PartialOrd for Entry {
    fn partial_cmp(&self, o: &Self) -> Option<Ordering> {
        Some(self.cmp(o))
    }
}
impl Ord for Entry {
    #[inline]
    fn cmp(&self, o: &Self) -> Ordering {
        o.0.key().cmp(&self.0.key())
    }
}

/// A binary min-heap on `(time_ps, tie)`. (Chosen by measurement: see benches/event_queue.rs.)
#[derive(Default)]
pub struct EventQueue {
    heap: BinaryHeap<Entry>,
}

impl EventQueue {
    #[inline]
    pub fn push(&mut self, e: Event) {
        self.heap.push(Entry(e));
    }
    #[inline]
    pub fn next_time_ps(&self) -> u64 {
        self.heap
            .peek()
            .map_or(crate::time::NEVER_PS, |e| e.0.time_ps)
    }
    /// Pops the earliest event if it is before `end_ps`.
    #[inline]
    pub fn pop_before(&mut self, end_ps: u64) -> Option<Event> {
        match self.heap.peek() {
            Some(e) if e.0.time_ps < end_ps => self.heap.pop().map(|e| e.0),
            _ => None,
        }
    }
    pub fn len(&self) -> usize {
        self.heap.len()
    }
    pub fn is_empty(&self) -> bool {
        self.heap.is_empty()
    }
    pub fn iter(&self) -> impl Iterator<Item = &Event> {
        self.heap.iter().map(|e| &e.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pops_in_time_then_tie_order() {
        let mut q = EventQueue::default();
        q.push(Event::wake(5, 1));
        q.push(Event::tx_done(5, 3, 0, 0));
        q.push(Event::wake(2, 9));
        q.push(Event::wake(5, 0));
        let order: Vec<_> = std::iter::from_fn(|| q.pop_before(u64::MAX))
            .map(|e| (e.time_ps, e.node()))
            .collect();
        assert_eq!(order, vec![(2, 9), (5, 0), (5, 0), (5, 1)]);
    }
}
