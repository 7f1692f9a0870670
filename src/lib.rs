//! weft: a packet-level, parallel discrete-event simulator of datacenter fabrics carrying
//! AI-training traffic. See README.md ("Architecture") for what lives where.

pub mod engine;
pub mod lb;
pub mod metrics;
pub mod model;
pub mod net;
pub mod report;
pub mod rng;
pub mod scenario;
pub mod sim;
pub mod time;
pub mod topology;
pub mod validate_cmd;
pub mod workload;
