//! `weft plot line`: y against x, one line per value of a group column, from a CSV. From
//! `summary.csv` (where `<y>_mean` exists) the points are the means with error bars of ±1
//! standard error (`<y>_se`); from any other CSV (e.g. `runs.csv`) the points are the cells
//! of column y, without error bars.

use super::columns::CsvColumns;
use super::figure::Series;
use anyhow::Result;
use std::path::Path;

/// Lines of column `y` against column `x` of `csv`, one per value of `group` (or one).
pub fn series(csv: &Path, x: &str, y: &str, group: Option<&str>) -> Result<Vec<Series>> {
    let t = CsvColumns::read(csv)?;
    let xi = t.index(x)?;
    let mean = format!("{y}_mean");
    let (yi, ei) = if t.has(&mean) {
        (t.index(&mean)?, Some(t.index(&format!("{y}_se"))?))
    } else {
        (t.index(y)?, None)
    };
    let gi = group.map(|g| t.index(g)).transpose()?;
    let mut out: Vec<Series> = Vec::new();
    for r in 0..t.rows() {
        let (Some(xv), Some(yv)) = (t.number(r, xi)?, t.number(r, yi)?) else {
            continue; // an empty cell: no point (e.g. a metric a run did not have)
        };
        let err = ei.map(|e| t.number(r, e)).transpose()?.flatten();
        let label = match (group, gi) {
            (Some(g), Some(gi)) => format!("{g} = {}", t.text(r, gi)),
            _ => y.to_string(),
        };
        let s = match out.iter_mut().position(|s| s.label == label) {
            Some(i) => &mut out[i],
            None => {
                out.push(Series {
                    label,
                    points: Vec::new(),
                    errors: ei.map(|_| Vec::new()),
                });
                out.last_mut().expect("just pushed")
            }
        };
        s.points.push((xv, yv));
        if let Some(errors) = &mut s.errors {
            errors.push(err);
        }
    }
    for s in &mut out {
        sort_by_x(s);
    }
    Ok(out)
}

fn sort_by_x(s: &mut Series) {
    let mut order: Vec<usize> = (0..s.points.len()).collect();
    order.sort_by(|&a, &b| s.points[a].0.total_cmp(&s.points[b].0));
    s.points = order.iter().map(|&i| s.points[i]).collect();
    if let Some(e) = &s.errors {
        s.errors = Some(order.iter().map(|&i| e[i]).collect());
    }
}
