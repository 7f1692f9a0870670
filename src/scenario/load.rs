//! Reading a scenario: TOML text → table → `--set` overrides → typed `Scenario` → validation.
//! Every failure is one line naming the file and the field.

use super::lb_config::check_renamed_keys;
use super::overrides::apply_override;
use super::validate::FieldError;
use super::{Scenario, WorkloadKind};
use anyhow::{anyhow, Context, Result};
use std::path::Path;

/// Loads, overrides and validates the scenario at `path`.
pub fn load_scenario(path: &Path, sets: &[String]) -> Result<Scenario> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| anyhow!("{}: cannot read scenario file: {e}", path.display()))?;
    let base = path.parent().map(Path::to_path_buf).unwrap_or_default();
    let base = if base.as_os_str().is_empty() {
        std::path::PathBuf::from(".")
    } else {
        base
    };
    load_scenario_str(&text, &path.display().to_string(), &base, sets)
}

/// Same as [`load_scenario`] from text; `origin` names the source in error messages.
pub fn load_scenario_str(
    text: &str,
    origin: &str,
    base_dir: &Path,
    sets: &[String],
) -> Result<Scenario> {
    let mut table: toml::Table = toml::from_str(text).map_err(|e| {
        // 1-based line of the error's start: newlines before it, plus one (clamped to the last
        // line, for errors at the very end of a file that ends with a newline).
        let line = e.span().map(|s| {
            let before = text.get(..s.start).unwrap_or(text);
            (before.matches('\n').count() + 1).min(text.lines().count().max(1))
        });
        let at = line.map(|l| format!(" (line {l})")).unwrap_or_default();
        anyhow!("{origin}: malformed TOML{at}: {}", one_line(e.message()))
    })?;
    check_renamed_keys(&table).map_err(|e| anyhow!("{origin}: {e}"))?;
    for set in sets {
        apply_override(&mut table, set).with_context(|| format!("--set {set}"))?;
    }
    let value = toml::Value::Table(table);
    let mut scenario: Scenario = serde_path_to_error::deserialize(value).map_err(|e| {
        let path = e.path().to_string();
        let inner = e.into_inner().to_string();
        let inner = inner.lines().next().unwrap_or("").trim().to_string();
        if path == "." || path.is_empty() {
            anyhow!("{origin}: {inner}")
        } else {
            anyhow!("{origin}: {path}: {inner}{}", from_set(&path, sets))
        }
    })?;
    scenario.base_dir = base_dir.to_path_buf();
    scenario
        .validate()
        .and_then(|()| check_matrix_file(&scenario))
        .map_err(|e| {
            let set = from_set(&e.field, sets);
            anyhow!("{origin}: {}: {}{set}", e.field, one_line(&e.message))
        })?;
    Ok(scenario)
}

/// A workload's input files must exist before anything is built: a matrix's, an
/// all_to_all_v's or a moe trace's `workload.file`, a poisson load's `workload.size_cdf`
/// (their contents are checked when the workload is built, which names the file and line).
fn check_matrix_file(s: &Scenario) -> std::result::Result<(), FieldError> {
    let w = &s.workload;
    if let (WorkloadKind::Poisson, Some(file)) = (w.kind, &w.size_cdf) {
        check_readable(s, "workload.size_cdf", file)?;
    }
    let has_file = matches!(
        w.kind,
        WorkloadKind::Matrix | WorkloadKind::Pairwise | WorkloadKind::Moe
    );
    if let (true, Some(file)) = (has_file, &w.file) {
        check_readable(s, "workload.file", file)?;
    }
    Ok(())
}

/// `file` (relative to the scenario's folder) is a readable file; else an error for `field`.
fn check_readable(s: &Scenario, field: &str, file: &Path) -> std::result::Result<(), FieldError> {
    let path = s.base_dir.join(file);
    let problem = match std::fs::metadata(&path) {
        Err(e) => format!("cannot read: {e}"),
        Ok(m) if !m.is_file() => "not a file".to_string(),
        Ok(_) => return Ok(()),
    };
    Err(FieldError::new(
        field,
        format!("{}: {problem}", path.display()),
    ))
}

/// " (from --set KEY=VALUE)" when the last `--set` touching `field` (the field itself, a
/// table above it or a field below it) explains an error about it; "" otherwise.
fn from_set(field: &str, sets: &[String]) -> String {
    let touches = |set: &&String| {
        let key = set.split_once('=').map(|(k, _)| k.trim()).unwrap_or("");
        !key.is_empty()
            && (key == field
                || key.starts_with(&format!("{field}."))
                || field.starts_with(&format!("{key}.")))
    };
    match sets.iter().rev().find(touches) {
        Some(set) => format!(" (from --set {set})"),
        None => String::new(),
    }
}

/// Joins a possibly multi-line message into one line: "a\nb" → "a; b".
fn one_line(msg: &str) -> String {
    msg.lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect::<Vec<_>>()
        .join("; ")
}
