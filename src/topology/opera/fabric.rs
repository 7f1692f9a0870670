//! Opera as a weft fabric: N racks of d hosts, each ToR with u uplinks, uplink b of every
//! ToR wired (through rotor switch b) to the ToR that rotor b's current matching pairs it
//! with. Rotor switches are not nodes: a rotor is a time-varying link, as in the authors'
//! simulator, so a ToR uplink's peer is a function of the time ([`OperaFabric::peer_at`]).
//!
//! Numbering: hosts `0..N·d` (rack r has hosts r·d..), ToRs `N·d + r`. ToR ports `0..d` go
//! down to the rack's hosts, port `d + b` up to rotor b; an uplink always reaches the same
//! port `d + b` of its peer ToR (matchings are involutions), so links stay symmetric at every
//! instant. On its self-loop (the rack paired with itself) an uplink is idle: routing never
//! uses it.
//!
//! Routing (as opera-sim's source-routed label switching): a packet's label is the superslice in
//! which its host's NIC started sending it (`Packet::via`, written by the NIC:
//! [`OperaFabric::label`]). Every ToR forwards it on a shortest path of the label superslice's
//! graph — the union of the matchings of the rotors that stay up for the whole superslice — so a
//! packet sent within a slice never needs a circuit that reconfigures in that slice. The ToR's LB
//! policy chooses among the shortest next hops (`rps`: a random shortest path per packet, as the
//! authors' simulator draws one at the sender; `ecmp`: one per flow and label). Label switching by
//! hop-by-hop next hops of the label's superslice is the source route the sender would stamp:
//! whichever next hop a ToR picks, the packet stays on a shortest path of that superslice.

use super::{Opera, OperaParams, Timing};
use crate::scenario::{FieldError, Scenario};
use crate::topology::racks::Racks;
use crate::topology::shape::ShapeRules;
use crate::topology::{LinkParams, NodeId, Route, Wiring};

/// Stage names: host to ToR, ToR to ToR over a rotor, ToR to host.
pub(crate) const STAGES: &[&str] = &["host_tor", "tor_tor", "tor_host"];

/// The peer of an uplink whose rotor is reconfiguring (dark): nothing arrives.
pub(crate) const DARK: NodeId = NodeId::MAX;

/// Most uplinks (rotors) per ToR: a ToR's next hops fit in a stack buffer of this size.
pub(crate) const MAX_UPLINKS: usize = crate::scenario::MAX_RACK_UPLINKS as usize;

/// What summary.json reports of the schedule.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct OperaFacts {
    /// One cycle through every rotor's matchings, in ps.
    pub cycle_ps: u64,
    /// One superslice (between two reconfigurations), in ps.
    pub superslice_ps: u64,
    /// ε: the first sub-slice, the low-latency window (every rotor holds its matching), in ps.
    pub epsilon_ps: u64,
    /// δ: the second sub-slice (one hop plus one packet, so a last hop started in ε ends
    /// before the rotor goes dark), in ps.
    pub delta_ps: u64,
    /// r: the third sub-slice, the circuit reconfiguration delay (the rotor dark), in ps.
    pub reconfig_ps: u64,
    /// Worst and mean ToR-to-ToR hops of low-latency paths over all superslices.
    pub worst_hops: u8,
    /// Mean ToR-to-ToR hops of low-latency paths over all superslices.
    pub mean_hops: f64,
    /// Which candidate schedule was kept (0-based).
    pub realization: usize,
}

#[derive(Clone, Debug)]
pub(crate) struct OperaFabric {
    opera: Opera,
    /// Racks, hosts per rack (d), uplinks per ToR (u, one per rotor).
    rk: Racks,
}

impl OperaFabric {
    /// The schedule parameters of scenario `s`, whose rotor links are `rotor`: δ defaults to
    /// one hop of propagation plus one full packet's serialization.
    pub(crate) fn params(s: &Scenario, rotor: &LinkParams) -> Result<OperaParams, FieldError> {
        let t = &s.topology;
        let o = &t.opera;
        let (racks, d, u) = t.rack_dims();
        let ps = |ns: f64| (ns * 1_000.0).round() as u64;
        let mtu = (s.packet.payload_bytes + s.packet.header_bytes) as u64;
        let delta_ps = match o.delta_ns {
            Some(ns) => ps(ns),
            None => super::delta_ps(rotor.rate, mtu, rotor.latency_ps),
        };
        let reconfig_ps = ps(o.reconfig_ns);
        let epsilon_ps = match (o.epsilon_ns, o.slice_ns) {
            (Some(ns), _) => ps(ns),
            (None, Some(ns)) => Timing::from_slice(ps(ns), delta_ps, reconfig_ps, 1)?.epsilon_ps,
            (None, None) => super::PAPER_EPSILON_PS,
        };
        Ok(OperaParams {
            racks: racks as usize,
            hosts_per_rack: d as usize,
            uplinks: u as usize,
            groups: o.groups as usize,
            epsilon_ps,
            delta_ps,
            reconfig_ps,
            realizations: o.realizations as usize,
            max_paths: o.max_paths as usize,
            lifting: o.lifting,
            k_shortest: o.ll_paths == crate::scenario::OperaLlPaths::KShortest,
            seed: s.seed,
        })
    }

    pub(crate) fn new(p: &OperaParams) -> Result<OperaFabric, FieldError> {
        if p.uplinks > MAX_UPLINKS {
            return Err(FieldError::new(
                "topology.uplinks",
                format!("at most {MAX_UPLINKS} per rack (got {})", p.uplinks),
            ));
        }
        let opera = Opera::build(p)?;
        Ok(OperaFabric {
            rk: Racks::new(p.racks as u32, p.hosts_per_rack as u32, p.uplinks as u32),
            opera,
        })
    }

    pub(crate) fn facts(&self) -> OperaFacts {
        let t = self.opera.timing();
        OperaFacts {
            cycle_ps: t.cycle_ps(),
            superslice_ps: t.superslice_ps(),
            epsilon_ps: t.epsilon_ps,
            delta_ps: t.delta_ps,
            reconfig_ps: t.reconfig_ps,
            worst_hops: self.opera.hop_table().worst(),
            mean_hops: self.opera.hop_table().mean(),
            realization: self.opera.realization(),
        }
    }

    pub(crate) fn opera(&self) -> &Opera {
        &self.opera
    }
    pub(crate) fn num_hosts(&self) -> u32 {
        self.rk.t0
    }
    pub(crate) fn racks(&self) -> u32 {
        self.rk.racks
    }
    pub(crate) fn hosts_per_rack(&self) -> u32 {
        self.rk.d
    }

    /// Hosts link to their ToR (class 0); uplinks to the ToR of superslice 0's matching
    /// (class 1). [`OperaFabric::peer_at`] gives the peer at any other time.
    pub(in crate::topology) fn wiring(&self) -> Wiring {
        let t0 = self.rk.t0;
        self.rk.wiring(|r, b| {
            let peer = self.opera.matching(b as usize, 0)[r as usize];
            (t0 + peer, (self.rk.d + b) as u16)
        })
    }

    /// Whether port `p` of node `n` is a ToR uplink (a rotor link).
    #[inline]
    pub(crate) fn is_uplink(&self, n: NodeId, p: u16) -> bool {
        self.rk.is_uplink(n, p)
    }

    /// The label of a packet whose NIC starts sending it at `now_ps`: its superslice.
    #[inline]
    pub(crate) fn label(&self, now_ps: u64) -> u32 {
        self.opera.timing().at(now_ps).superslice as u32
    }

    /// The peer of port `p` of node `n` at `now_ps` if it is an uplink: the peer ToR's port of
    /// the same rotor, [`DARK`] while the rotor reconfigures; `None` for a static link.
    #[inline]
    pub(crate) fn peer_at(&self, n: NodeId, p: u16, now_ps: u64) -> Option<(NodeId, u16)> {
        if !self.is_uplink(n, p) {
            return None;
        }
        let rotor = (p as u32 - self.rk.d) as usize;
        Some(
            match self
                .opera
                .peer_rack((n - self.rk.t0) as usize, rotor, now_ps)
            {
                Some(r) => (self.rk.t0 + r, p),
                None => (DARK, p),
            },
        )
    }

    /// The ToR that uplink `p` of ToR `n` reaches during the ε and δ of superslice `label`.
    pub(crate) fn planned_peer(&self, n: NodeId, p: u16, label: u32) -> NodeId {
        let rotor = (p as u32 - self.rk.d) as usize;
        self.rk.t0 + self.opera.matching(rotor, label as usize)[(n - self.rk.t0) as usize]
    }

    /// Every ToR uplink `p` of ToR `n` reaches over a cycle (its own ToR excluded).
    pub(crate) fn peers_over_cycle(&self, n: NodeId, p: u16) -> Vec<NodeId> {
        let rotor = (p as u32 - self.rk.d) as usize;
        let sched = self.opera.schedule();
        let mut peers: Vec<NodeId> = (0..sched.matchings_per_rotor())
            .map(|k| self.rk.t0 + sched.rotor_matching(rotor, k)[(n - self.rk.t0) as usize])
            .filter(|&t| t != n)
            .collect();
        peers.sort_unstable();
        peers.dedup();
        peers
    }

    /// Writes into `buf` the uplinks of ToR `n` on shortest paths toward host `dst` in
    /// superslice `label` and returns how many; 0 when `dst` is in `n`'s rack (then the route
    /// is the downlink [`OperaFabric::downlink`]).
    #[inline]
    pub(crate) fn next_hop_ports(
        &self,
        n: NodeId,
        dst: NodeId,
        label: u32,
        buf: &mut [u16; MAX_UPLINKS],
    ) -> usize {
        let (rack, dst_rack) = ((n - self.rk.t0) as usize, (dst / self.rk.d) as usize);
        let mut count = 0;
        for (rotor, _) in self.opera.next_hops(label as usize, rack, dst_rack) {
            buf[count] = (self.rk.d as usize + rotor) as u16;
            count += 1;
        }
        count
    }

    /// With `ll_paths = "k_shortest"`: the uplink of ToR `n` that the source route of a packet
    /// from host `src` to host `dst` labelled `label` takes next. The route is path
    /// `pick(entropy)` of the label's k-shortest paths from `src`'s rack (the same at every ToR,
    /// so the packet follows one path, as if its NIC had stamped it). None without k-shortest
    /// paths, when `dst` is in `n`'s rack, or when `n` is not on that path (a packet that does
    /// not start at its source's ToR: a header a switch returned to its sender); the caller then
    /// routes on shortest next hops.
    #[inline]
    pub(crate) fn source_route_port(
        &self,
        n: NodeId,
        src: NodeId,
        dst: NodeId,
        label: u32,
        entropy: u16,
    ) -> Option<u16> {
        if src >= self.rk.t0 || dst >= self.rk.t0 {
            return None;
        }
        let (src_rack, dst_rack) = ((src / self.rk.d) as usize, (dst / self.rk.d) as usize);
        let rack = (n - self.rk.t0) as usize;
        if rack == dst_rack {
            return None;
        }
        let paths = self.opera.ll_paths(label as usize, src_rack, dst_rack)?;
        if paths.is_empty() {
            return None;
        }
        let path = &paths[pick_path(entropy, paths.len())];
        let s = label as usize;
        let mut x = src_rack;
        for &b in path.iter() {
            if x == rack {
                return Some((self.rk.d as usize + b as usize) as u16);
            }
            x = self.opera.matching(b as usize, s)[x] as usize;
        }
        None
    }

    /// The downlink of ToR `n` to host `dst` if `dst` is in its rack.
    #[inline]
    pub(crate) fn downlink(&self, n: NodeId, dst: NodeId) -> Option<u16> {
        self.rk.downlink(n, dst)
    }

    /// The first shortest-path next hop toward `dst` in superslice `label` (path walks,
    /// bounds; packets choose among all of them).
    pub(crate) fn route_at(&self, n: NodeId, dst: NodeId, label: u32) -> Route<'static> {
        if let Some(p) = self.downlink(n, dst) {
            return Route::Port(p);
        }
        let mut buf = [0u16; MAX_UPLINKS];
        let count = self.next_hop_ports(n, dst, label, &mut buf);
        assert!(
            count > 0,
            "superslice {label} has no path from ToR {n} to host {dst}"
        );
        Route::Port(buf[0])
    }
}

impl ShapeRules for OperaFabric {
    /// The route of superslice 0 (see [`OperaFabric::route_at`]).
    fn route(&self, n: NodeId, dst: NodeId) -> Route<'_> {
        self.route_at(n, dst, 0)
    }

    /// Not used: Valiant routing is refused on Opera (validation).
    fn route_up(&self, _n: NodeId) -> Route<'_> {
        unreachable!("no up/down routing on Opera: lb.policy is validated")
    }

    /// Racks, at every level.
    fn subtree(&self, dst: NodeId, _level: u8) -> (u32, u32) {
        self.rk.subtree(dst)
    }

    /// 1 in the same rack, else 2 (above the ToRs: a rotor path).
    fn lca_tier(&self, a: NodeId, b: NodeId) -> u8 {
        self.rk.lca_tier(a, b)
    }

    /// Partition groups are racks (a ToR with its hosts), at any granularity.
    fn group_of(&self, n: NodeId, _fine: bool) -> Option<u32> {
        self.rk.group_of(n)
    }

    fn num_groups(&self, _fine: bool) -> u32 {
        self.rk.racks
    }

    fn tier_uplinks(&self, _t: u8) -> u16 {
        self.rk.u as u16
    }
}

/// Which of `count` paths a packet with this entropy takes (a multiplicative hash of the
/// entropy, so that neighbouring entropy values spread over the paths).
#[inline]
pub(super) fn pick_path(entropy: u16, count: usize) -> usize {
    let h = (entropy as u32 ^ 0x9e37).wrapping_mul(0x9e37_79b1);
    ((h >> 16) as usize * count) >> 16
}

#[cfg(test)]
mod tests {
    use super::*;

    /// 12 racks × 2 hosts, 4 rotors, slices of ε 20 µs + δ 1.7 µs + r 2 µs.
    fn small() -> OperaFabric {
        small_with(false)
    }

    /// `small()`, its low-latency traffic over k-shortest paths or not.
    fn small_with(k_shortest: bool) -> OperaFabric {
        OperaFabric::new(&OperaParams {
            racks: 12,
            hosts_per_rack: 2,
            uplinks: 4,
            epsilon_ps: 20_000_000,
            delta_ps: 1_700_000,
            reconfig_ps: 2_000_000,
            realizations: 20,
            k_shortest,
            seed: 1,
            ..OperaParams::default()
        })
        .unwrap()
    }

    /// Times at which a packet labelled `s` may still be on its way: from the start of
    /// superslice s to the end of the next superslice's δ (ε after the label's slice ends).
    fn window(o: &OperaFabric, s: usize) -> Vec<u64> {
        let t = o.opera.timing();
        let start = t.start_ps(0, s);
        let next = start + t.superslice_ps();
        vec![
            start,
            start + t.epsilon_ps,
            next - 1,
            next,
            next + t.epsilon_ps + t.delta_ps - 1,
        ]
    }

    /// Following any next hop of its label from any ToR reaches the destination in the
    /// label's hop count, and every circuit on the way holds, from the label's start until
    /// the next superslice's δ ends, the matching the label planned: a packet sent in a slice
    /// never needs a circuit that reconfigures before it leaves it.
    #[test]
    fn label_routes_use_only_circuits_that_hold_until_the_packet_leaves() {
        let o = small();
        let s_count = o.opera.schedule().superslices();
        let mut buf = [0u16; MAX_UPLINKS];
        for s in 0..s_count {
            let times = window(&o, s);
            for src in 0..o.rk.racks {
                for dst_host in 0..o.num_hosts() {
                    let dst_rack = dst_host / o.rk.d;
                    if dst_rack == src {
                        continue;
                    }
                    for pick_last in [false, true] {
                        let (mut tor, mut hops) = (o.rk.t0 + src, 0);
                        while o.downlink(tor, dst_host).is_none() {
                            let count = o.next_hop_ports(tor, dst_host, s as u32, &mut buf);
                            assert!(count > 0);
                            let p = buf[if pick_last { count - 1 } else { 0 }];
                            let planned = o.planned_peer(tor, p, s as u32);
                            for &t in &times {
                                assert_eq!(o.peer_at(tor, p, t), Some((planned, p)), "s {s} t {t}");
                            }
                            tor = planned;
                            hops += 1;
                        }
                        let want = o.opera.hops(s, src as usize, dst_rack as usize);
                        assert_eq!(hops, want, "s {s} rack {src} -> host {dst_host}");
                    }
                }
            }
        }
    }

    /// With `ll_paths = "k_shortest"`, a packet follows, ToR by ToR, the one path its entropy
    /// picks among the label's k shortest loopless paths from its source's rack, and every
    /// circuit on it holds the matching the label planned from the label's start until the
    /// next superslice's δ ends. Different packets of a directly connected pair take detours
    /// over other uplinks too (shortest routing would put them all on the one circuit).
    #[test]
    fn k_shortest_source_routes_follow_the_picked_path_over_circuits_that_hold() {
        let o = small_with(true);
        let s_count = o.opera.schedule().superslices();
        let mut first_uplinks_of_direct_pairs = std::collections::BTreeSet::new();
        for s in 0..s_count {
            let times = window(&o, s);
            for src_host in 0..o.num_hosts() {
                let src = src_host / o.rk.d;
                for dst_host in 0..o.num_hosts() {
                    let dst = dst_host / o.rk.d;
                    if dst == src {
                        assert_eq!(
                            o.source_route_port(o.rk.t0 + src, src_host, dst_host, s as u32, 0),
                            None
                        );
                        continue;
                    }
                    let paths = o.opera.ll_paths(s, src as usize, dst as usize).unwrap();
                    for entropy in [0u16, 1, 2, 77, 1000, 40_000, u16::MAX] {
                        let path = &paths[pick_path(entropy, paths.len())];
                        let mut tor = o.rk.t0 + src;
                        for &b in path.iter() {
                            let p = o
                                .source_route_port(tor, src_host, dst_host, s as u32, entropy)
                                .expect("on its own path");
                            assert_eq!(p as u32, o.rk.d + b as u32);
                            let planned = o.planned_peer(tor, p, s as u32);
                            for &t in &times {
                                assert_eq!(o.peer_at(tor, p, t), Some((planned, p)), "s {s} t {t}");
                            }
                            if paths[0].len() == 1 && tor == o.rk.t0 + src {
                                first_uplinks_of_direct_pairs.insert((s, src, dst, p));
                            }
                            tor = planned;
                        }
                        assert_eq!(
                            tor,
                            o.rk.t0 + dst,
                            "s {s} host {src_host} -> host {dst_host}"
                        );
                        assert!(o.downlink(tor, dst_host).is_some());
                        assert_eq!(
                            o.source_route_port(tor, src_host, dst_host, s as u32, entropy),
                            None
                        );
                    }
                }
            }
        }
        // Some direct pair sends over more than its one circuit.
        let mut per_pair = std::collections::BTreeMap::new();
        for (s, a, b, _) in &first_uplinks_of_direct_pairs {
            *per_pair.entry((s, a, b)).or_insert(0) += 1;
        }
        assert!(per_pair.values().any(|&n| n > 1));
        // The pick spreads entropies over the paths.
        let mut hits = [0u32; 5];
        for e in 0..=u16::MAX {
            hits[pick_path(e, 5)] += 1;
        }
        assert!(hits.iter().all(|&h| h > 12_000), "{hits:?}");
    }

    /// An uplink is dark exactly during the r of the superslices its rotor reconfigures in,
    /// and otherwise leads to the same port of the ToR its matching pairs it with, which
    /// leads back (links stay symmetric at every instant).
    #[test]
    fn uplinks_are_dark_only_while_their_rotor_reconfigures_and_symmetric_otherwise() {
        let o = small();
        let t = *o.opera.timing();
        for s in 0..o.opera.schedule().superslices() {
            let start = t.start_ps(0, s);
            for at in [
                start,
                start + t.epsilon_ps + t.delta_ps,
                start + t.superslice_ps() - 1,
            ] {
                let in_r = at >= start + t.epsilon_ps + t.delta_ps;
                for tor in o.rk.t0..o.rk.t0 + o.rk.racks {
                    for p in o.rk.d..o.rk.d + o.rk.u {
                        let p = p as u16;
                        let rotor = (p as u32 - o.rk.d) as usize;
                        let dark = in_r && o.opera.schedule().reconfigures(rotor, s);
                        let (peer, pp) = o.peer_at(tor, p, at).unwrap();
                        assert_eq!(peer == DARK, dark, "tor {tor} port {p} at {at}");
                        if !dark {
                            assert_eq!(pp, p);
                            assert_eq!(o.peer_at(peer, p, at), Some((tor, p)));
                        }
                    }
                }
            }
        }
    }

    /// Over a cycle each ToR's uplinks reach every other ToR exactly once.
    #[test]
    fn uplinks_reach_every_other_rack_once_per_cycle() {
        let o = small();
        for tor in o.rk.t0..o.rk.t0 + o.rk.racks {
            let mut all: Vec<NodeId> = (o.rk.d..o.rk.d + o.rk.u)
                .flat_map(|p| o.peers_over_cycle(tor, p as u16))
                .collect();
            all.sort_unstable();
            let want: Vec<NodeId> = (o.rk.t0..o.rk.t0 + o.rk.racks)
                .filter(|&t| t != tor)
                .collect();
            assert_eq!(all, want, "tor {tor}");
        }
    }
}
