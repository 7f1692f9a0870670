//! Random permutation: every host sends one message to a distinct other host (a uniformly
//! random derangement, drawn by rejection from uniform permutations; about e draws expected).

use rand::seq::SliceRandom;
use rand_pcg::Pcg32;

/// `dst[h]`: the host h sends to.
pub fn derangement(n: u32, rng: &mut Pcg32) -> Vec<u32> {
    let mut dst: Vec<u32> = (0..n).collect();
    loop {
        dst.shuffle(rng);
        if dst.iter().enumerate().all(|(i, &d)| i as u32 != d) {
            break;
        }
    }
    dst
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;

    #[test]
    fn is_a_derangement() {
        let mut rng = Pcg32::seed_from_u64(1);
        for n in [2, 3, 16, 128] {
            let dst = derangement(n, &mut rng);
            let mut seen = vec![false; n as usize];
            for (src, &d) in dst.iter().enumerate() {
                assert_ne!(src as u32, d);
                assert!(!seen[d as usize]);
                seen[d as usize] = true;
            }
        }
    }
}
