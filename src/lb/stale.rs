//! Stale queue state (the PSP paper's, §IV; `lb.state_update_period_ns`): a switch's queue-aware
//! policy decides from a copy of its ports' queued bytes taken at the last refresh, refreshed
//! by the switch's LB timer every period, instead of from the live queues. Two decisions less
//! than one period apart see the same values, whatever the queues did in between.
//!
//! Refreshes happen at the multiples of the period. A refresh that finds every queue of the
//! switch empty stops the timer (the snapshot is then all zeros and stays true until a packet
//! is queued again); the first packet queued afterwards wakes it at the next multiple, so the
//! snapshot is always the one an uninterrupted timer would have taken, and an idle fabric has
//! no pending events (a run whose packets were lost without recovery still ends).

use super::switch_policy::QueueView;
use serde::{Deserialize, Serialize};

/// The queued bytes of every port of a switch, as of the last refresh.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub(crate) struct Snapshot {
    period_ps: u64,
    bytes: Vec<u64>,
    /// The ports' sent-bytes counters, for policies that read them (DLB); else empty.
    sent: Vec<u64>,
}

impl Snapshot {
    /// A snapshot of `ports` idle ports (the state at time 0), refreshed every `period_ps`;
    /// `with_sent`: it also copies the ports' sent-bytes counters.
    pub(crate) fn new(ports: u16, period_ps: u64, with_sent: bool) -> Snapshot {
        assert!(period_ps > 0, "a stale snapshot needs a positive period");
        Snapshot {
            period_ps,
            bytes: vec![0; ports as usize],
            sent: vec![0; if with_sent { ports as usize } else { 0 }],
        }
    }

    /// Bytes a snapshot of `ports` ports holds (for `weft validate`).
    pub(crate) fn state_bytes(ports: u16, with_sent: bool) -> usize {
        (1 + with_sent as usize) * ports as usize * std::mem::size_of::<u64>()
    }

    /// The refresh period.
    pub(crate) fn period_ps(&self) -> u64 {
        self.period_ps
    }

    /// The first refresh.
    pub(crate) fn first_refresh_ps(&self) -> u64 {
        self.period_ps
    }

    /// Copies the live queues; returns when to refresh next, or `None` when every queue is
    /// empty (sleep until [`Snapshot::wake_ps`]).
    pub(crate) fn refresh<Q: QueueView>(&mut self, now_ps: u64, live: &Q) -> Option<u64> {
        let mut any = false;
        for (p, b) in self.bytes.iter_mut().enumerate() {
            *b = live.queued_bytes(p as u16);
            any |= *b > 0;
        }
        for (p, b) in self.sent.iter_mut().enumerate() {
            *b = live.sent_bytes(p as u16);
        }
        any.then_some(now_ps + self.period_ps)
    }

    /// A packet was queued at `now_ps` while asleep: the next refresh is at the first multiple
    /// of the period at or after now (a refresh at `now_ps` itself comes after every arrival
    /// of that instant, as timers follow arrivals in the event order).
    pub(crate) fn wake_ps(&self, now_ps: u64) -> u64 {
        now_ps.div_ceil(self.period_ps) * self.period_ps
    }
}

impl QueueView for Snapshot {
    #[inline]
    fn queued_bytes(&self, p: u16) -> u64 {
        self.bytes[p as usize]
    }
    #[inline]
    fn sent_bytes(&self, p: u16) -> u64 {
        self.sent.get(p as usize).copied().unwrap_or(0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::lb::TestQueues as Live;

    #[test]
    fn reads_between_refreshes_do_not_change_and_idle_switches_sleep() {
        let mut s = Snapshot::new(3, 100_000, false);
        let mut live = Live(vec![0, 5_000, 0]);
        assert_eq!(s.queued_bytes(1), 0, "the state at time 0");
        assert_eq!(s.refresh(100_000, &live), Some(200_000));
        live.0[1] = 9_000;
        live.0[2] = 4_000;
        assert_eq!((s.queued_bytes(1), s.queued_bytes(2)), (5_000, 0));
        assert_eq!(s.refresh(200_000, &live), Some(300_000));
        assert_eq!((s.queued_bytes(1), s.queued_bytes(2)), (9_000, 4_000));
        live.0 = vec![0; 3];
        assert_eq!(s.refresh(300_000, &live), None, "every queue empty: sleep");
        assert_eq!(s.wake_ps(300_001), 400_000);
        assert_eq!(s.wake_ps(400_000), 400_000);
        assert_eq!(Snapshot::state_bytes(3, false), 24);
        assert_eq!(Snapshot::state_bytes(3, true), 48);
    }
}
