//! The immutable model every partition reads: fabric, workload, LB configuration, queue
//! discipline, and the scenario's parameters converted to the integer units the event path
//! uses.

use crate::lb::LbShared;
use crate::metrics::rho_max::RhoMax;
use crate::scenario::{
    BufferBytes, BufferMode, CcKind, EcnMode, FieldError, ReorderPaths, RhoSplit, Scenario,
    DEFAULT_SHARED_BUFFER_ALPHA,
};
use crate::time::{PS_PER_NS, PS_PER_US};
use crate::topology::Fabric;
use crate::transport::cc::CcEnv;
use crate::transport::{CcChoice, ReliableParams, TransportParams};
use crate::workload::Workload;
use anyhow::Result;
use serde::{Deserialize, Serialize};

/// How ECN marks are decided.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum EcnRule {
    /// No ECN marking.
    Off,
    /// Mark a data packet arriving at a port whose FIFO already holds at least this many
    /// bytes (DCTCP style, on enqueue).
    Step {
        /// FIFO bytes at or above which an arriving data packet is marked.
        threshold_bytes: u64,
    },
    /// On dequeue, with q = FIFO bytes left behind: never at q ≤ min, always at q > max,
    /// else with probability (q − min)/(max − min).
    Ramp {
        /// FIFO bytes at or below which nothing is marked.
        min_bytes: u64,
        /// FIFO bytes above which every packet is marked.
        max_bytes: u64,
    },
}

/// What happens to a data packet that does not fit in the FIFO.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Overflow {
    /// The packet is lost.
    Drop,
    /// Cut to `trim_bytes`; with `evict_queued`, a fair coin picks between the arriving
    /// packet and the FIFO's last one (UEC htsim), else always the arriving one.
    Trim {
        /// Size of a trimmed packet (its header), in bytes.
        trim_bytes: u32,
        /// A fair coin may trim the FIFO's last packet instead of the arriving one.
        evict_queued: bool,
        /// A header that finds the priority queue full goes back to its sender as a NACK
        /// (NDP's return-to-sender) instead of being dropped.
        return_to_sender: bool,
    },
}

/// Switch ports' queue discipline (behaviour: `net::qdisc`).
#[derive(Clone, Copy, Debug, Serialize, Deserialize)]
pub struct QueueDiscipline {
    /// FIFO byte limit (`u64::MAX`: unlimited).
    pub buffer_bytes: u64,
    /// How data packets are ECN-marked.
    pub ecn: EcnRule,
    /// What happens to a data packet the FIFO cannot take.
    pub overflow: Overflow,
    /// Control packets use the strict-priority queue (always with trimming).
    pub priority_control: bool,
    /// Byte limit of the priority queue (`u64::MAX`: unlimited).
    pub ctrl_buffer_bytes: u64,
    /// How a switch port shares its wire between the priority queue and the FIFO while both
    /// hold packets; `None`: strict priority.
    pub ctrl_share: Option<CtrlShare>,
    /// `switch.buffer = "shared"`: every FIFO of a switch draws on one pool under a dynamic
    /// threshold, and `buffer_bytes` is no cap of its own; `None`: per-port buffers.
    pub shared: Option<SharedBuffer>,
}

/// A shared switch buffer's parameters (`switch.buffer = "shared"`; the rule and the
/// switch's state: `net::qdisc::SharedPool`).
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct SharedBuffer {
    /// The pool of one switch (`switch.shared_buffer_bytes`); `None`: `buffer_bytes` × the
    /// switch's ports.
    pub pool_bytes: Option<u64>,
    /// α of the dynamic threshold (`switch.shared_buffer_alpha`).
    pub alpha: f64,
}

impl QueueDiscipline {
    /// The shared pool of a switch with `ports` ports, if buffers are shared.
    pub fn pool_bytes(&self, ports: u16) -> Option<u64> {
        self.shared.map(|sh| {
            sh.pool_bytes
                .unwrap_or_else(|| self.buffer_bytes.saturating_mul(ports as u64))
        })
    }
}

/// Byte-weighted round robin between a switch port's priority queue (headers, ACKs,
/// NACKs, pulls) and its data FIFO: of every `ctrl_bytes + data_bytes` sent while both
/// wait, about `ctrl_bytes` are control (Opera's ToR queue: 640 : 1500, as opera-sim's
/// `CompositeQueue`). Strict
/// priority lets trimmed headers starve data for good when retransmissions keep arriving
/// at a full port (found on the expander shuffle: a port's header queue grew to 7,907
/// headers and delivered no data for 100 ms).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct CtrlShare {
    /// Control bytes of each round.
    pub ctrl_bytes: u32,
    /// Data bytes of each round.
    pub data_bytes: u32,
}

/// A scenario built into what the engine simulates: the fabric, the workload and every
/// parameter the nodes read, each in its unit.
pub struct Model {
    /// The scenario's seed, from which every random stream is derived.
    pub seed: u64,
    /// The built fabric: nodes, ports, links and routes.
    pub fabric: Fabric,
    /// The built workload: flows and their dependencies.
    pub workload: Workload,
    /// The LB policies' parameters and the state all switches share.
    pub lb: LbShared,
    /// Queue discipline of switch ports.
    pub qdisc: QueueDiscipline,
    /// Fault injection: probability, in parts per 2^32, that a packet arriving at a switch
    /// of `loss_switches` is lost.
    pub loss_per_2_32: u64,
    /// Switches where injected losses apply (empty: all).
    pub loss_switches: Vec<u32>,
    /// Added to every arrival at a switch (its forwarding pipeline).
    pub forwarding_ps: u64,
    /// Payload bytes of a full data packet (`packet.payload_bytes`).
    pub payload_bytes: u32,
    /// Header bytes of a data packet (`packet.header_bytes`).
    pub header_bytes: u32,
    /// Bytes of an ACK and of the other control packets (`packet.ack_bytes`).
    pub ack_bytes: u32,
    /// Wire bytes between two packets (preamble and inter-frame gap).
    pub interframe_bytes: u32,
    /// Host pacing rate as parts per million of line rate.
    pub load_ppm: u64,
    /// The hosts' transport and congestion control parameters.
    pub transport: TransportParams,
    /// Unloaded round trip between the farthest hosts (NSCC's `network_rtt`).
    pub network_rtt_ps: u64,
    /// Line rate of the hosts' links.
    pub line_rate_bps: u64,
    /// Sampling interval of the port queues (time series and buffer occupancy).
    pub sample_ps: u64,
    /// Hosts whose flows' windows are traced.
    pub trace_hosts: Vec<u32>,
    /// Upper edges of the FCT size bins, in bytes (`report.fct_bins_bytes`; empty: off).
    pub fct_bins_bytes: Vec<u64>,
    /// Every completed flow is logged (`report.flow_log`).
    pub flow_log: bool,
    /// With failed links: the max-concurrent-flow rate of the instance (`metrics::rho_max`).
    pub rho_max: Option<RhoMax>,
    /// Opera: RotorLB, the bulk transport (`transport/rotor.rs`); None on other fabrics.
    pub rotor: Option<crate::transport::rotor::RotorParams>,
}

impl Model {
    /// Builds the model of scenario `s`; an error names the field that cannot be built.
    pub fn build(s: &Scenario) -> Result<Model> {
        let fabric = Fabric::try_build(s)?.with_link_rates(s)?.with_failures(s)?;
        let workload = Workload::build(s, &fabric)?;
        let transport = transport_params(s, &fabric)?;
        let is_switch = |n: u32| n >= fabric.num_hosts && n < fabric.num_nodes();
        if let Some(&n) = s
            .report
            .trace_hosts
            .iter()
            .find(|&&n| n >= fabric.num_hosts)
        {
            return Err(FieldError::new(
                "report.trace_hosts",
                format!(
                    "{n} is not a host (hosts are 0 to {})",
                    fabric.num_hosts - 1
                ),
            )
            .into());
        }
        if let Some(&n) = s.switch.loss_switches.iter().find(|&&n| !is_switch(n)) {
            return Err(FieldError::new(
                "switch.loss_switches",
                format!(
                    "{n} is not a switch (switches are nodes {} to {})",
                    fabric.num_hosts,
                    fabric.num_nodes() - 1
                ),
            )
            .into());
        }
        check_valiant_intermediates(s, &fabric)?;
        // Solved only when it paces (large fabrics may not afford the LP).
        let rho_max = match fabric.has_failures() && s.failures.pace_at_rho_max {
            true => Some(match s.failures.rho_split {
                RhoSplit::Optimal => crate::metrics::rho_max::rho_max(&fabric, &workload)?,
                RhoSplit::Even => crate::metrics::rho_max::rho_even(&fabric, &workload),
                RhoSplit::EvenPaths => crate::metrics::rho_max::rho_even_paths(&fabric, &workload),
            }),
            false => None,
        };
        // Paced hosts send at rho_max of the failure instance (the Ofan paper's set-up).
        let pace = match rho_max {
            Some(r) if s.failures.pace_at_rho_max && s.host.cc == CcKind::None => r.rho_max,
            _ => 1.0,
        };
        let load_ppm = ((s.host.load * pace * 1e6).round() as u64).max(1);
        let full_wire_ps = fabric.link(0, 0).serialization_ps(
            (s.packet.payload_bytes + s.packet.header_bytes + s.packet.interframe_bytes) as u64,
        );
        let rotor =
            crate::transport::rotor::RotorParams::build(s, &fabric, &workload, full_wire_ps)?;
        let qdisc = queue_discipline(s)?;
        check_shared_pool(s, &fabric, &qdisc)?;
        Ok(Model {
            rotor,
            rho_max,
            transport,
            seed: s.seed,
            lb: LbShared::new(
                &s.lb,
                &fabric,
                s.seed,
                s.switch.trim,
                s.switch.buffer_bytes.limit(),
            )
            .with_advert_wire_bytes(s.packet.ack_bytes as u64 + s.packet.interframe_bytes as u64),
            qdisc,
            loss_per_2_32: (s.switch.loss_fraction * (1u64 << 32) as f64).round() as u64,
            loss_switches: s.switch.loss_switches.clone(),
            sample_ps: ((s.report.timeseries_us * PS_PER_US as f64).round() as u64).max(1),
            trace_hosts: s.report.trace_hosts.clone(),
            fct_bins_bytes: s.report.fct_bins_bytes.iter().map(|&b| b as u64).collect(),
            flow_log: s.report.flow_log,
            network_rtt_ps: Model::network_rtt_ps(s, &fabric),
            line_rate_bps: fabric.link(0, 0).rate.bps,
            forwarding_ps: (s.switch.forwarding_latency_ns * PS_PER_NS as f64).round() as u64,
            payload_bytes: s.packet.payload_bytes,
            header_bytes: s.packet.header_bytes,
            ack_bytes: s.packet.ack_bytes,
            interframe_bytes: s.packet.interframe_bytes,
            load_ppm,
            fabric,
            workload,
        })
    }

    /// Unloaded round trip from host `a` to host `b`: a full data packet store-and-forward
    /// over every hop out, an ACK over every hop back, plus latencies and forwarding.
    fn rtt_ps(s: &Scenario, fabric: &Fabric, a: u32, b: u32) -> u64 {
        let data = (s.packet.payload_bytes + s.packet.header_bytes) as u64;
        let fwd_ps = (s.switch.forwarding_latency_ns * PS_PER_NS as f64).round() as u64;
        let trip = |a: u32, b: u32, bytes: u64| -> u64 {
            fabric
                .path(a, b)
                .iter()
                .map(|&(n, p)| {
                    let l = fabric.link(n, p);
                    let fwd = if fabric.is_host(fabric.peer(n, p, 0).0) {
                        0
                    } else {
                        fwd_ps
                    };
                    l.serialization_ps(bytes) + l.latency_ps + fwd
                })
                .sum()
        };
        trip(a, b, data) + trip(b, a, s.packet.ack_bytes as u64)
    }

    /// The base RTT of the fabric's longest path (host 0 to the last host of a tree;
    /// `Fabric::farthest_hosts`).
    pub fn network_rtt_ps(s: &Scenario, fabric: &Fabric) -> u64 {
        let (a, b) = fabric.farthest_hosts();
        Model::rtt_ps(s, fabric, a, b)
    }

    /// Bytes in flight that fill the fabric's longest path: host line rate × its base RTT.
    pub fn bdp_bytes(s: &Scenario, fabric: &Fabric) -> u64 {
        let rate = fabric.link(0, 0).rate.bps as u128;
        bytes_in(rate, Model::network_rtt_ps(s, fabric))
    }

    /// What the CCA of a flow from `src` to `dst` is built from. The flow's base RTT is
    /// computed like the network RTT, on its own path (every packet size is a full one).
    pub(crate) fn cc_env(&self, src: u32, dst: u32) -> CcEnv {
        let path = self.fabric.path(src, dst);
        let mut base_rtt_ps = 0;
        for &(n, p) in &path {
            let l = self.fabric.link(n, p);
            let fwd = if self.fabric.is_host(self.fabric.peer(n, p, 0).0) {
                0
            } else {
                self.forwarding_ps
            };
            let data = (self.payload_bytes + self.header_bytes) as u64;
            base_rtt_ps += l.serialization_ps(data) + l.serialization_ps(self.ack_bytes as u64);
            base_rtt_ps += 2 * (l.latency_ps + fwd);
        }
        let rate = self.line_rate_bps as u128;
        CcEnv {
            mtu_bytes: (self.payload_bytes + self.header_bytes) as u64,
            mss_bytes: self.payload_bytes as u64,
            line_rate_bps: self.line_rate_bps,
            base_rtt_ps,
            network_rtt_ps: self.network_rtt_ps,
            bdp_bytes: bytes_in(rate, base_rtt_ps),
            network_bdp_bytes: bytes_in(rate, self.network_rtt_ps),
            hops: path.len() as u32 - 1,
            trimming: self.qdisc.is_trimming(),
        }
    }

    /// Shortest paths between hosts `src` and `dst`: the product of the uplink counts of the
    /// tiers below their lowest common ancestors (1 under one edge switch, k/2 within a pod
    /// of a fat tree, (k/2)² across pods; the spine count between leaves).
    pub fn flow_paths(&self, src: u32, dst: u32) -> u32 {
        shortest_paths(&self.fabric, src, dst)
    }

    /// Packets of a flow of `bytes` payload bytes.
    pub fn packets_for(&self, bytes: u64) -> u64 {
        bytes.div_ceil(self.payload_bytes as u64)
    }

    /// Whether flow `i` of host `h` is bulk (Opera's RotorLB carries it).
    #[inline]
    pub fn is_bulk(&self, h: u32, i: u32) -> bool {
        self.rotor.as_ref().is_some_and(|r| {
            let f = self.workload.flow(h, i);
            r.is_bulk(f.bytes, h, f.dst, self.workload.bulk_tag(h, i))
        })
    }

    /// Buffer size of data packet `seq` of a flow of `bytes` payload bytes.
    #[inline]
    pub fn data_size(&self, bytes: u64, seq: u32) -> u32 {
        let p = self.payload_bytes as u64;
        (bytes - seq as u64 * p).min(p) as u32 + self.header_bytes
    }
}

/// Bytes sent at `rate_bps` in `ps` picoseconds.
fn bytes_in(rate_bps: u128, ps: u64) -> u64 {
    (rate_bps * ps as u128 / 8 / 1_000_000_000_000) as u64
}

/// The switches' queue discipline (validated scenario).
fn queue_discipline(s: &Scenario) -> std::result::Result<QueueDiscipline, FieldError> {
    let sw = &s.switch;
    let ecn = match sw.ecn {
        EcnMode::Off => EcnRule::Off,
        EcnMode::Step => EcnRule::Step {
            threshold_bytes: sw.ecn_threshold_bytes,
        },
        EcnMode::Ramp => {
            let (min_bytes, max_bytes) = s.ecn_ramp_bytes()?;
            EcnRule::Ramp {
                min_bytes,
                max_bytes,
            }
        }
    };
    let overflow = if sw.trim {
        Overflow::Trim {
            trim_bytes: sw.trim_bytes,
            evict_queued: sw.trim_evict_queued,
            return_to_sender: sw.return_to_sender,
        }
    } else {
        Overflow::Drop
    };
    Ok(QueueDiscipline {
        buffer_bytes: sw.buffer_bytes.limit(),
        ecn,
        overflow,
        priority_control: sw.priority_control.unwrap_or(sw.trim),
        ctrl_buffer_bytes: sw.ctrl_buffer_bytes.limit(),
        ctrl_share: sw.ctrl_share.as_ref().map(|c| CtrlShare {
            ctrl_bytes: c.ctrl_bytes,
            data_bytes: c.data_bytes,
        }),
        shared: (sw.buffer == BufferMode::Shared).then(|| SharedBuffer {
            pool_bytes: sw.shared_buffer_bytes,
            alpha: sw
                .shared_buffer_alpha
                .unwrap_or(DEFAULT_SHARED_BUFFER_ALPHA),
        }),
    })
}

/// With a shared buffer, an empty switch must admit a data packet: α × its pool at least
/// one data packet (the smallest pool is that of the switch with the fewest ports).
fn check_shared_pool(
    s: &Scenario,
    fabric: &Fabric,
    qd: &QueueDiscipline,
) -> std::result::Result<(), FieldError> {
    let Some(sh) = qd.shared else {
        return Ok(());
    };
    let data = (s.packet.payload_bytes + s.packet.header_bytes) as u64;
    let Some((n, pool)) = (fabric.num_hosts..fabric.num_nodes())
        .map(|n| (n, qd.pool_bytes(fabric.num_ports(n)).expect("shared")))
        .min_by_key(|&(_, b)| b)
    else {
        return Ok(());
    };
    if sh.alpha * (pool as f64) < data as f64 {
        return Err(FieldError::new(
            "switch.shared_buffer_alpha",
            format!(
                "α × the pool of switch {n} ({} × {pool} bytes) is below one data packet ({data} bytes): no packet could enter its empty buffer",
                sh.alpha
            ),
        ));
    }
    Ok(())
}

/// The scenario's transport in simulator units: `constant`'s window must hold a data
/// packet.
fn transport_params(
    s: &Scenario,
    fabric: &Fabric,
) -> std::result::Result<TransportParams, FieldError> {
    let h = &s.host;
    let cc = match h.cc {
        CcKind::None => return Ok(TransportParams::Paced),
        CcKind::Constant => {
            let data = (s.packet.payload_bytes + s.packet.header_bytes) as f64;
            let window = h.window_bdp * Model::bdp_bytes(s, fabric) as f64;
            if window < data {
                return Err(FieldError::new(
                    "host.window_bdp",
                    format!(
                        "a window of {window:.0} bytes is below one data packet ({data} bytes)"
                    ),
                ));
            }
            CcChoice::Constant {
                cwnd_bytes: window.min(u64::MAX as f64 / 2.0) as u64,
            }
        }
        CcKind::Dctcp => CcChoice::Dctcp(h.dctcp.clone()),
        CcKind::Nscc => CcChoice::Nscc(h.nscc.clone()),
        CcKind::Swift => CcChoice::Swift(h.swift.clone()),
        CcKind::Mswift => CcChoice::Mswift(h.swift.clone(), h.mswift.clone()),
        CcKind::Ndp => CcChoice::Ndp(crate::transport::ndp::NdpParams {
            initial_window_pkts: h.ndp.initial_window_pkts,
            pull_rate: h.ndp.pull_rate,
            per_flow_pacer: h.ndp.pacer == crate::scenario::cc::NdpPacer::Flow,
            payload_gap: h.ndp.pull_gap == crate::scenario::cc::NdpPullGap::Payload,
        }),
    };
    let rate_bps = fabric.link(0, 0).rate.bps as f64;
    let rto_min_us = match (h.rto_min_us, s.switch.buffer_bytes) {
        (Some(us), _) => us,
        // opera-sim's `NdpSrc::setMinRTO(1000)`.
        (None, _) if h.cc == CcKind::Ndp => 1000.0,
        (None, BufferBytes::Bytes(b)) => 15.0 + 6.0 * (b as f64 * 8.0 / rate_bps) * 1e6,
        (None, BufferBytes::Unlimited) => 100.0,
    };
    let paths = shortest_paths(fabric, 0, fabric.num_hosts - 1);
    Ok(TransportParams::Reliable {
        params: ReliableParams {
            rto_min_ps: (rto_min_us * PS_PER_US as f64).round() as u64,
            // With trimming every loss is reported by a NACK; NSCC runs on UEC's transport,
            // which in UEC htsim (SLEEK off) finds silent losses by its timer only. The TCP
            // family (DCTCP, Swift, a fixed window) uses htsim TCP's spraying threshold:
            // 3 + the farthest hosts' paths, or each flow's own under
            // `host.reorder_paths = "flow"` (`ReliableParams::threshold_pkts`).
            reorder_pkts: h.reorder_threshold_pkts.unwrap_or(
                if s.switch.trim || h.cc == CcKind::Nscc {
                    u32::MAX
                } else {
                    3 + paths
                },
            ),
            // An explicit threshold is the same for every flow.
            reorder_paths: if h.reorder_threshold_pkts.is_some() {
                ReorderPaths::Network
            } else {
                h.reorder_paths
            },
            loss_detection: h.loss_detection,
        },
        cc,
        ack_coalesce_bytes: h.ack_coalesce_bytes,
    })
}

/// Shortest paths between hosts `a` and `b` (`Model::flow_paths`).
fn shortest_paths(fabric: &Fabric, a: u32, b: u32) -> u32 {
    fabric.path_digit_divisor(fabric.lca_tier(a, b))
}

/// `lb.valiant.intermediates`: top-tier switches only, and under link failures enough of
/// them that every pair of edge switches has a valid one.
fn check_valiant_intermediates(s: &Scenario, fabric: &Fabric) -> Result<()> {
    let nodes = &s.lb.valiant.intermediates;
    let codes = crate::lb::valiant::codes_of(fabric, nodes).map_err(|n| {
        let tops = crate::lb::valiant::top_of_codes(fabric);
        let (lo, hi) = (tops.iter().min(), tops.iter().max());
        FieldError::new(
            "lb.valiant.intermediates",
            format!(
                "{n} is not a top-tier switch (they are nodes {} to {})",
                lo.copied().unwrap_or(0),
                hi.copied().unwrap_or(0)
            ),
        )
    })?;
    if let Some((a, b)) = crate::lb::valiant::uncovered_pair(fabric, &codes) {
        return Err(FieldError::new(
            "lb.valiant.intermediates",
            format!(
                "with failures.links, no listed switch is reachable from edge switch {a} through live uplinks and still reaches edge switch {b}"
            ),
        )
        .into());
    }
    Ok(())
}
