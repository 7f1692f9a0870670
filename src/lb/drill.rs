//! DRILL(d, m) (Ghorbani et al., SIGCOMM 2017): per packet, the set S of
//! d candidates drawn uniformly without replacement, together with the m ports remembered from
//! the previous decision; the packet joins p* = the least-loaded port of S (queued bytes,
//! uniform random among ties); the memory becomes the m least-loaded ports of S, p* first.
//!
//! Choices where the specification leaves room:
//! - memory is kept per candidate group, keyed by the candidate set itself (the ECMP group:
//!   one per switch in fault-free fat trees and leaf-spines), and stores port ids, so a
//!   remembered port is always one of the current candidates;
//! - S lists the remembered ports first, then the new samples (a sample already remembered
//!   is not added twice); ties for the memory slots after p* keep that order, so a port
//!   already remembered stays remembered on a tie;
//! - d ≥ |candidates| samples every candidate (no random draws): DRILL is then JSQ.
//!
//! DRILL(2, 0) is the Ofan paper's Choice and draws its random numbers as [`super::choice`].

use super::switch_policy::QueueView;
use super::switch_policy::{BuildSwitch, SwitchCtx, SwitchPolicy};
use super::ties::uniform_among;
use super::LbShared;
use crate::scenario::LbPolicy;
use crate::topology::Candidates;
use crate::topology::{Fabric, NodeId};
use rand::Rng;
use rand_pcg::Pcg32;
use serde::{Deserialize, Serialize};

/// Which candidate set a memory belongs to.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
enum GroupKey {
    Range { first: u16, count: u16 },
    List(Vec<u16>),
}

impl GroupKey {
    fn of(c: Candidates<'_>) -> GroupKey {
        match c {
            Candidates::Range { first, count } => GroupKey::Range { first, count },
            Candidates::List(l) => GroupKey::List(l.to_vec()),
        }
    }

    #[inline]
    fn matches(&self, c: Candidates<'_>) -> bool {
        match (self, c) {
            (GroupKey::Range { first, count }, Candidates::Range { first: f, count: n }) => {
                *first == f && *count == n
            }
            (GroupKey::List(l), Candidates::List(c)) => l.as_slice() == c,
            _ => false,
        }
    }
}

#[derive(Clone, Debug, Serialize, Deserialize)]
struct Group {
    key: GroupKey,
    /// Port ids, p* of the last decision first; at most m.
    mem: Vec<u16>,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
pub(crate) struct Drill {
    d: u16,
    m: u16,
    groups: Vec<Group>,
    /// Scratch: S as indices among the candidates.
    #[serde(skip)]
    s: Vec<u16>,
    /// Scratch: the displaced slots of the partial Fisher-Yates shuffle (slot, value).
    #[serde(skip)]
    swaps: Vec<(u16, u16)>,
}

/// The index of candidate port `p` (which must be one).
#[inline]
fn index_of(c: Candidates<'_>, p: u16) -> u16 {
    match c {
        Candidates::Range { first, .. } => p - first,
        Candidates::List(l) => l.iter().position(|&q| q == p).expect("a remembered port") as u16,
    }
}

/// Appends `d` distinct indices of `0..n` drawn uniformly (the first `d` slots of a partial
/// Fisher-Yates shuffle, kept sparse in `swaps`), skipping any already in `out`; every index
/// in order and no draw when `d >= n`.
#[inline]
pub(crate) fn sample(
    n: u16,
    d: u16,
    rng: &mut Pcg32,
    swaps: &mut Vec<(u16, u16)>,
    out: &mut Vec<u16>,
) {
    let push = |out: &mut Vec<u16>, v: u16| {
        if !out.contains(&v) {
            out.push(v);
        }
    };
    if d >= n {
        (0..n).for_each(|v| push(out, v));
        return;
    }
    swaps.clear();
    let at = |swaps: &[(u16, u16)], slot: u16| {
        swaps
            .iter()
            .rev()
            .find(|&&(s, _)| s == slot)
            .map_or(slot, |&(_, v)| v)
    };
    for i in 0..d {
        let j = rng.gen_range(i..n);
        let (vi, vj) = (at(swaps, i), at(swaps, j));
        swaps.push((j, vi));
        push(out, vj);
    }
}

impl Drill {
    pub(crate) fn new(d: u16, m: u16) -> Drill {
        assert!(d >= 1, "DRILL samples at least one port");
        Drill {
            d,
            m,
            groups: Vec::new(),
            s: Vec::new(),
            swaps: Vec::new(),
        }
    }

    /// Bytes of memory per candidate group (m port ids).
    pub(crate) fn group_bytes(m: u16) -> usize {
        m as usize * std::mem::size_of::<u16>()
    }

    /// The index (among `c`, at least two candidates) of the port DRILL(d, m) chooses.
    #[inline]
    pub(crate) fn choose<Q: QueueView>(
        &mut self,
        queues: &Q,
        c: Candidates<'_>,
        rng: &mut Pcg32,
    ) -> u16 {
        let g = match self.groups.iter().position(|g| g.key.matches(c)) {
            Some(g) => g,
            None => {
                self.groups.push(Group {
                    key: GroupKey::of(c),
                    mem: Vec::with_capacity(self.m as usize),
                });
                self.groups.len() - 1
            }
        };
        let group = &mut self.groups[g];
        let s = &mut self.s;
        s.clear();
        s.extend(group.mem.iter().map(|&p| index_of(c, p)));
        sample(c.len(), self.d, rng, &mut self.swaps, s);

        let load = |i: u16| queues.queued_bytes(c.get(i));
        let min = s.iter().map(|&i| load(i)).min().expect("S is not empty");
        let at = uniform_among(|| s.iter(), |&&i| load(i) == min, rng);
        let best = s[at];

        if self.m > 0 {
            group.mem.clear();
            group.mem.push(c.get(best));
            if self.m > 1 {
                s.remove(at);
                s.sort_by_key(|&i| load(i)); // stable: ties keep S's order
                let more = s.iter().take(self.m as usize - 1).map(|&i| c.get(i));
                group.mem.extend(more);
            }
        }
        best
    }

    /// The remembered ports of the group `c` (tests and inspection).
    #[cfg(test)]
    pub(crate) fn memory(&self, c: Candidates<'_>) -> &[u16] {
        self.groups
            .iter()
            .find(|g| g.key.matches(c))
            .map_or(&[], |g| &g.mem)
    }
}

impl SwitchPolicy for Drill {
    #[inline]
    fn choose<Q: QueueView>(&mut self, ctx: &mut SwitchCtx<'_, Q>) -> u16 {
        let c = ctx.candidates;
        c.get(Drill::choose(self, ctx.queues, c, ctx.rng))
    }
}

impl BuildSwitch for Drill {
    fn build(_: LbPolicy, shared: &LbShared, _: &Fabric, _: NodeId, _: &mut Pcg32) -> Self {
        let cfg = &shared.cfg.drill;
        Drill::new(cfg.d as u16, cfg.m as u16)
    }

    /// One candidate group (the uplinks) per switch in these fabrics.
    fn state_bytes(_: LbPolicy, shared: &LbShared, fabric: &Fabric, node: NodeId) -> usize {
        match fabric.uplinks(node) {
            0 => 0,
            _ => Drill::group_bytes(shared.cfg.drill.m as u16),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lb::jsq;
    use rand::SeedableRng;

    use crate::lb::TestQueues as Queues;

    /// Random queues (many ties: values 0..4 KB in 1 KB steps) on 8 ports.
    fn random_queues(rng: &mut Pcg32) -> Queues {
        Queues((0..8).map(|_| rng.gen_range(0..5u64) * 1_000).collect())
    }

    #[test]
    fn sampling_is_without_replacement_and_uniform() {
        let mut rng = Pcg32::seed_from_u64(1);
        let (mut swaps, mut out) = (vec![], vec![]);
        let mut hist = [0u32; 10];
        for _ in 0..20_000 {
            out.clear();
            sample(10, 4, &mut rng, &mut swaps, &mut out);
            assert_eq!(out.len(), 4);
            let mut sorted = out.clone();
            sorted.sort();
            sorted.dedup();
            assert_eq!(sorted.len(), 4, "{out:?} repeats");
            out.iter().for_each(|&i| hist[i as usize] += 1);
        }
        // Each index is in a sample with probability 4/10: 8,000 expected of 20,000.
        let chi2: f64 = hist.iter().map(|&h| (h as f64 - 8e3).powi(2) / 8e3).sum();
        assert!(chi2 < 27.9, "chi2 {chi2} (9 dof, p = 0.001): {hist:?}");
    }

    #[test]
    fn the_choice_is_never_worse_than_s_and_memory_holds_p_star() {
        let mut qrng = Pcg32::seed_from_u64(7);
        let list = [7u16, 1, 4, 2, 6];
        for (d, m) in [(1u16, 1u16), (2, 1), (2, 2), (3, 3), (2, 0), (1, 4)] {
            let mut rng = Pcg32::seed_from_u64(d as u64 * 10 + m as u64);
            let mut drill = Drill::new(d, m);
            for c in [
                Candidates::Range { first: 2, count: 6 },
                Candidates::List(&list),
            ] {
                for _ in 0..2_000 {
                    let q = random_queues(&mut qrng);
                    // S is this decision's memory plus its samples: recompute it from a
                    // clone drawing the same numbers.
                    let mem_before: Vec<u16> = drill.memory(c).to_vec();
                    let i = drill.choose(&q, c, &mut rng);
                    let p = c.get(i);
                    let s = &drill.s;
                    assert!(s.len() <= d as usize + mem_before.len());
                    for &j in s {
                        assert!(q.0[p as usize] <= q.0[c.get(j) as usize], "d={d} m={m}");
                    }
                    for &r in &mem_before {
                        assert!(q.0[p as usize] <= q.0[r as usize], "worse than memory");
                    }
                    let s_len = s.len() + (m > 1) as usize; // p* was taken out for m > 1
                    let mem = drill.memory(c);
                    assert_eq!(mem.len(), (m as usize).min(s_len), "the m best of S");
                    if m > 0 {
                        assert_eq!(mem[0], p, "memory starts with p*");
                        assert!(mem.iter().all(|&r| c.iter().any(|x| x == r)));
                        let mut sorted = mem.to_vec();
                        sorted.sort();
                        sorted.dedup();
                        assert_eq!(sorted.len(), mem.len(), "memory repeats a port");
                    }
                }
            }
        }
    }

    #[test]
    fn memory_holds_the_m_least_loaded_of_s() {
        // d = |candidates| puts every port in S: memory = p* and the next m - 1 by load.
        let q = Queues(vec![50, 10, 30, 10, 20]);
        let c = Candidates::Range { first: 0, count: 5 };
        let mut rng = Pcg32::seed_from_u64(2);
        let mut drill = Drill::new(5, 3);
        let p = c.get(drill.choose(&q, c, &mut rng));
        assert!(p == 1 || p == 3);
        assert_eq!(drill.memory(c), &[p, 4 - p, 4]);
    }

    #[test]
    fn memory_is_per_candidate_group() {
        let q = Queues(vec![0, 9, 9, 0, 9, 9]);
        let (a, b) = ([0u16, 1, 2], [3u16, 4, 5]);
        let mut rng = Pcg32::seed_from_u64(4);
        let mut drill = Drill::new(3, 1);
        assert_eq!(drill.choose(&q, Candidates::List(&a), &mut rng), 0);
        assert_eq!(drill.choose(&q, Candidates::List(&b), &mut rng), 0);
        assert_eq!(drill.memory(Candidates::List(&a)), &[0]);
        assert_eq!(drill.memory(Candidates::List(&b)), &[3]);
        // With d = 1 a group's memory is used: port 3 stays the choice even when the sample
        // is worse, and never leaks into group a.
        let mut drill1 = Drill::new(1, 1);
        drill1.groups = drill.groups.clone();
        for _ in 0..200 {
            assert_eq!(drill1.choose(&q, Candidates::List(&b), &mut rng), 0);
            let i = drill1.choose(&q, Candidates::List(&a), &mut rng);
            assert_eq!(i, 0);
        }
    }

    #[test]
    fn with_d_at_least_the_candidates_drill_is_jsq() {
        // Same decisions and same random draws as JSQ, whatever the memory.
        let mut qrng = Pcg32::seed_from_u64(9);
        for (d, m) in [(6u16, 0u16), (6, 1), (8, 3)] {
            let (mut r1, mut r2) = (Pcg32::seed_from_u64(1), Pcg32::seed_from_u64(1));
            let mut drill = Drill::new(d, m);
            let c = Candidates::Range { first: 2, count: 6 };
            for _ in 0..5_000 {
                let q = random_queues(&mut qrng);
                let i = drill.choose(&q, c, &mut r1);
                let j = jsq::choose(&q, c, &mut r2);
                assert_eq!(q.0[c.get(i) as usize], q.0[c.get(j) as usize]);
                if m == 0 {
                    assert_eq!(i, j, "d={d}");
                }
            }
        }
    }

    #[test]
    fn equal_queues_give_uniform_choices() {
        // Chi-square over 10^4 decisions on 8 equal queues (7 dof, p = 0.001): the memory
        // port is only one of the tied ports of S.
        for (d, m) in [(2u16, 1u16), (1, 1), (3, 2)] {
            let mut rng = Pcg32::seed_from_u64(12);
            let q = Queues(vec![100; 8]);
            let c = Candidates::Range { first: 0, count: 8 };
            let mut drill = Drill::new(d, m);
            let mut hist = [0u32; 8];
            for _ in 0..10_000 {
                hist[drill.choose(&q, c, &mut rng) as usize] += 1;
            }
            let e = 10_000.0 / 8.0;
            let chi2: f64 = hist.iter().map(|&h| (h as f64 - e).powi(2) / e).sum();
            assert!(chi2 < 24.3, "d={d} m={m}: chi2 {chi2}: {hist:?}");
        }
    }
}
