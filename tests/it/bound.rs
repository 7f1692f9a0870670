//! The CCT lower bound is exact where nothing queues: one flow alone on an idle fabric (an
//! htsim connection matrix with a single connection) completes in exactly its bound, for
//! every message size and every tier set-up; flows that start later are shifted by their
//! start; and no run of any workload beats its bound.

use weft::scenario::{LbPolicy, Scenario, TierOverride, WorkloadKind};
use weft::sim::{simulate, RunOptions};

/// Runs `cm` (connection-matrix text) on a k = 4 fat tree set up by `tweak`; returns
/// (CCT, bound) in ps.
fn run_matrix(cm: &str, tweak: impl Fn(&mut Scenario)) -> (u64, u64) {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("t.cm"), cm).unwrap();
    let mut s = Scenario::default();
    s.topology.k = 4;
    s.lb.policy = LbPolicy::Ecmp;
    s.workload.kind = WorkloadKind::Matrix;
    s.workload.file = Some("t.cm".into());
    s.base_dir = dir.path().to_path_buf();
    tweak(&mut s);
    s.validate().unwrap();
    let o = simulate(&s, &RunOptions::default()).unwrap();
    (o.cct_ps().expect("completes"), o.cct_lower_bound_ps)
}

fn tier(rate_gbps: Option<f64>, latency_ns: Option<f64>) -> TierOverride {
    TierOverride {
        rate_gbps,
        latency_ns,
    }
}

/// Set-ups: default; faster core tier; 400G host links under an 800G fabric; slower core
/// tier (the bottleneck inside the fabric); forwarding latency and per-tier latencies.
type Setup = (&'static str, Box<dyn Fn(&mut Scenario)>);

fn setups() -> Vec<Setup> {
    vec![
        ("default", Box::new(|_: &mut Scenario| {})),
        (
            "agg_core at 1600G",
            Box::new(|s: &mut Scenario| {
                s.topology
                    .tiers
                    .insert("agg_core".into(), tier(Some(1600.0), None));
            }),
        ),
        (
            "400G hosts, 800G fabric",
            Box::new(|s: &mut Scenario| {
                s.topology
                    .tiers
                    .insert("host_edge".into(), tier(Some(400.0), None));
            }),
        ),
        (
            "agg_core at 200G",
            Box::new(|s: &mut Scenario| {
                s.topology
                    .tiers
                    .insert("agg_core".into(), tier(Some(200.0), Some(900.0)));
            }),
        ),
        (
            "forwarding 150 ns, edge_agg 80 ns",
            Box::new(|s: &mut Scenario| {
                s.switch.forwarding_latency_ns = 150.0;
                s.topology
                    .tiers
                    .insert("edge_agg".into(), tier(None, Some(80.0)));
            }),
        ),
    ]
}

/// A 64 B ACK at the slowest link of the set-ups (200 Gb/s).
const ACK_PS: u64 = 64 * 40;

#[test]
fn a_lone_flow_on_an_idle_fabric_completes_in_exactly_its_bound() {
    // Hosts 0 -> 15 cross the core (6 hops); 0 -> 3 stay in the pod; 0 -> 1 share an edge.
    for (name, tweak) in setups() {
        for dst in [15, 3, 1] {
            for bytes in [1u64, 4096, 4097, 262_144, 1_048_576, 4_194_304] {
                let cm = format!("Nodes 16\nConnections 1\n0->{dst} id 1 start 0 size {bytes}\n");
                let (cct, bound) = run_matrix(&cm, &tweak);
                // Exact, except when the last data packet is shorter than an ACK: its ACK
                // can then wait behind the previous one (at the receiver's NIC, or at a slow
                // tier on the way back; 4097 B has a 63 B last packet). The bound counts
                // only the last ACK's trip, so it is low by at most one ACK's serialization
                // at the slowest link.
                assert!(
                    cct >= bound && cct - bound <= ACK_PS,
                    "{name}: 0->{dst}, {bytes} B: CCT {cct} ps, bound {bound} ps"
                );
                if bytes % 4096 == 0 || bytes < 4096 {
                    assert_eq!(cct, bound, "{name}: 0->{dst}, {bytes} B");
                }
            }
        }
    }
}

#[test]
fn later_starts_shift_the_bound_and_disjoint_flows_stay_exact() {
    // Two flows on disjoint paths (different pods, different hosts), the second starting
    // 3 us later: the CCT runs from the first send to the last ACK.
    for (name, tweak) in setups() {
        let cm = "Nodes 16\nConnections 2\n0->15 id 1 start 0 size 65536\n4->9 id 2 start 3000000 size 1048576\n";
        let (cct, bound) = run_matrix(cm, &tweak);
        assert_eq!(cct, bound, "{name}");
        // Reordered starts give the same answer (flows sorted by start at each host).
        let cm = "Nodes 16\nConnections 2\n4->9 id 2 start 3000000 size 1048576\n0->15 id 1 start 0 size 65536\n";
        assert_eq!(run_matrix(cm, &tweak), (cct, bound), "{name}");
    }
}

#[test]
fn shared_links_make_runs_slower_than_the_bound_never_faster() {
    // Incast and shared sources: queues form, so the CCT exceeds the bound.
    let cm = "Nodes 16\nConnections 5\n0->15 id 1 start 0 size 300000\n4->15 id 2 start 0 size 300000\n8->15 id 3 start 1000 size 300000\n0->5 id 4 start 0 size 100000\n13->2 id 5 start 700000 size 5000\n";
    for (name, tweak) in setups() {
        let (cct, bound) = run_matrix(cm, &tweak);
        assert!(cct >= bound, "{name}: CCT {cct} < bound {bound}");
        assert!(
            cct < bound * 3 / 2,
            "{name}: bound {bound} far below CCT {cct}"
        );
    }
}

#[test]
fn a_permutation_from_a_matrix_gets_the_appendix_a_bound() {
    // Sixteen 1 MB flows h -> h + 5 (mod 16), every one across the core: a permutation, so
    // the Ofan paper's appendix-A baseline applies as for `kind = "permutation"`. With the
    // default set-up and 256 packets on 6 hops it is 17,057.94 ns (the value the
    // permutation sweeps report, every NIC also sending the ACKs of the flow it receives).
    let flows: String = (0..16)
        .map(|h| format!("{h}->{} id {} start 0 size 1048576\n", (h + 5) % 16, h + 1))
        .collect();
    let (cct, bound) = run_matrix(&format!("Nodes 16\nConnections 16\n{flows}"), |_| {});
    assert_eq!(bound, 17_057_940);
    assert!(
        cct + 2_000 >= bound,
        "CCT {cct} ps far below the bound {bound} ps"
    );
    // One host sending a second flow: no longer a permutation, so the bound falls back to
    // the lone flow's (no ACKs on the sender's NIC), about 256 ACKs' wire time lower.
    let more = format!("Nodes 16\nConnections 17\n{flows}0->1 id 17 start 0 size 4096\n");
    let (_, loose) = run_matrix(&more, |_| {});
    let lone = run_matrix(
        "Nodes 16\nConnections 1\n0->5 id 1 start 0 size 1048576\n",
        |_| {},
    )
    .1;
    assert_eq!(loose, lone);
    assert!(
        bound - lone > 150_000,
        "bound {bound} ps, lone flow {lone} ps"
    );
}
