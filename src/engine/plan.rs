//! Partition plans: which partition each node belongs to (and, with MPI, which rank runs each
//! partition), and the lookahead that the cut implies.
//!
//! The automatic plan keeps whole pods (fat tree) or whole leaves with their hosts (leaf-spine)
//! together, in contiguous blocks, and spreads the top-layer switches round-robin, so only
//! switch-to-switch links are cut.

use crate::model::Model;
use crate::topology::NodeId;
use anyhow::{bail, Result};

pub struct Plan {
    pub parts: u32,
    pub node_part: Vec<u32>,
    /// Index of each node within its partition's node list.
    pub node_local: Vec<u32>,
    /// Min over cut links of (latency + forwarding delay at the receiving switch); `u64::MAX`
    /// when nothing is cut.
    pub lookahead_ps: u64,
    pub cut_links: u64,
}

impl Plan {
    /// The most partitions the automatic plan can make: one per pod / leaf.
    pub fn max_parts(m: &Model) -> u32 {
        m.fabric.num_groups()
    }

    pub fn automatic(m: &Model, parts: u32) -> Result<Plan> {
        let max = Plan::max_parts(m);
        if parts == 0 {
            bail!("--partitions: must be at least 1");
        }
        if parts > max {
            bail!(
                "--partitions: {parts} is more than this fabric can be cut into ({max}: one per {})",
                if m.fabric.kind == crate::scenario::TopologyKind::FatTree { "pod" } else { "leaf" }
            );
        }
        let f = &m.fabric;
        let groups = f.num_groups() as u64;
        let mut top = 0u32;
        let node_part = (0..f.num_nodes())
            .map(|n| match f.group_of(n) {
                Some(g) => (g as u64 * parts as u64 / groups) as u32,
                None => {
                    top += 1;
                    (top - 1) % parts
                }
            })
            .collect();
        Plan::from_assignment(m, parts, node_part)
    }

    /// Builds a plan from an explicit node → partition assignment, checking the lookahead.
    pub fn from_assignment(m: &Model, parts: u32, node_part: Vec<u32>) -> Result<Plan> {
        let f = &m.fabric;
        assert_eq!(node_part.len(), f.num_nodes() as usize);
        let mut counts = vec![0u32; parts as usize];
        let node_local = node_part
            .iter()
            .map(|&p| {
                counts[p as usize] += 1;
                counts[p as usize] - 1
            })
            .collect();
        if let Some(p) = counts.iter().position(|&c| c == 0) {
            bail!("partition {p} has no nodes");
        }
        let mut lookahead_ps = u64::MAX;
        let mut cut_links = 0;
        for n in 0..f.num_nodes() {
            for p in 0..f.num_ports(n) {
                let (peer, _) = f.peer(n, p);
                if node_part[n as usize] != node_part[peer as usize] {
                    cut_links += 1;
                    let delay =
                        f.link(n, p).latency_ps + if f.is_host(peer) { 0 } else { m.forwarding_ps };
                    if delay == 0 {
                        bail!(
                            "zero lookahead: the link from node {n} port {p} to node {peer} is cut between partitions and has zero latency; give it a positive latency or use fewer partitions"
                        );
                    }
                    lookahead_ps = lookahead_ps.min(delay);
                }
            }
        }
        Ok(Plan {
            parts,
            node_part,
            node_local,
            lookahead_ps,
            cut_links,
        })
    }

    pub fn nodes_of(&self, part: u32) -> Vec<NodeId> {
        (0..self.node_part.len() as u32)
            .filter(|&n| self.node_part[n as usize] == part)
            .collect()
    }
}
