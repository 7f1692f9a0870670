//! Three-level k-ary fat tree: k pods of k/2 edge and k/2 aggregation switches, (k/2)^2 core
//! switches, k^3/4 hosts.
//!
//! Numbering (h = k/2): hosts `0..k*h*h` (pod-major, then edge, then slot); edge switches
//! `E0 + pod*h + e`; aggregation switches `A0 + pod*h + a`; core switches `C0 + a*h + c`, where
//! core (a, c) connects to aggregation switch a of every pod. Switch ports: `0..h` down,
//! `h..k` up (edge: up port h+a to agg a; agg: up port h+c to core (a, c)); core port p goes
//! to pod p.

use super::shape::ShapeRules;
use super::{Candidates, NodeId, Route, Wiring};

pub(super) const STAGES: &[&str] = &[
    "host_edge",
    "edge_agg",
    "agg_core",
    "core_agg",
    "agg_edge",
    "edge_host",
];

#[derive(Clone, Copy, Debug)]
pub(super) struct FatTree {
    k: u32,
    h: u32,
    e0: u32,
    a0: u32,
    c0: u32,
}

impl FatTree {
    pub(super) fn new(k: u32) -> FatTree {
        let h = k / 2;
        let e0 = k * h * h;
        let a0 = e0 + k * h;
        let c0 = a0 + k * h;
        FatTree { k, h, e0, a0, c0 }
    }
    pub(super) fn num_hosts(&self) -> u32 {
        self.e0
    }
    fn num_nodes(&self) -> u32 {
        self.c0 + self.h * self.h
    }

    pub(super) fn wiring(&self) -> Wiring {
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

    /// Edge group: edge switch (pod, e) with its hosts and aggregation switch (pod, e).
    pub(super) fn edge_group_of(&self, n: NodeId) -> Option<u32> {
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

    pub(super) fn pod_of(&self, n: NodeId) -> Option<u32> {
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

    /// The same fabric as PGFT(3; k/2, k/2, k; 1, k/2, k/2; 1, 1, 1).
    pub(super) fn as_pgft(&self) -> super::pgft::Pgft {
        super::pgft::Pgft::fat_tree(self.k)
    }
}

impl ShapeRules for FatTree {
    #[inline]
    fn route(&self, n: NodeId, dst: NodeId) -> Route<'_> {
        let h = self.h;
        if n < self.a0 {
            let edge = n - self.e0;
            if dst / h == edge {
                Route::Port((dst % h) as u16)
            } else {
                Route::Choice(Candidates::Range {
                    first: h as u16,
                    count: h as u16,
                })
            }
        } else if n < self.c0 {
            let pod = (n - self.a0) / h;
            if dst / (h * h) == pod {
                Route::Port(((dst % (h * h)) / h) as u16)
            } else {
                Route::Choice(Candidates::Range {
                    first: h as u16,
                    count: h as u16,
                })
            }
        } else {
            Route::Port((dst / (h * h)) as u16)
        }
    }

    /// Every uplink of edge/aggregation (leaf) switch `n` (ports `h..2h`).
    #[inline]
    fn route_up(&self, _n: NodeId) -> Route<'_> {
        Route::Choice(Candidates::Range {
            first: self.h as u16,
            count: self.h as u16,
        })
    }

    /// Index and count of the subtrees of height `level` that contain hosts: level 1 = edge
    /// switches, level 2 = pods.
    #[inline]
    fn subtree(&self, dst: NodeId, level: u8) -> (u32, u32) {
        let h = self.h;
        match level {
            1 => (dst / h, self.k * h),
            _ => (dst / (h * h), self.k),
        }
    }

    /// Tier of the lowest switches that are common ancestors of hosts `a` and `b`.
    fn lca_tier(&self, a: NodeId, b: NodeId) -> u8 {
        let h = self.h;
        if a / h == b / h {
            1
        } else if a / (h * h) == b / (h * h) {
            2
        } else {
            3
        }
    }

    fn group_of(&self, n: NodeId, fine: bool) -> Option<u32> {
        if fine {
            self.edge_group_of(n)
        } else {
            self.pod_of(n)
        }
    }

    /// Pods (coarse) or edge groups (fine).
    fn num_groups(&self, fine: bool) -> u32 {
        if fine {
            self.k * self.h
        } else {
            self.k
        }
    }

    /// Uplinks of a switch of tier `t` (1 = edge, 2 = aggregation).
    fn tier_uplinks(&self, _t: u8) -> u16 {
        self.h as u16
    }
}
