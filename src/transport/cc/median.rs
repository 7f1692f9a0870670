//! MSwift's delay filter (Gerstein et al., arXiv 2509.07907): a ring of the last `history_max` RTT
//! samples and the median of the most recent H of them. Under per-packet spraying consecutive ACKs
//! come back over different paths; the median of about half a window of samples follows the typical
//! path, so one congested path out of many does not drive the CCA.
//!
//! Decisions:
//! - samples are u64 picoseconds; an even count takes the mean of the two middle values
//!   floored to an integer picosecond (the integer midpoint of the third-party reference
//!   `LeoLongmay/HTSIM:htsim/sim/mnscc_median.h`; the mean of the two is as valid);
//! - the median is computed on a scratch copy, never by reordering the ring;
//!   the scratch buffer is kept to spare an allocation per ACK.

use serde::{Deserialize, Serialize};

/// The last `capacity` delay samples, oldest overwritten first.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub(crate) struct DelayHistory {
    /// Ring storage; grows to `capacity`, then wraps.
    samples_ps: Vec<u64>,
    /// Where the next sample goes once the ring is full.
    next: usize,
    capacity: usize,
    /// Working copy for the selection, so the ring keeps its order.
    #[serde(skip)]
    scratch_ps: Vec<u64>,
}

impl DelayHistory {
    pub(crate) fn new(capacity: usize) -> DelayHistory {
        assert!(capacity > 0, "a history holds at least one sample");
        DelayHistory {
            samples_ps: Vec::with_capacity(capacity),
            next: 0,
            capacity,
            scratch_ps: Vec::with_capacity(capacity),
        }
    }

    pub(crate) fn capacity(&self) -> usize {
        self.capacity
    }

    fn len(&self) -> usize {
        self.samples_ps.len()
    }

    pub(crate) fn push(&mut self, delay_ps: u64) {
        if self.samples_ps.len() < self.capacity {
            self.samples_ps.push(delay_ps);
        } else {
            self.samples_ps[self.next] = delay_ps;
        }
        self.next = (self.next + 1) % self.capacity;
    }

    /// Median of the most recent `min(h, len)` samples; none while the ring is empty.
    pub(crate) fn median_of_last(&mut self, h: usize) -> Option<u64> {
        let n = h.min(self.len());
        if n == 0 {
            return None;
        }
        self.scratch_ps.clear();
        // `next` is one past the newest sample in both the filling and the wrapped ring.
        let len = self.len();
        let newest_end = if self.next == 0 { len } else { self.next };
        for back in 1..=n {
            let i = (newest_end + len - back) % len;
            self.scratch_ps.push(self.samples_ps[i]);
        }
        Some(median_in_place(&mut self.scratch_ps))
    }
}

/// Median by selection (O(n)); reorders `v`, so callers pass a copy.
fn median_in_place(v: &mut [u64]) -> u64 {
    assert!(!v.is_empty(), "the median of no samples");
    let count = v.len();
    let (lower, &mut upper_mid, _) = v.select_nth_unstable(count / 2);
    if count % 2 == 1 {
        return upper_mid;
    }
    // Even count: the other middle value is the largest of the lower half.
    let lower_mid = *lower
        .iter()
        .max()
        .expect("an even count ≥ 2 has a lower half");
    // Floor of the mean without overflowing u64.
    lower_mid / 2 + upper_mid / 2 + (lower_mid % 2 + upper_mid % 2) / 2
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Median of `samples_ps` on a copy, as the history computes it.
    fn median_of(samples_ps: &[u64]) -> u64 {
        median_in_place(&mut samples_ps.to_vec())
    }

    #[test]
    fn median_of_odd_count_is_the_middle_value() {
        // Sorted [1, 5, 9]: the middle is 5.
        assert_eq!(median_of(&[5, 1, 9]), 5);
        assert_eq!(median_of(&[7]), 7);
    }

    #[test]
    fn median_of_even_count_is_the_floored_midpoint() {
        // Sorted [1, 2, 3, 10]: middles 2 and 3, mean 2.5, floored to 2.
        assert_eq!(median_of(&[1, 2, 3, 10]), 2);
        assert_eq!(median_of(&[10, 3, 2, 1]), 2);
        // Middles 4 and 6: mean 5 exactly.
        assert_eq!(median_of(&[6, 4]), 5);
        // No overflow near u64::MAX: middles MAX−1 and MAX, floor of the mean is MAX−1.
        assert_eq!(median_of(&[u64::MAX, u64::MAX - 1]), u64::MAX - 1);
    }

    #[test]
    fn the_median_leaves_the_ring_in_arrival_order() {
        let mut h = DelayHistory::new(3);
        for d in [5, 9, 1] {
            h.push(d);
        }
        assert_eq!(h.median_of_last(3), Some(5));
        // Still [5, 9, 1] in arrival order: newest 1, newest two (9 + 1)/2 = 5. Had the
        // median sorted the ring to [1, 5, 9], the newest would read 9.
        assert_eq!(h.median_of_last(1), Some(1));
        assert_eq!(h.median_of_last(2), Some(5));
    }

    #[test]
    fn empty_history_has_no_median() {
        let mut h = DelayHistory::new(4);
        assert_eq!(h.len(), 0);
        assert_eq!(h.median_of_last(3), None);
    }

    #[test]
    fn median_of_last_takes_the_newest_samples() {
        let mut h = DelayHistory::new(4);
        for d in [100, 1, 2, 3] {
            h.push(d);
        }
        // Newest three are [1, 2, 3]: median 2; all four [100, 1, 2, 3]: (2 + 3)/2 = 2.
        assert_eq!(h.median_of_last(3), Some(2));
        assert_eq!(h.median_of_last(4), Some(2));
        // H = 1 is the latest sample.
        assert_eq!(h.median_of_last(1), Some(3));
        // H beyond the count uses what there is.
        assert_eq!(h.median_of_last(99), Some(2));
    }

    #[test]
    fn ring_wraps_and_forgets_the_oldest() {
        let mut h = DelayHistory::new(3);
        for d in [1000, 1000, 1000, 7, 8] {
            h.push(d);
        }
        // The ring holds [1000, 7, 8] (the first two 1000s are gone).
        assert_eq!(h.len(), 3);
        assert_eq!(h.median_of_last(3), Some(8));
        // The newest two are [7, 8]: mean 7.5, floored to 7.
        assert_eq!(h.median_of_last(2), Some(7));
        assert_eq!(h.median_of_last(1), Some(8));
        h.push(1);
        // Ring [7, 8, 1] after one more wrap: newest is 1, median of all is 7.
        assert_eq!(h.median_of_last(1), Some(1));
        assert_eq!(h.median_of_last(3), Some(7));
    }
}
