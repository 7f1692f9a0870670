//! A host: its NIC, the senders of the flows it has started, the receivers of the flows it is
//! receiving (when the transport or LB policy keeps per-flow receiver state), and its RNG
//! stream. It starts its fixed-start flows in order of start time (one cursor) and its
//! triggered flows when their dependencies have arrived (`triggers.rs`), asks the transport
//! which packet each flow sends next, answers data with ACKs (and trimmed headers with
//! NACKs), runs each flow's timers, and reports each flow's completion. Under NDP it also
//! pulls for the flows it receives (`pull_queue.rs`) and grants its own flows credit for
//! the pulls it receives.

use super::completion::{record_completion, record_send};
use super::event::{Scheduler, TimerKind, TimerSeq, TimerSlot};
use super::link::{finish_tx, start_tx};
use super::nic::{Nic, Pick};
use super::pull_queue::{Pull, PullQueue};
use super::rotorlb::RotorLb;
use super::sent_flows::SentFlows;
use super::triggers::Triggers;
use crate::lb::{Feedback, FlowPath, SubflowLoads};
use crate::metrics::{record_indexed_ns, record_ns, CwndPoint, FlowEvent, Metrics};
use crate::model::Model;
use crate::packet::{flags, flow_index, flow_src, FlowId, Packet, PacketKind, NO_VIA};
use crate::rng::{stream, Purpose};
use crate::time::{NEVER_PS, PS_PER_NS};
use crate::topology::NodeId;
use crate::transport::receiver::{sack_base, Urgent};
use crate::transport::{rotor, AckInfo, NackFrom, Receiver, Sender, TransportParams};
use crate::workload::{Flow, Start};
use hdrhistogram::Histogram;
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

#[derive(Serialize, Deserialize)]
pub struct Host {
    pub id: NodeId,
    pub nic: Nic,
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
    pub fn rotorlb_mut(&mut self) -> Option<&mut RotorLb> {
        self.rlb.as_deref_mut()
    }

    pub fn new(m: &Model, id: NodeId) -> Host {
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
    pub fn start<S: Scheduler>(&mut self, m: &Model, out: &mut S) {
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

    pub fn on_arrive<S: Scheduler>(
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

    /// Queues an ACK for data packet `pkt` (paced transport), with the flow's receiver LB
    /// state if the host keeps one.
    fn reply(&mut self, m: &Model, pkt: &Packet, r: Reply) {
        let mut fresh_path = FlowPath::RECEIVER;
        let path = match self.receivers.get_mut(&pkt.flow_id()) {
            Some(rcv) => &mut rcv.path,
            None => &mut fresh_path,
        };
        queue_reply(m, self.id, &mut self.nic, &mut self.rng, path, pkt, r);
    }

    fn on_paced_data(&mut self, m: &Model, now_ps: u64, pkt: Packet, mx: &mut Metrics) {
        mx.counters.data_delivered += 1;
        let payload = (pkt.size_bytes - m.header_bytes) as u64;
        mx.counters.payload_bytes_delivered += payload;
        if let Some(series) = &mut mx.series {
            series.delivered(now_ps, payload);
        }
        record_latency(
            m,
            &pkt,
            now_ps,
            &mut mx.latency_ns,
            &mut mx.phase_latency_ns,
        );
        let keep = m.lb.host.needs_receiver_state();
        if keep {
            self.receivers
                .entry(pkt.flow_id())
                .or_default()
                .on_data(pkt.seq);
        }
        // The receiver's view of the flow when it keeps state; otherwise no cumulative
        // information (0, and an empty SACK).
        let (cumulative, sack) = match self.receivers.get(&pkt.flow_id()).filter(|_| keep) {
            Some(r) => (r.received.cumulative(), r.received.sack_above_cumulative()),
            None => (0, 0),
        };
        let echo = if pkt.ecn() { flags::ECN_ECHO } else { 0 };
        let reply = Reply {
            kind: PacketKind::Ack,
            seq: pkt.seq,
            cumulative,
            sack,
            flags: echo,
        };
        self.reply(m, &pkt, reply);
        if keep {
            self.forget_finished_receiver(m, pkt.flow_id());
        }
        // A trimmed header is no data: under the paced transport its flow never arrives.
        if self.triggered && !pkt.is_trimmed() {
            let packets = m.packets_for(m.workload.flow_by_id(pkt.flow_id()).bytes);
            if self.triggers.count_packet(pkt.flow_id(), packets) {
                self.message_received(m, pkt.flow_id(), now_ps, mx);
            }
        }
    }

    /// Incoming flow `id` has fully arrived: its dependents here may become ready.
    fn message_received(&mut self, m: &Model, id: FlowId, now_ps: u64, mx: &mut Metrics) {
        if self.traced {
            mx.flow_events
                .push(FlowEvent::received(now_ps, self.id, id));
        }
        let (w, me, t) = (&m.workload, self.id, &mut self.triggers);
        w.for_each_dependent(id, |i| {
            let Start::After { delay_ps } = w.flow(me, i).start else {
                unreachable!("dependents start on a trigger")
            };
            t.dependency_arrived(i, w.dep_count(me, i), now_ps, delay_ps);
        });
    }

    /// Drops a receiver's state once every packet of its flow has arrived (paced transport).
    fn forget_finished_receiver(&mut self, m: &Model, id: FlowId) {
        let packets = m.packets_for(m.workload.flow_by_id(id).bytes);
        if self
            .receivers
            .get(&id)
            .is_some_and(|r| r.received.len() >= packets)
        {
            self.receivers.remove(&id);
        }
    }

    /// A data packet or trimmed header of a reliable flow: record it, and ACK (coalesced) or
    /// NACK.
    fn on_reliable_data(&mut self, m: &Model, now_ps: u64, pkt: Packet, mx: &mut Metrics) {
        let TransportParams::Reliable {
            ack_coalesce_bytes, ..
        } = m.transport
        else {
            unreachable!("reliable data under the paced transport")
        };
        let c = &mut mx.counters;
        let echo = if pkt.ecn() { flags::ECN_ECHO } else { 0 };
        let rcv = self.receivers.entry(pkt.flow_id()).or_default();
        // The flow's last packet has arrived (its dependents may start).
        let mut arrived = false;
        let kind = if pkt.is_trimmed() {
            c.headers_delivered += 1;
            if rcv.received.contains(pkt.seq) {
                PacketKind::Ack
            } else {
                c.nacks_sent += 1;
                PacketKind::Nack
            }
        } else {
            c.data_delivered += 1;
            record_latency(
                m,
                &pkt,
                now_ps,
                &mut mx.latency_ns,
                &mut mx.phase_latency_ns,
            );
            let payload = (pkt.size_bytes - m.header_bytes) as u64;
            let urgent = Urgent {
                ecn: pkt.ecn(),
                ack_req: pkt.flags & flags::ACK_REQ != 0,
            };
            let wire = pkt.size_bytes as u64;
            let v = rcv.on_reliable_data(pkt.seq, wire, urgent, ack_coalesce_bytes);
            arrived = v.fresh
                && self.triggered
                && rcv.received.len() == m.packets_for(m.workload.flow_by_id(pkt.flow_id()).bytes);
            if v.fresh {
                c.payload_bytes_delivered += payload;
                if let Some(series) = &mut mx.series {
                    series.delivered(now_ps, payload);
                }
            } else {
                c.duplicates_delivered += 1;
            }
            if !v.ack_now {
                if arrived {
                    self.message_received(m, pkt.flow_id(), now_ps, mx);
                }
                return;
            }
            PacketKind::Ack
        };
        // The reply echoes ECN and the transmission number, and a NACK the last-hop mark.
        let reply = Reply {
            kind,
            seq: pkt.seq,
            cumulative: rcv.received.cumulative(),
            sack: rcv.sack_bitmap(pkt.seq),
            flags: echo | (pkt.flags & (flags::LAST_HOP | flags::TX_MASK)),
        };
        // The receiver found above, not a second lookup per packet.
        queue_reply(
            m,
            self.id,
            &mut self.nic,
            &mut self.rng,
            &mut rcv.path,
            &pkt,
            reply,
        );
        if arrived {
            self.message_received(m, pkt.flow_id(), now_ps, mx);
        }
    }

    /// Handles an ACK; returns whether a flow the transport had held back may send again.
    fn on_ack<S: Scheduler>(
        &mut self,
        m: &Model,
        now_ps: u64,
        pkt: Packet,
        out: &mut S,
        mx: &mut Metrics,
    ) -> bool {
        let c = &mut mx.counters;
        c.acks_delivered += 1;
        let i = pkt.flow_index;
        let Some(f) = self.flows.get_mut(i) else {
            c.stale_acks += 1;
            return false;
        };
        let info = AckInfo {
            seq: pkt.seq,
            cumulative: pkt.ack,
            sack: pkt.sack(),
            ecn_echo: pkt.flags & flags::ECN_ECHO != 0,
            entropy: pkt.entropy,
            tx_echo: (pkt.flags & flags::TX_MASK) >> flags::TX_SHIFT,
            sack_base: sack_base(pkt.seq, pkt.ack),
        };
        let was_complete = f.sender.is_complete();
        let newly = match &mut f.sender {
            Sender::Paced(s) => s.on_ack(&info, now_ps).newly_acked,
            Sender::Reliable(s) => {
                let e = s.on_ack(&info, now_ps);
                c.reorder_losses += e.reorder_losses as u64;
                if self.traced {
                    mx.cwnd.push(CwndPoint {
                        time_ps: now_ps,
                        host: self.id,
                        flow: i,
                        cwnd_bytes: s.cwnd_bytes(),
                        in_flight_bytes: s.in_flight_bytes(),
                        srtt_ps: s.srtt_ps(),
                    });
                }
                e.newly_acked
            }
        };
        c.stale_acks += (newly == 0) as u64;
        let what = Feedback::of_ack(info.ecn_echo);
        m.lb.host.feedback(&mut f.path, info.entropy, what, now_ps);
        if !was_complete && f.sender.is_complete() {
            let flow = m.workload.flow(self.id, i);
            let start = match flow.start {
                Start::At(t) => t,
                Start::After { .. } => self.triggers.completed(i).expect("started on a trigger"),
            };
            record_completion(mx, m, (self.id, i), &flow, start, now_ps);
            self.completed += 1;
            m.lb.host
                .end_flow(&m.fabric, &f.path, &mut self.subflow_loads);
        }
        let readmitted = self.after_progress(i, now_ps, out);
        self.flows.release_front_while(FlowSender::finished);
        readmitted
    }

    /// A NACK: the trimmed packet is queued for retransmission.
    fn on_nack<S: Scheduler>(
        &mut self,
        m: &Model,
        now_ps: u64,
        pkt: Packet,
        out: &mut S,
        mx: &mut Metrics,
    ) -> bool {
        let c = &mut mx.counters;
        c.acks_delivered += 1;
        let i = pkt.flow_index;
        let last_hop = pkt.flags & flags::LAST_HOP != 0;
        let from = if pkt.flags & flags::RETURNED != 0 {
            NackFrom::Switch
        } else {
            NackFrom::Receiver
        };
        let fresh = match self.flows.get_mut(i).map(|f| &mut f.sender) {
            Some(Sender::Reliable(s)) => {
                let tx_echo = (pkt.flags & flags::TX_MASK) >> flags::TX_SHIFT;
                s.on_nack(pkt.seq, tx_echo, last_hop, from, now_ps)
            }
            _ => false,
        };
        if !fresh {
            c.stale_acks += 1;
            return false;
        }
        // A last-hop trim means incast, not a bad path (as UEC htsim's `processNack`).
        let what = Feedback::of_nack(last_hop, pkt.flags & flags::ECN_ECHO != 0);
        let f = &mut self.flows[i];
        m.lb.host.feedback(&mut f.path, pkt.entropy, what, now_ps);
        self.after_progress(i, now_ps, out)
    }

    /// An NDP pull: the flow may send as many more packets as the pull number went up.
    fn on_pull<S: Scheduler>(
        &mut self,
        now_ps: u64,
        pkt: Packet,
        out: &mut S,
        mx: &mut Metrics,
    ) -> bool {
        let c = &mut mx.counters;
        c.acks_delivered += 1;
        c.pulls_delivered += 1;
        let i = pkt.flow_index;
        // A pull for a flow whose record was released (complete) pulls nothing.
        let Some(Sender::Reliable(s)) = self.flows.get_mut(i).map(|f| &mut f.sender) else {
            return false;
        };
        if s.on_pull(pkt.seq, now_ps) == 0 {
            return false; // overtaken by a later pull
        }
        self.after_progress(i, now_ps, out)
    }

    /// NDP: a data packet or header of incoming flow `pkt` arrived (and was recorded): one
    /// more pull for the flow, or, once all its data is here, none of those still waiting.
    fn pull_for<S: Scheduler>(&mut self, m: &Model, now_ps: u64, pkt: &Packet, out: &mut S) {
        let id = pkt.flow_id();
        let packets = m.packets_for(m.workload.flow_by_id(id).bytes);
        let complete = self
            .receivers
            .get(&id)
            .is_some_and(|r| r.received.len() >= packets);
        if complete {
            self.pulls.release(id);
        } else {
            self.pulls.add(id, pkt.entropy);
        }
        self.serve_pulls(m, now_ps, out);
    }

    /// Sends the next pull if the pacer allows it now, and sets the pacer's timer while
    /// pulls wait. The timer, while set, is the only one to serve the queue.
    fn serve_pulls<S: Scheduler>(&mut self, m: &Model, now_ps: u64, out: &mut S) {
        if self.pulls.timer.at_ps != NEVER_PS || self.pulls.is_empty() {
            return;
        }
        let gap_ps = self.pull_gap_ps(m);
        let per_flow = m.transport.ndp().is_some_and(|n| n.per_flow_pacer);
        if !per_flow {
            let ready_ps = self.pulls.ready_ps(gap_ps);
            if ready_ps > now_ps {
                self.set_pull_timer(ready_ps, out);
                return;
            }
            if let Some(pull) = self.pulls.pop(now_ps) {
                self.queue_pull(m, pull);
            }
            if !self.pulls.is_empty() {
                self.set_pull_timer(now_ps + gap_ps, out);
            }
            return;
        }
        // One pacer per flow: every flow whose own gap has passed pulls now.
        while let Some(pull) = self.pulls.pop_ready(now_ps, gap_ps) {
            self.queue_pull(m, pull);
        }
        if let Some(ready_ps) = self.pulls.next_ready_ps(gap_ps, true) {
            self.set_pull_timer(ready_ps.max(now_ps + 1), out);
        }
    }

    fn set_pull_timer<S: Scheduler>(&mut self, at_ps: u64, out: &mut S) {
        let (id, slot) = (self.id, &mut self.pulls.timer);
        self.timers
            .set(slot, id, TimerKind::PullPace, 0, at_ps, out);
    }

    /// The least time between two pulls: a full data packet's wire time (inter-frame gap
    /// included) on this host's link, over `host.ndp.pull_rate`.
    fn pull_gap_ps(&self, m: &Model) -> u64 {
        let ndp = m.transport.ndp().expect("pulls under NDP only");
        let full = if ndp.payload_gap {
            m.payload_bytes as u64
        } else {
            m.payload_bytes as u64 + m.header_bytes as u64 + m.interframe_bytes as u64
        };
        let wire_ps = m.fabric.link(self.id, 0).serialization_ps(full);
        (wire_ps as f64 / ndp.pull_rate).round() as u64
    }

    /// Queues `pull` on the NIC (with the control packets), routed like the flow's ACKs.
    fn queue_pull(&mut self, m: &Model, pull: Pull) {
        // The flow's data packet as the reply code sees it: sender, index, entropy.
        let data = Packet {
            sent_ps: 0,
            flow_index: flow_index(pull.flow),
            src: flow_src(pull.flow),
            dst: self.id,
            seq: pull.pull_no,
            ack: 0,
            size_bytes: 0,
            via: NO_VIA,
            entropy: pull.entropy,
            kind: PacketKind::Data,
            flags: 0,
        };
        let rcv = self.receivers.entry(pull.flow).or_default();
        let reply = Reply {
            kind: PacketKind::Pull,
            seq: pull.pull_no,
            cumulative: rcv.received.cumulative(),
            sack: 0,
            flags: 0,
        };
        let (id, nic, rng) = (self.id, &mut self.nic, &mut self.rng);
        queue_reply(m, id, nic, rng, &mut rcv.path, &data, reply);
    }

    /// After an ACK, NACK or timeout of flow `i`: re-arms its timer and puts it back in the
    /// NIC's rotation if it may send; returns whether it was re-admitted.
    fn after_progress<S: Scheduler>(&mut self, i: u32, now_ps: u64, out: &mut S) -> bool {
        let f = &mut self.flows[i];
        arm_rto(&mut self.timers, self.id, i, f, now_ps, out);
        let readmit = f.sender.has_data() && !f.in_rotation && !f.pacing();
        if readmit {
            f.in_rotation = true;
            self.nic.active.push_back(i);
        }
        readmit
    }

    pub fn on_tx_done<S: Scheduler>(
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

    #[allow(clippy::too_many_arguments)]
    pub fn on_timer<S: Scheduler>(
        &mut self,
        m: &Model,
        now_ps: u64,
        kind: TimerKind,
        gen: u32,
        arg: u64,
        out: &mut S,
        mx: &mut Metrics,
    ) {
        let released = self.flows.released(arg as u32);
        let flow = self.flows.get_mut(arg as u32);
        match kind {
            // A timer of a completed flow whose record was released: it would not fire.
            TimerKind::Rto | TimerKind::FlowPace if released => return,
            TimerKind::NicWake if self.nic.wake.fires(gen) => {
                self.nic.wake.clear();
            }
            TimerKind::Rto => {
                let f = flow.expect("timers belong to started flows");
                if !f.timers().rto.fires(gen) {
                    return;
                }
                f.timers().rto.clear();
                let Sender::Reliable(s) = &mut f.sender else {
                    unreachable!("only reliable flows arm timers")
                };
                let expired = s.on_timeout(now_ps);
                mx.counters.timeouts += expired.len() as u64;
                // NDP: a flow starved by a lost pull gives itself a credit.
                mx.counters.timeouts += s.take_starved_credit(now_ps) as u64;
                let what = Feedback::Timeout {
                    recent_max_rtt_ps: s.recent_max_rtt_ps(),
                    base_rtt_ps: s.base_rtt_ps(),
                };
                for (_, entropy) in expired {
                    m.lb.host.feedback(&mut f.path, entropy, what, now_ps);
                }
                self.after_progress(arg as u32, now_ps, out);
            }
            TimerKind::FlowPace => {
                let f = flow.expect("timers belong to started flows");
                if !f.timers().pace.fires(gen) {
                    return;
                }
                f.timers().pace.clear();
                let i = arg as u32;
                if self.after_progress(i, now_ps, out) && m.workload.pinned(self.id, i).is_some() {
                    // A background flow keeps its rate: its due packet goes before the
                    // workload's flows (which share what is left of the NIC).
                    let back = self.nic.active.pop_back();
                    debug_assert_eq!(back, Some(i));
                    self.nic.active.push_front(i);
                }
            }
            TimerKind::PullPace if self.pulls.timer.fires(gen) => {
                self.pulls.timer.clear();
                self.serve_pulls(m, now_ps, out);
            }
            TimerKind::NicWake | TimerKind::PullPace => return, // superseded
            TimerKind::RlbSlot => {
                let r = self
                    .rlb
                    .as_deref_mut()
                    .expect("RotorLB hosts set slot timers");
                if !r.on_slot(m, self.id, now_ps, gen) {
                    return;
                }
            }
            TimerKind::SwitchLb => unreachable!("host {} has no switch LB", self.id),
        }
        self.try_send(m, now_ps, out, mx);
    }

    /// Wakes the NIC at `at_ps` unless it already wakes between now and then.
    fn set_wake<S: Scheduler>(&mut self, at_ps: u64, out: &mut S) {
        let w = &self.nic.wake;
        if w.at_ps != NEVER_PS && w.at_ps <= at_ps {
            return;
        }
        let (id, slot) = (self.id, &mut self.nic.wake);
        self.timers.set(slot, id, TimerKind::NicWake, 0, at_ps, out);
    }

    /// Starts every flow whose start time has come: fixed-start flows in order, then
    /// triggered flows that are due.
    fn start_due_flows(&mut self, m: &Model, now_ps: u64, mx: &mut Metrics) {
        while self.cursor < self.n_flows {
            let i = self.cursor;
            let f = m.workload.flow(self.id, i);
            match f.start {
                Start::At(t) if t > now_ps => break,
                Start::At(t) => {
                    if self.traced && self.triggered {
                        let id = crate::packet::flow_id(self.id, i);
                        mx.flow_events.push(FlowEvent::started(t, self.id, id));
                    }
                    self.start_flow(m, i, &f)
                }
                Start::After { .. } => {}
            }
            self.cursor += 1;
        }
        if self.triggered {
            while let Some((t, i)) = self.triggers.take_due(now_ps) {
                if self.traced {
                    let id = crate::packet::flow_id(self.id, i);
                    mx.flow_events.push(FlowEvent::started(t, self.id, id));
                }
                self.start_flow(m, i, &m.workload.flow(self.id, i));
            }
        }
    }

    /// Starts flow `i` (`f`).
    fn start_flow(&mut self, m: &Model, i: u32, f: &Flow) {
        let packets = m.packets_for(f.bytes);
        assert!(
            packets <= u32::MAX as u64,
            "flow {i} of host {} has more than 2^32 packets",
            self.id
        );
        if let Some(r) = self.rlb.as_deref_mut().filter(|_| m.is_bulk(self.id, i)) {
            r.add_flow(i, f.dst, packets as u32);
            self.flows
                .insert(i, FlowSender::handed_to_rotorlb(), FlowSender::not_started);
            return;
        }
        let full = m.payload_bytes + m.header_bytes;
        let last = m.data_size(f.bytes, packets as u32 - 1);
        let env = m.cc_env(self.id, f.dst);
        let bdp_pkts = env.bdp_bytes / env.mtu_bytes;
        let lb = &m.lb;
        let mut path = lb
            .host
            .start_flow(lb.cfg.entropy_paths, bdp_pkts, &mut self.rng);
        lb.host.assign_subflows(
            &m.fabric,
            &mut path,
            self.id,
            f.dst,
            packets,
            &mut self.subflow_loads,
            &mut self.rng,
        );
        // Background flows pace themselves with the flow pacing timer.
        let timed = m.transport.is_reliable() || m.workload.pinned(self.id, i).is_some();
        let sender = FlowSender {
            sender: Sender::new(
                &m.transport,
                packets as u32,
                full,
                last,
                &env,
                m.flow_paths(self.id, f.dst),
            ),
            path,
            in_rotation: true,
            timers: timed.then(Box::default),
        };
        // A triggered flow may start before flows of lower index (placeholders).
        self.flows.insert(i, sender, FlowSender::not_started);
        self.nic.active.push_back(i);
    }

    fn try_send<S: Scheduler>(&mut self, m: &Model, now_ps: u64, out: &mut S, mx: &mut Metrics) {
        if self.nic.port.busy {
            return;
        }
        self.start_due_flows(m, now_ps, mx);
        if let Some(r) = self.rlb.as_deref_mut() {
            r.arm(m, self.id, now_ps, &mut self.timers, out);
        }
        // Flows whose transport holds their next packet back leave the rotation; try the
        // next one (a loop, not recursion: thousands of flows may be held back at once).
        let mut pkt = loop {
            match self.nic.pick(now_ps) {
                Some(Pick::Control) => {
                    let pkt = self.nic.control.pop_front().expect("picked control");
                    mx.counters.acks_sent += 1;
                    mx.counters.pulls_sent += (pkt.kind == PacketKind::Pull) as u64;
                    break pkt;
                }
                Some(Pick::Data) => {
                    if let Some(p) = self.next_data(m, now_ps, out, mx) {
                        break p;
                    }
                }
                None => {
                    // RotorLB's committed packets go at the NIC's lowest priority.
                    let begin = self.nic.start_time(now_ps);
                    let rlb = self.rlb.as_deref_mut();
                    if let Some(p) = rlb.and_then(|r| r.next_packet(begin, &mut mx.counters)) {
                        record_send(mx, m, (p.src, p.flow_index), begin);
                        break p;
                    }
                    let rlb_due = self.rlb.as_ref().and_then(|r| r.next_due_ps(begin));
                    let mut next_start = self.next_fixed_start_ps(m);
                    if let Some(t) = self.triggered.then(|| self.triggers.next_ready_ps()) {
                        next_start = next_start.into_iter().chain(t).min();
                    }
                    let at = self.nic.data_ready_at().or(next_start);
                    if let Some(at) = at.into_iter().chain(rlb_due).min() {
                        self.set_wake(at, out);
                    }
                    return;
                }
            }
        };
        let begin = self.nic.start_time(now_ps);
        let wire = m
            .fabric
            .link(self.id, 0)
            .serialization_ps(pkt.size_bytes as u64 + m.interframe_bytes as u64);
        let pick = if pkt.is_data() {
            Pick::Data
        } else {
            Pick::Control
        };
        if let Some(o) = m.fabric.opera() {
            if rotor::is_rlb(pkt.via) {
                // RotorLB keeps its own pacing and its mark (no label: it is not routed).
                self.nic.port.push(pkt, now_ps);
                start_tx(m, self.id, 0, &mut self.nic.port, now_ps, out);
                return;
            }
            // Opera's label: the superslice in which the NIC starts sending the packet.
            pkt.via = o.label(begin);
        }
        self.nic.picked(pick, begin, wire, m.load_ppm);
        self.nic.port.push(pkt, now_ps);
        let started = start_tx(m, self.id, 0, &mut self.nic.port, now_ps, out);
        debug_assert_eq!(started, begin);
    }

    /// The next data packet of the first active flow, or `None` if its transport holds it
    /// back (the flow leaves the rotation until an acknowledgement, a timer or the end of
    /// its pacing gap re-admits it).
    fn next_data<S: Scheduler>(
        &mut self,
        m: &Model,
        now_ps: u64,
        out: &mut S,
        mx: &mut Metrics,
    ) -> Option<Packet> {
        let i = self.nic.active.pop_front().expect("picked data");
        let begin = self.nic.start_time(now_ps);
        let f = &mut self.flows[i];
        let Some(send) = f.sender.next_seq(begin) else {
            f.in_rotation = false;
            if let Sender::Reliable(s) = &f.sender {
                if let Some(at) = s.pacing_wait_until(begin) {
                    arm_pace(&mut self.timers, self.id, i, f, at, out);
                }
            }
            return None;
        };
        let pinned = m.workload.pinned(self.id, i);
        if f.sender.has_data() && pinned.is_none() {
            self.nic.active.push_back(i);
        } else {
            f.in_rotation = false;
        }
        if let (Some(pin), true) = (pinned, f.sender.has_data()) {
            // A background flow sends its next packet one gap after this one's start.
            arm_pace(&mut self.timers, self.id, i, f, begin + pin.gap_ps, out);
        }
        let flow = m.workload.flow(self.id, i);
        let (entropy, mut via) = m.lb.host.next_packet(
            &m.fabric,
            &mut f.path,
            self.id,
            flow.dst,
            send.seq,
            None,
            m.lb.cfg.entropy_paths,
            &mut self.rng,
        );
        if let Some(pin) = pinned {
            via = pin.via;
        }
        if let Sender::Reliable(s) = &mut f.sender {
            s.set_entropy(send.seq, entropy);
        }
        arm_rto(&mut self.timers, self.id, i, f, now_ps, out);
        let c = &mut mx.counters;
        c.data_sent += 1;
        c.retransmissions += send.retransmission as u64;
        record_send(mx, m, (self.id, i), begin);
        Some(Packet {
            sent_ps: begin,
            flow_index: i,
            src: self.id,
            dst: flow.dst,
            seq: send.seq,
            ack: 0,
            size_bytes: m.data_size(flow.bytes, send.seq),
            via,
            entropy,
            kind: PacketKind::Data,
            flags: self.data_flags(m, &send)
                | match pinned {
                    Some(_) => 0,
                    None => m.lb.host.data_flags(via),
                },
        })
    }
}

impl Host {
    /// Flags of a data packet: under the reliable transport, the ACK request and the
    /// transmission number (the paced transport's packets carry none, as before).
    fn data_flags(&self, m: &Model, send: &crate::transport::Send) -> u8 {
        if !m.transport.is_reliable() {
            return 0;
        }
        let req = if send.ack_req { flags::ACK_REQ } else { 0 };
        req | (send.tx & 3) << flags::TX_SHIFT
    }
}

/// Queues an ACK or NACK for data packet `pkt` on the NIC; `path` is the receiver's LB state
/// for the flow. Reliable transports echo the data packet's entropy value (the sender's LB
/// feedback needs it); the paced transport lets the host policy choose, as before.
#[allow(clippy::too_many_arguments)]
fn queue_reply(
    m: &Model,
    id: NodeId,
    nic: &mut Nic,
    rng: &mut Pcg32,
    path: &mut FlowPath,
    pkt: &Packet,
    r: Reply,
) {
    let (mut entropy, via) = m.lb.host.next_packet(
        &m.fabric,
        path,
        id,
        pkt.src,
        pkt.seq,
        Some(pkt.entropy),
        m.lb.cfg.entropy_paths,
        rng,
    );
    if m.transport.is_reliable() {
        entropy = pkt.entropy;
    }
    nic.control.push_back(Packet {
        sent_ps: r.sack,
        flow_index: pkt.flow_index,
        src: id,
        dst: pkt.src,
        seq: r.seq,
        ack: r.cumulative,
        size_bytes: m.ack_bytes,
        via,
        entropy,
        kind: r.kind,
        flags: r.flags,
    });
}

/// Arms flow `i`'s retransmission timer for its oldest outstanding packet, unless it is set
/// to fire no later (a timer that fires early finds nothing due and re-arms: cheaper than
/// re-arming on every ACK).
/// Wakes flow `i` at `at_ps` to send again (a CCA's pacing gap, a background flow's rate).
fn arm_pace<S: Scheduler>(
    timers: &mut TimerSeq,
    host: NodeId,
    i: u32,
    f: &mut FlowSender,
    at_ps: u64,
    out: &mut S,
) {
    timers.set(
        &mut f.timers().pace,
        host,
        TimerKind::FlowPace,
        i as u64,
        at_ps,
        out,
    );
}

fn arm_rto<S: Scheduler>(
    timers: &mut TimerSeq,
    host: NodeId,
    i: u32,
    f: &mut FlowSender,
    now_ps: u64,
    out: &mut S,
) {
    let (Sender::Reliable(s), Some(t)) = (&mut f.sender, &mut f.timers) else {
        return;
    };
    // A sample may shrink the RTO below the oldest packet's age: then it is due now (as
    // htsim's `startRTO` clamps).
    match s.rto_deadline_ps().map(|due| due.max(now_ps)) {
        Some(due) if t.rto.at_ps == NEVER_PS || due < t.rto.at_ps => {
            timers.set(&mut t.rto, host, TimerKind::Rto, i as u64, due, out);
        }
        None if t.rto.at_ps != NEVER_PS => t.rto.clear(),
        _ => {}
    }
}

/// Records a whole data packet's one-way latency, and in its flow's phase's histogram if the
/// flow belongs to a phase (`pkt.src` is the flow's source).
#[inline]
fn record_latency(
    m: &Model,
    pkt: &Packet,
    now_ps: u64,
    latency_ns: &mut Histogram<u64>,
    phase_latency_ns: &mut Vec<Histogram<u64>>,
) {
    let ns = (now_ps - pkt.sent_ps) / PS_PER_NS;
    record_ns(latency_ns, ns);
    if let Some(phase) = m.workload.phase_of(pkt.src, pkt.flow_index) {
        record_indexed_ns(phase_latency_ns, phase as usize, ns);
    }
}
