//! A sweep's `summary.csv` as the values of claim metrics: `NAME[FIELD=VALUE, ...]` reads
//! `NAME_mean` and `NAME_se` of the one row with those varied values.

use super::expr::{ColumnRef, Condition, Lookup, Measured, Stat};
use anyhow::{bail, Context, Result};
use std::collections::BTreeMap;
use std::path::Path;

/// The claim cannot be evaluated at this size (the rows it needs were not run, or produced no
/// value); not an error in the claim.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub(crate) struct NotRun(pub String);

/// The varied field of a concatenated table that names each row's sweep.
pub(crate) const SWEEP_FIELD: &str = "sweep";

pub(crate) struct SummaryTable {
    /// The sweep's name, for messages.
    pub sweep: String,
    header: Vec<String>,
    rows: Vec<Vec<String>>,
    /// The varied fields (the columns before `runs`).
    varied: Vec<String>,
    /// Every value each field takes in the sweep at some size: a selector value outside it
    /// is a typo, not a point left out at this size.
    known_values: BTreeMap<String, Vec<String>>,
}

/// Cells equal as text, or as numbers (`1` and `1.0`).
fn same(cell: &str, want: &str) -> bool {
    cell == want || matches!((cell.parse::<f64>(), want.parse::<f64>()), (Ok(a), Ok(b)) if a == b)
}

fn matches(cell: &str, c: &Condition) -> bool {
    if c.contains {
        cell.contains(c.value.as_str())
    } else {
        same(cell, &c.value)
    }
}

impl SummaryTable {
    pub(crate) fn read(
        path: &Path,
        sweep: &str,
        known_values: BTreeMap<String, Vec<String>>,
    ) -> Result<SummaryTable> {
        let mut r = csv::Reader::from_path(path)
            .with_context(|| format!("{}: cannot read", path.display()))?;
        let header: Vec<String> = r
            .headers()
            .with_context(|| format!("{}: no header", path.display()))?
            .iter()
            .map(str::to_string)
            .collect();
        let rows = r
            .records()
            .map(|rec| rec.map(|rec| rec.iter().map(str::to_string).collect()))
            .collect::<std::result::Result<Vec<Vec<String>>, _>>()
            .with_context(|| format!("{}: malformed CSV", path.display()))?;
        Ok(SummaryTable::new(sweep, header, rows, known_values))
    }

    pub(crate) fn new(
        sweep: &str,
        header: Vec<String>,
        rows: Vec<Vec<String>>,
        known_values: BTreeMap<String, Vec<String>>,
    ) -> SummaryTable {
        let varied = header
            .iter()
            .take_while(|h| *h != "runs")
            .cloned()
            .collect();
        SummaryTable {
            sweep: sweep.to_string(),
            header,
            rows,
            varied,
            known_values,
        }
    }

    /// Several sweeps' tables read as one (a claim that compares them): a first varied field
    /// `sweep` holds each row's sweep key, the other columns are the union of theirs in order
    /// of first appearance (varied fields before `runs`), a cell a sweep lacks is empty.
    pub(crate) fn concat(parts: &[(&str, &SummaryTable)]) -> SummaryTable {
        let mut varied: Vec<String> = vec![SWEEP_FIELD.to_string()];
        let mut results: Vec<String> = Vec::new();
        for (_, t) in parts {
            for h in &t.header {
                let list = if t.is_varied(h) {
                    &mut varied
                } else {
                    &mut results
                };
                if h != "runs" && !list.contains(h) {
                    list.push(h.clone());
                }
            }
        }
        let mut header = varied;
        header.push("runs".to_string());
        header.extend(results);
        let mut rows = Vec::new();
        let mut known_values: BTreeMap<String, Vec<String>> = BTreeMap::new();
        for (key, t) in parts {
            for row in &t.rows {
                rows.push(
                    header
                        .iter()
                        .map(|h| match (h == SWEEP_FIELD, t.col(h)) {
                            (true, _) => key.to_string(),
                            (false, Some(i)) => row[i].clone(),
                            (false, None) => String::new(),
                        })
                        .collect(),
                );
            }
            for (field, values) in &t.known_values {
                let known = known_values.entry(field.clone()).or_default();
                for v in values {
                    if !known.contains(v) {
                        known.push(v.clone());
                    }
                }
            }
        }
        let keys: Vec<String> = parts.iter().map(|(k, _)| k.to_string()).collect();
        known_values.insert(SWEEP_FIELD.to_string(), keys.clone());
        SummaryTable::new(&keys.join("+"), header, rows, known_values)
    }

    fn col(&self, name: &str) -> Option<usize> {
        self.header.iter().position(|h| h == name)
    }

    pub(crate) fn is_varied(&self, field: &str) -> bool {
        self.varied.iter().any(|v| v == field)
    }

    /// The distinct values of a varied field, in row order.
    pub(crate) fn values_of(&self, field: &str) -> Vec<String> {
        let Some(c) = self.col(field) else {
            return Vec::new();
        };
        let mut out: Vec<String> = Vec::new();
        for r in &self.rows {
            if !out.iter().any(|v| same(v, &r[c])) {
                out.push(r[c].clone());
            }
        }
        out
    }

    fn check_selector(&self, sel: &[Condition]) -> Result<()> {
        for c in sel {
            let known = self.known_values.get(&c.field);
            if !self.is_varied(&c.field) && known.is_none() {
                bail!(
                    "{}: not a varied field of sweep {} (varied: {})",
                    c.field,
                    self.sweep,
                    self.varied.join(", ")
                );
            }
            if let Some(values) = known {
                if !values.iter().any(|v| matches(v, c)) {
                    bail!(
                        "{}: sweep {} never runs this value (values: {})",
                        c.text(),
                        self.sweep,
                        values.join(", ")
                    );
                }
            }
        }
        Ok(())
    }
}

impl Lookup for SummaryTable {
    fn get(&self, r: &ColumnRef) -> Result<Measured> {
        let Some(value_col) = self.col(&format!("{}_{}", r.column, r.stat.suffix())) else {
            bail!(
                "{}: no such column in summary.csv of sweep {} (no run produced it)",
                r.name(),
                self.sweep
            );
        };
        self.check_selector(&r.select)?;
        let select: Vec<(usize, &Condition)> = r
            .select
            .iter()
            .filter_map(|c| self.col(&c.field).map(|i| (i, c)))
            .collect();
        if select.len() < r.select.len() {
            // A field of the sweep at another size, fixed at this one: its value here is
            // whatever the size fixed, which the table does not record.
            let missing: Vec<&str> = r
                .select
                .iter()
                .filter(|c| self.col(&c.field).is_none())
                .map(|c| c.field.as_str())
                .collect();
            return Err(NotRun(format!(
                "{} is not varied at this size of sweep {}",
                missing.join(", "),
                self.sweep
            ))
            .into());
        }
        let rows: Vec<&Vec<String>> = self
            .rows
            .iter()
            .filter(|row| select.iter().all(|(i, c)| matches(&row[*i], c)))
            .collect();
        let what = || {
            if r.select.is_empty() {
                r.name()
            } else {
                let sel: Vec<String> = r.select.iter().map(Condition::text).collect();
                format!("{}[{}]", r.name(), sel.join(", "))
            }
        };
        let row = match rows.as_slice() {
            [] => {
                return Err(
                    NotRun(format!("{}: no such run in sweep {}", what(), self.sweep)).into(),
                )
            }
            [row] => *row,
            _ => {
                let open: Vec<&str> = self
                    .varied
                    .iter()
                    .filter(|f| !r.select.iter().any(|c| &c.field == *f))
                    .filter(|f| self.values_of(f).len() > 1)
                    .map(String::as_str)
                    .collect();
                bail!(
                    "{}: {} rows of sweep {} match; select also {}",
                    what(),
                    rows.len(),
                    self.sweep,
                    open.join(", ")
                );
            }
        };
        let cell = &row[value_col];
        if cell.is_empty() {
            return Err(NotRun(format!("{}: the runs produced no value", what())).into());
        }
        let value: f64 = cell
            .parse()
            .with_context(|| format!("{}: {cell:?} is not a number", what()))?;
        let se = self
            .col(&format!("{}_se", r.column))
            .filter(|_| r.stat == Stat::Mean)
            .and_then(|c| row[c].parse::<f64>().ok())
            .unwrap_or(0.0);
        Ok(Measured { value, se })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::reproduce::expr::Expr;

    pub(crate) fn table() -> SummaryTable {
        let header = "lb.policy,m,runs,q_mean,q_se,q_n,q_min,q_max,c_mean,c_se,c_n";
        let rows = [
            "ofan,1,2,10,1,2,9,11,0.5,,1",
            "ofan,4,2,10,1,2,9,11,,,0",
            "rps,1,2,20,2,2,18,22,5,0.5,2",
            "rps,4,2,40,2,2,38,42,5,0.5,2",
        ];
        let split = |s: &str| s.split(',').map(str::to_string).collect::<Vec<_>>();
        let mut known = BTreeMap::new();
        known.insert(
            "lb.policy".to_string(),
            vec!["ofan".into(), "rps".into(), "reps".into()],
        );
        SummaryTable::new(
            "t",
            split(header),
            rows.iter().map(|r| split(r)).collect(),
            known,
        )
    }

    fn get(s: &str) -> Result<Measured> {
        Expr::parse(s).unwrap().eval(&table())
    }

    #[test]
    fn a_selector_reads_one_row_with_its_error() {
        assert_eq!(
            get("q[lb.policy=rps, m=4]").unwrap(),
            Measured {
                value: 40.0,
                se: 2.0
            }
        );
        assert_eq!(get("q[lb.policy=ofan, m=1.0]").unwrap().value, 10.0);
        // One seed: no standard error.
        assert_eq!(get("c[lb.policy=ofan, m=1]").unwrap().se, 0.0);
    }

    #[test]
    fn concatenated_sweeps_are_selected_by_their_key() {
        let other = SummaryTable::new(
            "u",
            ["m", "runs", "q_mean", "q_se", "z_mean"]
                .map(String::from)
                .to_vec(),
            vec![["1", "1", "70", "", "3"].map(String::from).to_vec()],
            BTreeMap::new(),
        );
        let t = table();
        let both = SummaryTable::concat(&[("a", &t), ("b", &other)]);
        let get = |s: &str| Expr::parse(s).unwrap().eval(&both);
        assert_eq!(get("q[sweep=b, m=1]").unwrap().value, 70.0);
        assert_eq!(get("q[sweep=a, lb.policy=rps, m=4]").unwrap().value, 40.0);
        // A column only one sweep has is empty in the other's rows: not run there.
        assert!(get("z[sweep=a, lb.policy=rps, m=4]")
            .unwrap_err()
            .is::<NotRun>());
        assert_eq!(get("z[sweep=b]").unwrap().value, 3.0);
        // Without the sweep both match, and the error says what to select.
        let e = get("q[m=1]").unwrap_err().to_string();
        assert!(e.contains("select also sweep"), "{e}");
        let e = get("q[sweep=c, m=1]").unwrap_err().to_string();
        assert!(e.contains("never runs this value"), "{e}");
    }

    #[test]
    fn extremes_over_the_runs_carry_no_error() {
        let exact = |value| Measured { value, se: 0.0 };
        assert_eq!(get("q@min[lb.policy=rps, m=4]").unwrap(), exact(38.0));
        assert_eq!(get("q@max[lb.policy=rps, m=4]").unwrap(), exact(42.0));
        assert_eq!(
            get("q@max[lb.policy=ofan, m=1] - q[lb.policy=ofan, m=1]")
                .unwrap()
                .value,
            1.0
        );
        // A summary without the extremes (one written before they existed): named as written.
        let e = get("c@min[lb.policy=rps, m=1]").unwrap_err().to_string();
        assert!(e.contains("c@min: no such column"), "{e}");
        let e = Expr::parse("q@median[m=1]").unwrap_err().to_string();
        assert!(e.contains("q@median: unknown statistic"), "{e}");
    }

    #[test]
    fn missing_rows_are_not_run_and_bad_references_are_errors() {
        let not_run = |s: &str| get(s).unwrap_err().downcast::<NotRun>().is_ok();
        assert!(not_run("q[lb.policy=reps, m=1]"));
        assert!(not_run("c[lb.policy=ofan, m=4]"));
        let bad = |s: &str| {
            let e = get(s).unwrap_err();
            assert!(e.downcast_ref::<NotRun>().is_none(), "{e}");
            e.to_string()
        };
        assert!(bad("qq[lb.policy=rps, m=1]").contains("qq: no such column"));
        assert!(bad("q[lb.policy=rps]").contains("2 rows of sweep t match; select also m"));
        assert!(bad("q[lb.policy=rsp, m=1]").contains("never runs this value"));
        assert!(bad("q[lb.polcy=rps, m=1]").contains("lb.polcy: not a varied field"));
    }
}
