//! PSP and its band-based JSQ baseline (the PSP paper, §III and Table IV).
//!
//! Both see each candidate's queue through a band: with n bands and thresholds
//! Th_i = i·Th_max/n (i = 1..n), a queue's band is the number of thresholds it exceeds
//! (0..=n; a queue above Th_max is in band n).
//! - `psp`: a weight per band from a table (default linearly decreasing, n−1 .. 0, and 0
//!   above Th_max); a weighted random choice by prefix sums (R uniform in [0, Σw), the first
//!   port whose prefix sum exceeds R); uniform if every weight is 0.
//! - `band_jsq`: uniform among the candidates in the lowest occupied band.
//!
//! Queue depths are what the switch's `QueueView` gives: live, or with
//! `lb.state_update_period_ns` the snapshot refreshed every period (the paper's stale state).
//! With `lb.psp_remote` a leaf's uplink toward destination leaf L is seen in the band of the
//! larger of its own queue and the queue the spine last advertised toward L (`remote.rs`).

use super::ties::uniform_among;
use super::QueueView;
use crate::topology::Candidates;
use rand::Rng;
use rand_pcg::Pcg32;
use serde::{Deserialize, Serialize};

/// Band layout and weights, shared by every switch of a run.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Bands {
    /// n.
    pub bands: u32,
    pub th_max_bytes: u64,
    /// Weight of bands 0..=n (`bands + 1` entries).
    pub weights: Vec<u32>,
}

/// The band of a queue of `bytes` with `bands` bands up to `th_max_bytes`: thresholds
/// exceeded, 0..=n.
#[inline]
pub fn band_of(bands: u32, th_max_bytes: u64, bytes: u64) -> u32 {
    // Th_i < bytes  ⇔  i·Th_max < bytes·n, so the count is ⌈bytes·n / Th_max⌉ − 1,
    // capped at n (exact in integers).
    let n = bands as u128;
    let scaled = bytes as u128 * n;
    let th = th_max_bytes as u128;
    (scaled.div_ceil(th).saturating_sub(1)).min(n) as u32
}

impl Bands {
    /// The band of a queue of `bytes`: thresholds exceeded, 0..=n.
    #[inline]
    pub fn band(&self, bytes: u64) -> u32 {
        band_of(self.bands, self.th_max_bytes, bytes)
    }

    /// PSP: the index (among `c`) of a port drawn with probability proportional to its
    /// band's weight.
    pub fn choose_psp<Q: QueueView>(&self, queues: &Q, c: Candidates<'_>, rng: &mut Pcg32) -> u16 {
        self.choose_psp_by(|p| self.band(queues.queued_bytes(p)), c, rng)
    }

    /// PSP with each port's band given by `band`.
    #[inline]
    pub fn choose_psp_by(
        &self,
        band: impl Fn(u16) -> u32,
        c: Candidates<'_>,
        rng: &mut Pcg32,
    ) -> u16 {
        let weight = |p: u16| self.weights[band(p) as usize] as u64;
        let total: u64 = c.iter().map(weight).sum();
        if total == 0 {
            return rng.gen_range(0..c.len());
        }
        let r = rng.gen_range(0..total);
        let mut prefix = 0;
        for (i, p) in c.iter().enumerate() {
            prefix += weight(p);
            if prefix > r {
                return i as u16;
            }
        }
        unreachable!("r < total")
    }

    /// Band JSQ: the index of a port drawn uniformly among those in the lowest band.
    pub fn choose_band_jsq<Q: QueueView>(
        &self,
        queues: &Q,
        c: Candidates<'_>,
        rng: &mut Pcg32,
    ) -> u16 {
        self.choose_band_jsq_by(|p| self.band(queues.queued_bytes(p)), c, rng)
    }

    /// Band JSQ with each port's band given by `band`.
    #[inline]
    pub fn choose_band_jsq_by(
        &self,
        band: impl Fn(u16) -> u32,
        c: Candidates<'_>,
        rng: &mut Pcg32,
    ) -> u16 {
        let min = c.iter().map(&band).min().expect("candidates");
        uniform_among(|| c.iter(), |&p| band(p) == min, rng) as u16
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;

    use crate::lb::TestQueues as Queues;

    /// The paper's default: 8 bands up to 960 KB (120 KB apart), weights 7..0, 0 above.
    fn paper() -> Bands {
        Bands {
            bands: 8,
            th_max_bytes: 960_000,
            weights: vec![7, 6, 5, 4, 3, 2, 1, 0, 0],
        }
    }

    #[test]
    fn bands_count_the_thresholds_exceeded() {
        let b = paper();
        let at = |x| b.band(x);
        assert_eq!(
            [
                at(0),
                at(120_000),
                at(120_001),
                at(240_001),
                at(960_000),
                at(960_001),
                at(5_000_000)
            ],
            [0, 0, 1, 2, 7, 8, 8]
        );
    }

    #[test]
    fn selection_frequencies_follow_the_band_weights() {
        // Bands 0, 1, 3, 7 → weights 7, 6, 4, 0 (sum 17).
        let b = paper();
        let q = Queues(vec![0, 200_000, 400_000, 900_000]);
        let mut rng = Pcg32::seed_from_u64(3);
        let mut hits = [0u64; 4];
        let n = 100_000;
        for _ in 0..n {
            hits[b.choose_psp(&q, Candidates::Range { first: 0, count: 4 }, &mut rng) as usize] +=
                1;
        }
        assert_eq!(hits[3], 0, "weight 0 is never chosen");
        // Chi-square over the three positive weights, 2 degrees of freedom: below 13.8
        // (p = 0.001).
        let expected = [7.0, 6.0, 4.0].map(|w| w / 17.0 * n as f64);
        let chi2: f64 = (0..3)
            .map(|i| (hits[i] as f64 - expected[i]).powi(2) / expected[i])
            .sum();
        assert!(chi2 < 13.8, "chi-square {chi2}, hits {hits:?}");
        // A higher band never gets a higher probability than a lower one.
        assert!(hits[0] > hits[1] && hits[1] > hits[2]);
    }

    #[test]
    fn all_zero_weights_choose_uniformly_and_band_jsq_takes_the_lowest_band() {
        let b = paper();
        let full = Queues(vec![2_000_000; 4]);
        let mut rng = Pcg32::seed_from_u64(4);
        let mut hits = [0u32; 4];
        for _ in 0..4_000 {
            hits[b.choose_psp(&full, Candidates::Range { first: 0, count: 4 }, &mut rng)
                as usize] += 1;
        }
        assert!(hits.iter().all(|&h| (850..=1_150).contains(&h)), "{hits:?}");
        // Band JSQ: 100 KB and 110 KB are both band 0, 130 KB band 1.
        let q = Queues(vec![130_000, 100_000, 110_000]);
        let mut seen = [0u32; 3];
        for _ in 0..1_000 {
            seen[b.choose_band_jsq(&q, Candidates::Range { first: 0, count: 3 }, &mut rng)
                as usize] += 1;
        }
        assert_eq!(seen[0], 0);
        assert!(seen[1] > 400 && seen[2] > 400, "{seen:?}");
    }
}
