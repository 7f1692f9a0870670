//! What `weft contention` prints: C_topo at the chosen scope and at every scope, the
//! distribution of C_p over the scope's ports that carry routes, and the worst ports with
//! their addresses (`Pgft::address`); with `--draws`, C_topo's distribution over seeds.

use super::{Contention, Scope};
use crate::topology::Fabric;
use serde_json::{json, Value};

/// One port as the report lists it.
fn port_json(f: &Fabric, c: &Contention, p: usize) -> Value {
    let g = f.as_pgft().expect("a PGFT");
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
}

/// What the scope covers, for the text.
pub(super) fn scope_words(scope: Scope) -> &'static str {
    match scope {
        Scope::Top => "the top-level switches' ports, the paper's top-ports",
        Scope::AboveLeaf => "every port of the switches above the leaves",
        Scope::All => "every port, leaves' and hosts' included",
    }
}

/// `weft contention`'s report of one routing.
pub struct Report {
    /// The report as `--json` writes it.
    pub json: Value,
}

impl Report {
    /// `scope`: the ports C_topo, the distribution and the worst ports cover; `top`: how
    /// many worst ports to list.
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        f: &Fabric,
        c: &Contention,
        routing: &str,
        pattern: &str,
        scope: Scope,
        top: usize,
        elapsed_s: f64,
    ) -> Report {
        let used: Vec<usize> = Contention::ports_in(f, scope)
            .into_iter()
            .filter(|&p| c.c(p) > 0)
            .collect();
        let c_topo = c.c_topo_in(f, scope);
        let mut histogram = vec![0u64; c_topo as usize + 1];
        for &p in &used {
            histogram[c.c(p) as usize] += 1;
        }
        let mut worst = used.clone();
        worst.sort_by_key(|&p| (std::cmp::Reverse(c.c(p)), p));
        worst.truncate(top);
        let worst: Vec<Value> = worst.iter().map(|&p| port_json(f, c, p)).collect();
        let histogram: Vec<Value> = histogram
            .iter()
            .enumerate()
            .skip(1)
            .filter(|(_, &n)| n > 0)
            .map(|(c, &n)| json!({ "c": c, "ports": n }))
            .collect();
        let mut by_scope = serde_json::Map::new();
        for s in Scope::ALL {
            by_scope.insert(s.name().into(), json!(c.c_topo_in(f, s)));
        }
        // The worst port of all: where the all-ports figure comes from.
        let worst_all = (0..c.src.len())
            .filter(|&p| c.c(p) > 0)
            .min_by_key(|&p| (std::cmp::Reverse(c.c(p)), p))
            .map(|p| port_json(f, c, p));
        Report {
            json: json!({
                "routing": routing,
                "pattern": pattern,
                "scope": scope.name(),
                "hosts": f.num_hosts,
                "switches": f.num_switches(),
                "routes": c.routes,
                "c_topo": c_topo,
                "c_topo_by_scope": by_scope,
                "worst_port_all": worst_all,
                "ports_used": used.len(),
                "ports_in_scope": Contention::ports_in(f, scope).len(),
                "ports_total": c.src.len(),
                "distribution": histogram,
                "worst_ports": worst,
                "elapsed_s": elapsed_s,
            }),
        }
    }

    /// The report as `weft contention` prints it.
    pub fn to_text(&self) -> String {
        let j = &self.json;
        let mut o = format!(
            "contention: routing {}, pattern {}: {} routes on {} hosts, {} switches\nC_topo {} (scope {}: {})\n",
            j["routing"].as_str().unwrap_or(""),
            j["pattern"].as_str().unwrap_or(""),
            j["routes"],
            j["hosts"],
            j["switches"],
            j["c_topo"],
            j["scope"].as_str().unwrap_or(""),
            Scope::parse(j["scope"].as_str().unwrap_or("")).map_or("", scope_words),
        );
        o += "C_topo by scope:";
        for s in Scope::ALL {
            o += &format!(" {} {}", s.name(), j["c_topo_by_scope"][s.name()]);
        }
        let w = &j["worst_port_all"];
        if !w.is_null() {
            o += &format!(
                " (all-ports worst: node {} {} port {} {} {}, {} src {} dst)",
                w["node"],
                w["address"].as_str().unwrap_or(""),
                w["port"],
                w["direction"].as_str().unwrap_or(""),
                w["stage"].as_str().unwrap_or(""),
                w["sources"],
                w["destinations"]
            );
        }
        o += &format!(
            "\nC_p over the {} ports of scope {} that carry routes (of {} in scope, {} in all):",
            j["ports_used"],
            j["scope"].as_str().unwrap_or(""),
            j["ports_in_scope"],
            j["ports_total"]
        );
        for h in j["distribution"].as_array().into_iter().flatten() {
            o += &format!(" {}: {}", h["c"], h["ports"]);
        }
        o += "\nworst ports in scope:\n  node address        port dir  stage      peer          src   dst   C\n";
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

/// `weft contention --draws N`: C_topo of a random routing over N seeds, at every scope.
pub struct Draws {
    /// The report as `--json` writes it.
    pub json: Value,
}

/// Min, median (the mean of the two middle values for an even count), max and the number of
/// draws per value.
fn stats(values: &[u32]) -> Value {
    let mut v = values.to_vec();
    v.sort_unstable();
    let n = v.len();
    let median = if n % 2 == 1 {
        v[n / 2] as f64
    } else {
        (v[n / 2 - 1] + v[n / 2]) as f64 / 2.0
    };
    let mut counts: Vec<Value> = vec![];
    for &x in &v {
        match counts.last_mut() {
            Some(c) if c["c"] == x => c["draws"] = json!(c["draws"].as_u64().unwrap_or(0) + 1),
            _ => counts.push(json!({ "c": x, "draws": 1 })),
        }
    }
    json!({ "min": v[0], "median": median, "max": v[n - 1], "counts": counts })
}

impl Draws {
    /// `c_topo[i]`: draw i's C_topo per [`Scope::ALL`] (seed `first_seed + i`); at least one.
    pub fn new(
        routing: &str,
        pattern: &str,
        scope: Scope,
        first_seed: u64,
        c_topo: &[[u32; 3]],
        elapsed_s: f64,
    ) -> Draws {
        assert!(!c_topo.is_empty());
        let mut by_scope = serde_json::Map::new();
        for (i, s) in Scope::ALL.into_iter().enumerate() {
            let v: Vec<u32> = c_topo.iter().map(|d| d[i]).collect();
            by_scope.insert(s.name().into(), stats(&v));
        }
        let k = Scope::ALL
            .iter()
            .position(|&s| s == scope)
            .expect("a scope");
        let headline: Vec<u32> = c_topo.iter().map(|d| d[k]).collect();
        Draws {
            json: json!({
                "routing": routing,
                "pattern": pattern,
                "scope": scope.name(),
                "draws": c_topo.len(),
                "seeds": [first_seed, first_seed.wrapping_add(c_topo.len() as u64 - 1)],
                "c_topo": stats(&headline),
                "c_topo_by_scope": by_scope,
                "elapsed_s": elapsed_s,
            }),
        }
    }

    /// The report as `weft contention` prints it.
    pub fn to_text(&self) -> String {
        let j = &self.json;
        let scope = j["scope"].as_str().unwrap_or("");
        let mut o = format!(
            "contention: routing {}, pattern {}: C_topo over {} draws (seeds {} to {})\n",
            j["routing"].as_str().unwrap_or(""),
            j["pattern"].as_str().unwrap_or(""),
            j["draws"],
            j["seeds"][0],
            j["seeds"][1]
        );
        let line = |name: &str, s: &Value| {
            let mut l = format!(
                "{name}: min {} median {} max {};",
                s["min"], s["median"], s["max"]
            );
            for c in s["counts"].as_array().into_iter().flatten() {
                l += &format!(" {}: {}", c["c"], c["draws"]);
            }
            l + "\n"
        };
        o += &line(
            &format!(
                "C_topo (scope {scope}: {})",
                Scope::parse(scope).map_or("", scope_words)
            ),
            &j["c_topo"],
        );
        for s in Scope::ALL {
            o += &line(
                &format!("  scope {}", s.name()),
                &j["c_topo_by_scope"][s.name()],
            );
        }
        o + &format!(
            "analysed in {:.3} s\n",
            j["elapsed_s"].as_f64().unwrap_or(0.0)
        )
    }
}
