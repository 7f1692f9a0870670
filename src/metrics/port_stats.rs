//! Integer statistics of one output port, kept by the port and merged per stage at the end.
//! Laid out to share the port's cache lines: every field is written on the per-packet path.

use serde::{Deserialize, Serialize};

#[derive(Clone, Copy, Default, Debug, Serialize, Deserialize)]
pub struct PortStats {
    /// ∫ queued packets dt, in packet·ps.
    pub pkt_ps_integral: u128,
    pub max_bytes: u64,
    pub last_change_ps: u64,
    /// Time spent serializing (inter-frame gaps included), in ps.
    pub busy_ps: u64,
    pub bytes_sent: u64,
    pub max_pkts: u32,
    /// Packets dropped (saturating).
    pub drops: u32,
    /// Packets ECN-marked (saturating).
    pub ecn_marks: u32,
    /// Data packets cut to a header (saturating).
    pub trims: u32,
}
