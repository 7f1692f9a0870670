//! The layer order that `src/lib.rs` declares, enforced: a module of the library may refer
//! (`crate::X`, in `use` lines or paths) only to modules of its own layer or of lower ones,
//! and no top-level modules refer to each other in a cycle. Unit tests (the `#[cfg(test)]
//! mod` at the end of a file, by the project's convention) may use any layer. An upward
//! reference that must stay for a while goes in `KNOWN_UPWARD` with its reason; a listed one
//! that is gone fails the test too, so the list only shrinks.

use std::collections::BTreeSet;
use std::path::Path;

/// The layers of `src/lib.rs`, lowest first; a module may use its own layer and those below.
/// `checkpoint` sits with `sim` (it snapshots the running engine), `opera_faults_cmd` with
/// the other commands' back ends.
const LAYERS: &[&[&str]] = &[
    &["time", "rng", "packet", "scenario"],
    &["topology"],
    &["workload"],
    &["contention", "metrics"],
    &["lb"],
    &["transport"],
    &["model"],
    &["net"],
    &["engine"],
    &["sim", "checkpoint"],
    &["report", "validate_cmd", "opera_faults_cmd"],
    &["sweep"],
    &["reproduce"],
];

/// Upward references allowed for now, as (from, to), each with its reason. None today.
const KNOWN_UPWARD: &[(&str, &str)] = &[];

fn rank(module: &str) -> Option<usize> {
    LAYERS.iter().position(|layer| layer.contains(&module))
}

/// Every `crate::NAME` a line of code (not a comment) names.
fn referenced(line: &str) -> Vec<String> {
    let code = line.split("//").next().unwrap_or("");
    let mut out = Vec::new();
    let mut rest = code;
    while let Some(at) = rest.find("crate::") {
        rest = &rest[at + "crate::".len()..];
        let name: String = rest
            .chars()
            .take_while(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || *c == '_')
            .collect();
        if !name.is_empty() {
            out.push(name);
        }
    }
    out
}

fn walk(dir: &Path, files: &mut Vec<std::path::PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            walk(&p, files);
        } else if p.extension().is_some_and(|x| x == "rs") {
            files.push(p);
        }
    }
}

#[test]
fn no_module_refers_up_the_declared_layer_order() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let lib = std::fs::read_to_string(src.join("lib.rs")).unwrap();
    let declared: Vec<&str> = lib
        .lines()
        .filter_map(|l| l.strip_prefix("pub mod "))
        .map(|l| l.trim_end_matches(';'))
        .collect();
    for m in &declared {
        assert!(
            rank(m).is_some(),
            "src/lib.rs declares `{m}`, which LAYERS does not place"
        );
    }
    let mut files = Vec::new();
    walk(&src, &mut files);
    let mut upward: BTreeSet<(String, String)> = BTreeSet::new();
    let mut edges: BTreeSet<(String, String)> = BTreeSet::new();
    let mut evidence = Vec::new();
    for f in &files {
        let rel = f.strip_prefix(&src).unwrap();
        let top = rel
            .components()
            .next()
            .unwrap()
            .as_os_str()
            .to_string_lossy();
        let top = top.trim_end_matches(".rs").to_string();
        let Some(own) = rank(&top).filter(|_| declared.contains(&top.as_str())) else {
            continue; // lib.rs, main.rs and the binary's own modules
        };
        let text = std::fs::read_to_string(f).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        let tests_at = (0..lines.len())
            .find(|&i| {
                lines[i].trim() == "#[cfg(test)]"
                    && lines
                        .get(i + 1)
                        .is_some_and(|l| l.trim_start().starts_with("mod "))
            })
            .unwrap_or(lines.len());
        for (i, line) in lines[..tests_at].iter().enumerate() {
            for to in referenced(line) {
                if to != top && declared.contains(&to.as_str()) {
                    edges.insert((top.clone(), to.clone()));
                }
                if rank(&to).is_some_and(|r| r > own) && upward.insert((top.clone(), to.clone())) {
                    evidence.push(format!("{}:{}: {}", rel.display(), i + 1, line.trim()));
                }
            }
        }
    }
    let known: BTreeSet<(String, String)> = KNOWN_UPWARD
        .iter()
        .map(|(a, b)| (a.to_string(), b.to_string()))
        .collect();
    let new: Vec<_> = upward.difference(&known).collect();
    assert!(
        new.is_empty(),
        "imports up the layer order of src/lib.rs: {new:?}\nfirst occurrences:\n{}",
        evidence.join("\n")
    );
    let gone: Vec<_> = known.difference(&upward).collect();
    assert!(gone.is_empty(), "fixed, remove from KNOWN_UPWARD: {gone:?}");
    if let Some(cycle) = find_cycle(&edges) {
        panic!(
            "top-level modules refer to each other in a cycle: {}",
            cycle.join(" -> ")
        );
    }
}

/// A cycle of the directed graph `edges`, if any, as its nodes with the first repeated.
fn find_cycle(edges: &BTreeSet<(String, String)>) -> Option<Vec<String>> {
    fn visit(
        n: &str,
        edges: &BTreeSet<(String, String)>,
        path: &mut Vec<String>,
        done: &mut BTreeSet<String>,
    ) -> Option<Vec<String>> {
        if let Some(at) = path.iter().position(|p| p == n) {
            let mut cycle = path[at..].to_vec();
            cycle.push(n.to_string());
            return Some(cycle);
        }
        if done.contains(n) {
            return None;
        }
        path.push(n.to_string());
        for (_, to) in edges.iter().filter(|(from, _)| from == n) {
            if let Some(c) = visit(to, edges, path, done) {
                return Some(c);
            }
        }
        path.pop();
        done.insert(n.to_string());
        None
    }
    let mut done = BTreeSet::new();
    edges
        .iter()
        .find_map(|(from, _)| visit(from, edges, &mut Vec::new(), &mut done))
}

#[test]
fn the_cycle_finder_finds_a_cycle_and_only_a_cycle() {
    let e = |pairs: &[(&str, &str)]| -> BTreeSet<(String, String)> {
        pairs
            .iter()
            .map(|(a, b)| (a.to_string(), b.to_string()))
            .collect()
    };
    assert_eq!(find_cycle(&e(&[("a", "b"), ("b", "c"), ("a", "c")])), None);
    let c = find_cycle(&e(&[("a", "b"), ("b", "c"), ("c", "a")])).unwrap();
    assert_eq!(c.len(), 4, "{c:?}");
    assert_eq!(c.first(), c.last());
    assert_eq!(referenced("use crate::sim::agree; // crate::net"), ["sim"]);
}

/// Functions of the library longer than this many lines (signature to closing brace) fail
/// `no_library_function_exceeds_the_line_limit`: split them along their stages.
const MAX_FN_LINES: usize = 100;

/// The (name, lines) of each function in `text` whose body ends at a line holding only `}` at
/// the indentation of its `fn` line (rustfmt's layout); one-line and bodiless ones are skipped.
fn long_functions(text: &str, limit: usize) -> Vec<(String, usize)> {
    let lines: Vec<&str> = text.lines().collect();
    let mut out = Vec::new();
    for (i, line) in lines.iter().enumerate() {
        let trimmed = line.trim_start();
        let indent = &line[..line.len() - trimmed.len()];
        let sig = [
            "pub(crate) fn ",
            "pub(super) fn ",
            "pub fn ",
            "fn ",
            "const fn ",
        ]
        .iter()
        .find_map(|p| trimmed.strip_prefix(p));
        let Some(rest) = sig else { continue };
        if line.trim_end().ends_with(';') || line.trim_end().ends_with('}') {
            continue;
        }
        let name: String = rest
            .chars()
            .take_while(|c| c.is_alphanumeric() || *c == '_')
            .collect();
        let close = format!("{indent}}}");
        if let Some(end) = lines[i + 1..].iter().position(|l| *l == close) {
            if end + 1 > limit {
                out.push((name, end + 1));
            }
        }
    }
    out
}

#[test]
fn no_library_function_exceeds_the_line_limit() {
    let mut files = Vec::new();
    walk(
        Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/src")),
        &mut files,
    );
    let mut long = Vec::new();
    for f in files {
        let text = std::fs::read_to_string(&f).unwrap();
        for (name, n) in long_functions(&text, MAX_FN_LINES) {
            long.push(format!("{}: fn {name}: {n} lines", f.display()));
        }
    }
    assert!(
        long.is_empty(),
        "over {MAX_FN_LINES} lines:\n{}",
        long.join("\n")
    );
}

#[test]
fn the_length_check_counts_a_long_function_and_skips_short_ones() {
    let body = "    let x = 1;\n".repeat(120);
    let text = format!("fn short() {{\n}}\n\nimpl A {{\n    pub fn long() {{\n{body}    }}\n}}\n");
    assert_eq!(long_functions(&text, 100), vec![("long".to_string(), 121)]);
    assert!(long_functions(&text, 200).is_empty());
}

/// The module path (`engine::comm`) a file under `src/` defines (`""` for `lib.rs`).
fn module_of(src: &Path, file: &Path) -> String {
    let rel = file.strip_prefix(src).unwrap().with_extension("");
    let mut parts: Vec<String> = rel
        .iter()
        .map(|p| p.to_string_lossy().into_owned())
        .collect();
    if parts.last().is_some_and(|p| p == "mod" || p == "lib") {
        parts.pop();
    }
    parts.join("::")
}

/// The modules `text` (the file of module `module`) declares `pub`, by path: `pub mod x;` and
/// inline `pub mod x {` (one level, which is all the crate uses).
fn pub_modules_declared(module: &str, text: &str) -> Vec<String> {
    text.lines()
        .filter_map(|l| l.trim_start().strip_prefix("pub mod "))
        .map(|rest| {
            let name: String = rest
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                .collect();
            if module.is_empty() {
                name
            } else {
                format!("{module}::{name}")
            }
        })
        .collect()
}

/// The library's public modules: declared `pub` in a module that is itself public.
fn public_modules() -> BTreeSet<String> {
    let src = Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/src"));
    let mut files = Vec::new();
    walk(src, &mut files);
    let mut declared = BTreeSet::new();
    for f in files {
        let module = module_of(src, &f);
        // The binary's own modules (`main.rs` and what it declares) are not the library's.
        if module == "main" {
            continue;
        }
        let text = std::fs::read_to_string(&f).unwrap();
        declared.extend(pub_modules_declared(&module, &text));
    }
    let parent_public = |m: &String| match m.rfind("::") {
        None => true,
        Some(at) => declared.contains(&m[..at]),
    };
    declared
        .iter()
        .filter(|m| parent_public(m))
        .cloned()
        .collect()
}

/// The public API is a decision, not an accident: every public module is listed (as
/// `` `weft::x::y` ``) between the `public-api` markers of docs/ARCHITECTURE.md with what it is
/// for, and every listed one is public. Everything else is `pub(crate)` (`unreachable_pub` and
/// `missing_docs` are on in `src/lib.rs`).
#[test]
fn the_public_modules_are_the_ones_docs_architecture_lists() {
    let doc = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/docs/ARCHITECTURE.md"))
        .unwrap();
    let (_, rest) = doc
        .split_once("<!-- public-api -->")
        .expect("docs/ARCHITECTURE.md has a <!-- public-api --> marker");
    let (list, _) = rest
        .split_once("<!-- /public-api -->")
        .expect("docs/ARCHITECTURE.md closes the list with <!-- /public-api -->");
    let listed: BTreeSet<String> = list
        .split('`')
        .skip(1)
        .step_by(2)
        .filter_map(|s| s.strip_prefix("weft::"))
        .map(str::to_string)
        .collect();
    let public = public_modules();
    let unlisted: Vec<_> = public.difference(&listed).collect();
    let stale: Vec<_> = listed.difference(&public).collect();
    assert!(
        unlisted.is_empty() && stale.is_empty(),
        "public but not in docs/ARCHITECTURE.md's API list: {unlisted:?}; listed but not public: {stale:?}"
    );
}

#[test]
fn the_api_check_reads_modules_from_files_and_declarations() {
    let src = Path::new("/r/src");
    assert_eq!(module_of(src, Path::new("/r/src/lib.rs")), "");
    assert_eq!(module_of(src, Path::new("/r/src/engine/mod.rs")), "engine");
    assert_eq!(
        module_of(src, Path::new("/r/src/engine/comm.rs")),
        "engine::comm"
    );
    let text = "pub mod a;\npub(crate) mod b;\n    pub mod c {\nmod d;\n";
    assert_eq!(pub_modules_declared("x", text), ["x::a", "x::c"]);
    assert_eq!(pub_modules_declared("", "pub mod top;\n"), ["top"]);
}
