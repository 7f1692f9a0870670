//! `host.cc = "constant"`: a fixed window (`host.window_bdp` BDPs of the fabric), whatever
//! the network says. Losses are recovered by the transport; the window never moves.

use super::CongestionControl;
use super::{AckSignal, LossSignal, NackSignal};
use serde::{Deserialize, Serialize};

#[derive(Clone, Debug, Serialize, Deserialize)]
pub(crate) struct ConstantWindow {
    cwnd_bytes: u64,
}

impl ConstantWindow {
    pub(crate) fn new(cwnd_bytes: u64) -> ConstantWindow {
        assert!(cwnd_bytes > 0, "a window holds a packet");
        ConstantWindow { cwnd_bytes }
    }
}

impl CongestionControl for ConstantWindow {
    fn on_ack(&mut self, _s: &AckSignal) {}
    fn on_nack(&mut self, _s: &NackSignal) {}
    fn on_loss(&mut self, _s: &LossSignal) {}

    fn cwnd_bytes(&self) -> u64 {
        self.cwnd_bytes
    }

    fn pacing_gap_ps(&self) -> Option<u64> {
        None
    }
}
