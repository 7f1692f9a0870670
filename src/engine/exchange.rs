//! The exchange at a window's end: every outbox list goes to the partition it names
//! ([`super::plan::Plan::out_neighbors`]). Partitions of this rank read their in-neighbours'
//! lists directly and insert in parallel, one destination partition per task; lists for
//! other ranks are copied into one batch per rank, bincode-encoded, sent in one all-to-all,
//! decoded and inserted the same way. Lists are cleared, not freed, so their capacity is
//! reused from window to window, and a partition holds lists only for the partitions it
//! actually borders.
//!
//! Insertion order does not matter: events are ordered by their model-derived keys.

use super::Engine;
use crate::net::event::Event;
use rayon::prelude::*;

fn bincode_config() -> bincode::config::Configuration {
    bincode::config::standard()
}

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

/// Sends the lists bound for other ranks (one encoded batch per neighbour rank, encoded in
/// parallel; ranks without a cut link to this one get nothing) and returns what arrived,
/// sorted per local partition.
fn receive_remote(e: &mut Engine<'_>) -> Vec<Vec<Event>> {
    let plan = e.plan;
    let neighbors = &e.neighbor_ranks;
    let mut to_rank: Vec<Vec<Event>> = vec![Vec::new(); neighbors.len()];
    for (p, outbox) in e.parts.iter().zip(&e.outboxes) {
        for (slot, list) in outbox.iter().enumerate() {
            let dst = plan.out_neighbors[p.id as usize][slot];
            if e.local_index[dst as usize] == usize::MAX {
                let rank = plan.part_rank[dst as usize];
                let i = neighbors
                    .binary_search(&rank)
                    .expect("a cut link leads to a neighbour rank");
                to_rank[i].extend_from_slice(list);
            }
        }
    }
    e.stats.remote_messages += to_rank.iter().map(|v| v.len() as u64).sum::<u64>();
    let pool = e
        .pool
        .expect("a multi-rank run has a thread pool (of one thread with --threads 1)");
    let encode_start = std::time::Instant::now();
    let send: Vec<Vec<u8>> = pool.install(|| {
        to_rank
            .par_iter()
            .map(|evs| {
                if evs.is_empty() {
                    Vec::new()
                } else {
                    bincode::serde::encode_to_vec(evs, bincode_config()).expect("events encode")
                }
            })
            .collect()
    });
    e.stats.remote_bytes += send.iter().map(|b| b.len() as u64).sum::<u64>();
    let exchange_start = std::time::Instant::now();
    let received = e.comm.neighbor_exchange_bytes(neighbors, &send);
    let decode_start = std::time::Instant::now();
    e.stats.encode_wall_s += (exchange_start - encode_start).as_secs_f64();
    e.stats.exchange_wall_s += (decode_start - exchange_start).as_secs_f64();
    let decoded: Vec<Vec<Event>> = pool.install(|| {
        received
            .par_iter()
            .filter(|b| !b.is_empty())
            .map(|bytes| {
                bincode::serde::decode_from_slice::<Vec<Event>, _>(bytes, bincode_config())
                    .expect("events from a rank of the same build decode")
                    .0
            })
            .collect()
    });
    e.stats.encode_wall_s += decode_start.elapsed().as_secs_f64();
    let mut incoming: Vec<Vec<Event>> = vec![Vec::new(); e.parts.len()];
    for ev in decoded.into_iter().flatten() {
        let p = plan.node_part[ev.node() as usize] as usize;
        let l = e.local_index[p];
        assert!(
            l != usize::MAX,
            "received an event for partition {p}, which is not on this rank"
        );
        incoming[l].push(ev);
    }
    incoming
}
