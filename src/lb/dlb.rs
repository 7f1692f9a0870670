//! DLB: Broadcom-style dynamic load balancing, as the Ofan paper implements it (§3.1, after
//! the SGLB paper's sketch): SGLB restricted to its two local signals, the egress queue and
//! the egress utilization of each candidate port.
//!
//! Each port has a quality band 0..7 (7 best) = 7 − 2·max(queue level, utilization level),
//! weft's mapping of two htsim-style 4-level signals (as htsim's `BaseQueue` levels):
//! - queue level: 0..3 by `lb.dlb.queue_thresholds_pct` (default 5, 10, 20 %) of the queue
//!   capacity (AR's: `lb.ar.capacity_bytes`, else the port buffer, else 800 KB);
//! - utilization level: the number of `lb.dlb.util_thresholds_pct` (default 0, 15, 50 %) the
//!   port's utilization exceeds. Utilization comes from a local DRE-like estimator (CONGA's
//!   DRE): at every multiple of the sampling period T the register X decays by (1 − α), and
//!   it adds the bytes the port has sent since the last sample; utilization =
//!   X·α / (C·T). α = T / `lb.dlb.load_window_us` (default 30 µs, htsim's utilization
//!   window), so X tracks about one window of traffic.
//!
//! A port's band is refreshed lazily when read more than `lb.dlb.sample_ns` (default 100 ns,
//! htsim's update period of both signals) after its last refresh, as AR's levels are: the
//! ASIC samples periodically, and between samples decisions see the last value. With
//! `lb.state_update_period_ns` > 0 the queue and byte counters read are themselves the
//! switch's periodic snapshot (`stale.rs`).
//!
//! Modes (`lb.dlb.mode`): `packet` (default; the Ofan paper compares per-packet schemes)
//! sends each packet to a port of the best band, uniform among ties. `flowlet` keeps a
//! flowset table (`flowlet.rs`, `lb.dlb.flowset_entries`, default 256, Juniper's): a packet
//! whose entry has been idle longer than `lb.dlb.flowlet_us` (default 256 µs, Juniper
//! Apstra's inactivity interval; htsim uses 10 µs) or is unused goes to a best-band port;
//! otherwise it keeps the entry's port, unless reactive rebalancing moves it: when the best
//! band beats the current port's by at least `lb.dlb.rebalance_delta` (default 2, one
//! signal level) and a draw passes `lb.dlb.rebalance_prob` (default 0: off, as in Junos,
//! where reactive path rebalancing must be enabled). `assigned` (DLB's assigned-flow mode: pin the
//! flow, no rebalancing) uses the same flowset table: a packet whose entry is unused goes to a
//! best-band port, and every later packet of the entry keeps that port for good, however
//! long the flow idles and however the bands change (no inactivity re-pick, no reactive
//! rebalancing). In every flowset mode a remembered port that is no longer among the
//! candidates (a failed link) is re-picked as for a new flowlet. Flows that hash onto one
//! entry share its port, as in the ASIC's table.

use super::flowlet::FlowletTable;
use super::switch_policy::QueueView;
use super::switch_policy::{BuildSwitch, SwitchCtx, SwitchPolicy};
use super::ties::uniform_among;
use super::LbShared;
use crate::scenario::DlbMode;
use crate::scenario::LbPolicy;
use crate::topology::Candidates;
use crate::topology::{Fabric, NodeId};
use rand::Rng;
use rand_pcg::Pcg32;
use serde::{Deserialize, Serialize};

/// The best quality band.
pub(crate) const BEST: u8 = 7;

/// Parameters shared by every DLB switch of a run.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub(crate) struct DlbParams {
    /// The queue capacity the queue thresholds are fractions of.
    pub capacity_bytes: u64,
    /// Queue level thresholds, parts per million of the capacity (increasing).
    pub queue_ppm: [u64; 3],
    /// Utilization level thresholds, parts per million of the line rate (increasing).
    pub util_ppm: [u64; 3],
    /// Sampling period T.
    pub sample_ps: u64,
    /// The DRE's decay per sampling period α = T / window.
    pub alpha: f64,
    /// Per packet, per flowlet or assigned flows.
    pub mode: DlbMode,
    /// Flowlet inactivity interval.
    pub flowlet_ps: u64,
    pub flowset_entries: u32,
    /// Reactive rebalancing: minimum band gain, and its probability in units of 2^-32.
    pub rebalance_delta: u8,
    pub rebalance_prob_2_32: u64,
}

impl DlbParams {
    /// Whether the mode keeps a flowset table (flowlet and assigned modes).
    pub(crate) fn uses_flowsets(&self) -> bool {
        self.mode != DlbMode::Packet
    }

    /// The queue level (0..3) of a queue holding `bytes`.
    #[inline]
    pub(crate) fn queue_level(&self, bytes: u64) -> u8 {
        let ppm = bytes as u128 * 1_000_000;
        self.queue_ppm
            .iter()
            .take_while(|&&t| ppm >= t as u128 * self.capacity_bytes as u128)
            .count() as u8
    }

    /// The utilization level (0..3) of a utilization of `util_ppm`.
    #[inline]
    pub(crate) fn util_level(&self, util_ppm: u64) -> u8 {
        self.util_ppm.iter().filter(|&&t| util_ppm > t).count() as u8
    }

    /// The band of a port at `(queue level, utilization level)`: 7 − 2·max, clipped.
    #[inline]
    pub(crate) fn band(q_level: u8, u_level: u8) -> u8 {
        BEST.saturating_sub(2 * q_level.max(u_level))
    }
}

/// One port's sampled state.
#[derive(Clone, Copy, Debug, Default, Serialize, Deserialize)]
struct PortSample {
    band: u8,
    /// When the band was last computed (`None`: never).
    at_ps: Option<u64>,
    /// The DRE register, in bytes.
    dre_bytes: f64,
    /// The port's sent-bytes counter at the last sample.
    sent_bytes: u64,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
pub(crate) struct Dlb {
    ports: Vec<PortSample>,
    /// Flowlet and assigned modes only.
    flowsets: Option<FlowletTable>,
}

impl Dlb {
    pub(crate) fn new(ports: u16, params: &DlbParams) -> Dlb {
        Dlb {
            ports: vec![PortSample::default(); ports as usize],
            flowsets: params
                .uses_flowsets()
                .then(|| FlowletTable::new(params.flowset_entries)),
        }
    }

    /// Port `p`'s band at `now_ps`, resampled if older than the period. `line_bytes_per_sample`:
    /// what the port sends at line rate in one sampling period.
    #[inline]
    fn band<Q: QueueView>(
        &mut self,
        p: u16,
        params: &DlbParams,
        queues: &Q,
        now_ps: u64,
        line_bytes_per_sample: f64,
    ) -> u8 {
        let s = &mut self.ports[p as usize];
        if s.at_ps.is_some_and(|t| now_ps - t <= params.sample_ps) {
            return s.band;
        }
        // The DRE decays at every multiple of T crossed since the last sample.
        let periods = match s.at_ps {
            Some(t) => now_ps / params.sample_ps - t / params.sample_ps,
            None => 0,
        };
        let sent = queues.sent_bytes(p);
        let decay = (1.0 - params.alpha).powi(periods.min(i32::MAX as u64) as i32);
        s.dre_bytes = s.dre_bytes * decay + sent.saturating_sub(s.sent_bytes) as f64;
        s.sent_bytes = sent;
        let util_ppm = (s.dre_bytes * params.alpha / line_bytes_per_sample * 1e6) as u64;
        let q = params.queue_level(queues.queued_bytes(p));
        s.band = DlbParams::band(q, params.util_level(util_ppm));
        s.at_ps = Some(now_ps);
        s.band
    }

    /// The index (among `c`) of the port for a packet with flow key `key` at a switch with
    /// hash salt `salt`. `line_bytes_per_sample(p)`: port `p`'s line rate times T.
    #[allow(clippy::too_many_arguments)]
    #[inline]
    pub(crate) fn choose<Q: QueueView>(
        &mut self,
        params: &DlbParams,
        queues: &Q,
        c: Candidates<'_>,
        key: u32,
        salt: u32,
        now_ps: u64,
        line_bytes_per_sample: impl Fn(u16) -> f64,
        rng: &mut Pcg32,
    ) -> u16 {
        let mut bands = [0u8; 64];
        let n = c.len() as usize;
        assert!(n <= bands.len(), "DLB: more than 64 candidate ports");
        for (i, p) in c.iter().enumerate() {
            bands[i] = self.band(p, params, queues, now_ps, line_bytes_per_sample(p));
        }
        let best = *bands[..n].iter().max().expect("candidates");
        let Some(table) = &mut self.flowsets else {
            return uniform_among(|| bands[..n].iter(), |&&b| b == best, rng) as u16;
        };
        let slot = table.slot(key, salt);
        // Assigned flows never expire; flowlets end after an idle gap above the interval.
        let assigned = params.mode == DlbMode::Assigned;
        let current = table
            .last(slot, now_ps)
            .filter(|&(_, gap)| assigned || gap <= params.flowlet_ps)
            .and_then(|(port, _)| c.iter().position(|q| q == port));
        let i = match current {
            Some(i) if assigned || !rebalance(params, best - bands[i], rng) => i,
            _ => uniform_among(|| bands[..n].iter(), |&&b| b == best, rng),
        };
        table.record(slot, c.get(i as u16), now_ps);
        i as u16
    }

    /// Bytes of state for a switch with `ports` ports.
    pub(crate) fn state_bytes(ports: u16, params: &DlbParams) -> usize {
        ports as usize * std::mem::size_of::<PortSample>()
            + if params.uses_flowsets() {
                FlowletTable::state_bytes(params.flowset_entries)
            } else {
                0
            }
    }
}

/// Reactive rebalancing of an active flowlet whose port is `gain` bands below the best: at
/// least the configured delta, and a draw under the probability (no draw when off or when
/// the gain is too small).
#[inline]
fn rebalance(params: &DlbParams, gain: u8, rng: &mut Pcg32) -> bool {
    params.rebalance_prob_2_32 > 0
        && gain > 0
        && gain >= params.rebalance_delta
        && (rng.gen::<u32>() as u64) < params.rebalance_prob_2_32
}

/// DLB at a switch; a switch without uplinks (a top switch) hashes.
#[derive(Serialize, Deserialize)]
pub(crate) struct DlbSwitch(Option<Dlb>);

impl SwitchPolicy for DlbSwitch {
    #[inline]
    fn choose<Q: QueueView>(&mut self, ctx: &mut SwitchCtx<'_, Q>) -> u16 {
        let Some(d) = &mut self.0 else {
            return ctx.hashed_port();
        };
        let params = &ctx.shared.dlb;
        let (fabric, node) = (ctx.fabric, ctx.node);
        // What port p sends at line rate in one sampling period.
        let line = |p: u16| fabric.link(node, p).rate.bps as f64 * params.sample_ps as f64 / 8e12;
        let (c, key) = (ctx.candidates, ctx.pkt.hash_key());
        c.get(d.choose(
            params, ctx.queues, c, key, ctx.salt, ctx.now_ps, line, ctx.rng,
        ))
    }

    fn snapshot_tracks_sent(&self) -> bool {
        true
    }
}

impl BuildSwitch for DlbSwitch {
    fn build(_: LbPolicy, shared: &LbShared, fabric: &Fabric, node: NodeId, _: &mut Pcg32) -> Self {
        DlbSwitch(match fabric.uplinks(node) {
            0 => None,
            _ => Some(Dlb::new(fabric.num_ports(node), &shared.dlb)),
        })
    }

    fn state_bytes(_: LbPolicy, shared: &LbShared, fabric: &Fabric, node: NodeId) -> usize {
        match fabric.uplinks(node) {
            0 => 0,
            _ => Dlb::state_bytes(fabric.num_ports(node), &shared.dlb),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;
    use std::cell::RefCell;

    /// Queued and sent bytes per port, changeable between decisions.
    struct Ports(RefCell<Vec<(u64, u64)>>);
    impl QueueView for Ports {
        fn queued_bytes(&self, p: u16) -> u64 {
            self.0.borrow()[p as usize].0
        }
        fn sent_bytes(&self, p: u16) -> u64 {
            self.0.borrow()[p as usize].1
        }
    }

    /// 1 MB capacity, 5-10-20 % and 0-15-50 %, T = 100 ns, window 30 µs (α = 1/300).
    fn params(flowlet: bool) -> DlbParams {
        with_mode(if flowlet {
            DlbMode::Flowlet
        } else {
            DlbMode::Packet
        })
    }

    fn with_mode(mode: DlbMode) -> DlbParams {
        DlbParams {
            capacity_bytes: 1_000_000,
            queue_ppm: [50_000, 100_000, 200_000],
            util_ppm: [0, 150_000, 500_000],
            sample_ps: 100_000,
            alpha: 1.0 / 300.0,
            mode,
            flowlet_ps: 256_000_000,
            flowset_entries: 256,
            rebalance_delta: 2,
            rebalance_prob_2_32: 0,
        }
    }

    /// 800 Gb/s for 100 ns: 10 000 bytes per sampling period.
    const LINE: f64 = 10_000.0;

    const C4: Candidates<'static> = Candidates::Range { first: 0, count: 4 };

    fn pick(d: &mut Dlb, p: &DlbParams, q: &Ports, key: u32, now: u64, rng: &mut Pcg32) -> u16 {
        d.choose(p, q, C4, key, 0, now, |_| LINE, rng)
    }

    #[test]
    fn bands_follow_the_worse_of_the_two_levels() {
        let p = params(false);
        // 49 KB → 0, 50 KB → 1, 100 KB → 2, 200 KB → 3 (htsim's 5-10-20 % levels).
        let q: Vec<u8> = [0, 49_000, 50_000, 100_000, 200_000]
            .map(|b| p.queue_level(b))
            .to_vec();
        assert_eq!(q, [0, 0, 1, 2, 3]);
        let u: Vec<u8> = [0, 1, 150_000, 150_001, 500_001]
            .map(|x| p.util_level(x))
            .to_vec();
        assert_eq!(u, [0, 1, 1, 2, 3]);
        assert_eq!(
            [(0, 0), (1, 0), (0, 2), (3, 1), (3, 3)].map(|(a, b)| DlbParams::band(a, b)),
            [7, 5, 3, 1, 1]
        );
    }

    #[test]
    fn utilization_comes_from_a_decaying_byte_count() {
        let p = params(false);
        let q = Ports(RefCell::new(vec![(0, 0); 4]));
        let mut d = Dlb::new(4, &p);
        let mut rng = Pcg32::seed_from_u64(1);
        pick(&mut d, &p, &q, 1, 0, &mut rng);
        // 1 000 bytes sent on port 0 over the next period: X = 1 000, utilization
        // 1 000 / 300 / 10 000 = 333 ppm > 0 → level 1, band 5; the idle ports stay at 7.
        q.0.borrow_mut()[0].1 = 1_000;
        pick(&mut d, &p, &q, 1, 100_001, &mut rng);
        assert_eq!(d.ports[0].band, 5);
        assert_eq!(d.ports[1].band, 7);
        // 600 periods later X = 1 000·(299/300)^600 ≈ 135 bytes: still above 0.
        pick(&mut d, &p, &q, 1, 60_100_001, &mut rng);
        let x = d.ports[0].dre_bytes;
        assert!(
            (x - 1_000.0 * (299.0f64 / 300.0).powi(600)).abs() < 1e-6,
            "{x}"
        );
        // Port 1 sends at line rate for 300 periods: X = 10 000·300·(1 − (299/300)^300)
        // ≈ 1.9 MB, utilization ≈ 63 % > 50 % → level 3, band 1.
        for i in 1..=300u64 {
            q.0.borrow_mut()[1].1 = i * 10_000;
            pick(&mut d, &p, &q, 1, 60_100_001 + i * 100_000, &mut rng);
        }
        assert_eq!(d.ports[1].band, 1);
    }

    /// DLB per packet: the chosen port has the maximum quality; ties uniform.
    #[test]
    fn per_packet_the_chosen_port_has_the_best_band() {
        let p = params(false);
        // Bands: 60 KB → 5, 3 KB → 7, 4 KB → 7, 300 KB → 1.
        let q = Ports(RefCell::new(vec![
            (60_000, 0),
            (3_000, 0),
            (4_000, 0),
            (300_000, 0),
        ]));
        let mut rng = Pcg32::seed_from_u64(5);
        let mut counts = [0u32; 4];
        for t in 0..10_000u64 {
            let mut d = Dlb::new(4, &p);
            counts[pick(&mut d, &p, &q, 9, t, &mut rng) as usize] += 1;
        }
        assert_eq!((counts[0], counts[3]), (0, 0));
        // Two ports tie: 5 000 ± 3.3 σ (σ = 50).
        assert!((4_835..=5_165).contains(&counts[1]), "{counts:?}");
    }

    /// DLB's flowlet mode: gaps at or below the interval never change the
    /// port, whatever the bands do; after a longer gap the flow lands on a best port.
    #[test]
    fn flowlets_keep_their_port_until_an_idle_gap() {
        let p = params(true);
        let q = Ports(RefCell::new(vec![(0, 0); 4]));
        let mut d = Dlb::new(4, &p);
        let mut rng = Pcg32::seed_from_u64(3);
        let first = pick(&mut d, &p, &q, 77, 0, &mut rng);
        // Its port fills up (band 1) while every other stays idle (band 7).
        q.0.borrow_mut()[first as usize].0 = 500_000;
        let mut now = 0;
        for _ in 0..100 {
            now += 256_000_000; // exactly the interval: still the same flowlet
            assert_eq!(pick(&mut d, &p, &q, 77, now, &mut rng), first);
        }
        // A gap 1 ps longer than the interval: a new flowlet on a band-7 port.
        now += 256_000_001;
        let next = pick(&mut d, &p, &q, 77, now, &mut rng);
        assert_ne!(next, first);
        assert_eq!(d.ports[next as usize].band, BEST);
    }

    /// DLB's assigned-flow mode (no rebalancing): a flow keeps the port its first packet took
    /// (a best one) through any idle gap and any band change, even with rebalancing set to
    /// always; only a port that stops being a candidate (a failed link) is re-picked.
    #[test]
    fn assigned_flows_keep_their_port_for_good() {
        let mut p = with_mode(DlbMode::Assigned);
        p.rebalance_prob_2_32 = 1 << 32; // would move a flowlet at once
                                         // Ports 1, 2, 3 hold 60 KB (band 5), port 0 is idle (band 7): the first packet
                                         // goes to port 0.
        let q = Ports(RefCell::new(vec![
            (0, 0),
            (60_000, 0),
            (60_000, 0),
            (60_000, 0),
        ]));
        let mut d = Dlb::new(4, &p);
        let mut rng = Pcg32::seed_from_u64(6);
        assert_eq!(pick(&mut d, &p, &q, 77, 0, &mut rng), 0);
        // Port 0 fills to 300 KB (band 1), the others empty (band 7).
        *q.0.borrow_mut() = vec![(300_000, 0), (0, 0), (0, 0), (0, 0)];
        let mut now = 0;
        // 1 µs, just over DLB's 256 µs interval, and 10 ms of idling: still port 0.
        for gap in [1_000_000, 256_000_001, 10_000_000_000] {
            now += gap;
            assert_eq!(pick(&mut d, &p, &q, 77, now, &mut rng), 0, "gap {gap}");
            assert_eq!(d.ports[0].band, 1, "port 0 really is the worst");
        }
        // Port 0's link fails: the flow is re-picked onto a band-7 port, then kept there.
        let c = Candidates::List(&[1, 2, 3]);
        now += 1;
        let moved = c.get(d.choose(&p, &q, c, 77, 0, now, |_| LINE, &mut rng));
        assert_ne!(moved, 0);
        assert_eq!(d.ports[moved as usize].band, BEST);
        q.0.borrow_mut()[moved as usize].0 = 300_000;
        now += 10_000_000_000;
        assert_eq!(pick(&mut d, &p, &q, 77, now, &mut rng), moved);
    }

    #[test]
    fn reactive_rebalancing_moves_an_active_flowlet_only_by_enough() {
        let mut p = params(true);
        p.rebalance_prob_2_32 = 1 << 32; // always, once the gain is enough
        let q = Ports(RefCell::new(vec![(0, 0); 4]));
        let mut d = Dlb::new(4, &p);
        let mut rng = Pcg32::seed_from_u64(4);
        let first = pick(&mut d, &p, &q, 5, 0, &mut rng);
        // One level worse (band 5): gain 2 ≥ delta 2, so it moves.
        q.0.borrow_mut()[first as usize].0 = 60_000;
        let moved = pick(&mut d, &p, &q, 5, 1_000_000, &mut rng);
        assert_ne!(moved, first);
        // With delta 4 a one-level gain is not enough.
        p.rebalance_delta = 4;
        q.0.borrow_mut()[moved as usize].0 = 60_000;
        assert_eq!(pick(&mut d, &p, &q, 5, 2_000_000, &mut rng), moved);
    }
}
