//! Asymmetric fabrics: link rate overrides for a random fraction of a tier's links or for
//! single links (the PSP paper's "half of the links at half rate").

use crate::common;

#[test]
fn link_rate_overrides_pick_a_fraction_of_a_tier_and_single_links() {
    use weft::scenario::{LinkRateOverride, TopologyKind};
    let mut s = weft::scenario::Scenario::default();
    s.topology.kind = TopologyKind::LeafSpine;
    s.topology.k = 8;
    s.topology.link_rate_gbps = 400.0;
    s.topology.link_rates = vec![
        LinkRateOverride {
            rate_gbps: 200.0,
            tier: Some("leaf_spine".into()),
            fraction: Some(0.5),
            ..Default::default()
        },
        // Host 0's link at 100 Gb/s.
        LinkRateOverride {
            rate_gbps: 100.0,
            node: Some(0),
            port: Some(0),
            ..Default::default()
        },
    ];
    s.validate().unwrap();
    let m = weft::model::Model::build(&s).unwrap();
    let f = &m.fabric;
    let gbps = |n: u32, p: u16| f.link(n, p).rate.bps / 1_000_000_000;
    // 8 leaves x 4 spines = 32 leaf-spine links, half at 200 Gb/s in both directions.
    let slow: Vec<(u32, u16)> = (f.num_hosts..f.num_nodes())
        .flat_map(|n| (0..f.num_ports(n)).map(move |p| (n, p)))
        .filter(|&(n, p)| f.tier(f.peer(n, p, 0).0) > f.tier(n) && f.tier(n) > 0)
        .filter(|&(n, p)| gbps(n, p) == 200)
        .collect();
    assert_eq!(slow.len(), 16);
    for &(n, p) in &slow {
        let (pn, pp) = f.peer(n, p, 0);
        assert_eq!(gbps(pn, pp), 200, "both directions");
    }
    assert_eq!(gbps(0, 0), 100);
    let (leaf, lp) = f.peer(0, 0, 0);
    assert_eq!(gbps(leaf, lp), 100);
    // The run still completes, identically for any split.
    let o = common::run(&s, 1, 1);
    assert_eq!(o.flows_incomplete, 0);
    assert_eq!(common::results(&s, 2, 4), common::results(&s, 1, 1));
    // A port that does not exist is one clear error.
    s.topology.link_rates[1].port = Some(9);
    let e = weft::model::Model::build(&s).err().unwrap().to_string();
    assert!(
        e.contains("topology.link_rates[1]") && e.contains("no port 9"),
        "{e}"
    );
}
