//! Moving packets through a port: start serializing the head packet, and when its last bit is
//! out, hand it to the link, which delivers it `latency` later at the peer's input.

use super::Port;
use crate::engine::event::Event;
use crate::model::Model;
use crate::topology::NodeId;

/// Where node logic puts the events it creates; the engine routes them to the owning
/// partition (local queue or outbox).
pub trait Scheduler {
    fn schedule(&mut self, ev: Event);
}

#[inline]
fn wire_ps(m: &Model, node: NodeId, p: u16, size_bytes: u32) -> u64 {
    m.fabric
        .link(node, p)
        .serialization_ps(size_bytes as u64 + m.interframe_bytes as u64)
}

/// Starts transmitting the head of `port` (which must be idle and non-empty).
#[inline]
pub fn start_tx<S: Scheduler>(
    m: &Model,
    node: NodeId,
    p: u16,
    port: &mut Port,
    now_ps: u64,
    out: &mut S,
) {
    debug_assert!(!port.busy);
    let head = port.queue.front().expect("start_tx on an empty port");
    port.busy = true;
    let done = now_ps + wire_ps(m, node, p, head.size_bytes);
    out.schedule(Event::tx_done(done, m.fabric.port_id(node, p), node, p));
}

/// Ends the head packet's transmission, sends it over the link, and starts the next one.
#[inline]
pub fn finish_tx<S: Scheduler>(
    m: &Model,
    node: NodeId,
    p: u16,
    port: &mut Port,
    now_ps: u64,
    out: &mut S,
) {
    debug_assert!(port.busy);
    let size = port
        .queue
        .front()
        .expect("finish_tx on an empty port")
        .size_bytes;
    let pkt = port.dequeue(now_ps, wire_ps(m, node, p, size));
    port.busy = false;
    let (peer, peer_port) = m.fabric.peer(node, p);
    let mut at = now_ps + m.fabric.link(node, p).latency_ps;
    if !m.fabric.is_host(peer) {
        at += m.forwarding_ps;
    }
    out.schedule(Event::arrive(
        at,
        m.fabric.port_id(node, p),
        peer,
        peer_port,
        pkt,
    ));
    if !port.queue.is_empty() {
        start_tx(m, node, p, port, now_ps, out);
    }
}
