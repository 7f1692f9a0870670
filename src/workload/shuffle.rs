//! The all-to-all shuffle across racks (the Opera paper, Fig. 8, `kind = "shuffle"`): every host
//! sends `message_bytes` to every host of another rack (edge switch or leaf), H − hosts_per_rack
//! flows each, all at time 0 or staggered over `stagger_us`; in a combined workload
//! (`[workload.with_shuffle]`, `combined.rs`) from `start_us` on. Computed on demand.
//!
//! Racks are consecutive host blocks of `rack_hosts` (checked when built). Host h at
//! position p of the rack starting at host s sends its flow i to
//! s + rack_hosts + ((i + p) mod (H − rack_hosts)) (mod H): every host of a rack goes to a
//! different destination at each step. Staggered, flow i starts uniformly within
//! start + [i, i + 1) · stagger / (H − rack_hosts) (a draw from
//! `rng::stream(seed, flow id, Purpose::Shuffle)`): starts are uniform over the stagger and
//! in order at each host, as the host's cursor needs.

use super::generator::Generator;
use super::{Flow, Start};
use crate::rng::{stream, Purpose};
use rand::Rng;

#[derive(Clone, Debug)]
pub(crate) struct Shuffle {
    pub hosts: u32,
    pub rack_hosts: u32,
    pub bytes: u64,
    pub stagger_ps: u64,
    /// When the shuffle starts (0 unless combined).
    pub start_ps: u64,
    /// The application's bulk tag for every shuffle flow (Opera; None: the cutoff decides).
    pub bulk: Option<bool>,
    pub seed: u64,
}

impl Shuffle {
    /// Checks that racks are consecutive blocks of equal size, at least two.
    pub(crate) fn new(
        rack: &[u32],
        bytes: u64,
        stagger_ps: u64,
        seed: u64,
    ) -> Result<Shuffle, String> {
        let hosts = rack.len() as u32;
        let rack_hosts = rack.iter().take_while(|&&r| r == rack[0]).count() as u32;
        for (h, &r) in rack.iter().enumerate() {
            if r != rack[h / rack_hosts as usize * rack_hosts as usize] || hosts % rack_hosts != 0 {
                return Err(format!(
                    "racks must be consecutive blocks of {rack_hosts} hosts (host {h} is not)"
                ));
            }
        }
        let mut seen = std::collections::HashSet::new();
        for b in (0..hosts).step_by(rack_hosts as usize) {
            if !seen.insert(rack[b as usize]) {
                return Err(format!(
                    "racks must be consecutive host blocks (host {b} is not)"
                ));
            }
        }
        if rack_hosts == hosts {
            return Err("needs at least two racks".into());
        }
        Ok(Shuffle {
            hosts,
            rack_hosts,
            bytes,
            stagger_ps,
            start_ps: 0,
            bulk: None,
            seed,
        })
    }
}

impl Generator for Shuffle {
    fn kind_name(&self) -> &'static str {
        "shuffle"
    }
    fn bytes_of(&self, h: u32) -> u64 {
        self.flows_of(h) as u64 * self.bytes
    }
    fn bulk_tag(&self, _h: u32, _i: u32) -> Option<bool> {
        self.bulk
    }
    #[inline]
    fn flows_of(&self, _h: u32) -> u32 {
        self.hosts - self.rack_hosts
    }

    #[inline]
    fn flow(&self, h: u32, i: u32) -> Flow {
        let r = self.rack_hosts as u64;
        let n = self.flows_of(h) as u64;
        let s = h as u64 / r * r;
        let p = h as u64 - s;
        let dst = ((s + r + (i as u64 + p) % n) % self.hosts as u64) as u32;
        let start = if self.stagger_ps == 0 {
            0
        } else {
            let mut rng = stream(self.seed, crate::packet::flow_id(h, i), Purpose::Shuffle);
            let u: f64 = rng.gen();
            ((i as f64 + u) / n as f64 * self.stagger_ps as f64) as u64
        };
        Flow {
            src: h,
            dst,
            bytes: self.bytes,
            start: Start::At(self.start_ps + start),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_host_sends_once_to_every_host_of_other_racks() {
        // 4 racks of 3 hosts: 12 · (12 − 3) = 108 flows.
        let rack: Vec<u32> = (0..12).map(|h| h / 3).collect();
        let w = Shuffle::new(&rack, 100_000, 0, 1).unwrap();
        let mut pairs = std::collections::BTreeSet::new();
        for h in 0..12 {
            assert_eq!(w.flows_of(h), 9);
            for i in 0..9 {
                let f = w.flow(h, i);
                assert_eq!(f.start, Start::At(0));
                assert_eq!(f.bytes, 100_000);
                assert_ne!(rack[f.dst as usize], rack[h as usize]);
                assert!(pairs.insert((h, f.dst)), "({h}, {}) twice", f.dst);
            }
            // A rack's hosts go to different destinations at each step.
            if h % 3 == 0 {
                for i in 0..9 {
                    let d: std::collections::BTreeSet<u32> =
                        (h..h + 3).map(|x| w.flow(x, i).dst).collect();
                    assert_eq!(d.len(), 3);
                }
            }
        }
        assert_eq!(pairs.len(), 108);
    }

    #[test]
    fn staggered_starts_are_in_order_within_the_stagger_and_spread() {
        let rack: Vec<u32> = (0..64).map(|h| h / 4).collect();
        let w = Shuffle::new(&rack, 1_000, 1_000_000, 5).unwrap();
        let mut halves = [0u32; 2];
        for h in 0..64 {
            let mut prev = 0;
            for i in 0..w.flows_of(h) {
                let t = w.flow(h, i).start_at_ps().unwrap();
                assert!(t >= prev && t < 1_000_000);
                // Flow i lies in its slot [i, i + 1) · 10^6 / 60.
                assert!(t >= i as u64 * 1_000_000 / 60 && t <= (i as u64 + 1) * 1_000_000 / 60);
                prev = t;
                // Within the slot: its lower or upper half, a fair coin.
                let slot = 1_000_000.0 / 60.0;
                halves[((t as f64 - i as f64 * slot) / slot >= 0.5) as usize] += 1;
            }
        }
        // 3 840 draws, σ ≈ 31: within 5σ of 1 920.
        assert!((halves[0] as i64 - 1_920).abs() < 155, "{halves:?}");
        assert_eq!(w.flow(7, 3), w.flow(7, 3));
    }

    #[test]
    fn refuses_uneven_or_single_racks() {
        assert!(Shuffle::new(&[0, 0, 1, 1, 1], 1, 0, 0).is_err());
        assert!(Shuffle::new(&[0, 1, 0, 1], 1, 0, 0).is_err());
        assert!(Shuffle::new(&[0, 0, 0], 1, 0, 0).is_err());
        assert!(Shuffle::new(&[0, 0, 1, 1, 0, 0], 1, 0, 0).is_err());
    }
}
