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
    for entry in std::fs::read_dir(root.join("partitions")).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_str().unwrap().to_string();
        let Some(stem) = name.strip_suffix(".plan") else {
            continue;
        };
        // NAME-pP-rR.plan is made from scenarios/NAME.toml with --parts P --ranks R.
        let mut it = stem.rsplitn(3, '-');
        let ranks = it.next().unwrap().strip_prefix('r').expect("-rR suffix");
        let parts = it.next().unwrap().strip_prefix('p').expect("-pP suffix");
        let scenario = root
            .join("scenarios")
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
    assert_eq!(checked, 4, "expected the four k = 64 reference plans");
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
