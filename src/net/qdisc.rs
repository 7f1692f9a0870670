//! Queue discipline of switch output ports: the one place that decides whether a packet may
//! enter a port, which queue it joins, and what it is marked with (as htsim's `CompositeQueue`):
//! - the FIFO holds data up to `buffer_bytes`; a data packet that does not fit is dropped, or
//!   with trimming cut to a header that joins the strict-priority control queue (UEC htsim's
//!   composite queue; optionally a coin flip trims the FIFO's last packet instead);
//! - with a priority queue, ACKs, NACKs and trimmed headers join it (capped at
//!   `ctrl_buffer_bytes`); without one they share the FIFO and its limit;
//! - ECN: a step threshold judged at enqueue (DCTCP), or a ramp judged at dequeue on the FIFO
//!   left behind (UEC htsim `decide_ECN`); only whole data packets are marked.
//!
//! The discipline's parameters are defined with the model (they are scenario values in
//! simulator units, below this layer); its behaviour is here.

use super::Port;
pub use crate::model::{CtrlShare, EcnRule, Overflow, QueueDiscipline};
use crate::packet::{flags, Packet};
use rand::Rng;
use rand_pcg::Pcg32;

/// What happened to a packet offered to a port.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Admission {
    Enqueued {
        marked: bool,
    },
    /// A data packet (the arriving one, or the FIFO's last) was cut to a header, which joined
    /// the control queue; the arriving packet is in the port either way (`marked`: it entered
    /// the FIFO ECN-marked).
    Trimmed {
        marked: bool,
    },
    Dropped,
    /// A data packet was cut to a header that found the priority queue full: the header
    /// (returned here, `TRIMMED`) goes back to its sender (`return_to_sender`); the port
    /// holds nothing new.
    Returned(Packet),
}

impl QueueDiscipline {
    pub fn is_trimming(&self) -> bool {
        matches!(self.overflow, Overflow::Trim { .. })
    }

    fn returns_to_sender(&self) -> bool {
        matches!(
            self.overflow,
            Overflow::Trim {
                return_to_sender: true,
                ..
            }
        )
    }

    /// Offers `pkt` to `port`: decides its queue, trims, drops or marks it, enqueues, and
    /// updates the port's counters. `last_hop`: the port leads to a host (recorded on
    /// trimmed headers). `rng` is the switch's queue stream (coin flips).
    #[inline]
    pub fn admit(
        &self,
        port: &mut Port,
        pkt: Packet,
        now_ps: u64,
        last_hop: bool,
        rng: &mut Pcg32,
    ) -> Admission {
        if self.priority_control && pkt.is_control() {
            return self.admit_ctrl(port, pkt, now_ps);
        }
        let size = pkt.size_bytes as u64;
        if port.fifo_bytes() + size > self.buffer_bytes {
            return self.overflow(port, pkt, now_ps, last_hop, rng);
        }
        let marked = self.enqueue(port, pkt, now_ps);
        Admission::Enqueued { marked }
    }

    /// Appends `pkt` to the FIFO (which has room for it), step-marking it on the way in;
    /// returns whether it was marked.
    #[inline]
    fn enqueue(&self, port: &mut Port, mut pkt: Packet, now_ps: u64) -> bool {
        let marked = match self.ecn {
            EcnRule::Step { threshold_bytes } => {
                pkt.is_data()
                    && !pkt.is_trimmed()
                    && !pkt.ecn()
                    && port.fifo_bytes() >= threshold_bytes
            }
            EcnRule::Off | EcnRule::Ramp { .. } => false,
        };
        if marked {
            mark(&mut pkt, port);
        }
        port.push(pkt, now_ps);
        marked
    }

    fn admit_ctrl(&self, port: &mut Port, pkt: Packet, now_ps: u64) -> Admission {
        if port.ctrl_bytes + pkt.size_bytes as u64 > self.ctrl_buffer_bytes {
            // A header trimmed upstream goes back like one trimmed here; ACKs, NACKs and
            // pulls are dropped.
            return if pkt.is_data() && self.returns_to_sender() {
                Admission::Returned(pkt)
            } else {
                dropped(port)
            };
        }
        port.push_ctrl(pkt, now_ps);
        Admission::Enqueued { marked: false }
    }

    /// An injected loss: a data packet is treated as overflowing (dropped or trimmed), a
    /// control packet is dropped.
    #[cold]
    pub fn lose(
        &self,
        port: &mut Port,
        pkt: Packet,
        now_ps: u64,
        last_hop: bool,
        rng: &mut Pcg32,
    ) -> Admission {
        if pkt.is_control() {
            return dropped(port);
        }
        let forced = QueueDiscipline {
            overflow: match self.overflow {
                // The arriving packet is the one lost: no coin flip for a queued victim.
                Overflow::Trim {
                    trim_bytes,
                    return_to_sender,
                    ..
                } => Overflow::Trim {
                    trim_bytes,
                    evict_queued: false,
                    return_to_sender,
                },
                Overflow::Drop => Overflow::Drop,
            },
            ..*self
        };
        forced.overflow(port, pkt, now_ps, last_hop, rng)
    }

    #[cold]
    fn overflow(
        &self,
        port: &mut Port,
        pkt: Packet,
        now_ps: u64,
        last_hop: bool,
        rng: &mut Pcg32,
    ) -> Admission {
        let Overflow::Trim {
            trim_bytes,
            evict_queued,
            return_to_sender,
        } = self.overflow
        else {
            return dropped(port);
        };
        let trim = |mut p: Packet| {
            p.size_bytes = trim_bytes.min(p.size_bytes);
            p.flags |= flags::TRIMMED | if last_hop { flags::LAST_HOP } else { 0 };
            p
        };
        // Without a priority queue there is no room for control packets; and a header that would
        // overflow the priority queue is dropped with its packet (as htsim's `CompositeQueue`).
        let no_room = port.ctrl_bytes + trim_bytes as u64 > self.ctrl_buffer_bytes;
        if !pkt.is_data() || pkt.is_trimmed() || (no_room && !return_to_sender) {
            return dropped(port);
        }
        port.stats.trims = port.stats.trims.saturating_add(1);
        if no_room {
            return Admission::Returned(trim(pkt));
        }
        if evict_queued && rng.gen_bool(0.5) {
            let tail_fits = port.queue.back().is_some_and(|t| {
                port.fifo_bytes() - t.size_bytes as u64 + pkt.size_bytes as u64 <= self.buffer_bytes
            });
            if tail_fits {
                if let Some(victim) = port.evict_fifo_tail(now_ps) {
                    port.push_ctrl(trim(victim), now_ps);
                    let marked = self.enqueue(port, pkt, now_ps);
                    return Admission::Trimmed { marked };
                }
            }
        }
        port.push_ctrl(trim(pkt), now_ps);
        Admission::Trimmed { marked: false }
    }

    /// ECN on dequeue (the ramp): marks `pkt`, which has just left `port`'s FIFO, and
    /// returns whether it did.
    #[inline]
    pub fn dequeued(&self, pkt: &mut Packet, port: &mut Port, rng: &mut Pcg32) -> bool {
        let EcnRule::Ramp {
            min_bytes,
            max_bytes,
        } = self.ecn
        else {
            return false;
        };
        if !pkt.is_data() || pkt.is_trimmed() || pkt.ecn() {
            return false;
        }
        let q = port.fifo_bytes();
        let marked = q > max_bytes
            || (q > min_bytes
                && rng.gen_bool((q - min_bytes) as f64 / (max_bytes - min_bytes) as f64));
        if marked {
            mark(pkt, port);
        }
        marked
    }
}

/// Counts a drop at `port`.
fn dropped(port: &mut Port) -> Admission {
    port.stats.drops = port.stats.drops.saturating_add(1);
    Admission::Dropped
}

#[inline]
fn mark(pkt: &mut Packet, port: &mut Port) {
    pkt.flags |= flags::ECN_CE;
    port.stats.ecn_marks = port.stats.ecn_marks.saturating_add(1);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::packet::test_packet as pkt;
    use crate::packet::PacketKind;
    use rand::SeedableRng;

    fn qd(buffer_bytes: u64, ecn: EcnRule, overflow: Overflow) -> QueueDiscipline {
        QueueDiscipline {
            buffer_bytes,
            ecn,
            overflow,
            priority_control: matches!(overflow, Overflow::Trim { .. }),
            ctrl_buffer_bytes: u64::MAX,
            ctrl_share: None,
        }
    }

    #[test]
    fn drop_tail_and_step_marking() {
        let q = qd(
            300,
            EcnRule::Step {
                threshold_bytes: 100,
            },
            Overflow::Drop,
        );
        let mut rng = Pcg32::seed_from_u64(1);
        let mut port = Port::default();
        let data = pkt(PacketKind::Data, 100);
        let mut admit = |port: &mut Port, p, t| q.admit(port, p, t, false, &mut rng);
        assert_eq!(
            admit(&mut port, data, 0),
            Admission::Enqueued { marked: false }
        );
        // 100 queued >= threshold: data marked, ACKs never.
        assert_eq!(
            admit(&mut port, data, 1),
            Admission::Enqueued { marked: true }
        );
        assert_eq!(
            admit(&mut port, pkt(PacketKind::Ack, 64), 2),
            Admission::Enqueued { marked: false }
        );
        // 264 + 100 > 300: dropped, not counted as marked.
        assert_eq!(admit(&mut port, data, 3), Admission::Dropped);
        assert_eq!((port.stats.drops, port.stats.ecn_marks), (1, 1));
        assert!(port.queue[1].ecn() && !port.queue[0].ecn());
        assert_eq!(port.queued_bytes, 264);
    }

    #[test]
    fn every_overflowing_packet_becomes_one_header_and_the_fifo_never_exceeds_its_limit() {
        let mut rng = Pcg32::seed_from_u64(2);
        for evict_queued in [false, true] {
            let trim = Overflow::Trim {
                trim_bytes: 64,
                evict_queued,
                return_to_sender: false,
            };
            let q = qd(1000, EcnRule::Off, trim);
            let mut port = Port::default();
            let mut trimmed = 0;
            for (i, seq) in (0..50u32).enumerate() {
                let mut p = pkt(PacketKind::Data, 300);
                p.seq = seq;
                if matches!(
                    q.admit(&mut port, p, i as u64, i % 2 == 0, &mut rng),
                    Admission::Trimmed { .. }
                ) {
                    trimmed += 1;
                }
                assert!(port.fifo_bytes() <= 1000);
            }
            // 3 whole packets fit; every later arrival trims exactly one packet.
            assert_eq!((trimmed, port.ctrl.len(), port.queue.len()), (47, 47, 3));
            assert_eq!(port.stats.trims, 47);
            assert!(port
                .ctrl
                .iter()
                .all(|h| h.is_trimmed() && h.size_bytes == 64));
            let evicted = port.queue.iter().filter(|p| p.seq > 2).count();
            assert_eq!(evicted > 0, evict_queued, "the coin evicts queued packets");
            // Headers are served before any queued data.
            assert!(port.begin_service(None).is_trimmed());
        }
    }

    /// Twenty 500-byte data packets offered to a port with a 1,000-byte FIFO and room for
    /// two 64-byte headers.
    fn twenty_into_two_header_slots(
        return_to_sender: bool,
    ) -> (QueueDiscipline, Port, Vec<Admission>, Pcg32) {
        let trim = Overflow::Trim {
            trim_bytes: 64,
            evict_queued: true,
            return_to_sender,
        };
        let mut q = qd(1000, EcnRule::Off, trim);
        q.ctrl_buffer_bytes = 128;
        let mut rng = Pcg32::seed_from_u64(1);
        let mut port = Port::default();
        let outcomes: Vec<Admission> = (0..20)
            .map(|t| q.admit(&mut port, pkt(PacketKind::Data, 500), t, false, &mut rng))
            .collect();
        (q, port, outcomes, rng)
    }

    #[test]
    fn trimmed_headers_respect_the_control_queue_cap() {
        let (_, port, outcomes, _) = twenty_into_two_header_slots(false);
        assert_eq!(port.ctrl_bytes, 128, "two headers, then drops");
        assert_eq!(
            outcomes
                .iter()
                .filter(|a| **a == Admission::Dropped)
                .count(),
            16
        );
        assert_eq!((port.stats.trims, port.stats.drops), (2, 16));
    }

    #[test]
    fn with_return_to_sender_a_header_that_finds_the_control_queue_full_comes_back() {
        let (q, mut port, outcomes, mut rng) = twenty_into_two_header_slots(true);
        assert_eq!(port.ctrl_bytes, 128, "two headers queued");
        assert_eq!(port.fifo_bytes(), 1000, "two whole packets queued");
        let returned: Vec<&Packet> = outcomes
            .iter()
            .filter_map(|a| match a {
                Admission::Returned(h) => Some(h),
                _ => None,
            })
            .collect();
        assert_eq!(returned.len(), 16);
        assert!(returned
            .iter()
            .all(|h| h.is_trimmed() && h.size_bytes == 64));
        assert_eq!((port.stats.trims, port.stats.drops), (18, 0));
        // A header trimmed upstream that finds the queue full comes back too; a control
        // packet is dropped.
        let mut header = pkt(PacketKind::Data, 64);
        header.flags |= flags::TRIMMED;
        assert_eq!(
            q.admit(&mut port, header, 30, false, &mut rng),
            Admission::Returned(header)
        );
        assert_eq!(
            q.admit(&mut port, pkt(PacketKind::Nack, 64), 31, false, &mut rng),
            Admission::Dropped
        );
    }

    #[test]
    fn a_packet_admitted_by_evicting_the_tail_is_step_marked_like_any_other() {
        let q = qd(
            1000,
            EcnRule::Step {
                threshold_bytes: 100,
            },
            Overflow::Trim {
                trim_bytes: 64,
                evict_queued: true,
                return_to_sender: false,
            },
        );
        let mut rng = Pcg32::seed_from_u64(1);
        let mut port = Port::default();
        let mut marked_by_eviction = 0;
        for t in 0..40u32 {
            let mut p = pkt(PacketKind::Data, 300);
            p.seq = t;
            if q.admit(&mut port, p, t as u64, false, &mut rng)
                == (Admission::Trimmed { marked: true })
            {
                marked_by_eviction += 1;
            }
        }
        assert!(marked_by_eviction > 0);
        // Every packet in the FIFO after the first arrived with at least 100 bytes queued.
        assert!(port.queue.iter().skip(1).all(|p| p.ecn()));
    }

    #[test]
    fn a_ramp_marks_on_dequeue_with_probability_linear_in_the_queue_left() {
        let q = qd(
            u64::MAX,
            EcnRule::Ramp {
                min_bytes: 1000,
                max_bytes: 3000,
            },
            Overflow::Drop,
        );
        let mut rng = Pcg32::seed_from_u64(3);
        let marks_at = |fifo: u64, rng: &mut Pcg32| {
            let mut port = Port::default();
            port.push(pkt(PacketKind::Data, fifo as u32), 0);
            (0..10_000)
                .filter(|_| {
                    let mut p = pkt(PacketKind::Data, 100);
                    q.dequeued(&mut p, &mut port, rng)
                })
                .count()
        };
        assert_eq!(marks_at(1000, &mut rng), 0);
        assert_eq!(marks_at(3001, &mut rng), 10_000);
        let mid = marks_at(2000, &mut rng) as f64 / 10_000.0;
        assert!((mid - 0.5).abs() < 0.02, "midpoint rate {mid}");
        let mut ack = pkt(PacketKind::Ack, 64);
        let mut port = Port::default();
        port.push(pkt(PacketKind::Data, 5000), 0);
        assert!(
            !q.dequeued(&mut ack, &mut port, &mut rng),
            "ACKs are never marked"
        );
    }
}
