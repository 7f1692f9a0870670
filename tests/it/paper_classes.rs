//! The Ofan paper's qualitative classes (k = 8, unlimited buffers, load 1.0): as the message
//! grows 8× (0.5 MB → 4 MB), the max downlink queue of Simple RR and JSQ grows roughly
//! linearly, RSQ's and RPS's roughly as the square root, and Ofan's stays bounded.
//!
//! The growth exponent e = ln(q(4 MB) / q(0.5 MB)) / ln 8 is 1 for linear, 0.5 for square
//! root and 0 for bounded; queues are averaged over six seeds. The margins separate the
//! classes without pinning any number.
//!
//! Simple RR grows between the two classes in weft: exponent 0.69 here (6 seeds, 344 → 1,433
//! packets; 0.70 from 0.5 to 8 MB), where the paper reports linear growth. Three seeds gave
//! 0.81 before the inter-frame gap stopped delaying packets (issue 6, defect 2) and 0.73
//! after, so its test asserts what is robust: it grows clearly faster than the square-root
//! class, with queues several times larger.

use crate::common::{run, scenario};
use weft::scenario::{LbPolicy, TopologyKind};

/// Max downlink queue (packets) over the downward stages core→agg, agg→edge, edge→host.
fn max_downlink_pkts(policy: LbPolicy, message_bytes: u64) -> f64 {
    let seeds = [1u64, 2, 3, 4, 5, 6];
    let sum: u64 = seeds
        .iter()
        .map(|&seed| {
            let mut s = scenario(TopologyKind::FatTree, 8, policy, message_bytes);
            s.seed = seed;
            let o = run(&s, 2, 4);
            assert_eq!(o.flows_incomplete, 0);
            let names = o.stage_names;
            ["core_agg", "agg_edge", "edge_host"]
                .iter()
                .map(|st| o.stages[names.iter().position(|n| n == st).unwrap()].max_pkts)
                .max()
                .unwrap()
        })
        .sum();
    sum as f64 / seeds.len() as f64
}

fn growth(policy: LbPolicy) -> (f64, f64, f64) {
    let small = max_downlink_pkts(policy, 512 * 1024);
    let large = max_downlink_pkts(policy, 4 * 1024 * 1024);
    ((large / small).ln() / 8f64.ln(), small, large)
}

#[test]
fn jsq_grows_linearly() {
    let (e, s, l) = growth(LbPolicy::Jsq);
    assert!(
        e >= 0.75,
        "Jsq: exponent {e:.2} ({s} -> {l} packets) is not linear"
    );
}

#[test]
fn simple_rr_grows_faster_than_random_spraying() {
    let (e, s, l) = growth(LbPolicy::SimpleRr);
    for p in [LbPolicy::Rsq, LbPolicy::Rps] {
        let (e_p, _, l_p) = growth(p);
        assert!(
            e >= e_p + 0.1 && l >= 5.0 * l_p,
            "SimpleRr: exponent {e:.2} ({s} -> {l} packets) vs {p:?} {e_p:.2} (-> {l_p})"
        );
    }
}

#[test]
fn rsq_and_rps_grow_as_square_root() {
    for p in [LbPolicy::Rsq, LbPolicy::Rps] {
        let (e, s, l) = growth(p);
        assert!(
            (0.25..0.75).contains(&e),
            "{p:?}: exponent {e:.2} ({s} -> {l} packets) is not square-root"
        );
    }
}

#[test]
fn ofan_stays_bounded() {
    for p in [LbPolicy::Ofan, LbPolicy::Pofan] {
        let (e, s, l) = growth(p);
        assert!(
            e < 0.15 && l <= s + 8.0,
            "{p:?}: exponent {e:.2} ({s} -> {l} packets) is not bounded"
        );
    }
}

/// The Ofan paper's link-overload figure: under a random inter-pod permutation Ofan loads
/// every link of every stage exactly evenly (its pointers spread each destination's packets
/// over all uplinks in turn), while random spraying overloads its busiest link.
#[test]
fn ofan_loads_every_link_evenly_under_an_inter_pod_permutation() {
    for seed in [1u64, 2, 3] {
        let overload = |policy| {
            let mut s = scenario(TopologyKind::FatTree, 8, policy, 256 * 1024);
            s.seed = seed;
            s.workload.inter_pod = true;
            let o = run(&s, 1, 1);
            o.stages
                .iter()
                .map(|st| st.link_overload().unwrap())
                .fold(0.0f64, f64::max)
        };
        let ofan = overload(LbPolicy::Ofan);
        let rsq = overload(LbPolicy::Rsq);
        assert!(
            (ofan - 1.0).abs() < 1e-9,
            "seed {seed}: ofan overload {ofan}"
        );
        assert!(rsq > 1.05, "seed {seed}: rsq overload {rsq}");
    }
}
