//! The three sizes of a reproduction and how a size changes a sweep file: `smoke` (seconds per
//! sweep: checks the machinery, in CI), `laptop` (minutes on two cores) and `paper` (the
//! paper's own set-up: its fabric, its seeds).
//!
//! A size's overrides are written out as a new sweep file (`OUT/sweeps/KEY.toml`), so that
//! each sweep of a reproduction can be rerun, resumed or sent to Slurm by hand like any other.

use super::claims::SizeOverride;
use crate::sweep::spec::{Assignment, SweepSpec};
use anyhow::{anyhow, bail, Result};
use std::path::Path;
use std::str::FromStr;

/// How large a reproduction's sweeps run (`--size`); each sweep says what each size sets.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Size {
    /// Seconds: checks the machinery, not the claims.
    Smoke,
    /// What one machine runs in hours.
    Laptop,
    /// The paper's own set-up.
    Paper,
}

impl Size {
    /// Every size, smallest first.
    pub const ALL: [Size; 3] = [Size::Smoke, Size::Laptop, Size::Paper];

    /// The size's name, as `--size` and the claims files write it.
    pub fn name(self) -> &'static str {
        match self {
            Size::Smoke => "smoke",
            Size::Laptop => "laptop",
            Size::Paper => "paper",
        }
    }
}

impl FromStr for Size {
    type Err = anyhow::Error;
    fn from_str(s: &str) -> Result<Size> {
        Size::ALL
            .into_iter()
            .find(|z| z.name() == s)
            .ok_or_else(|| anyhow!("{s}: unknown size (smoke, laptop, paper)"))
    }
}

/// The text of the sweep file that `base` becomes under `o`: a `set` field is fixed (taken
/// out of the grid if it was varied there), a `grid` field gets the given list (moved out of
/// `set` if it was fixed there); `zip` replaces the whole zip table, whose fields cannot
/// otherwise be changed. The base scenario is named by
/// its absolute path, so the file may live anywhere.
pub fn derived_sweep(base: &SweepSpec, name: &str, o: &SizeOverride) -> Result<String> {
    let origin = base.path.display();
    let mut fixed = base.fixed.clone();
    let mut grid = base.grid.clone();
    let zip: Vec<(String, Vec<toml::Value>)> = match &o.zip {
        None => base.zip.clone(),
        Some(t) => t
            .iter()
            .map(|(field, v)| match v {
                toml::Value::Array(values) => Ok((field.clone(), values.clone())),
                _ => bail!("{origin}: zip.{field}: expected a list of values"),
            })
            .collect::<Result<_>>()?,
    };
    let is_zip = |f: &str| zip.iter().any(|(z, _)| z == f);
    for (field, value) in &o.set {
        if is_zip(field) {
            bail!("{origin}: set.{field}: a [zip] field of the sweep cannot be fixed by a size");
        }
        grid.retain(|(g, _)| g != field);
        let a = Assignment {
            field: field.clone(),
            value: value.clone(),
        };
        match fixed.iter_mut().find(|f| f.field == *field) {
            Some(f) => *f = a,
            None => fixed.push(a),
        }
    }
    let mut grid_overrides = o.grid.clone();
    match o.seeds {
        Some(_) if o.grid.contains_key("seed") => {
            bail!("{origin}: seeds: give either seeds or grid.seed, not both")
        }
        Some(0) => bail!("{origin}: seeds: must be at least 1"),
        Some(n) => {
            let seeds = (1..=n as i64).map(toml::Value::Integer).collect();
            grid_overrides.insert("seed".to_string(), toml::Value::Array(seeds));
        }
        None => {}
    }
    for (field, values) in &grid_overrides {
        if is_zip(field) {
            bail!("{origin}: grid.{field}: a [zip] field of the sweep cannot be changed by a size");
        }
        let toml::Value::Array(values) = values else {
            bail!("{origin}: grid.{field}: expected a list of values");
        };
        if values.is_empty() {
            bail!("{origin}: grid.{field}: empty list of values");
        }
        fixed.retain(|f| f.field != *field);
        match grid.iter_mut().find(|(g, _)| g == field) {
            Some((_, v)) => *v = values.clone(),
            None => grid.push((field.clone(), values.clone())),
        }
    }
    let scenario = std::path::absolute(&base.scenario)
        .map_err(|e| anyhow!("{}: {e}", base.scenario.display()))?;
    let mut s = format!(
        "# Written by weft reproduce from {origin}.\nname = {}\nscenario = {}\nthreads = {}\ncommand = {}\n",
        toml::Value::String(name.to_string()),
        toml::Value::String(scenario.display().to_string()),
        base.threads,
        toml::Value::String(base.command.name().to_string())
    );
    let table = |title: &str, rows: Vec<(String, String)>| -> String {
        let mut t = format!("\n[{title}]\n");
        for (k, v) in rows {
            t += &format!("{} = {v}\n", toml::Value::String(k));
        }
        t
    };
    if !fixed.is_empty() {
        s += &table(
            "set",
            fixed
                .iter()
                .map(|a| (a.field.clone(), a.value.to_string()))
                .collect(),
        );
    }
    let lists = |l: &[(String, Vec<toml::Value>)]| -> Vec<(String, String)> {
        l.iter()
            .map(|(k, v)| (k.clone(), toml::Value::Array(v.clone()).to_string()))
            .collect()
    };
    if !grid.is_empty() {
        s += &table("grid", lists(&grid));
    }
    if !zip.is_empty() {
        s += &table("zip", lists(&zip));
    }
    Ok(s)
}

/// Loads `base` and writes its derived sweep file to `out`; returns the derived spec.
pub fn write_derived(
    base_file: &Path,
    name: &str,
    o: &SizeOverride,
    out: &Path,
) -> Result<SweepSpec> {
    let base = SweepSpec::load(base_file)?;
    let text = derived_sweep(&base, name, o)?;
    if let Some(dir) = out.parent() {
        std::fs::create_dir_all(dir)
            .map_err(|e| anyhow!("{}: cannot create: {e}", dir.display()))?;
    }
    std::fs::write(out, &text).map_err(|e| anyhow!("writing {}: {e}", out.display()))?;
    SweepSpec::parse(&text, out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn o(text: &str) -> SizeOverride {
        toml::from_str(text).unwrap()
    }

    #[test]
    fn a_size_fixes_replaces_and_adds_fields() {
        let base = SweepSpec::parse(
            "scenario = \"b.toml\"\n[set]\n\"topology.k\" = 8\n\"host.load\" = 1.0\n[grid]\n\"lb.policy\" = [\"ofan\", \"rps\"]\nseed = [1, 2, 3]\n",
            Path::new("/d/s.toml"),
        )
        .unwrap();
        let text = derived_sweep(
            &base,
            "s-paper",
            &o("[set]\n\"topology.k\" = 12\n\"lb.policy\" = \"ofan\"\n[grid]\nseed = [1, 2]\n\"host.load\" = [0.5, 1.0]\n"),
        )
        .unwrap();
        let d = SweepSpec::parse(&text, Path::new("/o/s.toml")).unwrap();
        assert_eq!(d.name, "s-paper");
        assert_eq!(d.scenario, Path::new("/d/b.toml"));
        let sets: Vec<String> = d.fixed.iter().map(Assignment::to_set).collect();
        assert_eq!(sets, ["topology.k=12", "lb.policy=\"ofan\""]);
        assert_eq!(d.varied_fields(), ["seed", "host.load"]);
        assert_eq!(d.len(), 4);
        // No overrides: the same points.
        let same = derived_sweep(&base, "s", &SizeOverride::default()).unwrap();
        let same = SweepSpec::parse(&same, Path::new("/o/s.toml")).unwrap();
        assert_eq!(same.points(), base.points());
        assert_eq!(same.fixed, base.fixed);
    }

    #[test]
    fn seeds_is_the_seed_grid_from_one() {
        let base = SweepSpec::parse(
            "scenario = \"b.toml\"\n[grid]\n\"lb.policy\" = [\"ofan\", \"rps\"]\nseed = [1]\n",
            Path::new("/d/s.toml"),
        )
        .unwrap();
        let text = derived_sweep(&base, "s", &o("seeds = 5\n")).unwrap();
        let d = SweepSpec::parse(&text, Path::new("/o/s.toml")).unwrap();
        assert_eq!(d.len(), 10);
        let seeds: Vec<String> = d.points()[..5]
            .iter()
            .map(|p| p.varied[1].to_set())
            .collect();
        assert_eq!(seeds, ["seed=1", "seed=2", "seed=3", "seed=4", "seed=5"]);
        let e = derived_sweep(&base, "s", &o("seeds = 3\n[grid]\nseed = [1]\n")).unwrap_err();
        assert!(
            e.to_string()
                .contains("seeds: give either seeds or grid.seed"),
            "{e}"
        );
        let e = derived_sweep(&base, "s", &o("seeds = 0\n")).unwrap_err();
        assert!(e.to_string().contains("seeds: must be at least 1"), "{e}");
    }

    #[test]
    fn zip_fields_cannot_be_changed() {
        let base = SweepSpec::parse(
            "scenario = \"b.toml\"\n[zip]\na = [1, 2]\n",
            Path::new("s.toml"),
        )
        .unwrap();
        let e = derived_sweep(&base, "s", &o("[set]\na = 1\n")).unwrap_err();
        assert!(e.to_string().contains("set.a: a [zip] field"));
        let text = derived_sweep(&base, "s", &o("[zip]\nb = [1, 2, 3]\n")).unwrap();
        let d = SweepSpec::parse(&text, Path::new("s.toml")).unwrap();
        assert_eq!(d.varied_fields(), ["b"]);
        assert_eq!(d.len(), 3);
    }
}
