use crate::engine::Ending;
use crate::metrics::Counters;
use crate::sim::RunOutput;
use hdrhistogram::Histogram;
use serde::Serialize;
use serde_json::{json, Map, Value};

#[derive(Serialize)]
pub(super) struct Percentiles {
    pub p50: u64,
    pub p99: u64,
    pub p999: u64,
    pub max: u64,
    pub count: u64,
}

impl Percentiles {
    fn of(h: &Histogram<u64>) -> Percentiles {
        Percentiles {
            p50: h.value_at_quantile(0.5),
            p99: h.value_at_quantile(0.99),
            p999: h.value_at_quantile(0.999),
            max: h.max(),
            count: h.len(),
        }
    }
}

/// A run's `summary.json`: the scenario, the model's results and how the run went.
pub struct Summary {
    /// The effective scenario (after overrides), so a summary says what produced it.
    pub scenario: Value,
    /// The `results` object: what the model measured, independent of how it ran.
    pub results: Value,
    /// The `run` object: how it ran (wall times, speed, ranks, threads, partitions, windows).
    pub run: Value,
}

/// Sampled port queues of a stage (or switch totals of a tier): mean, p99 and largest
/// sample, in bytes.
fn occupancy_json(h: &Histogram<u64>) -> Value {
    json!({
        "avg_bytes": h.mean(),
        "p99_bytes": h.lowest_equivalent(h.value_at_quantile(0.99)),
        "max_bytes": h.lowest_equivalent(h.max()),
        "samples": h.len(),
    })
}

fn ns(ps: u64) -> f64 {
    ps as f64 / 1000.0
}

/// The per-stage maps of a summary's results (JSON objects keyed by stage name).
#[derive(Default)]
struct StageMaps {
    queues: Map<String, Value>,
    util: Map<String, Value>,
    drops: Map<String, Value>,
    trims: Map<String, Value>,
    marks: Map<String, Value>,
    overload: Map<String, Value>,
}

/// The `results.opera` object: the schedule's times and hops, and RotorLB's counters.
fn opera_json(f: &crate::topology::opera::OperaFacts, c: &Counters) -> Value {
    json!({
        "cycle_ns": ns(f.cycle_ps),
        "superslice_ns": ns(f.superslice_ps),
        "epsilon_ns": ns(f.epsilon_ps),
        "delta_ns": ns(f.delta_ps),
        "reconfig_ns": ns(f.reconfig_ps),
        "worst_hops": f.worst_hops,
        "mean_hops": f.mean_hops,
        "realization": f.realization,
        "clipped": c.opera_clipped,
        "late": c.opera_late,
        "rotorlb": {
            "sent": c.rlb_sent,
            "one_hop": c.rlb_one_hop,
            "two_hop": c.rlb_two_hop,
            "relayed": c.rlb_relayed,
            "rejected": c.rlb_rejected,
            "bounced": c.rlb_bounced,
            "stale": c.rlb_stale,
            "off_circuit": c.rlb_off_circuit,
        },
    })
}

impl Summary {
    /// The summary of run `o`; `scenario` is the scenario as loaded, in JSON.
    pub fn new(o: &RunOutput, scenario: Value) -> Summary {
        Summary {
            scenario,
            results: Summary::results_json(o),
            run: Summary::run_json(o),
        }
    }

    /// The `results` object: counts, times, packets, the per-stage maps, latency and FCT
    /// percentiles, phases, and (on Opera) the schedule and RotorLB's counters.
    fn results_json(o: &RunOutput) -> Value {
        let c = &o.metrics.counters;
        let cct = o.cct_ps();
        let (occupancy, switch_occupancy) = Summary::occupancy_maps(o);
        let StageMaps {
            queues,
            util,
            drops,
            trims,
            marks,
            overload,
        } = Summary::stage_maps(o);
        let mut results = json!({
            "hosts": o.hosts,
            "switches": o.switches,
            "failed_links": o.failed_links,
            "rho_max": o.rho_max,
            "cct_ns": cct.map(ns),
            "cct_lower_bound_ns": ns(o.cct_lower_bound_ps),
            "cct_increase": cct.map(|c| c as f64 / o.cct_lower_bound_ps as f64 - 1.0),
            "flows": { "total": o.flows_total, "completed": c.flows_completed, "incomplete": o.flows_incomplete },
            "events": c.events,
            "end_ns": ns(o.end_ps),
            "ended": match o.ending {
                Ending::WorkloadDone => "completed",
                Ending::Idle => "idle",
                Ending::Stopped => "end_time",
                // Never reported: an interrupted run writes a checkpoint instead of outputs.
                Ending::Interrupted => "interrupted",
            },
            "packets": {
                "data_sent": c.data_sent,
                "data_delivered": c.data_delivered,
                "acks_sent": c.acks_sent,
                "acks_delivered": c.acks_delivered,
                "dropped": c.data_dropped + c.acks_dropped,
                "in_flight": o.data_in_flight + o.acks_in_flight,
                "ecn_marked": c.ecn_marked,
                "stale_acks": c.stale_acks,
                "trimmed": c.trims,
                "headers_delivered": c.headers_delivered,
                "headers_returned": c.headers_returned,
                "nacks_sent": c.nacks_sent,
                "pulls_sent": c.pulls_sent,
                "pulls_delivered": c.pulls_delivered,
                "pulls_dropped": c.pulls_dropped,
                "retransmissions": c.retransmissions,
                "timeouts": c.timeouts,
                "reorder_losses": c.reorder_losses,
                "duplicates_delivered": c.duplicates_delivered,
                "payload_bytes_delivered": c.payload_bytes_delivered,
            },
            "lb_adverts": c.adverts_sent,
            "lb_advert_bytes": c.advert_bytes_sent,
            "goodput_gbps": o.goodput_bps().map(|b| b / 1e9),
            "queues": queues,
            "utilization": util,
            "utilization_peak": Summary::peak_utilization_map(o),
            "link_overload": overload,
            "buffer_occupancy": occupancy,
            "switch_occupancy": switch_occupancy,
            "loss_rate": if c.data_sent > 0 { json!(c.data_dropped as f64 / c.data_sent as f64) } else { Value::Null },
            "drops": drops,
            "trims": trims,
            "ecn_marks": marks,
            "latency_ns": Percentiles::of(&o.metrics.latency_ns),
            "fct_ns": Percentiles::of(&o.metrics.fct_ns),
            "phases": phases_json(o),
            "fct_by_size": fct_by_size_json(o),
            "nvlink_bytes": o.nvlink_bytes,
            "bandwidth_tax": bandwidth_tax(o),
        });
        if let Some(f) = &o.opera {
            results["opera"] = opera_json(f, c);
        }
        results
    }

    /// `utilization_peak`: per stage, the largest utilization over one interval of the time
    /// series (`report.timeseries_us`), the Ofan paper's "max utilization" (Fig. 1(a)); an
    /// empty map without a series.
    fn peak_utilization_map(o: &RunOutput) -> Map<String, Value> {
        let Some(series) = &o.metrics.series else {
            return Map::new();
        };
        let ports: Vec<u64> = o.stages.iter().map(|s| s.ports).collect();
        let peaks = series.peak_utilization(&ports);
        o.stage_names
            .iter()
            .zip(peaks)
            .map(|(name, u)| (name.to_string(), json!(u)))
            .collect()
    }

    /// `buffer_occupancy` and `switch_occupancy`: per stage and per switch tier, each with
    /// `all`, from the time series' histograms (empty maps without a series).
    fn occupancy_maps(o: &RunOutput) -> (Map<String, Value>, Map<String, Value>) {
        let mut occupancy = Map::new();
        let mut switch_occupancy = Map::new();
        if let Some(series) = &o.metrics.series {
            let mut all = crate::metrics::new_histogram();
            for (name, samples) in o.stage_names.iter().zip(&series.occupancy) {
                let h = samples.histogram();
                occupancy.insert(name.to_string(), occupancy_json(&h));
                all.add(&h).expect("histograms merge");
            }
            occupancy.insert("all".to_string(), occupancy_json(&all));
            let mut all = crate::metrics::new_histogram();
            for (name, samples) in o.switch_tier_names.iter().zip(&series.switch_occupancy) {
                let h = samples.histogram();
                switch_occupancy.insert(name.clone(), occupancy_json(&h));
                all.add(&h).expect("histograms merge");
            }
            switch_occupancy.insert("all".to_string(), occupancy_json(&all));
        }
        (occupancy, switch_occupancy)
    }

    /// The per-stage maps of the results, each keyed by stage name in stage order.
    fn stage_maps(o: &RunOutput) -> StageMaps {
        let mut m = StageMaps::default();
        for (name, s) in o.stage_names.iter().zip(&o.stages) {
            m.overload
                .insert(name.to_string(), json!(s.link_overload()));
            m.trims.insert(name.to_string(), json!(s.trims));
            m.marks.insert(name.to_string(), json!(s.ecn_marks));
            m.queues.insert(
                name.to_string(),
                json!({ "max_bytes": s.max_bytes, "max_pkts": s.max_pkts, "avg_pkts": s.avg_pkts(o.end_ps) }),
            );
            m.util
                .insert(name.to_string(), json!(s.utilization(o.end_ps)));
            m.drops.insert(name.to_string(), json!(s.drops));
        }
        m
    }

    /// The `run` object: wall times, speed, the partitioning and the window loop's
    /// statistics, per rank too.
    fn run_json(o: &RunOutput) -> Value {
        let c = &o.metrics.counters;
        let ls = &o.loop_stats;
        json!({
            "wall_s": o.wall_s,
            "setup_wall_s": o.setup_wall_s,
            // Simulation speed: the set-up (model, plan, rho_max's LP) is not simulation.
            // A resumed run counts the events this process simulated.
            "events_per_s": (c.events - o.resumed_events) as f64 / (o.wall_s - o.setup_wall_s).max(1e-9),
            "ranks": o.ranks,
            "threads": o.threads,
            "partitions": o.partitions,
            "lookahead_ns": if o.lookahead_ps == u64::MAX { Value::Null } else { json!(ns(o.lookahead_ps)) },
            "cut_links": o.cut_links,
            "windows": ls.windows,
            "windows_per_sim_us": if o.end_ps > 0 { ls.windows as f64 / (o.end_ps as f64 / 1e6) } else { 0.0 },
            "process_wall_s": ls.process_wall_s,
            "sync_wall_s": ls.sync_wall_s,
            "cross_partition_events": ls.messages,
            "remote_events": ls.remote_messages,
            "remote_bytes": ls.remote_bytes,
            "peak_rss_bytes": o.peak_rss_bytes,
            // Wall-time fields above cover this process only; the loop statistics
            // (windows, *_wall_s) continue those of the run that wrote the checkpoint.
            "resumed_at_ns": o.resumed_at_ps.map(ns),
            // Where each rank's time went, per window phase (issue 13: the exchange's cost
            // must not grow with the rank count).
            "per_rank": o.rank_loop_stats.iter().enumerate().map(|(r, l)| json!({
                "rank": r,
                "events": o.rank_events.get(r),
                "process_wall_s": l.process_wall_s,
                "reduce_wall_s": l.reduce_wall_s,
                "encode_wall_s": l.encode_wall_s,
                "exchange_wall_s": l.exchange_wall_s,
                "sync_wall_s": l.sync_wall_s,
                "remote_events": l.remote_messages,
                "remote_bytes": l.remote_bytes,
            })).collect::<Vec<_>>(),
        })
    }

    /// `summary.json`: `scenario`, `results` and `run`, pretty-printed, newline-terminated.
    pub fn to_json(&self) -> String {
        let v = json!({ "scenario": self.scenario, "results": self.results, "run": self.run });
        serde_json::to_string_pretty(&v).expect("JSON values serialize") + "\n"
    }

    /// The readable summary `weft run` prints.
    pub fn to_text(&self) -> String {
        let r = &self.results;
        let u = &self.run;
        let mut s = String::new();
        let f = |v: &Value| v.as_f64().map_or("-".to_string(), |x| format!("{x:.1}"));
        s += &format!(
            "weft: {} hosts, {} switches, {} flows ({} completed)\n",
            r["hosts"], r["switches"], r["flows"]["total"], r["flows"]["completed"]
        );
        s += &format!(
            "CCT {} ns, lower bound {} ns, increase {}\n",
            f(&r["cct_ns"]),
            f(&r["cct_lower_bound_ns"]),
            r["cct_increase"]
                .as_f64()
                .map_or("-".to_string(), |x| format!("{:.2} %", x * 100.0))
        );
        let p = &r["packets"];
        s += &format!(
            "packets: data {} sent / {} delivered, acks {} sent, dropped {}, in flight {}\n",
            p["data_sent"], p["data_delivered"], p["acks_sent"], p["dropped"], p["in_flight"]
        );
        if p["retransmissions"].as_u64().unwrap_or(0) + p["trimmed"].as_u64().unwrap_or(0) > 0 {
            s += &format!(
                "recovery: {} retransmissions, {} timeouts, {} reorder losses, {} trimmed, {} nacks\n",
                p["retransmissions"], p["timeouts"], p["reorder_losses"], p["trimmed"], p["nacks_sent"]
            );
        }
        if p["pulls_sent"].as_u64().unwrap_or(0) > 0 {
            s += &format!(
                "pulls: {} sent, {} delivered, {} dropped\n",
                p["pulls_sent"], p["pulls_delivered"], p["pulls_dropped"]
            );
        }
        s += &format!(
            "goodput {} Gb/s, ECN marks {}\n",
            f(&r["goodput_gbps"]),
            p["ecn_marked"]
        );
        s += "stage          max_bytes  max_pkts  avg_pkts utilization\n";
        for (name, q) in r["queues"].as_object().expect("object") {
            s += &format!(
                "{:<14} {:>9} {:>9} {:>9.3} {:>11.3}\n",
                name,
                q["max_bytes"].as_u64().unwrap_or(0),
                q["max_pkts"].as_u64().unwrap_or(0),
                q["avg_pkts"].as_f64().unwrap_or(0.0),
                r["utilization"][name].as_f64().unwrap_or(0.0)
            );
        }
        for key in ["latency_ns", "fct_ns"] {
            let h = &r[key];
            s += &format!(
                "{key}: p50 {} p99 {} p99.9 {} max {}\n",
                h["p50"], h["p99"], h["p999"], h["max"]
            );
        }
        s += &format!(
            "run: {} events in {:.3} s (set-up {:.3} s) = {:.2} M events/s; {} ranks x {} threads, {} partitions, {} windows; peak RSS {:.1} MB\n",
            r["events"],
            u["wall_s"].as_f64().unwrap_or(0.0),
            u["setup_wall_s"].as_f64().unwrap_or(0.0),
            u["events_per_s"].as_f64().unwrap_or(0.0) / 1e6,
            u["ranks"],
            u["threads"],
            u["partitions"],
            u["windows"],
            u["peak_rss_bytes"].as_f64().unwrap_or(0.0) / 1e6
        );
        s
    }
}

/// `results.fct_by_size`: per FCT size bin, its upper edge (`max_bytes`, null for the
/// overflow bin), completed flows and FCT percentiles in ns (`metrics/fct_bins.rs`).
fn fct_by_size_json(o: &RunOutput) -> Value {
    let empty = crate::metrics::new_histogram();
    let bins = crate::metrics::fct_bins::bins(&o.fct_bins_bytes);
    Value::Array(
        (0..bins)
            .map(|i| {
                let h = o.metrics.fct_by_size_ns.get(i).unwrap_or(&empty);
                let p = Percentiles::of(h);
                // The Opera paper plots the mean where the tail is noise (its Fig. 7 at 1 % load).
                let mean = (p.count > 0).then(|| h.mean());
                json!({
                    "max_bytes": o.fct_bins_bytes.get(i),
                    "count": p.count,
                    "mean": mean,
                    "p50": p.p50,
                    "p99": p.p99,
                    "p999": p.p999,
                    "max": p.max,
                })
            })
            .collect(),
    )
}

/// Bytes carried by switch-to-switch links (every packet kind: stages between the first,
/// from hosts, and the last, to hosts) over the bytes of data first delivered to its final
/// receiver (payload delivered, plus one header per full payload): 1.0 when every byte
/// crosses one switch-to-switch link (Opera's direct circuits), Opera's mean rotor hops per
/// delivered byte in general (a RotorLB relay counts both legs; ACKs, NACKs and pulls add a
/// few percent); null before anything was delivered.
fn bandwidth_tax(o: &RunOutput) -> Value {
    let n = o.stages.len();
    let payload = o.metrics.counters.payload_bytes_delivered;
    if n < 3 || payload == 0 {
        return Value::Null;
    }
    let carried: u64 = o.stages[1..n - 1].iter().map(|s| s.bytes_sent).sum();
    let headers = payload as f64 * o.header_bytes as f64 / o.payload_bytes as f64;
    json!(carried as f64 / (payload as f64 + headers))
}

/// `results.phases`: per phase of a collective (or part of a combined workload), its first
/// send, last ACK, duration (null until every flow of the phase completed, like `cct_ns`),
/// duration lower bound, the payload bytes of its completed flows and their FCT percentiles.
fn phases_json(o: &RunOutput) -> Value {
    let done = o.flows_incomplete == 0;
    let empty = crate::metrics::new_histogram();
    let list: Vec<Value> = o
        .phase_names
        .iter()
        .enumerate()
        .map(|(i, name)| {
            let p = o.metrics.phases.get(i).copied().unwrap_or_default();
            let sent = p.first_send_ps != u64::MAX;
            let ended = sent && p.last_ack_ps >= p.first_send_ps;
            json!({
                "name": name,
                "start_ns": sent.then(|| ns(p.first_send_ps)),
                "end_ns": ended.then(|| ns(p.last_ack_ps)),
                "cct_ns": (done && ended).then(|| ns(p.last_ack_ps - p.first_send_ps)),
                "lower_bound_ns": ns(o.phase_lower_bounds_ps[i]),
                "bytes": p.bytes,
                "flows_completed": p.flows_completed,
                "fct_ns": Percentiles::of(o.metrics.phase_fct_ns.get(i).unwrap_or(&empty)),
            })
        })
        .collect();
    Value::Array(list)
}
