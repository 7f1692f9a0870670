//! A host: its NIC, the senders of the flows it has started, the receivers of the flows it is
//! receiving (when the transport or LB policy keeps per-flow receiver state), and its RNG
//! stream. It starts its fixed-start flows in order of start time (one cursor) and its
//! triggered flows when their dependencies have arrived (`triggers.rs`), asks the transport
//! which packet each flow sends next, answers data with ACKs (and trimmed headers with
//! NACKs), runs each flow's timers, and reports each flow's completion. Under NDP it also
//! pulls for the flows it receives (`pull_queue.rs`) and grants its own flows credit for
//! the pulls it receives.
//!
//! The parts: `send.rs` starts flows and picks the NIC's next packet, `receive.rs` answers
//! data, `feedback.rs` handles ACKs and NACKs, `pulls.rs` NDP's pulls, `timers.rs` the
//! timers (retransmission, pacing, wake-ups).

mod feedback;
mod pulls;
mod receive;
mod send;
mod timers;

use super::event::{Scheduler, TimerSeq, TimerSlot};
use super::link::finish_tx;
use super::nic::Nic;
use super::pull_queue::PullQueue;
use super::rotorlb::RotorLb;
use super::sent_flows::SentFlows;
use super::triggers::Triggers;
use crate::lb::{FlowPath, SubflowLoads};
use crate::metrics::Metrics;
use crate::model::Model;
use crate::packet::{FlowId, Packet, PacketKind};
use crate::rng::{stream, Purpose};
use crate::time::NEVER_PS;
use crate::topology::NodeId;
use crate::transport::{Receiver, Sender};
use crate::workload::Start;
use rand_pcg::Pcg32;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// A started flow of this host.
#[derive(Serialize, Deserialize)]
struct FlowSender {
    sender: Sender,
    path: FlowPath,
    /// The flow is in the NIC's round-robin (it has, or may have, a packet to send).
    in_rotation: bool,
    /// The flow's timers (reliable transports only: a paced all-to-all keeps millions of
    /// flows, which should not pay for them).
    timers: Option<Box<FlowTimers>>,
}

/// Timers of a reliable flow.
#[derive(Default, Serialize, Deserialize)]
struct FlowTimers {
    /// Retransmission timer.
    rto: TimerSlot,
    /// End of the CCA's pacing gap.
    pace: TimerSlot,
}

impl FlowSender {
    /// The placeholder of a flow not started yet (below a triggered flow that started
    /// first): no packets, out of the rotation, no timers.
    fn not_started() -> FlowSender {
        FlowSender {
            sender: Sender::Paced(crate::transport::paced::Paced::not_started()),
            path: FlowPath::RECEIVER,
            in_rotation: false,
            timers: None,
        }
    }

    /// Whether the record can go: a started flow, complete, out of the rotation, with no
    /// timer armed (a placeholder has no packets).
    fn finished(&self) -> bool {
        let started = !matches!(&self.sender, Sender::Paced(p) if p.is_placeholder());
        let idle = self
            .timers
            .as_ref()
            .is_none_or(|t| t.rto.at_ps == NEVER_PS && t.pace.at_ps == NEVER_PS);
        started && self.sender.is_complete() && !self.in_rotation && idle
    }

    /// The record of a bulk flow, which RotorLB sends: complete from the start (the
    /// receiver records its completion), so it is released like a completed flow.
    fn handed_to_rotorlb() -> FlowSender {
        FlowSender {
            sender: Sender::Paced(crate::transport::paced::Paced::completed()),
            path: FlowPath::RECEIVER,
            in_rotation: false,
            timers: None,
        }
    }

    fn timers(&mut self) -> &mut FlowTimers {
        self.timers.as_mut().expect("reliable flows have timers")
    }

    /// Whether the flow waits for the end of a pacing gap.
    fn pacing(&self) -> bool {
        self.timers
            .as_ref()
            .is_some_and(|t| t.pace.at_ps != NEVER_PS)
    }
}

/// A host's simulation state (one per host node; checkpointed whole).
#[derive(Serialize, Deserialize)]
pub struct Host {
    /// Its node id in the fabric.
    pub id: NodeId,
    pub(crate) nic: Nic,
    /// Started flows, by index among the host's flows (a triggered flow may start before
    /// flows of lower index: those not started yet hold [`FlowSender::not_started`]).
    flows: SentFlows<FlowSender>,
    /// Flows this host sends (the workload's count).
    n_flows: u32,
    /// Next flow to consider for a fixed start (triggered flows are passed over).
    cursor: u32,
    /// The workload has triggered flows: track arrivals and dependencies.
    triggered: bool,
    /// Boxed: hosts of workloads without triggers pay one pointer, not four maps.
    triggers: Box<Triggers>,
    completed: u32,
    /// Receiver state of incoming flows (only when needed; see `transport::receiver`).
    receivers: BTreeMap<FlowId, Receiver>,
    rng: Pcg32,
    timers: TimerSeq,
    /// Its flows' windows are traced (`report.trace_hosts`).
    traced: bool,
    /// Ethereal: this source's active subflows by path choice (empty for other policies).
    subflow_loads: SubflowLoads,
    /// NDP: the pulls this host owes the flows it receives (empty otherwise).
    pulls: PullQueue,
    /// Opera: RotorLB, which sends this host's bulk flows and relays others' (None on
    /// other fabrics).
    rlb: Option<Box<RotorLb>>,
    /// Flows whose completion this host records: those it sends, except bulk ones, plus the
    /// bulk flows it receives (RotorLB's receiver records the FCT).
    expected: u64,
}

/// The parts of an ACK or NACK a host fills in.
struct Reply {
    kind: PacketKind,
    seq: u32,
    cumulative: u32,
    sack: u64,
    flags: u8,
}

impl Host {
    /// Opera: this host's RotorLB state (None on other fabrics).
    pub(crate) fn rotorlb_mut(&mut self) -> Option<&mut RotorLb> {
        self.rlb.as_deref_mut()
    }

    pub(crate) fn new(m: &Model, id: NodeId) -> Host {
        Host {
            id,
            nic: Nic::new(m.transport.ndp().is_some()),
            flows: SentFlows::default(),
            n_flows: m.workload.flows_of(id),
            cursor: 0,
            triggered: m.workload.has_triggers(),
            triggers: Box::default(),
            completed: 0,
            receivers: BTreeMap::new(),
            rng: stream(m.seed, id as u64, Purpose::HostLb),
            timers: TimerSeq::default(),
            traced: m.trace_hosts.contains(&id),
            subflow_loads: SubflowLoads::default(),
            pulls: PullQueue::default(),
            rlb: m
                .rotor
                .as_ref()
                .map(|_| Box::new(RotorLb::new(m.fabric.tier_uplinks(1) as usize))),
            expected: (m.workload.flows_of(id) as i64
                + m.rotor
                    .as_ref()
                    .map_or(0, |r| r.completions_shift[id as usize])) as u64,
        }
    }

    /// Sets the wake-up that starts this host, if it has anything to send.
    pub(crate) fn start<S: Scheduler>(&mut self, m: &Model, out: &mut S) {
        if let Some(first) = self.next_fixed_start_ps(m) {
            self.set_wake(first, out);
        }
    }

    /// The start time of the next fixed-start flow, moving the cursor past triggered flows.
    fn next_fixed_start_ps(&mut self, m: &Model) -> Option<u64> {
        while self.cursor < self.n_flows {
            match m.workload.flow(self.id, self.cursor).start {
                Start::At(t) => return Some(t),
                Start::After { .. } => self.cursor += 1,
            }
        }
        None
    }

    /// Sender records this host holds (running flows, placeholders below a triggered flow
    /// that started first, completed ones awaiting compaction): what its sender state grows
    /// with.
    pub fn sender_records(&self) -> usize {
        self.flows.held()
    }

    /// Sender records not released (running flows, and flows above the oldest running one).
    pub fn unreleased_records(&self) -> usize {
        self.flows.unreleased()
    }

    /// Entries of this host's trigger bookkeeping (0 for workloads without triggers).
    pub fn trigger_entries(&self) -> usize {
        self.triggers.entries()
    }

    /// Incoming flows whose receiver state this host still keeps.
    pub fn receiver_states(&self) -> usize {
        self.receivers.len()
    }

    /// Flows of this host that have not completed.
    pub fn incomplete_flows(&self) -> u64 {
        self.expected - self.completed as u64
    }

    pub(crate) fn on_arrive<S: Scheduler>(
        &mut self,
        m: &Model,
        now_ps: u64,
        pkt: Packet,
        out: &mut S,
        mx: &mut Metrics,
    ) {
        debug_assert_eq!(pkt.dst, self.id);
        if let Some(r) = self.rlb.as_deref_mut() {
            if let Some(done) = r.on_arrive(m, self.id, now_ps, pkt, &mut self.nic, mx) {
                self.completed += done as u32;
                self.try_send(m, now_ps, out, mx);
                return;
            }
        }
        let wake = match pkt.kind {
            PacketKind::Data if m.transport.is_reliable() => {
                self.on_reliable_data(m, now_ps, pkt, mx);
                if m.transport.ndp().is_some() {
                    self.pull_for(m, now_ps, &pkt, out);
                }
                true
            }
            PacketKind::Data => {
                self.on_paced_data(m, now_ps, pkt, mx);
                true
            }
            PacketKind::Ack => self.on_ack(m, now_ps, pkt, out, mx),
            PacketKind::Nack => self.on_nack(m, now_ps, pkt, out, mx),
            PacketKind::Pull => self.on_pull(now_ps, pkt, out, mx),
            PacketKind::Advert => unreachable!("LB adverts travel between switches only"),
        };
        if wake {
            self.try_send(m, now_ps, out, mx);
        }
    }

    pub(crate) fn on_tx_done<S: Scheduler>(
        &mut self,
        m: &Model,
        now_ps: u64,
        out: &mut S,
        mx: &mut Metrics,
    ) {
        let clipped = finish_tx(m, self.id, 0, &mut self.nic.port, now_ps, out, |_, _| {});
        assert!(clipped.is_none(), "a host link is never dark");
        self.try_send(m, now_ps, out, mx);
    }
}
