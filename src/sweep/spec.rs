//! A sweep file (`weft sweep SWEEP.toml`): a base scenario and the fields to vary, expanded
//! into points in a documented, deterministic order.
//!
//! ```toml
//! name = "example"                      # optional; default: the file's stem
//! scenario = "../quickstart.toml"       # relative to the sweep file
//! threads = 1                           # optional; --threads of every run
//! command = "run"                       # optional; "run" (default), "contention", "opera-faults"
//! [set]                                 # optional; fixed overrides of every point
//! "topology.k" = 4
//! [grid]                                # dotted fields (as --set takes them) -> lists
//! "lb.policy" = ["ecmp", "ofan"]
//! seed = [1, 2]
//! [zip]                                 # optional; lists of equal length, varied together
//! "workload.message_bytes" = [65536, 262144]
//! "report.timeseries_us" = [0.5, 1.0]
//! ```
//!
//! Order (a choice: the spec does not fix it): the zip row varies slowest, then the grid
//! fields in file order, the last fastest, as nested loops written in that order. Zip rows
//! are usually the configurations compared (the lines of a plot) and the grid the x axis and
//! the seeds, so a partial sweep has whole lines first.
//!
//! With `command = "contention"` each point is a `weft contention` analysis instead of a run:
//! the fields `routing`, `pattern`, `scope` and `draws` are its options (`--routing X`), the
//! others scenario fields (`--set`), and the point's `summary.json` holds the analysis as its
//! `results`, so that `weft collect` and `weft reproduce` read it like a run's. So with
//! `command = "opera-faults"`, whose options are `links`, `tors`, `rotors` and `draws`.

use anyhow::{anyhow, bail, Context, Result};
use serde_json::Value;
use std::path::{Path, PathBuf};

/// One field's value at a point: the dotted field and its value as TOML text.
#[derive(Clone, Debug, PartialEq)]
pub struct Assignment {
    /// The dotted field (`topology.k`), or a command option.
    pub field: String,
    /// Its value.
    pub value: toml::Value,
}

impl Assignment {
    /// `field=value` as `weft run --set` takes it.
    pub fn to_set(&self) -> String {
        format!("{}={}", self.field, self.value)
    }
}

/// One run of the sweep.
#[derive(Clone, Debug, PartialEq)]
pub struct Point {
    /// Its position in the sweep, `0..len()`: also its folder's number.
    pub index: usize,
    /// The varied fields, zip fields first, then grid fields, in file order.
    pub varied: Vec<Assignment>,
}

/// What each point runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Command {
    /// `weft run`: a simulation.
    Run,
    /// `weft contention`: the static analysis of a routing on a pattern.
    Contention,
    /// `weft opera-faults`: an Opera fabric's connectivity under random failures.
    OperaFaults,
}

impl Command {
    /// The command's name, as the sweep file's `command` writes it.
    pub fn name(self) -> &'static str {
        match self {
            Command::Run => "run",
            Command::Contention => "contention",
            Command::OperaFaults => "opera-faults",
        }
    }

    /// The fields of a point that are the command's options rather than scenario fields.
    pub fn option_fields(self) -> &'static [&'static str] {
        match self {
            Command::Run => &[],
            Command::Contention => &CONTENTION_OPTIONS,
            Command::OperaFaults => &OPERA_FAULTS_OPTIONS,
        }
    }
}

/// `weft contention`'s options a contention sweep may set or vary; `routing` and `pattern`
/// are required.
const CONTENTION_OPTIONS: [&str; 4] = ["routing", "pattern", "scope", "draws"];

/// `weft opera-faults`' options (one share each per point).
const OPERA_FAULTS_OPTIONS: [&str; 4] = ["links", "tors", "rotors", "draws"];

/// A parsed sweep file.
#[derive(Debug)]
pub struct SweepSpec {
    /// The sweep file itself (as given).
    pub path: PathBuf,
    /// `name`: the sweep's name.
    pub name: String,
    /// `scenario` as written in the sweep file.
    pub scenario_field: String,
    /// The base scenario resolved against the sweep file's folder.
    pub scenario: PathBuf,
    /// `threads`: `--threads` of every run.
    pub threads: usize,
    /// `command`: what each point runs.
    pub command: Command,
    /// `[set]`: fields every point fixes.
    pub fixed: Vec<Assignment>,
    /// `[grid]`: fields whose values are crossed, in file order.
    pub grid: Vec<(String, Vec<toml::Value>)>,
    /// `[zip]`: fields varied together, row by row (lists of equal length).
    pub zip: Vec<(String, Vec<toml::Value>)>,
}

/// Most points a sweep may have (each is a folder and a process; the limit also keeps the
/// point count from overflowing).
pub const MAX_POINTS: usize = 1_000_000;

const TOP_LEVEL: [&str; 7] = [
    "name", "scenario", "threads", "command", "set", "grid", "zip",
];

impl SweepSpec {
    /// Reads and checks the sweep file at `path`.
    pub fn load(path: &Path) -> Result<SweepSpec> {
        let text = std::fs::read_to_string(path)
            .map_err(|e| anyhow!("{}: cannot read sweep file: {e}", path.display()))?;
        SweepSpec::parse(&text, path)
    }

    /// Parses the text of a sweep file found at `path` (for relative paths and messages).
    pub fn parse(text: &str, path: &Path) -> Result<SweepSpec> {
        let origin = path.display().to_string();
        // Read into serde_json's map, which keeps the file's key order (toml::Table sorts).
        let doc: Value = toml::from_str(text)
            .map_err(|e| anyhow!("{origin}: malformed TOML: {}", one_line(e.message())))?;
        let top = doc.as_object().expect("a TOML document is a table");
        check_top_level(top, &origin)?;
        let scenario_field = match top.get("scenario") {
            Some(Value::String(s)) => s.clone(),
            Some(_) => bail!("{origin}: scenario: expected a path (a string)"),
            None => bail!("{origin}: scenario: missing (the base scenario file)"),
        };
        let dir = path.parent().unwrap_or(Path::new(""));
        let name = sweep_name(top, path, &origin)?;
        let threads = sweep_threads(top, &origin)?;
        let command = sweep_command(top, &origin)?;
        let fixed = fixed_assignments(top, &origin)?;
        let grid = lists(top.get("grid"), "grid", &origin)?;
        let zip = lists(top.get("zip"), "zip", &origin)?;
        check_lists(&grid, &zip, &origin)?;
        check_fields(&fixed, &grid, &zip, command, &origin)?;
        Ok(SweepSpec {
            path: path.to_path_buf(),
            name,
            scenario: dir.join(&scenario_field),
            scenario_field,
            threads,
            command,
            fixed,
            grid,
            zip,
        })
    }

    /// Number of points: the product of the grid lists' lengths times the zip rows.
    pub fn len(&self) -> usize {
        let rows = self.zip.first().map_or(1, |(_, v)| v.len());
        self.grid.iter().map(|(_, v)| v.len()).product::<usize>() * rows
    }

    /// Whether the sweep has no point.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The varied fields, in the order of a point's `varied` (zip fields, then grid fields).
    pub fn varied_fields(&self) -> Vec<&str> {
        self.zip
            .iter()
            .chain(&self.grid)
            .map(|(f, _)| f.as_str())
            .collect()
    }

    /// Point `index` (0-based): mixed-radix digits of the index, the zip row most
    /// significant, then the grid fields in file order, the last least significant.
    pub fn point(&self, index: usize) -> Point {
        assert!(index < self.len(), "point {index} of {}", self.len());
        let mut rest = index;
        let mut digits = vec![0; self.grid.len()];
        for (d, (_, values)) in digits.iter_mut().zip(&self.grid).rev() {
            *d = rest % values.len();
            rest /= values.len();
        }
        let row = rest;
        let mut varied: Vec<Assignment> = self
            .zip
            .iter()
            .map(|(field, values)| Assignment {
                field: field.clone(),
                value: values[row].clone(),
            })
            .collect();
        varied.extend(
            self.grid
                .iter()
                .zip(&digits)
                .map(|((field, values), &d)| Assignment {
                    field: field.clone(),
                    value: values[d].clone(),
                }),
        );
        Point { index, varied }
    }

    /// Every point, in order.
    pub fn points(&self) -> Vec<Point> {
        (0..self.len()).map(|i| self.point(i)).collect()
    }

    /// `--set` arguments of a point: the fixed overrides, then the varied ones.
    pub fn sets(&self, p: &Point) -> Vec<String> {
        let options = self.command.option_fields();
        self.fixed
            .iter()
            .chain(&p.varied)
            .filter(|a| !options.contains(&a.field.as_str()))
            .map(Assignment::to_set)
            .collect()
    }

    /// The command's own options at a point (`--routing dmodk`), fixed ones first.
    pub fn options(&self, p: &Point) -> Vec<String> {
        let options = self.command.option_fields();
        let mut out = Vec::new();
        for a in self.fixed.iter().chain(&p.varied) {
            if options.contains(&a.field.as_str()) {
                let value = match &a.value {
                    toml::Value::String(s) => s.clone(),
                    v => v.to_string(),
                };
                out.extend([format!("--{}", a.field), value]);
            }
        }
        out
    }

    /// Loads every point's scenario through the same path as `weft run --set` (so an unknown
    /// or invalid field is refused the same way), before any point runs.
    pub fn validate_points(&self) -> Result<()> {
        for p in self.points() {
            crate::scenario::load_scenario(&self.scenario, &self.sets(&p))
                .with_context(|| format!("{}: point {}", self.path.display(), p.index))?;
        }
        Ok(())
    }
}

/// The top-level keys of a sweep file: each one of [`TOP_LEVEL`]; `origin` names the file.
fn check_top_level(top: &serde_json::Map<String, Value>, origin: &str) -> Result<()> {
    for key in top.keys() {
        if !TOP_LEVEL.contains(&key.as_str()) {
            bail!(
                "{origin}: {key}: unknown sweep field (one of {})",
                TOP_LEVEL.join(", ")
            );
        }
    }
    Ok(())
}

/// `name`: a plain word, by default the file's stem.
fn sweep_name(top: &serde_json::Map<String, Value>, path: &Path, origin: &str) -> Result<String> {
    Ok(match top.get("name") {
        // It names the default output folder and the Slurm job: a plain word.
        Some(Value::String(s))
            if !s.is_empty()
                && !s.starts_with('.')
                && s.chars()
                    .all(|c| c.is_ascii_alphanumeric() || "._-".contains(c)) =>
        {
            s.clone()
        }
        Some(v) => {
            bail!("{origin}: name: expected a word of letters, digits, '.', '_' and '-' (got {v})")
        }
        None => path
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_else(|| "sweep".to_string()),
    })
}

/// `threads`: worker threads per run, from 1 to 1024 (default 1).
fn sweep_threads(top: &serde_json::Map<String, Value>, origin: &str) -> Result<usize> {
    Ok(match top.get("threads") {
        None => 1,
        Some(v) => match v.as_u64() {
            Some(t) if (1..=1024).contains(&t) => t as usize,
            _ => bail!("{origin}: threads: expected an integer from 1 to 1024 (got {v})"),
        },
    })
}

/// `command`: what each point runs (default `run`).
fn sweep_command(top: &serde_json::Map<String, Value>, origin: &str) -> Result<Command> {
    Ok(match top.get("command") {
        None => Command::Run,
        Some(Value::String(c)) if c == "run" => Command::Run,
        Some(Value::String(c)) if c == "contention" => Command::Contention,
        Some(Value::String(c)) if c == "opera-faults" => Command::OperaFaults,
        Some(v) => bail!(
            "{origin}: command: expected \"run\", \"contention\" or \"opera-faults\" (got {v})"
        ),
    })
}

/// `[set]`: the fields every point sets, flattened to dotted paths.
fn fixed_assignments(
    top: &serde_json::Map<String, Value>,
    origin: &str,
) -> Result<Vec<Assignment>> {
    Ok(match top.get("set") {
        None => Vec::new(),
        Some(v) => flatten(v, "set", origin)?
            .into_iter()
            .map(|(field, v)| {
                Ok(Assignment {
                    field,
                    value: to_toml(&v)?,
                })
            })
            .collect::<Result<_>>()?,
    })
}

/// `[grid]` and `[zip]`: at least one list, none empty, zip lists of one length, at most
/// [`MAX_POINTS`] points in all.
fn check_lists(
    grid: &[(String, Vec<toml::Value>)],
    zip: &[(String, Vec<toml::Value>)],
    origin: &str,
) -> Result<()> {
    if grid.is_empty() && zip.is_empty() {
        bail!("{origin}: grid: empty (give at least one field and its list of values in [grid] or [zip])");
    }
    for (field, values) in grid.iter().chain(zip) {
        if values.is_empty() {
            let table = if grid.iter().any(|(f, _)| f == field) {
                "grid"
            } else {
                "zip"
            };
            bail!("{origin}: {table}.{field}: empty list of values");
        }
    }
    if let Some((first, len)) = zip.first().map(|(f, v)| (f, v.len())) {
        if let Some((field, v)) = zip.iter().find(|(_, v)| v.len() != len) {
            bail!(
                "{origin}: zip.{field}: {} values, but zip.{first} has {len} (zip lists have equal lengths)",
                v.len()
            );
        }
    }
    let rows = zip.first().map_or(1, |(_, v)| v.len());
    let points = grid
        .iter()
        .try_fold(rows, |n, (_, v)| n.checked_mul(v.len()));
    match points {
        Some(n) if n <= MAX_POINTS => {}
        _ => bail!("{origin}: grid: more than {MAX_POINTS} points"),
    }
    Ok(())
}

/// The fields a sweep names: none renamed, none given twice across `[set]`, `[grid]` and
/// `[zip]`, and a contention sweep's required options present.
fn check_fields(
    fixed: &[Assignment],
    grid: &[(String, Vec<toml::Value>)],
    zip: &[(String, Vec<toml::Value>)],
    command: Command,
    origin: &str,
) -> Result<()> {
    let named = fixed.iter().map(|a| ("set", &a.field));
    let listed = grid.iter().map(|(f, _)| ("grid", f));
    for (table, field) in named
        .chain(listed)
        .chain(zip.iter().map(|(f, _)| ("zip", f)))
    {
        if let Some(msg) = crate::scenario::renamed_field(field) {
            bail!("{origin}: {table}.{field}: {msg}");
        }
    }
    let mut seen: Vec<&str> = fixed.iter().map(|a| a.field.as_str()).collect();
    for (field, _) in zip.iter().chain(grid) {
        if seen.contains(&field.as_str()) {
            bail!("{origin}: {field}: given more than once in [set], [grid] and [zip]");
        }
        seen.push(field);
    }
    if command == Command::Contention {
        for required in ["routing", "pattern"] {
            if !seen.contains(&required) {
                bail!("{origin}: {required}: a contention sweep sets or varies it (weft contention --{required})");
            }
        }
    }
    Ok(())
}

/// The `[grid]` or `[zip]` table: dotted field → list of values.
fn lists(v: Option<&Value>, table: &str, origin: &str) -> Result<Vec<(String, Vec<toml::Value>)>> {
    let Some(v) = v else { return Ok(Vec::new()) };
    flatten(v, table, origin)?
        .into_iter()
        .map(|(field, v)| match v {
            Value::Array(items) => Ok((field, items.iter().map(to_toml).collect::<Result<_>>()?)),
            other => bail!("{origin}: {table}.{field}: expected a list of values (got {other})"),
        })
        .collect()
}

/// A table's leaves with dotted names, in file order: `lb.policy = [..]` and
/// `"lb.policy" = [..]` both give `lb.policy`. Arrays are leaves (a list of values, or one
/// value of an array field).
fn flatten(v: &Value, table: &str, origin: &str) -> Result<Vec<(String, Value)>> {
    let Value::Object(map) = v else {
        bail!("{origin}: {table}: expected a table");
    };
    let mut out = Vec::new();
    for (key, value) in map {
        match value {
            Value::Object(_) => {
                for (sub, leaf) in flatten(value, &format!("{table}.{key}"), origin)? {
                    out.push((format!("{key}.{sub}"), leaf));
                }
            }
            leaf => out.push((key.clone(), leaf.clone())),
        }
    }
    Ok(out)
}

fn to_toml(v: &Value) -> Result<toml::Value> {
    toml::Value::try_from(v).map_err(|e| anyhow!("{v}: not a TOML value: {e}"))
}

fn one_line(s: &str) -> String {
    s.lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect::<Vec<_>>()
        .join("; ")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(text: &str) -> Result<SweepSpec> {
        SweepSpec::parse(text, Path::new("dir/s.toml"))
    }

    #[test]
    fn a_contention_sweep_passes_its_options_as_flags_and_the_rest_as_sets() {
        let s = spec(
            "scenario = \"b.toml\"\ncommand = \"contention\"\n[set]\npattern = \"compute-io\"\ndraws = 100\n\"topology.k\" = 4\n[grid]\nrouting = [\"random\", \"dmodk\"]\nseed = [3]\n",
        )
        .unwrap();
        assert_eq!(s.command, Command::Contention);
        let p = s.point(1);
        assert_eq!(
            s.options(&p),
            [
                "--pattern",
                "compute-io",
                "--draws",
                "100",
                "--routing",
                "dmodk"
            ]
        );
        assert_eq!(s.sets(&p), ["topology.k=4", "seed=3"]);
        // A run sweep has no options: every field is a --set.
        let r = spec("scenario = \"b.toml\"\n[grid]\nrouting = [1]\n").unwrap();
        assert_eq!(r.command, Command::Run);
        assert!(r.options(&r.point(0)).is_empty());
        assert_eq!(r.sets(&r.point(0)), ["routing=1"]);
    }

    #[test]
    fn a_contention_sweep_needs_routing_and_pattern_and_commands_are_checked() {
        let e = spec(
            "scenario = \"b.toml\"\ncommand = \"contention\"\n[grid]\nrouting = [\"dmodk\"]\n",
        )
        .unwrap_err();
        assert!(
            e.to_string()
                .contains("pattern: a contention sweep sets or varies it"),
            "{e}"
        );
        let e = spec("scenario = \"b.toml\"\ncommand = \"simulate\"\n[grid]\nseed = [1]\n")
            .unwrap_err();
        assert!(
            e.to_string()
                .contains("command: expected \"run\", \"contention\""),
            "{e}"
        );
    }

    fn values(p: &Point) -> Vec<String> {
        p.varied.iter().map(|a| a.value.to_string()).collect()
    }

    #[test]
    fn grid_expands_with_the_last_field_fastest() {
        let s = spec("scenario = \"b.toml\"\n[grid]\n\"lb.policy\" = [\"ecmp\", \"ofan\"]\nseed = [1, 2, 3]\n").unwrap();
        assert_eq!(s.len(), 6);
        assert_eq!(s.scenario, Path::new("dir/b.toml"));
        assert_eq!(s.varied_fields(), ["lb.policy", "seed"]);
        let all: Vec<Vec<String>> = s.points().iter().map(values).collect();
        assert_eq!(all[0], ["\"ecmp\"", "1"]);
        assert_eq!(all[1], ["\"ecmp\"", "2"]);
        assert_eq!(all[3], ["\"ofan\"", "1"]);
        assert_eq!(all[5], ["\"ofan\"", "3"]);
        assert_eq!(s.sets(&s.point(4)), ["lb.policy=\"ofan\"", "seed=2"]);
    }

    #[test]
    fn zip_rows_vary_together_and_slowest() {
        let s =
            spec("scenario = \"b.toml\"\n[zip]\na = [1, 2]\nb = [10, 20]\n[grid]\nseed = [7, 8]\n")
                .unwrap();
        assert_eq!(s.len(), 4);
        assert_eq!(s.varied_fields(), ["a", "b", "seed"]);
        let all: Vec<Vec<String>> = s.points().iter().map(values).collect();
        assert_eq!(
            all,
            [
                ["1", "10", "7"],
                ["1", "10", "8"],
                ["2", "20", "7"],
                ["2", "20", "8"]
            ]
        );
    }

    #[test]
    fn dotted_keys_and_subtables_read_alike_in_file_order() {
        let s = spec(
            "scenario = \"b.toml\"\n[grid]\nz = [1]\nlb.policy = [\"a\"]\n[set]\ntopology.k = 4\n",
        )
        .unwrap();
        assert_eq!(s.varied_fields(), ["z", "lb.policy"]);
        assert_eq!(s.fixed[0].to_set(), "topology.k=4");
    }

    #[test]
    fn bad_files_are_refused_naming_the_field() {
        let e = |t: &str| spec(t).unwrap_err().to_string();
        assert!(e("scenario = \"b.toml\"\n[grid]\n").contains("grid: empty"));
        assert!(e("scenario = \"b.toml\"\n").contains("grid: empty"));
        assert!(e("scenario = \"b.toml\"\n[grid]\nseed = []\n").contains("grid.seed: empty list"));
        assert!(
            e("scenario = \"b.toml\"\n[grid]\nseed = 3\n").contains("grid.seed: expected a list")
        );
        assert!(e("[grid]\nseed = [1]\n").contains("scenario: missing"));
        assert!(e("scenario = \"b.toml\"\n[zip]\na = [1, 2]\nb = [1]\n")
            .contains("zip.b: 1 values, but zip.a has 2"));
        assert!(e("scenario = \"b.toml\"\ngird = 1\n[grid]\nseed = [1]\n")
            .contains("gird: unknown sweep field"));
        assert!(
            e("scenario = \"b.toml\"\n[set]\nseed = 1\n[grid]\nseed = [1]\n")
                .contains("seed: given more than once")
        );
        assert!(
            e("name = \"../x\"\nscenario = \"b.toml\"\n[grid]\nseed = [1]\n")
                .contains("name: expected a word")
        );
        let ten = "[1, 2, 3, 4, 5, 6, 7, 8, 9, 10]";
        let big = format!("scenario = \"b.toml\"\n[grid]\na = {ten}\nb = {ten}\nc = {ten}\nd = {ten}\ne = {ten}\nf = {ten}\ng = [1, 2]\n");
        assert!(e(&big).contains("grid: more than 1000000 points"));
    }
}
