//! A claims file (`scenarios/reproduce/claims/PAPER.toml`): a paper's quantitative claims as
//! data, each with the sweep that measures it, its metric and its test.
//!
//! ```toml
//! paper = "ofan"
//! title = "Ofan: Optimal Load Balancing for AI Training"
//!
//! [sweep.cc]                       # a sweep file and its sizes
//! file = "../ofan_cc.toml"          # relative to the claims file
//! smoke = { set = { "topology.k" = 4 }, grid = { seed = [1] } }
//! laptop = { set = { "topology.k" = 8 } }
//! paper = { set = { "topology.k" = 12 }, grid = { seed = [1, 2, 3] } }
//!
//! [[claim]]
//! id = "ofan.fig12.dctcp.ofan"      # PAPER.FIGURE.…: unique, the paper's name first
//! figure = "Fig. 12(a)"
//! paper = "With DCTCP, Ofan's CCT increase is under 1 %"
//! sweep = "cc"
//! metric = "100 * cct_increase[host.cc=dctcp, lb.policy=ofan]"
//! below = 1.0                       # the test: exactly one of the keys below
//! known = "why it disagrees"        # optional: a documented disagreement
//! ```
//!
//! Tests: `value` with `rel_tol` and/or `abs_tol` (|weft − value| within the larger);
//! `below`, `above` (strict), `between = [lo, hi]` (inclusive); `ascending = [expr, ...]`
//! (each value at most the next; `labels` names them); `exponent = [lo, hi]` with `x = FIELD`:
//! the slope of log(metric) against log(x) over the sweep's values of x, the metric read with
//! `FIELD=x` added to each of its column references (a growth class: 0 for O(1), ½ for √m,
//! 1 for linear). `sweep` may list several sweeps (`sweep = ["opera", "clos"]`): the claim
//! then reads their tables as one, with a varied field `sweep` naming each row's sweep
//! (`fct_ns.p99[sweep=clos, workload.load=0.1]`), to compare networks that are different base
//! scenarios. `sizes` lists the sizes at which the claim is evaluated (default laptop and
//! paper; smoke only when listed: it checks the machinery on claims that hold at any size).

use super::expr::Expr;
use super::size::Size;
use anyhow::{anyhow, bail, Context, Result};
use serde::Deserialize;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// The overrides a size applies to a sweep file: `set` fixes fields, `grid` replaces (or
/// adds) a field's list of values.
#[derive(Clone, Debug, Default, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct SizeOverride {
    /// Fields fixed to one value (`"topology.k" = 12`).
    #[serde(default)]
    pub set: toml::Table,
    /// Fields given a list of values, replacing the sweep file's list or adding one.
    #[serde(default)]
    pub grid: toml::Table,
    /// Replaces the sweep's whole `[zip]` table (lists of equal length).
    pub zip: Option<toml::Table>,
    /// Shorthand for `grid.seed = [1, 2, …, seeds]`: claims about repeated draws (the Ofan
    /// paper's appendix A takes the minimum over 1,000 iterations).
    pub seeds: Option<u32>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct SweepToml {
    file: String,
    smoke: Option<SizeOverride>,
    laptop: Option<SizeOverride>,
    paper: Option<SizeOverride>,
}

/// A sweep a claim names: its file and what each size changes in it (a size without an
/// entry does not run the sweep).
#[derive(Debug)]
pub struct SweepDef {
    /// Its key in the claims file (`[sweep.KEY]`), which claims name.
    pub key: String,
    /// The sweep file, resolved against the claims file's directory.
    pub file: PathBuf,
    /// What each size that runs the sweep changes in it.
    pub sizes: BTreeMap<Size, SizeOverride>,
}

/// A claim's test (the module's doc says how each is written).
#[derive(Debug, Clone, PartialEq)]
pub enum Test {
    /// The metric equals `value` within the larger of the two tolerances.
    Value {
        /// The paper's value.
        value: f64,
        /// Relative tolerance (0.1: 10 %).
        rel_tol: f64,
        /// Absolute tolerance, in the metric's unit.
        abs_tol: f64,
    },
    /// The metric is strictly below this.
    Below(f64),
    /// The metric is strictly above this.
    Above(f64),
    /// The metric lies in `[lo, hi]`.
    Between(f64, f64),
    /// The metrics, in order, never decrease.
    Ascending,
    /// The slope of log(metric) against log(x) lies in `[lo, hi]`.
    Exponent {
        /// The varied field the metric grows with.
        x: String,
        /// Lowest slope that passes.
        lo: f64,
        /// Highest slope that passes.
        hi: f64,
    },
}

/// One quantitative claim of a paper, read and checked from the claims file.
#[derive(Debug)]
pub struct Claim {
    /// Unique id, the paper's name first (`ofan.fig12.dctcp.ofan`).
    pub id: String,
    /// The figure, table or section it comes from (`Fig. 12(a)`).
    pub figure: String,
    /// What the paper reports, in our words, with its value.
    pub paper: String,
    /// The sweeps it reads (one, or several read as one table with a varied `sweep` field).
    pub sweeps: Vec<String>,
    /// One expression; for `ascending`, the ordered ones.
    pub(crate) metrics: Vec<Expr>,
    /// The metrics' text (labels for an ordering).
    pub labels: Vec<String>,
    /// How the metric is checked.
    pub test: Test,
    /// The sizes at which the claim is evaluated.
    pub sizes: Vec<Size>,
    /// A documented reason it disagrees, if it is known to.
    pub known: Option<String>,
    /// Any other remark shown with the claim.
    pub note: Option<String>,
}

/// A claim that could not be read: its id (or position) and the error, one line.
#[derive(Debug, Clone)]
pub struct BadClaim {
    /// Its id, or its position in the file when it has none.
    pub id: String,
    /// Why it could not be read, one line.
    pub error: String,
}

/// A loaded claims file: the paper, its sweeps, its claims (and those that could not be
/// read, reported rather than dropped) and its figures.
#[derive(Debug)]
pub struct ClaimsFile {
    /// Where it was read from.
    pub path: PathBuf,
    /// The paper's short name (`ofan`), the first part of every claim id.
    pub paper: String,
    /// The paper's title.
    pub title: String,
    /// The sweeps its claims read.
    pub sweeps: Vec<SweepDef>,
    /// The claims that were read.
    pub claims: Vec<Claim>,
    /// The claims that could not be read.
    pub bad: Vec<BadClaim>,
    /// The figures drawn from its sweeps.
    pub figures: Vec<FigureDef>,
}

/// A line figure drawn from a sweep's `summary.csv` (as `weft plot line`).
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FigureDef {
    /// Unique id; the figure is drawn to `figures/PAPER-ID.svg`.
    pub id: String,
    /// The sweep whose table it draws.
    pub sweep: String,
    /// The column on the x axis.
    pub x: String,
    /// The column on the y axis.
    pub y: String,
    /// A column whose values each get a line.
    pub group: Option<String>,
    /// The figure's title.
    pub title: Option<String>,
    /// Logarithmic x axis.
    #[serde(default)]
    pub logx: bool,
    /// Logarithmic y axis.
    #[serde(default)]
    pub logy: bool,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct ClaimToml {
    id: String,
    figure: String,
    paper: String,
    sweep: SweepNames,
    metric: Option<String>,
    ascending: Option<Vec<String>>,
    labels: Option<Vec<String>>,
    value: Option<f64>,
    rel_tol: Option<f64>,
    abs_tol: Option<f64>,
    below: Option<f64>,
    above: Option<f64>,
    between: Option<[f64; 2]>,
    x: Option<String>,
    exponent: Option<[f64; 2]>,
    sizes: Option<Vec<String>>,
    known: Option<String>,
    note: Option<String>,
}

/// A claim's `sweep`: one key, or several whose tables the claim reads as one.
#[derive(Debug, Deserialize)]
#[serde(untagged)]
enum SweepNames {
    One(String),
    Many(Vec<String>),
}

const TOP_LEVEL: [&str; 5] = ["paper", "title", "sweep", "claim", "figure"];

impl ClaimsFile {
    /// Reads the claims file at `path`; a claim that cannot be read goes to `bad`, an error
    /// in the file's structure or its sweeps fails the load.
    pub fn load(path: &Path) -> Result<ClaimsFile> {
        let text = std::fs::read_to_string(path)
            .with_context(|| format!("{}: cannot read claims file", path.display()))?;
        ClaimsFile::parse(&text, path)
    }

    /// Parses a claims file. A malformed file or sweep table is an error; a malformed claim
    /// is kept in `bad` so that the others can still be evaluated.
    pub fn parse(text: &str, path: &Path) -> Result<ClaimsFile> {
        let origin = path.display().to_string();
        let mut doc: toml::Table = toml::from_str(text).map_err(|e| {
            anyhow!(
                "{origin}: malformed TOML: {}",
                e.message().lines().next().unwrap_or("")
            )
        })?;
        if let Some(key) = doc.keys().find(|k| !TOP_LEVEL.contains(&k.as_str())) {
            bail!(
                "{origin}: {key}: unknown field (one of {})",
                TOP_LEVEL.join(", ")
            );
        }
        let text_field = |doc: &toml::Table, key: &str| -> Result<String> {
            match doc.get(key) {
                Some(toml::Value::String(s)) if !s.is_empty() => Ok(s.clone()),
                Some(_) => bail!("{origin}: {key}: expected a non-empty string"),
                None => bail!("{origin}: {key}: missing"),
            }
        };
        let paper = text_field(&doc, "paper")?;
        let title = text_field(&doc, "title")?;
        let dir = path.parent().unwrap_or(Path::new(""));
        let sweeps = match doc.remove("sweep") {
            None => Vec::new(),
            Some(toml::Value::Table(t)) => t
                .into_iter()
                .map(|(key, v)| sweep_def(&origin, dir, key, v))
                .collect::<Result<_>>()?,
            Some(_) => bail!("{origin}: sweep: expected tables [sweep.NAME]"),
        };
        let figures = match doc.remove("figure") {
            None => Vec::new(),
            Some(v) => {
                let figs: Vec<FigureDef> = deserialize(v, &format!("{origin}: figure"))?;
                for f in &figs {
                    if !sweeps.iter().any(|s| s.key == f.sweep) {
                        bail!(
                            "{origin}: figure {}: sweep: {:?} is not a [sweep.NAME] of this file",
                            f.id,
                            f.sweep
                        );
                    }
                }
                figs
            }
        };
        let mut claims: Vec<Claim> = Vec::new();
        let mut bad = Vec::new();
        let entries = match doc.remove("claim") {
            None => Vec::new(),
            Some(toml::Value::Array(a)) => a,
            Some(_) => bail!("{origin}: claim: expected [[claim]] entries"),
        };
        for (i, v) in entries.into_iter().enumerate() {
            let id = v
                .get("id")
                .and_then(|v| v.as_str())
                .map_or_else(|| format!("claim #{}", i + 1), str::to_string);
            let parsed = claim(v, &paper, &sweeps).and_then(|c| {
                if claims.iter().any(|o| o.id == c.id) {
                    bail!("id: given to two claims");
                }
                Ok(c)
            });
            match parsed {
                Ok(c) => claims.push(c),
                Err(e) => bad.push(BadClaim {
                    id,
                    error: format!("{e:#}").replace('\n', "; "),
                }),
            }
        }
        Ok(ClaimsFile {
            path: path.to_path_buf(),
            paper,
            title,
            sweeps,
            claims,
            bad,
            figures,
        })
    }

    /// The sweep of key `key`.
    pub fn sweep(&self, key: &str) -> Option<&SweepDef> {
        self.sweeps.iter().find(|s| s.key == key)
    }
}

fn deserialize<T: serde::de::DeserializeOwned>(v: toml::Value, origin: &str) -> Result<T> {
    serde_path_to_error::deserialize(v).map_err(|e| {
        let path = e.path().to_string();
        let msg = e.into_inner().to_string();
        let msg = msg.lines().next().unwrap_or("");
        if path == "." || path.is_empty() {
            anyhow!("{origin}: {msg}")
        } else {
            anyhow!("{origin}: {path}: {msg}")
        }
    })
}

fn sweep_def(origin: &str, dir: &Path, key: String, v: toml::Value) -> Result<SweepDef> {
    let t: SweepToml = deserialize(v, &format!("{origin}: sweep.{key}"))?;
    let mut sizes = BTreeMap::new();
    for (size, o) in [
        (Size::Smoke, t.smoke),
        (Size::Laptop, t.laptop),
        (Size::Paper, t.paper),
    ] {
        if let Some(o) = o {
            sizes.insert(size, o);
        }
    }
    Ok(SweepDef {
        file: dir.join(&t.file),
        key,
        sizes,
    })
}

fn claim(v: toml::Value, paper: &str, sweeps: &[SweepDef]) -> Result<Claim> {
    let c: ClaimToml =
        deserialize(v, "").map_err(|e| anyhow!("{}", e.to_string().trim_start_matches(": ")))?;
    check_id(&c.id, paper)?;
    let claim_sweeps = sweeps_of(&c, sweeps)?;
    let test = test_of(&c)?;
    let (metrics, labels) = metrics_of(&c)?;
    let sizes = match &c.sizes {
        None => vec![Size::Laptop, Size::Paper],
        Some(list) => list
            .iter()
            .map(|s| s.parse::<Size>().map_err(|e| anyhow!("sizes: {e}")))
            .collect::<Result<_>>()?,
    };
    for (field, text) in [("known", &c.known), ("note", &c.note)] {
        if text.as_ref().is_some_and(|t| t.trim().is_empty()) {
            bail!("{field}: empty (say why, or leave it out)");
        }
    }
    Ok(Claim {
        id: c.id,
        figure: c.figure,
        paper: c.paper,
        sweeps: claim_sweeps,
        metrics,
        labels,
        test,
        sizes,
        known: c.known,
        note: c.note,
    })
}

/// A claim id starts with its paper's name and uses only characters safe in file names.
fn check_id(id: &str, paper: &str) -> Result<()> {
    if !id.starts_with(&format!("{paper}.")) {
        bail!("id: must start with the paper's name ({paper}.)");
    }
    if !id
        .chars()
        .all(|ch| ch.is_ascii_alphanumeric() || "._-".contains(ch))
    {
        bail!("id: letters, digits, '.', '_' and '-' only");
    }
    Ok(())
}

/// The claim's sweeps: one or more distinct `[sweep.NAME]` keys of the same file.
fn sweeps_of(c: &ClaimToml, sweeps: &[SweepDef]) -> Result<Vec<String>> {
    let claim_sweeps = match &c.sweep {
        SweepNames::One(k) => vec![k.clone()],
        SweepNames::Many(list) => list.clone(),
    };
    if claim_sweeps.is_empty() {
        bail!("sweep: an empty list (name one [sweep.NAME] or more)");
    }
    for (i, key) in claim_sweeps.iter().enumerate() {
        if !sweeps.iter().any(|s| &s.key == key) {
            let keys: Vec<&str> = sweeps.iter().map(|s| s.key.as_str()).collect();
            bail!(
                "sweep: {key:?} is not a [sweep.NAME] of this file ({})",
                keys.join(", ")
            );
        }
        if claim_sweeps[..i].contains(key) {
            bail!("sweep: {key:?} listed twice");
        }
    }
    Ok(claim_sweeps)
}

fn finite(name: &str, v: f64) -> Result<f64> {
    if v.is_finite() {
        Ok(v)
    } else {
        bail!("{name}: must be a finite number")
    }
}

/// The claim's one test (value, below, above, between, ascending or exponent).
fn test_of(c: &ClaimToml) -> Result<Test> {
    let tests = [
        c.value.is_some(),
        c.below.is_some(),
        c.above.is_some(),
        c.between.is_some(),
        c.ascending.is_some(),
        c.exponent.is_some(),
    ];
    if tests.iter().filter(|t| **t).count() != 1 {
        bail!("test: give exactly one of value, below, above, between, ascending, exponent");
    }
    let test = if let Some(value) = c.value {
        let rel_tol = finite("rel_tol", c.rel_tol.unwrap_or(0.0))?;
        let abs_tol = finite("abs_tol", c.abs_tol.unwrap_or(0.0))?;
        if rel_tol < 0.0 || abs_tol < 0.0 || (c.rel_tol.is_none() && c.abs_tol.is_none()) {
            bail!("rel_tol: a value test needs rel_tol and/or abs_tol, at least 0");
        }
        Test::Value {
            value: finite("value", value)?,
            rel_tol,
            abs_tol,
        }
    } else if let Some(b) = c.below {
        Test::Below(finite("below", b)?)
    } else if let Some(a) = c.above {
        Test::Above(finite("above", a)?)
    } else if let Some([lo, hi]) = c.between {
        if finite("between", lo)? > finite("between", hi)? {
            bail!("between: [lo, hi] with lo <= hi");
        }
        Test::Between(lo, hi)
    } else if c.ascending.is_some() {
        Test::Ascending
    } else {
        let [lo, hi] = c.exponent.expect("one test is set");
        if finite("exponent", lo)? > finite("exponent", hi)? {
            bail!("exponent: [lo, hi] with lo <= hi");
        }
        let Some(x) = c.x.clone() else {
            bail!("x: an exponent test needs x, the field the metric grows with");
        };
        Test::Exponent { x, lo, hi }
    };
    if c.x.is_some() && !matches!(test, Test::Exponent { .. }) {
        bail!("x: only an exponent test takes x");
    }
    Ok(test)
}

/// The claim's metric expressions (one, or the list of an ascending test) and their labels.
fn metrics_of(c: &ClaimToml) -> Result<(Vec<Expr>, Vec<String>)> {
    let texts: Vec<String> = match (&c.ascending, &c.metric) {
        (Some(list), None) if list.len() >= 2 => list.clone(),
        (Some(_), None) => bail!("ascending: at least two expressions"),
        (Some(_), Some(_)) => {
            bail!("metric: an ascending test lists its expressions in ascending, not metric")
        }
        (None, Some(m)) => vec![m.clone()],
        (None, None) => bail!("metric: missing"),
    };
    let metrics = texts
        .iter()
        .enumerate()
        .map(|(i, t)| {
            Expr::parse(t).map_err(|e| {
                let field = if c.ascending.is_some() {
                    format!("ascending[{i}]")
                } else {
                    "metric".to_string()
                };
                anyhow!("{field}: {e}")
            })
        })
        .collect::<Result<Vec<_>>>()?;
    let labels = match &c.labels {
        Some(l) if l.len() == texts.len() => l.clone(),
        Some(l) => bail!("labels: {} labels for {} expressions", l.len(), texts.len()),
        None => texts,
    };
    Ok((metrics, labels))
}

#[cfg(test)]
mod tests {
    use super::*;

    const HEAD: &str = "paper = \"p\"\ntitle = \"P\"\n[sweep.s]\nfile = \"s.toml\"\nlaptop = {}\n";

    fn parse(claims: &str) -> ClaimsFile {
        ClaimsFile::parse(&format!("{HEAD}{claims}"), Path::new("c/p.toml")).unwrap()
    }

    #[test]
    fn each_test_kind_parses() {
        let f = parse(
            "[[claim]]\nid = \"p.a\"\nfigure = \"1\"\npaper = \"x\"\nsweep = \"s\"\nmetric = \"a\"\nvalue = 7.3\nrel_tol = 0.1\n\
             [[claim]]\nid = \"p.b\"\nfigure = \"1\"\npaper = \"x\"\nsweep = \"s\"\nmetric = \"a\"\nbelow = 1\n\
             [[claim]]\nid = \"p.c\"\nfigure = \"1\"\npaper = \"x\"\nsweep = \"s\"\nascending = [\"a[p=x]\", \"a[p=y]\"]\nlabels = [\"x\", \"y\"]\nsizes = [\"smoke\"]\n\
             [[claim]]\nid = \"p.d\"\nfigure = \"1\"\npaper = \"x\"\nsweep = \"s\"\nmetric = \"q[p=x]\"\nx = \"m\"\nexponent = [0.4, 0.6]\nknown = \"why\"\n",
        );
        assert!(f.bad.is_empty(), "{:?}", f.bad);
        assert_eq!(f.sweeps[0].file, Path::new("c/s.toml"));
        let tests: Vec<&Test> = f.claims.iter().map(|c| &c.test).collect();
        assert_eq!(
            tests,
            [
                &Test::Value {
                    value: 7.3,
                    rel_tol: 0.1,
                    abs_tol: 0.0
                },
                &Test::Below(1.0),
                &Test::Ascending,
                &Test::Exponent {
                    x: "m".into(),
                    lo: 0.4,
                    hi: 0.6
                }
            ]
        );
        assert_eq!(f.claims[2].labels, ["x", "y"]);
        assert_eq!(f.claims[2].sizes, [Size::Smoke]);
        assert_eq!(f.claims[0].sizes, [Size::Laptop, Size::Paper]);
        assert_eq!(f.claims[3].known.as_deref(), Some("why"));
    }

    #[test]
    fn a_claim_may_read_several_sweeps_each_named_once() {
        let two = format!("{HEAD}[sweep.t]\nfile = \"t.toml\"\nlaptop = {{}}\n");
        let claim = |sweep: &str, id: &str| {
            format!(
                "[[claim]]\nid = \"p.{id}\"\nfigure = \"1\"\npaper = \"x\"\nsweep = {sweep}\n\
                 metric = \"a[sweep=t]\"\nbelow = 1\n"
            )
        };
        let text = [
            claim("[\"s\", \"t\"]", "both"),
            claim("[\"s\", \"s\"]", "twice"),
            claim("[]", "none"),
            claim("[\"s\", \"u\"]", "unknown"),
        ]
        .concat();
        let f = ClaimsFile::parse(&format!("{two}{text}"), Path::new("c/p.toml")).unwrap();
        assert_eq!(f.claims.len(), 1);
        assert_eq!(f.claims[0].sweeps, ["s", "t"]);
        let errors: Vec<String> = f.bad.iter().map(|b| b.error.clone()).collect();
        assert!(errors[0].contains("\"s\" listed twice"), "{errors:?}");
        assert!(errors[1].contains("an empty list"), "{errors:?}");
        assert!(
            errors[2].contains("\"u\" is not a [sweep.NAME]"),
            "{errors:?}"
        );
    }

    #[test]
    fn a_bad_claim_is_named_and_the_others_kept() {
        let f = parse(
            "[[claim]]\nid = \"p.ok\"\nfigure = \"1\"\npaper = \"x\"\nsweep = \"s\"\nmetric = \"a\"\nbelow = 1\n\
             [[claim]]\nid = \"p.two\"\nfigure = \"1\"\npaper = \"x\"\nsweep = \"s\"\nmetric = \"a\"\nbelow = 1\nabove = 0\n\
             [[claim]]\nid = \"p.typo\"\nfigure = \"1\"\npaper = \"x\"\nsweep = \"s\"\nmetric = \"a\"\nbelow = 1\nknwon = \"x\"\n\
             [[claim]]\nid = \"p.expr\"\nfigure = \"1\"\npaper = \"x\"\nsweep = \"s\"\nmetric = \"a +\"\nbelow = 1\n\
             [[claim]]\nid = \"p.sweep\"\nfigure = \"1\"\npaper = \"x\"\nsweep = \"t\"\nmetric = \"a\"\nbelow = 1\n\
             [[claim]]\nid = \"q.other\"\nfigure = \"1\"\npaper = \"x\"\nsweep = \"s\"\nmetric = \"a\"\nbelow = 1\n\
             [[claim]]\nid = \"p.tol\"\nfigure = \"1\"\npaper = \"x\"\nsweep = \"s\"\nmetric = \"a\"\nvalue = 1\n\
             [[claim]]\nid = \"p.size\"\nfigure = \"1\"\npaper = \"x\"\nsweep = \"s\"\nmetric = \"a\"\nbelow = 1\nsizes = [\"huge\"]\n\
             [[claim]]\nid = \"p.ok\"\nfigure = \"1\"\npaper = \"x\"\nsweep = \"s\"\nmetric = \"a\"\nbelow = 1\n",
        );
        assert_eq!(f.claims.len(), 1);
        let errors: Vec<String> = f
            .bad
            .iter()
            .map(|b| format!("{}: {}", b.id, b.error))
            .collect();
        let want = [
            "p.two: test: give exactly one",
            "p.typo: knwon: unknown field",
            "p.expr: metric: expected a number",
            "p.sweep: sweep: \"t\" is not a [sweep.NAME]",
            "q.other: id: must start with the paper's name",
            "p.tol: rel_tol: a value test needs",
            "p.size: sizes: huge: unknown size",
            "p.ok: id: given to two claims",
        ];
        assert_eq!(errors.len(), want.len(), "{errors:#?}");
        for (e, w) in errors.iter().zip(want) {
            assert!(e.starts_with(w), "{e:?} should start with {w:?}");
        }
    }

    #[test]
    fn a_malformed_file_is_one_error_naming_the_field() {
        let e = |t: &str| {
            ClaimsFile::parse(t, Path::new("c.toml"))
                .unwrap_err()
                .to_string()
        };
        assert!(e("paper = ").contains("c.toml: malformed TOML"));
        assert!(e("title = \"t\"\n").contains("paper: missing"));
        assert!(e("paper = \"p\"\ntitle = \"t\"\nclaims = []\n").contains("claims: unknown field"));
        assert!(
            e("paper = \"p\"\ntitle = \"t\"\n[sweep.s]\nfile = \"f\"\nhuge = {}\n")
                .contains("sweep.s: huge: unknown field")
        );
        assert!(e(
            "paper = \"p\"\ntitle = \"t\"\n[sweep.s]\nfile = \"f\"\nsmoke = { sett = {} }\n"
        )
        .contains("sweep.s: smoke.sett: unknown field"));
    }
}
