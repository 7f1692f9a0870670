//! Parallel Generalized Fat-Trees PGFT(h; m; w; p) (Zahavi; the PGFT routing paper): h levels of
//! switches; a level-l switch has m_l sub-trees below it, a level-(l−1) node has w_l parents at
//! level l and p_l parallel links to each. Hosts are level 0 (one port: w_1 = p_1 = 1), then the
//! switches level by level (`address.rs` gives the numbering and digits).
//!
//! Ports of a level-l switch: down ports first, child-major (`c·p_l + j` is parallel link j
//! to child c), then up ports, parallel-link-major (`m_l·p_l + j·w_{l+1} + b` is link j to
//! parent b). With up port index u = j·w + b, D-mod-k's `u = ⌊d / W_l⌋ mod (w·p)` takes the
//! parent from the low digit and the parallel link from the next (Zahavi's D-mod-k), and the
//! k-ary fat tree (p = 1) gets exactly `fat_tree.rs`'s ports.
//!
//! Routing is up/down: up while the destination is not below (every up port a candidate,
//! parallel links included), then down toward the destination's sub-tree: the unique port,
//! or its p_l parallel ports as a choice.

mod address;
pub(crate) mod routing;

pub(crate) use address::Pgft;

use super::shape::ShapeRules;
use super::{Candidates, NodeId, Route, Wiring};

impl Pgft {
    pub(super) fn wiring(&self) -> Wiring {
        let n = self.num_nodes() as usize;
        let mut tiers = Vec::with_capacity(n);
        let mut ports = Vec::with_capacity(n);
        for node in 0..self.num_nodes() {
            let (l, a, b) = self.split(node);
            tiers.push(l);
            let mut p = Vec::with_capacity((self.down_ports(l) + self.up_ports(l)) as usize);
            if l > 0 {
                // Down: child c (level l−1) = (a·m_l + c, ⌊b / w_l⌋); we are its parent b mod w_l.
                let (ml, pl, wl) = (self.m(l), self.p(l), self.w(l));
                for c in 0..ml {
                    let child = self.join(l - 1, a * ml + c, b / wl);
                    for j in 0..pl {
                        let up = self.down_ports(l - 1) + j * wl + b % wl;
                        p.push((child, up as u16, l - 1));
                    }
                }
            }
            if l < self.h {
                let (m1, p1, w1) = (self.m(l + 1), self.p(l + 1), self.w(l + 1));
                for j in 0..p1 {
                    for bb in 0..w1 {
                        let parent = self.join(l + 1, a / m1, b * w1 + bb);
                        p.push((parent, ((a % m1) * p1 + j) as u16, l));
                    }
                }
            }
            ports.push(p);
        }
        Wiring {
            node_tier: tiers,
            ports,
        }
    }

    /// The level whose sub-trees are the partitioning's coarse groups ("pods"): h − 1, or the
    /// single switch of a one-level PGFT.
    fn pod_level(&self) -> u8 {
        self.h.saturating_sub(1).max(1)
    }
}

impl ShapeRules for Pgft {
    /// Up/down route of switch `n` toward host `dst`.
    #[inline]
    fn route(&self, n: NodeId, dst: NodeId) -> Route<'_> {
        let (l, a, _) = self.split(n);
        debug_assert!(l > 0);
        if dst / self.hosts_under(l) == a {
            let c = (dst / self.hosts_under(l - 1)) % self.m(l);
            let pl = self.p(l);
            if pl == 1 {
                Route::Port(c as u16)
            } else {
                Route::Choice(Candidates::Range {
                    first: (c * pl) as u16,
                    count: pl as u16,
                })
            }
        } else {
            self.route_up(n)
        }
    }

    /// Every up port of switch `n` (its level is below the top).
    #[inline]
    fn route_up(&self, n: NodeId) -> Route<'_> {
        let l = self.level_of(n);
        Route::Choice(Candidates::Range {
            first: self.down_ports(l) as u16,
            count: self.up_ports(l) as u16,
        })
    }

    /// Index and count of the sub-trees of height `level` (1 = a leaf, h−1 = a pod); levels
    /// at or above the top give the top's children, as the fat tree's "pods" do.
    #[inline]
    fn subtree(&self, dst: NodeId, level: u8) -> (u32, u32) {
        let l = level.min(self.h.saturating_sub(1)).max(1).min(self.h);
        let under = self.hosts_under(l);
        (dst / under, self.num_hosts() / under)
    }

    /// Level of the lowest common ancestors of hosts `a` and `b`.
    fn lca_tier(&self, a: NodeId, b: NodeId) -> u8 {
        (1..=self.h)
            .find(|&l| a / self.hosts_under(l) == b / self.hosts_under(l))
            .expect("the top level is above every host")
    }

    /// Up ports of every switch of level `t` (0 at the top).
    fn tier_uplinks(&self, t: u8) -> u16 {
        self.up_ports(t) as u16
    }

    /// Coarse groups are pods (sub-trees of level h−1), fine groups leaves; a switch between
    /// them joins the leaf of its pod with the same index (modulo the leaves per pod), as
    /// the fat tree's aggregation switch (pod, a) joins edge group (pod, a). Top switches
    /// have no group (the partitioner spreads them) unless h = 1.
    fn group_of(&self, n: NodeId, fine: bool) -> Option<u32> {
        let (l, a, b) = self.split(n);
        let pod_level = self.pod_level();
        if self.h == 1 {
            return Some(0); // one switch and its hosts
        }
        if l == self.h {
            return None;
        }
        // Hosts under this node's sub-tree start at a · M_l.
        let first_host = a * self.hosts_under(l);
        let pod = first_host / self.hosts_under(pod_level);
        if !fine {
            return Some(pod);
        }
        if l <= 1 {
            return Some(first_host / self.m(1));
        }
        let leaves_per_pod = self.hosts_under(pod_level) / self.m(1);
        let per_pod = self.hosts_under(pod_level) / self.hosts_under(l) * self.w_prod(l);
        let within = (a * self.w_prod(l) + b) % per_pod;
        Some(pod * leaves_per_pod + within % leaves_per_pod)
    }

    /// Pods (coarse) or leaves (fine).
    fn num_groups(&self, fine: bool) -> u32 {
        if fine {
            self.num_hosts() / self.m(1)
        } else if self.h == 1 {
            1
        } else {
            self.num_hosts() / self.hosts_under(self.pod_level())
        }
    }
}

#[cfg(test)]
pub(crate) mod tests;
