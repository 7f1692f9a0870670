//! The exchange at a window's end: every outbox list goes to the partition it names
//! ([`super::plan::Plan::out_neighbors`]). Partitions of this rank read their in-neighbours'
//! lists directly and insert in parallel, one destination partition per task; lists for
//! other ranks are encoded as [`wire`] records into one batch per neighbour rank, sent
//! point to point, decoded and inserted the same way. Lists are cleared, not freed, so their capacity is
//! reused from window to window, and a partition holds lists only for the partitions it
//! actually borders.
//!
//! Insertion order does not matter: events are ordered by their model-derived keys.

use super::{wire, Engine};
use crate::net::event::Event;
use rayon::prelude::*;

pub(super) fn exchange(e: &mut Engine<'_>) {
    let remote = if e.comm.ranks() > 1 {
        receive_remote(e)
    } else {
        Vec::new()
    };
    let crossed: u64 = e.outboxes.iter().flatten().map(|l| l.len() as u64).sum();
    e.stats.messages += crossed;
    let (plan, local_index, outboxes) = (e.plan, &e.local_index, &e.outboxes);
    let insert = |(p, incoming): (&mut super::Partition, &Vec<Event>)| {
        for &(src, slot) in &plan.in_neighbors[p.id as usize] {
            let l = local_index[src as usize];
            if l != usize::MAX {
                outboxes[l][slot as usize]
                    .iter()
                    .for_each(|&ev| p.queue.push(ev));
            }
        }
        incoming.iter().for_each(|&ev| p.queue.push(ev));
    };
    let empty = Vec::new();
    let incoming = |i: usize| remote.get(i).unwrap_or(&empty);
    let parts = &mut e.parts;
    match e.pool {
        Some(pool) if parts.len() > 1 => pool.install(|| {
            parts
                .par_iter_mut()
                .enumerate()
                .for_each(|(i, p)| insert((p, incoming(i))))
        }),
        _ => parts
            .iter_mut()
            .enumerate()
            .for_each(|(i, p)| insert((p, incoming(i)))),
    }
    e.outboxes
        .iter_mut()
        .for_each(|o| o.iter_mut().for_each(Vec::clear));
}

/// Sends the lists bound for other ranks (one batch of [`wire`] records per neighbour rank,
/// encoded in parallel straight from the outboxes; ranks without a cut link to this one get
/// nothing) and returns what arrived, sorted per local partition.
fn receive_remote(e: &mut Engine<'_>) -> Vec<Vec<Event>> {
    let plan = e.plan;
    let (parts, outboxes, local_index) = (&e.parts, &e.outboxes, &e.local_index);
    let neighbors = &e.neighbor_ranks;
    let remote_lists = || {
        parts.iter().zip(outboxes).flat_map(move |(p, outbox)| {
            outbox.iter().enumerate().filter_map(move |(slot, list)| {
                let dst = plan.out_neighbors[p.id as usize][slot] as usize;
                (local_index[dst] == usize::MAX).then_some((plan.part_rank[dst], list))
            })
        })
    };
    let remote_events: usize = remote_lists().map(|(_, l)| l.len()).sum();
    e.stats.remote_messages += remote_events as u64;
    let pool = e
        .pool
        .expect("a multi-rank run has a thread pool (of one thread with --threads 1)");
    let encode_start = std::time::Instant::now();
    let send: Vec<Vec<u8>> = pool.install(|| {
        neighbors
            .par_iter()
            .map(|&rank| {
                let lists = || remote_lists().filter(move |&(r, _)| r == rank);
                let n: usize = lists().map(|(_, l)| l.len()).sum();
                let mut buf = Vec::with_capacity(n * wire::RECORD_BYTES);
                lists().for_each(|(_, l)| l.iter().for_each(|ev| wire::put(&mut buf, ev)));
                buf
            })
            .collect()
    });
    let sent_bytes: usize = send.iter().map(Vec::len).sum();
    assert_eq!(
        sent_bytes,
        remote_events * wire::RECORD_BYTES,
        "every cut link leads to a neighbour rank"
    );
    e.stats.remote_bytes += sent_bytes as u64;
    let exchange_start = std::time::Instant::now();
    let received = e.comm.neighbor_exchange_bytes(neighbors, send);
    let decode_start = std::time::Instant::now();
    e.stats.encode_wall_s += (exchange_start - encode_start).as_secs_f64();
    e.stats.exchange_wall_s += (decode_start - exchange_start).as_secs_f64();
    let mut incoming: Vec<Vec<Event>> = vec![Vec::new(); e.parts.len()];
    for ev in received.iter().flat_map(|b| wire::records(b)) {
        let p = plan.node_part[ev.node() as usize] as usize;
        let l = e.local_index[p];
        assert!(
            l != usize::MAX,
            "received an event for partition {p}, which is not on this rank"
        );
        incoming[l].push(ev);
    }
    e.stats.encode_wall_s += decode_start.elapsed().as_secs_f64();
    incoming
}
