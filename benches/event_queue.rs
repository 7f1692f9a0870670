//! The per-partition event queue under the classic "hold model": a steady population of N
//! pending events; each operation pops the earliest event and pushes one at
//! `popped.time_ps + delta`. `delta` mixes what the simulator schedules: 70% short
//! (serialization times of ACK-to-MTU packets at 800 Gb/s, 640..41_580 ps: transmission ends,
//! host wake-ups) and 30% long (a 500 ns link latency plus serialization: arrivals).
//!
//! Criterion's time per iteration is the time of one hold operation (pop + push), including
//! drawing the new event (about 30-40 ns of it on the 2-core development VM).
//!
//! `cargo bench --bench event_queue`

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion};
use rand::{Rng, SeedableRng};
use rand_pcg::Pcg32;
use std::hint::black_box;
use std::time::Duration;
use weft::engine::queue::{BinaryHeapQueue, RadixQueue};
use weft::net::event::{Event, TimerKind};
use weft::packet::{Packet, PacketKind, NO_VIA};

const LINKS: u32 = 1 << 14;
const PORTS: u32 = 1 << 14;
const NODES: u32 = 1 << 12;

fn packet(flow: u32) -> Packet {
    Packet {
        sent_ps: 1_234_567,
        flow_index: flow,
        src: 3,
        dst: 900,
        seq: 17,
        ack: 0,
        size_bytes: 4160,
        via: NO_VIA,
        entropy: 5,
        kind: PacketKind::Data,
        flags: 0,
    }
}

/// The next event scheduled by an event at `now`.
#[inline]
fn next_event(rng: &mut Pcg32, now: u64) -> Event {
    let ser = rng.gen_range(640..41_580u64);
    if rng.gen_range(0..10) < 3 {
        let link = rng.gen_range(0..LINKS);
        Event::arrive(
            now + 500_000 + ser,
            link,
            link / 4,
            (link % 16) as u16,
            packet(link),
        )
    } else if rng.gen_range(0..5) < 4 {
        let port = rng.gen_range(0..PORTS);
        Event::tx_done(now + ser, port, port / 16, (port % 16) as u16)
    } else {
        let seq = rng.gen_range(0..1u64 << 30);
        Event::timer(
            now + ser,
            rng.gen_range(0..NODES),
            seq,
            TimerKind::NicWake,
            0,
            0,
        )
    }
}

macro_rules! queue_api {
    ($($ty:ty),*) => {
        trait Queue: Default {
            fn push(&mut self, e: Event);
            fn pop(&mut self) -> Option<Event>;
            fn len(&self) -> usize;
        }
        $(impl Queue for $ty {
            #[inline]
            fn push(&mut self, e: Event) {
                <$ty>::push(self, e)
            }
            #[inline]
            fn pop(&mut self) -> Option<Event> {
                self.pop_before(u64::MAX)
            }
            fn len(&self) -> usize {
                <$ty>::len(self)
            }
        })*
    };
}
queue_api!(BinaryHeapQueue, RadixQueue);

/// A queue of `n` events in steady state: filled with one event per start time drawn from the
/// delta mix, then held `4 n` times so that the population's time spread is the stationary one.
fn steady<Q: Queue>(n: usize, rng: &mut Pcg32) -> Q {
    let mut q = Q::default();
    for _ in 0..n {
        q.push(next_event(rng, 0));
    }
    for _ in 0..4 * n {
        hold(&mut q, rng);
    }
    q
}

#[inline]
fn hold<Q: Queue>(q: &mut Q, rng: &mut Pcg32) {
    let e = q.pop().expect("hold model: queue never empties");
    q.push(next_event(rng, black_box(e).time_ps));
}

fn bench_queue<Q: Queue>(c: &mut Criterion, name: &str) {
    let mut g = c.benchmark_group(format!("hold/{name}"));
    g.sample_size(10)
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(2));
    for n in [1_000usize, 10_000, 100_000] {
        let mut rng = Pcg32::seed_from_u64(42);
        let mut q: Q = steady(n, &mut rng);
        g.bench_with_input(BenchmarkId::from_parameter(n), &n, |b, _| {
            b.iter(|| hold(&mut q, &mut rng))
        });
        assert_eq!(q.len(), n);
    }
    g.finish();
}

fn benches(c: &mut Criterion) {
    bench_queue::<BinaryHeapQueue>(c, "std_binary_heap");
    bench_queue::<RadixQueue>(c, "radix");
}

criterion_group!(event_queue, benches);
criterion_main!(event_queue);
