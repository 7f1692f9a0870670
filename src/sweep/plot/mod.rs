//! `weft plot`: one figure per command, SVG or PNG by the output's extension, with plotters
//! and a bundled font. Kinds: `line` (summary.csv, error bars), `bars` (per-stage metrics of
//! summary.json files), `cdf` (.hlog files), `timeseries` (timeseries.csv).

pub mod bars;
pub mod cdf;
pub mod columns;
pub mod figure;
pub mod line;
pub mod timeseries;

use anyhow::Result;
use figure::{render, Figure, Series};
use std::path::Path;

/// Writes a line figure (line plots, CDFs, time series) to `out`.
pub fn write_lines(out: &Path, fig: &Figure, series: &[Series]) -> Result<()> {
    render(
        out,
        fig,
        |root| figure::draw_lines(root, fig, series),
        |root| figure::draw_lines(root, fig, series),
    )
}

/// Writes a bar figure to `out`.
pub fn write_bars(out: &Path, fig: &Figure, b: &bars::Bars) -> Result<()> {
    render(
        out,
        fig,
        |root| bars::draw(root, fig, b),
        |root| bars::draw(root, fig, b),
    )
}
