//! Load balancing. Switch policies choose among the uplinks a route offers; host policies
//! choose the entropy value (ECMP, RPS) or the waypoint (DRB) that switches then act on.
//! Dispatch is by enum, never a trait object on the per-packet path.

pub mod drb;
pub mod ecmp;
pub mod jsq;
pub mod ofan;
pub mod rsq;
pub mod simple_rr;

use crate::net::packet::NO_VIA;
use crate::net::{Packet, Port};
use crate::scenario::{LbConfig, LbPolicy};
use crate::topology::{Fabric, NodeId};
use ofan::{Ofan, PortOrder};
use rand_pcg::Pcg32;
use simple_rr::SimpleRr;

/// Per-switch LB state.
pub enum SwitchLb {
    /// ECMP hashing; also what switches do under host-driven RPS.
    Hash,
    Rsq,
    SimpleRr(SimpleRr),
    Jsq,
    /// Follow the packet's DRB waypoint.
    Drb,
    Ofan(Ofan),
}

/// LB configuration shared by every switch of a run.
pub struct LbShared {
    pub ack_ecmp: bool,
    pub order: Option<PortOrder>,
}

impl SwitchLb {
    pub fn new(cfg: &LbConfig, fabric: &Fabric, node: NodeId, rng: &mut Pcg32) -> SwitchLb {
        let ports = fabric.num_ports(node);
        let uplinks = fabric.uplinks(node);
        match cfg.policy {
            LbPolicy::Ecmp | LbPolicy::Rps => SwitchLb::Hash,
            LbPolicy::Rsq => SwitchLb::Rsq,
            LbPolicy::SimpleRr => SwitchLb::SimpleRr(SimpleRr::new(uplinks, cfg.rr_reshuffle, rng)),
            LbPolicy::Jsq => SwitchLb::Jsq,
            LbPolicy::Drb => SwitchLb::Drb,
            LbPolicy::Ofan | LbPolicy::Pofan if uplinks == 0 => SwitchLb::Hash,
            LbPolicy::Ofan | LbPolicy::Pofan => {
                let (_, n_dest) = fabric.lb_destination(node, 0);
                SwitchLb::Ofan(Ofan::new(
                    uplinks,
                    ports,
                    pipe_ports(cfg, ports),
                    n_dest,
                    rng,
                ))
            }
        }
    }

    /// Chooses the output port (absolute index) for `pkt` among uplinks `first..first+count`.
    #[inline]
    #[allow(clippy::too_many_arguments)]
    pub fn choose(
        &mut self,
        shared: &LbShared,
        fabric: &Fabric,
        node: NodeId,
        pkt: &Packet,
        in_port: u16,
        first: u16,
        count: u16,
        ports: &[Port],
        salt: u32,
        rng: &mut Pcg32,
    ) -> u16 {
        let flow_key = pkt.flow.wrapping_mul(2) | pkt.size_class();
        if count == 1 {
            return first;
        }
        if shared.ack_ecmp && !pkt.is_data() {
            return first + ecmp::choose(flow_key, pkt.entropy, salt, count);
        }
        let i = match self {
            SwitchLb::Hash => ecmp::choose(flow_key, pkt.entropy, salt, count),
            SwitchLb::Rsq => rsq::choose(count, rng),
            SwitchLb::SimpleRr(rr) => rr.choose(count, rng),
            SwitchLb::Jsq => jsq::choose(ports, first, count, rng),
            SwitchLb::Drb => {
                if pkt.via == NO_VIA {
                    ecmp::choose(flow_key, pkt.entropy, salt, count)
                } else {
                    return fabric.via_up_port(node, pkt.via);
                }
            }
            SwitchLb::Ofan(o) => {
                let (d, _) = fabric.lb_destination(node, pkt.dst);
                let order = shared.order.as_ref().expect("Ofan port order");
                o.choose(order, in_port, d, pkt.size_class())
            }
        };
        first + i
    }

    /// Bytes of LB pointer state switch `node` will hold (reported by `weft validate`).
    pub fn pointer_bytes(cfg: &LbConfig, fabric: &Fabric, node: NodeId) -> usize {
        let ports = fabric.num_ports(node);
        match cfg.policy {
            LbPolicy::Ofan | LbPolicy::Pofan if fabric.uplinks(node) > 0 => Ofan::pointer_len(
                ports,
                pipe_ports(cfg, ports),
                fabric.lb_destination(node, 0).1,
            ),
            LbPolicy::SimpleRr => 2 + 2 * fabric.uplinks(node) as usize,
            _ => 0,
        }
    }
}

/// Ingress ports per pipe: all of them for Ofan, `pipe_ports` for pOfan.
fn pipe_ports(cfg: &LbConfig, ports: u16) -> u16 {
    if cfg.policy == LbPolicy::Ofan {
        ports
    } else {
        cfg.pipe_ports as u16
    }
}
