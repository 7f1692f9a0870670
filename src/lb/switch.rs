//! Switch-side LB: per-switch state ([`SwitchLb`]) and the one context argument every policy
//! gets ([`SwitchCtx`]): the packet, its ingress port, the candidate ports, the switch's own
//! port state, the time, the switch's salt and RNG.

use super::ar::Ar;
use super::conga::Conga;
use super::dlb::Dlb;
use super::drill::Drill;
use super::remote::{Metric, Remote};
use super::stale::Snapshot;
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
    /// Time port `p` has spent transmitting since the start, in ps (utilization; 0 where
    /// unknown).
    fn busy_ps(&self, _p: u16) -> u64 {
        0
    }
    /// Bytes port `p` has finished sending since the start (a counter; DLB's load).
    fn sent_bytes(&self, p: u16) -> u64;
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
    Ar(Ar),
    Psp,
    BandJsq,
    /// PSP / band JSQ with the spines' advertised queues (`lb.psp.remote`).
    PspRemote(Box<Remote>),
    BandJsqRemote(Box<Remote>),
    /// Top-k ranking by the PSP remote band, then by its own queue (`lb.psp.remote`).
    TopkRemote(Topk, Box<Remote>),
    Conga(Box<Conga>),
    Sglb(Box<Remote>),
    Dlb(Dlb),
    /// A queue-aware policy deciding from a snapshot of the switch's queues refreshed every
    /// period (`lb.state_update_period_ns`) by the LB timer; the inner policy has no timer of
    /// its own (`lb.psp.remote`'s adverts, on the same period, run on this one).
    Stale {
        snapshot: Snapshot,
        inner: Box<SwitchLb>,
        /// The inner policy's timer fired at the last tick (its adverts go out then only).
        inner_ticked: bool,
    },
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
    /// A static routing: `shared.static_routes[index]` (`static_route.rs`).
    Static {
        index: u8,
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
        let lb = SwitchLb::fresh(shared, fabric, node, rng);
        match shared.stale_period_ps {
            // Switches without uplinks (cores, spines) never choose in these fabrics: no
            // snapshot, no refresh timer.
            0 => lb,
            _ if fabric.uplinks(node) == 0 => lb,
            _ if !shared.policy_of(fabric, node).is_queue_aware() => lb,
            period => SwitchLb::Stale {
                snapshot: Snapshot::new(
                    fabric.num_ports(node),
                    period,
                    matches!(lb, SwitchLb::Dlb(_)),
                ),
                inner: Box::new(lb),
                inner_ticked: false,
            },
        }
    }

    /// The policy's state, reading live queues.
    fn fresh(shared: &LbShared, fabric: &Fabric, node: NodeId, rng: &mut Pcg32) -> SwitchLb {
        let uplinks = fabric.uplinks(node);
        let cfg = &shared.cfg;
        match shared.kind_of(fabric, node) {
            SwitchKind::Hash => SwitchLb::Hash,
            SwitchKind::Rsq => SwitchLb::Rsq,
            SwitchKind::SimpleRr => {
                SwitchLb::SimpleRr(SimpleRr::new(uplinks, shared.cfg.rr_reshuffle, rng))
            }
            SwitchKind::Jsq => SwitchLb::Jsq,
            SwitchKind::Choice => SwitchLb::Choice,
            SwitchKind::Drill => {
                SwitchLb::Drill(Drill::new(cfg.drill.d as u16, cfg.drill.m as u16))
            }
            SwitchKind::Topk if cfg.psp.remote => SwitchLb::TopkRemote(
                Topk::new(cfg.topk.k.map(|k| k as u16)),
                band_remote(shared, fabric, node),
            ),
            SwitchKind::Topk => SwitchLb::Topk(Topk::new(cfg.topk.k.map(|k| k as u16))),
            SwitchKind::Psp if cfg.psp.remote => {
                SwitchLb::PspRemote(band_remote(shared, fabric, node))
            }
            SwitchKind::BandJsq if cfg.psp.remote => {
                SwitchLb::BandJsqRemote(band_remote(shared, fabric, node))
            }
            SwitchKind::Psp => SwitchLb::Psp,
            SwitchKind::BandJsq => SwitchLb::BandJsq,
            SwitchKind::Conga => SwitchLb::Conga(Box::new(Conga::new(fabric, node, &shared.conga))),
            SwitchKind::Sglb => SwitchLb::Sglb(Box::new(
                Remote::new(
                    fabric,
                    node,
                    Metric::Quality(shared.ar),
                    shared.sglb_period_ps,
                )
                .with_advert_wire(fabric, node, shared.advert_wire_bytes)
                .with_flowlets_if(shared.sglb_flowlets, fabric, node),
            )),
            SwitchKind::Ar if uplinks == 0 => SwitchLb::Hash,
            SwitchKind::Ar => SwitchLb::Ar(Ar::new(fabric.num_ports(node), &shared.ar)),
            SwitchKind::Dlb if uplinks == 0 => SwitchLb::Hash,
            SwitchKind::Dlb => SwitchLb::Dlb(Dlb::new(fabric.num_ports(node), &shared.dlb)),
            SwitchKind::FollowPath => SwitchLb::FollowPath {
                below: super::drb::digit_divisor(fabric, fabric.tier(node)),
            },
            SwitchKind::Static => SwitchLb::Static {
                index: super::static_route::index_of(shared, shared.policy_of(fabric, node)),
            },
            SwitchKind::Ofan if uplinks == 0 => SwitchLb::Hash,
            SwitchKind::Ofan => {
                let ports = fabric.num_ports(node);
                let level = fabric.tier(node);
                let (_, n_dest) = fabric.subtree(0, level);
                let pipes = pipe_ports(shared, fabric, node, ports);
                let state = Ofan::new(uplinks, ports, pipes, n_dest, rng);
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
        // Parallel down links of a PGFT: policies built around a switch's uplinks (rotations,
        // path digits, per-uplink tables) hash the flow onto one of them, like a LAG.
        if ctx.fabric.has_parallel_down()
            && self.is_uplink_structured()
            && ctx.fabric.is_down_port(ctx.node, c.get(0))
        {
            return c.get(ecmp::choose(pkt.hash_key(), pkt.entropy, ctx.salt, c.len()));
        }
        self.port_for(ctx)
    }

    /// The policies that pick a port themselves (over all uplinks, or through an inner policy);
    /// the rest pick an index into the candidates ([`SwitchLb::index_for`]).
    fn port_for<Q: QueueView>(&mut self, ctx: &mut SwitchCtx<'_, Q>) -> u16 {
        match self {
            SwitchLb::SimpleRr(rr) => simple_rr_port(rr, ctx),
            SwitchLb::Stale {
                snapshot, inner, ..
            } => inner.choose(&mut SwitchCtx {
                fabric: ctx.fabric,
                shared: ctx.shared,
                node: ctx.node,
                pkt: ctx.pkt,
                in_port: ctx.in_port,
                candidates: ctx.candidates,
                queues: snapshot,
                now_ps: ctx.now_ps,
                salt: ctx.salt,
                rng: &mut *ctx.rng,
            }),
            SwitchLb::Static { index } => static_port(*index, ctx),
            SwitchLb::FollowPath { below } => follow_path_port(*below, ctx),
            SwitchLb::Ofan { state, level } => ofan_port(state, *level, ctx),
            _ => {
                let i = self.index_for(ctx);
                ctx.candidates.get(i)
            }
        }
    }

    /// The index into `ctx.candidates` of the policies that choose among the valid ports only.
    fn index_for<Q: QueueView>(&mut self, ctx: &mut SwitchCtx<'_, Q>) -> u16 {
        let (c, pkt) = (ctx.candidates, ctx.pkt);
        match self {
            SwitchLb::Hash => ecmp::choose(pkt.hash_key(), pkt.entropy, ctx.salt, c.len()),
            #[cfg(test)]
            SwitchLb::Probe { .. } => ecmp::choose(pkt.hash_key(), pkt.entropy, ctx.salt, c.len()),
            SwitchLb::Rsq => rsq::choose(c.len(), ctx.rng),
            SwitchLb::Jsq => jsq::choose(ctx.queues, c, ctx.rng),
            SwitchLb::Choice => choice::choose(ctx.queues, c, ctx.rng),
            SwitchLb::Drill(d) => d.choose(ctx.queues, c, ctx.rng),
            SwitchLb::Topk(t) => t.choose(ctx.queues, c, ctx.rng),
            SwitchLb::Ar(_) if pkt.size_bytes < ctx.shared.ar.small_bytes => {
                ecmp::choose(pkt.hash_key(), pkt.entropy, ctx.salt, c.len())
            }
            SwitchLb::Ar(a) => {
                let key = pkt.hash_key();
                a.choose(
                    &ctx.shared.ar,
                    ctx.queues,
                    c,
                    key,
                    ctx.salt,
                    ctx.now_ps,
                    ctx.rng,
                )
            }
            SwitchLb::Dlb(d) => dlb_index(d, ctx),
            SwitchLb::Psp => ctx.shared.bands.choose_psp(ctx.queues, c, ctx.rng),
            SwitchLb::BandJsq => ctx.shared.bands.choose_band_jsq(ctx.queues, c, ctx.rng),
            SwitchLb::PspRemote(r) => {
                let (b, q, f) = (&ctx.shared.bands, ctx.queues, ctx.fabric);
                b.choose_psp_by(|p| remote_band(b, q, f, r, p, pkt.dst), c, ctx.rng)
            }
            SwitchLb::BandJsqRemote(r) => {
                let (b, q, f) = (&ctx.shared.bands, ctx.queues, ctx.fabric);
                b.choose_band_jsq_by(|p| remote_band(b, q, f, r, p, pkt.dst), c, ctx.rng)
            }
            SwitchLb::TopkRemote(t, r) => {
                let (b, q, f) = (&ctx.shared.bands, ctx.queues, ctx.fabric);
                // The band says how loaded the path is; the own queue orders a band's ports.
                let load = |p: u16| {
                    let band = remote_band(b, q, f, r, p, pkt.dst) as u64;
                    band << 48 | q.queued_bytes(p).min((1 << 48) - 1)
                };
                t.choose_by(load, c, ctx.rng)
            }
            SwitchLb::Conga(cg) => cg.choose(
                ctx.fabric,
                ctx.node,
                pkt,
                c,
                ctx.now_ps,
                ctx.salt,
                &ctx.shared.conga,
                ctx.rng,
            ),
            SwitchLb::Sglb(r) => r.choose_sglb(
                ctx.fabric, pkt, ctx.salt, c, ctx.queues, ctx.now_ps, ctx.rng,
            ),
            SwitchLb::SimpleRr(_)
            | SwitchLb::Stale { .. }
            | SwitchLb::Static { .. }
            | SwitchLb::FollowPath { .. }
            | SwitchLb::Ofan { .. } => unreachable!("port_for picks their port"),
        }
    }

    /// Policies whose state or decision is defined over the switch's uplinks (rotations,
    /// path digits, per-uplink remote tables): they do not choose among parallel down links.
    fn is_uplink_structured(&self) -> bool {
        matches!(
            self,
            SwitchLb::SimpleRr(_)
                | SwitchLb::FollowPath { .. }
                | SwitchLb::Ofan { .. }
                | SwitchLb::Conga(_)
                | SwitchLb::Sglb(_)
                | SwitchLb::PspRemote(_)
                | SwitchLb::TopkRemote(..)
                | SwitchLb::BandJsqRemote(_)
        )
    }

    /// The period of the policy's own timer, if it has one (remote-state adverts).
    fn timer_period_ps(&self) -> Option<u64> {
        match self {
            SwitchLb::PspRemote(r)
            | SwitchLb::BandJsqRemote(r)
            | SwitchLb::TopkRemote(_, r)
            | SwitchLb::Sglb(r) => r.timer_period_ps(),
            _ => None,
        }
    }

    /// When the policy first wants [`SwitchLb::on_timer`] called, if ever (e.g. the first
    /// refresh of a periodically sampled queue state).
    pub fn first_timer_ps(&self) -> Option<u64> {
        match self {
            #[cfg(test)]
            SwitchLb::Probe { period_ps, .. } => Some(*period_ps),
            // The inner policy's adverts (`lb.psp.remote`) share the period.
            SwitchLb::Stale { snapshot, .. } => Some(snapshot.first_refresh_ps()),
            SwitchLb::PspRemote(r)
            | SwitchLb::BandJsqRemote(r)
            | SwitchLb::TopkRemote(_, r)
            | SwitchLb::Sglb(r) => r.first_timer_ps(),
            _ => None,
        }
    }

    /// The policy's timer fired at `now_ps` (`queues`: the switch's live queues); returns
    /// when it wants to be woken next. `None` puts it to sleep: the switch then calls
    /// [`SwitchLb::wake_ps`] when it next queues a packet at an idle switch port.
    pub fn on_timer<Q: QueueView>(&mut self, now_ps: u64, queues: &Q) -> Option<u64> {
        match self {
            SwitchLb::Stale {
                snapshot,
                inner,
                inner_ticked,
            } => {
                let next = snapshot.refresh(now_ps, queues);
                let period = snapshot.period_ps();
                let Some(inner_period) = inner.timer_period_ps() else {
                    return next;
                };
                *inner_ticked = now_ps % inner_period == 0;
                if inner_period == period {
                    // Both sleep exactly when every queue is empty.
                    return inner.on_timer(now_ps, queues).or(next);
                }
                // The inner period is a multiple of the snapshot's (validated): between its
                // ticks keep ticking, so that its idle tick (the idle adverts) still comes.
                let inner_next = match *inner_ticked {
                    true => inner.on_timer(now_ps, queues),
                    false => Some(now_ps + inner_period),
                };
                (inner_next.is_some() || next.is_some()).then_some(now_ps + period)
            }
            SwitchLb::PspRemote(r)
            | SwitchLb::BandJsqRemote(r)
            | SwitchLb::TopkRemote(_, r)
            | SwitchLb::Sglb(r) => r.on_timer(now_ps, queues),
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
                let _ = (now_ps, queues);
                None
            }
        }
    }

    /// A packet was queued at `now_ps` at an idle port while the timer slept: when the timer
    /// should fire next, if ever.
    pub fn wake_ps(&self, now_ps: u64) -> Option<u64> {
        match self {
            SwitchLb::Stale { snapshot, .. } => Some(snapshot.wake_ps(now_ps)),
            SwitchLb::PspRemote(r)
            | SwitchLb::BandJsqRemote(r)
            | SwitchLb::TopkRemote(_, r)
            | SwitchLb::Sglb(r) => r.wake_ps(now_ps),
            _ => None,
        }
    }

    /// After a timer: the ports to send adverts on and the advert (one byte per edge
    /// switch), if this switch advertises.
    pub fn adverts(&self) -> Option<(&[u16], &[u8])> {
        match self {
            SwitchLb::Stale {
                inner,
                inner_ticked,
                ..
            } => inner.adverts().filter(|_| *inner_ticked),
            SwitchLb::PspRemote(r)
            | SwitchLb::BandJsqRemote(r)
            | SwitchLb::TopkRemote(_, r)
            | SwitchLb::Sglb(r) => r.adverts(),
            _ => None,
        }
    }

    /// An advert from the switch behind `in_port` arrived.
    pub fn on_advert(&mut self, in_port: u16, pkt: &Packet) {
        match self {
            SwitchLb::Stale { inner, .. } => inner.on_advert(in_port, pkt),
            SwitchLb::PspRemote(r)
            | SwitchLb::BandJsqRemote(r)
            | SwitchLb::TopkRemote(_, r)
            | SwitchLb::Sglb(r) => r.on_advert(in_port, pkt),
            _ => {}
        }
    }

    /// `pkt` (arrived on `in_port`) is forwarded through port `out`: CONGA updates its DRE
    /// and the packet's overlay; nothing else does anything.
    #[inline]
    #[allow(clippy::too_many_arguments)]
    pub fn forward(
        &mut self,
        fabric: &Fabric,
        shared: &LbShared,
        node: NodeId,
        in_port: u16,
        out: u16,
        pkt: &mut Packet,
        now_ps: u64,
    ) {
        if let SwitchLb::Conga(c) = self {
            c.forward(fabric, node, in_port, out, pkt, now_ps, &shared.conga);
        }
    }

    /// Bytes of LB state switch `node` will hold (reported by `weft validate`).
    pub fn state_bytes(shared: &LbShared, fabric: &Fabric, node: NodeId) -> usize {
        let ports = fabric.num_ports(node);
        let uplinks = fabric.uplinks(node);
        let snapshot = match shared.stale_period_ps {
            0 => 0,
            _ if uplinks == 0 => 0,
            _ if !shared.policy_of(fabric, node).is_queue_aware() => 0,
            _ => Snapshot::state_bytes(ports, shared.kind_of(fabric, node) == SwitchKind::Dlb),
        };
        snapshot
            + match shared.kind_of(fabric, node) {
                SwitchKind::Ofan if uplinks > 0 => Ofan::pointer_len(
                    ports,
                    pipe_ports(shared, fabric, node, ports),
                    fabric.subtree(0, fabric.tier(node)).1,
                ),
                SwitchKind::SimpleRr => 2 + 2 * uplinks as usize,
                SwitchKind::Ar if uplinks > 0 => Ar::state_bytes(ports, &shared.ar),
                SwitchKind::Dlb if uplinks > 0 => Dlb::state_bytes(ports, &shared.dlb),
                // One candidate group (the uplinks) per switch in these fabrics.
                SwitchKind::Drill if uplinks > 0 => Drill::group_bytes(shared.cfg.drill.m as u16),
                SwitchKind::Conga => Conga::state_bytes(fabric, node, &shared.conga),
                SwitchKind::Sglb => {
                    Remote::state_bytes(fabric, node)
                        + match shared.sglb_flowlets {
                            Some((entries, _)) if uplinks > 0 => {
                                super::flowlet::FlowletTable::state_bytes(entries)
                            }
                            _ => 0,
                        }
                }
                SwitchKind::Psp | SwitchKind::BandJsq | SwitchKind::Topk
                    if shared.cfg.psp.remote =>
                {
                    Remote::state_bytes(fabric, node)
                }
                _ => 0,
            }
    }
}

/// PSP's remote state: the bands the next switches advertise, every stale-state period.
/// Simple RR walks every uplink of the fault-free fabric, skipping invalid ones.
fn simple_rr_port<Q: QueueView>(rr: &mut SimpleRr, ctx: &mut SwitchCtx<'_, Q>) -> u16 {
    let c = ctx.candidates;
    let all = all_candidates(ctx.fabric, ctx.node, ctx.pkt.dst, c);
    if all.len() as usize != rr.width() {
        candidates_mismatch("simple_rr", all.len(), rr.width() as u16);
    }
    let rng = &mut *ctx.rng;
    first_valid(all, c, || rr.choose(all.len(), rng))
}

/// DLB from its queue and utilization levels.
fn dlb_index<Q: QueueView>(d: &mut Dlb, ctx: &mut SwitchCtx<'_, Q>) -> u16 {
    let params = &ctx.shared.dlb;
    let (fabric, node) = (ctx.fabric, ctx.node);
    // What port p sends at line rate in one sampling period.
    let line = |p: u16| fabric.link(node, p).rate.bps as f64 * params.sample_ps as f64 / 8e12;
    let key = ctx.pkt.hash_key();
    d.choose(
        params,
        ctx.queues,
        ctx.candidates,
        key,
        ctx.salt,
        ctx.now_ps,
        line,
        ctx.rng,
    )
}

/// The static routing's port, or under failures the next valid one after it.
fn static_port<Q: QueueView>(index: u8, ctx: &mut SwitchCtx<'_, Q>) -> u16 {
    let (c, pkt) = (ctx.candidates, ctx.pkt);
    let r = &ctx.shared.static_routes[index as usize].1;
    let all = all_candidates(ctx.fabric, ctx.node, pkt.dst, c);
    let i = super::static_route::choose(r, ctx.node, pkt.src, pkt.dst, all);
    let w = all.len();
    let mut k = 0;
    first_valid(all, c, || {
        k += 1;
        (i + k - 1) % w
    })
}

/// The DRB / Valiant / Ethereal path code's digit for this switch (hashed when the packet
/// carries none).
fn follow_path_port<Q: QueueView>(below: u32, ctx: &mut SwitchCtx<'_, Q>) -> u16 {
    let (c, pkt) = (ctx.candidates, ctx.pkt);
    if pkt.via == NO_VIA {
        return c.get(ecmp::choose(pkt.hash_key(), pkt.entropy, ctx.salt, c.len()));
    }
    // The digit numbers the uplinks of the fault-free fabric; the sender only uses codes whose
    // every hop is valid (`drb::next_via`).
    let all = all_candidates(ctx.fabric, ctx.node, pkt.dst, c);
    let p = all.get(((pkt.via / below) % all.len() as u32) as u16);
    if !crate::topology::contains(c, p) {
        invalid_path_code(ctx.node, p);
    }
    p
}

/// Ofan rotates over all w uplinks; under failures it keeps advancing the pointer until it
/// yields a valid port (the Ofan paper, §4.1).
fn ofan_port<Q: QueueView>(state: &mut Ofan, level: u8, ctx: &mut SwitchCtx<'_, Q>) -> u16 {
    let (c, pkt) = (ctx.candidates, ctx.pkt);
    let (d, _) = ctx.fabric.subtree(pkt.dst, level);
    let all = all_candidates(ctx.fabric, ctx.node, pkt.dst, c);
    if all.len() != state.width() {
        candidates_mismatch("ofan", all.len(), state.width());
    }
    let order = ctx.shared.orders.for_width(state.width());
    let (in_port, class) = (ctx.in_port, pkt.size_class());
    first_valid(all, c, || state.choose(order, in_port, d, class))
}

fn band_remote(shared: &LbShared, fabric: &Fabric, node: NodeId) -> Box<Remote> {
    let metric = Metric::Band(shared.bands.quantizer.clone());
    Box::new(Remote::new(
        fabric,
        node,
        metric,
        shared.cfg.psp_remote_period_ps(),
    ))
}

/// Port `p`'s band under `lb.psp.remote`: that of the larger of its own queue (as the switch
/// sees it: live or snapshot) and the next switch's advertised queue toward the packet's
/// destination edge switch.
#[inline]
fn remote_band<Q: QueueView>(
    bands: &super::psp::Bands,
    queues: &Q,
    fabric: &Fabric,
    r: &Remote,
    p: u16,
    dst: NodeId,
) -> u32 {
    let own = bands.band(queues.queued_bytes(p));
    own.max(r.remote_of(fabric, p, dst) as u32)
}

/// The fault-free candidates of this decision: `c` itself unless failed links shrank it to
/// a list.
#[inline]
fn all_candidates<'a>(
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
fn first_valid(all: Candidates<'_>, valid: Candidates<'_>, mut next: impl FnMut() -> u16) -> u16 {
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

#[cold]
#[inline(never)]
fn invalid_path_code(node: NodeId, port: u16) -> ! {
    panic!("a DRB path code sends a packet through failed port {port} of switch {node}")
}

/// A rotation over a switch's uplinks met a different candidate set: out of line, so the
/// check costs a comparison.
#[cold]
#[inline(never)]
fn candidates_mismatch(policy: &str, candidates: u16, uplinks: u16) -> ! {
    panic!("{policy}: {candidates} candidate ports at a switch with {uplinks} uplinks")
}

/// Ingress ports per pipe: all of them for Ofan, `pipe_ports` for pOfan.
fn pipe_ports(shared: &LbShared, fabric: &Fabric, node: NodeId, ports: u16) -> u16 {
    if shared.policy_of(fabric, node) == LbPolicy::Ofan {
        ports
    } else {
        shared.cfg.pipe_ports as u16
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
