//! Semantic checks of a typed scenario. Each error names the dotted field path.

use super::{
    BackgroundEnd, BufferBytes, BufferMode, CcKind, Destinations, EcnMode, LbPolicy, LossDetection,
    OperaConfig, ReorderPaths, Scenario, TopologyKind, WorkloadKind, MAX_RACK_UPLINKS,
};
use thiserror::Error;

/// A scenario value a user got wrong: the dotted field path and what is wrong with it.
#[derive(Debug, Error, Clone, PartialEq, Eq)]
#[error("{field}: {message}")]
pub struct FieldError {
    /// Dotted path of the field, e.g. `lb.ethereal.max_subflows`.
    pub field: String,
    /// What is wrong with its value.
    pub message: String,
}

impl FieldError {
    /// The error `message` about field `field`.
    pub fn new(field: impl Into<String>, message: impl Into<String>) -> FieldError {
        FieldError {
            field: field.into(),
            message: message.into(),
        }
    }
}

pub(super) type Result<T> = std::result::Result<T, FieldError>;

/// Returns a [`FieldError`] for `field` with a formatted message.
macro_rules! bail_field {
    ($field:expr, $($arg:tt)*) => {
        return Err(FieldError::new($field, format!($($arg)*)))
    };
}
pub(super) use bail_field;

/// The tier names a topology accepts in `[topology.tiers.NAME]`.
pub fn tier_names(kind: TopologyKind) -> &'static [&'static str] {
    match kind {
        TopologyKind::FatTree => &["host_edge", "edge_agg", "agg_core"],
        TopologyKind::LeafSpine => &["host_leaf", "leaf_spine"],
        // By height: `TopologyConfig::tier_names`; this is the three-level one.
        TopologyKind::Pgft => super::pgft_tier_names(3),
        TopologyKind::Opera => &["host_tor", "tor_tor"],
        TopologyKind::Expander => &["host_tor", "tor_tor"],
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
pub(super) const MAX_LATENCY_NS: f64 = 1e9;

/// A flowlet gap in µs: from 0 to 10^6.
pub(super) fn check_micros(field: &str, us: f64) -> Result<()> {
    if !us.is_finite() || !(0.0..=MAX_LATENCY_NS / 1e3).contains(&us) {
        bail_field!(field, "must be a time in µs from 0 to 10^6 (got {us})");
    }
    Ok(())
}

/// A flow table's entries: 1 to 2^24.
pub(super) fn check_table(field: &str, entries: u32) -> Result<()> {
    if !(1..=1 << 24).contains(&entries) {
        bail_field!(field, "must be from 1 to 16777216 entries (got {entries})");
    }
    Ok(())
}

/// Three increasing percentages in (`above`, 100].
pub(super) fn check_levels(field: &str, t: &[f64], above: f64) -> Result<()> {
    let increasing = t.windows(2).all(|w| w[0] < w[1]);
    if t.len() != 3 || !increasing || !t.iter().all(|&x| x > above && x <= 100.0) {
        let lowest = if above < 0.0 { "[0" } else { "(0" };
        bail_field!(
            field,
            "must be three increasing percentages in {lowest}, 100] (got {t:?})"
        );
    }
    Ok(())
}

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
    /// The most uplinks any switch chooses among: k/2 in a fat tree, the spines of a
    /// leaf-spine, the ToR-to-ToR ports of an expander.
    pub fn max_uplinks(&self) -> u32 {
        match self.topology.kind {
            TopologyKind::FatTree => self.topology.k / 2,
            TopologyKind::LeafSpine => self.topology.leaf_spine_dims().1,
            TopologyKind::Pgft => self.topology.pgft.as_ref().map_or(1, |g| {
                let p = g.p_or_ones();
                (1..g.m.len()).map(|l| g.w[l] * p[l]).max().unwrap_or(1)
            }),
            TopologyKind::Opera => self.topology.rack_dims().2,
            TopologyKind::Expander => self.topology.rack_dims().2,
        }
    }

    /// `[topology.pgft]`: required with `kind = "pgft"`, refused otherwise; failures are not
    /// tabulated for PGFTs (`topology/failures.rs` keys routes by fat-tree edge switch).
    fn validate_pgft(&self) -> Result<()> {
        let t = &self.topology;
        match (&t.pgft, t.kind) {
            (Some(g), TopologyKind::Pgft) => g.validate()?,
            (None, TopologyKind::Pgft) => bail_field!(
                "topology.pgft",
                "kind = \"pgft\" needs [topology.pgft] with h, m and w"
            ),
            (Some(_), _) => bail_field!("topology.pgft", "only used with kind = \"pgft\""),
            (None, _) => {}
        }
        if t.kind == TopologyKind::Pgft && self.failures.any() {
            bail_field!(
                "failures",
                "link failures are not supported on kind = \"pgft\" yet"
            );
        }
        Ok(())
    }

    /// Rack fabrics (Opera): dimensions, slice constants, and what Opera cannot combine with
    /// (its own routing rule, time-varying links). What needs the schedule (connected
    /// superslices) is checked when the fabric is built.
    fn validate_racks(&self) -> Result<()> {
        let t = &self.topology;
        let opera = t.kind == TopologyKind::Opera;
        let expander = t.kind == TopologyKind::Expander;
        // An expander tabulates routes per (ToR, rack) pair, and a 1-regular graph (2 racks)
        // is a valid if tiny one.
        let (max_racks, min_uplinks) = match expander {
            true => (super::expander::MAX_RACKS, 1),
            false => (1 << 20, 2),
        };
        for (field, v, min, max) in [
            ("topology.racks", t.racks, 2, max_racks),
            ("topology.hosts_per_rack", t.hosts_per_rack, 1, 4096),
            ("topology.uplinks", t.uplinks, min_uplinks, MAX_RACK_UPLINKS),
        ] {
            match v {
                Some(_) if !opera && !expander => {
                    bail_field!(field, "only used with kind = \"opera\" or \"expander\"")
                }
                Some(n) if n < min || n > max => {
                    bail_field!(field, "must be from {min} to {max} (got {n})")
                }
                _ => {}
            }
        }
        let o = &t.opera;
        if !opera {
            if *o != OperaConfig::default() {
                bail_field!("topology.opera", "only used with kind = \"opera\"");
            }
            return Ok(());
        }
        for (field, v) in [
            ("topology.opera.epsilon_ns", o.epsilon_ns),
            ("topology.opera.slice_ns", o.slice_ns),
            ("topology.opera.delta_ns", o.delta_ns),
            ("topology.opera.reconfig_ns", Some(o.reconfig_ns)),
        ] {
            if let Some(ns) = v {
                check_latency(field, ns)?;
            }
        }
        if o.epsilon_ns.is_some() && o.slice_ns.is_some() {
            bail_field!(
                "topology.opera.slice_ns",
                "give either epsilon_ns or slice_ns (= ε + δ + r), not both"
            );
        }
        if o.bulk_cutoff_bytes < self.packet.payload_bytes as u64 {
            bail_field!(
                "topology.opera.bulk_cutoff_bytes",
                "must be at least one packet's payload ({} bytes; got {})",
                self.packet.payload_bytes,
                o.bulk_cutoff_bytes
            );
        }
        if !matches!(self.lb.policy, LbPolicy::Ecmp | LbPolicy::Rps) {
            bail_field!(
                "lb.policy",
                "Opera ToRs choose among the shortest next hops of a packet's send slice: \
                 \"rps\" (a random shortest path per packet, as the authors' simulator) or \
                 \"ecmp\" (one per flow and slice), not \"{}\"",
                self.lb.policy.name()
            );
        }
        if !t.link_rates.is_empty() {
            bail_field!(
                "topology.link_rates",
                "not supported on Opera (rotor links change peers); use topology.tiers"
            );
        }
        if self.failures.any() {
            bail_field!("failures", "link failures are not supported on Opera yet");
        }
        Ok(())
    }

    /// Checks the whole scenario, section by section, in a fixed order: the first error
    /// found is the one reported, so the order of the stages below is part of the output.
    pub fn validate(&self) -> Result<()> {
        if let Some(end) = self.end_us {
            // 2^64 ps is about 1.8 × 10^13 µs.
            if !(end > 0.0 && end <= 1e12) {
                bail_field!("end_us", "must be a time in µs in (0, 10^12] (got {end})");
            }
        }
        self.validate_topology()?;
        self.validate_link_overrides()?;
        let f = self.failures.link_probability;
        if !(0.0..1.0).contains(&f) {
            bail_field!("failures.link_probability", "must be in [0, 1) (got {f})");
        }
        self.validate_packet()?;
        self.validate_switch()?;
        self.validate_transport()?;
        self.lb.validate(self.topology.k, self.max_uplinks())?;
        self.validate_host()?;
        self.validate_workload()?;
        Ok(())
    }

    /// `[topology]`: the size fields each kind takes, then each kind's own section, then
    /// the default link rate and latency.
    fn validate_topology(&self) -> Result<()> {
        let t = &self.topology;
        if t.k < 4 || t.k % 2 != 0 || t.k > 64 {
            bail_field!(
                "topology.k",
                "must be an even number from 4 to 64 (got {})",
                t.k
            );
        }
        for (field, v, max) in [
            ("topology.leaves", t.leaves, 8192),
            ("topology.spines", t.spines, 4096),
            ("topology.hosts_per_leaf", t.hosts_per_leaf, 4096),
        ] {
            match v {
                Some(_) if t.kind != TopologyKind::LeafSpine => {
                    bail_field!(field, "only used with kind = \"leaf_spine\"")
                }
                Some(n) if n == 0 || n > max || (field == "topology.leaves" && n < 2) => {
                    let min = if field == "topology.leaves" { 2 } else { 1 };
                    bail_field!(field, "must be from {min} to {max} (got {n})")
                }
                _ => {}
            }
        }
        self.validate_pgft()?;
        self.validate_racks()?;
        self.validate_expander()?;
        check_rate("topology.link_rate_gbps", t.link_rate_gbps)?;
        check_latency("topology.link_latency_ns", t.link_latency_ns)?;
        Ok(())
    }

    /// `[topology.tiers.NAME]` and `[[topology.link_rates]]`: known tiers, rates and
    /// latencies in range, each override naming its links one way only.
    fn validate_link_overrides(&self) -> Result<()> {
        let t = &self.topology;
        let names = t.tier_names();
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
        for (i, o) in t.link_rates.iter().enumerate() {
            let field = |f: &str| format!("topology.link_rates[{i}].{f}");
            check_rate(&field("rate_gbps"), o.rate_gbps)?;
            match (&o.tier, o.fraction, o.node, o.port) {
                (Some(tier), Some(fr), None, None) => {
                    if !names.contains(&tier.as_str()) {
                        bail_field!(
                            field("tier"),
                            "unknown tier \"{tier}\" (expected one of: {})",
                            names.join(", ")
                        );
                    }
                    if !(0.0..=1.0).contains(&fr) {
                        bail_field!(field("fraction"), "must be in [0, 1] (got {fr})");
                    }
                }
                (None, None, Some(_), Some(_)) => {}
                _ => bail_field!(
                    format!("topology.link_rates[{i}]"),
                    "give either tier and fraction, or node and port"
                ),
            }
        }
        Ok(())
    }

    /// `[packet]`: sizes of at least one byte, a packet on the wire under 1 GiB.
    fn validate_packet(&self) -> Result<()> {
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
        Ok(())
    }

    /// `[switch]`: a buffer that holds a data packet, the forwarding latency, the queues.
    fn validate_switch(&self) -> Result<()> {
        let p = &self.packet;
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
        self.validate_queues(data_bytes)?;
        Ok(())
    }

    /// `[host]`: the window in BDPs and the pacing load.
    fn validate_host(&self) -> Result<()> {
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
        Ok(())
    }

    /// `[workload]`: background flows, the fields each kind takes, then each kind's own
    /// checks, in that order.
    fn validate_workload(&self) -> Result<()> {
        self.validate_background()?;
        self.validate_workload_fields_used()?;
        if let Some(ws) = &self.workload.with_shuffle {
            self.validate_with_shuffle(ws)?;
        }
        self.validate_workload_kind()?;
        self.validate_ai()?;
        self.validate_collective_fields_used()?;
        self.validate_step_delay()?;
        Ok(())
    }

    /// `[[workload.background]]`: each flow's rate, a duration (its own or the workload's),
    /// a path, and where it may end.
    fn validate_background(&self) -> Result<()> {
        let w = &self.workload;
        for (i, b) in w.background.iter().enumerate() {
            let field = |f: &str| format!("workload.background[{i}].{f}");
            check_rate(&field("rate_gbps"), b.rate_gbps)?;
            match b.duration_us.or(w.duration_us) {
                Some(d) if d > 0.0 && d.is_finite() => {}
                Some(d) => bail_field!(field("duration_us"), "must be positive (got {d})"),
                None => bail_field!(
                    field("duration_us"),
                    "required unless workload.duration_us is set"
                ),
            }
            if b.path.is_empty() {
                bail_field!(field("path"), "must list the switches from src's to dst's");
            }
            if b.ends == BackgroundEnd::Switch && self.host.cc != CcKind::None {
                bail_field!(
                    field("ends"),
                    "\"switch\" needs host.cc = \"none\" (a switch keeps no receiver state for a \
                     reliable transport; got host.cc = \"{}\")",
                    self.host.cc.name()
                );
            }
        }
        Ok(())
    }

    /// The workload fields only some kinds take: refused with the others.
    fn validate_workload_fields_used(&self) -> Result<()> {
        let w = &self.workload;
        if w.kind != WorkloadKind::Continuous && w.destinations != Destinations::Random {
            bail_field!(
                "workload.destinations",
                "only used with kind = \"continuous\""
            );
        }
        if !matches!(w.kind, WorkloadKind::Continuous | WorkloadKind::Poisson) {
            if w.load.is_some() {
                bail_field!(
                    "workload.load",
                    "only used with kind = \"continuous\" or \"poisson\""
                );
            }
            if w.duration_us.is_some() {
                bail_field!(
                    "workload.duration_us",
                    "only used with kind = \"continuous\" or \"poisson\""
                );
            }
        }
        if w.kind != WorkloadKind::Poisson && w.size_cdf.is_some() {
            bail_field!("workload.size_cdf", "only used with kind = \"poisson\"");
        }
        if w.kind != WorkloadKind::Permutation && w.inter_rack {
            bail_field!(
                "workload.inter_rack",
                "only used with kind = \"permutation\""
            );
        }
        if w.inter_rack && w.inter_pod {
            bail_field!(
                "workload.inter_rack",
                "give inter_rack or inter_pod, not both"
            );
        }
        match (w.kind, w.active_racks) {
            (WorkloadKind::Skew, Some(f)) if !(f > 0.0 && f <= 1.0) => {
                bail_field!("workload.active_racks", "must be in (0, 1] (got {f})")
            }
            (WorkloadKind::Skew, _) | (_, None) => {}
            _ => bail_field!("workload.active_racks", "only used with kind = \"skew\""),
        }
        if w.kind != WorkloadKind::Shuffle && w.stagger_us.is_some() {
            bail_field!("workload.stagger_us", "only used with kind = \"shuffle\"");
        }
        if w.bulk.is_some()
            && (w.kind != WorkloadKind::Shuffle || self.topology.kind != TopologyKind::Opera)
        {
            bail_field!(
                "workload.bulk",
                "only used with kind = \"shuffle\" on topology.kind = \"opera\""
            );
        }
        Ok(())
    }

    /// Each workload kind's own fields: sizes, loads, durations and files.
    fn validate_workload_kind(&self) -> Result<()> {
        let w = &self.workload;
        match w.kind {
            WorkloadKind::AllToAll
            | WorkloadKind::Shuffle
            | WorkloadKind::HotRack
            | WorkloadKind::Skew
                if w.inter_pod =>
            {
                bail_field!(
                    "workload.inter_pod",
                    "only used with kind = \"permutation\""
                );
            }
            WorkloadKind::Permutation
            | WorkloadKind::AllToAll
            | WorkloadKind::Shuffle
            | WorkloadKind::HotRack
            | WorkloadKind::Skew => self.validate_message_workload()?,
            WorkloadKind::Continuous => self.validate_continuous_workload()?,
            WorkloadKind::Poisson => self.validate_poisson_workload()?,
            WorkloadKind::Matrix if w.inter_pod => {
                bail_field!(
                    "workload.inter_pod",
                    "only used with kind = \"permutation\""
                );
            }
            WorkloadKind::Matrix => {
                if w.file.is_none() {
                    bail_field!("workload.file", "required with kind = \"matrix\"");
                }
            }
            WorkloadKind::Ring | WorkloadKind::Pairwise => self.validate_collective()?,
            WorkloadKind::Fsdp2 | WorkloadKind::Moe => {}
        }
        Ok(())
    }

    /// Permutation, all-to-all, shuffle, hot-rack and skew: one message per flow, of at
    /// least one byte and at most 2^32 - 1 packets.
    fn validate_message_workload(&self) -> Result<()> {
        let w = &self.workload;
        let p = &self.packet;
        if let Some(d) = w.stagger_us {
            if !(0.0..=1e9).contains(&d) {
                bail_field!("workload.stagger_us", "must be in [0, 10^9] µs (got {d})");
            }
        }
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
        Ok(())
    }

    /// `kind = "continuous"`: message size, load, a duration in µs, destinations the
    /// topology can shift.
    fn validate_continuous_workload(&self) -> Result<()> {
        let w = &self.workload;
        let p = &self.packet;
        if w.message_bytes == 0 || w.message_bytes > p.payload_bytes as u64 * u32::MAX as u64 {
            bail_field!(
                "workload.message_bytes",
                "must be from 1 to 2^32 - 1 packets (got {})",
                w.message_bytes
            );
        }
        let load = w.load.unwrap_or(1.0);
        if !(load > 0.0 && load <= 1.0) {
            bail_field!("workload.load", "must be in (0, 1] (got {load})");
        }
        match w.duration_us {
            None => bail_field!(
                "workload.duration_us",
                "required with kind = \"continuous\""
            ),
            Some(d) if !(d > 0.0 && d <= 1e9) => {
                bail_field!("workload.duration_us", "must be in (0, 10^9] µs (got {d})")
            }
            Some(_) => {}
        }
        refuse_file_and_inter_pod(w, "continuous")?;
        if w.destinations == Destinations::Shift
            && !matches!(
                self.topology.kind,
                TopologyKind::FatTree | TopologyKind::LeafSpine
            )
        {
            bail_field!(
                "workload.destinations",
                "\"shift\" needs a fat tree or a leaf-spine (contiguous, equal host groups)"
            );
        }
        Ok(())
    }

    /// `kind = "poisson"`: a load, a duration in µs and a flow-size CDF.
    fn validate_poisson_workload(&self) -> Result<()> {
        let w = &self.workload;
        match w.load {
            None => bail_field!("workload.load", "required with kind = \"poisson\""),
            Some(load) if !(load > 0.0 && load <= 1.0) => {
                bail_field!("workload.load", "must be in (0, 1] (got {load})")
            }
            Some(_) => {}
        }
        match w.duration_us {
            None => bail_field!("workload.duration_us", "required with kind = \"poisson\""),
            Some(d) if !(d > 0.0 && d <= 1e9) => {
                bail_field!("workload.duration_us", "must be in (0, 10^9] µs (got {d})")
            }
            Some(_) => {}
        }
        if w.size_cdf.is_none() {
            bail_field!(
                "workload.size_cdf",
                "required with kind = \"poisson\" (a `bytes,cdf` file)"
            );
        }
        refuse_file_and_inter_pod(w, "poisson")?;
        Ok(())
    }

    /// `workload.hosts` and `workload.collective`: only with ring or pairwise collectives.
    fn validate_collective_fields_used(&self) -> Result<()> {
        let w = &self.workload;
        if !matches!(w.kind, WorkloadKind::Ring | WorkloadKind::Pairwise) {
            if w.hosts.is_some() {
                bail_field!(
                    "workload.hosts",
                    "only used with kind = \"ring\" or \"pairwise\""
                );
            }
            if w.collective != super::Collective::AllReduce {
                bail_field!(
                    "workload.collective",
                    "only used with kind = \"ring\" or \"pairwise\""
                );
            }
        }
        Ok(())
    }

    /// `workload.step_delay_ns`: in [0, 10^12] ns where the kind has steps, 0 otherwise.
    fn validate_step_delay(&self) -> Result<()> {
        let w = &self.workload;
        let delays = matches!(
            w.kind,
            WorkloadKind::Ring | WorkloadKind::Fsdp2 | WorkloadKind::Moe
        );
        if delays && !(w.step_delay_ns >= 0.0 && w.step_delay_ns <= 1e12) {
            bail_field!(
                "workload.step_delay_ns",
                "must be in [0, 10^12] ns (got {})",
                w.step_delay_ns
            );
        }
        if !delays && w.step_delay_ns != 0.0 {
            bail_field!(
                "workload.step_delay_ns",
                "only used with kind = \"ring\", \"fsdp2\" or \"moe\""
            );
        }
        Ok(())
    }
}

/// `workload.file` and `workload.inter_pod`, which a generated workload of `kind` (its
/// name in the scenario) does not take; `inter_pod` is named first when both are given.
fn refuse_file_and_inter_pod(w: &super::WorkloadConfig, kind: &str) -> Result<()> {
    if w.file.is_some() || w.inter_pod {
        let field = if w.inter_pod {
            "workload.inter_pod"
        } else {
            "workload.file"
        };
        bail_field!(field, "not used with kind = \"{kind}\"");
    }
    Ok(())
}

impl Scenario {
    /// `[workload.with_shuffle]`: only besides Poisson flows; sizes and times in range.
    fn validate_with_shuffle(&self, ws: &super::WithShuffle) -> Result<()> {
        let field = |f: &str| format!("workload.with_shuffle.{f}");
        if self.workload.kind != WorkloadKind::Poisson {
            bail_field!("workload.with_shuffle", "only used with kind = \"poisson\"");
        }
        let max = self.packet.payload_bytes as u64 * u32::MAX as u64;
        if ws.message_bytes == 0 || ws.message_bytes > max {
            bail_field!(
                field("message_bytes"),
                "must be from 1 to 2^32 - 1 packets of packet.payload_bytes ({max} bytes) (got {})",
                ws.message_bytes
            );
        }
        for (name, us) in [("start_us", ws.start_us), ("stagger_us", ws.stagger_us)] {
            if !(0.0..=1e9).contains(&us) {
                bail_field!(field(name), "must be in [0, 10^9] µs (got {us})");
            }
        }
        if ws.bulk.is_some() && self.topology.kind != TopologyKind::Opera {
            bail_field!(field("bulk"), "only used on topology.kind = \"opera\"");
        }
        Ok(())
    }

    /// A ring or pairwise collective: the collective is one the kind runs, its hosts appear
    /// once and are at least two (that they exist, and the chunk size, need the fabric:
    /// `workload::ring::Ring::build`, `workload::pairwise::Pairwise::build`), all_to_all_v
    /// has its file.
    fn validate_collective(&self) -> Result<()> {
        let w = &self.workload;
        let ring = w.kind == WorkloadKind::Ring;
        if ring != w.collective.is_ring() {
            bail_field!(
                "workload.collective",
                "kind = \"{}\" runs {}, not \"{}\"",
                if ring { "ring" } else { "pairwise" },
                if ring {
                    "\"all_reduce\", \"reduce_scatter\" or \"all_gather\""
                } else {
                    "\"all_to_all\" or \"all_to_all_v\""
                },
                w.collective.name()
            );
        }
        let needs_file = w.collective == super::Collective::AllToAllV;
        if w.inter_pod {
            bail_field!(
                "workload.inter_pod",
                "only used with kind = \"permutation\""
            );
        }
        match (needs_file, w.file.is_some()) {
            (true, false) => bail_field!(
                "workload.file",
                "required with collective = \"all_to_all_v\" (a rank x rank CSV byte matrix)"
            ),
            (false, true) => bail_field!(
                "workload.file",
                "only used with kind = \"matrix\" or collective = \"all_to_all_v\""
            ),
            _ => {}
        }
        if let Some(list) = &w.hosts {
            let mut seen = std::collections::BTreeSet::new();
            for &h in list {
                if !seen.insert(h) {
                    bail_field!("workload.hosts", "host {h} appears twice");
                }
            }
            if list.len() < 2 {
                bail_field!(
                    "workload.hosts",
                    "a collective needs at least two hosts (got {})",
                    list.len()
                );
            }
        }
        if w.message_bytes == 0 {
            bail_field!("workload.message_bytes", "must be at least 1");
        }
        Ok(())
    }

    fn validate_queues(&self, data_bytes: u64) -> Result<()> {
        let sw = &self.switch;
        self.validate_shared_buffer(data_bytes)?;
        self.validate_trim(data_bytes)?;
        if !(0.0..=1.0).contains(&sw.loss_fraction) {
            bail_field!(
                "switch.loss_fraction",
                "must be a probability in [0, 1] (got {})",
                sw.loss_fraction
            );
        }
        if let Some(c) = &sw.ctrl_share {
            if c.ctrl_bytes == 0 || c.data_bytes == 0 {
                bail_field!(
                    "switch.ctrl_share",
                    "ctrl_bytes and data_bytes must both be positive (got {} and {})",
                    c.ctrl_bytes,
                    c.data_bytes
                );
            }
            if !sw.priority_control.unwrap_or(sw.trim) {
                bail_field!(
                    "switch.ctrl_share",
                    "shares the wire between the priority queue and the FIFO: needs switch.trim or switch.priority_control"
                );
            }
        }
        if sw.return_to_sender {
            if !sw.trim {
                bail_field!(
                    "switch.return_to_sender",
                    "returns trimmed headers: needs switch.trim = true"
                );
            }
            if sw.ctrl_buffer_bytes == BufferBytes::Unlimited {
                bail_field!(
                    "switch.return_to_sender",
                    "acts when the header queue is full: needs a finite switch.ctrl_buffer_bytes"
                );
            }
        }
        if let BufferBytes::Bytes(b) = sw.ctrl_buffer_bytes {
            if b < self.packet.ack_bytes as u64 {
                bail_field!(
                    "switch.ctrl_buffer_bytes",
                    "{b} is smaller than one ACK ({} bytes)",
                    self.packet.ack_bytes
                );
            }
        }
        self.validate_ecn_thresholds()?;
        Ok(())
    }

    /// `switch.trim` and `switch.trim_bytes`: a trimmed header of 1 byte up to a data
    /// packet (`data_bytes`), a finite buffer, the priority queue and a transport that
    /// recovers trimmed packets.
    fn validate_trim(&self, data_bytes: u64) -> Result<()> {
        let sw = &self.switch;
        if sw.trim {
            if sw.trim_bytes == 0 || sw.trim_bytes as u64 > data_bytes {
                bail_field!(
                    "switch.trim_bytes",
                    "must be from 1 to a data packet's {data_bytes} bytes (got {})",
                    sw.trim_bytes
                );
            }
            // A shared pool is always finite (validated below).
            if sw.buffer_bytes == BufferBytes::Unlimited && sw.buffer == BufferMode::PerPort {
                bail_field!("switch.trim", "trimming needs a finite switch.buffer_bytes");
            }
            if sw.priority_control == Some(false) {
                bail_field!(
                    "switch.priority_control",
                    "trimmed headers travel in the priority queue: cannot be false with switch.trim"
                );
            }
            if self.host.cc == CcKind::None {
                bail_field!(
                    "switch.trim",
                    "needs a transport that recovers trimmed packets (host.cc other than \"none\")"
                );
            }
        }
        Ok(())
    }

    /// The ECN thresholds (step or ramp), in bytes: below the most a port's FIFO can hold.
    fn validate_ecn_thresholds(&self) -> Result<()> {
        let sw = &self.switch;
        // The most a port's FIFO can hold, for the ECN thresholds: its buffer, or with a
        // shared buffer the pool (`buffer_bytes` is no cap then; an unset pool depends on
        // each switch's ports, so it is not checked here).
        let (buffer_field, buffer) = match sw.buffer {
            BufferMode::PerPort => ("switch.buffer_bytes", sw.buffer_bytes.limit()),
            BufferMode::Shared => (
                "switch.shared_buffer_bytes",
                sw.shared_buffer_bytes.unwrap_or(u64::MAX),
            ),
        };
        match sw.ecn {
            EcnMode::Step if sw.ecn_threshold_bytes > buffer => bail_field!(
                "switch.ecn_threshold_bytes",
                "{} is above {buffer_field} ({buffer}): no packet would be marked",
                sw.ecn_threshold_bytes
            ),
            EcnMode::Ramp => {
                let (lo, hi) = self.ecn_ramp_bytes()?;
                if lo >= hi {
                    bail_field!(
                        "switch.ecn_min_bytes",
                        "must be below switch.ecn_max_bytes ({lo} >= {hi})"
                    );
                }
                if hi > buffer {
                    bail_field!(
                        "switch.ecn_max_bytes",
                        "{hi} is above {buffer_field} ({buffer})"
                    );
                }
            }
            EcnMode::Step | EcnMode::Off => {}
        }
        Ok(())
    }

    /// `switch.buffer = "shared"` and its fields: the pool's fields only with it (never
    /// silently ignored), a finite pool, a positive finite α.
    fn validate_shared_buffer(&self, data_bytes: u64) -> Result<()> {
        let sw = &self.switch;
        if sw.buffer == BufferMode::PerPort {
            for (field, set) in [
                (
                    "switch.shared_buffer_bytes",
                    sw.shared_buffer_bytes.is_some(),
                ),
                (
                    "switch.shared_buffer_alpha",
                    sw.shared_buffer_alpha.is_some(),
                ),
            ] {
                if set {
                    bail_field!(field, "only used with switch.buffer = \"shared\"");
                }
            }
            return Ok(());
        }
        if let Some(a) = sw.shared_buffer_alpha {
            if !a.is_finite() || a <= 0.0 {
                bail_field!(
                    "switch.shared_buffer_alpha",
                    "must be a positive finite number (got {a})"
                );
            }
        }
        match (sw.shared_buffer_bytes, sw.buffer_bytes) {
            (Some(b), _) if b < data_bytes => bail_field!(
                "switch.shared_buffer_bytes",
                "{b} is smaller than one data packet ({data_bytes} bytes = payload + header)"
            ),
            (None, BufferBytes::Unlimited) => bail_field!(
                "switch.shared_buffer_bytes",
                "required with switch.buffer = \"shared\" and an unlimited switch.buffer_bytes (unset, the pool is switch.buffer_bytes × the switch's ports)"
            ),
            _ => Ok(()),
        }
    }

    /// The ECN ramp's (min, max) queue bytes, defaulting to 20 % and 80 % of the buffer.
    pub fn ecn_ramp_bytes(&self) -> Result<(u64, u64)> {
        let sw = &self.switch;
        let of_buffer = |field: &str, frac: f64| match sw.buffer_bytes {
            BufferBytes::Bytes(b) => Ok((b as f64 * frac) as u64),
            BufferBytes::Unlimited => Err(FieldError::new(
                field,
                "required with switch.ecn = \"ramp\" and an unlimited switch.buffer_bytes",
            )),
        };
        let lo = match sw.ecn_min_bytes {
            Some(v) => v,
            None => of_buffer("switch.ecn_min_bytes", 0.2)?,
        };
        let hi = match sw.ecn_max_bytes {
            Some(v) => v,
            None => of_buffer("switch.ecn_max_bytes", 0.8)?,
        };
        Ok((lo, hi))
    }

    fn validate_transport(&self) -> Result<()> {
        let h = &self.host;
        if let Some(rto) = h.rto_min_us {
            if !rto.is_finite() || rto <= 0.0 || rto > 1e9 {
                bail_field!(
                    "host.rto_min_us",
                    "must be a positive time in µs up to 10^9 (got {rto})"
                );
            }
        }
        if let Some(r) = h.reorder_threshold_pkts {
            if r > 1 << 30 {
                bail_field!(
                    "host.reorder_threshold_pkts",
                    "must be at most 2^30 (got {r})"
                );
            }
        }
        if h.cc == CcKind::None {
            // Fields of the reliable transport would be silently ignored.
            let unused = [
                ("host.rto_min_us", h.rto_min_us.is_some()),
                ("host.ack_coalesce_bytes", h.ack_coalesce_bytes > 0),
                (
                    "host.reorder_threshold_pkts",
                    h.reorder_threshold_pkts.is_some(),
                ),
                (
                    "host.reorder_paths",
                    h.reorder_paths != ReorderPaths::Network,
                ),
                (
                    "host.loss_detection",
                    h.loss_detection != LossDetection::Sack,
                ),
            ];
            if let Some((field, _)) = unused.iter().find(|(_, set)| *set) {
                bail_field!(
                    *field,
                    "only used with a reliable transport (host.cc other than \"none\")"
                );
            }
        }
        if h.cc == CcKind::Ndp {
            // NDP learns of every congestion loss from a trimmed header; without trimming
            // only its minimum RTO (1 ms by default) would recover them.
            if !self.switch.trim {
                bail_field!(
                    "switch.trim",
                    "host.cc = \"ndp\" needs trimming: set switch.trim = true"
                );
            }
            if h.ack_coalesce_bytes > 0 {
                bail_field!(
                    "host.ack_coalesce_bytes",
                    "host.cc = \"ndp\" acknowledges (and pulls for) every packet: must be 0"
                );
            }
        }
        if h.cc == CcKind::Dctcp && self.switch.ecn == EcnMode::Off {
            bail_field!(
                "switch.ecn",
                "host.cc = \"dctcp\" reacts only to ECN marks: \"off\" leaves it blind"
            );
        }
        let mut prev = 0.0;
        for (i, &e) in self.report.fct_bins_bytes.iter().enumerate() {
            if !(e >= 1.0 && e <= 2f64.powi(53) && e.fract() == 0.0) {
                bail_field!(
                    "report.fct_bins_bytes",
                    "edge {i} must be a whole number of bytes from 1 to 2^53 (got {e})"
                );
            }
            if e <= prev {
                bail_field!(
                    "report.fct_bins_bytes",
                    "edges must increase (edge {i}, {e}, follows {prev})"
                );
            }
            prev = e;
        }
        let ts = self.report.timeseries_us;
        if !(1e-3..=1e9).contains(&ts) {
            bail_field!(
                "report.timeseries_us",
                "must be an interval from 0.001 to 10^9 µs (got {ts})"
            );
        }
        // DCTCP's NewReno rules need the duplicate-ACK loss rule (unread by other CCAs).
        h.dctcp
            .validate(h.cc != CcKind::Dctcp || h.loss_detection == LossDetection::Dupack)?;
        h.nscc.validate()?;
        h.swift.validate()?;
        h.mswift.validate()?;
        h.ndp.validate()
    }
}
