//! Load balancing. Switch policies (`SwitchLb`) choose among the candidate ports a route
//! offers; host policies (`HostLb`) choose the entropy value (ECMP, RPS, REPS) or the path
//! code (DRB) that switches then act on, and receive the transport's per-packet feedback. Dispatch
//! is by enum, never a trait object on the per-packet path.
//!
//! The policy table is the registry `scenario::lb_policies!`: one line per `lb.policy` names
//! its switch-side type (implementing `switch_policy::SwitchPolicy` and `BuildSwitch`) and
//! its host-side type (implementing `host_policy::HostPolicy` and `BuildHost`); `SwitchLb`
//! (`switch.rs`) and `HostLb` (`host.rs`) are derived from it. Adding a policy: a file here
//! with its types (and its `mod` line) and one registry line.
//!
//! A policy sees only what its node could see: its own ports, its own state, the packet, and
//! (hosts) feedback carried back by packets. Nothing global at run time.
//!
//! Queue-aware switch policies (`jsq`, `choice`, `drill`, `topk`, `psp`, `band_jsq`, `dlb`)
//! read the queues through
//! [`QueueView`]: the live ports, or with `lb.state_update_period_ns` > 0 a periodically
//! refreshed snapshot (`stale.rs`).

pub(crate) mod ar;
pub(crate) mod bitmap;
pub(crate) mod choice;
pub(crate) mod conga;
pub(crate) mod dlb;
pub(crate) mod drb;
pub(crate) mod drill;
pub mod ecmp;
pub(crate) mod ethereal;
pub(crate) mod flowlet;
pub(crate) mod host;
pub(crate) mod host_policy;
pub(crate) mod jsq;
pub mod ofan;
pub(crate) mod psp;
pub(crate) mod psp_switch;
pub(crate) mod remote;
pub(crate) mod reps;
pub(crate) mod rsq;
pub(crate) mod sglb;
pub(crate) mod simple_rr;
pub(crate) mod stale;
pub(crate) mod static_route;
pub(crate) mod subflow_loads;
pub(crate) mod switch;
pub(crate) mod switch_policy;
pub(crate) mod ties;
pub(crate) mod topk;
pub(crate) mod uec_mixed;
pub(crate) mod valiant;

pub(crate) use host::{Feedback, FlowPath, HostLb};
pub(crate) use subflow_loads::SubflowLoads;
#[cfg(test)]
pub(crate) use switch::Probe;
pub(crate) use switch::SwitchLb;
pub use switch_policy::QueueView;
pub(crate) use switch_policy::SwitchCtx;

/// Fixed queue lengths by port, for the policies' unit tests.
#[cfg(test)]
pub(crate) struct TestQueues(pub Vec<u64>);

#[cfg(test)]
impl QueueView for TestQueues {
    fn queued_bytes(&self, p: u16) -> u64 {
        self.0[p as usize]
    }
    fn sent_bytes(&self, _: u16) -> u64 {
        0
    }
}

use crate::rng::{stream, Purpose};
use crate::scenario::{LbConfig, LbPolicy, SwitchGranularity};
use crate::topology::pgft::routing::StaticRouting;
use crate::topology::Fabric;
use ofan::PortOrders;

/// LB configuration shared by every switch of a run, built once from the scenario.
pub struct LbShared {
    /// The scenario's `lb` section, as given.
    pub cfg: LbConfig,
    pub(crate) host: HostLb,
    /// Route control packets by ECMP hash instead of the policy.
    pub ack_ecmp: bool,
    /// Ofan port orders, one per distinct uplink count (empty for other policies).
    pub orders: PortOrders,
    /// Queue-aware policies read a snapshot refreshed every this many ps (0: live queues).
    pub stale_period_ps: u64,
    /// With `lb.mixed`: the policy of every switch (index: node − hosts); empty otherwise.
    node_policy: Vec<LbPolicy>,
    /// AR's levels and refresh.
    pub(crate) ar: ar::ArParams,
    /// DLB's bands, sampling and flowlets.
    pub(crate) dlb: dlb::DlbParams,
    /// PSP's and band JSQ's bands.
    pub(crate) bands: psp::Bands,
    /// CONGA's DRE, quantization, aging and flowlets.
    pub(crate) conga: conga::CongaParams,
    /// SGLB's advert (and quality sampling) period.
    pub sglb_period_ps: u64,
    /// SGLB per flowlet: flowset entries and inactivity interval (`None`: per packet).
    pub sglb_flowlets: Option<(u32, u64)>,
    /// Wire bytes of one LB advert (`packet.ack_bytes` + inter-frame gap; 0 until
    /// [`LbShared::with_advert_wire_bytes`]).
    pub advert_wire_bytes: u64,
    /// The static routings some switch runs (`lb.policy` or `lb.mixed`), by policy.
    pub(crate) static_routes: Vec<(LbPolicy, StaticRouting)>,
}

impl LbShared {
    /// `buffer_bytes`: the switches' port buffer (`u64::MAX`: unlimited), AR's default
    /// capacity.
    pub fn new(
        cfg: &LbConfig,
        fabric: &Fabric,
        seed: u64,
        trimming: bool,
        buffer_bytes: u64,
    ) -> LbShared {
        let host = HostLb::new(cfg, trimming, fabric);
        let node_policy = mixed_policies(cfg, fabric, seed);
        let uses = |p: fn(&LbPolicy) -> bool| p(&cfg.policy) || node_policy.iter().any(p);
        let orders = if uses(|p| matches!(p, LbPolicy::Ofan | LbPolicy::Pofan)) {
            let widths = (fabric.num_hosts..fabric.num_nodes()).map(|n| fabric.uplinks(n));
            PortOrders::random(widths, &mut stream(seed, 0, Purpose::OfanPermutation))
        } else {
            PortOrders::default()
        };
        LbShared {
            cfg: cfg.clone(),
            host,
            ack_ecmp: cfg.acks_hashed(),
            orders,
            stale_period_ps: if uses(LbPolicy::is_queue_aware) {
                cfg.state_update_period_ps()
            } else {
                0
            },
            ar: ar_params(cfg, buffer_bytes),
            dlb: dlb_params(cfg, buffer_bytes),
            node_policy,
            bands: psp::Bands::new(
                cfg.psp.variant,
                &cfg.psp.thresholds(),
                cfg.psp.weights.as_deref(),
            ),
            conga: conga::CongaParams::new(cfg),
            sglb_period_ps: ((cfg.sglb.advert_ns * 1e3).round() as u64).max(1),
            sglb_flowlets: (cfg.sglb.mode == SwitchGranularity::Flowlet).then(|| {
                (
                    cfg.sglb.flowset_entries,
                    (cfg.sglb.flowlet_us * 1e6).round() as u64,
                )
            }),
            advert_wire_bytes: 0,
            static_routes: static_route::routings(cfg, fabric, seed),
        }
    }

    /// Sets the wire size of an LB advert (SGLB leaves its own adverts out of utilization).
    pub fn with_advert_wire_bytes(mut self, bytes: u64) -> LbShared {
        self.advert_wire_bytes = bytes;
        self
    }
}

impl LbShared {
    /// The policy switch `node` runs (`lb.policy`, or its `lb.mixed` override).
    #[inline]
    pub fn policy_of(&self, fabric: &Fabric, node: u32) -> LbPolicy {
        match self.node_policy.get((node - fabric.num_hosts) as usize) {
            Some(&p) => p,
            None => self.cfg.policy,
        }
    }
}

/// Every switch's policy under `lb.mixed` (empty without it): entries apply in order to the
/// switches they select, from the seed.
fn mixed_policies(cfg: &LbConfig, fabric: &Fabric, seed: u64) -> Vec<LbPolicy> {
    use crate::scenario::MixSelect;
    use rand::seq::SliceRandom;
    if cfg.mixed.is_empty() {
        return Vec::new();
    }
    let switches: Vec<u32> = (fabric.num_hosts..fabric.num_nodes()).collect();
    let mut policy = vec![cfg.policy; switches.len()];
    for (i, m) in cfg.mixed.iter().enumerate() {
        let rng = &mut stream(seed, i as u64, Purpose::Mixed);
        let share = |n: usize| (m.fraction.unwrap_or(1.0) * n as f64).round() as usize;
        let chosen: Vec<u32> = match m.select {
            MixSelect::Edge => switches
                .iter()
                .copied()
                .filter(|&n| fabric.tier(n) == 1)
                .collect(),
            MixSelect::Aggregation => switches
                .iter()
                .copied()
                .filter(|&n| fabric.tier(n) == 2)
                .collect(),
            MixSelect::RandomSwitches => {
                let mut s: Vec<u32> = switches
                    .iter()
                    .copied()
                    .filter(|&n| fabric.uplinks(n) > 0)
                    .collect();
                s.shuffle(rng);
                s.truncate(share(s.len()));
                s
            }
            MixSelect::RandomPods => {
                let mut pods: Vec<u32> = (0..fabric.num_groups(false)).collect();
                pods.shuffle(rng);
                pods.truncate(share(pods.len()));
                switches
                    .iter()
                    .copied()
                    .filter(|&n| fabric.group_of(n, false).is_some_and(|g| pods.contains(&g)))
                    .collect()
            }
        };
        for n in chosen {
            policy[(n - fabric.num_hosts) as usize] = m.policy;
        }
    }
    policy
}

/// The Ofan paper's per-port buffer: AR's capacity when buffers are unlimited.
const AR_DEFAULT_CAPACITY_BYTES: u64 = 800_000;

/// AR's (and DLB's) queue capacity: `lb.ar.capacity_bytes`, else the port buffer, else the
/// paper's 800 KB.
fn ar_capacity_bytes(cfg: &LbConfig, buffer_bytes: u64) -> u64 {
    cfg.ar
        .capacity_bytes
        .unwrap_or(if buffer_bytes == u64::MAX {
            AR_DEFAULT_CAPACITY_BYTES
        } else {
            buffer_bytes
        })
}

/// Three percentages as parts per million.
fn ppm3(pct: &[f64]) -> [u64; 3] {
    let t = |i: usize| pct.get(i).map_or(0, |p| (p * 1e4).round() as u64);
    [t(0), t(1), t(2)]
}

fn ar_params(cfg: &LbConfig, buffer_bytes: u64) -> ar::ArParams {
    ar::ArParams {
        capacity_bytes: ar_capacity_bytes(cfg, buffer_bytes),
        thresholds_ppm: ppm3(&cfg.ar.thresholds_pct),
        period_ps: (cfg.ar.update_period_ns * 1e3).round() as u64,
        small_bytes: cfg.ar.small_bytes,
        flowlet: cfg.ar.mode == SwitchGranularity::Flowlet,
        sticky_ps: (cfg.ar.flowlet_us * 1e6).round() as u64,
        flowset_entries: cfg.ar.flowset_entries,
    }
}

fn dlb_params(cfg: &LbConfig, buffer_bytes: u64) -> dlb::DlbParams {
    let sample_ps = ((cfg.dlb.sample_ns * 1e3).round() as u64).max(1);
    let window_ps = (cfg.dlb.load_window_us * 1e6).round();
    dlb::DlbParams {
        capacity_bytes: ar_capacity_bytes(cfg, buffer_bytes),
        queue_ppm: ppm3(&cfg.dlb.queue_thresholds_pct),
        util_ppm: ppm3(&cfg.dlb.util_thresholds_pct),
        sample_ps,
        alpha: (sample_ps as f64 / window_ps).min(1.0),
        mode: cfg.dlb.mode,
        flowlet_ps: (cfg.dlb.flowlet_us * 1e6).round() as u64,
        flowset_entries: cfg.dlb.flowset_entries,
        rebalance_delta: cfg.dlb.rebalance_delta.min(7) as u8,
        rebalance_prob_2_32: (cfg.dlb.rebalance_prob * 2f64.powi(32)).round() as u64,
    }
}
