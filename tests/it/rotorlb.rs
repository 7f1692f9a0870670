//! Opera's bulk transport, RotorLB (`net/rotorlb.rs`, `transport/rotor.rs`), end to end on
//! a 12-rack × 2-host fabric with 4 rotors (ε = 20 µs, r = 2 µs: superslice 23.7 µs, slot
//! 91.1 µs, 18 packets per rotor slot, 9 per destination host).
//!
//! The per-packet path length is asserted inside the simulator (a delivered packet crossed
//! exactly 1 rotor link, 2 if relayed); here the counters must add up.

use crate::common;

use serde_json::Value;
use weft::report::Summary;
use weft::scenario::{load_scenario_str, Scenario};

fn scenario(extra_opera: &str, workload: &str, host_latency_ns: u32) -> Scenario {
    let host = "cc = \"constant\"\nwindow_bdp = 1.0";
    let text = common::small_opera_toml(extra_opera, host, workload, host_latency_ns);
    load_scenario_str(&text, "test", std::path::Path::new("."), &[]).unwrap()
}

fn results(s: &Scenario, threads: usize, partitions: u32) -> Value {
    let o = common::run(s, threads, partitions);
    assert_eq!(o.flows_incomplete, 0, "every flow completes");
    Summary::new(&o, serde_json::to_value(s).unwrap()).results
}

fn rlb(r: &Value) -> (u64, u64, u64, u64, u64, u64, u64) {
    let x = &r["opera"]["rotorlb"];
    let g = |k: &str| x[k].as_u64().unwrap();
    (
        g("sent"),
        g("one_hop"),
        g("two_hop"),
        g("relayed"),
        g("rejected"),
        g("bounced"),
        g("off_circuit"),
    )
}

const SHUFFLE: &str = "kind = \"shuffle\"\nmessage_bytes = 100000\nbulk = true";

/// Every frame a host sends ends at its receiver, at an intermediate, or back at a sender;
/// every packet of every flow arrives once over 1 or 2 rotor links.
fn check_accounting(r: &Value, packets: u64) {
    let (sent, one, two, relayed, rejected, bounced, off) = rlb(r);
    assert_eq!(one + two, packets);
    assert_eq!(two, relayed, "each relayed packet is delivered once");
    assert_eq!(sent, one + two + relayed + rejected + bounced);
    assert_eq!(off, 0, "no packet started while its rotor led elsewhere");
    assert_eq!(r["opera"]["clipped"], 0);
}

#[test]
fn a_bulk_shuffle_completes_mostly_direct() {
    // 24 hosts × 22 flows of 70 packets (100,000 / 1,436 rounded up).
    let r = results(&scenario("", SHUFFLE, 0), 1, 1);
    check_accounting(&r, 24 * 22 * 70);
    let (_, one, two, _, _, _, _) = rlb(&r);
    // Every host has long queues to every other rack: direct traffic fills the slots, so
    // Valiant gets little (only as queues drain at the end).
    assert!(two * 5 < one, "one hop {one}, two hops {two}");
    // Nothing but RotorLB data and its refusals: no low-latency ACKs.
    assert_eq!(r["packets"]["acks_sent"], rlb(&r).4);
}

#[test]
fn bulk_flows_with_idle_capacity_use_relays_and_without_valiant_only_their_circuit() {
    // Bulk cutoff at one packet: the permutation's 200 KB flows between racks are bulk,
    // flows within a rack stay low-latency.
    let perm = "kind = \"permutation\"\nmessage_bytes = 200000";
    let with = results(&scenario("bulk_cutoff_bytes = 1436", perm, 0), 1, 1);
    let (_, one, two, ..) = rlb(&with);
    assert!(two > one, "idle racks relay: one hop {one}, two hops {two}");
    let without = results(
        &scenario("bulk_cutoff_bytes = 1436\nvaliant = false", perm, 0),
        1,
        1,
    );
    let (_, one2, two2, relayed2, ..) = rlb(&without);
    assert_eq!((two2, relayed2), (0, 0));
    assert_eq!(one2, one + two, "the same bulk packets, all direct");
    // Bandwidth tax (rotor-link bytes per delivered data byte): 22 of the 24 flows cross
    // racks, each bulk byte once direct, twice relayed; the 2 rack-local flows cross none.
    let tax = |r: &serde_json::Value| r["bandwidth_tax"].as_f64().unwrap();
    let inter = 22.0 / 24.0;
    assert!(
        (tax(&without) - inter).abs() < 0.01 * inter,
        "{}",
        tax(&without)
    );
    let relayed = inter * (one + 2 * two) as f64 / (one + two) as f64;
    assert!(
        (tax(&with) - relayed).abs() < 0.02 * relayed,
        "{} vs {relayed}",
        tax(&with)
    );
    // Direct only: a flow waits for its circuit, so it takes longer.
    assert!(without["fct_ns"]["max"].as_u64() > with["fct_ns"]["max"].as_u64());
}

#[test]
fn packets_delayed_past_their_circuit_bounce_back_and_still_arrive() {
    // Host links of 6 µs: the last of a slot's 18 packets leaves its host at
    // 17 × 91.1 / 18 = 86.0 µs into the slot and is whole at its ToR 1.2 + 6 µs later,
    // 93.3 µs, after the rotor has moved on (the circuit lasts one δ = 1.7 µs past the
    // 91.1 µs slot): the ToR bounces it to its host, which sends it in a later slot.
    let r = results(&scenario("", SHUFFLE, 6_000), 1, 1);
    check_accounting(&r, 24 * 22 * 70);
    let (.., bounced, _) = rlb(&r);
    assert!(bounced > 0);
}

#[test]
fn results_do_not_depend_on_threads_or_partitions() {
    let s = scenario("", SHUFFLE, 0);
    let base = results(&s, 1, 1);
    for (threads, parts) in [(1, 3), (2, 4), (2, 12)] {
        assert_eq!(
            results(&s, threads, parts),
            base,
            "{threads} threads, {parts} parts"
        );
    }
    let bounce = scenario("", SHUFFLE, 6_000);
    assert_eq!(results(&bounce, 2, 6), results(&bounce, 1, 1));
}

#[test]
fn bad_rotorlb_fields_are_named() {
    let cases = [
        (
            "bulk_cutoff_bytes = 100",
            SHUFFLE,
            "topology.opera.bulk_cutoff_bytes",
        ),
        (
            "",
            "kind = \"permutation\"\nmessage_bytes = 1000\nbulk = true",
            "workload.bulk",
        ),
        (
            "rlb_planning = \"central\"",
            SHUFFLE,
            "topology.opera.rlb_planning",
        ),
    ];
    for (opera, workload, field) in cases {
        let toml = format!(
            "[topology]\nkind = \"opera\"\nracks = 12\nhosts_per_rack = 2\nuplinks = 4\n\
             [topology.opera]\n{opera}\n[lb]\npolicy = \"rps\"\n[workload]\n{workload}\n"
        );
        let (ok, err) = common::weft_run(&toml);
        assert!(!ok && err.contains(field), "{err}");
        assert_eq!(err.trim().lines().count(), 1, "{err}");
    }
    let (ok, err) = common::weft_run(
        "[topology]\nk = 4\n[workload]\nkind = \"shuffle\"\nmessage_bytes = 1000\nbulk = true\n",
    );
    assert!(!ok && err.contains("workload.bulk"), "{err}");
}

#[test]
fn rack_planning_lets_a_lone_pair_use_its_receiver_s_whole_room() {
    // Hot rack: host i of one rack sends 200 KB (140 packets) to host i of another, direct
    // only. Planned together, each sender gets its receiver's whole room (18 packets per
    // slot, one slot a cycle); planned alone, each takes the even split (9): about twice
    // the cycles.
    let hot = "kind = \"hot_rack\"\nmessage_bytes = 200000";
    let run = |mode: &str| {
        let opera = format!("bulk_cutoff_bytes = 1436\nvaliant = false\nrlb_planning = \"{mode}\"");
        results(&scenario(&opera, hot, 0), 1, 1)
    };
    let (rack, host) = (run("rack"), run("host"));
    for r in [&rack, &host] {
        check_accounting(r, 2 * 140);
        assert_eq!(rlb(r).2, 0, "no relays without valiant");
    }
    let cct = |r: &Value| r["cct_ns"].as_f64().unwrap();
    // 8 slots (⌈140 / 18⌉) against 16 (⌈140 / 9⌉), a cycle of 284.4 µs apart.
    assert!(
        cct(&rack) < 0.6 * cct(&host),
        "rack {} host {}",
        cct(&rack),
        cct(&host)
    );
    assert!(cct(&rack) > 7.0 * 284_400.0 && cct(&host) > 15.0 * 284_400.0);
}
