//! An output port: a FIFO queue, an optional strict-priority control queue, a serializer, and
//! the statistics of all three. The packet at the head of the queue being served is the one
//! on the wire; occupancy counts it until its last bit has left (as htsim's queues do), so
//! `max_bytes` is the buffer the port really needed. What may enter which queue is decided
//! by the port's [`super::qdisc::QueueDiscipline`]; without trimming everything uses the FIFO
//! and the control queue stays empty. A third, lowest-priority queue holds Opera's RotorLB
//! (bulk) packets, outside the discipline (never dropped; empty on other fabrics).

use super::qdisc::CtrlShare;
use crate::metrics::PortStats;
use crate::packet::Packet;
use serde::{Deserialize, Serialize};
use std::collections::VecDeque;

/// An output port: its queues, the packet on the wire and its statistics.
#[derive(Default, Serialize, Deserialize)]
pub struct Port {
    /// What the port has measured.
    pub stats: PortStats,
    /// The FIFO: data packets (and, without a priority queue, everything).
    pub queue: VecDeque<Packet>,
    /// Bytes in both queues, the packet on the wire included.
    pub queued_bytes: u64,
    /// End of the inter-frame gap after the last transmission: the next frame starts no
    /// earlier.
    pub free_at_ps: u64,
    /// Strict-priority queue of control packets (ACKs, NACKs, trimmed headers).
    pub ctrl: VecDeque<Packet>,
    /// Bytes in `ctrl`.
    pub ctrl_bytes: u64,
    /// True while a transmission is scheduled (its `TxDone` event is pending).
    pub busy: bool,
    /// When the frame on the wire (while `busy`) sent its first bit: it may lie ahead of
    /// now, when the previous frame's inter-frame gap has not ended.
    tx_begin_ps: u64,
    /// Which queue's head is on the wire.
    serving: Serving,
    /// Lowest-priority queue: RotorLB packets (Opera bulk), served when both others are
    /// empty.
    pub bulk: VecDeque<Packet>,
    /// Bytes in `bulk`.
    pub bulk_bytes: u64,
    /// Position in the control/data round robin ([`CtrlShare`]), in bytes sent.
    share_pos_bytes: u32,
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
enum Serving {
    #[default]
    Fifo,
    Ctrl,
    Bulk,
}

impl Port {
    #[inline]
    fn account(&mut self, now_ps: u64) {
        let s = &mut self.stats;
        let held = (self.queue.len() + self.ctrl.len() + self.bulk.len()) as u128;
        s.pkt_ps_integral += held * (now_ps - s.last_change_ps) as u128;
        s.last_change_ps = now_ps;
    }

    #[inline]
    fn grew(&mut self) {
        let s = &mut self.stats;
        s.max_bytes = s.max_bytes.max(self.queued_bytes);
        let held = self.queue.len() + self.ctrl.len() + self.bulk.len();
        s.max_pkts = s.max_pkts.max(held as u32);
    }

    /// Bytes in the FIFO (the data buffer the discipline limits).
    #[inline]
    pub fn fifo_bytes(&self) -> u64 {
        self.queued_bytes - self.ctrl_bytes - self.bulk_bytes
    }

    /// Appends `pkt` to the FIFO (admission was decided by the queue discipline).
    #[inline]
    pub fn push(&mut self, pkt: Packet, now_ps: u64) {
        self.account(now_ps);
        self.queued_bytes += pkt.size_bytes as u64;
        self.queue.push_back(pkt);
        self.grew();
    }

    /// Appends `pkt` to the control queue.
    pub fn push_ctrl(&mut self, pkt: Packet, now_ps: u64) {
        self.account(now_ps);
        self.queued_bytes += pkt.size_bytes as u64;
        self.ctrl_bytes += pkt.size_bytes as u64;
        self.ctrl.push_back(pkt);
        self.grew();
    }

    /// Appends `pkt` to the lowest-priority (RotorLB) queue.
    pub fn push_bulk(&mut self, pkt: Packet, now_ps: u64) {
        self.account(now_ps);
        self.queued_bytes += pkt.size_bytes as u64;
        self.bulk_bytes += pkt.size_bytes as u64;
        self.bulk.push_back(pkt);
        self.grew();
    }

    /// Removes the FIFO's last packet if it is not the one on the wire (trimming evicts it).
    pub fn evict_fifo_tail(&mut self, now_ps: u64) -> Option<Packet> {
        let on_wire = self.busy && self.serving == Serving::Fifo && self.queue.len() == 1;
        if self.queue.is_empty() || on_wire {
            return None;
        }
        self.account(now_ps);
        let pkt = self.queue.pop_back().expect("non-empty");
        self.queued_bytes -= pkt.size_bytes as u64;
        Some(pkt)
    }

    /// The bulk packet the port serves next after the one on the wire, if nothing of higher
    /// priority waits: the packet a RotorLB check may take off before it starts.
    pub fn next_bulk(&self) -> Option<&Packet> {
        let on_wire = |q: Serving| (self.busy && self.serving == q) as usize;
        let ahead =
            self.ctrl.len() - on_wire(Serving::Ctrl) + self.queue.len() - on_wire(Serving::Fifo);
        (ahead == 0)
            .then(|| self.bulk.get(on_wire(Serving::Bulk)))
            .flatten()
    }

    /// Removes the packet [`Port::next_bulk`] returns.
    pub fn remove_next_bulk(&mut self, now_ps: u64) -> Packet {
        debug_assert!(self.next_bulk().is_some());
        self.account(now_ps);
        let i = (self.busy && self.serving == Serving::Bulk) as usize;
        let pkt = self.bulk.remove(i).expect("a next bulk packet");
        self.bulk_bytes -= pkt.size_bytes as u64;
        self.queued_bytes -= pkt.size_bytes as u64;
        pkt
    }

    /// Chooses the next packet to serve and returns it; the port must be idle and hold a
    /// packet. Control goes first (strictly, or by `share` while data waits too), bulk last.
    #[inline]
    pub fn begin_service(&mut self, share: Option<CtrlShare>) -> &Packet {
        debug_assert!(!self.busy);
        self.serving = match (self.ctrl.is_empty(), self.queue.is_empty(), share) {
            (false, false, Some(s)) => self.share_turn(s),
            (false, _, _) => Serving::Ctrl,
            (true, false, _) => Serving::Fifo,
            (true, true, _) if self.bulk.is_empty() => Serving::Fifo,
            (true, true, _) => Serving::Bulk,
        };
        self.busy = true;
        self.served_head().expect("service from an empty port")
    }

    /// Whose turn it is when control and data both wait: the first `ctrl_bytes` of every
    /// `ctrl_bytes + data_bytes` go to control (a packet whose turn it is goes whole, so
    /// the split holds on average). Only these contested turns advance the position.
    fn share_turn(&mut self, s: CtrlShare) -> Serving {
        if self.share_pos_bytes >= s.ctrl_bytes + s.data_bytes {
            self.share_pos_bytes = 0;
        }
        let serving = if self.share_pos_bytes < s.ctrl_bytes {
            Serving::Ctrl
        } else {
            Serving::Fifo
        };
        let head = match serving {
            Serving::Ctrl => self.ctrl.front(),
            _ => self.queue.front(),
        };
        self.share_pos_bytes += head.expect("both queues hold packets").size_bytes;
        serving
    }

    /// The packet on the wire.
    #[inline]
    pub fn on_wire(&self) -> &Packet {
        debug_assert!(self.busy);
        self.served_head().expect("a busy port holds its packet")
    }

    /// The head of the queue being served.
    #[inline]
    fn served_head(&self) -> Option<&Packet> {
        match self.serving {
            Serving::Ctrl => self.ctrl.front(),
            Serving::Fifo => self.queue.front(),
            Serving::Bulk => self.bulk.front(),
        }
    }

    /// Removes the packet on the wire once its last bit has left; `wire_ps` is the time it
    /// held the wire, inter-frame gap included.
    #[inline]
    pub fn pop(&mut self, now_ps: u64, wire_ps: u64) -> Packet {
        self.account(now_ps);
        let pkt = match self.serving {
            Serving::Ctrl => {
                let p = self.ctrl.pop_front().expect("pop from an empty port");
                self.ctrl_bytes -= p.size_bytes as u64;
                p
            }
            Serving::Fifo => self.queue.pop_front().expect("pop from an empty port"),
            Serving::Bulk => {
                let p = self.bulk.pop_front().expect("pop from an empty port");
                self.bulk_bytes -= p.size_bytes as u64;
                p
            }
        };
        self.busy = false;
        self.queued_bytes -= pkt.size_bytes as u64;
        let s = &mut self.stats;
        s.busy_ps += wire_ps;
        s.bytes_sent += pkt.size_bytes as u64;
        pkt
    }

    /// Records that the frame just taken into service sends its first bit at `begin_ps`.
    #[inline]
    pub(crate) fn began_at(&mut self, begin_ps: u64) {
        debug_assert!(self.busy, "a frame begins only once in service");
        self.tx_begin_ps = begin_ps;
    }

    /// The wire time the port has used up to `time_ps` exactly (frames and their gaps):
    /// `stats.busy_ps` counts a frame and its gap whole when its last bit leaves, so this
    /// adds the part of the frame on the wire that has elapsed and takes off the part of the
    /// last gap that has not. It grows at most 1 ps per ps, so a time series of it gives each
    /// interval's utilization in [0, 1], a frame's wire time split across the intervals it
    /// spans (up to 1 ps of rounding at a frame's end: the wire time counted at its last bit
    /// is ser(frame + gap), the schedule's ser(frame) + ser(gap)).
    pub(crate) fn busy_through_ps(&self, time_ps: u64) -> u64 {
        let counted = self.stats.busy_ps;
        if !self.busy {
            return counted - self.free_at_ps.saturating_sub(time_ps);
        }
        match time_ps.checked_sub(self.tx_begin_ps) {
            Some(elapsed) => counted + elapsed,
            // The previous frame's gap runs until this frame begins.
            None => counted - (self.tx_begin_ps - time_ps),
        }
    }

    /// Whether a packet waits (or is on the wire).
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.queue.is_empty() && self.ctrl.is_empty() && self.bulk.is_empty()
    }

    /// Every packet the port holds.
    pub fn packets(&self) -> impl Iterator<Item = &Packet> {
        self.queue
            .iter()
            .chain(self.ctrl.iter())
            .chain(self.bulk.iter())
    }

    /// Closes the time integral at the end of the run.
    pub fn finish(&mut self, end_ps: u64) {
        if end_ps > self.stats.last_change_ps {
            self.account(end_ps);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::packet::{test_packet, PacketKind};

    /// As `link::start_tx` and `finish_tx` drive a port: frames of 100 ps with a 10 ps gap.
    fn send(port: &mut Port, now_ps: u64) -> u64 {
        port.push(test_packet(PacketKind::Data, 1000), now_ps);
        port.begin_service(None);
        let begin = now_ps.max(port.free_at_ps);
        port.began_at(begin);
        port.free_at_ps = begin + 110;
        begin + 100 // its last bit: TxDone
    }

    #[test]
    fn busy_time_through_an_instant_splits_frames_and_gaps_exactly() {
        let mut port = Port::default();
        assert_eq!(port.busy_through_ps(50), 0);
        let done = send(&mut port, 20); // on the wire [20, 120), gap to 130
        assert_eq!(port.busy_through_ps(20), 0);
        assert_eq!(port.busy_through_ps(70), 50);
        port.pop(done, 110);
        assert_eq!(
            port.busy_through_ps(120),
            100,
            "the gap has not elapsed yet"
        );
        assert_eq!(port.busy_through_ps(125), 105);
        // The next frame, queued during the gap, begins when it ends.
        let done = send(&mut port, 125);
        assert_eq!(done, 230);
        assert_eq!(port.busy_through_ps(125), 105, "previous gap still running");
        assert_eq!(port.busy_through_ps(130), 110);
        assert_eq!(port.busy_through_ps(180), 160);
        port.pop(done, 110);
        assert_eq!(port.busy_through_ps(235), 215);
        assert_eq!(port.busy_through_ps(500), 220);
    }

    #[test]
    fn control_is_served_first_but_never_preempts_the_packet_on_the_wire() {
        let mut port = Port::default();
        port.push(test_packet(PacketKind::Data, 1000), 0);
        assert_eq!(port.begin_service(None).size_bytes, 1000);
        port.push(test_packet(PacketKind::Data, 900), 1);
        port.push_ctrl(test_packet(PacketKind::Ack, 64), 2);
        assert_eq!(port.fifo_bytes(), 1900);
        // The tail may be evicted, not the packet on the wire.
        assert_eq!(port.evict_fifo_tail(3).map(|p| p.size_bytes), Some(900));
        assert_eq!(port.evict_fifo_tail(3), None);
        assert_eq!(port.pop(4, 10).size_bytes, 1000);
        port.push(test_packet(PacketKind::Data, 800), 5);
        assert_eq!(port.begin_service(None).size_bytes, 64, "control first");
        assert_eq!(port.pop(6, 10).size_bytes, 64);
        assert_eq!(port.begin_service(None).size_bytes, 800);
        assert_eq!((port.queued_bytes, port.ctrl_bytes), (800, 0));
    }

    #[test]
    fn a_control_share_gives_data_its_bytes_while_headers_keep_arriving() {
        let share = CtrlShare {
            ctrl_bytes: 640,
            data_bytes: 1500,
        };
        let mut port = Port::default();
        for _ in 0..30 {
            port.push_ctrl(test_packet(PacketKind::Data, 64), 0);
        }
        for _ in 0..3 {
            port.push(test_packet(PacketKind::Data, 1500), 0);
        }
        let order: String = (0..33)
            .map(|t| {
                port.begin_service(Some(share));
                if port.pop(t, 1).size_bytes == 64 {
                    'h'
                } else {
                    'D'
                }
            })
            .collect();
        // 640 bytes of 64-byte headers, then one 1,500-byte packet, while both wait; then
        // the headers left alone go back to back.
        let ten = "hhhhhhhhhh";
        assert_eq!(
            order,
            format!("{ten}D{ten}D{ten}D"),
            "strict would be 30 h first"
        );
        // Without a share the same queues serve every header first.
        let mut strict = Port::default();
        strict.push_ctrl(test_packet(PacketKind::Data, 64), 0);
        strict.push(test_packet(PacketKind::Data, 1500), 0);
        assert_eq!(strict.begin_service(None).size_bytes, 64);
    }

    #[test]
    fn the_next_bulk_packet_is_the_one_behind_the_wire_with_nothing_else_waiting() {
        let mut port = Port::default();
        port.push_bulk(test_packet(PacketKind::Data, 1500), 0);
        port.push_bulk(test_packet(PacketKind::Data, 1400), 0);
        assert_eq!(port.next_bulk().unwrap().size_bytes, 1500);
        port.begin_service(None);
        assert_eq!(
            port.next_bulk().unwrap().size_bytes,
            1400,
            "behind the one on the wire"
        );
        port.push(test_packet(PacketKind::Data, 1000), 0);
        assert!(port.next_bulk().is_none(), "the FIFO goes first");
        port.pop(10, 1);
        assert!(port.next_bulk().is_none());
        port.begin_service(None);
        assert_eq!(
            port.next_bulk().unwrap().size_bytes,
            1400,
            "FIFO's last one on the wire"
        );
        let p = port.remove_next_bulk(20);
        assert_eq!(p.size_bytes, 1400);
        assert_eq!((port.bulk_bytes, port.queued_bytes), (0, 1000));
        assert!(port.next_bulk().is_none());
    }

    #[test]
    fn bulk_waits_behind_data_and_control_and_is_outside_the_fifo_limit() {
        let mut port = Port::default();
        port.push_bulk(test_packet(PacketKind::Data, 1500), 0);
        port.push(test_packet(PacketKind::Data, 1000), 0);
        port.push_ctrl(test_packet(PacketKind::Ack, 64), 0);
        assert_eq!(port.fifo_bytes(), 1000, "bulk bytes are not the FIFO's");
        let order: Vec<u32> = (0..3)
            .map(|t| {
                port.begin_service(None);
                port.pop(t, 1).size_bytes
            })
            .collect();
        assert_eq!(order, vec![64, 1000, 1500]);
        assert!(port.is_empty() && port.bulk_bytes == 0 && port.queued_bytes == 0);
    }
}
