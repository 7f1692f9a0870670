//! The scenario reference (`weft reference`, docs/guide/src/reference.md): the committed page
//! is what the code generates, and every range it declares is the one `weft validate`
//! enforces.

use std::path::Path;
use weft::scenario::load_scenario_str;
use weft::scenario::reference::{fields, markdown, Field};

use crate::common::weft_cmd as weft;

const PAGE: &str = "docs/guide/src/reference.md";

#[test]
fn committed_reference_page_is_what_the_code_generates() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join(PAGE);
    let committed = std::fs::read_to_string(&path).unwrap_or_default();
    let generated = markdown();
    if committed != generated {
        let diff = committed
            .lines()
            .zip(generated.lines())
            .position(|(a, b)| a != b)
            .unwrap_or(committed.lines().count().min(generated.lines().count()));
        panic!(
            "{PAGE} is not what the scenario structs generate (first difference at line {}: \
             committed {:?}, generated {:?}). Regenerate it with \
             `cargo run --release -- reference -o {PAGE}` and commit it.",
            diff + 1,
            committed.lines().nth(diff).unwrap_or("<end>"),
            generated.lines().nth(diff).unwrap_or("<end>"),
        );
    }
}

/// Scenarios in which a field's checks apply (most apply always; some only with their
/// fabric, policy, transport or workload).
const BASES: &[&str] = &[
    "",
    "topology.kind = \"leaf_spine\"",
    "topology.kind = \"opera\"\nlb.policy = \"rps\"",
    "topology.kind = \"expander\"\nlb.policy = \"ecmp\"",
    "switch.trim = true\nswitch.buffer_bytes = 1000000\nhost.cc = \"dctcp\"",
    "host.cc = \"dctcp\"",
    "host.cc = \"nscc\"",
    "host.cc = \"swift\"",
    "host.cc = \"mswift\"",
    "switch.trim = true\nswitch.buffer_bytes = 1000000\nhost.cc = \"ndp\"",
    "lb.policy = \"reps\"",
    "lb.policy = \"bitmap\"",
    "lb.policy = \"ethereal\"",
    "lb.policy = \"psp\"",
    "topology.kind = \"leaf_spine\"\nlb.policy = \"psp\"\nlb.psp.remote = true",
    "lb.policy = \"conga\"\ntopology.kind = \"leaf_spine\"",
    "lb.policy = \"sglb\"",
    "lb.policy = \"ar\"\nlb.ar.mode = \"flowlet\"",
    "lb.policy = \"dlb\"\nlb.dlb.mode = \"flowlet\"",
    "lb.policy = \"jsq\"",
    "workload.kind = \"continuous\"\nworkload.load = 0.5\nworkload.duration_us = 10",
    "workload.kind = \"shuffle\"",
    "workload.kind = \"skew\"",
    "workload.kind = \"poisson\"\nworkload.load = 0.1\nworkload.duration_us = 10\n\
     workload.size_cdf = \"scenarios/data/flow_size_cdf/websearch.csv\"\n\
     [workload.with_shuffle]",
    "workload.kind = \"fsdp2\"\nworkload.model = \"llama3-8b\"\nworkload.mode = \"ring\"",
    "workload.kind = \"moe\"\nworkload.moe.tokens_per_gpu = 100",
];

/// Whether loading `base` with `path = value` fails with an error naming the field.
fn refused(base: &str, path: &str, value: &str) -> bool {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let set = [format!("{path}={value}")];
    match load_scenario_str(base, "range", root, &set) {
        Ok(_) => false,
        Err(e) => format!("{e:#}").contains(&format!(": {path}: ")),
    }
}

fn show(v: f64, integer: bool) -> String {
    if integer {
        format!("{}", v as i64)
    } else {
        format!("{v:?}")
    }
}

/// The (inside, outside) value pairs at each declared bound: the bound itself (or just inside
/// an exclusive one) and the nearest value beyond it.
fn probes(f: &Field) -> Vec<(&'static str, f64, f64)> {
    let b = f.bounds;
    let step = |v: f64| match f.integer {
        true => 1.0,
        false => (v.abs() * 1e-9).max(1e-12),
    };
    let within = |v: f64| match f.integer {
        true => 1.0,
        false => (v.abs() * 1e-6).max(1e-6),
    };
    let mut out = Vec::new();
    if let Some(m) = b.min {
        out.push(("minimum", m, m - step(m)));
    }
    if let Some(m) = b.exclusive_min {
        out.push(("exclusive minimum", m + within(m), m));
    }
    if let Some(m) = b.max {
        out.push(("maximum", m, m + step(m)));
    }
    if let Some(m) = b.exclusive_max {
        out.push(("exclusive maximum", m - within(m), m));
    }
    out
}

/// The bounds of `f` that no scenario enforces as declared: none accepts the bound (or the
/// value just inside an exclusive one) while refusing, naming the field, the nearest value
/// beyond it.
fn dishonest(f: &Field) -> Vec<String> {
    let mut wrong = Vec::new();
    for (bound, inside, outside) in probes(f) {
        let (i, o) = (show(inside, f.integer), show(outside, f.integer));
        let honest = BASES
            .iter()
            .any(|base| !refused(base, &f.path, &i) && refused(base, &f.path, &o));
        if !honest {
            wrong.push(format!(
                "{} ({bound}): no scenario accepts {i} and refuses {o} naming the field",
                f.path
            ));
        }
    }
    wrong
}

#[test]
fn every_declared_range_is_the_one_validation_enforces() {
    let ranged: Vec<Field> = fields().into_iter().filter(|f| f.bounds.any()).collect();
    assert!(ranged.len() >= 80, "only {} ranged fields", ranged.len());
    let mut wrong = Vec::new();
    for f in &ranged {
        assert!(
            !f.path.contains("[]") && !f.path.contains("NAME"),
            "{}: ranges inside arrays and maps of tables are not checked here",
            f.path
        );
        wrong.extend(dishonest(f));
    }
    assert!(
        wrong.is_empty(),
        "declared ranges (#[schemars(range(..))] in src/scenario/) that validation does not \
         enforce as declared:\n{}",
        wrong.join("\n")
    );
}

#[test]
fn a_range_declared_one_off_is_caught() {
    let mut f = fields()
        .into_iter()
        .find(|f| f.path == "lb.reps.buffer")
        .expect("lb.reps.buffer");
    assert!(dishonest(&f).is_empty());
    f.bounds.max = Some(17.0);
    assert_eq!(dishonest(&f).len(), 1, "a maximum one too high");
    f.bounds.max = Some(15.0);
    assert_eq!(dishonest(&f).len(), 1, "a maximum one too low");
    let mut f = fields()
        .into_iter()
        .find(|f| f.path == "host.nscc.gamma")
        .expect("host.nscc.gamma");
    assert!(dishonest(&f).is_empty());
    f.bounds.exclusive_min = None;
    f.bounds.min = Some(0.0);
    assert_eq!(
        dishonest(&f).len(),
        1,
        "an inclusive bound that is exclusive"
    );
}

#[test]
fn weft_reference_prints_the_page_and_writes_it_with_o() {
    let out = weft(&["reference"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(String::from_utf8(out.stdout).unwrap(), markdown());
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("reference.md");
    let out = weft(&["reference", "-o", file.to_str().unwrap()]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(out.stdout.is_empty());
    assert_eq!(std::fs::read_to_string(&file).unwrap(), markdown());
}
