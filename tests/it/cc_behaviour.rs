//! Congestion control end to end (issue 7's behaviour tests): a lone flow reaches line rate
//! under every CCA, a DCTCP incast holds the bottleneck queue near the ECN threshold at line
//! rate, and NSCC flows sharing a bottleneck converge to a fair share.

use crate::common;
use weft::metrics::Timeseries;
use weft::scenario::{BufferBytes, CcKind, LbPolicy, Scenario, WorkloadKind};
use weft::sim::{simulate, RunOptions, RunOutput};

/// A k = 4 fat tree (16 hosts, 800 Gb/s, 0.5 µs links) carrying `flows` (src, dst, bytes),
/// all starting at 0, written as an htsim connection matrix.
fn with_flows(dir: &tempfile::TempDir, cc: CcKind, flows: &[(u32, u32, u64)]) -> Scenario {
    let mut cm = format!("Nodes 16\nConnections {}\n", flows.len());
    for (i, (s, d, b)) in flows.iter().enumerate() {
        cm += &format!("{s}->{d} id {} start 0 size {b}\n", i + 1);
    }
    let path = dir.path().join("flows.cm");
    std::fs::write(&path, cm).unwrap();
    let mut s = common::scenario(
        weft::scenario::TopologyKind::FatTree,
        4,
        LbPolicy::Ofan,
        4096,
    );
    s.workload.kind = WorkloadKind::Matrix;
    s.workload.file = Some(path);
    s.host.cc = cc;
    s
}

fn run_sampled(s: &Scenario) -> RunOutput {
    s.validate().expect("valid scenario");
    simulate(s, &RunOptions::default()).expect("run succeeds")
}

/// Goodput in Gb/s over each sampling interval.
fn goodput_gbps(series: &Timeseries) -> Vec<f64> {
    let dt_s = series.interval_ps as f64 * 1e-12;
    series
        .goodput_bytes
        .iter()
        .map(|&b| b as f64 * 8.0 / dt_s / 1e9)
        .collect()
}

/// Largest payload rate of one 800 Gb/s link: 4096 B of every 4158 + 20 B on the wire.
const LINE_GOODPUT_GBPS: f64 = 800.0 * 4096.0 / 4178.0;

#[test]
fn a_lone_flow_reaches_line_rate_under_every_cca() {
    let dir = tempfile::tempdir().unwrap();
    for cc in [
        CcKind::Constant,
        CcKind::Dctcp,
        CcKind::Nscc,
        CcKind::Swift,
        CcKind::Mswift,
    ] {
        // 16 MB from host 0 to host 15 (6 hops), nothing else in the fabric.
        let mut s = with_flows(&dir, cc, &[(0, 15, 16 << 20)]);
        s.switch.buffer_bytes = BufferBytes::Bytes(800_000);
        let o = run_sampled(&s);
        assert_eq!(o.flows_incomplete, 0, "{cc:?}");
        let g = goodput_gbps(o.metrics.series.as_ref().unwrap());
        // The second half of the transfer, away from start-up and the last round trip.
        let busy = &g[g.len() / 2..g.len() - 2];
        let mean = busy.iter().sum::<f64>() / busy.len() as f64;
        assert!(
            mean >= 0.97 * LINE_GOODPUT_GBPS,
            "{cc:?}: {mean:.1} Gb/s of {LINE_GOODPUT_GBPS:.1}"
        );
        assert_eq!(
            o.metrics.counters.retransmissions, 0,
            "{cc:?}: an idle path loses nothing"
        );
    }
}

#[test]
fn a_dctcp_incast_holds_the_queue_near_the_ecn_threshold_at_line_rate() {
    let dir = tempfile::tempdir().unwrap();
    // 8 senders in the other pods... and its own pod, 4 MB each, into host 0.
    let senders = [2, 4, 6, 8, 10, 12, 14, 15];
    let flows: Vec<_> = senders.iter().map(|&h| (h, 0, 4 << 20)).collect();
    let mut s = with_flows(&dir, CcKind::Dctcp, &flows);
    s.switch.buffer_bytes = BufferBytes::Bytes(800_000);
    // DCTCP's guideline for full throughput is K > C·RTT/7 (89 KB here: 625 KB of BDP);
    // 160 KB leaves room for the 8 flows' sawtooth (the paper's amplitude estimate
    // ½·sqrt(2·N·(C·RTT + K)) ≈ 27 packets ≈ 110 KB).
    let k_bytes = 160_000u64;
    s.switch.ecn_threshold_bytes = k_bytes;
    s.report.timeseries_us = 1.0;
    let o = run_sampled(&s);
    assert_eq!(o.flows_incomplete, 0);
    let series = o.metrics.series.as_ref().unwrap();
    let stage = o
        .stage_names
        .iter()
        .position(|&n| n == "edge_host")
        .unwrap();
    let stages = series.stages;
    // The bottleneck is host 0's downlink: the stage's largest queue at each sample.
    let queue: Vec<u64> = (0..series.queue_max_bytes.len() / stages)
        .map(|i| series.queue_max_bytes[i * stages + stage])
        .collect();
    let g = goodput_gbps(series);
    // Converged: from a third of the run to shortly before its end.
    let (from, to) = (queue.len() / 3, queue.len() - 4);
    let mean_q = queue[from..to].iter().sum::<u64>() as f64 / (to - from) as f64;
    let mean_g = g[from..to].iter().sum::<f64>() / (to - from) as f64;
    assert!(
        (0.5 * k_bytes as f64..=1.5 * k_bytes as f64).contains(&mean_q),
        "mean bottleneck queue {mean_q:.0} B, threshold {k_bytes} B"
    );
    assert!(
        queue[from..to].iter().all(|&q| q < 800_000),
        "the buffer never fills"
    );
    assert!(mean_g >= 0.94 * LINE_GOODPUT_GBPS, "{mean_g:.1} Gb/s");
    assert_eq!(o.metrics.counters.data_dropped, 0);
}

/// Jain's fairness index of `x`: 1 when all are equal, 1/n when one takes everything.
fn jain(x: &[f64]) -> f64 {
    let (s, s2) = x.iter().fold((0.0, 0.0), |(s, s2), v| (s + v, s2 + v * v));
    s * s / (x.len() as f64 * s2)
}

#[test]
fn nscc_flows_sharing_a_bottleneck_converge_to_a_fair_share() {
    let dir = tempfile::tempdir().unwrap();
    // Four senders of other pods (same path length) into host 0, 8 MB each.
    let senders = [4u32, 8, 12, 15];
    let flows: Vec<_> = senders.iter().map(|&h| (h, 0, 8 << 20)).collect();
    let mut s = with_flows(&dir, CcKind::Nscc, &flows);
    // NSCC's own environment (UEC htsim defaults): a 1 × BDP queue (625 KB here) with
    // trimming and the 20-80 % ECN ramp, so that marks and delay beyond the target agree.
    // (With a step at 80 KB, far below the 6 µs target delay, marked ACKs below the target
    // leave windows unchanged and flows keep whatever share they had.)
    s.switch.buffer_bytes = BufferBytes::Bytes(625_000);
    s.switch.trim = true;
    s.switch.ecn = weft::scenario::EcnMode::Ramp;
    s.report.trace_hosts = senders.to_vec();
    let o = run_sampled(&s);
    assert_eq!(o.flows_incomplete, 0);
    let trace = &o.metrics.cwnd;
    let end = o.metrics.counters.last_ack_ps;
    // After convergence: the middle of the run, while all four still send.
    let first_done = senders
        .iter()
        .map(|&h| {
            trace
                .iter()
                .filter(|p| p.host == h)
                .map(|p| p.time_ps)
                .max()
                .unwrap()
        })
        .min()
        .unwrap();
    let (from, to) = (end / 4, first_done * 9 / 10);
    assert!(from < to, "a converged stretch exists");
    let shares: Vec<f64> = senders
        .iter()
        .map(|&h| {
            let w: Vec<f64> = trace
                .iter()
                .filter(|p| p.host == h && (from..to).contains(&p.time_ps))
                .map(|p| p.cwnd_bytes as f64)
                .collect();
            w.iter().sum::<f64>() / w.len() as f64
        })
        .collect();
    let j = jain(&shares);
    assert!(j >= 0.95, "Jain index {j:.3} of mean windows {shares:?}");
    // And the flows finish close together.
    let fct = &o.metrics.fct_ns;
    assert!(
        fct.min() as f64 >= 0.85 * fct.max() as f64,
        "FCTs {} .. {} ns",
        fct.min(),
        fct.max()
    );
}

#[test]
fn reorder_paths_flow_gives_each_flow_3_plus_its_own_shortest_paths() {
    use weft::model::Model;
    use weft::scenario::{ReorderPaths, TopologyKind};
    use weft::transport::TransportParams;
    // k = 12 fat tree: 6 hosts per edge switch, 36 per pod. Host 0 to 1 shares an edge
    // switch (1 path), to 6 a pod (k/2 = 6), to 36 crosses pods ((k/2)² = 36). A leaf-spine
    // of k = 16 has 8 spines.
    let cases = [
        (TopologyKind::FatTree, 12, [(1, 1), (6, 6), (36, 36)]),
        (TopologyKind::LeafSpine, 16, [(1, 1), (8, 8), (100, 8)]),
    ];
    for (kind, k, pairs) in cases {
        let mut s = common::scenario(kind, k, LbPolicy::Rps, 4096);
        s.host.cc = CcKind::Dctcp;
        let network = Model::build(&s).unwrap();
        s.host.reorder_paths = ReorderPaths::Flow;
        let flow = Model::build(&s).unwrap();
        let threshold = |m: &Model, paths: u32| match &m.transport {
            TransportParams::Reliable { params, .. } => params.threshold_pkts(paths),
            TransportParams::Paced => unreachable!("dctcp is reliable"),
        };
        let farthest = pairs[2].1;
        for (dst, paths) in pairs {
            assert_eq!(flow.flow_paths(0, dst), paths, "{kind:?} 0 -> {dst}");
            assert_eq!(threshold(&flow, paths), 3 + paths, "{kind:?} 0 -> {dst}");
            // The default: one threshold, the farthest hosts', for every flow.
            assert_eq!(threshold(&network, paths), 3 + farthest, "{kind:?}");
        }
        // An explicit threshold wins for every flow.
        s.host.reorder_threshold_pkts = Some(7);
        let fixed = Model::build(&s).unwrap();
        assert_eq!(threshold(&fixed, 1), 7);
    }
}

#[test]
fn a_dctcp_flow_starts_at_its_configured_window() {
    let dir = tempfile::tempdir().unwrap();
    // 1 MiB (256 packets) from host 0 to 15 across pods; the fabric's BDP is ~151 packets.
    let mut s = with_flows(&dir, CcKind::Dctcp, &[(0, 15, 1 << 20)]);
    s.switch.buffer_bytes = BufferBytes::Bytes(800_000);
    let cct_increase = |s: &Scenario| {
        let o = run_sampled(s);
        assert_eq!(o.flows_incomplete, 0);
        assert_eq!(o.metrics.counters.retransmissions, 0);
        o.cct_ps().unwrap() as f64 / o.cct_lower_bound_ps as f64 - 1.0
    };
    // Slow start from 10 packets: 10 + 20 + 40 + 80 packets in the first four round trips.
    let from_10 = cct_increase(&s);
    s.host.dctcp.init_cwnd_bdp = Some(1.0);
    s.validate().unwrap();
    let from_bdp = cct_increase(&s);
    assert!(
        from_bdp < 0.02,
        "1 BDP: {:.1} % over the bound",
        100.0 * from_bdp
    );
    assert!(
        from_10 > 0.5,
        "10 packets: {:.1} % over the bound",
        100.0 * from_10
    );
}
