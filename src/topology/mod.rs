//! The fabric: nodes (hosts first, then switches), their output ports, the links between
//! ports, and routing. The description is immutable and small (a few arrays indexed by node or
//! global port id), so every rank and thread shares one copy; runtime state (queues, LB
//! pointers, transports) lives in the engine's partitions.
//!
//! The fabric owns everything topology-specific the rest of weft needs: routes
//! ([`Fabric::route`]), links ([`Fabric::peer`], [`Fabric::link`]), stage names, shortest path
//! walks ([`Fabric::path`]), generic addressing for LB state ([`Fabric::subtree`],
//! [`Fabric::lca_tier`], [`Fabric::tier_uplinks`]) and partition grouping
//! ([`Fabric::group_of`]). A new topology is a new file implementing the same methods as
//! `fat_tree.rs` (the trait `shape::ShapeRules`) and one line of `shapes!` in `shape.rs`.
//!
//! Invariants:
//! - hosts are nodes `0..num_hosts` and have exactly one port (port 0, to their edge/leaf);
//! - every port `p` of node `n` is linked to exactly one port of one other node, and the link is
//!   symmetric: `peer(peer(n, p)) == (n, p)`;
//! - for a switch, `route(switch, dst, now)` is either the unique valid output port or a
//!   non-empty set of candidate ports among which the LB policy chooses; following any choice
//!   reaches `dst` on a shortest path;
//! - `now` is an argument of `route` and `peer` so that time-varying fabrics (Opera) compute
//!   them from the time and the seed alone; static fabrics ignore it.

pub(crate) mod expander;
mod failures;
mod fat_tree;
mod leaf_spine;
pub(crate) mod opera;
pub(crate) mod pgft;
mod racks;
pub(crate) mod regular_graph;
mod shape;

pub use failures::contains;
use failures::FailureRoutes;
pub use opera::OperaFacts;
use shape::{Shape, ShapeRules};

use crate::rng::{stream, Purpose};
use crate::scenario::{FieldError, Scenario, TopologyKind};
use crate::time::{Rate, PS_PER_NS};

/// A node's index: hosts are `0..num_hosts`, switches follow.
pub type NodeId = u32;

/// The rate and propagation latency of a class of links (a tier).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LinkParams {
    /// Line rate.
    pub rate: Rate,
    /// Propagation latency, in ps.
    pub latency_ps: u64,
    /// Serialization time of one byte, when the rate divides evenly (fast path).
    ps_per_byte: Option<u64>,
}

impl LinkParams {
    /// A link class of rate `rate` and latency `latency_ps`.
    pub fn new(rate: Rate, latency_ps: u64) -> LinkParams {
        let exact = 8_000_000_000_000u64.checked_rem(rate.bps) == Some(0);
        let ps_per_byte = exact.then(|| 8_000_000_000_000u64 / rate.bps);
        LinkParams {
            rate,
            latency_ps,
            ps_per_byte,
        }
    }

    /// Time to put `bytes` on the wire, in ps.
    #[inline]
    pub fn serialization_ps(&self, bytes: u64) -> u64 {
        match self.ps_per_byte {
            Some(p) => p * bytes,
            None => self.rate.serialization_ps(bytes),
        }
    }
}

/// The ports among which a switch may choose: a set, usually a contiguous range of uplinks,
/// or an explicit list (fabrics with failed links or irregular wiring).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Candidates<'a> {
    /// Ports `first..first + count`.
    Range {
        /// The first port.
        first: u16,
        /// How many ports.
        count: u16,
    },
    /// These ports, in this order.
    List(&'a [u16]),
}

impl Candidates<'_> {
    /// How many candidate ports.
    #[inline]
    pub fn len(&self) -> u16 {
        match self {
            Candidates::Range { count, .. } => *count,
            Candidates::List(l) => l.len() as u16,
        }
    }
    /// Whether there is no candidate.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
    /// The `i`-th candidate port (`i < len()`).
    #[inline]
    pub fn get(&self, i: u16) -> u16 {
        debug_assert!(i < self.len());
        match self {
            Candidates::Range { first, .. } => first + i,
            Candidates::List(l) => l[i as usize],
        }
    }
    /// The candidate ports, in order.
    pub fn iter(&self) -> impl Iterator<Item = u16> + '_ {
        (0..self.len()).map(move |i| self.get(i))
    }
}

/// Where a switch may send a packet for a destination host.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Route<'a> {
    /// Exactly one valid output port.
    Port(u16),
    /// Any of these ports; the LB policy chooses.
    Choice(Candidates<'a>),
}

/// A built fabric: its nodes (hosts, then switches), their ports, the links between them
/// and the routes switches choose among. Opera's links change peer over time.
pub struct Fabric {
    /// Which kind of fabric.
    pub kind: TopologyKind,
    /// The switch radix (`topology.k`).
    pub k: u32,
    /// Hosts, numbered `0..num_hosts`.
    pub num_hosts: u32,
    shape: Shape,
    node_tier: Vec<u8>,
    /// The highest tier (cores, spines).
    top_tier: u8,
    port_base: Vec<u32>,
    port_peer_node: Vec<NodeId>,
    port_peer_port: Vec<u16>,
    port_link_class: Vec<u8>,
    port_stage: Vec<u8>,
    link_classes: Vec<LinkParams>,
    /// The scenario field each class's latency came from (for error messages).
    latency_fields: Vec<String>,
    stage_names: &'static [&'static str],
    /// Routes around failed links (`[failures]`); `None` in a fault-free fabric.
    failures: Option<Box<FailureRoutes>>,
    /// Some route offers parallel down links as a choice (a PGFT with p_l > 1 for l ≥ 2).
    parallel_down: bool,
    /// The end nodes' types (`[topology.pgft]`; one type elsewhere).
    host_types: crate::scenario::HostTypes,
}

/// What a topology builder hands to [`Fabric::assemble`]: per node, its tier and its ports as
/// (peer node, peer port, link class).
struct Wiring {
    node_tier: Vec<u8>,
    ports: Vec<Vec<(NodeId, u16, u8)>>,
}

impl Fabric {
    /// [`Fabric::try_build`] of a scenario known to be buildable (tests, examples).
    pub fn build(s: &Scenario) -> Fabric {
        Fabric::try_build(s).unwrap_or_else(|e| panic!("cannot build the fabric: {e}"))
    }

    /// Builds the fabric of a validated scenario; fails (naming the field) only where the
    /// topology's own construction can (Opera: no connected schedule for these racks;
    /// expander: every random graph drawn is disconnected).
    pub fn try_build(s: &Scenario) -> Result<Fabric, FieldError> {
        let t = &s.topology;
        let mut latency_fields = vec![];
        let link_classes: Vec<LinkParams> = t
            .tier_names()
            .iter()
            .map(|name| {
                let o = t.tiers.get(*name);
                let gbps = o.and_then(|o| o.rate_gbps).unwrap_or(t.link_rate_gbps);
                let ns = o.and_then(|o| o.latency_ns);
                latency_fields.push(match ns {
                    Some(_) => format!("topology.tiers.{name}.latency_ns"),
                    None => "topology.link_latency_ns".to_string(),
                });
                let ns = ns.unwrap_or(t.link_latency_ns);
                LinkParams::new(
                    Rate::from_gbps(gbps),
                    (ns * PS_PER_NS as f64).round() as u64,
                )
            })
            .collect();
        let (shape, num_hosts, wiring, stages) = match t.kind {
            TopologyKind::FatTree => {
                let ft = fat_tree::FatTree::new(t.k);
                (
                    Shape::FatTree(ft),
                    ft.num_hosts(),
                    ft.wiring(),
                    fat_tree::STAGES,
                )
            }
            TopologyKind::LeafSpine => {
                let (leaves, spines, hosts) = t.leaf_spine_dims();
                let ls = leaf_spine::LeafSpine::new(leaves, spines, hosts);
                (
                    Shape::LeafSpine(ls),
                    ls.num_hosts(),
                    ls.wiring(),
                    leaf_spine::STAGES,
                )
            }
            TopologyKind::Pgft => {
                let g = pgft::Pgft::from_config(t.pgft.as_ref().expect("validated"));
                (
                    Shape::Pgft(g),
                    g.num_hosts(),
                    g.wiring(),
                    crate::scenario::pgft_stage_names(g.h as u32),
                )
            }
            TopologyKind::Opera => {
                let params = opera::OperaFabric::params(s, &link_classes[1])?;
                let of = opera::OperaFabric::new(&params)?;
                let (hosts, wiring) = (of.num_hosts(), of.wiring());
                (Shape::Opera(Box::new(of)), hosts, wiring, opera::STAGES)
            }
            TopologyKind::Expander => {
                let (racks, d, u) = t.rack_dims();
                let realizations = t.expander.realizations;
                let e = expander::Expander::build(racks, d, u, realizations, s.seed)?;
                let (hosts, wiring) = (e.num_hosts(), e.wiring());
                (
                    Shape::Expander(Box::new(e)),
                    hosts,
                    wiring,
                    expander::STAGES,
                )
            }
        };
        // The switch radix: a flat fabric's ToR has hosts and ToR-to-ToR ports.
        let k = match t.kind {
            TopologyKind::Expander => {
                let (_, d, u) = t.rack_dims();
                d + u
            }
            _ => t.k,
        };
        let mut f = Fabric::assemble(t.kind, k, num_hosts, shape, wiring, link_classes);
        f.latency_fields = latency_fields;
        f.stage_names = stages;
        f.host_types = t.host_types(num_hosts)?;
        f.parallel_down = f.as_pgft().is_some_and(|g| (2..=g.h).any(|l| g.p(l) > 1));
        Ok(f)
    }

    /// The Opera fabric's schedule and label routing, if this is one.
    #[inline]
    pub(crate) fn opera(&self) -> Option<&opera::OperaFabric> {
        match &self.shape {
            Shape::Opera(o) => Some(o),
            _ => None,
        }
    }

    /// Whether some link's peer changes with time (Opera's rotor uplinks).
    pub fn is_time_varying(&self) -> bool {
        self.opera().is_some()
    }

    /// Every (node, port) that port `p` of node `n` can lead to at some time: the one peer of
    /// a static link, every ToR a rotor uplink reaches over a cycle.
    pub fn peers_over_time(&self, n: NodeId, p: u16) -> Vec<(NodeId, u16)> {
        match self.opera() {
            Some(o) if o.is_uplink(n, p) => o
                .peers_over_cycle(n, p)
                .into_iter()
                .map(|t| (t, p))
                .collect(),
            _ => vec![self.peer(n, p, 0)],
        }
    }

    fn assemble(
        kind: TopologyKind,
        k: u32,
        num_hosts: u32,
        shape: Shape,
        w: Wiring,
        link_classes: Vec<LinkParams>,
    ) -> Fabric {
        let top = *w.node_tier.iter().max().expect("nodes");
        // Flat fabrics (expander, Opera) link switches of the same tier: their lateral stage
        // comes between the upward and the downward ones.
        let lateral = w.ports.iter().enumerate().any(|(n, ports)| {
            ports
                .iter()
                .any(|&(pn, _, _)| w.node_tier[pn as usize] == w.node_tier[n])
        }) as u8;
        let mut port_base = Vec::with_capacity(w.ports.len() + 1);
        let (mut peer_node, mut peer_port, mut class, mut stage) = (vec![], vec![], vec![], vec![]);
        let mut base = 0u32;
        for (n, ports) in w.ports.iter().enumerate() {
            port_base.push(base);
            for &(pn, pp, c) in ports {
                let (from, to) = (w.node_tier[n], w.node_tier[pn as usize]);
                // Upward stages are numbered by the sending tier, downward ones continue after
                // the top: host->edge = 0 ... top-1 -> top = top-1, top -> top-1 = top, ...
                // (one later in a fabric with lateral links, whose stage is `top`).
                let st = match to.cmp(&from) {
                    std::cmp::Ordering::Greater => from,
                    std::cmp::Ordering::Equal => top,
                    std::cmp::Ordering::Less => top + lateral + (top - from),
                };
                peer_node.push(pn);
                peer_port.push(pp);
                class.push(c);
                stage.push(st);
            }
            base += ports.len() as u32;
        }
        port_base.push(base);
        let f = Fabric {
            kind,
            k,
            num_hosts,
            shape,
            node_tier: w.node_tier,
            top_tier: top,
            port_base,
            port_peer_node: peer_node,
            port_peer_port: peer_port,
            port_link_class: class,
            port_stage: stage,
            link_classes,
            latency_fields: vec![],
            stage_names: &[],
            failures: None,
            parallel_down: false,
            host_types: crate::scenario::HostTypes::uniform(num_hosts),
        };
        assert!(f.check_symmetric(), "topology wiring is not symmetric");
        f
    }

    /// Applies `topology.link_rates` (after the per-tier rates): each override gives the
    /// links it names (both directions) a class of their own with its rate and the link's
    /// latency. Links chosen by fraction are drawn from the seed, so every rank agrees.
    pub fn with_link_rates(mut self, s: &Scenario) -> Result<Fabric, FieldError> {
        use rand::seq::SliceRandom;
        let names = s.topology.tier_names();
        for (i, o) in s.topology.link_rates.iter().enumerate() {
            let chosen: Vec<(NodeId, u16)> = match (&o.tier, o.fraction, o.node, o.port) {
                (Some(tier), Some(fraction), _, _) => {
                    let class = names.iter().position(|n| n == tier).expect("validated") as u8;
                    let mut links = self.upward_links_of_class(class);
                    let rng = &mut stream(s.seed, i as u64, Purpose::Topology);
                    links.shuffle(rng);
                    links.truncate((fraction * links.len() as f64).round() as usize);
                    links
                }
                (_, _, Some(node), Some(port)) => {
                    if node >= self.num_nodes() || port >= self.num_ports(node) {
                        return Err(FieldError::new(
                            format!("topology.link_rates[{i}]"),
                            format!("node {node} has no port {port}"),
                        ));
                    }
                    vec![(node, port)]
                }
                _ => unreachable!("validated: tier and fraction, or node and port"),
            };
            let rate = Rate::from_gbps(o.rate_gbps);
            for (n, p) in chosen {
                self.set_link_rate(n, p, rate, i)?;
            }
        }
        Ok(self)
    }

    /// One port per link of `class`: the one leaving the lower tier (a lateral link: the
    /// one leaving the lower node id).
    fn upward_links_of_class(&self, class: u8) -> Vec<(NodeId, u16)> {
        (0..self.num_nodes())
            .flat_map(|n| (0..self.num_ports(n)).map(move |p| (n, p)))
            .filter(|&(n, p)| {
                let g = self.port_id(n, p) as usize;
                let peer = self.port_peer_node[g];
                self.port_link_class[g] == class && (self.tier(peer), peer) > (self.tier(n), n)
            })
            .collect()
    }

    /// Gives the link leaving port `p` of `n` (and its reverse) `rate` in a class of its own
    /// (shared by the links of override `i` that came from the same class).
    fn set_link_rate(&mut self, n: NodeId, p: u16, rate: Rate, i: usize) -> Result<(), FieldError> {
        let g = self.port_id(n, p) as usize;
        let old = self.port_link_class[g] as usize;
        let params = LinkParams::new(rate, self.link_classes[old].latency_ps);
        let class = match self.link_classes.iter().position(|l| *l == params) {
            Some(c) => c,
            None => {
                if self.link_classes.len() >= u8::MAX as usize {
                    return Err(FieldError::new(
                        format!("topology.link_rates[{i}]"),
                        "more than 255 distinct link rates and latencies",
                    ));
                }
                self.link_classes.push(params);
                self.latency_fields.push(self.latency_fields[old].clone());
                self.link_classes.len() - 1
            }
        };
        let (pn, pp) = (self.port_peer_node[g], self.port_peer_port[g]);
        let back = self.port_id(pn, pp) as usize;
        self.port_link_class[g] = class as u8;
        self.port_link_class[back] = class as u8;
        Ok(())
    }

    fn check_symmetric(&self) -> bool {
        (0..self.num_nodes()).all(|n| {
            (0..self.num_ports(n)).all(|p| {
                let (pn, pp) = self.peer(n, p, 0);
                self.peer(pn, pp, 0) == (n, p)
            })
        })
    }

    /// Hosts and switches.
    pub fn num_nodes(&self) -> u32 {
        self.node_tier.len() as u32
    }
    /// Switches (nodes `num_hosts..num_nodes`).
    pub fn num_switches(&self) -> u32 {
        self.num_nodes() - self.num_hosts
    }
    /// Ports of all nodes together: the number of (directed) links.
    pub fn num_ports_total(&self) -> u32 {
        *self.port_base.last().expect("ports")
    }
    /// Whether `n` is a host.
    #[inline]
    pub fn is_host(&self, n: NodeId) -> bool {
        n < self.num_hosts
    }
    /// 0 for hosts, 1 for edge/leaf, 2 for aggregation/spine, 3 for core.
    #[inline]
    pub fn tier(&self, n: NodeId) -> u8 {
        self.node_tier[n as usize]
    }
    /// Ports of node `n`.
    pub fn num_ports(&self, n: NodeId) -> u16 {
        (self.port_base[n as usize + 1] - self.port_base[n as usize]) as u16
    }
    /// Global id of port `p` of node `n`: the id of the link that leaves through it.
    #[inline]
    pub fn port_id(&self, n: NodeId, p: u16) -> u32 {
        self.port_base[n as usize] + p as u32
    }
    /// The node and port of global port id `g` (inverse of [`Fabric::port_id`]).
    pub fn port_of_id(&self, g: u32) -> (NodeId, u16) {
        let n = self.port_base.partition_point(|&b| b <= g) - 1;
        (n as NodeId, (g - self.port_base[n]) as u16)
    }
    /// The node and input port that port `p` of node `n` leads to at time `now_ps`;
    /// [`opera::DARK`] as the node while an Opera rotor reconfigures.
    #[inline]
    pub fn peer(&self, n: NodeId, p: u16, now_ps: u64) -> (NodeId, u16) {
        if let Shape::Opera(o) = &self.shape {
            if let Some(peer) = o.peer_at(n, p, now_ps) {
                return peer;
            }
        }
        let g = self.port_id(n, p) as usize;
        (self.port_peer_node[g], self.port_peer_port[g])
    }
    /// The class of the link that leaves through port `p` of node `n`.
    #[inline]
    pub fn link(&self, n: NodeId, p: u16) -> &LinkParams {
        &self.link_classes[self.port_link_class[self.port_id(n, p) as usize] as usize]
    }
    /// The scenario field that set the latency of the link leaving port `p` of node `n`.
    pub fn latency_field(&self, n: NodeId, p: u16) -> &str {
        &self.latency_fields[self.port_link_class[self.port_id(n, p) as usize] as usize]
    }
    /// The distinct link classes (rate and latency) of the fabric.
    pub fn link_classes(&self) -> &[LinkParams] {
        &self.link_classes
    }
    /// Ports of `n` that lead to a higher tier, or to a switch of the same tier in a flat
    /// fabric (an expander's ToR-to-ToR ports): the ports a switch chooses among (0 for
    /// top-layer switches of a tree).
    pub fn uplinks(&self, n: NodeId) -> u16 {
        let t = self.tier(n);
        (0..self.num_ports(n))
            .filter(|&p| {
                let peer = self.peer(n, p, 0).0;
                self.tier(peer) > t || (self.tier(peer) == t && !self.is_host(peer))
            })
            .count() as u16
    }
    /// The stage (index into [`Fabric::stage_names`]) of the link leaving port `p` of `n`.
    #[inline]
    pub fn stage(&self, n: NodeId, p: u16) -> u8 {
        self.port_stage[self.port_id(n, p) as usize]
    }
    /// Names of the fabric's link stages (e.g. `host_edge`, `edge_agg`, `agg_core`).
    pub fn stage_names(&self) -> &'static [&'static str] {
        self.stage_names
    }

    /// Names of the switch tiers 1 to [`Fabric::top_tier`], read off the upward stages
    /// (`host_edge`, `edge_agg`, `agg_core` name edge, agg, core; a leaf-spine's leaf and
    /// spine; a rack fabric's tor); `tierN` where a stage name does not say.
    pub fn switch_tier_names(&self) -> Vec<String> {
        let mut below = "host".to_string();
        (1..=self.top_tier as usize)
            .map(|t| {
                let name = self
                    .stage_names
                    .get(t - 1)
                    .and_then(|st| st.split_once('_'))
                    .filter(|(from, to)| *from == below && !to.is_empty() && *to != below)
                    .map_or_else(|| format!("tier{t}"), |(_, to)| to.to_string());
                below.clone_from(&name);
                name
            })
            .collect()
    }

    /// Where switch `n` may forward a packet for host `dst` at time `now_ps`: with failed
    /// links, only the ports that still reach `dst` on a shortest path.
    #[inline]
    pub fn route(&self, n: NodeId, dst: NodeId, now_ps: u64) -> Route<'_> {
        debug_assert!(!self.is_host(n));
        if let Shape::Opera(o) = &self.shape {
            return o.route_at(n, dst, o.label(now_ps));
        }
        if let Some(f) = &self.failures {
            if let Some(valid) = f.route(n, self.num_hosts, self.subtree(dst, 1).0) {
                return Route::Choice(Candidates::List(valid));
            }
        }
        self.shape.route(n, dst)
    }

    /// The failure-free route of switch `n` toward `dst`: rotations over all uplinks (Ofan's
    /// pointers, Simple RR, DRB's path digits) index into it and skip invalid ports.
    #[inline]
    pub fn route_all(&self, n: NodeId, dst: NodeId) -> Route<'_> {
        debug_assert!(!self.is_host(n));
        self.shape.route(n, dst)
    }

    /// The highest tier (3: fat-tree cores, 2: leaf-spine spines, 1: expander ToRs).
    #[inline]
    pub fn top_tier(&self) -> u8 {
        self.top_tier
    }

    /// The uplinks of switch `n` below the top tier, whatever the destination: where a
    /// packet still climbing to a Valiant intermediate goes (not a shortest path).
    #[inline]
    pub fn route_up(&self, n: NodeId, _now_ps: u64) -> Route<'_> {
        debug_assert!(!self.is_host(n) && self.tier(n) < self.top_tier);
        self.shape.route_up(n)
    }

    /// Index and count of the subtrees of height `level` (1 = one edge/leaf switch and its
    /// hosts, 2 = a pod, ...) that contain hosts; `dst`'s subtree at that level. LB state keyed
    /// by destination (Ofan) uses this at a switch of tier `level`.
    #[inline]
    pub fn subtree(&self, dst: NodeId, level: u8) -> (u32, u32) {
        self.shape.subtree(dst, level)
    }

    /// Tier of the lowest switches that are common ancestors of hosts `a` and `b` (1: the
    /// same edge/leaf switch).
    pub fn lca_tier(&self, a: NodeId, b: NodeId) -> u8 {
        self.shape.lca_tier(a, b)
    }

    /// What a switch of tier `tier` divides a path code by before taking it modulo its
    /// candidate count (DRB, Valiant, pinned paths): the product of the uplink counts of the
    /// tiers below it, so the first hop's digit is the lowest.
    pub fn path_digit_divisor(&self, tier: u8) -> u32 {
        (1..tier).map(|t| self.tier_uplinks(t) as u32).product()
    }

    /// Uplinks of every switch of tier `t` below the top (the same for the whole tier).
    pub fn tier_uplinks(&self, t: u8) -> u16 {
        self.shape.tier_uplinks(t)
    }

    /// A shortest path from host `src` to host `dst` as (node, output port) hops, taking the
    /// first candidate wherever the route offers a choice.
    pub fn path(&self, src: NodeId, dst: NodeId) -> Vec<(NodeId, u16)> {
        let mut hops = vec![(src, 0)];
        let mut n = self.peer(src, 0, 0).0;
        while n != dst {
            let p = match self.route(n, dst, 0) {
                Route::Port(p) => p,
                Route::Choice(c) => c.get(0),
            };
            hops.push((n, p));
            n = self.peer(n, p, 0).0;
            assert!(hops.len() <= 64, "routing loop from {src} to {dst}");
        }
        hops
    }

    /// Number of links on a shortest path from host `src` to host `dst`.
    pub fn hops(&self, src: NodeId, dst: NodeId) -> u32 {
        self.path(src, dst).len() as u32
    }

    /// The group a node belongs to for partitioning, `None` for top-layer switches (which the
    /// partitioner spreads). Coarse groups are pods (fat tree) or leaves (leaf-spine); fine
    /// groups split a pod into its edge switches, each with its hosts and the aggregation
    /// switch of the same index.
    pub fn group_of(&self, n: NodeId, fine: bool) -> Option<u32> {
        self.shape.group_of(n, fine)
    }
    /// How many groups [`Fabric::group_of`] forms, coarse or fine.
    pub fn num_groups(&self, fine: bool) -> u32 {
        self.shape.num_groups(fine)
    }
    /// What one fine group is called in messages.
    pub fn group_unit(&self) -> &'static str {
        match self.kind {
            TopologyKind::FatTree => "edge switch",
            TopologyKind::LeafSpine | TopologyKind::Pgft => "leaf",
            TopologyKind::Opera => "rack",
            TopologyKind::Expander => "rack",
        }
    }

    /// Two hosts on a longest shortest path of the fabric (base RTT, BDP): the first and
    /// the last host of a tree; hosts of two racks a diameter apart on an expander.
    pub fn farthest_hosts(&self) -> (NodeId, NodeId) {
        match &self.shape {
            Shape::Expander(e) => e.farthest_hosts(),
            _ => (0, self.num_hosts - 1),
        }
    }

    /// Bytes of shape-specific routing tables (an expander's; 0 for trees).
    pub fn route_table_bytes(&self) -> u64 {
        match &self.shape {
            Shape::Expander(e) => e.table_bytes(),
            _ => 0,
        }
    }

    /// This fabric as a PGFT (fat trees and leaf-spines are PGFTs with the same numbering
    /// and port order): what static routings and the contention analysis address it by.
    pub(crate) fn as_pgft(&self) -> Option<pgft::Pgft> {
        match &self.shape {
            Shape::FatTree(f) => Some(f.as_pgft()),
            Shape::LeafSpine(l) => Some(l.as_pgft()),
            Shape::Pgft(g) => Some(*g),
            Shape::Opera(_) | Shape::Expander(_) => None,
        }
    }

    /// Whether some route offers parallel down links as a choice (a PGFT with p_l > 1 above
    /// the leaves): policies built around uplinks hash there (`lb/switch.rs`).
    #[inline]
    pub fn has_parallel_down(&self) -> bool {
        self.parallel_down
    }

    /// The end nodes' types (compute, I/O, ...): `[topology.pgft]`'s, else one type.
    pub fn host_types(&self) -> &crate::scenario::HostTypes {
        &self.host_types
    }

    /// Whether port `p` of node `n` leads to a lower tier.
    #[inline]
    pub fn is_down_port(&self, n: NodeId, p: u16) -> bool {
        self.tier(self.peer(n, p, 0).0) < self.tier(n)
    }

    /// A 64-bit FNV-1a hash of everything a partition plan depends on: node and port layout,
    /// links, link rates and latencies. A plan made for another fabric is rejected.
    pub fn fingerprint(&self, forwarding_ps: u64) -> u64 {
        let mut h: u64 = 0xcbf2_9ce4_8422_2325;
        let mut eat = |x: u64| {
            for b in x.to_le_bytes() {
                h ^= b as u64;
                h = h.wrapping_mul(0x0100_0000_01b3);
            }
        };
        eat(self.kind as u64);
        eat(self.k as u64);
        eat(self.num_hosts as u64);
        eat(forwarding_ps);
        for l in &self.link_classes {
            eat(l.rate.bps);
            eat(l.latency_ps);
        }
        for (i, &b) in self.port_base.iter().enumerate() {
            eat(b as u64 ^ (i as u64) << 32);
        }
        for g in 0..self.port_peer_node.len() {
            eat(self.port_peer_node[g] as u64
                | (self.port_peer_port[g] as u64) << 32
                | (self.port_link_class[g] as u64) << 48);
        }
        h
    }
}

/// A fault-free fabric of `kind` and radix `k` with default links, for unit tests.
#[cfg(test)]
pub(crate) fn test_fabric(kind: TopologyKind, k: u32) -> Fabric {
    let mut s = Scenario::default();
    s.topology.kind = kind;
    s.topology.k = k;
    Fabric::build(&s)
}

#[cfg(test)]
mod tests {
    use super::*;
    use test_fabric as fabric;

    /// Follow routes (always the first uplink choice and also the last) from every host to a
    /// sample of destinations: every walk must reach the destination in `hops` links.
    #[test]
    fn every_route_reaches_its_destination_in_the_expected_hops() {
        for (kind, k) in [
            (TopologyKind::FatTree, 4),
            (TopologyKind::FatTree, 6),
            (TopologyKind::LeafSpine, 6),
        ] {
            let f = fabric(kind, k);
            assert!(f.check_symmetric());
            for src in 0..f.num_hosts {
                for dst in 0..f.num_hosts {
                    if src == dst {
                        continue;
                    }
                    for pick_last in [false, true] {
                        let mut n = f.peer(src, 0, 0).0;
                        let mut hops = 1;
                        while n != dst {
                            let port = match f.route(n, dst, 0) {
                                Route::Port(q) => q,
                                Route::Choice(c) => c.get(if pick_last { c.len() - 1 } else { 0 }),
                            };
                            n = f.peer(n, port, 0).0;
                            hops += 1;
                            assert!(hops <= 6, "loop routing {src}->{dst}");
                        }
                        assert_eq!(hops, f.hops(src, dst), "{kind:?} k={k} {src}->{dst}");
                    }
                }
            }
        }
    }

    /// Switch tiers are named after the upward stages: edge/agg/core, leaf/spine, and the
    /// levels of a higher PGFT.
    #[test]
    fn switch_tiers_are_named_as_the_stages_say() {
        assert_eq!(
            fabric(TopologyKind::FatTree, 4).switch_tier_names(),
            ["edge", "agg", "core"]
        );
        assert_eq!(
            fabric(TopologyKind::LeafSpine, 4).switch_tier_names(),
            ["leaf", "spine"]
        );
        let pg = Fabric::build(&pgft::tests::pgft_scenario(crate::scenario::PgftConfig {
            h: 4,
            m: vec![2, 2, 2, 2],
            w: vec![1, 2, 2, 2],
            ..crate::scenario::PgftConfig::default()
        }));
        assert_eq!(pg.switch_tier_names(), ["l1", "l2", "l3", "l4"]);
    }

    /// A leaf-spine of explicit counts (the PSP paper's 256 GPUs: 32 leaves of 8 hosts, 16
    /// spines): sizes, every leaf on every spine, and every route arrives in 2 or 4 links.
    #[test]
    fn leaf_spine_with_explicit_counts() {
        let mut s = Scenario::default();
        s.topology.kind = TopologyKind::LeafSpine;
        (
            s.topology.leaves,
            s.topology.spines,
            s.topology.hosts_per_leaf,
        ) = (Some(32), Some(16), Some(8));
        s.validate().unwrap();
        let f = Fabric::build(&s);
        assert_eq!(f.num_hosts, 256);
        assert_eq!(f.num_switches(), 48);
        assert!(f.check_symmetric());
        let leaf = f.peer(0, 0, 0).0;
        assert_eq!((f.num_ports(leaf), f.uplinks(leaf)), (24, 16));
        assert_eq!(f.num_ports(f.num_nodes() - 1), 32);
        assert_eq!(f.subtree(255, 1), (31, 32));
        for (src, dst) in [(0, 7), (0, 8), (17, 255), (255, 0)] {
            let hops = f.path(src, dst).len();
            assert_eq!(hops, if src / 8 == dst / 8 { 2 } else { 4 }, "{src}->{dst}");
        }
        s.topology.kind = TopologyKind::FatTree;
        let e = s.validate().unwrap_err().to_string();
        assert!(
            e.contains("topology.leaves") && e.contains("leaf_spine"),
            "{e}"
        );
    }

    /// An expander of `racks` ToRs with `d` hosts and `u` uplinks each.
    fn expander(racks: u32, d: u32, u: u32, seed: u64) -> Fabric {
        let mut s = Scenario {
            seed,
            ..Scenario::default()
        };
        s.topology.kind = TopologyKind::Expander;
        s.lb.policy = crate::scenario::LbPolicy::Ecmp;
        (
            s.topology.racks,
            s.topology.hosts_per_rack,
            s.topology.uplinks,
        ) = (Some(racks), Some(d), Some(u));
        s.validate().unwrap();
        Fabric::build(&s)
    }

    /// ToR-to-ToR hop counts from ToR node `src` over the fabric's own links (a BFS
    /// independent of the expander's table), indexed by rack.
    fn tor_distances(f: &Fabric, src: NodeId) -> Vec<u32> {
        let t0 = f.num_hosts;
        let mut dist = vec![u32::MAX; f.num_switches() as usize];
        let mut queue = std::collections::VecDeque::from([src]);
        dist[(src - t0) as usize] = 0;
        while let Some(n) = queue.pop_front() {
            for p in 0..f.num_ports(n) {
                let (m, _) = f.peer(n, p, 0);
                if !f.is_host(m) && dist[(m - t0) as usize] == u32::MAX {
                    dist[(m - t0) as usize] = dist[(n - t0) as usize] + 1;
                    queue.push_back(m);
                }
            }
        }
        dist
    }

    /// Every walk from every host to a sample of hosts, taking the first and also the last
    /// candidate at every choice, arrives in exactly 2 + (BFS distance between the racks)
    /// links (2 within a rack), as `Fabric::hops` says; every choice is a lateral port.
    #[test]
    fn expander_routes_follow_shortest_paths() {
        for (racks, d, u, seed) in [(4, 2, 3, 1), (20, 2, 3, 1), (21, 3, 4, 2), (130, 5, 7, 3)] {
            let f = expander(racks, d, u, seed);
            assert!(f.check_symmetric());
            assert_eq!(
                (f.num_hosts, f.num_switches(), f.k),
                (racks * d, racks, d + u)
            );
            assert_eq!((f.top_tier(), f.stage_names().len()), (1, 3));
            assert_eq!(f.switch_tier_names(), ["tor"]);
            let dist: Vec<Vec<u32>> = (0..racks)
                .map(|r| tor_distances(&f, f.num_hosts + r))
                .collect();
            assert!(dist.iter().flatten().all(|&x| x < u32::MAX), "connected");
            for tor in f.num_hosts..f.num_nodes() {
                assert_eq!(
                    (f.num_ports(tor), f.uplinks(tor)),
                    ((d + u) as u16, u as u16)
                );
                assert_eq!(f.group_of(tor, true), Some(tor - f.num_hosts));
                let stages: Vec<u8> = (0..f.num_ports(tor)).map(|p| f.stage(tor, p)).collect();
                assert!(stages[..d as usize].iter().all(|&s| s == 2), "{stages:?}");
                assert!(stages[d as usize..].iter().all(|&s| s == 1), "{stages:?}");
            }
            let step = (f.num_hosts / 40).max(1);
            for src in 0..f.num_hosts {
                assert_eq!(f.stage(src, 0), 0);
                for dst in (src % step..f.num_hosts).step_by(step as usize) {
                    if dst == src {
                        continue;
                    }
                    let want = 2 + dist[(src / d) as usize][(dst / d) as usize];
                    assert_eq!(f.hops(src, dst), want, "{src}->{dst}");
                    for pick_last in [false, true] {
                        let mut n = f.peer(src, 0, 0).0;
                        let mut hops = 1;
                        while n != dst {
                            let port = match f.route(n, dst, 0) {
                                Route::Port(q) => q,
                                Route::Choice(c) => {
                                    assert!(c.iter().all(|q| q >= d as u16 && q < (d + u) as u16));
                                    c.get(if pick_last { c.len() - 1 } else { 0 })
                                }
                            };
                            n = f.peer(n, port, 0).0;
                            hops += 1;
                            assert!(hops <= want, "{src}->{dst} longer than {want}");
                        }
                        assert_eq!(hops, want, "{src}->{dst}");
                    }
                }
            }
        }
    }

    /// Every lateral port a route offers leads one hop closer (so the candidate list is
    /// exactly the set of next hops on shortest paths, not a subset): checked for every
    /// (ToR, destination rack) of a small expander.
    #[test]
    fn expander_candidates_are_every_shortest_next_hop() {
        let (racks, d, u) = (24, 1, 3);
        let f = expander(racks, d, u, 4);
        let dist: Vec<Vec<u32>> = (0..racks)
            .map(|r| tor_distances(&f, f.num_hosts + r))
            .collect();
        let mut choices = 0;
        for r in 0..racks {
            let tor = f.num_hosts + r;
            for t in (0..racks).filter(|&t| t != r) {
                let closer: Vec<u16> = (d as u16..(d + u) as u16)
                    .filter(|&p| {
                        let m = f.peer(tor, p, 0).0 - f.num_hosts;
                        dist[m as usize][t as usize] + 1 == dist[r as usize][t as usize]
                    })
                    .collect();
                let offered: Vec<u16> = match f.route(tor, t * d, 0) {
                    Route::Port(p) => vec![p],
                    Route::Choice(c) => c.iter().collect(),
                };
                choices += (offered.len() > 1) as u32;
                assert_eq!(offered, closer, "ToR {r} to rack {t}");
            }
        }
        assert!(choices > 0, "some pair has equal-cost paths");
    }

    #[test]
    fn sizes_match_the_formulas() {
        let f = fabric(TopologyKind::FatTree, 8);
        assert_eq!(f.num_hosts, 128);
        assert_eq!(f.num_switches(), 8 * 8 + 16);
        let f = fabric(TopologyKind::LeafSpine, 8);
        assert_eq!(f.num_hosts, 32);
        assert_eq!(f.num_switches(), 8 + 4);
    }
}
