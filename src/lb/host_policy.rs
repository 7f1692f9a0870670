//! The host side of an LB policy: the traits a policy's host type implements
//! ([`HostPolicy`], [`BuildHost`]), what it is told about a packet ([`PacketAt`]) and what the
//! transport reports back ([`Feedback`]). A policy is one file with its host type and one line
//! of the `lb.policy` registry (`scenario/lb_policy.rs`) naming it; `lb/host.rs` derives the
//! enum and its static dispatch from the registry.

use super::subflow_loads::SubflowLoads;
use crate::packet::NO_VIA;
use crate::scenario::LbConfig;
use crate::topology::{Fabric, NodeId};
use rand_pcg::Pcg32;

/// What became of a packet, as the sender learns it (ACK, NACK or timer), with the entropy
/// value it carried. The paced transport reports `Delivered` and `Ecn`; loss recovery adds
/// the others. A last-hop NACK is `Delivered` or `Ecn` (incast, not a bad path, as UEC htsim).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Feedback {
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
    pub(crate) fn of_ack(ecn_echo: bool) -> Feedback {
        if ecn_echo {
            Feedback::Ecn
        } else {
            Feedback::Delivered
        }
    }

    /// A NACK's feedback. A trim at the last hop means incast, not a bad path (as UEC htsim's
    /// `processNack`): it counts as the ACK the packet would have had.
    pub(crate) fn of_nack(last_hop: bool, ecn_echo: bool) -> Feedback {
        if last_hop {
            Feedback::of_ack(ecn_echo)
        } else {
            Feedback::Nack
        }
    }
}

/// A packet a host is about to send, as its policy sees it.
#[derive(Clone, Copy)]
pub(crate) struct PacketAt<'a> {
    pub(crate) fabric: &'a Fabric,
    pub(crate) src: NodeId,
    pub(crate) dst: NodeId,
    /// The packet's sequence number in its flow.
    pub(crate) seq: u32,
    /// An ACK: the entropy value of the data packet it answers.
    pub(crate) echo: Option<u16>,
    /// Entropy values to draw from (`lb.entropy_paths`).
    pub(crate) entropy_paths: u32,
    /// The flow's entropy value, drawn when it started.
    pub(crate) flow_entropy: u16,
}

impl PacketAt<'_> {
    /// (entropy, path code) of a packet that keeps its flow's value, or an ACK that echoes
    /// its data packet's: the receiving side of every per-packet policy.
    pub(crate) fn echoed(&self) -> (u16, u32) {
        (self.echo.unwrap_or(self.flow_entropy), NO_VIA)
    }
}

/// A flow about to start, as its source's policy sees it.
#[derive(Clone, Copy)]
pub(crate) struct FlowAt<'a> {
    pub(crate) fabric: &'a Fabric,
    pub(crate) src: NodeId,
    pub(crate) dst: NodeId,
    /// Its size in full packets.
    pub(crate) packets: u64,
}

/// One policy's host side: immutable parameters shared by every host of a run, with the
/// per-flow sender state [`HostPolicy::Flow`] it keeps (boxed, only for its own flows).
pub(crate) trait HostPolicy {
    /// A flow sender's state (`()`: none).
    type Flow;

    /// The state of a flow starting now; `bdp_pkts`: its path's bandwidth-delay product in
    /// full packets. The flow's entropy value is drawn before, whatever the policy.
    fn new_flow(&self, _bdp_pkts: u64, _rng: &mut Pcg32) -> Option<Self::Flow> {
        None
    }

    /// State that needs the flow's endpoints and size and the source's subflow table,
    /// replacing [`HostPolicy::new_flow`]'s (Ethereal's subflows).
    fn assign_subflows(
        &self,
        _at: &FlowAt<'_>,
        _loads: &mut SubflowLoads,
        _rng: &mut Pcg32,
    ) -> Option<Self::Flow> {
        None
    }

    /// The flow whose state is `flow` completed.
    fn end_flow(&self, _fabric: &Fabric, _flow: &Self::Flow, _loads: &mut SubflowLoads) {}

    /// (entropy, path code) for the packet `at`. `code`: the flow's (or, with
    /// [`HostPolicy::needs_receiver_state`], its ACKs') path-code word; `flow`: the sender's
    /// state (`None` on the receiving side).
    fn next_packet(
        &self,
        at: &PacketAt<'_>,
        code: &mut u32,
        flow: Option<&mut Self::Flow>,
        rng: &mut Pcg32,
    ) -> (u16, u32);

    /// Feedback, learnt at `now_ps`, for a packet of the flow that carried `entropy`.
    fn feedback(&self, _flow: &mut Self::Flow, _entropy: u16, _what: Feedback, _now_ps: u64) {}

    /// Flags a data packet with path code `via` carries.
    fn data_flags(&self, _via: u32) -> u8 {
        0
    }

    /// Heap bytes of one flow's state, at most; `max_paths`: the most paths between two
    /// hosts (`weft validate`'s memory estimate).
    fn flow_state_bytes(&self, _max_paths: u32) -> u64 {
        std::mem::size_of::<Self::Flow>() as u64
    }

    /// Whether a flow's receiver keeps the path-code word for its ACKs.
    fn needs_receiver_state(&self) -> bool {
        false
    }
}

/// How a policy's host side is made, once per run, from its configuration. `trimming`:
/// switches trim packets.
pub(crate) trait BuildHost: HostPolicy + Sized {
    fn build(cfg: &LbConfig, trimming: bool, fabric: &Fabric) -> Self;
}

/// The host side of switch-only policies: entropy 0, switches decide alone.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Fixed;

impl HostPolicy for Fixed {
    type Flow = ();

    fn next_packet(
        &self,
        _: &PacketAt<'_>,
        _: &mut u32,
        _: Option<&mut ()>,
        _: &mut Pcg32,
    ) -> (u16, u32) {
        (0, NO_VIA)
    }
}

impl BuildHost for Fixed {
    fn build(_: &LbConfig, _: bool, _: &Fabric) -> Fixed {
        Fixed
    }
}
