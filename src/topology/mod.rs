//! The fabric: nodes (hosts first, then switches), their output ports, the links between
//! ports, and up/down routing. The description is immutable and small (a few arrays indexed by
//! node or global port id), so every rank and thread shares one copy; runtime state (queues,
//! LB pointers, transports) lives in the engine's partitions.
//!
//! Invariants:
//! - hosts are nodes `0..num_hosts` and have exactly one port (port 0, to their edge/leaf);
//! - every port `p` of node `n` is linked to exactly one port of one other node, and the link is
//!   symmetric: `peer(peer(n, p)) == (n, p)`;
//! - for a switch, `route(switch, dst)` is either the unique downward port or the contiguous
//!   range of uplinks among which the LB policy chooses.

mod fat_tree;
mod leaf_spine;

use crate::scenario::{Scenario, TopologyKind};
use crate::time::{Rate, PS_PER_NS};

pub type NodeId = u32;

/// The rate and propagation latency of a class of links (a tier).
#[derive(Clone, Copy, Debug)]
pub struct LinkParams {
    pub rate: Rate,
    pub latency_ps: u64,
    /// Serialization time of one byte, when the rate divides evenly (fast path).
    ps_per_byte: Option<u64>,
}

impl LinkParams {
    pub fn new(rate: Rate, latency_ps: u64) -> LinkParams {
        let exact = 8_000_000_000_000u64.checked_rem(rate.bps) == Some(0);
        let ps_per_byte = exact.then(|| 8_000_000_000_000u64 / rate.bps);
        LinkParams {
            rate,
            latency_ps,
            ps_per_byte,
        }
    }

    #[inline]
    pub fn serialization_ps(&self, bytes: u64) -> u64 {
        match self.ps_per_byte {
            Some(p) => p * bytes,
            None => self.rate.serialization_ps(bytes),
        }
    }
}

/// Where a switch may send a packet for a destination host.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Route {
    /// Exactly one valid output port.
    Port(u16),
    /// Any of the uplinks `first .. first + count`; the LB policy chooses.
    Up { first: u16, count: u16 },
}

/// Topology-specific addressing and routing.
#[derive(Clone, Copy, Debug)]
enum Shape {
    FatTree(fat_tree::FatTree),
    LeafSpine(leaf_spine::LeafSpine),
}

pub struct Fabric {
    pub kind: TopologyKind,
    pub k: u32,
    pub num_hosts: u32,
    shape: Shape,
    node_tier: Vec<u8>,
    port_base: Vec<u32>,
    port_peer_node: Vec<NodeId>,
    port_peer_port: Vec<u16>,
    port_link_class: Vec<u8>,
    port_stage: Vec<u8>,
    link_classes: Vec<LinkParams>,
    stage_names: &'static [&'static str],
    tier_names: &'static [&'static str],
}

/// What a topology builder hands to [`Fabric::assemble`]: per node, its tier and its ports as
/// (peer node, peer port, link class).
struct Wiring {
    node_tier: Vec<u8>,
    ports: Vec<Vec<(NodeId, u16, u8)>>,
}

impl Fabric {
    pub fn build(s: &Scenario) -> Fabric {
        let t = &s.topology;
        let tiers = crate::scenario::tier_names(t.kind);
        let link_classes = tiers
            .iter()
            .map(|name| {
                let o = t.tiers.get(*name);
                let gbps = o.and_then(|o| o.rate_gbps).unwrap_or(t.link_rate_gbps);
                let ns = o.and_then(|o| o.latency_ns).unwrap_or(t.link_latency_ns);
                LinkParams::new(
                    Rate::from_gbps(gbps),
                    (ns * PS_PER_NS as f64).round() as u64,
                )
            })
            .collect();
        match t.kind {
            TopologyKind::FatTree => {
                let ft = fat_tree::FatTree::new(t.k);
                Fabric::assemble(
                    t.kind,
                    t.k,
                    ft.num_hosts(),
                    Shape::FatTree(ft),
                    ft.wiring(),
                    link_classes,
                )
            }
            TopologyKind::LeafSpine => {
                let ls = leaf_spine::LeafSpine::new(t.k);
                Fabric::assemble(
                    t.kind,
                    t.k,
                    ls.num_hosts(),
                    Shape::LeafSpine(ls),
                    ls.wiring(),
                    link_classes,
                )
            }
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
        let (stage_names, tier_names): (&[&str], &[&str]) = match kind {
            TopologyKind::FatTree => (fat_tree::STAGES, fat_tree::TIERS),
            TopologyKind::LeafSpine => (leaf_spine::STAGES, leaf_spine::TIERS),
        };
        let top = *w.node_tier.iter().max().expect("nodes");
        let mut port_base = Vec::with_capacity(w.ports.len() + 1);
        let (mut peer_node, mut peer_port, mut class, mut stage) = (vec![], vec![], vec![], vec![]);
        let mut base = 0u32;
        for (n, ports) in w.ports.iter().enumerate() {
            port_base.push(base);
            for &(pn, pp, c) in ports {
                let (from, to) = (w.node_tier[n], w.node_tier[pn as usize]);
                // Upward stages are numbered by the sending tier, downward ones continue after
                // the top: host->edge = 0 ... top-1 -> top = top-1, top -> top-1 = top, ...
                let st = if to > from { from } else { top + (top - from) };
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
            port_base,
            port_peer_node: peer_node,
            port_peer_port: peer_port,
            port_link_class: class,
            port_stage: stage,
            link_classes,
            stage_names,
            tier_names,
        };
        debug_assert!(f.check_symmetric());
        f
    }

    fn check_symmetric(&self) -> bool {
        (0..self.num_nodes()).all(|n| {
            (0..self.num_ports(n)).all(|p| {
                let (pn, pp) = self.peer(n, p);
                self.peer(pn, pp) == (n, p)
            })
        })
    }

    pub fn num_nodes(&self) -> u32 {
        self.node_tier.len() as u32
    }
    pub fn num_switches(&self) -> u32 {
        self.num_nodes() - self.num_hosts
    }
    pub fn num_ports_total(&self) -> u32 {
        *self.port_base.last().expect("ports")
    }
    pub fn is_host(&self, n: NodeId) -> bool {
        n < self.num_hosts
    }
    /// 0 for hosts, 1 for edge/leaf, 2 for aggregation/spine, 3 for core.
    pub fn tier(&self, n: NodeId) -> u8 {
        self.node_tier[n as usize]
    }
    pub fn num_ports(&self, n: NodeId) -> u16 {
        (self.port_base[n as usize + 1] - self.port_base[n as usize]) as u16
    }
    /// Global id of port `p` of node `n`: the id of the link that leaves through it.
    #[inline]
    pub fn port_id(&self, n: NodeId, p: u16) -> u32 {
        self.port_base[n as usize] + p as u32
    }
    #[inline]
    pub fn peer(&self, n: NodeId, p: u16) -> (NodeId, u16) {
        let g = self.port_id(n, p) as usize;
        (self.port_peer_node[g], self.port_peer_port[g])
    }
    #[inline]
    pub fn link(&self, n: NodeId, p: u16) -> &LinkParams {
        &self.link_classes[self.port_link_class[self.port_id(n, p) as usize] as usize]
    }
    pub fn link_classes(&self) -> &[LinkParams] {
        &self.link_classes
    }
    /// Names of the link classes (`[topology.tiers.NAME]`), in class order.
    pub fn tier_names(&self) -> &'static [&'static str] {
        self.tier_names
    }
    /// Ports of `n` that lead to a higher tier (0 for top-layer switches).
    pub fn uplinks(&self, n: NodeId) -> u16 {
        let t = self.tier(n);
        (0..self.num_ports(n))
            .filter(|&p| self.tier(self.peer(n, p).0) > t)
            .count() as u16
    }
    #[inline]
    pub fn stage(&self, n: NodeId, p: u16) -> u8 {
        self.port_stage[self.port_id(n, p) as usize]
    }
    pub fn stage_names(&self) -> &'static [&'static str] {
        self.stage_names
    }

    /// Where switch `n` may forward a packet for host `dst`.
    #[inline]
    pub fn route(&self, n: NodeId, dst: NodeId) -> Route {
        debug_assert!(!self.is_host(n));
        match &self.shape {
            Shape::FatTree(f) => f.route(n, dst),
            Shape::LeafSpine(l) => l.route(n, dst),
        }
    }

    /// Ofan pointer key of a northbound packet at switch `n` for host `dst`:
    /// (destination index d, number of possible destinations N_d). Edge/leaf switches key on
    /// the destination edge/leaf switch, aggregation switches on the destination pod.
    #[inline]
    pub fn lb_destination(&self, n: NodeId, dst: NodeId) -> (u32, u32) {
        match &self.shape {
            Shape::FatTree(f) => f.lb_destination(n, dst),
            Shape::LeafSpine(l) => l.lb_destination(n, dst),
        }
    }

    /// DRB: the switches of the lowest common layer between `src` and `dst`, in digit-reversed
    /// order; entry `c` of that list (c < count). Returns the count (0: no choice to make).
    pub fn drb_path_count(&self, src: NodeId, dst: NodeId) -> u32 {
        match &self.shape {
            Shape::FatTree(f) => f.drb_path_count(src, dst),
            Shape::LeafSpine(l) => l.drb_path_count(src, dst),
        }
    }
    pub fn drb_via(&self, src: NodeId, dst: NodeId, c: u32) -> NodeId {
        match &self.shape {
            Shape::FatTree(f) => f.drb_via(src, dst, c),
            Shape::LeafSpine(l) => l.drb_via(src, dst, c),
        }
    }
    /// The uplink of switch `n` that leads towards the top-layer switch `via`.
    #[inline]
    pub fn via_up_port(&self, n: NodeId, via: NodeId) -> u16 {
        match &self.shape {
            Shape::FatTree(f) => f.via_up_port(n, via),
            Shape::LeafSpine(l) => l.via_up_port(n, via),
        }
    }

    /// Number of links on a shortest path from host `src` to host `dst`.
    pub fn hops(&self, src: NodeId, dst: NodeId) -> u32 {
        match &self.shape {
            Shape::FatTree(f) => f.hops(src, dst),
            Shape::LeafSpine(l) => l.hops(src, dst),
        }
    }

    /// The group a node belongs to for partitioning, `None` for top-layer switches (which the
    /// partitioner spreads). Coarse groups are pods (fat tree) or leaves (leaf-spine); fine
    /// groups split a pod into its edge switches, each with its hosts and the aggregation
    /// switch of the same index.
    pub fn group_of(&self, n: NodeId, fine: bool) -> Option<u32> {
        match &self.shape {
            Shape::FatTree(f) if fine => f.edge_group_of(n),
            Shape::FatTree(f) => f.pod_of(n),
            Shape::LeafSpine(l) => l.leaf_of(n),
        }
    }
    pub fn num_groups(&self, fine: bool) -> u32 {
        match self.kind {
            TopologyKind::FatTree if fine => self.k * self.k / 2,
            _ => self.k,
        }
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

#[cfg(test)]
mod tests {
    use super::*;

    fn fabric(kind: TopologyKind, k: u32) -> Fabric {
        let mut s = Scenario::default();
        s.topology.kind = kind;
        s.topology.k = k;
        Fabric::build(&s)
    }

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
                        let mut n = f.peer(src, 0).0;
                        let mut hops = 1;
                        while n != dst {
                            let port = match f.route(n, dst) {
                                Route::Port(q) => q,
                                Route::Up { first, count } => {
                                    if pick_last {
                                        first + count - 1
                                    } else {
                                        first
                                    }
                                }
                            };
                            n = f.peer(n, port).0;
                            hops += 1;
                            assert!(hops <= 6, "loop routing {src}->{dst}");
                        }
                        assert_eq!(hops, f.hops(src, dst), "{kind:?} k={k} {src}->{dst}");
                    }
                }
            }
        }
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

    #[test]
    fn drb_vias_are_reachable_and_alternate_first_hop() {
        let f = fabric(TopologyKind::FatTree, 8);
        let (src, dst) = (0, 127);
        let n = f.drb_path_count(src, dst);
        assert_eq!(n, 16);
        let edge = f.peer(src, 0).0;
        let mut seen = std::collections::BTreeSet::new();
        for c in 0..n {
            let via = f.drb_via(src, dst, c);
            assert!(seen.insert(via));
            let next = f.drb_via(src, dst, (c + 1) % n);
            assert_ne!(
                f.via_up_port(edge, via),
                f.via_up_port(edge, next),
                "consecutive packets share first-hop agg"
            );
        }
    }
}
