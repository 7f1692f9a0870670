//! The output folder of a sweep: `OUT/<index>-<slug>/` per point, holding `point.toml` (what
//! the point is), the files of `weft run --out`, the run's `stdout.txt` and `stderr.txt`, and
//! `done`, written last and atomically (a rename), whose presence marks the point finished.

use super::spec::{Point, SweepSpec};
use anyhow::{bail, Context, Result};
use std::path::{Path, PathBuf};

pub(crate) const POINT_FILE: &str = "point.toml";
pub(crate) const DONE_FILE: &str = "done";

/// Longest slug kept in a folder name (the full values are in `point.toml`).
const MAX_SLUG_CHARS: usize = 48;

/// `<index>-<slug>`: the index zero-padded to the width of the last index (at least 3
/// digits, so folders list in point order), then the varied values joined by `_` with every
/// character other than `A-Za-z0-9._+-` replaced by `-`.
pub(crate) fn dir_name(p: &Point, points: usize) -> String {
    let width = (points.saturating_sub(1)).to_string().len().max(3);
    let slug: String = p
        .varied
        .iter()
        .map(|a| match &a.value {
            toml::Value::String(s) => s.clone(),
            v => v.to_string(),
        })
        .collect::<Vec<_>>()
        .join("_")
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || "._+-".contains(c) {
                c
            } else {
                '-'
            }
        })
        .take(MAX_SLUG_CHARS)
        .collect();
    format!("{:0width$}-{slug}", p.index)
}

pub(crate) fn point_dir(out: &Path, p: &Point, points: usize) -> PathBuf {
    out.join(dir_name(p, points))
}

/// `point.toml`: the index, the base scenario as the sweep file names it, the fixed and the
/// varied overrides (each table in the sweep's order). `weft collect` reads `[varied]`.
pub(crate) fn point_toml(spec: &SweepSpec, p: &Point) -> String {
    let mut s = format!(
        "# weft sweep {:?}: point {} of {}\nindex = {}\nscenario = {}\n",
        spec.name,
        p.index,
        spec.len(),
        p.index,
        toml::Value::String(spec.scenario_field.clone())
    );
    for (table, list) in [("fixed", &spec.fixed), ("varied", &p.varied)] {
        s += &format!("\n[{table}]\n");
        for a in list {
            s += &format!("{} = {}\n", toml::Value::String(a.field.clone()), a.value);
        }
    }
    s
}

/// Refuses an output folder that holds a point folder not among `expected` (the sweep file
/// changed since it ran: a collect would mix both sweeps' points).
pub(crate) fn check_same_sweep(out: &Path, expected: &[String]) -> Result<()> {
    let Ok(entries) = std::fs::read_dir(out) else {
        return Ok(());
    };
    let mut stray: Vec<PathBuf> = entries
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.join(POINT_FILE).is_file())
        .filter(|p| {
            !p.file_name()
                .is_some_and(|n| expected.iter().any(|e| n == e.as_str()))
        })
        .collect();
    stray.sort();
    if let Some(first) = stray.first() {
        bail!(
            "{}: a point of another sweep ({} such folders; the sweep file changed since it ran); use a fresh --out",
            first.display(),
            stray.len()
        );
    }
    Ok(())
}

pub(crate) fn is_done(dir: &Path) -> bool {
    dir.join(DONE_FILE).is_file()
}

/// Writes `done` (the run's wall time in seconds) through a temporary file and a rename, so
/// a sweep killed while writing it leaves no `done`.
pub(crate) fn mark_done(dir: &Path, wall_s: f64) -> Result<()> {
    let tmp = dir.join(".done.tmp");
    std::fs::write(&tmp, format!("wall_s = {wall_s}\n"))
        .with_context(|| format!("writing {}", tmp.display()))?;
    std::fs::rename(&tmp, dir.join(DONE_FILE))
        .with_context(|| format!("writing {}", dir.join(DONE_FILE).display()))
}

/// Makes `dir` ready for a (re)run of point `p`: a finished point whose `point.toml` is not
/// this point's is refused (the sweep file changed since: the old results would be mixed in),
/// an unfinished point's folder is emptied, a folder that is not a point's is left alone and
/// refused. Returns whether the point is already done.
pub(crate) fn prepare(dir: &Path, expected_toml: &str) -> Result<bool> {
    let point_file = dir.join(POINT_FILE);
    if dir.exists() {
        match std::fs::read_to_string(&point_file) {
            Ok(old) if old == expected_toml => {
                if is_done(dir) {
                    return Ok(true);
                }
            }
            Ok(_) => bail!(
                "{}: holds another point (the sweep file changed since it ran); use a fresh --out",
                point_file.display()
            ),
            Err(_) if is_empty_dir(dir) => {}
            Err(_) => bail!(
                "{}: exists and is not a sweep point's folder (no {POINT_FILE}); use a fresh --out",
                dir.display()
            ),
        }
        std::fs::remove_dir_all(dir)
            .with_context(|| format!("cannot clear unfinished point {}", dir.display()))?;
    }
    std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    std::fs::write(&point_file, expected_toml)
        .with_context(|| format!("writing {}", point_file.display()))?;
    Ok(false)
}

fn is_empty_dir(dir: &Path) -> bool {
    std::fs::read_dir(dir).is_ok_and(|mut d| d.next().is_none())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn folder_names_sort_in_point_order_and_stay_portable() {
        let s = SweepSpec::parse(
            "scenario = \"b.toml\"\n[grid]\n\"lb.policy\" = [\"ecmp\", \"a b/c\"]\nx = [0.5]\n",
            Path::new("s.toml"),
        )
        .unwrap();
        assert_eq!(dir_name(&s.point(0), 2), "000-ecmp_0.5");
        assert_eq!(dir_name(&s.point(1), 2), "001-a-b-c_0.5");
        assert_eq!(dir_name(&s.point(1), 1001), "0001-a-b-c_0.5");
        let t = point_toml(&s, &s.point(1));
        assert!(t.contains("index = 1\n"));
        assert!(t.contains("[varied]\n\"lb.policy\" = \"a b/c\"\n\"x\" = 0.5\n"));
    }
}
