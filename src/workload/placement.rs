//! GPU placement for the AI workloads (`fsdp2`, `moe`): servers of `gpus_per_server` GPUs,
//! one GPU per host port of the scale-out network. A server occupies a *slot* of g
//! consecutive host ports (so, when g divides the hosts per edge switch, one server never
//! straddles two edge switches); servers take slots in order or at random from the seed.
//! GPU i is local rank i mod g of server i / g. Traffic between GPUs of one server goes
//! over NVLink: it is not simulated (its volume is reported by the workloads).

use crate::rng::{stream, Purpose};
use crate::scenario::{FieldError, GpuPlacement, Scenario};
use rand::seq::SliceRandom;

pub(crate) struct Placement {
    /// GPU → host.
    host_of_gpu: Vec<u32>,
    pub gpus_per_server: u32,
}

impl Placement {
    /// The placement of a validated scenario on `num_hosts` host ports; checks that the GPUs
    /// fit.
    pub(crate) fn build(s: &Scenario, num_hosts: u32) -> Result<Placement, FieldError> {
        let w = &s.workload;
        let g = w.gpus_per_server;
        let slots = num_hosts / g;
        let gpus = w.gpus.unwrap_or(slots * g);
        if gpus > slots * g || slots < 2 {
            return Err(FieldError::new(
                "workload.gpus",
                format!(
                    "{gpus} GPUs in servers of {g} do not fit the fabric's {num_hosts} host ports ({slots} servers)"
                ),
            ));
        }
        let servers = gpus / g;
        let mut slot_of: Vec<u32> = (0..slots).collect();
        if w.placement == GpuPlacement::Random {
            slot_of.shuffle(&mut stream(s.seed, 0, Purpose::Placement));
        }
        slot_of.truncate(servers as usize);
        Ok(Placement::new(&slot_of, g))
    }

    /// Server s on slot `slot_of[s]`.
    pub(crate) fn new(slot_of: &[u32], gpus_per_server: u32) -> Placement {
        let g = gpus_per_server;
        let host_of_gpu = (0..slot_of.len() as u32 * g)
            .map(|i| slot_of[(i / g) as usize] * g + i % g)
            .collect();
        Placement {
            host_of_gpu,
            gpus_per_server,
        }
    }

    #[inline]
    pub(crate) fn gpus(&self) -> u32 {
        self.host_of_gpu.len() as u32
    }

    pub(crate) fn servers(&self) -> u32 {
        self.gpus() / self.gpus_per_server
    }

    #[inline]
    pub(crate) fn host(&self, gpu: u32) -> u32 {
        self.host_of_gpu[gpu as usize]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ordered_and_shuffled_slots_keep_servers_whole() {
        let p = Placement::new(&[0, 1, 2], 4);
        assert_eq!((p.gpus(), p.servers()), (12, 3));
        assert_eq!((p.host(0), p.host(5), p.host(11)), (0, 5, 11));
        let p = Placement::new(&[2, 0], 4);
        let hosts: Vec<u32> = (0..8).map(|i| p.host(i)).collect();
        assert_eq!(hosts, [8, 9, 10, 11, 0, 1, 2, 3]);
    }
}
