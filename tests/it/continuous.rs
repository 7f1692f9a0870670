//! The continuous-load workload (PSP set-up): back-to-back messages to random hosts of other
//! leaves at an offered load, with time-sampled buffer occupancy and loss rate.

use crate::common::{results, run, scenario};
use weft::scenario::{BufferBytes, LbPolicy, Scenario, TopologyKind, WorkloadKind};

fn continuous(policy: LbPolicy, load: f64) -> Scenario {
    let mut s = scenario(TopologyKind::LeafSpine, 8, policy, 16 * 1024);
    s.workload.kind = WorkloadKind::Continuous;
    s.workload.load = Some(load);
    s.workload.duration_us = Some(20.0);
    s.validate().expect("valid");
    s
}

#[test]
fn hosts_offer_the_load_for_the_duration_and_occupancy_is_sampled() {
    let s = continuous(LbPolicy::Rsq, 0.5);
    let o = run(&s, 1, 1);
    assert_eq!(o.flows_incomplete, 0);
    // 16 KB messages: 4 packets of 4158 + 20 B on the wire at 800 Gb/s = 167.12 ns, one
    // every 334.24 ns at load 0.5: 59 messages in 20 µs per host, 32 hosts.
    assert_eq!(o.flows_total, 32 * 59);
    let series = o.metrics.series.as_ref().unwrap();
    let samples: u64 = series.occupancy.iter().map(|h| h.len()).sum();
    let ports: u64 = o.stages.iter().map(|st| st.ports).sum();
    let instants = o.end_ps / series.interval_ps + 1;
    assert_eq!(samples, ports * instants, "every port at every instant");
    let r = results(&s, 1, 1);
    let all = &r["buffer_occupancy"]["all"];
    assert!(all["p99_bytes"].as_u64().unwrap() <= all["max_bytes"].as_u64().unwrap());
    assert_eq!(r["loss_rate"], 0.0);
}

#[test]
fn finite_buffers_lose_packets_and_results_do_not_depend_on_the_split() {
    let mut s = continuous(LbPolicy::Rsq, 1.0);
    s.switch.buffer_bytes = BufferBytes::Bytes(10_000);
    s.switch.ecn_threshold_bytes = 10_000;
    s.validate().unwrap();
    let reference = results(&s, 1, 1);
    let loss = reference["loss_rate"].as_f64().unwrap();
    assert!(loss > 0.0 && loss < 0.5, "loss rate {loss}");
    for (threads, parts) in [(2, 3), (2, 8)] {
        assert_eq!(results(&s, threads, parts), reference, "{threads}x{parts}");
    }
}
