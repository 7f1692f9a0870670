//! Per-flow receiver state: what has arrived (for duplicates and the cumulative point and
//! SACK to echo) and the receiver side's LB state for its ACKs. The paced transport needs it
//! only when the host LB policy keeps per-flow state for ACKs (DRB); hosts then keep it from
//! a flow's first packet until its last has arrived.

use super::seqset::SeqSet;
use crate::lb::FlowPath;
use serde::{Deserialize, Serialize};

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Receiver {
    pub received: SeqSet,
    pub path: FlowPath,
}

impl Default for Receiver {
    fn default() -> Self {
        Receiver {
            received: SeqSet::default(),
            path: FlowPath::RECEIVER,
        }
    }
}

impl Receiver {
    /// Records data packet `seq`; returns false for a duplicate.
    pub fn on_data(&mut self, seq: u32) -> bool {
        self.received.insert(seq)
    }
}
