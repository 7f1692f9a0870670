//! JSQ: the candidate port with the fewest queued bytes (instantaneous), uniform random among
//! ties. Without the random tie-break JSQ would degenerate to "always the first port" when
//! idle.

// ANCHOR: policy
use super::switch_policy::{BuildSwitch, QueueView, SwitchCtx, SwitchPolicy};
use super::ties::uniform_among;
use super::LbShared;
use crate::scenario::LbPolicy;
use crate::topology::{Candidates, Fabric, NodeId};
use rand_pcg::Pcg32;

/// The index (among `c`) of a shortest queue.
#[inline]
pub(crate) fn choose<Q: QueueView>(queues: &Q, c: Candidates<'_>, rng: &mut Pcg32) -> u16 {
    let min = c
        .iter()
        .map(|p| queues.queued_bytes(p))
        .min()
        .expect("candidates");
    uniform_among(|| c.iter(), |&p| queues.queued_bytes(p) == min, rng) as u16
}

/// JSQ at a switch: no state of its own, the queues decide.
#[derive(serde::Serialize, serde::Deserialize)]
pub(crate) struct Jsq;

impl SwitchPolicy for Jsq {
    #[inline]
    fn choose<Q: QueueView>(&mut self, ctx: &mut SwitchCtx<'_, Q>) -> u16 {
        ctx.candidates
            .get(choose(ctx.queues, ctx.candidates, ctx.rng))
    }
}

impl BuildSwitch for Jsq {
    fn build(_: LbPolicy, _: &LbShared, _: &Fabric, _: NodeId, _: &mut Pcg32) -> Jsq {
        Jsq
    }
}
// ANCHOR_END: policy

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;

    use crate::lb::TestQueues as Queues;

    #[test]
    fn picks_a_shortest_queue_and_ties_uniformly() {
        let mut rng = Pcg32::seed_from_u64(1);
        // Ports 2..6 are the candidates; 2 and 4 hold packets.
        let q = Queues(vec![0, 0, 100, 0, 50, 0]);
        let c = Candidates::Range { first: 2, count: 4 };
        let mut hist = [0u32; 4];
        for _ in 0..10_000 {
            let i = choose(&q, c, &mut rng);
            assert_eq!(q.0[c.get(i) as usize], 0);
            hist[i as usize] += 1;
        }
        assert_eq!(hist[0] + hist[2], 0);
        assert!(hist[1] > 4_500 && hist[3] > 4_500, "{hist:?}");
        let list = [5u16, 2, 4];
        for _ in 0..100 {
            assert_eq!(choose(&q, Candidates::List(&list), &mut rng), 0);
        }
    }
}
