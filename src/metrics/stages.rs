//! Queue and link statistics aggregated per stage of the fabric (host_edge, edge_agg, ...).

use super::PortStats;
use serde::{Deserialize, Serialize};

/// The [`PortStats`] of one stage's ports, summed (the maxima: the largest).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct StageStats {
    /// Ports of the stage.
    pub ports: u64,
    /// Largest queue of any of its ports, in bytes.
    pub max_bytes: u64,
    /// Largest queue of any of its ports, in packets.
    pub max_pkts: u64,
    /// Sum of the ports' ∫ queued packets dt, in packet·ps.
    pub pkt_ps_integral: u128,
    /// Sum of the ports' serializing time, in ps.
    pub busy_ps: u128,
    /// Bytes its ports sent.
    pub bytes_sent: u64,
    /// Bytes sent by the stage's busiest port.
    pub max_port_bytes_sent: u64,
    /// Packets its ports dropped.
    pub drops: u64,
    /// Packets its ports ECN-marked.
    pub ecn_marks: u64,
    /// Data packets its ports cut to a header.
    pub trims: u64,
}

impl StageStats {
    /// Adds one port of the stage.
    pub fn add_port(&mut self, s: &PortStats) {
        self.ports += 1;
        self.max_bytes = self.max_bytes.max(s.max_bytes);
        self.max_pkts = self.max_pkts.max(s.max_pkts as u64);
        self.pkt_ps_integral += s.pkt_ps_integral;
        self.busy_ps += s.busy_ps as u128;
        self.bytes_sent += s.bytes_sent;
        self.max_port_bytes_sent = self.max_port_bytes_sent.max(s.bytes_sent);
        self.drops += s.drops as u64;
        self.ecn_marks += s.ecn_marks as u64;
        self.trims += s.trims as u64;
    }

    /// Adds another part's statistics of the same stage.
    pub fn merge(&mut self, o: &StageStats) {
        self.ports += o.ports;
        self.max_bytes = self.max_bytes.max(o.max_bytes);
        self.max_pkts = self.max_pkts.max(o.max_pkts);
        self.pkt_ps_integral += o.pkt_ps_integral;
        self.busy_ps += o.busy_ps;
        self.bytes_sent += o.bytes_sent;
        self.max_port_bytes_sent = self.max_port_bytes_sent.max(o.max_port_bytes_sent);
        self.drops += o.drops;
        self.ecn_marks += o.ecn_marks;
        self.trims += o.trims;
    }

    /// The busiest port's bytes over the stage's mean bytes per port (1 = perfectly even; the
    /// Ofan paper's per-stage worst-case link overload when the ideal split is uniform).
    /// `None` if the stage sent nothing.
    pub fn link_overload(&self) -> Option<f64> {
        (self.bytes_sent > 0)
            .then(|| self.max_port_bytes_sent as f64 * self.ports as f64 / self.bytes_sent as f64)
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn link_overload_is_the_busiest_port_over_the_mean() {
        let mut st = StageStats::default();
        assert_eq!(st.link_overload(), None);
        for bytes in [100, 300, 200, 200] {
            st.add_port(&PortStats {
                bytes_sent: bytes,
                ..PortStats::default()
            });
        }
        // Mean 200, busiest 300.
        assert_eq!(st.link_overload(), Some(1.5));
        let mut other = StageStats::default();
        other.add_port(&PortStats {
            bytes_sent: 600,
            ..PortStats::default()
        });
        st.merge(&other);
        // Five ports, 1 400 bytes: mean 280, busiest 600.
        assert!((st.link_overload().unwrap() - 600.0 / 280.0).abs() < 1e-12);
    }
}
