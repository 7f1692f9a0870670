//! Transports other than the paced one: `host.cc = "constant"` (a fixed window per flow) on
//! the reliable transport.

use crate::common::{results, run, scenario};
use weft::scenario::{CcKind, LbPolicy, TopologyKind};

fn constant(window_bdp: f64) -> weft::scenario::Scenario {
    let mut s = scenario(TopologyKind::FatTree, 4, LbPolicy::Ofan, 256 * 1024);
    s.host.cc = CcKind::Constant;
    s.host.window_bdp = window_bdp;
    s
}

#[test]
fn a_window_above_the_bdp_never_binds() {
    let paced = run(
        &scenario(TopologyKind::FatTree, 4, LbPolicy::Ofan, 256 * 1024),
        1,
        1,
    );
    let windowed = run(&constant(1.5), 1, 1);
    assert_eq!(windowed.cct_ps(), paced.cct_ps());
    // The reliable transport's ACKs carry a cumulative point, so an ACK overtaken by a later
    // one finds its packet already acknowledged; everything else is the same.
    let mut c = windowed.metrics.counters;
    assert!(
        c.stale_acks < c.acks_delivered / 100,
        "{} stale ACKs",
        c.stale_acks
    );
    c.stale_acks = paced.metrics.counters.stale_acks;
    assert_eq!(c, paced.metrics.counters);
}

/// With a window of W packets a flow of m packets needs at least ceil(m / W) round trips,
/// and on an otherwise uncongested permutation not many more.
#[test]
fn a_small_window_takes_a_round_trip_per_window() {
    // One packet alone, 6 hops out and back: the base round trip.
    let one = scenario(TopologyKind::FatTree, 4, LbPolicy::Ofan, 4096);
    let rtt_ps = run(&one, 1, 1).cct_lower_bound_ps;
    let m = 64u64; // 256 KiB in 4 KiB packets
    let mut last = 0;
    for window_bdp in [0.05, 0.2] {
        let s = constant(window_bdp);
        let model = weft::model::Model::build(&s).unwrap();
        let w = match model.transport {
            weft::transport::TransportParams::Reliable {
                cc: weft::transport::CcChoice::Constant { cwnd_bytes },
                ..
            } => cwnd_bytes / (4096 + 62),
            _ => unreachable!(),
        };
        let o = run(&s, 2, 4);
        assert_eq!(o.flows_incomplete, 0);
        let cct = o.cct_ps().unwrap();
        let rounds = m.div_ceil(w);
        assert!(
            cct >= (rounds - 1) * rtt_ps,
            "window {w}: CCT {cct} ps < {} round trips of {rtt_ps} ps",
            rounds - 1
        );
        assert!(
            cct <= (rounds + 1) * rtt_ps * 13 / 10,
            "window {w}: CCT {cct} ps far above {rounds} round trips of {rtt_ps} ps"
        );
        if last > 0 {
            assert!(cct < last, "a larger window must be faster");
        }
        last = cct;
    }
}

#[test]
fn windowed_runs_are_identical_across_threads_and_partitions() {
    let s = constant(0.1);
    let reference = results(&s, 1, 1);
    for (threads, parts) in [(2, 4), (1, 5), (2, 6)] {
        assert_eq!(
            results(&s, threads, parts),
            reference,
            "{threads} threads, {parts} parts"
        );
    }
}
