//! The reliable transport every congestion-controlled flow uses (in the UEC htsim style:
//! `UecSrc`, `UecSink`): per-packet sequence numbers, send records, selective acknowledgement,
//! NACKs for trimmed packets, a retransmission timer and a reordering rule for losses
//! without trimming. The window comes from the flow's [`Cc`]; this file owns the rest.
//!
//! - **Send records**: one per sequence number from the lowest unacknowledged one up to the
//!   highest sent, with the time and entropy of the last transmission and how often it was
//!   sent. A packet is outstanding, lost (queued for retransmission; not in flight), or
//!   acknowledged.
//! - **ACKs** acknowledge everything below their cumulative point, every SACK bit, and the
//!   packet they answer. `in_flight` drops by the bytes of each outstanding packet
//!   acknowledged (a packet acknowledged while queued for retransmission is simply taken off
//!   the queue). RTT samples come from the answered packet's record when the ACK echoes the
//!   number of its latest transmission (modulo 4; an ACK for an earlier transmission gives
//!   none): UEC's rtx-echo rule generalized, where Karn's rule would leave a flow whose every
//!   packet was retransmitted without samples (Swift's window then never grows).
//! - **NACK**: the packet is lost; it is retransmitted before any new packet.
//! - **Timeout**: one timer per flow, due `rto` after the oldest outstanding transmission
//!   (send order is kept in a FIFO, so finding the oldest is O(1) amortized). Every
//!   outstanding packet whose deadline has passed is declared lost, and the CCA hears of one
//!   timeout for them all. `rto = max(rto_min,
//!   srtt + 4·rttvar)` (Jacobson); UEC htsim uses a fixed RTO, which is `rto_min` here when
//!   the estimate is below it; no exponential back-off, as UEC htsim.
//! - **Reordering rule** (without trimming, packets vanish silently): a packet sent once
//!   is lost when a packet more than `reorder_pkts` sequence numbers above it has been
//!   acknowledged (forward acknowledgement with a threshold; htsim's `3 + paths` by default, so
//!   spraying's reordering is tolerated). Retransmissions are left to NACKs and the timer.
//! - **Window**: a packet may go if `in_flight + size ≤ cwnd`, or if nothing is in flight
//!   (a window below one packet sends one at a time, paced if the CCA asks). Under NewReno
//!   (`host.dctcp.recovery = "newreno"`, with `dupack`), htsim `TcpSrc`'s (UEC htsim,
//!   sim/tcp.cpp): new data goes if the bytes from the lowest unacknowledged packet to the
//!   highest sent, plus its own, fit cwnd (SACKed packets above a hole still count), the fast
//!   and partial-ACK retransmissions go regardless of the window, and the CCA hears each step
//!   of recovery ([`Recovery`]).
//! - **Pull credit** (`host.cc = "ndp"` only, `ndp.rs`): a packet also needs a credit from
//!   the initial window, a pull or the timer.

use super::cc::{AckSignal, Cc, CongestionControl, LossKind, LossSignal, NackSignal, Recovery};
use super::ndp::PullCredit;
use super::AckInfo;
use crate::scenario::{LossDetection, ReorderPaths};
use serde::{Deserialize, Serialize};
use std::collections::VecDeque;

/// What the transport needs besides the CCA, in simulator units.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ReliableParams {
    /// Smallest retransmission timeout.
    pub rto_min_ps: u64,
    /// The loss rule's threshold, in packets (`u32::MAX`: off), unless `reorder_paths` is
    /// `Flow` and the rule is on: then 3 + the flow's shortest paths.
    pub reorder_pkts: u32,
    /// Whose paths the default loss threshold counts (`host.reorder_paths`).
    pub reorder_paths: ReorderPaths,
    /// How packets lost without a NACK are found (`host.loss_detection`).
    pub loss_detection: LossDetection,
}

impl ReliableParams {
    /// The loss rule's threshold for a flow with `flow_paths` shortest paths.
    pub fn threshold_pkts(&self, flow_paths: u32) -> u32 {
        match self.reorder_paths {
            ReorderPaths::Flow if self.reorder_pkts != u32::MAX => 3u32.saturating_add(flow_paths),
            _ => self.reorder_pkts,
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
enum State {
    Outstanding,
    /// Declared lost and queued for retransmission.
    Lost,
    Acked,
}

#[derive(Clone, Copy, Debug, Serialize, Deserialize)]
struct Record {
    sent_ps: u64,
    entropy: u16,
    /// Transmissions so far.
    tx: u8,
    state: State,
}

/// The next packet a flow sends.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Send {
    /// Its sequence number.
    pub seq: u32,
    /// Whether `seq` was sent before (a retransmission).
    pub retransmission: bool,
    /// Ask the receiver for an immediate ACK: a retransmission, the last packet, or the
    /// window is full after it.
    pub ack_req: bool,
    /// Which transmission of `seq` this is (1 for the first).
    pub tx: u8,
}

/// A packet declared lost by the timer: its sequence number and entropy (for LB feedback).
pub(crate) type Expired = (u32, u16);

/// What an ACK changed, for the host's counters.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct AckEffect {
    pub newly_acked: u32,
    /// Packets the reordering rule declared lost.
    pub reorder_losses: u32,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
pub(crate) struct Reliable {
    packets: u32,
    full_bytes: u32,
    last_bytes: u32,
    /// The next sequence number never sent.
    next_new: u32,
    /// Every sequence number below this is acknowledged; `records[0]` is its record.
    base: u32,
    records: VecDeque<Record>,
    /// (send time, seq) of every transmission in send order; stale entries are skipped.
    send_order: VecDeque<(u64, u32)>,
    /// Lost packets to send again, in the order they were found.
    rtx: VecDeque<u32>,
    in_flight_bytes: u64,
    /// One above the highest sequence number acknowledged.
    acked_top: u32,
    /// Sequence numbers below this have been examined by the reordering rule.
    reorder_scan: u32,
    reorder_pkts: u32,
    #[serde(default = "sack")]
    loss_detection: LossDetection,
    /// `dupack`: the highest cumulative point heard, and the ACKs since that did not pass it.
    #[serde(default)]
    cum_seen: u32,
    #[serde(default)]
    dupacks: u32,
    /// `dupack`: in fast recovery until the cumulative point reaches this (one above the
    /// highest packet sent at the fast retransmit: htsim's `_recoverq`).
    #[serde(default)]
    recover: Option<u32>,
    /// `dupack`: after a timeout, no fast retransmit until the cumulative point reaches
    /// this (htsim: "if we haven't recovered from timeouts, don't do fast recovery").
    #[serde(default)]
    fr_hold: u32,
    /// NewReno: the retransmission (fast or partial-ACK) that goes regardless of the window.
    #[serde(default)]
    urgent: Option<u32>,
    rto_min_ps: u64,
    srtt_ps: u64,
    rttvar_ps: u64,
    sampled: bool,
    /// Unloaded RTT of the flow's path.
    base_rtt_ps: u64,
    /// Largest RTT sample of the current epoch, which starts at the first sample after the
    /// previous one ended and lasts two RTOs (the REPS artifact's `_last_rto_max_rtt`).
    epoch_max_rtt_ps: u64,
    epoch_end_ps: u64,
    last_send_ps: Option<u64>,
    cc: Cc,
    /// NDP: the pull credit that gates sending (None for window-based CCAs).
    pulls: Option<PullCredit>,
}

/// Who made a NACK: the receiver (it got the trimmed header) or a switch that returned the
/// header to its sender ([`crate::packet::flags::RETURNED`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum NackFrom {
    /// The receiver, which got the trimmed header.
    Receiver,
    /// A switch whose header queue was full (`switch.return_to_sender`).
    Switch,
}

impl Reliable {
    /// A flow of `packets` packets of `full_bytes` (the last one `last_bytes`) in buffers,
    /// over `flow_paths` shortest paths (the loss threshold may count them).
    pub(crate) fn new(
        packets: u32,
        full_bytes: u32,
        last_bytes: u32,
        base_rtt_ps: u64,
        params: &ReliableParams,
        flow_paths: u32,
        cc: Cc,
    ) -> Reliable {
        assert!(packets > 0, "a flow has at least one packet");
        Reliable {
            packets,
            full_bytes,
            last_bytes,
            next_new: 0,
            base: 0,
            records: VecDeque::new(),
            send_order: VecDeque::new(),
            rtx: VecDeque::new(),
            in_flight_bytes: 0,
            acked_top: 0,
            reorder_scan: 0,
            reorder_pkts: params.threshold_pkts(flow_paths),
            loss_detection: params.loss_detection,
            cum_seen: 0,
            dupacks: 0,
            recover: None,
            fr_hold: 0,
            urgent: None,
            rto_min_ps: params.rto_min_ps,
            srtt_ps: base_rtt_ps,
            rttvar_ps: base_rtt_ps / 2,
            sampled: false,
            base_rtt_ps,
            epoch_max_rtt_ps: 0,
            epoch_end_ps: 0,
            last_send_ps: None,
            cc,
            pulls: None,
        }
    }

    /// Gates sending on NDP pull credit, starting with `initial_window_pkts` credits.
    pub(crate) fn with_pull_credit(mut self, initial_window_pkts: u32) -> Reliable {
        self.pulls = Some(PullCredit::new(initial_window_pkts));
        self
    }

    fn size(&self, seq: u32) -> u64 {
        if seq + 1 == self.packets {
            self.last_bytes as u64
        } else {
            self.full_bytes as u64
        }
    }

    /// Bytes of the packets `from..to`.
    fn span_bytes(&self, from: u32, to: u32) -> u64 {
        if to <= from {
            return 0;
        }
        (to - from - 1) as u64 * self.full_bytes as u64 + self.size(to - 1)
    }

    /// Whether the window lets `seq` go now (see the module's **Window**).
    fn window_allows(&self, seq: u32) -> bool {
        let size = self.size(seq);
        let cwnd = self.cc.cwnd_bytes();
        let by_flight = self.in_flight_bytes == 0 || self.in_flight_bytes + size <= cwnd;
        if !self.cc.newreno() {
            return by_flight;
        }
        if seq < self.next_new {
            return by_flight || self.urgent == Some(seq);
        }
        let span = self.span_bytes(self.base, self.next_new);
        span == 0 || span + size <= cwnd
    }

    fn record(&mut self, seq: u32) -> Option<&mut Record> {
        if seq < self.base || seq >= self.next_new {
            return None;
        }
        self.records.get_mut((seq - self.base) as usize)
    }

    /// The packet to send next if the window (and the CCA's pacing) allows one now; a
    /// retransmission before new data. It is recorded as sent at `now_ps`.
    pub(crate) fn next_seq(&mut self, now_ps: u64) -> Option<Send> {
        if self.pacing_wait_until(now_ps).is_some() {
            return None;
        }
        let seq = self.candidate()?;
        let size = self.size(seq);
        if !self.window_allows(seq) {
            return None;
        }
        if let Some(p) = &mut self.pulls {
            if !p.may_send() {
                return None;
            }
            p.spend(now_ps);
        }
        let retransmission = seq < self.next_new;
        if retransmission {
            self.rtx.pop_front();
            if self.urgent == Some(seq) {
                self.urgent = None;
            }
        } else {
            self.next_new += 1;
            self.records.push_back(Record {
                sent_ps: 0,
                entropy: 0,
                tx: 0,
                state: State::Outstanding,
            });
        }
        let r = self.record(seq).expect("a packet being sent has a record");
        r.sent_ps = now_ps;
        r.tx = r.tx.saturating_add(1);
        r.state = State::Outstanding;
        self.in_flight_bytes += size;
        self.send_order.push_back((now_ps, seq));
        self.last_send_ps = Some(now_ps);
        let window_full = self
            .candidate()
            .is_some_and(|next| !self.window_allows(next));
        let tx = self.record(seq).expect("just sent").tx;
        Some(Send {
            seq,
            retransmission,
            ack_req: retransmission || seq + 1 == self.packets || window_full,
            tx,
        })
    }

    /// The next retransmission (dropping queue entries acknowledged since), else new data.
    fn candidate(&mut self) -> Option<u32> {
        while let Some(&seq) = self.rtx.front() {
            if self.record(seq).is_some_and(|r| r.state == State::Lost) {
                return Some(seq);
            }
            self.rtx.pop_front();
        }
        (self.next_new < self.packets).then_some(self.next_new)
    }

    /// If the CCA paces and the flow's gap has not passed, when it does.
    pub(crate) fn pacing_wait_until(&self, now_ps: u64) -> Option<u64> {
        let gap = self.cc.pacing_gap_ps()?;
        let ready = self.last_send_ps? + gap;
        (ready > now_ps).then_some(ready)
    }

    /// Records the entropy value chosen for the packet just sent.
    pub(crate) fn set_entropy(&mut self, seq: u32, entropy: u16) {
        if let Some(r) = self.record(seq) {
            r.entropy = entropy;
        }
    }

    /// Whether the flow has packets to send (new, or lost and not acknowledged since).
    pub(crate) fn has_data(&self) -> bool {
        self.has_unsent() && self.pulls.as_ref().is_none_or(PullCredit::may_send)
    }

    /// Whether packets wait to be sent (new, or lost), whatever the credit.
    fn has_unsent(&self) -> bool {
        self.next_new < self.packets || !self.rtx.is_empty()
    }

    /// NDP: a pull numbered `pull_no` arrived; returns the credits it added.
    pub(crate) fn on_pull(&mut self, pull_no: u32, now_ps: u64) -> u32 {
        let p = self.pulls.as_mut().expect("pulls reach NDP flows only");
        p.on_pull(pull_no, now_ps)
    }

    /// NDP: the flow has had data to send, no credit and nothing outstanding for an RTO
    /// since it last sent or heard from its receiver (its last pull was lost); if so it
    /// gives itself one credit and returns true.
    pub(crate) fn take_starved_credit(&mut self, now_ps: u64) -> bool {
        let due = self.starved_deadline_ps().is_some_and(|d| d <= now_ps);
        if due {
            let p = self.pulls.as_mut().expect("only NDP flows starve");
            p.grant(1);
            p.heard(now_ps);
        }
        due
    }

    /// When a flow waiting for a pull with nothing outstanding gives itself a credit.
    fn starved_deadline_ps(&self) -> Option<u64> {
        let p = self.pulls.as_ref()?;
        let starved = !p.may_send() && self.has_unsent() && self.in_flight_bytes == 0;
        starved.then(|| p.starved_deadline_ps(self.rto_ps()))
    }

    pub(crate) fn is_complete(&self) -> bool {
        self.base == self.packets
    }

    pub(crate) fn in_flight_bytes(&self) -> u64 {
        self.in_flight_bytes
    }

    pub(crate) fn cwnd_bytes(&self) -> u64 {
        self.cc.cwnd_bytes()
    }

    pub(crate) fn srtt_ps(&self) -> u64 {
        self.srtt_ps
    }

    /// Unloaded RTT of the flow's path.
    pub(crate) fn base_rtt_ps(&self) -> u64 {
        self.base_rtt_ps
    }

    /// The largest RTT sample of the current epoch of two RTOs (0 before the first sample):
    /// how congested the flow's paths were lately (REPS's freeze gate without trimming).
    pub(crate) fn recent_max_rtt_ps(&self) -> u64 {
        self.epoch_max_rtt_ps
    }

    /// Marks `seq` acknowledged; returns its bytes if that is news.
    fn acknowledge(&mut self, seq: u32) -> u64 {
        if self.record(seq).is_none() {
            return 0;
        }
        let size = self.size(seq);
        let r = self.record(seq).expect("checked above");
        let was = r.state;
        r.state = State::Acked;
        match was {
            State::Acked => 0,
            State::Outstanding => {
                self.in_flight_bytes -= size;
                size
            }
            State::Lost => size,
        }
    }

    /// Processes an ACK (cumulative point, SACK bits, and the packet it answers).
    pub(crate) fn on_ack(&mut self, ack: &AckInfo, now_ps: u64) -> AckEffect {
        if let Some(p) = &mut self.pulls {
            p.answered(now_ps);
        }
        let rtt_ps = self
            .record(ack.seq)
            .filter(|r| r.state != State::Acked && r.tx & 3 == ack.tx_echo & 3)
            .map(|r| now_ps.saturating_sub(r.sent_ps));
        if let Some(r) = rtt_ps {
            if now_ps > self.epoch_end_ps {
                self.epoch_max_rtt_ps = 0;
                self.epoch_end_ps = now_ps.saturating_add(2 * self.rto_ps());
            }
            self.epoch_max_rtt_ps = self.epoch_max_rtt_ps.max(r);
            self.rtt_sample(r);
        }
        let mut newly_bytes = 0;
        let mut newly = 0;
        let mut ack_one = |t: &mut Reliable, seq: u32| {
            let b = t.acknowledge(seq);
            newly_bytes += b;
            newly += (b > 0) as u32;
        };
        let cumulative = ack.cumulative.min(self.next_new);
        let (cum_acked_bytes, above_point_bytes) = match self.loss_detection {
            LossDetection::Dupack => {
                let point = cumulative.max(self.cum_seen);
                let above = self.span_bytes(point, self.next_new);
                (self.span_bytes(self.cum_seen, cumulative), above)
            }
            LossDetection::Sack => (0, 0),
        };
        for seq in self.base..cumulative {
            ack_one(self, seq);
        }
        let mut top = ack.seq;
        for i in 0..64u32 {
            if ack.sack & 1 << i != 0 {
                let seq = ack.sack_base.saturating_add(i);
                ack_one(self, seq);
                top = top.max(seq);
            }
        }
        ack_one(self, ack.seq);
        if newly > 0 {
            self.acked_top = self.acked_top.max(top.saturating_add(1).min(self.next_new));
        }
        self.cc.on_ack(&AckSignal {
            now_ps,
            newly_acked_bytes: newly_bytes,
            ecn: ack.ecn_echo,
            rtt_ps,
            srtt_ps: self.srtt_ps,
            in_flight_bytes: self.in_flight_bytes,
            cum_acked_bytes,
            above_point_bytes,
        });
        let reorder_losses = match self.loss_detection {
            LossDetection::Sack => self.apply_reordering_rule(now_ps),
            LossDetection::Dupack => self.count_duplicate_acks(ack.cumulative, now_ps),
        };
        while self
            .records
            .front()
            .is_some_and(|r| r.state == State::Acked)
        {
            self.records.pop_front();
            self.base += 1;
        }
        AckEffect {
            newly_acked: newly,
            reorder_losses,
        }
    }

    /// Declares lost every packet sent once that lies more than `reorder_pkts` below the
    /// highest acknowledged one.
    fn apply_reordering_rule(&mut self, now_ps: u64) -> u32 {
        let bound = self
            .acked_top
            .saturating_sub(self.reorder_pkts.saturating_add(1));
        let mut lost = 0;
        for seq in self.reorder_scan.max(self.base)..bound {
            let r = self.record(seq).expect("below the top sent");
            if r.state == State::Outstanding && r.tx == 1 {
                self.declare_lost(seq);
                lost += 1;
                self.cc.on_loss(&LossSignal {
                    now_ps,
                    kind: LossKind::Reordering,
                    bytes: self.size(seq),
                    srtt_ps: self.srtt_ps,
                    in_flight_bytes: self.in_flight_bytes,
                });
            }
        }
        self.reorder_scan = self.reorder_scan.max(bound);
        lost
    }

    /// htsim `TcpSrc::receivePacket`'s loss rules on the ACK's cumulative point `cumulative`:
    /// an ACK below the highest point heard is ignored; one at it is a duplicate, and the
    /// `reorder_pkts`-th duplicate (exactly) loses the packet at the point and starts fast
    /// recovery (unless already in it); a new point resets the count and, in recovery,
    /// either ends it (at or past the recovery point) or loses the packet at the new point
    /// (a partial ACK). Only the fast retransmit is a loss for the CCA (one reduction per
    /// recovery, as htsim's `deflate_window`). Returns the packets declared lost.
    fn count_duplicate_acks(&mut self, cumulative: u32, now_ps: u64) -> u32 {
        let cumulative = cumulative.min(self.next_new);
        if cumulative < self.cum_seen {
            return 0;
        }
        if cumulative > self.cum_seen {
            let jump_bytes = self.span_bytes(self.cum_seen, cumulative);
            self.cum_seen = cumulative;
            self.dupacks = 0;
            return match self.recover {
                Some(r) if cumulative < r => self.partial_ack(cumulative, jump_bytes),
                Some(_) => {
                    self.recover = None;
                    if self.cc.newreno() {
                        let flight_bytes = self.span_bytes(cumulative, self.next_new);
                        self.cc.on_recovery(Recovery::Full { flight_bytes });
                    }
                    0
                }
                None => 0,
            };
        }
        if self.recover.is_some() && self.cc.newreno() {
            self.cc.on_recovery(Recovery::Duplicate);
        }
        if self.recover.is_some() || self.reorder_pkts == u32::MAX {
            return 0;
        }
        self.dupacks += 1;
        if cumulative < self.fr_hold {
            return 0;
        }
        if self.dupacks != self.reorder_pkts || !self.lose_at_point(cumulative) {
            return 0;
        }
        self.recover = Some(self.next_new);
        if self.cc.newreno() {
            self.urgent = Some(cumulative);
        }
        self.cc.on_loss(&LossSignal {
            now_ps,
            kind: LossKind::Reordering,
            bytes: self.size(cumulative),
            srtt_ps: self.srtt_ps,
            in_flight_bytes: self.in_flight_bytes,
        });
        1
    }

    /// A partial ACK moved the point to `point` (by `jump_bytes`) in recovery: the packet
    /// there is lost; under NewReno the CCA deflates and it goes regardless of the window.
    fn partial_ack(&mut self, point: u32, jump_bytes: u64) -> u32 {
        let lost = self.lose_at_point(point);
        if self.cc.newreno() {
            self.cc.on_recovery(Recovery::Partial { jump_bytes });
            if self.record(point).is_some_and(|r| r.state == State::Lost) {
                self.urgent = Some(point);
            }
        }
        lost as u32
    }

    /// Declares `seq` lost if it is outstanding; whether it was.
    fn lose_at_point(&mut self, seq: u32) -> bool {
        let outstanding = self
            .record(seq)
            .is_some_and(|r| r.state == State::Outstanding);
        if outstanding {
            self.declare_lost(seq);
        }
        outstanding
    }

    fn declare_lost(&mut self, seq: u32) {
        let size = self.size(seq);
        let r = self.record(seq).expect("a lost packet has a record");
        debug_assert_eq!(r.state, State::Outstanding);
        r.state = State::Lost;
        self.in_flight_bytes -= size;
        self.rtx.push_back(seq);
    }

    fn rtt_sample(&mut self, rtt_ps: u64) {
        if !self.sampled {
            self.sampled = true;
            self.srtt_ps = rtt_ps;
            self.rttvar_ps = rtt_ps / 2;
            return;
        }
        let err = self.srtt_ps.abs_diff(rtt_ps);
        self.rttvar_ps = (3 * self.rttvar_ps + err) / 4;
        self.srtt_ps = (7 * self.srtt_ps + rtt_ps) / 8;
    }

    /// The retransmission timeout now.
    pub(crate) fn rto_ps(&self) -> u64 {
        if !self.sampled {
            return self.rto_min_ps;
        }
        self.rto_min_ps.max(self.srtt_ps + 4 * self.rttvar_ps)
    }

    /// A trimmed packet's NACK (echoing transmission `tx_echo`); returns false if the
    /// packet is not outstanding or the NACK is for an earlier transmission than the one in
    /// flight (late or duplicate NACK: acting on it would resend the packet again). UEC
    /// htsim's `processNack` acts on such NACKs; they are rare with its RTOs.
    ///
    /// A NACK from a switch (return-to-sender) is no answer from the receiver, which owes
    /// no pull for it; an NDP flow that then has nothing in flight and no pull owed would
    /// wait for its starvation timeout, so it resends at once (opera-sim's
    /// `NdpSrc::processRTS`: "only immediately resend if we're not expecting any more
    /// pulls"; otherwise it waits for a pull, as there).
    pub(crate) fn on_nack(
        &mut self,
        seq: u32,
        tx_echo: u8,
        last_hop: bool,
        from: NackFrom,
        now_ps: u64,
    ) -> bool {
        if let (Some(p), NackFrom::Receiver) = (&mut self.pulls, from) {
            p.answered(now_ps);
        }
        let latest = |r: &&mut Record| r.state == State::Outstanding && r.tx & 3 == tx_echo & 3;
        let Some(r) = self.record(seq).filter(latest) else {
            return false;
        };
        let rtt_ps = Some(now_ps.saturating_sub(r.sent_ps));
        self.declare_lost(seq);
        if let (Some(p), NackFrom::Switch) = (&mut self.pulls, from) {
            if !p.may_send() && self.in_flight_bytes == 0 && p.pulls_owed() == 0 {
                p.grant(1);
            }
        }
        self.cc.on_nack(&NackSignal {
            now_ps,
            bytes: self.size(seq),
            last_hop,
            rtt_ps,
            srtt_ps: self.srtt_ps,
            in_flight_bytes: self.in_flight_bytes,
        });
        true
    }

    /// When the retransmission timer is next due: `rto` after the oldest outstanding
    /// transmission, if any; else, for an NDP flow starved of pulls, when it gives itself
    /// a credit.
    pub(crate) fn rto_deadline_ps(&mut self) -> Option<u64> {
        self.oldest_deadline_ps()
            .or_else(|| self.starved_deadline_ps())
    }

    /// `rto` after the oldest outstanding transmission, if any.
    fn oldest_deadline_ps(&mut self) -> Option<u64> {
        while let Some(&(sent_ps, seq)) = self.send_order.front() {
            let live = self
                .record(seq)
                .is_some_and(|r| r.state == State::Outstanding && r.sent_ps == sent_ps);
            if live {
                return Some(sent_ps + self.rto_ps());
            }
            self.send_order.pop_front();
        }
        None
    }

    /// The timer fired: every outstanding packet whose deadline has passed is lost.
    /// One expiry is one timeout for the CCA (Swift counts consecutive timeouts; TCP's go
    /// back to the last acknowledged packet once), with the bytes of every packet lost.
    pub(crate) fn on_timeout(&mut self, now_ps: u64) -> Vec<Expired> {
        let mut expired = Vec::new();
        let mut bytes = 0;
        while let Some(due) = self.oldest_deadline_ps() {
            if due > now_ps {
                break;
            }
            let (_, seq) = self.send_order.pop_front().expect("a deadline has a send");
            let entropy = self.record(seq).expect("outstanding").entropy;
            self.declare_lost(seq);
            bytes += self.size(seq);
            expired.push((seq, entropy));
        }
        if let (Some(p), false) = (&mut self.pulls, expired.is_empty()) {
            // NDP resends timed-out packets at once (htsim `retransmit_packet`).
            p.grant(expired.len() as u32);
        }
        if !expired.is_empty() {
            // htsim's timeout leaves fast recovery and holds off the next one.
            self.dupacks = 0;
            self.recover = None;
            self.urgent = None;
            self.fr_hold = self.next_new;
            self.cc.on_loss(&LossSignal {
                now_ps,
                kind: LossKind::Timeout,
                bytes,
                srtt_ps: self.srtt_ps,
                in_flight_bytes: self.in_flight_bytes,
            });
        }
        expired
    }
}

fn sack() -> LossDetection {
    LossDetection::Sack
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::transport::cc::constant::ConstantWindow;

    const PARAMS: ReliableParams = ReliableParams {
        rto_min_ps: 1_000,
        reorder_pkts: 3,
        reorder_paths: ReorderPaths::Network,
        loss_detection: LossDetection::Sack,
    };

    fn flow(packets: u32, window_pkts: u64) -> Reliable {
        let cc = Cc::Constant(ConstantWindow::new(window_pkts * 100));
        Reliable::new(packets, 100, 40, 500, &PARAMS, 1, cc)
    }

    /// An ACK answering the first transmission of `seq`.
    fn ack(seq: u32, cumulative: u32, sack: u64) -> AckInfo {
        AckInfo {
            seq,
            cumulative,
            sack,
            ecn_echo: false,
            entropy: 0,
            tx_echo: 1,
            sack_base: cumulative + 1,
        }
    }

    fn send_all(f: &mut Reliable, now_ps: u64) -> Vec<Send> {
        std::iter::from_fn(|| f.next_seq(now_ps)).collect()
    }

    #[test]
    fn the_window_counts_bytes_in_flight_and_flags_the_packet_that_fills_it() {
        let mut f = flow(5, 3);
        let sent = send_all(&mut f, 0);
        assert_eq!(sent.iter().map(|s| s.seq).collect::<Vec<_>>(), [0, 1, 2]);
        assert!(
            sent[2].ack_req && !sent[1].ack_req,
            "window full after packet 2"
        );
        assert_eq!(f.in_flight_bytes(), 300);
        f.on_ack(&ack(0, 1, 0), 10);
        let next = send_all(&mut f, 10);
        assert_eq!(next.len(), 1);
        f.on_ack(&ack(1, 2, 0), 20);
        // Packet 4 is the last (40 bytes): 200 + 40 fits.
        let last = send_all(&mut f, 20);
        assert_eq!(
            last,
            [Send {
                seq: 4,
                retransmission: false,
                ack_req: true,
                tx: 1,
            }]
        );
        assert_eq!(f.in_flight_bytes(), 240);
    }

    #[test]
    fn sack_and_cumulative_acknowledge_each_packet_once() {
        let mut f = flow(6, 6);
        send_all(&mut f, 0);
        // Received 0, 2, 3: cumulative 1; the test ACKs put the SACK base at cumulative + 1,
        // so 2 → bit 0, 3 → bit 1.
        let e = f.on_ack(&ack(3, 1, 0b11), 5);
        assert_eq!(e.newly_acked, 3);
        assert_eq!(f.on_ack(&ack(2, 1, 0b11), 6).newly_acked, 0, "nothing new");
        assert_eq!(f.in_flight_bytes(), 100 + 100 + 40);
        let e = f.on_ack(&ack(1, 6, 0), 7);
        assert_eq!(e.newly_acked, 3);
        assert!(f.is_complete() && f.in_flight_bytes() == 0);
    }

    #[test]
    fn a_nack_retransmits_that_packet_before_new_data() {
        let mut f = flow(10, 4);
        send_all(&mut f, 0);
        assert!(f.on_nack(1, 1, false, NackFrom::Receiver, 50));
        assert!(
            !f.on_nack(1, 1, false, NackFrom::Receiver, 51),
            "a second NACK is stale"
        );
        assert_eq!(f.in_flight_bytes(), 300);
        let s = f.next_seq(60).unwrap();
        assert_eq!(
            s,
            Send {
                seq: 1,
                retransmission: true,
                ack_req: true,
                tx: 2,
            }
        );
        // Acknowledged later, it counts once.
        f.on_ack(&ack(1, 4, 0), 100);
        assert_eq!(f.in_flight_bytes(), 0);
        assert_eq!(f.next_seq(100).unwrap().seq, 4);
    }

    #[test]
    fn the_reordering_rule_waits_for_more_than_the_threshold() {
        let mut f = flow(10, 10);
        send_all(&mut f, 0);
        // 0 is missing; 1..=3 acknowledged: 3 above it, not more than the threshold 3.
        for s in 1..=3 {
            assert_eq!(f.on_ack(&ack(s, 0, 0), 10).reorder_losses, 0);
        }
        assert_eq!(f.on_ack(&ack(4, 0, 0), 11).reorder_losses, 1);
        let r = f.next_seq(12).unwrap();
        assert!(r.retransmission && r.seq == 0);
        // The retransmission is not judged by the rule again.
        for s in 5..10 {
            assert_eq!(f.on_ack(&ack(s, 0, 0), 13).reorder_losses, 0);
        }
    }

    fn dupack_flow(packets: u32, window_pkts: u64, threshold: u32) -> Reliable {
        let params = ReliableParams {
            reorder_pkts: threshold,
            loss_detection: LossDetection::Dupack,
            ..PARAMS
        };
        let cc = Cc::Constant(ConstantWindow::new(window_pkts * 100));
        Reliable::new(packets, 100, 40, 500, &params, 1, cc)
    }

    /// The packets queued for retransmission, in order.
    fn lost(f: &Reliable) -> Vec<u32> {
        f.rtx.iter().copied().collect()
    }

    #[test]
    fn the_loss_threshold_counts_the_flows_own_paths_only_under_reorder_paths_flow() {
        let network = ReliableParams {
            reorder_pkts: 3 + 36,
            ..PARAMS
        };
        let flow = ReliableParams {
            reorder_paths: ReorderPaths::Flow,
            ..network
        };
        // k = 12 fat tree: one edge switch, one pod, two pods.
        for (paths, want) in [(1, 4), (6, 9), (36, 39)] {
            assert_eq!(flow.threshold_pkts(paths), want);
            assert_eq!(network.threshold_pkts(paths), 39);
        }
        // A rule that is off (trimming, NSCC) stays off.
        let off = ReliableParams {
            reorder_pkts: u32::MAX,
            ..flow
        };
        assert_eq!(off.threshold_pkts(6), u32::MAX);
    }

    #[test]
    fn dupack_mode_fast_retransmits_on_exactly_the_threshold_th_duplicate() {
        // Packet 0 is missing; packets 1.. arrive, each ACK's cumulative point stays at 0.
        let mut f = dupack_flow(20, 20, 3);
        send_all(&mut f, 0);
        for s in 1..=2 {
            assert_eq!(f.on_ack(&ack(s, 0, 0), 10).reorder_losses, 0, "dup {s}");
        }
        assert_eq!(f.on_ack(&ack(3, 0, 0), 11).reorder_losses, 1, "third dup");
        assert_eq!(lost(&f), [0]);
        // More duplicates in recovery lose nothing more, even past the threshold.
        for s in 4..=9 {
            assert_eq!(f.on_ack(&ack(s, 0, 0), 12).reorder_losses, 0);
        }
        assert_eq!(lost(&f), [0]);
    }

    #[test]
    fn dupack_mode_tolerates_reordering_below_the_threshold_and_a_new_point_resets_the_count() {
        let mut f = dupack_flow(20, 20, 3);
        send_all(&mut f, 0);
        // Two duplicates, then packet 0 arrives late: no loss, the count restarts.
        f.on_ack(&ack(1, 0, 0), 10);
        f.on_ack(&ack(2, 0, 0), 10);
        assert_eq!(f.on_ack(&ack(0, 3, 0), 11).reorder_losses, 0);
        f.on_ack(&ack(4, 3, 0), 12);
        f.on_ack(&ack(5, 3, 0), 12);
        assert!(lost(&f).is_empty());
        // The sack rule would have declared 0 lost 3 packets below 4 (here: never sent
        // twice, never lost). A stale ACK below the point is not a duplicate.
        assert_eq!(f.on_ack(&ack(1, 0, 0), 13).reorder_losses, 0);
        assert_eq!(f.on_ack(&ack(6, 3, 0), 14).reorder_losses, 1);
        assert_eq!(lost(&f), [3]);
    }

    #[test]
    fn dupack_mode_resends_each_hole_a_partial_ack_uncovers_until_recovery_ends() {
        // Packets 0 and 5 are missing out of 0..10.
        let mut f = dupack_flow(20, 10, 3);
        send_all(&mut f, 0);
        for s in 1..=3 {
            f.on_ack(&ack(s, 0, 0), 10);
        }
        assert_eq!(lost(&f), [0]);
        assert_eq!(f.recover, Some(10));
        // The retransmission of 0 arrives: the point moves to 5 < 10, a partial ACK.
        f.next_seq(20).expect("the retransmission of 0");
        assert_eq!(f.on_ack(&ack(0, 5, 0), 30).reorder_losses, 1);
        assert_eq!(lost(&f), [5]);
        // Packet 5's retransmission completes the window: recovery ends.
        f.next_seq(40).expect("the retransmission of 5");
        assert_eq!(f.on_ack(&ack(5, 10, 0), 50).reorder_losses, 0);
        assert_eq!(f.recover, None);
    }

    #[test]
    fn dupack_mode_after_a_timeout_holds_fast_retransmit_until_the_point_recovers() {
        let mut f = dupack_flow(20, 4, 3);
        send_all(&mut f, 0);
        let expired = f.on_timeout(10_000);
        assert_eq!(expired.len(), 4);
        // Resent 0..4; while the point is below 4, duplicates do not fast retransmit.
        send_all(&mut f, 10_000);
        for _ in 0..5 {
            assert_eq!(f.on_ack(&ack(1, 0, 0), 10_100).reorder_losses, 0);
        }
    }

    /// The path of the CCA tests' flows: 100-byte packets, a 500 ps RTT, a 1,000-byte BDP.
    fn small_env() -> crate::transport::cc::CcEnv {
        crate::transport::cc::CcEnv {
            mtu_bytes: 100,
            mss_bytes: 90,
            line_rate_bps: 800_000_000_000,
            base_rtt_ps: 500,
            network_rtt_ps: 500,
            bdp_bytes: 1_000,
            network_bdp_bytes: 1_000,
            hops: 1,
            trimming: false,
        }
    }

    /// A NewReno DCTCP flow (`host.dctcp.recovery = "newreno"`) of 100-byte packets
    /// (MTU 100), initial window `window_pkts`, on the duplicate-ACK rule with threshold 3.
    fn newreno_flow(packets: u32, window_pkts: f64) -> Reliable {
        use crate::scenario::cc::{DctcpConfig, DctcpRecovery};
        use crate::transport::cc::dctcp::Dctcp;
        let env = small_env();
        let cfg = DctcpConfig {
            init_cwnd_pkts: window_pkts,
            recovery: DctcpRecovery::Newreno,
            ..DctcpConfig::default()
        };
        let params = ReliableParams {
            loss_detection: LossDetection::Dupack,
            ..PARAMS
        };
        let cc = Cc::Dctcp(Dctcp::new(&cfg, &env));
        Reliable::new(packets, 100, 40, 500, &params, 1, cc)
    }

    fn seqs(v: &[Send]) -> Vec<(u32, bool)> {
        v.iter().map(|s| (s.seq, s.retransmission)).collect()
    }

    #[test]
    fn newreno_counts_the_window_from_the_cumulative_point_and_recovers_as_htsim() {
        let mut f = newreno_flow(40, 20.0);
        assert_eq!(send_all(&mut f, 0).len(), 20);
        // 0 and 10 are lost. Two duplicates SACK 1 and 2: 1 800 B in flight, but the window
        // counts from the cumulative point (2 000 B sent above it): nothing new goes.
        f.on_ack(&ack(1, 0, 0), 10);
        f.on_ack(&ack(2, 0, 0), 10);
        assert!(send_all(&mut f, 10).is_empty());
        assert_eq!(f.cwnd_bytes(), 2_000, "no growth on duplicates");
        // The third: ssthresh 1 000, cwnd 1 300; 0 goes although 1 600 B are in flight.
        f.on_ack(&ack(3, 0, 0), 11);
        assert_eq!(f.cwnd_bytes(), 1_300);
        assert_eq!(seqs(&send_all(&mut f, 11)), [(0, true)]);
        // 15 more duplicates: +100 each, 2 800: 8 new packets fit above the point (2 000).
        for s in (4..=9).chain(11..=19) {
            f.on_ack(&ack(s, 0, 0), 12);
        }
        assert_eq!(f.cwnd_bytes(), 2_800);
        let new: Vec<_> = (20..28).map(|s| (s, false)).collect();
        assert_eq!(seqs(&send_all(&mut f, 12)), new);
        // 0's retransmission arrives: point 10 < recover 20, a partial ACK of 1 000 B:
        // cwnd 2 800 − 1 000 + 100 = 1 900; 10 goes at once, then one new packet
        // (1 800 B above the point + 100 = 1 900).
        f.on_ack(&ack(0, 10, 0x1ff), 20);
        assert_eq!(f.cwnd_bytes(), 1_900);
        assert_eq!(f.urgent, Some(10));
        assert_eq!(seqs(&send_all(&mut f, 20)), [(10, true), (28, false)]);
        assert_eq!(f.urgent, None);
        // 10's retransmission (and 20, 21) arrive: point 22 ≥ 20, the full ACK:
        // cwnd = min(ssthresh 1 000, 700 B above the point + 100) = 800.
        f.on_ack(&ack(10, 22, 0), 30);
        assert_eq!((f.cwnd_bytes(), f.recover), (800, None));
        // Out of recovery, a jump of 3 packets credits one: 900 (slow start below 1 000).
        f.on_ack(&ack(22, 25, 0), 40);
        assert_eq!(f.cwnd_bytes(), 900);
    }

    #[test]
    fn the_timer_fires_no_earlier_than_rto_after_the_oldest_transmission() {
        let mut f = flow(3, 3);
        f.next_seq(0);
        f.next_seq(400);
        assert_eq!(f.rto_deadline_ps(), Some(1_000));
        assert!(f.on_timeout(999).is_empty());
        f.set_entropy(0, 7);
        assert_eq!(f.on_timeout(1_000), vec![(0, 7)]);
        assert_eq!(f.rto_deadline_ps(), Some(1_400));
        // The retransmission of 0 is sent at 1 200: the oldest is then packet 1.
        assert_eq!(f.next_seq(1_200).unwrap().seq, 0);
        assert_eq!(f.rto_deadline_ps(), Some(1_400));
        f.on_ack(&ack(1, 0, 0), 1_300);
        // First sample 900: srtt 900, rttvar 450, rto = 900 + 4·450 = 2 700 after 1 200.
        assert_eq!(f.rto_deadline_ps(), Some(3_900));
        assert_eq!(f.srtt_ps(), 900);
    }

    #[test]
    fn one_timer_expiry_is_one_timeout_for_the_cca_however_many_packets_it_finds_lost() {
        use crate::scenario::cc::SwiftConfig;
        use crate::transport::cc::swift::Swift;
        let env = small_env();
        // Two consecutive timeouts would reset Swift's window to its minimum.
        let cfg = SwiftConfig {
            retx_reset_threshold: 2,
            ..SwiftConfig::default()
        };
        let cc = Cc::Swift(Swift::new(&cfg, &env, None));
        let mut f = Reliable::new(10, 100, 100, 500, &PARAMS, 1, cc);
        assert_eq!(f.cwnd_bytes(), 1_000, "one BDP");
        assert_eq!(send_all(&mut f, 0).len(), 10);
        assert_eq!(f.on_timeout(1_000).len(), 10, "all ten overdue");
        // One multiplicative decrease (1 - max_mdf = 0.5), not a reset to 10 B.
        assert_eq!(f.cwnd_bytes(), 500);
    }

    #[test]
    fn an_ndp_flow_sends_on_credit_retransmissions_first() {
        // A window of 100 packets never binds: only credit does.
        let mut f = flow(5, 100).with_pull_credit(2);
        let seqs = |v: Vec<Send>| v.iter().map(|s| s.seq).collect::<Vec<_>>();
        assert_eq!(seqs(send_all(&mut f, 0)), [0, 1], "the initial window");
        assert!(!f.has_data(), "no credit left");
        assert_eq!(f.on_pull(1, 10), 1);
        assert_eq!(seqs(send_all(&mut f, 10)), [2]);
        // A NACK alone sends nothing; the next pull resends the NACKed packet.
        assert!(f.on_nack(2, 1, true, NackFrom::Receiver, 20));
        assert!(send_all(&mut f, 20).is_empty());
        f.on_pull(2, 25);
        let r = f.next_seq(25).unwrap();
        assert!(r.retransmission && r.seq == 2);
    }

    #[test]
    fn a_returned_header_is_resent_at_once_only_when_no_pull_can_come() {
        // Two packets in flight: the switch returns packet 0; packet 1's answer will bring a
        // pull, so packet 0 waits for it.
        let mut f = flow(4, 100).with_pull_credit(2);
        send_all(&mut f, 0);
        assert!(f.on_nack(0, 1, false, NackFrom::Switch, 10));
        assert!(send_all(&mut f, 10).is_empty(), "packet 1 is in flight");
        // Packet 1 is acknowledged: the receiver owes its pull, still no resend.
        let mut a = ack(1, 0, 0);
        a.sack_base = 2;
        f.on_ack(&a, 20);
        assert_eq!(f.in_flight_bytes(), 0);
        assert!(send_all(&mut f, 20).is_empty(), "a pull is owed");
        // Its pull comes and resends packet 0.
        f.on_pull(1, 30);
        let r = f.next_seq(30).unwrap();
        assert!(r.retransmission && r.seq == 0);
        // Now packet 0 (the only one in flight, no pull owed: pull 1 came) is returned again:
        // nothing could pull it, so it goes at once, as the second transmission's echo says.
        assert!(f.on_nack(0, 2, false, NackFrom::Switch, 40));
        let r = f.next_seq(40).unwrap();
        assert!(r.retransmission && r.seq == 0 && r.tx == 3);
        // The same from the receiver (it saw the header): its pull will come, no resend.
        assert!(f.on_nack(0, 3, false, NackFrom::Receiver, 50));
        assert!(send_all(&mut f, 50).is_empty());
    }

    #[test]
    fn an_ndp_flow_whose_last_pull_was_lost_gives_itself_a_credit_one_rto_later() {
        let mut f = flow(4, 100).with_pull_credit(2);
        send_all(&mut f, 0);
        // Both acknowledged (cumulative 2) at 30; their pulls are lost.
        let mut a = ack(1, 2, 0);
        a.sack_base = 3;
        f.on_ack(&a, 30);
        assert_eq!(f.in_flight_bytes(), 0);
        // The first RTT sample (30) gives srtt 30, rttvar 15: rto = rto_min = 1 000.
        assert_eq!(f.rto_deadline_ps(), Some(1_030));
        assert!(!f.take_starved_credit(1_029));
        assert!(f.take_starved_credit(1_030));
        assert_eq!(f.next_seq(1_030).map(|s| s.seq), Some(2));
        assert!(!f.has_data(), "one credit, one packet");
        // A timed-out packet is resent at once, without a pull.
        assert_eq!(f.on_timeout(2_030), vec![(2, 0)]);
        assert_eq!(f.next_seq(2_030).map(|s| (s.seq, s.tx)), Some((2, 2)));
    }

    #[test]
    fn a_late_nack_of_an_earlier_transmission_is_stale() {
        let mut f = flow(2, 2);
        f.next_seq(0);
        assert_eq!(f.on_timeout(1_000).len(), 1);
        assert_eq!(f.next_seq(1_100).unwrap().tx, 2);
        assert!(
            !f.on_nack(0, 1, false, NackFrom::Receiver, 1_200),
            "NACK of transmission 1 while 2 is out"
        );
        assert!(
            f.on_nack(0, 2, false, NackFrom::Receiver, 1_300),
            "NACK of the transmission in flight"
        );
    }

    #[test]
    fn rtt_samples_come_only_from_acks_of_the_latest_transmission() {
        let echo = |f: &mut Reliable, tx_echo, now| {
            let mut a = ack(0, 0, 0);
            a.tx_echo = tx_echo;
            f.on_ack(&a, now);
        };
        for (tx_echo, srtt) in [(1, 500), (2, 300)] {
            let mut f = flow(2, 2);
            f.next_seq(0);
            f.on_timeout(1_000);
            assert_eq!(f.next_seq(1_200).unwrap().tx, 2);
            // Acknowledged at 1 500: for the first transmission the sample would be 1 500
            // (ambiguous, not taken: srtt keeps its initial base RTT of 500); for the
            // retransmission it is 300.
            echo(&mut f, tx_echo, 1_500);
            assert_eq!(f.srtt_ps(), srtt, "echo of transmission {tx_echo}");
        }
    }

    #[test]
    fn the_recent_max_rtt_is_the_largest_sample_of_an_epoch_of_two_rtos() {
        let mut f = flow(8, 8);
        assert_eq!((f.recent_max_rtt_ps(), f.base_rtt_ps()), (0, 500));
        for t in [0, 10, 20] {
            f.next_seq(t);
        }
        f.on_ack(&ack(0, 0, 0), 700); // 700; the epoch lasts to 700 + 2 × 1 000
        f.on_ack(&ack(1, 0, 0), 1_510); // 1 500
        f.on_ack(&ack(2, 0, 0), 1_620); // 1 600
        assert_eq!(f.recent_max_rtt_ps(), 1_600);
        assert_eq!(f.next_seq(2_600).unwrap().seq, 3);
        // The first sample after 2 700 starts a new epoch.
        f.on_ack(&ack(3, 0, 0), 2_800);
        assert_eq!(f.recent_max_rtt_ps(), 200);
    }
}
