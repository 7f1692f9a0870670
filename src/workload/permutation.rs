//! Random permutation: every host sends one message to a distinct other host (a uniformly
//! random derangement, drawn by rejection from uniform permutations; about e draws expected).

use super::Flow;
use rand::seq::SliceRandom;
use rand_pcg::Pcg32;

pub fn flows(n: u32, bytes: u64, rng: &mut Pcg32) -> Vec<Flow> {
    let mut dst: Vec<u32> = (0..n).collect();
    loop {
        dst.shuffle(rng);
        if dst.iter().enumerate().all(|(i, &d)| i as u32 != d) {
            break;
        }
    }
    dst.iter()
        .enumerate()
        .map(|(s, &d)| Flow {
            src: s as u32,
            dst: d,
            bytes,
            start_ps: 0,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;

    #[test]
    fn is_a_derangement() {
        let mut rng = Pcg32::seed_from_u64(1);
        for n in [2, 3, 16, 128] {
            let f = flows(n, 10, &mut rng);
            let mut seen = vec![false; n as usize];
            for x in &f {
                assert_ne!(x.src, x.dst);
                assert!(!seen[x.dst as usize]);
                seen[x.dst as usize] = true;
            }
        }
    }
}
