//! Workloads: the table of flows a run carries. Every rank builds the same table from the
//! scenario and seed; hosts then serve their own flows.
//!
//! Invariant: flows are sorted by (source host, start time, generation order), so a host's
//! flows are the contiguous range `host_flows(h)` and start in order.

mod all_to_all;
mod matrix;
mod permutation;

use crate::rng::{stream, Purpose};
use crate::scenario::{Scenario, WorkloadKind};
use anyhow::Result;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Flow {
    pub src: u32,
    pub dst: u32,
    pub bytes: u64,
    pub start_ps: u64,
}

pub struct Workload {
    flows: Vec<Flow>,
    /// `host_start[h]..host_start[h + 1]` are host h's flows.
    host_start: Vec<u32>,
}

impl Workload {
    pub fn build(s: &Scenario, num_hosts: u32) -> Result<Workload> {
        let flows = match s.workload.kind {
            WorkloadKind::Permutation => {
                let mut rng = stream(s.seed, 0, Purpose::Workload);
                permutation::flows(num_hosts, s.workload.message_bytes, &mut rng)
            }
            WorkloadKind::AllToAll => all_to_all::flows(num_hosts, s.workload.message_bytes),
            WorkloadKind::Matrix => {
                let file = s
                    .workload
                    .file
                    .as_ref()
                    .expect("validated: matrix has a file");
                let path = s.base_dir.join(file);
                matrix::read(&path, num_hosts)?
            }
        };
        Ok(Workload::from_flows(flows, num_hosts))
    }

    pub fn from_flows(mut flows: Vec<Flow>, num_hosts: u32) -> Workload {
        // Stable: equal (src, start) keep their generation order.
        flows.sort_by_key(|f| (f.src, f.start_ps));
        let mut host_start = vec![0u32; num_hosts as usize + 1];
        for f in &flows {
            assert!(f.src < num_hosts && f.dst < num_hosts && f.src != f.dst);
            host_start[f.src as usize + 1] += 1;
        }
        for h in 0..num_hosts as usize {
            host_start[h + 1] += host_start[h];
        }
        assert!(flows.len() < u32::MAX as usize, "flow ids are u32");
        Workload { flows, host_start }
    }

    pub fn flows(&self) -> &[Flow] {
        &self.flows
    }
    pub fn flow(&self, id: u32) -> &Flow {
        &self.flows[id as usize]
    }
    /// Global ids of host `h`'s flows.
    pub fn host_flows(&self, h: u32) -> std::ops::Range<u32> {
        self.host_start[h as usize]..self.host_start[h as usize + 1]
    }
}
