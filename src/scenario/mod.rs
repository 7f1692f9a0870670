//! The scenario: what to simulate. A TOML file deserialized into these structs, with every
//! field defaulted to the Ofan paper's evaluation set-up, so a file gives only what it changes.
//! Unknown keys are rejected; every check names the field it concerns.

pub mod ai;
pub mod cc;
mod expander;
mod load;
mod overrides;
mod pgft;
mod validate;

pub use expander::ExpanderConfig;
pub use load::{load_scenario, load_scenario_str};
pub use pgft::{pgft_stage_names, pgft_tier_names, HostTypes, NodeTypeRanges, PgftConfig};
pub use validate::{tier_names, FieldError};

use cc::{DctcpConfig, MswiftConfig, NdpConfig, NsccConfig, SwiftConfig};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::PathBuf;

#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields, default)]
pub struct Scenario {
    /// Master seed: every random stream (per node, per purpose) is derived from it.
    pub seed: u64,
    /// Simulated time at which the run stops, in µs, even if flows are left (it stops at the
    /// first window boundary at or after it). Unset: when every flow has completed or
    /// nothing is left to happen.
    pub end_us: Option<f64>,
    pub topology: TopologyConfig,
    pub packet: PacketConfig,
    pub switch: SwitchConfig,
    pub lb: LbConfig,
    pub host: HostConfig,
    pub workload: WorkloadConfig,
    pub report: ReportConfig,
    pub failures: FailureConfig,
    /// Folder of the scenario file; relative paths in the scenario resolve against it.
    #[serde(skip)]
    pub base_dir: PathBuf,
}

impl Default for Scenario {
    fn default() -> Self {
        Scenario {
            seed: 1,
            end_us: None,
            topology: TopologyConfig::default(),
            packet: PacketConfig::default(),
            switch: SwitchConfig::default(),
            lb: LbConfig::default(),
            host: HostConfig::default(),
            workload: WorkloadConfig::default(),
            report: ReportConfig::default(),
            failures: FailureConfig::default(),
            base_dir: PathBuf::from("."),
        }
    }
}

#[derive(Clone, Copy, Debug, Deserialize, Serialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum TopologyKind {
    FatTree,
    LeafSpine,
    /// A Parallel Generalized Fat-Tree (`[topology.pgft]`).
    Pgft,
    /// Opera (NSDI 2020): racks whose uplinks go to rotor circuit switches cycling through
    /// matchings (`topology.racks`, `hosts_per_rack`, `uplinks`, `[topology.opera]`).
    Opera,
    /// Static random u-regular graph of ToRs (`topology.racks`, `hosts_per_rack`, `uplinks`,
    /// `[topology.expander]`).
    Expander,
}

impl TopologyKind {
    pub fn name(&self) -> &'static str {
        match self {
            TopologyKind::FatTree => "fat_tree",
            TopologyKind::LeafSpine => "leaf_spine",
            TopologyKind::Pgft => "pgft",
            TopologyKind::Opera => "opera",
            TopologyKind::Expander => "expander",
        }
    }
}

#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields, default)]
pub struct TopologyConfig {
    pub kind: TopologyKind,
    /// Switch radix: a three-level fat tree has k^3/4 hosts, a leaf-spine k^2/2.
    pub k: u32,
    /// Default rate of every link, in Gb/s.
    pub link_rate_gbps: f64,
    /// Default one-way propagation latency of every link, in ns.
    pub link_latency_ns: f64,
    /// Per-tier overrides: fat tree `host_edge`, `edge_agg`, `agg_core`; leaf-spine
    /// `host_leaf`, `leaf_spine`.
    pub tiers: BTreeMap<String, TierOverride>,
    /// Rate overrides of chosen links (both directions), applied in order after `tiers`:
    /// a random `fraction` of a tier's links, or one link by `node` and `port`.
    pub link_rates: Vec<LinkRateOverride>,
    /// Leaf-spine only: leaves (unset: k), spines, one uplink from every leaf to each
    /// (unset: k/2), and hosts per leaf (unset: k/2), for fabrics that are not k^2/2 hosts
    /// (e.g. the PSP paper's 256 GPUs).
    pub leaves: Option<u32>,
    pub spines: Option<u32>,
    pub hosts_per_leaf: Option<u32>,
    /// `kind = "pgft"` only: PGFT(h; m; w; p) and node types.
    pub pgft: Option<PgftConfig>,
    /// Rack fabrics (Opera, expander): racks (ToRs), hosts per rack and uplinks per rack
    /// (Opera: one per rotor switch; expander: ToR-to-ToR links, the graph's degree). Unset:
    /// the paper's k = 12 fabrics, Opera 108 racks × 6 hosts, 6 uplinks; expander 130 × 5, 7.
    pub racks: Option<u32>,
    pub hosts_per_rack: Option<u32>,
    pub uplinks: Option<u32>,
    pub opera: OperaConfig,
    /// `[topology.expander]`: expander only.
    pub expander: ExpanderConfig,
}

/// Most uplinks (Opera: rotors) per rack.
pub const MAX_RACK_UPLINKS: u32 = 64;

/// `[topology.opera]`: Opera's schedule and slice timing (defaults: the paper's constants).
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct OperaConfig {
    /// Rotor groups: one rotor per group reconfigures per superslice (1: the paper's k = 12;
    /// large radix: e.g. 6, so the cycle grows linearly with the radix).
    pub groups: u32,
    /// ε: the time in a slice low-latency packets may be sent (worst-case end-to-end delay).
    /// Unset: 90 µs, or `slice_ns` − δ − r when `slice_ns` is given.
    pub epsilon_ns: Option<f64>,
    /// The slice (superslice) length ε + δ + r, instead of ε.
    pub slice_ns: Option<f64>,
    /// δ: one hop of propagation plus one full packet's serialization. Unset: the rotor
    /// link's latency + (payload + header) bytes at the rotor link's rate (1.7 µs in the
    /// paper's fabric).
    pub delta_ns: Option<f64>,
    /// r: a rotor's reconfiguration time (dark).
    pub reconfig_ns: f64,
    /// Candidate schedules drawn from the seed; the best by (worst-case, mean) hops is kept.
    pub realizations: u32,
    /// Most shortest paths per (superslice, rack pair) `weft validate` lists (NSDI: 5).
    pub max_paths: u32,
    /// Build the factorization by lifting a ≤ 64-rack one (the authors' generator) instead
    /// of colouring J_N directly.
    pub lifting: bool,
    /// Flows of at least this many payload bytes are bulk: sent by RotorLB over direct
    /// circuits (`net/rotorlb.rs`) instead of low-latency multi-hop paths (paper: 15 MB).
    /// A workload's own tag (`workload.bulk`) overrides it.
    pub bulk_cutoff_bytes: u64,
    /// RotorLB offers capacity left after direct traffic to two-hop (Valiant) paths through
    /// hosts of the peer rack.
    pub valiant: bool,
    /// How RotorLB shares a slot's direct capacity: `"rack"` plans a rack's hosts together
    /// (the authors' central planner, 2-D water-filling over senders and receivers),
    /// `"host"` each host alone (each receiver's room split evenly among the d senders).
    pub rlb_planning: RlbPlanning,
}

/// `topology.opera.rlb_planning`.
#[derive(Clone, Copy, Debug, Default, Deserialize, Serialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum RlbPlanning {
    #[default]
    Rack,
    Host,
}

impl Default for OperaConfig {
    fn default() -> Self {
        OperaConfig {
            groups: 1,
            epsilon_ns: None,
            slice_ns: None,
            delta_ns: None,
            reconfig_ns: 10_000.0,
            realizations: 1,
            max_paths: 5,
            lifting: false,
            bulk_cutoff_bytes: 15_000_000,
            valiant: true,
            rlb_planning: RlbPlanning::Rack,
        }
    }
}

impl TopologyConfig {
    /// The tier names this topology accepts in `[topology.tiers.NAME]` (one per link class).
    pub fn tier_names(&self) -> &'static [&'static str] {
        match (self.kind, &self.pgft) {
            (TopologyKind::Pgft, Some(p)) => pgft_tier_names(p.h),
            (kind, _) => tier_names(kind),
        }
    }

    /// The end nodes' types: `[topology.pgft]`'s, else one type for every host.
    pub fn host_types(&self, hosts: u32) -> Result<HostTypes, FieldError> {
        match (self.kind, &self.pgft) {
            (TopologyKind::Pgft, Some(p)) => p.host_types(),
            _ => Ok(HostTypes::uniform(hosts)),
        }
    }

    /// (leaves, spines, hosts per leaf) of a leaf-spine.
    pub fn leaf_spine_dims(&self) -> (u32, u32, u32) {
        (
            self.leaves.unwrap_or(self.k),
            self.spines.unwrap_or(self.k / 2),
            self.hosts_per_leaf.unwrap_or(self.k / 2),
        )
    }

    /// (racks, hosts per rack, uplinks per rack) of a rack fabric: unset, the paper's
    /// fabrics at k = 12: Opera 108 × 6 with 6 uplinks, its cost-equivalent expander 130 × 5
    /// with 7.
    pub fn rack_dims(&self) -> (u32, u32, u32) {
        let (racks, hosts, uplinks) = match self.kind {
            TopologyKind::Expander => (130, 5, 7),
            _ => (108, 6, 6),
        };
        (
            self.racks.unwrap_or(racks),
            self.hosts_per_rack.unwrap_or(hosts),
            self.uplinks.unwrap_or(uplinks),
        )
    }
}

/// `[[topology.link_rates]]`: a rate for some links (asymmetric fabrics, e.g. the PSP
/// paper's half of the leaf-spine links at half rate).
#[derive(Clone, Debug, Default, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct LinkRateOverride {
    pub rate_gbps: f64,
    /// The tier whose links are chosen from (with `fraction`).
    pub tier: Option<String>,
    /// Share of the tier's links chosen at random (from the seed), rounded to the nearest
    /// count.
    pub fraction: Option<f64>,
    /// One link: the node and port it leaves from.
    pub node: Option<u32>,
    pub port: Option<u16>,
}

/// `[failures]`: failed switch-to-switch links (both directions carry nothing). Routing
/// uses only ports that still reach the destination on a shortest path.
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct FailureConfig {
    /// Every link between two switches (edge-aggregation, aggregation-core, leaf-spine)
    /// fails independently with this probability (drawn from the seed).
    pub link_probability: f64,
    /// Links that fail whatever the draw: `{ node = N, port = P }`, the port a switch-to-
    /// switch link leaves from (either end).
    pub links: Vec<FailedLink>,
    /// Paced hosts (`host.cc = "none"`) send at `host.load` × `rho_max` of the failure
    /// instance (the Ofan paper's set-up); false: at `host.load`.
    pub pace_at_rho_max: bool,
}

impl Default for FailureConfig {
    fn default() -> Self {
        FailureConfig {
            link_probability: 0.0,
            links: Vec::new(),
            pace_at_rho_max: true,
        }
    }
}

impl FailureConfig {
    pub fn any(&self) -> bool {
        self.link_probability > 0.0 || !self.links.is_empty()
    }
}

/// One failed link, by the node and port it leaves from.
#[derive(Clone, Copy, Debug, Deserialize, Serialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct FailedLink {
    pub node: u32,
    pub port: u16,
}

impl Default for TopologyConfig {
    fn default() -> Self {
        TopologyConfig {
            kind: TopologyKind::FatTree,
            k: 12,
            link_rate_gbps: 800.0,
            link_latency_ns: 500.0,
            tiers: BTreeMap::new(),
            link_rates: Vec::new(),
            leaves: None,
            spines: None,
            hosts_per_leaf: None,
            pgft: None,
            racks: None,
            hosts_per_rack: None,
            uplinks: None,
            opera: OperaConfig::default(),
            expander: ExpanderConfig::default(),
        }
    }
}

/// `[switch.ctrl_share]`: of every `ctrl_bytes + data_bytes` a switch port sends while
/// both its priority queue and its data FIFO wait, about `ctrl_bytes` are control.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct CtrlShareConfig {
    pub ctrl_bytes: u32,
    pub data_bytes: u32,
}

#[derive(Clone, Debug, Default, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct TierOverride {
    pub rate_gbps: Option<f64>,
    pub latency_ns: Option<f64>,
}

#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields, default)]
pub struct PacketConfig {
    pub payload_bytes: u32,
    pub header_bytes: u32,
    pub ack_bytes: u32,
    /// Inter-frame gap plus preamble: occupies the wire, never a buffer.
    pub interframe_bytes: u32,
}

impl Default for PacketConfig {
    fn default() -> Self {
        PacketConfig {
            payload_bytes: 4096,
            header_bytes: 62,
            ack_bytes: 64,
            interframe_bytes: 20,
        }
    }
}

/// A per-port buffer limit: a byte count or `"unlimited"`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BufferBytes {
    Unlimited,
    Bytes(u64),
}

impl BufferBytes {
    pub fn limit(&self) -> u64 {
        match self {
            BufferBytes::Unlimited => u64::MAX,
            BufferBytes::Bytes(b) => *b,
        }
    }
}

impl Serialize for BufferBytes {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            BufferBytes::Unlimited => s.serialize_str("unlimited"),
            BufferBytes::Bytes(b) => s.serialize_u64(*b),
        }
    }
}

impl<'de> Deserialize<'de> for BufferBytes {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl serde::de::Visitor<'_> for V {
            type Value = BufferBytes;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a byte count or \"unlimited\"")
            }
            fn visit_i64<E: serde::de::Error>(self, v: i64) -> Result<BufferBytes, E> {
                if v < 0 {
                    return Err(E::custom(format!("must not be negative (got {v})")));
                }
                Ok(BufferBytes::Bytes(v as u64))
            }
            fn visit_u64<E: serde::de::Error>(self, v: u64) -> Result<BufferBytes, E> {
                Ok(BufferBytes::Bytes(v))
            }
            fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<BufferBytes, E> {
                if v == "unlimited" {
                    Ok(BufferBytes::Unlimited)
                } else {
                    Err(E::custom(format!(
                        "expected a byte count or \"unlimited\", got \"{v}\""
                    )))
                }
            }
        }
        d.deserialize_any(V)
    }
}

/// `switch.buffer`: how a switch buffers its ports' data FIFOs.
#[derive(Clone, Copy, Debug, Default, Deserialize, Serialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum BufferMode {
    /// Each port's FIFO holds up to `switch.buffer_bytes` (drop-tail).
    #[default]
    PerPort,
    /// One pool per switch (`switch.shared_buffer_bytes`) under a dynamic threshold
    /// (`switch.shared_buffer_alpha`).
    Shared,
}

/// α of the shared buffer's dynamic threshold when `switch.shared_buffer_alpha` is unset.
pub const DEFAULT_SHARED_BUFFER_ALPHA: f64 = 1.0;

/// How switches ECN-mark data packets (DCTCP's step, or UEC htsim's ramp).
#[derive(Clone, Copy, Debug, Deserialize, Serialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum EcnMode {
    /// No marking.
    Off,
    /// On enqueue, when the queue already holds `ecn_threshold_bytes` (DCTCP).
    Step,
    /// On dequeue, with probability rising linearly from `ecn_min_bytes` to
    /// `ecn_max_bytes` of queue left behind (UEC htsim).
    Ramp,
}

#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields, default)]
pub struct SwitchConfig {
    /// Per-port buffer for data packets. With `buffer = "shared"` it is not a cap of its own
    /// (the dynamic threshold is each port's limit): it only sizes the pool when
    /// `shared_buffer_bytes` is unset.
    pub buffer_bytes: BufferBytes,
    /// How a switch buffers its ports' data FIFOs: `"per_port"` (each FIFO up to
    /// `buffer_bytes`, drop-tail) or `"shared"` (one pool per switch, every FIFO limited by
    /// a dynamic threshold: the PSP paper's "virtual output queue buffer with dynamic
    /// watermark control", §IV-B). The priority control queue and host NICs are outside the
    /// pool either way.
    pub buffer: BufferMode,
    /// `buffer = "shared"`: the pool B of one switch, in bytes. Unset: `buffer_bytes` × the
    /// switch's ports (the per-port budget pooled: our reading of the PSP paper's per-port
    /// 1,024 KB with a shared buffer, Table III).
    pub shared_buffer_bytes: Option<u64>,
    /// `buffer = "shared"`: α of the dynamic threshold (Choudhury & Hahne, "Dynamic Queue
    /// Length Thresholds for Shared-Memory Packet Switches"): a packet may join a FIFO of q
    /// bytes iff used + size ≤ B and q + size ≤ α (B − used), with used the bytes of all
    /// the switch's FIFOs. Unset: 1.0 (the PSP paper gives no α). Positive and finite.
    pub shared_buffer_alpha: Option<f64>,
    pub ecn: EcnMode,
    /// `ecn = "step"`: a data packet arriving at a port that already holds at least this many
    /// bytes is marked.
    pub ecn_threshold_bytes: u64,
    /// `ecn = "ramp"`: no marks at or below this queue. Unset: 20 % of `buffer_bytes`.
    pub ecn_min_bytes: Option<u64>,
    /// `ecn = "ramp"`: every packet marked above this queue. Unset: 80 % of `buffer_bytes`.
    pub ecn_max_bytes: Option<u64>,
    /// Cut a data packet that does not fit to a header (`trim_bytes`) and forward it in the
    /// priority queue, instead of dropping it.
    pub trim: bool,
    pub trim_bytes: u32,
    /// On overflow, a coin flip trims the queue's last packet instead of the arriving one
    /// (UEC htsim); false: always the arriving one.
    pub trim_evict_queued: bool,
    /// With `trim`: a header that finds the priority queue (`ctrl_buffer_bytes`) full goes
    /// back to its sender as a NACK (NDP's return-to-sender); false: it is dropped.
    pub return_to_sender: bool,
    /// ACKs, NACKs and trimmed headers use a strict-priority queue. Unset: as `trim`.
    pub priority_control: Option<bool>,
    /// Buffer of the priority queue.
    pub ctrl_buffer_bytes: BufferBytes,
    /// Byte-weighted round robin between the priority queue and the data FIFO at switch
    /// ports; unset: strict priority.
    pub ctrl_share: Option<CtrlShareConfig>,
    /// Fixed delay from a packet's arrival to its enqueue at the output port.
    pub forwarding_latency_ns: f64,
    /// Fault injection: each packet arriving at a switch of `loss_switches` is lost with this
    /// probability — a data packet as if its queue overflowed (dropped, or trimmed with
    /// `trim`), an ACK or NACK dropped.
    pub loss_fraction: f64,
    /// Switch node ids where `loss_fraction` applies (empty: every switch).
    pub loss_switches: Vec<u32>,
}

impl Default for SwitchConfig {
    fn default() -> Self {
        SwitchConfig {
            buffer_bytes: BufferBytes::Unlimited,
            buffer: BufferMode::PerPort,
            shared_buffer_bytes: None,
            shared_buffer_alpha: None,
            ecn: EcnMode::Step,
            ecn_threshold_bytes: 80_000,
            ecn_min_bytes: None,
            ecn_max_bytes: None,
            trim: false,
            trim_bytes: 64,
            trim_evict_queued: true,
            return_to_sender: false,
            priority_control: None,
            ctrl_buffer_bytes: BufferBytes::Unlimited,
            ctrl_share: None,
            forwarding_latency_ns: 0.0,
            loss_fraction: 0.0,
            loss_switches: Vec::new(),
        }
    }
}

#[derive(Clone, Copy, Debug, Deserialize, Serialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum LbPolicy {
    Ecmp,
    Rps,
    Rsq,
    SimpleRr,
    Jsq,
    Choice,
    Drill,
    Topk,
    Drb,
    Ofan,
    Pofan,
    Reps,
    Ar,
    Psp,
    BandJsq,
    Dlb,
    Valiant,
    /// UEC's per-EV penalty bitmap (htsim `UecMpBitmap`).
    Bitmap,
    /// UEC's recycled good EVs, else the bitmap (htsim `UecMpMixed`); not `lb.mixed`.
    #[serde(rename = "mixed")]
    UecMixed,
    Ethereal,
    Conga,
    Sglb,
    /// Static PGFT routings (the PGFT routing paper; Zahavi's D-mod-k): a fixed port per
    /// destination (D-mod-k), per source (S-mod-k), per grouped id, or at random per (switch,
    /// destination).
    Dmodk,
    Smodk,
    Gdmodk,
    Gsmodk,
    Random,
}

impl LbPolicy {
    pub const ALL: [LbPolicy; 27] = [
        LbPolicy::Ecmp,
        LbPolicy::Rps,
        LbPolicy::Rsq,
        LbPolicy::SimpleRr,
        LbPolicy::Jsq,
        LbPolicy::Choice,
        LbPolicy::Drill,
        LbPolicy::Topk,
        LbPolicy::Drb,
        LbPolicy::Ofan,
        LbPolicy::Pofan,
        LbPolicy::Reps,
        LbPolicy::Ar,
        LbPolicy::Psp,
        LbPolicy::BandJsq,
        LbPolicy::Dlb,
        LbPolicy::Valiant,
        LbPolicy::Bitmap,
        LbPolicy::UecMixed,
        LbPolicy::Ethereal,
        LbPolicy::Conga,
        LbPolicy::Sglb,
        LbPolicy::Dmodk,
        LbPolicy::Smodk,
        LbPolicy::Gdmodk,
        LbPolicy::Gsmodk,
        LbPolicy::Random,
    ];

    pub fn name(&self) -> &'static str {
        match self {
            LbPolicy::Ecmp => "ecmp",
            LbPolicy::Rps => "rps",
            LbPolicy::Rsq => "rsq",
            LbPolicy::SimpleRr => "simple_rr",
            LbPolicy::Jsq => "jsq",
            LbPolicy::Choice => "choice",
            LbPolicy::Drill => "drill",
            LbPolicy::Topk => "topk",
            LbPolicy::Drb => "drb",
            LbPolicy::Ofan => "ofan",
            LbPolicy::Pofan => "pofan",
            LbPolicy::Reps => "reps",
            LbPolicy::Ar => "ar",
            LbPolicy::Psp => "psp",
            LbPolicy::BandJsq => "band_jsq",
            LbPolicy::Dlb => "dlb",
            LbPolicy::Valiant => "valiant",
            LbPolicy::Bitmap => "bitmap",
            LbPolicy::UecMixed => "mixed",
            LbPolicy::Ethereal => "ethereal",
            LbPolicy::Conga => "conga",
            LbPolicy::Sglb => "sglb",
            LbPolicy::Dmodk => "dmodk",
            LbPolicy::Smodk => "smodk",
            LbPolicy::Gdmodk => "gdmodk",
            LbPolicy::Gsmodk => "gsmodk",
            LbPolicy::Random => "random",
        }
    }

    /// The policy learns from feedback: ACKs (entropy value and ECN echo) under every
    /// transport, and NACKs and timeouts under the reliable one (`host.cc` other than
    /// `none`). The paced transport ACKs every data packet whatever the policy, so these
    /// policies need nothing more from it.
    pub fn needs_feedback(&self) -> bool {
        matches!(self, LbPolicy::Reps | LbPolicy::Bitmap | LbPolicy::UecMixed)
    }

    /// Whether switches decide from their queues (and so can see them through a stale
    /// snapshot, `lb.state_update_period_ns`).
    /// Whether the policy is all switch side (hosts send plain packets), so it can share a
    /// fabric with other such policies (`lb.mixed`).
    pub fn is_switch_only(&self) -> bool {
        !matches!(
            self,
            LbPolicy::Ecmp
                | LbPolicy::Rps
                | LbPolicy::Drb
                | LbPolicy::Reps
                | LbPolicy::Valiant
                | LbPolicy::Bitmap
                | LbPolicy::UecMixed
                | LbPolicy::Ethereal
        )
    }

    /// Whether switches exchange state (CONGA's overlay, SGLB's adverts), so every switch
    /// must run it (no `lb.mixed`).
    pub fn needs_every_switch(&self) -> bool {
        matches!(self, LbPolicy::Conga | LbPolicy::Sglb)
    }

    pub fn is_queue_aware(&self) -> bool {
        matches!(
            self,
            LbPolicy::Jsq
                | LbPolicy::Choice
                | LbPolicy::Drill
                | LbPolicy::Topk
                | LbPolicy::Psp
                | LbPolicy::BandJsq
                | LbPolicy::Dlb
        )
    }
}

/// `lb.ar_mode`, `lb.sglb_mode`: a switch decision per packet or per flowlet.
#[derive(Clone, Copy, Debug, Deserialize, Serialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum SwitchGranularity {
    Packet,
    Flowlet,
}

/// `lb.dlb_mode`: Broadcom DLB's three modes (per packet, flowlet, assigned flow).
#[derive(Clone, Copy, Debug, Deserialize, Serialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum DlbMode {
    /// Every packet to a best-quality port.
    Packet,
    /// Keep the port within a flowlet; re-pick after an idle gap (and reactive rebalancing).
    Flowlet,
    /// Pin a flow to the port its first packet took: no re-pick, no rebalancing.
    Assigned,
}

/// `lb.valiant_granularity`: a random intermediate per packet or per flow.
#[derive(Clone, Copy, Debug, Deserialize, Serialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum ValiantGranularity {
    Packet,
    Flow,
}

/// How a choice between equally good options is broken.
#[derive(Clone, Copy, Debug, Deserialize, Serialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum Ties {
    /// The lowest index.
    Lowest,
    /// Uniformly at random (the host's or switch's own stream).
    Random,
}

/// Which switches a `[[lb.mixed]]` entry applies to.
#[derive(Clone, Copy, Debug, Deserialize, Serialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum MixSelect {
    /// A random `fraction` of the switches that choose among uplinks.
    RandomSwitches,
    /// Every switch of a random `fraction` of the pods (fat tree; leaves in a leaf-spine).
    RandomPods,
    /// Every edge (leaf) switch.
    Edge,
    /// Every aggregation switch (fat tree).
    Aggregation,
}

/// `[[lb.mixed]]`: a switch policy for a selection of switches (the Ofan paper's
/// incremental deployment, e.g. half Ofan, half AR).
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct MixedDeployment {
    pub policy: LbPolicy,
    pub select: MixSelect,
    /// With `random_switches` and `random_pods`: the share selected, drawn from the seed.
    pub fraction: Option<f64>,
}

#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields, default)]
pub struct LbConfig {
    pub policy: LbPolicy,
    /// pOfan: ports per pipe W (1 = one pointer set per ingress port). Ignored by other policies.
    pub pipe_ports: u32,
    /// Host entropy values (EVs) per flow for `ecmp`/`rps`/`reps`: EVs are drawn from
    /// [0, entropy_paths).
    pub entropy_paths: u32,
    /// `simple_rr`: reshuffle the uplink order every full rotation (htsim `RR`); the Ofan
    /// paper's Simple RR keeps one fixed order (default false).
    pub rr_reshuffle: bool,
    /// Route ACKs by ECMP hash instead of the policy, as htsim's `RR` does for packets
    /// < 128 B. Unset: true for `simple_rr` (the htsim rule, under which the Ofan paper's
    /// linear queue growth of Simple RR is reproduced), false for every other policy.
    pub ack_ecmp: Option<bool>,
    /// `reps`: good entropy values each flow caches (B), 1 to 16.
    pub reps_buffer: u32,
    /// `reps`: how long a flow keeps to its cached values after a timeout that suggests a
    /// failed path (freezing mode), in µs; 0: never freeze.
    pub reps_freeze_us: f64,
    /// `reps`: packets sent on random entropy values when a freeze ends. Unset: the flow
    /// path's bandwidth-delay product in full packets (the REPS artifact).
    pub reps_explore_pkts: Option<u32>,
    /// `reps` without `switch.trim`: a timeout freezes only if the flow's largest RTT over
    /// the last two RTOs is below this many base RTTs (otherwise congestion explains it).
    pub reps_freeze_rtt_gate: f64,
    /// `drill`: ports sampled per decision d (DRILL(2, 1) is the DRILL paper's).
    pub drill_d: u32,
    /// `drill`: least-loaded ports remembered for the next decision m.
    pub drill_m: u32,
    /// `topk`: choose at random among the k least-loaded candidates. Unset: ⌈N/2⌉ of the N
    /// candidate ports (the PSP paper's k = N/2).
    pub topk_k: Option<u32>,
    /// Queue-aware policies (`jsq`, `choice`, `drill`, `topk`) decide from a snapshot of the
    /// switch's queues taken every this many ns (stale state); 0 = instantaneous.
    pub state_update_period_ns: f64,
    /// `ar`: a port's quantized level is recomputed when read more than this many ns after
    /// its last refresh (htsim: 100 ns).
    pub ar_update_period_ns: f64,
    /// `ar`: the queue capacity its levels are fractions of, in bytes. Unset:
    /// `switch.buffer_bytes`, or the Ofan paper's 800 KB with unlimited buffers.
    pub ar_capacity_bytes: Option<u64>,
    /// `ar`: level thresholds, percent of the capacity (three, increasing; htsim 5, 10, 20).
    pub ar_thresholds_pct: Vec<f64>,
    /// `ar`: packets smaller than this follow the ECMP hash (htsim: 100 B).
    pub ar_small_bytes: u32,
    /// `ar`: decide per packet (default) or per flowlet (htsim's `PER_FLOWLET` sticky rule).
    pub ar_mode: SwitchGranularity,
    /// `ar` per flowlet: a flow may move only after a gap longer than this, in µs (htsim's
    /// sticky delta, 10 µs).
    pub ar_flowlet_us: f64,
    /// `ar` per flowlet: entries of the per-switch flow table flows are hashed onto.
    pub ar_flowset_entries: u32,
    /// `dlb`: per packet (default), per flowlet, or assigned (a flow pinned to the port its
    /// first packet took).
    pub dlb_mode: DlbMode,
    /// `dlb` flowlet mode: the inactivity interval that ends a flowlet, in µs (Juniper: 256).
    pub dlb_flowlet_us: f64,
    /// `dlb` flowlet and assigned modes: entries of the flowset table (Juniper: 256).
    pub dlb_flowset_entries: u32,
    /// `dlb`: a port's quality band is resampled when read this many ns after its last
    /// sample (htsim's 100 ns update period).
    pub dlb_sample_ns: f64,
    /// `dlb`: the time constant of the egress-load estimator, in µs (htsim's 30 µs window).
    pub dlb_load_window_us: f64,
    /// `dlb`: queue level thresholds, percent of AR's queue capacity (three, increasing).
    pub dlb_queue_thresholds_pct: Vec<f64>,
    /// `dlb`: utilization level thresholds, percent of the line rate (three, increasing);
    /// the level is the number exceeded.
    pub dlb_util_thresholds_pct: Vec<f64>,
    /// `dlb` flowlet mode: reactive rebalancing moves an active flowlet when the best band
    /// beats its port's by at least this many bands...
    pub dlb_rebalance_delta: u32,
    /// ...and a draw passes this probability (0: no reactive rebalancing).
    pub dlb_rebalance_prob: f64,
    /// `valiant`: a random intermediate per packet (default) or per flow.
    pub valiant_granularity: ValiantGranularity,
    /// `valiant`: the node ids of the top-tier switches hosts draw the intermediate from
    /// (uniformly); empty: every top-tier switch.
    pub valiant_intermediates: Vec<u32>,
    /// `psp`, `band_jsq`: number of queue bands n. Unset: 8 (the PSP paper's), or the length
    /// of `psp_thresholds_bytes`.
    pub psp_bands: Option<u32>,
    /// `psp`, `band_jsq`: the top threshold Th_max; thresholds are T_i = i·Th_max/n.
    /// Unset: 960 KB (the PSP paper's).
    pub psp_th_max_bytes: Option<u64>,
    /// `psp`, `band_jsq`: the thresholds T_1..T_n themselves, strictly increasing (T_n is
    /// Th_max); `psp_bands` and `psp_th_max_bytes`, if given too, must agree with it. The PSP
    /// paper's Fig. 7 uses arithmetic sequences from 64 to 960 KB.
    pub psp_thresholds_bytes: Option<Vec<u64>>,
    /// `psp`, `band_jsq`: which of the PSP paper's band rules: `fig3` (the pseudocode: bands
    /// 0..n−1 from T_1..T_{n−1}, weights n..1) or `table4` (Table IV's W = {7, ..., 0}: bands
    /// 0..n, weights n−1..0 and 0 above Th_max). Module doc of `lb::psp`.
    pub psp_variant: PspVariant,
    /// `psp`: weight of bands 0..n−1 (`table4`: and 0 above Th_max). Unset: the variant's
    /// linear weights.
    pub psp_weights: Option<Vec<u32>>,
    /// `psp`, `band_jsq`, `topk`: a leaf's uplink s toward destination leaf L counts as the
    /// larger of its own queue and the queue spine s last advertised toward L (the PSP
    /// paper, §II-B: remote state arrives in periodic reports), in adverts every
    /// `psp_remote_period_ns`.
    pub psp_remote: bool,
    /// `psp_remote`: the spines' advert period in ns (the remote state's staleness; the PSP
    /// paper's default 20 µs). 0: `state_update_period_ns`. With both positive, a multiple
    /// of `state_update_period_ns` (a switch that snapshots and advertises does both on one
    /// timer).
    pub psp_remote_period_ns: f64,
    /// `conga`: DRE decay period T_dre in µs (CONGA's DRE; see the guide's lb-policies page for the
    /// default, scaled to 800 Gb/s links).
    pub conga_t_dre_us: f64,
    /// `conga`: DRE decay factor α in (0, 1].
    pub conga_alpha: f64,
    /// `conga`: bits Q of the quantized congestion metric (1 to 6).
    pub conga_q_bits: u32,
    /// `conga`: remote metrics older than this (µs) read as 0 (aging every T_age/4).
    pub conga_t_age_us: f64,
    /// `conga`: flowlet inactivity timeout in µs; 0 = a decision per packet.
    pub conga_flowlet_us: f64,
    /// `sglb`: period of the upper switches' quality adverts (and of every SGLB switch's
    /// quality sampling), in ns.
    pub sglb_advert_ns: f64,
    /// `sglb`: a decision per packet (default) or per flowlet, as DLB's.
    pub sglb_mode: SwitchGranularity,
    /// `sglb` flowlet mode: the inactivity interval that ends a flowlet, in µs (DLB's
    /// default, Juniper's 256).
    pub sglb_flowlet_us: f64,
    /// `sglb` flowlet mode: entries of the flowset table (DLB's default, Juniper's 256).
    pub sglb_flowset_entries: u32,
    /// Mixed deployments: other switch policies on selected switches, applied in order
    /// (later entries win). Only switch-side policies mix (hosts do nothing special).
    pub mixed: Vec<MixedDeployment>,
    /// `bitmap`, `mixed`: entropy values per flow P (a power of two; EVs are 0..P), each
    /// with a penalty byte in the flow's state, hence apart from `entropy_paths` (whose
    /// default, 65536, would cost 64 KB per flow). UEC htsim's `-paths` default: 64.
    pub bitmap_paths: u32,
    /// `bitmap`, `mixed`: penalty added to an EV by an ECN-marked ACK (htsim: 1).
    pub bitmap_ecn_penalty: u32,
    /// `bitmap`, `mixed`: penalty added by a NACK of a trim before the last hop (htsim: 4).
    pub bitmap_nack_penalty: u32,
    /// `bitmap`, `mixed`: penalty added by a retransmission timeout (htsim: 15).
    pub bitmap_timeout_penalty: u32,
    /// `bitmap`, `mixed`: penalties are capped at this (htsim `_max_penalty`: 15).
    pub bitmap_max_penalty: u32,
    /// `bitmap`, `mixed`: UEC 1.0.3 §3.6.16.4's rule (UNVERIFIED, not in htsim): while more
    /// than half of the EVs have a penalty, skip none (default false, as htsim).
    pub bitmap_no_skip_above_half: bool,
    /// `ethereal`: most subflows per flow (s_max). Unset: the number of paths through the
    /// lowest common layer (one subflow per path, as in the Ofan paper).
    pub ethereal_max_subflows: Option<u32>,
    /// `ethereal`: ties between equally loaded uplinks go to the lowest index or a random
    /// one (default random, so that hosts of an edge switch do not all favour uplink 0).
    pub ethereal_ties: Ties,
}

impl LbConfig {
    /// Largest `reps_buffer` (REPS keeps its buffer inline in a flow's state).
    pub const REPS_MAX_BUFFER: u32 = 16;

    /// Whether ACKs are hashed (ECMP) rather than balanced by the policy.
    pub fn acks_hashed(&self) -> bool {
        self.ack_ecmp.unwrap_or(self.policy == LbPolicy::SimpleRr)
    }

    /// The stale-state refresh period in ps (0: switches read their queues directly).
    pub fn state_update_period_ps(&self) -> u64 {
        (self.state_update_period_ns * crate::time::PS_PER_NS as f64).round() as u64
    }

    /// `psp_remote`'s advert period in ps.
    pub fn psp_remote_period_ps(&self) -> u64 {
        let ns = match self.psp_remote_period_ns {
            0.0 => self.state_update_period_ns,
            ns => ns,
        };
        (ns * crate::time::PS_PER_NS as f64).round() as u64
    }

    /// PSP's thresholds T_1..T_n (validated: 1 to 64, strictly increasing).
    pub fn psp_thresholds(&self) -> Vec<u64> {
        match &self.psp_thresholds_bytes {
            Some(t) => t.clone(),
            None => {
                let n = self.psp_bands.unwrap_or(8) as u64;
                let th = self.psp_th_max_bytes.unwrap_or(960_000);
                (1..=n)
                    .map(|i| (i as u128 * th as u128 / n as u128) as u64)
                    .collect()
            }
        }
    }
}

impl Default for LbConfig {
    fn default() -> Self {
        LbConfig {
            policy: LbPolicy::Ofan,
            pipe_ports: 4,
            entropy_paths: 65_536,
            rr_reshuffle: false,
            ack_ecmp: None,
            reps_buffer: 8,
            reps_freeze_us: 10_000.0,
            reps_explore_pkts: None,
            reps_freeze_rtt_gate: 1.65,
            drill_d: 2,
            drill_m: 1,
            topk_k: None,
            state_update_period_ns: 0.0,
            ar_update_period_ns: 100.0,
            ar_capacity_bytes: None,
            ar_thresholds_pct: vec![5.0, 10.0, 20.0],
            ar_small_bytes: 100,
            ar_mode: SwitchGranularity::Packet,
            ar_flowlet_us: 10.0,
            ar_flowset_entries: 4096,
            dlb_mode: DlbMode::Packet,
            dlb_flowlet_us: 256.0,
            dlb_flowset_entries: 256,
            dlb_sample_ns: 100.0,
            dlb_load_window_us: 30.0,
            dlb_queue_thresholds_pct: vec![5.0, 10.0, 20.0],
            dlb_util_thresholds_pct: vec![0.0, 15.0, 50.0],
            dlb_rebalance_delta: 2,
            dlb_rebalance_prob: 0.0,
            valiant_granularity: ValiantGranularity::Packet,
            valiant_intermediates: Vec::new(),
            psp_bands: None,
            psp_th_max_bytes: None,
            psp_thresholds_bytes: None,
            psp_variant: PspVariant::Fig3,
            psp_weights: None,
            psp_remote: false,
            psp_remote_period_ns: 0.0,
            conga_t_dre_us: 1.0,
            conga_alpha: 0.2,
            conga_q_bits: 3,
            conga_t_age_us: 50.0,
            conga_flowlet_us: 0.0,
            sglb_advert_ns: 2_000.0,
            sglb_mode: SwitchGranularity::Packet,
            sglb_flowlet_us: 256.0,
            sglb_flowset_entries: 256,
            mixed: Vec::new(),
            bitmap_paths: 64,
            bitmap_ecn_penalty: 1,
            bitmap_nack_penalty: 4,
            bitmap_timeout_penalty: 15,
            bitmap_max_penalty: 15,
            bitmap_no_skip_above_half: false,
            ethereal_max_subflows: None,
            ethereal_ties: Ties::Random,
        }
    }
}

#[derive(Clone, Copy, Debug, Deserialize, Serialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum CcKind {
    /// Paced sender, no congestion control (the Ofan paper's LB-isolation mode).
    None,
    /// A fixed window of `host.window_bdp` bandwidth-delay products per flow.
    Constant,
    /// DCTCP window rules (`[host.dctcp]`).
    Dctcp,
    /// UEC NSCC (`[host.nscc]`).
    Nscc,
    /// Swift (`[host.swift]`).
    Swift,
    /// Swift fed the median of recent delays (`[host.swift]`, `[host.mswift]`).
    Mswift,
    /// NDP, the receiver-driven transport (`[host.ndp]`; needs `switch.trim`): an initial
    /// window, then one packet per pull from the receiver.
    Ndp,
}

impl CcKind {
    pub fn name(&self) -> &'static str {
        match self {
            CcKind::None => "none",
            CcKind::Constant => "constant",
            CcKind::Dctcp => "dctcp",
            CcKind::Nscc => "nscc",
            CcKind::Swift => "swift",
            CcKind::Mswift => "mswift",
            CcKind::Ndp => "ndp",
        }
    }
}

/// `host.reorder_paths`: whose paths the default loss threshold (3 + paths) counts.
#[derive(Clone, Copy, Debug, Deserialize, Serialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum ReorderPaths {
    /// The shortest paths between the fabric's farthest hosts, for every flow.
    Network,
    /// The flow's own shortest paths (htsim `TcpSrc::set_paths`: `DUPACK_TH = 3 +` the
    /// routes from source to destination): 1 under one edge switch, k/2 within a pod of a
    /// fat tree, (k/2)² across pods; the spine count between leaves.
    Flow,
}

/// `host.loss_detection`: how the reliable transport finds packets lost without a NACK.
#[derive(Clone, Copy, Debug, Deserialize, Serialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum LossDetection {
    /// A packet sent once is lost when a packet more than the threshold above it was
    /// acknowledged (forward acknowledgement over SACK).
    Sack,
    /// htsim `TcpSrc`: ACKs that do not advance the cumulative point are counted; when the
    /// count reaches the threshold, the packet at the cumulative point is lost (fast
    /// retransmit), and until the cumulative point passes the highest packet sent then,
    /// each advance that stops short of it loses the packet at the new point (NewReno's
    /// partial ACKs). A new cumulative point resets the count.
    Dupack,
}

#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields, default)]
pub struct HostConfig {
    pub cc: CcKind,
    /// Data pacing rate as a fraction of the host's line rate, in (0, 1].
    pub load: f64,
    /// `constant`: the window, in bandwidth-delay products (host line rate × the base RTT of
    /// the fabric's longest path).
    pub window_bdp: f64,
    /// Smallest retransmission timeout, in µs. Unset: 1000 µs under `ndp` (opera-sim's
    /// `setMinRTO(1000)`); otherwise 15 µs + 6 × the time to drain a full switch buffer at
    /// the host's line rate (UEC htsim `main_uec`), or 100 µs with unlimited buffers.
    pub rto_min_us: Option<f64>,
    /// Receivers ACK once this many bytes of data (whole packets, as UEC htsim counts) are
    /// unacknowledged (0: every packet; UEC htsim: 16384), and at once on ECN, duplicates,
    /// the flow's first packet, ACK requests and a gap closing after a request.
    pub ack_coalesce_bytes: u64,
    /// The threshold of the loss rule (`loss_detection`), in packets. Unset: 3 + a number of
    /// shortest paths (`reorder_paths`; htsim's spraying dupACK threshold); off with
    /// `switch.trim` (NACKs report losses) and for `nscc` (UEC htsim's transport finds
    /// silent losses by its timer only).
    pub reorder_threshold_pkts: Option<u32>,
    /// Whose shortest paths the default threshold counts: the farthest hosts' (one value
    /// for every flow, the default) or each flow's own (htsim `TcpSrc::set_paths`).
    pub reorder_paths: ReorderPaths,
    /// How silent losses are found: a SACK forward-acknowledgement rule (the default) or
    /// htsim TCP's count of duplicate cumulative ACKs.
    pub loss_detection: LossDetection,
    pub dctcp: DctcpConfig,
    pub nscc: NsccConfig,
    pub swift: SwiftConfig,
    pub mswift: MswiftConfig,
    pub ndp: NdpConfig,
}

impl Default for HostConfig {
    fn default() -> Self {
        HostConfig {
            cc: CcKind::None,
            load: 1.0,
            window_bdp: 1.5,
            rto_min_us: None,
            ack_coalesce_bytes: 0,
            reorder_threshold_pkts: None,
            reorder_paths: ReorderPaths::Network,
            loss_detection: LossDetection::Sack,
            dctcp: DctcpConfig::default(),
            nscc: NsccConfig::default(),
            swift: SwiftConfig::default(),
            mswift: MswiftConfig::default(),
            ndp: NdpConfig::default(),
        }
    }
}

#[derive(Clone, Copy, Debug, Deserialize, Serialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum WorkloadKind {
    Permutation,
    AllToAll,
    Matrix,
    /// Back-to-back messages to random hosts of other pods/leaves at `load` for
    /// `duration_us` (the PSP paper's set-up).
    Continuous,
    /// Poisson flow arrivals at `load` for `duration_us`, sizes from the `size_cdf` file, to
    /// hosts of other racks (the Opera paper, §5; `workload/poisson.rs`).
    Poisson,
    /// Every host sends `message_bytes` to every host of other racks, at 0 or staggered over
    /// `stagger_us` (`workload/shuffle.rs`).
    Shuffle,
    /// Opera's hot rack: the hosts of one rack send `message_bytes` to those of another
    /// (`workload/rack_patterns.rs`).
    HotRack,
    /// Opera's skew[θ, 1]: a permutation among the hosts of `active_racks` (θ) of the racks.
    Skew,
    /// A ring collective (`collective`) over `hosts`: every step waits for the previous
    /// step's chunk from the previous rank.
    Ring,
    /// A pairwise collective (`collective` = all_to_all or all_to_all_v) over `hosts`: every
    /// rank sends directly to every other.
    Pairwise,
    /// Llama-3 FSDP2/HSDP: the inter-server gradient/weight rings of `gpus` GPUs
    /// (`workload/fsdp2.rs`).
    Fsdp2,
    /// Mixture-of-experts dispatch then combine all-to-all-v within expert-parallel groups of
    /// `ep_size` GPUs (`workload/moe.rs`).
    Moe,
}

/// `workload.placement`: how servers of `gpus_per_server` GPUs are placed on the fabric's
/// host ports.
#[derive(Clone, Copy, Debug, Default, Deserialize, Serialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum GpuPlacement {
    /// Server s on host ports s·g … s·g + g − 1.
    #[default]
    Ordered,
    /// Servers on distinct random slots of g consecutive host ports, drawn from the seed.
    Random,
}

/// `workload.mode` of an FSDP2 workload.
#[derive(Clone, Copy, Debug, Default, Deserialize, Serialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum Fsdp2Mode {
    /// One ring step of every ring at once (the Ofan paper's evaluation).
    #[default]
    Phase,
    /// The full ring collectives of `layers` layers, every step waiting for its
    /// predecessor's data.
    Ring,
}

/// `workload.moe.dispatch`: how tokens cross servers.
#[derive(Clone, Copy, Debug, Default, Deserialize, Serialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum MoeDispatch {
    /// Every token goes once to each destination GPU on another server.
    Flat,
    /// DeepEP: once per destination server, to the GPU of the sender's local rank there,
    /// then NVLink fan-out (reported, not simulated).
    #[default]
    Hierarchical,
}

/// `[workload.moe]`: the synthetic routing generator (`workload::moe_trace`), used when
/// `workload.file` names no trace.
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct MoeConfig {
    /// Routed experts per layer, spread evenly over the `ep_size` GPUs of a group.
    pub experts: u32,
    /// Experts each token is routed to.
    pub top_k: u32,
    /// Tokens each GPU routes (required without a trace file).
    pub tokens_per_gpu: Option<u32>,
    /// Busiest GPU's received token copies over the mean, the skew is calibrated to.
    pub imbalance: f64,
    /// EPLB-style replication of hot experts and balanced packing.
    pub eplb: bool,
    /// Extra expert slots for EPLB (unset: the generator's default).
    pub redundant_experts: Option<u32>,
    pub dispatch: MoeDispatch,
    /// Bytes on the wire per token copy (hidden 4096 × 2 B).
    pub bytes_per_token: u64,
}

impl Default for MoeConfig {
    fn default() -> Self {
        MoeConfig {
            experts: 128,
            top_k: 8,
            tokens_per_gpu: None,
            imbalance: 1.48,
            eplb: false,
            redundant_experts: None,
            dispatch: MoeDispatch::Hierarchical,
            bytes_per_token: 8192,
        }
    }
}

/// `workload.collective`: the operation; `workload.kind` ("ring" or "pairwise") is the
/// Which of the PSP paper's band rules `psp` and `band_jsq` use (`lb.psp_variant`; the
/// behaviour is `lb::psp`'s).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PspVariant {
    /// Fig. 3: n−1 thresholds compared, weights n..1.
    #[default]
    Fig3,
    /// Table IV: n thresholds compared, weights n−1..0, 0.
    Table4,
}

/// Where a continuous workload's messages go (`workload.destinations`).
#[derive(Clone, Copy, Debug, Default, Deserialize, Serialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum Destinations {
    #[default]
    Random,
    Shift,
}

/// algorithm, which runs some of them.
#[derive(Clone, Copy, Debug, Default, Deserialize, Serialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum Collective {
    /// Ring: ReduceScatter then AllGather, 2(n − 1) dependent steps.
    #[default]
    AllReduce,
    /// Ring: n − 1 dependent steps.
    ReduceScatter,
    /// Ring: n − 1 dependent steps.
    AllGather,
    /// Pairwise: every rank sends ⌈message_bytes / ranks⌉ to every other rank.
    AllToAll,
    /// Pairwise: every rank sends to every other the bytes of a rank × rank CSV matrix
    /// (`workload.file`).
    AllToAllV,
}

impl Collective {
    pub fn name(self) -> &'static str {
        match self {
            Collective::AllReduce => "all_reduce",
            Collective::ReduceScatter => "reduce_scatter",
            Collective::AllGather => "all_gather",
            Collective::AllToAll => "all_to_all",
            Collective::AllToAllV => "all_to_all_v",
        }
    }

    /// Whether `kind = "ring"` runs it (otherwise `kind = "pairwise"` does).
    pub fn is_ring(self) -> bool {
        matches!(
            self,
            Collective::AllReduce | Collective::ReduceScatter | Collective::AllGather
        )
    }
}

#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields, default)]
pub struct WorkloadConfig {
    pub kind: WorkloadKind,
    /// Bytes of payload per flow (permutation, all_to_all); ring: the buffer each rank
    /// holds (each step carries ⌈message_bytes / ranks⌉).
    pub message_bytes: u64,
    /// htsim connection-matrix file (matrix), or the rank × rank byte matrix (CSV) of
    /// all_to_all_v, relative to the scenario file's folder.
    pub file: Option<PathBuf>,
    /// Permutation: every host sends to a host of another pod (fat tree) or leaf
    /// (leaf-spine), as the Ofan paper's link-overload figure.
    pub inter_pod: bool,
    /// Permutation: every host sends to a host of another rack (edge switch, leaf, Opera
    /// rack): the Opera paper's host permutation.
    pub inter_rack: bool,
    /// Skew: the share θ of racks that is active (skew[θ, 1]), in (0, 1]; unset: 0.2.
    pub active_racks: Option<f64>,
    /// Continuous: offered load as a fraction of the host's line rate, in (0, 1]
    /// (unset: 1); poisson: the fraction of aggregate host link bandwidth the flows' payload
    /// offers, in (0, 1] (required).
    pub load: Option<f64>,
    /// Continuous and poisson: how long hosts keep starting messages, in µs (required).
    pub duration_us: Option<f64>,
    /// Continuous: where messages go — `random` (a uniformly random host of another pod or
    /// leaf, per message) or `shift` (round i: every host h to (h + s_i) mod n, one offset
    /// per round that leaves the group, so every host also receives one message per round;
    /// fat trees and leaf-spines).
    pub destinations: Destinations,
    /// Poisson: the flow-size CDF file (`bytes,cdf` lines), relative to the scenario file's
    /// folder (required).
    pub size_cdf: Option<PathBuf>,
    /// Shuffle: flows start uniformly over this many µs (unset or 0: all at time 0).
    pub stagger_us: Option<f64>,
    /// Shuffle on Opera: the application tags every flow bulk (true: RotorLB) or
    /// low-latency (false), whatever `topology.opera.bulk_cutoff_bytes` says (the paper tags
    /// its 100 KB shuffle flows bulk). Unset: the cutoff decides.
    pub bulk: Option<bool>,
    /// Poisson: an all-to-all shuffle across racks sent besides the Poisson flows (the Opera
    /// paper's combined workload, Fig. 10): `[workload.with_shuffle]`.
    pub with_shuffle: Option<WithShuffle>,
    /// Background flows pinned to an explicit path at a fixed rate (the PSP paper's
    /// "200 Gb/s on tor15-spine8-tor10"), sent besides the workload.
    pub background: Vec<BackgroundFlow>,
    /// Ring and pairwise: the collective (default "all_reduce", a ring's).
    pub collective: Collective,
    /// Ring and pairwise: the member hosts in rank order (unset: every host, 0, 1, …).
    pub hosts: Option<Vec<u32>>,
    /// Ring and fsdp2: compute delay between a step's chunk arriving and the next step
    /// starting; moe: expert compute time between a GPU's last dispatch data arriving and
    /// its combine starting; in ns (default 0).
    pub step_delay_ns: f64,
    /// fsdp2 and moe: GPUs of the job (unset: every host port); a multiple of
    /// `gpus_per_server`.
    pub gpus: Option<u32>,
    /// fsdp2 and moe: GPUs per server, one per host port (default 8).
    pub gpus_per_server: u32,
    /// fsdp2 and moe: where servers go on the fabric (default "ordered").
    pub placement: GpuPlacement,
    /// fsdp2: "llama3-8b", "llama3-70b" or "llama3-405b" (`scenario/ai.rs`), unless
    /// `layer_params` is given.
    pub model: Option<String>,
    /// fsdp2: explicit parameter count of each layer, instead of `model`.
    pub layer_params: Option<Vec<u64>>,
    /// fsdp2: bytes per parameter of each shard (default 1, FP8).
    pub bytes_per_param: u32,
    /// fsdp2: shards each ring step carries: 2 (default: the gradient ReduceScatter shard and
    /// the weight AllGather shard, n − 1 steps per layer) or 1 (a layer is a ring AllReduce
    /// of 2(n − 1) one-shard steps).
    pub shards_per_step: u32,
    /// fsdp2: "phase" (default) or "ring".
    pub mode: Fsdp2Mode,
    /// fsdp2 ring mode: layers to run (unset: all the model's).
    pub layers: Option<u32>,
    /// fsdp2 ring mode: a cap on the dependent steps of each ring member.
    pub max_steps: Option<u32>,
    /// moe: GPUs per expert-parallel group (unset: all `gpus`); groups are consecutive
    /// servers.
    pub ep_size: Option<u32>,
    /// moe: the synthetic generator's parameters.
    pub moe: MoeConfig,
}

/// `[workload.with_shuffle]`: the shuffle of a combined workload. Every host sends
/// `message_bytes` to every host of other racks, starting at `start_us` (or uniformly over
/// `[start_us, start_us + stagger_us)`), besides the Poisson flows; a host starts its flows of
/// both kinds in order of start time (Poisson first on a tie). Results report the two parts
/// as the phases "poisson" and "shuffle".
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct WithShuffle {
    /// Payload bytes of each shuffle flow (default 100,000: the paper's median Facebook-Hadoop
    /// inter-rack flow).
    pub message_bytes: u64,
    /// When the shuffle starts, in µs (default 0; the paper: 100 ms on Opera).
    pub start_us: f64,
    /// The shuffle's flows start uniformly over this many µs after `start_us` (default 0:
    /// all at once; the paper staggers the static networks' over 10 ms).
    pub stagger_us: f64,
    /// On Opera: the application tags every shuffle flow bulk (true: RotorLB) or
    /// low-latency (false); unset: `topology.opera.bulk_cutoff_bytes` decides. The Poisson
    /// flows are classified by the cutoff.
    pub bulk: Option<bool>,
}

impl Default for WithShuffle {
    fn default() -> Self {
        WithShuffle {
            message_bytes: 100_000,
            start_us: 0.0,
            stagger_us: 0.0,
            bulk: None,
        }
    }
}

/// `[[workload.background]]`: a flow from host `src` to host `dst` along the switches of
/// `path` (src's edge switch first, dst's last, each linked to the next, a shortest path),
/// paced at `rate_gbps` (data frames on the wire, gap included) from time 0 for `duration_us`
/// (unset: `workload.duration_us`). Switches forward it along its path whatever their
/// policy; it counts as one more flow of its source.
#[derive(Clone, Debug, Default, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct BackgroundFlow {
    pub src: u32,
    pub dst: u32,
    pub path: Vec<u32>,
    pub rate_gbps: f64,
    pub duration_us: Option<f64>,
}

impl Default for WorkloadConfig {
    fn default() -> Self {
        WorkloadConfig {
            kind: WorkloadKind::Permutation,
            message_bytes: 1 << 20,
            file: None,
            inter_pod: false,
            inter_rack: false,
            active_racks: None,
            load: None,
            duration_us: None,
            destinations: Destinations::Random,
            size_cdf: None,
            stagger_us: None,
            bulk: None,
            with_shuffle: None,
            background: Vec::new(),
            collective: Collective::AllReduce,
            hosts: None,
            step_delay_ns: 0.0,
            gpus: None,
            gpus_per_server: 8,
            placement: GpuPlacement::Ordered,
            model: None,
            layer_params: None,
            bytes_per_param: 1,
            shards_per_step: 2,
            mode: Fsdp2Mode::Phase,
            layers: None,
            max_steps: None,
            ep_size: None,
            moe: MoeConfig::default(),
        }
    }
}

/// `[report]`: what `weft run --out` writes besides summary.json and latency.hlog.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields, default)]
pub struct ReportConfig {
    /// Sampling interval of `timeseries.csv`, in µs.
    pub timeseries_us: f64,
    /// Hosts whose flows' windows are traced in `cwnd.csv` (after every ACK).
    pub trace_hosts: Vec<u32>,
    /// Upper edges of the flow-size bins of `results.fct_by_size` and the `fct_ns.bin_*`
    /// histograms, in bytes, increasing (default 10^4, 10^5, 10^6, 10^7, 10^8; an overflow
    /// bin follows the last; empty: off).
    pub fct_bins_bytes: Vec<f64>,
    /// Log every completed flow (`flows.csv` under `--out`: source, destination, bytes,
    /// start, FCT, phase), for FCTs split by arrival time, pair or size that the
    /// histograms cannot give.
    pub flow_log: bool,
}

/// The default edges of `report.fct_bins_bytes`, in bytes: decades from 10 KB to 100 MB (the
/// flow-size axis of the Opera paper's FCT figures, 10^4 … 10^8 B); larger flows fall in the
/// overflow bin.
pub const DEFAULT_FCT_EDGES_BYTES: [f64; 5] = [1e4, 1e5, 1e6, 1e7, 1e8];

impl Default for ReportConfig {
    fn default() -> Self {
        ReportConfig {
            timeseries_us: 1.0,
            trace_hosts: Vec::new(),
            fct_bins_bytes: DEFAULT_FCT_EDGES_BYTES.to_vec(),
            flow_log: false,
        }
    }
}
