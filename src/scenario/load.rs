//! Reading a scenario: TOML text → table → `--set` overrides → typed `Scenario` → validation.
//! Every failure is one line naming the file and the field.

use super::overrides::apply_override;
use super::Scenario;
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
        let line = e.span().map(|s| text[..s.start].lines().count().max(1));
        let at = line.map(|l| format!(" (line {l})")).unwrap_or_default();
        anyhow!("{origin}: malformed TOML{at}: {}", e.message().trim())
    })?;
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
            anyhow!("{origin}: {path}: {inner}")
        }
    })?;
    scenario.base_dir = base_dir.to_path_buf();
    scenario.validate().map_err(|e| anyhow!("{origin}: {e}"))?;
    Ok(scenario)
}
