//! The seam every switch LB policy plugs into: what a policy may read for one decision
//! ([`SwitchCtx`], [`QueueView`]), what it must do ([`SwitchPolicy`]) and how it is built
//! ([`BuildSwitch`]), plus the helpers the rotations share (candidates under failures).
//!
//! A policy is one file with one type implementing both traits and one line of the `lb.policy`
//! registry (`scenario/lb_policy.rs`), which names that type; `switch.rs` derives the per-switch
//! enum and its dispatch from the registry. This file is below every policy file and
//! `switch.rs` above them all, so the policies never import the enum that holds them.

use super::ecmp;
use super::LbShared;
use crate::packet::Packet;
use crate::scenario::LbPolicy;
use crate::topology::{Candidates, Fabric, NodeId};
use rand_pcg::Pcg32;

/// What a switch policy may read of its own ports.
pub trait QueueView {
    /// Bytes queued at port `p` (the packet being transmitted included).
    fn queued_bytes(&self, p: u16) -> u64;
    /// Time port `p` has spent transmitting since the start, in ps (utilization; 0 where
    /// unknown).
    fn busy_ps(&self, _p: u16) -> u64 {
        0
    }
    /// Bytes port `p` has finished sending since the start (a counter; DLB's load).
    fn sent_bytes(&self, p: u16) -> u64;
}

/// Everything a switch policy may look at for one decision.
pub(crate) struct SwitchCtx<'a, Q: QueueView> {
    pub fabric: &'a Fabric,
    pub shared: &'a LbShared,
    pub node: NodeId,
    pub pkt: &'a Packet,
    pub in_port: u16,
    pub candidates: Candidates<'a>,
    pub queues: &'a Q,
    pub now_ps: u64,
    pub salt: u32,
    pub rng: &'a mut Pcg32,
}

impl<Q: QueueView> SwitchCtx<'_, Q> {
    /// The candidate port the ECMP hash of the packet's flow and entropy value picks (what
    /// hashing policies do, and others for packets they leave to the hash).
    #[inline]
    pub(crate) fn hashed_port(&self) -> u16 {
        let (c, pkt) = (self.candidates, self.pkt);
        c.get(ecmp::choose(
            pkt.hash_key(),
            pkt.entropy,
            self.salt,
            c.len(),
        ))
    }
}

/// A switch LB policy's behaviour at one switch. Only [`SwitchPolicy::choose`] is required; the
/// rest defaults to "no timer, no adverts, nothing to do when forwarding".
pub(crate) trait SwitchPolicy {
    /// The output port (an absolute port index) among `ctx.candidates`, which holds at least
    /// two ports (a single candidate never reaches the policy).
    fn choose<Q: QueueView>(&mut self, ctx: &mut SwitchCtx<'_, Q>) -> u16;

    /// The policy's state or decision is defined over the switch's uplinks (rotations, path
    /// digits, per-uplink tables): on a PGFT's parallel down links the switch hashes instead,
    /// like a LAG.
    fn uplink_structured(&self) -> bool {
        false
    }

    /// A stale snapshot of this policy's queues (`lb.state_update_period_ns`) must also
    /// record the bytes each port sent (DLB's load).
    fn snapshot_tracks_sent(&self) -> bool {
        false
    }

    /// The period of the policy's own timer, if it has one (remote-state adverts).
    fn timer_period_ps(&self) -> Option<u64> {
        None
    }

    /// When the policy first wants [`SwitchPolicy::on_timer`] called, if ever.
    fn first_timer_ps(&self) -> Option<u64> {
        None
    }

    /// The policy's timer fired at `now_ps` (`queues`: the switch's live queues); returns
    /// when it wants to be woken next. `None` puts it to sleep: the switch then calls
    /// [`SwitchPolicy::wake_ps`] when it next queues a packet at an idle port.
    fn on_timer<Q: QueueView>(&mut self, _now_ps: u64, _queues: &Q) -> Option<u64> {
        None
    }

    /// A packet was queued at `now_ps` at an idle port while the timer slept: when the timer
    /// should fire next, if ever.
    fn wake_ps(&self, _now_ps: u64) -> Option<u64> {
        None
    }

    /// After a timer: the ports to send adverts on and the advert (one byte per edge
    /// switch), if this switch advertises.
    fn adverts(&self) -> Option<(&[u16], &[u8])> {
        None
    }

    /// An advert from the switch behind `in_port` arrived.
    fn on_advert(&mut self, _in_port: u16, _pkt: &Packet) {}

    /// `pkt` (arrived on `in_port`) leaves through port `out` at `now_ps` (CONGA updates its
    /// rate estimate and the packet's overlay here).
    fn forward(&mut self, _at: &Forwarding<'_>, _pkt: &mut Packet) {}
}

/// Where and when a packet is forwarded ([`SwitchPolicy::forward`]).
pub(crate) struct Forwarding<'a> {
    pub fabric: &'a Fabric,
    pub shared: &'a LbShared,
    pub node: NodeId,
    pub in_port: u16,
    pub out: u16,
    pub now_ps: u64,
}

/// How a policy's per-switch state is made: the type a registry line names implements this.
pub(crate) trait BuildSwitch: SwitchPolicy + Sized {
    /// The state of switch `node` under `policy` (one of the policies whose registry line
    /// names this type), drawing any random start from `rng`.
    fn build(
        policy: LbPolicy,
        shared: &LbShared,
        fabric: &Fabric,
        node: NodeId,
        rng: &mut Pcg32,
    ) -> Self;

    /// Bytes of state [`BuildSwitch::build`] gives switch `node` (`weft validate`'s
    /// estimate).
    fn state_bytes(
        _policy: LbPolicy,
        _shared: &LbShared,
        _fabric: &Fabric,
        _node: NodeId,
    ) -> usize {
        0
    }
}

/// A boxed policy (large state kept out of the per-switch enum) behaves as its content.
impl<T: SwitchPolicy> SwitchPolicy for Box<T> {
    #[inline]
    fn choose<Q: QueueView>(&mut self, ctx: &mut SwitchCtx<'_, Q>) -> u16 {
        T::choose(self, ctx)
    }
    fn uplink_structured(&self) -> bool {
        T::uplink_structured(self)
    }
    fn snapshot_tracks_sent(&self) -> bool {
        T::snapshot_tracks_sent(self)
    }
    fn timer_period_ps(&self) -> Option<u64> {
        T::timer_period_ps(self)
    }
    fn first_timer_ps(&self) -> Option<u64> {
        T::first_timer_ps(self)
    }
    fn on_timer<Q: QueueView>(&mut self, now_ps: u64, queues: &Q) -> Option<u64> {
        T::on_timer(self, now_ps, queues)
    }
    fn wake_ps(&self, now_ps: u64) -> Option<u64> {
        T::wake_ps(self, now_ps)
    }
    fn adverts(&self) -> Option<(&[u16], &[u8])> {
        T::adverts(self)
    }
    fn on_advert(&mut self, in_port: u16, pkt: &Packet) {
        T::on_advert(self, in_port, pkt)
    }
    #[inline]
    fn forward(&mut self, at: &Forwarding<'_>, pkt: &mut Packet) {
        T::forward(self, at, pkt)
    }
}

impl<T: BuildSwitch> BuildSwitch for Box<T> {
    fn build(
        policy: LbPolicy,
        shared: &LbShared,
        fabric: &Fabric,
        node: NodeId,
        rng: &mut Pcg32,
    ) -> Self {
        Box::new(T::build(policy, shared, fabric, node, rng))
    }
    fn state_bytes(policy: LbPolicy, shared: &LbShared, fabric: &Fabric, node: NodeId) -> usize {
        T::state_bytes(policy, shared, fabric, node)
    }
}

/// The timer, wake and advert methods of [`SwitchPolicy`] for a policy whose remote state
/// (`lb.psp.remote`'s adverts) is the field `$field: Option<Box<Remote>>` (none: no timer).
macro_rules! remote_timers {
    ($field:ident) => {
        fn timer_period_ps(&self) -> Option<u64> {
            self.$field.as_ref()?.timer_period_ps()
        }
        fn first_timer_ps(&self) -> Option<u64> {
            self.$field.as_ref()?.first_timer_ps()
        }
        fn on_timer<Q: QueueView>(&mut self, now_ps: u64, queues: &Q) -> Option<u64> {
            self.$field.as_mut()?.on_timer(now_ps, queues)
        }
        fn wake_ps(&self, now_ps: u64) -> Option<u64> {
            self.$field.as_ref()?.wake_ps(now_ps)
        }
        fn adverts(&self) -> Option<(&[u16], &[u8])> {
            self.$field.as_ref()?.adverts()
        }
        fn on_advert(&mut self, in_port: u16, pkt: &Packet) {
            if let Some(r) = self.$field.as_mut() {
                r.on_advert(in_port, pkt)
            }
        }
    };
}
pub(crate) use remote_timers;

/// The fault-free candidates of this decision: `c` itself unless failed links shrank it to
/// a list.
#[inline]
pub(crate) fn all_candidates<'a>(
    fabric: &'a Fabric,
    node: NodeId,
    dst: NodeId,
    c: Candidates<'a>,
) -> Candidates<'a> {
    match c {
        Candidates::Range { .. } => c,
        Candidates::List(_) => match fabric.route_all(node, dst) {
            crate::topology::Route::Choice(all) => all,
            crate::topology::Route::Port(_) => unreachable!("failures only shrink choices"),
        },
    }
}

/// A rotation over all uplinks (`next` yields indices into `all` and advances) under
/// failures: the first port it yields that is among the valid candidates `valid`. Without
/// failures (`valid` is `all`) the first index is taken.
#[inline]
pub(crate) fn first_valid(
    all: Candidates<'_>,
    valid: Candidates<'_>,
    mut next: impl FnMut() -> u16,
) -> u16 {
    if let Candidates::Range { .. } = valid {
        return all.get(next());
    }
    // A rotation visits every index within two turns (a reshuffle at a wrap may repeat
    // some), so 2w draws always find a valid port.
    for _ in 0..2 * all.len() as u32 {
        let p = all.get(next());
        if crate::topology::contains(valid, p) {
            return p;
        }
    }
    no_valid_port(all.len(), valid.len())
}

#[cold]
#[inline(never)]
fn no_valid_port(all: u16, valid: u16) -> ! {
    panic!("a rotation over {all} uplinks found none of the {valid} valid ones")
}

/// A rotation over a switch's uplinks met a different candidate set: out of line, so the
/// check costs a comparison.
#[cold]
#[inline(never)]
pub(crate) fn candidates_mismatch(policy: &str, candidates: u16, uplinks: u16) -> ! {
    panic!("{policy}: {candidates} candidate ports at a switch with {uplinks} uplinks")
}
