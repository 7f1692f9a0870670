//! Symmetric 1-factorization of J_N, the N×N all-ones matrix *including* its diagonal, as the
//! authors' generator builds it (opera-sim's `decomp_recursive_original.m`, from
//! `triu(ones(N))`): N matchings, each an involution of the
//! racks (a symmetric permutation matrix), whose sum is J_N. Every unordered rack pair {i, j},
//! i ≠ j, is in exactly one matching and every rack is its own peer (a self-loop: an idle
//! uplink) in exactly one matching.
//!
//! Method. Such a factorization is exactly a proper edge colouring of the complete graph K_N
//! with N colours: a rack has N − 1 edges, so it misses exactly one colour, and that colour's
//! matching is where it has its self-loop. We colour K_N at random (edges in random order,
//! each edge a random colour free at both ends) and, when no colour is free at both ends,
//! recolour with the Misra–Gries fan-and-Kempe-path step, which always succeeds with N = Δ + 1
//! colours. This replaces the MATLAB generator's random greedy with backtracking and restarts
//! (`decomp_recursive_original.m`, up to 10,000 retries per level) by a random construction
//! that cannot fail and runs in O(N³) at worst; like the original it draws a random
//! factorization (not the same distribution, which the paper does not rely on: realizations
//! are scored afterwards) and it handles odd N without a separate routine (every matching
//! then has an odd number of self-loops).
//!
//! Lifting (the Opera paper's graph lifting, §3.3, as opera-sim's `lift_construction.m`;
//! N > 64, `lifting = true`): a random factorization of J_Nbase is
//! lifted by a factor LF = N / Nbase with `LIFT_SETS` independent factorizations of J_LF:
//! every block (s, d) of a base matching P becomes, in the LF lifted matchings of P, the LF
//! matchings of one random set in a random order; block (d, s) copies block (s, d), so the
//! result stays symmetric (the J_LF matchings are involutions). Nbase is the largest even value
//! in 64, 62, …, 8 with N / Nbase even, as `MAIN.m`; a rack count with no such base is
//! coloured directly.
//!
//! Default: direct colouring at every N, not lifting. The paper lifts only because its
//! decomposition "can be expensive for large networks"; ours is not (0.33 s for N = 432), and
//! lifting costs expansion: at k = 12 (N = 108 lifted from 54, u = 6) the worst-case path over
//! the 108 superslices was 6 hops in 36 of 40 seeds and 7–8 in 4, never the paper's 5 (Fig. 4,
//! the premise of ε = 90 µs), while direct colouring gave 5 in 25 of 40 seeds and 6 in 15
//! (mean 3.114 vs 3.129 hops; `tests::lifting_vs_direct_hop_counts`), and a few realizations
//! reach 5. A lifted slice graph is a
//! lift of the union of base matchings, so its diameter is at least the base graph's. At
//! k = 24 both give 4 (the paper's appendix value).

use rand::seq::SliceRandom;
use rand::Rng;
use rand_pcg::Pcg32;

/// No colour / no neighbour.
const NONE: u32 = u32::MAX;

/// How many independent factorizations of J_LF a lifting draws blocks from (`P_sets` in
/// `lift_construction.m`: 10 tries).
pub(super) const LIFT_SETS: usize = 10;

/// Rack counts above this are lifted from a smaller base when a base exists (`MAIN.m`).
pub(super) const LIFT_ABOVE_RACKS: usize = 64;

/// N matchings of N racks: `peers[m * n + i]` is rack i's peer in matching m (i itself for
/// the self-loop).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Factorization {
    pub n: usize,
    pub peers: Vec<u32>,
}

impl Factorization {
    pub(crate) fn matching(&self, m: usize) -> &[u32] {
        &self.peers[m * self.n..(m + 1) * self.n]
    }

    /// Checks the defining property: N involutions summing to J_N. Returns what is wrong.
    pub(crate) fn check(&self) -> Result<(), String> {
        let n = self.n;
        if self.peers.len() != n * n {
            return Err(format!(
                "{} entries for {n} matchings of {n}",
                self.peers.len()
            ));
        }
        let mut covered = vec![0u8; n * n];
        for m in 0..n {
            let p = self.matching(m);
            for (i, &j) in p.iter().enumerate() {
                let j = j as usize;
                if j >= n || p[j] as usize != i {
                    return Err(format!("matching {m} is not an involution at rack {i}"));
                }
                covered[i * n + j] += 1;
            }
        }
        match covered.iter().position(|&c| c != 1) {
            None => Ok(()),
            Some(k) => Err(format!(
                "racks ({}, {}) are connected {} times, not once",
                k / n,
                k % n,
                covered[k]
            )),
        }
    }
}

/// The lifting base for `n` racks: (Nbase, LF) with Nbase the largest even value in
/// 64, 62, …, 8 such that LF = n / Nbase is an even integer, or None (colour directly).
pub(crate) fn lift_base(n: usize) -> Option<(usize, usize)> {
    if n <= LIFT_ABOVE_RACKS {
        return None;
    }
    (8..=LIFT_ABOVE_RACKS)
        .rev()
        .step_by(2)
        .find(|&b| n % b == 0 && (n / b) % 2 == 0)
        .map(|b| (b, n / b))
}

/// A random factorization of J_n: with `lifting`, lifted from a base when `lift_base` finds
/// one; otherwise a direct random colouring. `lift_rng` is used only when lifting.
pub(super) fn factorize(
    n: usize,
    lifting: bool,
    base_rng: &mut Pcg32,
    lift_rng: &mut Pcg32,
) -> Factorization {
    match lift_base(n).filter(|_| lifting) {
        None => colour_complete(n, base_rng),
        Some((nbase, lf)) => {
            let base = colour_complete(nbase, base_rng);
            let sets: Vec<Factorization> = (0..LIFT_SETS)
                .map(|_| colour_complete(lf, lift_rng))
                .collect();
            lift(&base, &sets, lift_rng)
        }
    }
}

/// Lifts `base` (a factorization of J_Nbase) by LF = `sets[_].n`: lifted rack s·LF + a is
/// position a of base rack s; lifted matching P·LF + t is the t-th of base matching P's LF
/// matchings.
pub(super) fn lift(base: &Factorization, sets: &[Factorization], rng: &mut Pcg32) -> Factorization {
    let nb = base.n;
    let lf = sets[0].n;
    let n = nb * lf;
    let mut peers = vec![NONE; n * n];
    let mut order: Vec<usize> = (0..lf).collect();
    for pm in 0..nb {
        let p = base.matching(pm);
        for s in 0..nb {
            let d = p[s] as usize;
            if d < s {
                continue; // the pair was lifted from s's side already
            }
            // One random set and order per unordered block pair: both blocks carry the same
            // LF×LF matrices, which keeps every lifted matching symmetric.
            let set = &sets[rng.gen_range(0..sets.len())];
            order.shuffle(rng);
            for (t, &q) in order.iter().enumerate() {
                let qm = set.matching(q);
                let row = (pm * lf + t) * n;
                for a in 0..lf {
                    let b = qm[a] as usize;
                    peers[row + s * lf + a] = (d * lf + b) as u32;
                    peers[row + d * lf + a] = (s * lf + b) as u32;
                }
            }
        }
    }
    Factorization { n, peers }
}

/// A random proper edge colouring of K_n with n colours, as a factorization of J_n.
pub(super) fn colour_complete(n: usize, rng: &mut Pcg32) -> Factorization {
    let mut c = Colouring::new(n);
    let mut edges: Vec<(u32, u32)> = (0..n as u32)
        .flat_map(|i| (i + 1..n as u32).map(move |j| (i, j)))
        .collect();
    edges.shuffle(rng);
    for (a, b) in edges {
        let (x, f) = if rng.gen::<bool>() { (a, b) } else { (b, a) };
        // A uniform choice among the colours free at both ends, in increasing order: the
        // free sets are bitsets, so this costs n/64 words instead of n tests (k = 64's 3,072
        // racks colour in seconds instead of minutes).
        let count = c.common_free_count(x, f);
        if count == 0 {
            c.misra_gries(x, f, rng);
        } else {
            let k = c.nth_common_free(x, f, rng.gen_range(0..count));
            c.set(x, f, k);
        }
    }
    let mut peers = vec![0u32; n * n];
    for k in 0..n {
        for v in 0..n {
            let w = c.at[v * n + k];
            peers[k * n + v] = if w == NONE { v as u32 } else { w };
        }
    }
    Factorization { n, peers }
}

/// Edge colouring state of K_n: `col[u·n + v]` the colour of edge u–v, `at[v·n + c]` the
/// neighbour of v over colour c.
struct Colouring {
    n: usize,
    col: Vec<u32>,
    at: Vec<u32>,
    /// Per vertex, the colours not used at it, one bit each (`words` u64s per vertex).
    free_bits: Vec<u64>,
    words: usize,
}

impl Colouring {
    fn new(n: usize) -> Colouring {
        let words = n.div_ceil(64);
        let mut row = vec![u64::MAX; words];
        if n % 64 != 0 {
            row[words - 1] = (1u64 << (n % 64)) - 1;
        }
        Colouring {
            n,
            col: vec![NONE; n * n],
            at: vec![NONE; n * n],
            free_bits: row.repeat(n),
            words,
        }
    }

    fn free(&self, v: u32, k: u32) -> bool {
        self.at[v as usize * self.n + k as usize] == NONE
    }

    fn both_free(&self, u: u32, v: u32) -> impl Iterator<Item = u64> + '_ {
        let (w, u, v) = (self.words, u as usize, v as usize);
        self.free_bits[u * w..(u + 1) * w]
            .iter()
            .zip(&self.free_bits[v * w..(v + 1) * w])
            .map(|(a, b)| a & b)
    }

    /// How many colours are free at both `u` and `v`.
    fn common_free_count(&self, u: u32, v: u32) -> usize {
        self.both_free(u, v).map(|x| x.count_ones() as usize).sum()
    }

    /// The `i`-th (from 0, increasing) colour free at both `u` and `v`.
    fn nth_common_free(&self, u: u32, v: u32, mut i: usize) -> u32 {
        for (wi, mut x) in self.both_free(u, v).enumerate() {
            let ones = x.count_ones() as usize;
            if i >= ones {
                i -= ones;
                continue;
            }
            for _ in 0..i {
                x &= x - 1;
            }
            return (wi * 64) as u32 + x.trailing_zeros();
        }
        unreachable!("fewer common free colours than counted")
    }

    fn mark(&mut self, v: u32, k: u32, free: bool) {
        let (word, bit) = (v as usize * self.words + k as usize / 64, k % 64);
        if free {
            self.free_bits[word] |= 1 << bit;
        } else {
            self.free_bits[word] &= !(1 << bit);
        }
    }

    fn colour(&self, u: u32, v: u32) -> u32 {
        self.col[u as usize * self.n + v as usize]
    }

    fn set(&mut self, u: u32, v: u32, k: u32) {
        let n = self.n;
        self.col[u as usize * n + v as usize] = k;
        self.col[v as usize * n + u as usize] = k;
        self.at[u as usize * n + k as usize] = v;
        self.at[v as usize * n + k as usize] = u;
        self.mark(u, k, false);
        self.mark(v, k, false);
    }

    fn unset(&mut self, u: u32, v: u32) {
        let n = self.n;
        let k = self.colour(u, v);
        self.col[u as usize * n + v as usize] = NONE;
        self.col[v as usize * n + u as usize] = NONE;
        self.at[u as usize * n + k as usize] = NONE;
        self.at[v as usize * n + k as usize] = NONE;
        self.mark(u, k, true);
        self.mark(v, k, true);
    }

    fn random_free(&self, v: u32, rng: &mut Pcg32) -> u32 {
        let free: Vec<u32> = (0..self.n as u32).filter(|&k| self.free(v, k)).collect();
        // A vertex with an uncoloured edge has at least two free colours out of n = Δ + 1.
        free[rng.gen_range(0..free.len())]
    }

    /// Colours the uncoloured edge x–f when no colour is free at both ends (Misra & Gries,
    /// "A constructive proof of Vizing's theorem", 1992): build a maximal fan of x starting at
    /// f, invert the c/d Kempe path from x, rotate the fan prefix up to a vertex w where d is
    /// free and colour x–w with d.
    fn misra_gries(&mut self, x: u32, f: u32, rng: &mut Pcg32) {
        let n = self.n as u32;
        // The fan: distinct neighbours F0 = f, F1, … with colour(x, Fi) free at F(i−1).
        let mut fan = vec![f];
        let mut in_fan = vec![false; self.n];
        in_fan[f as usize] = true;
        loop {
            let last = *fan.last().expect("the fan starts with f");
            let next = (0..n).find_map(|k| {
                let y = self.at[x as usize * self.n + k as usize];
                (y != NONE && !in_fan[y as usize] && self.free(last, k)).then_some(y)
            });
            match next {
                Some(y) => {
                    in_fan[y as usize] = true;
                    fan.push(y);
                }
                None => break,
            }
        }
        let c = self.random_free(x, rng);
        let d = self.random_free(*fan.last().expect("non-empty fan"), rng);
        // Invert the c/d path that starts at x (x misses c, so it is a path end).
        let mut path = Vec::new();
        let (mut cur, mut want) = (x, d);
        loop {
            let next = self.at[cur as usize * self.n + want as usize];
            if next == NONE {
                break;
            }
            path.push((cur, next, want));
            cur = next;
            want = if want == c { d } else { c };
        }
        for &(u, v, _) in &path {
            self.unset(u, v);
        }
        for &(u, v, k) in &path {
            self.set(u, v, if k == c { d } else { c });
        }
        // The first fan vertex w where d is free, on a prefix that is still a fan.
        let mut w = None;
        for i in 0..fan.len() {
            if i > 0 && !self.free(fan[i - 1], self.colour(x, fan[i])) {
                break;
            }
            if self.free(fan[i], d) {
                w = Some(i);
                break;
            }
        }
        let w = w.expect("Misra–Gries: a fan vertex with d free exists (Vizing)");
        let shifted: Vec<u32> = (0..w).map(|i| self.colour(x, fan[i + 1])).collect();
        for &y in &fan[1..=w] {
            self.unset(x, y);
        }
        for (i, &k) in shifted.iter().enumerate() {
            self.set(x, fan[i], k);
        }
        self.set(x, fan[w], d);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::{stream, Purpose};

    #[test]
    fn colourings_are_factorizations_for_small_and_odd_n() {
        for n in 1..=40 {
            for seed in 0..4 {
                let f = colour_complete(n, &mut stream(seed, n as u64, Purpose::Opera));
                f.check()
                    .unwrap_or_else(|e| panic!("n = {n}, seed {seed}: {e}"));
            }
        }
    }

    #[test]
    fn every_rack_has_exactly_one_self_loop() {
        let f = colour_complete(9, &mut stream(1, 0, Purpose::Opera));
        for i in 0..9 {
            let loops = (0..9).filter(|&m| f.matching(m)[i] as usize == i).count();
            assert_eq!(loops, 1, "rack {i}");
        }
        // Odd n: a matching covers an even number of racks, so each of the 9 matchings has
        // an odd number of self-loops, and 9 loops in all means exactly one each.
        for m in 0..9 {
            let loops = (0..9).filter(|&i| f.matching(m)[i] as usize == i).count();
            assert_eq!(loops, 1, "matching {m}");
        }
    }

    #[test]
    fn lifting_bases_follow_main_m() {
        assert_eq!(lift_base(108), Some((54, 2)));
        assert_eq!(lift_base(432), Some((54, 8)));
        assert_eq!(lift_base(128), Some((64, 2)));
        assert_eq!(lift_base(64), None); // small enough to colour directly
        assert_eq!(lift_base(130), None); // 130 = 2·5·13: no even base with an even factor
    }

    #[test]
    fn lifted_factorizations_are_factorizations() {
        for (n, seed) in [(108, 0), (108, 1), (432, 2), (130, 3)] {
            let f = factorize(
                n,
                true,
                &mut stream(seed, 0, Purpose::Opera),
                &mut stream(seed, 1, Purpose::Opera),
            );
            assert_eq!(f.n, n);
            f.check().unwrap_or_else(|e| panic!("n = {n}: {e}"));
        }
    }

    #[test]
    fn check_rejects_a_double_cover() {
        // Two identity matchings on 2 racks: self-loops twice, the pair never.
        let f = Factorization {
            n: 2,
            peers: vec![0, 1, 0, 1],
        };
        assert!(f.check().unwrap_err().contains("connected 2 times"));
        let g = Factorization {
            n: 3,
            peers: vec![1, 2, 0, 0, 1, 2, 0, 1, 2],
        };
        assert!(g.check().unwrap_err().contains("not an involution"));
    }
}
