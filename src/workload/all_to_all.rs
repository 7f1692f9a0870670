//! All-to-all: every host sends one message to every other host (n − 1 flows per host). Host
//! h's flow i goes to h + 1 + i (mod n), so the round-robin NIC scheduler does not start every
//! host on the same destination. Flows are computed on demand, never tabulated.

use super::Flow;

#[inline]
pub(super) fn flow(hosts: u32, bytes: u64, h: u32, i: u32) -> Flow {
    debug_assert!(i + 1 < hosts);
    Flow {
        src: h,
        dst: ((h as u64 + 1 + i as u64) % hosts as u64) as u32,
        bytes,
        start: super::Start::At(0),
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn every_host_sends_once_to_every_other_host() {
        let n = 7;
        let mut seen = vec![vec![0; n as usize]; n as usize];
        for h in 0..n {
            for i in 0..n - 1 {
                let f = super::flow(n, 1, h, i);
                assert_eq!(f.src, h);
                seen[h as usize][f.dst as usize] += 1;
            }
        }
        for (h, row) in seen.iter().enumerate() {
            for (d, &c) in row.iter().enumerate() {
                assert_eq!(c, (h != d) as i32, "{h} -> {d}");
            }
        }
    }
}
