//! The structure of a workload's collective, for `weft validate` (before running): its
//! phases with their messages, packets per message and bytes, the dependent steps, and the
//! events the run will take (estimated).
//!
//! Exact up to [`EXACT_FLOWS`] flows; above, an evenly spaced subset of hosts is walked and
//! the counts scaled (marked `sampled`), so a 65,536-GPU ring of 5 × 10^8 messages is
//! described in a second.

use super::Workload;
use crate::topology::Fabric;

pub(crate) const EXACT_FLOWS: u64 = 1 << 22;

/// One phase of a workload, as `weft validate` reports it.
#[derive(Clone, Debug, Default)]
pub struct PhaseStructure {
    /// The phase's name (a collective's step kind, a pattern's name).
    pub name: String,
    /// Messages (flows) in the phase.
    pub messages: u64,
    /// Payload bytes of the phase.
    pub bytes: u64,
    /// Fewest data packets of one message.
    pub packets_min: u64,
    /// Most data packets of one message.
    pub packets_max: u64,
}

/// A workload's size before it runs: what `weft validate` prints and sizes memory with.
#[derive(Clone, Debug, Default)]
pub struct Structure {
    /// Its phases, in order.
    pub phases: Vec<PhaseStructure>,
    /// The most messages one host sends (a ring: its chain of dependent steps).
    pub max_messages_per_host: u32,
    /// Messages (flows) in all.
    pub messages: u64,
    /// Payload bytes in all.
    pub bytes: u64,
    /// Data packets in all.
    pub packets: u64,
    /// ≈ 2 events (arrival, departure) per link per data packet and per ACK, one ACK per
    /// data packet (paced transport; ACK coalescing lowers it).
    pub estimated_events: u64,
    /// Bytes that stay inside a server (over NVLink) and never enter the fabric.
    pub nvlink_bytes: u64,
    /// Whether the figures were scaled from a subset of hosts.
    pub sampled: bool,
}

pub(crate) fn of(w: &Workload, fabric: &Fabric, payload_bytes: u64) -> Structure {
    let hosts = fabric.num_hosts;
    let total = w.total_flows(hosts);
    let stride = total.div_ceil(EXACT_FLOWS).max(1) as u32;
    let mut st = Structure {
        phases: w
            .phase_names()
            .iter()
            .map(|n| PhaseStructure {
                name: n.clone(),
                packets_min: u64::MAX,
                ..Default::default()
            })
            .collect(),
        nvlink_bytes: w.nvlink_bytes(),
        sampled: stride > 1,
        ..Default::default()
    };
    let mut events: u64 = 0;
    for h in (0..hosts).step_by(stride as usize) {
        let n = w.flows_of(h);
        st.max_messages_per_host = st.max_messages_per_host.max(n);
        for i in 0..n {
            let f = w.flow(h, i);
            let packets = f.bytes.div_ceil(payload_bytes).max(1);
            st.messages += 1;
            st.bytes += f.bytes;
            st.packets += packets;
            events += packets * (4 * fabric.hops(f.src, f.dst) as u64 + 1);
            if let Some(p) = w.phase_of(h, i) {
                let p = &mut st.phases[p as usize];
                p.messages += 1;
                p.bytes += f.bytes;
                p.packets_min = p.packets_min.min(packets);
                p.packets_max = p.packets_max.max(packets);
            }
        }
    }
    let scale = stride as u64;
    st.messages *= scale;
    st.bytes *= scale;
    st.packets *= scale;
    st.estimated_events = events * scale;
    for p in &mut st.phases {
        p.messages *= scale;
        p.bytes *= scale;
        if p.messages == 0 {
            p.packets_min = 0;
        }
    }
    st
}
