//! Two-level leaf-spine built from k-port switches: k leaves with k/2 hosts and k/2 uplinks
//! each, k/2 spines with one port per leaf; k^2/2 hosts.
//!
//! Numbering (h = k/2): hosts `0..k*h`; leaves `L0 + l`; spines `S0 + s`. Leaf ports `0..h`
//! down, `h + s` up to spine s; spine port l goes to leaf l.

use super::{NodeId, Route, Wiring};

pub const STAGES: &[&str] = &["host_leaf", "leaf_spine", "spine_leaf", "leaf_host"];
pub const TIERS: &[&str] = &["host_leaf", "leaf_spine"];

#[derive(Clone, Copy, Debug)]
pub struct LeafSpine {
    k: u32,
    h: u32,
    l0: u32,
    s0: u32,
}

impl LeafSpine {
    pub fn new(k: u32) -> LeafSpine {
        let h = k / 2;
        LeafSpine {
            k,
            h,
            l0: k * h,
            s0: k * h + k,
        }
    }
    pub fn num_hosts(&self) -> u32 {
        self.l0
    }

    pub fn wiring(&self) -> Wiring {
        let (k, h) = (self.k, self.h);
        let mut tiers = vec![];
        let mut ports = vec![];
        for x in 0..self.l0 {
            tiers.push(0);
            ports.push(vec![(self.l0 + x / h, (x % h) as u16, 0u8)]);
        }
        for l in 0..k {
            tiers.push(1);
            let mut p: Vec<_> = (0..h).map(|i| (l * h + i, 0u16, 0u8)).collect();
            p.extend((0..h).map(|s| (self.s0 + s, l as u16, 1u8)));
            ports.push(p);
        }
        for s in 0..h {
            tiers.push(2);
            ports.push((0..k).map(|l| (self.l0 + l, (h + s) as u16, 1u8)).collect());
        }
        Wiring {
            node_tier: tiers,
            ports,
        }
    }

    #[inline]
    pub fn route(&self, n: NodeId, dst: NodeId) -> Route {
        let h = self.h;
        if n < self.s0 {
            if dst / h == n - self.l0 {
                Route::Port((dst % h) as u16)
            } else {
                Route::Up {
                    first: h as u16,
                    count: h as u16,
                }
            }
        } else {
            Route::Port((dst / h) as u16)
        }
    }

    #[inline]
    pub fn lb_destination(&self, _n: NodeId, dst: NodeId) -> (u32, u32) {
        (dst / self.h, self.k)
    }

    pub fn drb_path_count(&self, src: NodeId, dst: NodeId) -> u32 {
        if src / self.h == dst / self.h {
            0
        } else {
            self.h
        }
    }
    pub fn drb_via(&self, _src: NodeId, _dst: NodeId, c: u32) -> NodeId {
        self.s0 + c
    }
    #[inline]
    pub fn via_up_port(&self, _n: NodeId, via: NodeId) -> u16 {
        (self.h + via - self.s0) as u16
    }
    pub fn hops(&self, src: NodeId, dst: NodeId) -> u32 {
        if src / self.h == dst / self.h {
            2
        } else {
            4
        }
    }
    pub fn leaf_of(&self, n: NodeId) -> Option<u32> {
        if n < self.l0 {
            Some(n / self.h)
        } else if n < self.s0 {
            Some(n - self.l0)
        } else {
            None
        }
    }
}
