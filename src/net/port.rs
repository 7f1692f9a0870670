//! An output port: FIFO queue, serializer and the statistics of both. The packet at the head
//! is the one being transmitted; queue occupancy counts it until its last bit has left (as
//! htsim's queues do), so `max_bytes` is the buffer the port really needed. What may enter
//! the queue is decided by the port's [`super::qdisc::QueueDiscipline`].

use crate::metrics::PortStats;
use crate::packet::Packet;
use serde::{Deserialize, Serialize};
use std::collections::VecDeque;

/// 128 bytes: every field is touched per packet.
#[derive(Default, Serialize, Deserialize)]
pub struct Port {
    pub stats: PortStats,
    pub queue: VecDeque<Packet>,
    pub queued_bytes: u64,
    /// End of the inter-frame gap after the last transmission: the next frame starts no
    /// earlier.
    pub free_at_ps: u64,
    /// True while a transmission is scheduled (its `TxDone` event is pending).
    pub busy: bool,
}

impl Port {
    #[inline]
    fn account(&mut self, now_ps: u64) {
        let s = &mut self.stats;
        s.pkt_ps_integral += self.queue.len() as u128 * (now_ps - s.last_change_ps) as u128;
        s.last_change_ps = now_ps;
    }

    /// Appends `pkt` (admission was decided by the queue discipline).
    #[inline]
    pub fn push(&mut self, pkt: Packet, now_ps: u64) {
        self.account(now_ps);
        self.queued_bytes += pkt.size_bytes as u64;
        self.queue.push_back(pkt);
        let s = &mut self.stats;
        s.max_bytes = s.max_bytes.max(self.queued_bytes);
        s.max_pkts = s.max_pkts.max(self.queue.len() as u32);
    }

    /// Removes the head packet once its last bit has left; `wire_ps` is the time it held the
    /// wire, inter-frame gap included.
    #[inline]
    pub fn pop(&mut self, now_ps: u64, wire_ps: u64) -> Packet {
        self.account(now_ps);
        let pkt = self.queue.pop_front().expect("pop from an empty port");
        self.queued_bytes -= pkt.size_bytes as u64;
        let s = &mut self.stats;
        s.busy_ps += wire_ps;
        s.bytes_sent += pkt.size_bytes as u64;
        pkt
    }

    /// Closes the time integral at the end of the run.
    pub fn finish(&mut self, end_ps: u64) {
        if end_ps > self.stats.last_change_ps {
            self.account(end_ps);
        }
    }
}
