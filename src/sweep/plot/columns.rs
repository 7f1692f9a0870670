//! A CSV file read by named columns, for `weft plot line` and `weft plot timeseries`: a
//! missing column or a cell that is not a number is one error line naming the file, column
//! and row.

use anyhow::{anyhow, bail, Result};
use std::path::{Path, PathBuf};

/// A CSV file read for plotting: columns looked up by name, with errors naming the file.
pub struct CsvColumns {
    path: PathBuf,
    header: Vec<String>,
    rows: Vec<Vec<String>>,
}

impl CsvColumns {
    /// Reads the CSV file at `path`.
    pub fn read(path: &Path) -> Result<CsvColumns> {
        let t = crate::sweep::collect::read_csv(path)?;
        Ok(CsvColumns {
            path: path.to_path_buf(),
            header: t.header,
            rows: t.rows,
        })
    }

    /// Whether the file has column `col`.
    pub fn has(&self, col: &str) -> bool {
        self.header.iter().any(|h| h == col)
    }

    /// The index of `col`, or an error naming the file, the column and (briefly) the columns.
    pub fn index(&self, col: &str) -> Result<usize> {
        self.header.iter().position(|h| h == col).ok_or_else(|| {
            let mut names = self
                .header
                .iter()
                .take(12)
                .cloned()
                .collect::<Vec<_>>()
                .join(", ");
            if self.header.len() > 12 {
                names += &format!(", ... ({} columns)", self.header.len());
            }
            anyhow!(
                "{}: no column {col:?} (columns: {names})",
                self.path.display()
            )
        })
    }

    /// Rows below the header.
    pub fn rows(&self) -> usize {
        self.rows.len()
    }

    /// Cell text of row `r` (0-based), column `c`.
    pub fn text(&self, r: usize, c: usize) -> &str {
        self.rows[r].get(c).map_or("", String::as_str)
    }

    /// The number in row `r`, column `c`; none for an empty cell.
    pub fn number(&self, r: usize, c: usize) -> Result<Option<f64>> {
        let s = self.text(r, c).trim();
        if s.is_empty() {
            return Ok(None);
        }
        match s.parse::<f64>() {
            Ok(v) if v.is_finite() => Ok(Some(v)),
            _ => bail!(
                "{}: row {}: column {:?}: {s:?} is not a number",
                self.path.display(),
                r + 2,
                self.header[c]
            ),
        }
    }
}
