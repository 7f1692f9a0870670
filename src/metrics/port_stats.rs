//! Integer statistics of one output port, kept by the port and merged per stage at the end.

use serde::{Deserialize, Serialize};

#[derive(Clone, Copy, Default, Debug, Serialize, Deserialize)]
pub struct PortStats {
    pub max_bytes: u64,
    pub max_pkts: u64,
    /// ∫ queued packets dt, in packet·ps.
    pub pkt_ps_integral: u128,
    pub last_change_ps: u64,
    /// Time spent serializing (inter-frame gaps included), in ps.
    pub busy_ps: u64,
    pub bytes_sent: u64,
    pub pkts_sent: u64,
    pub drops: u64,
    pub ecn_marks: u64,
}
