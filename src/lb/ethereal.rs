//! Ethereal (Addanki et al., arXiv 2407.00550; the Ofan paper, §3.4): each flow is split into
//! subflows, each pinned to one path, assigned greedily at flow start by its source host.
//!
//! The version the Ofan paper compares with (§3.4): a flow is split into as many
//! equal subflows as there are paths through the lowest common layer (one per core switch for
//! an inter-pod destination), at most `lb.ethereal.max_subflows` and at most one per packet;
//! the NIC serves the subflows round-robin, so packet `seq` belongs to subflow `seq mod s`
//! (retransmissions too: a subflow never changes path). Paths are DRB-style source routes
//! (`lb/drb.rs`: switches follow the path code's digit for their tier), which stands for the
//! paper's ECMP-hash inversion.
//!
//! Assignment ("divide and conquer", one hop at a time): the source keeps the number of its active
//! subflows per first-hop choice (its edge switch's uplink), per (first, second) hop choice
//! (aggregation switch, core switch), and so on; a subflow takes the least loaded first hop, then
//! the least loaded second hop under it, ... (ties: lowest index, or uniform at random with
//! `lb.ethereal.ties = "random"`). The counts are per source, whatever the subflows' destinations
//! (Ethereal's description leaves open whether later hops count per destination; the hop after the
//! core is fixed by the aggregation index anyway). A flow's subflows are released, and the counts
//! decremented, when the flow completes. Link failures are not handled (a pinned path is not
//! re-assigned).
//!
//! ACKs return on the reverse path of their data: data packets carry their path code as
//! entropy value too, the receiver echoes it, and an ACK follows the same code, which in these
//! fabrics names the same switches (uplink a of an edge switch goes to aggregation switch a of
//! its pod; uplink c of aggregation switch a to core (a, c), which reaches aggregation switch
//! a of every pod).

use super::drb;
use super::host_policy::{BuildHost, FlowAt, HostPolicy, PacketAt};
use super::subflow_loads::SubflowLoads;
use super::ties::uniform_among;
use crate::packet::NO_VIA;
use crate::scenario::{LbConfig, Ties};
use crate::topology::{Fabric, NodeId};
use rand_pcg::Pcg32;
use serde::{Deserialize, Serialize};

/// Ethereal's parameters, the same for every host of a run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct EtherealParams {
    /// Most subflows per flow (s_max); unset: the number of paths.
    pub max_subflows: Option<u32>,
    /// Break ties between equally loaded choices at random rather than by lowest index.
    pub random_ties: bool,
}

/// A flow's subflows: the path code of each (empty: source and destination share an edge
/// switch, nothing to choose), and the tier of their lowest common switches.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct EtherealFlow {
    codes: Box<[u32]>,
    top: u8,
}

impl EtherealFlow {
    /// The path code of packet `seq`: its subflow's.
    #[inline]
    pub(crate) fn via(&self, seq: u32) -> u32 {
        match self.codes.len() {
            0 => NO_VIA,
            s => self.codes[seq as usize % s],
        }
    }

    #[cfg(test)]
    pub(crate) fn subflows(&self) -> usize {
        self.codes.len()
    }
}

/// Splits a flow of `packets` packets from `src` to `dst` and assigns its subflows' paths.
pub(crate) fn assign(
    loads: &mut SubflowLoads,
    fabric: &Fabric,
    src: NodeId,
    dst: NodeId,
    packets: u64,
    p: &EtherealParams,
    rng: &mut Pcg32,
) -> EtherealFlow {
    let all = drb::path_count(fabric, src, dst);
    let top = fabric.lca_tier(src, dst);
    // Under link failures only the surviving paths count and are assigned (one subflow
    // per path; Ethereal re-assigns a failed path's subflows to the least-loaded survivor).
    let valid: Option<Vec<u32>> = fabric.has_failures().then(|| {
        (0..all)
            .filter(|&c| drb::code_is_valid(fabric, src, dst, c))
            .collect()
    });
    let paths = valid.as_ref().map_or(all, |v| v.len() as u32);
    let s = (paths as u64)
        .min(p.max_subflows.unwrap_or(paths) as u64)
        .min(packets);
    let codes = (0..s)
        .map(|_| pick(loads, fabric, top, p, valid.as_deref(), rng))
        .collect();
    EtherealFlow { codes, top }
}

/// The path of one new subflow whose lowest common switches are of tier `top`, counted;
/// with `valid`, only a prefix of one of those codes is taken at each tier.
fn pick(
    loads: &mut SubflowLoads,
    fabric: &Fabric,
    top: u8,
    p: &EtherealParams,
    valid: Option<&[u32]>,
    rng: &mut Pcg32,
) -> u32 {
    let (mut code, mut below) = (0u32, 1u32);
    for t in 1..top {
        let w = fabric.tier_uplinks(t) as u32;
        let open = |d: &u32| {
            let prefix = code + below * d;
            valid.is_none_or(|v| v.iter().any(|&c| c % (below * w) == prefix))
        };
        let level = loads.level(t, below * w);
        let load = |d: &u32| level[(code + below * d) as usize];
        let least = (0..w)
            .filter(open)
            .map(|d| load(&d))
            .min()
            .expect("a surviving path");
        let d = if p.random_ties {
            uniform_among(|| 0..w, |d| open(d) && load(d) == least, rng) as u32
        } else {
            (0..w)
                .find(|d| open(d) && load(d) == least)
                .expect("a least loaded uplink")
        };
        code += below * d;
        below *= w;
    }
    loads.count(fabric, top, code, 1);
    code
}

/// The flow completed: its subflows are no longer active.
pub(crate) fn release(loads: &mut SubflowLoads, fabric: &Fabric, flow: &EtherealFlow) {
    for &code in flow.codes.iter() {
        loads.count(fabric, flow.top, code, -1);
    }
}

impl HostPolicy for EtherealParams {
    type Flow = EtherealFlow;

    fn assign_subflows(
        &self,
        at: &FlowAt<'_>,
        loads: &mut SubflowLoads,
        rng: &mut Pcg32,
    ) -> Option<EtherealFlow> {
        Some(assign(
            loads, at.fabric, at.src, at.dst, at.packets, self, rng,
        ))
    }

    fn end_flow(&self, fabric: &Fabric, flow: &EtherealFlow, loads: &mut SubflowLoads) {
        release(loads, fabric, flow);
    }

    /// Data carry their path code as entropy value too, so that the ACK, which echoes it, can
    /// follow the same code back: the reverse path.
    fn next_packet(
        &self,
        at: &PacketAt<'_>,
        _: &mut u32,
        flow: Option<&mut EtherealFlow>,
        _: &mut Pcg32,
    ) -> (u16, u32) {
        match flow {
            Some(e) => match e.via(at.seq) {
                NO_VIA => (at.flow_entropy, NO_VIA),
                via => (via as u16, via),
            },
            None => match (at.echo, drb::path_count(at.fabric, at.src, at.dst)) {
                (Some(code), n) if n > 0 => (code, code as u32),
                _ => at.echoed(),
            },
        }
    }

    /// The state and a path code per subflow.
    fn flow_state_bytes(&self, max_paths: u32) -> u64 {
        let s = self.max_subflows.unwrap_or(max_paths).min(max_paths) as usize;
        (std::mem::size_of::<EtherealFlow>() + 4 * s) as u64
    }
}

impl BuildHost for EtherealParams {
    fn build(cfg: &LbConfig, _: bool, _: &Fabric) -> EtherealParams {
        EtherealParams {
            max_subflows: cfg.ethereal.max_subflows,
            random_ties: cfg.ethereal.ties == Ties::Random,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::{stream, Purpose};
    use crate::scenario::{Scenario, TopologyKind};
    use crate::topology::Route;

    fn fat_tree(k: u32) -> Fabric {
        let mut s = Scenario::default();
        s.topology.k = k;
        Fabric::build(&s)
    }

    fn params(max_subflows: Option<u32>, random_ties: bool) -> EtherealParams {
        EtherealParams {
            max_subflows,
            random_ties,
        }
    }

    /// The nodes a packet with path code `via` visits from `src` to `dst`, as switches that
    /// follow path codes forward it.
    fn walk(f: &Fabric, src: NodeId, dst: NodeId, via: u32) -> Vec<NodeId> {
        let mut nodes = vec![src];
        let mut n = f.peer(src, 0, 0).0;
        while n != dst {
            nodes.push(n);
            let port = match f.route(n, dst, 0) {
                Route::Port(p) => p,
                Route::Choice(c) => {
                    let digit = (via / drb::digit_divisor(f, f.tier(n))) % c.len() as u32;
                    c.get(digit as u16)
                }
            };
            n = f.peer(n, port, 0).0;
        }
        nodes.push(dst);
        nodes
    }

    /// Ethereal: F·s ≡ 0 (mod U) equal subflows from one source give every uplink exactly F·s/U.
    #[test]
    fn every_uplink_gets_exactly_fs_over_u_subflows() {
        // k = 8: U = 4 edge uplinks, 16 inter-pod paths; host 0 is in pod 0 (hosts 0..16),
        // on edge switch 0 (hosts 0..4).
        let f = fat_tree(8);
        for random_ties in [false, true] {
            let mut rng = stream(1, 0, Purpose::HostLb);
            // 6 inter-pod flows of s = 2: 12 subflows, 3 per uplink.
            let mut loads = SubflowLoads::default();
            let p = params(Some(2), random_ties);
            for dst in [20, 40, 60, 80, 100, 120] {
                let flow = assign(&mut loads, &f, 0, dst, 256, &p, &mut rng);
                assert_eq!(flow.subflows(), 2);
            }
            assert_eq!(
                (0..4).map(|u| loads.first_hop(u)).collect::<Vec<_>>(),
                [3; 4]
            );
            // 4 flows of s = 3, two to the same pod (other edge switch), two to other pods:
            // 12 subflows, 3 per uplink, intra-pod ones counted on the same uplinks.
            let mut loads = SubflowLoads::default();
            let p = params(Some(3), random_ties);
            let flows: Vec<_> = [5, 9, 70, 127]
                .iter()
                .map(|&dst| assign(&mut loads, &f, 0, dst, 256, &p, &mut rng))
                .collect();
            assert_eq!(
                (0..4).map(|u| loads.first_hop(u)).collect::<Vec<_>>(),
                [3; 4]
            );
            // Default s = the 16 paths: 3 inter-pod flows give each of the 16 (aggregation,
            // core) choices exactly 3 subflows, and each uplink 12.
            let mut all = SubflowLoads::default();
            let p = params(None, random_ties);
            for dst in [16, 32, 127] {
                assert_eq!(
                    assign(&mut all, &f, 0, dst, 256, &p, &mut rng).subflows(),
                    16
                );
            }
            assert_eq!(
                (0..4).map(|u| all.first_hop(u)).collect::<Vec<_>>(),
                [12; 4]
            );
            assert_eq!(
                (0..16).map(|c| all.second_hop(c)).collect::<Vec<_>>(),
                [3; 16]
            );
            // Completion releases every subflow.
            for flow in &flows {
                release(&mut loads, &f, flow);
            }
            assert_eq!(loads.total(), 0);
        }
    }

    #[test]
    fn subflows_are_capped_by_paths_s_max_and_packets_and_ties_go_lowest_first() {
        let f = fat_tree(8);
        let mut rng = stream(1, 0, Purpose::HostLb);
        let mut loads = SubflowLoads::default();
        let lowest = params(None, false);
        assert_eq!(
            assign(&mut loads, &f, 0, 1, 256, &lowest, &mut rng).subflows(),
            0
        );
        let intra = assign(&mut loads, &f, 0, 5, 256, &lowest, &mut rng);
        assert_eq!(intra.subflows(), 4, "one per aggregation switch");
        assert_eq!(intra.codes[..], [0, 1, 2, 3]);
        let short = assign(&mut loads, &f, 0, 127, 3, &lowest, &mut rng);
        // Every uplink carries one subflow: the lowest index first, then the lowest core.
        assert_eq!(short.codes[..], [0, 1, 2]);
        let capped = assign(
            &mut loads,
            &f,
            0,
            127,
            256,
            &params(Some(5), false),
            &mut rng,
        );
        // Loads before: uplinks [2, 2, 2, 1] (the intra-pod flow's 4, then 0, 1, 2 for the
        // short one); core 0 taken under uplinks 0, 1, 2.
        // Pick 1: uplink 3, core 0 → code 3; uplinks [2, 2, 2, 2].
        // Picks 2-4: uplinks 0, 1, 2, each its core 1 → 4 + 0, 4 + 1, 4 + 2.
        // Pick 5: uplink 3 (uplinks [3, 3, 3, 2]), its core 1 → 4 + 3.
        assert_eq!(capped.codes[..], [3, 4, 5, 6, 7]);
    }

    /// Ethereal: no subflow's packets take more than one path, retransmissions included, and ACKs
    /// return on the reverse path of their data.
    #[test]
    fn each_subflow_keeps_one_path_and_acks_retrace_it() {
        let f = fat_tree(8);
        let mut rng = stream(2, 0, Purpose::HostLb);
        let mut loads = SubflowLoads::default();
        let p = params(None, true);
        for dst in [127, 9] {
            let flow = assign(&mut loads, &f, 0, dst, 100, &p, &mut rng);
            let s = flow.subflows() as u32;
            let mut paths: Vec<Option<Vec<NodeId>>> = vec![None; s as usize];
            // Every packet twice (a retransmission takes its subflow's path again).
            for seq in (0..100).chain(0..100) {
                let data = walk(&f, 0, dst, flow.via(seq));
                let first = paths[(seq % s) as usize].get_or_insert_with(|| data.clone());
                assert_eq!(first, &data, "subflow {} changed path", seq % s);
                let mut ack = walk(&f, dst, 0, flow.via(seq));
                ack.reverse();
                assert_eq!(ack, data, "the ACK of {seq} does not retrace its data");
            }
            // Distinct subflows take distinct paths (s = paths here).
            let mut distinct = paths.clone();
            distinct.sort();
            distinct.dedup();
            assert_eq!(distinct.len(), s as usize);
        }
    }

    #[test]
    fn acks_retrace_data_on_a_leaf_spine() {
        let mut s = Scenario::default();
        s.topology.kind = TopologyKind::LeafSpine;
        s.topology.k = 8;
        let f = Fabric::build(&s);
        let mut loads = SubflowLoads::default();
        let flow = assign(
            &mut loads,
            &f,
            0,
            20,
            50,
            &params(None, false),
            &mut stream(1, 0, Purpose::HostLb),
        );
        assert_eq!(flow.subflows(), 4, "one per spine");
        for seq in 0..4 {
            let mut ack = walk(&f, 20, 0, flow.via(seq));
            ack.reverse();
            assert_eq!(ack, walk(&f, 0, 20, flow.via(seq)));
        }
    }
}
