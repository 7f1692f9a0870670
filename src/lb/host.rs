//! Host-side LB: what a host puts in a packet so that switches spread it (entropy value, DRB
//! path code), and the transport's per-packet feedback. Per-flow state ([`FlowPath`]) lives
//! in the flow's sender (data) or receiver (ACKs); the host's RNG stream draws.

use super::reps::{RepsParams, RepsState};
use super::{drb, valiant};
use crate::packet::{flags, NO_VIA};
use crate::topology::{Fabric, NodeId};
use rand::Rng;
use rand_pcg::Pcg32;
use serde::{Deserialize, Serialize};

/// The host side of an `lb.policy` (see [`super::switch_and_host`]).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum HostLb {
    /// Entropy 0: switches decide alone.
    Fixed,
    /// One random entropy value per flow.
    Ecmp,
    /// A fresh random entropy value per packet.
    Rps,
    /// Digit-reversed path codes, one pointer per flow and direction.
    Drb,
    /// Recycled good entropy values per flow, exploration and freezing (`lb/reps.rs`).
    Reps(RepsParams),
    /// A random intermediate top-tier switch per data packet (or per flow), as a path code
    /// (`lb/valiant.rs`).
    Valiant { per_flow: bool },
}

/// Per-flow (and per direction) host LB state. Policies whose state is larger than a word
/// keep it behind a box allocated only for their flows (REPS), so the other policies' flows
/// pay one pointer for it.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct FlowPath {
    /// The flow's entropy value, drawn when it starts.
    pub entropy: u16,
    /// DRB: the next path code; Valiant per flow: the flow's code (`u32::MAX` until the
    /// first packet).
    pub drb_next: u32,
    /// REPS: the sender's buffer of good entropy values (`None` for every other policy, and
    /// on the receiving side: ACKs echo the data packet's value).
    pub reps: Option<Box<RepsState>>,
}

impl FlowPath {
    /// State for the receiving side of a flow (its ACKs).
    pub const RECEIVER: FlowPath = FlowPath {
        entropy: 0,
        drb_next: u32::MAX,
        reps: None,
    };
}

/// What became of a packet, as the sender learns it (ACK, NACK or timer), with the entropy
/// value it carried. The paced transport reports `Delivered` and `Ecn`; loss recovery adds
/// the others. A last-hop NACK is `Delivered` or `Ecn` (incast, not a bad path: C4).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Feedback {
    Delivered,
    Ecn,
    /// A trim before the last hop.
    Nack,
    /// The retransmission timer declared the packet lost, with the facts that tell a failed
    /// path from congestion: the largest RTT sample of the flow's current epoch of two RTOs
    /// (0 if none yet) and its path's base RTT.
    Timeout {
        recent_max_rtt_ps: u64,
        base_rtt_ps: u64,
    },
}

impl Feedback {
    /// An ACK's feedback: ECN echoed or not.
    pub fn of_ack(ecn_echo: bool) -> Feedback {
        if ecn_echo {
            Feedback::Ecn
        } else {
            Feedback::Delivered
        }
    }

    /// A NACK's feedback. A trim at the last hop means incast, not a bad path (ALGORITHMS.md
    /// C4): it counts as the ACK the packet would have had.
    pub fn of_nack(last_hop: bool, ecn_echo: bool) -> Feedback {
        if last_hop {
            Feedback::of_ack(ecn_echo)
        } else {
            Feedback::Nack
        }
    }
}

impl HostLb {
    /// State for a flow starting now; `bdp_pkts` is its path's bandwidth-delay product in
    /// full packets (REPS explores that many packets after a freeze unless told otherwise).
    /// Every flow draws its entropy value whatever the policy, so that the host's stream
    /// does not depend on the policy's needs.
    pub fn start_flow(&self, entropy_paths: u32, bdp_pkts: u64, rng: &mut Pcg32) -> FlowPath {
        let reps = match self {
            HostLb::Reps(p) => {
                let explore = p
                    .explore_pkts
                    .unwrap_or(bdp_pkts.min(u16::MAX as u64) as u16);
                Some(Box::new(RepsState::new(explore)))
            }
            _ => None,
        };
        FlowPath {
            entropy: rng.gen_range(0..entropy_paths) as u16,
            drb_next: u32::MAX,
            reps,
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
            // ACKs take the minimal route, hashed per flow.
            HostLb::Valiant { .. } if echo.is_some() => (0, NO_VIA),
            HostLb::Valiant { per_flow } => (
                0,
                valiant::next_via(fabric, *per_flow, &mut path.drb_next, rng),
            ),
            HostLb::Reps(p) => match &mut path.reps {
                Some(r) => (r.next_entropy(p, entropy_paths, rng), NO_VIA),
                // The receiving side: ACKs echo the data packet's value.
                None => (echo.unwrap_or(path.entropy), NO_VIA),
            },
        }
    }

    /// Flags a data packet with path code `via` carries: Valiant's "climbing" mark.
    #[inline]
    pub fn data_flags(&self, via: u32) -> u8 {
        match self {
            HostLb::Valiant { .. } if via != NO_VIA => flags::VALIANT_UP,
            _ => 0,
        }
    }

    /// Whether the receiver of a flow keeps per-flow LB state for its ACKs.
    pub fn needs_receiver_state(&self) -> bool {
        *self == HostLb::Drb
    }

    /// Feedback, learnt at `now_ps`, for a packet of the flow whose state is `path` that
    /// carried `entropy`. Only REPS uses it.
    #[inline]
    pub fn feedback(&self, path: &mut FlowPath, entropy: u16, what: Feedback, now_ps: u64) {
        if let (HostLb::Reps(p), Some(r)) = (self, &mut path.reps) {
            r.feedback(p, entropy, what, now_ps);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::{stream, Purpose};
    use crate::scenario::{LbConfig, LbPolicy, Scenario};

    fn reps_host() -> (HostLb, Fabric) {
        let cfg = LbConfig {
            policy: LbPolicy::Reps,
            ..LbConfig::default()
        };
        let (_, host) = super::super::switch_and_host(&cfg, true);
        let mut s = Scenario::default();
        s.topology.k = 4;
        (host, Fabric::build(&s))
    }

    #[test]
    fn a_last_hop_nack_recycles_its_ev_and_an_earlier_trim_does_not() {
        let (host, fabric) = reps_host();
        let mut rng = stream(1, 0, Purpose::HostLb);
        let mut path = host.start_flow(1 << 16, 150, &mut rng);
        for (ev, last_hop, ecn) in [(11, true, false), (12, false, false), (13, true, true)] {
            host.feedback(&mut path, ev, Feedback::of_nack(last_hop, ecn), 0);
        }
        host.feedback(&mut path, 14, Feedback::of_ack(false), 0);
        host.feedback(&mut path, 15, Feedback::of_ack(true), 0);
        // Only the clean last-hop NACK (11) and the clean ACK (14) are recycled.
        let mut next = || host.next_packet(&fabric, &mut path, 0, 15, None, 1 << 16, &mut rng);
        assert_eq!(next(), (11, NO_VIA));
        assert_eq!(next(), (14, NO_VIA));
        assert_eq!(path.reps.as_ref().unwrap().fresh(), 0);
    }

    #[test]
    fn reps_flows_start_with_an_empty_buffer_and_bdp_exploration() {
        let (host, fabric) = reps_host();
        let mut rng = stream(1, 0, Purpose::HostLb);
        let mut path = host.start_flow(1 << 16, 150, &mut rng);
        let r = path.reps.as_ref().expect("REPS flows have state");
        assert_eq!((r.count(), r.fresh(), r.is_frozen()), (0, 0, false));
        // The receiving side keeps none: its ACKs echo the data packet's value.
        let mut rcv = FlowPath::RECEIVER;
        let ack = host.next_packet(&fabric, &mut rcv, 15, 0, Some(4242), 1 << 16, &mut rng);
        assert_eq!(ack, (4242, NO_VIA));
        // Other policies' flows carry no REPS state.
        let plain = HostLb::Rps.start_flow(1 << 16, 150, &mut rng);
        assert!(plain.reps.is_none());
        // After a freeze ends, the flow explores bdp_pkts = 150 packets on random values.
        let dead = Feedback::Timeout {
            recent_max_rtt_ps: 0,
            base_rtt_ps: 1,
        };
        host.feedback(&mut path, 1, Feedback::Delivered, 0);
        host.feedback(&mut path, 1, dead, 0);
        let thaw = 10_000_000_001; // 10 ms + 1 ps
        host.feedback(&mut path, 2, Feedback::Ecn, thaw);
        host.feedback(&mut path, 7, Feedback::Delivered, thaw);
        let sent: Vec<u16> = (0..151)
            .map(|_| {
                host.next_packet(&fabric, &mut path, 0, 15, None, 1 << 16, &mut rng)
                    .0
            })
            .collect();
        assert!(!sent[..150].contains(&7), "150 random values first");
        assert_eq!(sent[150], 7, "then the cached one");
    }
}
