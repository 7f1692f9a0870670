//! Simple RR: one round-robin pointer per switch over its uplinks, shared by all northbound
//! packets, starting at a random position (the Ofan paper's baseline). With `rr_reshuffle` the
//! uplink order is reshuffled at every wrap, as htsim's `RR` does.

use rand::seq::SliceRandom;
use rand::Rng;
use rand_pcg::Pcg32;
use serde::{Deserialize, Serialize};

#[derive(Serialize, Deserialize)]
pub struct SimpleRr {
    order: Vec<u16>,
    crt: u16,
    reshuffle: bool,
}

impl SimpleRr {
    pub fn new(uplinks: u16, reshuffle: bool, rng: &mut Pcg32) -> SimpleRr {
        let mut order: Vec<u16> = (0..uplinks).collect();
        if reshuffle {
            order.shuffle(rng);
        }
        let crt = if uplinks > 0 {
            rng.gen_range(0..uplinks)
        } else {
            0
        };
        SimpleRr {
            order,
            crt,
            reshuffle,
        }
    }

    /// Uplinks in the rotation.
    pub fn width(&self) -> usize {
        self.order.len()
    }

    #[inline]
    pub fn choose(&mut self, count: u16, rng: &mut Pcg32) -> u16 {
        debug_assert_eq!(count as usize, self.order.len());
        if self.crt >= count {
            self.crt = 0;
            if self.reshuffle {
                self.order.shuffle(rng);
            }
        }
        let i = self.order[self.crt as usize];
        self.crt += 1;
        i
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;

    #[test]
    fn every_window_after_a_wrap_uses_each_uplink_once() {
        for reshuffle in [false, true] {
            let mut rng = Pcg32::seed_from_u64(3);
            let mut rr = SimpleRr::new(6, reshuffle, &mut rng);
            // Skip to the first wrap.
            while rr.crt < 6 {
                rr.choose(6, &mut rng);
            }
            for _ in 0..50 {
                let mut seen = [false; 6];
                for _ in 0..6 {
                    seen[rr.choose(6, &mut rng) as usize] = true;
                }
                assert!(seen.iter().all(|&s| s));
            }
        }
    }
}
