//! Failed links and the routes that avoid them.
//!
//! A failed link carries nothing in either direction. Routing keeps to shortest paths: at a switch,
//! a candidate port stays valid for a destination if its link is up and the node it leads to still
//! reaches the destination on a shortest path (the Ofan paper's valid ports, §4.1: routing uses
//! only ports that still reach the destination). Routes depend on the destination only through its
//! edge switch (leaf), so validity is tabulated per (switch, destination edge): an index into a
//! pool of interned port lists, or [`KEEP`] where nothing changed. The table exists only when links
//! fail; a fault-free fabric pays one branch per route.
//!
//! Single-port (downward) routes are never rewritten: a switch whose only way down is broken
//! is simply never chosen by the switches above it, since it does not reach the destination.

use super::{Candidates, Fabric, NodeId, Route};
use crate::rng::{stream, Purpose};
use crate::scenario::{FieldError, Scenario};
use rand::Rng;
use std::collections::HashMap;

/// Table entry: the fault-free route applies.
const KEEP: u32 = u32::MAX;

pub(super) struct FailureRoutes {
    /// Per global port id: its link is down (both directions are marked).
    down: Vec<bool>,
    /// The failed links, one (node, port) per link, from the lower tier's end.
    failed: Vec<(NodeId, u16)>,
    num_edges: u32,
    /// `(switch - num_hosts) * num_edges + destination edge` -> index into `lists`, or KEEP.
    table: Vec<u32>,
    lists: Vec<Box<[u16]>>,
    /// Per cell of `table`: whether the switch still reaches the destination edge.
    reach: Vec<bool>,
}

impl FailureRoutes {
    /// The candidate ports of switch `n` toward a host under edge switch `edge`, if failures
    /// changed them.
    #[inline]
    pub(super) fn route(&self, n: NodeId, num_hosts: u32, edge: u32) -> Option<&[u16]> {
        let i = (n - num_hosts) as usize * self.num_edges as usize + edge as usize;
        match self.table[i] {
            KEEP => None,
            l => Some(&self.lists[l as usize]),
        }
    }

    pub(super) fn failed_links(&self) -> &[(NodeId, u16)] {
        &self.failed
    }

    fn reaches(&self, n: NodeId, num_hosts: u32, edge: u32) -> bool {
        self.reach[(n - num_hosts) as usize * self.num_edges as usize + edge as usize]
    }

    pub(super) fn is_down(&self, port_id: u32) -> bool {
        self.down[port_id as usize]
    }
}

impl Fabric {
    /// Applies `[failures]`: draws the failed links, checks that every pair of edge switches
    /// stays connected, and tabulates the routes that avoid the failed links.
    pub fn with_failures(mut self, s: &Scenario) -> Result<Fabric, FieldError> {
        if !s.failures.any() {
            return Ok(self);
        }
        let failed = self.choose_failed_links(s)?;
        let mut down = vec![false; self.num_ports_total() as usize];
        for &(n, p) in &failed {
            let (pn, pp) = self.peer(n, p, 0);
            down[self.port_id(n, p) as usize] = true;
            down[self.port_id(pn, pp) as usize] = true;
        }
        let routes = Tabulator::new(&self, &down).run()?;
        self.failures = Some(Box::new(FailureRoutes {
            down,
            failed,
            num_edges: routes.num_edges,
            table: routes.table,
            lists: routes.lists,
            reach: routes.reach,
        }));
        Ok(self)
    }

    /// The failed links, each once, from the end in the lower tier: the explicit list first,
    /// then each switch-to-switch link with probability `link_probability`, drawn in node and
    /// port order from the seed's own stream.
    fn choose_failed_links(&self, s: &Scenario) -> Result<Vec<(NodeId, u16)>, FieldError> {
        let mut failed = Vec::new();
        for (i, l) in s.failures.links.iter().enumerate() {
            let field = format!("failures.links[{i}]");
            if l.node >= self.num_nodes() || l.port >= self.num_ports(l.node) {
                return Err(FieldError::new(
                    field,
                    format!("node {} has no port {}", l.node, l.port),
                ));
            }
            let (pn, pp) = self.peer(l.node, l.port, 0);
            if self.is_host(l.node) || self.is_host(pn) {
                return Err(FieldError::new(
                    field,
                    format!(
                        "port {} of node {} is a host link; only links between switches fail",
                        l.port, l.node
                    ),
                ));
            }
            let lower = if self.tier(l.node) < self.tier(pn) {
                (l.node, l.port)
            } else {
                (pn, pp)
            };
            if !failed.contains(&lower) {
                failed.push(lower);
            }
        }
        let f = s.failures.link_probability;
        if f > 0.0 {
            let rng = &mut stream(s.seed, 0, Purpose::Failures);
            for n in self.num_hosts..self.num_nodes() {
                for p in 0..self.num_ports(n) {
                    let (pn, _) = self.peer(n, p, 0);
                    if self.tier(pn) > self.tier(n)
                        && rng.gen::<f64>() < f
                        && !failed.contains(&(n, p))
                    {
                        failed.push((n, p));
                    }
                }
            }
        }
        Ok(failed)
    }

    /// Whether switch `n` still reaches host `dst` on a shortest path of live links.
    pub fn reaches(&self, n: NodeId, dst: NodeId) -> bool {
        self.failures
            .as_ref()
            .is_none_or(|f| f.reaches(n, self.num_hosts, self.subtree(dst, 1).0))
    }

    /// Whether any link of the fabric has failed.
    pub fn has_failures(&self) -> bool {
        self.failures.is_some()
    }

    /// The failed links (from the end in the lower tier); empty without failures.
    pub fn failed_links(&self) -> &[(NodeId, u16)] {
        self.failures.as_ref().map_or(&[], |f| f.failed_links())
    }

    /// Whether the link leaving port `p` of `n` has failed.
    pub fn is_link_down(&self, n: NodeId, p: u16) -> bool {
        self.failures
            .as_ref()
            .is_some_and(|f| f.is_down(self.port_id(n, p)))
    }
}

/// Whether `p` is one of the candidates.
pub fn contains(c: Candidates<'_>, p: u16) -> bool {
    match c {
        Candidates::Range { first, count } => p >= first && p - first < count,
        Candidates::List(l) => l.contains(&p),
    }
}

/// Computes, for every (switch, destination edge), the valid candidates.
struct Tabulator<'a> {
    fabric: &'a Fabric,
    down: &'a [bool],
    num_edges: u32,
    hosts_per_edge: u32,
    /// Per (switch, edge): 0 unknown, 1 reaches, 2 does not.
    reach: Vec<u8>,
    table: Vec<u32>,
    lists: Vec<Box<[u16]>>,
    interned: HashMap<Vec<u16>, u32>,
}

struct Tables {
    num_edges: u32,
    table: Vec<u32>,
    lists: Vec<Box<[u16]>>,
    reach: Vec<bool>,
}

impl<'a> Tabulator<'a> {
    fn new(fabric: &'a Fabric, down: &'a [bool]) -> Tabulator<'a> {
        let (_, num_edges) = fabric.subtree(0, 1);
        let hosts_per_edge = fabric.num_hosts / num_edges;
        let cells = fabric.num_switches() as usize * num_edges as usize;
        Tabulator {
            fabric,
            down,
            num_edges,
            hosts_per_edge,
            reach: vec![0; cells],
            table: vec![KEEP; cells],
            lists: Vec::new(),
            interned: HashMap::new(),
        }
    }

    fn run(mut self) -> Result<Tables, FieldError> {
        let f = self.fabric;
        for n in f.num_hosts..f.num_nodes() {
            for e in 0..self.num_edges {
                self.reaches(n, e);
            }
        }
        // Every edge switch must reach every other one, or some flows could never finish.
        for a in 0..self.num_edges {
            let edge_node = f.peer(a * self.hosts_per_edge, 0, 0).0;
            for b in 0..self.num_edges {
                if a != b && !self.reaches(edge_node, b) {
                    let other = f.peer(b * self.hosts_per_edge, 0, 0).0;
                    return Err(FieldError::new(
                        "failures",
                        format!(
                            "the {} failed links disconnect switch {edge_node} from switch \
                             {other}; lower failures.link_probability or change the seed",
                            self.down.iter().filter(|&&d| d).count() / 2
                        ),
                    ));
                }
            }
        }
        Ok(Tables {
            num_edges: self.num_edges,
            table: self.table,
            lists: self.lists,
            reach: self.reach.iter().map(|&r| r == 1).collect(),
        })
    }

    fn cell(&self, n: NodeId, e: u32) -> usize {
        (n - self.fabric.num_hosts) as usize * self.num_edges as usize + e as usize
    }

    /// Whether switch `n` reaches a host under edge `e` on a shortest path of live links,
    /// filling the table for `n` on the way.
    fn reaches(&mut self, n: NodeId, e: u32) -> bool {
        let f = self.fabric;
        let c = self.cell(n, e);
        match self.reach[c] {
            1 => return true,
            2 => return false,
            _ => {}
        }
        let dst = e * self.hosts_per_edge;
        let ok = match f.route_all(n, dst) {
            Route::Port(p) => {
                let (pn, _) = f.peer(n, p, 0);
                !self.down[f.port_id(n, p) as usize] && (f.is_host(pn) || self.reaches(pn, e))
            }
            Route::Choice(all) => {
                let valid: Vec<u16> = all
                    .iter()
                    .filter(|&p| {
                        let (pn, _) = f.peer(n, p, 0);
                        !self.down[f.port_id(n, p) as usize] && self.reaches(pn, e)
                    })
                    .collect();
                if valid.len() != all.len() as usize {
                    let next = self.lists.len() as u32;
                    let id = *self.interned.entry(valid.clone()).or_insert(next);
                    if id == next {
                        self.lists.push(valid.clone().into_boxed_slice());
                    }
                    self.table[c] = id;
                }
                !valid.is_empty()
            }
        };
        self.reach[c] = if ok { 1 } else { 2 };
        ok
    }
}
