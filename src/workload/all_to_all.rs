//! All-to-all: every host sends one message to every other host (n − 1 flows per host). Host
//! i lists its destinations as i+1, i+2, … (mod n), so the round-robin NIC scheduler does not
//! start every host on the same destination.

use super::Flow;

pub fn flows(n: u32, bytes: u64) -> Vec<Flow> {
    let mut out = Vec::with_capacity(n as usize * (n as usize - 1));
    for s in 0..n {
        for off in 1..n {
            out.push(Flow {
                src: s,
                dst: (s + off) % n,
                bytes,
                start_ps: 0,
            });
        }
    }
    out
}
