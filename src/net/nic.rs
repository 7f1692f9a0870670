//! A host's NIC: one port, the arbitration between the host's flows and its control packets
//! (ACKs), and pacing. It serves flows with data round-robin one packet at a time and
//! alternates data and control packets when both wait, or under NDP (`control_first`)
//! sends control packets first (as opera-sim's host `PriorityQueue`: headers, ACKs, NACKs
//! and pulls before data). Data is paced at `host.load` × line
//! rate: after a data packet that starts at t and holds the wire for w (gap included), the
//! next data packet starts no earlier than t + w / load.
//!
//! The NIC builds a packet only when its serializer is free (a pull model, as htsim's
//! pacers), so its queue never holds more than the packet being transmitted.

use super::event::TimerSlot;
use super::Port;
use crate::packet::Packet;
use serde::{Deserialize, Serialize};
use std::collections::VecDeque;

#[derive(Default, Serialize, Deserialize)]
pub(crate) struct Nic {
    pub port: Port,
    /// Flows (local indices) with a packet the transport would send now, round-robin.
    pub active: VecDeque<u32>,
    /// ACKs waiting for the wire.
    pub control: VecDeque<Packet>,
    last_was_control: bool,
    /// Earliest start of the next data packet (pacing).
    next_data_ps: u64,
    /// The NIC's wake-up timer (pacing gap over, or a flow starts).
    pub wake: TimerSlot,
    /// Control packets go before data whenever both wait (NDP).
    pub control_first: bool,
}

/// What the NIC sends next.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Pick {
    Control,
    Data,
}

impl Nic {
    /// An idle NIC; `control_first`: control packets always go before data.
    pub(crate) fn new(control_first: bool) -> Nic {
        Nic {
            control_first,
            ..Nic::default()
        }
    }

    /// What to send at `now_ps` (it starts at [`Nic::start_time`]), or `None` if nothing may
    /// go now. Pacing is judged at the frame's start, so a data packet due when the current
    /// inter-frame gap ends is committed now and starts exactly then.
    #[inline]
    pub(crate) fn pick(&self, now_ps: u64) -> Option<Pick> {
        let data_ok = !self.active.is_empty() && self.start_time(now_ps) >= self.next_data_ps;
        match (data_ok, !self.control.is_empty()) {
            (true, true) if self.last_was_control && !self.control_first => Some(Pick::Data),
            (_, true) => Some(Pick::Control),
            (true, false) => Some(Pick::Data),
            (false, false) => None,
        }
    }

    /// When data may go next, if some flow waits for its pacing gap.
    pub(crate) fn data_ready_at(&self) -> Option<u64> {
        (!self.active.is_empty()).then_some(self.next_data_ps)
    }

    /// The time the next frame would start if handed to the port now.
    #[inline]
    pub(crate) fn start_time(&self, now_ps: u64) -> u64 {
        now_ps.max(self.port.free_at_ps)
    }

    /// Records a pick: data starting at `begin_ps` and holding the wire `wire_ps` (gap
    /// included) delays the next data packet by `wire_ps / load`.
    #[inline]
    pub(crate) fn picked(&mut self, pick: Pick, begin_ps: u64, wire_ps: u64, load_ppm: u64) {
        self.last_was_control = pick == Pick::Control;
        if pick == Pick::Data {
            // u128: a frame may hold a slow wire for long enough that ×10⁶ overflows u64.
            let gap = wire_ps as u128 * 1_000_000 / load_ppm as u128;
            self.next_data_ps = begin_ps + u64::try_from(gap).expect("pacing gap fits in u64 ps");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn control_first_never_lets_data_pass_waiting_control() {
        let ack = crate::packet::test_packet(crate::packet::PacketKind::Ack, 64);
        for (control_first, after_control) in [(false, Pick::Data), (true, Pick::Control)] {
            let mut nic = Nic::new(control_first);
            nic.active.push_back(0);
            nic.control.push_back(ack);
            assert_eq!(nic.pick(0), Some(Pick::Control));
            nic.picked(Pick::Control, 0, 100, 1_000_000);
            assert_eq!(nic.pick(100), Some(after_control), "{control_first}");
        }
    }

    #[test]
    fn pacing_spaces_data_by_wire_time_over_load_even_for_very_long_frames() {
        let mut nic = Nic::default();
        nic.picked(Pick::Data, 1_000, 41_780, 500_000);
        assert_eq!(nic.next_data_ps, 1_000 + 83_560);
        // A frame holding a slow wire for 20 s: 2e13 ps x 1e6 overflows u64.
        nic.picked(Pick::Data, 0, 20_000_000_000_000, 500_000);
        assert_eq!(nic.next_data_ps, 40_000_000_000_000);
        // Control packets do not move the pacing clock.
        nic.picked(Pick::Control, 5, 640, 500_000);
        assert_eq!(nic.next_data_ps, 40_000_000_000_000);
    }
}
