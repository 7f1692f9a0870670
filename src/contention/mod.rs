//! Static contention analysis (the PGFT routing paper's metric, `weft contention`): for a static
//! routing and a
//! communication pattern, every output port p gets src(p) and dst(p), the numbers of distinct
//! sources and destinations of the pattern's routes through it, and C_p = min(src, dst);
//! C_topo = max over ports. 1 means only one flow can ever be at the port at once from
//! the network's side (end-node contention), more means network contention.
//!
//! Routes are the routing's (`topology/pgft/routing.rs`), walked on the fabric's ports.
//! Dense patterns are not enumerated route by route: a destination-keyed routing (D-mod-k,
//! G-D-mod-k, random) routes every source of a leaf to a destination d along the same path
//! from that leaf on, and a source-keyed one (S-mod-k, G-S-mod-k) routes s to every node of
//! a destination leaf along the same path until that leaf. So the walks are per (source
//! leaf, destination) or per (source, destination leaf) — leaves × N walks of at most 2h − 2
//! switch-to-switch links — once in source order (counting distinct sources per port by
//! marking the last source group seen) and once in destination order (distinct
//! destinations). The host's own link and the leaf's link to a host carry one source or one
//! destination: C_p ≤ 1 there, counted as such. The per-route random routing (the PGFT
//! routing paper's Random) shares no path between routes: dense patterns are walked route
//! by route for it, in source order and in destination order.
//!
//! Which ports C_topo covers is a [`Scope`]: the PGFT routing paper ("Node-type-based
//! load-balancing routing for Parallel Generalized Fat-Trees") defines C_topo as the largest
//! C_p of the pattern's routes, but every value it derives is a "top-port" value, the output
//! ports of the top-level switches ("There are 8 top-ports that lead to each subgroup",
//! "(2,0,1):7 is the last of (2,0,1)'s four ports leading to the left subgroup"); those
//! ports are all down ports. [`Scope::Top`] is that; [`Scope::AboveLeaf`] every port of the
//! switches above the leaves, up and down; [`Scope::All`] every port, hosts' and leaves'
//! included (where a leaf's up ports carry all its sources).

pub(crate) mod pattern;
mod report;

pub use pattern::Pattern;
pub use report::{Draws, Report};

use crate::scenario::LbPolicy;
pub use crate::topology::pgft::routing::StaticRouting;
use crate::topology::{Fabric, NodeId};
use anyhow::{bail, Result};

/// Which output ports C_topo takes its maximum over (`weft contention --scope`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Scope {
    /// The ports of the top-level switches (all down ports): the PGFT routing paper's
    /// "top-ports", the default.
    Top,
    /// Every port of the switches above the leaves (levels 2 to h), up and down.
    AboveLeaf,
    /// Every port: hosts', leaves' (their up ports too) and every switch's above.
    All,
}

impl Scope {
    /// Every scope, narrowest first.
    pub const ALL: [Scope; 3] = [Scope::Top, Scope::AboveLeaf, Scope::All];

    /// The scope's name, as `--scope` takes it.
    pub fn name(self) -> &'static str {
        match self {
            Scope::Top => "top",
            Scope::AboveLeaf => "above-leaf",
            Scope::All => "all",
        }
    }

    /// Parses `--scope`.
    pub fn parse(text: &str) -> Result<Scope> {
        match Scope::ALL.into_iter().find(|s| s.name() == text) {
            Some(s) => Ok(s),
            None => bail!(
                "--scope: unknown scope {text:?} (top: the top-level switches' ports, the paper's; above-leaf: every port above the leaves; all: every port)"
            ),
        }
    }

    /// Whether the ports of a node at PGFT level `level` (hosts 0, leaves 1) count.
    pub fn covers(self, level: u8, h: u8) -> bool {
        match self {
            Scope::Top => level == h,
            Scope::AboveLeaf => level >= 2,
            Scope::All => true,
        }
    }
}

/// `weft contention --routing` names: the static `lb.policy` routings, except that `random`
/// is the PGFT routing paper's per-route Random and `random_per_dest` is `lb.policy =
/// "random"`'s table (a port per switch and destination).
pub const ROUTING_NAMES: [&str; 6] = [
    "dmodk",
    "smodk",
    "gdmodk",
    "gsmodk",
    "random",
    "random_per_dest",
];

/// Whether routing `name` is drawn from the seed (so `--draws` applies).
pub fn is_random(name: &str) -> bool {
    matches!(name, "random" | "random_per_dest")
}

/// The routing `weft contention --routing name` analyses on fabric `f` (a PGFT).
pub fn routing_by_name(f: &Fabric, name: &str, seed: u64) -> Result<StaticRouting> {
    if !ROUTING_NAMES.contains(&name) {
        bail!(
            "--routing: unknown routing {name:?} (one of {})",
            ROUTING_NAMES.join(", ")
        );
    }
    let Some(g) = f.as_pgft() else {
        bail!("--routing: static routings need a (P)GFT fabric");
    };
    let plain = |p: LbPolicy| StaticRouting::new(p, g, f.host_types(), seed);
    Ok(match name {
        "dmodk" => plain(LbPolicy::Dmodk),
        "smodk" => plain(LbPolicy::Smodk),
        "gdmodk" => plain(LbPolicy::Gdmodk),
        "gsmodk" => plain(LbPolicy::Gsmodk),
        "random_per_dest" => plain(LbPolicy::Random),
        _ => StaticRouting::random_per_route(g, seed),
    })
}

/// Per global port id: distinct sources and destinations of the routes through it.
pub struct Contention {
    /// Distinct sources of the routes through each port.
    pub src: Vec<u32>,
    /// Distinct destinations of the routes through each port.
    pub dst: Vec<u32>,
    /// Routes of the pattern.
    pub routes: u64,
}

impl Contention {
    /// C_p of global port `g`.
    pub fn c(&self, g: usize) -> u32 {
        self.src[g].min(self.dst[g])
    }
    /// C_topo over every port ([`Scope::All`]): the largest C_p.
    pub fn c_topo(&self) -> u32 {
        (0..self.src.len()).map(|g| self.c(g)).max().unwrap_or(0)
    }
    /// The global port ids `scope` covers on `f` (a PGFT), in order.
    pub fn ports_in(f: &Fabric, scope: Scope) -> Vec<usize> {
        let g = f.as_pgft().expect("a PGFT");
        (0..f.num_ports_total())
            .filter(|&p| scope.covers(g.level_of(f.port_of_id(p).0), g.h))
            .map(|p| p as usize)
            .collect()
    }
    /// C_topo over the ports `scope` covers.
    pub fn c_topo_in(&self, f: &Fabric, scope: Scope) -> u32 {
        Self::ports_in(f, scope)
            .into_iter()
            .map(|g| self.c(g))
            .max()
            .unwrap_or(0)
    }
}

/// Counts distinct sources or destinations per port: a port counts group `key`'s weight the
/// first time it is seen in that group's pass.
struct Marker {
    last: Vec<u32>,
    count: Vec<u32>,
}

impl Marker {
    fn new(ports: usize) -> Marker {
        Marker {
            last: vec![u32::MAX; ports],
            count: vec![0; ports],
        }
    }
    #[inline]
    fn mark(&mut self, g: u32, key: u32, weight: u32) {
        let g = g as usize;
        if self.last[g] != key {
            self.last[g] = key;
            self.count[g] += weight;
        }
    }
}

/// The switch-to-switch ports a route from `src` to `dst` takes from leaf `from` until it
/// arrives at the leaf `to` (the destination's leaf), handed to `visit` as global port ids.
#[inline]
fn walk(
    f: &Fabric,
    r: &StaticRouting,
    from: NodeId,
    to: NodeId,
    src: NodeId,
    dst: NodeId,
    mut visit: impl FnMut(u32),
) {
    let mut n = from;
    while n != to {
        let p = r.port(n, src, dst);
        visit(f.port_id(n, p));
        n = f.peer(n, p, 0).0;
    }
}

/// Analyses `pattern` under routing `r` on fabric `f` (which must be `r`'s PGFT).
pub fn analyze(f: &Fabric, r: &StaticRouting, pattern: &Pattern) -> Contention {
    let ports = f.num_ports_total() as usize;
    let (mut srcs, mut dsts) = (Marker::new(ports), Marker::new(ports));
    let leaf_of = |h: NodeId| f.peer(h, 0, 0).0;
    match pattern {
        Pattern::Pairs(pairs) => {
            let mut by_src = pairs.clone();
            by_src.sort_unstable();
            for &(s, d) in &by_src {
                walk(f, r, leaf_of(s), leaf_of(d), s, d, |g| srcs.mark(g, s, 1));
            }
            let mut by_dst = by_src;
            by_dst.sort_unstable_by_key(|&(s, d)| (d, s));
            for &(s, d) in &by_dst {
                walk(f, r, leaf_of(s), leaf_of(d), s, d, |g| dsts.mark(g, d, 1));
            }
        }
        Pattern::Dense { src, dst } => {
            dense(f, r, src, dst, &mut srcs, &mut dsts);
        }
    }
    endpoints(f, pattern, &mut srcs, &mut dsts);
    Contention {
        src: srcs.count,
        dst: dsts.count,
        routes: pattern.routes(),
    }
}

/// The leaves (level-1 switches, in order) and, per leaf, how many of its hosts are in `set`.
fn leaf_counts(f: &Fabric, set: &[bool]) -> Vec<(NodeId, u32)> {
    let mut out: Vec<(NodeId, u32)> = vec![];
    for h in 0..f.num_hosts {
        let leaf = f.peer(h, 0, 0).0;
        if out.last().map(|l| l.0) != Some(leaf) {
            out.push((leaf, 0));
        }
        out.last_mut().expect("a leaf").1 += set[h as usize] as u32;
    }
    out
}

/// Dense patterns: walks per (source leaf, destination) or (source, destination leaf).
fn dense(
    f: &Fabric,
    r: &StaticRouting,
    src: &[bool],
    dst: &[bool],
    srcs: &mut Marker,
    dsts: &mut Marker,
) {
    let leaf_of = |h: NodeId| f.peer(h, 0, 0).0;
    let hosts = 0..f.num_hosts;
    if r.per_route() {
        // Every route draws its own ports: walk each, in source then destination order.
        let of =
            |set: &[bool]| -> Vec<NodeId> { hosts.clone().filter(|&h| set[h as usize]).collect() };
        let (ss, ds) = (of(src), of(dst));
        for &s in &ss {
            for &d in ds.iter().filter(|&&d| d != s) {
                walk(f, r, leaf_of(s), leaf_of(d), s, d, |g| srcs.mark(g, s, 1));
            }
        }
        for &d in &ds {
            for &s in ss.iter().filter(|&&s| s != d) {
                walk(f, r, leaf_of(s), leaf_of(d), s, d, |g| dsts.mark(g, d, 1));
            }
        }
    } else if r.by_destination() {
        // Unit (leaf L, destination d): the sources of L all take the same path to d.
        let leaves = leaf_counts(f, src);
        for &(l, n_src) in leaves.iter().filter(|l| l.1 > 0) {
            for d in hosts.clone().filter(|&d| dst[d as usize]) {
                // `from_src` is any source of L: the routing does not read it.
                walk(f, r, l, leaf_of(d), d, d, |g| srcs.mark(g, l, n_src));
            }
        }
        // Routes to d from different leaves merge where they meet and coincide from there
        // (the routing reads only the switch and d): stop at a switch already passed for d.
        let mut passed = vec![u32::MAX; f.num_nodes() as usize];
        for d in hosts.clone().filter(|&d| dst[d as usize]) {
            let to = leaf_of(d);
            for &(l, _) in leaves.iter().filter(|l| l.1 > 0) {
                let mut n = l;
                while n != to && passed[n as usize] != d {
                    passed[n as usize] = d;
                    let p = r.port(n, d, d);
                    dsts.mark(f.port_id(n, p), d, 1);
                    n = f.peer(n, p, 0).0;
                }
            }
        }
    } else {
        // Unit (source s, leaf D): s takes the same path to every destination of D.
        let leaves = leaf_counts(f, dst);
        for s in hosts.clone().filter(|&s| src[s as usize]) {
            for &(l, _) in leaves.iter().filter(|l| l.1 > 0) {
                walk(f, r, leaf_of(s), l, s, first_host(f, l), |g| {
                    srcs.mark(g, s, 1)
                });
            }
        }
        for &(l, n_dst) in leaves.iter().filter(|l| l.1 > 0) {
            for s in hosts.clone().filter(|&s| src[s as usize]) {
                walk(f, r, leaf_of(s), l, s, first_host(f, l), |g| {
                    dsts.mark(g, l, n_dst)
                });
            }
        }
    }
}

/// The first host under leaf `l` (a source-keyed route to any host of `l` reaches `l` the
/// same way).
fn first_host(f: &Fabric, l: NodeId) -> NodeId {
    f.peer(l, 0, 0).0
}

/// The hosts' links and the leaves' links to hosts: one source (destination) each.
fn endpoints(f: &Fabric, pattern: &Pattern, srcs: &mut Marker, dsts: &mut Marker) {
    let n = f.num_hosts as usize;
    let (mut out_deg, mut in_deg) = (vec![0u64; n], vec![0u64; n]);
    match pattern {
        Pattern::Pairs(pairs) => {
            for &(s, d) in pairs {
                out_deg[s as usize] += 1;
                in_deg[d as usize] += 1;
            }
        }
        Pattern::Dense { src, dst } => {
            let (ns, nd) = (
                src.iter().filter(|&&x| x).count() as u64,
                dst.iter().filter(|&&x| x).count() as u64,
            );
            for h in 0..n {
                out_deg[h] = if src[h] { nd - dst[h] as u64 } else { 0 };
                in_deg[h] = if dst[h] { ns - src[h] as u64 } else { 0 };
            }
        }
    }
    for h in 0..f.num_hosts {
        let up = f.port_id(h, 0) as usize;
        if out_deg[h as usize] > 0 {
            srcs.count[up] = 1;
            dsts.count[up] = out_deg[h as usize].min(u32::MAX as u64) as u32;
        }
        let (leaf, port) = f.peer(h, 0, 0);
        let down = f.port_id(leaf, port) as usize;
        if in_deg[h as usize] > 0 {
            dsts.count[down] = 1;
            srcs.count[down] = in_deg[h as usize].min(u32::MAX as u64) as u32;
        }
    }
}

#[cfg(test)]
mod tests;
