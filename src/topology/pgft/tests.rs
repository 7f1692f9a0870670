//! Hand-checked small PGFTs: node and link counts, digits, ports, routes, and the fat tree
//! written as a PGFT.

use super::super::{test_fabric, Fabric, Route};
use super::Pgft;
use crate::scenario::{PgftConfig, Scenario, TopologyKind};

/// The seed's example: PGFT(3; 8,4,2; 1,2,1; 1,1,4).
pub(crate) fn seed_config() -> PgftConfig {
    PgftConfig {
        h: 3,
        m: vec![8, 4, 2],
        w: vec![1, 2, 1],
        p: vec![1, 1, 4],
        leaf_pattern: Some("7 compute + 1 io".into()),
        ..PgftConfig::default()
    }
}

pub(crate) fn pgft_scenario(c: PgftConfig) -> Scenario {
    let mut s = Scenario::default();
    s.topology.kind = TopologyKind::Pgft;
    s.topology.pgft = Some(c);
    s.validate().unwrap();
    s
}

/// Counted by hand from the seed's description: 64 nodes, 8 leaves, 4 L2 switches (2 per
/// subgroup), 2 top switches; 64 host links, 8 × 2 leaf-L2 links, 4 × 4 L2-top links.
#[test]
fn seed_example_counts_and_ports() {
    let f = Fabric::build(&pgft_scenario(seed_config()));
    assert_eq!(f.num_hosts, 64);
    assert_eq!(f.num_switches(), 8 + 4 + 2);
    // Every link appears once from each end: (64 + 16 + 16) links.
    assert_eq!(f.num_ports_total(), 2 * (64 + 16 + 16));
    let leaf0 = 64;
    assert_eq!((f.num_ports(leaf0), f.uplinks(leaf0)), (10, 2));
    let l2 = 64 + 8;
    assert_eq!((f.num_ports(l2), f.uplinks(l2)), (8, 4));
    let top = 64 + 8 + 4;
    assert_eq!((f.num_ports(top), f.uplinks(top)), (8, 0));
    // Leaf 0's uplinks go to the two L2 switches of subgroup 0 (nodes 72, 73); leaf 4 (the
    // first of subgroup 1) to 74, 75.
    assert_eq!(f.peer(leaf0, 8, 0).0, 72);
    assert_eq!(f.peer(leaf0, 9, 0).0, 73);
    assert_eq!(f.peer(leaf0 + 4, 8, 0).0, 74);
    // L2 switch 73 (subgroup 0, b2 = 1): four parallel links to top switch 77 (b2 = 1),
    // arriving at its down ports 0..4 (child 0); L2 74 (subgroup 1, b2 = 0) at 76's 4..8.
    for j in 0..4 {
        assert_eq!(f.peer(73, 4 + j, 0), (77, j));
        assert_eq!(f.peer(74, 4 + j, 0), (76, 4 + j));
    }
    let g = f.as_pgft().unwrap();
    assert_eq!(g.address(77), "(3,0,1,0)"); // top: b1 = 0, b2 = 1, b3 = 0
    assert_eq!(g.address(73), "(2,0,0,1)"); // a3 = 0, b1 = 0, b2 = 1
    assert_eq!(g.address(64 + 5), "(1,1,1,0)"); // leaf 5: a3 = 1, a2 = 1
    assert_eq!(g.address(13), "(0,0,1,5)");
}

#[test]
fn routes_go_up_until_the_destination_is_below_then_down() {
    let f = Fabric::build(&pgft_scenario(seed_config()));
    // Leaf 0 to host 3 (below): port 3; to host 9 (not below): both uplinks.
    assert_eq!(f.route(64, 3, 0), Route::Port(3));
    assert!(matches!(f.route(64, 9, 0), Route::Choice(c) if c.len() == 2 && c.get(0) == 8));
    // L2 72 to host 40 (subgroup 1): its 4 parallel uplinks; to host 9: down port 1 (leaf 1).
    assert!(matches!(f.route(72, 40, 0), Route::Choice(c) if c.len() == 4 && c.get(0) == 4));
    assert_eq!(f.route(72, 9, 0), Route::Port(1));
    // Top 76 to host 40: the 4 parallel links to subgroup 1 (ports 4..8).
    assert!(matches!(f.route(76, 40, 0), Route::Choice(c) if c.len() == 4 && c.get(0) == 4));
    assert!(f.has_parallel_down());
    assert_eq!(
        (f.lca_tier(0, 7), f.lca_tier(0, 8), f.lca_tier(0, 32)),
        (1, 2, 3)
    );
    assert_eq!(f.path(0, 40).len(), 6);
    assert_eq!(f.subtree(40, 1), (5, 8));
    assert_eq!(f.subtree(40, 2), (1, 2));
    assert_eq!(f.tier_uplinks(1), 2);
    assert_eq!(f.tier_uplinks(2), 4);
}

/// An XGFT with w > 1 at two levels: PGFT(3; 2,2,3; 1,2,2; 1,2,1): 12 hosts, 6 leaves,
/// level 2: 3 sub-trees × 2 = 6 switches, level 3: 4 switches; leaf ports 2 + 4.
#[test]
fn xgft_counts_and_symmetry() {
    let c = PgftConfig {
        h: 3,
        m: vec![2, 2, 3],
        w: vec![1, 2, 2],
        p: vec![1, 2, 1],
        ..PgftConfig::default()
    };
    let f = Fabric::build(&pgft_scenario(c));
    assert_eq!(f.num_hosts, 12);
    assert_eq!(f.num_switches(), 6 + 6 + 4);
    assert_eq!(f.num_ports(12), 2 + 4);
    // Level 2: 2 leaves × 2 links down + 2 up; level 3: 3 children.
    assert_eq!(f.num_ports(18), 4 + 2);
    assert_eq!(f.num_ports(24), 3);
    // Every host reaches every other in 2 × lca links, over any choice.
    for src in 0..12 {
        for dst in 0..12 {
            if src != dst {
                assert_eq!(f.hops(src, dst), 2 * f.lca_tier(src, dst) as u32);
            }
        }
    }
}

/// The k-ary three-level fat tree written as PGFT(3; k/2, k/2, k; 1, k/2, k/2; 1, 1, 1)
/// builds the same nodes, ports, links, classes, stages and routes as `kind = "fat_tree"`.
#[test]
fn fat_tree_as_pgft_is_the_same_fabric() {
    for k in [4, 6] {
        let ft = test_fabric(TopologyKind::FatTree, k);
        let h = k / 2;
        let pg = Fabric::build(&pgft_scenario(PgftConfig {
            h: 3,
            m: vec![h, h, k],
            w: vec![1, h, h],
            ..PgftConfig::default()
        }));
        assert_eq!(ft.num_nodes(), pg.num_nodes());
        assert_eq!(ft.num_hosts, pg.num_hosts);
        assert_eq!(ft.stage_names(), pg.stage_names());
        assert_eq!(ft.link_classes(), pg.link_classes());
        for n in 0..ft.num_nodes() {
            assert_eq!(ft.tier(n), pg.tier(n));
            assert_eq!(ft.num_ports(n), pg.num_ports(n), "node {n}");
            assert_eq!(ft.group_of(n, false), pg.group_of(n, false), "node {n}");
            assert_eq!(ft.group_of(n, true), pg.group_of(n, true), "node {n}");
            for p in 0..ft.num_ports(n) {
                assert_eq!(ft.peer(n, p, 0), pg.peer(n, p, 0), "node {n} port {p}");
                assert_eq!(ft.link(n, p), pg.link(n, p));
                assert_eq!(ft.stage(n, p), pg.stage(n, p));
            }
            if !ft.is_host(n) {
                for d in 0..ft.num_hosts {
                    assert_eq!(ft.route(n, d, 0), pg.route(n, d, 0));
                    if ft.tier(n) < 3 {
                        assert_eq!(ft.route_up(n, 0), pg.route_up(n, 0));
                    }
                }
            }
        }
        for t in 1..3 {
            assert_eq!(ft.tier_uplinks(t), pg.tier_uplinks(t));
        }
        for lvl in 1..4 {
            for d in 0..ft.num_hosts {
                assert_eq!(ft.subtree(d, lvl), pg.subtree(d, lvl));
            }
        }
        for a in 0..ft.num_hosts {
            for b in 0..ft.num_hosts {
                assert_eq!(ft.lca_tier(a, b), pg.lca_tier(a, b));
            }
        }
        assert_eq!(ft.num_groups(true), pg.num_groups(true));
        assert_eq!(ft.num_groups(false), pg.num_groups(false));
        assert_eq!(ft.as_pgft(), pg.as_pgft());
    }
}

/// Node types: the seed's pattern gives nodes 8i+7 the type "io".
#[test]
fn leaf_pattern_types() {
    let t = seed_config().host_types().unwrap();
    assert_eq!(t.names, ["compute", "io"]);
    assert_eq!(t.type_of.iter().filter(|&&x| x == 1).count(), 8);
    assert_eq!((t.type_of[7], t.type_of[8], t.type_of[63]), (1, 0, 1));
}

#[test]
fn digits_round_trip() {
    let g = Pgft::new(&[2, 2, 3], &[1, 2, 2], &[1, 2, 1]);
    for n in 0..g.num_nodes() {
        let (l, a, b) = g.split(n);
        assert_eq!(g.join(l, a, b), n);
    }
    assert_eq!(g.level_count(3), 4);
}

/// A leaf-spine is PGFT(2; hosts per leaf, leaves; 1, spines; 1, 1) with the same numbering
/// and ports (what the static routings address it by).
#[test]
fn leaf_spine_as_pgft_is_the_same_fabric() {
    let ls = test_fabric(TopologyKind::LeafSpine, 8);
    let g = ls.as_pgft().unwrap();
    assert_eq!((g.h, g.m(1), g.m(2), g.w(2)), (2, 4, 8, 4));
    let pg = Fabric::build(&pgft_scenario(PgftConfig {
        h: 2,
        m: vec![4, 8],
        w: vec![1, 4],
        ..PgftConfig::default()
    }));
    assert_eq!(ls.num_nodes(), pg.num_nodes());
    assert_eq!(ls.stage_names(), pg.stage_names());
    for n in 0..ls.num_nodes() {
        for p in 0..ls.num_ports(n) {
            assert_eq!(ls.peer(n, p, 0), pg.peer(n, p, 0), "node {n} port {p}");
        }
        if !ls.is_host(n) {
            for d in 0..ls.num_hosts {
                assert_eq!(ls.route(n, d, 0), pg.route(n, d, 0));
            }
        }
    }
}
