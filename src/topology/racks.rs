//! Rack addressing shared by the flat rack fabrics (Opera, the expander): hosts 0..H in
//! consecutive blocks of d per rack, then one ToR per rack (node H + r). A ToR's ports are
//! its d downlinks (port i to host r·d + i), then its u uplinks (ToR-to-ToR, or one per
//! rotor). Partition groups are racks at every granularity, and the only level above the
//! ToRs is their mesh (or the rotors), as the spines of a leaf-spine.

use super::{NodeId, Wiring};

#[derive(Clone, Copy, Debug)]
pub(super) struct Racks {
    pub racks: u32,
    /// Hosts per rack, also the first uplink's port number.
    pub d: u32,
    /// Uplinks per ToR.
    pub u: u32,
    /// The first ToR's node id (= the number of hosts).
    pub t0: u32,
}

impl Racks {
    pub(super) fn new(racks: u32, hosts_per_rack: u32, uplinks: u32) -> Racks {
        Racks {
            racks,
            d: hosts_per_rack,
            u: uplinks,
            t0: racks * hosts_per_rack,
        }
    }

    /// The rack of a host or ToR.
    #[inline]
    pub(super) fn rack_of(&self, n: NodeId) -> u32 {
        debug_assert!(n < self.t0 + self.racks);
        if n < self.t0 {
            n / self.d
        } else {
            n - self.t0
        }
    }

    /// Whether port `p` of node `n` is a ToR uplink.
    #[inline]
    pub(super) fn is_uplink(&self, n: NodeId, p: u16) -> bool {
        n >= self.t0 && p as u32 >= self.d
    }

    /// The downlink of ToR `n` to host `dst` if `dst` is in its rack.
    #[inline]
    pub(super) fn downlink(&self, n: NodeId, dst: NodeId) -> Option<u16> {
        (dst / self.d == n - self.t0).then_some((dst % self.d) as u16)
    }

    /// Racks, at every level.
    pub(super) fn subtree(&self, dst: NodeId) -> (u32, u32) {
        (dst / self.d, self.racks)
    }

    /// 1 in one rack; 2 otherwise (above the ToRs).
    pub(super) fn lca_tier(&self, a: NodeId, b: NodeId) -> u8 {
        if a / self.d == b / self.d {
            1
        } else {
            2
        }
    }

    /// A rack: its ToR and its hosts (None past the ToRs).
    pub(super) fn group_of(&self, n: NodeId) -> Option<u32> {
        (n < self.t0 + self.racks).then(|| self.rack_of(n))
    }

    /// Hosts (tier 0) to their ToR (class 0), ToRs (tier 1) down to their hosts, then uplink
    /// b of the ToR of rack r to `uplink(r, b)` = (peer node, peer port) (class 1).
    pub(super) fn wiring(&self, uplink: impl Fn(u32, u32) -> (NodeId, u16)) -> Wiring {
        let (d, t0) = (self.d, self.t0);
        let mut node_tier = vec![0u8; t0 as usize];
        let mut ports: Vec<Vec<(NodeId, u16, u8)>> = (0..t0)
            .map(|x| vec![(t0 + x / d, (x % d) as u16, 0u8)])
            .collect();
        for r in 0..self.racks {
            node_tier.push(1);
            let mut p: Vec<_> = (0..d).map(|i| (r * d + i, 0u16, 0u8)).collect();
            p.extend((0..self.u).map(|b| {
                let (peer, port) = uplink(r, b);
                (peer, port, 1u8)
            }));
            ports.push(p);
        }
        Wiring { node_tier, ports }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hosts_and_tors_map_to_racks_and_downlinks() {
        // 3 racks of 2 hosts: hosts 0..6, ToRs 6, 7, 8.
        let r = Racks::new(3, 2, 4);
        assert_eq!(
            (0..9).map(|n| r.rack_of(n)).collect::<Vec<_>>(),
            [0, 0, 1, 1, 2, 2, 0, 1, 2]
        );
        assert_eq!(r.group_of(9), None);
        assert_eq!((r.downlink(7, 3), r.downlink(7, 4)), (Some(1), None));
        assert!(r.is_uplink(6, 2) && !r.is_uplink(6, 1) && !r.is_uplink(0, 2));
        assert_eq!((r.lca_tier(2, 3), r.lca_tier(1, 2)), (1, 2));
        let w = r.wiring(|rack, b| (6 + (rack + 1 + b) % 3, 2 + b as u16));
        assert_eq!(w.ports[3], [(7, 1, 0)]);
        assert_eq!(w.ports[7][..2], [(2, 0, 0), (3, 0, 0)]);
        assert_eq!(w.ports[7][2], (8, 2, 1));
        assert_eq!(w.node_tier, [0, 0, 0, 0, 0, 0, 1, 1, 1]);
    }
}
