//! Background flows (`[[workload.background]]`): flows pinned to an explicit path and paced at
//! a fixed rate, sent besides the workload (the PSP paper's fixed 200 Gb/s flow on one
//! leaf-spine-leaf path). Each is one more flow of its source host, listed before the
//! workload's own flows (all start at time 0, so the host's start-time order holds).
//!
//! The path travels in the packet as a path code in DRB's mixed radix (`lb/drb.rs`) marked
//! with [`PINNED`]: every switch follows the code's digit among its fault-free candidates,
//! whatever its own policy.

use super::Flow;
use crate::packet::{PINNED, PINNED_TO_SWITCH};
use crate::scenario::{BackgroundEnd, FieldError, Scenario};
use crate::time::PS_PER_US;
use crate::topology::{Fabric, NodeId, Route};

/// A background flow as the host and switches use it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Pinned {
    /// The flow itself.
    pub flow: Flow,
    /// The path code with [`PINNED`] set, carried in `Packet::via`.
    pub via: u32,
    /// Spacing of its data packets' starts (a full packet's wire time at the flow's rate).
    pub gap_ps: u64,
}

/// The background flows of a run, by source host (in scenario order within a host).
#[derive(Clone, Debug, Default)]
pub(crate) struct Background {
    by_host: std::collections::BTreeMap<u32, Vec<Pinned>>,
}

impl Background {
    pub(crate) fn build(s: &Scenario, fabric: &Fabric) -> Result<Background, FieldError> {
        let mut by_host: std::collections::BTreeMap<u32, Vec<Pinned>> = Default::default();
        for (i, b) in s.workload.background.iter().enumerate() {
            let field = |f: &str| format!("workload.background[{i}].{f}");
            for (name, h) in [("src", b.src), ("dst", b.dst)] {
                if h >= fabric.num_hosts {
                    return Err(FieldError::new(
                        field(name),
                        format!(
                            "{h} is not a host (hosts are 0 to {})",
                            fabric.num_hosts - 1
                        ),
                    ));
                }
            }
            if b.src == b.dst {
                return Err(FieldError::new(field("dst"), "must differ from src"));
            }
            let code = path_code(fabric, b.src, b.dst, &b.path)
                .map_err(|e| FieldError::new(field("path"), e))?;
            let wire =
                (s.packet.payload_bytes + s.packet.header_bytes + s.packet.interframe_bytes) as u64;
            let rate_bps = b.rate_gbps * 1e9;
            let gap_ps = ((wire * 8) as f64 * 1e12 / rate_bps).round().max(1.0) as u64;
            let duration_us = b.duration_us.or(s.workload.duration_us).expect("validated");
            let duration_ps = (duration_us * PS_PER_US as f64).round() as u64;
            let packets = (duration_ps / gap_ps).clamp(1, u32::MAX as u64);
            let ends = match b.ends {
                BackgroundEnd::Host => 0,
                BackgroundEnd::Switch => PINNED_TO_SWITCH,
            };
            by_host.entry(b.src).or_default().push(Pinned {
                flow: Flow {
                    src: b.src,
                    dst: b.dst,
                    bytes: packets * s.packet.payload_bytes as u64,
                    start: super::Start::At(0),
                },
                via: code | PINNED | ends,
                gap_ps,
            });
        }
        Ok(Background { by_host })
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.by_host.is_empty()
    }

    /// Background flows of host `h`.
    #[inline]
    pub(crate) fn of(&self, h: u32) -> &[Pinned] {
        self.by_host.get(&h).map_or(&[], |v| v.as_slice())
    }
}

/// The path code that makes every switch of `path` (from `src`'s edge switch to `dst`'s)
/// forward to the next one, or why there is none.
fn path_code(fabric: &Fabric, src: NodeId, dst: NodeId, path: &[u32]) -> Result<u32, String> {
    let first = fabric.peer(src, 0, 0).0;
    let last = fabric.peer(dst, 0, 0).0;
    if path.first() != Some(&first) || path.last() != Some(&last) {
        return Err(format!(
            "must start at src's switch {first} and end at dst's switch {last} (got {path:?})"
        ));
    }
    let mut code = 0u32;
    for w in path.windows(2) {
        let (n, next) = (w[0], w[1]);
        let Some(p) = (0..fabric.num_ports(n)).find(|&p| fabric.peer(n, p, 0).0 == next) else {
            return Err(format!("switch {n} has no link to {next}"));
        };
        if fabric.is_link_down(n, p) {
            return Err(format!("the link from switch {n} to {next} has failed"));
        }
        match fabric.route_all(n, dst) {
            Route::Port(q) if q == p => {}
            Route::Choice(all) if all.iter().any(|q| q == p) => {
                let d = all.iter().position(|q| q == p).expect("found") as u32;
                code += d * fabric.path_digit_divisor(fabric.tier(n));
            }
            _ => {
                return Err(format!(
                    "{n} -> {next} is not on a shortest path to host {dst}"
                ))
            }
        }
    }
    // A path that repeats a tier's choice (e.g. climbing twice) would overwrite a digit:
    // check that the code reproduces the path exactly.
    if walk(fabric, src, dst, code) != path {
        return Err(format!(
            "{path:?} is not a shortest path from host {src} to host {dst}"
        ));
    }
    Ok(code)
}

/// The switches a pinned packet with path code `code` visits from `src` to `dst`.
pub(crate) fn walk(fabric: &Fabric, src: NodeId, dst: NodeId, code: u32) -> Vec<u32> {
    let mut n = fabric.peer(src, 0, 0).0;
    let mut seen = vec![];
    while !fabric.is_host(n) {
        seen.push(n);
        let p = pinned_port(fabric, n, dst, code);
        n = fabric.peer(n, p, 0).0;
        if seen.len() > 16 {
            break;
        }
    }
    seen
}

/// The port a switch forwards a pinned packet with path code `code` (markers removed or not)
/// on: the code's digit among its fault-free candidates.
#[inline]
pub(crate) fn pinned_port(fabric: &Fabric, n: NodeId, dst: NodeId, code: u32) -> u16 {
    match fabric.route_all(n, dst) {
        Route::Port(p) => p,
        Route::Choice(all) => {
            let code = code & !(PINNED | PINNED_TO_SWITCH);
            let below = fabric.path_digit_divisor(fabric.tier(n));
            all.get(((code / below) % all.len() as u32) as u16)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scenario::{BackgroundFlow, TopologyKind};

    fn scenario(kind: TopologyKind, k: u32) -> Scenario {
        let mut s = Scenario::default();
        s.topology.kind = kind;
        s.topology.k = k;
        s
    }

    /// Leaf-spine k = 8: hosts 0-31, leaves 32-39, spines 40-43. Fat tree k = 4: hosts 0-15,
    /// edges 16-23, aggregations 24-31, cores 32-35 (core (a, c) = 32 + 2a + c).
    #[test]
    fn codes_reproduce_the_given_path() {
        let s = scenario(TopologyKind::LeafSpine, 8);
        let f = Fabric::build(&s);
        for spine in 40..44 {
            let path = vec![32, spine, 39];
            let code = path_code(&f, 0, 31, &path).unwrap();
            assert_eq!(walk(&f, 0, 31, code | PINNED), path);
        }
        let s = scenario(TopologyKind::FatTree, 4);
        let f = Fabric::build(&s);
        // Host 0 (edge 16, pod 0) to host 15 (edge 23, pod 3) through aggregation 1 of pod 0
        // (node 25), core (1, 0) = 34, aggregation 1 of pod 3 (node 31).
        let path = vec![16, 25, 34, 31, 23];
        let code = path_code(&f, 0, 15, &path).unwrap();
        assert_eq!(code, 1, "agg digit 1, core digit 0");
        assert_eq!(walk(&f, 0, 15, code), path);
    }

    #[test]
    fn bad_paths_are_refused_with_the_reason() {
        let s = scenario(TopologyKind::FatTree, 4);
        let f = Fabric::build(&s);
        let err = |p: &[u32]| path_code(&f, 0, 15, p).unwrap_err();
        assert!(err(&[17, 25, 34, 31, 23]).contains("must start at src's switch 16"));
        assert!(err(&[16, 34, 31, 23]).contains("no link"));
        // Core (0, 0) = 32 hangs under aggregation 0, not 1.
        assert!(err(&[16, 25, 32, 31, 23]).contains("no link"));
        // Down to pod 3 through aggregation 0 of pod 3 (28 + ... = node 30) after core 34
        // (which only reaches aggregation 1 of each pod).
        assert!(err(&[16, 25, 34, 30, 23]).contains("no link"));
        let mut s = s;
        s.workload.duration_us = Some(10.0);
        s.workload.background = vec![BackgroundFlow {
            src: 0,
            dst: 99,
            path: vec![16],
            rate_gbps: 100.0,
            duration_us: None,
            ends: BackgroundEnd::Host,
        }];
        let e = Background::build(&s, &f).unwrap_err();
        assert_eq!(e.field, "workload.background[0].dst");
    }

    /// 200 Gb/s of 4,178-byte frames (payload 4,096 + header 62 + gap 20): one every
    /// 167.12 ns; 10 µs hold 59 of them.
    #[test]
    fn rate_and_duration_give_the_gap_and_the_size() {
        let mut s = scenario(TopologyKind::LeafSpine, 8);
        s.workload.background = vec![BackgroundFlow {
            src: 0,
            dst: 31,
            path: vec![32, 41, 39],
            rate_gbps: 200.0,
            duration_us: Some(10.0),
            ends: BackgroundEnd::Host,
        }];
        let f = Fabric::build(&s);
        let bg = Background::build(&s, &f).unwrap();
        let p = bg.of(0)[0];
        assert_eq!(p.gap_ps, 167_120);
        assert_eq!(p.flow.bytes, 59 * 4096);
        assert_eq!(walk(&f, 0, 31, p.via), vec![32, 41, 39]);
    }
}
