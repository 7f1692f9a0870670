//! Ring collectives (`workload.kind = "ring"`): every step starts only once its predecessor's
//! chunk has arrived, a ring completes in exactly its number of dependent steps, results do
//! not depend on threads or partitions, paced and reliable transports both work, and bad
//! input gets one line naming the field.

use crate::common::{results, run, weft_run, weft_run_with};
use std::collections::BTreeMap;
use weft::metrics::{FlowEvent, FlowEventKind};
use weft::packet::{flow_index, flow_src};
use weft::scenario::{CcKind, Collective, LbPolicy, Scenario, TopologyKind, WorkloadKind};

/// A ring collective over every host of a k = 4 fat tree (16 hosts), every host traced.
fn ring(collective: Collective, cc: CcKind, delay_ns: f64) -> Scenario {
    let mut s = Scenario::default();
    s.topology.kind = TopologyKind::FatTree;
    s.topology.k = 4;
    s.host.cc = cc;
    s.workload.kind = WorkloadKind::Ring;
    s.workload.collective = collective;
    // 16 chunks of 3 packets of 4,096 bytes.
    s.workload.message_bytes = 16 * 3 * 4096;
    s.workload.step_delay_ns = delay_ns;
    s.report.trace_hosts = (0..16).collect();
    s.validate().expect("test scenario is valid");
    s
}

/// (kind, src, index) → time, from the flow events.
fn event_times(events: &[FlowEvent]) -> BTreeMap<(bool, u32, u32), u64> {
    let mut times = BTreeMap::new();
    for e in events {
        let started = e.kind == FlowEventKind::Started;
        let key = (started, flow_src(e.flow), flow_index(e.flow));
        assert!(times.insert(key, e.time_ps).is_none(), "{e:?} twice");
    }
    times
}

/// Checks the run of ring `s` of `n` hosts in ring order 0..n: every rank sends exactly
/// `steps` chunks, step 0 starts at 0, step s > 0 of rank r starts exactly `delay` after
/// step s − 1 of rank r − 1 arrived at r, and the CCT covers at least `steps` delays.
fn assert_dependent_steps(s: &Scenario, n: u32, steps: u32) {
    let out = run(s, 1, 1);
    assert_eq!(out.flows_total, (n * steps) as u64);
    assert_eq!(out.flows_incomplete, 0);
    let delay_ps = (s.workload.step_delay_ns * 1000.0).round() as u64;
    let t = event_times(&out.metrics.flow_events);
    assert_eq!(
        t.len() as u32,
        2 * n * steps,
        "one start and one arrival per chunk"
    );
    for r in 0..n {
        let prev = (r + n - 1) % n;
        assert_eq!(t[&(true, r, 0)], 0, "step 0 of rank {r} starts at time 0");
        for step in 1..steps {
            let arrived = t[&(false, prev, step - 1)];
            let started = t[&(true, r, step)];
            assert_eq!(
                started,
                arrived + delay_ps,
                "rank {r} step {step}: starts {delay_ps} ps after its data arrived"
            );
            assert!(t[&(false, r, step)] > started, "arrives after it starts");
        }
        assert!(!t.contains_key(&(true, r, steps)), "no step beyond {steps}");
    }
    let cct = out.cct_ps().expect("the ring completed");
    assert!(cct >= steps as u64 * delay_ps, "cct {cct} ps");
    assert!(
        out.cct_lower_bound_ps >= steps as u64 * delay_ps && out.cct_lower_bound_ps <= cct,
        "lower bound {} ps follows the dependency chain and stays below the cct {cct} ps",
        out.cct_lower_bound_ps
    );
}

#[test]
fn ring_allreduce_takes_2_n_minus_1_dependent_steps() {
    let s = ring(Collective::AllReduce, CcKind::None, 1000.0);
    assert_dependent_steps(&s, 16, 30);
}

#[test]
fn ring_reduce_scatter_and_all_gather_take_n_minus_1_dependent_steps() {
    for c in [Collective::ReduceScatter, Collective::AllGather] {
        assert_dependent_steps(&ring(c, CcKind::None, 0.0), 16, 15);
    }
}

#[test]
fn ring_allreduce_under_dctcp_waits_for_its_data_too() {
    assert_dependent_steps(&ring(Collective::AllReduce, CcKind::Dctcp, 0.0), 16, 30);
    assert_dependent_steps(&ring(Collective::AllReduce, CcKind::Dctcp, 500.0), 16, 30);
}

#[test]
fn a_ring_over_chosen_hosts_in_a_chosen_order() {
    let mut s = ring(Collective::AllReduce, CcKind::None, 0.0);
    s.workload.hosts = Some(vec![9, 2, 14, 5]);
    s.validate().unwrap();
    let out = run(&s, 1, 1);
    assert_eq!((out.flows_total, out.flows_incomplete), (4 * 6, 0));
    let t = event_times(&out.metrics.flow_events);
    // Host 2 (rank 1) forwards at step 3 what host 9 (rank 0) sent at step 2.
    assert_eq!(t[&(true, 2, 3)], t[&(false, 9, 2)]);
    assert!(!t.contains_key(&(true, 0, 0)), "host 0 is not in the ring");
}

/// Background flows come first at their host, shifting its ring steps' indices: the
/// dependencies still name the right flows.
#[test]
fn a_ring_beside_a_background_flow() {
    let mut s = Scenario::default();
    s.topology.kind = TopologyKind::LeafSpine;
    s.topology.k = 8; // 32 hosts on leaves 32..39, spines 40..43
    s.workload.kind = WorkloadKind::Ring;
    s.workload.message_bytes = 3 * 4096 * 3;
    s.workload.hosts = Some(vec![0, 5, 31]);
    s.workload.step_delay_ns = 100.0;
    s.workload.background = vec![weft::scenario::BackgroundFlow {
        src: 0,
        dst: 31,
        path: vec![32, 40, 39],
        rate_gbps: 200.0,
        duration_us: Some(1.0),
        ..Default::default()
    }];
    s.report.trace_hosts = vec![0, 5, 31];
    s.validate().unwrap();
    let out = run(&s, 1, 1);
    assert_eq!((out.flows_total, out.flows_incomplete), (3 * 4 + 1, 0));
    let t = event_times(&out.metrics.flow_events);
    // Host 0's ring steps are its flows 1..=4; host 5's and 31's are 0..=3.
    assert_eq!(t[&(true, 5, 1)], t[&(false, 0, 1)] + 100_000);
    assert_eq!(t[&(true, 0, 2)], t[&(false, 31, 0)] + 100_000);
    assert_eq!(t[&(true, 31, 3)], t[&(false, 5, 2)] + 100_000);
    assert_eq!(t[&(true, 0, 4)], t[&(false, 31, 2)] + 100_000);
}

/// Each of the 15 dependent steps of a ReduceScatter adds its compute delay to the critical
/// path: the CCT is at least 15 × (delay + the fastest step's transfer).
#[test]
fn a_compute_delay_adds_to_every_step() {
    let delay_ps = 2_000_000;
    let fast = run(&ring(Collective::ReduceScatter, CcKind::None, 0.0), 1, 1);
    let slow = run(&ring(Collective::ReduceScatter, CcKind::None, 2000.0), 1, 1);
    let t = event_times(&slow.metrics.flow_events);
    let fastest_step = (0..16)
        .flat_map(|r| (0..15).map(move |s| (r, s)))
        .map(|(r, s)| t[&(false, r, s)] - t[&(true, r, s)])
        .min()
        .unwrap();
    let (a, b) = (fast.cct_ps().unwrap(), slow.cct_ps().unwrap());
    assert!(b > a, "{a} ps without delays, {b} ps with");
    assert!(
        b >= 15 * (delay_ps + fastest_step),
        "{b} ps, steps of {fastest_step} ps or more"
    );
}

#[test]
fn ring_results_do_not_depend_on_threads_or_partitions() {
    for cc in [CcKind::None, CcKind::Dctcp] {
        for policy in [LbPolicy::Ofan, LbPolicy::Ecmp, LbPolicy::Drb] {
            let mut s = ring(Collective::AllReduce, cc, 100.0);
            s.lb.policy = policy;
            s.validate().unwrap();
            let reference = results(&s, 1, 1);
            let events = run(&s, 1, 1).metrics.flow_events;
            assert_eq!(reference["flows"]["incomplete"], 0, "{cc:?} {policy:?}");
            for (threads, parts) in [(2, 4), (1, 5), (2, 6)] {
                assert_eq!(
                    results(&s, threads, parts),
                    reference,
                    "{cc:?} {policy:?}: threads {threads}, partitions {parts}"
                );
                assert_eq!(run(&s, threads, parts).metrics.flow_events, events);
            }
        }
    }
}

/// `results.phases` of an AllReduce: its ReduceScatter and its AllGather, each carrying
/// chunk × (n − 1) steps × n ranks bytes, the ReduceScatter starting first and ending
/// before the AllGather ends, each within its lower bound, and the two spanning the CCT.
#[test]
fn an_allreduce_reports_its_two_phases() {
    let s = ring(Collective::AllReduce, CcKind::Dctcp, 100.0);
    let r = results(&s, 1, 1);
    let phases = r["phases"].as_array().expect("a list of phases");
    let names: Vec<&str> = phases.iter().map(|p| p["name"].as_str().unwrap()).collect();
    assert_eq!(names, ["reduce_scatter", "all_gather"]);
    let chunk = 3 * 4096;
    // Times in ps (the JSON has ns with three decimals).
    let f = |p: &serde_json::Value, k: &str| {
        let ns = p[k].as_f64().unwrap_or_else(|| panic!("{k}: {p}"));
        (ns * 1000.0).round() as u64
    };
    for p in phases {
        assert_eq!(p["bytes"], chunk * 15 * 16, "{p}");
        assert_eq!(p["flows_completed"], 15 * 16, "{p}");
        assert_eq!(f(p, "cct_ns"), f(p, "end_ns") - f(p, "start_ns"), "{p}");
        assert!(f(p, "lower_bound_ns") > 0, "{p}");
        assert!(f(p, "lower_bound_ns") <= f(p, "cct_ns"), "{p}");
        // 14 dependent steps after the first, each with its 100 ns delay.
        assert!(f(p, "lower_bound_ns") >= 14 * 100_000, "{p}");
    }
    let (rs, ag) = (&phases[0], &phases[1]);
    assert_eq!(f(rs, "start_ns"), 0, "step 0 starts at time 0");
    assert!(f(ag, "start_ns") > f(rs, "start_ns"), "{ag}");
    assert!(f(rs, "end_ns") < f(ag, "end_ns"), "{rs} {ag}");
    assert_eq!(f(ag, "end_ns") - f(rs, "start_ns"), f(&r, "cct_ns"));
    // Each phase's chain is part of the whole collective's.
    for p in [rs, ag] {
        assert!(f(p, "lower_bound_ns") < f(&r, "cct_lower_bound_ns"), "{p}");
    }
    // Identical however the run is split (the whole results are compared in
    // `ring_results_do_not_depend_on_threads_or_partitions`).
    for (threads, parts) in [(2, 4), (1, 7)] {
        assert_eq!(results(&s, threads, parts)["phases"], r["phases"]);
    }
}

#[test]
fn a_reduce_scatter_has_one_phase_and_a_permutation_none() {
    let r = results(&ring(Collective::ReduceScatter, CcKind::None, 0.0), 1, 1);
    let phases = r["phases"].as_array().unwrap();
    assert_eq!(phases.len(), 1);
    assert_eq!(phases[0]["name"], "reduce_scatter");
    assert_eq!(phases[0]["bytes"], 3 * 4096 * 15 * 16);
    assert_eq!(phases[0]["cct_ns"], r["cct_ns"]);
    let mut s = Scenario::default();
    s.topology.kind = TopologyKind::FatTree;
    s.topology.k = 4;
    s.workload.kind = WorkloadKind::Permutation;
    s.validate().unwrap();
    assert_eq!(results(&s, 1, 1)["phases"], serde_json::json!([]));
}

/// `latency.hlog` of an AllReduce: besides `latency_ns` and `fct_ns`, one histogram per
/// phase tagged `latency_ns.PHASE`, each counting its phase's data packets (15 steps × 16
/// ranks × 3 packets, none lost under paced sending on an idle-enough fabric), together
/// the whole run's; byte-identical however the run is split.
#[test]
fn latency_hlog_has_one_tagged_histogram_per_phase() {
    use base64::Engine;
    use hdrhistogram::serialization::interval_log::{IntervalLogIterator, LogEntry};
    let s = ring(Collective::AllReduce, CcKind::None, 100.0);
    let hlog = |threads, parts| {
        let mut out = Vec::new();
        weft::report::write_run_hlog(&mut out, &run(&s, threads, parts)).unwrap();
        out
    };
    let text = hlog(1, 1);
    let o = run(&s, 1, 1);
    assert_eq!(o.metrics.counters.data_dropped, 0);
    let mut counts = BTreeMap::new();
    for entry in IntervalLogIterator::new(&text) {
        if let LogEntry::Interval(i) = entry.unwrap() {
            let bytes = base64::engine::general_purpose::STANDARD
                .decode(i.encoded_histogram())
                .unwrap();
            let h = weft::metrics::histogram_wire::decode(&bytes);
            let tag = i
                .tag()
                .expect("every interval is tagged")
                .as_str()
                .to_string();
            assert!(
                counts.insert(tag, h.len()).is_none(),
                "one histogram per tag"
            );
        }
    }
    // The FCT size bins (default `report.fct_bins_bytes`) add up to the FCTs.
    let binned: u64 = counts
        .iter()
        .filter(|(t, _)| t.starts_with("fct_ns.bin_"))
        .map(|(_, &n)| n)
        .sum();
    assert_eq!(binned, counts["fct_ns"]);
    counts.retain(|t, _| !t.starts_with("fct_ns.bin_"));
    let tags: Vec<&str> = counts.keys().map(|t| t.as_str()).collect();
    assert_eq!(
        tags,
        [
            "fct_ns",
            "fct_ns.all_gather",
            "fct_ns.reduce_scatter",
            "latency_ns",
            "latency_ns.all_gather",
            "latency_ns.reduce_scatter"
        ]
    );
    // Each phase's flows: one per rank and step, 15 steps of 16 ranks.
    assert_eq!(counts["fct_ns.reduce_scatter"], 15 * 16);
    assert_eq!(counts["fct_ns.all_gather"], 15 * 16);
    let per_phase = 15 * 16 * 3;
    assert_eq!(counts["latency_ns.reduce_scatter"], per_phase);
    assert_eq!(counts["latency_ns.all_gather"], per_phase);
    assert_eq!(counts["latency_ns"], 2 * per_phase);
    assert_eq!(counts["fct_ns"], 2 * 15 * 16);
    for (threads, parts) in [(2, 4), (1, 7)] {
        assert_eq!(
            hlog(threads, parts),
            text,
            "threads {threads}, partitions {parts}"
        );
    }
}

/// A ring of 4 hosts under one leaf (every step on the same 2-hop path): each phase's
/// bound is its own chain of 3 steps, 2 of them waiting (2 delays), the whole AllReduce's a
/// chain of 6 steps with 5 delays; so raising the delay by 1 µs raises each phase's bound by
/// 2 µs and the whole bound by 5 µs, and the two phases' bounds are equal.
#[test]
fn phase_lower_bounds_follow_the_chain_within_the_phase() {
    let bounds = |delay_ns: f64| {
        let mut s = Scenario::default();
        s.topology.kind = TopologyKind::LeafSpine;
        s.topology.k = 8;
        s.workload.kind = WorkloadKind::Ring;
        s.workload.hosts = Some(vec![0, 1, 2, 3]);
        s.workload.message_bytes = 4 * 4096;
        s.workload.step_delay_ns = delay_ns;
        s.validate().unwrap();
        let o = run(&s, 1, 1);
        assert_eq!(o.phase_names, ["reduce_scatter", "all_gather"]);
        (o.phase_lower_bounds_ps.clone(), o.cct_lower_bound_ps)
    };
    let (p1, whole1) = bounds(1000.0);
    let (p2, whole2) = bounds(2000.0);
    assert_eq!(p1[0], p1[1], "both phases: the same chain on the same path");
    assert_eq!(p2[0] - p1[0], 2 * 1_000_000);
    assert_eq!(whole2 - whole1, 5 * 1_000_000);
    assert!(p1[0] < whole1);
}

/// A pairwise collective over every host of a k = 4 fat tree (16 hosts).
fn pairwise(collective: Collective, cc: CcKind) -> Scenario {
    let mut s = Scenario::default();
    s.topology.kind = TopologyKind::FatTree;
    s.topology.k = 4;
    s.host.cc = cc;
    s.workload.kind = WorkloadKind::Pairwise;
    s.workload.collective = collective;
    // 16 chunks of 2 packets of 4,096 bytes.
    s.workload.message_bytes = 16 * 2 * 4096;
    s
}

#[test]
fn all_to_all_sends_a_chunk_from_every_rank_to_every_other() {
    for cc in [CcKind::None, CcKind::Dctcp] {
        let s = pairwise(Collective::AllToAll, cc);
        s.validate().unwrap();
        let r = results(&s, 1, 1);
        assert_eq!(r["flows"]["total"], 16 * 15, "{cc:?}");
        assert_eq!(r["flows"]["incomplete"], 0, "{cc:?}");
        assert_eq!(r["packets"]["payload_bytes_delivered"], 16 * 15 * 2 * 4096);
        let phases = r["phases"].as_array().unwrap();
        assert_eq!(phases.len(), 1);
        let p = &phases[0];
        assert_eq!(p["name"], "all_to_all");
        assert_eq!(p["bytes"], 16 * 15 * 2 * 4096);
        assert_eq!(p["start_ns"], 0.0);
        assert_eq!(p["cct_ns"], r["cct_ns"], "one phase spans the run");
        assert!(p["lower_bound_ns"].as_f64().unwrap() <= r["cct_ns"].as_f64().unwrap());
        for (threads, parts) in [(2, 4), (1, 5)] {
            assert_eq!(results(&s, threads, parts), r, "{cc:?} {threads} {parts}");
        }
    }
    // Over three chosen hosts: 3 × 2 flows of ⌈32,768 / 3⌉ bytes, nothing from the others.
    let mut s = pairwise(Collective::AllToAll, CcKind::None);
    s.workload.message_bytes = 32_768;
    s.workload.hosts = Some(vec![11, 0, 5]);
    s.validate().unwrap();
    let o = run(&s, 1, 1);
    assert_eq!((o.flows_total, o.flows_incomplete), (6, 0));
    assert_eq!(o.metrics.counters.payload_bytes_delivered, 6 * 10_923);
}

#[test]
fn all_to_all_v_sends_the_bytes_of_its_matrix() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("a2av.csv");
    // Rank 1 sends nothing to rank 0, rank 3 nothing at all; the diagonal stays local.
    std::fs::write(
        &path,
        "# bytes, row = source rank, column = destination rank\n\
         999, 4096, 8192, 100\n\
         0, 0, 50000, 1\n\
         7, 7, 0, 7\n\
         0, 0, 0, 123\n",
    )
    .unwrap();
    let mut s = pairwise(Collective::AllToAllV, CcKind::Dctcp);
    s.workload.hosts = Some(vec![3, 9, 14, 6]);
    s.workload.file = Some(path);
    s.validate().unwrap();
    let r = results(&s, 1, 1);
    let sent = 4096 + 8192 + 100 + 50_000 + 1 + 7 * 3;
    assert_eq!(r["flows"]["total"], 3 + 2 + 3);
    assert_eq!(r["flows"]["incomplete"], 0);
    assert_eq!(r["packets"]["payload_bytes_delivered"], sent);
    assert_eq!(r["phases"][0]["name"], "all_to_all_v");
    assert_eq!(r["phases"][0]["bytes"], sent);
    assert_eq!(r["phases"][0]["flows_completed"], 8);
    assert_eq!(results(&s, 2, 6), r);
}

// ---- Bad input: the real binary, one line naming the field. ----

fn ring_toml(extra: &str) -> String {
    format!(
        "seed = 1\n[topology]\nkind = \"fat_tree\"\nk = 4\n[workload]\nkind = \"ring\"\nmessage_bytes = 65536\n{extra}\n"
    )
}

#[test]
fn a_good_ring_scenario_runs() {
    let (ok, err) = weft_run(&ring_toml(
        "collective = \"reduce_scatter\"\nhosts = [3, 1, 2]",
    ));
    assert!(ok, "{err}");
}

#[test]
fn bad_ring_input_gets_one_line_naming_the_field() {
    for (extra, field) in [
        ("hosts = [0, 16]", "workload.hosts"),
        ("hosts = [0, 3, 0]", "workload.hosts"),
        ("hosts = [5]", "workload.hosts"),
        ("collective = \"broadcast\"", "collective"),
        ("step_delay_ns = -1.0", "workload.step_delay_ns"),
        ("message_bytes = 0", "workload.message_bytes"),
        ("file = \"m.txt\"", "workload.file"),
    ] {
        let toml =
            ring_toml(extra).replace("message_bytes = 65536\nmessage_bytes", "message_bytes");
        let (ok, err) = weft_run(&toml);
        assert!(!ok, "{extra}: accepted");
        let line = err.trim_end();
        assert!(
            !line.contains('\n') && line.starts_with("error:"),
            "{extra}: {err}"
        );
        assert!(line.contains(field), "{extra}: {err}");
        assert!(!err.contains("panicked"), "{extra}: {err}");
    }
    // Collectives the kind does not run.
    let (ok, err) = weft_run(&ring_toml("collective = \"all_to_all\""));
    assert!(
        !ok && err.contains("workload.collective") && !err.contains("pairwise"),
        "{err}"
    );
    // Ring fields with another kind.
    let toml = ring_toml("hosts = [1, 2]").replace("kind = \"ring\"", "kind = \"permutation\"");
    let (ok, err) = weft_run(&toml);
    assert!(!ok && err.contains("workload.hosts"), "{err}");
}

fn pairwise_toml(extra: &str) -> String {
    ring_toml(extra).replace("kind = \"ring\"", "kind = \"pairwise\"")
}

#[test]
fn a_good_pairwise_scenario_runs() {
    let (ok, err) = weft_run(&pairwise_toml(
        "collective = \"all_to_all\"\nhosts = [3, 1, 2]",
    ));
    assert!(ok, "{err}");
}

#[test]
fn bad_pairwise_input_gets_one_line_naming_the_field_or_the_file_line() {
    let run_with = |toml: &str, csv: &str| weft_run_with(toml, &[("m.csv", csv)]);
    let v = "collective = \"all_to_all_v\"\nhosts = [0, 1, 2]\nfile = \"m.csv\"";
    for (extra, csv, want) in [
        ("", "", "workload.collective"),
        ("collective = \"all_reduce\"", "", "workload.collective"),
        ("collective = \"all_to_all_v\"", "", "workload.file"),
        (
            "collective = \"all_to_all\"\nfile = \"m.csv\"",
            "",
            "workload.file",
        ),
        (
            "collective = \"all_to_all\"\nstep_delay_ns = 5.0",
            "",
            "workload.step_delay_ns",
        ),
        (
            "collective = \"all_to_all\"\nhosts = [0, 99]",
            "",
            "workload.hosts",
        ),
        (v, "0,1,2\n1,0\n", "m.csv: line 2: 2 values, expected 3"),
        (
            v,
            "0,1,2\n# x\n1,0,z\n3,3,0\n",
            "m.csv: line 3: column 3: \"z\" is not a byte count",
        ),
        (v, "0,1,2\n1,0,1\n", "m.csv: 2 rows, expected 3"),
        (
            v,
            "0,1,2\n1,0,1\n1,1,0\n1,1,1\n",
            "m.csv: line 4: more than 3 rows",
        ),
    ] {
        let (ok, err) = run_with(&pairwise_toml(extra), csv);
        assert!(!ok, "{extra} {csv:?}: accepted");
        let line = err.trim_end();
        assert!(
            !line.contains('\n') && line.starts_with("error:"),
            "{extra}: {err}"
        );
        assert!(line.contains(want), "{extra} {csv:?}: {err}");
        assert!(!err.contains("panicked"), "{extra}: {err}");
    }
    let (ok, err) = run_with(&pairwise_toml(v), "0,1,2\n1,0,1\n1,1,0\n");
    assert!(ok, "{err}");
}
