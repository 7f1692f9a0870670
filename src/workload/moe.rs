//! Mixture-of-experts all-to-all-v (`workload.kind = "moe"`, the Ofan paper, §6.6): within
//! each expert-parallel group of `ep_size` GPUs (groups are consecutive servers, side by
//! side), every GPU dispatches its tokens to the GPUs holding their experts, the experts
//! compute, and every GPU sends the results back (combine, the reverse flows).
//!
//! The scale-out traffic of a group is a GPU × GPU token matrix (`moe_trace::Trace`: from a
//! trace file, shared by every group, or drawn by the generator per group from the seed);
//! a flow carries tokens × `bytes_per_token`. Same-server traffic and DeepEP's NVLink
//! fan-out are not simulated; their volume is reported (`results.nvlink_bytes`).
//!
//! Host flows: first its dispatch flows (non-zero entries of its row, destinations in the
//! order r + 1, r + 2, … mod n, so the round-robin NIC does not start every GPU on the same
//! destination), starting at 0; then its combine flows (one back to every GPU that
//! dispatched to it, same order and bytes), each starting `step_delay_ns` (the expert
//! compute time) after the last of the dispatch flows *to this GPU* fully arrived. That
//! trigger is local to the GPU, as the lookahead rule needs. Two phases: "dispatch" and
//! "combine".

use super::generator::Generator;
use super::moe_trace::{self, GenParams, Trace};
use super::placement::Placement;
use super::{Flow, FlowId, Start};
use crate::packet::{flow_id, flow_index, flow_src};
use crate::scenario::Scenario;
use anyhow::{anyhow, Result};
use rayon::prelude::*;

/// The MoE workload of a validated scenario on `num_hosts` host ports: the trace file's
/// matrix for every group, or one generated matrix per group (seeded by the group).
pub(crate) fn build(s: &Scenario, num_hosts: u32) -> Result<Moe> {
    let w = &s.workload;
    let place =
        Placement::build(s, num_hosts).map_err(|e| anyhow!("{}: {}", e.field, e.message))?;
    let gpus = place.gpus();
    let ep_size = w.ep_size.unwrap_or(gpus);
    if gpus % ep_size != 0 {
        return Err(anyhow!(
            "workload.ep_size: {ep_size} does not divide the job's {gpus} GPUs"
        ));
    }
    if w.moe.experts % ep_size != 0 {
        return Err(anyhow!(
            "workload.moe.experts: {} experts do not spread evenly over ep_size = {ep_size} GPUs",
            w.moe.experts
        ));
    }
    let groups = gpus / ep_size;
    let traces: Vec<Trace> = match &w.file {
        Some(file) => {
            let path = s.base_dir.join(file);
            let trace = moe_trace::read_csv(&path, ep_size)?;
            check_servers(&trace, &path, w.gpus_per_server)?;
            vec![trace]
        }
        None => (0..groups)
            .into_par_iter()
            .map(|g| moe_trace::generate(&gen_params(s, ep_size, g)).map_err(scenario_field))
            .collect::<Result<Vec<_>>>()?,
    };
    let shared = traces.len() == 1;
    let max_tokens = super::max_flow_bytes(s) / w.moe.bytes_per_token;
    let mut nvlink_bytes: u64 = 0;
    let mut matrices = Vec::with_capacity(traces.len());
    for t in &traces {
        if let Some(&big) = t.tokens.iter().find(|&&x| x > max_tokens) {
            return Err(anyhow!(
                "workload.moe.bytes_per_token: {big} tokens of {} bytes are more than 2^32 - 1 packets in one flow",
                w.moe.bytes_per_token
            ));
        }
        let copies = t.nvlink_token_copies * if shared { groups as u64 } else { 1 };
        // Dispatch and combine both cross NVLink.
        nvlink_bytes += 2 * copies * w.moe.bytes_per_token;
        matrices.push(GroupMatrix::new(ep_size, &t.tokens));
    }
    let matrix_of_group = (0..groups).map(|g| if shared { 0 } else { g }).collect();
    let traffic = Traffic {
        ep_size,
        matrices,
        matrix_of_group,
        bytes_per_token: w.moe.bytes_per_token,
        delay_ps: (w.step_delay_ns * crate::time::PS_PER_NS as f64).round() as u64,
        nvlink_bytes,
    };
    Ok(Moe::new(place, traffic, num_hosts))
}

/// The generator's parameters for group `group` of a validated scenario.
fn gen_params(s: &Scenario, ep_size: u32, group: u32) -> GenParams {
    let m = &s.workload.moe;
    let tokens = m
        .tokens_per_gpu
        .expect("validated: tokens_per_gpu without a file");
    let mut p = GenParams::new(ep_size, tokens);
    p.gpus_per_server = s.workload.gpus_per_server;
    p.experts = m.experts;
    p.top_k = m.top_k;
    p.imbalance = m.imbalance;
    p.imbalance_of = m.imbalance_of;
    p.eplb = m.eplb;
    p.dispatch = m.dispatch;
    p.seed = s.seed;
    p.group = group;
    if let Some(r) = m.redundant_experts {
        p.redundant_experts = r;
    }
    p
}

/// A generator error names its parameter ("experts: ..."); the scenario's field is
/// `workload.moe.experts` (or `workload.ep_size` for the group's GPUs).
fn scenario_field(e: anyhow::Error) -> anyhow::Error {
    let msg = e.to_string();
    let renamed = match msg.split_once(": ") {
        Some(("gpus", rest)) => format!("workload.ep_size: {rest}"),
        Some(("gpus_per_server", rest)) => format!("workload.gpus_per_server: {rest}"),
        Some((name, rest)) if !name.contains(' ') => format!("workload.moe.{name}: {rest}"),
        _ => format!("workload.moe: {msg}"),
    };
    anyhow!(renamed)
}

/// A trace made by `weft moe-trace` records its servers' size in its `# params:` line; it
/// must match the scenario's (the hierarchical traffic is only between equal local ranks).
fn check_servers(t: &Trace, path: &std::path::Path, gpus_per_server: u32) -> Result<()> {
    let recorded = t
        .params_comment
        .split_whitespace()
        .find_map(|kv| kv.strip_prefix("gpus_per_server="))
        .and_then(|v| v.parse::<u32>().ok());
    match recorded {
        Some(g) if g != gpus_per_server => Err(anyhow!(
            "{}: the trace was made for servers of {g} GPUs, the scenario's workload.gpus_per_server is {gpus_per_server}",
            path.display()
        )),
        _ => Ok(()),
    }
}

/// One group's sparse token matrix, in member indices.
pub(crate) struct GroupMatrix {
    /// Member r's dispatch flows are `dispatch[dispatch_start[r]..dispatch_start[r + 1]]`:
    /// (destination member, tokens).
    dispatch_start: Vec<u32>,
    dispatch: Vec<(u32, u64)>,
    /// Member c's combine flows are `combine[combine_start[c]..combine_start[c + 1]]`:
    /// (destination member i, tokens, index of i's dispatch flow to c at i).
    combine_start: Vec<u32>,
    combine: Vec<(u32, u64, u32)>,
}

impl GroupMatrix {
    /// From a row-major n × n token matrix (diagonal ignored).
    pub(crate) fn new(n: u32, tokens: &[u64]) -> GroupMatrix {
        assert_eq!(tokens.len(), (n as usize).pow(2));
        let at = |i: u32, j: u32| tokens[(i * n + j) as usize];
        let order = |r: u32| (1..n).map(move |d| (r + d) % n);
        let mut dispatch_start = vec![0u32];
        let mut dispatch = vec![];
        // index_at[i * n + j]: the index of i's dispatch flow to j.
        let mut index_at = vec![u32::MAX; tokens.len()];
        for r in 0..n {
            for j in order(r).filter(|&j| at(r, j) > 0) {
                index_at[(r * n + j) as usize] = dispatch.len() as u32 - dispatch_start[r as usize];
                dispatch.push((j, at(r, j)));
            }
            dispatch_start.push(dispatch.len() as u32);
        }
        let mut combine_start = vec![0u32];
        let mut combine = vec![];
        for c in 0..n {
            for i in order(c).filter(|&i| at(i, c) > 0) {
                combine.push((i, at(i, c), index_at[(i * n + c) as usize]));
            }
            combine_start.push(combine.len() as u32);
        }
        GroupMatrix {
            dispatch_start,
            dispatch,
            combine_start,
            combine,
        }
    }

    fn dispatch_of(&self, r: u32) -> &[(u32, u64)] {
        &self.dispatch
            [self.dispatch_start[r as usize] as usize..self.dispatch_start[r as usize + 1] as usize]
    }

    fn combine_of(&self, c: u32) -> &[(u32, u64, u32)] {
        &self.combine
            [self.combine_start[c as usize] as usize..self.combine_start[c as usize + 1] as usize]
    }
}

pub(crate) struct Moe {
    place: Placement,
    ep_size: u32,
    /// The matrix of group g is `matrices[matrix_of_group[g]]` (one shared by every group
    /// when read from a trace).
    matrices: Vec<GroupMatrix>,
    matrix_of_group: Vec<u32>,
    /// Host → GPU, or `u32::MAX`.
    gpu_of_host: Vec<u32>,
    pub bytes_per_token: u64,
    pub delay_ps: u64,
    pub nvlink_bytes: u64,
    pub phases: Vec<String>,
}

const NOT_A_GPU: u32 = u32::MAX;

/// What a MoE workload carries, besides where the GPUs are.
pub(crate) struct Traffic {
    pub ep_size: u32,
    /// Group g's matrix is `matrices[matrix_of_group[g]]`.
    pub matrices: Vec<GroupMatrix>,
    pub matrix_of_group: Vec<u32>,
    pub bytes_per_token: u64,
    pub delay_ps: u64,
    pub nvlink_bytes: u64,
}

impl Moe {
    pub(crate) fn new(place: Placement, t: Traffic, num_hosts: u32) -> Moe {
        assert_eq!(place.gpus() % t.ep_size, 0);
        assert_eq!(t.matrix_of_group.len() as u32, place.gpus() / t.ep_size);
        let mut gpu_of_host = vec![NOT_A_GPU; num_hosts as usize];
        for gpu in 0..place.gpus() {
            gpu_of_host[place.host(gpu) as usize] = gpu;
        }
        Moe {
            place,
            ep_size: t.ep_size,
            matrices: t.matrices,
            matrix_of_group: t.matrix_of_group,
            gpu_of_host,
            bytes_per_token: t.bytes_per_token,
            delay_ps: t.delay_ps,
            nvlink_bytes: t.nvlink_bytes,
            phases: vec!["dispatch".to_string(), "combine".to_string()],
        }
    }

    /// (group matrix, member, first GPU of the group) of host `h`, if it is a GPU.
    #[inline]
    fn member(&self, h: u32) -> Option<(&GroupMatrix, u32, u32)> {
        let gpu = *self.gpu_of_host.get(h as usize)?;
        if gpu == NOT_A_GPU {
            return None;
        }
        let group = gpu / self.ep_size;
        let m = &self.matrices[self.matrix_of_group[group as usize] as usize];
        Some((m, gpu % self.ep_size, group * self.ep_size))
    }

    /// The number of dispatch flows of host `h` (its first flows).
    fn dispatch_count(&self, h: u32) -> u32 {
        self.member(h)
            .map_or(0, |(m, r, _)| m.dispatch_of(r).len() as u32)
    }
}

impl Generator for Moe {
    #[inline]
    fn flows_of(&self, h: u32) -> u32 {
        self.member(h).map_or(0, |(m, r, _)| {
            (m.dispatch_of(r).len() + m.combine_of(r).len()) as u32
        })
    }

    fn flow(&self, h: u32, i: u32) -> Flow {
        let (m, r, base) = self.member(h).expect("only GPUs have flows");
        let d = m.dispatch_of(r);
        let (dst, tokens, start) = match d.get(i as usize) {
            Some(&(j, t)) => (j, t, Start::At(0)),
            None => {
                let (j, t, _) = m.combine_of(r)[i as usize - d.len()];
                let start = Start::After {
                    delay_ps: self.delay_ps,
                };
                (j, t, start)
            }
        };
        Flow {
            src: h,
            dst: self.place.host(base + dst),
            bytes: tokens * self.bytes_per_token,
            start,
        }
    }

    #[inline]
    fn phase_of(&self, h: u32, i: u32) -> Option<u8> {
        Some((i >= self.dispatch_count(h)) as u8)
    }

    /// A combine flow waits for every dispatch flow to its GPU.
    fn for_each_dep(&self, h: u32, i: u32, f: &mut dyn FnMut(FlowId)) {
        let (m, r, base) = self.member(h).expect("only GPUs have flows");
        if i < m.dispatch_of(r).len() as u32 {
            return;
        }
        for &(src, _, index) in m.combine_of(r) {
            f(flow_id(self.place.host(base + src), index));
        }
    }

    /// Number of dependencies of flow `i` of host `h`, without listing them.
    fn dep_count(&self, h: u32, i: u32) -> u32 {
        let (m, r, _) = self.member(h).expect("only GPUs have flows");
        match i < m.dispatch_of(r).len() as u32 {
            true => 0,
            false => m.combine_of(r).len() as u32,
        }
    }

    /// A dispatch flow is waited for by every combine flow of its destination.
    fn for_each_dependent(&self, id: FlowId, f: &mut dyn FnMut(u32)) {
        let src = flow_src(id);
        if flow_index(id) >= self.dispatch_count(src) {
            return;
        }
        let dst = self.flow(src, flow_index(id)).dst;
        let (m, c, _) = self.member(dst).expect("dispatch goes to GPUs");
        let first = m.dispatch_of(c).len() as u32;
        (first..first + m.combine_of(c).len() as u32).for_each(f);
    }

    /// Payload bytes host `h` sends (dispatch and combine).
    fn bytes_of(&self, h: u32) -> u64 {
        self.member(h).map_or(0, |(m, r, _)| {
            let d: u64 = m.dispatch_of(r).iter().map(|x| x.1).sum();
            let c: u64 = m.combine_of(r).iter().map(|x| x.1).sum();
            (d + c) * self.bytes_per_token
        })
    }

    fn kind_name(&self) -> &'static str {
        "moe"
    }
    fn phase_names(&self) -> &[String] {
        &self.phases
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
    fn combine_returns_each_dispatch_after_all_dispatch_to_its_gpu() {
        // 2 servers of 2 GPUs, one group of 4; GPU 0 → 2 (3 tokens), 1 → 2 (1), 2 → 1 (5).
        let mut t = vec![0u64; 16];
        t[2] = 3;
        t[4 + 2] = 1;
        t[2 * 4 + 1] = 5;
        let place = Placement::new(&[1, 0], 2); // server 0 on hosts 2, 3; server 1 on 0, 1
        let traffic = Traffic {
            ep_size: 4,
            matrices: vec![GroupMatrix::new(4, &t)],
            matrix_of_group: vec![0],
            bytes_per_token: 10,
            delay_ps: 7,
            nvlink_bytes: 0,
        };
        let moe = Moe::new(place, traffic, 4);
        // GPU 2 is host 0: dispatch to GPU 1 (host 3), then combine to GPUs 0 and 1
        // (order 2 + 1 = 3, 0, 1: GPU 0 first).
        assert_eq!(moe.flows_of(0), 3);
        let f: Vec<(u32, u64)> = (0..3)
            .map(|i| (moe.flow(0, i).dst, moe.flow(0, i).bytes))
            .collect();
        assert_eq!(f, [(3, 50), (2, 30), (3, 10)]);
        assert_eq!(moe.flow(0, 1).start, Start::After { delay_ps: 7 });
        assert_eq!((moe.phase_of(0, 0), moe.phase_of(0, 1)), (Some(0), Some(1)));
        let mut deps = vec![];
        moe.for_each_dep(0, 2, &mut |d| deps.push(d));
        assert_eq!(
            deps,
            [flow_id(2, 0), flow_id(3, 0)],
            "GPUs 0 and 1 dispatch to GPU 2"
        );
        assert_eq!(moe.dep_count(0, 2), 2);
        assert_eq!(moe.dep_count(0, 0), 0);
        let mut dependents = vec![];
        moe.for_each_dependent(flow_id(2, 0), &mut |i| dependents.push(i));
        assert_eq!(dependents, [1, 2]);
        // GPU 3 (host 1) sends and receives nothing.
        assert_eq!(moe.flows_of(1), 0);
        assert_eq!(moe.bytes_of(0), 90);
    }
}
