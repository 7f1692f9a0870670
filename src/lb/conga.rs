//! CONGA (Alizadeh et al., SIGCOMM 2014), adapted to per-packet decisions as in the Ofan paper
//! (§3.1).
//!
//! - Every CONGA switch keeps a DRE register per port: `X += bytes` for every packet it
//!   forwards through the port (at the forwarding decision, as the ns-3 reference does), and
//!   `X ← X·(1−α)` at every multiple of T_dre. The decay is applied lazily when the register
//!   is next touched (no timer): the number of multiples of T_dre crossed since the last touch,
//!   each one an integer multiply by ⌊(1−α)·2^16⌉ / 2^16, so it is deterministic.
//! - Its metric is `m = ⌊X·8 / (C·τ) · 2^Q⌋` with τ = T_dre/α, clamped to 2^Q − 1; `X·8/C`
//!   is the time the link needs for X bytes, so `m = ⌊ser(X)·2^Q / τ⌋` with the port's own
//!   rate (asymmetric links included).
//! - Source edge (leaf) switch, for a packet from one of its hosts leaving through an uplink:
//!   for every candidate uplink u, `cost = max(local m(u), CongToLeaf[dst edge][u])`, uniform
//!   among the argmin; then it stamps the overlay (LBTag = u's index among its uplinks,
//!   CE = 0) and piggybacks one CongFromLeaf[dst edge] entry (round-robin, entries with the
//!   "changed" bit first, which it clears). With `lb.conga.flowlet_us` > 0 a flowlet keeps
//!   its port while its packets are closer than the timeout, and a new flowlet keeps the old
//!   port if it is among the argmin (the shared `FlowletTable`, 4096 entries per edge
//!   switch, flows hashed onto them).
//! - Every other hop through the fabric: `CE = max(CE, m(egress))` (after adding the packet).
//! - Destination edge switch, for a packet leaving to a host: CongFromLeaf\[src edge\]\[LBTag\]
//!   = CE (changed), and, if the feedback tag is valid, CongToLeaf\[src edge\]\[FB_LBTag\] =
//!   FB_Metric with the time; the overlay is cleared before the host gets the packet.
//!   ACKs carry an overlay and feedback like data (reverse traffic between the pair).
//! - Aging: the reset "every T_age/4 of entries older than T_age" is evaluated lazily: an
//!   entry written at `u` reads as absent (CongToLeaf: metric 0; CongFromLeaf: removed) once
//!   the last multiple of T_age/4 at or before now is more than T_age after `u`.
//!
//! 3-tier fat trees (CONGA is defined on two tiers; this generalisation is our choice): the edge
//! switch decides among its aggregation uplinks keyed by destination edge switch, CE accumulates
//! over the whole rest of the path (aggregation up, core down, aggregation down), and aggregation
//! switches choose among their cores by their local DRE metric alone (uniform among the least).
//!
//! The overlay travels in `Packet::via` (see `crate::packet`), which only DRB and Valiant
//! use otherwise; background flows' pinned path codes (`PINNED`, bit 30) are left alone,
//! and Q is at most 6 bits so that no overlay ever looks pinned.

use super::flowlet::FlowletTable;
use super::switch_policy::Forwarding;
use super::switch_policy::{BuildSwitch, QueueView, SwitchCtx, SwitchPolicy};
use super::ties::uniform_among;
use super::LbShared;
use crate::packet::{is_pinned, Packet, NO_VIA};
use crate::scenario::LbConfig;
use crate::scenario::LbPolicy;
use crate::topology::{Candidates, Fabric, NodeId};
use rand_pcg::Pcg32;
use serde::{Deserialize, Serialize};

/// A tag byte meaning "none".
const NO_TAG: u8 = 0xFF;

/// Flowlet table entries per edge switch (hardware-like: flows share an entry by hash).
const FLOWLET_ENTRIES: u32 = 4096;

/// Run-wide CONGA parameters in simulator units.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct CongaParams {
    pub t_dre_ps: u64,
    /// (1 − α)·2^16, rounded.
    pub keep_q16: u64,
    /// τ = T_dre / α.
    pub tau_ps: u64,
    pub q_bits: u8,
    pub t_age_ps: u64,
    /// 0: per packet.
    pub flowlet_ps: u64,
}

impl CongaParams {
    pub(crate) fn new(cfg: &LbConfig) -> CongaParams {
        let ps = |us: f64| (us * 1e6).round() as u64;
        let t_dre_ps = ps(cfg.conga.t_dre_us).max(1);
        CongaParams {
            t_dre_ps,
            keep_q16: ((1.0 - cfg.conga.alpha) * 65_536.0).round() as u64,
            tau_ps: ((t_dre_ps as f64 / cfg.conga.alpha).round() as u64).max(1),
            q_bits: cfg.conga.q_bits as u8,
            t_age_ps: ps(cfg.conga.t_age_us).max(4),
            flowlet_ps: ps(cfg.conga.flowlet_us),
        }
    }

    /// The quantized metric of `x_bytes` on a link that needs `ser_ps` to send them.
    #[inline]
    pub(crate) fn quantize(&self, ser_ps: u64) -> u8 {
        let max = (1u64 << self.q_bits) - 1;
        let m = ((ser_ps as u128) << self.q_bits) / self.tau_ps as u128;
        m.min(max as u128) as u8
    }

    /// Whether an entry written at `at_ps` has been aged out by now.
    #[inline]
    fn aged(&self, at_ps: u64, now_ps: u64) -> bool {
        let quarter = self.t_age_ps / 4;
        now_ps / quarter * quarter > at_ps + self.t_age_ps
    }
}

/// A discounting rate estimator.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Dre {
    pub x_bytes: u64,
    /// Multiples of T_dre already applied.
    epoch: u64,
}

impl Dre {
    /// The register at `now_ps`, decayed once per multiple of T_dre crossed since last time.
    #[inline]
    pub(crate) fn at(&mut self, now_ps: u64, p: &CongaParams) -> u64 {
        let epoch = now_ps / p.t_dre_ps;
        let mut k = epoch - self.epoch;
        self.epoch = epoch;
        // x·keep >> 16 < x for x > 0, so this ends within a few thousand steps even for
        // α = 2^-16 and a long idle spell.
        while k > 0 && self.x_bytes > 0 {
            self.x_bytes = (self.x_bytes * p.keep_q16) >> 16;
            k -= 1;
        }
        self.x_bytes
    }

    #[inline]
    pub(crate) fn add(&mut self, bytes: u64, now_ps: u64, p: &CongaParams) {
        self.at(now_ps, p);
        self.x_bytes += bytes;
    }
}

/// CONGA's overlay header, packed into `Packet::via`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Overlay {
    pub lb_tag: u8,
    pub ce: u8,
    pub fb_tag: u8,
    pub fb_metric: u8,
}

impl Overlay {
    /// The overlay of `via`, if the packet has one (a background flow's pinned path code is
    /// not one: with Q ≤ 6 bits no overlay sets bit 30, `packet::PINNED`).
    #[inline]
    pub(crate) fn read(via: u32) -> Option<Overlay> {
        if is_pinned(via) {
            return None;
        }
        let o = Overlay {
            lb_tag: via as u8,
            ce: (via >> 8) as u8,
            fb_tag: (via >> 16) as u8,
            fb_metric: (via >> 24) as u8,
        };
        (via != NO_VIA && o.lb_tag != NO_TAG).then_some(o)
    }
    #[inline]
    pub(crate) fn word(&self) -> u32 {
        self.lb_tag as u32
            | (self.ce as u32) << 8
            | (self.fb_tag as u32) << 16
            | (self.fb_metric as u32) << 24
    }
}

/// What a port leads to.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
enum Role {
    Host,
    /// An uplink: its index among the switch's uplinks.
    Up(u8),
    Down,
}

/// A CongToLeaf entry (metric, written at); a CongFromLeaf entry adds the "changed" bit.
#[derive(Clone, Copy, Debug, Default, Serialize, Deserialize)]
struct Entry {
    metric: u8,
    changed: bool,
    valid: bool,
    at_ps: u64,
}

/// The tables of an edge (leaf) switch.
#[derive(Clone, Debug, Serialize, Deserialize)]
struct LeafTables {
    /// Uplinks per edge switch (the LBTag range).
    width: usize,
    /// [dst edge · width + tag].
    to_leaf: Vec<Entry>,
    /// [src edge · width + tag].
    from_leaf: Vec<Entry>,
    /// Feedback round-robin pointer per edge switch.
    rr: Vec<u8>,
    /// With `lb.conga.flowlet_us` > 0.
    flowlets: Option<FlowletTable>,
}

/// Per-switch CONGA state.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub(crate) struct Conga {
    dre: Vec<Dre>,
    role: Vec<Role>,
    /// Edge switches only.
    leaf: Option<Box<LeafTables>>,
}

impl Conga {
    pub(crate) fn new(fabric: &Fabric, node: NodeId, p: &CongaParams) -> Conga {
        let ports = fabric.num_ports(node);
        let t = fabric.tier(node);
        let mut up = 0u8;
        let role = (0..ports)
            .map(|q| {
                let peer = fabric.peer(node, q, 0).0;
                if fabric.is_host(peer) {
                    Role::Host
                } else if fabric.tier(peer) > t {
                    up += 1;
                    Role::Up(up - 1)
                } else {
                    Role::Down
                }
            })
            .collect();
        let leaf = (t == 1).then(|| {
            let edges = fabric.subtree(0, 1).1 as usize;
            let width = fabric.tier_uplinks(1) as usize;
            Box::new(LeafTables {
                width,
                to_leaf: vec![Entry::default(); edges * width],
                from_leaf: vec![Entry::default(); edges * width],
                rr: vec![0; edges],
                flowlets: (p.flowlet_ps > 0).then(|| FlowletTable::new(FLOWLET_ENTRIES)),
            })
        });
        Conga {
            dre: vec![Dre::default(); ports as usize],
            role,
            leaf,
        }
    }

    /// Bytes of state of switch `node`.
    pub(crate) fn state_bytes(fabric: &Fabric, node: NodeId, p: &CongaParams) -> usize {
        let ports = fabric.num_ports(node) as usize;
        let mut b = ports * (std::mem::size_of::<Dre>() + std::mem::size_of::<Role>());
        if fabric.tier(node) == 1 {
            let edges = fabric.subtree(0, 1).1 as usize;
            let width = fabric.tier_uplinks(1) as usize;
            b += 2 * edges * width * std::mem::size_of::<Entry>() + edges;
            if p.flowlet_ps > 0 {
                b += FlowletTable::state_bytes(FLOWLET_ENTRIES);
            }
        }
        b
    }

    /// The local metric of port `q` at `now_ps`.
    #[inline]
    fn local(&mut self, fabric: &Fabric, node: NodeId, q: u16, now_ps: u64, p: &CongaParams) -> u8 {
        let x = self.dre[q as usize].at(now_ps, p);
        p.quantize(fabric.link(node, q).serialization_ps(x))
    }

    /// The index (among `c`) of the port for `pkt`; `salt`: the switch's hash salt (flowlet
    /// table slots).
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn choose(
        &mut self,
        fabric: &Fabric,
        node: NodeId,
        pkt: &Packet,
        c: Candidates<'_>,
        now_ps: u64,
        salt: u32,
        p: &CongaParams,
        rng: &mut Pcg32,
    ) -> u16 {
        let mut cost = [0u8; 256];
        let n = c.len() as usize;
        let dst_edge = fabric.subtree(pkt.dst, 1).0 as usize;
        for (i, q) in c.iter().enumerate() {
            let local = self.local(fabric, node, q, now_ps, p);
            let remote = match (&self.leaf, self.role[q as usize]) {
                (Some(l), Role::Up(tag)) => {
                    let e = l.to_leaf[dst_edge * l.width + tag as usize];
                    if e.valid && !p.aged(e.at_ps, now_ps) {
                        e.metric
                    } else {
                        0
                    }
                }
                _ => 0,
            };
            cost[i] = local.max(remote);
        }
        let min = *cost[..n].iter().min().expect("candidates");
        let Some(table) = self.leaf.as_mut().and_then(|l| l.flowlets.as_mut()) else {
            return uniform_among(|| cost[..n].iter(), |&&x| x == min, rng) as u16;
        };
        // Flowlets: keep an active flowlet's port; a new flowlet keeps it if it is among
        // the best.
        let slot = table.slot(pkt.hash_key(), salt);
        let kept = table.last(slot, now_ps).and_then(|(port, gap)| {
            let i = c.iter().position(|q| q == port)?;
            (gap < p.flowlet_ps || cost[i] == min).then_some(i)
        });
        let i = kept.unwrap_or_else(|| uniform_among(|| cost[..n].iter(), |&&x| x == min, rng));
        table.record(slot, c.get(i as u16), now_ps);
        i as u16
    }

    /// `pkt`, arrived on `in_port`, leaves through port `out`: update the DRE and the
    /// overlay, and at a destination edge switch learn from it.
    #[inline]
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn forward(
        &mut self,
        fabric: &Fabric,
        node: NodeId,
        in_port: u16,
        out: u16,
        pkt: &mut Packet,
        now_ps: u64,
        p: &CongaParams,
    ) {
        self.dre[out as usize].add(pkt.size_bytes as u64, now_ps, p);
        if is_pinned(pkt.via) {
            // A background flow's path code: it counts in the DRE but carries no overlay.
            return;
        }
        match (self.role[out as usize], self.role[in_port as usize]) {
            (Role::Host, _) => {
                if let (Some(o), Some(l)) = (Overlay::read(pkt.via), self.leaf.as_mut()) {
                    let src_edge = fabric.subtree(pkt.src, 1).0 as usize;
                    l.learn(src_edge, o, now_ps);
                }
                pkt.via = NO_VIA;
            }
            (Role::Up(tag), Role::Host) => {
                let dst_edge = fabric.subtree(pkt.dst, 1).0 as usize;
                let (fb_tag, fb_metric) = match self.leaf.as_mut() {
                    Some(l) => l.feedback(dst_edge, now_ps, p),
                    None => (NO_TAG, 0),
                };
                pkt.via = Overlay {
                    lb_tag: tag,
                    ce: 0,
                    fb_tag,
                    fb_metric,
                }
                .word();
            }
            _ => {
                if let Some(mut o) = Overlay::read(pkt.via) {
                    o.ce = o.ce.max(self.local(fabric, node, out, now_ps, p));
                    pkt.via = o.word();
                }
            }
        }
    }
}

impl LeafTables {
    /// A packet from edge switch `src` arrived with overlay `o`.
    fn learn(&mut self, src: usize, o: Overlay, now_ps: u64) {
        let w = self.width;
        if (o.lb_tag as usize) < w {
            self.from_leaf[src * w + o.lb_tag as usize] = Entry {
                metric: o.ce,
                changed: true,
                valid: true,
                at_ps: now_ps,
            };
        }
        if (o.fb_tag as usize) < w {
            self.to_leaf[src * w + o.fb_tag as usize] = Entry {
                metric: o.fb_metric,
                changed: false,
                valid: true,
                at_ps: now_ps,
            };
        }
    }

    /// One CongFromLeaf\[dst\] entry to piggyback: (tag, metric), or (none, 0).
    fn feedback(&mut self, dst: usize, now_ps: u64, p: &CongaParams) -> (u8, u8) {
        let w = self.width;
        let start = self.rr[dst] as usize;
        let live = |e: &Entry| e.valid && !p.aged(e.at_ps, now_ps);
        let row = &mut self.from_leaf[dst * w..(dst + 1) * w];
        let order = (0..w).map(|i| (start + i) % w);
        let pick = order
            .clone()
            .find(|&i| live(&row[i]) && row[i].changed)
            .or_else(|| order.clone().find(|&i| live(&row[i])));
        match pick {
            Some(i) => {
                row[i].changed = false;
                self.rr[dst] = ((i + 1) % w) as u8;
                (i as u8, row[i].metric)
            }
            None => (NO_TAG, 0),
        }
    }
}

impl SwitchPolicy for Conga {
    #[inline]
    fn choose<Q: QueueView>(&mut self, ctx: &mut SwitchCtx<'_, Q>) -> u16 {
        let (fabric, node, c) = (ctx.fabric, ctx.node, ctx.candidates);
        let p = &ctx.shared.conga;
        let i = Conga::choose(
            self, fabric, node, ctx.pkt, c, ctx.now_ps, ctx.salt, p, ctx.rng,
        );
        c.get(i)
    }

    fn uplink_structured(&self) -> bool {
        true
    }

    #[inline]
    fn forward(&mut self, at: &Forwarding<'_>, pkt: &mut Packet) {
        let p = &at.shared.conga;
        Conga::forward(
            self, at.fabric, at.node, at.in_port, at.out, pkt, at.now_ps, p,
        );
    }
}

impl BuildSwitch for Conga {
    fn build(_: LbPolicy, shared: &LbShared, fabric: &Fabric, node: NodeId, _: &mut Pcg32) -> Self {
        Conga::new(fabric, node, &shared.conga)
    }

    fn state_bytes(_: LbPolicy, shared: &LbShared, fabric: &Fabric, node: NodeId) -> usize {
        Conga::state_bytes(fabric, node, &shared.conga)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Model;
    use crate::packet::{test_packet, PacketKind};
    use crate::scenario::{LbPolicy, Scenario, TopologyKind};
    use rand::SeedableRng;

    fn params(alpha: f64) -> CongaParams {
        let cfg = LbConfig {
            conga: crate::scenario::CongaConfig {
                t_dre_us: 1.0,
                alpha,
                q_bits: 3,
                t_age_us: 100.0,
                ..Default::default()
            },
            ..LbConfig::default()
        };
        CongaParams::new(&cfg)
    }

    /// A leaf-spine of k = 4 (4 leaves of 2 hosts, 2 spines) under CONGA.
    fn leaf_spine() -> Model {
        let mut s = Scenario::default();
        s.topology.kind = TopologyKind::LeafSpine;
        s.topology.k = 4;
        s.lb.policy = LbPolicy::Conga;
        s.lb.conga.t_dre_us = 1.0;
        s.lb.conga.t_age_us = 100.0;
        s.validate().unwrap();
        Model::build(&s).unwrap()
    }

    #[test]
    fn the_dre_decays_geometrically() {
        // α = 1/2 is exact in 16-bit fixed point: 1000 → 500 → 250 → 125.
        let p = params(0.5);
        let mut d = Dre::default();
        d.add(1_000, 0, &p);
        assert_eq!(d.at(999_999, &p), 1_000, "no decay within the first period");
        assert_eq!(d.at(3_000_000, &p), 125);
        // α = 0.2: keep = round(0.8·65536) = 52429; 10^6·0.8^2 = 640 000, within rounding.
        let p = params(0.2);
        let mut d = Dre::default();
        d.add(1_000_000, 0, &p);
        let x = d.at(2_000_000, &p);
        assert!((639_990..=640_010).contains(&x), "{x}");
        // A long idle spell empties it.
        assert_eq!(d.at(10_000_000_000, &p), 0);
    }

    #[test]
    fn the_metric_is_quantized_and_clamped() {
        // τ = T_dre/α = 5 µs; Q = 3: m = ⌊ser·8 / 5 µs⌋ ≤ 7.
        let p = params(0.2);
        assert_eq!(p.tau_ps, 5_000_000);
        assert_eq!(p.quantize(0), 0);
        assert_eq!(p.quantize(624_999), 0);
        assert_eq!(p.quantize(625_000), 1);
        assert_eq!(p.quantize(4_999_999), 7);
        assert_eq!(p.quantize(50_000_000), 7, "clamped to 2^Q − 1");
        for ser in (0..100_000_000).step_by(777_777) {
            assert!(p.quantize(ser) <= 7);
        }
    }

    #[test]
    fn the_overlay_round_trips_and_no_via_has_none() {
        let o = Overlay {
            lb_tag: 3,
            ce: 5,
            fb_tag: 1,
            fb_metric: 7,
        };
        assert_eq!(Overlay::read(o.word()), Some(o));
        assert_eq!(Overlay::read(NO_VIA), None);
        // The largest overlay with Q = 6 never carries the pinned-path bit.
        let top = Overlay {
            lb_tag: 254,
            ce: 63,
            fb_tag: 254,
            fb_metric: 63,
        };
        assert!(!is_pinned(top.word()) && Overlay::read(top.word()).is_some());
        assert_eq!(Overlay::read(crate::packet::PINNED | 5), None);
    }

    /// The selected uplink minimises max(local, remote): leaf 0, spines at ports 2 and 3.
    #[test]
    fn the_chosen_uplink_minimises_the_larger_of_local_and_remote() {
        let m = leaf_spine();
        let p = m.lb.conga;
        let node = m.fabric.num_hosts;
        let mut c = Conga::new(&m.fabric, node, &p);
        let mut pkt = test_packet(PacketKind::Data, 4158);
        pkt.dst = 7; // leaf 3
        let l = c.leaf.as_mut().unwrap();
        // Remote: uplink 0 (port 2) toward leaf 3 is at 6, uplink 1 (port 3) at 2.
        l.learn(
            3,
            Overlay {
                lb_tag: NO_TAG,
                ce: 0,
                fb_tag: 0,
                fb_metric: 6,
            },
            0,
        );
        l.learn(
            3,
            Overlay {
                lb_tag: NO_TAG,
                ce: 0,
                fb_tag: 1,
                fb_metric: 2,
            },
            0,
        );
        // Local: port 3 carries 1 MB (800 Gb/s: 10 µs of wire, metric 7 with τ = 5 µs).
        c.dre[3].add(1_000_000, 0, &p);
        let cands = Candidates::Range { first: 2, count: 2 };
        let mut rng = Pcg32::seed_from_u64(1);
        // max(0, 6) = 6 < max(7, 2) = 7: port 2.
        let i = c.choose(&m.fabric, node, &pkt, cands, 1, 0, &p, &mut rng);
        assert_eq!(cands.get(i), 2);
        // The local load gone (after 20 µs: 0.8^20 of 1 MB = 11.5 KB, metric 0): max(0, 2)
        // = 2 < 6: port 3.
        let i = c.choose(&m.fabric, node, &pkt, cands, 20_000_000, 0, &p, &mut rng);
        assert_eq!(cands.get(i), 3);
    }

    #[test]
    fn remote_metrics_read_zero_after_t_age() {
        let m = leaf_spine();
        let p = m.lb.conga;
        assert_eq!(p.t_age_ps, 100_000_000);
        let node = m.fabric.num_hosts;
        let mut c = Conga::new(&m.fabric, node, &p);
        let fb = Overlay {
            lb_tag: NO_TAG,
            ce: 0,
            fb_tag: 0,
            fb_metric: 7,
        };
        c.leaf.as_mut().unwrap().learn(3, fb, 1_000_000);
        let mut pkt = test_packet(PacketKind::Data, 4158);
        pkt.dst = 7;
        let cands = Candidates::Range { first: 2, count: 2 };
        let mut rng = Pcg32::seed_from_u64(1);
        // Before T_age: port 2 (remote 7) avoided.
        for _ in 0..20 {
            let i = c.choose(&m.fabric, node, &pkt, cands, 100_000_000, 0, &p, &mut rng);
            assert_eq!(cands.get(i), 3);
        }
        // Written at 1 µs; the aging tick at 125 µs finds it 124 µs old (> 100): reads 0, so
        // both ports tie.
        let mut seen = [0; 2];
        for _ in 0..200 {
            let i = c.choose(&m.fabric, node, &pkt, cands, 125_000_000, 0, &p, &mut rng);
            seen[i as usize] += 1;
        }
        assert!(seen[0] > 50 && seen[1] > 50, "{seen:?}");
    }

    /// 3-tier: an aggregation switch has no leaf tables and chooses the core uplink with the
    /// lowest local metric; a packet through it gets CE raised, never re-tagged.
    #[test]
    fn aggregation_switches_choose_by_local_metric_and_raise_ce() {
        let mut s = Scenario::default();
        s.topology.k = 4;
        s.lb.policy = LbPolicy::Conga;
        s.validate().unwrap();
        let m = Model::build(&s).unwrap();
        let (f, p) = (&m.fabric, m.lb.conga);
        assert_eq!(p.tau_ps, 5_000_000, "defaults: T_dre 1 µs, α 0.2");
        let agg = 24; // pod 0; ports 0, 1 down, 2, 3 to cores
        let mut c = Conga::new(f, agg, &p);
        assert!(c.leaf.is_none());
        // Port 2 carries 100 KB (1 µs of wire: metric ⌊8/5⌋ = 1), port 3 nothing.
        c.dre[2].add(100_000, 0, &p);
        let mut pkt = test_packet(PacketKind::Data, 4158);
        pkt.dst = 15;
        pkt.via = Overlay {
            lb_tag: 1,
            ce: 0,
            fb_tag: NO_TAG,
            fb_metric: 0,
        }
        .word();
        let cands = Candidates::Range { first: 2, count: 2 };
        let mut rng = Pcg32::seed_from_u64(3);
        for _ in 0..20 {
            assert_eq!(
                cands.get(c.choose(f, agg, &pkt, cands, 0, 0, &p, &mut rng)),
                3
            );
        }
        c.forward(f, agg, 0, 2, &mut pkt, 0, &p);
        let o = Overlay::read(pkt.via).unwrap();
        assert_eq!((o.lb_tag, o.ce), (1, 1));
    }

    /// One trip through the fabric: the source leaf stamps LBTag and CE = 0, the spine
    /// raises CE to its egress metric, the destination leaf stores it and returns it as
    /// feedback on the reverse packet, which the source leaf stores in CongToLeaf.
    #[test]
    fn congestion_travels_to_the_destination_and_back_as_feedback() {
        let m = leaf_spine();
        let p = m.lb.conga;
        let f = &m.fabric;
        let (leaf0, leaf3, spine1) = (f.num_hosts, f.num_hosts + 3, f.num_hosts + 5);
        let mut src = Conga::new(f, leaf0, &p);
        let mut spine = Conga::new(f, spine1, &p);
        let mut dst = Conga::new(f, leaf3, &p);
        let mut pkt = test_packet(PacketKind::Data, 4158);
        pkt.dst = 7;
        pkt.via = NO_VIA;
        // Host 0 → leaf 0 port 0; out through uplink port 3 (spine 1, tag 1).
        src.forward(f, leaf0, 0, 3, &mut pkt, 0, &p);
        let o = Overlay::read(pkt.via).unwrap();
        assert_eq!((o.lb_tag, o.ce, o.fb_tag), (1, 0, NO_TAG));
        // The spine's port 3 (to leaf 3) already carries 400 KB: 4 µs at 800 Gb/s, plus
        // this packet: m = ⌊(4 µs + 41.58 ns)·8 / 5 µs⌋ = 6.
        spine.dre[3].add(400_000, 0, &p);
        spine.forward(f, spine1, 0, 3, &mut pkt, 0, &p);
        assert_eq!(Overlay::read(pkt.via).unwrap().ce, 6);
        // Leaf 3 delivers it to host 7 (port 1): stores CongFromLeaf[0][1] = 6.
        dst.forward(f, leaf3, 3, 1, &mut pkt, 0, &p);
        assert_eq!(pkt.via, NO_VIA, "the host gets no overlay");
        // The ACK back: host 7 → leaf 3, out through uplink port 2: feedback (tag 1, 6).
        let mut ack = test_packet(PacketKind::Ack, 64);
        (ack.src, ack.dst, ack.via) = (7, 0, NO_VIA);
        dst.forward(f, leaf3, 1, 2, &mut ack, 10, &p);
        let o = Overlay::read(ack.via).unwrap();
        assert_eq!((o.lb_tag, o.fb_tag, o.fb_metric), (0, 1, 6));
        // The changed bit is cleared: the next packet repeats the only entry by round robin.
        let mut again = ack;
        again.via = NO_VIA;
        dst.forward(f, leaf3, 1, 2, &mut again, 20, &p);
        assert_eq!(Overlay::read(again.via).unwrap().fb_tag, 1);
        // Leaf 0 delivers the ACK to host 0 and learns CongToLeaf[3][1] = 6.
        src.forward(f, leaf0, 2, 0, &mut ack, 30, &p);
        let l = src.leaf.as_ref().unwrap();
        assert_eq!(l.to_leaf[3 * 2 + 1].metric, 6);
    }
}
