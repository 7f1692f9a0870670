//! Switch-side LB: the per-switch state [`SwitchLb`], an enum with one variant per
//! `lb.policy` derived from the policy registry (`scenario/lb_policy.rs`): each line names the
//! type that runs the policy at a switch, which implements [`SwitchPolicy`] and
//! [`BuildSwitch`] in its own file, and `switch_lb!` here makes the variants and the static
//! dispatch of every trait method (a `match`, no `Box<dyn>` per packet). Around the policies:
//! the stale-state wrapper (`lb.state_update_period_ns`) and the decisions no policy makes
//! (a single candidate, hashed ACKs, a PGFT's parallel down links).

use super::stale::Snapshot;
use super::switch_policy::{BuildSwitch, Forwarding, SwitchPolicy};
use super::{ar, choice, conga, dlb, drb, drill, ecmp, jsq, ofan, psp_switch, rsq, sglb};
use super::{simple_rr, static_route, topk, LbShared};
use crate::packet::Packet;
use crate::scenario::{lb_policies, LbPolicy};
use crate::topology::{Fabric, NodeId};
use rand_pcg::Pcg32;
use serde::{Deserialize, Serialize};

pub(crate) use super::switch_policy::{QueueView, SwitchCtx};

/// `lb_policies!`'s callback for the switch side: the enum with one variant per policy
/// (holding its line's switch type) plus the stale-state wrapper, and the dispatch of each
/// [`SwitchPolicy`] method to the variant's type.
macro_rules! switch_lb {
    // One arm per variant binding its state to `$p`, each evaluating `$e`.
    (@each $self:expr, [$($Variant:ident)+], $p:ident => $e:expr) => {
        match $self {
            $( SwitchLb::$Variant($p) => $e, )+
            SwitchLb::Stale($p) => $e,
            #[cfg(test)]
            SwitchLb::Probe($p) => $e,
        }
    };
    ($(
        $(#[$meta:meta])* $V:ident => $key:literal, $facts:ident,
        switch: $switch:ty, host: $host:ty;
    )+) => {
        /// Per-switch LB state: the policy's own (one variant per `lb.policy`, named as the
        /// policy), or a queue-aware policy behind a stale snapshot.
        #[derive(Serialize, Deserialize)]
        pub(crate) enum SwitchLb {
            $( $(#[$meta])* $V($switch), )+
            /// A queue-aware policy deciding from a snapshot of the switch's queues.
            Stale(Stale),
            /// Tests only: a timer that records when it fired.
            #[cfg(test)]
            Probe(Probe),
        }

        impl SwitchLb {
            /// The state of `policy` at switch `node`, reading live queues.
            fn fresh(
                policy: LbPolicy,
                shared: &LbShared,
                fabric: &Fabric,
                node: NodeId,
                rng: &mut Pcg32,
            ) -> SwitchLb {
                match policy {
                    $( LbPolicy::$V => SwitchLb::$V(
                        <$switch as BuildSwitch>::build(policy, shared, fabric, node, rng),
                    ), )+
                }
            }

            /// Bytes of the policy's own state at `node` (the snapshot aside).
            fn policy_state_bytes(
                policy: LbPolicy,
                shared: &LbShared,
                fabric: &Fabric,
                node: NodeId,
            ) -> usize {
                match policy {
                    $( LbPolicy::$V => {
                        <$switch as BuildSwitch>::state_bytes(policy, shared, fabric, node)
                    } )+
                }
            }
        }

        impl SwitchPolicy for SwitchLb {
            #[inline]
            fn choose<Q: QueueView>(&mut self, ctx: &mut SwitchCtx<'_, Q>) -> u16 {
                switch_lb!(@each self, [$($V)+], p => SwitchPolicy::choose(p, ctx))
            }
            fn uplink_structured(&self) -> bool {
                switch_lb!(@each self, [$($V)+], p => SwitchPolicy::uplink_structured(p))
            }
            fn snapshot_tracks_sent(&self) -> bool {
                switch_lb!(@each self, [$($V)+], p => SwitchPolicy::snapshot_tracks_sent(p))
            }
            fn timer_period_ps(&self) -> Option<u64> {
                switch_lb!(@each self, [$($V)+], p => SwitchPolicy::timer_period_ps(p))
            }
            fn first_timer_ps(&self) -> Option<u64> {
                switch_lb!(@each self, [$($V)+], p => SwitchPolicy::first_timer_ps(p))
            }
            fn on_timer<Q: QueueView>(&mut self, now_ps: u64, queues: &Q) -> Option<u64> {
                switch_lb!(@each self, [$($V)+], p => SwitchPolicy::on_timer(p, now_ps, queues))
            }
            fn wake_ps(&self, now_ps: u64) -> Option<u64> {
                switch_lb!(@each self, [$($V)+], p => SwitchPolicy::wake_ps(p, now_ps))
            }
            fn adverts(&self) -> Option<(&[u16], &[u8])> {
                switch_lb!(@each self, [$($V)+], p => SwitchPolicy::adverts(p))
            }
            fn on_advert(&mut self, in_port: u16, pkt: &Packet) {
                switch_lb!(@each self, [$($V)+], p => SwitchPolicy::on_advert(p, in_port, pkt))
            }
            #[inline]
            fn forward(&mut self, at: &Forwarding<'_>, pkt: &mut Packet) {
                switch_lb!(@each self, [$($V)+], p => SwitchPolicy::forward(p, at, pkt))
            }
        }
    };
}

lb_policies!(switch_lb);

/// A queue-aware policy deciding from a snapshot of the switch's queues refreshed every
/// period (`lb.state_update_period_ns`) by the LB timer; the inner policy has no timer of its
/// own (`lb.psp.remote`'s adverts, on the same period or a multiple, run on this one).
#[derive(Serialize, Deserialize)]
pub(crate) struct Stale {
    snapshot: Snapshot,
    inner: Box<SwitchLb>,
    /// The inner policy's timer fired at the last tick (its adverts go out then only).
    inner_ticked: bool,
}

impl SwitchPolicy for Stale {
    #[inline]
    fn choose<Q: QueueView>(&mut self, ctx: &mut SwitchCtx<'_, Q>) -> u16 {
        self.inner.choose(&mut SwitchCtx {
            fabric: ctx.fabric,
            shared: ctx.shared,
            node: ctx.node,
            pkt: ctx.pkt,
            in_port: ctx.in_port,
            candidates: ctx.candidates,
            queues: &self.snapshot,
            now_ps: ctx.now_ps,
            salt: ctx.salt,
            rng: &mut *ctx.rng,
        })
    }

    fn first_timer_ps(&self) -> Option<u64> {
        // The inner policy's adverts (`lb.psp.remote`) share the period.
        Some(self.snapshot.first_refresh_ps())
    }

    fn on_timer<Q: QueueView>(&mut self, now_ps: u64, queues: &Q) -> Option<u64> {
        let next = self.snapshot.refresh(now_ps, queues);
        let period = self.snapshot.period_ps();
        let Some(inner_period) = self.inner.timer_period_ps() else {
            return next;
        };
        self.inner_ticked = now_ps % inner_period == 0;
        if inner_period == period {
            // Both sleep exactly when every queue is empty.
            return self.inner.on_timer(now_ps, queues).or(next);
        }
        // The inner period is a multiple of the snapshot's (validated): between its ticks keep
        // ticking, so that its idle tick (the idle adverts) still comes.
        let inner_next = match self.inner_ticked {
            true => self.inner.on_timer(now_ps, queues),
            false => Some(now_ps + inner_period),
        };
        (inner_next.is_some() || next.is_some()).then_some(now_ps + period)
    }

    fn wake_ps(&self, now_ps: u64) -> Option<u64> {
        Some(self.snapshot.wake_ps(now_ps))
    }

    fn adverts(&self) -> Option<(&[u16], &[u8])> {
        self.inner.adverts().filter(|_| self.inner_ticked)
    }

    fn on_advert(&mut self, in_port: u16, pkt: &Packet) {
        self.inner.on_advert(in_port, pkt)
    }
}

/// Tests only: hashes like ECMP and asks for a timer every `period_ps`, recording when it
/// fired (the first 16 times), `limit` times in all.
#[cfg(test)]
#[derive(Serialize, Deserialize)]
pub(crate) struct Probe {
    pub(crate) period_ps: u64,
    pub(crate) limit: usize,
    pub(crate) fired: Vec<u64>,
}

#[cfg(test)]
impl SwitchPolicy for Probe {
    fn choose<Q: QueueView>(&mut self, ctx: &mut SwitchCtx<'_, Q>) -> u16 {
        ctx.hashed_port()
    }

    fn first_timer_ps(&self) -> Option<u64> {
        Some(self.period_ps)
    }

    fn on_timer<Q: QueueView>(&mut self, now_ps: u64, _: &Q) -> Option<u64> {
        if self.fired.len() < 16 {
            self.fired.push(now_ps);
        }
        self.limit -= 1;
        (self.limit > 0).then_some(now_ps + self.period_ps)
    }
}

impl SwitchLb {
    pub(crate) fn new(
        shared: &LbShared,
        fabric: &Fabric,
        node: NodeId,
        rng: &mut Pcg32,
    ) -> SwitchLb {
        let policy = shared.policy_of(fabric, node);
        let lb = SwitchLb::fresh(policy, shared, fabric, node, rng);
        match shared.stale_period_ps {
            // Switches without uplinks (cores, spines) never choose in these fabrics: no
            // snapshot, no refresh timer.
            0 => lb,
            _ if fabric.uplinks(node) == 0 => lb,
            _ if !policy.is_queue_aware() => lb,
            period => SwitchLb::Stale(Stale {
                snapshot: Snapshot::new(fabric.num_ports(node), period, lb.snapshot_tracks_sent()),
                inner: Box::new(lb),
                inner_ticked: false,
            }),
        }
    }

    /// Chooses the output port (absolute index) among `ctx.candidates`: the decisions no
    /// policy makes, then the policy's.
    #[inline]
    pub(crate) fn choose<Q: QueueView>(&mut self, ctx: &mut SwitchCtx<'_, Q>) -> u16 {
        let c = ctx.candidates;
        debug_assert!(!c.is_empty());
        if c.len() == 1 {
            return c.get(0);
        }
        if ctx.shared.ack_ecmp && !ctx.pkt.is_data() {
            return ctx.hashed_port();
        }
        // Parallel down links of a PGFT: policies built around a switch's uplinks (rotations,
        // path digits, per-uplink tables) hash the flow onto one of them, like a LAG.
        if ctx.fabric.has_parallel_down()
            && self.uplink_structured()
            && ctx.fabric.is_down_port(ctx.node, c.get(0))
        {
            return ctx.hashed_port();
        }
        SwitchPolicy::choose(self, ctx)
    }

    /// When the policy first wants [`SwitchLb::on_timer`] called, if ever (e.g. the first
    /// refresh of a periodically sampled queue state).
    pub(crate) fn first_timer_ps(&self) -> Option<u64> {
        SwitchPolicy::first_timer_ps(self)
    }

    /// The policy's timer fired at `now_ps` (`queues`: the switch's live queues); returns
    /// when it wants to be woken next. `None` puts it to sleep: the switch then calls
    /// [`SwitchLb::wake_ps`] when it next queues a packet at an idle switch port.
    pub(crate) fn on_timer<Q: QueueView>(&mut self, now_ps: u64, queues: &Q) -> Option<u64> {
        SwitchPolicy::on_timer(self, now_ps, queues)
    }

    /// A packet was queued at `now_ps` at an idle port while the timer slept: when the timer
    /// should fire next, if ever.
    pub(crate) fn wake_ps(&self, now_ps: u64) -> Option<u64> {
        SwitchPolicy::wake_ps(self, now_ps)
    }

    /// After a timer: the ports to send adverts on and the advert (one byte per edge
    /// switch), if this switch advertises.
    pub(crate) fn adverts(&self) -> Option<(&[u16], &[u8])> {
        SwitchPolicy::adverts(self)
    }

    /// An advert from the switch behind `in_port` arrived.
    pub(crate) fn on_advert(&mut self, in_port: u16, pkt: &Packet) {
        SwitchPolicy::on_advert(self, in_port, pkt)
    }

    /// `pkt` (arrived on `in_port`) is forwarded through port `out`: CONGA updates its DRE
    /// and the packet's overlay; nothing else does anything.
    #[inline]
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn forward(
        &mut self,
        fabric: &Fabric,
        shared: &LbShared,
        node: NodeId,
        in_port: u16,
        out: u16,
        pkt: &mut Packet,
        now_ps: u64,
    ) {
        let at = Forwarding {
            fabric,
            shared,
            node,
            in_port,
            out,
            now_ps,
        };
        SwitchPolicy::forward(self, &at, pkt)
    }

    /// Bytes of LB state switch `node` will hold (reported by `weft validate`).
    pub(crate) fn state_bytes(shared: &LbShared, fabric: &Fabric, node: NodeId) -> usize {
        let policy = shared.policy_of(fabric, node);
        let snapshot = match shared.stale_period_ps {
            0 => 0,
            _ if fabric.uplinks(node) == 0 => 0,
            _ if !policy.is_queue_aware() => 0,
            _ => Snapshot::state_bytes(fabric.num_ports(node), policy == LbPolicy::Dlb),
        };
        snapshot + SwitchLb::policy_state_bytes(policy, shared, fabric, node)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Model;
    use crate::packet::PacketKind;
    use crate::scenario::Scenario;
    use rand::SeedableRng;

    use crate::lb::TestQueues as Live;
    use crate::packet::NO_VIA;

    /// The first edge switch of a k = 4 fat tree under `policy` with stale state every 1 µs,
    /// and a data packet leaving its pod (candidates: uplink ports 2 and 3).
    fn edge_switch(policy: LbPolicy) -> (Model, SwitchLb, Packet) {
        edge_switch_with(policy, |_| {})
    }

    /// [`edge_switch`] with the scenario changed by `change` before the model is built.
    fn edge_switch_with(
        policy: LbPolicy,
        change: impl FnOnce(&mut Scenario),
    ) -> (Model, SwitchLb, Packet) {
        let mut s = Scenario::default();
        s.topology.k = 4;
        s.lb.policy = policy;
        if policy != LbPolicy::Ar {
            s.lb.state_update_period_ns = 1_000.0;
        }
        change(&mut s);
        s.validate().unwrap();
        let m = Model::build(&s).unwrap();
        let node = m.fabric.num_hosts;
        let lb = SwitchLb::new(&m.lb, &m.fabric, node, &mut Pcg32::seed_from_u64(1));
        let pkt = Packet {
            sent_ps: 0,
            flow_index: 0,
            src: 0,
            dst: 15,
            seq: 0,
            ack: 0,
            size_bytes: 4158,
            via: NO_VIA,
            entropy: 0,
            kind: PacketKind::Data,
            flags: 0,
        };
        (m, lb, pkt)
    }

    /// Ports chosen by 200 decisions at `now_ps` with live queues `live`.
    fn decide(m: &Model, lb: &mut SwitchLb, pkt: &Packet, live: &Live, now_ps: u64) -> [u32; 4] {
        let node = m.fabric.num_hosts;
        let crate::topology::Route::Choice(candidates) = m.fabric.route(node, pkt.dst, 0) else {
            panic!("an uplink choice")
        };
        let mut rng = Pcg32::seed_from_u64(now_ps);
        let mut hist = [0; 4];
        for _ in 0..200 {
            let p = lb.choose(&mut SwitchCtx {
                fabric: &m.fabric,
                shared: &m.lb,
                node,
                pkt,
                in_port: 0,
                candidates,
                queues: live,
                now_ps,
                salt: 0,
                rng: &mut rng,
            });
            hist[p as usize] += 1;
        }
        hist
    }

    /// Stale state: decisions between two refreshes see the snapshot, not the live
    /// queues, for every queue-aware policy; a refresh makes them follow the queues again.
    #[test]
    fn stale_decisions_see_the_last_refresh() {
        for policy in [
            LbPolicy::Jsq,
            LbPolicy::Choice,
            LbPolicy::Drill,
            LbPolicy::Topk,
        ] {
            let (m, mut lb, pkt) = edge_switch(policy);
            assert_eq!(lb.first_timer_ps(), Some(1_000_000), "{policy:?}");
            // Before the first refresh: the state at time 0 (all idle), whatever the queues.
            let live = Live(vec![0, 0, 0, 9_000]);
            let h = decide(&m, &mut lb, &pkt, &live, 500_000);
            assert!(h[2] > 50 && h[3] > 50, "{policy:?}: {h:?}");
            // Refreshed at 1 µs: port 3 is loaded, so every policy avoids it (Top-k's
            // default k = 1 of 2 candidates; Choice and DRILL see both ports).
            assert_eq!(lb.on_timer(1_000_000, &live), Some(2_000_000));
            let h = decide(&m, &mut lb, &pkt, &live, 1_000_001);
            assert_eq!(h, [0, 0, 200, 0], "{policy:?}");
            // The queues flip, but less than a period later nothing changes.
            let flipped = Live(vec![0, 0, 9_000, 0]);
            let h = decide(&m, &mut lb, &pkt, &flipped, 1_999_999);
            assert_eq!(h, [0, 0, 200, 0], "{policy:?}: stale state changed");
            assert_eq!(lb.on_timer(2_000_000, &flipped), Some(3_000_000));
            let h = decide(&m, &mut lb, &pkt, &flipped, 2_000_000);
            assert_eq!(h, [0, 0, 0, 200], "{policy:?}");
            // Every queue empty: the timer sleeps until a packet is queued.
            assert_eq!(lb.on_timer(3_000_000, &Live(vec![0; 4])), None);
            assert_eq!(lb.wake_ps(3_000_001), Some(4_000_000));
        }
    }

    /// AR (htsim's `adaptive_route`): data goes to the lowest quantized level (capacity
    /// 800 KB: 50 KB is level 1, 0 B level 0); packets under 100 B follow the ECMP hash
    /// whatever the queues (one port per flow).
    #[test]
    fn ar_sends_data_to_the_lowest_level_and_small_packets_by_hash() {
        let (m, mut lb, mut pkt) = edge_switch(LbPolicy::Ar);
        let live = Live(vec![0, 0, 50_000, 0]);
        assert_eq!(decide(&m, &mut lb, &pkt, &live, 0), [0, 0, 0, 200]);
        pkt.kind = PacketKind::Ack;
        pkt.size_bytes = 64;
        let h = decide(&m, &mut lb, &pkt, &live, 1_000_000);
        assert!(h == [0, 0, 200, 0] || h == [0, 0, 0, 200], "{h:?}");
        let flipped = Live(vec![0, 0, 0, 50_000]);
        assert_eq!(
            decide(&m, &mut lb, &pkt, &flipped, 2_000_000),
            h,
            "queues ignored"
        );
    }

    /// PSP under stale state: between two refreshes its weights do not change, whatever the
    /// real queues do (Table IV's weights: 900 KB is band 7 of 8, weight 0, never chosen).
    #[test]
    fn psp_weights_change_only_at_a_refresh() {
        let (m, mut lb, pkt) = edge_switch_with(LbPolicy::Psp, |s| {
            s.lb.psp.variant = crate::lb::psp::PspVariant::Table4
        });
        let loaded3 = Live(vec![0, 0, 0, 900_000]);
        assert_eq!(lb.on_timer(1_000_000, &loaded3), Some(2_000_000));
        assert_eq!(
            decide(&m, &mut lb, &pkt, &loaded3, 1_000_001),
            [0, 0, 200, 0]
        );
        let loaded2 = Live(vec![0, 0, 900_000, 0]);
        assert_eq!(
            decide(&m, &mut lb, &pkt, &loaded2, 1_999_999),
            [0, 0, 200, 0]
        );
        lb.on_timer(2_000_000, &loaded2);
        assert_eq!(
            decide(&m, &mut lb, &pkt, &loaded2, 2_000_000),
            [0, 0, 0, 200]
        );
    }

    /// The PSP paper's default combines fresh local state with stale remote state: an
    /// aggregation switch (k = 4: node 24) that snapshots its queues every 1 µs and
    /// advertises every 2 µs refreshes at every tick but sends adverts at even ones only,
    /// and goes to sleep only at an advert tick that finds it idle (its idle advert goes out).
    #[test]
    fn local_snapshots_and_remote_adverts_run_on_their_own_periods() {
        let mut s = Scenario::default();
        s.topology.k = 4;
        s.lb.policy = LbPolicy::Psp;
        s.lb.psp.remote = true;
        s.lb.state_update_period_ns = 1_000.0;
        s.lb.psp.remote_period_ns = 2_000.0;
        s.validate().unwrap();
        let m = Model::build(&s).unwrap();
        let agg = 24;
        assert_eq!(m.fabric.tier(agg), 2);
        let mut lb = SwitchLb::new(&m.lb, &m.fabric, agg, &mut Pcg32::seed_from_u64(1));
        assert_eq!(lb.first_timer_ps(), Some(1_000_000));
        let busy = Live(vec![300_000, 0, 0, 0]);
        let idle = Live(vec![0; 4]);
        assert_eq!(lb.on_timer(1_000_000, &busy), Some(2_000_000));
        assert!(lb.adverts().is_none(), "1 µs: a snapshot, no advert");
        assert_eq!(lb.on_timer(2_000_000, &busy), Some(3_000_000));
        let (_, advert) = lb.adverts().expect("2 µs: an advert tick");
        assert_eq!(
            advert[0], 2,
            "300 KB toward edge 16: band 2 of 8 (fig3, 120 KB apart)"
        );
        // Idle at an odd tick: keep ticking until the next advert tick says idle.
        assert_eq!(lb.on_timer(3_000_000, &idle), Some(4_000_000));
        assert!(lb.adverts().is_none());
        assert_eq!(lb.on_timer(4_000_000, &idle), None);
        assert_eq!(lb.adverts().expect("the idle advert").1[0], 0);
        assert_eq!(lb.wake_ps(4_000_001), Some(5_000_000));
    }

    /// Top-k with remote state (`lb.psp.remote`): an uplink whose spine reports a full queue
    /// toward the destination leaf is ranked by that band, not by its own empty queue (k = 1:
    /// the other uplink always wins, although its own queue is longer).
    #[test]
    fn topk_with_remote_state_ranks_by_the_advertised_band() {
        let (m, mut lb, pkt) = edge_switch_with(LbPolicy::Topk, |s| {
            s.topology.kind = crate::scenario::TopologyKind::LeafSpine;
            s.lb.psp.remote = true;
            s.lb.topk.k = Some(1);
            s.lb.state_update_period_ns = 0.0;
            s.lb.psp.remote_period_ns = 1_000.0;
        });
        // Leaf-spine k = 4: hosts 0..8, leaves 8..12, spines 12..14; leaf 8's uplinks are
        // ports 2 (spine 12) and 3 (spine 13). Spine 12 reports band 8 toward leaf 3.
        let leaf = m.fabric.num_hosts;
        let mut pkt = pkt;
        pkt.dst = 7;
        lb.on_advert(2, &Packet::advert(12, leaf, 0, &[0, 0, 0, 8], 64));
        let q = Live(vec![0, 0, 0, 50_000]);
        assert_eq!(decide(&m, &mut lb, &pkt, &q, 10), [0, 0, 0, 200]);
        // Without the report the emptier own queue wins.
        let (m, mut lb, _) = edge_switch_with(LbPolicy::Topk, |s| {
            s.topology.kind = crate::scenario::TopologyKind::LeafSpine;
            s.lb.topk.k = Some(1);
            s.lb.state_update_period_ns = 0.0;
        });
        assert_eq!(decide(&m, &mut lb, &pkt, &q, 10), [0, 0, 200, 0]);
    }

    /// The Ofan paper, §4.1: under failures Ofan keeps advancing the pointer until it yields a
    /// valid port. k = 6: edge switch 54 (nodes: 54 hosts first) has uplinks 3, 4, 5; with 4
    /// failed, a key's rotation over the three visits the two valid ports alternately, so 300
    /// packets give exactly 150 each (Simple RR likewise skips the failed port).
    #[test]
    fn rotations_skip_failed_uplinks_and_split_evenly_over_the_rest() {
        for policy in [LbPolicy::Ofan, LbPolicy::SimpleRr] {
            let mut s = Scenario::default();
            s.topology.k = 6;
            s.lb.policy = policy;
            s.failures.links = vec![crate::scenario::FailedLink { node: 54, port: 4 }];
            s.validate().unwrap();
            let m = Model::build(&s).unwrap();
            let node = 54;
            let mut lb = SwitchLb::new(&m.lb, &m.fabric, node, &mut Pcg32::seed_from_u64(1));
            let (_, _, mut pkt) = edge_switch(LbPolicy::Jsq);
            pkt.dst = 53; // another pod
            let crate::topology::Route::Choice(candidates) = m.fabric.route(node, pkt.dst, 0)
            else {
                panic!("an uplink choice")
            };
            assert_eq!(candidates.iter().collect::<Vec<_>>(), vec![3, 5]);
            let mut rng = Pcg32::seed_from_u64(2);
            let mut hist = [0u32; 6];
            for _ in 0..300 {
                let p = lb.choose(&mut SwitchCtx {
                    fabric: &m.fabric,
                    shared: &m.lb,
                    node,
                    pkt: &pkt,
                    in_port: 0,
                    candidates,
                    queues: &Live(vec![0; 6]),
                    now_ps: 0,
                    salt: 0,
                    rng: &mut rng,
                });
                hist[p as usize] += 1;
            }
            assert_eq!(hist, [0, 0, 0, 150, 0, 150], "{policy:?}");
        }
    }

    #[test]
    fn stale_state_memory_is_reported() {
        let (m, _, _) = edge_switch(LbPolicy::Drill);
        let node = m.fabric.num_hosts;
        // 4 ports × 8 B of snapshot + one group of m = 1 remembered port (2 B).
        assert_eq!(SwitchLb::state_bytes(&m.lb, &m.fabric, node), 4 * 8 + 2);
        let (m, _, _) = edge_switch(LbPolicy::Jsq);
        assert_eq!(SwitchLb::state_bytes(&m.lb, &m.fabric, node), 4 * 8);
    }
}
