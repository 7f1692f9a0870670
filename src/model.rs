//! The immutable model every partition reads: fabric, workload, LB configuration, queue
//! discipline, and the scenario's parameters converted to the integer units the event path
//! uses.

use crate::lb::LbShared;
use crate::scenario::Scenario;
use crate::time::PS_PER_NS;
use crate::topology::Fabric;
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
}

impl Model {
    pub fn build(s: &Scenario) -> Result<Model> {
        let fabric = Fabric::build(s);
        let workload = Workload::build(s, fabric.num_hosts)?;
        Ok(Model {
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
