//! `weft plot timeseries`: columns of a `timeseries.csv` (or any CSV) against its time
//! column, one line per column.

use super::columns::CsvColumns;
use super::figure::Series;
use anyhow::Result;
use std::path::Path;

/// One line per column of `ys` against column `x` of the time-series file `csv`.
pub fn series(csv: &Path, x: &str, ys: &[String]) -> Result<Vec<Series>> {
    let t = CsvColumns::read(csv)?;
    let xi = t.index(x)?;
    let mut out = Vec::new();
    for y in ys {
        let yi = t.index(y)?;
        let mut points = Vec::new();
        for r in 0..t.rows() {
            if let (Some(xv), Some(yv)) = (t.number(r, xi)?, t.number(r, yi)?) {
                points.push((xv, yv));
            }
        }
        out.push(Series {
            label: y.clone(),
            points,
            errors: None,
        });
    }
    Ok(out)
}
