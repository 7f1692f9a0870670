//! Queue discipline of switch output ports: the one place that decides whether a packet may
//! enter a port's queue and what it is marked with. Today: drop-tail on a byte limit and ECN
//! step marking; trimming to a header with a priority class for control packets and ECN ramps
//! belong here too.

use super::Port;
use crate::model::Model;
use crate::packet::{flags, Packet};
use serde::{Deserialize, Serialize};

/// How ECN marks are decided.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum EcnRule {
    Off,
    /// Mark a data packet arriving at a port that already holds at least this many bytes
    /// (DCTCP style, on enqueue).
    Step {
        threshold_bytes: u64,
    },
}

#[derive(Clone, Copy, Debug, Serialize, Deserialize)]
pub struct QueueDiscipline {
    /// Per-port byte limit (`u64::MAX`: unlimited).
    pub buffer_bytes: u64,
    pub ecn: EcnRule,
}

/// What happened to a packet offered to a port.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Admission {
    Enqueued { marked: bool },
    Dropped,
}

impl QueueDiscipline {
    /// The scenario's switch ports (the same on every switch today; per-switch settings fit
    /// here, since each switch keeps its own).
    pub fn switch_ports(m: &Model) -> QueueDiscipline {
        QueueDiscipline {
            buffer_bytes: m.buffer_bytes,
            ecn: EcnRule::Step {
                threshold_bytes: m.ecn_threshold_bytes,
            },
        }
    }

    /// Offers `pkt` to `port`: drops it if it would exceed the buffer, else marks (data only,
    /// never a packet that is then dropped) and enqueues it. Updates the port's counters.
    #[inline]
    pub fn admit(&self, port: &mut Port, mut pkt: Packet, now_ps: u64) -> Admission {
        if port.queued_bytes + pkt.size_bytes as u64 > self.buffer_bytes {
            port.stats.drops = port.stats.drops.saturating_add(1);
            return Admission::Dropped;
        }
        let marked = match self.ecn {
            EcnRule::Step { threshold_bytes } => {
                pkt.is_data() && !pkt.ecn() && port.queued_bytes >= threshold_bytes
            }
            EcnRule::Off => false,
        };
        if marked {
            pkt.flags |= flags::ECN_CE;
            port.stats.ecn_marks = port.stats.ecn_marks.saturating_add(1);
        }
        port.push(pkt, now_ps);
        Admission::Enqueued { marked }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::packet::PacketKind;

    use crate::packet::test_packet as pkt;

    #[test]
    fn drop_tail_and_step_marking() {
        let q = QueueDiscipline {
            buffer_bytes: 300,
            ecn: EcnRule::Step {
                threshold_bytes: 100,
            },
        };
        let mut port = Port::default();
        let data = pkt(PacketKind::Data, 100);
        assert_eq!(
            q.admit(&mut port, data, 0),
            Admission::Enqueued { marked: false }
        );
        // 100 queued >= threshold: data marked, ACKs never.
        assert_eq!(
            q.admit(&mut port, data, 1),
            Admission::Enqueued { marked: true }
        );
        assert_eq!(
            q.admit(&mut port, pkt(PacketKind::Ack, 64), 2),
            Admission::Enqueued { marked: false }
        );
        // 264 + 100 > 300: dropped, not counted as marked.
        assert_eq!(q.admit(&mut port, data, 3), Admission::Dropped);
        assert_eq!((port.stats.drops, port.stats.ecn_marks), (1, 1));
        assert!(port.queue[1].ecn() && !port.queue[0].ecn());
        assert_eq!(port.queued_bytes, 264);
    }
}
