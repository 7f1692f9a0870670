//! NDP pulls: crediting this host's flows for the pulls it receives, and pacing the
//! pulls it owes the flows it receives.

use super::receive::queue_reply;
use super::{Host, Reply};
use crate::metrics::Metrics;
use crate::model::Model;
use crate::net::event::{Scheduler, TimerKind};
use crate::net::pull_queue::Pull;
use crate::packet::{flow_index, flow_src, Packet, PacketKind, NO_VIA};
use crate::time::NEVER_PS;
use crate::transport::Sender;

impl Host {
    /// An NDP pull: the flow may send as many more packets as the pull number went up.
    pub(super) fn on_pull<S: Scheduler>(
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
    pub(super) fn pull_for<S: Scheduler>(
        &mut self,
        m: &Model,
        now_ps: u64,
        pkt: &Packet,
        out: &mut S,
    ) {
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
    pub(super) fn serve_pulls<S: Scheduler>(&mut self, m: &Model, now_ps: u64, out: &mut S) {
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

    pub(super) fn set_pull_timer<S: Scheduler>(&mut self, at_ps: u64, out: &mut S) {
        let (id, slot) = (self.id, &mut self.pulls.timer);
        self.timers
            .set(slot, id, TimerKind::PullPace, 0, at_ps, out);
    }

    /// The least time between two pulls: a full data packet's wire time (inter-frame gap
    /// included) on this host's link, over `host.ndp.pull_rate`.
    pub(super) fn pull_gap_ps(&self, m: &Model) -> u64 {
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
    pub(super) fn queue_pull(&mut self, m: &Model, pull: Pull) {
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
}
