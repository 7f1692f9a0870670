//! `weft collect DIR`: gathers a sweep's finished points into `DIR/runs.csv` (one row per
//! point) and `DIR/summary.csv` (mean, standard error and count over the runs that differ
//! only in `seed`).

use super::layout::{self, POINT_FILE};
use anyhow::{anyhow, bail, Context, Result};
use serde_json::Value;
use std::path::{Path, PathBuf};

/// The field left out of the grouping of `summary.csv`: runs that differ only in it are
/// repetitions of one configuration.
const SEED_FIELD: &str = "seed";

/// One finished point: its varied fields and its scalars, each as CSV text.
#[derive(Debug)]
struct Row {
    index: u64,
    varied: Vec<(String, String)>,
    scalars: Vec<(String, String)>,
}

/// A table: a header and rows of cells.
#[derive(Debug, PartialEq)]
pub struct Table {
    /// Column names.
    pub header: Vec<String>,
    /// Rows, each with one cell per column.
    pub rows: Vec<Vec<String>>,
}

/// What `weft collect` gathered from a sweep's folder.
#[derive(Debug)]
pub struct Collected {
    /// `runs.csv`: one row per finished point.
    pub runs: Table,
    /// `summary.csv`: mean, standard error and count over the runs that differ only in seed.
    pub summary: Table,
    /// Point folders without `done` (not run yet, or failed), left out.
    pub unfinished: Vec<PathBuf>,
}

/// Reads every point folder of `dir` (a folder holding `point.toml`).
pub fn collect(dir: &Path) -> Result<Collected> {
    let entries =
        std::fs::read_dir(dir).with_context(|| format!("{}: cannot read", dir.display()))?;
    let mut folders: Vec<PathBuf> = entries
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.join(POINT_FILE).is_file())
        .collect();
    folders.sort();
    if folders.is_empty() {
        bail!(
            "{}: no sweep points (folders with {POINT_FILE})",
            dir.display()
        );
    }
    let mut rows = Vec::new();
    let mut unfinished = Vec::new();
    for folder in folders {
        if layout::is_done(&folder) {
            rows.push(read_point(&folder)?);
        } else {
            unfinished.push(folder);
        }
    }
    rows.sort_by_key(|r| r.index);
    let runs = runs_table(&rows);
    let summary = summary_table(&rows);
    Ok(Collected {
        runs,
        summary,
        unfinished,
    })
}

/// Re-reads a collected sweep from its `runs.csv` alone, for a folder whose point folders
/// are gone (a committed reproduction keeps only `runs.csv` and `summary.csv`): the columns
/// named in `varied` are the points' varied fields, every other column but `index` a
/// scalar. The summary is recomputed exactly as from the points.
pub fn collect_runs_csv(dir: &Path, varied: &[&str]) -> Result<Collected> {
    let path = dir.join("runs.csv");
    let t = read_csv(&path)?;
    if t.header.first().map(String::as_str) != Some("index") {
        bail!("{}: the first column is not `index`", path.display());
    }
    let mut rows = Vec::new();
    for (line, cells) in t.rows.iter().enumerate() {
        let index = cells[0].parse().map_err(|_| {
            anyhow!(
                "{}: row {}: index: not an integer",
                path.display(),
                line + 2
            )
        })?;
        let (mut v, mut scalars) = (Vec::new(), Vec::new());
        for (name, value) in t.header.iter().zip(cells).skip(1) {
            let pair = (name.clone(), value.clone());
            match varied.contains(&name.as_str()) {
                true => v.push(pair),
                false => scalars.push(pair),
            }
        }
        rows.push(Row {
            index,
            varied: v,
            scalars,
        });
    }
    rows.sort_by_key(|r| r.index);
    Ok(Collected {
        runs: runs_table(&rows),
        summary: summary_table(&rows),
        unfinished: Vec::new(),
    })
}

/// Whether `dir` holds point folders (a sweep's output before its points were removed).
pub fn has_points(dir: &Path) -> bool {
    std::fs::read_dir(dir).is_ok_and(|entries| {
        entries
            .filter_map(|e| e.ok())
            .any(|e| e.path().join(POINT_FILE).is_file())
    })
}

/// Writes `runs.csv` and `summary.csv` into `dir`.
pub fn write(dir: &Path, c: &Collected) -> Result<()> {
    write_csv(&dir.join("runs.csv"), &c.runs)?;
    write_csv(&dir.join("summary.csv"), &c.summary)
}

/// Reads a CSV file with a header row as a [`Table`] of text cells (what [`write()`] wrote).
pub fn read_csv(path: &Path) -> Result<Table> {
    let ctx = || format!("{}: cannot read as CSV", path.display());
    let mut r = csv::Reader::from_path(path).with_context(ctx)?;
    let header = r
        .headers()
        .with_context(ctx)?
        .iter()
        .map(String::from)
        .collect();
    let mut rows = Vec::new();
    for rec in r.records() {
        rows.push(rec.with_context(ctx)?.iter().map(String::from).collect());
    }
    Ok(Table { header, rows })
}

fn write_csv(path: &Path, t: &Table) -> Result<()> {
    let ctx = || format!("writing {}", path.display());
    let mut w = csv::Writer::from_path(path).with_context(ctx)?;
    w.write_record(&t.header).with_context(ctx)?;
    for r in &t.rows {
        w.write_record(r).with_context(ctx)?;
    }
    w.flush().with_context(ctx)
}

fn read_point(folder: &Path) -> Result<Row> {
    let path = folder.join(POINT_FILE);
    let text = std::fs::read_to_string(&path)
        .with_context(|| format!("{}: cannot read", path.display()))?;
    // serde_json's map keeps the file's order of the varied fields.
    let doc: Value = toml::from_str(&text)
        .map_err(|e| anyhow!("{}: malformed TOML: {}", path.display(), e.message()))?;
    let index = doc["index"]
        .as_u64()
        .ok_or_else(|| anyhow!("{}: index: missing or not an integer", path.display()))?;
    let varied = match &doc["varied"] {
        Value::Object(m) => m.iter().map(|(k, v)| (k.clone(), cell(v))).collect(),
        _ => bail!("{}: varied: missing or not a table", path.display()),
    };
    let path = folder.join("summary.json");
    let text = std::fs::read_to_string(&path)
        .with_context(|| format!("{}: cannot read", path.display()))?;
    let summary: Value =
        serde_json::from_str(&text).with_context(|| format!("{}: not JSON", path.display()))?;
    let Some(results) = summary.get("results") else {
        bail!("{}: results: missing", path.display());
    };
    let mut scalars = Vec::new();
    flatten_scalars(results, "", &mut scalars);
    for key in ["wall_s", "events_per_s"] {
        scalars.push((
            key.to_string(),
            summary["run"].get(key).map(cell).unwrap_or_default(),
        ));
    }
    Ok(Row {
        index,
        varied,
        scalars,
    })
}

/// Scalars of a JSON value with dotted names; null is an empty cell. Arrays are skipped, but
/// for `fct_by_size`, whose bins are named by their edge as the `latency.hlog` tags are
/// (`fct_by_size.le_10000.p99`, the overflow bin `fct_by_size.gt_100000000.p99`), so that a
/// claim can read the FCT of a flow-size bin.
fn flatten_scalars(v: &Value, prefix: &str, out: &mut Vec<(String, String)>) {
    match v {
        Value::Object(m) => {
            for (k, v) in m {
                let name = if prefix.is_empty() {
                    k.clone()
                } else {
                    format!("{prefix}.{k}")
                };
                flatten_scalars(v, &name, out);
            }
        }
        Value::Array(bins) if prefix == "fct_by_size" => {
            for (i, bin) in bins.iter().enumerate() {
                let mut bin = bin.clone();
                if let Value::Object(m) = &mut bin {
                    m.remove("max_bytes"); // in the name
                }
                flatten_scalars(&bin, &format!("{prefix}.{}", fct_bin_name(bins, i)), out);
            }
        }
        Value::Array(_) => {}
        scalar => out.push((prefix.to_string(), cell(scalar))),
    }
}

/// `le_<edge>` for bin `i` of `results.fct_by_size`, `gt_<last edge>` for the overflow bin
/// (its `max_bytes` is null), as `metrics::fct_bins::tag` names the histograms.
fn fct_bin_name(bins: &[Value], i: usize) -> String {
    let edge = |b: &Value| b.get("max_bytes").and_then(Value::as_u64);
    match edge(&bins[i]) {
        Some(e) => format!("le_{e}"),
        None => match i.checked_sub(1).and_then(|j| edge(&bins[j])) {
            Some(last) => format!("gt_{last}"),
            None => format!("bin_{i}"),
        },
    }
}

/// A value as a CSV cell: strings without quotes, null empty, numbers as JSON writes them.
fn cell(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        Value::Null => String::new(),
        v => v.to_string(),
    }
}

/// Names in order of first appearance over the rows.
fn union(names: impl Iterator<Item = String>) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for n in names {
        if !out.contains(&n) {
            out.push(n);
        }
    }
    out
}

fn lookup<'a>(pairs: &'a [(String, String)], name: &str) -> &'a str {
    pairs
        .iter()
        .find(|(k, _)| k == name)
        .map_or("", |(_, v)| v.as_str())
}

fn runs_table(rows: &[Row]) -> Table {
    let varied = union(
        rows.iter()
            .flat_map(|r| r.varied.iter().map(|(k, _)| k.clone())),
    );
    let scalars = union(
        rows.iter()
            .flat_map(|r| r.scalars.iter().map(|(k, _)| k.clone())),
    );
    let mut header = vec!["index".to_string()];
    header.extend(varied.iter().cloned());
    header.extend(scalars.iter().cloned());
    let rows = rows
        .iter()
        .map(|r| {
            let mut cells = vec![r.index.to_string()];
            cells.extend(varied.iter().map(|k| lookup(&r.varied, k).to_string()));
            cells.extend(scalars.iter().map(|k| lookup(&r.scalars, k).to_string()));
            cells
        })
        .collect();
    Table { header, rows }
}

/// Groups by the varied fields but `seed`, in order of first appearance; per numeric column
/// (every non-empty cell a number, at least one), `<col>_mean`, `<col>_se` (sample standard
/// deviation, n − 1, over √n; empty for n < 2), `<col>_n` (non-empty cells), and `<col>_min`
/// and `<col>_max` over the group's runs (for claims about extremes, such as the minimum over
/// repeated draws).
fn summary_table(rows: &[Row]) -> Table {
    let keys: Vec<String> = union(
        rows.iter()
            .flat_map(|r| r.varied.iter().map(|(k, _)| k.clone())),
    )
    .into_iter()
    .filter(|k| k != SEED_FIELD)
    .collect();
    let scalars = union(
        rows.iter()
            .flat_map(|r| r.scalars.iter().map(|(k, _)| k.clone())),
    );
    let numeric: Vec<&String> = scalars
        .iter()
        .filter(|c| {
            let cells: Vec<&str> = rows
                .iter()
                .map(|r| lookup(&r.scalars, c))
                .filter(|s| !s.is_empty())
                .collect();
            !cells.is_empty()
                && cells
                    .iter()
                    .all(|s| s.parse::<f64>().is_ok_and(f64::is_finite))
        })
        .collect();
    let mut groups: Vec<(Vec<String>, Vec<&Row>)> = Vec::new();
    for r in rows {
        let key: Vec<String> = keys
            .iter()
            .map(|k| lookup(&r.varied, k).to_string())
            .collect();
        match groups.iter_mut().find(|(k, _)| *k == key) {
            Some((_, members)) => members.push(r),
            None => groups.push((key, vec![r])),
        }
    }
    let mut header = keys.clone();
    header.push("runs".to_string());
    for c in &numeric {
        header.extend(["mean", "se", "n", "min", "max"].map(|stat| format!("{c}_{stat}")));
    }
    let rows = groups
        .into_iter()
        .map(|(key, members)| {
            let mut cells = key;
            cells.push(members.len().to_string());
            for c in &numeric {
                let xs: Vec<f64> = members
                    .iter()
                    .filter_map(|r| lookup(&r.scalars, c).parse::<f64>().ok())
                    .collect();
                let (mean, se) = mean_se(&xs);
                cells.push(mean.map(|m| m.to_string()).unwrap_or_default());
                cells.push(se.map(|s| s.to_string()).unwrap_or_default());
                cells.push(xs.len().to_string());
                let extreme = |pick: fn(f64, f64) -> f64| xs.iter().copied().reduce(pick);
                for x in [extreme(f64::min), extreme(f64::max)] {
                    cells.push(x.map(|x| x.to_string()).unwrap_or_default());
                }
            }
            cells
        })
        .collect();
    Table { header, rows }
}

/// Mean (none for no values) and standard error of the mean (none for fewer than 2).
pub fn mean_se(xs: &[f64]) -> (Option<f64>, Option<f64>) {
    if xs.is_empty() {
        return (None, None);
    }
    let n = xs.len() as f64;
    let mean = xs.iter().sum::<f64>() / n;
    if xs.len() < 2 {
        return (Some(mean), None);
    }
    let var = xs.iter().map(|x| (x - mean) * (x - mean)).sum::<f64>() / (n - 1.0);
    (Some(mean), Some((var / n).sqrt()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_sweep_reread_from_its_runs_csv_gives_the_same_tables() {
        let row = |index, policy: &str, seed: &str, cct: &str| Row {
            index,
            varied: vec![
                ("lb.policy".into(), policy.into()),
                ("seed".into(), seed.into()),
            ],
            scalars: vec![
                ("cct_ns".into(), cct.into()),
                ("ended".into(), "completed".into()),
            ],
        };
        let rows = vec![
            row(0, "ofan", "1", "10.5"),
            row(1, "ofan", "2", "11"),
            row(2, "reps", "1", ""),
            row(3, "reps", "2", "14"),
        ];
        let c = Collected {
            runs: runs_table(&rows),
            summary: summary_table(&rows),
            unfinished: Vec::new(),
        };
        let dir = tempfile::tempdir().unwrap();
        write(dir.path(), &c).unwrap();
        assert!(!has_points(dir.path()));
        let back = collect_runs_csv(dir.path(), &["lb.policy", "seed"]).unwrap();
        assert_eq!((back.runs, back.summary), (c.runs, c.summary));
        // Without `seed` among the varied fields the runs would not group: the split matters.
        let wrong = collect_runs_csv(dir.path(), &["lb.policy"]).unwrap();
        assert_ne!(wrong.summary, summary_table(&rows));
    }

    #[test]
    fn mean_and_standard_error_by_hand() {
        // 1, 2, 3, 6: mean 3; squared deviations 4 + 1 + 0 + 9 = 14; s² = 14/3; se = s/2.
        let (m, se) = mean_se(&[1.0, 2.0, 3.0, 6.0]);
        assert_eq!(m, Some(3.0));
        assert!((se.unwrap() - (14.0f64 / 3.0).sqrt() / 2.0).abs() < 1e-15);
        assert_eq!(mean_se(&[5.0]), (Some(5.0), None));
        assert_eq!(mean_se(&[]), (None, None));
    }

    #[test]
    fn nested_results_flatten_with_dotted_names_and_arrays_skipped() {
        let v: Value = serde_json::from_str(
            r#"{"a": 1, "q": {"x": {"m": 2.5}, "s": "ok"}, "l": [1, 2], "n": null}"#,
        )
        .unwrap();
        let mut out = Vec::new();
        flatten_scalars(&v, "", &mut out);
        let names: Vec<&str> = out.iter().map(|(k, _)| k.as_str()).collect();
        assert_eq!(names, ["a", "q.x.m", "q.s", "n"]);
        assert_eq!(out[1].1, "2.5");
        assert_eq!(out[3].1, "");
    }

    #[test]
    fn fct_by_size_bins_flatten_by_their_edges() {
        let v: Value = serde_json::from_str(
            r#"{"fct_by_size": [{"max_bytes": 10000, "p99": 5}, {"max_bytes": 100000, "p99": 7},
                {"max_bytes": null, "p99": 9}], "other": [{"max_bytes": 1}]}"#,
        )
        .unwrap();
        let mut out = Vec::new();
        flatten_scalars(&v, "", &mut out);
        let names: Vec<&str> = out.iter().map(|(k, _)| k.as_str()).collect();
        assert_eq!(
            names,
            [
                "fct_by_size.le_10000.p99",
                "fct_by_size.le_100000.p99",
                "fct_by_size.gt_100000.p99",
            ]
        );
        assert_eq!(out[2].1, "9");
    }
}
