//! Static expander: N ToRs, each with d hosts and u ToR-to-ToR links forming a random
//! u-regular graph (`regular_graph.rs`); ECMP over every shortest ToR path. Opera's
//! cost-equivalent static baseline (the Opera paper, §5: 130 racks × 5 hosts, u = 7, k = 12).
//!
//! Numbering: hosts `0..N·d` (rack-major); ToR r is node `T0 + r`, `T0 = N·d`, tier 1 (hosts
//! tier 0, no higher tier). ToR ports: `0..d` down (port i → host r·d + i), then `d + j` to the
//! j-th neighbour of r in increasing rack order. Links are symmetric: the peer port is `d` +
//! r's index among the neighbour's neighbours.
//!
//! Routing: in the destination's rack, its downlink; elsewhere every lateral port whose
//! neighbour is one hop closer to the destination's rack (ECMP over equal-cost shortest
//! paths, the policy chooses). Tabulated per (ToR, destination rack) as an index into a pool
//! of interned port lists, built by BFS from every rack: O(N² u) time, 4 N² bytes of table
//! plus 2 N² of hop counts.
//!
//! Realizations: `topology.expander.realizations` graphs are drawn (realization i from
//! `rng::stream(seed, i, Purpose::Expander)`), disconnected ones discarded, and the one with
//! the least (diameter, mean ToR-to-ToR hop count) kept, the lowest index on a tie.

use super::racks::Racks;
use super::regular_graph::{quality, RegularGraph};
use super::shape::ShapeRules;
use super::{Candidates, NodeId, Route, Wiring};
use crate::rng::{stream, Purpose};
use crate::scenario::FieldError;

pub(crate) const STAGES: &[&str] = &["host_tor", "tor_tor", "tor_host"];

/// The longest ToR-to-ToR path a fabric may have: `Fabric::path` walks at most 64 links
/// (two of them host links), so a ring-like draw (u = 2) is refused rather than looping.
pub(crate) const MAX_DIAMETER: u16 = 32;

/// Marks the (ToR, own rack) cells of the route table.
const OWN_RACK: u32 = u32::MAX;

#[derive(Clone, Debug)]
pub(crate) struct Expander {
    /// Racks, hosts per rack (d), uplinks per ToR (u, the graph's degree).
    rk: Racks,
    graph: RegularGraph,
    /// Row-major `N × N` ToR-to-ToR hop counts.
    dist: Vec<u16>,
    /// Row-major `N × N`: (ToR, destination rack) → index into `lists`.
    table: Vec<u32>,
    /// Interned candidate lists: (start, length) in `pool`.
    lists: Vec<(u32, u32)>,
    pool: Vec<u16>,
}

impl Expander {
    /// Draws `realizations` graphs and keeps the best connected one; the error names
    /// `topology.uplinks` when every draw is disconnected or too long.
    pub(crate) fn build(
        racks: u32,
        hosts_per_rack: u32,
        uplinks: u32,
        realizations: u32,
        seed: u64,
    ) -> Result<Expander, FieldError> {
        let mut best: Option<(RegularGraph, Vec<u16>)> = None;
        for i in 0..realizations {
            let rng = &mut stream(seed, i as u64, Purpose::Expander);
            let Some(g) = RegularGraph::random(racks, uplinks, rng) else {
                continue;
            };
            let Some(dist) = g.all_distances() else {
                continue;
            };
            if best
                .as_ref()
                .is_none_or(|(_, b)| quality(&dist) < quality(b))
            {
                best = Some((g, dist));
            }
        }
        let Some((graph, dist)) = best else {
            return Err(FieldError::new(
                "topology.uplinks",
                format!(
                    "every one of the {realizations} random {uplinks}-regular graphs on {racks} racks \
                     is disconnected (more uplinks or topology.expander.realizations)"
                ),
            ));
        };
        let (diameter, _) = quality(&dist);
        if diameter > MAX_DIAMETER {
            return Err(FieldError::new(
                "topology.uplinks",
                format!(
                    "the best {uplinks}-regular graph on {racks} racks has ToR-to-ToR diameter \
                     {diameter}, above {MAX_DIAMETER}: use more uplinks"
                ),
            ));
        }
        Ok(Expander::from_graph(hosts_per_rack, graph, dist))
    }

    /// The fabric on a given graph (`dist`: its all-pairs hop counts).
    pub(crate) fn from_graph(hosts_per_rack: u32, graph: RegularGraph, dist: Vec<u16>) -> Expander {
        let (racks, u) = (graph.vertices(), graph.degree());
        let mut e = Expander {
            rk: Racks::new(racks, hosts_per_rack, u),
            graph,
            dist,
            table: Vec::new(),
            lists: Vec::new(),
            pool: Vec::new(),
        };
        e.tabulate_routes();
        e
    }

    /// Per (ToR r, destination rack t ≠ r): the lateral ports to neighbours one hop closer
    /// to t, interned.
    fn tabulate_routes(&mut self) {
        let n = self.rk.racks as usize;
        let mut interned = std::collections::HashMap::<Vec<u16>, u32>::new();
        let mut table = vec![OWN_RACK; n * n];
        let mut ports = Vec::with_capacity(self.rk.u as usize);
        for r in 0..n {
            for t in (0..n).filter(|&t| t != r) {
                let here = self.dist[r * n + t];
                ports.clear();
                for (j, &w) in self.graph.neighbours(r as u32).iter().enumerate() {
                    if self.dist[w as usize * n + t] + 1 == here {
                        ports.push((self.rk.d as usize + j) as u16);
                    }
                }
                assert!(!ports.is_empty(), "rack {r} has no next hop to {t}");
                let next = self.lists.len() as u32;
                let id = *interned.entry(ports.clone()).or_insert_with(|| {
                    self.lists
                        .push((self.pool.len() as u32, ports.len() as u32));
                    self.pool.extend(&ports);
                    next
                });
                table[r * n + t] = id;
            }
        }
        self.table = table;
    }

    pub(crate) fn num_hosts(&self) -> u32 {
        self.rk.t0
    }
    #[cfg(test)]
    pub(crate) fn racks(&self) -> u32 {
        self.rk.racks
    }
    #[cfg(test)]
    /// ToR-to-ToR hop count between racks `a` and `b`.
    pub(crate) fn rack_distance(&self, a: u32, b: u32) -> u16 {
        self.dist[(a * self.rk.racks + b) as usize]
    }
    #[cfg(test)]
    /// Distinct candidate lists in the route table.
    pub(crate) fn distinct_lists(&self) -> usize {
        self.lists.len()
    }
    /// Bytes of routing state (route table, hop counts, lists, graph).
    pub(crate) fn table_bytes(&self) -> u64 {
        (self.table.len() * 4 + self.dist.len() * 2 + self.lists.len() * 8 + self.pool.len() * 2)
            as u64
            + (self.rk.racks * self.rk.u * 4) as u64
    }

    pub(super) fn wiring(&self) -> Wiring {
        let (d, t0) = (self.rk.d, self.rk.t0);
        self.rk.wiring(|r, j| {
            let w = self.graph.neighbours(r)[j as usize];
            let back = self.graph.position(w, r).expect("symmetric graph");
            (t0 + w, (d as usize + back) as u16)
        })
    }

    /// Two hosts whose racks are a diameter apart (the first such pair in rack order): the
    /// fabric's longest path.
    pub(crate) fn farthest_hosts(&self) -> (NodeId, NodeId) {
        let (diameter, _) = quality(&self.dist);
        let i = self
            .dist
            .iter()
            .position(|&x| x == diameter)
            .expect("racks");
        let (a, b) = (i as u32 / self.rk.racks, i as u32 % self.rk.racks);
        (a * self.rk.d, b * self.rk.d)
    }
}

impl ShapeRules for Expander {
    #[inline]
    fn route(&self, n: NodeId, dst: NodeId) -> Route<'_> {
        if let Some(p) = self.rk.downlink(n, dst) {
            return Route::Port(p);
        }
        let (r, t) = (n - self.rk.t0, dst / self.rk.d);
        let (start, len) = self.lists[self.table[(r * self.rk.racks + t) as usize] as usize];
        match len {
            1 => Route::Port(self.pool[start as usize]),
            _ => Route::Choice(Candidates::List(
                &self.pool[start as usize..(start + len) as usize],
            )),
        }
    }

    /// Every ToR-to-ToR port, whatever the destination (Valiant's climb; refused on
    /// expanders by validation, given for completeness).
    #[inline]
    fn route_up(&self, _n: NodeId) -> Route<'_> {
        Route::Choice(Candidates::Range {
            first: self.rk.d as u16,
            count: self.rk.u as u16,
        })
    }

    /// Racks, at every level: the only subtrees a flat fabric has.
    #[inline]
    fn subtree(&self, dst: NodeId, _level: u8) -> (u32, u32) {
        self.rk.subtree(dst)
    }

    /// 1 in one rack; 2 otherwise (no common switch: the ToR-to-ToR graph counts as the one
    /// level above the ToRs, as the spines of a leaf-spine).
    fn lca_tier(&self, a: NodeId, b: NodeId) -> u8 {
        self.rk.lca_tier(a, b)
    }

    /// A rack: its ToR and its hosts, at any granularity (ToR-to-ToR links are cut).
    fn group_of(&self, n: NodeId, _fine: bool) -> Option<u32> {
        self.rk.group_of(n)
    }

    fn num_groups(&self, _fine: bool) -> u32 {
        self.rk.racks
    }

    /// ToR-to-ToR ports of a ToR.
    fn tier_uplinks(&self, _t: u8) -> u16 {
        self.rk.u as u16
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// N = 4, u = 3: the complete graph K4; every ToR pair is adjacent, so every route to
    /// another rack is the single port to its ToR, and the wiring is hand-checkable.
    #[test]
    fn k4_by_hand() {
        let e = Expander::build(4, 2, 3, 1, 7).unwrap();
        assert_eq!((e.num_hosts(), e.racks()), (8, 4));
        // ToR 1 (node 9): ports 0, 1 to hosts 2, 3; ports 2, 3, 4 to ToRs 0, 2, 3 (nodes 8,
        // 10, 11), arriving at their ports 2 (rack 1 is ToR 0's first neighbour of 1, 2, 3),
        // 3 (second of ToR 2's 0, 1, 3) and 3 (second of ToR 3's 0, 1, 2).
        let w = e.wiring();
        assert_eq!(
            w.ports[9],
            [(2, 0, 0), (3, 0, 0), (8, 2, 1), (10, 3, 1), (11, 3, 1)]
        );
        assert_eq!(w.ports[3], [(9, 1, 0)]);
        assert_eq!(e.route(9, 3), Route::Port(1));
        assert_eq!(e.route(9, 0), Route::Port(2));
        assert_eq!(e.route(9, 5), Route::Port(3));
        assert_eq!(e.route(9, 7), Route::Port(4));
        for a in 0..4 {
            for b in 0..4 {
                assert_eq!(e.rack_distance(a, b), (a != b) as u16);
            }
        }
        assert_eq!(e.group_of(3, false), Some(1));
        assert_eq!(e.group_of(9, true), Some(1));
        assert_eq!(
            (e.subtree(7, 1), e.lca_tier(2, 3), e.lca_tier(2, 4)),
            ((3, 4), 1, 2)
        );
    }

    /// A 6-cycle of racks (hand-made, u = 2): rack 0 reaches rack 3 both ways round (two
    /// candidates), racks 1 and 2 one way each.
    #[test]
    fn a_ring_by_hand() {
        let g = RegularGraph::from_rows((0..6).map(|v| vec![(v + 1) % 6, (v + 5) % 6]).collect());
        let dist = g.all_distances().unwrap();
        let e = Expander::from_graph(1, g, dist);
        // ToR 0 is node 6; its ports: 0 host 0, 1 → rack 1, 2 → rack 5.
        let l = [1u16, 2];
        assert_eq!(e.route(6, 3), Route::Choice(Candidates::List(&l)));
        assert_eq!(e.route(6, 2), Route::Port(1));
        assert_eq!(e.route(6, 4), Route::Port(2));
        assert_eq!(e.route(6, 0), Route::Port(0));
        assert_eq!(e.farthest_hosts(), (0, 3));
    }

    /// Realizations: more draws never give a worse (diameter, total hops), and each
    /// realization is the draw of its own stream.
    #[test]
    fn the_best_realization_is_kept() {
        let q = |e: &Expander| quality(&e.dist);
        let one = Expander::build(40, 1, 3, 1, 5).unwrap();
        let many = Expander::build(40, 1, 3, 8, 5).unwrap();
        assert!(q(&many) <= q(&one));
        let mut each = vec![];
        for i in 0..8 {
            let g = RegularGraph::random(40, 3, &mut stream(5, i, Purpose::Expander)).unwrap();
            if let Some(d) = g.all_distances() {
                each.push(quality(&d));
            }
        }
        assert_eq!(q(&many), each.into_iter().min().unwrap());
    }

    /// Two racks of one uplink: the only connected 1-regular graph. Four racks of one
    /// uplink are two disjoint links: refused, naming `topology.uplinks`.
    #[test]
    fn disconnected_draws_are_refused() {
        assert!(Expander::build(2, 3, 1, 1, 1).is_ok());
        let e = Expander::build(4, 3, 1, 5, 1).unwrap_err();
        assert_eq!(e.field, "topology.uplinks");
        assert!(e.message.contains("disconnected"), "{e}");
    }
}

#[cfg(test)]
mod measure {
    use super::*;

    /// Build time and routing-state size at Opera's and larger scales (measurement, run with
    /// `cargo test --release -- --ignored --nocapture measure`).
    #[test]
    #[ignore = "measurement"]
    fn build_cost() {
        for (n, d, u, r) in [
            (130, 5, 7, 1),
            (130, 5, 7, 8),
            (130, 5, 7, 64),
            (1000, 8, 8, 1),
            (1024, 12, 12, 1),
            (4096, 4, 12, 1),
        ] {
            let t = std::time::Instant::now();
            let e = Expander::build(n, d, u, r, 1).unwrap();
            let (diameter, total) = quality(&e.dist);
            eprintln!(
                "N = {n}, u = {u}, {r} realizations: {:.3} s, {:.1} MB of tables, {} distinct lists, diameter {diameter}, mean hops {:.3}",
                t.elapsed().as_secs_f64(),
                e.table_bytes() as f64 / 1e6,
                e.distinct_lists(),
                total as f64 / (n as f64 * (n - 1) as f64)
            );
        }
    }
}
