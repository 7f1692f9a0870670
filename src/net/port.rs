//! An output port: FIFO queue, serializer and the statistics of both. The packet at the head
//! is the one being transmitted; queue occupancy counts it until its last bit has left (as
//! htsim's queues do), so `max_bytes` is the buffer the port really needed.

use super::Packet;
use std::collections::VecDeque;

#[derive(Default)]
pub struct Port {
    pub queue: VecDeque<Packet>,
    pub queued_bytes: u64,
    /// True while the head packet is on the serializer.
    pub busy: bool,
    pub stats: PortStats,
}

/// Integer statistics of one port; merged per stage at the end of the run.
#[derive(Clone, Copy, Default, Debug)]
pub struct PortStats {
    pub max_bytes: u64,
    pub max_pkts: u64,
    /// ∫ queued packets dt, in packet·ps.
    pub pkt_ps_integral: u128,
    pub last_change_ps: u64,
    /// Time spent serializing (inter-frame gaps included), in ps.
    pub busy_ps: u64,
    pub bytes_sent: u64,
    pub pkts_sent: u64,
    pub drops: u64,
    pub ecn_marks: u64,
}

impl Port {
    #[inline]
    fn account(&mut self, now_ps: u64) {
        let s = &mut self.stats;
        s.pkt_ps_integral += self.queue.len() as u128 * (now_ps - s.last_change_ps) as u128;
        s.last_change_ps = now_ps;
    }

    /// Enqueues `pkt` unless it would exceed `buffer_bytes`; returns false on drop.
    #[inline]
    pub fn enqueue(&mut self, pkt: Packet, now_ps: u64, buffer_bytes: u64) -> bool {
        if self.queued_bytes + pkt.size_bytes as u64 > buffer_bytes {
            self.stats.drops += 1;
            return false;
        }
        self.account(now_ps);
        self.queued_bytes += pkt.size_bytes as u64;
        self.queue.push_back(pkt);
        let s = &mut self.stats;
        s.max_bytes = s.max_bytes.max(self.queued_bytes);
        s.max_pkts = s.max_pkts.max(self.queue.len() as u64);
        true
    }

    /// Removes the head packet once its transmission (`tx_ps` long) has ended.
    #[inline]
    pub fn dequeue(&mut self, now_ps: u64, tx_ps: u64) -> Packet {
        self.account(now_ps);
        let pkt = self.queue.pop_front().expect("dequeue from an empty port");
        self.queued_bytes -= pkt.size_bytes as u64;
        let s = &mut self.stats;
        s.busy_ps += tx_ps;
        s.bytes_sent += pkt.size_bytes as u64;
        s.pkts_sent += 1;
        pkt
    }

    /// Closes the time integral at the end of the run.
    pub fn finish(&mut self, end_ps: u64) {
        if end_ps > self.stats.last_change_ps {
            self.account(end_ps);
        }
    }
}
