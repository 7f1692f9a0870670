//! Continuous load (the PSP paper's set-up, §IV-A): every host sends back-to-back
//! messages, starting one every `gap_ps` (a message's wire time at the host's line rate over
//! the offered load) for the run's duration, each to a host of another group (pod or leaf):
//! - `random`: a uniformly random host of another group, per message;
//! - `shift`: message i of every host h goes to (h + s_i) mod n, one offset s_i per round i
//!   drawn from the seed among G..=n−G (G hosts per group, groups contiguous: such an offset
//!   always leaves the group), so every host also receives exactly one message per round —
//!   the rounds of a shift all-to-all, in which no last hop is oversubscribed and the queues
//!   are the fabric's, not the receivers'.
//!
//! Flows are computed on demand from (seed, host, index), so nothing O(flows) is stored.

use super::generator::Generator;
use super::Flow;
use serde::{Deserialize, Serialize};

#[derive(Clone, Debug, Serialize, Deserialize)]
pub(crate) struct Continuous {
    /// Group (pod or leaf) of every host.
    pub group: Vec<u32>,
    pub bytes: u64,
    /// Time between two message starts of a host.
    pub gap_ps: u64,
    /// Messages per host.
    pub count: u32,
    pub seed: u64,
    /// `Some(G)`: shift rounds over contiguous groups of G hosts; `None`: random.
    pub shift_group: Option<u32>,
}

fn splitmix64(mut x: u64) -> u64 {
    x = x.wrapping_add(0x9e37_79b9_7f4a_7c15);
    x = (x ^ (x >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    x ^ (x >> 31)
}

impl Generator for Continuous {
    fn flows_of(&self, _h: u32) -> u32 {
        self.count
    }
    fn kind_name(&self) -> &'static str {
        "continuous"
    }
    fn bytes_of(&self, _h: u32) -> u64 {
        self.count as u64 * self.bytes
    }
    /// Message `i` of host `h`: its destination is drawn by hashing (seed, h, i, attempt)
    /// until it lands in another group (a few attempts: every group holds at most half the
    /// hosts).
    fn flow(&self, h: u32, i: u32) -> Flow {
        let n = self.group.len() as u64;
        if let Some(g) = self.shift_group {
            let g = g as u64;
            let s = g + splitmix64(self.seed ^ splitmix64(i as u64 | 1 << 40)) % (n - 2 * g + 1);
            let dst = ((h as u64 + s) % n) as u32;
            debug_assert_ne!(self.group[dst as usize], self.group[h as usize]);
            return Flow {
                src: h,
                dst,
                bytes: self.bytes,
                start: super::Start::At(i as u64 * self.gap_ps),
            };
        }
        let mut attempt = 0u64;
        let dst = loop {
            let key = self.seed ^ splitmix64((h as u64) << 32 | i as u64) ^ attempt << 56;
            let d = (splitmix64(key) % n) as u32;
            if self.group[d as usize] != self.group[h as usize] {
                break d;
            }
            attempt += 1;
        };
        Flow {
            src: h,
            dst,
            bytes: self.bytes,
            start: super::Start::At(i as u64 * self.gap_ps),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_go_back_to_back_to_other_groups_spread_evenly() {
        // 4 groups of 8 hosts.
        let c = Continuous {
            group: (0..32).map(|h| h / 8).collect(),
            bytes: 4096,
            gap_ps: 1_000,
            count: 2_000,
            seed: 7,
            shift_group: None,
        };
        let mut hits = [0u32; 32];
        for i in 0..c.count {
            let f = c.flow(3, i);
            assert_eq!(f.start_at_ps(), Some(i as u64 * 1_000));
            assert_ne!(c.group[f.dst as usize], 0, "never its own group");
            hits[f.dst as usize] += 1;
        }
        // 24 destinations, 2 000 draws: about 83 each.
        let other = &hits[8..];
        assert!(other.iter().all(|&x| (50..=120).contains(&x)), "{other:?}");
        assert_eq!(c.flow(3, 5), c.flow(3, 5), "deterministic");
    }

    /// Shift rounds: every host sends and receives exactly one message per round, always to
    /// another group, and the offsets vary from round to round.
    #[test]
    fn shift_rounds_are_permutations_across_groups() {
        let c = Continuous {
            group: (0..32).map(|h| h / 8).collect(),
            bytes: 4096,
            gap_ps: 1_000,
            count: 500,
            seed: 7,
            shift_group: Some(8),
        };
        let mut offsets = std::collections::BTreeSet::new();
        for i in 0..c.count {
            let mut received = [0u32; 32];
            for h in 0..32 {
                let f = c.flow(h, i);
                assert_ne!(c.group[f.dst as usize], c.group[h as usize]);
                assert_eq!(f.start_at_ps(), Some(i as u64 * 1_000));
                received[f.dst as usize] += 1;
            }
            assert!(received.iter().all(|&r| r == 1), "round {i}: {received:?}");
            offsets.insert((c.flow(0, i).dst + 32) % 32);
        }
        // Offsets 8..=24: all 17 drawn over 500 rounds.
        assert_eq!(offsets.len(), 17, "{offsets:?}");
    }
}
