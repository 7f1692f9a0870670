//! Ring collectives (`workload.kind = "ring"`): ReduceScatter, AllGather and AllReduce
//! (= ReduceScatter then AllGather) over an ordered list of hosts, as NCCL's and Gloo's ring
//! algorithms.
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

use super::generator::Generator;
use super::ranks::{chunk_bytes, Ranks};
use super::{Flow, FlowId, Start};
use crate::packet::{flow_id, flow_index, flow_src};
use crate::scenario::{Collective, FieldError, Scenario};

/// One or more rings of the same size running a ring collective (or FSDP2's steps).
pub struct Ring {
    /// Host → the next host of its ring, or [`NOT_A_MEMBER`]. Several rings of the same size
    /// may run side by side (FSDP2's inter-server rings); each host is in at most one.
    next: Vec<u32>,
    /// Host → the previous host of its ring, or [`NOT_A_MEMBER`].
    prev: Vec<u32>,
    /// Members per ring.
    pub members: u32,
    /// Dependent steps per member: n − 1 or 2(n − 1) (ring), layers × steps per layer
    /// (FSDP2), or a cap.
    pub steps: u32,
    /// Steps per phase (the last phase may be shorter).
    pub steps_per_phase: u32,
    /// Bytes each step of a phase carries, by phase.
    pub phase_chunk_bytes: Vec<u64>,
    /// Compute delay between a step's arrival and the next step's start, in ps.
    pub delay_ps: u64,
    /// Phase names in order: an AllReduce has two (its ReduceScatter's n − 1 steps, then
    /// its AllGather's), the others one; FSDP2 one per layer.
    pub phases: Vec<String>,
    /// NVLink bytes that accompany the steps (FSDP2's intra-server shard traffic; 0 for a
    /// plain ring): reported, not simulated.
    pub nvlink_bytes: u64,
    /// The workload kind it runs ("ring" or "fsdp2").
    pub label: &'static str,
}

const NOT_A_MEMBER: u32 = u32::MAX;

/// Steps per member whose per-flow state (sender records kept, released ones awaiting
/// compaction included; see `net/sent_flows.rs`) is live at once, on average over the
/// members: a member's step s + 1 starts when its predecessor's step s has arrived, while its
/// own step s may still wait for ACKs, so members run one or two steps at a time. Measured
/// at every window boundary of 128-member rings (paced, DRB, FSDP2, DCTCP): at most 2.4 per
/// member in all, 8 at one host; losses stretch it (NSCC, 0.1 % loss: 8.3 per member, as a
/// step waiting for its timer holds its host's later records). `tests/it/ring_memory.rs`.
pub const IN_FLIGHT_STEPS: u32 = 4;

/// The shape of a ring workload besides its members: steps, phases and their chunks.
pub struct Steps {
    /// Dependent steps per member (as [`Ring::steps`]).
    pub steps: u32,
    /// Steps per phase (the last phase may be shorter).
    pub steps_per_phase: u32,
    /// Bytes each step of a phase carries, by phase.
    pub phase_chunk_bytes: Vec<u64>,
    /// Compute delay between a step's arrival and the next step's start, in ps.
    pub delay_ps: u64,
    /// Phase names in order, one per entry of `phase_chunk_bytes`.
    pub phases: Vec<String>,
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
            num_hosts,
            w.message_bytes,
            w.collective,
            delay_ps,
        ))
    }

    /// One ring running `collective` (AllReduce, ReduceScatter or AllGather) over `hosts` in
    /// ring order (at least two) on `num_hosts` hosts, with a buffer of `message_bytes` per
    /// rank and `delay_ps` between steps.
    pub fn new(
        hosts: Vec<u32>,
        num_hosts: u32,
        message_bytes: u64,
        collective: Collective,
        delay_ps: u64,
    ) -> Ring {
        let ranks = Ranks::new(hosts, num_hosts);
        Ring::with_ranks(ranks, num_hosts, message_bytes, collective, delay_ps)
    }

    fn with_ranks(
        ranks: Ranks,
        num_hosts: u32,
        message_bytes: u64,
        collective: Collective,
        delay_ps: u64,
    ) -> Ring {
        let n = ranks.n();
        let (steps, phases): (u32, &[&str]) = match collective {
            Collective::AllReduce => (2 * (n - 1), &["reduce_scatter", "all_gather"]),
            Collective::ReduceScatter => (n - 1, &["reduce_scatter"]),
            Collective::AllGather => (n - 1, &["all_gather"]),
            c @ (Collective::AllToAll | Collective::AllToAllV) => {
                panic!("validated: a ring runs no {}", c.name())
            }
        };
        let chunk = message_bytes.div_ceil(n as u64);
        let hosts: Vec<u32> = (0..n).map(|r| ranks.host(r)).collect();
        let shape = Steps {
            steps,
            steps_per_phase: n - 1,
            phase_chunk_bytes: vec![chunk; phases.len()],
            delay_ps,
            phases: phases.iter().map(|p| p.to_string()).collect(),
        };
        Ring::of_rings(&[hosts], num_hosts, shape)
    }

    /// Rings side by side (each a list of hosts in ring order, all of one size, no host in
    /// two) on `num_hosts` hosts.
    pub fn of_rings(rings: &[Vec<u32>], num_hosts: u32, shape: Steps) -> Ring {
        let members = rings[0].len() as u32;
        assert!(members >= 2, "a ring has at least two members");
        assert!(shape.steps >= 1 && shape.steps_per_phase >= 1);
        assert_eq!(shape.phases.len(), shape.phase_chunk_bytes.len());
        assert!(shape.steps.div_ceil(shape.steps_per_phase) as usize <= shape.phases.len());
        let mut next = vec![NOT_A_MEMBER; num_hosts as usize];
        let mut prev = vec![NOT_A_MEMBER; num_hosts as usize];
        for ring in rings {
            assert_eq!(ring.len() as u32, members, "rings of one size");
            for (r, &h) in ring.iter().enumerate() {
                assert_eq!(next[h as usize], NOT_A_MEMBER, "host {h} in two rings");
                next[h as usize] = ring[(r + 1) % ring.len()];
                prev[h as usize] = ring[(r + ring.len() - 1) % ring.len()];
            }
        }
        Ring {
            next,
            prev,
            members,
            steps: shape.steps,
            steps_per_phase: shape.steps_per_phase,
            phase_chunk_bytes: shape.phase_chunk_bytes,
            delay_ps: shape.delay_ps,
            phases: shape.phases,
            nvlink_bytes: 0,
            label: "ring",
        }
    }

    /// The phase of step `s` (an index into [`Ring::phases`]): `steps_per_phase` steps
    /// each (the AllReduce's first n − 1 steps are its ReduceScatter).
    #[inline]
    pub fn step_phase(&self, s: u32) -> u8 {
        (s / self.steps_per_phase) as u8
    }

    #[inline]
    fn is_member(&self, h: u32) -> bool {
        self.next
            .get(h as usize)
            .is_some_and(|&n| n != NOT_A_MEMBER)
    }

    /// Hosts that are members of a ring.
    pub fn member_hosts(&self) -> u32 {
        self.next.iter().filter(|&&n| n != NOT_A_MEMBER).count() as u32
    }
}

impl Generator for Ring {
    #[inline]
    fn flows_of(&self, h: u32) -> u32 {
        if self.is_member(h) {
            self.steps
        } else {
            0
        }
    }

    /// The steps whose per-flow state (sender records, receivers of paced flows, trigger
    /// entries) is live at once, without losses: [`IN_FLIGHT_STEPS`] per member, however
    /// long the ring.
    fn in_flight_flows(&self, _num_hosts: u32) -> u64 {
        self.member_hosts() as u64 * self.steps.min(IN_FLIGHT_STEPS) as u64
    }

    /// Payload bytes host `h` sends over all its steps.
    fn bytes_of(&self, h: u32) -> u64 {
        (0..self.flows_of(h))
            .step_by(self.steps_per_phase as usize)
            .map(|s| {
                let phase_steps = self.steps_per_phase.min(self.steps - s) as u64;
                phase_steps * self.phase_chunk_bytes[self.step_phase(s) as usize]
            })
            .sum()
    }

    /// Step `s` of host `h`.
    #[inline]
    fn flow(&self, h: u32, s: u32) -> Flow {
        assert!(self.is_member(h), "only ring members have flows");
        Flow {
            src: h,
            dst: self.next[h as usize],
            bytes: self.phase_chunk_bytes[self.step_phase(s) as usize],
            start: match s {
                0 => Start::At(0),
                _ => Start::After {
                    delay_ps: self.delay_ps,
                },
            },
        }
    }

    /// Step s > 0 of a member waits for step s − 1 of its predecessor.
    fn for_each_dep(&self, h: u32, s: u32, f: &mut dyn FnMut(FlowId)) {
        if s > 0 {
            assert!(self.is_member(h), "only ring members have flows");
            f(flow_id(self.prev[h as usize], s - 1));
        }
    }

    /// Step s of a member is waited for by step s + 1 of its successor (the flow's
    /// destination).
    fn for_each_dependent(&self, id: FlowId, f: &mut dyn FnMut(u32)) {
        let s = flow_index(id);
        if self.is_member(flow_src(id)) && s + 1 < self.steps {
            f(s + 1);
        }
    }

    fn kind_name(&self) -> &'static str {
        self.label
    }
    fn phase_names(&self) -> &[String] {
        &self.phases
    }
    #[inline]
    fn phase_of(&self, _h: u32, s: u32) -> Option<u8> {
        Some(self.step_phase(s))
    }
    fn has_triggers(&self) -> bool {
        true
    }
    fn nvlink_bytes(&self) -> u64 {
        self.nvlink_bytes
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
        assert_eq!(ring.phase_chunk_bytes, [1000, 1000]);
        assert_eq!((ring.flows_of(2), ring.flows_of(0)), (4, 0));
        let f = ring.flow(7, 0);
        assert_eq!((f.src, f.dst, f.start), (7, 5, Start::At(0)));
        assert_eq!(ring.flow(2, 3).start, Start::After { delay_ps: 10 });
        let mut deps = vec![];
        ring.for_each_dep(2, 3, &mut |d| deps.push(d));
        assert_eq!(deps, vec![flow_id(5, 2)]);
        ring.for_each_dep(2, 0, &mut |d| deps.push(d));
        assert_eq!(deps.len(), 1, "step 0 starts at time 0");
        let mut dependents = vec![];
        ring.for_each_dependent(flow_id(5, 2), &mut |i| dependents.push(i));
        ring.for_each_dependent(flow_id(5, 3), &mut |i| dependents.push(i));
        assert_eq!(dependents, vec![3], "the last step has no dependent");
        assert_eq!(ring.phases, ["reduce_scatter", "all_gather"]);
        let phases: Vec<u8> = (0..4).map(|s| ring.step_phase(s)).collect();
        assert_eq!(phases, [0, 0, 1, 1], "n - 1 = 2 steps per phase");
    }

    #[test]
    fn reduce_scatter_and_all_gather_take_n_minus_one_steps_and_round_chunks_up() {
        for c in [Collective::ReduceScatter, Collective::AllGather] {
            let ring = Ring::new((0..4).collect(), 4, 10, c, 0);
            assert_eq!((ring.steps, ring.phase_chunk_bytes[0]), (3, 3));
            assert_eq!(ring.phases.len(), 1);
            assert!((0..3).all(|s| ring.step_phase(s) == 0));
        }
    }
}
