//! A histogram of sampled queue occupancies that costs memory only in proportion to what it
//! holds: its first [`SPILL_SAMPLES`] non-zero samples are kept as plain values, zeros are
//! counted, and only past that does it become an HdrHistogram (3 significant digits, growing).
//!
//! Why: a run keeps one occupancy histogram per partition and stage and per partition and
//! switch tier. A growing HdrHistogram that has seen a value of a few MB holds about 14,000
//! counters (115 KB) however few samples it has, and a partition samples most of its ports
//! idle; at k = 32 with one partition per pod these histograms were 14 MB of the peak heap
//! (heaptrack). The values a histogram reports are exact functions of its counts, and the
//! counts do not depend on when the samples were turned into counts, so
//! [`SampleHistogram::histogram`] is the same histogram that recording every sample directly
//! gives, whatever the spill point and the merge order.

use hdrhistogram::Histogram;
use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// Non-zero samples kept as values before they are counted in a histogram: 64 KB, less than
/// the 115 KB of a histogram spanning a few MB.
pub(super) const SPILL_SAMPLES: usize = 8 * 1024;

/// Occupancy samples, in bytes (see the module documentation).
#[derive(Clone, Debug, Default)]
pub struct SampleHistogram {
    /// Samples of 0 bytes.
    zeros: u64,
    /// Non-zero samples not yet in `counted`; empty once `counted` exists.
    values: Vec<u64>,
    /// Every non-zero sample once more than [`SPILL_SAMPLES`] were recorded (and anything
    /// merged or decoded into this one).
    counted: Option<Histogram<u64>>,
}

/// An empty histogram of 3 significant digits that grows to fit what it records.
fn growing() -> Histogram<u64> {
    let mut h = Histogram::new(3).expect("3 significant digits is valid");
    h.auto(true);
    h
}

impl SampleHistogram {
    /// Records one sample of `bytes`.
    #[inline]
    pub fn record(&mut self, bytes: u64) {
        if bytes == 0 {
            self.zeros += 1;
        } else if let Some(h) = &mut self.counted {
            h.record(bytes)
                .expect("a growing histogram records any value");
        } else {
            self.values.push(bytes);
            if self.values.len() >= SPILL_SAMPLES {
                self.spill();
            }
        }
    }

    /// Records `count` samples of 0 bytes.
    pub fn record_zeros(&mut self, count: u64) {
        self.zeros += count;
    }

    /// Moves the kept values into the histogram of counts (creating it).
    fn spill(&mut self) {
        let h = self.counted.get_or_insert_with(growing);
        for &v in &self.values {
            h.record(v).expect("a growing histogram records any value");
        }
        self.values = Vec::new();
    }

    /// Adds another one's samples into this one.
    pub fn add(&mut self, o: &SampleHistogram) {
        self.zeros += o.zeros;
        for &v in &o.values {
            self.record(v);
        }
        if let Some(oh) = &o.counted {
            self.spill();
            let h = self.counted.as_mut().expect("spill creates the histogram");
            h.add(oh).expect("growing histograms merge");
        }
    }

    /// Samples recorded.
    pub fn len(&self) -> u64 {
        self.zeros + self.values.len() as u64 + self.counted.as_ref().map_or(0, |h| h.len())
    }

    /// Whether nothing was recorded.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Every sample as one histogram: the same counts as recording each sample directly.
    pub fn histogram(&self) -> Histogram<u64> {
        let mut h = growing();
        if self.zeros > 0 {
            h.record_n(0, self.zeros)
                .expect("a growing histogram records any value");
        }
        for &v in &self.values {
            h.record(v).expect("a growing histogram records any value");
        }
        if let Some(c) = &self.counted {
            h.add(c).expect("growing histograms merge");
        }
        h
    }

    /// Decoded from a (growing) histogram: its counts, zeros included, as this one's counted
    /// samples.
    fn from_histogram(h: Histogram<u64>) -> SampleHistogram {
        SampleHistogram {
            zeros: 0,
            values: Vec::new(),
            counted: Some(h),
        }
    }
}

/// Equal when they hold the same samples (however they are stored).
impl PartialEq for SampleHistogram {
    fn eq(&self, o: &SampleHistogram) -> bool {
        // Histogram's own == reads only the left side's counters (a longer right side with
        // counts past them would compare equal): compare the recorded values instead.
        let counts = |h: &Histogram<u64>| {
            h.iter_recorded()
                .map(|v| (v.value_iterated_to(), v.count_at_value()))
                .collect::<Vec<_>>()
        };
        counts(&self.histogram()) == counts(&o.histogram())
    }
}

/// Serialized as the HdrHistogram V2 deflate bytes of [`SampleHistogram::histogram`], the
/// encoding of every other histogram of a checkpoint and of what ranks exchange.
impl Serialize for SampleHistogram {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        super::histogram_wire::serde_v2::serialize(&self.histogram(), s)
    }
}

impl<'de> Deserialize<'de> for SampleHistogram {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<SampleHistogram, D::Error> {
        super::histogram_wire::serde_v2::deserialize(d).map(SampleHistogram::from_histogram)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Values from a fixed generator: zeros, small queues and a few large ones.
    fn samples(n: usize, seed: u64) -> Vec<u64> {
        let mut x = seed;
        (0..n)
            .map(|_| {
                x = x
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                match (x >> 60) % 4 {
                    0 => 0,
                    1 => (x >> 20) % 5_000,
                    2 => (x >> 20) % 800_000,
                    _ => (x >> 8) % 12_000_000,
                }
            })
            .collect()
    }

    fn direct(values: &[u64]) -> Histogram<u64> {
        let mut h = growing();
        for &v in values {
            h.record(v).unwrap();
        }
        h
    }

    #[test]
    fn equals_direct_recording_below_and_past_the_spill() {
        for n in [
            0,
            10,
            SPILL_SAMPLES - 1,
            SPILL_SAMPLES,
            3 * SPILL_SAMPLES + 7,
        ] {
            let values = samples(n, n as u64 + 1);
            let mut s = SampleHistogram::default();
            for &v in &values {
                s.record(v);
            }
            let (got, want) = (s.histogram(), direct(&values));
            assert_eq!(got, want, "{n} samples");
            assert_eq!(
                (got.len(), got.max(), got.mean()),
                (want.len(), want.max(), want.mean())
            );
            assert_eq!(s.len(), n as u64);
            assert_eq!(
                s.counted.is_some(),
                values.iter().filter(|&&v| v > 0).count() >= SPILL_SAMPLES
            );
        }
    }

    #[test]
    fn merging_kept_and_counted_parts_in_any_mix_equals_one_recording() {
        let (a, b) = (samples(SPILL_SAMPLES * 2, 7), samples(300, 9));
        let mut whole: Vec<u64> = a.clone();
        whole.extend(&b);
        let (mut big, mut small) = (SampleHistogram::default(), SampleHistogram::default());
        a.iter().for_each(|&v| big.record(v));
        b.iter().for_each(|&v| small.record(v));
        small.record_zeros(5);
        whole.extend([0; 5]);
        let mut kept_first = small.clone();
        kept_first.add(&big);
        let mut counted_first = big.clone();
        counted_first.add(&small);
        assert_eq!(kept_first.histogram(), direct(&whole));
        assert_eq!(counted_first.histogram(), direct(&whole));
        assert_eq!(kept_first, counted_first);
        assert_ne!(kept_first, big);
    }

    #[test]
    fn serde_round_trip_keeps_the_samples_and_records_on() {
        let mut s = SampleHistogram::default();
        samples(500, 3).iter().for_each(|&v| s.record(v));
        let bytes = bincode::serde::encode_to_vec(&s, bincode::config::standard()).unwrap();
        let (mut back, _): (SampleHistogram, _) =
            bincode::serde::decode_from_slice(&bytes, bincode::config::standard()).unwrap();
        assert_eq!(back, s);
        back.record(u64::MAX / 4);
        s.record(u64::MAX / 4);
        assert_eq!(back, s, "a decoded one grows as it records");
    }
}
