//! Top-k (the PSP paper's baseline, Table IV): uniform random among the k candidates with the
//! fewest queued bytes. k = 1 is JSQ, k = |candidates| uniform (RSQ). Unset, k = ⌈N/2⌉ of the
//! N candidates (the PSP paper's k = N/2, §IV-D, rounded up so that N = 1 or odd N keep at
//! least half).
//!
//! Ties at the k-th position: ties are broken uniformly at random before cutting (the
//! alternative, keeping every port tied with the k-th, would make k a lower bound only). It is
//! computed without sorting: draw the rank r uniformly in 0..k, find the r-th smallest load v,
//! and choose uniformly among the candidates whose load is v. A port whose load class
//! (t ports of equal load, B ports strictly below) straddles the cut gets probability
//! min(t, k − B)/(k·t), exactly as under a random order of the ties.

use super::psp_switch::{remote_band, remote_if_asked, remote_state_bytes};
use super::remote::Remote;
use super::switch_policy::QueueView;
use super::switch_policy::{remote_timers, BuildSwitch, SwitchCtx, SwitchPolicy};
use super::ties::uniform_among;
use super::LbShared;
use crate::packet::Packet;
use crate::scenario::LbPolicy;
use crate::topology::Candidates;
use crate::topology::{Fabric, NodeId};
use rand::Rng;
use rand_pcg::Pcg32;
use serde::{Deserialize, Serialize};

#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub(crate) struct Topk {
    /// k; `None`: ⌈N/2⌉ of each decision's N candidates.
    k: Option<u16>,
    /// Scratch: the candidates' loads.
    #[serde(skip)]
    loads: Vec<u64>,
}

impl Topk {
    pub(crate) fn new(k: Option<u16>) -> Topk {
        assert!(k != Some(0), "Top-k needs k >= 1");
        Topk {
            k,
            loads: Vec::new(),
        }
    }

    /// k for `n` candidates.
    #[inline]
    pub(crate) fn k_of(&self, n: u16) -> u16 {
        self.k.unwrap_or(n.div_ceil(2)).min(n)
    }

    /// The index (among `c`) of a port chosen uniformly among the k least loaded.
    #[inline]
    pub(crate) fn choose<Q: QueueView>(
        &mut self,
        queues: &Q,
        c: Candidates<'_>,
        rng: &mut Pcg32,
    ) -> u16 {
        self.choose_by(|p| queues.queued_bytes(p), c, rng)
    }

    /// The index (among `c`) of a port chosen uniformly among the k of least `load`.
    #[inline]
    pub(crate) fn choose_by(
        &mut self,
        load: impl Fn(u16) -> u64,
        c: Candidates<'_>,
        rng: &mut Pcg32,
    ) -> u16 {
        let k = self.k_of(c.len());
        let loads = &mut self.loads;
        loads.clear();
        loads.extend(c.iter().map(&load));
        let v = if k == 1 {
            *loads.iter().min().expect("candidates")
        } else {
            let r = rng.gen_range(0..k) as usize;
            *loads.select_nth_unstable(r).1
        };
        // `select_nth_unstable` reordered `loads`: count and pick on the candidates.
        uniform_among(|| c.iter(), |&p| load(p) == v, rng) as u16
    }
}

/// Top-k at a switch: its own queues, or with `lb.psp.remote` ranked first by the PSP band of
/// the larger of the own queue and the next switch's advertised one.
#[derive(Serialize, Deserialize)]
pub(crate) struct TopkSwitch {
    topk: Topk,
    remote: Option<Box<Remote>>,
}

impl SwitchPolicy for TopkSwitch {
    #[inline]
    fn choose<Q: QueueView>(&mut self, ctx: &mut SwitchCtx<'_, Q>) -> u16 {
        let c = ctx.candidates;
        let Some(r) = &self.remote else {
            return c.get(self.topk.choose(ctx.queues, c, ctx.rng));
        };
        let (b, q, f, dst) = (&ctx.shared.bands, ctx.queues, ctx.fabric, ctx.pkt.dst);
        // The band says how loaded the path is; the own queue orders a band's ports.
        let load = |p: u16| {
            let band = remote_band(b, q, f, r, p, dst) as u64;
            band << 48 | q.queued_bytes(p).min((1 << 48) - 1)
        };
        c.get(self.topk.choose_by(load, c, ctx.rng))
    }

    fn uplink_structured(&self) -> bool {
        self.remote.is_some()
    }

    remote_timers!(remote);
}

impl BuildSwitch for TopkSwitch {
    fn build(_: LbPolicy, shared: &LbShared, fabric: &Fabric, node: NodeId, _: &mut Pcg32) -> Self {
        TopkSwitch {
            topk: Topk::new(shared.cfg.topk.k.map(|k| k as u16)),
            remote: remote_if_asked(shared, fabric, node),
        }
    }

    fn state_bytes(_: LbPolicy, shared: &LbShared, fabric: &Fabric, node: NodeId) -> usize {
        remote_state_bytes(shared, fabric, node)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;

    use crate::lb::TestQueues as Queues;

    fn chi2(hist: &[u32], expected: &[f64]) -> f64 {
        hist.iter()
            .zip(expected)
            .filter(|(_, &e)| e > 0.0)
            .map(|(&h, &e)| (h as f64 - e).powi(2) / e)
            .sum()
    }

    #[test]
    fn the_choice_is_within_the_k_smallest() {
        let mut rng = Pcg32::seed_from_u64(21);
        for k in 1..=8u16 {
            let mut t = Topk::new(Some(k));
            for _ in 0..2_000 {
                let q = Queues((0..10).map(|_| rng.gen_range(0..6u64) * 500).collect());
                let c = Candidates::Range { first: 2, count: 8 };
                let chosen = q.0[c.get(t.choose(&q, c, &mut rng)) as usize];
                let mut sorted: Vec<u64> = c.iter().map(|p| q.0[p as usize]).collect();
                sorted.sort();
                assert!(
                    chosen <= sorted[k as usize - 1],
                    "k={k}: {chosen} {sorted:?}"
                );
            }
        }
    }

    #[test]
    fn k_equal_to_the_candidates_is_uniform() {
        // Whatever the loads. 10^4 decisions over 6 ports: chi-square, 5 dof, p = 0.001.
        let mut rng = Pcg32::seed_from_u64(3);
        let q = Queues(vec![7, 300, 0, 0, 4_158, 12]);
        let c = Candidates::Range { first: 0, count: 6 };
        let mut t = Topk::new(Some(6));
        let mut hist = [0u32; 6];
        for _ in 0..10_000 {
            hist[t.choose(&q, c, &mut rng) as usize] += 1;
        }
        let x = chi2(&hist, &[10_000.0 / 6.0; 6]);
        assert!(x < 20.5, "chi2 {x}: {hist:?}");
    }

    #[test]
    fn ties_at_the_cut_are_broken_at_random() {
        // Loads 10, 20, 20, 20, 50 with k = 2: port 0 always makes the cut, and one of the
        // three ports at 20, at random: P(0) = 1/2, P(1) = P(2) = P(3) = 1/6, P(4) = 0.
        let mut rng = Pcg32::seed_from_u64(5);
        let q = Queues(vec![10, 20, 20, 20, 50]);
        let list = [0u16, 1, 2, 3, 4];
        let c = Candidates::List(&list);
        let mut t = Topk::new(Some(2));
        let mut hist = [0u32; 5];
        for _ in 0..60_000 {
            hist[t.choose(&q, c, &mut rng) as usize] += 1;
        }
        assert_eq!(hist[4], 0);
        let e = [30_000.0, 10_000.0, 10_000.0, 10_000.0, 0.0];
        let x = chi2(&hist, &e);
        assert!(x < 16.3, "chi2 {x} (3 dof, p = 0.001): {hist:?}");
    }

    #[test]
    fn default_k_is_half_the_candidates_rounded_up() {
        let t = Topk::new(None);
        assert_eq!((t.k_of(1), t.k_of(2), t.k_of(7), t.k_of(32)), (1, 1, 4, 16));
        assert_eq!(Topk::new(Some(5)).k_of(3), 3);
        // With 8 candidates and distinct loads only the 4 shortest are ever chosen,
        // uniformly (chi-square, 3 dof, p = 0.001).
        let mut rng = Pcg32::seed_from_u64(6);
        let q = Queues(vec![80, 10, 70, 20, 60, 30, 50, 40]);
        let c = Candidates::Range { first: 0, count: 8 };
        let mut t = Topk::new(None);
        let mut hist = [0u32; 8];
        for _ in 0..10_000 {
            hist[t.choose(&q, c, &mut rng) as usize] += 1;
        }
        let e = [0.0, 2_500.0, 0.0, 2_500.0, 0.0, 2_500.0, 0.0, 2_500.0];
        assert_eq!(hist[0] + hist[2] + hist[4] + hist[6], 0, "{hist:?}");
        assert!(chi2(&hist, &e) < 16.3, "{hist:?}");
    }

    #[test]
    fn k_one_is_jsq() {
        let mut qrng = Pcg32::seed_from_u64(2);
        let (mut r1, mut r2) = (Pcg32::seed_from_u64(4), Pcg32::seed_from_u64(4));
        let mut t = Topk::new(Some(1));
        let c = Candidates::Range { first: 1, count: 5 };
        for _ in 0..5_000 {
            let q = Queues((0..6).map(|_| qrng.gen_range(0..3u64)).collect());
            assert_eq!(
                t.choose(&q, c, &mut r1),
                super::super::jsq::choose(&q, c, &mut r2)
            );
        }
    }
}
