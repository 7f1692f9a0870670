//! RotorLB at hosts and ToRs: Opera's bulk transport (the Opera paper, §4.2.2; opera-sim's
//! `rlbmodule.cpp`; classification and packet marks in `transport/rotor.rs`).
//!
//! A bulk flow's packets wait in its host's per-destination queues until a direct circuit
//! to the destination's rack exists. At the start of every superslice the rack's hosts are
//! planned, for each rotor c that just came up (one per group: the rotor that reconfigured
//! at the end of the previous superslice), with D = the rack c's new matching pairs the rack
//! with; each host gets a slot of `slot_ps` = (u/G − 1)·superslice + ε and a budget of
//! `max_pkts` packets (its 1/u share of the uplink over the slot):
//! 1. relayed ("non-local") packets it holds for hosts of D, at most `cap_pkts` = max_pkts/d
//!    per destination host;
//! 2. its own (local) packets for hosts of D, by 2-D water-filling over the rack's senders
//!    and D's receivers (`transport::rotor::fair_share_2d`, the authors' `fairshare2d`):
//!    at most what is left of each sender's budget and of each receiver's room;
//! 3. with `valiant`, what is left (and what the hosts of D can still take) to
//!    intermediates in D for its queues to other racks, senders in a rotating order: each
//!    water-fills over those queues (each asking at most d·2·cap_pkts, what D's d
//!    intermediates may hold together for one receiver), spread round-robin over D's hosts
//!    (so each is offered at most about its 2·cap_pkts per receiver).
//!
//! Who plans (`topology.opera.rlb_planning`): `"rack"` (default) plans all of a rack's
//! hosts together, as the authors' central `RlbMaster`, which sees every host's queues: the
//! engine calls [`plan_superslice`] with the rack's hosts at the first of their `RlbSlot`
//! timers in that superslice (a rack is never split across partitions, and timers at one
//! time run in key order, so the plan does not depend on the split); a receiver's room is
//! `max_pkts` shared by the rack's senders. `"host"` plans each host alone at its own timer,
//! a receiver's room split evenly among the d senders (`cap_pkts` each), which wastes it when
//! fewer senders need it.
//!
//! Deviation from `RlbMaster`: the intermediate's acceptance (phase 2: at most
//! 2·max_pkts/d − what it holds for that destination) cannot be checked by the sender (the
//! intermediate is in another rack, possibly another rank): the intermediate checks it when
//! the packet arrives and refuses the excess with a control packet (a NACK, routed as
//! low-latency traffic) that puts the packet back at the front of the sender's queue.
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
use super::rlb_commit::Committed;
use super::Port;
use crate::metrics::{record_ns, Counters, Metrics};
use crate::model::Model;
use crate::packet::{flow_id, FlowId, Packet, PacketKind, NO_VIA};
use crate::time::{NEVER_PS, PS_PER_NS};
use crate::topology::opera::OperaFabric;
use crate::topology::NodeId;
use crate::transport::rotor::{self, water_fill, RotorParams, BOUNCE, RELAYED};
use crate::workload::Start;
use rustc_hash::FxHashMap;
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
    pkts: Committed,
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

/// Packets received so far of the incoming bulk flows not complete yet, by flow: one dense
/// slot per sender (its first flow in progress; a shuffle's receiver has one from every host
/// of other racks at once, and the B-tree searched per delivered packet was 15 % of the Opera
/// shuffle's time, a hash map no better: the look-up is a cache miss over a table several
/// times larger than the slots), further flows of the same sender in a hash map. The slots
/// cost 8 B per host of the fabric for each host that receives bulk traffic (5 KB at the
/// paper's 648 hosts, 41 KB at k = 24's 5,184), allocated at its first bulk packet.
#[derive(Default, Serialize, Deserialize)]
struct Received {
    /// By sender: (flow index + 1, packets); 0 = none. Empty until the first delivery.
    slots: Vec<(u32, u32)>,
    more: FxHashMap<FlowId, u32>,
}

impl Received {
    /// Counts a packet of flow `flow` of `src` (`need` packets): whether it completes it.
    #[inline]
    fn count(&mut self, hosts: u32, src: u32, flow: u32, need: u32) -> bool {
        if self.slots.is_empty() {
            self.slots = vec![(0, 0); hosts as usize];
        }
        let slot = &mut self.slots[src as usize];
        // A free slot takes a flow only if it has not started in `more` (while the slot
        // held an earlier flow of the same sender).
        let dense = slot.0 == flow + 1
            || slot.0 == 0
                && (self.more.is_empty() || !self.more.contains_key(&flow_id(src, flow)));
        let got = if dense {
            slot.0 = flow + 1;
            slot.1 += 1;
            slot.1
        } else {
            let n = self.more.entry(flow_id(src, flow)).or_insert(0);
            *n += 1;
            *n
        };
        assert!(
            got <= need,
            "flow {flow} of host {src} got more packets than it has"
        );
        if got < need {
            return false;
        }
        if dense {
            self.slots[src as usize] = (0, 0);
        } else {
            self.more.remove(&flow_id(src, flow));
        }
        true
    }
}

#[derive(Default, Serialize, Deserialize)]
pub(crate) struct RotorLb {
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
    received: Received,
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
    pub(crate) fn new(uplinks: usize) -> RotorLb {
        RotorLb {
            commits: (0..uplinks).map(|_| Commit::default()).collect(),
            ..Default::default()
        }
    }

    /// Bulk flow `i` (`packets` packets to `dst`) starts: it waits for a circuit.
    pub(crate) fn add_flow(&mut self, i: u32, dst: u32, packets: u32) {
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
    pub(crate) fn arm<S: Scheduler>(
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
    pub(crate) fn on_slot(&mut self, m: &Model, me: NodeId, now_ps: u64, gen: u32) -> bool {
        if !self.slot.fires(gen) {
            return false;
        }
        self.slot.clear();
        if params(m).rack_planning {
            assert!(
                self.planned_at(m, now_ps),
                "host {me}: its rack was planned at the first of its hosts' slot timers"
            );
        } else {
            plan_superslice(m, &mut [(me, self)], now_ps);
        }
        true
    }

    /// Whether this host's plan for the superslice starting at `now_ps` is made.
    fn planned_at(&self, m: &Model, now_ps: u64) -> bool {
        self.planned == Some(now_ps / opera(m).opera().timing().superslice_ps())
    }

    /// Whether this host's slot timer event of generation `gen`, firing at `now_ps`, is the
    /// first of its rack's for this superslice under rack planning: the engine then plans
    /// the whole rack ([`plan_superslice`]) before handing the event to the host.
    pub(crate) fn needs_rack_plan(&self, m: &Model, now_ps: u64, gen: u32) -> bool {
        params(m).rack_planning && self.slot.fires(gen) && !self.planned_at(m, now_ps)
    }

    /// A superslice starts at `now_ps`: plans this host alone (its rack's other hosts idle).
    #[cfg(test)]
    fn start_superslice(&mut self, m: &Model, me: NodeId, now_ps: u64) {
        plan_superslice(m, &mut [(me, self)], now_ps);
    }

    /// Puts what slots that have ended did not send back at the front of its queues.
    fn return_leftovers(&mut self, m: &Model, me: NodeId, now_ps: u64) {
        for r in 0..self.commits.len() {
            if self.commits[r].end_ps > now_ps {
                continue;
            }
            while let Some(pkt) = self.commits[r].pkts.pop_back(m, me) {
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

    /// Step 1: commits the relayed packets this host holds for hosts of the rack starting at
    /// host `first`, at most `cap` per receiver, within `row_left` and each receiver's
    /// `col_left`.
    fn commit_relayed(
        &mut self,
        me: NodeId,
        rotor: usize,
        (first, cap): (u32, u32),
        row_left: &mut u32,
        col_left: &mut [u32],
        commit: &mut Commit,
    ) {
        for (j, left) in col_left.iter_mut().enumerate() {
            let to = first + j as u32;
            let Some(q) = self.nonlocal.get_mut(&to) else {
                continue;
            };
            let n = (q.len() as u32).min(cap).min(*row_left).min(*left);
            for mut pkt in q.drain(..n as usize) {
                pkt.dst = to;
                pkt.ack = me;
                pkt.via = rotor::relay_via(rotor, pkt.via);
                commit.pkts.push_whole(pkt);
            }
            if q.is_empty() {
                self.nonlocal.remove(&to);
            }
            *left -= n;
            *row_left -= n;
            self.waiting -= n as u64;
        }
    }

    /// Step 3: water-fills `budget` over this host's queues to racks other than its own and
    /// `peer` (each asking at most d·2·cap, what the peer rack's d intermediates may hold
    /// together for one receiver),
    /// and spreads each queue's share round-robin over the peer rack's hosts with room
    /// (`col_left`, which it lowers; `budget` is at most their sum).
    #[allow(clippy::too_many_arguments)]
    fn offer_relays(
        &mut self,
        m: &Model,
        me: NodeId,
        peer: u32,
        budget: u32,
        col_left: &mut [u32],
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
            .map(|(&k, q)| (k, q.pkts.min(2 * cap * d)))
            .unzip();
        let (mut order, mut alloc) = (Vec::new(), vec![0u32; dsts.len()]);
        water_fill(&demands, budget, &mut order, &mut alloc);
        let mut j = 0usize;
        for (&k, &n) in dsts.iter().zip(&alloc) {
            for _ in 0..n {
                while col_left[j] == 0 {
                    j = (j + 1) % col_left.len();
                }
                self.take_local(k, first + j as u32, 1, rotor, &mut commit.pkts);
                col_left[j] -= 1;
                j = (j + 1) % col_left.len();
            }
        }
    }

    /// Moves `n` packets of the local queue for receiver `fin` into `pkts`, addressed to
    /// host `to` (the receiver, or an intermediate).
    fn take_local(&mut self, fin: u32, to: u32, mut n: u32, rotor: usize, pkts: &mut Committed) {
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
            pkts.push_run(r.flow, r.seq, take, (fin, to, rotor::via(rotor, false)));
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
    pub(crate) fn next_packet(
        &mut self,
        m: &Model,
        me: NodeId,
        begin_ps: u64,
        c: &mut Counters,
    ) -> Option<Packet> {
        let (_, r) = self
            .commits
            .iter()
            .enumerate()
            .filter_map(|(r, k)| k.due_ps().map(|due| (due, r)))
            .filter(|&(due, r)| due <= begin_ps && begin_ps < self.commits[r].end_ps)
            .min()?;
        let k = &mut self.commits[r];
        let mut pkt = k.pkts.pop_front(m, me).expect("due");
        k.sent += 1;
        pkt.sent_ps = begin_ps;
        c.data_sent += 1;
        c.rlb_sent += 1;
        Some(pkt)
    }

    /// When a committed packet is next due after `begin_ps` (the NIC's wake-up).
    pub(crate) fn next_due_ps(&self, begin_ps: u64) -> Option<u64> {
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
    pub(crate) fn on_arrive(
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
        let hosts = opera(m).num_hosts();
        if !self.received.count(hosts, pkt.src, pkt.flow_index, need) {
            return false;
        }
        let Start::At(start) = flow.start else {
            unreachable!("bulk flows start at fixed times (RotorParams::build)")
        };
        let src_flow = (pkt.src, pkt.flow_index);
        super::completion::record_completion(mx, m, src_flow, &flow, start, now_ps);
        true
    }
}

/// A superslice starts at `now_ps` for `hosts` (ascending ids, all of one rack; those
/// already planned for it are skipped): returns what their ended slots left and plans the
/// slots of the rotor(s) that just came up (once per superslice). With
/// `topology.opera.rlb_planning = "rack"` the engine passes every host of the rack at the
/// first of their slot timers (`rack_hook`), as the authors' central planner, which sees
/// every host's queues; with `"host"` each host alone at its own timer.
pub(crate) fn plan_superslice(m: &Model, hosts: &mut [(NodeId, &mut RotorLb)], now_ps: u64) {
    let sched = opera(m).opera().schedule();
    let t = sched.timing().superslice_ps();
    assert_eq!(now_ps % t, 0, "RotorLB slots start with a superslice");
    let abs = now_ps / t;
    let mut todo: Vec<(NodeId, &mut RotorLb)> = hosts
        .iter_mut()
        .filter(|(_, r)| r.planned != Some(abs))
        .map(|(me, r)| (*me, &mut **r))
        .collect();
    if todo.is_empty() {
        return;
    }
    for (me, r) in todo.iter_mut() {
        r.planned = Some(abs);
        r.return_leftovers(m, *me, now_ps);
    }
    let n = sched.superslices();
    let s = (abs % n as u64) as usize;
    for rotor in sched.reconfiguring((s + n - 1) % n) {
        plan_rotor(m, &mut todo, rotor, s, (now_ps, abs));
    }
}

/// Commits packets of `hosts` (one rack) to `rotor`, which came up at the start of
/// superslice `s` (at `now_ps`, superslice `abs` counted from 0): steps 1-3 of the module
/// notes, with a receive cap per host of the peer rack of `max_pkts` shared by the senders
/// planned together (rack planning), or `cap_pkts` (= max_pkts / d) per sender planned
/// alone (host planning, which cannot see the others' queues).
fn plan_rotor(
    m: &Model,
    hosts: &mut [(NodeId, &mut RotorLb)],
    rotor: usize,
    s: usize,
    (now_ps, abs): (u64, u64),
) {
    let (o, p) = (opera(m), params(m));
    let d = o.hosts_per_rack();
    let my_rack = hosts[0].0 / d;
    assert!(hosts.iter().all(|(h, _)| h / d == my_rack), "one rack");
    let peer = o.opera().matching(rotor, s)[my_rack as usize];
    if peer == my_rack {
        return; // the self-loop: an idle uplink
    }
    let (first, n) = (peer * d, hosts.len());
    let col_cap = match p.rack_planning {
        true => p.max_pkts,
        false => p.cap_pkts,
    };
    let mut row_left = vec![p.max_pkts; n];
    let mut col_left = vec![col_cap; d as usize];
    let mut commits: Vec<Commit> = hosts
        .iter_mut()
        .map(|(_, r)| std::mem::take(&mut r.commits[rotor]))
        .collect();
    assert!(
        commits.iter().all(|c| c.pkts.is_empty()),
        "rotor {rotor}'s last slot has ended"
    );
    // 1. Relayed packets for hosts of the peer rack first.
    for (i, (me, r)) in hosts.iter_mut().enumerate() {
        let (row, commit) = (&mut row_left[i], &mut commits[i]);
        r.commit_relayed(*me, rotor, (first, p.cap_pkts), row, &mut col_left, commit);
    }
    // 2. Direct local traffic, water-filled over senders and receivers.
    let mut demands: Vec<u32> = hosts
        .iter()
        .flat_map(|(_, r)| (0..d).map(move |j| r.local.get(&(first + j)).map_or(0, |q| q.pkts)))
        .collect();
    let mut alloc = vec![0u32; demands.len()];
    rotor::fair_share_2d(&mut demands, &mut row_left, &mut col_left, &mut alloc);
    for (i, (_, r)) in hosts.iter_mut().enumerate() {
        for j in 0..d {
            let k = alloc[i * d as usize + j as usize];
            r.take_local(first + j, first + j, k, rotor, &mut commits[i].pkts);
        }
    }
    // 3. Valiant: spare capacity to intermediates in the peer rack, senders in an order
    // that rotates with the superslice so none is always first.
    if p.valiant {
        for k in 0..n {
            let i = (k + abs as usize) % n;
            let room: u32 = col_left.iter().sum();
            let budget = row_left[i].min(room);
            if budget > 0 {
                let (me, r) = &mut hosts[i];
                r.offer_relays(m, *me, peer, budget, &mut col_left, rotor, &mut commits[i]);
            }
        }
    }
    for ((_, r), mut commit) in hosts.iter_mut().zip(commits) {
        let pkts = commit.pkts.len();
        commit.start_ps = now_ps;
        commit.end_ps = now_ps + p.slot_ps;
        commit.interval_ps = p.slot_ps.checked_div(pkts).unwrap_or(0);
        commit.sent = 0;
        r.commits[rotor] = commit;
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
/// and bounces it (a header-sized packet) down to the host that sent it on this leg; then
/// bounces the bulk packets that would start next while stale (they would hold the wire for
/// nothing: behind low-latency traffic, a slot's packets can outlive its circuit).
/// Returns whether it took the packet on the wire off.
#[allow(clippy::too_many_arguments)]
pub(crate) fn bounce_if_stale<S: Scheduler>(
    m: &Model,
    o: &OperaFabric,
    tor: NodeId,
    ports: &mut [Port],
    p: u16,
    now_ps: u64,
    out: &mut S,
    c: &mut Counters,
) -> bool {
    let stale = |pkt: &Packet| {
        let target = o.num_hosts() + pkt.dst / o.hosts_per_rack();
        rotor::is_rlb(pkt.via) && o.peer_at(tor, p, now_ps).map(|x| x.0) != Some(target)
    };
    while ports[p as usize].next_bulk().is_some_and(stale) {
        let pkt = ports[p as usize].remove_next_bulk(now_ps);
        c.rlb_stale += 1;
        bounce(m, o, tor, ports, pkt, now_ps, out);
    }
    if !stale(ports[p as usize].on_wire()) {
        return false;
    }
    let pkt = discard_tx(m, tor, p, &mut ports[p as usize], now_ps, out);
    bounce(m, o, tor, ports, pkt, now_ps, out);
    true
}

/// Sends RotorLB packet `pkt`, taken off an uplink of ToR `tor`, back down (header-sized) to
/// the host that sent it on this leg.
fn bounce<S: Scheduler>(
    m: &Model,
    o: &OperaFabric,
    tor: NodeId,
    ports: &mut [Port],
    pkt: Packet,
    now_ps: u64,
    out: &mut S,
) {
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
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scenario::load_scenario_str;

    #[test]
    fn received_counts_each_flow_apart_whichever_table_holds_it() {
        let mut r = Received::default();
        // Flows 0 and 1 of host 3 interleaved: 0 takes the slot, 1 goes to the map.
        assert!(!r.count(8, 3, 0, 2));
        assert!(!r.count(8, 3, 1, 3));
        assert!(!r.count(8, 3, 1, 3));
        assert!(r.count(8, 3, 0, 2), "flow 0's second of two packets");
        // The slot is free again, but flow 1 started in the map and stays counted there.
        assert!(r.count(8, 3, 1, 3), "flow 1's third of three packets");
        assert!(r.more.is_empty());
        // Another sender's flow with the same index is another flow.
        assert!(!r.count(8, 4, 0, 2));
        assert!(!r.count(8, 3, 0, 2));
        assert!(r.count(8, 4, 0, 2));
        assert!(r.slots.iter().filter(|s| s.0 != 0).count() == 1);
    }

    /// 12 racks of 2 hosts, 4 rotors; ε = 20 µs, r = 2 µs, δ = 1.7 µs: superslice 23.7 µs,
    /// slot 3 × 23.7 + 20 = 91.1 µs; a full packet holds a host link 1.2 µs (1,500 B at
    /// 10 Gb/s), so max_pkts = ⌊91.1 / (4 × 1.2)⌋ = 18 and cap = 18 / 2 = 9.
    fn model(extra: &str) -> Model {
        model_with(extra, "")
    }

    /// [`model`] with `opera` lines in `[topology.opera]`.
    fn model_with(extra: &str, opera: &str) -> Model {
        let text = format!(
            "seed = 1\n{extra}\n[topology]\nkind = \"opera\"\nracks = 12\nhosts_per_rack = 2\n\
             uplinks = 4\nlink_rate_gbps = 10\nlink_latency_ns = 500\n\
             [topology.tiers.host_tor]\nlatency_ns = 0\n[topology.opera]\nepsilon_ns = 20000\n\
             reconfig_ns = 2000\n{opera}\n[packet]\npayload_bytes = 1436\nheader_bytes = 64\n\
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
                if let Some(p) = r.next_packet(m, me, now, &mut c) {
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

    /// Plans rack 0 (hosts 0 and 1) at the first superslice whose new rotor leads to rack 1
    /// (hosts 2 and 3), host 0 holding a 70-packet flow for `dsts[0]` and host 1 for
    /// `dsts[1]`, together (`together`) or each alone; returns what host i committed to host
    /// 2 + j, as `[i][j]`.
    fn plan_rack_0(m: &Model, dsts: [u32; 2], together: bool) -> [[u32; 2]; 2] {
        let o = opera(m).opera();
        let t = o.timing().superslice_ps();
        let (abs, rotor) = (0..12u64)
            .find_map(|a| {
                let s = a as usize;
                o.reconfiguring((s + 11) % 12)
                    .find(|&c| o.matching(c, s)[0] == 1)
                    .map(|c| (a, c))
            })
            .expect("rack 0 meets rack 1 once a cycle");
        let mut r: Vec<RotorLb> = (0..2).map(|_| RotorLb::new(4)).collect();
        for (x, &dst) in r.iter_mut().zip(&dsts) {
            x.add_flow(0, dst, m.packets_for(100_000) as u32);
        }
        let [r0, r1] = &mut r[..] else { unreachable!() };
        if together {
            plan_superslice(m, &mut [(0, r0), (1, r1)], abs * t);
        } else {
            plan_superslice(m, &mut [(0, r0)], abs * t);
            plan_superslice(m, &mut [(1, r1)], abs * t);
        }
        let mut got = [[0; 2]; 2];
        for (i, x) in r.iter().enumerate() {
            for p in &x.commits[rotor].pkts.packets(m, i as u32) {
                got[i][(p.dst - 2) as usize] += 1;
            }
        }
        got
    }

    #[test]
    fn rack_planning_gives_a_receiver_s_whole_room_to_the_senders_that_need_it() {
        // max_pkts 18 per host and slot, cap 9 (= 18 / 2 hosts).
        let rack = model("");
        assert_eq!(plan_rack_0(&rack, [2, 3], true), [[18, 0], [0, 18]]);
        assert_eq!(plan_rack_0(&rack, [2, 2], true), [[9, 0], [9, 0]]);
        // Planned alone, a host cannot see that the other sends elsewhere: cap each.
        let host = model_with("", "rlb_planning = \"host\"");
        assert_eq!(plan_rack_0(&host, [2, 3], false), [[9, 0], [0, 9]]);
        assert_eq!(plan_rack_0(&host, [2, 2], false), [[9, 0], [9, 0]]);
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
        let pkts = k.pkts.packets(&m, 0);
        for h in [2 * peer, 2 * peer + 1] {
            let to_h: Vec<_> = pkts.iter().filter(|p| p.dst == h).collect();
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
        let t0 = r.next_packet(&m, 0, 0, &mut c).unwrap();
        assert_eq!(t0.sent_ps, 0);
        assert!(r.next_packet(&m, 0, 1, &mut c).is_none());
        assert_eq!(r.next_due_ps(1), Some(91_100_000 / 18));
    }

    #[test]
    fn a_slots_queue_gives_its_runs_and_relays_in_order_from_either_end() {
        let m = model("");
        let relayed = |seq| Packet {
            sent_ps: 0,
            flow_index: 3,
            src: 5,
            dst: 9,
            seq,
            ack: 9,
            size_bytes: 1500,
            via: RELAYED,
            entropy: 0,
            kind: PacketKind::Data,
            flags: 0,
        };
        let fill = || {
            let mut q = Committed::default();
            q.push_run(0, 0, 3, (4, 2, 0));
            q.push_run(0, 3, 2, (4, 2, 0)); // extends the run: same flow, path, address
            q.push_whole(relayed(7));
            q.push_run(0, 5, 1, (4, 6, 0)); // another intermediate: a new run
            q.push_run(1, 0, 0, (8, 8, 0)); // nothing
            q.push_run(1, 0, 2, (8, 8, 0));
            q
        };
        let all = fill().packets(&m, 0);
        assert_eq!(fill().len(), 9);
        let seqs: Vec<_> = all.iter().map(|p| (p.flow_index, p.seq, p.dst)).collect();
        assert_eq!(
            seqs,
            [
                (0, 0, 2),
                (0, 1, 2),
                (0, 2, 2),
                (0, 3, 2),
                (0, 4, 2),
                (3, 7, 9),
                (0, 5, 6),
                (1, 0, 8),
                (1, 1, 8)
            ]
        );
        assert!(all.iter().all(|p| p.src == 0 || p.src == 5));
        let mut q = fill();
        let front: Vec<_> = std::iter::from_fn(|| q.pop_front(&m, 0)).collect();
        assert_eq!(front, all);
        assert!(q.is_empty());
        let mut q = fill();
        let mut back: Vec<_> = std::iter::from_fn(|| q.pop_back(&m, 0)).collect();
        back.reverse();
        assert_eq!(back, all);
        assert_eq!(q.len(), 0);
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
