//! DRB (host side): the sender keeps one pointer per (destination host, size class) and sends
//! successive packets through the switches of the lowest common layer in digit-reversed order
//! (core switches for inter-pod, aggregation switches for intra-pod traffic), by source
//! routing: the packet carries the waypoint and switches take the uplink towards it. The first
//! index for a new destination is random.

use crate::topology::{Fabric, NodeId};
use rand::Rng;
use rand_pcg::Pcg32;
use std::collections::HashMap;

#[derive(Default)]
pub struct DrbPointers {
    next: HashMap<(NodeId, u32), u32>,
}

impl DrbPointers {
    /// The waypoint for the next packet of `class` from `src` to `dst`, or `NO_VIA` when the
    /// two hosts share an edge switch (no choice to make).
    pub fn next_via(
        &mut self,
        fabric: &Fabric,
        src: NodeId,
        dst: NodeId,
        class: u32,
        rng: &mut Pcg32,
    ) -> u32 {
        let n = fabric.drb_path_count(src, dst);
        if n == 0 {
            return crate::net::packet::NO_VIA;
        }
        let c = self
            .next
            .entry((dst, class))
            .or_insert_with(|| rng.gen_range(0..n));
        let via = fabric.drb_via(src, dst, *c);
        *c = (*c + 1) % n;
        via
    }
}
