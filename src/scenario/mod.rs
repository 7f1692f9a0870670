//! The scenario: what to simulate. A TOML file deserialized into these structs, with every
//! field defaulted to the Ofan paper's evaluation set-up, so a file gives only what it changes.
//! Unknown keys are rejected; every check names the field it concerns.

pub(crate) mod ai;
pub(crate) mod cc;
mod expander;
mod lb_config;
mod lb_policy;
mod load;
mod overrides;
mod pgft;
pub mod reference;
mod registry;
mod validate;

pub use cc::{
    DctcpConfig, DctcpRecovery, MswiftConfig, NdpConfig, NdpPacer, NdpPullGap, NsccConfig,
    SwiftConfig,
};
pub use expander::ExpanderConfig;
pub use lb_config::{
    renamed_field, ArConfig, BitmapConfig, CongaConfig, DlbConfig, DrillConfig, EtherealConfig,
    LbConfig, PspConfig, RepsConfig, SglbConfig, TopkConfig, ValiantConfig,
};
pub(crate) use lb_policy::lb_policies;
pub use lb_policy::LbPolicy;
pub use load::{load_scenario, load_scenario_str};
pub use pgft::{pgft_stage_names, pgft_tier_names, HostTypes, NodeTypeRanges, PgftConfig};
pub use validate::{tier_names, FieldError};

use registry::registry;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::PathBuf;

/// A scenario: the fabric, its switches, load balancing, hosts and traffic, and what to
/// report (the top level of a scenario file).
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct Scenario {
    /// Master seed: every random stream (per node, per purpose) is derived from it.
    pub seed: u64,
    /// Simulated time at which the run stops, in µs, even if flows are left (it stops at the first
    /// window boundary at or after it). Unset: when every flow has completed or nothing is left to
    /// happen. Set it for lossy runs that may never complete (a reliable flow whose every path
    /// loses everything retries forever).
    #[schemars(range(max = 1e12), extend("exclusiveMinimum" = 0))]
    pub end_us: Option<f64>,
    /// `[topology]`: the fabric.
    pub topology: TopologyConfig,
    /// `[packet]`: packet sizes.
    pub packet: PacketConfig,
    /// `[switch]`: switch buffers, ECN marking, trimming and control queues.
    pub switch: SwitchConfig,
    /// `[lb]`: the load-balancing policy and its parameters.
    pub lb: LbConfig,
    /// `[host]`: the transport and congestion control of the hosts.
    pub host: HostConfig,
    /// `[workload]`: the traffic.
    pub workload: WorkloadConfig,
    /// `[report]`: what `weft run --out` writes besides summary.json and latency.hlog.
    pub report: ReportConfig,
    /// `[failures]`: failed switch-to-switch links.
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

registry! {
    /// `topology.kind`: the kind of fabric.
    pub enum TopologyKind {
        /// Three-level fat tree of radix k: k^3/4 hosts.
        FatTree => "fat_tree",
        /// Leaf-spine: k leaves of k/2 hosts and k/2 spines (k^2/2 hosts), or the counts of
        /// `topology.leaves`, `spines`, `hosts_per_leaf`.
        LeafSpine => "leaf_spine",
        /// A Parallel Generalized Fat-Tree (`[topology.pgft]`).
        Pgft => "pgft",
        /// Opera (NSDI 2020): racks whose uplinks go to rotor circuit switches cycling through
        /// matchings (`topology.racks`, `hosts_per_rack`, `uplinks`, `[topology.opera]`).
        Opera => "opera",
        /// Static random u-regular graph of ToRs (`topology.racks`, `hosts_per_rack`, `uplinks`,
        /// `[topology.expander]`).
        Expander => "expander",
    }
}

/// `[topology]`: the fabric: its kind and size, and the rates and latencies of its links.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct TopologyConfig {
    /// The fabric: a three-level fat tree of k^3/4 hosts, a leaf-spine of k^2/2 hosts (or explicit
    /// counts), a PGFT, Opera or an expander (the guide's Fabrics page).
    pub kind: TopologyKind,
    /// Switch radix, even: a three-level fat tree has k^3/4 hosts, a leaf-spine k^2/2.
    #[schemars(range(min = 4, max = 64))]
    pub k: u32,
    /// Default rate of every link, in Gb/s.
    #[schemars(range(max = 1e6), extend("exclusiveMinimum" = 0))]
    pub link_rate_gbps: f64,
    /// Default one-way propagation latency of every link, in ns.
    #[schemars(range(min = 0, max = 1e9))]
    pub link_latency_ns: f64,
    /// Per-tier overrides of `link_rate_gbps` and `link_latency_ns`, by tier name: fat tree
    /// `host_edge`, `edge_agg`, `agg_core`; leaf-spine `host_leaf`, `leaf_spine`; Opera `host_tor`,
    /// `tor_tor` (the rotor links); expander `host_tor`, `tor_tor`; PGFT by height: h = 3 as the
    /// fat tree, h = 2 as the leaf-spine, h = 1 `host_switch`, h ≥ 4 `host_l1`, `l1_l2`, `l2_l3`,
    /// ... (stages likewise: `host_l1` ... `l2_l1`, `l1_host`).
    pub tiers: BTreeMap<String, TierOverride>,
    /// Rate overrides of chosen links, applied in order after `tiers`; both directions of a link
    /// change: a random `fraction` of a tier's links (drawn from the seed), or one link by `node`
    /// and `port`; e.g. `[{ rate_gbps = 200, tier = "leaf_spine", fraction = 0.5 }]`.
    pub link_rates: Vec<LinkRateOverride>,
    /// Leaf-spine only: leaves of a leaf-spine of explicit counts (every leaf has one link to every
    /// spine), e.g. the PSP paper's 256 GPUs as 32 leaves of 8 hosts and 16 spines. Unset: k.
    #[schemars(range(min = 2, max = 8192))]
    pub leaves: Option<u32>,
    /// Leaf-spine only: spines (one uplink from every leaf to each). Unset: k/2.
    #[schemars(range(min = 1, max = 4096))]
    pub spines: Option<u32>,
    /// Leaf-spine only: hosts per leaf. Unset: k/2.
    #[schemars(range(min = 1, max = 4096))]
    pub hosts_per_leaf: Option<u32>,
    /// `kind = "pgft"` only (required there): PGFT(h; m; w; p) and node types.
    pub pgft: Option<PgftConfig>,
    /// Opera and expander only: racks (ToRs) N. Opera: 2 to 2^20, a multiple of `uplinks`;
    /// expander: 2 to 4096. Unset: the paper's k = 12 fabrics, Opera 108 (648 hosts), expander 130
    /// (the cost-equivalent u = 7 expander, 650 hosts, k = d + u = 12).
    pub racks: Option<u32>,
    /// Opera and expander only: hosts per rack d. Unset: Opera 6, expander 5.
    #[schemars(range(min = 1, max = 4096))]
    pub hosts_per_rack: Option<u32>,
    /// Opera and expander only: uplinks per rack u. Opera: one per rotor switch, 2 to 64; expander:
    /// ToR-to-ToR links per ToR, the graph's degree, 1 to 64, below `racks`, with racks × uplinks
    /// even. Unset: Opera 6, expander 7.
    #[schemars(range(min = 1, max = 64))]
    pub uplinks: Option<u32>,
    /// `kind = "opera"` only.
    pub opera: OperaConfig,
    /// `kind = "expander"` only.
    pub expander: ExpanderConfig,
}

/// Most uplinks (Opera: rotors) per rack.
pub const MAX_RACK_UPLINKS: u32 = 64;

/// `[topology.opera]`: Opera's schedule and slice timing (defaults: the paper's constants).
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq, JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct OperaConfig {
    /// Rotor groups G (dividing `topology.uplinks`, at least 2 rotors each): one rotor per group
    /// reconfigures per superslice (1: the paper's k = 12; large radix: the paper's appendix
    /// suggests about 6, so the cycle grows linearly with the radix).
    pub groups: u32,
    /// ε: the part of a slice low-latency packets may be sent in (the worst-case end-to-end delay),
    /// in ns. Give it or `slice_ns`, not both. Unset: 90 µs, or `slice_ns` − δ − r when `slice_ns`
    /// is given.
    pub epsilon_ns: Option<f64>,
    /// The slice (superslice) length ε + δ + r, in ns, instead of ε (ε = slice − δ − r: an r or δ
    /// that leaves no ε is an error naming `reconfig_ns` or `delta_ns`).
    pub slice_ns: Option<f64>,
    /// δ: one hop of propagation plus one full packet's serialization, in ns. Unset: the rotor
    /// link's latency + (payload + header) bytes at the rotor link's rate (1.7 µs in the paper's
    /// fabric: 500 ns + 1,500 B at 10 Gb/s).
    pub delta_ns: Option<f64>,
    /// r: a rotor's reconfiguration (dark) time, in ns.
    pub reconfig_ns: f64,
    /// Candidate schedules drawn from the seed; the best by (worst-case, mean) low-latency hops is
    /// kept. Draws with a superslice whose stable rotors leave racks disconnected are discarded
    /// (none left: an error naming `topology.uplinks`).
    pub realizations: u32,
    /// Most shortest paths per (superslice, rack pair) that the path enumeration of `weft validate`
    /// lists (NSDI's "5paths" file); with `ll_paths = "shortest"` packets choose among all
    /// shortest next hops whatever it says; with `"k_shortest"`, the number of paths per pair.
    pub max_paths: u32,
    /// Low-latency routing: `"shortest"` (each ToR picks any next hop on a shortest path of the
    /// label's superslice) or `"k_shortest"` (the NIC draws one of the `max_paths` shortest
    /// loopless paths, of any length, per packet, as opera-sim's path files: its FCTs at 1 % load
    /// show paths longer than the shortest ones).
    pub ll_paths: OperaLlPaths,
    /// Build the factorization by lifting a ≤ 64-rack one (the authors' MATLAB generator) instead
    /// of a random edge colouring of J_N (the colouring gives better worst-case hops at k = 12,
    /// hence the default).
    pub lifting: bool,
    /// Flows between racks of at least this many payload bytes are bulk: sent by RotorLB over
    /// direct circuits (`net/rotorlb.rs`) instead of low-latency multi-hop paths (paper: 15 MB);
    /// flows within a rack never are. At least one packet's payload. A workload's own tag
    /// (`workload.bulk`) overrides it. Bulk flows must start at fixed times (a triggered one is an
    /// error naming this field).
    pub bulk_cutoff_bytes: u64,
    /// RotorLB offers what is left of a slot after direct traffic to two-hop (Valiant) relays
    /// through hosts of the peer rack.
    pub valiant: bool,
    /// Who plans RotorLB's slots, i.e. how a slot's direct capacity is shared (the guide's Fabrics
    /// page, Opera).
    pub rlb_planning: RlbPlanning,
}

/// `topology.opera.ll_paths`.
#[derive(Clone, Copy, Debug, Default, Deserialize, Serialize, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum OperaLlPaths {
    /// Any next hop on a shortest path of the label's superslice, chosen by `lb.policy` at each
    /// ToR.
    #[default]
    Shortest,
    /// One of the `max_paths` shortest loopless paths (Yen's algorithm, any length; a directly
    /// connected pair gets its circuit and longer detours), drawn per packet from its entropy
    /// and followed hop by hop (opera-sim's source routes).
    KShortest,
}

/// `topology.opera.rlb_planning`.
#[derive(Clone, Copy, Debug, Default, Deserialize, Serialize, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum RlbPlanning {
    /// A rack's hosts are planned together (the authors' central planner: 2-D water-filling
    /// over senders and receivers).
    #[default]
    Rack,
    /// Each host alone: each receiver's room is split evenly among the rack's d senders.
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
            ll_paths: OperaLlPaths::Shortest,
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
#[derive(Clone, Debug, Default, Deserialize, Serialize, PartialEq, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct LinkRateOverride {
    /// The links' new rate, in Gb/s.
    pub rate_gbps: f64,
    /// The tier whose links are chosen from (with `fraction`; not with `node` and `port`).
    pub tier: Option<String>,
    /// Share of the tier's links chosen at random (from the seed), in [0, 1], rounded to the
    /// nearest count.
    pub fraction: Option<f64>,
    /// One link (with `port`; not with `tier` and `fraction`): the node it leaves from.
    pub node: Option<u32>,
    /// One link: the port of `node` it leaves from.
    pub port: Option<u16>,
}

/// `[failures]`: failed switch-to-switch links (both directions carry nothing). Routing
/// uses only ports that still reach the destination on a shortest path.
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq, JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct FailureConfig {
    /// Not with `kind = "pgft"`, Opera or an expander: every link between two switches
    /// (edge-aggregation, aggregation-core, leaf-spine) fails independently with this probability,
    /// drawn from the seed; a draw that cuts an edge switch off from another is refused (change the
    /// seed).
    #[schemars(range(min = 0), extend("exclusiveMaximum" = 1))]
    pub link_probability: f64,
    /// Links that fail whatever the draw, `{ node = N, port = P }`: the port a switch-to-switch
    /// link leaves from (either end); host links never fail.
    pub links: Vec<FailedLink>,
    /// With failures, paced hosts (`host.cc = "none"`) send at `host.load` × `rho_max` (the Ofan
    /// paper's set-up): the largest rate at which every host could send, each flow getting 1/n of
    /// its host's rate, if traffic were split perfectly over the valid shortest paths (an exact
    /// max-concurrent-flow LP over edge-switch pairs, at most 10^6 path variables: k = 12 takes 2-3
    /// s, permutation or all-to-all (140k paths); a k = 16 permutation (50k paths) about a minute;
    /// a k = 32 permutation is over the limit); `results.rho_max` reports it. False: at
    /// `host.load`, not solved (`results.rho_max` null).
    pub pace_at_rho_max: bool,
    /// How `rho_max` splits traffic over the valid shortest paths: `"optimal"` (the
    /// max-concurrent-flow LP above), `"even"` (every switch splits what it forwards toward a
    /// destination equally over its valid next hops, as a per-hop spraying load balancer does)
    /// or `"even_paths"` (every demand equally over its valid paths); with an even split the
    /// most loaded link bounds the rate, at most the optimal one.
    pub rho_split: RhoSplit,
}

/// How `rho_max` splits traffic over the valid paths (`failures.rho_split`).
#[derive(Clone, Copy, Debug, Default, Deserialize, Serialize, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum RhoSplit {
    /// The best split: a maximum concurrent flow.
    #[default]
    Optimal,
    /// An equal split over the valid next hops at every switch.
    Even,
    /// An equal split of every demand over its valid shortest paths.
    EvenPaths,
}

impl Default for FailureConfig {
    fn default() -> Self {
        FailureConfig {
            link_probability: 0.0,
            links: Vec::new(),
            pace_at_rho_max: true,
            rho_split: RhoSplit::Optimal,
        }
    }
}

impl FailureConfig {
    /// Whether any link may fail (a probability above 0 or a listed link).
    pub fn any(&self) -> bool {
        self.link_probability > 0.0 || !self.links.is_empty()
    }
}

/// One failed link, by the node and port it leaves from.
#[derive(Clone, Copy, Debug, Deserialize, Serialize, PartialEq, Eq, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct FailedLink {
    /// The switch the failed link leaves from.
    pub node: u32,
    /// The port of `node` the failed link leaves from.
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
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CtrlShareConfig {
    /// Control bytes (priority queue) per round (positive).
    pub ctrl_bytes: u32,
    /// Data bytes (data FIFO) per round (positive).
    pub data_bytes: u32,
}

/// `[topology.tiers.NAME]`: the rate and latency of one tier's links.
#[derive(Clone, Debug, Default, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TierOverride {
    /// Rate of the tier's links, in Gb/s. Unset: `topology.link_rate_gbps`.
    pub rate_gbps: Option<f64>,
    /// One-way propagation latency of the tier's links, in ns. Unset: `topology.link_latency_ns`.
    pub latency_ns: Option<f64>,
}

/// `[packet]`: packet sizes.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct PacketConfig {
    /// Data payload per packet, in bytes.
    #[schemars(range(min = 1))]
    pub payload_bytes: u32,
    /// Header bytes of a data packet (on the wire and in buffers besides the payload).
    pub header_bytes: u32,
    /// Size of an ACK, in bytes, and of the other control packets (NACKs, pulls, switch adverts).
    #[schemars(range(min = 1))]
    pub ack_bytes: u32,
    /// Inter-frame gap plus preamble, in bytes: follows each frame on the wire and delays the next
    /// frame of that port, never the packet itself; never in a buffer.
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
    /// No limit.
    Unlimited,
    /// At most this many bytes.
    Bytes(u64),
}

impl BufferBytes {
    /// The limit in bytes (u64::MAX when unlimited).
    pub fn limit(&self) -> u64 {
        match self {
            BufferBytes::Unlimited => u64::MAX,
            BufferBytes::Bytes(b) => *b,
        }
    }
}

/// Schema of the scenario reference: a non-negative byte count or the string "unlimited" (the
/// hand-written `Deserialize` below accepts exactly these).
impl JsonSchema for BufferBytes {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "BufferBytes".into()
    }

    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        schemars::json_schema!({
            "anyOf": [
                { "type": "integer", "format": "uint64", "minimum": 0 },
                { "const": "unlimited" }
            ]
        })
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
#[derive(Clone, Copy, Debug, Default, Deserialize, Serialize, PartialEq, Eq, JsonSchema)]
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
#[derive(Clone, Copy, Debug, Deserialize, Serialize, PartialEq, Eq, JsonSchema)]
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

/// `[switch]`: switch buffers, ECN marking, trimming and control queues.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct SwitchConfig {
    /// Per output port buffer for data packets, in bytes (at least one data packet), or
    /// "unlimited". With `buffer = "shared"` it is no cap of its own (the dynamic threshold is each
    /// port's limit): it only sizes the pool when `shared_buffer_bytes` is unset.
    pub buffer_bytes: BufferBytes,
    /// How a switch buffers its ports' data FIFOs. Shared: one pool of B bytes per switch under a
    /// dynamic threshold (the PSP paper's "virtual output queue buffer with dynamic watermark
    /// control", §IV-B): a packet may enter a FIFO iff the rule of `shared_buffer_alpha` lets it; a
    /// lone congested queue fills to α B / (1 + α), n of them to α B / (1 + n α) each. A packet
    /// that fails overflows as with per-port buffers (dropped, or trimmed with `trim`). The
    /// priority queue (`ctrl_buffer_bytes`), Opera's RotorLB queue and host NICs are outside the
    /// pool. Any fabric, Opera included.
    pub buffer: BufferMode,
    /// `buffer = "shared"` only (else an error): the pool B of one switch, in bytes, at least one
    /// data packet. Unset: `buffer_bytes` × the switch's ports (the per-port budget pooled: our
    /// reading of the PSP paper's per-port 1,024 KB with a shared buffer, Table III), which needs a
    /// finite `buffer_bytes` (else an error naming both fields).
    pub shared_buffer_bytes: Option<u64>,
    /// `buffer = "shared"` only (else an error): α of the dynamic threshold (Choudhury & Hahne,
    /// "Dynamic Queue Length Thresholds for Shared-Memory Packet Switches"): a packet of `size` may
    /// join a FIFO of q bytes iff used + size ≤ B and q + size ≤ α (B − used), with used the bytes
    /// of all the switch's FIFOs before it. Positive and finite; α × the smallest pool must hold a
    /// data packet. Unset: 1.0 (the PSP paper gives no α; with 1 a lone queue may take half the
    /// pool).
    pub shared_buffer_alpha: Option<f64>,
    /// How switches ECN-mark whole data packets.
    pub ecn: EcnMode,
    /// `ecn = "step"`: a data packet arriving at a port that already holds at least this many bytes
    /// is marked. At most the buffer (with `buffer = "shared"`: `shared_buffer_bytes`, if set).
    pub ecn_threshold_bytes: u64,
    /// `ecn = "ramp"`: with q the queue left behind at dequeue, no mark at q ≤ min, always above
    /// max, else with probability (q − min)/(max − min); this is min. Below `ecn_max_bytes`. Unset:
    /// 20 % of `buffer_bytes` (required with unlimited buffers).
    pub ecn_min_bytes: Option<u64>,
    /// `ecn = "ramp"`: every packet is marked above this queue (see `ecn_min_bytes`). Unset: 80 %
    /// of `buffer_bytes` (required with unlimited buffers).
    pub ecn_max_bytes: Option<u64>,
    /// Cut a data packet that does not fit the buffer to a `trim_bytes` header and forward it in
    /// the priority queue (UEC htsim's composite queue), instead of dropping it. Needs a finite
    /// buffer (`buffer_bytes`, or a shared pool) and `host.cc` other than "none".
    pub trim: bool,
    /// Size of a trimmed header, in bytes, from 1 to a data packet (payload + header).
    #[schemars(range(min = 1))]
    pub trim_bytes: u32,
    /// On overflow, a fair coin trims the queue's last packet instead of the arriving one (UEC
    /// htsim); false: always the arriving one.
    pub trim_evict_queued: bool,
    /// With `trim` and a finite `ctrl_buffer_bytes`: a trimmed header that finds a port's header
    /// queue full (trimmed there or upstream) goes back to its sender as a NACK made by the switch
    /// (NDP's return-to-sender: opera-sim's queues bounce on header overflow); the sender
    /// retransmits it on a later pull (the receiver never saw it, so it pulls nothing for it), or
    /// at once when nothing else of the flow is in flight and no pull is owed (as opera-sim's
    /// `NdpSrc::processRTS`; the NACK carries a mark that says a switch made it). False: the header
    /// is dropped. ACKs, NACKs and pulls that overflow are dropped either way (as htsim's NDP
    /// queue; the Opera authors' ToR queue returns those too, a difference that is rare on Opera
    /// here: 203 control packets in the combined run of `scenarios/opera/combined_opera.toml`).
    /// `results.packets.headers_returned` counts them (their NACKs are in `nacks_sent`).
    pub return_to_sender: bool,
    /// ACKs, NACKs and trimmed headers use a strict-priority queue ahead of data. Unset: as `trim`.
    pub priority_control: Option<bool>,
    /// Limit of the priority queue, in bytes or "unlimited" (overflow is dropped).
    pub ctrl_buffer_bytes: BufferBytes,
    /// `{ ctrl_bytes, data_bytes }`: byte-weighted round robin between a switch port's priority
    /// queue and its data FIFO while both wait. Opera's ToR queue is 640 : 1500 (opera-sim's
    /// `CompositeQueue`); `scenarios/opera/` sets it for Opera and its baselines. Strict priority
    /// can starve data for good when NDP retransmissions keep being trimmed at one port (the
    /// expander shuffle did). Needs `switch.trim` or `switch.priority_control`. Host NICs keep
    /// their own order. Unset: strict priority.
    pub ctrl_share: Option<CtrlShareConfig>,
    /// Fixed delay from a packet's arrival at a switch to its enqueue at the output port, in ns.
    #[schemars(range(min = 0, max = 1e9))]
    pub forwarding_latency_ns: f64,
    /// Fault injection: each packet arriving at a switch of `loss_switches` is lost with this
    /// probability — a data packet as if its queue overflowed (dropped, or trimmed with `trim`), an
    /// ACK or NACK dropped.
    #[schemars(range(min = 0, max = 1))]
    pub loss_fraction: f64,
    /// Node ids of the switches where `loss_fraction` applies (empty: every switch); hosts are
    /// nodes 0..hosts−1.
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

/// `lb.ar.mode`, `lb.sglb.mode`: a switch decision per packet or per flowlet.
#[derive(Clone, Copy, Debug, Deserialize, Serialize, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum SwitchGranularity {
    /// A decision per packet.
    Packet,
    /// A decision per flowlet: a flow keeps its port until an idle gap.
    Flowlet,
}

/// `lb.dlb.mode`: Broadcom DLB's three modes (per packet, flowlet, assigned flow).
#[derive(Clone, Copy, Debug, Deserialize, Serialize, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum DlbMode {
    /// Every packet to a best-quality port.
    Packet,
    /// Keep the port within a flowlet; re-pick after an idle gap (and reactive rebalancing).
    Flowlet,
    /// Pin a flow to the port its first packet took: no re-pick, no rebalancing.
    Assigned,
}

/// `lb.valiant.granularity`: a random intermediate per packet or per flow.
#[derive(Clone, Copy, Debug, Deserialize, Serialize, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ValiantGranularity {
    /// A fresh intermediate per data packet.
    Packet,
    /// One intermediate per flow (VL2 style).
    Flow,
}

/// How a choice between equally good options is broken.
#[derive(Clone, Copy, Debug, Deserialize, Serialize, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Ties {
    /// The lowest index.
    Lowest,
    /// Uniformly at random (the host's or switch's own stream).
    Random,
}

/// Which switches a `[[lb.mixed]]` entry applies to.
#[derive(Clone, Copy, Debug, Deserialize, Serialize, PartialEq, Eq, JsonSchema)]
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
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct MixedDeployment {
    /// The switch policy of the selected switches (a switch-side one; see `lb.mixed`).
    pub policy: LbPolicy,
    /// Which switches get it.
    pub select: MixSelect,
    /// With `random_switches` and `random_pods` (required there): the share selected, in [0, 1],
    /// drawn from the seed.
    pub fraction: Option<f64>,
}

registry! {
    /// `host.cc`: the transport and its congestion control.
    pub enum CcKind {
        /// Paced sender, no congestion control (the Ofan paper's LB-isolation mode).
        None => "none",
        /// A fixed window of `host.window_bdp` bandwidth-delay products per flow.
        Constant => "constant",
        /// DCTCP window rules (`[host.dctcp]`).
        Dctcp => "dctcp",
        /// UEC NSCC (`[host.nscc]`).
        Nscc => "nscc",
        /// Swift (`[host.swift]`).
        Swift => "swift",
        /// Swift fed the median of recent delays (`[host.swift]`, `[host.mswift]`).
        Mswift => "mswift",
        /// NDP, the receiver-driven transport (`[host.ndp]`; needs `switch.trim`): an initial
        /// window, then one packet per pull from the receiver.
        Ndp => "ndp",
    }
}

/// `host.reorder_paths`: whose paths the default loss threshold (3 + paths) counts.
#[derive(Clone, Copy, Debug, Deserialize, Serialize, PartialEq, Eq, JsonSchema)]
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
#[derive(Clone, Copy, Debug, Deserialize, Serialize, PartialEq, Eq, JsonSchema)]
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

/// `[host]`: the transport and congestion control of the hosts.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct HostConfig {
    /// The transport: paced without congestion control (`none`), or the reliable transport with a
    /// window rule (the guide's Transports and congestion control page). Under `none` the receiver
    /// ACKs every data packet with a `packet.ack_bytes` ACK echoing its ECN mark, which `reps`,
    /// `bitmap` and `mixed` learn from while the rate stays `host.load` × line rate; a lost packet
    /// is never resent, so its flow never completes, and the run warns. `ndp` needs `switch.trim =
    /// true` and `host.ack_coalesce_bytes = 0`.
    pub cc: CcKind,
    /// Data pacing rate as a fraction of the host's line rate (pacing is computed in parts per
    /// million).
    #[schemars(range(min = 1e-6, max = 1))]
    pub load: f64,
    /// `constant`: the window, in bandwidth-delay products, BDP = host line rate × the base RTT of
    /// the fabric's longest path (host 0 to the last host: data store-and-forward out, an ACK
    /// back); must hold at least one data packet.
    #[schemars(range(max = 1e6), extend("exclusiveMinimum" = 0))]
    pub window_bdp: f64,
    /// Smallest retransmission timeout, in µs: RTO = max(this, srtt + 4·rttvar), no back-off.
    /// Unset: 1000 µs under `ndp` (opera-sim's `NdpSrc::setMinRTO(1000)`); otherwise 15 µs + 6 ×
    /// the time to drain a full switch buffer at the host's line rate (UEC htsim `main_uec`), or
    /// 100 µs with unlimited buffers.
    #[schemars(range(max = 1e9), extend("exclusiveMinimum" = 0))]
    pub rto_min_us: Option<f64>,
    /// Receivers ACK once this many bytes of data (whole packets, headers included, as UEC htsim
    /// counts) are unacknowledged (0: every packet; UEC htsim: 16384), and at once on ECN,
    /// duplicates, the flow's first packet, ACK requests (the sender asks on the last packet, when
    /// the window fills, and on retransmissions) and when the gaps close after a request;
    /// out-of-order data alone does not trigger an ACK. Must be 0 under `ndp`.
    pub ack_coalesce_bytes: u64,
    /// The threshold of the loss rule (`loss_detection`), in packets, the same for every flow.
    /// Unset: 3 + a number of shortest paths (htsim's spraying dupACK threshold, as the Ofan paper
    /// describes it for Fig. 12): between the farthest hosts, or of each flow under `reorder_paths
    /// = "flow"`. Off with `switch.trim` (NACKs report losses) and for `nscc` (UEC htsim's
    /// transport, SLEEK off, finds silent losses by its timer only).
    #[schemars(range(max = 1_073_741_824))]
    pub reorder_threshold_pkts: Option<u32>,
    /// Whose shortest paths the unset `reorder_threshold_pkts` counts.
    pub reorder_paths: ReorderPaths,
    /// How the reliable transport finds silent losses (lost without a NACK). Under `dupack` the
    /// threshold-th ACK in a row that does not advance the cumulative point also starts fast
    /// recovery, one loss for the CCA; a later partial-ACK loss gives no CCA signal; a timeout
    /// holds off the next fast retransmit until the point passes what was sent.
    pub loss_detection: LossDetection,
    /// `host.cc = "dctcp"`: DCTCP's parameters.
    pub dctcp: DctcpConfig,
    /// `host.cc = "nscc"`: NSCC's parameters.
    pub nscc: NsccConfig,
    /// `host.cc = "swift"` and `"mswift"`: Swift's parameters.
    pub swift: SwiftConfig,
    /// `host.cc = "mswift"`: MSwift's parameters.
    pub mswift: MswiftConfig,
    /// `host.cc = "ndp"`: NDP's parameters.
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

registry! {
    /// `workload.kind`: the traffic pattern.
    pub enum WorkloadKind {
        /// Every host sends `message_bytes` to one other host, each host receiving once (a random
        /// derangement from the seed: no host sends to itself; `inter_pod`, `inter_rack`).
        Permutation => "permutation",
        /// Every host sends `message_bytes` to every other host.
        AllToAll => "all_to_all",
        /// The flows of an htsim connection-matrix file (`file`).
        Matrix => "matrix",
        /// The PSP paper's load: every host sends back-to-back `message_bytes` messages at `load`
        /// for `duration_us`, to hosts of other pods or leaves (`destinations`).
        Continuous => "continuous",
        /// The Opera paper, §5 (`workload/poisson.rs`): every host starts flows as a Poisson
        /// process of rate λ_host = `load` · line rate (bytes/s) / mean size for `duration_us`,
        /// each to a uniformly random host of another rack (edge switch or leaf), so arrivals are
        /// Poisson network-wide over the H · (H − hosts per rack) inter-rack pairs; sizes from
        /// `size_cdf` (mean Σ bytes_i · (cdf_i − cdf_{i−1}): datamining 7,861,995 B, websearch
        /// 1,875,928 B).
        Poisson => "poisson",
        /// Every host sends `message_bytes` to every host of other racks (H − hosts per rack flows
        /// each), at time 0 or staggered over `stagger_us` (`workload/shuffle.rs`).
        Shuffle => "shuffle",
        /// Opera's hot rack: host i of one random rack sends `message_bytes` to host i of another
        /// (`workload/rack_patterns.rs`).
        HotRack => "hot_rack",
        /// Opera's skew[θ, 1]: a random share θ = `active_racks` of the racks, at least two, is
        /// active; a random permutation among their hosts with no rack-local pair, each sending
        /// `message_bytes`.
        Skew => "skew",
        /// A ring collective (`collective`) over `hosts`: every step waits for the previous
        /// step's chunk from the previous rank.
        Ring => "ring",
        /// A pairwise collective (`collective` = all_to_all or all_to_all_v) over `hosts`: every
        /// rank sends directly to every other.
        Pairwise => "pairwise",
        /// Llama-3 FSDP2/HSDP: the inter-server gradient/weight rings of `gpus` GPUs
        /// (`workload/fsdp2.rs`).
        Fsdp2 => "fsdp2",
        /// Mixture-of-experts dispatch then combine all-to-all-v within expert-parallel groups of
        /// `ep_size` GPUs (`workload/moe.rs`).
        Moe => "moe",
    }
}

/// `workload.placement`: how servers of `gpus_per_server` GPUs are placed on the fabric's
/// host ports.
#[derive(Clone, Copy, Debug, Default, Deserialize, Serialize, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum GpuPlacement {
    /// Server s on host ports s·g … s·g + g − 1.
    #[default]
    Ordered,
    /// Servers on distinct random slots of g consecutive host ports, drawn from the seed.
    Random,
}

/// `workload.mode` of an FSDP2 workload.
#[derive(Clone, Copy, Debug, Default, Deserialize, Serialize, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Fsdp2Mode {
    /// One ring step of every ring at once (the Ofan paper's evaluation).
    #[default]
    Phase,
    /// The full ring collectives of `layers` layers, every step waiting for its
    /// predecessor's data.
    Ring,
}

registry! {
    /// `workload.moe.dispatch`: how tokens cross servers.
    #[derive(Default)]
    pub enum MoeDispatch {
        /// Every token goes once to each destination GPU on another server.
        Flat => "flat",
        /// DeepEP: once per destination server, to the GPU of the sender's local rank there,
        /// then NVLink fan-out (reported, not simulated).
        #[default]
        Hierarchical => "hierarchical",
    }
}

registry! {
    /// What `workload.moe.imbalance` measures per GPU (its max / mean over GPUs).
    #[derive(Default)]
    pub enum MoeImbalanceOf {
        /// The token copies its experts receive (not deduplicated; NVLink copies included).
        #[default]
        Experts => "experts",
        /// The tokens it receives over the scale-out network (the matrix's column sums, what
        /// its network downlink carries).
        Network => "network",
    }
}

/// `[workload.moe]`: the synthetic routing generator (`workload::moe_trace`), used when
/// `workload.file` names no trace.
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq, JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct MoeConfig {
    /// Routed experts per layer, spread evenly over the `ep_size` GPUs of a group.
    pub experts: u32,
    /// Experts each token is routed to, from 1 to `experts`.
    #[schemars(range(min = 1))]
    pub top_k: u32,
    /// Tokens each GPU routes (required without a trace file, refused with one).
    #[schemars(range(min = 1))]
    pub tokens_per_gpu: Option<u32>,
    /// Busiest GPU over the mean, before EPLB, of what `imbalance_of` names: the generator's
    /// skew is calibrated to it (the Ofan set-up: 1.48).
    #[schemars(range(min = 1, max = 100))]
    pub imbalance: f64,
    /// What `imbalance` measures per GPU: `"experts"` (the token copies its experts receive,
    /// NVLink copies included) or `"network"` (the tokens it receives over the scale-out
    /// network, what its downlink carries).
    pub imbalance_of: MoeImbalanceOf,
    /// EPLB-style replication of hot experts and balanced packing.
    pub eplb: bool,
    /// `eplb` only: extra expert slots. Unset: the generator's default.
    pub redundant_experts: Option<u32>,
    /// How tokens cross servers.
    pub dispatch: MoeDispatch,
    /// Bytes on the wire per token copy (hidden 4096 × 2 B).
    #[schemars(range(min = 1))]
    pub bytes_per_token: u64,
}

impl Default for MoeConfig {
    fn default() -> Self {
        MoeConfig {
            experts: 128,
            top_k: 8,
            tokens_per_gpu: None,
            imbalance: 1.48,
            imbalance_of: MoeImbalanceOf::Experts,
            eplb: false,
            redundant_experts: None,
            dispatch: MoeDispatch::Hierarchical,
            bytes_per_token: 8192,
        }
    }
}

/// `workload.collective`: the operation; `workload.kind` ("ring" or "pairwise") is the
/// Which of the PSP paper's band rules `psp` and `band_jsq` use (`lb.psp.variant`; the
/// behaviour is `lb::psp`'s).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum PspVariant {
    /// Fig. 3: n−1 thresholds compared, weights n..1.
    #[default]
    Fig3,
    /// Table IV: n thresholds compared, weights n−1..0, 0.
    Table4,
}

/// Where a continuous workload's messages go (`workload.destinations`).
#[derive(Clone, Copy, Debug, Default, Deserialize, Serialize, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Destinations {
    /// Each message to a uniformly random host of another pod or leaf.
    #[default]
    Random,
    /// Round i: every host h sends to (h + s_i) mod n, one offset per round drawn from the
    /// seed among those that leave the group, so every host also receives one message per
    /// round.
    Shift,
}

registry! {
    /// `workload.collective`: the collective a ring or pairwise workload runs (`kind` picks the
    /// algorithm, which runs some of them).
    #[derive(Default)]
    pub enum Collective {
        /// Ring: ReduceScatter then AllGather, 2(n − 1) dependent steps.
        #[default]
        AllReduce => "all_reduce",
        /// Ring: n − 1 dependent steps.
        ReduceScatter => "reduce_scatter",
        /// Ring: n − 1 dependent steps.
        AllGather => "all_gather",
        /// Pairwise: every rank sends ⌈message_bytes / ranks⌉ to every other rank.
        AllToAll => "all_to_all",
        /// Pairwise: every rank sends to every other the bytes of a rank × rank CSV matrix
        /// (`workload.file`).
        AllToAllV => "all_to_all_v",
    }
}

impl Collective {
    /// Whether `kind = "ring"` runs it (otherwise `kind = "pairwise"` does).
    pub fn is_ring(self) -> bool {
        matches!(
            self,
            Collective::AllReduce | Collective::ReduceScatter | Collective::AllGather
        )
    }
}

/// `[workload]`: the traffic.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct WorkloadConfig {
    /// The traffic pattern (the guide's Workloads page for ring, pairwise, FSDP2/HSDP, MoE,
    /// connection matrices and MoE traces).
    pub kind: WorkloadKind,
    /// Payload bytes per flow (permutation, all_to_all, shuffle, hot_rack, skew, continuous
    /// messages); ring and pairwise `all_to_all`: the buffer every rank holds, each step (ring) or
    /// each message to another rank (all-to-all) carrying a chunk of ⌈message_bytes / ranks⌉ bytes
    /// (rounded up: every chunk carries the same bytes); unused by `all_to_all_v`. At least 1.
    #[schemars(range(min = 1))]
    pub message_bytes: u64,
    /// htsim connection-matrix file (matrix, required there), the rank × rank byte matrix (CSV) of
    /// pairwise `all_to_all_v` (required there), or a moe routing trace (`weft moe-trace`),
    /// relative to the scenario file's folder.
    pub file: Option<PathBuf>,
    /// Permutation only: every host sends to a host of another pod (fat tree) or leaf (leaf-spine),
    /// as in the Ofan paper's link-overload figure (a shuffle whose same-pod pairs are repaired by
    /// random swaps).
    pub inter_pod: bool,
    /// Permutation only: every host sends to a host of another rack (Opera rack, edge switch,
    /// leaf): the Opera paper's host permutation.
    pub inter_rack: bool,
    /// Skew only: θ, the share of racks that is active (skew[θ, 1]), rounded, at least two racks.
    /// Unset: 0.2.
    #[schemars(range(max = 1), extend("exclusiveMinimum" = 0))]
    pub active_racks: Option<f64>,
    /// Continuous: offered load as a fraction of the host's line rate (a host starts a message
    /// every (its wire time at line rate) / load; unset: 1); poisson (required): the fraction of
    /// aggregate host link bandwidth the flows' payload offers.
    #[schemars(range(max = 1), extend("exclusiveMinimum" = 0))]
    pub load: Option<f64>,
    /// Continuous and poisson (required): how long hosts keep starting messages, in µs.
    #[schemars(range(max = 1e9), extend("exclusiveMinimum" = 0))]
    pub duration_us: Option<f64>,
    /// Continuous only (an error with other kinds): where messages go. `shift` gives the rounds of
    /// a shift all-to-all, with no oversubscribed last hop (fat trees and leaf-spines only).
    pub destinations: Destinations,
    /// Poisson (required): the flow-size CDF file, relative to the scenario file's folder:
    /// `bytes,cdf` lines (an optional `bytes,cdf` header, `#` comments), sizes strictly increasing,
    /// probabilities non-decreasing in [0, 1] ending at 1; a bad file stops with its name and line.
    /// Sizes are drawn by step sampling (the first table size whose CDF ≥ U, no interpolation).
    pub size_cdf: Option<PathBuf>,
    /// Shuffle: flow i of a host starts uniformly at random within [i, i + 1) · stagger / (its flow
    /// count) (seeded), so starts are uniform over the stagger and in order per host, in µs; unset
    /// or 0: all at time 0.
    #[schemars(range(min = 0, max = 1e9))]
    pub stagger_us: Option<f64>,
    /// Shuffle on Opera (an error with other kinds or fabrics): the application tags every flow
    /// bulk (true: RotorLB) or low-latency (false), whatever `topology.opera.bulk_cutoff_bytes`
    /// says (the paper tags its 100 KB shuffle flows bulk). Unset: the cutoff decides.
    pub bulk: Option<bool>,
    /// Poisson only: the combined workload of the Opera paper's Fig. 10, an all-to-all shuffle
    /// across racks sent besides the Poisson flows (`scenarios/opera/combined_*.toml`).
    pub with_shuffle: Option<WithShuffle>,
    /// Background flows pinned to an explicit path at a fixed rate (the PSP paper's "200 Gb/s on
    /// tor15-spine8-tor10"), sent besides the workload; not on an expander. Node numbers: hosts
    /// first, then edge/leaf switches, then aggregation/spine, then core (`weft validate` prints
    /// the counts).
    pub background: Vec<BackgroundFlow>,
    /// Ring and pairwise: the operation; `kind` is the algorithm. Pairwise must set it (the default
    /// is a ring's). Not used with fsdp2 and moe.
    pub collective: Collective,
    /// Ring and pairwise only: the member hosts in rank order (rank r is the r-th; each at most
    /// once, at least two). Unset: every host, 0, 1, ….
    pub hosts: Option<Vec<u32>>,
    /// Ring and fsdp2 ring mode: compute delay between a step's chunk fully arriving at a rank and
    /// that rank's next step starting; moe: expert compute time between a GPU's last dispatch data
    /// arriving and its combine starting; in ns.
    pub step_delay_ns: f64,
    /// fsdp2 and moe: GPUs of the job, a multiple of `gpus_per_server`, at least two servers, at
    /// most the host ports. Unset: every host port.
    pub gpus: Option<u32>,
    /// fsdp2 and moe: GPUs per server, one per host port.
    #[schemars(range(min = 1))]
    pub gpus_per_server: u32,
    /// fsdp2 and moe: where servers of `gpus_per_server` GPUs go on the fabric's host ports.
    pub placement: GpuPlacement,
    /// fsdp2: "llama3-8b", "llama3-70b" or "llama3-405b" (32, 80, 126 layers of 8, 70, 405 × 10⁹ /
    /// layers parameters; `scenario/ai.rs`), unless `layer_params` is given.
    pub model: Option<String>,
    /// fsdp2, instead of `model`: the parameter count of each layer (1 to 255 layers, none 0).
    pub layer_params: Option<Vec<u64>>,
    /// fsdp2: bytes per parameter of each shard (1: FP8).
    #[schemars(range(min = 1, max = 8))]
    pub bytes_per_param: u32,
    /// fsdp2: shards each ring step carries: 2 (the gradient ReduceScatter shard and the weight
    /// AllGather shard, n − 1 steps per layer) or 1 (a layer is a ring AllReduce of 2(n − 1)
    /// one-shard steps).
    #[schemars(range(min = 1, max = 2))]
    pub shards_per_step: u32,
    /// fsdp2: one step of every ring at once, or whole layers.
    pub mode: Fsdp2Mode,
    /// fsdp2 ring mode: layers to run, from 1 to the model's. Unset: all the model's.
    #[schemars(range(min = 1))]
    pub layers: Option<u32>,
    /// fsdp2 ring mode: a cap on the dependent steps of each ring member (at least 1).
    #[schemars(range(min = 1))]
    pub max_steps: Option<u32>,
    /// moe: GPUs per expert-parallel group, a multiple of `gpus_per_server` spanning at least two
    /// servers and dividing `gpus`; groups are consecutive servers. Unset: all `gpus`.
    pub ep_size: Option<u32>,
    /// moe: the synthetic routing generator's parameters.
    pub moe: MoeConfig,
}

/// `[workload.with_shuffle]`: the shuffle of a combined workload. Every host sends
/// `message_bytes` to every host of other racks, starting at `start_us` (or uniformly over
/// `[start_us, start_us + stagger_us)`), besides the Poisson flows; a host starts its flows of
/// both kinds in order of start time (Poisson first on a tie). Results report the two parts
/// as the phases "poisson" and "shuffle".
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq, JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct WithShuffle {
    /// Payload bytes of each shuffle flow (default 100,000: the paper's median Facebook-Hadoop
    /// inter-rack flow).
    pub message_bytes: u64,
    /// When the shuffle starts, in µs (the paper's Opera runs: 100 ms).
    #[schemars(range(min = 0, max = 1e9))]
    pub start_us: f64,
    /// The shuffle's flows start uniformly over this many µs after `start_us`, as
    /// `workload.stagger_us` does (0: all at once; the paper staggers the static networks' over 10
    /// ms).
    #[schemars(range(min = 0, max = 1e9))]
    pub stagger_us: f64,
    /// Opera only: the application tags every shuffle flow bulk (true: RotorLB) or low-latency
    /// (false); unset: `topology.opera.bulk_cutoff_bytes` decides. The Poisson flows are classified
    /// by the cutoff (the paper: cutoff 30 MB, shuffle tagged bulk).
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
#[derive(Clone, Debug, Default, Deserialize, Serialize, PartialEq, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct BackgroundFlow {
    /// The sending host.
    pub src: u32,
    /// The receiving host.
    pub dst: u32,
    /// The switch node ids from `src`'s edge switch (leaf) to `dst`'s, each linked to the next on a
    /// shortest path (e.g. leaf-spine `[leaf, spine, leaf]`). Switches forward the flow along it
    /// whatever their policy; its ACKs return by the policy.
    pub path: Vec<u32>,
    /// Pacing rate of the flow's data frames on the wire (gap included), in Gb/s. At `src`'s NIC
    /// its due packet goes before the workload's flows, which share the rest of the line rate.
    pub rate_gbps: f64,
    /// How long the flow is sent, from time 0, in µs. Unset: `workload.duration_us`.
    pub duration_us: Option<f64>,
    /// Where the flow ends: `"host"` delivers it to `dst`; `"switch"` ends it at the last
    /// switch of `path`, which absorbs each data packet and ACKs it for `dst`, so the flow
    /// loads only its path's links (and `src`'s NIC), not `dst`'s last hop. `"switch"` needs
    /// `host.cc = "none"` (a switch keeps no receiver state for a reliable transport).
    #[serde(default)]
    pub ends: BackgroundEnd,
}

/// Where a background flow ends (`workload.background[].ends`).
#[derive(Clone, Copy, Debug, Default, Deserialize, Serialize, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum BackgroundEnd {
    /// At host `dst`, as any flow.
    #[default]
    Host,
    /// At `dst`'s edge switch (the last of `path`): a fixed load on the path's links only,
    /// as the PSP paper's fixed flow "along tor15-spine8-tor10", which names switches only.
    Switch,
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
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct ReportConfig {
    /// Sampling interval of the port queues, in µs: `results.buffer_occupancy`,
    /// `results.switch_occupancy` and, with `--out`, `timeseries.csv`.
    #[schemars(range(min = 0.001, max = 1e9))]
    pub timeseries_us: f64,
    /// With `--out`: hosts whose flows' windows go to `cwnd.csv` after every ACK.
    pub trace_hosts: Vec<u32>,
    /// Upper edges, in bytes (whole, increasing, 1 to 2^53), of the flow-size bins of
    /// `results.fct_by_size` and the `fct_ns.bin_*` histograms of `latency.hlog`: a completed
    /// flow's FCT goes to the first bin whose edge is ≥ its payload bytes, or to an overflow bin
    /// after the last edge. The default decades 10^4 … 10^8 are the flow-size axis of the Opera
    /// paper's FCT figures; empty: off. Every workload.
    pub fct_bins_bytes: Vec<f64>,
    /// With `--out`: every completed flow goes to `flows.csv`
    /// (`src,index,dst,bytes,start_ps,fct_ps,phase`; `phase` empty without phases), sorted by start
    /// time, then source and index, identical for any threads, partitions or ranks; without `--out`
    /// a warning says nothing is written. 40 B of memory per flow until the end, so off by default.
    /// For FCTs split by arrival time, pair or size that the histograms cannot give, e.g.
    /// `scenarios/opera/fct_by_arrival.sh DIR` (FCT percentiles of the websearch flows arriving
    /// before and during the combined workload's shuffle).
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
