//! The authors' low-latency path sets (`topology.opera.ll_paths = "k_shortest"`): for each
//! (superslice, source rack, destination rack), the `max_paths` shortest *loopless* paths of the
//! superslice's stable graph by Yen's algorithm (opera-sim's generator, `kShortestPath.m`), of any
//! length: a directly connected pair gets its circuit and `max_paths − 1` longer detours, where
//! the shortest paths alone (`paths.rs`) are often a single one. The sender's NIC draws one per
//! packet (opera-sim's `PriorityQueue::completeService`: `random() % npaths` over the slice's
//! paths of the topology file) and every ToR forwards the packet along it.
//!
//! Paths are rotor sequences from the source rack. They are computed on first use and kept (one
//! slot per (superslice, src, dst); each slot is filled once, by whichever thread asks first, with
//! the same value whoever computes it): a run touches only the pairs its traffic uses.
//!
//! Yen's algorithm with breadth-first spur searches (unit link costs). Ties are broken by rotor
//! index (a BFS expands rotors in ascending order) and, among candidates of equal length, by the
//! order they were found, so the set is a pure function of the schedule.

use std::sync::OnceLock;

use super::schedule::Schedule;

/// Most slots (S · N²) the cache may hold: 2^26 (64 M, ~1.5 GB of empty slots). The paper's
/// k = 12 fabric needs 1.26 M.
pub(crate) const MAX_SLOTS: u128 = 1 << 26;

/// One (superslice, src, dst)'s paths, shortest first; each path the rotor taken at each hop.
type PathSet = Box<[Box<[u16]>]>;

/// Lazily computed k-shortest loopless path sets of every (superslice, src, dst).
#[derive(Debug)]
pub(crate) struct KPaths {
    racks: usize,
    superslices: usize,
    k: usize,
    slots: Vec<OnceLock<PathSet>>,
}

impl Clone for KPaths {
    /// A clone starts with an empty cache (the paths are recomputed on demand, identically).
    fn clone(&self) -> Self {
        KPaths::new(self.racks, self.superslices, self.k)
    }
}

impl PartialEq for KPaths {
    /// Equal when they describe the same path sets (the cache's fill state does not matter).
    fn eq(&self, other: &Self) -> bool {
        (self.racks, self.superslices, self.k) == (other.racks, other.superslices, other.k)
    }
}

impl Eq for KPaths {}

impl KPaths {
    pub(crate) fn new(racks: usize, superslices: usize, k: usize) -> KPaths {
        let n = superslices * racks * racks;
        KPaths {
            racks,
            superslices,
            k,
            slots: (0..n).map(|_| OnceLock::new()).collect(),
        }
    }

    /// The up to `k` shortest loopless paths from `src` to `dst` in `superslice` (taken modulo
    /// the cycle), shortest first; empty when `src == dst`.
    pub(crate) fn get(
        &self,
        sched: &Schedule,
        superslice: usize,
        src: usize,
        dst: usize,
    ) -> &[Box<[u16]>] {
        if src == dst {
            return &[];
        }
        let s = superslice % self.superslices;
        let slot = &self.slots[(s * self.racks + src) * self.racks + dst];
        slot.get_or_init(|| {
            yen(sched, s, src, dst, self.k)
                .into_iter()
                .map(Vec::into_boxed_slice)
                .collect()
        })
    }

    /// Bytes held on the heap by the empty slots (filled ones add their paths).
    pub(crate) fn heap_bytes(&self) -> usize {
        self.slots.capacity() * std::mem::size_of::<OnceLock<PathSet>>()
    }
}

/// The racks a rotor path from `src` visits in superslice `s`, `src` first.
pub(crate) fn racks_of(sched: &Schedule, s: usize, src: usize, path: &[u16]) -> Vec<usize> {
    let mut out = Vec::with_capacity(path.len() + 1);
    let mut x = src;
    out.push(x);
    for &b in path {
        x = sched.matching(b as usize, s)[x] as usize;
        out.push(x);
    }
    out
}

/// Shortest path (rotor sequence) from `from` to `dst` over the stable rotors of `s` that
/// avoids the racks marked in `banned_rack` and, leaving `from`, the rotors in `banned_first`.
fn bfs(
    sched: &Schedule,
    s: usize,
    from: usize,
    dst: usize,
    banned_rack: &[bool],
    banned_first: &[u16],
    stable: &[usize],
) -> Option<Vec<u16>> {
    let n = sched.racks();
    // parent[y] = (rack, rotor) it was reached from.
    let mut parent: Vec<Option<(usize, u16)>> = vec![None; n];
    let mut seen = vec![false; n];
    seen[from] = true;
    let mut frontier = vec![from];
    while !frontier.is_empty() && !seen[dst] {
        let mut next = Vec::new();
        for &x in &frontier {
            for &b in stable {
                if x == from && banned_first.contains(&(b as u16)) {
                    continue;
                }
                let y = sched.matching(b, s)[x] as usize;
                if y == x || seen[y] || banned_rack[y] {
                    continue;
                }
                seen[y] = true;
                parent[y] = Some((x, b as u16));
                next.push(y);
            }
        }
        frontier = next;
    }
    if !seen[dst] {
        return None;
    }
    let mut path = Vec::new();
    let mut y = dst;
    while y != from {
        let (x, b) = parent[y].expect("reached racks have parents");
        path.push(b);
        y = x;
    }
    path.reverse();
    Some(path)
}

/// Yen's k shortest loopless paths from `src` to `dst` (≠) in superslice `s`.
pub(crate) fn yen(sched: &Schedule, s: usize, src: usize, dst: usize, k: usize) -> Vec<Vec<u16>> {
    let n = sched.racks();
    let stable: Vec<usize> = sched.stable_rotors(s).collect();
    let none = vec![false; n];
    let Some(first) = bfs(sched, s, src, dst, &none, &[], &stable) else {
        return Vec::new();
    };
    let mut found: Vec<Vec<u16>> = vec![first];
    let mut candidates: Vec<Vec<u16>> = Vec::new();
    while found.len() < k {
        let prev = found.last().expect("at least the shortest path").clone();
        let racks = racks_of(sched, s, src, &prev);
        for i in 0..prev.len() {
            let root = &prev[..i];
            let spur = racks[i];
            // Leaving the spur rack, avoid the next rotor of every known path sharing the root.
            let banned_first: Vec<u16> = found
                .iter()
                .filter(|p| p.len() > i && &p[..i] == root)
                .map(|p| p[i])
                .collect();
            // The root's racks (the spur rack excepted) may not be revisited: loopless.
            let mut banned_rack = vec![false; n];
            for &x in &racks[..i] {
                banned_rack[x] = true;
            }
            if let Some(tail) = bfs(sched, s, spur, dst, &banned_rack, &banned_first, &stable) {
                let mut p = root.to_vec();
                p.extend(tail);
                if !found.contains(&p) && !candidates.contains(&p) {
                    candidates.push(p);
                }
            }
        }
        // The shortest candidate, the earliest found among equals.
        let Some(best) = (0..candidates.len()).min_by_key(|&j| (candidates[j].len(), j)) else {
            break;
        };
        found.push(candidates.remove(best));
    }
    found
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::topology::opera::{Opera, OperaParams};

    /// 12 racks, 4 rotors (3 stable per superslice), a few superslices' worth of pairs.
    fn small() -> Opera {
        Opera::build(&OperaParams {
            racks: 12,
            hosts_per_rack: 1,
            uplinks: 4,
            epsilon_ps: 20_000_000,
            delta_ps: 1_700_000,
            reconfig_ps: 2_000_000,
            realizations: 4,
            k_shortest: true,
            seed: 7,
            ..OperaParams::default()
        })
        .unwrap()
    }

    /// Every simple path's length from `src` to `dst` in superslice `s` (depth-first).
    fn all_simple_lengths(sched: &Schedule, s: usize, src: usize, dst: usize) -> Vec<usize> {
        fn go(
            sched: &Schedule,
            s: usize,
            x: usize,
            dst: usize,
            on: &mut Vec<bool>,
            len: usize,
            out: &mut Vec<usize>,
        ) {
            if x == dst {
                out.push(len);
                return;
            }
            for b in sched.stable_rotors(s) {
                let y = sched.matching(b, s)[x] as usize;
                if y != x && !on[y] {
                    on[y] = true;
                    go(sched, s, y, dst, on, len + 1, out);
                    on[y] = false;
                }
            }
        }
        let mut on = vec![false; sched.racks()];
        on[src] = true;
        let mut out = Vec::new();
        go(sched, s, src, dst, &mut on, 0, &mut out);
        out.sort_unstable();
        out
    }

    /// Yen's paths are distinct loopless paths over the superslice's stable rotors that reach
    /// the destination, shortest first, and their lengths are exactly the k smallest among all
    /// simple paths: so a directly connected pair gets its circuit plus longer detours, not the
    /// single shortest path that hop-by-hop shortest routing would allow it.
    #[test]
    fn yen_gives_the_k_shortest_loopless_paths_of_any_length() {
        let o = small();
        let sched = o.schedule();
        let k = o.params().max_paths;
        let mut detours_of_direct_pairs = 0;
        for s in 0..sched.superslices() {
            let stable: Vec<usize> = sched.stable_rotors(s).collect();
            for src in 0..12 {
                for dst in 0..12 {
                    let paths = o.ll_paths(s, src, dst).unwrap();
                    if src == dst {
                        assert!(paths.is_empty());
                        continue;
                    }
                    let lens: Vec<usize> = paths.iter().map(|p| p.len()).collect();
                    let all = all_simple_lengths(sched, s, src, dst);
                    let want: Vec<usize> = all.iter().copied().take(k).collect();
                    assert_eq!(lens, want, "s {s} {src} -> {dst}");
                    assert_eq!(lens[0], o.hops(s, src, dst) as usize);
                    for (i, p) in paths.iter().enumerate() {
                        assert!(p.iter().all(|&b| stable.contains(&(b as usize))));
                        let racks = racks_of(sched, s, src, p);
                        assert_eq!(*racks.last().unwrap(), dst);
                        let mut sorted = racks.clone();
                        sorted.sort_unstable();
                        sorted.dedup();
                        assert_eq!(sorted.len(), racks.len(), "loopless: {racks:?}");
                        assert!(!paths[..i].contains(p), "distinct");
                    }
                    if lens[0] == 1 {
                        assert_eq!(lens.len(), k);
                        detours_of_direct_pairs += lens.iter().filter(|&&l| l > 1).count();
                    }
                }
            }
        }
        assert!(detours_of_direct_pairs > 0);
        // Cached: the same slice each time; a clone recomputes the same sets.
        let a = o.ll_paths(3, 0, 5).unwrap().as_ptr();
        assert_eq!(o.ll_paths(3, 0, 5).unwrap().as_ptr(), a);
        let c = o.clone();
        assert_eq!(c.ll_paths(3, 0, 5).unwrap(), o.ll_paths(3, 0, 5).unwrap());
        // Without the option there are none.
        let plain = Opera::build(&OperaParams {
            k_shortest: false,
            ..o.params().clone()
        })
        .unwrap();
        assert!(plain.ll_paths(0, 0, 1).is_none());
    }

    /// The paper's k = 12 fabric: 5 paths per pair, 1.26 M lazily filled slots.
    #[test]
    fn paper_fabric_has_five_paths_per_pair() {
        let o = Opera::build(&OperaParams {
            k_shortest: true,
            ..OperaParams::default()
        })
        .unwrap();
        let mut longer = 0;
        for (s, src, dst) in [(0, 0, 1), (5, 17, 90), (107, 106, 3), (53, 40, 41)] {
            let paths = o.ll_paths(s, src, dst).unwrap();
            assert_eq!(paths.len(), 5);
            assert_eq!(paths[0].len(), o.hops(s, src, dst) as usize);
            longer += paths.iter().filter(|p| p.len() > paths[0].len()).count();
        }
        assert!(longer > 0);
    }
}
