//! weft's integration tests, in one binary (one link of the crate instead of one per file).
//! Each module is one area; `common` holds the helpers they share. Run one area with
//! `cargo test --release --test it -- MODULE::` (e.g. `-- determinism::`); add one by writing
//! `tests/it/NAME.rs` and declaring `mod NAME;` below.

mod common;

mod ai_workloads;
mod asymmetric;
mod background;
mod bad_input;
mod bound;
mod cc_behaviour;
mod checkpoint;
mod cli;
mod collectives;
mod combined;
mod continuous;
mod determinism;
mod expander;
mod failures;
mod known_answers;
mod layers;
mod loader_fuzz;
mod loss_recovery;
mod mixed;
mod ndp;
mod opera;
mod paper_classes;
mod partitions;
mod pgft;
mod poisson;
mod poisson_bad_input;
mod policies;
mod reference;
mod remote_lb;
mod reproduce;
mod reps;
mod ring_memory;
mod rotorlb;
mod scaling_model;
mod scenarios;
mod shared_buffer;
mod smoke_digests;
mod state;
mod sweep;
mod transport;
mod utilization;
mod weights;

// The MPI and Slurm tests need the `mpi` build of `weft`; CI runs them with
// `cargo test --release --features mpi --test it -- mpi:: slurm::`.
#[cfg(feature = "mpi")]
mod mpi;
#[cfg(feature = "mpi")]
mod slurm;
