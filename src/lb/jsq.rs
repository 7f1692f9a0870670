//! JSQ: the uplink with the fewest queued bytes (instantaneous), uniform random among ties.
//! Without the random tie-break JSQ would degenerate to "always the first port" when idle.

use crate::net::Port;
use rand::Rng;
use rand_pcg::Pcg32;

#[inline]
pub fn choose(ports: &[Port], first: u16, count: u16, rng: &mut Pcg32) -> u16 {
    let up = &ports[first as usize..(first + count) as usize];
    let min = up.iter().map(|p| p.queued_bytes).min().expect("uplinks");
    let ties = up.iter().filter(|p| p.queued_bytes == min).count();
    let mut pick = if ties == 1 { 0 } else { rng.gen_range(0..ties) };
    for (i, p) in up.iter().enumerate() {
        if p.queued_bytes == min {
            if pick == 0 {
                return i as u16;
            }
            pick -= 1;
        }
    }
    unreachable!("a minimum exists")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::net::{Packet, PacketKind};
    use rand::SeedableRng;

    fn pkt(size: u32) -> Packet {
        Packet {
            flow: 0,
            seq: 0,
            src: 0,
            dst: 0,
            sent_ps: 0,
            size_bytes: size,
            via: 0,
            entropy: 0,
            kind: PacketKind::Data,
            ecn: false,
        }
    }

    #[test]
    fn picks_a_shortest_queue_and_ties_uniformly() {
        let mut rng = Pcg32::seed_from_u64(1);
        let mut ports: Vec<Port> = (0..4).map(|_| Port::default()).collect();
        ports[0].enqueue(pkt(100), 0, u64::MAX);
        ports[2].enqueue(pkt(50), 0, u64::MAX);
        let mut hist = [0u32; 4];
        for _ in 0..10_000 {
            let i = choose(&ports, 0, 4, &mut rng) as usize;
            assert_eq!(ports[i].queued_bytes, 0);
            hist[i] += 1;
        }
        assert_eq!(hist[0] + hist[2], 0);
        assert!(hist[1] > 4_500 && hist[3] > 4_500, "{hist:?}");
    }
}
