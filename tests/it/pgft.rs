//! PGFTs in the packet simulator: the fat tree written as a PGFT gives byte-identical
//! results, every LB policy (static routings included) runs on a PGFT with parallel links,
//! results do not depend on threads or partitions, and bad `[topology.pgft]` input stops with
//! one line naming the field.

use crate::common::{results, scenario};
use std::process::Command;
use weft::scenario::{LbPolicy, PgftConfig, Scenario, TopologyKind};

/// `s` with its fat tree (k) rewritten as PGFT(3; k/2, k/2, k; 1, k/2, k/2; 1, 1, 1).
fn as_pgft(s: &Scenario) -> Scenario {
    let (k, h) = (s.topology.k, s.topology.k / 2);
    let mut p = s.clone();
    p.topology.kind = TopologyKind::Pgft;
    p.topology.pgft = Some(PgftConfig {
        h: 3,
        m: vec![h, h, k],
        w: vec![1, h, h],
        ..PgftConfig::default()
    });
    p.validate().unwrap();
    p
}

#[test]
fn fat_tree_as_pgft_gives_identical_results_for_every_policy() {
    for policy in LbPolicy::ALL {
        let s = scenario(TopologyKind::FatTree, 4, policy, 32 * 1024);
        let a = results(&s, 1, 1);
        let b = results(&as_pgft(&s), 1, 1);
        assert_eq!(a, b, "{policy:?}");
    }
}

/// The seed's example PGFT(3; 8,4,2; 1,2,1; 1,1,4) with "7 compute + 1 io" leaves.
fn seed_scenario(policy: LbPolicy) -> Scenario {
    let mut s = scenario(TopologyKind::FatTree, 4, policy, 16 * 1024);
    s.topology.kind = TopologyKind::Pgft;
    s.topology.pgft = Some(PgftConfig {
        h: 3,
        m: vec![8, 4, 2],
        w: vec![1, 2, 1],
        p: vec![1, 1, 4],
        leaf_pattern: Some("7 compute + 1 io".into()),
        ..PgftConfig::default()
    });
    s.validate().unwrap();
    s
}

#[test]
fn every_policy_runs_on_a_pgft_with_parallel_links_whatever_the_partitioning() {
    for policy in LbPolicy::ALL {
        let s = seed_scenario(policy);
        let reference = results(&s, 1, 1);
        assert_eq!(reference["flows"]["completed"], 64, "{policy:?}");
        assert_eq!(
            results(&s, 2, 3),
            reference,
            "{policy:?} with 2 threads, 3 partitions"
        );
    }
}

/// Static routings differ from each other (guards the comparisons above against constants).
#[test]
fn static_routings_route_differently() {
    let a = results(&seed_scenario(LbPolicy::Dmodk), 1, 1);
    let b = results(&seed_scenario(LbPolicy::Smodk), 1, 1);
    assert_ne!(a, b);
}

fn weft(dir: &std::path::Path, args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_weft"))
        .args(args)
        .current_dir(dir)
        .output()
        .unwrap()
}

/// `weft run` of the fat tree and of its PGFT: the same summary `results` and the same
/// latency histogram log, byte for byte.
#[test]
fn cli_fat_tree_and_pgft_write_identical_results_and_hlog() {
    let dir = tempfile::tempdir().unwrap();
    let body = "[lb]\npolicy = \"ofan\"\n[workload]\nmessage_bytes = 65536\n";
    std::fs::write(
        dir.path().join("ft.toml"),
        format!("[topology]\nk = 4\n{body}"),
    )
    .unwrap();
    std::fs::write(
        dir.path().join("pg.toml"),
        format!("[topology]\nkind = \"pgft\"\n[topology.pgft]\nh = 3\nm = [2, 2, 4]\nw = [1, 2, 2]\n{body}"),
    )
    .unwrap();
    let mut outs = vec![];
    for name in ["ft", "pg"] {
        let o = weft(dir.path(), &["run", &format!("{name}.toml"), "--out", name]);
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        let summary: serde_json::Value = serde_json::from_str(
            &std::fs::read_to_string(dir.path().join(name).join("summary.json")).unwrap(),
        )
        .unwrap();
        let hlog = std::fs::read(dir.path().join(name).join("latency.hlog")).unwrap();
        outs.push((summary["results"].clone(), hlog));
    }
    assert_eq!(outs[0].0, outs[1].0);
    assert!(outs[0].1 == outs[1].1, "latency.hlog differs");
}

/// Bad `[topology.pgft]`: one line naming the field, exit code 1.
#[test]
fn bad_pgft_input_names_the_field() {
    let cases = [
        ("h = 3\nm = [8, 4]\nw = [1, 2, 1]", "topology.pgft.m"),
        ("h = 3\nm = [8, 4, 2]\nw = [1, 2, 1]\np = [1, 1]", "topology.pgft.p"),
        ("h = 3\nm = [8, 4, 2]\nw = [1, 2, 1]\nhosts = 60", "topology.pgft.hosts"),
        ("h = 3\nm = [8, 4, 2]\nw = [2, 2, 1]", "topology.pgft.w"),
        ("h = 3\nm = [8, 4, 2]\nw = [1, 2, 1]\nleaf_pattern = \"6 compute + 1 io\"", "topology.pgft.leaf_pattern"),
        (
            "h = 3\nm = [8, 4, 2]\nw = [1, 2, 1]\ntypes = [{ name = \"compute\", ranges = [[0, 40]] }, { name = \"io\", ranges = [[40, 63]] }]",
            "topology.pgft.types[1].ranges",
        ),
        (
            "h = 3\nm = [8, 4, 2]\nw = [1, 2, 1]\ntypes = [{ name = \"compute\", ranges = [[0, 40]] }]",
            "topology.pgft.types",
        ),
        ("h = 0\nm = []\nw = []", "topology.pgft.h"),
    ];
    for (pgft, field) in cases {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join("s.toml"),
            format!("[topology]\nkind = \"pgft\"\n[topology.pgft]\n{pgft}\n"),
        )
        .unwrap();
        let o = weft(dir.path(), &["run", "s.toml"]);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(1), "{pgft}: {err}");
        assert_eq!(err.lines().count(), 1, "{pgft}: {err}");
        assert!(
            err.contains(field) && !err.contains("panicked"),
            "{pgft}: {err}"
        );
    }
}

/// `weft contention` on the seed's example, compute → I/O: at the default scope (the
/// top-level switches' ports, the PGFT routing paper's) D-mod-k's C_topo is 4 and
/// G-D-mod-k's 1, the paper's values; at every port 7 and 4 (every leaf's I/O traffic climbs
/// one port under D-mod-k: 7 sources, 7 destinations). Bad `--routing`, `--pattern`,
/// `--scope` and `--draws` stop with one line naming the flag.
#[test]
fn cli_contention_reports_c_topo_and_refuses_bad_flags() {
    let scen = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/scenarios/pgft/seed_example.toml"
    );
    let dir = tempfile::tempdir().unwrap();
    for (routing, scope, c_topo, all) in [
        ("dmodk", None, 4, 7),
        ("gdmodk", None, 1, 4),
        ("dmodk", Some("all"), 7, 7),
        ("gdmodk", Some("all"), 4, 4),
    ] {
        let mut args = vec![
            "contention",
            scen,
            "--routing",
            routing,
            "--pattern",
            "compute-io",
            "--json",
        ];
        if let Some(s) = scope {
            args.extend(["--scope", s]);
        }
        let o = weft(dir.path(), &args);
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        let j: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
        assert_eq!(j["scope"], scope.unwrap_or("top"));
        assert_eq!(j["c_topo"], c_topo, "{routing} {scope:?}");
        assert_eq!(j["c_topo_by_scope"]["all"], all, "{routing}");
        assert_eq!(j["routes"], 448);
        assert_eq!(j["worst_ports"][0]["c"], c_topo);
        assert_eq!(j["worst_port_all"]["c"], all);
    }
    // The text names the scope and gives every scope's figure.
    let o = weft(
        dir.path(),
        &[
            "contention",
            scen,
            "--routing",
            "dmodk",
            "--pattern",
            "compute-io",
        ],
    );
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(text.contains("C_topo 4 (scope top:"), "{text}");
    assert!(
        text.contains("C_topo by scope: top 4 above-leaf 4 all 7"),
        "{text}"
    );
    for (flag, args) in [
        (
            "--routing",
            vec!["--routing", "ecmp", "--pattern", "all-to-all"],
        ),
        (
            "--pattern",
            vec!["--routing", "dmodk", "--pattern", "compute-storage"],
        ),
        (
            "--pattern",
            vec!["--routing", "dmodk", "--pattern", "shift:64"],
        ),
        (
            "--scope",
            vec![
                "--routing",
                "dmodk",
                "--pattern",
                "compute-io",
                "--scope",
                "tops",
            ],
        ),
        (
            "--draws",
            vec![
                "--routing",
                "dmodk",
                "--pattern",
                "compute-io",
                "--draws",
                "5",
            ],
        ),
        (
            "--draws",
            vec![
                "--routing",
                "random",
                "--pattern",
                "compute-io",
                "--draws",
                "0",
            ],
        ),
    ] {
        let mut all = vec!["contention", scen];
        all.extend(args);
        let o = weft(dir.path(), &all);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(1), "{err}");
        assert_eq!(err.lines().count(), 1, "{err}");
        assert!(err.contains(flag) && !err.contains("panicked"), "{err}");
    }
}

/// `--draws 100` of the per-route Random (the paper's: "values of either 3 or 4" over
/// repeated draws): min, median, max and the draws per value at every scope, the counts
/// summing to 100; the scope's error names the valid scopes.
#[test]
fn cli_contention_draws_report_the_distribution() {
    let scen = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/scenarios/pgft/seed_example.toml"
    );
    let dir = tempfile::tempdir().unwrap();
    for routing in ["random", "random_per_dest"] {
        let o = weft(
            dir.path(),
            &[
                "contention",
                scen,
                "--routing",
                routing,
                "--pattern",
                "compute-io",
                "--draws",
                "100",
                "--json",
            ],
        );
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        let j: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
        assert_eq!(j["draws"], 100);
        assert_eq!(j["scope"], "top");
        assert_eq!(j["c_topo"], j["c_topo_by_scope"]["top"]);
        for scope in ["top", "above-leaf", "all"] {
            let s = &j["c_topo_by_scope"][scope];
            let counts = s["counts"].as_array().unwrap();
            let total: u64 = counts.iter().map(|c| c["draws"].as_u64().unwrap()).sum();
            assert_eq!(total, 100, "{routing} {scope}");
            let (min, max) = (s["min"].as_f64().unwrap(), s["max"].as_f64().unwrap());
            let median = s["median"].as_f64().unwrap();
            assert!(min <= median && median <= max, "{s}");
            assert_eq!(counts[0]["c"].as_f64().unwrap(), min);
        }
        // Per route, every port: the leaf up ports carry 7 sources to most of 7 I/O nodes.
        if routing == "random" {
            assert!(j["c_topo_by_scope"]["all"]["min"].as_u64().unwrap() >= 5);
        }
    }
    let o = weft(
        dir.path(),
        &[
            "contention",
            scen,
            "--routing",
            "random",
            "--pattern",
            "compute-io",
            "--scope",
            "leaf",
        ],
    );
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(
        err.contains("--scope")
            && err.contains("top")
            && err.contains("above-leaf")
            && err.contains("all"),
        "{err}"
    );
}

/// The Opera paper's 3:1 Clos baseline as a PGFT: 648 hosts, 72 ToRs, 36 aggregation and 18
/// core switches of 12 ports each, and its permutation completes.
#[test]
fn opera_clos_baseline_is_the_papers_fabric() {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/scenarios/opera/clos_3to1_648.toml"
    );
    let mut s = weft::scenario::load_scenario(std::path::Path::new(path), &[]).unwrap();
    let f = weft::topology::Fabric::build(&s);
    assert_eq!(f.num_hosts, 648);
    assert_eq!(f.num_switches(), 72 + 36 + 18);
    for n in 648..f.num_nodes() {
        assert_eq!(f.num_ports(n), 12, "switch {n}");
    }
    let tor = 648;
    assert_eq!(f.uplinks(tor), 3);
    assert_eq!(f.uplinks(648 + 72), 6);
    s.workload.message_bytes = 1436 * 4;
    let r = results(&s, 1, 1);
    assert_eq!(r["flows"]["completed"], 648);
}
