//! The paced transport (`host.cc = "none"`): every packet is sent once, in order, as fast as
//! the NIC's pacing allows; the receiver ACKs every packet; there is no window and no loss
//! recovery. A flow completes when every packet has been acknowledged. The ACKs (echoing the
//! data packet's ECN mark and, for the learning host policies, its entropy value) also go to
//! the host LB's feedback, as a reliable flow's do (REPS in the Ofan paper's no-CC runs); they
//! never change the rate.
//!
//! It counts acknowledgements rather than keeping the set of acknowledged packets (12 bytes a
//! flow: an all-to-all keeps every flow of a host active at once). That is exact because
//! each packet is sent once and acknowledged once; an ACK for a packet not yet sent, or after
//! the flow completed, is counted as stale and ignored. A duplicate of an ACK already
//! counted cannot be told apart (it would complete the flow early); none arises, since
//! nothing is sent twice.

use super::AckInfo;
use serde::{Deserialize, Serialize};

/// What an acknowledgement changed.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct AckOutcome {
    /// Packets acknowledged for the first time.
    pub newly_acked: u32,
    /// Acknowledgements that acknowledged nothing new (late or out of range).
    pub stale: u32,
    /// The flow has just completed (all packets acknowledged).
    pub completed: bool,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
pub(crate) struct Paced {
    packets: u32,
    next_seq: u32,
    acked: u32,
}

impl Paced {
    pub(crate) fn new(packets: u32) -> Paced {
        assert!(packets > 0, "a flow has at least one packet");
        Paced {
            packets,
            next_seq: 0,
            acked: 0,
        }
    }

    /// A flow not started yet: nothing to send (see `net::host`'s placeholders).
    pub(crate) fn not_started() -> Paced {
        Paced {
            packets: 0,
            next_seq: 0,
            acked: 0,
        }
    }

    /// A one-packet flow already acknowledged: the record of a flow another transport
    /// (Opera's RotorLB) carries, complete from the start.
    pub(crate) fn completed() -> Paced {
        Paced {
            packets: 1,
            next_seq: 1,
            acked: 1,
        }
    }

    #[inline]
    pub(crate) fn next_seq(&mut self, _now_ps: u64) -> Option<u32> {
        (self.next_seq < self.packets).then(|| {
            self.next_seq += 1;
            self.next_seq - 1
        })
    }

    #[inline]
    pub(crate) fn has_data(&self) -> bool {
        self.next_seq < self.packets
    }

    #[inline]
    pub(crate) fn on_ack(&mut self, ack: &AckInfo, _now_ps: u64) -> AckOutcome {
        let fresh = ack.seq < self.next_seq && self.acked < self.next_seq;
        self.acked += fresh as u32;
        AckOutcome {
            newly_acked: fresh as u32,
            stale: !fresh as u32,
            completed: fresh && self.is_complete(),
        }
    }

    pub(crate) fn is_complete(&self) -> bool {
        self.acked == self.packets
    }

    /// Whether this is [`Paced::not_started`]'s placeholder (a real flow has a packet).
    #[inline]
    pub(crate) fn is_placeholder(&self) -> bool {
        self.packets == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ack(seq: u32) -> AckInfo {
        AckInfo {
            seq,
            cumulative: 0,
            sack: 0,
            ecn_echo: false,
            entropy: 0,
            tx_echo: 1,
            sack_base: 1,
        }
    }

    #[test]
    fn late_and_bogus_acks_are_counted_not_fatal() {
        let mut p = Paced::new(3);
        assert_eq!((p.next_seq(0), p.next_seq(0)), (Some(0), Some(1)));
        assert_eq!(p.on_ack(&ack(1), 0).newly_acked, 1);
        assert_eq!(p.on_ack(&ack(2), 0).stale, 1); // never sent
        assert_eq!(p.on_ack(&ack(99), 0).stale, 1); // out of range
        assert_eq!(p.next_seq(0), Some(2));
        assert_eq!(p.next_seq(0), None);
        assert!(!p.on_ack(&ack(0), 0).completed);
        let last = p.on_ack(&ack(2), 0);
        assert!(last.completed && p.is_complete());
        assert_eq!(
            p.on_ack(&ack(2), 0),
            AckOutcome {
                newly_acked: 0,
                stale: 1,
                completed: false
            }
        );
    }
}
