//! The same scenario and seed give identical results whatever the thread and partition counts.

mod common;
use common::{results, scenario};
use weft::scenario::{LbPolicy, TopologyKind};

#[test]
fn results_do_not_depend_on_threads_or_partitions() {
    for policy in LbPolicy::ALL {
        for (kind, k) in [(TopologyKind::FatTree, 4), (TopologyKind::LeafSpine, 8)] {
            let s = scenario(kind, k, policy, 64 * 1024);
            let reference = results(&s, 1, 1);
            for (threads, parts) in [(2, 2), (2, 4), (1, 4), (2, 3), (2, 8), (1, 7)] {
                let r = results(&s, threads, parts);
                assert_eq!(
                    r, reference,
                    "{policy:?} {kind:?}: threads {threads}, partitions {parts} differ"
                );
            }
        }
    }
}

#[test]
fn different_seeds_give_different_results() {
    // Guards the test above against comparing constants.
    let mut s = scenario(TopologyKind::FatTree, 4, LbPolicy::Rsq, 64 * 1024);
    let a = results(&s, 1, 1);
    s.seed = 2;
    let b = results(&s, 1, 1);
    assert_ne!(a, b);
}

#[test]
fn cli_outputs_are_identical_across_threads() {
    let bin = env!("CARGO_BIN_EXE_weft");
    let dir = tempfile::tempdir().unwrap();
    let scen = dir.path().join("s.toml");
    std::fs::write(
        &scen,
        "[topology]\nk = 4\n[lb]\npolicy = \"rps\"\n[workload]\nmessage_bytes = 65536\n",
    )
    .unwrap();
    let mut outs = vec![];
    for (threads, parts) in [("1", "1"), ("2", "4")] {
        let out = dir.path().join(format!("out{threads}"));
        let st = std::process::Command::new(bin)
            .args([
                "run",
                scen.to_str().unwrap(),
                "--threads",
                threads,
                "--partitions",
                parts,
                "--out",
                out.to_str().unwrap(),
            ])
            .output()
            .unwrap();
        assert!(
            st.status.success(),
            "{}",
            String::from_utf8_lossy(&st.stderr)
        );
        let summary: serde_json::Value =
            serde_json::from_slice(&std::fs::read(out.join("summary.json")).unwrap()).unwrap();
        let hlog = std::fs::read(out.join("latency.hlog")).unwrap();
        assert!(String::from_utf8_lossy(&hlog).contains("Tag=latency_ns,"));
        outs.push((
            summary["results"].clone(),
            summary["scenario"].clone(),
            hlog,
        ));
    }
    assert_eq!(outs[0], outs[1]);
}

#[test]
fn drops_and_incomplete_flows_are_deterministic_too() {
    let mut s = scenario(TopologyKind::FatTree, 6, LbPolicy::Rsq, 200_000);
    s.switch.buffer_bytes = weft::scenario::BufferBytes::Bytes(3 * 4158);
    let reference = results(&s, 1, 1);
    assert!(
        reference["packets"]["dropped"].as_u64().unwrap() > 0,
        "the case must drop"
    );
    for (threads, parts) in [(2, 6), (2, 18), (1, 5)] {
        assert_eq!(
            results(&s, threads, parts),
            reference,
            "threads {threads}, partitions {parts}"
        );
    }
}
