//! State from the next switch: SGLB (Qi et al., SIGCOMM 2025) and PSP's spine-to-leaf state
//! (the PSP paper, §II-B, `lb.psp.remote`). Upper switches advertise, every period, one byte per
//! destination edge (leaf) switch L: their egress state toward L. The adverts are real
//! packets (`PacketKind::Advert`, `crate::packet`): queued in the priority queue of every
//! port that leads to a lower switch, serialized and delayed like any packet, and consumed by
//! the switch at the other end, which keeps the last value per (uplink, L). Nothing is read
//! from another switch's memory, so results do not depend on partitions or ranks.
//!
//! - SGLB (`Metric::Quality`): a port's quality is DLB's (weft's mapping onto its 8 bands),
//!   7 − 2·max(qLevel, uLevel), with qLevel AR's level of the queue (`[lb.ar]`: 5/10/20 % of
//!   the capacity) and uLevel from the busy fraction of the last advert period, the wire
//!   time of the switch's own adverts of the previous tick left out: 0 below 1 % (htsim:
//!   exactly 0; 1 % is a margin for adverts still on the wire at the tick), 1 below 15 %,
//!   2 below 50 %, else 3. uLevel is sampled
//!   every `lb.sglb.advert_ns`; for its own decisions a switch reads qLevel as AR does
//!   (refreshed lazily every `lb.ar.update_period_ns`: per-packet DLB is AR), because
//!   a local quality frozen for a whole advert period herds every packet of the period onto
//!   the same ports (measured on the k = 12 Ofan set-up: CCT +62 % with a 2 µs frozen local
//!   quality, +15 % with a 0.1 µs one). The advert carries the quality at the tick. A switch
//!   that chooses among uplinks takes the one with the highest path_q(s, L) =
//!   min(local_q\[s\], remote_q\[s\]\[L\]), uniform among ties. Unheard entries are 7
//!   (optimistic, as CONGA's empty metric 0). With `lb.sglb.mode = "flowlet"` (SGLB: "per packet or
//!   flowlet as in DLB") the choice is DLB's flowlet rule (`dlb.rs`) on the path
//!   quality: a packet whose flowset entry (`flowlet.rs`, `lb.sglb.flowset_entries`,
//!   default 256) is unused or idle longer than `lb.sglb.flowlet_us` (default 256 µs, DLB's
//!   default) goes to a port of the highest path_q, uniform among ties; otherwise it keeps the
//!   entry's port, unless that port is no longer a candidate (a failed link), which is
//!   re-picked as for a new flowlet. No reactive rebalancing (SGLB names none).
//! - PSP / band JSQ with `lb.psp.remote` (`Metric::Band`): the advert is the band of the
//!   upper switch's live queue toward L (sent every `lb.state_update_period_ns`); the
//!   leaf's uplink s toward L is in band max(band(own queue of s), remote band) — the band
//!   of the larger of the two queues. Unheard entries are band 0.
//!
//! What an upper switch advertises toward L when it has several ports toward L (3-tier:
//! an aggregation switch toward another pod): the best of them (highest quality, lowest
//! band), since it will itself choose among them. 3-tier fat trees: edge switches hear from
//! their aggregation switches, aggregation switches from their cores, each keyed by
//! destination edge switch; every switch that chooses combines its own ports with the next
//! hop's adverts (so each choice sees two hops, as SGLB's next-next-hop in a 3-stage Clos).
//!
//! Link failures: adverts go only over live links, and a switch whose links toward L all
//! failed advertises quality 0 (SGLB's rule for a failed remote link; PSP: the top band), so
//! a leaf never prefers it for L while any other uplink has quality above 0.
//!
//! The advertising timer sleeps when the switch is idle (every queue empty, and for SGLB
//! every port below 1 % busy in the last period): that tick still sends its adverts (the
//! idle state), and the first packet queued at an idle port wakes it at the next multiple of
//! the period, so an idle fabric holds no events.

use super::ar::{Ar, ArParams};
use super::flowlet::FlowletTable;
use super::psp::Quantizer;
use super::switch_policy::QueueView;
use super::ties::uniform_among;
use crate::packet::{Packet, ADVERT_ENTRIES};
use crate::topology::{Candidates, Fabric, NodeId, Route};
use serde::{Deserialize, Serialize};

/// A port that is not an uplink.
const NO_SLOT: u16 = u16::MAX;
/// The best quality.
pub(crate) const TOP_QUALITY: u8 = super::dlb::BEST;

/// What the bytes mean.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) enum Metric {
    /// SGLB: DLB quality 0..=7, 7 best.
    Quality(ArParams),
    /// PSP: queue band 0..=top, 0 best.
    Band(Quantizer),
}

impl Metric {
    fn unheard(&self) -> u8 {
        match self {
            Metric::Quality(_) => TOP_QUALITY,
            Metric::Band { .. } => 0,
        }
    }
    /// What a switch advertises toward an edge switch it cannot reach (its links there
    /// failed): quality 0 (SGLB's rule), the top band.
    fn unreachable(&self) -> u8 {
        match self {
            Metric::Quality(_) => 0,
            Metric::Band(q) => q.top() as u8,
        }
    }
}

/// AR's parameters for per-packet levels (SGLB reads levels, never AR's flowlets).
fn per_packet(ar: ArParams) -> ArParams {
    ArParams {
        flowlet: false,
        ..ar
    }
}

/// Utilization level from busy time over a period, in basis points: 0 below 1 %, 1 below
/// 15 %, 2 below 50 %, else 3.
#[inline]
pub(crate) fn util_level(busy_ps: u64, period_ps: u64) -> u8 {
    let bp = busy_ps as u128 * 10_000 / period_ps as u128;
    match bp {
        0..=99 => 0,
        100..=1_499 => 1,
        1_500..=4_999 => 2,
        _ => 3,
    }
}

/// DLB quality: 7 − 2·max(qLevel, uLevel) (DLB's band, `dlb.rs`).
#[inline]
pub(crate) fn quality(q_level: u8, u_level: u8) -> u8 {
    super::dlb::DlbParams::band(q_level, u_level)
}

/// A switch's advertised and received state.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub(crate) struct Remote {
    metric: Metric,
    period_ps: u64,
    edges: u32,
    /// Port → uplink slot, or `NO_SLOT`.
    slot: Vec<u16>,
    /// Received: [slot · edges + L].
    remote: Vec<u8>,
    /// SGLB: each port's quality at the last sample (what it advertises), its utilization
    /// level then, and its busy time then.
    local: Vec<u8>,
    u_level: Vec<u8>,
    busy_ps: Vec<u64>,
    /// SGLB: the queue levels its own decisions read, refreshed lazily as AR's.
    q_levels: Option<Ar>,
    /// Ports toward each edge switch L: `toward[toward_at[L]..toward_at[L + 1]]`.
    toward: Vec<u16>,
    toward_at: Vec<u32>,
    /// Ports that lead to lower switches (where adverts go); empty: this switch does not
    /// advertise.
    down_ports: Vec<u16>,
    /// This period's advert, one byte per edge switch.
    advert: Vec<u8>,
    /// Per port: the wire time of one tick's adverts (what a port's busy time includes of
    /// them, left out of its utilization), and whether a tick has sent any yet.
    advert_wire_ps: Vec<u64>,
    ticked: bool,
    /// SGLB per flowlet: the flowset table and the inactivity interval (`None`: per packet).
    flowlets: Option<(FlowletTable, u64)>,
}

impl Remote {
    pub(crate) fn new(fabric: &Fabric, node: NodeId, metric: Metric, period_ps: u64) -> Remote {
        assert!(period_ps > 0, "adverts need a positive period");
        let ports = fabric.num_ports(node);
        let t = fabric.tier(node);
        let edges = fabric.subtree(0, 1).1;
        let hosts_per_edge = fabric.num_hosts / edges;
        let mut up = 0;
        let mut slot = vec![NO_SLOT; ports as usize];
        let mut down_ports = Vec::new();
        for p in 0..ports {
            let peer = fabric.peer(node, p, 0).0;
            if fabric.tier(peer) > t {
                slot[p as usize] = up;
                up += 1;
            } else if !fabric.is_host(peer) && !fabric.is_link_down(node, p) {
                down_ports.push(p);
            }
        }
        // Routes at time 0 (static fabrics).
        let (mut toward, mut toward_at) = (Vec::new(), vec![0]);
        if !down_ports.is_empty() {
            for l in 0..edges {
                // Failed links leave the list (an empty one advertises "unreachable").
                let up = |p: &u16| !fabric.is_link_down(node, *p);
                match fabric.route(node, l * hosts_per_edge, 0) {
                    Route::Port(p) => toward.extend(Some(p).filter(up)),
                    Route::Choice(c) => toward.extend(c.iter().filter(up)),
                }
                toward_at.push(toward.len() as u32);
            }
        }
        let unheard = metric.unheard();
        let q_levels = match &metric {
            Metric::Quality(ar) => Some(Ar::new(ports, &per_packet(*ar))),
            Metric::Band(_) => None,
        };
        Remote {
            metric,
            period_ps,
            edges,
            slot,
            remote: vec![unheard; up as usize * edges as usize],
            local: vec![TOP_QUALITY; ports as usize],
            u_level: vec![0; ports as usize],
            q_levels,
            busy_ps: vec![0; ports as usize],
            toward,
            toward_at,
            advert: vec![
                unheard;
                if down_ports.is_empty() {
                    0
                } else {
                    edges as usize
                }
            ],
            down_ports,
            advert_wire_ps: vec![0; ports as usize],
            ticked: false,
            flowlets: None,
        }
    }

    /// SGLB per flowlet (`flowlets`: the table's entries and the inactivity interval; `None`:
    /// per packet): a flowset table at switches that choose among uplinks.
    pub(crate) fn with_flowlets_if(
        mut self,
        flowlets: Option<(u32, u64)>,
        fabric: &Fabric,
        node: NodeId,
    ) -> Remote {
        if let Some((entries, flowlet_ps)) = flowlets.filter(|_| fabric.uplinks(node) > 0) {
            self.flowlets = Some((FlowletTable::new(entries), flowlet_ps));
        }
        self
    }

    /// Records what one tick's adverts cost each port, `wire_bytes` each (size + inter-frame
    /// gap), so that the switch's own adverts do not count as load.
    pub(crate) fn with_advert_wire(
        mut self,
        fabric: &Fabric,
        node: NodeId,
        wire_bytes: u64,
    ) -> Remote {
        let per_port = self.advert.len().div_ceil(ADVERT_ENTRIES as usize) as u64;
        for &p in &self.down_ports {
            let one = fabric.link(node, p).serialization_ps(wire_bytes);
            self.advert_wire_ps[p as usize] = per_port * one;
        }
        self
    }

    /// Bytes of state of such a switch (for `weft validate`).
    pub(crate) fn state_bytes(fabric: &Fabric, node: NodeId) -> usize {
        let r = Remote::new(fabric, node, Metric::Band(Quantizer::new(vec![1])), 1);
        r.slot.len() * 2
            + r.remote.len()
            + r.local.len() * 10
            + r.local.len() * 24
            + r.toward.len() * 2
            + r.toward_at.len() * 4
            + r.down_ports.len() * 2
            + r.advert.len()
            + r.advert_wire_ps.len() * 8
    }

    /// Whether the switch needs the periodic timer: it advertises, or (SGLB) samples its own
    /// qualities.
    pub(crate) fn has_timer(&self) -> bool {
        !self.down_ports.is_empty() || matches!(self.metric, Metric::Quality(_))
    }

    /// The period of the timer, if the switch needs one.
    pub(crate) fn timer_period_ps(&self) -> Option<u64> {
        self.has_timer().then_some(self.period_ps)
    }

    pub(crate) fn first_timer_ps(&self) -> Option<u64> {
        self.has_timer().then_some(self.period_ps)
    }

    pub(crate) fn wake_ps(&self, now_ps: u64) -> Option<u64> {
        self.has_timer()
            .then(|| now_ps.div_ceil(self.period_ps) * self.period_ps)
    }

    /// The period's tick: sample the switch's own ports, compute the advert; returns the next
    /// tick, or `None` (sleep) when the switch is idle.
    pub(crate) fn on_timer<Q: QueueView>(&mut self, now_ps: u64, queues: &Q) -> Option<u64> {
        let mut idle = true;
        for p in 0..self.local.len() {
            let bytes = queues.queued_bytes(p as u16);
            idle &= bytes == 0;
            if let Metric::Quality(ar) = &self.metric {
                let busy = queues.busy_ps(p as u16);
                let own = if self.ticked {
                    self.advert_wire_ps[p]
                } else {
                    0
                };
                let load_ps = (busy - self.busy_ps[p]).saturating_sub(own);
                let u = util_level(load_ps, self.period_ps);
                self.busy_ps[p] = busy;
                self.u_level[p] = u;
                idle &= u == 0;
                self.local[p] = quality(ar.level(bytes), u);
            }
        }
        for l in 0..self.advert.len() {
            let ports = &self.toward[self.toward_at[l] as usize..self.toward_at[l + 1] as usize];
            self.advert[l] = match &self.metric {
                Metric::Quality(_) => ports.iter().map(|&p| self.local[p as usize]).max(),
                Metric::Band(q) => ports
                    .iter()
                    .map(|&p| q.band(queues.queued_bytes(p)) as u8)
                    .min(),
            }
            .unwrap_or(self.metric.unreachable());
        }
        self.ticked = true;
        (!idle).then_some(now_ps + self.period_ps)
    }

    /// The ports to advertise on and the advert of this tick (`None`: nothing to send).
    pub(crate) fn adverts(&self) -> Option<(&[u16], &[u8])> {
        (!self.down_ports.is_empty()).then_some((&self.down_ports[..], &self.advert[..]))
    }

    /// An advert arrived on `in_port`.
    pub(crate) fn on_advert(&mut self, in_port: u16, pkt: &Packet) {
        let s = self.slot[in_port as usize];
        if s == NO_SLOT {
            return;
        }
        let first = pkt.flow_index;
        for i in 0..ADVERT_ENTRIES.min(self.edges.saturating_sub(first)) {
            self.remote[s as usize * self.edges as usize + (first + i) as usize] =
                pkt.advert_entry(i);
        }
    }

    /// The last advertised value of the switch behind uplink `p` toward `dst`'s edge switch.
    #[inline]
    pub(crate) fn remote_of(&self, fabric: &Fabric, p: u16, dst: NodeId) -> u8 {
        let s = self.slot[p as usize];
        if s == NO_SLOT {
            return self.metric.unheard();
        }
        let l = fabric.subtree(dst, 1).0;
        self.remote[s as usize * self.edges as usize + l as usize]
    }

    /// SGLB: port `p`'s own quality for a decision at `now_ps`.
    #[inline]
    fn local_quality<Q: QueueView>(&mut self, p: u16, queues: &Q, now_ps: u64) -> u8 {
        let Metric::Quality(ar) = &self.metric else {
            unreachable!("SGLB decides by quality")
        };
        let levels = self.q_levels.as_mut().expect("SGLB keeps queue levels");
        let q = levels.level(p, ar, queues, now_ps);
        quality(q, self.u_level[p as usize])
    }

    /// SGLB: the index (among `c`) of the port for `pkt` at a switch with hash salt `salt`:
    /// per packet the best path ([`Remote::best_path`]); per flowlet the flowlet's port
    /// while its entry is active and that port still a candidate, else the best path.
    #[allow(clippy::too_many_arguments)]
    #[inline]
    pub(crate) fn choose_sglb<Q: QueueView>(
        &mut self,
        fabric: &Fabric,
        pkt: &Packet,
        salt: u32,
        c: Candidates<'_>,
        queues: &Q,
        now_ps: u64,
        rng: &mut rand_pcg::Pcg32,
    ) -> u16 {
        let Some((table, flowlet_ps)) = &self.flowlets else {
            return self.best_path(fabric, pkt.dst, c, queues, now_ps, rng);
        };
        let slot = table.slot(pkt.hash_key(), salt);
        let current = table
            .last(slot, now_ps)
            .filter(|&(_, gap)| gap <= *flowlet_ps)
            .and_then(|(port, _)| c.iter().position(|q| q == port));
        let i = match current {
            Some(i) => i as u16,
            None => self.best_path(fabric, pkt.dst, c, queues, now_ps, rng),
        };
        if let Some((table, _)) = &mut self.flowlets {
            table.record(slot, c.get(i), now_ps);
        }
        i
    }

    /// SGLB: the index (among `c`) of a port with the highest min(local, remote), uniform
    /// among ties.
    pub(crate) fn best_path<Q: QueueView>(
        &mut self,
        fabric: &Fabric,
        dst: NodeId,
        c: Candidates<'_>,
        queues: &Q,
        now_ps: u64,
        rng: &mut rand_pcg::Pcg32,
    ) -> u16 {
        let mut path_q = [0u8; 256];
        let n = c.len() as usize;
        for (i, p) in c.iter().enumerate() {
            let local = self.local_quality(p, queues, now_ps);
            path_q[i] = local.min(self.remote_of(fabric, p, dst));
        }
        let best = *path_q[..n].iter().max().expect("candidates");
        uniform_among(|| path_q[..n].iter(), |&&q| q == best, rng) as u16
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lb::TestQueues;
    use crate::model::Model;
    use crate::scenario::{LbPolicy, Scenario, TopologyKind};
    use rand::SeedableRng;
    use rand_pcg::Pcg32;

    const AR: ArParams = ArParams {
        capacity_bytes: 1_000_000,
        thresholds_ppm: [50_000, 100_000, 200_000],
        period_ps: 100_000,
        small_bytes: 100,
        flowlet: false,
        sticky_ps: 0,
        flowset_entries: 1,
    };

    /// A leaf-spine of k = 4: 4 leaves (hosts 2l, 2l + 1), 2 spines; leaf ports 2, 3 up.
    fn leaf_spine() -> Model {
        let mut s = Scenario::default();
        s.topology.kind = TopologyKind::LeafSpine;
        s.topology.k = 4;
        s.lb.policy = LbPolicy::Sglb;
        s.validate().unwrap();
        Model::build(&s).unwrap()
    }

    #[test]
    fn quality_bands_follow_the_worse_of_queue_and_utilization() {
        assert_eq!(
            [quality(0, 0), quality(1, 0), quality(0, 2), quality(3, 1)],
            [7, 5, 3, 1]
        );
        // Busy 0.5 %, 1 %, 14.99 %, 15 %, 50 % of 1 µs.
        let u = |busy| util_level(busy, 1_000_000);
        assert_eq!(
            [u(5_000), u(10_000), u(149_900), u(150_000), u(500_000)],
            [0, 1, 1, 2, 3]
        );
    }

    /// A spine advertises, per leaf, the quality of its port toward it; a leaf stores what
    /// arrives on an uplink and decides by min(local, remote).
    #[test]
    fn path_quality_never_exceeds_either_hop_and_a_failed_remote_is_avoided() {
        let m = leaf_spine();
        let f = &m.fabric;
        let (leaf0, spine0) = (f.num_hosts, f.num_hosts + 4);
        let mut spine = Remote::new(f, spine0, Metric::Quality(AR), 1_000_000);
        assert_eq!(spine.first_timer_ps(), Some(1_000_000));
        // Spine 0: port 3 (to leaf 3) holds 60 KB (qLevel 1) → quality 5; port 1 (leaf 1)
        // was busy 20 % of the period → quality 3.
        struct Q(Vec<u64>, Vec<u64>);
        impl QueueView for Q {
            fn queued_bytes(&self, p: u16) -> u64 {
                self.0[p as usize]
            }
            fn busy_ps(&self, p: u16) -> u64 {
                self.1[p as usize]
            }
            fn sent_bytes(&self, _: u16) -> u64 {
                0
            }
        }
        let q = Q(vec![0, 0, 0, 60_000], vec![0, 200_000, 0, 0]);
        assert_eq!(spine.on_timer(1_000_000, &q), Some(2_000_000));
        let (ports, adv) = spine.adverts().unwrap();
        assert_eq!((ports, adv), (&[0u16, 1, 2, 3][..], &[7u8, 3, 7, 5][..]));
        // Leaf 0 hears it on port 2 (spine 0); spine 1 (port 3) reports leaf 3 failed (0).
        let mut leaf = Remote::new(f, leaf0, Metric::Quality(AR), 1_000_000);
        assert!(leaf.adverts().is_none(), "a leaf has no switch below");
        leaf.on_advert(2, &Packet::advert(spine0, leaf0, 0, adv, 64));
        leaf.on_advert(3, &Packet::advert(spine0 + 1, leaf0, 0, &[7, 7, 7, 0], 64));
        assert_eq!(leaf.remote_of(f, 2, 7), 5);
        // Local: port 2 quality 3 (idle queue, 20 % busy), port 3 quality 7.
        let idle = Q(vec![0; 4], vec![0, 0, 200_000, 0]);
        leaf.on_timer(1_000_000, &idle);
        let c = Candidates::Range { first: 2, count: 2 };
        let mut rng = Pcg32::seed_from_u64(2);
        let now = 1_000_000;
        for dst in [2, 3, 6, 7] {
            for p in c.iter() {
                let local = leaf.local_quality(p, &idle, now);
                let pq = local.min(leaf.remote_of(f, p, dst));
                assert!(pq <= local && pq <= leaf.remote_of(f, p, dst));
            }
        }
        // Toward leaf 3 (host 7): port 2 min(3, 5) = 3, port 3 min(7, 0) = 0: port 2 only,
        // although port 3 is the better local port.
        for _ in 0..50 {
            assert_eq!(c.get(leaf.best_path(f, 7, c, &idle, now, &mut rng)), 2);
        }
        // Toward leaf 1 (host 3): port 2 min(3, 3) = 3, port 3 min(7, 7) = 7.
        assert_eq!(c.get(leaf.best_path(f, 3, c, &idle, now, &mut rng)), 3);
        // The own queue counts at once (AR's lazy level, refreshed after 0.1 µs): 60 KB
        // on port 3 makes it quality 5, so toward leaf 1 port 3 still wins (5 > 3), and
        // 250 KB (level 3, quality 1) makes port 2 win.
        let loaded = Q(vec![0, 0, 0, 60_000], vec![0, 0, 200_000, 0]);
        assert_eq!(leaf.local_quality(3, &loaded, now + 100_001), 5);
        let full = Q(vec![0, 0, 0, 250_000], vec![0, 0, 200_000, 0]);
        let t = now + 200_002;
        assert_eq!(c.get(leaf.best_path(f, 3, c, &full, t, &mut rng)), 2);
    }

    /// SGLB per flowlet, as DLB: within a flowlet (gaps up to the interval,
    /// here 10 µs) the port never changes, whatever the path qualities do; after a longer
    /// gap the flow lands on a port of the highest path quality; a remembered port that is
    /// no longer a candidate is re-picked.
    #[test]
    fn sglb_flowlets_keep_their_port_until_an_idle_gap() {
        let m = leaf_spine();
        let f = &m.fabric;
        let (leaf0, spine0) = (f.num_hosts, f.num_hosts + 4);
        let interval = 10_000_000;
        let mut leaf = Remote::new(f, leaf0, Metric::Quality(AR), 1_000_000).with_flowlets_if(
            Some((256, interval)),
            f,
            leaf0,
        );
        let mut pkt = crate::packet::test_packet(crate::packet::PacketKind::Data, 4158);
        pkt.dst = 7; // under leaf 3
        let c = Candidates::Range { first: 2, count: 2 };
        let mut rng = Pcg32::seed_from_u64(9);
        let mut now = 0;
        let mut go = |leaf: &mut Remote, q: &TestQueues, now: u64, c: Candidates<'_>| {
            c.get(leaf.choose_sglb(f, &pkt, 0, c, q, now, &mut rng))
        };
        let first = go(&mut leaf, &TestQueues(vec![0; 4]), now, c);
        let other = 5 - first; // the other uplink of 2 and 3
                               // Its own queue fills (250 KB: quality 1) while the other port is idle (7).
        let mut q = vec![0; 4];
        q[first as usize] = 250_000;
        let loaded = TestQueues(q);
        for _ in 0..20 {
            now += interval; // exactly the interval: still one flowlet
            assert_eq!(go(&mut leaf, &loaded, now, c), first);
        }
        now += interval + 1;
        assert_eq!(
            go(&mut leaf, &loaded, now, c),
            other,
            "new flowlet, best path"
        );
        // The spine behind `other` now reports leaf 3 unreachable (quality 0) and `first`
        // empties: path qualities 7 (first) and 0 (other), yet the flowlet stays...
        let spine_of_other = spine0 + (other - 2) as u32;
        leaf.on_advert(
            other,
            &Packet::advert(spine_of_other, leaf0, 0, &[7, 7, 7, 0], 64),
        );
        let idle = TestQueues(vec![0; 4]);
        now += 1_000;
        assert_eq!(go(&mut leaf, &idle, now, c), other);
        // ...until a gap above the interval: back to the best path.
        now += interval + 1;
        assert_eq!(go(&mut leaf, &idle, now, c), first);
        // `first`'s link fails: re-picked at once (within the flowlet) onto the other one.
        let only_other = [other];
        now += 1_000;
        let c1 = Candidates::List(&only_other);
        assert_eq!(go(&mut leaf, &idle, now, c1), other);
    }

    /// A spine's own adverts do not count as load; anything above them does. (2 000 B on
    /// the wire per advert here, 20 000 ps a port a tick at 800 Gb/s: 2 % of the period,
    /// which would read as level 1 if it counted.)
    #[test]
    fn own_adverts_are_not_load() {
        let m = leaf_spine();
        let f = &m.fabric;
        let spine0 = f.num_hosts + 4;
        let mut spine = Remote::new(f, spine0, Metric::Quality(AR), 1_000_000)
            .with_advert_wire(f, spine0, 2_000);
        struct Busy(Vec<u64>);
        impl QueueView for Busy {
            fn queued_bytes(&self, _p: u16) -> u64 {
                0
            }
            fn busy_ps(&self, p: u16) -> u64 {
                self.0[p as usize]
            }
            fn sent_bytes(&self, _: u16) -> u64 {
                0
            }
        }
        assert_eq!(spine.on_timer(1_000_000, &Busy(vec![0; 4])), None, "idle");
        // Since: every port sent the tick's advert; port 1 also 10 000 ps of data (1 % of
        // the period: level 1, quality 5).
        let busy = Busy(vec![20_000, 30_000, 20_000, 20_000]);
        assert_eq!(spine.on_timer(2_000_000, &busy), Some(3_000_000));
        assert_eq!(spine.adverts().unwrap().1, &[7, 5, 7, 7]);
        // Only adverts since: idle again.
        let busy = Busy(vec![40_000, 50_000, 40_000, 40_000]);
        assert_eq!(spine.on_timer(3_000_000, &busy), None);
        assert_eq!(spine.adverts().unwrap().1, &[7; 4]);
    }

    /// 3-tier: an aggregation switch advertises to its edge switches its down port's quality
    /// toward the edges of its pod and its best core uplink's toward every other edge; a
    /// core advertises its port toward each edge's pod.
    #[test]
    fn fat_tree_upper_switches_advertise_per_destination_edge_switch() {
        let mut s = Scenario::default();
        s.topology.k = 4;
        s.lb.policy = LbPolicy::Sglb;
        s.validate().unwrap();
        let m = Model::build(&s).unwrap();
        let f = &m.fabric;
        // k = 4: hosts 0..16, edges 16..24, aggregation 24..32, cores 32..36.
        let (agg, core) = (24, 32);
        let mut a = Remote::new(f, agg, Metric::Quality(AR), 1_000_000);
        // Port 1 (edge 17) at 60 KB: quality 5; uplinks 2 (core 32) at 120 KB: 3, and 3
        // (core 33) at 250 KB: 1.
        let q = TestQueues(vec![0, 60_000, 120_000, 250_000]);
        a.on_timer(1_000_000, &q);
        let (ports, adv) = a.adverts().unwrap();
        assert_eq!(ports, &[0, 1], "adverts go down to the edge switches only");
        assert_eq!(adv, &[7, 5, 3, 3, 3, 3, 3, 3]);
        // The aggregation switch hears from its cores on its uplinks.
        a.on_advert(
            3,
            &Packet::advert(33, agg, 0, &[7, 7, 1, 1, 7, 7, 7, 7], 64),
        );
        assert_eq!(a.remote_of(f, 3, 5), 1, "host 5 is under edge 2");
        assert_eq!(a.remote_of(f, 2, 5), 7, "core 32 never heard: optimistic");
        // A core: port p leads to pod p, whose edges are 2p and 2p + 1.
        let mut c = Remote::new(f, core, Metric::Quality(AR), 1_000_000);
        c.on_timer(1_000_000, &TestQueues(vec![0, 0, 250_000, 0]));
        assert_eq!(c.adverts().unwrap().1, &[7, 7, 7, 7, 1, 1, 7, 7]);
        // Edge switches only listen.
        assert!(Remote::new(f, 16, Metric::Quality(AR), 1)
            .adverts()
            .is_none());
    }

    #[test]
    fn psp_bands_advertise_the_spine_queue_and_idle_switches_sleep() {
        let m = leaf_spine();
        let f = &m.fabric;
        let spine0 = f.num_hosts + 4;
        let band = Metric::Band(Quantizer::linear(8, 960_000, 8));
        let mut spine = Remote::new(f, spine0, band.clone(), 500_000);
        // 130 KB is band 1, 960 001 B band 8.
        let q = TestQueues(vec![130_000, 0, 960_001, 0]);
        assert_eq!(spine.on_timer(500_000, &q), Some(1_000_000));
        assert_eq!(spine.adverts().unwrap().1, &[1, 0, 8, 0]);
        // Every queue empty: the adverts (all band 0) go out and the timer sleeps.
        assert_eq!(spine.on_timer(1_000_000, &TestQueues(vec![0; 4])), None);
        assert_eq!(spine.adverts().unwrap().1, &[0, 0, 0, 0]);
        assert_eq!(spine.wake_ps(1_000_001), Some(1_500_000));
        // A leaf under PSP has nothing to advertise or sample: no timer.
        let leaf = Remote::new(f, f.num_hosts, band, 500_000);
        assert_eq!(leaf.first_timer_ps(), None);
    }
}
