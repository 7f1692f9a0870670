//! Semantic checks of a typed scenario. Each error names the dotted field path.

use super::{BufferBytes, Scenario, TopologyKind, WorkloadKind};
use thiserror::Error;

/// A scenario value a user got wrong: the dotted field path and what is wrong with it.
#[derive(Debug, Error, Clone, PartialEq, Eq)]
#[error("{field}: {message}")]
pub struct FieldError {
    pub field: String,
    pub message: String,
}

impl FieldError {
    pub fn new(field: impl Into<String>, message: impl Into<String>) -> FieldError {
        FieldError {
            field: field.into(),
            message: message.into(),
        }
    }
}

pub type Result<T> = std::result::Result<T, FieldError>;

/// Returns a [`FieldError`] for `field` with a formatted message.
macro_rules! bail_field {
    ($field:expr, $($arg:tt)*) => {
        return Err(FieldError::new($field, format!($($arg)*)))
    };
}

/// The tier names a topology accepts in `[topology.tiers.NAME]`.
pub fn tier_names(kind: TopologyKind) -> &'static [&'static str] {
    match kind {
        TopologyKind::FatTree => &["host_edge", "edge_agg", "agg_core"],
        TopologyKind::LeafSpine => &["host_leaf", "leaf_spine"],
    }
}

fn check_rate(field: &str, gbps: f64) -> Result<()> {
    if !gbps.is_finite() || gbps <= 0.0 {
        bail_field!(field, "must be a positive rate in Gb/s (got {gbps})");
    }
    if gbps * 1e9 < 1.0 {
        bail_field!(field, "rate below 1 b/s (got {gbps} Gb/s)");
    }
    if gbps > MAX_RATE_GBPS {
        bail_field!(field, "rate above {MAX_RATE_GBPS:e} Gb/s (got {gbps:e})");
    }
    Ok(())
}

/// Sanity bounds that keep every time and rate well inside the u64 picosecond / bit-per-second
/// ranges the simulator computes in (larger values would silently wrap simulated time).
const MAX_RATE_GBPS: f64 = 1e6;
const MAX_LATENCY_NS: f64 = 1e9;

fn check_latency(field: &str, ns: f64) -> Result<()> {
    if !ns.is_finite() || ns < 0.0 {
        bail_field!(field, "must be a non-negative latency in ns (got {ns})");
    }
    if ns > MAX_LATENCY_NS {
        bail_field!(
            field,
            "latency above {MAX_LATENCY_NS:e} ns = 1 s (got {ns:e})"
        );
    }
    Ok(())
}

impl Scenario {
    pub fn validate(&self) -> Result<()> {
        let t = &self.topology;
        if t.k < 4 || t.k % 2 != 0 || t.k > 64 {
            bail_field!(
                "topology.k",
                "must be an even number from 4 to 64 (got {})",
                t.k
            );
        }
        check_rate("topology.link_rate_gbps", t.link_rate_gbps)?;
        check_latency("topology.link_latency_ns", t.link_latency_ns)?;
        let names = tier_names(t.kind);
        for (name, o) in &t.tiers {
            if !names.contains(&name.as_str()) {
                bail_field!(
                    format!("topology.tiers.{name}"),
                    "unknown tier for this topology (expected one of: {})",
                    names.join(", ")
                );
            }
            if let Some(r) = o.rate_gbps {
                check_rate(&format!("topology.tiers.{name}.rate_gbps"), r)?;
            }
            if let Some(l) = o.latency_ns {
                check_latency(&format!("topology.tiers.{name}.latency_ns"), l)?;
            }
        }

        let p = &self.packet;
        if p.payload_bytes == 0 {
            bail_field!("packet.payload_bytes", "must be at least 1");
        }
        if p.ack_bytes == 0 {
            bail_field!("packet.ack_bytes", "must be at least 1");
        }
        if p.payload_bytes as u64 + p.header_bytes as u64 + p.interframe_bytes as u64 > 1 << 30 {
            bail_field!("packet", "payload + header + interframe exceeds 1 GiB");
        }

        let data_bytes = p.payload_bytes as u64 + p.header_bytes as u64;
        if let BufferBytes::Bytes(b) = self.switch.buffer_bytes {
            if b < data_bytes {
                bail_field!(
                    "switch.buffer_bytes",
                    "{b} is smaller than one data packet ({data_bytes} bytes = payload + header)"
                );
            }
        }
        check_latency(
            "switch.forwarding_latency_ns",
            self.switch.forwarding_latency_ns,
        )?;

        let lb = &self.lb;
        if lb.pipe_ports == 0 || lb.pipe_ports > t.k {
            bail_field!(
                "lb.pipe_ports",
                "must be from 1 to k = {} (got {})",
                t.k,
                lb.pipe_ports
            );
        }
        if lb.entropy_paths == 0 || lb.entropy_paths > 65_536 {
            bail_field!(
                "lb.entropy_paths",
                "must be from 1 to 65536 (got {})",
                lb.entropy_paths
            );
        }

        let w = self.host.window_bdp;
        if !w.is_finite() || w <= 0.0 || w > 1e6 {
            bail_field!(
                "host.window_bdp",
                "must be a positive number of BDPs up to 10^6 (got {w})"
            );
        }

        let load = self.host.load;
        // Pacing is computed in parts per million of line rate.
        if !(1e-6..=1.0).contains(&load) {
            bail_field!("host.load", "must be in [0.000001, 1] (got {load})");
        }

        let w = &self.workload;
        match w.kind {
            WorkloadKind::Permutation | WorkloadKind::AllToAll => {
                if w.message_bytes == 0 {
                    bail_field!("workload.message_bytes", "must be at least 1");
                }
                let max = p.payload_bytes as u64 * u32::MAX as u64;
                if w.message_bytes > max {
                    bail_field!(
                        "workload.message_bytes",
                        "{} is more than 2^32 - 1 packets of packet.payload_bytes ({max} bytes)",
                        w.message_bytes
                    );
                }
                if w.file.is_some() {
                    bail_field!("workload.file", "only used with kind = \"matrix\"");
                }
            }
            WorkloadKind::Matrix => {
                if w.file.is_none() {
                    bail_field!("workload.file", "required with kind = \"matrix\"");
                }
            }
        }
        Ok(())
    }
}
