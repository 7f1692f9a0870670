//! Random tie-breaking shared by the policies that pick "uniformly among the best" (JSQ,
//! DRILL, Top-k, band JSQ, AR): without it they would always take the first such port.

use rand::Rng;
use rand_pcg::Pcg32;

/// The position, among `items()`, of one of the items `is_tie` accepts, uniformly at random
/// (at least one must be accepted). One draw, and none when a single item ties, so every
/// policy consumes its random stream the same way.
#[inline]
pub(crate) fn uniform_among<I: Iterator>(
    items: impl Fn() -> I,
    is_tie: impl Fn(&I::Item) -> bool,
    rng: &mut Pcg32,
) -> usize {
    let ties = items().filter(|x| is_tie(x)).count();
    let mut pick = if ties == 1 { 0 } else { rng.gen_range(0..ties) };
    for (i, x) in items().enumerate() {
        if is_tie(&x) {
            if pick == 0 {
                return i;
            }
            pick -= 1;
        }
    }
    unreachable!("no item ties")
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;

    #[test]
    fn picks_only_ties_uniformly_and_draws_nothing_for_a_single_one() {
        let v = [3, 1, 4, 1, 5, 1];
        let mut rng = Pcg32::seed_from_u64(9);
        let mut hits = [0u32; 6];
        for _ in 0..3_000 {
            hits[uniform_among(|| v.iter(), |&&x| x == 1, &mut rng)] += 1;
        }
        assert_eq!((hits[0], hits[2], hits[4], hits[5] > 900), (0, 0, 0, true));
        assert!(hits[1] > 900 && hits[3] > 900, "{hits:?}");
        let before = rng.clone();
        assert_eq!(uniform_among(|| v.iter(), |&&x| x == 5, &mut rng), 4);
        assert_eq!(rng, before, "a single tie draws nothing");
    }
}
