//! The per-policy settings' old flat names (`lb.ar_mode`, before `[lb.ar]`): one table, read
//! before a scenario is typed, so that a file, a `--set` and a sweep's grid key that still use
//! one fail with the new name instead of "unknown field".

use anyhow::{bail, Result};

/// (old key of `[lb]`, policy table, new key in it): `lb.ar_mode` is now `lb.ar.mode`.
pub(super) const RENAMED: &[(&str, &str, &str)] = &[
    ("reps_buffer", "reps", "buffer"),
    ("reps_freeze_us", "reps", "freeze_us"),
    ("reps_explore_pkts", "reps", "explore_pkts"),
    ("reps_freeze_rtt_gate", "reps", "freeze_rtt_gate"),
    ("drill_d", "drill", "d"),
    ("drill_m", "drill", "m"),
    ("topk_k", "topk", "k"),
    ("ar_update_period_ns", "ar", "update_period_ns"),
    ("ar_capacity_bytes", "ar", "capacity_bytes"),
    ("ar_thresholds_pct", "ar", "thresholds_pct"),
    ("ar_small_bytes", "ar", "small_bytes"),
    ("ar_mode", "ar", "mode"),
    ("ar_flowlet_us", "ar", "flowlet_us"),
    ("ar_flowset_entries", "ar", "flowset_entries"),
    ("dlb_mode", "dlb", "mode"),
    ("dlb_flowlet_us", "dlb", "flowlet_us"),
    ("dlb_flowset_entries", "dlb", "flowset_entries"),
    ("dlb_sample_ns", "dlb", "sample_ns"),
    ("dlb_load_window_us", "dlb", "load_window_us"),
    ("dlb_queue_thresholds_pct", "dlb", "queue_thresholds_pct"),
    ("dlb_util_thresholds_pct", "dlb", "util_thresholds_pct"),
    ("dlb_rebalance_delta", "dlb", "rebalance_delta"),
    ("dlb_rebalance_prob", "dlb", "rebalance_prob"),
    ("valiant_granularity", "valiant", "granularity"),
    ("valiant_intermediates", "valiant", "intermediates"),
    ("psp_bands", "psp", "bands"),
    ("psp_th_max_bytes", "psp", "th_max_bytes"),
    ("psp_thresholds_bytes", "psp", "thresholds_bytes"),
    ("psp_variant", "psp", "variant"),
    ("psp_weights", "psp", "weights"),
    ("psp_remote", "psp", "remote"),
    ("psp_remote_period_ns", "psp", "remote_period_ns"),
    ("conga_t_dre_us", "conga", "t_dre_us"),
    ("conga_alpha", "conga", "alpha"),
    ("conga_q_bits", "conga", "q_bits"),
    ("conga_t_age_us", "conga", "t_age_us"),
    ("conga_flowlet_us", "conga", "flowlet_us"),
    ("sglb_advert_ns", "sglb", "advert_ns"),
    ("sglb_mode", "sglb", "mode"),
    ("sglb_flowlet_us", "sglb", "flowlet_us"),
    ("sglb_flowset_entries", "sglb", "flowset_entries"),
    ("bitmap_paths", "bitmap", "paths"),
    ("bitmap_ecn_penalty", "bitmap", "ecn_penalty"),
    ("bitmap_nack_penalty", "bitmap", "nack_penalty"),
    ("bitmap_timeout_penalty", "bitmap", "timeout_penalty"),
    ("bitmap_max_penalty", "bitmap", "max_penalty"),
    ("bitmap_no_skip_above_half", "bitmap", "no_skip_above_half"),
    ("ethereal_max_subflows", "ethereal", "max_subflows"),
    ("ethereal_ties", "ethereal", "ties"),
];

/// For a dotted scenario field that uses an old flat name, the error that names the new one.
pub fn renamed_field(path: &str) -> Option<String> {
    let key = path.trim().strip_prefix("lb.")?;
    let (old, rest) = key.split_once('.').map_or((key, ""), |(o, r)| (o, r));
    let (_, table, field) = RENAMED.iter().find(|(o, _, _)| *o == old)?;
    let tail = if rest.is_empty() {
        String::new()
    } else {
        format!(".{rest}")
    };
    Some(format!(
        "lb.{old}{tail} was renamed: use lb.{table}.{field}{tail} ([lb.{table}] {field} = ...)"
    ))
}

/// Refuses a scenario table whose `[lb]` still has an old flat key.
pub(crate) fn check_renamed_keys(table: &toml::Table) -> Result<()> {
    if let Some(toml::Value::Table(lb)) = table.get("lb") {
        for key in lb.keys() {
            if let Some(msg) = renamed_field(&format!("lb.{key}")) {
                bail!("{msg}");
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_old_name_maps_to_a_field_of_the_policy_table() {
        let lb = serde_json::to_value(super::super::LbConfig::default()).unwrap();
        for (old, table, field) in RENAMED {
            assert_eq!(*old, format!("{table}_{field}"));
            assert!(lb[table].get(field).is_some(), "lb.{table}.{field}");
            assert!(lb.get(old).is_none(), "lb.{old} still exists");
        }
        assert_eq!(
            renamed_field("lb.ar_mode").as_deref(),
            Some("lb.ar_mode was renamed: use lb.ar.mode ([lb.ar] mode = ...)")
        );
        assert_eq!(renamed_field("lb.ar.mode"), None);
        assert_eq!(renamed_field("lb.policy"), None);
        assert_eq!(renamed_field("host.ar_mode"), None);
    }
}
