//! C_topo on small PGFTs, computed by hand (see each test), and the dense walks checked
//! against route-by-route enumeration.

use super::*;
use crate::scenario::{LbPolicy, PgftConfig, Scenario, TopologyKind};

fn fabric(c: PgftConfig) -> Fabric {
    let mut s = Scenario::default();
    s.topology.kind = TopologyKind::Pgft;
    s.topology.pgft = Some(c);
    s.validate().unwrap();
    Fabric::build(&s)
}

/// The seed's PGFT(3; 8,4,2; 1,2,1; 1,1,4), "7 compute + 1 io" leaves.
fn seed() -> Fabric {
    fabric(PgftConfig {
        h: 3,
        m: vec![8, 4, 2],
        w: vec![1, 2, 1],
        p: vec![1, 1, 4],
        leaf_pattern: Some("7 compute + 1 io".into()),
        ..PgftConfig::default()
    })
}

fn run(f: &Fabric, routing: LbPolicy, pattern: &str) -> Contention {
    let r = StaticRouting::new(routing, f.as_pgft().unwrap(), f.host_types(), 1);
    let p = Pattern::parse(pattern, f.host_types(), 1).unwrap();
    analyze(f, &r, &p)
}

/// D-mod-k, compute → I/O: every I/O node 8i+7 is odd, so every leaf sends all its I/O
/// traffic up port 8 + 1: 7 compute sources to the 7 I/O nodes of other leaves, C = 7.
/// Leaf 0's port 9 is global port (64 host ports + 9).
#[test]
fn dmodk_compute_to_io_is_seven() {
    let f = seed();
    let c = run(&f, LbPolicy::Dmodk, "compute-io");
    assert_eq!(c.c_topo(), 7);
    let g = f.port_id(64, 9) as usize;
    assert_eq!((c.src[g], c.dst[g]), (7, 7));
    let unused = f.port_id(64, 8) as usize;
    assert_eq!((c.src[unused], c.dst[unused]), (0, 0));
    // L2 switch 73's parallel link ⌊(8i+7)/2⌋ mod 4 = 3 carries all 28 compute nodes of
    // subgroup 0 to the 4 I/O nodes of subgroup 1.
    let l = f.port_id(73, 4 + 3) as usize;
    assert_eq!((c.src[l], c.dst[l]), (28, 4));
    assert_eq!(c.routes, 56 * 8);
}

/// G-D-mod-k: I/O node i is 56 + i, so leaves alternate their up ports by i mod 2: leaf 0's
/// 7 other I/O nodes split 4 (odd i) / 3 (even i), C = 4; above, ⌊(56+i)/2⌋ mod 4 and
/// i mod 2 give each L2 link one I/O destination.
#[test]
fn gdmodk_compute_to_io_is_four() {
    let f = seed();
    let c = run(&f, LbPolicy::Gdmodk, "compute-io");
    assert_eq!(c.c_topo(), 4);
    let (p8, p9) = (f.port_id(64, 8) as usize, f.port_id(64, 9) as usize);
    assert_eq!((c.dst[p8], c.dst[p9]), (3, 4));
    for l2 in 72..76 {
        for j in 0..4 {
            assert!(c.dst[f.port_id(l2, 4 + j) as usize] <= 1);
        }
    }
}

/// S-mod-k: leaf 0's sources split by parity 4 / 3 over its two uplinks, each carrying all 7
/// other I/O nodes: C = 4; L2 links ⌊s/2⌋ mod 4 carry 4 sources each to the 4 remote I/O
/// nodes: C = 4.
#[test]
fn smodk_compute_to_io_is_four() {
    let f = seed();
    let c = run(&f, LbPolicy::Smodk, "compute-io");
    assert_eq!(c.c_topo(), 4);
    let p8 = f.port_id(64, 8) as usize;
    assert_eq!((c.src[p8], c.dst[p8]), (4, 7));
    let l = f.port_id(72, 4) as usize;
    assert_eq!((c.src[l], c.dst[l]), (4, 4));
}

/// Zahavi (D-mod-k, 2010): on a full-bisection fat tree a shift permutation loads every link with
/// at most one flow under D-mod-k, so C_topo = 1 (k-ary 3-tree k = 4 and a 2-level tree).
#[test]
fn dmodk_shift_is_contention_free_on_full_bisection_trees() {
    let ft = fabric(PgftConfig {
        h: 3,
        m: vec![2, 2, 4],
        w: vec![1, 2, 2],
        ..PgftConfig::default()
    });
    let two = fabric(PgftConfig {
        h: 2,
        m: vec![4, 8],
        w: vec![1, 4],
        ..PgftConfig::default()
    });
    for f in [&ft, &two] {
        for k in 1..f.num_hosts {
            let c = run(f, LbPolicy::Dmodk, &format!("shift:{k}"));
            assert_eq!(c.c_topo(), 1, "shift {k}");
            for g in 0..c.src.len() {
                assert!(c.src[g] <= 1 && c.dst[g] <= 1, "shift {k}: port {g}");
            }
        }
    }
    // Guard: the same check fails where contention exists (all-to-all).
    assert!(run(&ft, LbPolicy::Dmodk, "all-to-all").c_topo() > 1);
}

/// D-mod-k on a 2-level tree with m_1 = w_2 = k: each spine→leaf link
/// carries traffic for exactly one destination (all-to-all).
#[test]
fn dmodk_two_level_down_links_carry_one_destination() {
    let f = fabric(PgftConfig {
        h: 2,
        m: vec![4, 8],
        w: vec![1, 4],
        ..PgftConfig::default()
    });
    let c = run(&f, LbPolicy::Dmodk, "all-to-all");
    // Spines are nodes 32 + 8 .. 32 + 12; every port leads down to a leaf.
    for spine in 40..44 {
        for p in 0..8 {
            assert_eq!(
                c.dst[f.port_id(spine, p) as usize],
                1,
                "spine {spine} port {p}"
            );
        }
    }
}

/// PGFT(3; 2,2,2; 1,2,1; 1,1,2): 8 hosts, leaves 8..11 (2 hosts each; down ports 0, 1, up
/// ports 2 + b to L2 (2, a, b)), L2 switches 12..15 ((2, a, b) = 12 + 2a + b; down ports 0, 1
/// to leaves 2a, 2a + 1; up ports 2 + j, parallel link j to top b), tops 16, 17 (top b: down
/// port 2c + j, link j to L2 (2, c, b)). All-to-all, 56 routes.
fn small() -> Fabric {
    fabric(PgftConfig {
        h: 3,
        m: vec![2, 2, 2],
        w: vec![1, 2, 1],
        p: vec![1, 1, 2],
        ..PgftConfig::default()
    })
}

/// C_topo per scope on the small PGFT, all-to-all, by hand.
///
/// D-mod-k: leaves climb on up port 2 + (d mod 2), so top b serves the destinations with
/// d mod 2 = b; L2 up link and top down link ⌊d/2⌋ mod 2. Top b's down port 2c + j carries
/// exactly one destination (b = 1: d = 1, 3, 5, 7 on ports 0, 1, 2, 3), from the 4 hosts of
/// the other sub-group: top C = 1. An L2 up
/// link carries one destination (L2 13: d = 5 on link 0, 7 on link 1), an L2 down port the
/// one destination of parity b on that leaf (L2 13 → leaf 8: d = 1): above-leaf C = 1. Leaf
/// 8's up port 3 carries its 2 sources to the 3 odd destinations 3, 5, 7 elsewhere: C = 2,
/// so all-ports C = 2.
///
/// S-mod-k: the same digits of s. Top b carries the sources with s mod 2 = b, and its down
/// port (c, j) the one source of the other sub-group with ⌊s/2⌋ mod 2 = j (top 17 port 2:
/// s = 1 to hosts 4..7): top C = 1. L2 up links carry one source each; L2 13's down port to
/// leaf 8 carries the odd sources off leaf 8, 3 (via leaf 9) and 5, 7 (via top 17), to both
/// hosts of leaf 8: C = min(3, 2) = 2, so above-leaf C = 2. Leaf up ports carry one source
/// (C = 1) and host links one source or destination: all-ports C = 2.
#[test]
fn c_topo_per_scope_on_a_small_pgft() {
    let f = small();
    let d = run(&f, LbPolicy::Dmodk, "all-to-all");
    assert_eq!(d.c_topo_in(&f, Scope::Top), 1);
    assert_eq!(d.c_topo_in(&f, Scope::AboveLeaf), 1);
    assert_eq!(d.c_topo_in(&f, Scope::All), 2);
    assert_eq!(d.c_topo(), 2);
    let leaf_up = f.port_id(8, 3) as usize;
    assert_eq!((d.src[leaf_up], d.dst[leaf_up]), (2, 3));
    for p in 0..4 {
        let g = f.port_id(17, p) as usize;
        assert_eq!((d.src[g], d.dst[g]), (4, 1), "top 17 port {p}");
    }
    let s = run(&f, LbPolicy::Smodk, "all-to-all");
    assert_eq!(s.c_topo_in(&f, Scope::Top), 1);
    assert_eq!(s.c_topo_in(&f, Scope::AboveLeaf), 2);
    assert_eq!(s.c_topo_in(&f, Scope::All), 2);
    let top = f.port_id(17, 2) as usize;
    assert_eq!((s.src[top], s.dst[top]), (1, 4));
    let l2_down = f.port_id(13, 0) as usize;
    assert_eq!((s.src[l2_down], s.dst[l2_down]), (3, 2));
    // The scopes' port sets: 2 tops × 4 ports; the 4 L2s' 4 ports more; in all, the 8 hosts'
    // 1, 4 leaves' 4, 4 L2s' 4 and 2 tops' 4: 8 + 16 + 16 + 8 = 48.
    assert_eq!(Contention::ports_in(&f, Scope::Top).len(), 8);
    assert_eq!(Contention::ports_in(&f, Scope::AboveLeaf).len(), 24);
    assert_eq!(Contention::ports_in(&f, Scope::All).len(), 48);
}

/// The PGFT routing paper's example, compute → I/O: its C_topo (top-ports) D-mod-k 4,
/// S-mod-k 4, G-D-mod-k 1, G-S-mod-k 4; every port (the leaves' up ports, 7 sources and
/// 7 remote I/O destinations per leaf): 7, 4, 4, 4.
#[test]
fn paper_example_values_per_scope() {
    let f = seed();
    for (routing, top, all) in [
        (LbPolicy::Dmodk, 4, 7),
        (LbPolicy::Smodk, 4, 4),
        (LbPolicy::Gdmodk, 1, 4),
        (LbPolicy::Gsmodk, 4, 4),
    ] {
        let c = run(&f, routing, "compute-io");
        assert_eq!(c.c_topo_in(&f, Scope::Top), top, "{routing:?} top");
        assert_eq!(c.c_topo_in(&f, Scope::All), all, "{routing:?} all");
        assert_eq!(c.c_topo(), all);
    }
    // D-mod-k: top 77's port 3 (the last of its 4 ports to sub-group 0) carries the 28
    // compute nodes of sub-group 1 to the 4 I/O nodes of sub-group 0 (the paper's (2,0,1):7).
    let c = run(&f, LbPolicy::Dmodk, "compute-io");
    let g = f.port_id(77, 3) as usize;
    assert_eq!((c.src[g], c.dst[g]), (28, 4));
}

/// The per-route random routing draws every route's ports independently: routes from
/// different sources of one leaf to one destination leave the leaf on different ports (the
/// per-destination table sends them all the same way), and each leaf up port gets about
/// half the routes.
#[test]
fn per_route_random_draws_per_route() {
    let f = seed();
    let g = f.as_pgft().unwrap();
    let r = StaticRouting::random_per_route(g, 1);
    let table = StaticRouting::new(LbPolicy::Random, g, f.host_types(), 1);
    assert!(r.per_route() && !r.by_destination());
    let mut differ = 0;
    let mut up = [0u32; 2];
    for d in 8..64 {
        let ports: Vec<u16> = (0..7).map(|s| r.port(64, s, d)).collect();
        differ += ports.iter().any(|&p| p != ports[0]) as u32;
        for p in ports {
            up[p as usize - 8] += 1;
        }
        let fixed: Vec<u16> = (0..7).map(|s| table.port(64, s, d)).collect();
        assert!(
            fixed.iter().all(|&p| p == fixed[0]),
            "per-destination table, d {d}"
        );
    }
    // 56 destinations, 7 routes each: all 7 on one port has probability 2/128 per d.
    assert!(differ >= 50, "{differ} of 56 destinations split");
    assert!((160..232).contains(&up[0]), "{up:?}");
    // The same at a top switch's 4 parallel down links to sub-group 0: routes to I/O node 7
    // from the 28 compute nodes of sub-group 1 do not all take one link.
    let links: std::collections::BTreeSet<u16> = (32..64)
        .filter(|s| s % 8 != 7)
        .map(|s| r.port(76, s, 7))
        .collect();
    assert!(links.len() > 1, "{links:?}");
    // A draw depends on the seed.
    let other = StaticRouting::random_per_route(g, 2);
    assert!((0..64).any(|d| (0..7).any(|s| r.port(64, s, d) != other.port(64, s, d))));
}

/// C_topo of the per-route Random over 100 draws (seeds 1 to 100). The paper reports "values
/// of either 3 or 4"; per route, each I/O node's 28 routes from the other sub-group spread
/// over the 8 top ports leading to it, so a top port misses a given I/O node with
/// probability (7/8)^28 ≈ 0.024 and carries all 4 with probability ≈ 0.9, and C_topo = 3
/// would need all 16 top ports (about 14 routes, 13 sources each) to miss one: ≈ 10^-16.
/// So every draw gives 4 at the top ports, and 7 at every port (a leaf up port carries ~half
/// of 49 routes: its 7 sources and, almost surely, all 7 remote I/O nodes).
#[test]
fn per_route_random_over_100_draws() {
    let f = seed();
    let g = f.as_pgft().unwrap();
    let p = Pattern::parse("compute-io", f.host_types(), 1).unwrap();
    let mut top = std::collections::BTreeMap::new();
    let mut all = std::collections::BTreeMap::new();
    for seed in 1..=100 {
        let c = analyze(&f, &StaticRouting::random_per_route(g, seed), &p);
        *top.entry(c.c_topo_in(&f, Scope::Top)).or_insert(0) += 1;
        *all.entry(c.c_topo_in(&f, Scope::All)).or_insert(0) += 1;
    }
    assert_eq!(top.into_iter().collect::<Vec<_>>(), [(4, 100)]);
    assert_eq!(all.into_iter().collect::<Vec<_>>(), [(7, 100)]);
}

/// The dense walks (per leaf and destination, or source and leaf) count exactly what
/// enumerating every route does.
#[test]
fn dense_patterns_match_route_by_route_enumeration() {
    let f = seed();
    for routing in crate::topology::pgft::routing::STATIC_ROUTINGS {
        for pattern in ["all-to-all", "compute-io", "io-compute"] {
            let r = StaticRouting::new(routing, f.as_pgft().unwrap(), f.host_types(), 7);
            check(&f, &r, pattern, routing);
        }
    }
    let r = StaticRouting::random_per_route(f.as_pgft().unwrap(), 7);
    for pattern in ["all-to-all", "compute-io", "io-compute"] {
        check(&f, &r, pattern, LbPolicy::Random);
    }
    fn check(f: &Fabric, r: &StaticRouting, pattern: &str, routing: LbPolicy) {
        let dense = Pattern::parse(pattern, f.host_types(), 1).unwrap();
        let Pattern::Dense { src, dst } = &dense else {
            unreachable!()
        };
        let pairs: Vec<(u32, u32)> = (0..64)
            .flat_map(|s| (0..64).map(move |d| (s, d)))
            .filter(|&(s, d)| s != d && src[s as usize] && dst[d as usize])
            .collect();
        let a = analyze(f, r, &dense);
        let b = analyze(f, r, &Pattern::Pairs(pairs));
        assert_eq!(a.src, b.src, "{routing:?} {pattern}");
        assert_eq!(a.dst, b.dst, "{routing:?} {pattern}");
        assert_eq!(a.routes, b.routes);
    }
}
