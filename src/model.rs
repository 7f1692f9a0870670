//! The immutable model every partition reads: fabric, workload, LB configuration, queue
//! discipline, and the scenario's parameters converted to the integer units the event path
//! uses.

use crate::lb::LbShared;
use crate::scenario::Scenario;
use crate::scenario::{CcKind, FieldError};
use crate::time::PS_PER_NS;
use crate::topology::Fabric;
use crate::transport::TransportParams;
use crate::workload::Workload;
use anyhow::Result;

pub struct Model {
    pub seed: u64,
    pub fabric: Fabric,
    pub workload: Workload,
    pub lb: LbShared,
    /// Per-port buffer of switch ports (`u64::MAX`: unlimited).
    pub buffer_bytes: u64,
    /// ECN step threshold of switch ports.
    pub ecn_threshold_bytes: u64,
    /// Added to every arrival at a switch (its forwarding pipeline).
    pub forwarding_ps: u64,
    pub payload_bytes: u32,
    pub header_bytes: u32,
    pub ack_bytes: u32,
    pub interframe_bytes: u32,
    /// Host pacing rate as parts per million of line rate.
    pub load_ppm: u64,
    pub transport: TransportParams,
}

impl Model {
    pub fn build(s: &Scenario) -> Result<Model> {
        let fabric = Fabric::build(s);
        let workload = Workload::build(s, fabric.num_hosts)?;
        let transport = transport_params(s, &fabric)?;
        Ok(Model {
            transport,
            seed: s.seed,
            lb: LbShared::new(&s.lb, &fabric, s.seed),
            buffer_bytes: s.switch.buffer_bytes.limit(),
            ecn_threshold_bytes: s.switch.ecn_threshold_bytes,
            forwarding_ps: (s.switch.forwarding_latency_ns * PS_PER_NS as f64).round() as u64,
            payload_bytes: s.packet.payload_bytes,
            header_bytes: s.packet.header_bytes,
            ack_bytes: s.packet.ack_bytes,
            interframe_bytes: s.packet.interframe_bytes,
            load_ppm: (s.host.load * 1e6).round() as u64,
            fabric,
            workload,
        })
    }

    /// Bytes in flight that fill the fabric's longest path: host line rate × base RTT (data
    /// packets store-and-forward over every hop out, an ACK over every hop back, plus
    /// latencies and forwarding), from host 0 to the last host.
    pub fn bdp_bytes(s: &Scenario, fabric: &Fabric) -> u64 {
        let data = (s.packet.payload_bytes + s.packet.header_bytes) as u64;
        let fwd_ps = (s.switch.forwarding_latency_ns * PS_PER_NS as f64).round() as u64;
        let trip = |a: u32, b: u32, bytes: u64| -> u64 {
            fabric
                .path(a, b)
                .iter()
                .map(|&(n, p)| {
                    let l = fabric.link(n, p);
                    let fwd = if fabric.is_host(fabric.peer(n, p, 0).0) {
                        0
                    } else {
                        fwd_ps
                    };
                    l.serialization_ps(bytes) + l.latency_ps + fwd
                })
                .sum()
        };
        let last = fabric.num_hosts - 1;
        let rtt_ps = trip(0, last, data) + trip(last, 0, s.packet.ack_bytes as u64);
        let rate = fabric.link(0, 0).rate.bps as u128;
        (rate * rtt_ps as u128 / 8 / 1_000_000_000_000) as u64
    }

    /// Packets of a flow of `bytes` payload bytes.
    pub fn packets_for(&self, bytes: u64) -> u64 {
        bytes.div_ceil(self.payload_bytes as u64)
    }

    /// Buffer size of data packet `seq` of a flow of `bytes` payload bytes.
    #[inline]
    pub fn data_size(&self, bytes: u64, seq: u32) -> u32 {
        let p = self.payload_bytes as u64;
        (bytes - seq as u64 * p).min(p) as u32 + self.header_bytes
    }
}

/// The scenario's transport in packets: `constant`'s window must hold a data packet.
fn transport_params(
    s: &Scenario,
    fabric: &Fabric,
) -> std::result::Result<TransportParams, FieldError> {
    Ok(match s.host.cc {
        CcKind::None => TransportParams::Paced,
        CcKind::Constant => {
            let data = (s.packet.payload_bytes + s.packet.header_bytes) as f64;
            let window = s.host.window_bdp * Model::bdp_bytes(s, fabric) as f64;
            if window < data {
                return Err(FieldError::new(
                    "host.window_bdp",
                    format!(
                        "a window of {window:.0} bytes is below one data packet ({data} bytes)"
                    ),
                ));
            }
            let window_pkts = (window / data).floor().min(u32::MAX as f64) as u32;
            TransportParams::Constant { window_pkts }
        }
    })
}
