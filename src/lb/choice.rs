//! Choice (the Ofan paper's baseline, Table 1): the power of two choices without memory.
//! Two distinct candidate ports are drawn uniformly; the packet joins the one with fewer
//! queued bytes, a fair coin deciding ties. It is DRILL(2, 0) (Ghorbani et al.), and draws
//! its random numbers exactly as [`super::drill`] does, so the two make the same decisions
//! from the same stream (tested).

use super::switch_policy::QueueView;
use super::switch_policy::{BuildSwitch, SwitchCtx, SwitchPolicy};
use super::LbShared;
use crate::scenario::LbPolicy;
use crate::topology::Candidates;
use crate::topology::{Fabric, NodeId};
use rand::Rng;
use rand_pcg::Pcg32;

/// The index (among `c`, at least two candidates) of the better of two random candidates.
#[inline]
pub(crate) fn choose<Q: QueueView>(queues: &Q, c: Candidates<'_>, rng: &mut Pcg32) -> u16 {
    let n = c.len();
    debug_assert!(n >= 2);
    // Two steps of a partial Fisher-Yates shuffle of 0..n (the first pick swaps with slot 0);
    // with two candidates both are taken, no draw needed.
    let (a, b) = if n == 2 {
        (0, 1)
    } else {
        let a = rng.gen_range(0..n);
        match rng.gen_range(1..n) {
            j if j == a => (a, 0),
            j => (a, j),
        }
    };
    let (qa, qb) = (queues.queued_bytes(c.get(a)), queues.queued_bytes(c.get(b)));
    if qa < qb || (qa == qb && rng.gen_range(0..2usize) == 0) {
        a
    } else {
        b
    }
}

/// Choice at a switch: no state of its own.
#[derive(serde::Serialize, serde::Deserialize)]
pub(crate) struct Choice;

impl SwitchPolicy for Choice {
    #[inline]
    fn choose<Q: QueueView>(&mut self, ctx: &mut SwitchCtx<'_, Q>) -> u16 {
        ctx.candidates
            .get(choose(ctx.queues, ctx.candidates, ctx.rng))
    }
}

impl BuildSwitch for Choice {
    fn build(_: LbPolicy, _: &LbShared, _: &Fabric, _: NodeId, _: &mut Pcg32) -> Choice {
        Choice
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lb::drill::Drill;
    use rand::SeedableRng;

    use crate::lb::TestQueues as Queues;

    #[test]
    fn never_the_worse_of_its_pair_and_never_the_longest_queue() {
        let mut rng = Pcg32::seed_from_u64(3);
        let q = Queues(vec![9, 9, 40, 10, 30, 20]);
        let c = Candidates::Range { first: 2, count: 4 };
        let mut hist = [0u32; 4];
        for _ in 0..40_000 {
            hist[choose(&q, c, &mut rng) as usize] += 1;
        }
        // Port 2 (40 B, the longest) always loses its pair. Port 3 (the shortest) wins every
        // pair it is in: 3 of the 6 pairs; port 5 (20 B) wins 2 (with ports 2 and 4), port 4 1.
        assert_eq!(hist[0], 0, "{hist:?}");
        for (i, pairs) in [(1, 3.0), (2, 1.0), (3, 2.0)] {
            let f = hist[i] as f64 / 40_000.0;
            assert!((f - pairs / 6.0).abs() < 0.01, "{hist:?}");
        }
    }

    #[test]
    fn equal_queues_give_uniform_choices() {
        // Chi-square over 10^4 decisions on 8 equal queues: 7 degrees of freedom, p = 0.001.
        let mut rng = Pcg32::seed_from_u64(8);
        let q = Queues(vec![4_158; 8]);
        let c = Candidates::Range { first: 0, count: 8 };
        let mut hist = [0u32; 8];
        for _ in 0..10_000 {
            hist[choose(&q, c, &mut rng) as usize] += 1;
        }
        let e = 10_000.0 / 8.0;
        let chi2: f64 = hist.iter().map(|&h| (h as f64 - e).powi(2) / e).sum();
        assert!(chi2 < 24.3, "chi2 {chi2}: {hist:?}");
    }

    #[test]
    fn is_drill_with_two_samples_and_no_memory() {
        let q = Queues(vec![3, 0, 3, 7, 0, 1, 3]);
        let list = [6u16, 0, 2, 5, 1, 3];
        for c in [
            Candidates::Range { first: 1, count: 6 },
            Candidates::List(&list),
            Candidates::Range { first: 0, count: 2 },
        ] {
            let (mut r1, mut r2) = (Pcg32::seed_from_u64(5), Pcg32::seed_from_u64(5));
            let mut drill = Drill::new(2, 0);
            for i in 0..5_000 {
                assert_eq!(
                    choose(&q, c, &mut r1),
                    drill.choose(&q, c, &mut r2),
                    "decision {i}"
                );
            }
        }
    }
}
