//! Random permutation: every host sends one message to a distinct other host (a uniformly
//! random derangement, drawn by rejection from uniform permutations; about e draws expected),
//! or to a host of another group (pod) for the inter-pod permutations of the Ofan paper's
//! link-overload figure.

use super::generator::Generator;
use super::{Flow, Start};
use rand::seq::SliceRandom;
use rand::Rng;
use rand_pcg::Pcg32;

/// Host h sends `bytes` to `dst[h]` at time 0.
pub(crate) struct Permutation {
    pub(crate) dst: Vec<u32>,
    pub(crate) bytes: u64,
}

impl Generator for Permutation {
    #[inline]
    fn flows_of(&self, _h: u32) -> u32 {
        1
    }
    #[inline]
    fn flow(&self, h: u32, _i: u32) -> Flow {
        Flow {
            src: h,
            dst: self.dst[h as usize],
            bytes: self.bytes,
            start: Start::At(0),
        }
    }
    fn kind_name(&self) -> &'static str {
        "permutation"
    }
    fn bytes_of(&self, _h: u32) -> u64 {
        self.bytes
    }
}

/// `dst[h]`: the host h sends to.
pub(crate) fn derangement(n: u32, rng: &mut Pcg32) -> Vec<u32> {
    let mut dst: Vec<u32> = (0..n).collect();
    loop {
        dst.shuffle(rng);
        if dst.iter().enumerate().all(|(i, &d)| i as u32 != d) {
            break;
        }
    }
    dst
}

/// `dst[h]`: a random permutation in which no host sends to its own group (`group(h)`):
/// a uniform shuffle whose same-group pairs are repaired by swapping destinations with
/// random hosts where the swap leaves both sides in different groups. (Not exactly uniform
/// over such permutations: rejection is hopeless, since a uniform shuffle of a k = 12 tree
/// has no same-pod pair with probability about e^-36.) Needs at least two groups, none with
/// more than half the hosts.
pub(crate) fn inter_group_derangement(
    n: u32,
    group: &dyn Fn(u32) -> u32,
    rng: &mut Pcg32,
) -> Vec<u32> {
    let mut dst: Vec<u32> = (0..n).collect();
    dst.shuffle(rng);
    for i in 0..n as usize {
        while group(i as u32) == group(dst[i]) {
            let j = rng.gen_range(0..n as usize);
            if group(j as u32) != group(dst[i]) && group(i as u32) != group(dst[j]) {
                dst.swap(i, j);
            }
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

    #[test]
    fn inter_group_permutations_never_stay_in_a_group() {
        let mut rng = Pcg32::seed_from_u64(2);
        for (n, size) in [(16u32, 4u32), (432, 36), (8, 4)] {
            let group = move |h: u32| h / size;
            let dst = inter_group_derangement(n, &group, &mut rng);
            let mut seen = vec![false; n as usize];
            for (src, &d) in dst.iter().enumerate() {
                assert_ne!(group(src as u32), group(d), "{n} hosts: {src} -> {d}");
                assert!(!seen[d as usize]);
                seen[d as usize] = true;
            }
        }
    }
}
