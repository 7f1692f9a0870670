//! A host without congestion control (the Ofan paper's LB-isolation mode): it paces its data
//! at `load × line rate`, serves its active flows round-robin one packet at a time, interleaves
//! data and ACKs round-robin, and ACKs every data packet it receives. A flow completes when its
//! last data packet is acknowledged.
//!
//! The NIC builds a packet only when its serializer is free (a pull model, as htsim's pacers),
//! so the host's queue never holds more than the packet being transmitted.

use super::link::{finish_tx, start_tx, Scheduler};
use super::packet::{Packet, PacketKind, NO_VIA};
use super::Port;
use crate::engine::event::Event;
use crate::lb::drb::DrbPointers;
use crate::metrics::Metrics;
use crate::model::Model;
use crate::rng::{stream, Purpose};
use crate::scenario::LbPolicy;
use crate::time::{NEVER_PS, PS_PER_NS};
use crate::topology::NodeId;
use rand::Rng;
use rand_pcg::Pcg32;
use std::collections::VecDeque;

struct Sender {
    next_seq: u32,
    packets: u32,
    acked: u32,
    /// ECMP: the flow's fixed entropy value.
    entropy: u16,
}

pub struct Host {
    pub id: NodeId,
    pub port: Port,
    first_flow: u32,
    senders: Vec<Sender>,
    /// Local index of the next flow to start (flows are sorted by start time).
    next_start: u32,
    active: VecDeque<u32>,
    acks: VecDeque<Packet>,
    last_was_ack: bool,
    next_data_ps: u64,
    wake_at_ps: u64,
    drb: DrbPointers,
    rng: Pcg32,
}

impl Host {
    pub fn new(m: &Model, id: NodeId) -> Host {
        let range = m.workload.host_flows(id);
        let senders = range
            .clone()
            .map(|f| {
                let packets = m.packets_for(m.workload.flow(f).bytes);
                assert!(
                    packets <= u32::MAX as u64,
                    "flow {f} has more than 2^32 packets"
                );
                Sender {
                    next_seq: 0,
                    packets: packets as u32,
                    acked: 0,
                    entropy: 0,
                }
            })
            .collect();
        Host {
            id,
            port: Port::default(),
            first_flow: range.start,
            senders,
            next_start: 0,
            active: VecDeque::new(),
            acks: VecDeque::new(),
            last_was_ack: false,
            next_data_ps: 0,
            wake_at_ps: NEVER_PS,
            drb: DrbPointers::default(),
            rng: stream(m.seed, id as u64, Purpose::HostLb),
        }
    }

    /// The event that starts this host, if it has anything to send.
    pub fn initial_wake(&mut self, m: &Model) -> Option<Event> {
        if self.senders.is_empty() {
            return None;
        }
        let first = m.workload.flow(self.first_flow + self.next_start);
        self.wake_at_ps = first.start_ps;
        Some(Event::wake(first.start_ps, self.id))
    }

    fn entropy_for(&mut self, m: &Model, flow_entropy: u16) -> u16 {
        match m.lb_cfg.policy {
            LbPolicy::Rps => self.rng.gen_range(0..m.lb_cfg.entropy_paths) as u16,
            LbPolicy::Ecmp => flow_entropy,
            _ => 0,
        }
    }

    fn via_for(&mut self, m: &Model, dst: NodeId, class: u32) -> u32 {
        if m.lb_cfg.policy == LbPolicy::Drb {
            self.drb
                .next_via(&m.fabric, self.id, dst, class, &mut self.rng)
        } else {
            NO_VIA
        }
    }

    pub fn on_arrive<S: Scheduler>(
        &mut self,
        m: &Model,
        now_ps: u64,
        pkt: Packet,
        out: &mut S,
        mx: &mut Metrics,
    ) {
        debug_assert_eq!(pkt.dst, self.id);
        let c = &mut mx.counters;
        match pkt.kind {
            PacketKind::Data => {
                c.data_delivered += 1;
                crate::metrics::record_ns(&mut mx.latency_ns, (now_ps - pkt.sent_ps) / PS_PER_NS);
                let entropy = self.entropy_for(m, pkt.entropy);
                let via = self.via_for(m, pkt.src, 1);
                self.acks.push_back(Packet {
                    flow: pkt.flow,
                    seq: pkt.seq,
                    src: self.id,
                    dst: pkt.src,
                    sent_ps: 0,
                    size_bytes: m.ack_bytes,
                    via,
                    entropy,
                    kind: PacketKind::Ack,
                    ecn: pkt.ecn,
                });
                self.try_send(m, now_ps, out, mx);
            }
            PacketKind::Ack => {
                c.acks_delivered += 1;
                let s = &mut self.senders[(pkt.flow - self.first_flow) as usize];
                s.acked += 1;
                assert!(
                    s.acked <= s.packets,
                    "flow {} acknowledged more packets than it sent",
                    pkt.flow
                );
                if s.acked == s.packets {
                    let start = m.workload.flow(pkt.flow).start_ps;
                    crate::metrics::record_ns(&mut mx.fct_ns, (now_ps - start) / PS_PER_NS);
                    c.flows_completed += 1;
                    c.last_ack_ps = c.last_ack_ps.max(now_ps);
                }
            }
        }
    }

    pub fn on_tx_done<S: Scheduler>(
        &mut self,
        m: &Model,
        now_ps: u64,
        out: &mut S,
        mx: &mut Metrics,
    ) {
        finish_tx(m, self.id, 0, &mut self.port, now_ps, out);
        self.try_send(m, now_ps, out, mx);
    }

    pub fn on_wake<S: Scheduler>(&mut self, m: &Model, now_ps: u64, out: &mut S, mx: &mut Metrics) {
        if now_ps != self.wake_at_ps {
            return; // superseded by an earlier wake-up
        }
        self.wake_at_ps = NEVER_PS;
        self.try_send(m, now_ps, out, mx);
    }

    fn schedule_wake<S: Scheduler>(&mut self, at_ps: u64, now_ps: u64, out: &mut S) {
        debug_assert!(at_ps > now_ps);
        if self.wake_at_ps <= now_ps || at_ps < self.wake_at_ps {
            self.wake_at_ps = at_ps;
            out.schedule(Event::wake(at_ps, self.id));
        }
    }

    fn try_send<S: Scheduler>(&mut self, m: &Model, now_ps: u64, out: &mut S, mx: &mut Metrics) {
        if self.port.busy {
            return;
        }
        while (self.next_start as usize) < self.senders.len() {
            let f = self.first_flow + self.next_start;
            if m.workload.flow(f).start_ps > now_ps {
                break;
            }
            let entropy = self.rng.gen_range(0..m.lb_cfg.entropy_paths) as u16;
            self.senders[self.next_start as usize].entropy = entropy;
            self.active.push_back(self.next_start);
            self.next_start += 1;
        }
        let data_ok = !self.active.is_empty() && now_ps >= self.next_data_ps;
        let ack_ok = !self.acks.is_empty();
        let send_ack = match (data_ok, ack_ok) {
            (true, true) => !self.last_was_ack,
            (false, true) => true,
            (true, false) => false,
            (false, false) => {
                let next = if !self.active.is_empty() {
                    self.next_data_ps
                } else if (self.next_start as usize) < self.senders.len() {
                    m.workload.flow(self.first_flow + self.next_start).start_ps
                } else {
                    return;
                };
                self.schedule_wake(next, now_ps, out);
                return;
            }
        };
        let pkt = if send_ack {
            let mut a = self.acks.pop_front().expect("ack_ok");
            a.sent_ps = now_ps;
            mx.counters.acks_sent += 1;
            a
        } else {
            let li = self.active.pop_front().expect("data_ok");
            let flow = self.first_flow + li;
            let (seq, flow_entropy) = {
                let s = &mut self.senders[li as usize];
                s.next_seq += 1;
                if s.next_seq < s.packets {
                    self.active.push_back(li);
                }
                (s.next_seq - 1, s.entropy)
            };
            let f = m.workload.flow(flow);
            let size_bytes = m.data_size(f.bytes, seq);
            let entropy = self.entropy_for(m, flow_entropy);
            let via = self.via_for(m, f.dst, 0);
            let wire = m
                .fabric
                .link(self.id, 0)
                .serialization_ps(size_bytes as u64 + m.interframe_bytes as u64);
            self.next_data_ps = now_ps + wire * 1_000_000 / m.load_ppm;
            let c = &mut mx.counters;
            c.data_sent += 1;
            c.first_send_ps = c.first_send_ps.min(now_ps);
            Packet {
                flow,
                seq,
                src: self.id,
                dst: f.dst,
                sent_ps: now_ps,
                size_bytes,
                via,
                entropy,
                kind: PacketKind::Data,
                ecn: false,
            }
        };
        self.last_was_ack = send_ack;
        let ok = self.port.enqueue(pkt, now_ps, u64::MAX);
        debug_assert!(ok);
        start_tx(m, self.id, 0, &mut self.port, now_ps, out);
    }

    /// Flows of this host that have not completed.
    pub fn incomplete_flows(&self) -> u64 {
        self.senders.iter().filter(|s| s.acked < s.packets).count() as u64
    }
}
