//! Workloads: which flows each host sends. Flows are generated where their host lives, on
//! demand: a host asks for its `i`-th flow and gets it computed (permutation, all-to-all,
//! continuous load, shuffle) or
//! read from a per-host table (connection matrices; Poisson arrivals, whose i-th start is a
//! sum of i random gaps, drawn once at build time: O(flows of the run)). Nothing of size O(flows) is built for
//! generated workloads, so an all-to-all on 65,536 hosts (4.3 × 10⁹ flows) costs only the
//! state of the flows actually running.
//!
//! Invariants:
//! - a flow is named by its [`FlowId`] = (source host, index at that host);
//! - each host's flows are in order of start time (ties in generation order), so a host
//!   starts them with one cursor;
//! - every rank computes the same flows from the scenario and seed.
//!
//! - a flow starts at a fixed time ([`Start::At`]) or `delay_ps` after every one of its
//!   dependencies (other flows, [`Workload::for_each_dep`]) has been fully received at its
//!   source host ([`Start::After`]). A dependency is always a flow *to* the dependent flow's
//!   source, so a trigger is local to one host and the conservative lookahead still holds
//!   (no global barrier). The fixed-start flows of a host are in order of start time; its
//!   triggered flows may sit anywhere among them (the host's cursor skips them, and its
//!   trigger bookkeeping, `net/triggers.rs`, starts them).

mod all_to_all;
pub(crate) mod background;
pub(crate) mod combined;
mod continuous;
pub(crate) mod deps;
pub(crate) mod fsdp2;
mod generator;
pub(crate) mod matrix;
pub(crate) mod moe;
pub mod moe_trace;
pub(crate) mod pairwise;
pub(crate) mod permutation;
pub(crate) mod placement;
pub(crate) mod poisson;
mod rack_patterns;
mod ranks;
pub mod ring;
pub(crate) mod shuffle;
pub(crate) mod size_cdf;
pub(crate) mod structure;

pub use crate::packet::FlowId;
use crate::rng::{stream, Purpose};
use crate::scenario::{Destinations, Scenario, WorkloadKind};
use crate::topology::Fabric;
use anyhow::Result;
pub use background::Pinned;
use generator::{Base, Generator};
pub use structure::{PhaseStructure, Structure};

/// One flow of a workload.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Flow {
    /// Sending host.
    pub src: u32,
    /// Receiving host.
    pub dst: u32,
    /// Payload bytes.
    pub bytes: u64,
    /// When it starts.
    pub start: Start,
}

/// When a flow starts: `start = at(t) | after(messages, delay)`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum Start {
    /// At a fixed time, in ps.
    At(u64),
    /// `delay_ps` (a compute delay) after the last byte of the last of its dependencies
    /// ([`Workload::for_each_dep`], at least one) arrived at its source host.
    After {
        /// The compute delay, in ps.
        delay_ps: u64,
    },
}

impl Flow {
    /// The fixed start time, if the flow has one.
    #[inline]
    pub fn start_at_ps(&self) -> Option<u64> {
        match self.start {
            Start::At(t) => Some(t),
            Start::After { .. } => None,
        }
    }
}

/// The largest flow a scenario can carry: 2^32 - 1 packets (sequence numbers are u32).
pub fn max_flow_bytes(s: &Scenario) -> u64 {
    s.packet.payload_bytes as u64 * u32::MAX as u64
}

/// A scenario's traffic: its generator ([`generator::Base`]) and the background flows
/// pinned to paths, which come first among a host's flows (`background.rs`).
pub struct Workload {
    base: generator::Base,
    background: Option<Box<background::Background>>,
}

impl Workload {
    /// The workload of scenario `s` on `fabric`; a workload with triggers of at most
    /// 2^20 flows has its dependencies checked (`deps.rs`).
    pub fn build(s: &Scenario, fabric: &Fabric) -> Result<Workload> {
        let base = Workload::build_base(s, fabric)?;
        let bg = background::Background::build(s, fabric)?;
        let w = Workload {
            base,
            background: (!bg.is_empty()).then(|| Box::new(bg)),
        };
        let hosts = fabric.num_hosts;
        if w.has_triggers() && w.total_flows(hosts) <= deps::CHECKED_FLOWS {
            deps::check(&(&w, hosts)).map_err(|e| anyhow::anyhow!("workload: {e}"))?;
        }
        Ok(w)
    }

    fn build_base(s: &Scenario, fabric: &Fabric) -> Result<Base> {
        let num_hosts = fabric.num_hosts;
        Ok(match s.workload.kind {
            WorkloadKind::Permutation => {
                let mut rng = stream(s.seed, 0, Purpose::Workload);
                let dst = if s.workload.inter_rack {
                    let rack = racks(fabric);
                    permutation::inter_group_derangement(num_hosts, &|h| rack[h as usize], &mut rng)
                } else if s.workload.inter_pod {
                    let group = |h: u32| fabric.group_of(h, false).expect("hosts have a pod");
                    permutation::inter_group_derangement(num_hosts, &group, &mut rng)
                } else {
                    permutation::derangement(num_hosts, &mut rng)
                };
                Base::Permutation(permutation::Permutation {
                    dst,
                    bytes: s.workload.message_bytes,
                })
            }
            WorkloadKind::AllToAll => Base::AllToAll(all_to_all::AllToAll {
                hosts: num_hosts,
                bytes: s.workload.message_bytes,
            }),
            WorkloadKind::Matrix => {
                let file = s
                    .workload
                    .file
                    .as_ref()
                    .expect("validated: matrix has a file");
                let flows = matrix::read(&s.base_dir.join(file), num_hosts, max_flow_bytes(s))?;
                Base::Table(matrix::FlowTable::new(flows, num_hosts))
            }
            WorkloadKind::Continuous => Base::Continuous(continuous(s, fabric)),
            WorkloadKind::Poisson => match &s.workload.with_shuffle {
                None => Base::Poisson(poisson(s, fabric)?),
                Some(ws) => {
                    let mut sh = shuffle::Shuffle::new(
                        &racks(fabric),
                        ws.message_bytes,
                        us_to_ps(ws.stagger_us),
                        s.seed,
                    )
                    .map_err(|e| anyhow::anyhow!("workload.with_shuffle: {e}"))?;
                    sh.start_ps = us_to_ps(ws.start_us);
                    sh.bulk = ws.bulk;
                    let c = combined::Combined::new(poisson(s, fabric)?, sh, num_hosts);
                    Base::Combined(Box::new(c))
                }
            },
            WorkloadKind::Shuffle => {
                let w = &s.workload;
                let stagger_ps = us_to_ps(w.stagger_us.unwrap_or(0.0));
                let mut sh =
                    shuffle::Shuffle::new(&racks(fabric), w.message_bytes, stagger_ps, s.seed)
                        .map_err(|e| anyhow::anyhow!("workload.kind: \"shuffle\" {e}"))?;
                sh.bulk = w.bulk;
                Base::Shuffle(sh)
            }
            WorkloadKind::HotRack | WorkloadKind::Skew => {
                let (w, rng) = (&s.workload, &mut stream(s.seed, 0, Purpose::Workload));
                let flows = match w.kind {
                    WorkloadKind::HotRack => {
                        rack_patterns::hot_rack(&racks(fabric), w.message_bytes, rng)
                    }
                    _ => rack_patterns::skew(
                        &racks(fabric),
                        w.active_racks.unwrap_or(0.2),
                        w.message_bytes,
                        rng,
                    ),
                }
                .map_err(|e| anyhow::anyhow!("workload.kind: {:?} {e}", w.kind))?;
                Base::Table(matrix::FlowTable::new(flows, num_hosts))
            }
            WorkloadKind::Ring => Base::Ring(ring::Ring::build(s, num_hosts)?),
            WorkloadKind::Pairwise => Base::Pairwise(pairwise::Pairwise::build(s, num_hosts)?),
            WorkloadKind::Fsdp2 => Base::Ring(fsdp2::build(s, num_hosts)?),
            WorkloadKind::Moe => Base::Moe(moe::build(s, num_hosts)?),
        })
    }

    /// A workload of explicit flows (any order; they are grouped by source and start time).
    pub fn from_flows(flows: Vec<Flow>, num_hosts: u32) -> Workload {
        Workload {
            base: Base::Table(matrix::FlowTable::new(flows, num_hosts)),
            background: None,
        }
    }

    /// Host `h`'s background flows (its first flows; empty without background).
    #[inline]
    fn background_of(&self, h: u32) -> &[background::Pinned] {
        self.background.as_ref().map_or(&[], |bg| bg.of(h))
    }

    /// Flow `i` of host `h` as an index of the generator's flows of `h`, if it is one.
    #[inline]
    fn base_index(&self, h: u32, i: u32) -> Option<u32> {
        i.checked_sub(self.background_of(h).len() as u32)
    }

    /// Number of flows host `h` sends.
    #[inline]
    pub fn flows_of(&self, h: u32) -> u32 {
        self.background_of(h).len() as u32 + self.base.flows_of(h)
    }

    /// The background flow that flow `i` of host `h` is, if it is one.
    #[inline]
    pub fn pinned(&self, h: u32, i: u32) -> Option<&background::Pinned> {
        self.background_of(h).get(i as usize)
    }

    /// Flow `i` of host `h` (`i < flows_of(h)`).
    #[inline]
    pub fn flow(&self, h: u32, i: u32) -> Flow {
        debug_assert!(i < self.flows_of(h));
        match self.base_index(h, i) {
            Some(j) => self.base.flow(h, j),
            None => self.background_of(h)[i as usize].flow,
        }
    }

    /// The names of the workload's phases, in order (collectives; empty for the others).
    pub fn phase_names(&self) -> &[String] {
        self.base.phase_names()
    }

    /// The phase (an index into [`Workload::phase_names`]) of flow `i` of host `h`, if it
    /// belongs to one (background flows do not).
    #[inline]
    pub fn phase_of(&self, h: u32, i: u32) -> Option<u8> {
        self.base_index(h, i).and_then(|j| self.base.phase_of(h, j))
    }

    /// The application's tag of flow `i` of host `h` on Opera: bulk (Some(true)) or
    /// low-latency (Some(false)); None: `topology.opera.bulk_cutoff_bytes` decides.
    #[inline]
    pub fn bulk_tag(&self, h: u32, i: u32) -> Option<bool> {
        self.base_index(h, i).and_then(|j| self.base.bulk_tag(h, j))
    }

    /// Whether any flow starts on a trigger ([`Start::After`]): hosts then track which
    /// incoming flows have fully arrived.
    pub fn has_triggers(&self) -> bool {
        self.base.has_triggers()
    }

    /// The id of the generator's flow `base` (indexed among its source's generated flows)
    /// among all the source's flows.
    fn shifted(&self, base: FlowId) -> FlowId {
        let src = crate::packet::flow_src(base);
        let shift = self.background_of(src).len() as u32;
        crate::packet::flow_id(src, crate::packet::flow_index(base) + shift)
    }

    /// Calls `f` with each dependency of flow `i` of host `h` (none for a fixed start). Every
    /// dependency is a flow whose destination is `h`.
    pub fn for_each_dep(&self, h: u32, i: u32, mut f: impl FnMut(FlowId)) {
        if let Some(j) = self.base_index(h, i) {
            self.base.for_each_dep(h, j, &mut |d| f(self.shifted(d)));
        }
    }

    /// Number of dependencies of flow `i` of host `h`.
    pub fn dep_count(&self, h: u32, i: u32) -> u32 {
        self.base_index(h, i)
            .map_or(0, |j| self.base.dep_count(h, j))
    }

    /// Calls `f` with the index, at the flow's destination host, of each flow that depends
    /// on flow `id` (the inverse of [`Workload::for_each_dep`]).
    pub fn for_each_dependent(&self, id: FlowId, mut f: impl FnMut(u32)) {
        let (src, i) = (crate::packet::flow_src(id), crate::packet::flow_index(id));
        let Some(j) = self.base_index(src, i) else {
            return;
        };
        // The dependents' indices shift by their host's background flows: only then is the
        // flow's destination needed.
        let shift = match &self.background {
            None => 0,
            Some(bg) => bg.of(self.base.flow(src, j).dst).len() as u32,
        };
        let base = crate::packet::flow_id(src, j);
        self.base.for_each_dependent(base, &mut |k| f(k + shift));
    }

    /// The flow named by `id`.
    #[inline]
    pub fn flow_by_id(&self, id: FlowId) -> Flow {
        self.flow(crate::packet::flow_src(id), crate::packet::flow_index(id))
    }

    /// Flows of all hosts (`num_hosts` is the fabric's).
    pub fn total_flows(&self, num_hosts: u32) -> u64 {
        (0..num_hosts).map(|h| self.flows_of(h) as u64).sum()
    }

    /// The most flows whose per-flow state can be live at once (what memory grows with):
    /// a ring's members each run a few steps at a time (dependent steps are generated when
    /// their predecessor's data arrives and freed when they complete); every other
    /// workload may start all its flows at once (fixed starts; MoE's dispatch).
    pub fn in_flight_flows(&self, num_hosts: u32) -> u64 {
        let background: u64 = (0..num_hosts)
            .map(|h| self.background_of(h).len() as u64)
            .sum();
        background + self.base.in_flight_flows(num_hosts)
    }

    /// Payload bytes host `h` sends, over all its flows.
    pub fn bytes_of(&self, h: u32) -> u64 {
        let background: u64 = self.background_of(h).iter().map(|p| p.flow.bytes).sum();
        background + self.base.bytes_of(h)
    }

    /// NVLink bytes that accompany the simulated traffic (reported, not simulated; 0 for
    /// workloads without GPU servers).
    pub fn nvlink_bytes(&self) -> u64 {
        self.base.nvlink_bytes()
    }

    /// The generator's name (e.g. "permutation", "poisson+shuffle").
    pub fn kind_name(&self) -> &'static str {
        self.base.kind_name()
    }
}

impl deps::Graph for (&Workload, u32) {
    fn hosts(&self) -> u32 {
        self.1
    }
    fn flows_of(&self, h: u32) -> u32 {
        self.0.flows_of(h)
    }
    fn flow(&self, h: u32, i: u32) -> Flow {
        self.0.flow(h, i)
    }
    fn deps(&self, h: u32, i: u32, f: &mut dyn FnMut(FlowId)) {
        self.0.for_each_dep(h, i, f)
    }
    fn dependents(&self, id: FlowId, f: &mut dyn FnMut(u32)) {
        self.0.for_each_dependent(id, f)
    }
}

/// The continuous workload of a validated scenario: a message starts every (wire time of a
/// message at the host's line rate) / `workload.load`, for `workload.duration_us`.
fn continuous(s: &Scenario, fabric: &Fabric) -> continuous::Continuous {
    let w = &s.workload;
    let payload = s.packet.payload_bytes as u64;
    let packets = w.message_bytes.div_ceil(payload);
    let wire_bytes = w.message_bytes
        + packets * (s.packet.header_bytes as u64 + s.packet.interframe_bytes as u64);
    let wire_ps = fabric.link(0, 0).serialization_ps(wire_bytes);
    let load = w.load.unwrap_or(1.0);
    let gap_ps = ((wire_ps as f64 / load).round() as u64).max(1);
    let duration_us = w.duration_us.expect("validated: continuous has a duration");
    let duration_ps = (duration_us * crate::time::PS_PER_US as f64).round() as u64;
    continuous::Continuous {
        group: (0..fabric.num_hosts)
            .map(|h| fabric.group_of(h, false).expect("hosts have a group"))
            .collect(),
        bytes: w.message_bytes,
        gap_ps,
        count: (duration_ps / gap_ps).clamp(1, u32::MAX as u64) as u32,
        seed: s.seed,
        shift_group: match w.destinations {
            Destinations::Random => None,
            // Validated: a fat tree or leaf-spine, whose groups are contiguous and equal.
            Destinations::Shift => Some(fabric.num_hosts / group_count(fabric)),
        },
    }
}

/// The number of host groups (pods or leaves) of `fabric`.
fn group_count(fabric: &Fabric) -> u32 {
    (0..fabric.num_hosts)
        .map(|h| fabric.group_of(h, false).expect("hosts have a group"))
        .max()
        .map_or(1, |g| g + 1)
}

fn us_to_ps(us: f64) -> u64 {
    (us * crate::time::PS_PER_US as f64).round() as u64
}

/// The rack (edge switch of a fat tree, leaf of a leaf-spine) of every host.
fn racks(fabric: &Fabric) -> Vec<u32> {
    (0..fabric.num_hosts)
        .map(|h| fabric.group_of(h, true).expect("hosts have a rack"))
        .collect()
}

/// The Poisson workload of a validated scenario: λ_host = load · line rate (bytes/s) / mean
/// size of the step CDF, for `workload.duration_us`.
fn poisson(s: &Scenario, fabric: &Fabric) -> Result<poisson::Poisson> {
    let w = &s.workload;
    let file = s
        .base_dir
        .join(w.size_cdf.as_ref().expect("validated: poisson has a CDF"));
    let cdf = size_cdf::SizeCdf::read(&file)?;
    let max = max_flow_bytes(s);
    if cdf.max_bytes() > max {
        anyhow::bail!(
            "{}: a flow of {} bytes is more than 2^32 - 1 packets of packet.payload_bytes ({max} bytes)",
            file.display(),
            cdf.max_bytes()
        );
    }
    let rack = racks(fabric);
    if rack.iter().all(|&r| r == rack[0]) {
        anyhow::bail!(
            "workload.kind: \"poisson\" needs at least two racks (edge switches or leaves)"
        );
    }
    let line_bytes_per_s = fabric.link(0, 0).rate.bps as f64 / 8.0;
    let load = w.load.expect("validated: poisson has a load");
    let duration_us = w.duration_us.expect("validated: poisson has a duration");
    poisson::Poisson::generate(&poisson::PoissonParams {
        rack: &rack,
        cdf: &cdf,
        rate_per_host_per_s: load * line_bytes_per_s / cdf.mean_bytes(),
        duration_ps: (duration_us * crate::time::PS_PER_US as f64).round() as u64,
        seed: s.seed,
    })
    .map_err(|e| anyhow::anyhow!("workload: {e}"))
}
