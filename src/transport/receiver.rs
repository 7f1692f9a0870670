//! Per-flow receiver state: what has arrived (for duplicates, and the cumulative point and
//! SACK bitmap to echo), ACK coalescing, and the receiver side's LB state for its ACKs.
//!
//! The paced transport needs it only when the host LB policy keeps per-flow state for ACKs
//! (DRB); hosts then drop it once a flow's last packet has arrived. Reliable transports keep
//! it for the whole run: a retransmission may arrive after the flow is complete and must be
//! recognised as a duplicate (a finished flow's set holds no bitmap, only its cumulative
//! point).
//!
//! When to ACK (as UEC htsim's `UecSink::processData`): at once for a
//! duplicate, the flow's first packet, an ECN-marked packet, a packet with an ACK request, and
//! when the out-of-order set drains while a request is pending; otherwise once
//! `ack_coalesce_bytes` of data (whole packets, headers included, as htsim counts) arrived
//! unacknowledged (0: every packet). Out-of-order data alone does not trigger an ACK.
//!
//! The SACK bitmap covers 64 sequence numbers from a base the sender recomputes from the ACK
//! itself ([`sack_base`]): max(packet − 63, cumulative + 1), htsim's `sackBitmapBase`, i.e.
//! the 64 numbers up to the answered packet. (htsim starts ECN-marked and requested ACKs'
//! bitmaps at the packet itself and keeps its sender's bytes in flight right through the
//! ACK's count of bytes received, for which weft's ACK has no room: with that base, packets
//! received out of order below a marked packet would stay unreported and hold the window.)

use super::seqset::SeqSet;
use crate::lb::FlowPath;
use serde::{Deserialize, Serialize};

/// A flow's state at its receiving host.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub(crate) struct Receiver {
    /// Sequence numbers of the data packets received.
    pub received: SeqSet,
    pub(crate) path: FlowPath,
    /// Bytes of data received since the last ACK.
    unacked_bytes: u64,
    /// An ACK request arrived while packets were missing: ACK when the gap closes.
    ack_request_pending: bool,
}

impl Default for Receiver {
    fn default() -> Self {
        Receiver {
            received: SeqSet::default(),
            path: FlowPath::RECEIVER,
            unacked_bytes: 0,
            ack_request_pending: false,
        }
    }
}

/// What the receiver makes of a whole data packet.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct DataVerdict {
    /// First arrival of this sequence number.
    pub fresh: bool,
    /// Send an ACK now.
    pub ack_now: bool,
}

/// Why a data packet calls for an immediate ACK, besides duplicates, the first packet, the
/// drained out-of-order set and coalescing.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Urgent {
    pub ecn: bool,
    pub ack_req: bool,
}

/// First sequence number of an ACK's SACK bitmap (bit i = base + i), from what the ACK
/// carries: the packet it answers (`seq`) and the cumulative point.
pub(crate) fn sack_base(seq: u32, cumulative: u32) -> u32 {
    seq.saturating_sub(63).max(cumulative.saturating_add(1))
}

impl Receiver {
    /// Records data packet `seq` (paced transport); returns false for a duplicate.
    pub(crate) fn on_data(&mut self, seq: u32) -> bool {
        self.received.insert(seq)
    }

    /// Records data packet `seq` of `wire_bytes` (payload + header) and decides whether to
    /// ACK now.
    pub(crate) fn on_reliable_data(
        &mut self,
        seq: u32,
        wire_bytes: u64,
        urgent: Urgent,
        coalesce_bytes: u64,
    ) -> DataVerdict {
        let first = self.received.is_empty();
        let before = self.received.cumulative();
        if !self.received.insert(seq) {
            self.unacked_bytes = 0;
            return DataVerdict {
                fresh: false,
                ack_now: true,
            };
        }
        self.unacked_bytes += wire_bytes;
        let mut force = first || urgent.ack_req;
        if urgent.ack_req {
            self.ack_request_pending = true;
        }
        let in_order = seq == before;
        let drained = self.received.len() == self.received.cumulative() as u64;
        if in_order && drained && self.ack_request_pending {
            force = true;
            self.ack_request_pending = false;
        }
        let ack_now = force || urgent.ecn || self.unacked_bytes >= coalesce_bytes.max(1);
        if ack_now {
            self.unacked_bytes = 0;
        }
        DataVerdict {
            fresh: true,
            ack_now,
        }
    }

    /// The SACK bitmap for an ACK of `seq`.
    pub(crate) fn sack_bitmap(&self, seq: u32) -> u64 {
        let base = sack_base(seq, self.received.cumulative());
        self.received.bitmap_from(base)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn coalesces_data_and_acks_at_once_on_duplicates_requests_ecn_and_a_drained_gap() {
        let mut r = Receiver::default();
        let calm = Urgent::default();
        let ack = |r: &mut Receiver, seq, urgent| r.on_reliable_data(seq, 100, urgent, 300);
        assert!(ack(&mut r, 0, calm).ack_now, "first packet");
        assert!(!ack(&mut r, 1, calm).ack_now);
        assert!(!ack(&mut r, 2, calm).ack_now);
        assert!(ack(&mut r, 3, calm).ack_now, "300 bytes unacknowledged");
        assert!(
            !ack(&mut r, 5, calm).ack_now,
            "a gap alone does not force an ACK"
        );
        let req = Urgent {
            ack_req: true,
            ..calm
        };
        assert!(ack(&mut r, 6, req).ack_now, "request");
        assert!(
            ack(&mut r, 4, calm).ack_now,
            "the gap drained while a request was pending"
        );
        let dup = ack(&mut r, 4, calm);
        assert!(dup.ack_now && !dup.fresh);
        assert!(!ack(&mut r, 7, calm).ack_now);
        let ecn = Urgent { ecn: true, ..calm };
        assert!(ack(&mut r, 8, ecn).ack_now);
        assert_eq!(r.received.cumulative(), 9);
    }

    #[test]
    fn without_coalescing_every_packet_is_acknowledged() {
        let mut r = Receiver::default();
        assert!((0..10).all(|s| r.on_reliable_data(s, 100, Urgent::default(), 0).ack_now));
    }

    #[test]
    fn the_sack_bitmap_starts_where_the_sender_can_recompute_it() {
        let mut r = Receiver::default();
        for s in [0, 1, 2, 70, 100, 101] {
            r.on_data(s);
        }
        // Cumulative 3; for packet 101 the base is max(101 - 63, 4) = 38: bits for 70, 100
        // and 101.
        assert_eq!(sack_base(101, 3), 38);
        assert_eq!(r.sack_bitmap(101), 1 << 32 | 1 << 62 | 1 << 63);
        // Near the cumulative point the base is cumulative + 1.
        assert_eq!(sack_base(5, 3), 4);
    }
}
