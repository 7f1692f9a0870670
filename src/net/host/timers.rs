//! Timers: retransmission timeouts (loss recovery), pacing gaps, NIC wake-ups, and the
//! dispatch of every timer a host sets.

use super::{FlowSender, Host};
use crate::lb::Feedback;
use crate::metrics::Metrics;
use crate::model::Model;
use crate::net::event::{Scheduler, TimerKind, TimerSeq};
use crate::time::NEVER_PS;
use crate::topology::NodeId;
use crate::transport::Sender;

impl Host {
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn on_timer<S: Scheduler>(
        &mut self,
        m: &Model,
        now_ps: u64,
        kind: TimerKind,
        gen: u32,
        arg: u64,
        out: &mut S,
        mx: &mut Metrics,
    ) {
        let released = self.flows.released(arg as u32);
        let flow = self.flows.get_mut(arg as u32);
        match kind {
            // A timer of a completed flow whose record was released: it would not fire.
            TimerKind::Rto | TimerKind::FlowPace if released => return,
            TimerKind::NicWake if self.nic.wake.fires(gen) => {
                self.nic.wake.clear();
            }
            TimerKind::Rto => {
                let f = flow.expect("timers belong to started flows");
                if !f.timers().rto.fires(gen) {
                    return;
                }
                f.timers().rto.clear();
                let Sender::Reliable(s) = &mut f.sender else {
                    unreachable!("only reliable flows arm timers")
                };
                let expired = s.on_timeout(now_ps);
                mx.counters.timeouts += expired.len() as u64;
                // NDP: a flow starved by a lost pull gives itself a credit.
                mx.counters.timeouts += s.take_starved_credit(now_ps) as u64;
                let what = Feedback::Timeout {
                    recent_max_rtt_ps: s.recent_max_rtt_ps(),
                    base_rtt_ps: s.base_rtt_ps(),
                };
                for (_, entropy) in expired {
                    m.lb.host.feedback(&mut f.path, entropy, what, now_ps);
                }
                self.after_progress(arg as u32, now_ps, out);
            }
            TimerKind::FlowPace => {
                let f = flow.expect("timers belong to started flows");
                if !f.timers().pace.fires(gen) {
                    return;
                }
                f.timers().pace.clear();
                let i = arg as u32;
                if self.after_progress(i, now_ps, out) && m.workload.pinned(self.id, i).is_some() {
                    // A background flow keeps its rate: its due packet goes before the
                    // workload's flows (which share what is left of the NIC).
                    let back = self.nic.active.pop_back();
                    debug_assert_eq!(back, Some(i));
                    self.nic.active.push_front(i);
                }
            }
            TimerKind::PullPace if self.pulls.timer.fires(gen) => {
                self.pulls.timer.clear();
                self.serve_pulls(m, now_ps, out);
            }
            TimerKind::NicWake | TimerKind::PullPace => return, // superseded
            TimerKind::RlbSlot => {
                let r = self
                    .rlb
                    .as_deref_mut()
                    .expect("RotorLB hosts set slot timers");
                if !r.on_slot(m, self.id, now_ps, gen) {
                    return;
                }
            }
            TimerKind::SwitchLb => unreachable!("host {} has no switch LB", self.id),
        }
        self.try_send(m, now_ps, out, mx);
    }

    /// Wakes the NIC at `at_ps` unless it already wakes between now and then.
    pub(super) fn set_wake<S: Scheduler>(&mut self, at_ps: u64, out: &mut S) {
        let w = &self.nic.wake;
        if w.at_ps != NEVER_PS && w.at_ps <= at_ps {
            return;
        }
        let (id, slot) = (self.id, &mut self.nic.wake);
        self.timers.set(slot, id, TimerKind::NicWake, 0, at_ps, out);
    }
}

/// Wakes flow `i` at `at_ps` to send again (a CCA's pacing gap, a background flow's rate).
pub(super) fn arm_pace<S: Scheduler>(
    timers: &mut TimerSeq,
    host: NodeId,
    i: u32,
    f: &mut FlowSender,
    at_ps: u64,
    out: &mut S,
) {
    timers.set(
        &mut f.timers().pace,
        host,
        TimerKind::FlowPace,
        i as u64,
        at_ps,
        out,
    );
}

/// Arms flow `i`'s retransmission timer for its oldest outstanding packet, unless it is set
/// to fire no later (a timer that fires early finds nothing due and re-arms: cheaper than
/// re-arming on every ACK).
pub(super) fn arm_rto<S: Scheduler>(
    timers: &mut TimerSeq,
    host: NodeId,
    i: u32,
    f: &mut FlowSender,
    now_ps: u64,
    out: &mut S,
) {
    let (Sender::Reliable(s), Some(t)) = (&mut f.sender, &mut f.timers) else {
        return;
    };
    // A sample may shrink the RTO below the oldest packet's age: then it is due now (as
    // htsim's `startRTO` clamps).
    match s.rto_deadline_ps().map(|due| due.max(now_ps)) {
        Some(due) if t.rto.at_ps == NEVER_PS || due < t.rto.at_ps => {
            timers.set(&mut t.rto, host, TimerKind::Rto, i as u64, due, out);
        }
        None if t.rto.at_ps != NEVER_PS => t.rto.clear(),
        _ => {}
    }
}
