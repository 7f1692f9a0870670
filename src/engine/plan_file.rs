//! Partition plan files (`weft partition`, `weft run --partition FILE`): human-readable TOML
//! listing, per partition, its rank, its load estimate and its node ranges, with the
//! fingerprint of the fabric it was made for.

use super::plan::Plan;
use crate::model::Model;
use anyhow::{anyhow, Result};
use serde::{Deserialize, Serialize};
use std::fmt::Write;
use std::path::Path;

/// The plan file format this build reads and writes (`format` in the file).
pub const FORMAT: u32 = 1;

#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct PlanFile {
    format: u32,
    topology: String,
    fingerprint: String,
    nodes: u32,
    parts: u32,
    ranks: u32,
    lookahead_ns: Option<f64>,
    cut_links: u64,
    imbalance: f64,
    partition: Vec<PartitionEntry>,
}

#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct PartitionEntry {
    id: u32,
    rank: u32,
    ports: u64,
    /// Node id ranges, e.g. "0-4095 65536-65567 70000".
    nodes: String,
}

fn topology_label(m: &Model) -> String {
    match m.fabric.opera() {
        Some(o) => format!(
            "opera racks={} hosts_per_rack={}",
            o.racks(),
            o.hosts_per_rack()
        ),
        None if m.fabric.kind == crate::scenario::TopologyKind::Expander => {
            let f = &m.fabric;
            let racks = f.num_groups(true);
            format!(
                "expander racks={racks} hosts_per_rack={} uplinks={}",
                f.num_hosts / racks,
                f.tier_uplinks(1)
            )
        }
        None => format!("{} k={}", m.fabric.kind.name(), m.fabric.k),
    }
}

fn ranges(ids: &[u32]) -> String {
    let mut out = String::new();
    let mut i = 0;
    while i < ids.len() {
        let mut j = i;
        while j + 1 < ids.len() && ids[j + 1] == ids[j] + 1 {
            j += 1;
        }
        if !out.is_empty() {
            out.push(' ');
        }
        if i == j {
            let _ = write!(out, "{}", ids[i]);
        } else {
            let _ = write!(out, "{}-{}", ids[i], ids[j]);
        }
        i = j + 1;
    }
    out
}

fn parse_ranges(s: &str, part: u32) -> Result<Vec<u32>> {
    let mut out = vec![];
    for tok in s.split_whitespace() {
        let bad = || anyhow!("partition {part}: bad node range \"{tok}\"");
        let (a, b) = match tok.split_once('-') {
            Some((a, b)) => (
                a.parse::<u32>().map_err(|_| bad())?,
                b.parse::<u32>().map_err(|_| bad())?,
            ),
            None => {
                let a = tok.parse::<u32>().map_err(|_| bad())?;
                (a, a)
            }
        };
        if b < a {
            return Err(bad());
        }
        out.extend(a..=b);
    }
    Ok(out)
}

/// The plan as file text.
pub fn to_text(m: &Model, plan: &Plan) -> String {
    let file = PlanFile {
        format: FORMAT,
        topology: topology_label(m),
        fingerprint: format!("{:016x}", m.fabric.fingerprint(m.forwarding_ps)),
        nodes: m.fabric.num_nodes(),
        parts: plan.parts,
        ranks: plan.ranks,
        lookahead_ns: (plan.lookahead_ps != u64::MAX).then(|| plan.lookahead_ps as f64 / 1000.0),
        cut_links: plan.cut_links,
        imbalance: (plan.imbalance() * 1000.0).round() / 1000.0,
        partition: plan
            .members()
            .iter()
            .enumerate()
            .map(|(p, nodes)| PartitionEntry {
                id: p as u32,
                rank: plan.part_rank[p],
                ports: plan.part_ports[p],
                nodes: ranges(nodes),
            })
            .collect(),
    };
    let header = "# weft partition plan: node ranges -> partition -> rank.\n\
                  # Node ids: hosts first, then switches (README, \"Topology numbering\").\n\
                  # ports = output ports in the partition (the load estimate); imbalance = max / mean.\n";
    header.to_string() + &toml::to_string(&file).expect("plan serializes")
}

/// Reads a plan file and checks it against the model and the job's rank count.
pub fn read(path: &Path, m: &Model, ranks: u32) -> Result<Plan> {
    let name = path.display();
    let text = std::fs::read_to_string(path)
        .map_err(|e| anyhow!("--partition {name}: cannot read: {e}"))?;
    let f: PlanFile =
        toml::from_str(&text).map_err(|e| anyhow!("--partition {name}: {}", e.message().trim()))?;
    let fail = |what: String| anyhow!("--partition {name}: {what}");
    if f.format != FORMAT {
        return Err(fail(format!(
            "format {} is not supported (expected {FORMAT})",
            f.format
        )));
    }
    let fp = format!("{:016x}", m.fabric.fingerprint(m.forwarding_ps));
    if f.fingerprint != fp || f.nodes != m.fabric.num_nodes() {
        return Err(fail(format!(
            "made for another fabric ({}, fingerprint {}); this scenario is {} with fingerprint {fp}",
            f.topology,
            f.fingerprint,
            topology_label(m)
        )));
    }
    if f.ranks != ranks {
        return Err(fail(format!(
            "made for {} ranks, but this job has {ranks}",
            f.ranks
        )));
    }
    if f.partition.len() as u32 != f.parts {
        return Err(fail(format!(
            "parts = {} but {} [[partition]] entries",
            f.parts,
            f.partition.len()
        )));
    }
    let mut node_part = vec![u32::MAX; m.fabric.num_nodes() as usize];
    let mut part_rank = vec![0; f.parts as usize];
    for (i, e) in f.partition.iter().enumerate() {
        if e.id != i as u32 {
            return Err(fail(format!(
                "partition entries must be in id order: entry {i} has id {}",
                e.id
            )));
        }
        if e.rank >= f.ranks {
            return Err(fail(format!(
                "partition {} is on rank {}, but ranks = {}",
                e.id, e.rank, f.ranks
            )));
        }
        part_rank[i] = e.rank;
        for n in parse_ranges(&e.nodes, e.id).map_err(|e| fail(e.to_string()))? {
            let slot = node_part
                .get_mut(n as usize)
                .ok_or_else(|| fail(format!("node {n} does not exist")))?;
            if *slot != u32::MAX {
                return Err(fail(format!(
                    "node {n} is in partitions {} and {}",
                    *slot, e.id
                )));
            }
            *slot = e.id;
        }
    }
    if let Some(n) = node_part.iter().position(|&p| p == u32::MAX) {
        return Err(fail(format!("node {n} is in no partition")));
    }
    Plan::from_assignment(m, node_part, part_rank).map_err(|e| fail(e.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranges_round_trip() {
        let ids = vec![0, 1, 2, 5, 7, 8, 100];
        let s = ranges(&ids);
        assert_eq!(s, "0-2 5 7-8 100");
        assert_eq!(parse_ranges(&s, 0).unwrap(), ids);
        assert!(parse_ranges("3-1", 0).is_err());
    }

    #[test]
    fn written_plans_read_back_and_mismatches_are_rejected() {
        let mut s = crate::scenario::Scenario::default();
        s.topology.k = 8;
        let m = Model::build(&s).unwrap();
        let plan = Plan::automatic(&m, 16, 4).unwrap();
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("p.plan");
        std::fs::write(&path, to_text(&m, &plan)).unwrap();
        let back = read(&path, &m, 4).unwrap();
        assert_eq!(back.node_part, plan.node_part);
        assert_eq!(back.part_rank, plan.part_rank);
        assert!(read(&path, &m, 2)
            .unwrap_err()
            .to_string()
            .contains("made for 4 ranks"));
        s.topology.k = 6;
        let other = Model::build(&s).unwrap();
        assert!(read(&path, &other, 4)
            .unwrap_err()
            .to_string()
            .contains("another fabric"));
    }
}
