//! RotorLB at hosts and ToRs: Opera's bulk transport (OPERA.md A.5 "Direct (bulk) +
//! RotorLB"; classification and packet marks in `transport/rotor.rs`).
//!
//! A bulk flow's packets wait in its host's per-destination queues until a direct circuit
//! to the destination's rack exists. At the start of every superslice (the host's
//! `RlbSlot` timer) the host plans, for each rotor c that just came up (one per group: the
//! rotor that reconfigured at the end of the previous superslice), with D = the rack c's
//! new matching pairs its rack with, a slot of `slot_ps` = (u/G − 1)·superslice + ε and a
//! budget of `max_pkts` packets (its 1/u share of the uplink over the slot):
//! 1. relayed ("non-local") packets it holds for hosts of D, at most `cap_pkts` = max_pkts/d
//!    per destination host;
//! 2. its own (local) packets for hosts of D, water-filled over them, each capped at
//!    `cap_pkts` minus step 1's packets to it;
//! 3. with `valiant`, what is left (and what the hosts of D can still take, `cap_pkts` each)
//!    to intermediates in D for its queues to other racks: water-filled over those queues
//!    (each asking at most 2·cap_pkts), spread round-robin over D's hosts.
//!
//! Deviations from the authors' central `RlbMaster`, which sees every host's queues:
//! - step 2's receive cap: the simulator water-fills over all senders of the rack and all
//!   receivers of D at once (2-D); a host cannot see the other senders' queues, so each
//!   sender takes the receiver's fair share among the d senders, `cap_pkts` per receiver;
//! - the intermediate's acceptance (phase 2: at most 2·max_pkts/d − what it holds for that
//!   destination) cannot be checked by the sender: the intermediate checks it when the
//!   packet arrives and refuses the excess with a control packet (a NACK, routed as
//!   low-latency traffic) that puts the packet back at the front of the sender's queue.
//!
//! Committed packets are paced evenly over the slot (the k-th of n at start + k·slot/n) into
//! the uplink of rotor c, at the NIC's lowest priority (after ACKs/NACKs and low-latency
//! data, which keep their alternation and pacing); what is not sent by the end of the slot
//! goes back to the front of its queue at the next superslice. At the source ToR the packet
//! waits in the port's lowest-priority queue; if, when its last bit leaves, its uplink no
//! longer leads to its rack (low-latency traffic delayed it past the circuit), the ToR
//! bounces it down to the host that sent it on this leg (a header-sized packet), which puts
//! it back at the front of its queue. Nothing is dropped, so the final receiver counts a
//! flow's packets and records its completion (FCT) when the last one arrives.
//!
//! A relayed packet keeps its sender (`src`, for the flow id) and carries its final
//! receiver in `ack` on the first leg; on the second leg `dst` is the final receiver and
//! `ack` the intermediate (`transport/rotor.rs`).

use super::event::{Scheduler, TimerKind, TimerSeq, TimerSlot};
use super::link::{discard_tx, start_tx};
use super::nic::Nic;
use super::Port;
use crate::metrics::{record_ns, Counters, Metrics};
use crate::model::Model;
use crate::packet::{FlowId, Packet, PacketKind, NO_VIA};
use crate::time::{NEVER_PS, PS_PER_NS};
use crate::topology::opera::OperaFabric;
use crate::topology::NodeId;
use crate::transport::rotor::{self, water_fill, RotorParams, BOUNCE, RELAYED};
use crate::workload::Start;
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, VecDeque};

/// Consecutive packets of one flow waiting in a local queue.
#[derive(Clone, Copy, Debug, Serialize, Deserialize)]
struct Run {
    flow: u32,
    seq: u32,
    count: u32,
}

/// A host's packets for one destination host.
#[derive(Default, Serialize, Deserialize)]
struct Local {
    runs: VecDeque<Run>,
    pkts: u32,
}

/// What a host committed to one rotor's slot.
#[derive(Default, Serialize, Deserialize)]
struct Commit {
    pkts: VecDeque<Packet>,
    start_ps: u64,
    end_ps: u64,
    interval_ps: u64,
    sent: u64,
}

impl Commit {
    /// When the next committed packet is due, if it still fits in the slot.
    fn due_ps(&self) -> Option<u64> {
        let due = self.start_ps + self.sent * self.interval_ps;
        (!self.pkts.is_empty() && due < self.end_ps).then_some(due)
    }
}

/// A host's RotorLB state.
#[derive(Default, Serialize, Deserialize)]
pub struct RotorLb {
    /// Own bulk packets by destination host.
    local: BTreeMap<u32, Local>,
    /// Relayed packets held for their final receiver, by receiver (first-leg form: `dst` is
    /// this host, `ack` the receiver).
    nonlocal: BTreeMap<u32, VecDeque<Packet>>,
    /// Packets in `local` and `nonlocal`.
    waiting: u64,
    /// By rotor.
    commits: Vec<Commit>,
    /// Packets received so far of incoming bulk flows not complete yet.
    received: BTreeMap<FlowId, u32>,
    slot: TimerSlot,
    /// The last superslice (counted from time 0) planned.
    planned: Option<u64>,
}

fn opera(m: &Model) -> &OperaFabric {
    m.fabric.opera().expect("RotorLB runs on Opera")
}

fn params(m: &Model) -> &RotorParams {
    m.rotor.as_ref().expect("RotorLB runs on Opera")
}

impl RotorLb {
    pub fn new(uplinks: usize) -> RotorLb {
        RotorLb {
            commits: (0..uplinks).map(|_| Commit::default()).collect(),
            ..Default::default()
        }
    }

    /// Bulk flow `i` (`packets` packets to `dst`) starts: it waits for a circuit.
    pub fn add_flow(&mut self, i: u32, dst: u32, packets: u32) {
        let q = self.local.entry(dst).or_default();
        q.runs.push_back(Run {
            flow: i,
            seq: 0,
            count: packets,
        });
        q.pkts += packets;
        self.waiting += packets as u64;
    }

    fn has_work(&self) -> bool {
        self.waiting > 0 || self.commits.iter().any(|c| !c.pkts.is_empty())
    }

    /// Sets the slot timer for the next superslice start (now, if one starts now and is
    /// not planned yet) if there is bulk work and it is not set.
    pub fn arm<S: Scheduler>(
        &mut self,
        m: &Model,
        me: NodeId,
        now_ps: u64,
        timers: &mut TimerSeq,
        out: &mut S,
    ) {
        if self.slot.at_ps != NEVER_PS || !self.has_work() {
            return;
        }
        let t = opera(m).opera().timing().superslice_ps();
        let mut next = now_ps.div_ceil(t);
        if self.planned.is_some_and(|p| p >= next) {
            next = self.planned.expect("checked") + 1;
        }
        timers.set(&mut self.slot, me, TimerKind::RlbSlot, 0, next * t, out);
    }

    /// The slot timer fired (generation `gen`): plans this superslice's new slots. Returns
    /// whether it was the current setting.
    pub fn on_slot(&mut self, m: &Model, me: NodeId, now_ps: u64, gen: u32) -> bool {
        if !self.slot.fires(gen) {
            return false;
        }
        self.slot.clear();
        self.start_superslice(m, me, now_ps);
        true
    }

    /// A superslice starts at `now_ps`: returns what ended slots left and plans the slots of
    /// the rotor(s) that just came up (once per superslice).
    fn start_superslice(&mut self, m: &Model, me: NodeId, now_ps: u64) {
        let sched = opera(m).opera().schedule();
        let t = sched.timing().superslice_ps();
        assert_eq!(now_ps % t, 0, "RotorLB slots start with a superslice");
        let abs = now_ps / t;
        if self.planned == Some(abs) {
            return;
        }
        self.planned = Some(abs);
        self.return_leftovers(m, me, now_ps);
        let n = sched.superslices();
        let s = (abs % n as u64) as usize;
        let mut up = [0usize; crate::topology::opera::MAX_UPLINKS];
        let mut count = 0;
        for rotor in sched.reconfiguring((s + n - 1) % n) {
            up[count] = rotor;
            count += 1;
        }
        for &rotor in &up[..count] {
            self.plan(m, me, rotor, s, now_ps);
        }
    }

    /// Puts what slots that have ended did not send back at the front of its queues.
    fn return_leftovers(&mut self, m: &Model, me: NodeId, now_ps: u64) {
        for r in 0..self.commits.len() {
            if self.commits[r].end_ps > now_ps {
                continue;
            }
            while let Some(pkt) = self.commits[r].pkts.pop_back() {
                self.requeue_front(m, me, pkt);
            }
        }
    }

    /// Puts a packet committed or sent earlier back at the front of its queue.
    fn requeue_front(&mut self, m: &Model, me: NodeId, mut pkt: Packet) {
        self.waiting += 1;
        if pkt.via & RELAYED != 0 {
            // Second leg: final receiver in `dst` (bounced: in `ack`, see `bounce`).
            let fin = if pkt.via & BOUNCE != 0 {
                pkt.ack
            } else {
                pkt.dst
            };
            let bytes = m.workload.flow(pkt.src, pkt.flow_index).bytes;
            pkt.size_bytes = m.data_size(bytes, pkt.seq);
            pkt.dst = me;
            pkt.ack = fin;
            pkt.via &= !BOUNCE;
            self.nonlocal.entry(fin).or_default().push_front(pkt);
        } else {
            let q = self.local.entry(pkt.ack).or_default();
            q.runs.push_front(Run {
                flow: pkt.flow_index,
                seq: pkt.seq,
                count: 1,
            });
            q.pkts += 1;
        }
    }

    /// Commits packets to `rotor`, which came up at the start of superslice `s` (`now_ps`).
    fn plan(&mut self, m: &Model, me: NodeId, rotor: usize, s: usize, now_ps: u64) {
        let (o, p) = (opera(m), params(m));
        let d = o.hosts_per_rack();
        let my_rack = me / d;
        let peer = o.opera().matching(rotor, s)[my_rack as usize];
        if peer == my_rack {
            return; // the self-loop: an idle uplink
        }
        let mut commit = std::mem::take(&mut self.commits[rotor]);
        assert!(
            commit.pkts.is_empty(),
            "rotor {rotor}'s last slot has ended"
        );
        let first = peer * d;
        let cap = p.cap_pkts;
        let mut budget = p.max_pkts;
        let mut to_host = vec![0u32; d as usize];
        // 1. Relayed packets for hosts of the peer rack first.
        for j in 0..d {
            let Some(q) = self.nonlocal.get_mut(&(first + j)) else {
                continue;
            };
            let n = (q.len() as u32).min(cap).min(budget);
            for mut pkt in q.drain(..n as usize) {
                pkt.dst = first + j;
                pkt.ack = me;
                pkt.via = rotor::relay_via(rotor, pkt.via);
                commit.pkts.push_back(pkt);
            }
            if q.is_empty() {
                self.nonlocal.remove(&(first + j));
            }
            to_host[j as usize] += n;
            budget -= n;
            self.waiting -= n as u64;
        }
        // 2. Direct local traffic, water-filled over the peer rack's hosts.
        let demands: Vec<u32> = (0..d)
            .map(|j| {
                let queued = self.local.get(&(first + j)).map_or(0, |q| q.pkts);
                queued.min(cap - to_host[j as usize])
            })
            .collect();
        let (mut order, mut alloc) = (Vec::new(), vec![0u32; d as usize]);
        budget -= water_fill(&demands, budget, &mut order, &mut alloc);
        for j in 0..d {
            let n = alloc[j as usize];
            self.take_local(m, me, first + j, first + j, n, rotor, &mut commit.pkts);
            to_host[j as usize] += n;
        }
        // 3. Valiant: spare capacity to intermediates in the peer rack.
        let room: u32 = to_host.iter().map(|&n| cap - n).sum();
        if p.valiant && budget.min(room) > 0 {
            self.offer_relays(
                m,
                me,
                peer,
                budget.min(room),
                &mut to_host,
                rotor,
                &mut commit,
            );
        }
        let n = commit.pkts.len() as u64;
        commit.start_ps = now_ps;
        commit.end_ps = now_ps + p.slot_ps;
        commit.interval_ps = p.slot_ps.checked_div(n).unwrap_or(0);
        commit.sent = 0;
        self.commits[rotor] = commit;
    }

    /// Step 3: water-fills `budget` over this host's queues to racks other than its own and
    /// `peer` (each asking at most 2·cap, what an intermediate may hold for one receiver),
    /// and spreads each queue's share round-robin over the peer rack's hosts with room.
    #[allow(clippy::too_many_arguments)]
    fn offer_relays(
        &mut self,
        m: &Model,
        me: NodeId,
        peer: u32,
        budget: u32,
        to_host: &mut [u32],
        rotor: usize,
        commit: &mut Commit,
    ) {
        let d = opera(m).hosts_per_rack();
        let cap = params(m).cap_pkts;
        let (mine, first) = (me / d, peer * d);
        let (dsts, demands): (Vec<u32>, Vec<u32>) = self
            .local
            .iter()
            .filter(|(&k, _)| k / d != mine && k / d != peer)
            .map(|(&k, q)| (k, q.pkts.min(2 * cap)))
            .unzip();
        let (mut order, mut alloc) = (Vec::new(), vec![0u32; dsts.len()]);
        water_fill(&demands, budget, &mut order, &mut alloc);
        let mut j = 0usize;
        for (&k, &n) in dsts.iter().zip(&alloc) {
            for _ in 0..n {
                while to_host[j] >= cap {
                    j = (j + 1) % to_host.len();
                }
                self.take_local(m, me, k, first + j as u32, 1, rotor, &mut commit.pkts);
                to_host[j] += 1;
                j = (j + 1) % to_host.len();
            }
        }
    }

    /// Moves `n` packets of the local queue for receiver `fin` into `pkts`, addressed to
    /// host `to` (the receiver, or an intermediate).
    #[allow(clippy::too_many_arguments)]
    fn take_local(
        &mut self,
        m: &Model,
        me: NodeId,
        fin: u32,
        to: u32,
        mut n: u32,
        rotor: usize,
        pkts: &mut VecDeque<Packet>,
    ) {
        if n == 0 {
            return;
        }
        let q = self.local.get_mut(&fin).expect("a queue with packets");
        assert!(q.pkts >= n);
        q.pkts -= n;
        self.waiting -= n as u64;
        while n > 0 {
            let r = q.runs.front_mut().expect("runs hold the queue's packets");
            let take = n.min(r.count);
            let bytes = m.workload.flow(me, r.flow).bytes;
            for seq in r.seq..r.seq + take {
                pkts.push_back(Packet {
                    sent_ps: 0,
                    flow_index: r.flow,
                    src: me,
                    dst: to,
                    seq,
                    ack: fin,
                    size_bytes: m.data_size(bytes, seq),
                    via: rotor::via(rotor, false),
                    entropy: 0,
                    kind: PacketKind::Data,
                    flags: 0,
                });
            }
            r.seq += take;
            r.count -= take;
            if r.count == 0 {
                q.runs.pop_front();
            }
            n -= take;
        }
        if q.pkts == 0 {
            self.local.remove(&fin);
        }
    }

    /// The NIC is free and has no low-latency packet to send now: the due committed packet
    /// (earliest due first; ties to the lower rotor) starting at `begin_ps`, if any.
    pub fn next_packet(&mut self, begin_ps: u64, c: &mut Counters) -> Option<Packet> {
        let (_, r) = self
            .commits
            .iter()
            .enumerate()
            .filter_map(|(r, k)| k.due_ps().map(|due| (due, r)))
            .filter(|&(due, r)| due <= begin_ps && begin_ps < self.commits[r].end_ps)
            .min()?;
        let k = &mut self.commits[r];
        let mut pkt = k.pkts.pop_front().expect("due");
        k.sent += 1;
        pkt.sent_ps = begin_ps;
        c.data_sent += 1;
        c.rlb_sent += 1;
        Some(pkt)
    }

    /// When a committed packet is next due after `begin_ps` (the NIC's wake-up).
    pub fn next_due_ps(&self, begin_ps: u64) -> Option<u64> {
        self.commits
            .iter()
            .filter_map(Commit::due_ps)
            .filter(|&due| due > begin_ps)
            .min()
    }

    /// A packet for this host: handles it if it is RotorLB's (a bulk packet, a bounce, or
    /// an intermediate's refusal) and returns whether an incoming bulk flow completed;
    /// `None` if it is not RotorLB's.
    #[allow(clippy::too_many_arguments)]
    pub fn on_arrive(
        &mut self,
        m: &Model,
        me: NodeId,
        now_ps: u64,
        pkt: Packet,
        nic: &mut Nic,
        mx: &mut Metrics,
    ) -> Option<bool> {
        let c = &mut mx.counters;
        if !rotor::is_rlb(pkt.via) {
            // A refusal: a NACK for one of this host's bulk flows.
            if pkt.kind != PacketKind::Nack || !m.is_bulk(me, pkt.flow_index) {
                return None;
            }
            c.acks_delivered += 1;
            self.requeue_front(m, me, refused(&pkt));
            return Some(false);
        }
        if pkt.via & BOUNCE != 0 {
            c.rlb_bounced += 1;
            self.requeue_front(m, me, pkt);
            return Some(false);
        }
        if pkt.via & RELAYED != 0 || pkt.ack == me {
            return Some(self.deliver(m, me, now_ps, pkt, mx));
        }
        // First leg to this host as intermediate.
        assert_eq!(rotor::hops_of(pkt.via), 1, "a first leg crosses one rotor");
        let fin = pkt.ack;
        let held = self.nonlocal.get(&fin).map_or(0, |q| q.len() as u64)
            + self.local.get(&fin).map_or(0, |q| q.pkts as u64);
        if held + 1 > 2 * params(m).cap_pkts as u64 {
            c.rlb_rejected += 1;
            nic.control.push_back(Packet {
                sent_ps: 0,
                flow_index: pkt.flow_index,
                src: me,
                dst: pkt.src,
                seq: pkt.seq,
                ack: fin,
                size_bytes: m.ack_bytes,
                via: NO_VIA,
                entropy: 0,
                kind: PacketKind::Nack,
                flags: 0,
            });
            return Some(false);
        }
        c.rlb_relayed += 1;
        self.nonlocal.entry(fin).or_default().push_back(pkt);
        self.waiting += 1;
        Some(false)
    }

    /// A bulk packet reached its final receiver: counts it; returns whether its flow is
    /// complete (then records the FCT: the receiver knows, RotorLB has no ACKs).
    fn deliver(
        &mut self,
        m: &Model,
        me: NodeId,
        now_ps: u64,
        pkt: Packet,
        mx: &mut Metrics,
    ) -> bool {
        debug_assert_eq!(pkt.dst, me);
        let relayed = pkt.via & RELAYED != 0;
        let hops = rotor::hops_of(pkt.via);
        assert_eq!(
            hops,
            1 + relayed as u32,
            "RotorLB paths are 1 rotor link, 2 relayed"
        );
        let c = &mut mx.counters;
        if relayed {
            c.rlb_two_hop += 1;
        } else {
            c.rlb_one_hop += 1;
        }
        c.data_delivered += 1;
        let payload = (pkt.size_bytes - m.header_bytes) as u64;
        c.payload_bytes_delivered += payload;
        if let Some(series) = &mut mx.series {
            series.delivered(now_ps, payload);
        }
        // The last leg's network latency (the wait for a circuit is the FCT's business).
        record_ns(&mut mx.latency_ns, (now_ps - pkt.sent_ps) / PS_PER_NS);
        let flow = m.workload.flow(pkt.src, pkt.flow_index);
        let need = m.packets_for(flow.bytes) as u32;
        let id = pkt.flow_id();
        let got = self.received.entry(id).or_insert(0);
        *got += 1;
        assert!(*got <= need, "flow {id:#x} got more packets than it has");
        if *got < need {
            return false;
        }
        self.received.remove(&id);
        let Start::At(start) = flow.start else {
            unreachable!("bulk flows start at fixed times (RotorParams::build)")
        };
        let src_flow = (pkt.src, pkt.flow_index);
        super::completion::record_completion(mx, m, src_flow, &flow, start, now_ps);
        true
    }
}

/// The packet an intermediate's refusal (`nack`) returns to its sender's queue.
fn refused(nack: &Packet) -> Packet {
    Packet {
        sent_ps: 0,
        flow_index: nack.flow_index,
        src: nack.dst,
        dst: nack.src,
        seq: nack.seq,
        ack: nack.ack,
        size_bytes: 0,
        via: 0,
        entropy: 0,
        kind: PacketKind::Data,
        flags: 0,
    }
}

/// A ToR forwards a RotorLB packet, in the port's lowest-priority queue, outside the queue
/// discipline (never dropped): from a host onto the uplink of its rotor (counting a packet
/// its host started while the rotor did not lead to its next rack), from an uplink down to
/// its host (counting the rotor link crossed).
#[allow(clippy::too_many_arguments)]
pub(crate) fn tor_forward<S: Scheduler>(
    m: &Model,
    o: &OperaFabric,
    tor: NodeId,
    ports: &mut [Port],
    now_ps: u64,
    in_port: u16,
    mut pkt: Packet,
    out: &mut S,
    c: &mut Counters,
) {
    let d = o.hosts_per_rack();
    let p = if o.is_uplink(tor, in_port) {
        rotor::add_hop(&mut pkt);
        o.downlink(tor, pkt.dst)
            .unwrap_or_else(|| panic!("RotorLB packet for host {} reached ToR {tor}", pkt.dst))
    } else {
        let up = (d as usize + rotor::rotor_of(pkt.via)) as u16;
        let target = o.num_hosts() + pkt.dst / d;
        if o.peer_at(tor, up, pkt.sent_ps).map(|x| x.0) != Some(target) {
            c.rlb_off_circuit += 1;
        }
        up
    };
    let port = &mut ports[p as usize];
    port.push_bulk(pkt, now_ps);
    if !port.busy {
        start_tx(m, tor, p, port, now_ps, out);
    }
}

/// At the end of a transmission on uplink `p` of ToR `tor`: if the packet on the wire is a
/// RotorLB packet whose circuit no longer leads to its rack (stale, or dark), takes it off
/// and bounces it (a header-sized packet) down to the host that sent it on this leg.
/// Returns whether it did.
pub(crate) fn bounce_if_stale<S: Scheduler>(
    m: &Model,
    o: &OperaFabric,
    tor: NodeId,
    ports: &mut [Port],
    p: u16,
    now_ps: u64,
    out: &mut S,
) -> bool {
    let w = ports[p as usize].on_wire();
    if !rotor::is_rlb(w.via) {
        return false;
    }
    let target = o.num_hosts() + w.dst / o.hosts_per_rack();
    if o.peer_at(tor, p, now_ps).map(|x| x.0) == Some(target) {
        return false;
    }
    let pkt = discard_tx(m, tor, p, &mut ports[p as usize], now_ps, out);
    let mut b = pkt;
    b.size_bytes = m.header_bytes;
    b.via |= BOUNCE;
    if pkt.via & RELAYED != 0 {
        (b.dst, b.ack) = (pkt.ack, pkt.dst);
    } else {
        b.dst = pkt.src;
    }
    let q = o
        .downlink(tor, b.dst)
        .expect("a leg's sender is in its source ToR's rack");
    let port = &mut ports[q as usize];
    port.push_bulk(b, now_ps);
    if !port.busy {
        start_tx(m, tor, q, port, now_ps, out);
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scenario::load_scenario_str;

    /// 12 racks of 2 hosts, 4 rotors; ε = 20 µs, r = 2 µs, δ = 1.7 µs: superslice 23.7 µs,
    /// slot 3 × 23.7 + 20 = 91.1 µs; a full packet holds a host link 1.2 µs (1,500 B at
    /// 10 Gb/s), so max_pkts = ⌊91.1 / (4 × 1.2)⌋ = 18 and cap = 18 / 2 = 9.
    fn model(extra: &str) -> Model {
        let text = format!(
            "seed = 1\n{extra}\n[topology]\nkind = \"opera\"\nracks = 12\nhosts_per_rack = 2\n\
             uplinks = 4\nlink_rate_gbps = 10\nlink_latency_ns = 500\n\
             [topology.tiers.host_tor]\nlatency_ns = 0\n[topology.opera]\nepsilon_ns = 20000\n\
             reconfig_ns = 2000\n[packet]\npayload_bytes = 1436\nheader_bytes = 64\n\
             [lb]\npolicy = \"rps\"\n[workload]\nkind = \"shuffle\"\nmessage_bytes = 100000\nbulk = true\n"
        );
        let s = load_scenario_str(&text, "test", std::path::Path::new("."), &[]).unwrap();
        Model::build(&s).unwrap()
    }

    /// Drives host `me`'s RotorLB alone over `superslices`, its NIC sending back to back
    /// whenever a packet is due; returns (send time, packet).
    fn drive(m: &Model, r: &mut RotorLb, me: NodeId, superslices: u64) -> Vec<(u64, Packet)> {
        let t = opera(m).opera().timing().superslice_ps();
        let wire = m.fabric.link(0, 0).serialization_ps(1_500);
        let mut c = Counters::new();
        let mut sent = vec![];
        for abs in 0..superslices {
            r.start_superslice(m, me, abs * t);
            let mut now = abs * t;
            while now < (abs + 1) * t {
                if let Some(p) = r.next_packet(now, &mut c) {
                    sent.push((now, p));
                    now += wire;
                } else {
                    match r.next_due_ps(now) {
                        Some(due) => now = due,
                        None => break,
                    }
                }
            }
        }
        assert_eq!(c.rlb_sent, sent.len() as u64);
        sent
    }

    #[test]
    fn slot_budget_follows_the_timing() {
        let m = model("");
        let p = params(&m);
        assert_eq!((p.slot_ps, p.max_pkts, p.cap_pkts), (91_100_000, 18, 9));
    }

    #[test]
    fn packets_go_only_over_a_circuit_to_their_next_rack_within_the_slot_caps() {
        let m = model("");
        let o = opera(&m).opera();
        let me = 0;
        let mut r = RotorLb::new(4);
        for i in 0..m.workload.flows_of(me) {
            let f = m.workload.flow(me, i);
            r.add_flow(i, f.dst, m.packets_for(f.bytes) as u32);
        }
        let wire = m.fabric.link(0, 0).serialization_ps(1_500);
        // One cycle (12 superslices): every queue holds 70 packets, more than a pair of
        // racks can take in one slot (9 per host), so direct traffic fills every slot.
        let sent = drive(&m, &mut r, me, 12);
        let t = o.timing().superslice_ps();
        let mut per_slot: BTreeMap<(u64, usize), u32> = BTreeMap::new();
        let mut per_dst: BTreeMap<(u64, usize, u32), u32> = BTreeMap::new();
        for (at, p) in &sent {
            let rotor = rotor::rotor_of(p.via);
            let next_rack = p.dst / 2;
            // Its first and last bit leave while the rotor connects rack 0 to that rack.
            for x in [*at, at + wire] {
                assert_eq!(
                    o.schedule().peer_rack(0, rotor, x),
                    Some(next_rack),
                    "{p:?} at {x}"
                );
            }
            assert_eq!(p.ack, p.dst, "no relaying while every queue is long");
            // The slot this packet belongs to began at the last superslice start at which
            // its rotor came up (the rotor that reconfigured in the one before).
            let slot = (0..=at / t)
                .rev()
                .find(|&a| {
                    o.reconfiguring(((a + 11) % 12) as usize)
                        .any(|b| b == rotor)
                })
                .unwrap();
            assert!(*at < slot * t + params(&m).slot_ps);
            *per_slot.entry((slot, rotor)).or_default() += 1;
            *per_dst.entry((slot, rotor, p.dst)).or_default() += 1;
        }
        assert!(per_slot.values().all(|&n| n <= 18), "{per_slot:?}");
        assert!(per_dst.values().all(|&n| n <= 9), "{per_dst:?}");
        // Every slot to another rack was full: 18 packets, 9 to each of its 2 hosts. Rack
        // 0's 4 rotors give 12 matchings a cycle, 11 peers and one self-loop.
        let full = per_slot.values().filter(|&&n| n == 18).count();
        assert!(full >= 8, "{per_slot:?}");
        assert!(sent.len() >= 8 * 18);
    }

    #[test]
    fn spare_capacity_goes_to_intermediates_of_the_peer_rack() {
        let m = model("");
        let o = opera(&m).opera();
        // The rotor that comes up at time 0 reconfigured at the end of superslice 11.
        let rotor = o.reconfiguring(11).next().unwrap();
        let peer = o.matching(rotor, 0)[0];
        assert_ne!(peer, 0, "realization with a peer for rack 0 at time 0");
        // One flow of 140 packets from host 0 to a rack neither 0 nor the peer.
        let fin = 2 * (1..12).find(|&r| r != peer).unwrap();
        let mut r = RotorLb::new(4);
        r.add_flow(0, fin, 140);
        r.start_superslice(&m, 0, 0);
        // The whole budget, min(18, 2 cap = 18), goes to the 2 hosts of the peer rack, 9
        // each, for relaying to `fin`.
        let k = &r.commits[rotor];
        assert_eq!(k.pkts.len(), 18);
        for h in [2 * peer, 2 * peer + 1] {
            let to_h: Vec<_> = k.pkts.iter().filter(|p| p.dst == h).collect();
            assert_eq!(to_h.len(), 9);
            assert!(to_h.iter().all(|p| p.ack == fin && p.via & RELAYED == 0));
        }
        assert_eq!(r.waiting, 140 - 18);
        // Without Valiant, nothing goes until rack `fin / 2` has a circuit.
        let mut m2 = model("");
        m2.rotor.as_mut().unwrap().valiant = false;
        let mut r2 = RotorLb::new(4);
        r2.add_flow(0, fin, 140);
        r2.start_superslice(&m2, 0, 0);
        assert!(r2.commits[rotor].pkts.is_empty());
        // Paced over the slot: the k-th of 18 is due at k × 91.1 µs / 18.
        let mut c = Counters::new();
        let t0 = r.next_packet(0, &mut c).unwrap();
        assert_eq!(t0.sent_ps, 0);
        assert!(r.next_packet(1, &mut c).is_none());
        assert_eq!(r.next_due_ps(1), Some(91_100_000 / 18));
    }

    #[test]
    fn an_intermediate_refuses_what_exceeds_twice_its_share_for_a_receiver() {
        let m = model("");
        let mut r = RotorLb::new(4);
        let mut nic = Nic::default();
        let mut mx = Metrics::recording();
        // Host 4 (rack 2) relays for host 22, from host 0: cap 9, so it holds up to 18.
        for seq in 0..20 {
            let p = Packet {
                sent_ps: 0,
                flow_index: 0,
                src: 0,
                dst: 4,
                seq,
                ack: 22,
                size_bytes: 1_500,
                via: rotor::via(1, false) | 1 << 8,
                entropy: 0,
                kind: PacketKind::Data,
                flags: 0,
            };
            assert_eq!(r.on_arrive(&m, 4, 0, p, &mut nic, &mut mx), Some(false));
        }
        let c = &mx.counters;
        assert_eq!((c.rlb_relayed, c.rlb_rejected), (18, 2));
        assert_eq!(nic.control.len(), 2);
        let nack = nic.control[0];
        assert_eq!(
            (nack.kind, nack.src, nack.dst, nack.seq, nack.ack),
            (PacketKind::Nack, 4, 0, 18, 22)
        );
        // The sender puts the refused packet back at the front of its queue for host 22.
        let mut sender = RotorLb::new(4);
        assert_eq!(
            sender.on_arrive(&m, 0, 0, nack, &mut Nic::default(), &mut mx),
            Some(false)
        );
        assert_eq!(sender.local[&22].pkts, 1);
        assert_eq!(sender.local[&22].runs[0].seq, 18);
    }
}
