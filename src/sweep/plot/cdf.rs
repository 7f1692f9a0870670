//! `weft plot cdf`: the CDF of one tagged histogram of each `.hlog` file (HdrHistogram
//! interval log, V2 deflate, base64, as `weft run --out` writes `latency.hlog`), one line per
//! file: at every recorded value v, the fraction of samples ≤ v.

use super::figure::Series;
use anyhow::{anyhow, bail, Context, Result};
use base64::Engine;
use hdrhistogram::serialization::Deserializer;
use hdrhistogram::Histogram;
use std::path::Path;

/// The histogram tagged `tag` in an `.hlog` file (the intervals with that tag added up).
pub fn read_tag(path: &Path, tag: &str) -> Result<Histogram<u64>> {
    let text = std::fs::read_to_string(path)
        .with_context(|| format!("{}: cannot read", path.display()))?;
    let mut found: Option<Histogram<u64>> = None;
    let mut tags: Vec<String> = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') || line.starts_with("\"StartTimestamp\"") {
            continue;
        }
        let bad = |why: String| {
            anyhow!(
                "{}: line {}: does not decode as an hlog interval: {why}",
                path.display(),
                i + 1
            )
        };
        let fields: Vec<&str> = line.split(',').collect();
        let (line_tag, rest) = match fields[0].strip_prefix("Tag=") {
            Some(t) => (t, &fields[1..]),
            None => ("", &fields[..]),
        };
        if rest.len() != 4 {
            return Err(bad(format!(
                "{} fields, expected 4 after the tag",
                rest.len()
            )));
        }
        let bytes = base64::engine::general_purpose::STANDARD
            .decode(rest[3].trim())
            .map_err(|e| bad(format!("base64: {e}")))?;
        let h: Histogram<u64> = Deserializer::new()
            .deserialize(&mut &bytes[..])
            .map_err(|e| bad(format!("histogram: {e:?}")))?;
        if !tags.iter().any(|t| t == line_tag) {
            tags.push(line_tag.to_string());
        }
        if line_tag == tag {
            match &mut found {
                Some(acc) => acc.add(&h).map_err(|e| bad(format!("{e:?}")))?,
                None => found = Some(h),
            }
        }
    }
    if tags.is_empty() {
        bail!(
            "{}: does not decode as an hlog: no interval lines",
            path.display()
        );
    }
    found.ok_or_else(|| {
        anyhow!(
            "{}: no histogram tagged {tag:?} (tags: {})",
            path.display(),
            tags.join(", ")
        )
    })
}

/// The CDF of `h`: (value, fraction of samples ≤ value) at every recorded value (values
/// as the histogram stores them: the highest equivalent value of their bucket).
pub fn cdf_points(h: &Histogram<u64>) -> Vec<(f64, f64)> {
    let total = h.len() as f64;
    h.iter_recorded()
        .map(|v| {
            (
                h.highest_equivalent(v.value_iterated_to()) as f64,
                v.count_since_last_iteration() as f64,
            )
        })
        .scan(0.0, |cum, (v, c)| {
            *cum += c;
            Some((v, *cum / total))
        })
        .collect()
}

/// The CDF as a staircase to draw: from 0 at the first value, up at every value, flat
/// between values.
pub fn staircase(cdf: &[(f64, f64)]) -> Vec<(f64, f64)> {
    let mut out = Vec::with_capacity(2 * cdf.len());
    let mut below = 0.0;
    for &(v, f) in cdf {
        out.push((v, below));
        out.push((v, f));
        below = f;
    }
    out
}

/// One CDF line per `.hlog` file, of its histogram tagged `tag`.
pub fn series(files: &[std::path::PathBuf], labels: &[String], tag: &str) -> Result<Vec<Series>> {
    if !labels.is_empty() && labels.len() != files.len() {
        bail!(
            "--label: {} labels for {} files (give one per file, or none)",
            labels.len(),
            files.len()
        );
    }
    files
        .iter()
        .enumerate()
        .map(|(i, f)| {
            let h = read_tag(f, tag)?;
            Ok(Series {
                label: labels
                    .get(i)
                    .cloned()
                    .unwrap_or_else(|| f.display().to_string()),
                points: staircase(&cdf_points(&h)),
                errors: None,
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cdf_by_hand() {
        let mut h = Histogram::<u64>::new(3).unwrap();
        for v in [10u64, 10, 20, 40] {
            h.record(v).unwrap();
        }
        assert_eq!(cdf_points(&h), [(10.0, 0.5), (20.0, 0.75), (40.0, 1.0)]);
        let stairs = [
            (10.0, 0.0),
            (10.0, 0.5),
            (20.0, 0.5),
            (20.0, 0.75),
            (40.0, 0.75),
            (40.0, 1.0),
        ];
        assert_eq!(staircase(&cdf_points(&h)), stairs);
    }
}
