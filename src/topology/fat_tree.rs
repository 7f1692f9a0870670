//! Three-level k-ary fat tree: k pods of k/2 edge and k/2 aggregation switches, (k/2)^2 core
//! switches, k^3/4 hosts.
//!
//! Numbering (h = k/2): hosts `0..k*h*h` (pod-major, then edge, then slot); edge switches
//! `E0 + pod*h + e`; aggregation switches `A0 + pod*h + a`; core switches `C0 + a*h + c`, where
//! core (a, c) connects to aggregation switch a of every pod. Switch ports: `0..h` down,
//! `h..k` up (edge: up port h+a to agg a; agg: up port h+c to core (a, c)); core port p goes
//! to pod p.

use super::{NodeId, Route, Wiring};

pub const STAGES: &[&str] = &[
    "host_edge",
    "edge_agg",
    "agg_core",
    "core_agg",
    "agg_edge",
    "edge_host",
];
/// Link classes, in the order of `[topology.tiers]` names.
pub const TIERS: &[&str] = &["host_edge", "edge_agg", "agg_core"];

#[derive(Clone, Copy, Debug)]
pub struct FatTree {
    k: u32,
    h: u32,
    e0: u32,
    a0: u32,
    c0: u32,
}

impl FatTree {
    pub fn new(k: u32) -> FatTree {
        let h = k / 2;
        let e0 = k * h * h;
        let a0 = e0 + k * h;
        let c0 = a0 + k * h;
        FatTree { k, h, e0, a0, c0 }
    }
    pub fn num_hosts(&self) -> u32 {
        self.e0
    }
    fn num_nodes(&self) -> u32 {
        self.c0 + self.h * self.h
    }

    pub fn wiring(&self) -> Wiring {
        let (k, h) = (self.k, self.h);
        let mut tiers = Vec::with_capacity(self.num_nodes() as usize);
        let mut ports = Vec::with_capacity(self.num_nodes() as usize);
        for x in 0..self.e0 {
            tiers.push(0);
            ports.push(vec![(self.e0 + x / h, (x % h) as u16, 0)]);
        }
        for pod in 0..k {
            for e in 0..h {
                tiers.push(1);
                let mut p: Vec<_> = (0..h).map(|i| ((pod * h + e) * h + i, 0u16, 0u8)).collect();
                p.extend((0..h).map(|a| (self.a0 + pod * h + a, e as u16, 1)));
                ports.push(p);
            }
        }
        for pod in 0..k {
            for a in 0..h {
                tiers.push(2);
                let mut p: Vec<_> = (0..h)
                    .map(|e| (self.e0 + pod * h + e, (h + a) as u16, 1u8))
                    .collect();
                p.extend((0..h).map(|c| (self.c0 + a * h + c, pod as u16, 2)));
                ports.push(p);
            }
        }
        for a in 0..h {
            for c in 0..h {
                tiers.push(3);
                ports.push(
                    (0..k)
                        .map(|pod| (self.a0 + pod * h + a, (h + c) as u16, 2u8))
                        .collect(),
                );
            }
        }
        Wiring {
            node_tier: tiers,
            ports,
        }
    }

    #[inline]
    pub fn route(&self, n: NodeId, dst: NodeId) -> Route {
        let h = self.h;
        if n < self.a0 {
            let edge = n - self.e0;
            if dst / h == edge {
                Route::Port((dst % h) as u16)
            } else {
                Route::Up {
                    first: h as u16,
                    count: h as u16,
                }
            }
        } else if n < self.c0 {
            let pod = (n - self.a0) / h;
            if dst / (h * h) == pod {
                Route::Port(((dst % (h * h)) / h) as u16)
            } else {
                Route::Up {
                    first: h as u16,
                    count: h as u16,
                }
            }
        } else {
            Route::Port((dst / (h * h)) as u16)
        }
    }

    #[inline]
    pub fn lb_destination(&self, n: NodeId, dst: NodeId) -> (u32, u32) {
        let h = self.h;
        if n < self.a0 {
            (dst / h, self.k * h)
        } else {
            (dst / (h * h), self.k)
        }
    }

    pub fn drb_path_count(&self, src: NodeId, dst: NodeId) -> u32 {
        let h = self.h;
        if src / h == dst / h {
            0
        } else if src / (h * h) == dst / (h * h) {
            h
        } else {
            h * h
        }
    }

    /// Digit reversal: consecutive c change the aggregation switch (first hop) every packet and
    /// the core within the aggregation switch's group every h packets.
    pub fn drb_via(&self, src: NodeId, dst: NodeId, c: u32) -> NodeId {
        let h = self.h;
        let a = c % h;
        if src / (h * h) == dst / (h * h) {
            self.a0 + (src / (h * h)) * h + a
        } else {
            self.c0 + a * h + c / h
        }
    }

    #[inline]
    pub fn via_up_port(&self, n: NodeId, via: NodeId) -> u16 {
        let h = self.h;
        let v = if via >= self.c0 {
            let (a, c) = ((via - self.c0) / h, (via - self.c0) % h);
            if n < self.a0 {
                a
            } else {
                c
            }
        } else {
            (via - self.a0) % h
        };
        (h + v) as u16
    }

    pub fn hops(&self, src: NodeId, dst: NodeId) -> u32 {
        let h = self.h;
        if src / h == dst / h {
            2
        } else if src / (h * h) == dst / (h * h) {
            4
        } else {
            6
        }
    }

    /// Edge group: edge switch (pod, e) with its hosts and aggregation switch (pod, e).
    pub fn edge_group_of(&self, n: NodeId) -> Option<u32> {
        let h = self.h;
        if n < self.e0 {
            Some(n / h)
        } else if n < self.a0 {
            Some(n - self.e0)
        } else if n < self.c0 {
            Some(n - self.a0)
        } else {
            None
        }
    }

    pub fn pod_of(&self, n: NodeId) -> Option<u32> {
        let h = self.h;
        if n < self.e0 {
            Some(n / (h * h))
        } else if n < self.a0 {
            Some((n - self.e0) / h)
        } else if n < self.c0 {
            Some((n - self.a0) / h)
        } else {
            None
        }
    }
}
