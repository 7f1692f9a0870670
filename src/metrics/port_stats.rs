//! Integer statistics of one output port, kept by the port and merged per stage at the end.
//! Laid out to share the port's cache lines: every field is written on the per-packet path.

use serde::{Deserialize, Serialize};

/// Statistics of one output port.
#[derive(Clone, Copy, Default, Debug, Serialize, Deserialize)]
pub struct PortStats {
    /// ∫ queued packets dt, in packet·ps.
    pub pkt_ps_integral: u128,
    /// Most bytes queued at once (all queues, the packet on the wire included).
    pub max_bytes: u64,
    /// When `pkt_ps_integral` was last brought up to date, in ps.
    pub last_change_ps: u64,
    /// Time spent serializing (inter-frame gaps included), in ps.
    pub busy_ps: u64,
    /// Bytes transmitted (packet sizes, inter-frame gaps not counted).
    pub bytes_sent: u64,
    /// Most packets queued at once (all queues, the packet on the wire included).
    pub max_pkts: u32,
    /// Packets dropped (saturating).
    pub drops: u32,
    /// Packets ECN-marked (saturating).
    pub ecn_marks: u32,
    /// Data packets cut to a header (saturating).
    pub trims: u32,
}
