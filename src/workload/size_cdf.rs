//! Flow-size CDF files (`workload.size_cdf`, the Opera paper's workloads, §5): lines `bytes,cdf`
//! (cumulative probability), `#` comments and blank lines skipped, an optional `bytes,cdf` header.
//! Sizes strictly increase, probabilities never decrease, lie in [0, 1] and end at 1.
//!
//! Sampling is a *step* CDF: the size of a draw `u` in [0, 1) is the first table size whose
//! probability is ≥ `u` (only table sizes occur, no interpolation), so its mean is
//! Σ bytes_i · (cdf_i − cdf_{i−1}) with cdf_{−1} = 0.

use anyhow::{bail, Context, Result};
use std::path::Path;

#[derive(Clone, Debug, PartialEq)]
pub(crate) struct SizeCdf {
    /// (bytes, cumulative probability), sizes strictly increasing, the last probability 1.
    pub points: Vec<(u64, f64)>,
}

impl SizeCdf {
    /// Reads and checks a CDF file; errors name the file and line.
    pub(crate) fn read(path: &Path) -> Result<SizeCdf> {
        let text = std::fs::read_to_string(path)
            .with_context(|| format!("{}: cannot read flow-size CDF", path.display()))?;
        SizeCdf::parse(&text, &path.display().to_string())
    }

    /// Parses CDF text; `name` prefixes errors ("NAME:LINE: problem").
    pub(crate) fn parse(text: &str, name: &str) -> Result<SizeCdf> {
        let mut points: Vec<(u64, f64)> = Vec::new();
        let mut last_line = 0;
        let mut seen_data_or_header = false;
        for (i, raw) in text.lines().enumerate() {
            let line_no = i + 1;
            let line = raw.trim();
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            let cells: Vec<&str> = line.split(',').map(str::trim).collect();
            if !seen_data_or_header
                && cells.len() == 2
                && cells[0].eq_ignore_ascii_case("bytes")
                && cells[1].eq_ignore_ascii_case("cdf")
            {
                seen_data_or_header = true;
                continue;
            }
            seen_data_or_header = true;
            if cells.len() != 2 {
                bail!(
                    "{name}:{line_no}: expected two cells `bytes,cdf`, got {} ({line:?})",
                    cells.len()
                );
            }
            let bytes: u64 = match cells[0].parse::<u64>() {
                Ok(b) => b,
                Err(_) => match cells[0].parse::<f64>() {
                    Ok(b) if b.fract() == 0.0 && b >= 0.0 && b < 2f64.powi(63) => b as u64,
                    _ => bail!(
                        "{name}:{line_no}: bytes {:?} is not a whole number of bytes",
                        cells[0]
                    ),
                },
            };
            let p: f64 = cells[1].parse().map_err(|_| {
                anyhow::anyhow!("{name}:{line_no}: cdf {:?} is not a number", cells[1])
            })?;
            if bytes == 0 {
                bail!("{name}:{line_no}: bytes must be at least 1");
            }
            if !(0.0..=1.0).contains(&p) {
                bail!("{name}:{line_no}: cdf {p} is outside [0, 1]");
            }
            if let Some(&(pb, pp)) = points.last() {
                if bytes <= pb {
                    bail!("{name}:{line_no}: bytes {bytes} do not increase (previous line: {pb})");
                }
                if p < pp {
                    bail!("{name}:{line_no}: cdf {p} decreases (previous line: {pp})");
                }
            }
            points.push((bytes, p));
            last_line = line_no;
        }
        match points.last() {
            None => bail!("{name}: no `bytes,cdf` lines"),
            Some(&(_, p)) if (p - 1.0).abs() > 1e-9 => {
                bail!("{name}:{last_line}: the last cdf is {p}, it must end at 1")
            }
            Some(_) => {}
        }
        // Exactly 1 at the end, so every draw in [0, 1) finds a size.
        points.last_mut().expect("not empty").1 = 1.0;
        Ok(SizeCdf { points })
    }

    /// The step sample for `u` in [0, 1]: the first size whose probability is ≥ `u`.
    pub(crate) fn sample(&self, u: f64) -> u64 {
        let i = self.points.partition_point(|&(_, p)| p < u);
        self.points[i.min(self.points.len() - 1)].0
    }

    /// Mean size of the step sampler, in bytes.
    pub(crate) fn mean_bytes(&self) -> f64 {
        let mut prev = 0.0;
        let mut mean = 0.0;
        for &(b, p) in &self.points {
            mean += b as f64 * (p - prev);
            prev = p;
        }
        mean
    }

    pub(crate) fn max_bytes(&self) -> u64 {
        self.points.last().expect("not empty").0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shipped(name: &str) -> SizeCdf {
        let path = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("scenarios/data/flow_size_cdf")
            .join(name);
        SizeCdf::read(&path).unwrap()
    }

    #[test]
    fn step_sampling_on_a_three_point_cdf() {
        let c = SizeCdf::parse("# c\nbytes,cdf\n10,0.25\n20,0.75\n30,1\n", "t.csv").unwrap();
        assert_eq!(c.points, vec![(10, 0.25), (20, 0.75), (30, 1.0)]);
        // First size whose cdf >= u, no interpolation.
        assert_eq!(c.sample(0.0), 10);
        assert_eq!(c.sample(0.25), 10);
        assert_eq!(c.sample(0.2500001), 20);
        assert_eq!(c.sample(0.5), 20);
        assert_eq!(c.sample(0.75), 20);
        assert_eq!(c.sample(0.76), 30);
        assert_eq!(c.sample(0.999999), 30);
        // 10·0.25 + 20·0.5 + 30·0.25 = 2.5 + 10 + 7.5 = 20.
        assert_eq!(c.mean_bytes(), 20.0);
    }

    #[test]
    fn derived_means_of_the_shipped_cdfs_match_the_worked_out_ones() {
        // Worked out by hand with the step sampler: 7,861,995 B and 1,875,928 B.
        let dm = shipped("datamining.csv").mean_bytes();
        let ws = shipped("websearch.csv").mean_bytes();
        assert_eq!(dm.round(), 7_861_995.0, "{dm}");
        assert_eq!(ws.round(), 1_875_928.0, "{ws}");
        shipped("fb_hadoop_inter_rack.csv");
    }

    #[test]
    fn bad_files_name_the_file_and_line() {
        let cases = [
            ("10,0.5\n10,1\n", "t.csv:2:", "do not increase"),
            ("10,0.5\n5,1\n", "t.csv:2:", "do not increase"),
            ("10,0.5\n20,0.4\n30,1\n", "t.csv:2:", "decreases"),
            ("10,-0.1\n20,1\n", "t.csv:1:", "outside [0, 1]"),
            ("10,0.5\n20,1.5\n", "t.csv:2:", "outside [0, 1]"),
            ("10,0.5\n20,0.9\n", "t.csv:2:", "must end at 1"),
            (
                "bytes,cdf\n10,0.5\nabc,1\n",
                "t.csv:3:",
                "not a whole number",
            ),
            ("10,0.5\n20,x\n", "t.csv:2:", "not a number"),
            ("10,0.5,3\n", "t.csv:1:", "two cells"),
            ("# only comments\n", "t.csv:", "no `bytes,cdf` lines"),
        ];
        for (text, at, what) in cases {
            let e = SizeCdf::parse(text, "t.csv").unwrap_err().to_string();
            assert!(e.starts_with(at) && e.contains(what), "{text:?}: {e}");
            assert_eq!(e.lines().count(), 1, "{e}");
        }
        let e = SizeCdf::read(Path::new("/nonexistent/x.csv")).unwrap_err();
        assert!(format!("{e:#}").contains("/nonexistent/x.csv"), "{e:#}");
    }
}
