//! SGLB at a switch (ByteDance's switch-global LB): DLB's quality of each uplink combined with
//! the quality the next switch advertises toward the destination, per packet or per flowlet
//! (`[lb.sglb]`). The quality table and the adverts are `remote.rs`.

use super::remote::{Metric, Remote};
use super::switch_policy::{BuildSwitch, QueueView, SwitchCtx, SwitchPolicy};
use super::LbShared;
use crate::packet::Packet;
use crate::scenario::LbPolicy;
use crate::topology::{Fabric, NodeId};
use rand_pcg::Pcg32;
use serde::{Deserialize, Serialize};

#[derive(Serialize, Deserialize)]
pub(crate) struct Sglb {
    remote: Remote,
}

impl SwitchPolicy for Sglb {
    #[inline]
    fn choose<Q: QueueView>(&mut self, ctx: &mut SwitchCtx<'_, Q>) -> u16 {
        let c = ctx.candidates;
        let (pkt, now, rng) = (ctx.pkt, ctx.now_ps, &mut *ctx.rng);
        c.get(
            self.remote
                .choose_sglb(ctx.fabric, pkt, ctx.salt, c, ctx.queues, now, rng),
        )
    }

    fn uplink_structured(&self) -> bool {
        true
    }

    fn timer_period_ps(&self) -> Option<u64> {
        self.remote.timer_period_ps()
    }

    fn first_timer_ps(&self) -> Option<u64> {
        self.remote.first_timer_ps()
    }

    fn on_timer<Q: QueueView>(&mut self, now_ps: u64, queues: &Q) -> Option<u64> {
        self.remote.on_timer(now_ps, queues)
    }

    fn wake_ps(&self, now_ps: u64) -> Option<u64> {
        self.remote.wake_ps(now_ps)
    }

    fn adverts(&self) -> Option<(&[u16], &[u8])> {
        self.remote.adverts()
    }

    fn on_advert(&mut self, in_port: u16, pkt: &Packet) {
        self.remote.on_advert(in_port, pkt)
    }
}

impl BuildSwitch for Sglb {
    fn build(_: LbPolicy, shared: &LbShared, fabric: &Fabric, node: NodeId, _: &mut Pcg32) -> Self {
        let metric = Metric::Quality(shared.ar);
        let remote = Remote::new(fabric, node, metric, shared.sglb_period_ps)
            .with_advert_wire(fabric, node, shared.advert_wire_bytes)
            .with_flowlets_if(shared.sglb_flowlets, fabric, node);
        Sglb { remote }
    }

    fn state_bytes(_: LbPolicy, shared: &LbShared, fabric: &Fabric, node: NodeId) -> usize {
        let flowlets = match shared.sglb_flowlets {
            Some((entries, _)) if fabric.uplinks(node) > 0 => {
                super::flowlet::FlowletTable::state_bytes(entries)
            }
            _ => 0,
        };
        Remote::state_bytes(fabric, node) + flowlets
    }
}
