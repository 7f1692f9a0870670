//! RotorLB's transport side (Opera's bulk traffic, the Opera paper, §4.2.2; opera-sim's RLB):
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
pub(crate) const RLB: u32 = 1 << 29;
/// Bits 0-7: the rotor (ToR uplink `hosts_per_rack + rotor`) the packet is committed to.
const ROTOR_MASK: u32 = 0xff;
/// Bits 8-9: rotor links crossed so far (a ToR counts when it queues it on an uplink).
const HOPS_SHIFT: u32 = 8;
const HOPS_MASK: u32 = 0b11 << HOPS_SHIFT;
/// The packet's second leg: sent by an intermediate host (Valiant) to its final receiver.
/// Then `dst` is the final receiver and `ack` the intermediate host.
pub(crate) const RELAYED: u32 = 1 << 10;
/// A packet bounced by a ToR whose uplink no longer leads to its rack (stale), on its way
/// back to the host that sent it on this leg (`dst`); `ack` is the final receiver.
pub(crate) const BOUNCE: u32 = 1 << 11;

/// Whether `via` marks a RotorLB packet.
#[inline]
pub(crate) fn is_rlb(via: u32) -> bool {
    via != NO_VIA && via & (PINNED | RLB) == RLB
}

/// The rotor a RotorLB packet is committed to.
#[inline]
pub(crate) fn rotor_of(via: u32) -> usize {
    (via & ROTOR_MASK) as usize
}

/// Rotor links a RotorLB packet has crossed.
#[inline]
pub(crate) fn hops_of(via: u32) -> u32 {
    (via & HOPS_MASK) >> HOPS_SHIFT
}

/// Counts one more rotor link crossed.
#[inline]
pub(crate) fn add_hop(pkt: &mut Packet) {
    let h = hops_of(pkt.via) + 1;
    assert!(h <= 2, "a RotorLB packet crossed a third rotor link");
    pkt.via = pkt.via & !HOPS_MASK | h << HOPS_SHIFT;
}

/// The `via` of a packet committed to `rotor`, on its first leg or (`relayed`) its second.
#[inline]
pub(crate) fn via(rotor: usize, relayed: bool) -> u32 {
    debug_assert!(rotor <= ROTOR_MASK as usize);
    RLB | rotor as u32 | if relayed { RELAYED } else { 0 }
}

/// The `via` of a relayed packet's second leg on `rotor`, keeping the rotor links its
/// first leg crossed (`first_via`).
#[inline]
pub(crate) fn relay_via(rotor: usize, first_via: u32) -> u32 {
    via(rotor, true) | first_via & HOPS_MASK
}

/// RotorLB's parameters, in simulator units.
#[derive(Clone, Debug, PartialEq)]
pub struct RotorParams {
    /// Flows of at least this many bytes are bulk (unless the workload tags them).
    pub cutoff_bytes: u64,
    /// Bulk traffic takes a Valiant detour through a random intermediate rack.
    pub valiant: bool,
    /// `topology.opera.rlb_planning = "rack"`: a rack's hosts are planned together (2-D
    /// water-filling, receive cap `max_pkts` per receiver); false: each host alone
    /// (`cap_pkts` per receiver).
    pub rack_planning: bool,
    /// How long a host sends into a rotor that has just come up: (u/G − 1) superslices + ε,
    /// up to one δ before that rotor reconfigures.
    pub slot_ps: u64,
    /// Packets a host may commit to one rotor per slot: its 1/u share of the uplink over
    /// the slot, in full packets (wire time with the inter-frame gap).
    pub max_pkts: u32,
    /// max_pkts / d, rounded down (paper timing: ⌊83 / 6⌋ = 13): what a host forwards per
    /// slot of the relayed packets it holds for one receiver (step 1), half of what an
    /// intermediate may hold for one receiver, and, under host planning, each sender's
    /// share of a receiver's room (rack planning shares `max_pkts` by 2-D water-filling).
    pub cap_pkts: u32,
    /// Per host: bulk flows it receives minus bulk flows it sends (the receiver records a
    /// bulk flow's completion, so each host expects this many more completions).
    pub completions_shift: Vec<i64>,
    /// Hosts per rack (ToR).
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
            rack_planning: s.topology.opera.rlb_planning == crate::scenario::RlbPlanning::Rack,
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
pub(crate) fn water_fill(
    demands: &[u32],
    budget: u32,
    order: &mut Vec<usize>,
    alloc: &mut [u32],
) -> u32 {
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

/// Rounds of [`fair_share_2d`] (the authors' `fairshare2d` stops after at most 5).
pub(crate) const FAIR_SHARE_2D_ROUNDS: usize = 5;

/// Integer 2-D water-filling of a rack's direct traffic (the authors' `fairshare2d`):
/// `demands[i * cols + j]` packets from sender i to receiver j, at most `row_left[i]` per
/// sender and `col_left[j]` per receiver. Each round, every sender water-fills what it may
/// still send over its remaining demands (each capped by its receiver's room); every
/// receiver offered more than its room water-fills its room over the offers; the accepted
/// amounts are granted. Rounds repeat while they grant something, at most
/// [`FAIR_SHARE_2D_ROUNDS`]. Adds the grants to `alloc` (same shape as `demands`) and
/// lowers `row_left`, `col_left` and `demands` by them.
pub(crate) fn fair_share_2d(
    demands: &mut [u32],
    row_left: &mut [u32],
    col_left: &mut [u32],
    alloc: &mut [u32],
) {
    let (rows, cols) = (row_left.len(), col_left.len());
    assert_eq!(demands.len(), rows * cols);
    assert_eq!(alloc.len(), rows * cols);
    let mut offer = vec![0u32; rows * cols];
    let (mut order, mut ask, mut got) = (
        Vec::new(),
        vec![0u32; cols.max(rows)],
        vec![0u32; cols.max(rows)],
    );
    for _ in 0..FAIR_SHARE_2D_ROUNDS {
        for (i, &budget) in row_left.iter().enumerate() {
            let row = i * cols..(i + 1) * cols;
            for (j, a) in ask[..cols].iter_mut().enumerate() {
                *a = demands[row.start + j].min(col_left[j]);
            }
            water_fill(&ask[..cols], budget, &mut order, &mut offer[row]);
        }
        let mut granted = 0u64;
        for j in 0..cols {
            for i in 0..rows {
                ask[i] = offer[i * cols + j];
            }
            let total: u64 = ask[..rows].iter().map(|&x| x as u64).sum();
            if total > col_left[j] as u64 {
                water_fill(&ask[..rows], col_left[j], &mut order, &mut got[..rows]);
            } else {
                got[..rows].copy_from_slice(&ask[..rows]);
            }
            for i in 0..rows {
                let (k, g) = (i * cols + j, got[i]);
                alloc[k] += g;
                demands[k] -= g;
                row_left[i] -= g;
                col_left[j] -= g;
                granted += g as u64;
            }
        }
        if granted == 0 {
            break;
        }
    }
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

    /// Runs [`fair_share_2d`] on a rows × cols demand matrix; returns the allocation.
    fn fill_2d(demands: &[u32], rows: &[u32], cols: &[u32]) -> Vec<u32> {
        let (mut d, mut r, mut c) = (demands.to_vec(), rows.to_vec(), cols.to_vec());
        let mut a = vec![0; d.len()];
        fair_share_2d(&mut d, &mut r, &mut c, &mut a);
        for (i, &cap) in rows.iter().enumerate() {
            let sent: u32 = a[i * cols.len()..(i + 1) * cols.len()].iter().sum();
            assert!(sent <= cap && r[i] == cap - sent, "row {i}");
        }
        for (j, &cap) in cols.iter().enumerate() {
            let got: u32 = (0..rows.len()).map(|i| a[i * cols.len() + j]).sum();
            assert!(got <= cap && c[j] == cap - got, "column {j}");
        }
        for k in 0..a.len() {
            assert!(a[k] <= demands[k] && d[k] == demands[k] - a[k]);
        }
        a
    }

    #[test]
    fn two_d_water_filling_respects_rows_and_columns_and_fills_what_it_can() {
        // A lone sender to one receiver gets the receiver's whole room, not a 1/d share.
        assert_eq!(
            fill_2d(&[50, 0, 0, 0], &[18, 18], &[18, 18]),
            vec![18, 0, 0, 0]
        );
        // Two senders to one receiver share its room equally.
        assert_eq!(
            fill_2d(&[50, 0, 50, 0], &[18, 18], &[18, 18]),
            vec![9, 0, 9, 0]
        );
        // Sender 0 wants both receivers, sender 1 only receiver 0: round 1 offers 9 + 9 and
        // 18; receiver 0 (room 18, offered 27) accepts 9 and 9; round 2 gives sender 1's
        // remaining 9 nowhere (receiver 0 is full) and sender 0 has sent its 18.
        assert_eq!(
            fill_2d(&[50, 50, 50, 0], &[18, 18], &[18, 18]),
            vec![9, 9, 9, 0]
        );
        // Small demands are met in full, the rest shared: sender 0 offers 2 and 16, sender 1
        // offers 17 and 1; receiver 0 (offered 19, room 18) accepts 2 and 16.
        assert_eq!(
            fill_2d(&[2, 30, 30, 1], &[18, 18], &[18, 18]),
            vec![2, 16, 16, 1]
        );
        // One row: plain water-filling under column caps.
        assert_eq!(fill_2d(&[5, 40, 40], &[20], &[3, 40, 8]), vec![3, 9, 8]);
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
