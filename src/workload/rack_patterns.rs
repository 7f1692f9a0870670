//! Opera's scaling workloads over racks (the Opera paper, §5.6, Fig. 12, and Fig. 15):
//! - hot rack (`kind = "hot_rack"`): every host of one rack sends `message_bytes` to the host of
//!   the same position in one other rack (both drawn from the seed): the whole demand between
//!   two racks, which a static network serves over the racks' uplinks and Opera over the
//!   circuits (and relays) between them;
//! - skew[θ, 1] (`kind = "skew"`, θ = `workload.active_racks`, 0.2 by default): a random θ
//!   share of the racks (at least two) is active, the others idle; every host of an active rack
//!   sends `message_bytes` to a host of another active rack, a random permutation of the active
//!   hosts with no rack-local pair. Kassing et al. (SIGCOMM'17) define skew[θ, φ] as θ of the
//!   racks carrying φ of the traffic; with φ = 1 all of it is among the active racks, and the
//!   per-host pattern among them is our choice (a permutation, as the paper's host
//!   permutation).
//!
//! Racks come from the fabric's finest partition groups (Opera's racks, a fat tree's edge
//! switches, a leaf-spine's leaves).

use super::permutation::inter_group_derangement;
use super::{Flow, Start};
use rand::seq::SliceRandom;
use rand_pcg::Pcg32;

/// Hosts of each rack, in id order, racks in id order (`rack[h]` = h's rack).
fn members(rack: &[u32]) -> Vec<Vec<u32>> {
    let n = rack.iter().max().map_or(0, |&r| r as usize + 1);
    let mut m = vec![Vec::new(); n];
    for (h, &r) in rack.iter().enumerate() {
        m[r as usize].push(h as u32);
    }
    m
}

fn flow(src: u32, dst: u32, bytes: u64) -> Flow {
    Flow {
        src,
        dst,
        bytes,
        start: Start::At(0),
    }
}

/// Host i of a random rack to host i (mod its size) of another random rack.
pub(super) fn hot_rack(rack: &[u32], bytes: u64, rng: &mut Pcg32) -> Result<Vec<Flow>, String> {
    let m = members(rack);
    if m.len() < 2 {
        return Err("needs at least two racks".into());
    }
    let mut order: Vec<usize> = (0..m.len()).collect();
    order.shuffle(rng);
    let (a, b) = (&m[order[0]], &m[order[1]]);
    Ok(a.iter()
        .enumerate()
        .map(|(i, &src)| flow(src, b[i % b.len()], bytes))
        .collect())
}

/// The racks skew[θ, 1] keeps active: round(θ · racks), at least two, drawn from the seed.
pub(super) fn active_racks(racks: usize, fraction: f64, rng: &mut Pcg32) -> Vec<usize> {
    let count = ((fraction * racks as f64).round() as usize).clamp(2, racks);
    let mut order: Vec<usize> = (0..racks).collect();
    order.shuffle(rng);
    order.truncate(count);
    order.sort_unstable();
    order
}

/// A permutation among the hosts of the active racks, no rack-local pair.
pub(super) fn skew(
    rack: &[u32],
    fraction: f64,
    bytes: u64,
    rng: &mut Pcg32,
) -> Result<Vec<Flow>, String> {
    let m = members(rack);
    if m.len() < 2 {
        return Err("needs at least two racks".into());
    }
    let hosts: Vec<u32> = active_racks(m.len(), fraction, rng)
        .into_iter()
        .flat_map(|r| m[r].iter().copied())
        .collect();
    let largest = m.iter().map(Vec::len).max().unwrap_or(0);
    if 2 * largest > hosts.len() {
        return Err(format!(
            "the active racks' {} hosts cannot avoid rack-local pairs (a rack has {largest})",
            hosts.len()
        ));
    }
    let group = |i: u32| rack[hosts[i as usize] as usize];
    let dst = inter_group_derangement(hosts.len() as u32, &group, rng);
    Ok(hosts
        .iter()
        .zip(dst)
        .map(|(&src, d)| flow(src, hosts[d as usize], bytes))
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;

    /// 10 racks of 4 hosts.
    fn racks() -> Vec<u32> {
        (0..40).map(|h| h / 4).collect()
    }

    #[test]
    fn hot_rack_pairs_two_racks_host_by_host() {
        let rack = racks();
        let f = hot_rack(&rack, 1000, &mut Pcg32::seed_from_u64(3)).unwrap();
        assert_eq!(f.len(), 4);
        let (a, b) = (rack[f[0].src as usize], rack[f[0].dst as usize]);
        assert_ne!(a, b);
        for (i, x) in f.iter().enumerate() {
            assert_eq!((rack[x.src as usize], rack[x.dst as usize]), (a, b));
            assert_eq!((x.src % 4, x.dst % 4), (i as u32, i as u32));
            assert_eq!(x.bytes, 1000);
        }
    }

    /// θ = 0.2 of 10 racks: 2 active racks, 8 hosts, each sending once and receiving once,
    /// never within its rack; θ = 0.5: 5 racks.
    #[test]
    fn skew_is_a_permutation_among_the_active_racks() {
        let rack = racks();
        for (theta, want_racks) in [(0.2, 2), (0.5, 5), (0.01, 2), (1.0, 10)] {
            let f = skew(&rack, theta, 7, &mut Pcg32::seed_from_u64(5)).unwrap();
            assert_eq!(f.len(), 4 * want_racks);
            let mut active: Vec<u32> = f.iter().map(|x| rack[x.src as usize]).collect();
            active.dedup();
            assert_eq!(active.len(), want_racks);
            let mut dsts: Vec<u32> = f.iter().map(|x| x.dst).collect();
            dsts.sort_unstable();
            let mut srcs: Vec<u32> = f.iter().map(|x| x.src).collect();
            srcs.sort_unstable();
            assert_eq!(dsts, srcs, "every active host receives once");
            assert!(f
                .iter()
                .all(|x| rack[x.src as usize] != rack[x.dst as usize]));
        }
    }
}
