//! Balanced partition plans from measured work: `weft run --out` writes the events each node
//! processed (`node_events.csv`), and `weft partition --weights FILE` cuts the fabric so that
//! partitions carry equal events instead of equal ports.
//!
//! The cut keeps the automatic plan's building blocks at their finest (edge groups of a fat
//! tree: an edge switch, its hosts and the aggregation switch of the same index; leaves of a
//! leaf-spine; host links never cut), so the lookahead is the same: groups stay in id order
//! and each partition takes a contiguous run of them whose summed events come closest to its
//! share; top-layer switches then go, heaviest first, to the lightest partition (ties to the
//! lowest index). Deterministic for a given file.

use super::plan::{block_ranks, Plan};
use crate::model::Model;
use anyhow::{anyhow, bail, Context, Result};
use std::fmt::Write;
use std::path::Path;

/// `node_events.csv`: a header naming the node count, then `node,events` per node.
pub fn to_csv(node_events: &[u64]) -> String {
    let mut out = format!(
        "# weft node events: nodes={}\nnode,events\n",
        node_events.len()
    );
    for (n, e) in node_events.iter().enumerate() {
        let _ = writeln!(out, "{n},{e}");
    }
    out
}

/// Reads a `node_events.csv` for a fabric of `num_nodes` nodes (absent nodes weigh 0).
pub fn read(path: &Path, num_nodes: u32) -> Result<Vec<u64>> {
    let text = std::fs::read_to_string(path)
        .with_context(|| format!("--weights {}: cannot read", path.display()))?;
    let at = |line: usize| format!("--weights {}:{}", path.display(), line + 1);
    let mut weights = vec![None; num_nodes as usize];
    for (i, line) in text.lines().enumerate() {
        let line = line.trim();
        if let Some(nodes) = line.strip_prefix("# weft node events: nodes=") {
            if nodes.trim().parse::<u32>().ok() != Some(num_nodes) {
                bail!(
                    "{}: written for a fabric of {} nodes, this scenario's has {num_nodes}",
                    at(i),
                    nodes.trim()
                );
            }
            continue;
        }
        if line.is_empty() || line.starts_with('#') || line == "node,events" {
            continue;
        }
        let (n, e) = line
            .split_once(',')
            .ok_or_else(|| anyhow!("{}: expected \"node,events\", got \"{line}\"", at(i)))?;
        let n: u32 = n
            .trim()
            .parse()
            .map_err(|_| anyhow!("{}: \"{}\" is not a node id", at(i), n.trim()))?;
        let e: u64 = e
            .trim()
            .parse()
            .map_err(|_| anyhow!("{}: \"{}\" is not an event count", at(i), e.trim()))?;
        let slot = weights
            .get_mut(n as usize)
            .ok_or_else(|| anyhow!("{}: node {n} does not exist ({num_nodes} nodes)", at(i)))?;
        if slot.replace(e).is_some() {
            bail!("{}: node {n} appears twice", at(i));
        }
    }
    if weights.iter().all(|w| w.is_none()) {
        bail!("--weights {}: no node counts", path.display());
    }
    Ok(weights.into_iter().map(|w| w.unwrap_or(0)).collect())
}

/// A plan of `parts` partitions on `ranks` ranks balancing `weights` (events per node);
/// returns it with its expected imbalance (the heaviest partition's events over the mean).
pub fn weighted_plan(m: &Model, parts: u32, ranks: u32, weights: &[u64]) -> Result<(Plan, f64)> {
    let f = &m.fabric;
    let max = Plan::max_parts(m);
    if parts == 0 || parts > max {
        bail!(
            "--parts: must be from 1 to {max} (one per {})",
            f.group_unit()
        );
    }
    assert_eq!(weights.len(), f.num_nodes() as usize);
    // The finest groups: work concentrated in a few pods can still be spread.
    let fine = true;
    let groups = f.num_groups(fine) as usize;
    let mut group_weight = vec![0u64; groups];
    let mut top = vec![];
    for n in 0..f.num_nodes() {
        match f.group_of(n, fine) {
            Some(g) => group_weight[g as usize] += weights[n as usize],
            None => top.push(n),
        }
    }
    let group_part = split_contiguous(&group_weight, parts);
    let mut part_weight = vec![0u64; parts as usize];
    for (g, &p) in group_part.iter().enumerate() {
        part_weight[p as usize] += group_weight[g];
    }
    // Heaviest top switches first, each to the lightest partition.
    top.sort_by_key(|&n| (std::cmp::Reverse(weights[n as usize]), n));
    let mut node_part = vec![0u32; f.num_nodes() as usize];
    for &n in &top {
        let p = (0..parts)
            .min_by_key(|&p| (part_weight[p as usize], p))
            .expect("parts >= 1");
        part_weight[p as usize] += weights[n as usize];
        node_part[n as usize] = p;
    }
    for n in 0..f.num_nodes() {
        if let Some(g) = f.group_of(n, fine) {
            node_part[n as usize] = group_part[g as usize];
        }
    }
    let plan = Plan::from_assignment(m, node_part, block_ranks(parts, ranks)?)?;
    let imbalance = event_imbalance(&plan, weights);
    Ok((plan, imbalance))
}

/// The busiest partition's events over the mean, for any plan.
pub fn event_imbalance(plan: &Plan, weights: &[u64]) -> f64 {
    let mut part_weight = vec![0u64; plan.parts as usize];
    for (n, &p) in plan.node_part.iter().enumerate() {
        part_weight[p as usize] += weights[n];
    }
    let total: u64 = part_weight.iter().sum();
    match total {
        0 => 1.0,
        _ => *part_weight.iter().max().expect("parts") as f64 * plan.parts as f64 / total as f64,
    }
}

/// Splits `weights` (in order) into `parts` non-empty contiguous runs of near-equal sums:
/// run p ends where the prefix sum comes closest to (p + 1) / parts of the total.
fn split_contiguous(weights: &[u64], parts: u32) -> Vec<u32> {
    let n = weights.len();
    let parts = parts as usize;
    assert!((1..=n).contains(&parts), "validated: 1 ≤ parts ≤ groups");
    let mut prefix = vec![0u128; n + 1];
    for (i, &w) in weights.iter().enumerate() {
        prefix[i + 1] = prefix[i] + w as u128;
    }
    let total = prefix[n];
    let mut out = vec![0u32; n];
    let mut start = 0;
    for p in 0..parts {
        let end = match p + 1 == parts {
            true => n,
            false => {
                let target = total * (p as u128 + 1) / parts as u128;
                // Leave at least one group for each later run.
                let (lo, hi) = (start + 1, n - (parts - p - 1));
                let first_over = (lo..=hi).find(|&e| prefix[e] >= target).unwrap_or(hi);
                let under = first_over.saturating_sub(1).max(lo);
                match target - prefix[under].min(target)
                    <= prefix[first_over] - target.min(prefix[first_over])
                {
                    true => under,
                    false => first_over,
                }
            }
        };
        out[start..end].iter_mut().for_each(|x| *x = p as u32);
        start = end;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn contiguous_runs_come_closest_to_equal_shares() {
        // Total 20: the first run ends after 10 (closest to 10), the others split the rest.
        assert_eq!(split_contiguous(&[6, 4, 1, 1, 1, 7], 2), [0, 0, 1, 1, 1, 1]);
        // One heavy group: every later run still gets one.
        // (Run 1 ends as soon as it passes its target, 2/3 of the total.)
        assert_eq!(split_contiguous(&[100, 1, 1, 1], 3), [0, 1, 2, 2]);
        assert_eq!(split_contiguous(&[0, 0, 0, 0], 4), [0, 1, 2, 3]);
        assert_eq!(split_contiguous(&[5; 6], 3), [0, 0, 1, 1, 2, 2]);
    }
}
