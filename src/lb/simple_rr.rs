//! Simple RR: one round-robin pointer per switch over its uplinks, shared by all northbound
//! packets, starting at a random position (the Ofan paper's baseline). With `rr_reshuffle` the
//! uplink order is reshuffled at every wrap, as htsim's `RR` does.

use super::switch_policy::{all_candidates, candidates_mismatch, first_valid};
use super::switch_policy::{BuildSwitch, QueueView, SwitchCtx, SwitchPolicy};
use super::LbShared;
use crate::scenario::LbPolicy;
use crate::topology::{Fabric, NodeId};
use rand::seq::SliceRandom;
use rand::Rng;
use rand_pcg::Pcg32;
use serde::{Deserialize, Serialize};

#[derive(Serialize, Deserialize)]
pub(crate) struct SimpleRr {
    order: Vec<u16>,
    crt: u16,
    reshuffle: bool,
}

impl SimpleRr {
    pub(crate) fn new(uplinks: u16, reshuffle: bool, rng: &mut Pcg32) -> SimpleRr {
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
    pub(crate) fn width(&self) -> usize {
        self.order.len()
    }

    #[inline]
    pub(crate) fn choose(&mut self, count: u16, rng: &mut Pcg32) -> u16 {
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

/// Simple RR walks every uplink of the fault-free fabric, skipping invalid ones.
impl SwitchPolicy for SimpleRr {
    #[inline]
    fn choose<Q: QueueView>(&mut self, ctx: &mut SwitchCtx<'_, Q>) -> u16 {
        let c = ctx.candidates;
        let all = all_candidates(ctx.fabric, ctx.node, ctx.pkt.dst, c);
        if all.len() as usize != self.width() {
            candidates_mismatch("simple_rr", all.len(), self.width() as u16);
        }
        let rng = &mut *ctx.rng;
        first_valid(all, c, || SimpleRr::choose(self, all.len(), rng))
    }

    fn uplink_structured(&self) -> bool {
        true
    }
}

impl BuildSwitch for SimpleRr {
    fn build(
        _: LbPolicy,
        shared: &LbShared,
        fabric: &Fabric,
        node: NodeId,
        rng: &mut Pcg32,
    ) -> Self {
        SimpleRr::new(fabric.uplinks(node), shared.cfg.rr_reshuffle, rng)
    }

    fn state_bytes(_: LbPolicy, _: &LbShared, fabric: &Fabric, node: NodeId) -> usize {
        2 + 2 * fabric.uplinks(node) as usize
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
