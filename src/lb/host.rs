//! Host-side LB: what a host puts in a packet so that switches spread it (entropy value, DRB
//! path code), and the transport's per-packet feedback. Per-flow state ([`FlowPath`]) lives
//! in the flow's sender (data) or receiver (ACKs); the host's RNG stream draws.

use super::drb;
use crate::packet::NO_VIA;
use crate::topology::{Fabric, NodeId};
use rand::Rng;
use rand_pcg::Pcg32;
use serde::{Deserialize, Serialize};

/// The host side of an `lb.policy` (see [`super::switch_and_host`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HostLb {
    /// Entropy 0: switches decide alone.
    Fixed,
    /// One random entropy value per flow.
    Ecmp,
    /// A fresh random entropy value per packet.
    Rps,
    /// Digit-reversed path codes, one pointer per flow and direction.
    Drb,
}

/// Per-flow (and per direction) host LB state.
#[derive(Clone, Copy, Debug, Serialize, Deserialize)]
pub struct FlowPath {
    /// The flow's entropy value, drawn when it starts.
    pub entropy: u16,
    /// DRB: the next path code (`u32::MAX` until the first packet).
    pub drb_next: u32,
}

impl FlowPath {
    /// State for the receiving side of a flow (its ACKs).
    pub const RECEIVER: FlowPath = FlowPath {
        entropy: 0,
        drb_next: u32::MAX,
    };
}

/// What became of a packet, as the sender learns it (ACK, NACK or timer), with the entropy
/// value it carried. The paced transport reports `Delivered` and `Ecn`; loss recovery adds
/// the others.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Feedback {
    Delivered,
    Ecn,
    Nack,
    Timeout,
}

impl HostLb {
    /// State for a flow starting now. Every flow draws its entropy value whatever the policy,
    /// so that the host's stream does not depend on the policy's needs.
    pub fn start_flow(&self, entropy_paths: u32, rng: &mut Pcg32) -> FlowPath {
        FlowPath {
            entropy: rng.gen_range(0..entropy_paths) as u16,
            drb_next: u32::MAX,
        }
    }

    /// (entropy, path code) for the next packet from `src` to `dst` of a flow whose state is
    /// `path`. `echo` is the entropy of the data packet an ACK answers (ECMP echoes it).
    #[allow(clippy::too_many_arguments)]
    #[inline]
    pub fn next_packet(
        &self,
        fabric: &Fabric,
        path: &mut FlowPath,
        src: NodeId,
        dst: NodeId,
        echo: Option<u16>,
        entropy_paths: u32,
        rng: &mut Pcg32,
    ) -> (u16, u32) {
        match self {
            HostLb::Fixed => (0, NO_VIA),
            HostLb::Ecmp => (echo.unwrap_or(path.entropy), NO_VIA),
            HostLb::Rps => (rng.gen_range(0..entropy_paths) as u16, NO_VIA),
            HostLb::Drb => (0, drb::next_via(fabric, src, dst, &mut path.drb_next, rng)),
        }
    }

    /// Whether the receiver of a flow keeps per-flow LB state for its ACKs.
    pub fn needs_receiver_state(&self) -> bool {
        *self == HostLb::Drb
    }

    /// Feedback for a packet of the flow whose state is `path`. No policy of this set uses
    /// it yet (REPS, bitmap and mixed will).
    #[inline]
    pub fn feedback(&self, _path: &mut FlowPath, _entropy: u16, _what: Feedback) {}
}
