//! An output-queued, store-and-forward switch: on arrival, route (the LB policy chooses when
//! the route offers several ports), offer the packet to the port's queue discipline, and
//! start transmitting if the port is idle.

use super::event::{Scheduler, TimerKind, TimerSeq, TimerSlot};
use super::link::{finish_tx, start_tx};
use super::qdisc::{Admission, QueueDiscipline, SharedPool};
use super::rotorlb;
use super::Port;
use crate::lb::{QueueView, SwitchCtx, SwitchLb};
use crate::metrics::Counters;
use crate::model::Model;
use crate::packet::{flags, Packet, PacketKind, ADVERT_ENTRIES};
use crate::rng::{stream, Purpose};
use crate::topology::opera::{OperaFabric, MAX_UPLINKS};
use crate::topology::{Candidates, NodeId, Route};
use crate::transport::rotor;
use rand::Rng;
use rand_pcg::Pcg32;
use serde::{Deserialize, Serialize};

/// A switch's simulation state (one per switch node; checkpointed whole).
#[derive(Serialize, Deserialize)]
pub struct Switch {
    /// Its node id in the fabric.
    pub id: NodeId,
    /// Its egress ports, in the fabric's port order.
    pub ports: Vec<Port>,
    pub(crate) lb: SwitchLb,
    qdisc: QueueDiscipline,
    rng: Pcg32,
    /// The queue discipline's stream (ECN ramp, trimming coin), apart from the LB's so that
    /// turning either on does not change the other's draws.
    queue_rng: Pcg32,
    salt: u32,
    timers: TimerSeq,
    /// The LB policy's timer.
    lb_timer: TimerSlot,
    /// The LB timer stopped (its policy returned no next time): a packet queued at an idle
    /// port asks the policy whether to wake it (`SwitchLb::wake_ps`).
    lb_asleep: bool,
    /// Fault injection applies here (`switch.loss_fraction`).
    injects_loss: bool,
    /// The shared buffer of every port's FIFO (`switch.buffer = "shared"`); `None`: per-port
    /// buffers.
    pool: Option<SharedPool>,
}

/// A switch's ports as its LB policy sees them.
struct Ports<'a>(&'a [Port]);

impl QueueView for Ports<'_> {
    #[inline]
    fn queued_bytes(&self, p: u16) -> u64 {
        self.0[p as usize].queued_bytes
    }
    fn busy_ps(&self, p: u16) -> u64 {
        self.0[p as usize].stats.busy_ps
    }

    #[inline]
    fn sent_bytes(&self, p: u16) -> u64 {
        self.0[p as usize].stats.bytes_sent
    }
}

impl Switch {
    pub(crate) fn new(m: &Model, id: NodeId) -> Switch {
        let mut rng = stream(m.seed, id as u64, Purpose::SwitchLb);
        let salt = stream(m.seed, id as u64, Purpose::EcmpSalt).gen();
        let lb = SwitchLb::new(&m.lb, &m.fabric, id, &mut rng);
        let num_ports = m.fabric.num_ports(id);
        let ports = (0..num_ports).map(|_| Port::default()).collect();
        let pool = m.qdisc.pool_bytes(num_ports).map(|b| {
            let alpha = m.qdisc.shared.expect("a shared buffer").alpha;
            SharedPool::new(b, alpha)
        });
        Switch {
            id,
            ports,
            lb,
            qdisc: m.qdisc,
            rng,
            queue_rng: stream(m.seed, id as u64, Purpose::Queue),
            salt,
            timers: TimerSeq::default(),
            lb_timer: TimerSlot::default(),
            lb_asleep: false,
            injects_loss: m.loss_per_2_32 > 0
                && (m.loss_switches.is_empty() || m.loss_switches.contains(&id)),
            pool,
        }
    }

    /// The shared buffer's state, if buffers are shared.
    pub(crate) fn pool(&self) -> Option<&SharedPool> {
        self.pool.as_ref()
    }

    /// Bytes in this switch's ports' data FIFOs.
    pub(crate) fn fifo_bytes(&self) -> u64 {
        self.ports.iter().map(Port::fifo_bytes).sum()
    }

    /// Sets the switch's first timers (those its LB policy asks for).
    pub(crate) fn start<S: Scheduler>(&mut self, out: &mut S) {
        if let Some(at) = self.lb.first_timer_ps() {
            let (id, slot) = (self.id, &mut self.lb_timer);
            self.timers.set(slot, id, TimerKind::SwitchLb, 0, at, out);
        }
    }

    pub(crate) fn on_timer<S: Scheduler>(
        &mut self,
        m: &Model,
        now_ps: u64,
        kind: TimerKind,
        gen: u32,
        out: &mut S,
        c: &mut Counters,
    ) {
        match kind {
            TimerKind::SwitchLb if self.lb_timer.fires(gen) => {
                self.lb_timer.clear();
                match self.lb.on_timer(now_ps, &Ports(&self.ports)) {
                    Some(at) => {
                        let (id, slot) = (self.id, &mut self.lb_timer);
                        self.timers.set(slot, id, TimerKind::SwitchLb, 0, at, out);
                    }
                    None => self.lb_asleep = true,
                }
                self.send_adverts(m, now_ps, out, c);
            }
            TimerKind::SwitchLb => {} // re-armed or cancelled since
            TimerKind::NicWake
            | TimerKind::Rto
            | TimerKind::FlowPace
            | TimerKind::PullPace
            | TimerKind::RlbSlot => {
                unreachable!("switch {} has no NIC or flows", self.id)
            }
        }
    }

    /// Queues this tick's LB adverts (if the policy advertises) in the priority queue of
    /// every port toward a lower switch, 16 edge switches per advert. They bypass admission
    /// (never dropped, marked or lost: the switch makes them itself) but take the wire like
    /// any packet.
    #[cold]
    fn send_adverts<S: Scheduler>(
        &mut self,
        m: &Model,
        now_ps: u64,
        out: &mut S,
        c: &mut Counters,
    ) {
        let Some((ports, values)) = self.lb.adverts() else {
            return;
        };
        let size = m.ack_bytes;
        for &p in ports {
            let port = &mut self.ports[p as usize];
            let peer = m.fabric.peer(self.id, p, now_ps).0;
            for (i, chunk) in values.chunks(ADVERT_ENTRIES as usize).enumerate() {
                let first = i as u32 * ADVERT_ENTRIES;
                port.push_ctrl(Packet::advert(self.id, peer, first, chunk, size), now_ps);
                c.adverts_sent += 1;
                c.advert_bytes_sent += size as u64;
            }
            if !port.busy {
                start_tx(m, self.id, p, port, now_ps, out);
            }
        }
    }

    #[inline]
    pub(crate) fn on_arrive<S: Scheduler>(
        &mut self,
        m: &Model,
        now_ps: u64,
        in_port: u16,
        mut pkt: Packet,
        out: &mut S,
        c: &mut Counters,
    ) {
        if pkt.is_advert() {
            c.adverts_delivered += 1;
            self.lb.on_advert(in_port, &pkt);
            return;
        }
        let hop_buf: [u16; MAX_UPLINKS];
        let route = if let Some(o) = m.fabric.opera() {
            if rotor::is_rlb(pkt.via) {
                let ports = &mut self.ports;
                rotorlb::tor_forward(m, o, self.id, ports, now_ps, in_port, pkt, out, c);
                return;
            }
            match o.downlink(self.id, pkt.dst) {
                Some(p) => Route::Port(p),
                None => {
                    match o.source_route_port(self.id, pkt.src, pkt.dst, pkt.via, pkt.entropy) {
                        Some(p) => Route::Port(p),
                        None => {
                            let mut buf = [0u16; MAX_UPLINKS];
                            let count = o.next_hop_ports(self.id, pkt.dst, pkt.via, &mut buf);
                            hop_buf = buf;
                            Route::Choice(Candidates::List(&hop_buf[..count]))
                        }
                    }
                }
            }
        } else if pkt.flags & flags::VALIANT_UP != 0 {
            crate::lb::valiant::route(&m.fabric, self.id, &mut pkt, now_ps)
        } else if crate::packet::is_pinned(pkt.via) && pkt.is_data() {
            if pkt.via & crate::packet::PINNED_TO_SWITCH != 0
                && m.fabric.peer(pkt.dst, 0, 0).0 == self.id
            {
                self.absorb_pinned(m, now_ps, in_port, &pkt, out, c);
                return;
            }
            let p = crate::workload::background::pinned_port(&m.fabric, self.id, pkt.dst, pkt.via);
            Route::Port(p)
        } else {
            m.fabric.route(self.id, pkt.dst, now_ps)
        };
        let p = match route {
            Route::Port(p) => p,
            Route::Choice(candidates) => self.lb.choose(&mut SwitchCtx {
                fabric: &m.fabric,
                shared: &m.lb,
                node: self.id,
                pkt: &pkt,
                in_port,
                candidates,
                queues: &Ports(&self.ports),
                now_ps,
                salt: self.salt,
                rng: &mut self.rng,
            }),
        };
        if m.fabric.has_failures() && m.fabric.is_link_down(self.id, p) {
            sent_on_failed_link(self.id, p);
        }
        self.lb
            .forward(&m.fabric, &m.lb, self.id, in_port, p, &mut pkt, now_ps);
        let port = &mut self.ports[p as usize];
        let last_hop =
            m.qdisc.is_trimming() && m.fabric.is_host(m.fabric.peer(self.id, p, now_ps).0);
        let rng = &mut self.queue_rng;
        let lost = self.injects_loss && (rng.gen::<u32>() as u64) < m.loss_per_2_32;
        let pool = self.pool.as_mut();
        let admission = self
            .qdisc
            .offer(port, pkt, now_ps, last_hop, rng, lost, pool);
        let (queued, returned) = count_admission(admission, &pkt, c);
        if !port.busy && !port.is_empty() {
            start_tx(m, self.id, p, port, now_ps, out);
        }
        // A packet queued ends an idle spell of the whole switch. (Asleep, every queue was
        // empty at the last tick, so without adverts this is the first packet to start a
        // port from idle; with adverts a port may be busy sending one.)
        if queued && self.lb_asleep {
            self.wake_lb(now_ps, out);
        }
        if let Some(header) = returned {
            self.return_to_sender(m, now_ps, in_port, &header, out, c);
        }
    }

    /// NDP's return-to-sender: a trimmed header that found its port's header queue full
    /// goes back to the flow's sender as a NACK made here (what the receiver would have
    /// sent: the transmission number, the last-hop mark), routed from this switch like any
    /// NACK, marked [`flags::RETURNED`]. The receiver never sees the packet, so it sends no
    /// pull for it: the sender retransmits on a later pull, or at once if no pull can come
    /// (`transport::ndp`).
    #[cold]
    fn return_to_sender<S: Scheduler>(
        &mut self,
        m: &Model,
        now_ps: u64,
        in_port: u16,
        header: &Packet,
        out: &mut S,
        c: &mut Counters,
    ) {
        let via = match m.fabric.opera() {
            Some(o) => o.label(now_ps),
            None => crate::packet::NO_VIA,
        };
        let nack = Packet {
            sent_ps: 0,
            flow_index: header.flow_index,
            src: header.dst,
            dst: header.src,
            seq: header.seq,
            ack: 0,
            size_bytes: m.ack_bytes,
            via,
            entropy: header.entropy,
            kind: PacketKind::Nack,
            flags: header.flags & (flags::LAST_HOP | flags::TX_MASK) | flags::RETURNED,
        };
        c.acks_sent += 1;
        c.nacks_sent += 1;
        self.on_arrive(m, now_ps, in_port, nack, out, c);
    }

    /// A background flow that ends here (`ends = "switch"`, paced transport): the data packet
    /// counts as delivered and is answered with the ACK its receiver would send, from this
    /// switch in its name.
    #[cold]
    fn absorb_pinned<S: Scheduler>(
        &mut self,
        m: &Model,
        now_ps: u64,
        in_port: u16,
        data: &Packet,
        out: &mut S,
        c: &mut Counters,
    ) {
        debug_assert!(!data.is_trimmed(), "pinned packets are never trimmed");
        c.data_delivered += 1;
        c.payload_bytes_delivered += (data.size_bytes - m.header_bytes) as u64;
        let echo = if data.ecn() { flags::ECN_ECHO } else { 0 };
        let ack = Packet {
            sent_ps: 0, // an ACK's SACK field: empty, as a paced receiver without state sends
            flow_index: data.flow_index,
            src: data.dst,
            dst: data.src,
            seq: data.seq,
            ack: 0,
            size_bytes: m.ack_bytes,
            via: crate::packet::NO_VIA,
            entropy: data.entropy,
            kind: PacketKind::Ack,
            flags: echo,
        };
        c.acks_sent += 1;
        self.on_arrive(m, now_ps, in_port, ack, out, c);
    }

    #[cold]
    fn wake_lb<S: Scheduler>(&mut self, now_ps: u64, out: &mut S) {
        self.lb_asleep = false;
        if let Some(at) = self.lb.wake_ps(now_ps) {
            let (id, slot) = (self.id, &mut self.lb_timer);
            self.timers.set(slot, id, TimerKind::SwitchLb, 0, at, out);
        }
    }

    /// The end of a transmission at port `p`; with a shared buffer, the pool follows the
    /// bytes that left the port's FIFO.
    #[inline]
    pub(crate) fn on_tx_done<S: Scheduler>(
        &mut self,
        m: &Model,
        now_ps: u64,
        p: u16,
        out: &mut S,
        c: &mut Counters,
    ) {
        let before = self
            .pool
            .is_some()
            .then(|| self.ports[p as usize].fifo_bytes());
        'tx: {
            if let Some(o) = m.fabric.opera() {
                if o.is_uplink(self.id, p) {
                    let ports = &mut self.ports;
                    if rotorlb::bounce_if_stale(m, o, self.id, ports, p, now_ps, out, c) {
                        break 'tx;
                    }
                    count_late(o, self.id, p, self.ports[p as usize].on_wire(), now_ps, c);
                }
            }
            let (qdisc, rng) = (&self.qdisc, &mut self.queue_rng);
            let port = &mut self.ports[p as usize];
            let clipped = finish_tx(m, self.id, p, port, now_ps, out, |pkt, port| {
                c.ecn_marked += qdisc.dequeued(pkt, port, rng) as u64;
            });
            if let Some(pkt) = clipped {
                c.opera_clipped += 1;
                if pkt.is_data() {
                    c.data_dropped += 1;
                } else {
                    c.acks_dropped += 1;
                }
            }
        }
        if let (Some(pool), Some(before)) = (&mut self.pool, before) {
            pool.changed(before, self.ports[p as usize].fifo_bytes());
        }
    }
}

/// Counts a packet leaving on an Opera uplink over another circuit than its label's
/// superslice planned (its rotor reconfigured before it left: queued longer than ε allows).
/// RotorLB packets carry no label: they are checked against their circuit instead
/// (`rotorlb::bounce_if_stale`).
#[inline]
fn count_late(o: &OperaFabric, n: NodeId, p: u16, pkt: &Packet, now_ps: u64, c: &mut Counters) {
    if rotor::is_rlb(pkt.via) {
        return;
    }
    let planned = o.planned_peer(n, p, pkt.via);
    if o.peer_at(n, p, now_ps).map(|x| x.0) != Some(planned) {
        c.opera_late += 1;
    }
}

/// Routing sent a packet onto a failed link: out of line, so the check costs a branch.
#[cold]
#[inline(never)]
fn sent_on_failed_link(node: NodeId, port: u16) -> ! {
    panic!("switch {node} sent a packet on its failed link at port {port}")
}

/// Counts an admission decision; returns whether the packet was queued, and the header to
/// return to its sender (NDP's return-to-sender) if any.
fn count_admission(admission: Admission, pkt: &Packet, c: &mut Counters) -> (bool, Option<Packet>) {
    match admission {
        Admission::Dropped if pkt.is_data() => {
            c.data_dropped += 1;
            (false, None)
        }
        Admission::Dropped => {
            c.acks_dropped += 1;
            c.pulls_dropped += (pkt.kind == PacketKind::Pull) as u64;
            (false, None)
        }
        Admission::Enqueued { marked } => {
            c.ecn_marked += marked as u64;
            (true, None)
        }
        Admission::Trimmed { marked } => {
            c.trims += 1;
            c.ecn_marked += marked as u64;
            (true, None)
        }
        Admission::Returned(header) => {
            // Trimmed here, or upstream (then its trim is counted already).
            c.trims += !pkt.is_trimmed() as u64;
            c.headers_returned += 1;
            (false, Some(header))
        }
    }
}
