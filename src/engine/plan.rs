//! Partition plans: which partition each node belongs to, which rank runs each partition, and
//! the lookahead that the cut implies.
//!
//! The automatic plan keeps whole pods (fat tree) or whole leaves with their hosts
//! (leaf-spine) together in contiguous blocks while there are no more partitions than pods;
//! beyond that, a fat tree is cut into edge groups (an edge switch, its hosts, and the
//! aggregation switch of the same index). Top-layer switches are spread round-robin. Host
//! links are never cut. Partitions go to ranks in contiguous blocks.

use crate::model::Model;
use crate::topology::NodeId;
use anyhow::{bail, Result};

/// Which partition owns each node, which rank runs each partition, and what follows: the
/// cut links, the outbox slots and the lookahead.
#[derive(Debug)]
pub struct Plan {
    /// Partitions.
    pub parts: u32,
    /// Ranks.
    pub ranks: u32,
    /// The partition of each node.
    pub node_part: Vec<u32>,
    /// Index of each node within its partition's node list.
    pub node_local: Vec<u32>,
    /// The rank of each partition.
    pub part_rank: Vec<u32>,
    /// Output ports per partition: the load estimate (events scale with ports).
    pub part_ports: Vec<u64>,
    /// Window length: the smallest positive (latency + forwarding delay at the receiving
    /// switch) of any link; every cut link has at least this delay (see [`window_ps`]).
    pub lookahead_ps: u64,
    /// Unidirectional links whose two ends are in different partitions.
    pub cut_links: u64,
    /// Per global port id: the outbox slot, in its node's partition, of the link leaving
    /// through it, or [`NOT_CUT`].
    pub link_slot: Vec<u32>,
    /// Per partition: the partition each outbox slot sends to.
    pub out_neighbors: Vec<Vec<u32>>,
    /// Per partition: (source partition, slot there) of every outbox that sends to it.
    pub in_neighbors: Vec<Vec<(u32, u32)>>,
}

/// [`Plan::link_slot`] of a link inside one partition.
pub const NOT_CUT: u32 = u32::MAX;

/// [`Plan::link_slot`] of a link whose peer, and so whose peer's partition, changes with time
/// (Opera's rotor uplinks): the slot is looked up per event ([`Plan::slot_to`]).
pub const VARIES: u32 = u32::MAX - 1;

impl Plan {
    /// The outbox slot of partition `src` for events to partition `dst` (a neighbour).
    pub fn slot_to(&self, src: u32, dst: u32) -> u32 {
        self.out_neighbors[src as usize]
            .iter()
            .position(|&d| d == dst)
            .map_or(NOT_CUT, |s| s as u32)
    }

    /// The most partitions the automatic plan can make.
    pub fn max_parts(m: &Model) -> u32 {
        m.fabric.num_groups(true)
    }

    /// The default plan of `parts` partitions over `ranks` ranks: each partition a contiguous
    /// run of the fabric's groups (`Fabric::group_of`), the top-layer switches dealt round
    /// robin; fails if `parts` is 0 or more than the fabric has groups.
    pub fn automatic(m: &Model, parts: u32, ranks: u32) -> Result<Plan> {
        let max = Plan::max_parts(m);
        if parts == 0 {
            bail!("--partitions: must be at least 1");
        }
        if parts > max {
            let unit = m.fabric.group_unit();
            bail!("--partitions: {parts} is more than this fabric can be cut into ({max}: one per {unit})");
        }
        let f = &m.fabric;
        let fine = parts > f.num_groups(false);
        let groups = f.num_groups(fine) as u64;
        let mut top = 0u32;
        let node_part = (0..f.num_nodes())
            .map(|n| match f.group_of(n, fine) {
                Some(g) => (g as u64 * parts as u64 / groups) as u32,
                None => {
                    top += 1;
                    (top - 1) % parts
                }
            })
            .collect();
        Plan::from_assignment(m, node_part, block_ranks(parts, ranks)?)
    }

    /// Builds a plan from explicit node → partition and partition → rank assignments.
    pub fn from_assignment(m: &Model, node_part: Vec<u32>, part_rank: Vec<u32>) -> Result<Plan> {
        let f = &m.fabric;
        let parts = part_rank.len() as u32;
        let ranks = part_rank.iter().max().map_or(0, |r| r + 1);
        assert_eq!(node_part.len(), f.num_nodes() as usize);
        let mut counts = vec![0u32; parts as usize];
        let mut part_ports = vec![0u64; parts as usize];
        let mut node_local = Vec::with_capacity(node_part.len());
        for (n, &p) in node_part.iter().enumerate() {
            if p >= parts {
                bail!("node {n} is assigned to partition {p}, but there are only {parts}");
            }
            node_local.push(counts[p as usize]);
            counts[p as usize] += 1;
            part_ports[p as usize] += f.num_ports(n as NodeId) as u64;
        }
        if let Some(p) = counts.iter().position(|&c| c == 0) {
            bail!("partition {p} has no nodes");
        }
        if let Some(r) = (0..ranks).find(|r| !part_rank.contains(r)) {
            bail!("rank {r} has no partition");
        }
        let cut = Cut::of(m, &node_part, parts)?;
        Ok(Plan {
            parts,
            ranks,
            node_part,
            node_local,
            part_rank,
            part_ports,
            lookahead_ps: cut.lookahead_ps,
            cut_links: cut.links,
            link_slot: cut.link_slot,
            out_neighbors: cut.out_neighbors,
            in_neighbors: cut.in_neighbors,
        })
    }

    /// Every partition's nodes in increasing id order (one pass over the nodes).
    pub fn members(&self) -> Vec<Vec<NodeId>> {
        let mut out = vec![Vec::new(); self.parts as usize];
        for (n, &p) in self.node_part.iter().enumerate() {
            out[p as usize].push(n as NodeId);
        }
        out
    }

    /// The partitions rank `rank` runs, ascending.
    pub fn parts_of_rank(&self, rank: u32) -> Vec<u32> {
        (0..self.parts)
            .filter(|&p| self.part_rank[p as usize] == rank)
            .collect()
    }

    /// Estimated load imbalance: the busiest partition's ports over the mean.
    pub fn imbalance(&self) -> f64 {
        let max = *self.part_ports.iter().max().expect("partitions") as f64;
        let mean = self.part_ports.iter().sum::<u64>() as f64 / self.parts as f64;
        max / mean
    }
}

/// What an event crossing the link from port `p` of node `n` is delayed by at least: the
/// propagation latency, plus the forwarding latency when it reaches a switch.
fn link_delay_ps(m: &Model, n: NodeId, p: u16) -> u64 {
    let f = &m.fabric;
    let fwd = if f.is_host(f.peer(n, p, 0).0) {
        0
    } else {
        m.forwarding_ps
    };
    f.link(n, p).latency_ps + fwd
}

/// Window length when no link has a positive delay (only possible uncut, on one partition).
const DEFAULT_WINDOW_PS: u64 = 1_000_000;

/// The window length (lookahead): the smallest positive delay of any link of the fabric,
/// whether the plan cuts it or not. Taking it from the fabric rather than from the cut links
/// makes window boundaries — and therefore where a run stops, e.g. when the workload is done
/// while periodic timers keep firing — the same for every partitioning and rank count. It
/// is a valid lookahead because every cut link has a positive delay (checked), hence at least
/// this one.
fn window_ps(m: &Model) -> u64 {
    let f = &m.fabric;
    (0..f.num_nodes())
        .flat_map(|n| (0..f.num_ports(n)).map(move |p| (n, p)))
        .map(|(n, p)| link_delay_ps(m, n, p))
        .filter(|&d| d > 0)
        .min()
        .unwrap_or(DEFAULT_WINDOW_PS)
}

/// The links a node → partition assignment cuts, and what follows from them.
struct Cut {
    lookahead_ps: u64,
    links: u64,
    link_slot: Vec<u32>,
    out_neighbors: Vec<Vec<u32>>,
    in_neighbors: Vec<Vec<(u32, u32)>>,
}

impl Cut {
    fn of(m: &Model, node_part: &[u32], parts: u32) -> Result<Cut> {
        let f = &m.fabric;
        let mut cut = Cut {
            lookahead_ps: u64::MAX,
            links: 0,
            link_slot: vec![NOT_CUT; f.num_ports_total() as usize],
            out_neighbors: vec![Vec::new(); parts as usize],
            in_neighbors: vec![Vec::new(); parts as usize],
        };
        for n in 0..f.num_nodes() {
            for p in 0..f.num_ports(n) {
                let peers = f.peers_over_time(n, p);
                let mut slot = NOT_CUT;
                for (i, &(peer, _)) in peers.iter().enumerate() {
                    let s = cut.add(m, node_part, n, p, peer)?;
                    // A link whose peer changes (Opera) finds its slot per event.
                    slot = if i == 0 || s == slot { s } else { VARIES };
                }
                cut.link_slot[f.port_id(n, p) as usize] = slot;
            }
        }
        for ins in &mut cut.in_neighbors {
            ins.sort_unstable();
        }
        cut.lookahead_ps = window_ps(m);
        Ok(cut)
    }

    /// Records that port `p` of `n` can lead to `peer`; returns the outbox slot in `n`'s
    /// partition for `peer`'s, or [`NOT_CUT`] if they share one.
    fn add(
        &mut self,
        m: &Model,
        node_part: &[u32],
        n: NodeId,
        p: u16,
        peer: NodeId,
    ) -> Result<u32> {
        let f = &m.fabric;
        let (src, dst) = (node_part[n as usize], node_part[peer as usize]);
        if src == dst {
            return Ok(NOT_CUT);
        }
        self.links += 1;
        if link_delay_ps(m, n, p) == 0 {
            let fwd = if f.is_host(peer) {
                ""
            } else {
                " (and switch.forwarding_latency_ns is 0)"
            };
            bail!(
                "{}: zero lookahead: the link from node {n} port {p} to node {peer} has zero latency{fwd} but is cut between partitions {src} and {dst}; give it a positive latency or use one partition",
                f.latency_field(n, p)
            );
        }
        let outs = &mut self.out_neighbors[src as usize];
        let slot = match outs.iter().position(|&d| d == dst) {
            Some(s) => s,
            None => {
                outs.push(dst);
                self.in_neighbors[dst as usize].push((src, outs.len() as u32 - 1));
                outs.len() - 1
            }
        };
        Ok(slot as u32)
    }
}

/// Partitions to ranks in contiguous blocks.
pub fn block_ranks(parts: u32, ranks: u32) -> Result<Vec<u32>> {
    if ranks == 0 {
        bail!("--ranks: must be at least 1");
    }
    if ranks > parts {
        bail!("more ranks ({ranks}) than partitions ({parts}): every rank needs at least one partition");
    }
    Ok((0..parts)
        .map(|p| (p as u64 * ranks as u64 / parts as u64) as u32)
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scenario::Scenario;

    /// Outboxes exist only for partitions that share cut links: with 128 edge-group
    /// partitions of a k = 16 fat tree, a partition borders its pod's edge groups and the
    /// partitions of the cores its aggregation switch reaches, not all 127 others.
    #[test]
    fn partitions_know_only_their_neighbours() {
        let mut s = Scenario::default();
        s.topology.k = 16;
        let m = Model::build(&s).unwrap();
        let plan = Plan::automatic(&m, 128, 1).unwrap();
        let most = plan.out_neighbors.iter().map(Vec::len).max().unwrap();
        assert!(most <= 2 * 16, "a partition has {most} neighbours");
        for (p, outs) in plan.out_neighbors.iter().enumerate() {
            for (slot, &q) in outs.iter().enumerate() {
                assert!(plan.in_neighbors[q as usize].contains(&(p as u32, slot as u32)));
            }
        }
        let f = &m.fabric;
        for n in 0..f.num_nodes() {
            for port in 0..f.num_ports(n) {
                let peer = f.peer(n, port, 0).0;
                let cut = plan.node_part[n as usize] != plan.node_part[peer as usize];
                let slot = plan.link_slot[f.port_id(n, port) as usize];
                assert_eq!(cut, slot != NOT_CUT);
            }
        }
    }
}
