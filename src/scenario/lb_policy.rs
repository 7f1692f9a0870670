//! `lb.policy`: the registry of switch and host LB policies (one line each) and the facts
//! about each that validation and the model ask (feedback, queue awareness, switch-only).

use super::registry::registry;

/// The one list of LB policies: per policy its doc, variant, scenario name, group (the
/// [`Facts`] constant below), the type that runs it at a switch (a path in `crate::lb`, which
/// implements `lb::switch_policy::BuildSwitch`) and the type that runs its host side (a path in `crate::lb`, which
/// implements `lb::host_policy::BuildHost`; `Fixed`: entropy 0, switches decide alone). Adding a policy is its file plus one line here.
///
/// `lb_policies!(then)` hands the list to the macro `then`: here `lb_policy_enum!` makes
/// the `LbPolicy` enum and its facts, and in `lb` the per-switch enum and the host-side table
/// come from the same lines, so the layers below `lb` name its types only as tokens.
macro_rules! lb_policies {
    ($then:ident) => {
        $then! {
            /// Per-flow hashing: a flow draws one entropy value at start; switches hash (flow key,
            /// entropy, per-switch salt) as htsim's `freeBSDHash`.
            Ecmp => "ecmp", HOST_SIDE, switch: ecmp::Hash, host: ecmp::PerFlow;
            /// Random packet spraying: hosts draw a fresh entropy value per packet; switches
            /// hash as ECMP.
            Rps => "rps", HOST_SIDE, switch: ecmp::Hash, host: ecmp::PerPacket;
            /// Switches pick a uniformly random uplink per packet.
            Rsq => "rsq", SWITCH_ONLY, switch: rsq::Rsq, host: Fixed;
            /// One round-robin pointer per switch over its uplinks, random start (ACKs hashed:
            /// `lb.ack_ecmp`).
            SimpleRr => "simple_rr", SWITCH_ONLY, switch: simple_rr::SimpleRr, host: Fixed;
            // ANCHOR: jsq
            /// The uplink with the fewest queued bytes, uniform among ties.
            Jsq => "jsq", QUEUE_AWARE, switch: jsq::Jsq, host: Fixed;
            // ANCHOR_END: jsq
            /// The Ofan paper's Choice: the less loaded of two distinct random uplinks
            /// (DRILL(2, 0)).
            Choice => "choice", QUEUE_AWARE, switch: choice::Choice, host: Fixed;
            /// DRILL(d, m) (`lb.drill.d`, `lb.drill.m`): the least loaded of d random uplinks and m
            /// remembered ones.
            Drill => "drill", QUEUE_AWARE, switch: drill::Drill, host: Fixed;
            /// Uniform among the k uplinks with the fewest queued bytes (`lb.topk.k`).
            Topk => "topk", QUEUE_AWARE, switch: topk::TopkSwitch, host: Fixed;
            /// Digit-reversal bouncing: per-flow pointers walk the lowest-common-layer switches in
            /// digit-reversed order.
            Drb => "drb", HOST_SIDE, switch: drb::FollowPath, host: drb::Codes;
            /// The Ofan paper's per-destination round-robin pointers with permuted port orders.
            Ofan => "ofan", SWITCH_ONLY, switch: ofan::OfanSwitch, host: Fixed;
            /// Ofan with pointer sets shared per pipe of `lb.pipe_ports` ingress ports.
            Pofan => "pofan", SWITCH_ONLY, switch: ofan::OfanSwitch, host: Fixed;
            /// REPS: each flow recycles entropy values acknowledged without ECN (`[lb.reps]`).
            Reps => "reps", FEEDBACK, switch: ecmp::Hash, host: reps::RepsParams;
            /// Spectrum-X-style adaptive routing: the uplink of the lowest quantized queue level
            /// (`[lb.ar]`).
            Ar => "ar", SWITCH_ONLY, switch: ar::ArSwitch, host: Fixed;
            /// The PSP paper's band-weighted random choice of uplink (`[lb.psp]`).
            Psp => "psp", QUEUE_AWARE, switch: psp_switch::Banded, host: Fixed;
            /// Uniform among the uplinks in the lowest PSP band (`[lb.psp]`).
            BandJsq => "band_jsq", QUEUE_AWARE, switch: psp_switch::Banded, host: Fixed;
            /// Broadcom DLB: the best quality band from queue and utilization levels (`[lb.dlb]`).
            Dlb => "dlb", QUEUE_AWARE, switch: dlb::DlbSwitch, host: Fixed;
            /// Valiant load balancing: through a random top-tier switch per packet or flow
            /// (`[lb.valiant]`).
            Valiant => "valiant", HOST_SIDE, switch: drb::FollowPath, host: valiant::ValiantHost;
            /// UEC's per-EV penalty bitmap (htsim `UecMpBitmap`).
            Bitmap => "bitmap", FEEDBACK, switch: ecmp::Hash, host: bitmap::BitmapParams;
            /// UEC's recycled good EVs, else the bitmap (htsim `UecMpMixed`); not `lb.mixed`.
            UecMixed => "mixed", FEEDBACK, switch: ecmp::Hash, host: uec_mixed::MixedParams;
            /// Ethereal: each flow split into subflows, one per path through the lowest common
            /// layer (`[lb.ethereal]`).
            Ethereal => "ethereal", HOST_SIDE, switch: drb::FollowPath, host: ethereal::EtherealParams;
            /// CONGA, adapted per packet: leaf-to-leaf congestion feedback (`[lb.conga]`).
            Conga => "conga", EVERY_SWITCH, switch: Box<conga::Conga>, host: Fixed;
            /// ByteDance SGLB: DLB quality combined with the upper switches' adverts (`[lb.sglb]`).
            Sglb => "sglb", EVERY_SWITCH, switch: Box<sglb::Sglb>, host: Fixed;
            /// Static PGFT routings (the PGFT routing paper; Zahavi's D-mod-k), this one D-mod-k: a
            /// fixed port per destination.
            Dmodk => "dmodk", SWITCH_ONLY, switch: static_route::Static, host: Fixed;
            /// S-mod-k: a fixed port per source.
            Smodk => "smodk", SWITCH_ONLY, switch: static_route::Static, host: Fixed;
            /// D-mod-k over grouped ids (node types, `[topology.pgft]`).
            Gdmodk => "gdmodk", SWITCH_ONLY, switch: static_route::Static, host: Fixed;
            /// S-mod-k over grouped ids (node types, `[topology.pgft]`).
            Gsmodk => "gsmodk", SWITCH_ONLY, switch: static_route::Static, host: Fixed;
            /// A random port per (switch, destination), drawn from the seed.
            Random => "random", SWITCH_ONLY, switch: static_route::Static, host: Fixed;
        }
    };
}
pub(crate) use lb_policies;

/// `lb_policies!`'s callback for this layer: the `LbPolicy` enum (through [`registry!`]) and
/// [`LbPolicy::facts`], from the names and groups (the switch and host columns are `lb`'s).
macro_rules! lb_policy_enum {
    ($(
        $(#[$meta:meta])* $Variant:ident => $key:literal, $facts:ident,
        switch: $switch:ty, host: $host:ty;
    )+) => {
        registry! {
            /// `lb.policy`: every switch and host LB policy weft runs.
            pub enum LbPolicy {
                $( $(#[$meta])* $Variant => $key, )+
            }
        }

        impl LbPolicy {
            /// The policy's group, from its registry line.
            fn facts(&self) -> Facts {
                match self {
                    $( LbPolicy::$Variant => $facts, )+
                }
            }
        }
    };
}

lb_policies!(lb_policy_enum);

/// What the rest of weft needs to know about a policy. [`LbPolicy::facts`] states it for every
/// policy in one exhaustive `match` with no catch-all arm, so a new policy does not build until
/// its line says which group it joins.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Facts {
    /// Hosts take part (entropy values, path codes): not a switch-only policy.
    host_side: bool,
    /// Learns from ACKs, NACKs and timeouts.
    feedback: bool,
    /// Switches decide from their own queues.
    queue_aware: bool,
    /// Switches exchange state, so every switch must run it.
    every_switch: bool,
}

/// A policy that switches run alone, from nothing but their own state.
const SWITCH_ONLY: Facts = Facts {
    host_side: false,
    feedback: false,
    queue_aware: false,
    every_switch: false,
};

/// Hosts take part (entropy values, path codes) and switches follow.
const HOST_SIDE: Facts = Facts {
    host_side: true,
    ..SWITCH_ONLY
};

/// Hosts take part and learn from ACKs, NACKs and timeouts.
const FEEDBACK: Facts = Facts {
    host_side: true,
    feedback: true,
    ..SWITCH_ONLY
};

/// Switches decide from their own queues (live or a stale snapshot).
const QUEUE_AWARE: Facts = Facts {
    queue_aware: true,
    ..SWITCH_ONLY
};

/// Switches exchange state, so every switch must run the policy.
const EVERY_SWITCH: Facts = Facts {
    every_switch: true,
    ..SWITCH_ONLY
};

impl LbPolicy {
    /// The policy learns from feedback: ACKs (entropy value and ECN echo) under every
    /// transport, and NACKs and timeouts under the reliable one (`host.cc` other than
    /// `none`). The paced transport ACKs every data packet whatever the policy, so these
    /// policies need nothing more from it.
    pub fn needs_feedback(&self) -> bool {
        self.facts().feedback
    }

    /// Whether the policy is all switch side (hosts send plain packets), so it can share a
    /// fabric with other such policies (`lb.mixed`).
    pub fn is_switch_only(&self) -> bool {
        !self.facts().host_side
    }

    /// Whether switches exchange state (CONGA's overlay, SGLB's adverts), so every switch
    /// must run it (no `lb.mixed`).
    pub fn needs_every_switch(&self) -> bool {
        self.facts().every_switch
    }

    /// Whether switches decide from their queues (and so can see them through a stale
    /// snapshot, `lb.state_update_period_ns`).
    pub fn is_queue_aware(&self) -> bool {
        self.facts().queue_aware
    }
}

#[cfg(test)]
mod tests {
    use super::LbPolicy;

    /// The groups as the policies' papers describe them (a few of each, so a line moved to the
    /// wrong group fails here).
    #[test]
    fn facts_match_the_policies_descriptions() {
        assert!(LbPolicy::Reps.needs_feedback() && !LbPolicy::Reps.is_switch_only());
        assert!(!LbPolicy::Ecmp.needs_feedback() && !LbPolicy::Ecmp.is_switch_only());
        assert!(LbPolicy::Jsq.is_queue_aware() && LbPolicy::Jsq.is_switch_only());
        assert!(!LbPolicy::Ofan.is_queue_aware() && LbPolicy::Ofan.is_switch_only());
        assert!(LbPolicy::Conga.needs_every_switch() && LbPolicy::Conga.is_switch_only());
        assert!(!LbPolicy::Ar.is_queue_aware() && !LbPolicy::Ar.needs_every_switch());
        let feedback: Vec<_> = LbPolicy::ALL
            .iter()
            .filter(|p| p.needs_feedback())
            .collect();
        assert_eq!(feedback.len(), 3, "REPS, bitmap and mixed: {feedback:?}");
        // Feedback comes through the hosts: no switch-only policy needs it.
        assert!(LbPolicy::ALL
            .iter()
            .all(|p| !(p.needs_feedback() && p.is_switch_only())));
    }
}
