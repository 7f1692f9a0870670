//! weft: a packet-level, parallel discrete-event simulator of datacenter fabrics carrying
//! AI-training traffic. docs/ARCHITECTURE.md says what lives where and which invariants hold.
//!
//! Layers, lowest first (a module uses only its own layer and those before it in this list;
//! no top-level modules form a cycle; `tests/it/layers.rs` checks both):
//! `time`, `rng`, `packet`, `scenario` → `topology` → `workload` → `contention`, `metrics` → `lb` →
//! `transport` → `model` → `net` → `engine` → `sim`, `checkpoint` → `report`, `validate_cmd`,
//! `opera_faults_cmd` → `sweep` → `reproduce`.

// An item is `pub` only where it is part of a module's interface to the rest of the crate or to
// users; helpers inside a private module are `pub(crate)` or narrower (the lint says which).
#![warn(unreachable_pub)]
#![warn(missing_docs)]
// A public item must not expose a type its users cannot name: re-export the type or narrow
// the item.
#![warn(unnameable_types)]

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
