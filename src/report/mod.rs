//! Output: `summary.json` (stable keys; `"results"` is determined by the model alone, `"run"`
//! says how it ran), the human-readable summary, and HdrHistogram interval logs.

mod hlog;
mod summary;

pub use hlog::{write_hlog, write_run_hlog};
pub use summary::Summary;
