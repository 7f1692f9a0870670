//! Queue discipline of switch output ports: the one place that decides whether a packet may
//! enter a port, which queue it joins, and what it is marked with (as htsim's `CompositeQueue`):
//! - the FIFO holds data up to `buffer_bytes`; a data packet that does not fit is dropped, or
//!   with trimming cut to a header that joins the strict-priority control queue (UEC htsim's
//!   composite queue; optionally a coin flip trims the FIFO's last packet instead);
//! - with a priority queue, ACKs, NACKs and trimmed headers join it (capped at
//!   `ctrl_buffer_bytes`); without one they share the FIFO and its limit;
//! - ECN: a step threshold judged at enqueue (DCTCP), or a ramp judged at dequeue on the FIFO
//!   left behind (UEC htsim `decide_ECN`); only whole data packets are marked;
//! - with a shared buffer (`switch.buffer = "shared"`), a switch's FIFOs draw on one pool of B
//!   bytes ([`SharedPool`]) instead of `buffer_bytes` each: Choudhury & Hahne's dynamic
//!   threshold ("Dynamic Queue Length Thresholds for Shared-Memory Packet Switches") lets a
//!   packet of `size` join a FIFO of q bytes iff used + size ≤ B and q + size ≤ α (B − used),
//!   used being the bytes of all the switch's FIFOs before the packet. A packet that fails
//!   overflows as above (dropped or trimmed). The priority queue is outside the pool.
//!
//! The discipline's parameters are defined with the model (they are scenario values in
//! simulator units, below this layer); its behaviour is here.

use super::Port;
pub(crate) use crate::model::{CtrlShare, EcnRule, Overflow, QueueDiscipline};
use crate::packet::{flags, Packet};
use rand::Rng;
use rand_pcg::Pcg32;
use serde::{Deserialize, Serialize};

/// A switch's shared buffer: its pool, α, and the bytes all its ports' FIFOs hold.
/// Invariant: `used_bytes` = Σ FIFO bytes ≤ `pool_bytes` (the switch takes the FIFO's
/// difference around every call that changes one: [`QueueDiscipline::offer`], the end of a
/// transmission).
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub(crate) struct SharedPool {
    pub pool_bytes: u64,
    pub alpha: f64,
    pub used_bytes: u64,
}

impl SharedPool {
    /// An empty pool of `pool_bytes` under threshold factor `alpha`.
    pub(crate) fn new(pool_bytes: u64, alpha: f64) -> SharedPool {
        SharedPool {
            pool_bytes,
            alpha,
            used_bytes: 0,
        }
    }

    /// The dynamic threshold: whether `size` more bytes may join a FIFO holding `fifo`
    /// (both this pool's state before the packet).
    #[inline]
    pub(crate) fn admits(&self, fifo: u64, size: u64) -> bool {
        let free = self.pool_bytes - self.used_bytes;
        size <= free && (fifo + size) as f64 <= self.alpha * free as f64
    }

    /// [`SharedPool::admits`] once `evicted` bytes have left the FIFO (the trimming coin's
    /// victim).
    fn admits_after_evicting(&self, fifo: u64, evicted: u64, size: u64) -> bool {
        let after = SharedPool {
            used_bytes: self.used_bytes - evicted,
            ..*self
        };
        after.admits(fifo - evicted, size)
    }

    /// Adds the change of one FIFO, `before` → `after` bytes, to `used_bytes`.
    #[inline]
    pub(crate) fn changed(&mut self, before: u64, after: u64) {
        self.used_bytes = self.used_bytes + after - before;
        debug_assert!(self.used_bytes <= self.pool_bytes, "{self:?}");
    }
}

/// What happened to a packet offered to a port.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Admission {
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
    /// Whether a data packet that does not fit is trimmed rather than dropped.
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
    /// trimmed headers). `rng` is the switch's queue stream (coin flips). `lost`: an injected
    /// loss ([`QueueDiscipline::lose`]). `pool`: the switch's shared buffer, whose threshold
    /// is then the FIFO's room and whose `used_bytes` follows the FIFO's change; `None`:
    /// per-port buffers of `buffer_bytes`.
    #[inline]
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn offer(
        &self,
        port: &mut Port,
        pkt: Packet,
        now_ps: u64,
        last_hop: bool,
        rng: &mut Pcg32,
        lost: bool,
        pool: Option<&mut SharedPool>,
    ) -> Admission {
        let Some(pool) = pool else {
            return match lost {
                false => self.admit(port, pkt, now_ps, last_hop, rng, None),
                true => self.lose(port, pkt, now_ps, last_hop, rng, None),
            };
        };
        let before = port.fifo_bytes();
        let a = match lost {
            false => self.admit(port, pkt, now_ps, last_hop, rng, Some(pool)),
            true => self.lose(port, pkt, now_ps, last_hop, rng, Some(pool)),
        };
        pool.changed(before, port.fifo_bytes());
        a
    }

    /// Whether `size` more bytes fit a FIFO holding `fifo`: its own buffer, or the shared
    /// pool's threshold.
    #[inline]
    fn fits(&self, fifo: u64, size: u64, pool: Option<&SharedPool>) -> bool {
        match pool {
            None => fifo + size <= self.buffer_bytes,
            Some(pool) => pool.admits(fifo, size),
        }
    }

    /// Admission proper (no injected loss), into the room of `fits`.
    #[inline]
    fn admit(
        &self,
        port: &mut Port,
        pkt: Packet,
        now_ps: u64,
        last_hop: bool,
        rng: &mut Pcg32,
        pool: Option<&SharedPool>,
    ) -> Admission {
        if self.priority_control && pkt.is_control() {
            return self.admit_ctrl(port, pkt, now_ps);
        }
        if !self.fits(port.fifo_bytes(), pkt.size_bytes as u64, pool) {
            return self.overflow(port, pkt, now_ps, last_hop, rng, pool);
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
    fn lose(
        &self,
        port: &mut Port,
        pkt: Packet,
        now_ps: u64,
        last_hop: bool,
        rng: &mut Pcg32,
        pool: Option<&SharedPool>,
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
        forced.overflow(port, pkt, now_ps, last_hop, rng, pool)
    }

    #[cold]
    fn overflow(
        &self,
        port: &mut Port,
        pkt: Packet,
        now_ps: u64,
        last_hop: bool,
        rng: &mut Pcg32,
        pool: Option<&SharedPool>,
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
            let (fifo, size) = (port.fifo_bytes(), pkt.size_bytes as u64);
            let tail_fits = port.queue.back().is_some_and(|t| {
                let tail = t.size_bytes as u64;
                match pool {
                    None => fifo - tail + size <= self.buffer_bytes,
                    Some(pool) => pool.admits_after_evicting(fifo, tail, size),
                }
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
            shared: None,
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
        let mut admit = |port: &mut Port, p, t| q.offer(port, p, t, false, &mut rng, false, None);
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
                    q.offer(&mut port, p, i as u64, i % 2 == 0, &mut rng, false, None),
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
            .map(|t| {
                q.offer(
                    &mut port,
                    pkt(PacketKind::Data, 500),
                    t,
                    false,
                    &mut rng,
                    false,
                    None,
                )
            })
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
            q.offer(&mut port, header, 30, false, &mut rng, false, None),
            Admission::Returned(header)
        );
        assert_eq!(
            q.offer(
                &mut port,
                pkt(PacketKind::Nack, 64),
                31,
                false,
                &mut rng,
                false,
                None
            ),
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
            if q.offer(&mut port, p, t as u64, false, &mut rng, false, None)
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

    // ---- Shared buffer: the dynamic threshold ----

    /// Data packets of `size` bytes offered to port 0 of a lone switch port set until one
    /// fails; then ten more. Returns the FIFO's bytes and whether any later one got in.
    fn fill_alone(q: &QueueDiscipline, pool: &mut SharedPool, size: u32) -> (u64, bool) {
        let mut rng = Pcg32::seed_from_u64(4);
        let mut port = Port::default();
        let mut t = 0;
        let mut offer = |port: &mut Port, pool: &mut SharedPool, t| {
            let p = pkt(PacketKind::Data, size);
            q.offer(port, p, t, false, &mut rng, false, Some(pool))
        };
        while offer(&mut port, pool, t) != Admission::Dropped {
            t += 1;
        }
        let full = port.fifo_bytes();
        let later = (0..10).any(|i| offer(&mut port, pool, t + i) != Admission::Dropped);
        assert_eq!(pool.used_bytes, port.fifo_bytes());
        (full, later)
    }

    /// A lone queue fills to α B / (1 + α) within one packet (its threshold α (B − q) meets
    /// it there), and no further; a huge α leaves only the pool's limit. `buffer_bytes` is
    /// no cap of its own (1,000 bytes here).
    #[test]
    fn a_lone_queue_fills_to_alpha_b_over_one_plus_alpha() {
        let q = qd(1000, EcnRule::Off, Overflow::Drop);
        let b = 1_000_000u64;
        for alpha in [0.25, 0.5, 1.0, 2.0, 8.0] {
            let mut pool = SharedPool::new(b, alpha);
            let (full, later) = fill_alone(&q, &mut pool, 1500);
            let expected = alpha * b as f64 / (1.0 + alpha);
            assert!(
                (full as f64 - expected).abs() <= 1500.0,
                "α = {alpha}: {full} bytes, expected {expected:.0}"
            );
            assert!(!later, "α = {alpha}: a full queue admits nothing more");
        }
        let mut pool = SharedPool::new(b, 1e9);
        let (full, _) = fill_alone(&q, &mut pool, 1500);
        assert!(
            full <= b && full + 1500 > b,
            "α = 10^9: the pool's limit, {full}"
        );
    }

    /// Two queues taking turns under α = 1 settle at B/3 each (q = B − 2q), three at B/4.
    #[test]
    fn competing_queues_share_the_pool_as_the_threshold_says() {
        let q = qd(1000, EcnRule::Off, Overflow::Drop);
        let b = 900_000u64;
        let size = 1000u32;
        for n in [2usize, 3] {
            let mut pool = SharedPool::new(b, 1.0);
            let mut ports: Vec<Port> = (0..n).map(|_| Port::default()).collect();
            let mut rng = Pcg32::seed_from_u64(5);
            for t in 0..(b as usize / size as usize) * 2 {
                let port = &mut ports[t % n];
                let p = pkt(PacketKind::Data, size);
                q.offer(port, p, t as u64, false, &mut rng, false, Some(&mut pool));
            }
            let share = b as f64 / (n as f64 + 1.0);
            for port in &ports {
                assert!(
                    (port.fifo_bytes() as f64 - share).abs() <= size as f64,
                    "{n} queues: {} bytes each, expected {share:.0}",
                    port.fifo_bytes()
                );
            }
            let total: u64 = ports.iter().map(Port::fifo_bytes).sum();
            assert_eq!(pool.used_bytes, total);
        }
    }

    /// Random arrivals (sizes 64 to 4,158 bytes) and departures on four ports: a packet
    /// enters a FIFO iff the pool has room and the FIFO stays within α × the free space
    /// before it (dropped otherwise); with trimming, every packet that enters satisfies the
    /// rule in the state it found (after the coin's eviction). `used` = Σ FIFO bytes ≤ B
    /// throughout.
    #[test]
    fn no_queue_exceeds_alpha_times_the_free_space_at_admission() {
        let mut rng = Pcg32::seed_from_u64(6);
        let trim = Overflow::Trim {
            trim_bytes: 64,
            evict_queued: true,
            return_to_sender: false,
        };
        for (overflow, alpha) in [
            (Overflow::Drop, 1.0),
            (Overflow::Drop, 0.5),
            (Overflow::Drop, 3.0),
            (trim, 1.0),
            (trim, 2.0),
        ] {
            let q = qd(1, EcnRule::Off, overflow);
            let mut pool = SharedPool::new(200_000, alpha);
            let mut ports: Vec<Port> = (0..4).map(|_| Port::default()).collect();
            let (mut entered, mut refused) = (0, 0);
            for t in 0..20_000u64 {
                let i = rng.gen_range(0..4);
                if rng.gen_bool(0.45) {
                    // A departure: the head of port i's FIFO leaves (as at a TxDone).
                    let port = &mut ports[i];
                    if !port.queue.is_empty() {
                        let before = port.fifo_bytes();
                        port.begin_service(None);
                        port.pop(t, 1);
                        pool.changed(before, port.fifo_bytes());
                    }
                } else {
                    let mut p = pkt(PacketKind::Data, rng.gen_range(64..=4158));
                    p.seq = t as u32;
                    let size = p.size_bytes as u64;
                    let (used, fifo) = (pool.used_bytes, ports[i].fifo_bytes());
                    let free = pool.pool_bytes - used;
                    let rule = used + size <= pool.pool_bytes
                        && (fifo + size) as f64 <= alpha * free as f64;
                    let a = q.offer(&mut ports[i], p, t, false, &mut rng, false, Some(&mut pool));
                    let port = &ports[i];
                    let in_fifo = port.queue.back().is_some_and(|b| b.seq == p.seq);
                    if overflow == Overflow::Drop {
                        assert_eq!(in_fifo, rule, "α {alpha}, t {t}: {a:?}");
                        assert_eq!(a == Admission::Dropped, !rule);
                    } else if in_fifo {
                        // In the state it found (the victim evicted, if any).
                        let (u, f) = (pool.used_bytes - size, port.fifo_bytes() - size);
                        assert!(
                            u + size <= pool.pool_bytes
                                && (f + size) as f64 <= alpha * (pool.pool_bytes - u) as f64,
                            "α {alpha}, t {t}: FIFO {f} + {size} with {u} used"
                        );
                    }
                    if in_fifo {
                        entered += 1;
                    } else {
                        refused += 1;
                    }
                    // Headers leave at once (control goes first), so that departures drain
                    // the FIFOs.
                    let port = &mut ports[i];
                    while !port.ctrl.is_empty() {
                        port.begin_service(None);
                        port.pop(t, 1);
                    }
                }
                let total: u64 = ports.iter().map(Port::fifo_bytes).sum();
                assert_eq!(pool.used_bytes, total, "t {t}: used = Σ FIFO bytes");
                assert!(total <= pool.pool_bytes);
            }
            assert!(
                entered > 1000 && refused > 1000,
                "{overflow:?}, α {alpha}: {entered} in, {refused} refused"
            );
        }
    }

    /// Per-port buffers are what they were: each FIFO alone up to `buffer_bytes`, whatever
    /// the others hold (drop-tail, one port's load never refuses another's packets).
    #[test]
    fn per_port_buffers_are_independent_drop_tail() {
        let q = qd(10_000, EcnRule::Off, Overflow::Drop);
        let mut rng = Pcg32::seed_from_u64(7);
        let mut ports: Vec<Port> = (0..3).map(|_| Port::default()).collect();
        for t in 0..5_000u64 {
            let i = rng.gen_range(0..3);
            if rng.gen_bool(0.3) && !ports[i].queue.is_empty() {
                ports[i].begin_service(None);
                ports[i].pop(t, 1);
                continue;
            }
            let p = pkt(PacketKind::Data, rng.gen_range(64..=4158));
            let fits = ports[i].fifo_bytes() + p.size_bytes as u64 <= 10_000;
            let a = q.offer(&mut ports[i], p, t, false, &mut rng, false, None);
            assert_eq!(a == Admission::Dropped, !fits, "t {t}");
        }
        assert!(ports.iter().all(|p| p.fifo_bytes() <= 10_000));
    }
}
