//! weft: a packet-level, parallel discrete-event simulator of datacenter fabrics carrying
//! AI-training traffic. docs/ARCHITECTURE.md says what lives where and which invariants hold.
//!
//! Layers, lowest first (a module uses only modules above it in this list):
//! `time`, `rng`, `packet`, `scenario` → `topology` → `workload` → `contention`, `metrics` → `lb` →
//! `transport` → `model` → `net` → `engine` → `sim` → `report`, `validate_cmd` → `sweep` → `reproduce`.

pub mod checkpoint;
pub mod contention;
pub mod engine;
pub mod lb;
pub mod metrics;
pub mod model;
pub mod net;
pub mod opera_faults_cmd;
pub mod packet;
pub mod report;
pub mod reproduce;
pub mod rng;
pub mod scenario;
pub mod sim;
pub mod sweep;
pub mod time;
pub mod topology;
pub mod transport;
pub mod validate_cmd;
pub mod workload;
