//! Events: what happens to a node at a time.
//!
//! Order is `(time_ps, tie)` where `tie` depends only on the model, never on the partitioning
//! or on insertion order: transmission ends first (keyed by port id), then arrivals (keyed by
//! the id of the link they travel), then timers (keyed by node id and the node's own timer
//! sequence number). Departures before arrivals, the usual queueing convention: a packet
//! arriving at the instant the previous one leaves finds the port holding only what is really
//! still there.
//!
//! No two pending events share a key: a port has at most one transmission in progress, two
//! packets on one link never arrive at the same instant (serialization takes time), and every
//! timer a node sets has a new sequence number. The engine asserts it (popped keys strictly
//! increase).

use crate::packet::Packet;
use serde::{Deserialize, Serialize};

/// What a node's timer is for; handlers match on it. `arg` and `gen` of the event say which
/// instance (e.g. a flow) and which setting (a timer re-armed or cancelled gets a new
/// generation, and stale events are ignored when they fire).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[repr(u8)]
pub enum TimerKind {
    /// A host re-examines its NIC (pacing gap over, or a flow starts).
    NicWake = 0,
    /// A switch's LB policy asked to be woken (periodic state refresh, flowlet timeouts).
    SwitchLb = 1,
    /// A flow's retransmission timer (`arg`: the flow's index at its host).
    Rto = 2,
    /// A flow's pacing gap is over (`arg`: the flow's index).
    FlowPace = 3,
    /// An NDP receiver's pull pacer may send its next pull (`host.cc = "ndp"`).
    PullPace = 4,
    /// Opera RotorLB: a superslice starts, the host commits bulk packets to the rotor(s)
    /// that just came up (`net/rotorlb.rs`).
    RlbSlot = 5,
}

/// What an event does, and to which node.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum What {
    /// `pkt` reaches `node` through its port `in_port`.
    Arrive {
        /// The receiving node.
        node: u32,
        /// The port of `node` the packet comes in on.
        in_port: u16,
        /// The packet.
        pkt: Packet,
    },
    /// Port `port` of `node` has put the last bit of its head packet on the wire.
    TxDone {
        /// The sending node.
        node: u32,
        /// Its port whose transmission ended.
        port: u16,
    },
    /// A timer `node` set for itself.
    Timer {
        /// The node that set the timer.
        node: u32,
        /// What the timer is for.
        kind: TimerKind,
        /// The setting's generation; a stale one is ignored.
        gen: u32,
        /// Which instance it is for (e.g. a flow's index).
        arg: u64,
    },
}

/// One pending event, ordered by [`Event::key`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Event {
    /// When it happens, in ps.
    pub time_ps: u64,
    /// Breaks ties at one time, from the model alone (the module's doc says how).
    pub tie: u64,
    /// What happens.
    pub what: What,
}

// One cache line per event: the queue's re-filing and the outboxes copy whole events, and
// 72-byte events cost 9% of the k = 32 benchmark's run time (see `crate::packet`).
const _: () = assert!(std::mem::size_of::<Event>() <= 64);

const CLASS_SHIFT: u32 = 62;
/// Timer keys: node id in bits 36..62, the node's timer sequence number in bits 0..36.
const TIMER_SEQ_BITS: u32 = 36;
/// Nodes a timer key can name.
pub const MAX_TIMER_NODES: u64 = 1 << (CLASS_SHIFT - TIMER_SEQ_BITS);

impl Event {
    /// `pkt` arrives at `time_ps` over link `link_id` at port `in_port` of `node`.
    #[inline]
    pub fn arrive(time_ps: u64, link_id: u32, node: u32, in_port: u16, pkt: Packet) -> Event {
        Event {
            time_ps,
            tie: (1 << CLASS_SHIFT) | link_id as u64,
            what: What::Arrive { node, in_port, pkt },
        }
    }
    /// Port `port` (global id `port_id`) of `node` finishes a transmission at `time_ps`.
    #[inline]
    pub fn tx_done(time_ps: u64, port_id: u32, node: u32, port: u16) -> Event {
        Event {
            time_ps,
            tie: port_id as u64,
            what: What::TxDone { node, port },
        }
    }
    /// Timer number `seq` of `node` (each timer a node sets takes the next number).
    #[inline]
    pub fn timer(time_ps: u64, node: u32, seq: u64, kind: TimerKind, gen: u32, arg: u64) -> Event {
        assert!(
            seq < 1 << TIMER_SEQ_BITS && (node as u64) < MAX_TIMER_NODES,
            "timer key overflow: node {node}, sequence {seq}"
        );
        Event {
            time_ps,
            tie: (2 << CLASS_SHIFT) | (node as u64) << TIMER_SEQ_BITS | seq,
            what: What::Timer {
                node,
                kind,
                gen,
                arg,
            },
        }
    }
    /// The node whose state this event touches.
    #[inline]
    pub fn node(&self) -> u32 {
        match self.what {
            What::Arrive { node, .. } | What::TxDone { node, .. } | What::Timer { node, .. } => {
                node
            }
        }
    }
    /// The event's place in the order: `(time_ps, tie)`, unique among pending events.
    #[inline]
    pub fn key(&self) -> (u64, u64) {
        (self.time_ps, self.tie)
    }
}

/// Where node logic puts the events it creates; the engine routes them to the owning
/// partition (local queue or outbox) and asserts that none is in the past.
pub trait Scheduler {
    /// Schedules `ev`, which must not be in the past.
    fn schedule(&mut self, ev: Event);
}

/// One logical timer of a node (e.g. the NIC's wake-up): the time it is set for and its
/// generation. Setting it again bumps the generation, so the earlier event is ignored when it
/// fires (lazy cancellation).
#[derive(Clone, Copy, Debug, Serialize, Deserialize)]
pub struct TimerSlot {
    /// The time the timer is set for, in ps.
    pub at_ps: u64,
    /// The current setting's generation.
    pub gen: u32,
}

impl Default for TimerSlot {
    fn default() -> Self {
        TimerSlot {
            at_ps: crate::time::NEVER_PS,
            gen: 0,
        }
    }
}

impl TimerSlot {
    /// Whether an event of generation `gen` is this slot's current setting.
    #[inline]
    pub fn fires(&self, gen: u32) -> bool {
        gen == self.gen && self.at_ps != crate::time::NEVER_PS
    }
    /// Marks the slot as fired (or cancelled).
    #[inline]
    pub fn clear(&mut self) {
        self.at_ps = crate::time::NEVER_PS;
        self.gen = self.gen.wrapping_add(1);
    }
}

/// Numbers the timers of one node, in the order it sets them.
#[derive(Clone, Copy, Debug, Default, Serialize, Deserialize)]
pub struct TimerSeq(u64);

impl TimerSeq {
    /// Sets `slot` to fire at `at_ps` and schedules its event.
    #[inline]
    pub fn set<S: Scheduler>(
        &mut self,
        slot: &mut TimerSlot,
        node: u32,
        kind: TimerKind,
        arg: u64,
        at_ps: u64,
        out: &mut S,
    ) {
        slot.gen = slot.gen.wrapping_add(1);
        slot.at_ps = at_ps;
        out.schedule(Event::timer(at_ps, node, self.0, kind, slot.gen, arg));
        self.0 += 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Collect(Vec<Event>);
    impl Scheduler for Collect {
        fn schedule(&mut self, ev: Event) {
            self.0.push(ev);
        }
    }

    #[test]
    fn re_arming_a_slot_makes_its_earlier_event_stale() {
        let mut seq = TimerSeq::default();
        let mut slot = TimerSlot::default();
        let mut out = Collect(vec![]);
        seq.set(&mut slot, 7, TimerKind::NicWake, 3, 1_000, &mut out);
        seq.set(&mut slot, 7, TimerKind::NicWake, 3, 500, &mut out);
        let gens: Vec<u32> = out
            .0
            .iter()
            .map(|e| match e.what {
                What::Timer { gen, .. } => gen,
                _ => unreachable!(),
            })
            .collect();
        assert!(!slot.fires(gens[0]) && slot.fires(gens[1]));
        // Distinct keys for the same node, ordered by the node's own sequence.
        assert!(out.0[0].tie < out.0[1].tie);
        slot.clear();
        assert!(!slot.fires(gens[1]), "a cleared slot fires no more");
    }

    #[test]
    fn timer_keys_sort_after_departures_and_arrivals_and_by_node() {
        let pkt = crate::packet::test_packet(crate::packet::PacketKind::Ack, 64);
        let tx = Event::tx_done(5, u32::MAX, 0, 0);
        let arrive = Event::arrive(5, u32::MAX, 0, 0, pkt);
        let t_low = Event::timer(5, 3, (1 << 36) - 1, TimerKind::NicWake, 0, 0);
        let t_high = Event::timer(5, 4, 0, TimerKind::NicWake, 0, 0);
        assert!(tx.key() < arrive.key() && arrive.key() < t_low.key());
        assert!(t_low.key() < t_high.key());
    }
}
