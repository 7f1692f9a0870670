//! NDP's sender rules (`host.cc = "ndp"`; Handley et al., SIGCOMM 2017; the Opera paper, §4.2.1),
//! on top of the reliable transport's sequence numbers, send records, SACK, NACK queue and
//! retransmission timer (`reliable.rs`), whose window is then unlimited: what limits an NDP
//! sender is its **pull credit**.
//!
//! - A flow starts with `initial_window_pkts` credits: its first packets go at line rate.
//! - Each pull from the receiver carries the flow's pull number (how many pulls the
//!   receiver has sent it, htsim's `pullno`); the sender gains the difference to the
//!   highest number heard, so a lost or overtaken pull is made up by the next one.
//! - One credit sends one packet: a packet queued for retransmission (NACKed: NDP resends
//!   trimmed packets on pulls, not at once) before new data.
//! - A credit that finds nothing to send is kept (weft's choice): it is spent on the next
//!   NACKed packet. This happens only once all new data has been sent, where opera-sim's
//!   `NdpSrc::processNack` resends a NACKed packet at once; keeping the credit does the
//!   same but never sends more packets than the receiver pulled.
//! - Timeouts: the reliable transport's timer (≥ `host.rto_min_us`) declares overdue
//!   packets lost; each gets a credit, so it is resent at once (htsim's
//!   `retransmit_packet`). And a flow with data to send, no credit and nothing
//!   outstanding (its last pull was lost: no later pull will make it up) gives itself one
//!   credit an RTO after it last sent or heard from the receiver (weft's addition: htsim
//!   relies on return-to-sender, which weft models only with `switch.return_to_sender`).
//! - A header returned by a switch (`switch.return_to_sender`, a NACK marked
//!   `flags::RETURNED`) waits for a pull like a NACKed one, unless nothing else is in
//!   flight and no pull is owed (the receiver answers each packet with one pull; `answers`
//!   counts its ACKs and NACKs): then it is resent at once (opera-sim's `processRTS`).

use serde::{Deserialize, Serialize};

/// `[host.ndp]` in simulator units.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct NdpParams {
    /// Packets a flow sends before its first pull.
    pub initial_window_pkts: u32,
    /// Pulls are paced at this fraction of the receiver's link rate.
    pub pull_rate: f64,
    /// One pacer per flow instead of one per receiving host (`host.ndp.pacer = "flow"`).
    pub per_flow_pacer: bool,
    /// The pull gap counts the payload only (`host.ndp.pull_gap = "payload"`).
    pub payload_gap: bool,
}

/// A flow's permission to send: the initial window plus pulls (and timeouts), less what
/// it sent.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub(crate) struct PullCredit {
    credit: u32,
    /// Highest pull number heard.
    last_pull: u32,
    /// Last time the flow sent a packet or heard from its receiver.
    last_heard_ps: u64,
    /// ACKs and NACKs heard from the receiver: it queues one pull per packet it answers,
    /// so `answers - last_pull` pulls are still on their way (htsim's `_pull_window`).
    answers: u32,
}

impl PullCredit {
    pub(crate) fn new(initial_window_pkts: u32) -> PullCredit {
        assert!(
            initial_window_pkts > 0,
            "NDP's initial window holds a packet"
        );
        PullCredit {
            credit: initial_window_pkts,
            last_pull: 0,
            last_heard_ps: 0,
            answers: 0,
        }
    }

    pub(crate) fn may_send(&self) -> bool {
        self.credit > 0
    }

    #[cfg(test)]
    pub(crate) fn credit(&self) -> u32 {
        self.credit
    }

    /// One packet sent at `now_ps`.
    pub(crate) fn spend(&mut self, now_ps: u64) {
        assert!(self.credit > 0, "an NDP sender sends only on credit");
        self.credit -= 1;
        self.heard(now_ps);
    }

    /// A pull numbered `pull_no` arrived; returns the credits it added (0 for a pull
    /// overtaken by a later one).
    pub(crate) fn on_pull(&mut self, pull_no: u32, now_ps: u64) -> u32 {
        self.heard(now_ps);
        let new = pull_no.saturating_sub(self.last_pull);
        self.last_pull = self.last_pull.max(pull_no);
        self.credit += new;
        new
    }

    /// Credits not from pulls: packets the timer declared lost, or a lost pull.
    pub(crate) fn grant(&mut self, packets: u32) {
        self.credit += packets;
    }

    /// The receiver answered a packet (an ACK or NACK) at `now_ps`.
    pub(crate) fn answered(&mut self, now_ps: u64) {
        self.answers = self.answers.saturating_add(1);
        self.heard(now_ps);
    }

    /// Pulls the receiver has queued for packets it answered and that have not arrived (an
    /// estimate: a lost ACK or pull, or ACK coalescing, moves it).
    pub(crate) fn pulls_owed(&self) -> u32 {
        self.answers.saturating_sub(self.last_pull)
    }

    /// The flow sent a packet or heard from its receiver at `now_ps`.
    pub(crate) fn heard(&mut self, now_ps: u64) {
        self.last_heard_ps = self.last_heard_ps.max(now_ps);
    }

    /// When a flow that waits for a pull with nothing outstanding gives itself a credit.
    pub(crate) fn starved_deadline_ps(&self, rto_ps: u64) -> u64 {
        self.last_heard_ps + rto_ps
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pull_numbers_are_cumulative_so_lost_and_late_pulls_cost_nothing() {
        let mut c = PullCredit::new(2);
        c.spend(0);
        c.spend(0);
        assert!(!c.may_send());
        assert_eq!(c.on_pull(1, 10), 1);
        // Pull 2 was lost: pull 3 brings both.
        assert_eq!(c.on_pull(3, 20), 2);
        assert_eq!(c.credit(), 3);
        // Pull 2 arrives late, overtaken: nothing.
        assert_eq!(c.on_pull(2, 30), 0);
        assert_eq!(c.credit(), 3);
    }

    #[test]
    fn a_starved_flow_waits_one_rto_after_it_last_heard() {
        let mut c = PullCredit::new(1);
        c.spend(100);
        c.heard(400);
        c.heard(300);
        assert_eq!(c.starved_deadline_ps(1_000), 1_400);
    }
}
