//! Moving packets through a port.
//!
//! Physics: a frame of B buffer bytes holds the wire for ser(B); its last bit reaches the
//! peer `latency` later (plus the peer switch's forwarding latency). The inter-frame gap
//! (`packet.interframe_bytes`, preamble included) follows the frame on the wire: it delays
//! the next frame of the same port, never the packet itself. So the `TxDone` event is at the
//! frame's last bit, the arrival is `latency` after it, and the next frame starts at
//! `free_at_ps` = last bit + ser(gap) at the earliest.

use super::event::{Event, Scheduler};
use super::Port;
use crate::model::Model;
use crate::packet::Packet;
use crate::topology::opera::DARK;
use crate::topology::NodeId;

/// Starts transmitting the head of `port` (which must be idle and non-empty) as soon as the
/// wire is free; returns the time the frame's first bit goes out.
#[inline]
pub(crate) fn start_tx<S: Scheduler>(
    m: &Model,
    node: NodeId,
    p: u16,
    port: &mut Port,
    now_ps: u64,
    out: &mut S,
) -> u64 {
    // The control/data share is a switch queue's; a host NIC orders its own traffic.
    let share = (!m.fabric.is_host(node))
        .then_some(m.qdisc.ctrl_share)
        .flatten();
    let size = port.begin_service(share).size_bytes;
    let link = m.fabric.link(node, p);
    let begin = now_ps.max(port.free_at_ps);
    port.began_at(begin);
    let last_bit = begin + link.serialization_ps(size as u64);
    port.free_at_ps = last_bit + link.serialization_ps(m.interframe_bytes as u64);
    out.schedule(Event::tx_done(last_bit, m.fabric.port_id(node, p), node, p));
    begin
}

/// Ends the transmission of the packet on the wire (its last bit is out), lets `dequeued`
/// see it as it leaves (ECN marking on dequeue; it gets the port after removal), sends it
/// over the link, and starts the next one. Returns the packet if the link was dark (an
/// Opera rotor reconfiguring): it is lost, and the caller counts it.
#[inline]
pub(crate) fn finish_tx<S: Scheduler>(
    m: &Model,
    node: NodeId,
    p: u16,
    port: &mut Port,
    now_ps: u64,
    out: &mut S,
    dequeued: impl FnOnce(&mut Packet, &mut Port),
) -> Option<Packet> {
    let link = m.fabric.link(node, p);
    let mut pkt = pop_on_wire(m, node, p, port, now_ps);
    dequeued(&mut pkt, port);
    let (peer, peer_port) = m.fabric.peer(node, p, now_ps);
    let clipped = if peer == DARK {
        Some(pkt)
    } else {
        let mut at = now_ps + link.latency_ps;
        if !m.fabric.is_host(peer) {
            at += m.forwarding_ps;
        }
        let link_id = m.fabric.port_id(node, p);
        out.schedule(Event::arrive(at, link_id, peer, peer_port, pkt));
        None
    };
    if !port.is_empty() {
        start_tx(m, node, p, port, now_ps, out);
    }
    clipped
}

/// Ends the transmission of the packet on the wire without sending it over the link (a
/// RotorLB packet whose circuit is gone: the caller bounces it), and starts the next one.
pub(crate) fn discard_tx<S: Scheduler>(
    m: &Model,
    node: NodeId,
    p: u16,
    port: &mut Port,
    now_ps: u64,
    out: &mut S,
) -> Packet {
    let pkt = pop_on_wire(m, node, p, port, now_ps);
    if !port.is_empty() {
        start_tx(m, node, p, port, now_ps, out);
    }
    pkt
}

/// Removes the packet whose last bit just left port `p` (its wire time, gap included, counts
/// as the port's busy time).
#[inline]
fn pop_on_wire(m: &Model, node: NodeId, p: u16, port: &mut Port, now_ps: u64) -> Packet {
    let link = m.fabric.link(node, p);
    let size = port.on_wire().size_bytes;
    let wire = link.serialization_ps(size as u64 + m.interframe_bytes as u64);
    port.pop(now_ps, wire)
}
