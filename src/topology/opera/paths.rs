//! Low-latency (indirect) paths (the Opera paper, §3.4; as opera-sim's path files): in each
//! superslice the graph of the rotors stable for the whole superslice (all but the
//! reconfiguring one per group), shortest ToR paths in it, and for each (superslice, source
//! rack, destination rack) up to `max_paths` shortest paths as sequences of uplinks (rotor
//! indices; the simulator's port is d + rotor).
//!
//! Storage. Only the hop count of every (superslice, source, destination) is stored, one byte
//! each: S·N² bytes (1.26 MB at N = 108; 80.6 MB at N = 432, G = 1). Next hops and paths are
//! derived on demand from it and the matchings: a neighbour y over a stable rotor is a next
//! hop toward dst exactly when hops(y, dst) = hops(x, dst) − 1, so the authors' per-slice path
//! files (up to 12 paths per pair) need not be materialised; enumerating them costs O(u · hops
//! · paths) per call.
//!
//! Hop counts come from a bit-parallel BFS per superslice: reach_h(x) = reach_{h−1}(x) ∪
//! ⋃_{y ~ x} reach_{h−1}(y) with N-bit sets, so a superslice costs O(diameter · N · u · N/64)
//! word operations instead of N separate BFS walks. Superslices are independent and are
//! computed in parallel; the result does not depend on the thread count.

use rayon::prelude::*;

use super::schedule::Schedule;

/// No path (yet).
const UNREACHED: u8 = u8::MAX;

/// Why a schedule has no usable low-latency paths.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum PathError {
    /// In `superslice`, `dst` cannot be reached from `src` over the stable rotors.
    Disconnected {
        superslice: usize,
        src: usize,
        dst: usize,
    },
    /// Some shortest path is longer than the 254 hops a byte can count.
    TooLong { superslice: usize },
}

impl std::fmt::Display for PathError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            PathError::Disconnected {
                superslice,
                src,
                dst,
            } => write!(
                f,
                "superslice {superslice}: rack {dst} is unreachable from rack {src} over the \
                 rotors stable in that superslice"
            ),
            PathError::TooLong { superslice } => write!(
                f,
                "superslice {superslice}: a shortest path is longer than 254 ToR-to-ToR hops"
            ),
        }
    }
}

/// Shortest ToR-to-ToR hop counts of every superslice, with per-superslice statistics.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Paths {
    racks: usize,
    /// `hops[(s · N + src) · N + dst]`.
    hops: Vec<u8>,
    /// Worst-case hop count of each superslice.
    worst: Vec<u8>,
    /// Sum of hop counts over ordered pairs src ≠ dst, per superslice.
    sum: Vec<u64>,
}

impl Paths {
    /// Hop counts of every superslice of `sched`; an error if some superslice's stable graph
    /// is disconnected.
    pub(crate) fn compute(sched: &Schedule) -> Result<Paths, PathError> {
        let n = sched.racks();
        let slices = sched.superslices();
        let mut hops = vec![UNREACHED; slices * n * n];
        let stats: Vec<Result<(u8, u64), PathError>> = hops
            .par_chunks_mut(n * n)
            .enumerate()
            .map(|(s, table)| slice_hops(sched, s, table))
            .collect();
        let mut worst = Vec::with_capacity(slices);
        let mut sum = Vec::with_capacity(slices);
        for st in stats {
            let (w, t) = st?;
            worst.push(w);
            sum.push(t);
        }
        Ok(Paths {
            racks: n,
            hops,
            worst,
            sum,
        })
    }

    /// Shortest hop count from `src` to `dst` in `superslice` (taken modulo the cycle).
    pub(crate) fn hops(&self, superslice: usize, src: usize, dst: usize) -> u8 {
        let s = superslice % self.worst.len();
        self.hops[(s * self.racks + src) * self.racks + dst]
    }

    #[cfg(test)]
    /// Worst-case hop count of each superslice.
    pub(crate) fn worst_per_slice(&self) -> &[u8] {
        &self.worst
    }

    #[cfg(test)]
    /// Mean hop count over ordered pairs src ≠ dst, per superslice.
    pub(crate) fn mean_per_slice(&self) -> Vec<f64> {
        let pairs = (self.racks * (self.racks - 1)).max(1) as f64;
        self.sum.iter().map(|&t| t as f64 / pairs).collect()
    }

    /// Worst-case hop count over all superslices.
    pub(crate) fn worst(&self) -> u8 {
        self.worst.iter().copied().max().unwrap_or(0)
    }

    /// Sum of hop counts over all superslices and ordered pairs src ≠ dst: the exact
    /// tie-breaker between realizations with the same worst case (same denominator).
    pub(crate) fn total_hops(&self) -> u64 {
        self.sum.iter().sum()
    }

    /// Mean hop count over all superslices and ordered pairs src ≠ dst.
    pub(crate) fn mean(&self) -> f64 {
        let pairs = (self.racks * (self.racks - 1)).max(1) * self.worst.len();
        self.total_hops() as f64 / pairs as f64
    }

    /// The next hops from `rack` toward `dst` on shortest paths of `superslice`: (rotor, the
    /// rack it reaches), rotors ascending. Empty when `rack == dst`.
    pub(crate) fn next_hops<'a>(
        &'a self,
        sched: &'a Schedule,
        superslice: usize,
        rack: usize,
        dst: usize,
    ) -> impl Iterator<Item = (usize, usize)> + 'a {
        let here = self.hops(superslice, rack, dst);
        sched.stable_rotors(superslice).filter_map(move |b| {
            let y = sched.matching(b, superslice)[rack] as usize;
            (y != rack && here > 0 && self.hops(superslice, y, dst) == here - 1).then_some((b, y))
        })
    }

    #[cfg(test)]
    /// Up to `max_paths` shortest paths from `src` to `dst` in `superslice`, each the list
    /// of rotors (uplinks) taken hop by hop; one empty path when `src == dst`. When more
    /// exist, which ones are listed is fixed by a depth-first walk whose rotor order starts
    /// at (superslice + src + dst) mod u: rotating the order spreads the listed paths over
    /// the rotors instead of always preferring rotor 0.
    pub(crate) fn paths(
        &self,
        sched: &Schedule,
        superslice: usize,
        src: usize,
        dst: usize,
        max_paths: usize,
    ) -> Vec<Vec<u16>> {
        let s = superslice % sched.superslices();
        let mut out = Vec::new();
        let mut cur = Vec::with_capacity(self.hops(s, src, dst) as usize);
        let first = (s + src + dst) % sched.uplinks();
        self.walk(sched, s, src, dst, first, max_paths, &mut cur, &mut out);
        out
    }

    #[cfg(test)]
    #[allow(clippy::too_many_arguments)]
    fn walk(
        &self,
        sched: &Schedule,
        s: usize,
        x: usize,
        dst: usize,
        first: usize,
        max_paths: usize,
        cur: &mut Vec<u16>,
        out: &mut Vec<Vec<u16>>,
    ) {
        if x == dst {
            out.push(cur.clone());
            return;
        }
        let here = self.hops(s, x, dst);
        let u = sched.uplinks();
        for j in 0..u {
            if out.len() >= max_paths {
                return;
            }
            let b = (first + j) % u;
            if sched.reconfigures(b, s) {
                continue;
            }
            let y = sched.matching(b, s)[x] as usize;
            if y == x || self.hops(s, y, dst) + 1 != here {
                continue;
            }
            cur.push(b as u16);
            self.walk(sched, s, y, dst, first, max_paths, cur, out);
            cur.pop();
        }
    }

    /// Bytes held on the heap.
    pub(crate) fn heap_bytes(&self) -> usize {
        self.hops.capacity() + self.worst.capacity() + self.sum.capacity() * 8
    }
}

/// Fills `table` (N × N, all `UNREACHED`) with superslice `s`'s hop counts; returns its
/// worst case and the sum over src ≠ dst.
fn slice_hops(sched: &Schedule, s: usize, table: &mut [u8]) -> Result<(u8, u64), PathError> {
    let n = sched.racks();
    let words = n.div_ceil(64);
    // Neighbours over stable rotors; self-loops are idle uplinks, not edges.
    let stable: Vec<usize> = sched.stable_rotors(s).collect();
    let mut adj: Vec<Vec<usize>> = vec![Vec::with_capacity(stable.len()); n];
    for &b in &stable {
        for (x, &y) in sched.matching(b, s).iter().enumerate() {
            if y as usize != x {
                adj[x].push(y as usize);
            }
        }
    }
    let mut reach = vec![0u64; n * words];
    for x in 0..n {
        reach[x * words + x / 64] |= 1 << (x % 64);
        table[x * n + x] = 0;
    }
    let mut next = reach.clone();
    let mut h: u8 = 0;
    loop {
        h += 1;
        if h == UNREACHED {
            return Err(PathError::TooLong { superslice: s });
        }
        let mut grew = false;
        for x in 0..n {
            let row = &mut next[x * words..(x + 1) * words];
            row.copy_from_slice(&reach[x * words..(x + 1) * words]);
            for &y in &adj[x] {
                for (w, r) in row.iter_mut().zip(&reach[y * words..(y + 1) * words]) {
                    *w |= r;
                }
            }
            for (wi, (&nw, &old)) in row.iter().zip(&reach[x * words..]).enumerate() {
                let mut new = nw & !old;
                while new != 0 {
                    grew = true;
                    let z = wi * 64 + new.trailing_zeros() as usize;
                    table[x * n + z] = h;
                    new &= new - 1;
                }
            }
        }
        std::mem::swap(&mut reach, &mut next);
        if !grew {
            break;
        }
    }
    if let Some(k) = table.iter().position(|&d| d == UNREACHED) {
        return Err(PathError::Disconnected {
            superslice: s,
            src: k / n,
            dst: k % n,
        });
    }
    let worst = table.iter().copied().max().unwrap_or(0);
    let sum = table.iter().map(|&d| d as u64).sum();
    Ok((worst, sum))
}
