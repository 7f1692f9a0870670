//! RotorLB's transport side (Opera's bulk traffic, OPERA.md A.5 "Direct (bulk) + RotorLB"):
//! which flows are bulk, the per-slot budgets, and how a RotorLB packet is marked. The host
//! side (queues, slot planning, relaying, bounces) is `net/rotorlb.rs`.
//!
//! Classification (paper §3.4, `main_ndp_dynexpTopology.cpp`): a flow between racks of at
//! least `topology.opera.bulk_cutoff_bytes` is bulk, unless the application tags it
//! (`workload.bulk` on the shuffle: the paper's `-rlbflow 100000`). Flows within a rack and
//! low-latency flows keep label routing and `host.cc`.
//!
//! Reliability: RotorLB has no ACKs. Its packets are never dropped (ToRs keep them in an
//! unbounded lowest-priority queue; a packet whose circuit is gone is bounced back to the
//! host that sent it), so the receiver counts a flow's packets and records its completion
//! (FCT) itself when the last one arrives, as the authors' RLB sink does.

use crate::packet::{Packet, NO_VIA, PINNED};
use crate::scenario::{FieldError, Scenario};
use crate::workload::{Start, Workload};

/// In [`Packet::via`]: a RotorLB packet (Opera labels are superslice numbers, far below).
pub const RLB: u32 = 1 << 29;
/// Bits 0-7: the rotor (ToR uplink `hosts_per_rack + rotor`) the packet is committed to.
const ROTOR_MASK: u32 = 0xff;
/// Bits 8-9: rotor links crossed so far (a ToR counts when it queues it on an uplink).
const HOPS_SHIFT: u32 = 8;
const HOPS_MASK: u32 = 0b11 << HOPS_SHIFT;
/// The packet's second leg: sent by an intermediate host (Valiant) to its final receiver.
/// Then `dst` is the final receiver and `ack` the intermediate host.
pub const RELAYED: u32 = 1 << 10;
/// A packet bounced by a ToR whose uplink no longer leads to its rack (stale), on its way
/// back to the host that sent it on this leg (`dst`); `ack` is the final receiver.
pub const BOUNCE: u32 = 1 << 11;

/// Whether `via` marks a RotorLB packet.
#[inline]
pub fn is_rlb(via: u32) -> bool {
    via != NO_VIA && via & (PINNED | RLB) == RLB
}

/// The rotor a RotorLB packet is committed to.
#[inline]
pub fn rotor_of(via: u32) -> usize {
    (via & ROTOR_MASK) as usize
}

/// Rotor links a RotorLB packet has crossed.
#[inline]
pub fn hops_of(via: u32) -> u32 {
    (via & HOPS_MASK) >> HOPS_SHIFT
}

/// Counts one more rotor link crossed.
#[inline]
pub fn add_hop(pkt: &mut Packet) {
    let h = hops_of(pkt.via) + 1;
    assert!(h <= 2, "a RotorLB packet crossed a third rotor link");
    pkt.via = pkt.via & !HOPS_MASK | h << HOPS_SHIFT;
}

/// The `via` of a packet committed to `rotor`, on its first leg or (`relayed`) its second.
#[inline]
pub fn via(rotor: usize, relayed: bool) -> u32 {
    debug_assert!(rotor <= ROTOR_MASK as usize);
    RLB | rotor as u32 | if relayed { RELAYED } else { 0 }
}

/// The `via` of a relayed packet's second leg on `rotor`, keeping the rotor links its
/// first leg crossed (`first_via`).
#[inline]
pub fn relay_via(rotor: usize, first_via: u32) -> u32 {
    via(rotor, true) | first_via & HOPS_MASK
}

/// RotorLB's parameters, in simulator units.
#[derive(Clone, Debug, PartialEq)]
pub struct RotorParams {
    /// Flows of at least this many bytes are bulk (unless the workload tags them).
    pub cutoff_bytes: u64,
    pub valiant: bool,
    /// How long a host sends into a rotor that has just come up: (u/G − 1) superslices + ε,
    /// up to one δ before that rotor reconfigures.
    pub slot_ps: u64,
    /// Packets a host may commit to one rotor per slot: its 1/u share of the uplink over
    /// the slot, in full packets (wire time with the inter-frame gap).
    pub max_pkts: u32,
    /// Per destination host (and per final destination held for relaying): max_pkts / d,
    /// the receiver's fair share among the d senders of a rack, rounded down (paper timing:
    /// ⌊83 / 6⌋ = 13, so a full shuffle's direct traffic fills 78 of a slot's 83 packets;
    /// the authors' 2-D water-filling can give the remainder to some pairs).
    pub cap_pkts: u32,
    /// Per host: bulk flows it receives minus bulk flows it sends (the receiver records a
    /// bulk flow's completion, so each host expects this many more completions).
    pub completions_shift: Vec<i64>,
    pub hosts_per_rack: u32,
}

impl RotorParams {
    /// Whether a flow of `bytes` from host `src` to host `dst` is bulk, given the
    /// application's tag (`Workload::bulk_tag`; None: the cutoff decides). A flow within a
    /// rack never is: it needs no circuit (the ToR sends it straight down), as the
    /// authors' RLB skips rack-local pairs.
    #[inline]
    pub fn is_bulk(&self, bytes: u64, src: u32, dst: u32, tag: Option<bool>) -> bool {
        src / self.hosts_per_rack != dst / self.hosts_per_rack
            && tag.unwrap_or(bytes >= self.cutoff_bytes)
    }

    /// The parameters of Opera scenario `s` (None for other fabrics); `full_wire_ps` is a
    /// full packet's time on a host link, gap included.
    pub fn build(
        s: &Scenario,
        fabric: &crate::topology::Fabric,
        workload: &Workload,
        full_wire_ps: u64,
    ) -> Result<Option<RotorParams>, FieldError> {
        let Some(o) = fabric.opera() else {
            return Ok(None);
        };
        let sched = o.opera().schedule();
        let t = sched.timing();
        let ug = sched.rotors_per_group() as u64;
        let slot_ps = (ug - 1) * t.superslice_ps() + t.epsilon_ps;
        let max_pkts = slot_ps / (full_wire_ps * sched.uplinks() as u64);
        let cap_pkts = max_pkts / o.hosts_per_rack() as u64;
        let mut p = RotorParams {
            cutoff_bytes: s.topology.opera.bulk_cutoff_bytes,
            valiant: s.topology.opera.valiant,
            slot_ps,
            max_pkts: max_pkts.min(u32::MAX as u64) as u32,
            cap_pkts: cap_pkts.min(u32::MAX as u64) as u32,
            completions_shift: vec![0; fabric.num_hosts as usize],
            hosts_per_rack: o.hosts_per_rack(),
        };
        let mut any = false;
        for h in 0..fabric.num_hosts {
            for i in 0..workload.flows_of(h) {
                let f = workload.flow(h, i);
                if !p.is_bulk(f.bytes, h, f.dst, workload.bulk_tag(h, i)) {
                    continue;
                }
                any = true;
                p.completions_shift[h as usize] -= 1;
                p.completions_shift[f.dst as usize] += 1;
                if matches!(f.start, Start::After { .. }) {
                    return Err(FieldError::new(
                        "topology.opera.bulk_cutoff_bytes",
                        format!(
                            "flow {i} of host {h} ({} bytes) would be bulk, but it starts on a \
                             trigger: RotorLB flows need fixed start times (raise the cutoff)",
                            f.bytes
                        ),
                    ));
                }
            }
        }
        if any && cap_pkts == 0 {
            return Err(FieldError::new(
                "topology.opera.epsilon_ns",
                format!(
                    "RotorLB's slot of {slot_ps} ps carries {max_pkts} full packets per rotor, \
                     fewer than one per destination host ({} per rack): lengthen the slice",
                    o.hosts_per_rack()
                ),
            ));
        }
        Ok(Some(p))
    }
}

/// Integer water-filling: splits `budget` over `demands` so that no one gets more than it
/// asks and the smallest allocations are as large as possible (what is left after the
/// smaller demands goes in equal shares to the larger ones; ties in index order). Writes
/// into `alloc` (same length) and returns the total given.
pub fn water_fill(demands: &[u32], budget: u32, order: &mut Vec<usize>, alloc: &mut [u32]) -> u32 {
    order.clear();
    order.extend(0..demands.len());
    order.sort_by_key(|&i| (demands[i], i));
    let mut left = budget;
    for (k, &i) in order.iter().enumerate() {
        // Equal integer shares of what is left; the last (largest demand) takes the rest.
        let share = match demands.len() - k {
            1 => left,
            n => left / n as u32,
        };
        let give = demands[i].min(share);
        alloc[i] = give;
        left -= give;
    }
    budget - left
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fill(d: &[u32], budget: u32) -> Vec<u32> {
        let mut a = vec![0; d.len()];
        let given = water_fill(d, budget, &mut vec![], &mut a);
        assert_eq!(given, a.iter().sum::<u32>());
        a
    }

    #[test]
    fn water_filling_gives_small_demands_in_full_and_shares_the_rest() {
        // Enough for all.
        assert_eq!(fill(&[3, 1, 2], 10), vec![3, 1, 2]);
        // 10 over [1, 10, 10]: 1, then 9 over two: 4 and 5 (the later one takes the rest).
        assert_eq!(fill(&[1, 10, 10], 10), vec![1, 4, 5]);
        // Equal demands, budget 10 over three: 3, 3, 4.
        assert_eq!(fill(&[10, 10, 10], 10), vec![3, 3, 4]);
        assert_eq!(fill(&[5, 0, 7], 0), vec![0, 0, 0]);
        assert_eq!(fill(&[], 5), Vec::<u32>::new());
    }

    #[test]
    fn via_marks_rotor_leg_and_hops() {
        let mut p = crate::packet::test_packet(crate::packet::PacketKind::Data, 1500);
        p.via = via(5, true);
        assert!(is_rlb(p.via) && p.via & RELAYED != 0);
        assert_eq!((rotor_of(p.via), hops_of(p.via)), (5, 0));
        add_hop(&mut p);
        add_hop(&mut p);
        assert_eq!((rotor_of(p.via), hops_of(p.via)), (5, 2));
        assert!(!is_rlb(NO_VIA) && !is_rlb(7) && !is_rlb(PINNED | 3));
    }
}
