//! Host-side LB: the enum [`HostLb`], one variant per `lb.policy` holding the host type its
//! registry line names (`scenario/lb_policy.rs`; each type implements
//! [`HostPolicy`] and [`BuildHost`] in its policy's file), the per-flow state [`FlowPath`] with
//! the sender's boxed [`SenderState`], and `host_lb!`'s static dispatch of each trait method
//! (a `match`, no `Box<dyn>` per packet). Per-flow state lives in the flow's sender (data) or
//! receiver (ACKs); the host's RNG stream draws.

use super::host_policy::{BuildHost, FlowAt, HostPolicy, PacketAt};
use super::subflow_loads::SubflowLoads;
use super::{bitmap, drb, ecmp, ethereal, reps, uec_mixed, valiant};
use crate::scenario::{lb_policies, LbConfig, LbPolicy};
use crate::topology::{Fabric, NodeId};
use rand::Rng;
use rand_pcg::Pcg32;
use serde::{Deserialize, Serialize};

pub(crate) use super::host_policy::Feedback;
use super::host_policy::Fixed;

/// Per-flow (and per direction) host LB state. Policies whose state is larger than a word
/// keep it behind a box allocated only for their flows ([`SenderState`]), so the other
/// policies' flows pay two words for it.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub(crate) struct FlowPath {
    /// The flow's entropy value, drawn when it starts.
    pub(crate) entropy: u16,
    /// DRB: the next path code; Valiant per flow: the flow's code (`u32::MAX` until the
    /// first packet).
    pub(crate) drb_next: u32,
    /// The sender's state of REPS, bitmap, mixed and Ethereal (`None` for every other
    /// policy, and on the receiving side: ACKs echo the data packet's value).
    pub(crate) sender: SenderState,
}

impl FlowPath {
    /// State for the receiving side of a flow (its ACKs).
    pub(crate) const RECEIVER: FlowPath = FlowPath {
        entropy: 0,
        drb_next: u32::MAX,
        sender: SenderState::None,
    };

    #[cfg(test)]
    /// REPS's buffer, for REPS flows.
    pub(crate) fn reps(&self) -> Option<&reps::RepsState> {
        match &self.sender {
            SenderState::Reps(r) => Some(r),
            _ => None,
        }
    }
}

/// `lb_policies!`'s callback for the host side: the enums with one variant per policy and the
/// dispatch of each [`HostPolicy`] method to the variant's type. A flow's [`SenderState`] is
/// its policy's variant or `None` (receivers, and policies without per-flow state).
macro_rules! host_lb {
    ($(
        $(#[$meta:meta])* $V:ident => $key:literal, $facts:ident,
        switch: $switch:ty, host: $host:ty;
    )+) => {
        /// The host side of `lb.policy`, the same for every host of a run.
        #[derive(Clone, Debug)]
        pub(crate) enum HostLb {
            $( $(#[$meta])* $V($host), )+
        }

        /// A flow sender's policy state, boxed so that other policies' flows pay one word.
        #[derive(Clone, Debug, Serialize, Deserialize)]
        pub(crate) enum SenderState {
            None,
            $( $V(Box<<$host as HostPolicy>::Flow>), )+
        }

        impl HostLb {
            /// The host side of `cfg.policy`. `trimming`: switches trim (REPS reads every
            /// timeout as a suspected failure then).
            pub(crate) fn new(cfg: &LbConfig, trimming: bool, fabric: &Fabric) -> HostLb {
                match cfg.policy {
                    $( LbPolicy::$V => HostLb::$V(BuildHost::build(cfg, trimming, fabric)), )+
                }
            }

            fn new_state(&self, bdp_pkts: u64, rng: &mut Pcg32) -> SenderState {
                match self {
                    $( HostLb::$V(p) => p
                        .new_flow(bdp_pkts, rng)
                        .map_or(SenderState::None, |f| SenderState::$V(Box::new(f))), )+
                }
            }

            fn assigned_state(
                &self,
                at: &FlowAt<'_>,
                loads: &mut SubflowLoads,
                rng: &mut Pcg32,
            ) -> Option<SenderState> {
                match self {
                    $( HostLb::$V(p) => p
                        .assign_subflows(at, loads, rng)
                        .map(|f| SenderState::$V(Box::new(f))), )+
                }
            }

            /// The flow whose state is `path` completed.
            pub(crate) fn end_flow(&self, fabric: &Fabric, path: &FlowPath, loads: &mut SubflowLoads) {
                match (self, &path.sender) {
                    $( (HostLb::$V(p), SenderState::$V(f)) => p.end_flow(fabric, f, loads), )+
                    _ => {}
                }
            }

            #[inline]
            fn dispatch_packet(&self, at: &PacketAt<'_>, path: &mut FlowPath, rng: &mut Pcg32) -> (u16, u32) {
                let FlowPath { drb_next, sender, .. } = path;
                match (self, sender) {
                    $( (HostLb::$V(p), SenderState::$V(f)) => p.next_packet(at, drb_next, Some(f), rng), )+
                    $( (HostLb::$V(p), _) => p.next_packet(at, drb_next, None, rng), )+
                }
            }

            /// Feedback, learnt at `now_ps`, for a packet of the flow whose state is `path`
            /// that carried `entropy`.
            #[inline]
            pub(crate) fn feedback(&self, path: &mut FlowPath, entropy: u16, what: Feedback, now_ps: u64) {
                match (self, &mut path.sender) {
                    $( (HostLb::$V(p), SenderState::$V(f)) => p.feedback(f, entropy, what, now_ps), )+
                    _ => {}
                }
            }

            /// Flags a data packet with path code `via` carries (Valiant's "climbing" mark).
            #[inline]
            pub(crate) fn data_flags(&self, via: u32) -> u8 {
                match self {
                    $( HostLb::$V(p) => p.data_flags(via), )+
                }
            }

            /// Heap bytes of a flow sender's policy state, at most (`weft validate`'s memory
            /// estimate); `max_paths`: the most paths between two hosts.
            pub(crate) fn flow_state_bytes(&self, max_paths: u32) -> u64 {
                match self {
                    $( HostLb::$V(p) => p.flow_state_bytes(max_paths), )+
                }
            }

            /// Whether the receiver of a flow keeps per-flow LB state for its ACKs.
            pub(crate) fn needs_receiver_state(&self) -> bool {
                match self {
                    $( HostLb::$V(p) => p.needs_receiver_state(), )+
                }
            }
        }
    };
}

lb_policies!(host_lb);

impl HostLb {
    /// State for a flow starting now; `bdp_pkts` is its path's bandwidth-delay product in
    /// full packets. Every flow draws its entropy value whatever the policy, so that the
    /// host's stream does not depend on the policy's needs. Ethereal's subflows are assigned
    /// afterwards ([`HostLb::assign_subflows`]).
    pub(crate) fn start_flow(
        &self,
        entropy_paths: u32,
        bdp_pkts: u64,
        rng: &mut Pcg32,
    ) -> FlowPath {
        let entropy = rng.gen_range(0..entropy_paths) as u16;
        FlowPath {
            entropy,
            drb_next: u32::MAX,
            sender: self.new_state(bdp_pkts, rng),
        }
    }

    /// Ethereal: splits the flow of `packets` packets from `src` to `dst` whose state is
    /// `path` and assigns its subflows' paths, counted in the source's `loads`. Other
    /// policies: nothing.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn assign_subflows(
        &self,
        fabric: &Fabric,
        path: &mut FlowPath,
        src: NodeId,
        dst: NodeId,
        packets: u64,
        loads: &mut SubflowLoads,
        rng: &mut Pcg32,
    ) {
        let at = FlowAt {
            fabric,
            src,
            dst,
            packets,
        };
        if let Some(state) = self.assigned_state(&at, loads, rng) {
            path.sender = state;
        }
    }

    /// (entropy, path code) for packet `seq` from `src` to `dst` of a flow whose state is
    /// `path`. `echo` is the entropy of the data packet an ACK answers (ECMP echoes it).
    #[allow(clippy::too_many_arguments)]
    #[inline]
    pub(crate) fn next_packet(
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
        let at = PacketAt {
            fabric,
            src,
            dst,
            seq,
            echo,
            entropy_paths,
            flow_entropy: path.entropy,
        };
        self.dispatch_packet(&at, path, rng)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::packet::NO_VIA;
    use crate::rng::{stream, Purpose};
    use crate::scenario::{LbConfig, LbPolicy, Scenario};

    fn reps_host() -> (HostLb, Fabric) {
        let cfg = LbConfig {
            policy: LbPolicy::Reps,
            ..LbConfig::default()
        };
        let mut s = Scenario::default();
        s.topology.k = 4;
        let fabric = Fabric::build(&s);
        (HostLb::new(&cfg, true, &fabric), fabric)
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
        let mut s = Scenario::default();
        s.topology.k = 4;
        let fabric = Fabric::build(&s);
        let host = HostLb::new(&cfg, true, &fabric);
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
        let plain = HostLb::Rps(ecmp::PerPacket).start_flow(1 << 16, 150, &mut rng);
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

    /// The host side each registry line names is built and dispatched to for its own
    /// policy: only the feedback policies (and Ethereal, once its subflows are assigned) keep
    /// per-flow sender state, and switch-only policies send entropy 0 on the minimal route.
    #[test]
    fn every_policy_gets_its_own_host_side() {
        let mut s = Scenario::default();
        s.topology.k = 4;
        let fabric = Fabric::build(&s);
        let mut rng = stream(1, 0, Purpose::HostLb);
        for policy in LbPolicy::ALL {
            let cfg = LbConfig {
                policy,
                ..LbConfig::default()
            };
            let host = HostLb::new(&cfg, false, &fabric);
            let mut path = host.start_flow(1 << 16, 150, &mut rng);
            let stateful = !matches!(path.sender, SenderState::None);
            assert_eq!(stateful, policy.needs_feedback(), "{policy:?}");
            assert_eq!(
                host.flow_state_bytes(16) > 0,
                stateful || policy == LbPolicy::Ethereal
            );
            let mut loads = SubflowLoads::default();
            host.assign_subflows(&fabric, &mut path, 0, 15, 64, &mut loads, &mut rng);
            let assigned = !matches!(path.sender, SenderState::None);
            assert_eq!(
                assigned,
                stateful || policy == LbPolicy::Ethereal,
                "{policy:?}"
            );
            let sent = host.next_packet(&fabric, &mut path, 0, 15, 0, None, 1 << 16, &mut rng);
            if policy.is_switch_only() {
                assert_eq!(sent, (0, NO_VIA), "{policy:?}");
            }
            assert_eq!(host.needs_receiver_state(), policy == LbPolicy::Drb);
            host.end_flow(&fabric, &path, &mut loads);
        }
    }
}
