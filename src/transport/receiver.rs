//! Per-flow receiver state: what has arrived (for duplicates, and the cumulative point and
//! SACK bitmap to echo), ACK coalescing, and the receiver side's LB state for its ACKs.
//!
//! The paced transport needs it only when the host LB policy keeps per-flow state for ACKs
//! (DRB); hosts then drop it once a flow's last packet has arrived. Reliable transports keep
//! it for the whole run: a retransmission may arrive after the flow is complete and must be
//! recognised as a duplicate (a finished flow's set holds no bitmap, only its cumulative
//! point).
//!
//! When to ACK (ALGORITHMS.md C2, UEC htsim `UecSink`): at once for an ECN-marked packet, an
//! ACK request, the flow's first packet, a duplicate, a packet out of order (a gap, or one
//! that fills a gap), or the flow's last packet; otherwise once `ack_coalesce_bytes` of
//! payload are unacknowledged (0: every packet).

use super::seqset::SeqSet;
use crate::lb::FlowPath;
use serde::{Deserialize, Serialize};

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Receiver {
    pub received: SeqSet,
    pub path: FlowPath,
    /// Payload bytes received since the last ACK.
    unacked_bytes: u64,
}

impl Default for Receiver {
    fn default() -> Self {
        Receiver {
            received: SeqSet::default(),
            path: FlowPath::RECEIVER,
            unacked_bytes: 0,
        }
    }
}

/// What the receiver makes of a whole data packet.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DataVerdict {
    /// First arrival of this sequence number.
    pub fresh: bool,
    /// Send an ACK now.
    pub ack_now: bool,
}

/// Why a data packet calls for an immediate ACK, besides duplicates, order, coalescing and
/// completing the flow.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Urgent {
    pub ecn: bool,
    pub ack_req: bool,
}

impl Receiver {
    /// Records data packet `seq` (paced transport); returns false for a duplicate.
    pub fn on_data(&mut self, seq: u32) -> bool {
        self.received.insert(seq)
    }

    /// Records data packet `seq` of a flow of `packets` packets, carrying `payload_bytes`,
    /// and decides whether to ACK now.
    pub fn on_reliable_data(
        &mut self,
        seq: u32,
        packets: u64,
        payload_bytes: u64,
        urgent: Urgent,
        coalesce_bytes: u64,
    ) -> DataVerdict {
        let before = self.received.cumulative();
        let first = self.received.is_empty();
        let fresh = self.received.insert(seq);
        if fresh {
            self.unacked_bytes += payload_bytes;
        }
        let in_order = seq == before && self.received.cumulative() == seq + 1;
        let ack_now = !fresh
            || first
            || !in_order
            || urgent.ecn
            || urgent.ack_req
            || self.received.len() == packets
            || self.unacked_bytes >= coalesce_bytes.max(1);
        if ack_now {
            self.unacked_bytes = 0;
        }
        DataVerdict { fresh, ack_now }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn coalesces_in_order_data_and_acks_at_once_on_gaps_duplicates_and_requests() {
        let mut r = Receiver::default();
        let calm = Urgent::default();
        let ack = |r: &mut Receiver, seq, urgent| r.on_reliable_data(seq, 11, 100, urgent, 300);
        assert!(ack(&mut r, 0, calm).ack_now, "first packet");
        assert!(!ack(&mut r, 1, calm).ack_now);
        assert!(!ack(&mut r, 2, calm).ack_now);
        assert!(ack(&mut r, 3, calm).ack_now, "300 bytes unacknowledged");
        assert!(ack(&mut r, 5, calm).ack_now, "gap");
        assert!(ack(&mut r, 4, calm).ack_now, "fills the gap");
        let dup = ack(&mut r, 4, calm);
        assert!(dup.ack_now && !dup.fresh);
        assert!(!ack(&mut r, 6, calm).ack_now);
        let ecn = Urgent { ecn: true, ..calm };
        assert!(ack(&mut r, 7, ecn).ack_now);
        assert!(!ack(&mut r, 8, calm).ack_now);
        let req = Urgent {
            ack_req: true,
            ..calm
        };
        assert!(ack(&mut r, 9, req).ack_now);
        assert!(ack(&mut r, 10, calm).ack_now, "the last packet");
        assert_eq!(r.received.cumulative(), 11);
    }

    #[test]
    fn without_coalescing_every_packet_is_acknowledged() {
        let mut r = Receiver::default();
        assert!((0..10).all(|s| r.on_reliable_data(s, 99, 100, Urgent::default(), 0).ack_now));
    }
}
