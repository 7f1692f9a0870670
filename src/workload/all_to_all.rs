//! All-to-all: every host sends one message to every other host (n − 1 flows per host). Host
//! h's flow i goes to h + 1 + i (mod n), so the round-robin NIC scheduler does not start every
//! host on the same destination. Flows are computed on demand, never tabulated.

use super::generator::Generator;
use super::Flow;

/// `hosts` hosts, each sending `bytes` to every other one.
pub(crate) struct AllToAll {
    pub(crate) hosts: u32,
    pub(crate) bytes: u64,
}

impl Generator for AllToAll {
    #[inline]
    fn flows_of(&self, _h: u32) -> u32 {
        self.hosts - 1
    }
    #[inline]
    fn flow(&self, h: u32, i: u32) -> Flow {
        flow(self.hosts, self.bytes, h, i)
    }
    fn kind_name(&self) -> &'static str {
        "all_to_all"
    }
    fn bytes_of(&self, _h: u32) -> u64 {
        (self.hosts as u64 - 1) * self.bytes
    }
}

#[inline]
fn flow(hosts: u32, bytes: u64, h: u32, i: u32) -> Flow {
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
