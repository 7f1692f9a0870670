//! PSP and band JSQ at a switch (the PSP paper): the band of each candidate's own queue, or
//! with `lb.psp.remote` the larger of that and the band the next switch advertises toward the
//! packet's destination edge switch (refreshed every `lb.psp.remote_period_ns`). The bands
//! and the weighted draw are `psp.rs`; the adverts `remote.rs`.

use super::psp::Bands;
use super::remote::{Metric, Remote};
use super::switch_policy::{remote_timers, BuildSwitch, QueueView, SwitchCtx, SwitchPolicy};
use super::LbShared;
use crate::packet::Packet;
use crate::scenario::LbPolicy;
use crate::topology::{Fabric, NodeId};
use rand_pcg::Pcg32;
use serde::{Deserialize, Serialize};

/// PSP (a band-weighted random choice of uplink) or band JSQ (uniform among the uplinks in
/// the lowest band): the same bands, another draw.
#[derive(Serialize, Deserialize)]
pub(crate) struct Banded {
    band_jsq: bool,
    remote: Option<Box<Remote>>,
}

impl SwitchPolicy for Banded {
    #[inline]
    fn choose<Q: QueueView>(&mut self, ctx: &mut SwitchCtx<'_, Q>) -> u16 {
        let (b, q, f, c) = (&ctx.shared.bands, ctx.queues, ctx.fabric, ctx.candidates);
        let i = match (&self.remote, self.band_jsq) {
            (None, false) => b.choose_psp(q, c, ctx.rng),
            (None, true) => b.choose_band_jsq(q, c, ctx.rng),
            (Some(r), jsq) => {
                let dst = ctx.pkt.dst;
                let band = |p| remote_band(b, q, f, r, p, dst);
                match jsq {
                    false => b.choose_psp_by(band, c, ctx.rng),
                    true => b.choose_band_jsq_by(band, c, ctx.rng),
                }
            }
        };
        c.get(i)
    }

    fn uplink_structured(&self) -> bool {
        self.remote.is_some()
    }

    remote_timers!(remote);
}

impl BuildSwitch for Banded {
    fn build(p: LbPolicy, shared: &LbShared, fabric: &Fabric, node: NodeId, _: &mut Pcg32) -> Self {
        Banded {
            band_jsq: p == LbPolicy::BandJsq,
            remote: remote_if_asked(shared, fabric, node),
        }
    }

    fn state_bytes(_: LbPolicy, shared: &LbShared, fabric: &Fabric, node: NodeId) -> usize {
        remote_state_bytes(shared, fabric, node)
    }
}

/// The remote band table under `lb.psp.remote`, none without it.
pub(crate) fn remote_if_asked(
    shared: &LbShared,
    fabric: &Fabric,
    node: NodeId,
) -> Option<Box<Remote>> {
    shared
        .cfg
        .psp
        .remote
        .then(|| band_remote(shared, fabric, node))
}

/// Bytes of [`remote_if_asked`]'s table.
pub(crate) fn remote_state_bytes(shared: &LbShared, fabric: &Fabric, node: NodeId) -> usize {
    match shared.cfg.psp.remote {
        true => Remote::state_bytes(fabric, node),
        false => 0,
    }
}

/// PSP's remote state: the bands the next switches advertise, every remote period.
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
pub(crate) fn remote_band<Q: QueueView>(
    bands: &Bands,
    queues: &Q,
    fabric: &Fabric,
    r: &Remote,
    p: u16,
    dst: NodeId,
) -> u32 {
    let own = bands.band(queues.queued_bytes(p));
    own.max(r.remote_of(fabric, p, dst) as u32)
}
