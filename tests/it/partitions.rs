//! The committed partition plans in partitions/ are exactly what `weft partition` makes for
//! the reference scenarios, and a plan file drives a run to the same results.

use std::path::Path;
use std::process::Command;

const BIN: &str = env!("CARGO_BIN_EXE_weft");

#[test]
fn committed_plans_regenerate_byte_for_byte() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let dir = tempfile::tempdir().unwrap();
    let mut checked = 0;
    // partitions/DIR/NAME-pP-rR.plan comes from scenarios/DIR/NAME.toml.
    let plans = std::fs::read_dir(root.join("partitions"))
        .unwrap()
        .chain(std::fs::read_dir(root.join("partitions/opera")).unwrap())
        .map(|e| e.unwrap().path());
    for path in plans {
        let name = path.file_name().unwrap().to_str().unwrap().to_string();
        let Some(stem) = name.strip_suffix(".plan") else {
            continue;
        };
        // NAME-pP-rR.plan is made from scenarios/NAME.toml with --parts P --ranks R.
        let mut it = stem.rsplitn(3, '-');
        let ranks = it.next().unwrap().strip_prefix('r').expect("-rR suffix");
        let parts = it.next().unwrap().strip_prefix('p').expect("-pP suffix");
        let sub = path
            .parent()
            .unwrap()
            .strip_prefix(root.join("partitions"))
            .unwrap();
        let scenario = root
            .join("scenarios")
            .join(sub)
            .join(format!("{}.toml", it.next().unwrap()));
        let out = dir.path().join(&name);
        let o = Command::new(BIN)
            .args([
                "partition",
                scenario.to_str().unwrap(),
                "--parts",
                parts,
                "--ranks",
                ranks,
                "-o",
            ])
            .arg(&out)
            .output()
            .unwrap();
        assert!(
            o.status.success(),
            "{name}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
        assert!(
            std::fs::read(&out).unwrap() == std::fs::read(&path).unwrap(),
            "{name} differs from a fresh `weft partition`"
        );
        checked += 1;
    }
    assert_eq!(
        checked, 9,
        "expected the four k = 64 fat-tree, three k = 24 and two k = 64 Opera reference plans"
    );
}

#[test]
fn a_plan_file_gives_the_same_results_as_automatic_partitioning() {
    let dir = tempfile::tempdir().unwrap();
    let s = dir.path().join("s.toml");
    std::fs::write(
        &s,
        "[topology]\nk = 6\n[lb]\npolicy = \"jsq\"\n[workload]\nmessage_bytes = 65536\n",
    )
    .unwrap();
    let plan = dir.path().join("p.plan");
    let o = Command::new(BIN)
        .args([
            "partition",
            s.to_str().unwrap(),
            "--parts",
            "12",
            "-o",
            plan.to_str().unwrap(),
        ])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let text = std::fs::read_to_string(&plan).unwrap();
    assert!(text.contains("parts = 12") && text.contains("[[partition]]"));
    let run = |extra: &[&str]| {
        let o = Command::new(BIN)
            .args(["run", s.to_str().unwrap(), "--json"])
            .args(extra)
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        serde_json::from_slice::<serde_json::Value>(&o.stdout).unwrap()
    };
    let auto = run(&[]);
    let planned = run(&["--partition", plan.to_str().unwrap(), "--threads", "2"]);
    assert_eq!(planned["run"]["partitions"], 12);
    assert_eq!(auto["results"], planned["results"]);
    // A plan for another fabric is refused with one line naming the file.
    let o = Command::new(BIN)
        .args([
            "run",
            s.to_str().unwrap(),
            "--set",
            "topology.k=4",
            "--partition",
            plan.to_str().unwrap(),
        ])
        .output()
        .unwrap();
    assert!(!o.status.success());
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.contains("p.plan") && err.contains("another fabric"),
        "{err}"
    );
}

// ---- Hand-written plans that cut host links ----

/// Writes `toml` as s.toml in `dir` and returns the fingerprint line `weft partition` writes
/// for it (the fabric check a hand-written plan must pass).
fn fingerprint_line(dir: &Path, toml: &str) -> String {
    std::fs::write(dir.join("s.toml"), toml).unwrap();
    let plan = dir.join("generated.plan");
    let o = Command::new(BIN)
        .args(["partition", "s.toml", "--parts", "2", "-o"])
        .arg(&plan)
        .current_dir(dir)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    std::fs::read_to_string(&plan)
        .unwrap()
        .lines()
        .find(|l| l.starts_with("fingerprint"))
        .expect("a fingerprint line")
        .to_string()
}

/// A plan file for a k = 4 fat tree (36 nodes) with one partition per entry of `parts`, all
/// on rank 0. The informational fields (ports, cut_links, lookahead, imbalance) are
/// deliberately wrong: weft recomputes them from the node ranges.
fn hand_plan(fingerprint: &str, parts: &[&str]) -> String {
    let mut s = format!(
        "# written by hand\nformat = 1\ntopology = \"fat_tree k=4\"\n{fingerprint}\nnodes = 36\nparts = {}\nranks = 1\nlookahead_ns = 1.0\ncut_links = 0\nimbalance = 1.0\n",
        parts.len()
    );
    for (i, nodes) in parts.iter().enumerate() {
        s += &format!("\n[[partition]]\nid = {i}\nrank = 0\nports = 0\nnodes = \"{nodes}\"\n");
    }
    s
}

/// `weft run s.toml --json EXTRA...` in `dir`; must succeed.
fn run_json(dir: &Path, extra: &[&str]) -> serde_json::Value {
    let o = Command::new(BIN)
        .args(["run", "s.toml", "--json"])
        .args(extra)
        .current_dir(dir)
        .output()
        .unwrap();
    assert!(
        o.status.success(),
        "{extra:?}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    serde_json::from_slice(&o.stdout).unwrap()
}

#[test]
fn a_hand_written_plan_cutting_host_links_gives_the_automatic_results() {
    // k = 4 fat tree: hosts 0-15, edge switches 16-23, aggregation 24-31, cores 32-35. Host
    // links are shorter than the others and switches add forwarding latency: the lookahead
    // (the fabric's smallest link delay) is 100 ns (edge -> host; no forwarding at a host),
    // not 250, and cut host links are safe with it.
    let toml = "seed = 3\n[topology]\nk = 4\n[topology.tiers.host_edge]\nlatency_ns = 100\n\
                [switch]\nforwarding_latency_ns = 150\n[lb]\npolicy = \"jsq\"\n\
                [workload]\nmessage_bytes = 65536\n";
    let dir = tempfile::tempdir().unwrap();
    let fp = fingerprint_line(dir.path(), toml);
    let auto = run_json(dir.path(), &["--partitions", "4"]);
    assert_eq!(auto["results"]["flows"]["completed"], 16);
    let single = run_json(dir.path(), &["--partitions", "1"]);
    assert_eq!(auto["results"], single["results"]);

    // Every host apart from every switch: all 16 host links cut both ways (32), plus the
    // 16 agg-core links both ways (32).
    let plan = hand_plan(&fp, &["0-7", "8-15", "16-31", "32-35"]);
    std::fs::write(dir.path().join("hosts.plan"), &plan).unwrap();
    for threads in ["1", "2"] {
        let r = run_json(
            dir.path(),
            &["--partition", "hosts.plan", "--threads", threads],
        );
        assert_eq!(r["run"]["partitions"], 4, "{}", r["run"]);
        assert_eq!(r["run"]["cut_links"], 64, "{}", r["run"]);
        assert_eq!(r["run"]["lookahead_ns"], 100.0, "{}", r["run"]);
        assert_eq!(
            r["results"], auto["results"],
            "hosts.plan, {threads} threads"
        );
    }

    // Scattered: hosts away from their edge switches and in other pods' partitions,
    // partitions made of non-contiguous ranges, a lone host in a partition of cores.
    let plan = hand_plan(
        &fp,
        &[
            "0 5 10-11 20-21 33",
            "1-2 12 16 24 30-31",
            "3 32 34-35",
            "4 6-9 13 17-19 25-27",
            "14-15 22-23 28-29",
        ],
    );
    std::fs::write(dir.path().join("scattered.plan"), &plan).unwrap();
    let r = run_json(
        dir.path(),
        &["--partition", "scattered.plan", "--threads", "2"],
    );
    assert_eq!(r["run"]["partitions"], 5);
    assert_eq!(r["run"]["lookahead_ns"], 100.0, "{}", r["run"]);
    assert_eq!(r["results"], auto["results"], "scattered.plan");
}

#[test]
fn a_hand_written_plan_cutting_a_zero_latency_host_link_is_refused() {
    // Host links of zero latency are fine while uncut, even with many partitions...
    let toml = "[topology]\nk = 4\n[topology.tiers.host_edge]\nlatency_ns = 0\n\
                [switch]\nforwarding_latency_ns = 150\n[workload]\nmessage_bytes = 16384\n";
    let dir = tempfile::tempdir().unwrap();
    let fp = fingerprint_line(dir.path(), toml);
    let auto = run_json(dir.path(), &["--partitions", "8"]);
    // Windows are the fabric's smallest positive link delay: host -> edge, 0 ns + 150 ns
    // of forwarding.
    assert_eq!(auto["run"]["lookahead_ns"], 150.0, "{}", auto["run"]);
    // ...but a plan that cuts one is refused: an edge switch delivers to a host with no
    // forwarding delay, so the forwarding latency does not save the lookahead.
    std::fs::write(dir.path().join("p.plan"), hand_plan(&fp, &["0", "1-35"])).unwrap();
    let o = Command::new(BIN)
        .args(["run", "s.toml", "--partition", "p.plan"])
        .current_dir(dir.path())
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.starts_with("error:"), "{err}");
    assert!(
        err.contains("p.plan")
            && err.contains("topology.tiers.host_edge.latency_ns")
            && err.contains("zero lookahead"),
        "{err}"
    );
    // The message must not misstate the scenario: forwarding latency is 150 ns here.
    assert!(
        !err.contains("forwarding_latency_ns is 0"),
        "the error claims switch.forwarding_latency_ns is 0 although it is 150: {err}"
    );
}

/// An expander (10 racks of 2 hosts, 3 uplinks; host links of 0 ns, ToR-to-ToR 500 ns):
/// `weft partition` cuts it into blocks of racks (ToR-to-ToR links only, lookahead 500 ns),
/// the plan gives the automatic and the single-partition results, and the plan is refused for
/// another seed, whose graph is another fabric.
#[test]
fn an_expander_plan_file_gives_the_same_results() {
    let toml = "[topology]\nkind = \"expander\"\nracks = 10\nhosts_per_rack = 2\nuplinks = 3\n\
                [topology.tiers.host_tor]\nlatency_ns = 0\n[lb]\npolicy = \"drill\"\n\
                [workload]\nmessage_bytes = 65536\n";
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("s.toml"), toml).unwrap();
    let o = Command::new(BIN)
        .args(["partition", "s.toml", "--parts", "5", "-o", "p.plan"])
        .current_dir(dir.path())
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let plan = std::fs::read_to_string(dir.path().join("p.plan")).unwrap();
    assert!(
        plan.contains("topology = \"expander racks=10 hosts_per_rack=2 uplinks=3\""),
        "{plan}"
    );
    let single = run_json(dir.path(), &["--partitions", "1"]);
    let auto = run_json(dir.path(), &["--partitions", "10", "--threads", "2"]);
    let planned = run_json(dir.path(), &["--partition", "p.plan", "--threads", "2"]);
    assert_eq!(planned["run"]["partitions"], 5);
    assert_eq!(planned["run"]["lookahead_ns"], 500.0, "{}", planned["run"]);
    assert!(planned["run"]["cut_links"].as_u64().unwrap() > 0);
    assert_eq!(single["results"]["flows"]["completed"], 20);
    assert_eq!(auto["results"], single["results"]);
    assert_eq!(planned["results"], single["results"]);
    let o = Command::new(BIN)
        .args(["run", "s.toml", "--set", "seed=2", "--partition", "p.plan"])
        .current_dir(dir.path())
        .output()
        .unwrap();
    assert!(!o.status.success());
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("another fabric"), "{err}");
}

/// Issue 13: plans for up to 1,024 ranks and beyond on the k = 64 fat tree (the fabric of the
/// 65,536-GPU AI scenarios too): every node in exactly one partition, every rank used.
#[test]
fn the_k64_fat_tree_splits_onto_1024_and_2048_ranks() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let dir = tempfile::tempdir().unwrap();
    for ranks in [1024usize, 2048] {
        let out = dir.path().join(format!("p{ranks}.plan"));
        let o = Command::new(BIN)
            .arg("partition")
            .arg(root.join("scenarios/fat_tree_k64.toml"))
            .args([
                "--parts",
                &ranks.to_string(),
                "--ranks",
                &ranks.to_string(),
                "-o",
            ])
            .arg(&out)
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        let plan: toml::Value = toml::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap();
        let nodes = plan["nodes"].as_integer().unwrap() as usize;
        assert_eq!(
            nodes,
            65536 + 5 * 1024,
            "k = 64: hosts, edge, aggregation and core switches"
        );
        let mut owner = vec![usize::MAX; nodes];
        let mut rank_used = vec![false; ranks];
        let parts = plan["partition"].as_array().unwrap();
        assert_eq!(parts.len(), ranks);
        for p in parts {
            let id = p["id"].as_integer().unwrap() as usize;
            rank_used[p["rank"].as_integer().unwrap() as usize] = true;
            for range in p["nodes"].as_str().unwrap().split_whitespace() {
                let (a, b) = range.split_once('-').unwrap_or((range, range));
                let (a, b) = (a.parse::<usize>().unwrap(), b.parse::<usize>().unwrap());
                for (n, o) in owner.iter_mut().enumerate().take(b + 1).skip(a) {
                    assert_eq!(*o, usize::MAX, "node {n} in two partitions");
                    *o = id;
                }
            }
        }
        assert!(
            owner.iter().all(|&o| o != usize::MAX),
            "every node has a partition"
        );
        assert!(rank_used.iter().all(|&u| u), "every rank holds a partition");
    }
}
