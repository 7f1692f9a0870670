//! A fuzz-style property test of the scenario loader: mutations of every shipped scenario
//! (dropped, duplicated and retyped keys, out-of-range and extreme numbers, truncated files,
//! random characters) go through `weft validate`'s code path (`load_scenario_str`, then
//! `size_report` where the mutation left the fabric small). Property: never a panic, never a
//! hang, and either a valid scenario or one error line that names the file (the loader's
//! errors, which also name the field past the TOML syntax) or a field (the model's checks).
//!
//! `WEFT_FUZZ_CASES` sets the number of cases (default 10,000, a few seconds; the documented
//! longer run is 1,000,000) and `WEFT_FUZZ_SEED` the first case's seed.

use rand::seq::SliceRandom;
use rand::{Rng, SeedableRng};
use rand_pcg::Pcg64;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};
use weft::scenario::load_scenario_str;

/// A shipped scenario that loads as it is, with its folder (matrix files are relative to it).
struct Seed {
    path: PathBuf,
    text: String,
    /// Its fabric is small (at most 1,024 hosts) and its `size_report` (which builds the
    /// model) takes under 50 ms, so mutations that keep the fabric get the whole validate
    /// path in bounded time.
    small: bool,
    /// Its `[topology]`, to tell whether a mutation changed the fabric.
    topology: serde_json::Value,
}

fn shipped_scenarios() -> Vec<Seed> {
    let mut files = Vec::new();
    let mut dirs = vec![Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios")];
    while let Some(d) = dirs.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                dirs.push(p);
            } else if p.extension().is_some_and(|x| x == "toml") {
                files.push(p);
            }
        }
    }
    files.sort();
    files
        .into_iter()
        .filter_map(|path| {
            let text = std::fs::read_to_string(&path).unwrap();
            // Sweep and claims files live beside the scenarios: keep what loads as a scenario.
            let s = load_scenario_str(&text, "x", path.parent().unwrap(), &[]).ok()?;
            let small = hosts(&s) <= 1024 && {
                let started = Instant::now();
                weft::validate_cmd::size_report(&s).is_ok()
                    && started.elapsed() < Duration::from_millis(50)
            };
            let topology = serde_json::to_value(&s.topology).unwrap();
            Some(Seed {
                path,
                text,
                small,
                topology,
            })
        })
        .collect()
}

/// The fabric's hosts, from the scenario alone (building it is what is being avoided).
fn hosts(s: &weft::scenario::Scenario) -> u64 {
    use weft::scenario::TopologyKind as K;
    let t = &s.topology;
    let k = t.k as u64;
    match t.kind {
        K::FatTree => k * k * k / 4,
        K::LeafSpine => k * k / 2,
        K::Pgft => t.pgft.as_ref().map_or(u64::MAX, |p| p.num_hosts() as u64),
        _ => t.racks.unwrap_or(u32::MAX) as u64 * t.hosts_per_rack.unwrap_or(u32::MAX) as u64,
    }
}

/// Extreme or out-of-range replacements for a value.
const EXTREMES: [&str; 16] = [
    "0",
    "-1",
    "-9223372036854775808",
    "9223372036854775807",
    "18446744073709551615",
    "1e308",
    "-1e308",
    "1e-300",
    "nan",
    "inf",
    "-inf",
    "0.0",
    "4294967296",
    "65536",
    "1.5",
    "1000000000000",
];

/// Other types for a value.
const RETYPED: [&str; 7] = [
    "\"text\"",
    "true",
    "[]",
    "[1, \"a\"]",
    "{}",
    "{ a = 1 }",
    "1979-05-27T07:32:00Z",
];

/// One mutation of `text`, chosen and parameterised by `rng`.
fn mutate(text: &str, rng: &mut Pcg64) -> String {
    let lines: Vec<&str> = text.lines().collect();
    let keyed: Vec<usize> = (0..lines.len())
        .filter(|&i| {
            let l = lines[i].trim_start();
            !l.starts_with('#') && !l.starts_with('[') && l.contains('=')
        })
        .collect();
    let with_value = |i: usize, value: &str| {
        let (key, _) = lines[i].split_once('=').unwrap();
        let mut out: Vec<String> = lines.iter().map(|l| l.to_string()).collect();
        out[i] = format!("{key}= {value}");
        out.join("\n")
    };
    match rng.gen_range(0..7) {
        0 if !keyed.is_empty() => {
            // Dropped key.
            let i = *keyed.choose(rng).unwrap();
            let out: Vec<&str> = lines
                .iter()
                .enumerate()
                .filter(|(j, _)| *j != i)
                .map(|(_, l)| *l)
                .collect();
            out.join("\n")
        }
        1 if !keyed.is_empty() => {
            // Duplicated key (a TOML error) or a key moved to another table.
            let i = *keyed.choose(rng).unwrap();
            let j = rng.gen_range(0..=lines.len());
            let mut out: Vec<&str> = lines.clone();
            out.insert(j, lines[i]);
            out.join("\n")
        }
        2 if !keyed.is_empty() => {
            with_value(*keyed.choose(rng).unwrap(), RETYPED.choose(rng).unwrap())
        }
        3 | 4 if !keyed.is_empty() => {
            with_value(*keyed.choose(rng).unwrap(), EXTREMES.choose(rng).unwrap())
        }
        5 => {
            // Truncated at a random character.
            let n = text.chars().count();
            text.chars().take(rng.gen_range(0..=n)).collect()
        }
        _ => {
            // A run of random characters (printable, control and non-ASCII) spliced in.
            let mut chars: Vec<char> = text.chars().collect();
            let at = rng.gen_range(0..=chars.len());
            let len = rng.gen_range(1..16);
            let noise: Vec<char> = (0..len)
                .map(|_| match rng.gen_range(0..4) {
                    0 => rng.gen_range(0x20u8..0x7f) as char,
                    1 => rng.gen_range(0u8..0x20) as char,
                    2 => ['=', '[', ']', '"', '\n', '.', '#', '{', '}'][rng.gen_range(0..9)],
                    _ => char::from_u32(rng.gen_range(0x80..0x3000)).unwrap_or('\u{fffd}'),
                })
                .collect();
            chars.splice(at..at, noise);
            chars.into_iter().collect()
        }
    }
}

/// Whether `msg` starts with a scenario field's dotted path and a colon (the model's checks,
/// past the loader, name the field: "workload.file: ...").
fn names_a_field(msg: &str) -> bool {
    msg.split_once(": ").is_some_and(|(field, _)| {
        !field.is_empty()
            && field.split('.').all(|part| {
                !part.is_empty()
                    && part
                        .chars()
                        .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
            })
    })
}

#[test]
fn mutated_shipped_scenarios_give_a_valid_scenario_or_one_error_line() {
    let cases: u64 = std::env::var("WEFT_FUZZ_CASES").map_or(10_000, |v| v.parse().unwrap());
    let first: u64 = std::env::var("WEFT_FUZZ_SEED").map_or(1, |v| v.parse().unwrap());
    let seeds = shipped_scenarios();
    assert!(
        seeds.len() >= 20,
        "only {} shipped scenarios load",
        seeds.len()
    );
    let (mut valid, mut errors, mut reported) = (0u64, 0u64, 0u64);
    for case in first..first + cases {
        let mut rng = Pcg64::seed_from_u64(case);
        let seed = seeds.choose(&mut rng).unwrap();
        let text = mutate(&seed.text, &mut rng);
        let origin = seed.path.display().to_string();
        let dir = seed.path.parent().unwrap();
        let started = Instant::now();
        let outcome = catch_unwind(AssertUnwindSafe(|| {
            let s = load_scenario_str(&text, &origin, dir, &[])?;
            let same_fabric = serde_json::to_value(&s.topology).unwrap() == seed.topology;
            if seed.small && same_fabric {
                weft::validate_cmd::size_report(&s)?;
                return Ok(true);
            }
            Ok::<bool, anyhow::Error>(false)
        }));
        let took = started.elapsed();
        let what = || format!("case {case} ({}):\n{text}", seed.path.display());
        match outcome {
            Err(_) => panic!("the loader panicked on {}", what()),
            Ok(Ok(full)) => {
                valid += 1;
                reported += full as u64;
            }
            Ok(Err(e)) => {
                errors += 1;
                let msg = format!("{e:#}");
                assert!(
                    !msg.contains('\n'),
                    "more than one line: {msg:?} on {}",
                    what()
                );
                assert!(
                    msg.starts_with(&origin) || names_a_field(&msg),
                    "names neither the file nor a field: {msg:?} on {}",
                    what()
                );
            }
        }
        assert!(
            took < Duration::from_secs(20),
            "{took:?} (a hang?) on {}",
            what()
        );
    }
    eprintln!(
        "loader fuzz: {cases} cases from {} scenarios: {valid} valid ({reported} through size_report), {errors} errors",
        seeds.len()
    );
    // Both outcomes occur: the mutations are neither all harmless nor all fatal.
    assert!(
        valid > cases / 20 && errors > cases / 20,
        "{valid} valid, {errors} errors"
    );
}
