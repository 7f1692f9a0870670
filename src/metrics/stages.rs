//! Queue and link statistics aggregated per stage of the fabric (host_edge, edge_agg, ...).

use super::PortStats;
use serde::{Deserialize, Serialize};

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct StageStats {
    pub ports: u64,
    pub max_bytes: u64,
    pub max_pkts: u64,
    pub pkt_ps_integral: u128,
    pub busy_ps: u128,
    pub bytes_sent: u64,
    pub drops: u64,
    pub ecn_marks: u64,
    pub trims: u64,
}

impl StageStats {
    pub fn add_port(&mut self, s: &PortStats) {
        self.ports += 1;
        self.max_bytes = self.max_bytes.max(s.max_bytes);
        self.max_pkts = self.max_pkts.max(s.max_pkts as u64);
        self.pkt_ps_integral += s.pkt_ps_integral;
        self.busy_ps += s.busy_ps as u128;
        self.bytes_sent += s.bytes_sent;
        self.drops += s.drops as u64;
        self.ecn_marks += s.ecn_marks as u64;
        self.trims += s.trims as u64;
    }

    pub fn merge(&mut self, o: &StageStats) {
        self.ports += o.ports;
        self.max_bytes = self.max_bytes.max(o.max_bytes);
        self.max_pkts = self.max_pkts.max(o.max_pkts);
        self.pkt_ps_integral += o.pkt_ps_integral;
        self.busy_ps += o.busy_ps;
        self.bytes_sent += o.bytes_sent;
        self.drops += o.drops;
        self.ecn_marks += o.ecn_marks;
        self.trims += o.trims;
    }

    /// Time-averaged packets queued per port over `[0, duration_ps]`.
    pub fn avg_pkts(&self, duration_ps: u64) -> f64 {
        if self.ports == 0 || duration_ps == 0 {
            return 0.0;
        }
        self.pkt_ps_integral as f64 / (self.ports as f64 * duration_ps as f64)
    }

    /// Mean fraction of time the stage's links were transmitting.
    pub fn utilization(&self, duration_ps: u64) -> f64 {
        if self.ports == 0 || duration_ps == 0 {
            return 0.0;
        }
        self.busy_ps as f64 / (self.ports as f64 * duration_ps as f64)
    }
}
