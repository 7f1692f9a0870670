//! Poisson flow arrivals with sizes from a CDF file, the inter-rack shuffle (the Opera paper, §5)
//! and FCT by flow-size bin: end-to-end runs on a k = 4 fat tree (16 hosts, 8 racks of 2).

use crate::common::{results, run, scenario};
use weft::scenario::{LbPolicy, Scenario, TopologyKind, WorkloadKind};
use weft::topology::Fabric;
use weft::workload::Workload;

/// 1 000 B with probability 1/2, else 20 000 B: mean 10 500 B.
const CDF: &str = "# test\nbytes,cdf\n1000,0.5\n20000,1\n";

fn poisson(dir: &std::path::Path, load: f64, duration_us: f64) -> Scenario {
    std::fs::write(dir.join("sizes.csv"), CDF).unwrap();
    let mut s = scenario(TopologyKind::FatTree, 4, LbPolicy::Ecmp, 1);
    s.base_dir = dir.to_path_buf();
    s.workload.kind = WorkloadKind::Poisson;
    s.workload.size_cdf = Some("sizes.csv".into());
    s.workload.load = Some(load);
    s.workload.duration_us = Some(duration_us);
    s.report.fct_bins_bytes = vec![1_000.0, 10_000.0];
    s.validate().expect("valid");
    s
}

fn racks(f: &Fabric) -> Vec<u32> {
    (0..f.num_hosts)
        .map(|h| f.group_of(h, true).unwrap())
        .collect()
}

#[test]
fn arrivals_follow_the_rate_scale_with_load_and_cross_racks() {
    let dir = tempfile::tempdir().unwrap();
    let s = poisson(dir.path(), 0.5, 1_000.0);
    let f = Fabric::build(&s);
    let line_bytes_per_s = f.link(0, 0).rate.bps as f64 / 8.0;
    let w = Workload::build(&s, &f).unwrap();
    // λ_host = 0.5 · line rate (B/s) / 10 500 B; 16 hosts for 1 ms.
    let expected = 0.5 * line_bytes_per_s / 10_500.0 * 1e-3 * 16.0;
    let n = w.total_flows(16) as f64;
    let sigma = expected.sqrt();
    assert!(
        (n - expected).abs() < 5.0 * sigma,
        "{n} flows, {expected} ± {sigma}"
    );
    let rack = racks(&f);
    let mut payload = 0u64;
    for h in 0..16 {
        for i in 0..w.flows_of(h) {
            let fl = w.flow(h, i);
            assert_ne!(rack[fl.dst as usize], rack[h as usize], "inter-rack");
            assert!(fl.bytes == 1_000 || fl.bytes == 20_000);
            assert!(fl.start_at_ps().unwrap() < 1_000_000_000);
            payload += fl.bytes;
        }
    }
    // Offered payload ≈ load · aggregate line rate · duration (size noise included: within 10%).
    let offered = 0.5 * line_bytes_per_s * 16.0 * 1e-3;
    assert!(
        (payload as f64 / offered - 1.0).abs() < 0.1,
        "{payload} vs {offered}"
    );
    // A tenth of the load: a tenth of the flows.
    let tenth = poisson(dir.path(), 0.05, 1_000.0);
    let m = Workload::build(&tenth, &f).unwrap().total_flows(16) as f64;
    let e = expected / 10.0;
    assert!((m - e).abs() < 5.0 * e.sqrt(), "{m} vs {e}");
}

#[test]
fn fct_bins_add_up_and_results_do_not_depend_on_the_split() {
    let dir = tempfile::tempdir().unwrap();
    let s = poisson(dir.path(), 0.3, 20.0);
    let o = run(&s, 1, 1);
    assert_eq!(o.flows_incomplete, 0);
    let w = Workload::build(&s, &Fabric::build(&s)).unwrap();
    let small = (0..16)
        .flat_map(|h| (0..w.flows_of(h)).map(move |i| (h, i)))
        .filter(|&(h, i)| w.flow(h, i).bytes == 1_000)
        .count() as u64;
    assert!(o.flows_total > 100 && small > 0 && small < o.flows_total);
    let r = results(&s, 1, 1);
    let bins = r["fct_by_size"].as_array().unwrap();
    let counts: Vec<u64> = bins.iter().map(|b| b["count"].as_u64().unwrap()).collect();
    // 1 000 B flows in "≤ 1 000", none in "≤ 10 000", 20 000 B flows in the overflow bin.
    assert_eq!(counts, vec![small, 0, o.flows_total - small]);
    assert_eq!(bins[0]["max_bytes"], 1_000);
    assert_eq!(bins[1]["max_bytes"], 10_000);
    assert!(bins[2]["max_bytes"].is_null());
    assert_eq!(
        counts.iter().sum::<u64>(),
        r["flows"]["completed"].as_u64().unwrap()
    );
    // Small flows finish faster than the 20× larger ones.
    assert!(bins[0]["p50"].as_u64().unwrap() < bins[2]["p50"].as_u64().unwrap());
    for (threads, parts) in [(2, 3), (2, 8)] {
        assert_eq!(results(&s, threads, parts), r, "{threads}x{parts}");
    }
    // The hlog carries one tagged histogram per bin.
    let mut hlog = Vec::new();
    weft::report::write_run_hlog(&mut hlog, &o).unwrap();
    let text = String::from_utf8(hlog).unwrap();
    for tag in [
        "fct_ns.bin_LE_1000,",
        "fct_ns.bin_LE_10000,",
        "fct_ns.bin_GT_10000,",
    ] {
        assert!(text.contains(&format!("Tag={tag}")), "{tag}");
    }
}

#[test]
fn no_bins_means_no_fct_by_size() {
    let mut s = scenario(TopologyKind::FatTree, 4, LbPolicy::Ecmp, 8192);
    s.report.fct_bins_bytes = vec![];
    s.validate().unwrap();
    let r = results(&s, 1, 1);
    assert_eq!(r["fct_by_size"], serde_json::json!([]));
    // Default bins on a permutation: every 8 KiB flow in the first (≤ 10 000 B) bin.
    let s = scenario(TopologyKind::FatTree, 4, LbPolicy::Ecmp, 8192);
    let r = results(&s, 1, 1);
    let bins = r["fct_by_size"].as_array().unwrap();
    assert_eq!(bins.len(), 6);
    assert_eq!(bins[0]["count"], 16);
    assert_eq!(bins[0]["max"], r["fct_ns"]["max"]);
}

#[test]
fn shuffle_sends_to_every_host_of_other_racks_and_staggers_deterministically() {
    let mut s = scenario(TopologyKind::FatTree, 4, LbPolicy::Ecmp, 4_096);
    s.workload.kind = WorkloadKind::Shuffle;
    s.validate().unwrap();
    let f = Fabric::build(&s);
    let w = Workload::build(&s, &f).unwrap();
    // H · (H − hosts per rack) = 16 · 14.
    assert_eq!(w.total_flows(16), 224);
    let rack = racks(&f);
    for h in 0..16 {
        let dsts: std::collections::BTreeSet<u32> =
            (0..w.flows_of(h)).map(|i| w.flow(h, i).dst).collect();
        let others: std::collections::BTreeSet<u32> = (0..16)
            .filter(|&d| rack[d as usize] != rack[h as usize])
            .collect();
        assert_eq!(dsts, others, "host {h}");
    }
    let o = run(&s, 1, 1);
    assert_eq!((o.flows_total, o.flows_incomplete), (224, 0));
    s.workload.stagger_us = Some(5.0);
    s.validate().unwrap();
    let w = Workload::build(&s, &f).unwrap();
    let last = (0..16)
        .map(|h| w.flow(h, 13).start_at_ps().unwrap())
        .max()
        .unwrap();
    assert!(last < 5_000_000 && last > 0);
    let r = results(&s, 1, 1);
    assert_eq!(r["flows"]["completed"], 224);
    assert_eq!(results(&s, 2, 5), r);
}

#[test]
fn on_a_leaf_spine_flows_cross_leaves_and_the_shuffle_counts_hosts_per_leaf() {
    let dir = tempfile::tempdir().unwrap();
    let mut s = poisson(dir.path(), 0.5, 200.0);
    s.topology.kind = TopologyKind::LeafSpine;
    s.topology.k = 8;
    s.validate().unwrap();
    let f = Fabric::build(&s);
    let hosts = f.num_hosts;
    let rack = racks(&f);
    let per_rack = rack.iter().filter(|&&r| r == rack[0]).count() as u64;
    assert!(per_rack >= 2 && (per_rack as u32) < hosts);
    let w = Workload::build(&s, &f).unwrap();
    assert!(w.total_flows(hosts) > 0);
    for h in 0..hosts {
        for i in 0..w.flows_of(h) {
            assert_ne!(rack[w.flow(h, i).dst as usize], rack[h as usize]);
        }
    }
    s.workload.kind = WorkloadKind::Shuffle;
    s.workload.size_cdf = None;
    s.workload.load = None;
    s.workload.duration_us = None;
    s.validate().unwrap();
    let w = Workload::build(&s, &f).unwrap();
    let h = hosts as u64;
    assert_eq!(w.total_flows(hosts), h * (h - per_rack));
}
