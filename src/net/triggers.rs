//! A host's trigger bookkeeping for flows that start on a trigger ([`Start::After`]): `delay_ps`
//! after every one of their dependencies has fully arrived at this host.
//!
//! The host learns that an incoming flow has fully arrived when the last of its packets does
//! (it knows the flow's size from the workload): under reliable transports from the
//! receiver state it keeps anyway (distinct packets received), under the paced transport
//! from a count of the packets received (each packet arrives once), kept here only while the
//! flow is incomplete. Everything here is per host and touched only by that host's events,
//! so triggers need no global coordination. Workloads without triggers never touch it.
//!
//! [`Start::After`]: crate::workload::Start::After

use crate::packet::FlowId;
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet};

#[derive(Default, Serialize, Deserialize)]
pub(crate) struct Triggers {
    /// Paced transport: packets received so far of incoming flows not yet complete.
    arrived: BTreeMap<FlowId, u32>,
    /// This host's flows that wait for dependencies, by index: how many have not arrived
    /// (an entry appears when the first dependency arrives).
    missing: BTreeMap<u32, u32>,
    /// Flows whose dependencies have all arrived: (start time in ps, index), earliest first.
    ready: BTreeSet<(u64, u32)>,
    /// Start times of started triggered flows that have not completed (for their FCT).
    started_ps: BTreeMap<u32, u64>,
}

impl Triggers {
    /// Counts a packet of incoming flow `id` of `packets` packets (paced transport); returns
    /// whether it was the flow's last.
    pub(crate) fn count_packet(&mut self, id: FlowId, packets: u64) -> bool {
        let n = self.arrived.entry(id).or_insert(0);
        *n += 1;
        let done = *n as u64 >= packets;
        if done {
            self.arrived.remove(&id);
        }
        done
    }

    /// One of the `deps` dependencies of flow `i` has arrived at `now_ps`; when it was the
    /// last, the flow becomes ready at `now_ps + delay_ps`.
    pub(crate) fn dependency_arrived(&mut self, i: u32, deps: u32, now_ps: u64, delay_ps: u64) {
        let left = self.missing.entry(i).or_insert(deps);
        *left -= 1;
        if *left == 0 {
            self.missing.remove(&i);
            self.ready.insert((now_ps + delay_ps, i));
        }
    }

    /// The earliest ready flow's start time.
    pub(crate) fn next_ready_ps(&self) -> Option<u64> {
        self.ready.first().map(|&(t, _)| t)
    }

    /// Takes a flow whose start time is at most `now_ps`, recording its start.
    pub(crate) fn take_due(&mut self, now_ps: u64) -> Option<(u64, u32)> {
        let &(t, i) = self.ready.first().filter(|&&(t, _)| t <= now_ps)?;
        self.ready.pop_first();
        self.started_ps.insert(i, t);
        Some((t, i))
    }

    /// Entries held (incoming flows counted, waiting, ready and running triggered flows).
    pub(crate) fn entries(&self) -> usize {
        self.arrived.len() + self.missing.len() + self.ready.len() + self.started_ps.len()
    }

    /// The start time of triggered flow `i`, which has just completed.
    pub(crate) fn completed(&mut self, i: u32) -> Option<u64> {
        self.started_ps.remove(&i)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_flow_is_ready_after_its_last_dependency_plus_its_delay() {
        let mut t = Triggers::default();
        assert!(!t.count_packet(7, 2));
        assert!(
            t.count_packet(7, 2),
            "the second of two packets completes it"
        );
        t.dependency_arrived(3, 2, 100, 50);
        assert_eq!(t.next_ready_ps(), None, "one of two dependencies");
        t.dependency_arrived(3, 2, 400, 50);
        assert_eq!(t.next_ready_ps(), Some(450));
        assert_eq!(t.take_due(449), None);
        assert_eq!(t.take_due(450), Some((450, 3)));
        assert_eq!(t.completed(3), Some(450));
        assert_eq!(t.completed(3), None);
    }
}
