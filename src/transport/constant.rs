//! `host.cc = "constant"`: a fixed window per flow, in packets, from `host.window_bdp`
//! bandwidth-delay products (ALGORITHMS.md appendix 1: 1.5 × BDP by default). A flow sends
//! while fewer than `window` of its packets are unacknowledged; every ACK opens the window by
//! one packet. No loss recovery yet: a lost packet keeps its window slot forever.
//!
//! It is the paced transport's bookkeeping (each packet sent once, ACKs counted) behind a
//! window.

use super::paced::Paced;
use super::{AckInfo, AckOutcome};
use serde::{Deserialize, Serialize};

/// The paced transport's bookkeeping (each packet sent once, ACKs counted), gated by a window.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Constant {
    flow: Paced,
    window: u32,
}

impl Constant {
    pub fn new(packets: u32, window: u32) -> Constant {
        assert!(window > 0, "a window holds a packet");
        Constant {
            flow: Paced::new(packets),
            window,
        }
    }

    /// Packets sent and not yet acknowledged.
    pub fn in_flight(&self) -> u32 {
        self.flow.in_flight()
    }

    #[inline]
    pub fn next_seq(&mut self, now_ps: u64) -> Option<u32> {
        if self.in_flight() < self.window {
            self.flow.next_seq(now_ps)
        } else {
            None
        }
    }

    #[inline]
    pub fn has_data(&self) -> bool {
        self.flow.has_data()
    }

    #[inline]
    pub fn on_ack(&mut self, ack: &AckInfo, now_ps: u64) -> AckOutcome {
        self.flow.on_ack(ack, now_ps)
    }

    pub fn is_complete(&self) -> bool {
        self.flow.is_complete()
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
        }
    }

    #[test]
    fn never_more_than_the_window_in_flight_and_each_ack_opens_one_slot() {
        let mut c = Constant::new(10, 3);
        let sent: Vec<_> = std::iter::from_fn(|| c.next_seq(0)).collect();
        assert_eq!(sent, vec![0, 1, 2]);
        assert!(c.has_data(), "data left, window closed");
        c.on_ack(&ack(1), 0);
        assert_eq!(c.next_seq(0), Some(3));
        assert_eq!(c.next_seq(0), None);
        for seq in [0, 2, 3] {
            c.on_ack(&ack(seq), 0);
        }
        let rest: Vec<_> = std::iter::from_fn(|| c.next_seq(0)).collect();
        assert_eq!(rest, vec![4, 5, 6]);
        assert_eq!(c.in_flight(), 3);
        assert_eq!(c.on_ack(&ack(9), 0).stale, 1, "never sent");
    }
}
