//! An output-queued, store-and-forward switch: on arrival, route (LB among uplinks when the
//! route offers a choice), mark ECN above the threshold, enqueue or drop.

use super::link::{finish_tx, start_tx, Scheduler};
use super::{Packet, Port};
use crate::lb::SwitchLb;
use crate::metrics::Counters;
use crate::model::Model;
use crate::rng::{stream, Purpose};
use crate::topology::{NodeId, Route};
use rand::Rng;
use rand_pcg::Pcg32;

pub struct Switch {
    pub id: NodeId,
    pub ports: Vec<Port>,
    lb: SwitchLb,
    rng: Pcg32,
    salt: u32,
}

impl Switch {
    pub fn new(m: &Model, id: NodeId) -> Switch {
        let mut rng = stream(m.seed, id as u64, Purpose::SwitchLb);
        let salt = stream(m.seed, id as u64, Purpose::EcmpSalt).gen();
        let lb = SwitchLb::new(&m.lb_cfg, &m.fabric, id, &mut rng);
        let ports = (0..m.fabric.num_ports(id))
            .map(|_| Port::default())
            .collect();
        Switch {
            id,
            ports,
            lb,
            rng,
            salt,
        }
    }

    #[inline]
    pub fn on_arrive<S: Scheduler>(
        &mut self,
        m: &Model,
        now_ps: u64,
        in_port: u16,
        mut pkt: Packet,
        out: &mut S,
        c: &mut Counters,
    ) {
        let p = match m.fabric.route(self.id, pkt.dst) {
            Route::Port(p) => p,
            Route::Up { first, count } => self.lb.choose(
                &m.lb,
                &m.fabric,
                self.id,
                &pkt,
                in_port,
                first,
                count,
                &self.ports,
                self.salt,
                &mut self.rng,
            ),
        };
        let port = &mut self.ports[p as usize];
        // ECN marks data packets on arrival at a port holding at least the threshold (DCTCP
        // style); a packet that is then dropped is not counted as marked.
        let mark = pkt.is_data() && !pkt.ecn && port.queued_bytes >= m.ecn_threshold_bytes;
        pkt.ecn |= mark;
        if !port.enqueue(pkt, now_ps, m.buffer_bytes) {
            if pkt.is_data() {
                c.data_dropped += 1;
            } else {
                c.acks_dropped += 1;
            }
            return;
        }
        if mark {
            port.stats.ecn_marks += 1;
            c.ecn_marked += 1;
        }
        if !port.busy {
            start_tx(m, self.id, p, port, now_ps, out);
        }
    }

    #[inline]
    pub fn on_tx_done<S: Scheduler>(&mut self, m: &Model, now_ps: u64, p: u16, out: &mut S) {
        finish_tx(m, self.id, p, &mut self.ports[p as usize], now_ps, out);
    }
}
