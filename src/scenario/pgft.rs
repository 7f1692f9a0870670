//! `[topology.pgft]`: a Parallel Generalized Fat-Tree PGFT(h; m_1..m_h; w_1..w_h; p_1..p_h)
//! (the PGFT routing paper) and the types of its end nodes (compute, I/O, ...), which the
//! grouped static routings (`gdmodk`, `gsmodk`) and the contention patterns read.

use super::validate::{bail_field, FieldError, Result};

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// The most levels a PGFT may have (stage and tier names exist up to this height).
pub(super) const MAX_LEVELS: usize = 6;
/// The most end nodes (2^22), the most ports per switch.
const MAX_HOSTS: u64 = 1 << 22;
const MAX_PORTS: u64 = 4096;

/// `[topology.pgft]`: the PGFT's levels, arities and parallel links, and its node types.
#[derive(Clone, Debug, Default, Deserialize, Serialize, PartialEq, JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct PgftConfig {
    /// Levels of switches h (required, 1 to 6). PGFT(h; m_1..m_h; w_1..w_h; p_1..p_h) (the PGFT
    /// routing paper): the three-level fat tree of radix k is `h = 3`, `m = [k/2, k/2, k]`, `w =
    /// [1, k/2, k/2]` (same numbering, ports and results, byte for byte).
    pub h: u32,
    /// m_l: down-neighbours (sub-trees) of a level-l switch, l = 1..h (required, h values). The end
    /// nodes are m_1·…·m_h (2 to 2^22), with at most 4,096 ports per switch.
    pub m: Vec<u32>,
    /// w_l: up-neighbours (parents at level l) of a level-(l−1) node (required, h values; w_1 = 1:
    /// an end node has one port).
    pub w: Vec<u32>,
    /// p_l: parallel links between a level-(l−1) node and each of its parents, each link its own
    /// port (h values, p_1 = 1; empty: 1 everywhere).
    pub p: Vec<u32>,
    /// The number of end nodes; if given, it must equal the product of `m` (a check).
    pub hosts: Option<u32>,
    /// Node types by a per-leaf pattern, e.g. "7 compute + 1 io": each leaf's m_1 hosts in order
    /// (the counts sum to m_1). Exclusive with `types`.
    pub leaf_pattern: Option<String>,
    /// Node types by host index ranges, e.g. `[[topology.pgft.types]] name = "io" ranges = [[56,
    /// 63]]`; the ranges of all types must cover every host exactly once, and their order is the
    /// order the grouped routings (`gdmodk`, `gsmodk`) number them in. Exclusive with
    /// `leaf_pattern`. Neither: every host is "compute".
    pub types: Vec<NodeTypeRanges>,
}

/// `[[topology.pgft.types]]`: one node type and the host index ranges it covers.
#[derive(Clone, Debug, Default, Deserialize, Serialize, PartialEq, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct NodeTypeRanges {
    /// The type's name (e.g. "compute", "io"), as contention patterns name it (`weft contention
    /// --pattern compute-io`).
    pub name: String,
    /// Inclusive ranges `[first, last]` of host indices.
    pub ranges: Vec<[u32; 2]>,
}

/// The types of a fabric's end nodes: names in grouping order and each host's type index.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HostTypes {
    /// Type names, in grouping order.
    pub names: Vec<String>,
    /// Each host's type: an index into `names`.
    pub type_of: Vec<u16>,
}

impl HostTypes {
    /// One type, "compute", for every host (fabrics without `[topology.pgft]` types).
    pub fn uniform(hosts: u32) -> HostTypes {
        HostTypes {
            names: vec!["compute".into()],
            type_of: vec![0; hosts as usize],
        }
    }
    /// The index of the type called `name`.
    pub fn index(&self, name: &str) -> Option<u16> {
        self.names.iter().position(|n| n == name).map(|i| i as u16)
    }
}

impl PgftConfig {
    /// p with its default (1 everywhere) applied.
    pub fn p_or_ones(&self) -> Vec<u32> {
        if self.p.is_empty() {
            vec![1; self.m.len()]
        } else {
            self.p.clone()
        }
    }

    /// Number of end nodes: the product of `m` (after [`PgftConfig::validate`]).
    pub fn num_hosts(&self) -> u32 {
        self.m.iter().product()
    }

    /// Checks the shape (lengths, products, port counts) and the node types.
    pub fn validate(&self) -> Result<()> {
        self.validate_shape()?;
        self.host_types().map(|_| ())
    }

    fn validate_shape(&self) -> Result<()> {
        let h = self.h as usize;
        if !(1..=MAX_LEVELS).contains(&h) {
            bail_field!(
                "topology.pgft.h",
                "must be from 1 to {MAX_LEVELS} levels (got {})",
                self.h
            );
        }
        for (field, v) in [("m", &self.m), ("w", &self.w), ("p", &self.p)] {
            if field == "p" && v.is_empty() {
                continue;
            }
            if v.len() != h {
                bail_field!(
                    format!("topology.pgft.{field}"),
                    "has {} values but h = {h} (one per level)",
                    v.len()
                );
            }
            if let Some(i) = v.iter().position(|&x| x == 0 || x as u64 > MAX_PORTS) {
                bail_field!(
                    format!("topology.pgft.{field}"),
                    "{field}[{i}] = {} must be from 1 to {MAX_PORTS}",
                    v[i]
                );
            }
        }
        let p = self.p_or_ones();
        if self.w[0] != 1 || p[0] != 1 {
            bail_field!(
                if self.w[0] != 1 {
                    "topology.pgft.w"
                } else {
                    "topology.pgft.p"
                },
                "w[0] and p[0] must be 1: an end node has one port (got w[0] = {}, p[0] = {})",
                self.w[0],
                p[0]
            );
        }
        let hosts = self.m.iter().try_fold(1u64, |a, &x| {
            let n = a * x as u64;
            (n <= MAX_HOSTS).then_some(n)
        });
        let Some(hosts) = hosts.filter(|&n| n >= 2) else {
            bail_field!(
                "topology.pgft.m",
                "the product of m (the end nodes) must be from 2 to {MAX_HOSTS} (m = {:?})",
                self.m
            );
        };
        if let Some(n) = self.hosts.filter(|&n| n as u64 != hosts) {
            bail_field!(
                "topology.pgft.hosts",
                "{n} end nodes, but the product of m = {:?} is {hosts}",
                self.m
            );
        }
        self.check_ports_and_switches(&p, hosts)
    }

    /// Ports per switch (m_l·p_l down + w_{l+1}·p_{l+1} up) and the switch count.
    fn check_ports_and_switches(&self, p: &[u32], hosts: u64) -> Result<()> {
        let h = self.h as usize;
        let mut switches = 0u64;
        let mut below = hosts; // nodes of the level under l
        for l in 0..h {
            let up = if l + 1 < h {
                self.w[l + 1] as u64 * p[l + 1] as u64
            } else {
                0
            };
            let ports = self.m[l] as u64 * p[l] as u64 + up;
            if ports > MAX_PORTS {
                bail_field!(
                    "topology.pgft.m",
                    "a level-{} switch would have {ports} ports (m·p down + w·p up), more than {MAX_PORTS}",
                    l + 1
                );
            }
            // Level l+1 has (nodes below) · w_{l+1} / m_{l+1} switches.
            let count = below * self.w[l] as u64 / self.m[l] as u64;
            debug_assert_eq!(count * self.m[l] as u64, below * self.w[l] as u64);
            switches += count;
            below = count;
            if switches > 1 << 26 {
                bail_field!(
                    "topology.pgft.w",
                    "more than 2^26 switches (w = {:?})",
                    self.w
                );
            }
        }
        Ok(())
    }

    /// Every host's type, from `leaf_pattern`, `types` or neither (all "compute").
    pub fn host_types(&self) -> Result<HostTypes> {
        let hosts = self.num_hosts();
        match (&self.leaf_pattern, self.types.is_empty()) {
            (Some(_), false) => bail_field!(
                "topology.pgft.types",
                "give either leaf_pattern or types, not both"
            ),
            (Some(pattern), true) => self.types_from_pattern(pattern),
            (None, false) => self.types_from_ranges(hosts),
            (None, true) => Ok(HostTypes::uniform(hosts)),
        }
    }

    /// "7 compute + 1 io": every leaf's hosts in order, counts summing to m_1.
    fn types_from_pattern(&self, pattern: &str) -> Result<HostTypes> {
        const FIELD: &str = "topology.pgft.leaf_pattern";
        let mut names: Vec<String> = vec![];
        let mut parts: Vec<(u16, u64)> = vec![];
        for part in pattern.split('+') {
            let mut words = part.split_whitespace();
            let (Some(count), Some(name), None) = (words.next(), words.next(), words.next()) else {
                bail_field!(
                    FIELD,
                    "expected \"COUNT TYPE + COUNT TYPE ...\" (got {part:?})"
                );
            };
            let Ok(count) = count.parse::<u64>() else {
                bail_field!(FIELD, "{count:?} is not a count");
            };
            let t = names.iter().position(|n| n == name).unwrap_or_else(|| {
                names.push(name.to_string());
                names.len() - 1
            });
            parts.push((t as u16, count));
        }
        let total: u64 = parts.iter().map(|p| p.1).sum();
        if total != self.m[0] as u64 {
            bail_field!(
                FIELD,
                "the counts sum to {total}, but a leaf has m[0] = {} hosts",
                self.m[0]
            );
        }
        let leaf: Vec<u16> = parts
            .iter()
            .flat_map(|&(t, n)| std::iter::repeat_n(t, n as usize))
            .collect();
        let type_of = (0..self.num_hosts())
            .map(|d| leaf[(d % self.m[0]) as usize])
            .collect();
        Ok(HostTypes { names, type_of })
    }

    /// Inclusive ranges that cover every host exactly once.
    fn types_from_ranges(&self, hosts: u32) -> Result<HostTypes> {
        const UNSET: u16 = u16::MAX;
        let mut type_of = vec![UNSET; hosts as usize];
        let mut names = vec![];
        for (t, ty) in self.types.iter().enumerate() {
            let field = format!("topology.pgft.types[{t}]");
            if ty.name.is_empty() || names.contains(&ty.name) {
                bail_field!(format!("{field}.name"), "must be a new non-empty name");
            }
            names.push(ty.name.clone());
            for &[first, last] in &ty.ranges {
                if first > last || last >= hosts {
                    bail_field!(
                        format!("{field}.ranges"),
                        "[{first}, {last}] is not a range of hosts 0 to {}",
                        hosts - 1
                    );
                }
                for d in first..=last {
                    let slot = &mut type_of[d as usize];
                    if *slot != UNSET {
                        bail_field!(
                            format!("{field}.ranges"),
                            "host {d} is already of type \"{}\"",
                            names[*slot as usize]
                        );
                    }
                    *slot = t as u16;
                }
            }
        }
        if let Some(d) = type_of.iter().position(|&t| t == UNSET) {
            bail_field!(
                "topology.pgft.types",
                "host {d} has no type (the ranges must cover hosts 0 to {})",
                hosts - 1
            );
        }
        Ok(HostTypes { names, type_of })
    }
}

/// Tier names (`[topology.tiers.NAME]`, link classes) of a PGFT of `h` levels: the link
/// between level l−1 and level l is tier l−1. Heights 2 and 3 use the leaf-spine and fat-tree
/// names, so a fat tree written as a PGFT accepts (and reports) the same names.
pub fn pgft_tier_names(h: u32) -> &'static [&'static str] {
    const NAMES: [&[&str]; MAX_LEVELS] = [
        &["host_switch"],
        &["host_leaf", "leaf_spine"],
        &["host_edge", "edge_agg", "agg_core"],
        &["host_l1", "l1_l2", "l2_l3", "l3_l4"],
        &["host_l1", "l1_l2", "l2_l3", "l3_l4", "l4_l5"],
        &["host_l1", "l1_l2", "l2_l3", "l3_l4", "l4_l5", "l5_l6"],
    ];
    NAMES[(h as usize).clamp(1, MAX_LEVELS) - 1]
}

/// Stage names of a PGFT of `h` levels: up stages by sending level, then down stages; heights
/// 2 and 3 as the leaf-spine and the fat tree.
pub fn pgft_stage_names(h: u32) -> &'static [&'static str] {
    const NAMES: [&[&str]; MAX_LEVELS] = [
        &["host_switch", "switch_host"],
        &["host_leaf", "leaf_spine", "spine_leaf", "leaf_host"],
        &[
            "host_edge",
            "edge_agg",
            "agg_core",
            "core_agg",
            "agg_edge",
            "edge_host",
        ],
        &[
            "host_l1", "l1_l2", "l2_l3", "l3_l4", "l4_l3", "l3_l2", "l2_l1", "l1_host",
        ],
        &[
            "host_l1", "l1_l2", "l2_l3", "l3_l4", "l4_l5", "l5_l4", "l4_l3", "l3_l2", "l2_l1",
            "l1_host",
        ],
        &[
            "host_l1", "l1_l2", "l2_l3", "l3_l4", "l4_l5", "l5_l6", "l6_l5", "l5_l4", "l4_l3",
            "l3_l2", "l2_l1", "l1_host",
        ],
    ];
    NAMES[(h as usize).clamp(1, MAX_LEVELS) - 1]
}
