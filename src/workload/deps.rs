//! Checks a workload's dependencies before a run: every triggered flow has at least one
//! dependency, each dependency exists and is a flow *to* the dependent flow's source (the
//! rule that keeps triggers local to one host), and the dependencies have no cycle (a cycle
//! would leave its flows waiting for ever). Generators build correct graphs by construction;
//! this guards new generators and explicit inputs, and names the offending flow.
//!
//! It walks every flow, so it runs only on workloads of at most [`CHECKED_FLOWS`] flows
//! (a ring AllReduce of 8,192 ranks has 1.3 × 10⁸: generators' structure is unit-tested).

use super::{Flow, FlowId, Start};
use crate::packet::{flow_id, flow_index, flow_src};
use std::collections::HashMap;

/// Workloads up to this many flows get their dependencies checked.
pub(crate) const CHECKED_FLOWS: u64 = 1 << 20;

/// What the check needs of a workload.
pub(crate) trait Graph {
    fn hosts(&self) -> u32;
    fn flows_of(&self, h: u32) -> u32;
    fn flow(&self, h: u32, i: u32) -> Flow;
    fn deps(&self, h: u32, i: u32, f: &mut dyn FnMut(FlowId));
    /// The inverse of `deps`: indices, at `id`'s destination, of the flows waiting for it.
    fn dependents(&self, id: FlowId, f: &mut dyn FnMut(u32));
}

fn name(id: FlowId) -> String {
    format!("flow {} of host {}", flow_index(id), flow_src(id))
}

/// `Err(one line)` naming the first bad flow.
pub(crate) fn check(g: &dyn Graph) -> Result<(), String> {
    let mut triggered = vec![];
    for h in 0..g.hosts() {
        for i in 0..g.flows_of(h) {
            let id = flow_id(h, i);
            let deps = deps_of(g, id);
            match (g.flow(h, i).start, deps.is_empty()) {
                (Start::At(_), false) => {
                    return Err(format!(
                        "{} starts at a fixed time but has dependencies",
                        name(id)
                    ))
                }
                (Start::After { .. }, true) => {
                    return Err(format!(
                        "{} starts after messages but depends on none",
                        name(id)
                    ))
                }
                (Start::At(_), true) => continue,
                _ => triggered.push(id),
            }
            for d in deps {
                let (src, j) = (flow_src(d), flow_index(d));
                if src >= g.hosts() || j >= g.flows_of(src) {
                    return Err(format!(
                        "{} depends on {}, which does not exist",
                        name(id),
                        name(d)
                    ));
                }
                if g.flow(src, j).dst != h {
                    return Err(format!(
                        "{} depends on {}, which is not sent to host {h} (a trigger must be local to the flow's source)",
                        name(id),
                        name(d)
                    ));
                }
                let mut listed = false;
                g.dependents(d, &mut |k| listed |= k == i);
                if !listed {
                    return Err(format!(
                        "{} depends on {}, which does not list it among its dependents",
                        name(id),
                        name(d)
                    ));
                }
            }
        }
    }
    find_cycle(g, &triggered).map_or(Ok(()), |id| {
        Err(format!(
            "{} depends on itself through a cycle of dependencies",
            name(id)
        ))
    })
}

fn deps_of(g: &dyn Graph, id: FlowId) -> Vec<FlowId> {
    let mut deps = vec![];
    g.deps(flow_src(id), flow_index(id), &mut |d| deps.push(d));
    deps
}

/// A flow on a dependency cycle, if any: depth-first from each triggered flow (in order, so
/// the same flow is named on every run), without recursion; only visited flows are marked.
fn find_cycle(g: &dyn Graph, triggered: &[FlowId]) -> Option<FlowId> {
    // `true`: on the current path; `false`: finished.
    let mut open: HashMap<FlowId, bool> = HashMap::new();
    for &root in triggered {
        if open.contains_key(&root) {
            continue;
        }
        open.insert(root, true);
        let mut stack = vec![(root, deps_of(g, root), 0usize)];
        while let Some((id, deps, next)) = stack.last_mut() {
            if let Some(&d) = deps.get(*next) {
                *next += 1;
                match open.get(&d) {
                    Some(true) => return Some(d),
                    Some(false) => {}
                    None => {
                        open.insert(d, true);
                        stack.push((d, deps_of(g, d), 0));
                    }
                }
            } else {
                open.insert(*id, false);
                stack.pop();
            }
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Explicit flows: (src, dst, deps).
    struct Explicit(Vec<Vec<(u32, Vec<FlowId>)>>);

    impl Graph for Explicit {
        fn hosts(&self) -> u32 {
            self.0.len() as u32
        }
        fn flows_of(&self, h: u32) -> u32 {
            self.0[h as usize].len() as u32
        }
        fn flow(&self, h: u32, i: u32) -> Flow {
            let (dst, deps) = &self.0[h as usize][i as usize];
            Flow {
                src: h,
                dst: *dst,
                bytes: 1,
                start: match deps.is_empty() {
                    true => Start::At(0),
                    false => Start::After { delay_ps: 0 },
                },
            }
        }
        fn deps(&self, h: u32, i: u32, f: &mut dyn FnMut(FlowId)) {
            self.0[h as usize][i as usize].1.iter().for_each(|&d| f(d));
        }
        fn dependents(&self, id: FlowId, f: &mut dyn FnMut(u32)) {
            let dst = self.flow(flow_src(id), flow_index(id)).dst;
            for (i, (_, deps)) in self.0[dst as usize].iter().enumerate() {
                if deps.contains(&id) {
                    f(i as u32)
                }
            }
        }
    }

    #[test]
    fn accepts_a_chain_and_names_bad_dependencies_and_cycles() {
        // 0 -> 1, then 1 -> 2 after it, then 2 -> 0 after that.
        let chain = Explicit(vec![
            vec![(1, vec![])],
            vec![(2, vec![flow_id(0, 0)])],
            vec![(0, vec![flow_id(1, 0)])],
        ]);
        assert_eq!(check(&chain), Ok(()));

        let missing = Explicit(vec![vec![(1, vec![])], vec![(0, vec![flow_id(0, 3)])]]);
        let e = check(&missing).unwrap_err();
        assert!(e.contains("flow 3 of host 0, which does not exist"), "{e}");

        // Host 1's flow waits for a flow sent to host 2: not local.
        let remote = Explicit(vec![
            vec![(2, vec![])],
            vec![(0, vec![flow_id(0, 0)])],
            vec![],
        ]);
        let e = check(&remote).unwrap_err();
        assert!(e.contains("not sent to host 1"), "{e}");

        // 0 -> 1 waits for 1 -> 0, which waits for 0 -> 1.
        let cycle = Explicit(vec![
            vec![(1, vec![flow_id(1, 0)])],
            vec![(0, vec![flow_id(0, 0)])],
        ]);
        let e = check(&cycle).unwrap_err();
        assert!(e.contains("cycle"), "{e}");
    }
}
