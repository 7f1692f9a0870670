//! Switch-side LB: per-switch state ([`SwitchLb`]) and the one context argument every policy
//! gets ([`SwitchCtx`]): the packet, its ingress port, the candidate ports, the switch's own
//! port state, the time, the switch's salt and RNG.

use super::drill::Drill;
use super::topk::Topk;
use super::{choice, ecmp, jsq, ofan::Ofan, rsq, simple_rr::SimpleRr, LbShared, SwitchKind};
use crate::packet::{Packet, NO_VIA};
use crate::scenario::LbPolicy;
use crate::topology::{Candidates, Fabric, NodeId};
use rand_pcg::Pcg32;
use serde::{Deserialize, Serialize};

/// What a switch policy may read of its own ports.
pub trait QueueView {
    /// Bytes queued at port `p` (the packet being transmitted included).
    fn queued_bytes(&self, p: u16) -> u64;
}

/// Everything a switch policy may look at for one decision.
pub struct SwitchCtx<'a, Q: QueueView> {
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

/// Per-switch LB state.
#[derive(Serialize, Deserialize)]
pub enum SwitchLb {
    Hash,
    Rsq,
    SimpleRr(SimpleRr),
    Jsq,
    Choice,
    Drill(Drill),
    Topk(Topk),
    /// Follow the DRB path code: this switch's digit is `(via / below) % candidates`, where
    /// `below` is the product of the uplink counts of the tiers under it.
    FollowPath {
        below: u32,
    },
    /// Ofan state and the subtree level that keys its pointers (the switch's tier).
    Ofan {
        state: Ofan,
        level: u8,
    },
    /// Tests only: hashes like ECMP and asks for a timer every `period_ps`, recording when
    /// it fired (the first 16 times), `limit` times in all.
    #[cfg(test)]
    Probe {
        period_ps: u64,
        limit: usize,
        fired: Vec<u64>,
    },
}

impl SwitchLb {
    pub fn new(shared: &LbShared, fabric: &Fabric, node: NodeId, rng: &mut Pcg32) -> SwitchLb {
        let uplinks = fabric.uplinks(node);
        let cfg = &shared.cfg;
        match shared.switch_kind {
            SwitchKind::Hash => SwitchLb::Hash,
            SwitchKind::Rsq => SwitchLb::Rsq,
            SwitchKind::SimpleRr => {
                SwitchLb::SimpleRr(SimpleRr::new(uplinks, shared.cfg.rr_reshuffle, rng))
            }
            SwitchKind::Jsq => SwitchLb::Jsq,
            SwitchKind::Choice => SwitchLb::Choice,
            SwitchKind::Drill => {
                SwitchLb::Drill(Drill::new(cfg.drill_d as u16, cfg.drill_m as u16))
            }
            SwitchKind::Topk => SwitchLb::Topk(Topk::new(cfg.topk_k.map(|k| k as u16))),
            SwitchKind::FollowPath => SwitchLb::FollowPath {
                below: super::drb::digit_divisor(fabric, fabric.tier(node)),
            },
            SwitchKind::Ofan if uplinks == 0 => SwitchLb::Hash,
            SwitchKind::Ofan => {
                let ports = fabric.num_ports(node);
                let level = fabric.tier(node);
                let (_, n_dest) = fabric.subtree(0, level);
                let state = Ofan::new(uplinks, ports, pipe_ports(shared, ports), n_dest, rng);
                SwitchLb::Ofan { state, level }
            }
        }
    }

    /// Chooses the output port (absolute index) among `ctx.candidates`.
    #[inline]
    pub fn choose<Q: QueueView>(&mut self, ctx: &mut SwitchCtx<'_, Q>) -> u16 {
        let c = ctx.candidates;
        debug_assert!(!c.is_empty());
        if c.len() == 1 {
            return c.get(0);
        }
        let pkt = ctx.pkt;
        if ctx.shared.ack_ecmp && !pkt.is_data() {
            return c.get(ecmp::choose(pkt.hash_key(), pkt.entropy, ctx.salt, c.len()));
        }
        let i = match self {
            SwitchLb::Hash => ecmp::choose(pkt.hash_key(), pkt.entropy, ctx.salt, c.len()),
            #[cfg(test)]
            SwitchLb::Probe { .. } => ecmp::choose(pkt.hash_key(), pkt.entropy, ctx.salt, c.len()),
            SwitchLb::Rsq => rsq::choose(c.len(), ctx.rng),
            SwitchLb::SimpleRr(rr) => {
                if c.len() as usize != rr.width() {
                    candidates_mismatch("simple_rr", c.len(), rr.width() as u16);
                }
                rr.choose(c.len(), ctx.rng)
            }
            SwitchLb::Jsq => jsq::choose(ctx.queues, c, ctx.rng),
            SwitchLb::Choice => choice::choose(ctx.queues, c, ctx.rng),
            SwitchLb::Drill(d) => d.choose(ctx.queues, c, ctx.rng),
            SwitchLb::Topk(t) => t.choose(ctx.queues, c, ctx.rng),
            SwitchLb::FollowPath { .. } if pkt.via == NO_VIA => {
                ecmp::choose(pkt.hash_key(), pkt.entropy, ctx.salt, c.len())
            }
            SwitchLb::FollowPath { below } => ((pkt.via / *below) % c.len() as u32) as u16,
            SwitchLb::Ofan { state, level } => {
                let (d, _) = ctx.fabric.subtree(pkt.dst, *level);
                // Ofan rotates over all w uplinks: fewer candidates (failed links) need the
                // skipping rule of SEEDS.md, not an index outside the candidates.
                if c.len() != state.width() {
                    candidates_mismatch("ofan", c.len(), state.width());
                }
                let order = ctx.shared.orders.for_width(state.width());
                state.choose(order, ctx.in_port, d, pkt.size_class())
            }
        };
        c.get(i)
    }

    /// When the policy first wants [`SwitchLb::on_timer`] called, if ever (e.g. the first
    /// refresh of a periodically sampled queue state).
    pub fn first_timer_ps(&self) -> Option<u64> {
        match self {
            #[cfg(test)]
            SwitchLb::Probe { period_ps, .. } => Some(*period_ps),
            _ => None,
        }
    }

    /// The policy's timer fired at `now_ps`; returns when it wants to be woken next.
    pub fn on_timer(&mut self, now_ps: u64) -> Option<u64> {
        match self {
            #[cfg(test)]
            SwitchLb::Probe {
                period_ps,
                limit,
                fired,
            } => {
                if fired.len() < 16 {
                    fired.push(now_ps);
                }
                *limit -= 1;
                (*limit > 0).then_some(now_ps + *period_ps)
            }
            _ => {
                let _ = now_ps;
                None
            }
        }
    }

    /// Bytes of LB state switch `node` will hold (reported by `weft validate`).
    pub fn state_bytes(shared: &LbShared, fabric: &Fabric, node: NodeId) -> usize {
        let ports = fabric.num_ports(node);
        let uplinks = fabric.uplinks(node);
        match shared.switch_kind {
            SwitchKind::Ofan if uplinks > 0 => Ofan::pointer_len(
                ports,
                pipe_ports(shared, ports),
                fabric.subtree(0, fabric.tier(node)).1,
            ),
            SwitchKind::SimpleRr => 2 + 2 * uplinks as usize,
            // One candidate group (the uplinks) per switch in these fabrics.
            SwitchKind::Drill if uplinks > 0 => Drill::group_bytes(shared.cfg.drill_m as u16),
            _ => 0,
        }
    }
}

/// A rotation over a switch's uplinks met a different candidate set: out of line, so the
/// check costs a comparison.
#[cold]
#[inline(never)]
fn candidates_mismatch(policy: &str, candidates: u16, uplinks: u16) -> ! {
    panic!("{policy}: {candidates} candidate ports at a switch with {uplinks} uplinks")
}

/// Ingress ports per pipe: all of them for Ofan, `pipe_ports` for pOfan.
fn pipe_ports(shared: &LbShared, ports: u16) -> u16 {
    if shared.cfg.policy == LbPolicy::Ofan {
        ports
    } else {
        shared.cfg.pipe_ports as u16
    }
}
