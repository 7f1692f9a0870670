//! Sending: starting flows when their time (or trigger) comes, and choosing the NIC's
//! next packet: a control packet, a data packet of the next flow in the rotation, or
//! RotorLB's.

use super::timers::{arm_pace, arm_rto};
use super::{FlowSender, Host};
use crate::metrics::{FlowEvent, Metrics};
use crate::model::Model;
use crate::net::completion::record_send;
use crate::net::event::Scheduler;
use crate::net::link::start_tx;
use crate::net::nic::Pick;
use crate::packet::{flags, Packet, PacketKind};
use crate::transport::{rotor, Sender};
use crate::workload::{Flow, Start};

impl Host {
    /// Starts every flow whose start time has come: fixed-start flows in order, then
    /// triggered flows that are due.
    pub(super) fn start_due_flows(&mut self, m: &Model, now_ps: u64, mx: &mut Metrics) {
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
    pub(super) fn start_flow(&mut self, m: &Model, i: u32, f: &Flow) {
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

    pub(super) fn try_send<S: Scheduler>(
        &mut self,
        m: &Model,
        now_ps: u64,
        out: &mut S,
        mx: &mut Metrics,
    ) {
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
                    let me = self.id;
                    if let Some(p) = rlb.and_then(|r| r.next_packet(m, me, begin, &mut mx.counters))
                    {
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
    pub(super) fn next_data<S: Scheduler>(
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

    /// Flags of a data packet: under the reliable transport, the ACK request and the
    /// transmission number (the paced transport's packets carry none, as before).
    pub(super) fn data_flags(&self, m: &Model, send: &crate::transport::Send) -> u8 {
        if !m.transport.is_reliable() {
            return 0;
        }
        let req = if send.ack_req { flags::ACK_REQ } else { 0 };
        req | (send.tx & 3) << flags::TX_SHIFT
    }
}
