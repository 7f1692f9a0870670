//! A source host's count of its active subflows by path-code prefix: the table Ethereal's
//! greedy assignment (`lb/ethereal.rs`) reads and updates, kept per host
//! ([`super::host_policy::HostPolicy::assign_subflows`]).

use crate::topology::Fabric;
use serde::{Deserialize, Serialize};

/// `levels[t]` counts the active subflows whose path code's first t + 1 digits (the choices
/// at tiers 1 ..= t + 1) are a given prefix, indexed by the prefix's value
/// (`code mod w₁⋯w_{t+1}`). Sized on first use; empty under other policies.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct SubflowLoads {
    levels: Vec<Vec<u32>>,
}

impl SubflowLoads {
    /// Counters of the choices at tier `t`, at least `len` of them.
    pub(crate) fn level(&mut self, t: u8, len: u32) -> &mut Vec<u32> {
        let i = t as usize - 1;
        if self.levels.len() <= i {
            self.levels.resize(i + 1, Vec::new());
        }
        let level = &mut self.levels[i];
        if level.len() < len as usize {
            level.resize(len as usize, 0);
        }
        level
    }

    /// Adds `delta` (±1) to every counter on path `code`'s prefixes below tier `top`.
    pub(crate) fn count(&mut self, fabric: &Fabric, top: u8, code: u32, delta: i32) {
        let mut below = 1u32;
        for t in 1..top {
            below *= fabric.tier_uplinks(t) as u32;
            let c = &mut self.level(t, below)[(code % below) as usize];
            *c = c
                .checked_add_signed(delta)
                .expect("subflow counts stay ≥ 0");
        }
    }

    #[cfg(test)]
    /// Active subflows whose first hop is uplink `u` of the source's edge switch.
    pub(crate) fn first_hop(&self, u: u32) -> u32 {
        self.levels
            .first()
            .and_then(|l| l.get(u as usize))
            .copied()
            .unwrap_or(0)
    }

    #[cfg(test)]
    /// Active subflows whose path code's first two digits are `prefix` (`d₁ + w₁·d₂`).
    pub(crate) fn second_hop(&self, prefix: u32) -> u32 {
        self.levels
            .get(1)
            .and_then(|l| l.get(prefix as usize))
            .copied()
            .unwrap_or(0)
    }

    /// Active subflows in all, summed over every tier's counters (tests).
    #[cfg(test)]
    pub(crate) fn total(&self) -> u32 {
        self.levels.iter().flatten().sum()
    }
}
