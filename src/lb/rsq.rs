//! RSQ: every northbound packet goes to a uniformly random uplink (switch RNG), independent of
//! any host entropy. Equivalent in distribution to host RPS with ECMP hashing.

use super::switch_policy::{BuildSwitch, QueueView, SwitchCtx, SwitchPolicy};
use super::LbShared;
use crate::scenario::LbPolicy;
use crate::topology::{Fabric, NodeId};
use rand::Rng;
use rand_pcg::Pcg32;

#[inline]
pub(crate) fn choose(count: u16, rng: &mut Pcg32) -> u16 {
    rng.gen_range(0..count)
}

/// RSQ at a switch: no state, the switch's RNG draws.
#[derive(serde::Serialize, serde::Deserialize)]
pub(crate) struct Rsq;

impl SwitchPolicy for Rsq {
    #[inline]
    fn choose<Q: QueueView>(&mut self, ctx: &mut SwitchCtx<'_, Q>) -> u16 {
        ctx.candidates.get(choose(ctx.candidates.len(), ctx.rng))
    }
}

impl BuildSwitch for Rsq {
    fn build(_: LbPolicy, _: &LbShared, _: &Fabric, _: NodeId, _: &mut Pcg32) -> Rsq {
        Rsq
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;

    #[test]
    fn uniform_and_lag_one_independent() {
        let mut rng = Pcg32::seed_from_u64(4);
        let n = 100_000;
        let xs: Vec<u16> = (0..n).map(|_| choose(8, &mut rng)).collect();
        let mut hist = [0u32; 8];
        xs.iter().for_each(|&x| hist[x as usize] += 1);
        let e = n as f64 / 8.0;
        let chi2: f64 = hist.iter().map(|&h| (h as f64 - e).powi(2) / e).sum();
        assert!(chi2 < 24.3, "chi2 {chi2} (p < 0.001 at 7 dof)"); // 7 dof, p = 0.001
        let same = xs.windows(2).filter(|w| w[0] == w[1]).count() as f64 / (n - 1) as f64;
        assert!((same - 0.125).abs() < 0.01, "lag-1 repeat rate {same}");
    }
}
