//! Many runs of one scenario and what to do with their results: `weft sweep` (expand a grid
//! of overrides into points and run them, locally or as a Slurm job array), `weft collect`
//! (gather the points into CSV tables) and `weft plot` (figures from those tables, from
//! `.hlog` files and from `timeseries.csv`). See the user guide, docs/guide/src/sweeps.md.
//!
//! These sit above the simulator: points run as child processes of the `weft` binary, so a
//! sweep uses nothing of the library but the scenario loader (to refuse a bad point before
//! any runs).

pub mod collect;
pub(crate) mod layout;
pub mod plot;
pub mod runner;
pub mod slurm;
pub mod spec;
