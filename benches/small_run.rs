//! A whole small run through the library: a 256 KiB random permutation on a k = 8 fat tree
//! (128 hosts) with Ofan, on one thread and on two. Criterion's time per iteration is one run
//! (model build, partitioning, simulation, metrics), and its throughput is in events
//! ("elem/s" = events/s); runs/s and events/s are also printed once per set-up.
//!
//! `cargo bench --bench small_run`

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use std::hint::black_box;
use std::time::{Duration, Instant};
use weft::scenario::{LbPolicy, Scenario};
use weft::sim::{simulate, RunOptions};

fn scenario() -> Scenario {
    let mut s = Scenario::default();
    s.topology.k = 8;
    s.workload.message_bytes = 262_144;
    s.lb.policy = LbPolicy::Ofan;
    s
}

fn benches(c: &mut Criterion) {
    let s = scenario();
    let mut g = c.benchmark_group("small_run");
    g.sample_size(10)
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(3));
    for threads in [1usize, 2] {
        let opts = RunOptions {
            threads,
            ..RunOptions::default()
        };
        // events/s, once: the best of three runs (criterion reports the time per run, and
        // with the throughput set below, events/s over whole runs as "elem/s").
        let (mut events, mut partitions, mut best_wall, mut best_loop) = (0, 0, f64::MAX, f64::MAX);
        for _ in 0..3 {
            let start = Instant::now();
            let out = simulate(&s, &opts).expect("small run");
            best_wall = best_wall.min(start.elapsed().as_secs_f64());
            best_loop = best_loop.min(out.loop_stats.process_wall_s.max(1e-9));
            events = out.metrics.counters.events;
            partitions = out.partitions;
        }
        println!(
            "small_run k=8 256KiB ofan, {threads} thread(s), {partitions} partition(s): \
             {events} events; best of 3: {:.1} runs/s, {:.2} M events/s \
             ({:.2} M events/s in the event loop)",
            1.0 / best_wall,
            events as f64 / best_wall / 1e6,
            events as f64 / best_loop / 1e6,
        );
        g.throughput(Throughput::Elements(events));
        g.bench_function(format!("k8_256KiB_ofan_threads{threads}"), |b| {
            b.iter(|| black_box(simulate(&s, &opts).expect("small run")))
        });
    }
    g.finish();
}

criterion_group!(small_run, benches);
criterion_main!(small_run);
