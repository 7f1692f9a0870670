//! Which matching each rotor holds in each superslice (the Opera paper, §3.3; opera-sim's
//! generator).
//!
//! Assignment (`pick_topo.m`): the N matchings are shuffled and rotor a takes the consecutive
//! block a·N/u .. (a+1)·N/u of the shuffled list, in that order, which is its cycle order.
//!
//! Rotation, with `groups` = G: the u rotors form G groups of u/G consecutive rotors (rotor b
//! is in group b / (u/G) at local index l = b mod (u/G)); a cycle has S = N/G superslices.
//! In superslice s, rotor b is at p = (s − l) mod S of its walk: it holds its matching
//! ⌊p / (u/G)⌋ and reconfigures at the end of s when p mod (u/G) = u/G − 1. So in each group
//! exactly one rotor, local index (s + 1) mod (u/G), reconfigures per superslice, every rotor
//! holds each of its N/u matchings for u/G − 1 whole superslices plus the ε + δ of one more,
//! and a cycle walks every matching once. G = 1 is the paper's k = 12 schedule exactly
//! (p = (s − b) mod N, rotor (s + 1) mod u reconfigures at the end of s); G > 1 is the
//! appendix's "one switch per group" for large radix, with the groups in lockstep.

use rand::seq::SliceRandom;
use rand_pcg::Pcg32;

use super::factorize::Factorization;
use super::timing::{SlicePos, SubSlice, Timing};

/// The rotors' matchings in cycle order and the timing: everything needed to say who is
/// connected to whom at any time, computed from the seed alone.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Schedule {
    racks: usize,
    uplinks: usize,
    groups: usize,
    /// `peers[(rotor · N/u + k) · N + rack]`: rack's peer in the k-th matching of the rotor's
    /// cycle.
    peers: Vec<u32>,
    /// `held[s · u + rotor]` for s < S: the start in `peers` of the matching the rotor holds
    /// in superslice s, its top bit set if the rotor reconfigures at the end of s. A cache of
    /// what [`Schedule::walk`] defines: packets ask it at every rotor hop, and the walk's
    /// three divisions by run-time values were 7 % of the Opera shuffle's time.
    held: Vec<u32>,
    /// S = N/G, stored: [`Schedule::held`] needs it per call.
    superslices: usize,
    timing: Timing,
}

const RECONFIGURES: u32 = 1 << 31;

impl Schedule {
    /// Assigns the factorization's matchings to rotors at random (`assign_rng`). The caller
    /// has validated that `uplinks` divides the rack count and `groups` divides `uplinks`.
    pub(crate) fn assign(
        f: &Factorization,
        uplinks: usize,
        groups: usize,
        timing: Timing,
        assign_rng: &mut Pcg32,
    ) -> Schedule {
        let n = f.n;
        let mut order: Vec<usize> = (0..n).collect();
        order.shuffle(assign_rng);
        let mut peers = Vec::with_capacity(n * n);
        for &m in &order {
            peers.extend_from_slice(f.matching(m));
        }
        let mut sched = Schedule {
            racks: n,
            uplinks,
            groups,
            peers,
            held: Vec::new(),
            superslices: n / groups,
            timing,
        };
        sched.held = (0..sched.superslices())
            .flat_map(|s| (0..uplinks).map(move |b| (s, b)))
            .map(|(s, b)| {
                let k =
                    b * sched.matchings_per_rotor() + sched.walk(b, s) / sched.rotors_per_group();
                let start = u32::try_from(k * n).expect("an Opera schedule under 2^31 entries");
                assert!(start < RECONFIGURES);
                let last =
                    sched.walk(b, s) % sched.rotors_per_group() == sched.rotors_per_group() - 1;
                start | if last { RECONFIGURES } else { 0 }
            })
            .collect();
        sched
    }

    /// `held`'s entry for the rotor in `superslice` (taken modulo the cycle; callers mostly
    /// pass superslices within a cycle, which skips the division).
    #[inline]
    fn held(&self, rotor: usize, superslice: usize) -> u32 {
        let s = if superslice < self.superslices() {
            superslice
        } else {
            superslice % self.superslices()
        };
        self.held[s * self.uplinks + rotor]
    }

    pub(crate) fn racks(&self) -> usize {
        self.racks
    }

    pub(crate) fn uplinks(&self) -> usize {
        self.uplinks
    }

    pub(crate) fn timing(&self) -> &Timing {
        &self.timing
    }

    /// Matchings per rotor, N/u.
    pub(crate) fn matchings_per_rotor(&self) -> usize {
        self.racks / self.uplinks
    }

    /// Rotors per group, u/G: also how many superslices a rotor holds a matching.
    pub(crate) fn rotors_per_group(&self) -> usize {
        self.uplinks / self.groups
    }

    /// Superslices per cycle, S = N/G.
    #[inline]
    pub(crate) fn superslices(&self) -> usize {
        self.superslices
    }

    /// The rotor's position in its walk during `superslice` (taken modulo the cycle).
    fn walk(&self, rotor: usize, superslice: usize) -> usize {
        let s = superslice % self.superslices();
        let local = rotor % self.rotors_per_group();
        (s + self.superslices() - local) % self.superslices()
    }

    /// Index (in the rotor's cycle order) of the matching the rotor holds during the ε and δ
    /// of `superslice`.
    #[cfg(test)]
    pub(crate) fn matching_index(&self, rotor: usize, superslice: usize) -> usize {
        self.walk(rotor, superslice) / self.rotors_per_group()
    }

    /// The matching (rack → peer rack; the rack itself for its idle self-loop) the rotor
    /// holds during the ε and δ of `superslice`.
    #[inline]
    pub(crate) fn matching(&self, rotor: usize, superslice: usize) -> &[u32] {
        let start = (self.held(rotor, superslice) & !RECONFIGURES) as usize;
        &self.peers[start..start + self.racks]
    }

    /// The k-th matching of the rotor's cycle order.
    pub(crate) fn rotor_matching(&self, rotor: usize, k: usize) -> &[u32] {
        let k = rotor * self.matchings_per_rotor() + k;
        &self.peers[k * self.racks..(k + 1) * self.racks]
    }

    /// Whether the rotor reconfigures at the end of `superslice` (dark during its r).
    #[inline]
    pub(crate) fn reconfigures(&self, rotor: usize, superslice: usize) -> bool {
        self.held(rotor, superslice) & RECONFIGURES != 0
    }

    /// The rotors reconfiguring at the end of `superslice`, one per group, ascending.
    pub(crate) fn reconfiguring(&self, superslice: usize) -> impl Iterator<Item = usize> + '_ {
        let ug = self.rotors_per_group();
        let local = (superslice % self.superslices() + 1) % ug;
        (0..self.groups).map(move |g| g * ug + local)
    }

    /// The rotors up for all of `superslice` (all but the reconfiguring ones), ascending:
    /// the only ones low-latency paths of this superslice use.
    pub(crate) fn stable_rotors(&self, superslice: usize) -> impl Iterator<Item = usize> + '_ {
        (0..self.uplinks).filter(move |&b| !self.reconfigures(b, superslice))
    }

    /// The rack that `rack`'s uplink to `rotor` reaches at `pos`: None while the rotor is
    /// dark (the r of a superslice it reconfigures in), the rack itself on its self-loop.
    pub(crate) fn peer_rack_at(&self, rack: usize, rotor: usize, pos: &SlicePos) -> Option<u32> {
        if pos.sub == SubSlice::Reconfig && self.reconfigures(rotor, pos.superslice) {
            return None;
        }
        Some(self.matching(rotor, pos.superslice)[rack])
    }

    /// [`Schedule::peer_rack_at`] at `time_ps`.
    pub(crate) fn peer_rack(&self, rack: usize, rotor: usize, time_ps: u64) -> Option<u32> {
        self.peer_rack_at(rack, rotor, &self.timing.at(time_ps))
    }

    /// Bytes held on the heap.
    pub(crate) fn heap_bytes(&self) -> usize {
        (self.peers.capacity() + self.held.capacity()) * std::mem::size_of::<u32>()
    }

    /// [`Schedule::matching`] and [`Schedule::reconfigures`] from their definition (the
    /// walk), bypassing the cache.
    #[cfg(test)]
    pub(crate) fn by_walk(&self, rotor: usize, superslice: usize) -> (&[u32], bool) {
        let ug = self.rotors_per_group();
        let k = self.walk(rotor, superslice) / ug;
        let last = self.walk(rotor, superslice) % ug == ug - 1;
        (self.rotor_matching(rotor, k), last)
    }
}
