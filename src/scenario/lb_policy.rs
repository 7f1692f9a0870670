//! `lb.policy`: the registry of switch and host LB policies (one line each) and the facts
//! about each that validation and the model ask (feedback, queue awareness, switch-only).

use super::registry::registry;

registry! {
    pub enum LbPolicy {
        /// Per-flow hashing: a flow draws one entropy value at start; switches hash (flow key,
        /// entropy, per-switch salt) as htsim's `freeBSDHash`.
        Ecmp => "ecmp",
        /// Random packet spraying: hosts draw a fresh entropy value per packet; switches hash as
        /// ECMP.
        Rps => "rps",
        /// Switches pick a uniformly random uplink per packet.
        Rsq => "rsq",
        /// One round-robin pointer per switch over its uplinks, random start (ACKs hashed:
        /// `lb.ack_ecmp`).
        SimpleRr => "simple_rr",
        /// The uplink with the fewest queued bytes, uniform among ties.
        Jsq => "jsq",
        /// The Ofan paper's Choice: the less loaded of two distinct random uplinks (DRILL(2, 0)).
        Choice => "choice",
        /// DRILL(d, m) (`lb.drill.d`, `lb.drill.m`): the least loaded of d random uplinks and m
        /// remembered ones.
        Drill => "drill",
        /// Uniform among the k uplinks with the fewest queued bytes (`lb.topk.k`).
        Topk => "topk",
        /// Digit-reversal bouncing: per-flow pointers walk the lowest-common-layer switches in
        /// digit-reversed order.
        Drb => "drb",
        /// The Ofan paper's per-destination round-robin pointers with permuted port orders.
        Ofan => "ofan",
        /// Ofan with pointer sets shared per pipe of `lb.pipe_ports` ingress ports.
        Pofan => "pofan",
        /// REPS: each flow recycles entropy values acknowledged without ECN (`[lb.reps]`).
        Reps => "reps",
        /// Spectrum-X-style adaptive routing: the uplink of the lowest quantized queue level
        /// (`[lb.ar]`).
        Ar => "ar",
        /// The PSP paper's band-weighted random choice of uplink (`[lb.psp]`).
        Psp => "psp",
        /// Uniform among the uplinks in the lowest PSP band (`[lb.psp]`).
        BandJsq => "band_jsq",
        /// Broadcom DLB: the best quality band from queue and utilization levels (`[lb.dlb]`).
        Dlb => "dlb",
        /// Valiant load balancing: through a random top-tier switch per packet or flow
        /// (`[lb.valiant]`).
        Valiant => "valiant",
        /// UEC's per-EV penalty bitmap (htsim `UecMpBitmap`).
        Bitmap => "bitmap",
        /// UEC's recycled good EVs, else the bitmap (htsim `UecMpMixed`); not `lb.mixed`.
        UecMixed => "mixed",
        /// Ethereal: each flow split into subflows, one per path through the lowest common
        /// layer (`[lb.ethereal]`).
        Ethereal => "ethereal",
        /// CONGA, adapted per packet: leaf-to-leaf congestion feedback (`[lb.conga]`).
        Conga => "conga",
        /// ByteDance SGLB: DLB quality combined with the upper switches' adverts (`[lb.sglb]`).
        Sglb => "sglb",
        /// Static PGFT routings (the PGFT routing paper; Zahavi's D-mod-k), this one D-mod-k: a
        /// fixed port per destination.
        Dmodk => "dmodk",
        /// S-mod-k: a fixed port per source.
        Smodk => "smodk",
        /// D-mod-k over grouped ids (node types, `[topology.pgft]`).
        Gdmodk => "gdmodk",
        /// S-mod-k over grouped ids (node types, `[topology.pgft]`).
        Gsmodk => "gsmodk",
        /// A random port per (switch, destination), drawn from the seed.
        Random => "random",
    }
}

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

impl LbPolicy {
    fn facts(&self) -> Facts {
        use LbPolicy as P;
        match self {
            P::Ecmp | P::Rps | P::Drb | P::Valiant | P::Ethereal => Facts {
                host_side: true,
                ..SWITCH_ONLY
            },
            P::Reps | P::Bitmap | P::UecMixed => Facts {
                host_side: true,
                feedback: true,
                ..SWITCH_ONLY
            },
            P::Jsq | P::Choice | P::Drill | P::Topk | P::Psp | P::BandJsq | P::Dlb => Facts {
                queue_aware: true,
                ..SWITCH_ONLY
            },
            P::Conga | P::Sglb => Facts {
                every_switch: true,
                ..SWITCH_ONLY
            },
            P::Rsq
            | P::SimpleRr
            | P::Ofan
            | P::Pofan
            | P::Ar
            | P::Dmodk
            | P::Smodk
            | P::Gdmodk
            | P::Gsmodk
            | P::Random => SWITCH_ONLY,
        }
    }

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
