//! A set of sequence numbers that is dense below a cumulative point: everything below `base`
//! is in the set; a bitmap holds what is above. Used for what a sender has had acknowledged
//! and what a receiver has received. O(1) per insert; memory follows the reordering, not the
//! flow size.

use serde::{Deserialize, Serialize};

#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct SeqSet {
    /// Every sequence number below `base` is in the set.
    base: u32,
    /// Bit i of word j: `base + 64·j + i` is in the set. The first word is never full.
    words: Vec<u64>,
    /// Numbers in the set.
    len: u64,
}

impl SeqSet {
    /// Adds `seq`; returns false if it was already there.
    pub(crate) fn insert(&mut self, seq: u32) -> bool {
        if seq < self.base {
            return false;
        }
        let off = (seq - self.base) as usize;
        let (w, bit) = (off / 64, 1u64 << (off % 64));
        if w >= self.words.len() {
            self.words.resize(w + 1, 0);
        }
        if self.words[w] & bit != 0 {
            return false;
        }
        self.words[w] |= bit;
        self.len += 1;
        let full = self.words.iter().take_while(|&&x| x == u64::MAX).count();
        if full > 0 {
            self.words.drain(..full);
            self.base += 64 * full as u32;
        }
        true
    }

    pub(crate) fn contains(&self, seq: u32) -> bool {
        if seq < self.base {
            return true;
        }
        let off = (seq - self.base) as usize;
        self.words
            .get(off / 64)
            .is_some_and(|w| w & 1 << (off % 64) != 0)
    }

    /// The cumulative point: the smallest number not in the set.
    pub(crate) fn cumulative(&self) -> u32 {
        self.base + self.words.first().map_or(0, |w| w.trailing_ones())
    }

    /// Up to 64 numbers above the cumulative point c: bit i = c + 1 + i is in the set.
    pub(crate) fn sack_above_cumulative(&self) -> u64 {
        self.cumulative()
            .checked_add(1)
            .map_or(0, |first| self.bitmap_from(first))
    }

    /// 64 numbers from `start`: bit i = `start + i` is in the set (numbers past `u32::MAX`
    /// are not). Two word reads, not 64 lookups: it is on every ACK's path.
    pub(crate) fn bitmap_from(&self, start: u32) -> u64 {
        let word = |i: usize| self.words.get(i).copied().unwrap_or(0);
        let bits = if start < self.base {
            let below = self.base - start; // numbers below `base`: all in the set
            if below >= 64 {
                u64::MAX
            } else {
                word(0) << below | ((1u64 << below) - 1)
            }
        } else {
            let off = (start - self.base) as usize;
            let (w, shift) = (off / 64, off % 64);
            let high = if shift == 0 {
                0
            } else {
                word(w + 1) << (64 - shift)
            };
            word(w) >> shift | high
        };
        let valid = (u32::MAX - start) as u64 + 1; // numbers from `start` up to u32::MAX
        if valid >= 64 {
            bits
        } else {
            bits & ((1u64 << valid) - 1)
        }
    }

    pub(crate) fn len(&self) -> u64 {
        self.len
    }
    pub(crate) fn is_empty(&self) -> bool {
        self.len == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn matches_a_plain_set_under_reordering() {
        use rand::{seq::SliceRandom, SeedableRng};
        let mut rng = rand_pcg::Pcg32::seed_from_u64(7);
        let mut order: Vec<u32> = (0..1000).collect();
        order.shuffle(&mut rng);
        let mut s = SeqSet::default();
        let mut plain = std::collections::BTreeSet::new();
        for &x in order.iter().chain(order.iter().take(100)) {
            assert_eq!(s.insert(x), plain.insert(x));
            let cum = (0..).find(|i| !plain.contains(i)).unwrap();
            assert_eq!(s.cumulative(), cum);
            assert_eq!(s.len(), plain.len() as u64);
        }
        assert!(s.words.is_empty() || s.words.len() == 1);
        assert_eq!(s.cumulative(), 1000);
    }

    #[test]
    fn bitmaps_from_any_start_match_lookups() {
        use rand::{Rng, SeedableRng};
        let mut rng = rand_pcg::Pcg32::seed_from_u64(11);
        let mut s = SeqSet::default();
        for _ in 0..400 {
            s.insert(rng.gen_range(0..500));
            let start = rng.gen_range(0..600);
            let naive = (0..64u32)
                .filter(|&i| s.contains(start + i))
                .fold(0u64, |acc, i| acc | 1 << i);
            assert_eq!(s.bitmap_from(start), naive, "from {start}, base {}", s.base);
        }
        // Near the end of the number space nothing past u32::MAX is reported.
        let mut top = SeqSet {
            base: u32::MAX - 2,
            ..SeqSet::default()
        };
        top.insert(u32::MAX - 1);
        top.insert(u32::MAX);
        // MAX-3 (below the base), MAX-2 missing, MAX-1, MAX; nothing above.
        assert_eq!(top.bitmap_from(u32::MAX - 3), 0b1101);
    }

    #[test]
    fn sack_bits_are_relative_to_the_cumulative_point() {
        let mut s = SeqSet::default();
        for x in [0, 1, 3, 4, 70] {
            s.insert(x);
        }
        assert_eq!(s.cumulative(), 2);
        // 3 → bit 0, 4 → bit 1, 70 → bit 67 (beyond the 64 reported).
        assert_eq!(s.sack_above_cumulative(), 0b11);
        assert!(s.contains(70) && !s.contains(69));
    }
}
