//! PSP and its band-based JSQ baseline (the PSP paper, §III, Fig. 3 and Table IV).
//!
//! Both see each candidate's queue through a band: a queue's band is the number of
//! thresholds it exceeds (the paper's `Quantize(q, T) = Σ (q > T_i)`). The thresholds are
//! T_i = i·Th_max/n (i = 1..n) or an explicit increasing list (`lb.psp.thresholds_bytes`;
//! the paper's Fig. 7 spans 64 to 960 KB), and the paper states two variants
//! (`lb.psp.variant`):
//! - `fig3` (default; Fig. 3's pseudocode and §III-F): only T_1..T_{n−1} are compared, so
//!   bands are 0..n−1 and a queue above T_{n−1} stays in band n−1; weights n, n−1, ..., 1
//!   (probability (n−b)/Sum, Sum = n(n+1)/2): no port ever has weight 0.
//! - `table4` (Table IV's key parameter, "W {7, 6, ..., 0}" for n = 8, which the paper's
//!   Figs. 4-6 name): all n thresholds are compared, bands 0..n, weights n−1, ..., 0 and 0
//!   above Th_max, so the two fullest bands are never chosen while any other port has weight.
//!
//! - `psp`: a weighted random choice by prefix sums (R uniform in [0, Σw), the first port
//!   whose prefix sum exceeds R); uniform if every weight is 0.
//! - `band_jsq`: uniform among the candidates in the lowest occupied band.
//!
//! Queue depths are what the switch's `QueueView` gives: live, or with
//! `lb.state_update_period_ns` the snapshot refreshed every period (the paper's stale state).
//! With `lb.psp.remote` a leaf's uplink toward destination leaf L is seen in the band of the
//! larger of its own queue and the queue the spine last advertised toward L (`remote.rs`),
//! advertised every `lb.psp.remote_period_ns`.

use super::switch_policy::QueueView;
use super::ties::uniform_among;
use crate::topology::Candidates;
use rand::Rng;
use rand_pcg::Pcg32;
use serde::{Deserialize, Serialize};

/// The thresholds a queue is compared with: its band is how many it exceeds.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Quantizer {
    /// Strictly increasing, in bytes.
    thresholds_bytes: Vec<u64>,
}

impl Quantizer {
    pub(crate) fn new(thresholds_bytes: Vec<u64>) -> Quantizer {
        assert!(
            thresholds_bytes.windows(2).all(|w| w[0] < w[1]),
            "band thresholds increase: {thresholds_bytes:?}"
        );
        assert!(thresholds_bytes.len() < 256, "a band fits an advert byte");
        Quantizer { thresholds_bytes }
    }

    #[cfg(test)]
    /// The thresholds T_i = ⌊i·Th_max/n⌋, i = 1..=`compared` (T_i < q ⇔ i·Th_max < q·n, since
    /// q is an integer: exact).
    pub(crate) fn linear(bands: u32, th_max_bytes: u64, compared: u32) -> Quantizer {
        let t = |i: u32| (i as u128 * th_max_bytes as u128 / bands as u128) as u64;
        let mut v: Vec<u64> = (1..=compared).map(t).collect();
        v.dedup(); // Th_max < n: equal thresholds are one.
        Quantizer::new(v)
    }

    /// The band of a queue of `bytes`: 0..=[`Quantizer::top`].
    #[inline]
    pub(crate) fn band(&self, bytes: u64) -> u32 {
        self.thresholds_bytes.partition_point(|&t| t < bytes) as u32
    }

    /// The highest band.
    pub(crate) fn top(&self) -> u32 {
        self.thresholds_bytes.len() as u32
    }
}

/// The variants of the paper's band rule (module doc); a scenario value.
pub(crate) use crate::scenario::PspVariant;

/// Band layout and weights, shared by every switch of a run.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Bands {
    pub quantizer: Quantizer,
    /// Weight of bands 0..=top.
    pub weights: Vec<u32>,
}

impl Bands {
    /// n bands: `thresholds_bytes` T_1..T_n (T_n = Th_max) and optional weights of bands
    /// 0..n−1 (default: the variant's linear weights).
    pub(crate) fn new(
        variant: PspVariant,
        thresholds_bytes: &[u64],
        weights: Option<&[u32]>,
    ) -> Bands {
        let n = thresholds_bytes.len();
        assert!(n >= 1, "at least one band");
        if let Some(w) = weights {
            assert_eq!(w.len(), n, "one weight per band");
        }
        let linear = |top: u32| -> Vec<u32> { (0..n as u32).map(|b| top - b).collect() };
        let (compared, mut weights) = match variant {
            PspVariant::Fig3 => (
                n - 1,
                weights.map_or_else(|| linear(n as u32), <[u32]>::to_vec),
            ),
            PspVariant::Table4 => (
                n,
                weights.map_or_else(|| linear(n as u32 - 1), <[u32]>::to_vec),
            ),
        };
        if variant == PspVariant::Table4 {
            weights.push(0); // above Th_max
        }
        let quantizer = Quantizer::new(thresholds_bytes[..compared].to_vec());
        debug_assert_eq!(weights.len() as u32, quantizer.top() + 1);
        Bands { quantizer, weights }
    }

    #[cfg(test)]
    /// n bands with T_i = i·Th_max/n.
    pub(crate) fn linear(
        variant: PspVariant,
        bands: u32,
        th_max_bytes: u64,
        weights: Option<&[u32]>,
    ) -> Bands {
        let t = Quantizer::linear(bands, th_max_bytes, bands);
        assert_eq!(
            t.top(),
            bands,
            "Th_max >= n bytes gives n distinct thresholds"
        );
        Bands::new(variant, &t.thresholds_bytes, weights)
    }

    /// The band of a queue of `bytes`.
    #[inline]
    pub(crate) fn band(&self, bytes: u64) -> u32 {
        self.quantizer.band(bytes)
    }

    /// PSP: the index (among `c`) of a port drawn with probability proportional to its
    /// band's weight.
    pub(crate) fn choose_psp<Q: QueueView>(
        &self,
        queues: &Q,
        c: Candidates<'_>,
        rng: &mut Pcg32,
    ) -> u16 {
        self.choose_psp_by(|p| self.band(queues.queued_bytes(p)), c, rng)
    }

    /// PSP with each port's band given by `band`.
    #[inline]
    pub(crate) fn choose_psp_by(
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
    pub(crate) fn choose_band_jsq<Q: QueueView>(
        &self,
        queues: &Q,
        c: Candidates<'_>,
        rng: &mut Pcg32,
    ) -> u16 {
        self.choose_band_jsq_by(|p| self.band(queues.queued_bytes(p)), c, rng)
    }

    /// Band JSQ with each port's band given by `band`.
    #[inline]
    pub(crate) fn choose_band_jsq_by(
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

    /// Table IV: 8 bands up to 960 KB (120 KB apart), weights 7..0, 0 above.
    fn paper() -> Bands {
        Bands::linear(PspVariant::Table4, 8, 960_000, None)
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

    /// Fig. 3's pseudocode (the default): n − 1 thresholds compared, weights n..1, so the
    /// fullest queue keeps weight 1; Table IV's variant: n thresholds, 7..0 and 0 above.
    #[test]
    fn the_two_variants_of_the_paper_differ_in_bands_and_weights() {
        let fig3 = Bands::linear(PspVariant::Fig3, 8, 960_000, None);
        assert_eq!(fig3.weights, [8, 7, 6, 5, 4, 3, 2, 1]);
        assert_eq!(fig3.quantizer.top(), 7);
        assert_eq!(
            [0, 120_001, 840_000, 840_001, 5_000_000].map(|x| fig3.band(x)),
            [0, 1, 6, 7, 7]
        );
        let table4 = Bands::linear(PspVariant::Table4, 8, 960_000, None);
        assert_eq!(table4.weights, [7, 6, 5, 4, 3, 2, 1, 0, 0]);
        assert_eq!(table4.quantizer.top(), 8);
        // Under fig3 a full port beside an empty one gets 1/9 of the packets; under table4
        // none.
        let q = Queues(vec![0, 5_000_000]);
        let c = Candidates::Range { first: 0, count: 2 };
        let mut rng = Pcg32::seed_from_u64(9);
        let n = 90_000;
        let full =
            |b: &Bands, rng: &mut Pcg32| (0..n).filter(|_| b.choose_psp(&q, c, rng) == 1).count();
        let f = full(&fig3, &mut rng);
        assert!((9_400..=10_600).contains(&f), "{f} of {n}, expected 10,000");
        assert_eq!(full(&table4, &mut rng), 0);
        // Explicit weights replace the linear ones; table4 still appends 0.
        let w = Bands::linear(PspVariant::Table4, 2, 100, Some(&[5, 3]));
        assert_eq!(w.weights, [5, 3, 0]);
    }

    /// The paper's Fig. 7 thresholds span 64 to 960 KB: n = 4 gives 64, 362.7, 661.3 and 960
    /// KB, of which fig3 compares the first three.
    #[test]
    fn explicit_thresholds_set_the_bands() {
        let t = [64_000, 362_667, 661_333, 960_000];
        let b = Bands::new(PspVariant::Fig3, &t, None);
        assert_eq!(b.weights, [4, 3, 2, 1]);
        assert_eq!(
            [64_000, 64_001, 362_668, 661_334, 2_000_000].map(|x| b.band(x)),
            [0, 1, 2, 3, 3]
        );
        let b = Bands::new(PspVariant::Table4, &t, None);
        assert_eq!(b.band(960_001), 4);
    }

    /// The linear thresholds are exactly those of T_i = i·Th_max/n in rationals: a queue
    /// exceeds T_i iff i·Th_max < q·n.
    #[test]
    fn linear_thresholds_are_exact() {
        let mut rng = Pcg32::seed_from_u64(5);
        for _ in 0..2_000 {
            let n = rng.gen_range(1..=32u32);
            let th = rng.gen_range(n as u64..3_000_000);
            let q = Quantizer::linear(n, th, n);
            for _ in 0..20 {
                let bytes = rng.gen_range(0..2 * th);
                let exact = (1..=n as u64)
                    .filter(|&i| (i as u128) * (th as u128) < (bytes as u128) * n as u128)
                    .count() as u32;
                assert_eq!(q.band(bytes), exact, "n {n}, Th_max {th}, q {bytes}");
            }
        }
    }
}
