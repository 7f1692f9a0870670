//! Mixed deployments (`lb.mixed`): switch policies on selected switches, e.g. the Ofan
//! paper's incremental deployment (half Ofan, half AR).

use crate::common::{results, run, scenario};
use weft::scenario::{LbPolicy, MixSelect, MixedDeployment, TopologyKind};

fn mix(select: MixSelect, fraction: Option<f64>) -> weft::scenario::Scenario {
    let mut s = scenario(TopologyKind::FatTree, 8, LbPolicy::Ofan, 128 * 1024);
    s.lb.mixed = vec![MixedDeployment {
        policy: LbPolicy::Ar,
        select,
        fraction,
    }];
    s.validate().expect("valid");
    s
}

#[test]
fn selectors_pick_the_switches_they_name() {
    let count = |s: &weft::scenario::Scenario| {
        let m = weft::model::Model::build(s).unwrap();
        let f = &m.fabric;
        let ar = |tier: u8| {
            (f.num_hosts..f.num_nodes())
                .filter(|&n| f.tier(n) == tier && m.lb.policy_of(f, n) == LbPolicy::Ar)
                .count()
        };
        (ar(1), ar(2), ar(3))
    };
    // k = 8: 32 edge, 32 aggregation, 16 core switches; 8 pods of 4 + 4.
    assert_eq!(count(&mix(MixSelect::Edge, None)), (32, 0, 0));
    assert_eq!(count(&mix(MixSelect::Aggregation, None)), (0, 32, 0));
    // Half of the 64 switches that choose (cores never do).
    let (e, a, c) = count(&mix(MixSelect::RandomSwitches, Some(0.5)));
    assert_eq!((e + a, c), (32, 0));
    // Half the pods: 4 pods of 4 edge and 4 aggregation switches.
    assert_eq!(count(&mix(MixSelect::RandomPods, Some(0.5))), (16, 16, 0));
}

#[test]
fn mixed_fabrics_complete_and_are_identical_for_any_split() {
    for (select, fraction) in [
        (MixSelect::RandomSwitches, Some(0.5)),
        (MixSelect::RandomPods, Some(0.5)),
        (MixSelect::Edge, None),
    ] {
        let s = mix(select, fraction);
        let o = run(&s, 1, 1);
        assert_eq!(o.flows_incomplete, 0, "{select:?}");
        let reference = results(&s, 1, 1);
        assert_eq!(results(&s, 2, 4), reference, "{select:?}");
        // Mixing changes decisions: not the all-Ofan or all-AR result.
        let mut all_ofan = s.clone();
        all_ofan.lb.mixed.clear();
        assert_ne!(results(&all_ofan, 1, 1), reference, "{select:?}");
    }
}
