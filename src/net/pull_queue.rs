//! An NDP receiver's pull queue (`host.cc = "ndp"`; Handley et al. §3, htsim's
//! `NdpPullPacer`): one per host, shared by every flow it receives. Each arrival of a data
//! packet or trimmed header of an incomplete flow queues one pull for that flow; the
//! pacer sends one pull at a time, round-robin over the flows with pulls waiting (fair
//! between senders), no closer together than `gap_ps` (one full data packet's wire time at
//! `host.ndp.pull_rate` × the host's link rate), so the pulled data arrives at about that
//! rate. A pull waiting when the pacer is idle and a gap has passed since the last one goes
//! at once (htsim piggybacks it on the ACK then; weft sends its own pull packet, one more
//! ACK-sized control packet on the reverse path at the same instant). Once all of a flow's
//! data has arrived its waiting pulls are dropped (htsim's `release_pulls`): they would
//! pull nothing.
//!
//! Pulls of a flow are numbered 1, 2, … in the order they are sent (htsim numbers them
//! when queued, which is the same order: a flow's pulls leave in FIFO order and none is
//! dropped before its flow completes).

use super::event::TimerSlot;
use crate::packet::FlowId;
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, VecDeque};

#[derive(Default, Serialize, Deserialize)]
pub(crate) struct PullQueue {
    /// Flows with pulls waiting, in round-robin order.
    turn: VecDeque<FlowId>,
    /// Incoming flows not yet complete that have been pulled for.
    flows: BTreeMap<FlowId, PullFlow>,
    /// When the last pull went (None: never).
    last_ps: Option<u64>,
    /// The pacer's timer: set while pulls wait for their gap.
    pub timer: TimerSlot,
}

#[derive(Default, Serialize, Deserialize)]
struct PullFlow {
    waiting: u32,
    /// Pulls sent so far (the last one's number).
    sent: u32,
    /// Entropy of the flow's latest packet: its pulls travel like its ACKs.
    entropy: u16,
    /// When the flow's last pull went (per-flow pacing).
    last_ps: Option<u64>,
}

/// A pull to send: for `flow`, numbered `pull_no`, with the entropy of its ACKs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Pull {
    pub flow: FlowId,
    pub pull_no: u32,
    pub entropy: u16,
}

impl PullQueue {
    /// A packet of `flow` (entropy `entropy`) arrived: one more pull for it.
    pub(crate) fn add(&mut self, flow: FlowId, entropy: u16) {
        let f = self.flows.entry(flow).or_default();
        f.entropy = entropy;
        f.waiting += 1;
        if f.waiting == 1 {
            self.turn.push_back(flow);
        }
    }

    /// Every packet of `flow` has arrived: its waiting pulls are dropped.
    pub(crate) fn release(&mut self, flow: FlowId) {
        // Its place in `turn` is skipped when reached.
        self.flows.remove(&flow);
    }

    /// Whether pulls wait.
    pub(crate) fn is_empty(&self) -> bool {
        self.turn.is_empty()
    }

    /// When the next pull may go, `gap_ps` after the last one (0 before the first).
    pub(crate) fn ready_ps(&self, gap_ps: u64) -> u64 {
        self.last_ps.map_or(0, |t| t + gap_ps)
    }

    /// When the next pull may go: with one pacer for the host, `gap_ps` after the last pull
    /// (0 before the first); with one per flow (`per_flow`), the earliest of the waiting flows'
    /// own last pull + `gap_ps`. None when no pull waits (released flows are dropped from the
    /// turn here).
    pub(crate) fn next_ready_ps(&mut self, gap_ps: u64, per_flow: bool) -> Option<u64> {
        let flows = &self.flows;
        self.turn.retain(|f| flows.contains_key(f));
        if self.turn.is_empty() {
            return None;
        }
        if !per_flow {
            return Some(self.ready_ps(gap_ps));
        }
        self.turn
            .iter()
            .map(|f| self.flows[f].last_ps.map_or(0, |t| t + gap_ps))
            .min()
    }

    /// Per-flow pacing: takes the pull of the first flow in turn whose own gap has passed at
    /// `now_ps`.
    pub(crate) fn pop_ready(&mut self, now_ps: u64, gap_ps: u64) -> Option<Pull> {
        let flows = &self.flows;
        let at = self.turn.iter().position(|f| {
            flows
                .get(f)
                .is_some_and(|x| x.last_ps.map_or(0, |t| t + gap_ps) <= now_ps)
        })?;
        let flow = self.turn.remove(at).expect("position is in range");
        Some(self.send(flow, now_ps))
    }

    /// Takes the next flow's pull, sent at `now_ps`.
    pub(crate) fn pop(&mut self, now_ps: u64) -> Option<Pull> {
        while let Some(flow) = self.turn.pop_front() {
            if self.flows.contains_key(&flow) {
                return Some(self.send(flow, now_ps));
            } // else released
        }
        None
    }

    /// Sends one pull of `flow` (taken off `turn`, still registered) at `now_ps`; the flow
    /// goes back to the end of `turn` while it has pulls waiting.
    fn send(&mut self, flow: FlowId, now_ps: u64) -> Pull {
        let f = self
            .flows
            .get_mut(&flow)
            .expect("a flow in turn is registered");
        debug_assert!(f.waiting > 0, "a flow in turn has pulls waiting");
        f.waiting -= 1;
        f.sent += 1;
        f.last_ps = Some(now_ps);
        if f.waiting > 0 {
            self.turn.push_back(flow);
        }
        self.last_ps = Some(now_ps);
        Pull {
            flow,
            pull_no: f.sent,
            entropy: f.entropy,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pulls_go_round_robin_over_flows_numbered_per_flow() {
        let mut q = PullQueue::default();
        for _ in 0..3 {
            q.add(1, 7);
        }
        q.add(2, 9);
        let order: Vec<(FlowId, u32)> = std::iter::from_fn(|| q.pop(0))
            .map(|p| (p.flow, p.pull_no))
            .collect();
        assert_eq!(order, [(1, 1), (2, 1), (1, 2), (1, 3)]);
        assert!(q.is_empty());
        // The numbering goes on.
        q.add(2, 9);
        assert_eq!(q.pop(5).map(|p| p.pull_no), Some(2));
    }

    #[test]
    fn a_released_flow_loses_its_waiting_pulls() {
        let mut q = PullQueue::default();
        q.add(1, 0);
        q.add(1, 0);
        q.add(2, 0);
        q.release(1);
        assert_eq!(q.pop(0).map(|p| p.flow), Some(2));
        assert_eq!(q.pop(0), None);
    }

    /// One pacer per flow (opera-sim): each flow's pulls are a gap apart, but two flows'
    /// pulls may go at the same instant; the host's single pacer spaces all of them.
    #[test]
    fn per_flow_pacers_space_each_flow_alone() {
        let mut q = PullQueue::default();
        for _ in 0..2 {
            q.add(1, 0);
            q.add(2, 0);
        }
        assert_eq!(q.next_ready_ps(100, true), Some(0));
        let now: Vec<FlowId> = std::iter::from_fn(|| q.pop_ready(10, 100))
            .map(|p| p.flow)
            .collect();
        assert_eq!(now, [1, 2]);
        assert_eq!(q.next_ready_ps(100, true), Some(110));
        assert_eq!(q.pop_ready(109, 100), None);
        assert_eq!(
            q.pop_ready(110, 100).map(|p| (p.flow, p.pull_no)),
            Some((1, 2))
        );
        assert_eq!(
            q.pop_ready(110, 100).map(|p| (p.flow, p.pull_no)),
            Some((2, 2))
        );
        assert_eq!(q.next_ready_ps(100, true), None);
        // The host's pacer: one gap after the last pull, whoever it was for.
        q.add(1, 0);
        q.add(2, 0);
        assert_eq!(q.next_ready_ps(100, false), Some(210));
        q.release(1);
        q.release(2);
        assert_eq!(q.next_ready_ps(100, false), None);
    }

    #[test]
    fn the_next_pull_waits_a_gap_after_the_last() {
        let mut q = PullQueue::default();
        assert_eq!(q.ready_ps(100), 0);
        q.add(1, 0);
        q.pop(250);
        assert_eq!(q.ready_ps(100), 350);
    }
}
