//! `weft opera-faults`: connectivity of an Opera fabric's low-latency graph, superslice by
//! superslice, under random failures of ToR uplinks, ToRs and rotor switches
//! (`topology/opera/faults.rs`).

use crate::scenario::{Scenario, TopologyKind};
use crate::topology::opera::faults::{connectivity, FaultShares, Faults};
use crate::topology::Fabric;
use anyhow::{bail, Result};
use serde_json::json;
use std::fmt::Write;

/// One failure setting's figures over its draws.
struct Row {
    shares: FaultShares,
    /// Least, over draws, of the worst superslice's connected share.
    worst: f64,
    /// Mean over draws and superslices.
    mean: f64,
    /// Draws in which some superslice lost a pair.
    draws_disconnected: u64,
}

fn check_share(flag: &str, v: &[f64]) -> Result<()> {
    if let Some(x) = v.iter().find(|x| !(0.0..=1.0).contains(*x)) {
        bail!("--{flag}: shares must be in [0, 1] (got {x})");
    }
    Ok(())
}

/// Runs every combination of the given shares; returns the table and the same as JSON (one
/// object per setting).
pub fn run(
    s: &Scenario,
    links: &[f64],
    tors: &[f64],
    rotors: &[f64],
    draws: u64,
) -> Result<(String, serde_json::Value)> {
    if s.topology.kind != TopologyKind::Opera {
        bail!(
            "topology.kind: opera-faults needs an Opera scenario (got {:?})",
            s.topology.kind
        );
    }
    check_share("links", links)?;
    check_share("tors", tors)?;
    check_share("rotors", rotors)?;
    if draws == 0 {
        bail!("--draws: must be at least 1");
    }
    let fabric = Fabric::try_build(s)?;
    let o = fabric.opera().expect("an Opera fabric").opera();
    let mut rows = Vec::new();
    for &l in links {
        for &t in tors {
            for &r in rotors {
                let shares = FaultShares {
                    links: l,
                    tors: t,
                    rotors: r,
                };
                let (mut worst, mut sum, mut disconnected) = (1.0f64, 0.0, 0);
                for d in 0..draws {
                    let c = connectivity(o, &Faults::draw(o, shares, s.seed, d));
                    worst = worst.min(c.worst());
                    sum += c.mean();
                    disconnected += (c.worst() < 1.0) as u64;
                }
                rows.push(Row {
                    shares,
                    worst,
                    mean: sum / draws as f64,
                    draws_disconnected: disconnected,
                });
            }
        }
    }
    Ok((to_text(&rows, draws), to_json(&rows, draws)))
}

fn to_json(rows: &[Row], draws: u64) -> serde_json::Value {
    let v: Vec<_> = rows
        .iter()
        .map(|r| {
            json!({
                "links": r.shares.links, "tors": r.shares.tors, "rotors": r.shares.rotors,
                "draws": draws, "worst_superslice": r.worst, "mean": r.mean,
                "draws_disconnected": r.draws_disconnected,
            })
        })
        .collect();
    serde_json::Value::Array(v)
}

fn to_text(rows: &[Row], draws: u64) -> String {
    let mut o = String::new();
    let _ = writeln!(
        o,
        "connected share of live rack pairs over the stable rotors, {draws} draws per row"
    );
    let _ = writeln!(
        o,
        "{:>8} {:>8} {:>8} {:>16} {:>10} {:>18}",
        "links", "tors", "rotors", "worst superslice", "mean", "draws disconnected"
    );
    for r in rows {
        let _ = writeln!(
            o,
            "{:>8} {:>8} {:>8} {:>16.6} {:>10.6} {:>18}",
            r.shares.links, r.shares.tors, r.shares.rotors, r.worst, r.mean, r.draws_disconnected
        );
    }
    o
}
