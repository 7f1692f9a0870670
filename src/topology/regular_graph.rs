//! Random u-regular simple graphs: the ToR-to-ToR wiring of the static expander (Opera's
//! cost-equivalent baseline, a random near-Ramanujan graph as opera-sim's `expander_topo_gen`).
//!
//! Generator: the pairing (configuration) model with Steger and Wormald's repair, as
//! networkx's `random_regular_graph`. Every vertex has u points; the free points are
//! shuffled and paired in order; a pair that would make a self-loop or a parallel edge is
//! not kept, and its two points go back into the pool for the next round. When the pool's
//! vertices admit no valid pair at all the draw restarts.
//!
//! Why this one: the plain pairing model with restarts on any self-loop or parallel edge is
//! exactly uniform over simple u-regular graphs, but a draw is simple with probability about
//! exp(-(u² - 1)/4): 1 in 160,000 for the paper's u = 7, 1 in 3 × 10^15 for u = 12, so it cannot
//! build the graphs we need. Steger-Wormald is asymptotically uniform (for u = o(N^(1/28)),
//! Kim and Vu; in practice no measurable bias at the sizes simulated) and needs O(N·u)
//! work per draw, restarting rarely. A union of random permutations (or matchings) with
//! repair is as fast but further from uniform and needs extra rules for odd u.
//!
//! The graph is stored as sorted adjacency rows, so the port numbering derived from it
//! depends on the graph alone, not on the order of the draw.

use rand::seq::SliceRandom;
use rand::Rng;

/// Rounds of pairing in one draw before it is abandoned (each round pairs every pool point;
/// the pool shrinks geometrically, so a draw that has not finished by then is stuck).
const MAX_ROUNDS: u32 = 10_000;
/// Draws (restarts) before giving up on one realization.
const MAX_DRAWS: u32 = 1_000;

/// Marks a pair of vertices that are not connected.
pub(crate) const UNREACHABLE: u16 = u16::MAX;

/// A simple undirected graph with every vertex of degree `u`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct RegularGraph {
    n: u32,
    u: u32,
    /// Row-major `n × u`: the neighbours of each vertex in increasing order.
    adj: Vec<u32>,
}

impl RegularGraph {
    /// A random simple u-regular graph on `n` vertices (`n·u` even, `u < n`), or `None` when
    /// every one of [`MAX_DRAWS`] draws got stuck (never seen for u ≥ 1 at these sizes).
    pub(crate) fn random<R: Rng>(n: u32, u: u32, rng: &mut R) -> Option<RegularGraph> {
        assert!(u < n && (n as u64 * u as u64) % 2 == 0, "n = {n}, u = {u}");
        (0..MAX_DRAWS).find_map(|_| try_draw(n, u, rng))
    }

    /// A graph from adjacency rows (sorted here); panics unless simple, symmetric and
    /// u-regular (tests, hand-made graphs).
    pub(crate) fn from_rows(rows: Vec<Vec<u32>>) -> RegularGraph {
        let n = rows.len() as u32;
        let u = rows.first().map_or(0, |r| r.len() as u32);
        let mut adj = Vec::with_capacity((n * u) as usize);
        for mut r in rows {
            assert_eq!(r.len() as u32, u, "not regular");
            r.sort_unstable();
            adj.extend(r);
        }
        let g = RegularGraph { n, u, adj };
        assert!(
            g.is_simple() && g.is_symmetric(),
            "not a simple undirected graph"
        );
        g
    }

    pub(crate) fn vertices(&self) -> u32 {
        self.n
    }
    pub(crate) fn degree(&self) -> u32 {
        self.u
    }
    /// The neighbours of `v`, increasing.
    #[inline]
    pub(crate) fn neighbours(&self, v: u32) -> &[u32] {
        let u = self.u as usize;
        &self.adj[v as usize * u..(v as usize + 1) * u]
    }
    /// The index of `w` among the neighbours of `v`, if adjacent.
    pub(crate) fn position(&self, v: u32, w: u32) -> Option<usize> {
        self.neighbours(v).binary_search(&w).ok()
    }

    /// No self-loops and no parallel edges (rows sorted, so duplicates are adjacent).
    pub(crate) fn is_simple(&self) -> bool {
        (0..self.n).all(|v| {
            let r = self.neighbours(v);
            !r.contains(&v) && r.windows(2).all(|w| w[0] < w[1])
        })
    }
    /// Every edge appears at both ends.
    pub(crate) fn is_symmetric(&self) -> bool {
        (0..self.n).all(|v| {
            self.neighbours(v)
                .iter()
                .all(|&w| self.position(w, v).is_some())
        })
    }

    /// Hop counts from `src` to every vertex ([`UNREACHABLE`] where none), by BFS.
    pub(crate) fn distances_from(&self, src: u32) -> Vec<u16> {
        let mut dist = vec![UNREACHABLE; self.n as usize];
        let mut queue = Vec::with_capacity(self.n as usize);
        dist[src as usize] = 0;
        queue.push(src);
        let mut head = 0;
        while head < queue.len() {
            let v = queue[head];
            head += 1;
            let next = dist[v as usize] + 1;
            for &w in self.neighbours(v) {
                if dist[w as usize] == UNREACHABLE {
                    dist[w as usize] = next;
                    queue.push(w);
                }
            }
        }
        dist
    }

    /// All-pairs hop counts, row-major `n × n` (BFS from every vertex: O(n² u)), or `None`
    /// if the graph is disconnected.
    pub(crate) fn all_distances(&self) -> Option<Vec<u16>> {
        if self.distances_from(0).contains(&UNREACHABLE) {
            return None;
        }
        let mut all = Vec::with_capacity(self.n as usize * self.n as usize);
        for v in 0..self.n {
            all.extend(self.distances_from(v));
        }
        Some(all)
    }
}

/// (diameter, sum of hop counts over ordered pairs) of an all-pairs table: the order in which
/// realizations are compared (the sum orders the mean hop count, n being fixed).
pub(crate) fn quality(dist: &[u16]) -> (u16, u64) {
    let diameter = dist.iter().copied().max().unwrap_or(0);
    let total = dist.iter().map(|&d| d as u64).sum();
    (diameter, total)
}

/// One Steger-Wormald draw, or `None` if it got stuck.
fn try_draw<R: Rng>(n: u32, u: u32, rng: &mut R) -> Option<RegularGraph> {
    let mut rows: Vec<Vec<u32>> = (0..n).map(|_| Vec::with_capacity(u as usize)).collect();
    let mut pool: Vec<u32> = (0..n)
        .flat_map(|v| std::iter::repeat_n(v, u as usize))
        .collect();
    let mut rest = Vec::new();
    for _ in 0..MAX_ROUNDS {
        if pool.is_empty() {
            return Some(RegularGraph::from_rows(rows));
        }
        pool.shuffle(rng);
        rest.clear();
        for pair in pool.chunks_exact(2) {
            let (a, b) = (pair[0], pair[1]);
            if a != b && !rows[a as usize].contains(&b) {
                rows[a as usize].push(b);
                rows[b as usize].push(a);
            } else {
                rest.extend([a, b]);
            }
        }
        // Sorted, so the next round's pool does not depend on this round's order beyond
        // what was drawn.
        rest.sort_unstable();
        if !rest.is_empty() && !any_valid_pair(&rest, &rows) {
            return None;
        }
        std::mem::swap(&mut pool, &mut rest);
    }
    None
}

/// Whether two distinct, non-adjacent vertices have points left in `pool` (sorted).
fn any_valid_pair(pool: &[u32], rows: &[Vec<u32>]) -> bool {
    let mut vs = pool.to_vec();
    vs.dedup();
    vs.iter()
        .enumerate()
        .any(|(i, &a)| vs[i + 1..].iter().any(|&b| !rows[a as usize].contains(&b)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::{stream, Purpose};

    fn draw(n: u32, u: u32, seed: u64) -> RegularGraph {
        RegularGraph::random(n, u, &mut stream(seed, 0, Purpose::Expander)).unwrap()
    }

    #[test]
    fn draws_are_simple_symmetric_and_regular() {
        for (n, u) in [(4, 3), (10, 3), (11, 4), (130, 7), (64, 12), (6, 5), (2, 1)] {
            for seed in 1..4 {
                let g = draw(n, u, seed);
                assert_eq!((g.vertices(), g.degree()), (n, u));
                assert_eq!(g.adj.len() as u32, n * u);
                assert!(g.is_simple(), "n={n} u={u} seed={seed}");
                assert!(g.is_symmetric(), "n={n} u={u} seed={seed}");
            }
        }
    }

    #[test]
    fn the_same_seed_gives_the_same_graph_and_another_seed_another() {
        assert_eq!(draw(130, 7, 1), draw(130, 7, 1));
        assert_ne!(draw(130, 7, 1), draw(130, 7, 2));
    }

    /// u = n - 1 leaves one graph: the complete graph.
    #[test]
    fn full_degree_is_the_complete_graph() {
        let g = draw(5, 4, 9);
        for v in 0..5 {
            let others: Vec<u32> = (0..5).filter(|&w| w != v).collect();
            assert_eq!(g.neighbours(v), others.as_slice());
        }
    }

    /// Hand-checked distances: a 6-cycle (u = 2) has eccentricity 3, and two disjoint
    /// triangles are disconnected.
    #[test]
    fn distances_by_hand() {
        let ring =
            RegularGraph::from_rows((0..6).map(|v| vec![(v + 1) % 6, (v + 5) % 6]).collect());
        assert_eq!(ring.distances_from(0), [0, 1, 2, 3, 2, 1]);
        let all = ring.all_distances().unwrap();
        assert_eq!(quality(&all), (3, 6 * (1 + 2 + 3 + 2 + 1)));
        let two = RegularGraph::from_rows(vec![
            vec![1, 2],
            vec![0, 2],
            vec![0, 1],
            vec![4, 5],
            vec![3, 5],
            vec![3, 4],
        ]);
        assert_eq!(two.distances_from(0)[3], UNREACHABLE);
        assert!(two.all_distances().is_none());
    }
}

#[cfg(test)]
mod uniformity {
    use super::*;
    use crate::rng::{stream, Purpose};

    /// The 70 labelled cubic graphs on 6 vertices (K_{3,3}: 10 labellings; the prism: 60)
    /// all appear, none more than twice as often as another, in 70,000 draws: the
    /// generator's bias at the smallest sizes (it is exactly uniform only asymptotically).
    #[test]
    fn six_vertex_cubic_graphs_appear_about_equally_often() {
        let mut counts = std::collections::BTreeMap::<Vec<u32>, u32>::new();
        let rng = &mut stream(1, 0, Purpose::Expander);
        for _ in 0..70_000 {
            let g = RegularGraph::random(6, 3, rng).unwrap();
            *counts.entry(g.adj).or_default() += 1;
        }
        assert_eq!(counts.len(), 70);
        let (min, max) = (
            counts.values().min().unwrap(),
            counts.values().max().unwrap(),
        );
        eprintln!("70 graphs, counts from {min} to {max}");
        assert!(*max < 2 * *min, "counts from {min} to {max}");
    }
}
