//! Per-interval utilization (`timeseries.csv`'s `_util` columns, `results.utilization_peak`):
//! a port's wire time is split across the intervals its frames span, so no interval of any
//! stage exceeds its capacity, and hosts sending at line rate fill theirs.

use crate::common::{results, scenario};
use weft::scenario::{LbPolicy, TopologyKind};

/// Ofan's 256 KB permutation on k = 4, hosts paced at line rate, sampled every 0.2 µs: about
/// five 4 KB frames per interval, so counting a frame whole at its last bit (as the series
/// did) would put a host link at 6/5 of its capacity in some intervals.
#[test]
fn no_interval_exceeds_capacity_and_line_rate_senders_fill_theirs() {
    let mut s = scenario(TopologyKind::FatTree, 4, LbPolicy::Ofan, 256 * 1024);
    s.report.timeseries_us = 0.2;
    s.validate().unwrap();
    let r = results(&s, 1, 1);
    let peaks = r["utilization_peak"].as_object().expect("a map per stage");
    assert_eq!(peaks.len(), 6, "every fat-tree stage: {peaks:?}");
    for (stage, u) in peaks {
        let u = u.as_f64().unwrap();
        assert!(u <= 1.0 + 1e-6, "{stage}: peak {u} above capacity");
        assert!(u > 0.0, "{stage}: the permutation crosses every stage");
    }
    let host_edge = peaks["host_edge"].as_f64().unwrap();
    assert!(
        host_edge > 0.99,
        "line-rate hosts fill their links: {host_edge}"
    );
}

/// At half the line rate the hosts' links carry half their capacity over an interval that
/// holds many frames (2 µs: about 24 frame times).
#[test]
fn paced_hosts_fill_their_share_of_the_link() {
    let mut s = scenario(TopologyKind::FatTree, 4, LbPolicy::Ofan, 1024 * 1024);
    s.host.load = 0.5;
    s.report.timeseries_us = 2.0;
    s.validate().unwrap();
    let r = results(&s, 1, 1);
    let host_edge = r["utilization_peak"]["host_edge"].as_f64().unwrap();
    assert!(
        (0.49..=0.53).contains(&host_edge),
        "host_edge peak {host_edge}"
    );
}
