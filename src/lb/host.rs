//! Host-side LB: what a host puts in a packet so that switches spread it (entropy value, DRB
//! path code), and the transport's per-packet feedback. Per-flow state ([`FlowPath`]) lives
//! in the flow's sender (data) or receiver (ACKs); the host's RNG stream draws.

use super::bitmap::{BitmapParams, BitmapState};
use super::ethereal::{EtherealFlow, EtherealParams, SubflowLoads};
use super::reps::{RepsParams, RepsState};
use super::uec_mixed::{MixedParams, MixedState};
use super::{drb, valiant};
use crate::packet::{flags, NO_VIA};
use crate::scenario::{LbConfig, ValiantGranularity};
use crate::topology::{Fabric, NodeId};
use rand::Rng;
use rand_pcg::Pcg32;
use serde::{Deserialize, Serialize};

/// The host side of an `lb.policy` (its registry line's `host` function, [`super::host_lb`]).
#[derive(Clone, Debug, PartialEq)]
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
    /// (`lb/valiant.rs`), from the codes of `subset` (`lb.valiant.intermediates`; empty: all).
    Valiant { per_flow: bool, subset: Vec<u32> },
    /// UEC's per-EV penalties over a permutation walk (`lb/bitmap.rs`).
    Bitmap(BitmapParams),
    /// UEC's recycled good EVs, else the bitmap (`lb/uec_mixed.rs`).
    Mixed(MixedParams),
    /// Subflows pinned to greedily assigned paths (`lb/ethereal.rs`).
    Ethereal(EtherealParams),
}

/// The `host` functions the policy registry names (`scenario/lb_policy.rs`): the host side of
/// a policy from its configuration; `trimming`: switches trim packets.
impl HostLb {
    pub(crate) fn fixed(_: &LbConfig, _: bool) -> HostLb {
        HostLb::Fixed
    }

    pub(crate) fn ecmp(_: &LbConfig, _: bool) -> HostLb {
        HostLb::Ecmp
    }

    pub(crate) fn rps(_: &LbConfig, _: bool) -> HostLb {
        HostLb::Rps
    }

    pub(crate) fn drb(_: &LbConfig, _: bool) -> HostLb {
        HostLb::Drb
    }

    pub(crate) fn reps(cfg: &LbConfig, trimming: bool) -> HostLb {
        HostLb::Reps(RepsParams::new(cfg, trimming))
    }

    pub(crate) fn bitmap(cfg: &LbConfig, _: bool) -> HostLb {
        HostLb::Bitmap(BitmapParams::new(cfg))
    }

    pub(crate) fn mixed(cfg: &LbConfig, _: bool) -> HostLb {
        HostLb::Mixed(MixedParams::new(cfg))
    }

    /// Switches follow the path code the host draws (the intermediate's digits); every
    /// intermediate until `LbShared::new` sets the subset.
    pub(crate) fn valiant(cfg: &LbConfig, _: bool) -> HostLb {
        HostLb::Valiant {
            per_flow: cfg.valiant.granularity == ValiantGranularity::Flow,
            subset: Vec::new(),
        }
    }

    pub(crate) fn ethereal(cfg: &LbConfig, _: bool) -> HostLb {
        HostLb::Ethereal(EtherealParams {
            max_subflows: cfg.ethereal.max_subflows,
            random_ties: cfg.ethereal.ties == crate::scenario::Ties::Random,
        })
    }
}

/// Per-flow (and per direction) host LB state. Policies whose state is larger than a word
/// keep it behind a box allocated only for their flows ([`SenderState`]), so the other
/// policies' flows pay two words for it.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct FlowPath {
    /// The flow's entropy value, drawn when it starts.
    pub entropy: u16,
    /// DRB: the next path code; Valiant per flow: the flow's code (`u32::MAX` until the
    /// first packet).
    pub drb_next: u32,
    /// The sender's state of REPS, bitmap, mixed and Ethereal (`None` for every other
    /// policy, and on the receiving side: ACKs echo the data packet's value).
    pub sender: SenderState,
}

/// A flow sender's policy state, boxed.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub enum SenderState {
    None,
    Reps(Box<RepsState>),
    Bitmap(Box<BitmapState>),
    Mixed(Box<MixedState>),
    Ethereal(Box<EtherealFlow>),
}

impl FlowPath {
    /// State for the receiving side of a flow (its ACKs).
    pub const RECEIVER: FlowPath = FlowPath {
        entropy: 0,
        drb_next: u32::MAX,
        sender: SenderState::None,
    };

    /// REPS's buffer, for REPS flows.
    pub fn reps(&self) -> Option<&RepsState> {
        match &self.sender {
            SenderState::Reps(r) => Some(r),
            _ => None,
        }
    }
}

/// What became of a packet, as the sender learns it (ACK, NACK or timer), with the entropy
/// value it carried. The paced transport reports `Delivered` and `Ecn`; loss recovery adds
/// the others. A last-hop NACK is `Delivered` or `Ecn` (incast, not a bad path, as UEC htsim).
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

    /// A NACK's feedback. A trim at the last hop means incast, not a bad path (as UEC htsim's
    /// `processNack`): it counts as the ACK the packet would have had.
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
    /// Ethereal's subflows are assigned afterwards ([`HostLb::assign_subflows`]).
    pub fn start_flow(&self, entropy_paths: u32, bdp_pkts: u64, rng: &mut Pcg32) -> FlowPath {
        let entropy = rng.gen_range(0..entropy_paths) as u16;
        let sender = match self {
            HostLb::Reps(p) => {
                let explore = p
                    .explore_pkts
                    .unwrap_or(bdp_pkts.min(u16::MAX as u64) as u16);
                SenderState::Reps(Box::new(RepsState::new(explore)))
            }
            HostLb::Bitmap(p) => SenderState::Bitmap(Box::new(BitmapState::new(p, rng))),
            HostLb::Mixed(p) => SenderState::Mixed(Box::new(MixedState::new(p, rng))),
            _ => SenderState::None,
        };
        FlowPath {
            entropy,
            drb_next: u32::MAX,
            sender,
        }
    }

    /// Ethereal: splits the flow of `packets` packets from `src` to `dst` whose state is
    /// `path` and assigns its subflows' paths, counted in the source's `loads`. Other
    /// policies: nothing.
    #[allow(clippy::too_many_arguments)]
    pub fn assign_subflows(
        &self,
        fabric: &Fabric,
        path: &mut FlowPath,
        src: NodeId,
        dst: NodeId,
        packets: u64,
        loads: &mut SubflowLoads,
        rng: &mut Pcg32,
    ) {
        if let HostLb::Ethereal(p) = self {
            let flow = loads.assign(fabric, src, dst, packets, p, rng);
            path.sender = SenderState::Ethereal(Box::new(flow));
        }
    }

    /// The flow whose state is `path` completed: Ethereal releases its subflows.
    pub fn end_flow(&self, fabric: &Fabric, path: &FlowPath, loads: &mut SubflowLoads) {
        if let SenderState::Ethereal(flow) = &path.sender {
            loads.release(fabric, flow);
        }
    }

    /// (entropy, path code) for packet `seq` from `src` to `dst` of a flow whose state is
    /// `path`. `echo` is the entropy of the data packet an ACK answers (ECMP echoes it).
    #[allow(clippy::too_many_arguments)]
    #[inline]
    pub fn next_packet(
        &self,
        fabric: &Fabric,
        path: &mut FlowPath,
        src: NodeId,
        dst: NodeId,
        seq: u32,
        echo: Option<u16>,
        entropy_paths: u32,
        rng: &mut Pcg32,
    ) -> (u16, u32) {
        let s = &mut path.sender;
        match (self, s) {
            (HostLb::Fixed, _) => (0, NO_VIA),
            (HostLb::Ecmp, _) => (echo.unwrap_or(path.entropy), NO_VIA),
            (HostLb::Rps, _) => (rng.gen_range(0..entropy_paths) as u16, NO_VIA),
            (HostLb::Drb, _) => (0, drb::next_via(fabric, src, dst, &mut path.drb_next, rng)),
            // ACKs take the minimal route, hashed per flow.
            (HostLb::Valiant { .. }, _) if echo.is_some() => (0, NO_VIA),
            (HostLb::Valiant { per_flow, subset }, _) => (
                0,
                valiant::next_via(fabric, src, dst, *per_flow, subset, &mut path.drb_next, rng),
            ),
            (HostLb::Reps(p), SenderState::Reps(r)) => {
                (r.next_entropy(p, entropy_paths, rng), NO_VIA)
            }
            (HostLb::Bitmap(p), SenderState::Bitmap(b)) => (b.next_entropy(p, rng), NO_VIA),
            (HostLb::Mixed(p), SenderState::Mixed(m)) => (m.next_entropy(p, rng), NO_VIA),
            // Data carry their path code as entropy value too, so that the ACK, which echoes
            // it, can follow the same code back: the reverse path (`lb/ethereal.rs`).
            (HostLb::Ethereal(_), SenderState::Ethereal(e)) => match e.via(seq) {
                NO_VIA => (path.entropy, NO_VIA),
                via => (via as u16, via),
            },
            (HostLb::Ethereal(_), _) => match (echo, drb::path_count(fabric, src, dst)) {
                (Some(code), n) if n > 0 => (code, code as u32),
                (e, _) => (e.unwrap_or(path.entropy), NO_VIA),
            },
            // The receiving side of feedback policies: ACKs echo the data packet's value.
            _ => (echo.unwrap_or(path.entropy), NO_VIA),
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

    /// Heap bytes of a flow sender's policy state ([`SenderState`]), at most (`weft
    /// validate`'s memory estimate); `max_paths`: the most paths between two hosts.
    pub fn flow_state_bytes(&self, max_paths: u32) -> u64 {
        (match self {
            HostLb::Reps(_) => std::mem::size_of::<RepsState>(),
            HostLb::Bitmap(p) => std::mem::size_of::<BitmapState>() + p.paths as usize,
            HostLb::Mixed(p) => std::mem::size_of::<MixedState>() + p.bitmap.paths as usize,
            HostLb::Ethereal(p) => {
                let s = p.max_subflows.unwrap_or(max_paths).min(max_paths) as usize;
                std::mem::size_of::<EtherealFlow>() + 4 * s
            }
            _ => 0,
        }) as u64
    }

    /// Whether the receiver of a flow keeps per-flow LB state for its ACKs.
    pub fn needs_receiver_state(&self) -> bool {
        *self == HostLb::Drb
    }

    /// Feedback, learnt at `now_ps`, for a packet of the flow whose state is `path` that
    /// carried `entropy`. REPS, bitmap and mixed use it.
    #[inline]
    pub fn feedback(&self, path: &mut FlowPath, entropy: u16, what: Feedback, now_ps: u64) {
        match (self, &mut path.sender) {
            (HostLb::Reps(p), SenderState::Reps(r)) => r.feedback(p, entropy, what, now_ps),
            (HostLb::Bitmap(p), SenderState::Bitmap(b)) => b.feedback(p, entropy, what),
            (HostLb::Mixed(p), SenderState::Mixed(m)) => m.feedback(p, entropy, what, now_ps),
            _ => {}
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
        let host = super::super::host_lb(&cfg, true);
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
        let mut next = || host.next_packet(&fabric, &mut path, 0, 15, 0, None, 1 << 16, &mut rng);
        assert_eq!(next(), (11, NO_VIA));
        assert_eq!(next(), (14, NO_VIA));
        assert_eq!(path.reps().unwrap().fresh(), 0);
    }

    #[test]
    fn flow_path_is_three_words() {
        // Every flow pays this, whatever its policy (ARCHITECTURE.md, lb).
        assert_eq!(std::mem::size_of::<FlowPath>(), 24);
    }

    #[test]
    fn bitmap_acks_echo_and_bad_feedback_blocks_the_value() {
        let cfg = LbConfig {
            policy: LbPolicy::Bitmap,
            bitmap: crate::scenario::BitmapConfig {
                paths: 4,
                ..Default::default()
            },
            ..LbConfig::default()
        };
        let host = super::super::host_lb(&cfg, true);
        let mut s = Scenario::default();
        s.topology.k = 4;
        let fabric = Fabric::build(&s);
        let mut rng = stream(1, 0, Purpose::HostLb);
        let mut path = host.start_flow(1 << 16, 150, &mut rng);
        // Penalties: value 0 15 (NACK + timeout, capped), 1 4 (NACK), 2 1 (ECN), 3 none. Four
        // sends decrement at most four times, and a value zeroed by a send is still skipped
        // by it: 0 and 1 cannot come out, 2 can once its single point is gone.
        host.feedback(&mut path, 0, Feedback::of_nack(false, false), 0);
        host.feedback(&mut path, 0, dead(), 0);
        host.feedback(&mut path, 1, Feedback::of_nack(false, false), 0);
        host.feedback(&mut path, 2, Feedback::of_ack(true), 0);
        host.feedback(&mut path, 3, Feedback::of_ack(false), 0);
        let sent: Vec<u16> = (0..4)
            .map(|_| {
                host.next_packet(&fabric, &mut path, 0, 15, 0, None, 1 << 16, &mut rng)
                    .0
            })
            .collect();
        assert!(sent.iter().all(|&e| e == 2 || e == 3), "{sent:?}");
        assert_eq!(sent[0], 3, "{sent:?}");
        let mut rcv = FlowPath::RECEIVER;
        let ack = host.next_packet(&fabric, &mut rcv, 15, 0, 0, Some(3), 1 << 16, &mut rng);
        assert_eq!(ack, (3, NO_VIA));
    }

    fn dead() -> Feedback {
        Feedback::Timeout {
            recent_max_rtt_ps: 0,
            base_rtt_ps: 1,
        }
    }

    #[test]
    fn reps_flows_start_with_an_empty_buffer_and_bdp_exploration() {
        let (host, fabric) = reps_host();
        let mut rng = stream(1, 0, Purpose::HostLb);
        let mut path = host.start_flow(1 << 16, 150, &mut rng);
        let r = path.reps().expect("REPS flows have state");
        assert_eq!((r.count(), r.fresh(), r.is_frozen()), (0, 0, false));
        // The receiving side keeps none: its ACKs echo the data packet's value.
        let mut rcv = FlowPath::RECEIVER;
        let ack = host.next_packet(&fabric, &mut rcv, 15, 0, 0, Some(4242), 1 << 16, &mut rng);
        assert_eq!(ack, (4242, NO_VIA));
        // Other policies' flows carry no REPS state.
        let plain = HostLb::Rps.start_flow(1 << 16, 150, &mut rng);
        assert!(plain.reps().is_none());
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
                host.next_packet(&fabric, &mut path, 0, 15, 0, None, 1 << 16, &mut rng)
                    .0
            })
            .collect();
        assert!(!sent[..150].contains(&7), "150 random values first");
        assert_eq!(sent[150], 7, "then the cached one");
    }
}
