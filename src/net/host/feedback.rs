//! The sender's side of acknowledgements: ACKs and NACKs update a flow's transport and
//! LB state, record its completion, and may put it back in the NIC's rotation.

use super::timers::arm_rto;
use super::{FlowSender, Host};
use crate::lb::Feedback;
use crate::metrics::{CwndPoint, Metrics};
use crate::model::Model;
use crate::net::completion::record_completion;
use crate::net::event::Scheduler;
use crate::packet::{flags, Packet};
use crate::transport::receiver::sack_base;
use crate::transport::{AckInfo, NackFrom, Sender};
use crate::workload::Start;

impl Host {
    /// Handles an ACK; returns whether a flow the transport had held back may send again.
    pub(super) fn on_ack<S: Scheduler>(
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
    pub(super) fn on_nack<S: Scheduler>(
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

    /// After an ACK, NACK or timeout of flow `i`: re-arms its timer and puts it back in the
    /// NIC's rotation if it may send; returns whether it was re-admitted.
    pub(super) fn after_progress<S: Scheduler>(
        &mut self,
        i: u32,
        now_ps: u64,
        out: &mut S,
    ) -> bool {
        let f = &mut self.flows[i];
        arm_rto(&mut self.timers, self.id, i, f, now_ps, out);
        let readmit = f.sender.has_data() && !f.in_rotation && !f.pacing();
        if readmit {
            f.in_rotation = true;
            self.nic.active.push_back(i);
        }
        readmit
    }
}
