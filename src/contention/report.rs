//! What `weft contention` prints: C_topo, the distribution of C_p over the ports that carry
//! routes, and the worst ports with their addresses (`Pgft::address`).

use super::Contention;
use crate::topology::Fabric;
use serde_json::{json, Value};

pub struct Report {
    pub json: Value,
}

impl Report {
    /// `top`: how many worst ports to list.
    pub fn new(
        f: &Fabric,
        c: &Contention,
        routing: &str,
        pattern: &str,
        top: usize,
        elapsed_s: f64,
    ) -> Report {
        let g = f.as_pgft().expect("a PGFT");
        let used: Vec<usize> = (0..c.src.len()).filter(|&p| c.c(p) > 0).collect();
        let c_topo = c.c_topo();
        let mut histogram = vec![0u64; c_topo as usize + 1];
        for &p in &used {
            histogram[c.c(p) as usize] += 1;
        }
        let mut worst = used.clone();
        worst.sort_by_key(|&p| (std::cmp::Reverse(c.c(p)), p));
        worst.truncate(top);
        let worst: Vec<Value> = worst
            .iter()
            .map(|&p| {
                let (n, port) = f.port_of_id(p as u32);
                let peer = f.peer(n, port, 0).0;
                json!({
                    "node": n,
                    "address": g.address(n),
                    "port": port,
                    "direction": if f.is_down_port(n, port) { "down" } else { "up" },
                    "stage": f.stage_names()[f.stage(n, port) as usize],
                    "peer": g.address(peer),
                    "sources": c.src[p],
                    "destinations": c.dst[p],
                    "c": c.c(p),
                })
            })
            .collect();
        let histogram: Vec<Value> = histogram
            .iter()
            .enumerate()
            .skip(1)
            .filter(|(_, &n)| n > 0)
            .map(|(c, &n)| json!({ "c": c, "ports": n }))
            .collect();
        Report {
            json: json!({
                "routing": routing,
                "pattern": pattern,
                "hosts": f.num_hosts,
                "switches": f.num_switches(),
                "routes": c.routes,
                "c_topo": c_topo,
                "ports_used": used.len(),
                "ports_total": c.src.len(),
                "distribution": histogram,
                "worst_ports": worst,
                "elapsed_s": elapsed_s,
            }),
        }
    }

    pub fn to_text(&self) -> String {
        let j = &self.json;
        let mut o = format!(
            "contention: routing {}, pattern {}: {} routes on {} hosts, {} switches\nC_topo {}\n",
            j["routing"].as_str().unwrap_or(""),
            j["pattern"].as_str().unwrap_or(""),
            j["routes"],
            j["hosts"],
            j["switches"],
            j["c_topo"]
        );
        o += &format!(
            "C_p over the {} ports that carry routes (of {}):",
            j["ports_used"], j["ports_total"]
        );
        for h in j["distribution"].as_array().into_iter().flatten() {
            o += &format!(" {}: {}", h["c"], h["ports"]);
        }
        o += "\nworst ports:\n  node address        port dir  stage      peer          src   dst   C\n";
        for w in j["worst_ports"].as_array().into_iter().flatten() {
            o += &format!(
                "  {:<4} {:<14} {:>4} {:<4} {:<10} {:<12} {:>4} {:>5} {:>3}\n",
                w["node"].as_u64().unwrap_or(0),
                w["address"].as_str().unwrap_or(""),
                w["port"].as_u64().unwrap_or(0),
                w["direction"].as_str().unwrap_or(""),
                w["stage"].as_str().unwrap_or(""),
                w["peer"].as_str().unwrap_or(""),
                w["sources"].as_u64().unwrap_or(0),
                w["destinations"].as_u64().unwrap_or(0),
                w["c"].as_u64().unwrap_or(0)
            );
        }
        o + &format!(
            "analysed in {:.3} s\n",
            j["elapsed_s"].as_f64().unwrap_or(0.0)
        )
    }
}
