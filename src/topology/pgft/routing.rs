//! Static routings of (P)GFTs (the PGFT routing paper; Zahavi, 2010): D-mod-k, S-mod-k, their
//! node-type-grouped variants and random routing, each a fixed port per (switch, source,
//! destination) for the whole run. The packet simulator uses them as switch LB policies
//! (`lb.policy = "dmodk"` ...) and `weft contention` walks their routes.
//!
//! - D-mod-k: at a level-l switch going up, up port index u = ⌊d / W_l⌋ mod (w_{l+1}·p_{l+1})
//!   (W_l = w_1·…·w_l); `pgft/mod.rs` numbers up ports u = j·w + b, so the parent is the low
//!   digit and the parallel link the next. Going down over p_l parallel links, the link is
//!   the one the child's own D-mod-k choice climbs on, j = (⌊d / W_{l−1}⌋ mod (w_l·p_l)) / w_l:
//!   every route to d then descends d's single up-tree (one top switch per sub-group, one
//!   parallel port). Our choice where the seed is silent on parallel down links.
//! - S-mod-k: the same with the source id s, up and down (the down link mirrors s's climb).
//! - G-D-mod-k / G-S-mod-k: the same on grouped ids: hosts renumbered type by type (in the
//!   order of `[topology.pgft]`'s types), each type keeping the original order.
//! - random (`lb.policy = "random"`; `random_per_dest` in `weft contention`): a uniform port
//!   per (switch, destination), up and down, drawn once per run from
//!   `rng::stream(seed, switch << 32 | destination, Purpose::StaticRandom)`. Routes to one
//!   destination merge where they meet.
//! - random per route (`weft contention --routing random`, the PGFT routing paper's Random,
//!   which "spreads every route uniformly over the available ports"): a uniform port per
//!   (switch, source, destination), up and over parallel down links, drawn from
//!   `rng::stream(seed ^ splitmix64(switch), source << 32 | destination,
//!   Purpose::StaticRandomRoute)`: every route draws its ports independently of every other.
//!   Not an `lb.policy` (the packet simulator's `random` keeps its per-destination table).

use super::Pgft;
use crate::rng::{splitmix64, stream, Purpose};
use crate::scenario::{HostTypes, LbPolicy};
use crate::topology::NodeId;
use rand::Rng;

/// Which id a routing reads.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Key {
    Destination,
    Source,
    /// A draw per (switch, destination).
    Random,
    /// A draw per (switch, source, destination).
    RandomPerRoute,
}

/// A static routing on a (P)GFT.
#[derive(Clone, Debug)]
pub struct StaticRouting {
    key: Key,
    pgft: Pgft,
    /// Grouped id of every host (type-major); empty when ids are used as they are.
    grouped: Vec<u32>,
    seed: u64,
}

/// The static routings' scenario names, for messages.
pub(crate) const STATIC_ROUTINGS: [LbPolicy; 5] = [
    LbPolicy::Dmodk,
    LbPolicy::Smodk,
    LbPolicy::Gdmodk,
    LbPolicy::Gsmodk,
    LbPolicy::Random,
];

/// Hosts renumbered type by type, each type in the original order.
pub(crate) fn grouped_ids(types: &HostTypes) -> Vec<u32> {
    let mut next = vec![0u32; types.names.len()];
    for &t in &types.type_of {
        next[t as usize] += 1;
    }
    let mut start = 0;
    for n in next.iter_mut() {
        (start, *n) = (start + *n, start);
    }
    types
        .type_of
        .iter()
        .map(|&t| {
            let id = next[t as usize];
            next[t as usize] += 1;
            id
        })
        .collect()
}

impl StaticRouting {
    /// `policy` must be one of [`STATIC_ROUTINGS`].
    pub(crate) fn new(policy: LbPolicy, pgft: Pgft, types: &HostTypes, seed: u64) -> StaticRouting {
        let (key, grouped) = match policy {
            LbPolicy::Dmodk => (Key::Destination, vec![]),
            LbPolicy::Smodk => (Key::Source, vec![]),
            LbPolicy::Gdmodk => (Key::Destination, grouped_ids(types)),
            LbPolicy::Gsmodk => (Key::Source, grouped_ids(types)),
            LbPolicy::Random => (Key::Random, vec![]),
            other => panic!("{} is not a static routing", other.name()),
        };
        StaticRouting {
            key,
            pgft,
            grouped,
            seed,
        }
    }

    /// The PGFT routing paper's Random: every route draws its ports independently,
    /// uniformly over the available ones (see the module's notes).
    pub(crate) fn random_per_route(pgft: Pgft, seed: u64) -> StaticRouting {
        StaticRouting {
            key: Key::RandomPerRoute,
            pgft,
            grouped: vec![],
            seed,
        }
    }

    /// Whether the route depends on the destination only (so routes from one leaf to one
    /// destination coincide); otherwise on the source only until the last hop.
    pub(crate) fn by_destination(&self) -> bool {
        matches!(self.key, Key::Destination | Key::Random)
    }

    /// Whether every route draws its own ports (neither destination- nor source-keyed).
    pub(crate) fn per_route(&self) -> bool {
        self.key == Key::RandomPerRoute
    }

    /// The id D-mod-k / S-mod-k reads for a route from `src` to `dst`.
    #[inline]
    fn id(&self, src: NodeId, dst: NodeId) -> u32 {
        let h = if self.key == Key::Source { src } else { dst };
        match self.grouped.is_empty() {
            true => h,
            false => self.grouped[h as usize],
        }
    }

    #[inline]
    fn random(&self, node: NodeId, dst: NodeId, count: u32) -> u32 {
        let owner = (node as u64) << 32 | dst as u64;
        stream(self.seed, owner, Purpose::StaticRandom).gen_range(0..count)
    }

    #[inline]
    fn random_route(&self, node: NodeId, src: NodeId, dst: NodeId, count: u32) -> u32 {
        let owner = (src as u64) << 32 | dst as u64;
        stream(
            self.seed ^ splitmix64(node as u64),
            owner,
            Purpose::StaticRandomRoute,
        )
        .gen_range(0..count)
    }

    /// Up port index (0..w_{l+1}·p_{l+1}, among the up ports) at level-`l` switch `node`.
    #[inline]
    pub(crate) fn up_index(&self, node: NodeId, l: u8, src: NodeId, dst: NodeId) -> u32 {
        let count = self.pgft.up_ports(l);
        debug_assert!(count > 0, "no up ports at the top");
        match self.key {
            Key::Random => self.random(node, dst, count),
            Key::RandomPerRoute => self.random_route(node, src, dst, count),
            _ => (self.id(src, dst) / self.pgft.w_prod(l)) % count,
        }
    }

    /// Parallel link index (0..p_l) at level-`l` switch `node` going down toward `dst`.
    #[inline]
    pub(crate) fn down_index(&self, node: NodeId, l: u8, src: NodeId, dst: NodeId) -> u32 {
        let g = &self.pgft;
        match self.key {
            Key::Random => self.random(node, dst, g.p(l)),
            Key::RandomPerRoute => self.random_route(node, src, dst, g.p(l)),
            _ => {
                let climb = (self.id(src, dst) / g.w_prod(l - 1)) % (g.w(l) * g.p(l));
                climb / g.w(l)
            }
        }
    }

    /// The output port of switch `node` for a packet from `src` to `dst` (fault-free).
    #[inline]
    pub(crate) fn port(&self, node: NodeId, src: NodeId, dst: NodeId) -> u16 {
        let g = &self.pgft;
        let (l, a, _) = g.split(node);
        if dst / g.hosts_under(l) == a {
            let c = (dst / g.hosts_under(l - 1)) % g.m(l);
            let j = if g.p(l) > 1 {
                self.down_index(node, l, src, dst)
            } else {
                0
            };
            (c * g.p(l) + j) as u16
        } else {
            (g.down_ports(l) + self.up_index(node, l, src, dst)) as u16
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scenario::HostTypes;

    fn seed_types() -> HostTypes {
        super::super::tests::seed_config().host_types().unwrap()
    }

    #[test]
    fn grouped_ids_put_each_type_in_order() {
        let t = seed_types();
        let g = grouped_ids(&t);
        // Compute nodes 0..6 → 0..6, 8..14 → 7..13, ...; I/O nodes 7, 15, ... → 56, 57, ...
        assert_eq!(&g[..9], &[0, 1, 2, 3, 4, 5, 6, 56, 7]);
        assert_eq!((g[15], g[63], g[62]), (57, 63, 55));
        let mut sorted = g.clone();
        sorted.sort();
        assert_eq!(sorted, (0..64).collect::<Vec<_>>());
    }

    /// D-mod-k gives every destination exactly one top switch per sub-group: whichever
    /// leaf a route to d starts from, it climbs through the same level-2 switch of its
    /// sub-group and the same top switch and parallel link (seed example).
    #[test]
    fn dmodk_gives_one_top_switch_per_destination() {
        let g = Pgft::new(&[8, 4, 2], &[1, 2, 1], &[1, 1, 4]);
        let r = StaticRouting::new(LbPolicy::Dmodk, g, &seed_types(), 1);
        for d in 0..64 {
            let mut tops = std::collections::BTreeSet::new();
            for s in 0..64 {
                if s / 32 == d / 32 {
                    continue;
                }
                let (path, _) = walk(&r, s, d);
                tops.insert(path[3]); // host, leaf, L2, top, ...
            }
            assert_eq!(tops.len(), 1, "destination {d}");
            // By hand: leaf up port d mod 2 picks L2 b2 = d mod 2, whose only parent is top
            // b2 = d mod 2 (node 76 + d mod 2); the parallel link ⌊d / 2⌋ mod 4.
            assert_eq!(*tops.iter().next().unwrap(), 76 + d % 2);
        }
        // Host 7 → host 40: leaf 64 up port 8 + 40 mod 2 → L2 72; its link ⌊40/2⌋ mod 4 = 0
        // (port 4); top 76 down to subgroup 1 on link 0 (port 4 + 0): the one 40's climb uses.
        assert_eq!(r.port(64, 7, 40), 8);
        assert_eq!(r.port(72, 7, 40), 4);
        assert_eq!(r.port(76, 7, 40), 4);
        // Host 40 → host 7: leaf 69 port 8 + 1 → L2 75, link ⌊7/2⌋ mod 4 = 3 (port 7); top
        // 77 down to subgroup 0 on link 3.
        assert_eq!(r.port(69, 40, 7), 9);
        assert_eq!(r.port(75, 40, 7), 7);
        assert_eq!(r.port(77, 40, 7), 3);
    }

    /// G-D-mod-k reads the grouped id: every I/O node 8i+7 is odd, so D-mod-k sends all of
    /// them up a leaf's port 8 + 1; grouped, I/O node i is 56 + i and they alternate.
    #[test]
    fn grouped_variant_reads_grouped_ids() {
        let g = Pgft::new(&[8, 4, 2], &[1, 2, 1], &[1, 1, 4]);
        let gd = StaticRouting::new(LbPolicy::Gdmodk, g, &seed_types(), 1);
        let d = StaticRouting::new(LbPolicy::Dmodk, g, &seed_types(), 1);
        // I/O node 23 (i = 2, grouped 58) from host 0: leaf port 8 + 58 mod 2 vs 8 + 23 mod 2.
        assert_eq!((gd.port(64, 0, 23), d.port(64, 0, 23)), (8, 9));
        // I/O node 47 (i = 5, grouped 61) from host 0 at L2 73: link ⌊61/2⌋ mod 4 = 2 vs
        // ⌊47/2⌋ mod 4 = 3.
        assert_eq!((gd.port(73, 0, 47), d.port(73, 0, 47)), (6, 7));
        // S-mod-k reads the source: host 5 climbs on leaf port 8 + 1 whatever the destination.
        let sm = StaticRouting::new(LbPolicy::Smodk, g, &seed_types(), 1);
        assert_eq!((sm.port(64, 5, 23), sm.port(64, 5, 40)), (9, 9));
    }

    /// The hosts and switches of the route from `s` to `d`, and its ports.
    fn walk(r: &StaticRouting, s: NodeId, d: NodeId) -> (Vec<NodeId>, Vec<u16>) {
        let fabric_pgft = r.pgft;
        let mut nodes = vec![s];
        let mut ports = vec![0];
        let mut n = fabric_pgft.level_base(1) + s / fabric_pgft.m(1);
        while n != d {
            nodes.push(n);
            let p = r.port(n, s, d);
            ports.push(p);
            n = peer(&fabric_pgft, n, p);
        }
        nodes.push(d);
        (nodes, ports)
    }

    /// The node port `p` of switch `n` leads to (the wiring of `pgft/mod.rs`).
    fn peer(g: &Pgft, n: NodeId, p: u16) -> NodeId {
        let (l, a, b) = g.split(n);
        let p = p as u32;
        if p < g.down_ports(l) {
            let c = p / g.p(l);
            g.join(l - 1, a * g.m(l) + c, b / g.w(l))
        } else {
            let u = p - g.down_ports(l);
            let bb = u % g.w(l + 1);
            g.join(l + 1, a / g.m(l + 1), b * g.w(l + 1) + bb)
        }
    }
}
