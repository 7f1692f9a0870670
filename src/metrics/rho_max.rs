//! `rho_max`: the largest rate, as a fraction of the host line rate, at which every host could
//! send if its traffic were split perfectly over the valid shortest paths of the fabric (the
//! Ofan paper's pacing rate under link failures; 1 in a fault-free fat tree under a
//! permutation). It is a maximum concurrent flow, solved exactly as a linear program
//! (`microlp`, a maintained pure-Rust simplex):
//!
//! maximise λ subject to, for every commodity c, Σ_p x_{c,p} = D_c·λ (x ≥ 0 over c's valid
//! shortest paths p), and for every switch-to-switch link l, Σ_{p ∋ l} x_{c,p} ≤ C_l;
//! solved as its equivalent: route every D_c in full minimising μ with Σ_{p ∋ l} x ≤ μ·C_l,
//! λ = 1/μ.
//!
//! Demand model (the paced NIC serves a host's flows round-robin): a host sending at λ gives
//! each of its n flows λ/n. Commodities are the flows aggregated by (source edge switch,
//! destination edge switch), since every host under an edge switch has the same paths. Host
//! links never fail, so they bound λ directly: a host receiving Σ 1/n_src from its senders
//! caps λ at (its downlink rate / line rate) / that sum. Capacities are link rates over the
//! host line rate. λ is capped at 1: a host cannot send faster than its line rate.

use crate::topology::{Fabric, NodeId, Route};
use crate::workload::Workload;
use anyhow::{bail, Context, Result};
use microlp::{ComparisonOp, OptimizationDirection, Problem};
use std::collections::{BTreeMap, HashMap};

/// Above this many path variables the LP is refused (memory and time), with a message.
const MAX_PATH_VARIABLES: usize = 1_000_000;

/// The solved instance.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RhoMax {
    /// The largest fraction of line rate every host can send at concurrently (0 to 1).
    pub rho_max: f64,
    /// Commodities (edge-switch pairs) and path variables of the LP.
    pub commodities: usize,
    /// Path variables of the LP.
    pub paths: usize,
}

/// Solves `rho_max` for the flows of `workload` on `fabric` (with its failed links).
pub(crate) fn rho_max(fabric: &Fabric, workload: &Workload) -> Result<RhoMax> {
    let line_bps = fabric.link(0, 0).rate.bps as f64;
    let (demand, host_cap) = demands(fabric, workload, line_bps);
    let mut paths_of: Vec<Vec<Vec<u32>>> = Vec::with_capacity(demand.len());
    let mut total = 0;
    for &(a, b) in demand.keys() {
        let paths = edge_paths(fabric, a, b);
        assert!(
            !paths.is_empty(),
            "failed links disconnect edge {a} from {b}"
        );
        total += paths.len();
        if total > MAX_PATH_VARIABLES {
            bail!(
                "rho_max: the max-concurrent-flow LP would have more than {MAX_PATH_VARIABLES} \
                 path variables; set failures.pace_at_rho_max = false (and host.load by hand)"
            );
        }
        paths_of.push(paths);
    }
    // Solved in its equivalent form: route every demand in full and minimise the largest
    // link utilisation μ; then λ = 1/μ (the simplex converges several times faster on it).
    let mut lp = Problem::new(OptimizationDirection::Minimize);
    let mu = lp.add_var(1.0, (0.0, f64::INFINITY));
    let mut on_link: HashMap<u32, Vec<(microlp::Variable, f64)>> = HashMap::new();
    for (paths, &d) in paths_of.iter().zip(demand.values()) {
        let mut row = Vec::with_capacity(paths.len());
        for p in paths {
            let x = lp.add_var(0.0, (0.0, f64::INFINITY));
            row.push((x, 1.0));
            for &l in p {
                on_link.entry(l).or_default().push((x, 1.0));
            }
        }
        lp.add_constraint(row.as_slice(), ComparisonOp::Eq, d);
    }
    let mut links: Vec<_> = on_link.into_iter().collect();
    links.sort_unstable_by_key(|(l, _)| *l);
    for (l, mut row) in links {
        let (n, p) = fabric.port_of_id(l);
        let cap = fabric.link(n, p).rate.bps as f64 / line_bps;
        row.push((mu, -cap));
        lp.add_constraint(row.as_slice(), ComparisonOp::Le, 0.0);
    }
    let solution = lp
        .solve()
        .context("rho_max: solving the max-concurrent-flow LP")?
        .into_solution()
        .map_err(|_| {
            anyhow::anyhow!("rho_max: the max-concurrent-flow LP solve was interrupted")
        })?;
    let network = match solution.objective() {
        u if u > 0.0 => 1.0 / u,
        _ => f64::INFINITY,
    };
    Ok(RhoMax {
        rho_max: network.min(host_cap).min(1.0),
        commodities: demand.len(),
        paths: total,
    })
}

/// `rho_max` when every switch splits what it forwards toward a destination equally over its
/// valid next hops (`failures.rho_split = "even"`): the demands are pushed hop by hop, and the
/// most loaded switch-to-switch link over its capacity bounds λ.
pub(crate) fn rho_even(fabric: &Fabric, workload: &Workload) -> RhoMax {
    let line_bps = fabric.link(0, 0).rate.bps as f64;
    let (demand, host_cap) = demands(fabric, workload, line_bps);
    let hosts_per_edge = fabric.num_hosts / fabric.subtree(0, 1).1;
    let mut load: BTreeMap<u32, f64> = BTreeMap::new();
    for (&(a, b), &d) in &demand {
        let (src, dst) = (a * hosts_per_edge, b * hosts_per_edge);
        let goal = fabric.peer(dst, 0, 0).0;
        let mut stack = vec![(fabric.peer(src, 0, 0).0, d)];
        while let Some((n, mass)) = stack.pop() {
            if n == goal {
                continue;
            }
            let mut follow = |p: u16, share: f64| {
                *load.entry(fabric.port_id(n, p)).or_insert(0.0) += share;
                stack.push((fabric.peer(n, p, 0).0, share));
            };
            match fabric.route(n, dst, 0) {
                Route::Port(p) => follow(p, mass),
                Route::Choice(c) => {
                    let share = mass / c.len() as f64;
                    c.iter().for_each(|p| follow(p, share));
                }
            }
        }
    }
    RhoMax {
        rho_max: rate_at(fabric, &load, line_bps).min(host_cap).min(1.0),
        commodities: demand.len(),
        paths: 0,
    }
}

/// `rho_max` when every demand is split equally over its valid shortest paths
/// (`failures.rho_split = "even_paths"`).
pub(crate) fn rho_even_paths(fabric: &Fabric, workload: &Workload) -> RhoMax {
    let line_bps = fabric.link(0, 0).rate.bps as f64;
    let (demand, host_cap) = demands(fabric, workload, line_bps);
    let mut load: BTreeMap<u32, f64> = BTreeMap::new();
    let mut total = 0;
    for (&(a, b), &d) in &demand {
        let paths = edge_paths(fabric, a, b);
        total += paths.len();
        let share = d / paths.len() as f64;
        for p in &paths {
            for &l in p {
                *load.entry(l).or_insert(0.0) += share;
            }
        }
    }
    RhoMax {
        rho_max: rate_at(fabric, &load, line_bps).min(host_cap).min(1.0),
        commodities: demand.len(),
        paths: total,
    }
}

/// The rate λ at which the most loaded link of `load` (per unit of λ, by link id) is full.
fn rate_at(fabric: &Fabric, load: &BTreeMap<u32, f64>, line_bps: f64) -> f64 {
    let mu = load
        .iter()
        .map(|(&l, &x)| {
            let (n, p) = fabric.port_of_id(l);
            x / (fabric.link(n, p).rate.bps as f64 / line_bps)
        })
        .fold(0.0f64, f64::max);
    if mu > 0.0 {
        1.0 / mu
    } else {
        f64::INFINITY
    }
}

/// Demand per (source edge, destination edge) in units of λ, and the bound host links put on
/// λ.
fn demands(fabric: &Fabric, w: &Workload, line_bps: f64) -> (BTreeMap<(u32, u32), f64>, f64) {
    let mut demand = BTreeMap::new();
    let mut inbound = vec![0.0f64; fabric.num_hosts as usize];
    for h in 0..fabric.num_hosts {
        let n = w.flows_of(h);
        for i in 0..n {
            let f = w.flow(h, i);
            let share = 1.0 / n as f64;
            inbound[f.dst as usize] += share;
            let (a, b) = (fabric.subtree(f.src, 1).0, fabric.subtree(f.dst, 1).0);
            if a != b {
                *demand.entry((a, b)).or_insert(0.0) += share;
            }
        }
    }
    let cap = inbound
        .iter()
        .enumerate()
        .filter(|(_, &x)| x > 0.0)
        .map(|(h, &x)| {
            let (edge, port) = fabric.peer(h as NodeId, 0, 0);
            fabric.link(edge, port).rate.bps as f64 / line_bps / x
        })
        .fold(f64::INFINITY, f64::min);
    (demand, cap)
}

/// Every valid shortest path from edge switch `a` to edge switch `b`, as the global ids of
/// the switch-to-switch links it crosses.
fn edge_paths(fabric: &Fabric, a: u32, b: u32) -> Vec<Vec<u32>> {
    let hosts_per_edge = fabric.num_hosts / fabric.subtree(0, 1).1;
    let (src, dst) = (a * hosts_per_edge, b * hosts_per_edge);
    let start = fabric.peer(src, 0, 0).0;
    let goal = fabric.peer(dst, 0, 0).0;
    let mut out = Vec::new();
    let mut stack = vec![(start, Vec::new())];
    while let Some((n, links)) = stack.pop() {
        if n == goal {
            out.push(links);
            continue;
        }
        let mut follow = |p: u16| {
            let mut l = links.clone();
            l.push(fabric.port_id(n, p));
            stack.push((fabric.peer(n, p, 0).0, l));
        };
        match fabric.route(n, dst, 0) {
            Route::Port(p) => follow(p),
            Route::Choice(c) => c.iter().for_each(follow),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scenario::{FailedLink, Scenario, TopologyKind};

    fn solve(s: &Scenario) -> RhoMax {
        let fabric = Fabric::build(s).with_failures(s).unwrap();
        let w = Workload::build(s, &fabric).unwrap();
        rho_max(&fabric, &w).unwrap()
    }

    fn leaf_spine(k: u32, failed: &[(u32, u16)]) -> Scenario {
        let mut s = Scenario::default();
        s.topology.kind = TopologyKind::LeafSpine;
        s.topology.k = k;
        s.failures.links = failed
            .iter()
            .map(|&(node, port)| FailedLink { node, port })
            .collect();
        s
    }

    #[test]
    fn fault_free_permutation_and_all_to_all_reach_line_rate() {
        let mut s = Scenario::default();
        s.topology.k = 4;
        assert!((solve(&s).rho_max - 1.0).abs() < 1e-9);
        s.workload.kind = crate::scenario::WorkloadKind::AllToAll;
        assert!((solve(&s).rho_max - 1.0).abs() < 1e-9);
    }

    /// Leaf-spine k = 4: 4 leaves (nodes 8..11) of 2 hosts, 2 spines (12, 13); leaf ports
    /// 2 and 3 go to the spines. All-to-all: each host sends 1/7 of λ to each other host, so
    /// a leaf sends 2·2/7 = 4/7 λ to each other leaf and 12/7 λ in all over its two uplinks
    /// of capacity 1. With leaf 8's uplink to spine 13 failed, leaf 8's 12/7 λ leaves over
    /// one link: λ = 7/12. (Inbound likewise: 12/7 λ into leaf 8 over spine 12's one link.)
    #[test]
    fn one_failed_uplink_halves_a_leaf_by_hand() {
        let mut s = leaf_spine(4, &[(8, 3)]);
        s.workload.kind = crate::scenario::WorkloadKind::AllToAll;
        let r = solve(&s);
        assert!((r.rho_max - 7.0 / 12.0).abs() < 1e-9, "{r:?}");
        assert_eq!(r.commodities, 12);
        // Pairs with leaf 8 have one path, the other 6 pairs two: 6 + 12 = 18.
        assert_eq!(r.paths, 18);
    }

    /// The same failure under a permutation: leaf 8's two hosts send 2λ over one uplink of
    /// capacity 1 (and whoever sends to leaf 8 comes down one link), so λ = 1/2 whenever
    /// both hosts of leaf 8 send off-leaf, which a derangement with seed 1 does (checked).
    #[test]
    fn permutation_through_one_uplink_by_hand() {
        let s = leaf_spine(4, &[(8, 3)]);
        let fabric = Fabric::build(&s).with_failures(&s).unwrap();
        let w = Workload::build(&s, &fabric).unwrap();
        let off_leaf = |h: u32| w.flow(h, 0).dst / 2 != h / 2;
        assert!(
            off_leaf(0) && off_leaf(1),
            "the hand computation needs both off-leaf"
        );
        let into_leaf0 = (0..8)
            .filter(|&h| h / 2 != 0 && w.flow(h, 0).dst / 2 == 0)
            .count();
        let expect = 1.0 / (2.0f64).max(into_leaf0 as f64);
        assert!((solve(&s).rho_max - expect).abs() < 1e-9);
    }

    /// All-to-all on the fat tree k = 4 with the two failures below.
    fn two_failures() -> Scenario {
        let mut s = Scenario::default();
        s.topology.k = 4;
        s.workload.kind = crate::scenario::WorkloadKind::AllToAll;
        s.failures.links = vec![
            FailedLink { node: 16, port: 3 },
            FailedLink { node: 24, port: 2 },
        ];
        s
    }

    /// Fat tree k = 4, edge 0 (node 16) loses its uplink to aggregation 1 (port 3) and
    /// aggregation 0 of pod 0 (node 24) loses its uplink to core 0 (port 2): edge 16's
    /// inter-pod traffic has one path (agg 24, core 1). Under all-to-all each host sends
    /// 1/15 λ to each other host; edge 16's two hosts send 2·(1/15)·2 = 4/15 λ to its
    /// pod neighbour edge and 2·12/15 = 24/15 λ out of the pod, all through the link
    /// 16 -> 24 (capacity 1): 28/15 λ ≤ 1, and out of the pod through 24 -> core 1,
    /// which also carries agg 24's share of edge 17's out-of-pod traffic. Edge 17 sends
    /// 24/15 λ out of the pod over aggs 24 and 25; agg 25 has two cores, agg 24 one.
    /// The binding link is 16 -> 24 with 28/15 λ: λ = 15/28 (edge 17 can send all its
    /// out-of-pod traffic via agg 25, whose core links carry 24/15·λ/2 each ≤ 1).
    #[test]
    fn fat_tree_two_failures_by_hand() {
        let r = solve(&two_failures());
        assert!((r.rho_max - 15.0 / 28.0).abs() < 1e-9, "{r:?}");
    }

    /// The same two failures under the even splits. Core 32 lost its only link into pod 0, so
    /// everything for pod 0 enters through core 33 and aggregation 24, which also carries all
    /// of edge 16's out-of-pod traffic (24/15 λ each way). Split per hop, edge 17 and every
    /// other pod's edge send half of their pod-0 traffic through aggregation 24's side (12/15
    /// λ): the link 24 -> 33 carries 36/15 λ, λ = 15/36. Split per path, that side holds 1 of
    /// edge 17's 3 out-of-pod paths to any edge (one via core 33, two via cores 34 and 35):
    /// 8/15 λ, so 32/15 λ and λ = 15/32. Both below the best split's 15/28.
    #[test]
    fn even_splits_of_the_two_failures_by_hand() {
        let s = two_failures();
        let fabric = Fabric::build(&s).with_failures(&s).unwrap();
        let w = Workload::build(&s, &fabric).unwrap();
        let hops = rho_even(&fabric, &w).rho_max;
        assert!((hops - 15.0 / 36.0).abs() < 1e-9, "{hops}");
        let paths = rho_even_paths(&fabric, &w).rho_max;
        assert!((paths - 15.0 / 32.0).abs() < 1e-9, "{paths}");
    }

    /// No split beats the best one; without failures every split reaches line rate.
    #[test]
    fn even_splits_never_exceed_the_optimal_one() {
        let mut below = 0;
        for seed in 1..=6 {
            let mut s = Scenario::default();
            s.topology.k = 6;
            s.seed = seed;
            s.failures.link_probability = 0.08;
            let Ok(fabric) = Fabric::build(&s).with_failures(&s) else {
                continue; // a draw that disconnects two edges is refused
            };
            let w = Workload::build(&s, &fabric).unwrap();
            let best = rho_max(&fabric, &w).unwrap().rho_max;
            for r in [rho_even(&fabric, &w), rho_even_paths(&fabric, &w)] {
                assert!(
                    r.rho_max <= best + 1e-9,
                    "seed {seed}: {} > {best}",
                    r.rho_max
                );
                below += (r.rho_max < best - 1e-9) as u32;
            }
        }
        assert!(below >= 2, "the draws should include uneven ones ({below})");
        let mut s = Scenario::default();
        s.topology.k = 4;
        let fabric = Fabric::build(&s).with_failures(&s).unwrap();
        let w = Workload::build(&s, &fabric).unwrap();
        assert_eq!(rho_even(&fabric, &w).rho_max, 1.0);
        assert_eq!(rho_even_paths(&fabric, &w).rho_max, 1.0);
    }
}
