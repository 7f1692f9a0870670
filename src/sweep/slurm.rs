//! `weft sweep --slurm`: writes `OUT/sweep.sbatch`, a Slurm job array whose task i runs
//! `weft sweep SWEEP.toml --out OUT --only i`, so every task writes the same layout as a local
//! sweep (and skips its point if already done). It does not submit.

use super::spec::SweepSpec;
use anyhow::{Context, Result};
use std::path::{Path, PathBuf};

/// The Slurm array script's file name, in the sweep's output folder.
pub const SCRIPT_FILE: &str = "sweep.sbatch";

/// Absolute form of `p` (against the current folder), so the tasks may start anywhere.
fn absolute(p: &Path) -> Result<PathBuf> {
    std::path::absolute(p)
        .with_context(|| format!("{}: cannot make the path absolute", p.display()))
}

/// Single-quotes `s` for bash.
fn quote(s: &Path) -> String {
    format!("'{}'", s.display().to_string().replace('\'', "'\\''"))
}

/// The job array script. Resources: one task of `threads` CPUs per point (the sweep's
/// `threads`); the time limit is left to the submitter (`sbatch --time=...` overrides the
/// one-hour default written here). The binary is `WEFT_BIN` when set, else the one that
/// wrote the script.
pub fn script(spec: &SweepSpec, out: &Path, weft_bin: &Path) -> Result<String> {
    let sweep = absolute(&spec.path)?;
    let out = absolute(out)?;
    let bin = absolute(weft_bin)?;
    let job: String = spec
        .name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || "-_.".contains(c) {
                c
            } else {
                '-'
            }
        })
        .collect();
    Ok(format!(
        "#!/bin/bash\n\
         # Written by `weft sweep --slurm`: one array task per point of {sweep_file}.\n\
         # Submit with: sbatch {script}\n\
         #SBATCH --job-name=weft-sweep-{job}\n\
         #SBATCH --array=0-{last}\n\
         #SBATCH --ntasks=1\n\
         #SBATCH --cpus-per-task={threads}\n\
         #SBATCH --time=01:00:00\n\
         #SBATCH --output={out_log}\n\
         set -euo pipefail\n\
         if [ -z \"${{SLURM_ARRAY_TASK_ID:-}}\" ]; then\n\
         \x20   echo \"error: not an array task; submit with: sbatch {script}\" >&2\n\
         \x20   exit 2\n\
         fi\n\
         bin=${{WEFT_BIN:-{bin}}}\n\
         exec \"$bin\" sweep {sweep} --out {out} --only \"$SLURM_ARRAY_TASK_ID\" --jobs 1\n",
        sweep_file = sweep.display(),
        script = quote(&out.join(SCRIPT_FILE)),
        last = spec.len() - 1,
        threads = spec.threads,
        out_log = out.join("slurm-%A_%a.out").display(),
        bin = quote(&bin),
        sweep = quote(&sweep),
        out = quote(&out),
    ))
}

/// Writes the script into `out` and returns its path.
pub fn write(spec: &SweepSpec, out: &Path, weft_bin: &Path) -> Result<PathBuf> {
    std::fs::create_dir_all(out)
        .with_context(|| format!("--out {}: cannot create the folder", out.display()))?;
    let path = out.join(SCRIPT_FILE);
    std::fs::write(&path, script(spec, out, weft_bin)?)
        .with_context(|| format!("writing {}", path.display()))?;
    Ok(path)
}
