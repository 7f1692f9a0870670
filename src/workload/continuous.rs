//! Continuous load (the PSP paper's set-up, §IV-A): every host sends back-to-back
//! messages, each to a uniformly random host of another group (pod or leaf), starting one
//! every `gap_ps` (a message's wire time at the host's line rate over the offered load) for
//! the run's duration. Flows are computed on demand from (seed, host, index), so nothing
//! O(flows) is stored.

use super::Flow;
use serde::{Deserialize, Serialize};

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Continuous {
    /// Group (pod or leaf) of every host.
    pub group: Vec<u32>,
    pub bytes: u64,
    /// Time between two message starts of a host.
    pub gap_ps: u64,
    /// Messages per host.
    pub count: u32,
    pub seed: u64,
}

fn splitmix64(mut x: u64) -> u64 {
    x = x.wrapping_add(0x9e37_79b9_7f4a_7c15);
    x = (x ^ (x >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    x ^ (x >> 31)
}

impl Continuous {
    /// Message `i` of host `h`: its destination is drawn by hashing (seed, h, i, attempt)
    /// until it lands in another group (a few attempts: every group holds at most half the
    /// hosts).
    pub fn flow(&self, h: u32, i: u32) -> Flow {
        let n = self.group.len() as u64;
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
}
