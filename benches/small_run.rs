//! A whole small run through the library: a 256 KiB random permutation on a k = 8 fat tree
//! (128 hosts) with Ofan, on one thread and on two, and with `rps` under DCTCP and NSCC. Criterion's time per iteration is one run
//! (model build, partitioning, simulation, metrics), and its throughput is in events
//! ("elem/s" = events/s); runs/s and events/s are also printed once per set-up.
//!
//! `cargo bench --bench small_run`

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use std::hint::black_box;
use std::time::{Duration, Instant};
use weft::scenario::{BufferBytes, CcKind, LbPolicy, Scenario};
use weft::sim::{simulate, RunOptions};

fn scenario() -> Scenario {
    let mut s = Scenario::default();
    s.topology.k = 8;
    s.workload.message_bytes = 262_144;
    s.lb.policy = LbPolicy::Ofan;
    s
}

/// The same run under congestion control: `host.cc = cc` with 800 KB drop-tail buffers and
/// ECN at 80 KB, and `rps` spraying (so that the reliable transport sees reordering).
fn cc_scenario(cc: CcKind) -> Scenario {
    let mut s = scenario();
    s.host.cc = cc;
    s.lb.policy = LbPolicy::Rps;
    s.switch.buffer_bytes = BufferBytes::Bytes(800_000);
    s
}

fn benches(c: &mut Criterion) {
    let mut g = c.benchmark_group("small_run");
    g.sample_size(10)
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(3));
    let set_ups = [
        ("ofan", 1usize, scenario()),
        ("ofan", 2, scenario()),
        ("rps_dctcp", 1, cc_scenario(CcKind::Dctcp)),
        ("rps_nscc", 1, cc_scenario(CcKind::Nscc)),
    ];
    for (name, threads, s) in set_ups {
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
            "small_run k=8 256KiB {name}, {threads} thread(s), {partitions} partition(s): \
             {events} events; best of 3: {:.1} runs/s, {:.2} M events/s \
             ({:.2} M events/s in the event loop)",
            1.0 / best_wall,
            events as f64 / best_wall / 1e6,
            events as f64 / best_loop / 1e6,
        );
        g.throughput(Throughput::Elements(events));
        g.bench_function(format!("k8_256KiB_{name}_threads{threads}"), |b| {
            b.iter(|| black_box(simulate(&s, &opts).expect("small run")))
        });
    }
    g.finish();
}

criterion_group!(small_run, benches);
criterion_main!(small_run);
