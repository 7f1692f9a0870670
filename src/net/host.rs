//! A host: its NIC, the senders of the flows it has started, the receivers of the flows it is
//! receiving (when the transport or LB policy keeps per-flow receiver state), and its RNG
//! stream. It starts its flows in order of start time, asks the transport which packet each
//! flow sends next, ACKs every data packet it receives, and reports each flow's completion.

use super::event::{Scheduler, TimerKind, TimerSeq};
use super::link::{finish_tx, start_tx};
use super::nic::{Nic, Pick};
use crate::lb::{Feedback, FlowPath};
use crate::metrics::{record_ns, Metrics};
use crate::model::Model;
use crate::packet::{flags, FlowId, Packet, PacketKind};
use crate::rng::{stream, Purpose};
use crate::time::PS_PER_NS;
use crate::topology::NodeId;
use crate::transport::{AckInfo, Receiver, Sender};
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
}

#[derive(Serialize, Deserialize)]
pub struct Host {
    pub id: NodeId,
    pub nic: Nic,
    /// Started flows, by index among the host's flows.
    flows: Vec<FlowSender>,
    /// Flows this host sends (the workload's count).
    n_flows: u32,
    completed: u32,
    /// Receiver state of incoming flows that still expect packets (only when needed).
    receivers: BTreeMap<FlowId, Receiver>,
    rng: Pcg32,
    timers: TimerSeq,
}

impl Host {
    pub fn new(m: &Model, id: NodeId) -> Host {
        Host {
            id,
            nic: Nic::default(),
            flows: Vec::new(),
            n_flows: m.workload.flows_of(id),
            completed: 0,
            receivers: BTreeMap::new(),
            rng: stream(m.seed, id as u64, Purpose::HostLb),
            timers: TimerSeq::default(),
        }
    }

    /// Sets the wake-up that starts this host, if it has anything to send.
    pub fn start<S: Scheduler>(&mut self, m: &Model, out: &mut S) {
        if self.n_flows > 0 {
            let first = m.workload.flow(self.id, 0).start_ps;
            self.set_wake(first, out);
        }
    }

    /// Incoming flows whose receiver state this host still keeps.
    pub fn receiver_states(&self) -> usize {
        self.receivers.len()
    }

    /// Flows of this host that have not completed.
    pub fn incomplete_flows(&self) -> u64 {
        (self.n_flows - self.completed) as u64
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
        let wake = match pkt.kind {
            PacketKind::Data => {
                self.on_data(m, now_ps, pkt, mx);
                true
            }
            PacketKind::Ack => self.on_ack(m, now_ps, pkt, mx),
        };
        if wake {
            self.try_send(m, now_ps, out, mx);
        }
    }

    fn on_data(&mut self, m: &Model, now_ps: u64, pkt: Packet, mx: &mut Metrics) {
        mx.counters.data_delivered += 1;
        record_ns(&mut mx.latency_ns, (now_ps - pkt.sent_ps) / PS_PER_NS);
        let mut path = FlowPath::RECEIVER;
        let receiver = if m.lb.host.needs_receiver_state() {
            let r = self.receivers.entry(pkt.flow_id()).or_default();
            r.on_data(pkt.seq);
            Some(r)
        } else {
            None
        };
        let path = receiver.map_or(&mut path, |r| &mut r.path);
        let (entropy, via) = m.lb.host.next_packet(
            &m.fabric,
            path,
            self.id,
            pkt.src,
            Some(pkt.entropy),
            m.lb.cfg.entropy_paths,
            &mut self.rng,
        );
        let echo = if pkt.ecn() { flags::ECN_ECHO } else { 0 };
        // The receiver's view of the flow when it keeps state; otherwise no cumulative
        // information (0, and an empty SACK).
        let state = m.lb.host.needs_receiver_state();
        let (cumulative, sack) = match self.receivers.get(&pkt.flow_id()).filter(|_| state) {
            Some(r) => (r.received.cumulative(), r.received.sack_above_cumulative()),
            None => (0, 0),
        };
        self.nic.control.push_back(Packet {
            sent_ps: sack,
            flow_index: pkt.flow_index,
            src: self.id,
            dst: pkt.src,
            seq: pkt.seq,
            ack: cumulative,
            size_bytes: m.ack_bytes,
            via,
            entropy,
            kind: PacketKind::Ack,
            flags: echo,
        });
        if m.lb.host.needs_receiver_state() {
            self.forget_finished_receiver(m, pkt.flow_id());
        }
    }

    /// Drops a receiver's state once every packet of its flow has arrived.
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

    /// Handles an ACK; returns whether a flow the transport had held back may send again.
    fn on_ack(&mut self, m: &Model, now_ps: u64, pkt: Packet, mx: &mut Metrics) -> bool {
        let c = &mut mx.counters;
        c.acks_delivered += 1;
        let i = pkt.flow_index;
        let Some(f) = self.flows.get_mut(i as usize) else {
            c.stale_acks += 1;
            return false;
        };
        let info = AckInfo {
            seq: pkt.seq,
            cumulative: pkt.ack,
            sack: pkt.sack(),
            ecn_echo: pkt.flags & flags::ECN_ECHO != 0,
            entropy: pkt.entropy,
        };
        let outcome = f.sender.on_ack(&info, now_ps);
        c.stale_acks += outcome.stale as u64;
        let what = if info.ecn_echo {
            Feedback::Ecn
        } else {
            Feedback::Delivered
        };
        m.lb.host.feedback(&mut f.path, info.entropy, what);
        if outcome.completed {
            let start = m.workload.flow(self.id, pkt.flow_index).start_ps;
            record_ns(&mut mx.fct_ns, (now_ps - start) / PS_PER_NS);
            c.flows_completed += 1;
            c.last_ack_ps = c.last_ack_ps.max(now_ps);
            self.completed += 1;
        }
        let readmit = f.sender.has_data() && !f.in_rotation;
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
        finish_tx(m, self.id, 0, &mut self.nic.port, now_ps, out);
        self.try_send(m, now_ps, out, mx);
    }

    pub fn on_timer<S: Scheduler>(
        &mut self,
        m: &Model,
        now_ps: u64,
        kind: TimerKind,
        gen: u32,
        out: &mut S,
        mx: &mut Metrics,
    ) {
        match kind {
            TimerKind::NicWake if self.nic.wake.fires(gen) => {
                self.nic.wake.clear();
                self.try_send(m, now_ps, out, mx);
            }
            TimerKind::NicWake => {} // superseded by an earlier wake-up
            TimerKind::SwitchLb => unreachable!("host {} has no switch LB", self.id),
        }
    }

    /// Wakes the NIC at `at_ps` unless it already wakes between now and then.
    fn set_wake<S: Scheduler>(&mut self, at_ps: u64, out: &mut S) {
        let w = &self.nic.wake;
        if w.at_ps != crate::time::NEVER_PS && w.at_ps <= at_ps {
            return;
        }
        let (id, slot) = (self.id, &mut self.nic.wake);
        self.timers.set(slot, id, TimerKind::NicWake, 0, at_ps, out);
    }

    /// Starts every flow whose start time has come.
    fn start_due_flows(&mut self, m: &Model, now_ps: u64) {
        while (self.flows.len() as u32) < self.n_flows {
            let i = self.flows.len() as u32;
            let f = m.workload.flow(self.id, i);
            if f.start_ps > now_ps {
                break;
            }
            let packets = m.packets_for(f.bytes);
            assert!(
                packets <= u32::MAX as u64,
                "flow {i} of host {} has more than 2^32 packets",
                self.id
            );
            let path = m.lb.host.start_flow(m.lb.cfg.entropy_paths, &mut self.rng);
            self.flows.push(FlowSender {
                sender: Sender::new(&m.transport, packets as u32),
                path,
                in_rotation: true,
            });
            self.nic.active.push_back(i);
        }
    }

    fn try_send<S: Scheduler>(&mut self, m: &Model, now_ps: u64, out: &mut S, mx: &mut Metrics) {
        if self.nic.port.busy {
            return;
        }
        self.start_due_flows(m, now_ps);
        // Flows whose transport holds their next packet back leave the rotation; try the
        // next one (a loop, not recursion: thousands of flows may be held back at once).
        let pkt = loop {
            match self.nic.pick(now_ps) {
                Some(Pick::Control) => {
                    mx.counters.acks_sent += 1;
                    break self.nic.control.pop_front().expect("picked control");
                }
                Some(Pick::Data) => {
                    if let Some(p) = self.next_data(m, now_ps, mx) {
                        break p;
                    }
                }
                None => {
                    let next_start = ((self.flows.len() as u32) < self.n_flows)
                        .then(|| m.workload.flow(self.id, self.flows.len() as u32).start_ps);
                    if let Some(at) = self.nic.data_ready_at().or(next_start) {
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
        self.nic.picked(pick, begin, wire, m.load_ppm);
        self.nic.port.push(pkt, now_ps);
        let started = start_tx(m, self.id, 0, &mut self.nic.port, now_ps, out);
        debug_assert_eq!(started, begin);
    }

    /// The next data packet of the first active flow, or `None` if its transport holds it
    /// back (the flow leaves the rotation until an acknowledgement re-admits it).
    fn next_data(&mut self, m: &Model, now_ps: u64, mx: &mut Metrics) -> Option<Packet> {
        let i = self.nic.active.pop_front().expect("picked data");
        let f = &mut self.flows[i as usize];
        let Some(seq) = f.sender.next_seq(now_ps) else {
            f.in_rotation = false;
            return None;
        };
        if f.sender.has_data() {
            self.nic.active.push_back(i);
        } else {
            f.in_rotation = false;
        }
        let flow = m.workload.flow(self.id, i);
        let (entropy, via) = m.lb.host.next_packet(
            &m.fabric,
            &mut f.path,
            self.id,
            flow.dst,
            None,
            m.lb.cfg.entropy_paths,
            &mut self.rng,
        );
        let begin = self.nic.start_time(now_ps);
        let c = &mut mx.counters;
        c.data_sent += 1;
        c.first_send_ps = c.first_send_ps.min(begin);
        Some(Packet {
            sent_ps: begin,
            flow_index: i,
            src: self.id,
            dst: flow.dst,
            seq,
            ack: 0,
            size_bytes: m.data_size(flow.bytes, seq),
            via,
            entropy,
            kind: PacketKind::Data,
            flags: 0,
        })
    }
}
