//! `--set key.path=value`: overrides one scenario field by its dotted path before the
//! scenario is typed, so an override is checked exactly like a field in the file.

use anyhow::{anyhow, bail, Result};

/// Parses `value` as a TOML value (number, bool, string, array); a bare word that is not valid
/// TOML is taken as a string, so `--set lb.policy=ofan` works without quotes.
fn parse_value(raw: &str) -> toml::Value {
    let doc = format!("v = {raw}");
    match toml::from_str::<toml::Table>(&doc) {
        Ok(mut t) => t.remove("v").expect("parsed key"),
        Err(_) => toml::Value::String(raw.to_string()),
    }
}

pub(super) fn apply_override(table: &mut toml::Table, set: &str) -> Result<()> {
    let (path, raw) = set
        .split_once('=')
        .ok_or_else(|| anyhow!("expected key=value (e.g. lb.policy=ofan)"))?;
    if let Some(msg) = super::lb_config::renamed_field(path) {
        bail!("{msg}");
    }
    let keys: Vec<&str> = path.trim().split('.').collect();
    if keys.iter().any(|k| k.is_empty()) {
        bail!("empty key in path \"{path}\"");
    }
    let (last, parents) = keys.split_last().expect("non-empty");
    let mut cur = table;
    for (i, key) in parents.iter().enumerate() {
        let entry = cur
            .entry(key.to_string())
            .or_insert_with(|| toml::Value::Table(toml::Table::new()));
        cur = match entry {
            toml::Value::Table(t) => t,
            _ => bail!("{} is not a table", keys[..=i].join(".")),
        };
    }
    cur.insert(last.to_string(), parse_value(raw.trim()));
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sets_nested_fields_with_typed_values() {
        let mut t = toml::Table::new();
        apply_override(&mut t, "lb.policy=ofan").unwrap();
        apply_override(&mut t, "topology.k=8").unwrap();
        apply_override(&mut t, "host.load=0.5").unwrap();
        assert_eq!(t["lb"]["policy"].as_str(), Some("ofan"));
        assert_eq!(t["topology"]["k"].as_integer(), Some(8));
        assert_eq!(t["host"]["load"].as_float(), Some(0.5));
        assert!(apply_override(&mut t, "nokey").is_err());
        assert!(apply_override(&mut t, "lb.policy.x=1").is_err());
    }
}
