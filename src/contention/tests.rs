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

/// ALGORITHMS.md A17: on a full-bisection fat tree a shift permutation loads every link with
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

/// ALGORITHMS.md A17: 2-level tree with m_1 = w_2 = k: under D-mod-k each spine→leaf link
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

/// The dense walks (per leaf and destination, or source and leaf) count exactly what
/// enumerating every route does.
#[test]
fn dense_patterns_match_route_by_route_enumeration() {
    let f = seed();
    for routing in crate::topology::pgft::routing::STATIC_ROUTINGS {
        for pattern in ["all-to-all", "compute-io", "io-compute"] {
            let r = StaticRouting::new(routing, f.as_pgft().unwrap(), f.host_types(), 7);
            let dense = Pattern::parse(pattern, f.host_types(), 1).unwrap();
            let Pattern::Dense { src, dst } = &dense else {
                unreachable!()
            };
            let pairs: Vec<(u32, u32)> = (0..64)
                .flat_map(|s| (0..64).map(move |d| (s, d)))
                .filter(|&(s, d)| s != d && src[s as usize] && dst[d as usize])
                .collect();
            let a = analyze(&f, &r, &dense);
            let b = analyze(&f, &r, &Pattern::Pairs(pairs));
            assert_eq!(a.src, b.src, "{routing:?} {pattern}");
            assert_eq!(a.dst, b.dst, "{routing:?} {pattern}");
            assert_eq!(a.routes, b.routes);
        }
    }
}
