//! `weft validate`: checks a scenario and reports its size without running it.

use crate::engine::plan::Plan;
use crate::lb::SwitchLb;
use crate::model::Model;
use crate::net::event::Event;
use crate::net::Port;
use crate::scenario::{Scenario, TopologyKind};
use anyhow::Result;
use std::fmt::Write;

/// What `weft validate` reports of a scenario: its size, the state it needs and an
/// estimate of a run's memory.
pub struct SizeReport {
    /// Hosts of the fabric.
    pub hosts: u32,
    /// Switches of the fabric.
    pub switches: u32,
    /// Ports of all nodes.
    pub ports: u32,
    /// Flows the workload defines.
    pub flows: u64,
    /// The most flows whose state can be live at once (`Workload::in_flight_flows`).
    pub in_flight_flows: u64,
    /// Most partitions the fabric can be split into.
    pub max_partitions: u32,
    /// LB policy state of all switches, in bytes.
    pub lb_pointer_bytes: usize,
    /// LB policy state of the switch that holds the most, in bytes.
    pub lb_pointer_bytes_max_switch: usize,
    /// Estimated peak memory of a run, in bytes.
    pub estimated_memory_bytes: u64,
    /// Failed links (`[failures]`).
    pub failed_links: usize,
    /// With failed links, the max-concurrent-flow solution and its solve time.
    pub rho_max: Option<crate::metrics::rho_max::RhoMax>,
    /// Wall time of building the model, in s.
    pub model_build_s: f64,
    /// The collective's structure, for workloads with phases.
    pub structure: Option<crate::workload::structure::Structure>,
}

/// Sender state per started flow (transport and path state) plus its NIC rotation slot.
const FLOW_STATE_BYTES: u64 = std::mem::size_of::<crate::transport::Sender>() as u64 + 8 + 4;

/// A receiver state and its map entry (key, B-tree node share).
const RECEIVER_BYTES: u64 = std::mem::size_of::<crate::transport::Receiver>() as u64 + 8 + 16;

/// A triggered flow's bookkeeping at its hosts (`net/triggers.rs`): the packet count of the
/// incoming flow, its missing-dependency count, its ready entry and its start time, each a
/// B-tree entry of 8 to 12 bytes with its node share.
const TRIGGER_BYTES: u64 = 4 * 24;

/// Builds scenario `s`'s model and reports its size; fails as loading or building it fails.
pub fn size_report(s: &Scenario) -> Result<SizeReport> {
    let t0 = std::time::Instant::now();
    let m = Model::build(s)?;
    let model_build_s = t0.elapsed().as_secs_f64();
    let f = &m.fabric;
    let per_switch: Vec<usize> = (f.num_hosts..f.num_nodes())
        .map(|n| SwitchLb::state_bytes(&m.lb, f, n))
        .collect();
    let lb_bytes: usize = per_switch.iter().sum();
    let ports = f.num_ports_total() as u64;
    // Fabric arrays (peer node, peer port, class, stage: ~12 B per port), runtime ports, hosts,
    // the state of the flows that can be live at once (every flow for workloads that start
    // them all at once; a ring's few running steps per member), LB pointers, and pending
    // events: at full load every link carries about latency /
    // serialization packets, each an event, counted twice for the event queues' and the
    // window exchange's buffers. It runs low by about 2x: k = 32 and k = 64 permutations
    // estimate 92 MB and 738 MB, measured peaks 171 MB and 1.4-1.75 GB.
    // Opera's schedule and hop table are shared by every partition of a rank.
    let opera_bytes = f.opera().map_or(0, |o| o.opera().heap_bytes() as u64);
    // An expander's route table likewise.
    let fabric_bytes = ports * 12 + f.num_nodes() as u64 * 5 + opera_bytes + f.route_table_bytes();
    let port_bytes = ports * std::mem::size_of::<Port>() as u64;
    let host_bytes = f.num_hosts as u64 * 256;
    let flows = m.workload.total_flows(f.num_hosts);
    let max_paths = crate::lb::drb::path_count(f, 0, f.num_hosts - 1);
    let live = m.workload.in_flight_flows(f.num_hosts);
    let triggers = if m.workload.has_triggers() {
        TRIGGER_BYTES
    } else {
        0
    };
    let sender_bytes = FLOW_STATE_BYTES + m.lb.host.flow_state_bytes(max_paths) + triggers;
    // Receivers: reliable transports keep one per flow received for the whole run (late
    // duplicates), the paced transport only under DRB and only until the flow has arrived.
    let receivers = match (m.transport.is_reliable(), m.lb.host.needs_receiver_state()) {
        (true, _) => flows,
        (false, true) => live,
        (false, false) => 0,
    };
    let flow_bytes = live * sender_bytes + receivers * RECEIVER_BYTES;
    let data_bytes =
        (s.packet.payload_bytes + s.packet.header_bytes + s.packet.interframe_bytes) as u64;
    let in_flight_per_port: u64 = (0..f.num_nodes())
        .flat_map(|n| (0..f.num_ports(n)).map(move |p| (n, p)))
        .map(|(n, p)| {
            let l = f.link(n, p);
            l.latency_ps / l.serialization_ps(data_bytes).max(1) + 2
        })
        .sum();
    let event_bytes = in_flight_per_port * 2 * std::mem::size_of::<Event>() as u64;
    Ok(SizeReport {
        hosts: f.num_hosts,
        switches: f.num_switches(),
        ports: ports as u32,
        flows,
        in_flight_flows: live,
        max_partitions: Plan::max_parts(&m),
        lb_pointer_bytes: lb_bytes,
        lb_pointer_bytes_max_switch: per_switch.iter().copied().max().unwrap_or(0),
        estimated_memory_bytes: fabric_bytes
            + port_bytes
            + host_bytes
            + flow_bytes
            + event_bytes
            + lb_bytes as u64,
        structure: (!m.workload.phase_names().is_empty())
            .then(|| crate::workload::structure::of(&m.workload, f, s.packet.payload_bytes as u64)),
        failed_links: f.failed_links().len(),
        rho_max: m.rho_max,
        model_build_s,
    })
}

impl SizeReport {
    /// The report as `weft validate` prints it.
    pub fn to_text(&self, s: &Scenario) -> String {
        let mut o = String::new();
        let t = &s.topology;
        let shape = match t.kind {
            TopologyKind::LeafSpine if t.leaves.or(t.spines).or(t.hosts_per_leaf).is_some() => {
                let (l, sp, h) = t.leaf_spine_dims();
                format!("{l} leaves x {h} hosts, {sp} spines")
            }
            TopologyKind::Opera => {
                let (n, d, u) = t.rack_dims();
                format!(
                    "{n} racks x {d} hosts, {u} rotors in {} group(s)",
                    t.opera.groups
                )
            }
            TopologyKind::Pgft => match &t.pgft {
                Some(g) => format!(
                    "PGFT({}; m = {:?}; w = {:?}; p = {:?})",
                    g.h,
                    g.m,
                    g.w,
                    g.p_or_ones()
                ),
                None => String::new(),
            },
            TopologyKind::Expander => {
                let (racks, d, u) = t.rack_dims();
                format!("{racks} racks x {d} hosts, {u} uplinks")
            }
            _ => format!("k = {}", t.k),
        };
        let _ = writeln!(
            o,
            "scenario OK: {:?} {shape}, lb = {}, workload = {:?}",
            t.kind,
            s.lb.policy.name(),
            s.workload.kind
        );
        let _ = writeln!(o, "hosts            {}", self.hosts);
        let _ = writeln!(o, "switches         {}", self.switches);
        let _ = writeln!(o, "ports            {}", self.ports);
        let _ = writeln!(o, "flows            {}", self.flows);
        if self.in_flight_flows < self.flows {
            let _ = writeln!(
                o,
                "flows in flight  at most {} (dependent steps are generated as they start and freed as they complete)",
                self.in_flight_flows
            );
        }
        let _ = writeln!(o, "max partitions   {}", self.max_partitions);
        let _ = writeln!(
            o,
            "LB state         {} B total, {} B at the largest switch",
            self.lb_pointer_bytes, self.lb_pointer_bytes_max_switch
        );
        match self.rho_max {
            Some(r) => {
                let _ = writeln!(
                    o,
                    "failed links     {}; rho_max {:.6} (LP: {} edge pairs, {} paths; model built in {:.2} s)",
                    self.failed_links, r.rho_max, r.commodities, r.paths, self.model_build_s
                );
            }
            None if self.failed_links > 0 => {
                let _ = writeln!(
                    o,
                    "failed links     {} (rho_max not solved)",
                    self.failed_links
                );
            }
            None => {}
        }
        if let Some(st) = &self.structure {
            write_structure(&mut o, st);
        }
        let _ = writeln!(
            o,
            "estimated memory {:.1} MB (rough; measured peaks run up to 2x higher)",
            self.estimated_memory_bytes as f64 / 1e6
        );
        o
    }
}

/// The collective's phases, messages, packets and bytes, and the events they will take.
fn write_structure(o: &mut String, st: &crate::workload::structure::Structure) {
    use crate::workload::structure::PhaseStructure;
    let approx = if st.sampled {
        " (scaled from a subset of hosts)"
    } else {
        ""
    };
    let _ = writeln!(
        o,
        "collective       {} phases, {} messages, {} packets, {:.3} GB; at most {} messages from one host{approx}",
        st.phases.len(),
        st.messages,
        st.packets,
        st.bytes as f64 / 1e9,
        st.max_messages_per_host
    );
    // Consecutive phases of equal figures (FSDP2's layers) share one line.
    let same = |a: &PhaseStructure, b: &PhaseStructure| {
        (a.messages, a.bytes, a.packets_min, a.packets_max)
            == (b.messages, b.bytes, b.packets_min, b.packets_max)
    };
    for run in st.phases.chunk_by(same) {
        let (p, last) = (&run[0], &run[run.len() - 1]);
        let name = match run.len() {
            1 => p.name.clone(),
            n => format!("{} .. {} ({n} phases), each", p.name, last.name),
        };
        let _ = writeln!(
            o,
            "  phase {name:<12} {} messages, {}-{} packets each, {:.3} GB",
            p.messages,
            p.packets_min,
            p.packets_max,
            p.bytes as f64 / 1e9
        );
    }
    if st.nvlink_bytes > 0 {
        let _ = writeln!(
            o,
            "NVLink           {:.3} GB inside servers (reported, not simulated)",
            st.nvlink_bytes as f64 / 1e9
        );
    }
    let _ = writeln!(
        o,
        "estimated events {:.3e} (4 per link per data packet and its ACK)",
        st.estimated_events as f64
    );
}
