//! PGFT addressing: how many nodes each level has, where each level starts in the node
//! numbering, and the digits of a node (the PGFT routing paper: a switch is addressed by its
//! level and the digits of the sub-trees it sits in).
//!
//! A level-l node is (a_h .. a_{l+1}; b_1 .. b_l): a_i ∈ [0, m_i) says which sub-tree of level
//! i it lies in (from the top), b_i ∈ [0, w_i) which of the w_i parents its level-(i−1)
//! ancestor used. Its index within its level is `A · W_l + B`, where A is the a-digits read
//! with a_h most significant and B the b-digits with b_1 most significant (b_l least): the
//! recursive construction, in which each copy of a sub-PGFT keeps its numbering and the w_l
//! parents of a node are consecutive. Hosts (level 0) are d = A; a host's a_i is
//! ⌊d / M_{i−1}⌋ mod m_i with M_i = m_1·…·m_i. This numbering is the fat tree's
//! (`fat_tree.rs`) when PGFT(3; k/2, k/2, k; 1, k/2, k/2; 1, 1, 1).

use super::super::NodeId;
use crate::scenario::PgftConfig;

/// Levels are at most this many (scenario::pgft::MAX_LEVELS), so arrays stay `Copy`.
pub(crate) const MAX_H: usize = 6;

/// PGFT(h; m; w; p) with the per-level products the numbering needs. Index 0 of `m`, `w`,
/// `p` is level 1; level h+1 (above the top) has w = p = 0.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Pgft {
    pub h: u8,
    m: [u32; MAX_H + 2],
    w: [u32; MAX_H + 2],
    p: [u32; MAX_H + 2],
    /// M_l = m_1·…·m_l: hosts under one level-l sub-tree (M_0 = 1).
    m_prod: [u32; MAX_H + 1],
    /// W_l = w_1·…·w_l: level-l switches per level-l sub-tree (W_0 = 1).
    w_prod: [u32; MAX_H + 1],
    /// First node id of each level (level 0 = hosts at 0); `base[h+1]` = node count.
    base: [u32; MAX_H + 2],
}

impl Pgft {
    /// From validated parameters (lengths h, w_1 = p_1 = 1).
    pub(crate) fn new(m: &[u32], w: &[u32], p: &[u32]) -> Pgft {
        let h = m.len();
        assert!((1..=MAX_H).contains(&h) && w.len() == h && p.len() == h);
        assert!(w[0] == 1 && p[0] == 1, "hosts have one port");
        let mut g = Pgft {
            h: h as u8,
            m: [0; MAX_H + 2],
            w: [0; MAX_H + 2],
            p: [0; MAX_H + 2],
            m_prod: [1; MAX_H + 1],
            w_prod: [1; MAX_H + 1],
            base: [0; MAX_H + 2],
        };
        for l in 1..=h {
            (g.m[l], g.w[l], g.p[l]) = (m[l - 1], w[l - 1], p[l - 1]);
            g.m_prod[l] = g.m_prod[l - 1] * m[l - 1];
            g.w_prod[l] = g.w_prod[l - 1] * w[l - 1];
        }
        for l in 0..=h {
            g.base[l + 1] = g.base[l] + g.level_count(l as u8);
        }
        g
    }

    pub(crate) fn from_config(c: &PgftConfig) -> Pgft {
        Pgft::new(&c.m, &c.w, &c.p_or_ones())
    }

    /// The three-level k-ary fat tree as a PGFT.
    pub(crate) fn fat_tree(k: u32) -> Pgft {
        Pgft::new(&[k / 2, k / 2, k], &[1, k / 2, k / 2], &[1, 1, 1])
    }

    /// A leaf-spine as a PGFT(2; hosts per leaf, leaves; 1, spines; 1, 1).
    pub(crate) fn leaf_spine(leaves: u32, spines: u32, hosts_per_leaf: u32) -> Pgft {
        Pgft::new(&[hosts_per_leaf, leaves], &[1, spines], &[1, 1])
    }

    /// m_l, w_l, p_l (l = 1..h; 0 above the top for w and p).
    #[inline]
    pub(crate) fn m(&self, l: u8) -> u32 {
        self.m[l as usize]
    }
    #[inline]
    pub(crate) fn w(&self, l: u8) -> u32 {
        self.w[l as usize]
    }
    #[inline]
    pub(crate) fn p(&self, l: u8) -> u32 {
        self.p[l as usize]
    }
    /// M_l: hosts under a level-l sub-tree.
    #[inline]
    pub(crate) fn hosts_under(&self, l: u8) -> u32 {
        self.m_prod[l as usize]
    }
    /// W_l = w_1·…·w_l: the D-mod-k divisor at level l.
    #[inline]
    pub(crate) fn w_prod(&self, l: u8) -> u32 {
        self.w_prod[l as usize]
    }
    pub(crate) fn num_hosts(&self) -> u32 {
        self.m_prod[self.h as usize]
    }
    pub(crate) fn num_nodes(&self) -> u32 {
        self.base[self.h as usize + 1]
    }
    /// Nodes of level l: (sub-trees of level l) · W_l = (N / M_l) · W_l.
    pub(crate) fn level_count(&self, l: u8) -> u32 {
        self.num_hosts() / self.m_prod[l as usize] * self.w_prod[l as usize]
    }
    #[cfg(test)]
    /// First node id of level l.
    #[inline]
    pub(crate) fn level_base(&self, l: u8) -> u32 {
        self.base[l as usize]
    }
    /// Down ports of a level-l node (m_l·p_l; 0 for hosts).
    #[inline]
    pub(crate) fn down_ports(&self, l: u8) -> u32 {
        if l == 0 {
            0
        } else {
            self.m(l) * self.p(l)
        }
    }
    /// Up ports of a level-l node (w_{l+1}·p_{l+1}; 0 at the top).
    #[inline]
    pub(crate) fn up_ports(&self, l: u8) -> u32 {
        self.w(l + 1) * self.p(l + 1)
    }

    /// Level of node `n`.
    #[inline]
    pub(crate) fn level_of(&self, n: NodeId) -> u8 {
        debug_assert!(n < self.num_nodes());
        let mut l = 0;
        while n >= self.base[l + 1] {
            l += 1;
        }
        l as u8
    }

    /// (level, A, B) of node `n`: its sub-tree index A at its level and its b-digits B.
    #[inline]
    pub(crate) fn split(&self, n: NodeId) -> (u8, u32, u32) {
        let l = self.level_of(n);
        let i = n - self.base[l as usize];
        let wl = self.w_prod[l as usize];
        (l, i / wl, i % wl)
    }

    /// The node (level, A, B).
    #[inline]
    pub(crate) fn join(&self, l: u8, a: u32, b: u32) -> NodeId {
        self.base[l as usize] + a * self.w_prod[l as usize] + b
    }

    /// The digits (a_h .. a_{l+1}, b_1 .. b_l) of node `n`, with its level: the seed's
    /// address "(level, digits)".
    pub(crate) fn digits(&self, n: NodeId) -> (u8, Vec<u32>) {
        let (l, mut a, mut b) = self.split(n);
        let mut a_digits = vec![];
        for i in (l + 1)..=self.h {
            a_digits.push(a % self.m(i));
            a /= self.m(i);
        }
        a_digits.reverse(); // a_h first
        let mut b_digits = vec![];
        for i in (1..=l).rev() {
            b_digits.push(b % self.w(i));
            b /= self.w(i);
        }
        b_digits.reverse(); // b_1 first
        a_digits.extend(b_digits);
        (l, a_digits)
    }

    /// "(level, d, d, ...)" for messages and reports.
    pub(crate) fn address(&self, n: NodeId) -> String {
        let (l, d) = self.digits(n);
        let mut s = format!("({l}");
        for x in d {
            s += &format!(",{x}");
        }
        s + ")"
    }
}
