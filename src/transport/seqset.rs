//! A set of sequence numbers that is dense below a cumulative point: everything below `base`
//! is in the set; a bitmap holds what is above. Used for what a sender has had acknowledged
//! and what a receiver has received. O(1) per insert; memory follows the reordering, not the
//! flow size.

use serde::{Deserialize, Serialize};

#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct SeqSet {
    /// Every sequence number below `base` is in the set.
    base: u32,
    /// Bit i of word j: `base + 64·j + i` is in the set. The first word is never full.
    words: Vec<u64>,
    /// Numbers in the set.
    len: u64,
}

impl SeqSet {
    /// Adds `seq`; returns false if it was already there.
    pub fn insert(&mut self, seq: u32) -> bool {
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

    pub fn contains(&self, seq: u32) -> bool {
        if seq < self.base {
            return true;
        }
        let off = (seq - self.base) as usize;
        self.words
            .get(off / 64)
            .is_some_and(|w| w & 1 << (off % 64) != 0)
    }

    /// The cumulative point: the smallest number not in the set.
    pub fn cumulative(&self) -> u32 {
        self.base + self.words.first().map_or(0, |w| w.trailing_ones())
    }

    /// Up to 64 numbers above the cumulative point c: bit i = c + 1 + i is in the set.
    pub fn sack_above_cumulative(&self) -> u64 {
        let c = self.cumulative();
        (0..64u32)
            .filter(|i| self.contains(c + 1 + i))
            .fold(0, |acc, i| acc | 1 << i)
    }

    /// 64 numbers from `base`: bit i = `base + i` is in the set.
    pub fn bitmap_from(&self, base: u32) -> u64 {
        (0..64u32)
            .filter(|&i| base.checked_add(i).is_some_and(|x| self.contains(x)))
            .fold(0, |acc, i| acc | 1 << i)
    }

    pub fn len(&self) -> u64 {
        self.len
    }
    pub fn is_empty(&self) -> bool {
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
