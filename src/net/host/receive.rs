//! Receiving data: recording each packet, answering it with an ACK (coalesced) or NACK,
//! and noticing when an incoming flow has fully arrived (its dependents may start).

use super::{Host, Reply};
use crate::lb::FlowPath;
use crate::metrics::{record_indexed_ns, record_ns, FlowEvent, Metrics};
use crate::model::Model;
use crate::net::nic::Nic;
use crate::packet::{flags, FlowId, Packet, PacketKind};
use crate::time::PS_PER_NS;
use crate::topology::NodeId;
use crate::transport::receiver::Urgent;
use crate::transport::TransportParams;
use crate::workload::Start;
use hdrhistogram::Histogram;
use rand_pcg::Pcg32;

impl Host {
    /// Queues an ACK for data packet `pkt` (paced transport), with the flow's receiver LB
    /// state if the host keeps one.
    pub(super) fn reply(&mut self, m: &Model, pkt: &Packet, r: Reply) {
        let mut fresh_path = FlowPath::RECEIVER;
        let path = match self.receivers.get_mut(&pkt.flow_id()) {
            Some(rcv) => &mut rcv.path,
            None => &mut fresh_path,
        };
        queue_reply(m, self.id, &mut self.nic, &mut self.rng, path, pkt, r);
    }

    pub(super) fn on_paced_data(&mut self, m: &Model, now_ps: u64, pkt: Packet, mx: &mut Metrics) {
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
    pub(super) fn message_received(
        &mut self,
        m: &Model,
        id: FlowId,
        now_ps: u64,
        mx: &mut Metrics,
    ) {
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
    pub(super) fn forget_finished_receiver(&mut self, m: &Model, id: FlowId) {
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
    pub(super) fn on_reliable_data(
        &mut self,
        m: &Model,
        now_ps: u64,
        pkt: Packet,
        mx: &mut Metrics,
    ) {
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
}

/// Queues an ACK or NACK for data packet `pkt` on the NIC; `path` is the receiver's LB state
/// for the flow. Reliable transports echo the data packet's entropy value (the sender's LB
/// feedback needs it); the paced transport lets the host policy choose, as before.
#[allow(clippy::too_many_arguments)]
pub(super) fn queue_reply(
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

/// Records a whole data packet's one-way latency, and in its flow's phase's histogram if the
/// flow belongs to a phase (`pkt.src` is the flow's source).
#[inline]
pub(super) fn record_latency(
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
