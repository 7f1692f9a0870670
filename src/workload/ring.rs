//! Ring collectives (`workload.kind = "ring"`): ReduceScatter, AllGather and AllReduce
//! (= ReduceScatter then AllGather) over an ordered list of hosts, as NCCL's and Gloo's ring
//! algorithms (AI_WORKLOADS.md B.2).
//!
//! The buffer of `message_bytes` per rank is split into n chunks (n ranks) of
//! ⌈message_bytes / n⌉ bytes each (the last chunk is not shortened: every step carries the
//! same bytes, the rounding errs towards more traffic). Step s of rank r sends one chunk to
//! rank r + 1; step 0 starts at time 0 and step s > 0 starts `delay_ps` (the reduction's
//! compute time) after step s − 1's chunk from rank r − 1 has fully arrived at rank r.
//! ReduceScatter and AllGather have n − 1 steps, AllReduce 2(n − 1): the AllGather's first
//! step forwards the chunk the ReduceScatter's last step completed, so it waits like any
//! other step.
//!
//! Rank r's step s is flow s of host `hosts[r]`. Flows are computed on demand; the only
//! tables are the ring order and its inverse (O(hosts), not O(flows)).

use super::ranks::{chunk_bytes, Ranks};
use super::{Flow, FlowId, Start};
use crate::packet::{flow_id, flow_index, flow_src};
use crate::scenario::{Collective, FieldError, Scenario};

pub struct Ring {
    /// Ring order.
    ranks: Ranks,
    pub chunk_bytes: u64,
    /// Dependent steps per rank: n − 1 or 2(n − 1).
    pub steps: u32,
    pub delay_ps: u64,
    /// Phase names in order: an AllReduce has two (its ReduceScatter's n − 1 steps, then
    /// its AllGather's), the others one.
    pub phases: &'static [&'static str],
}

impl Ring {
    /// The ring of a validated scenario on `num_hosts` hosts; checks what needs the fabric
    /// (the hosts exist, a chunk fits in a flow).
    pub fn build(s: &Scenario, num_hosts: u32) -> Result<Ring, FieldError> {
        let w = &s.workload;
        let ranks = Ranks::of_scenario(s, num_hosts)?;
        chunk_bytes(s, ranks.n())?;
        let delay_ps = (w.step_delay_ns * crate::time::PS_PER_NS as f64).round() as u64;
        Ok(Ring::with_ranks(
            ranks,
            w.message_bytes,
            w.collective,
            delay_ps,
        ))
    }

    pub fn new(
        hosts: Vec<u32>,
        num_hosts: u32,
        message_bytes: u64,
        collective: Collective,
        delay_ps: u64,
    ) -> Ring {
        let ranks = Ranks::new(hosts, num_hosts);
        Ring::with_ranks(ranks, message_bytes, collective, delay_ps)
    }

    fn with_ranks(ranks: Ranks, message_bytes: u64, collective: Collective, delay_ps: u64) -> Ring {
        let n = ranks.n();
        let (steps, phases): (u32, &'static [&'static str]) = match collective {
            Collective::AllReduce => (2 * (n - 1), &["reduce_scatter", "all_gather"]),
            Collective::ReduceScatter => (n - 1, &["reduce_scatter"]),
            Collective::AllGather => (n - 1, &["all_gather"]),
            c @ (Collective::AllToAll | Collective::AllToAllV) => {
                panic!("validated: a ring runs no {}", c.name())
            }
        };
        Ring {
            ranks,
            chunk_bytes: message_bytes.div_ceil(n as u64),
            steps,
            delay_ps,
            phases,
        }
    }

    /// The phase of step `s` (an index into [`Ring::phases`]): steps 0..n − 1 are the first
    /// phase, the AllReduce's steps n − 1.. its AllGather.
    #[inline]
    pub fn phase_of(&self, s: u32) -> u8 {
        (s >= self.n() - 1) as u8
    }

    fn n(&self) -> u32 {
        self.ranks.n()
    }

    fn rank(&self, h: u32) -> Option<u32> {
        self.ranks.rank(h)
    }

    fn host(&self, rank: u32) -> u32 {
        self.ranks.host(rank % self.n())
    }

    #[inline]
    pub fn flows_of(&self, h: u32) -> u32 {
        self.rank(h).map_or(0, |_| self.steps)
    }

    /// Step `s` of host `h`'s rank.
    #[inline]
    pub fn flow(&self, h: u32, s: u32) -> Flow {
        let r = self.rank(h).expect("only ring members have flows");
        Flow {
            src: h,
            dst: self.host(r + 1),
            bytes: self.chunk_bytes,
            start: match s {
                0 => Start::At(0),
                _ => Start::After {
                    delay_ps: self.delay_ps,
                },
            },
        }
    }

    /// Step s > 0 of rank r waits for step s − 1 of rank r − 1.
    pub fn for_each_dep(&self, h: u32, s: u32, mut f: impl FnMut(FlowId)) {
        if s > 0 {
            let r = self.rank(h).expect("only ring members have flows");
            f(flow_id(self.host(r + self.n() - 1), s - 1));
        }
    }

    /// Step s of rank r is waited for by step s + 1 of rank r + 1 (the flow's destination).
    pub fn for_each_dependent(&self, id: FlowId, mut f: impl FnMut(u32)) {
        let s = flow_index(id);
        if self.rank(flow_src(id)).is_some() && s + 1 < self.steps {
            f(s + 1);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_step_waits_for_its_predecessor_from_the_previous_rank() {
        // Hosts 5, 2, 7 in ring order on a 9-host fabric: AllReduce has 4 steps per rank.
        let ring = Ring::new(vec![5, 2, 7], 9, 3000, Collective::AllReduce, 10);
        assert_eq!(ring.steps, 4);
        assert_eq!(ring.chunk_bytes, 1000);
        assert_eq!((ring.flows_of(2), ring.flows_of(0)), (4, 0));
        let f = ring.flow(7, 0);
        assert_eq!((f.src, f.dst, f.start), (7, 5, Start::At(0)));
        assert_eq!(ring.flow(2, 3).start, Start::After { delay_ps: 10 });
        let mut deps = vec![];
        ring.for_each_dep(2, 3, |d| deps.push(d));
        assert_eq!(deps, vec![flow_id(5, 2)]);
        ring.for_each_dep(2, 0, |d| deps.push(d));
        assert_eq!(deps.len(), 1, "step 0 starts at time 0");
        let mut dependents = vec![];
        ring.for_each_dependent(flow_id(5, 2), |i| dependents.push(i));
        ring.for_each_dependent(flow_id(5, 3), |i| dependents.push(i));
        assert_eq!(dependents, vec![3], "the last step has no dependent");
        assert_eq!(ring.phases, ["reduce_scatter", "all_gather"]);
        let phases: Vec<u8> = (0..4).map(|s| ring.phase_of(s)).collect();
        assert_eq!(phases, [0, 0, 1, 1], "n - 1 = 2 steps per phase");
    }

    #[test]
    fn reduce_scatter_and_all_gather_take_n_minus_one_steps_and_round_chunks_up() {
        for c in [Collective::ReduceScatter, Collective::AllGather] {
            let ring = Ring::new((0..4).collect(), 4, 10, c, 0);
            assert_eq!((ring.steps, ring.chunk_bytes), (3, 3));
            assert_eq!(ring.phases.len(), 1);
            assert!((0..3).all(|s| ring.phase_of(s) == 0));
        }
    }
}
