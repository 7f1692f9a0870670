//! `weft plot bars`: a per-stage metric of one or more `summary.json` files as grouped bars,
//! one bar per file in each stage's group. The metric is `TABLE` or `TABLE.FIELD` of
//! `results`: `queues.max_bytes` (default), `queues.avg_pkts`, `utilization`,
//! `buffer_occupancy.p99_bytes`, `drops`, ... (the stage tables of summary.json).

use super::figure::{color, padded, Figure};
use anyhow::{anyhow, bail, Context, Result};
use plotters::coord::Shift;
use plotters::prelude::*;
use serde_json::Value;
use std::path::PathBuf;

/// Bars: stage names, and per file its label and one value per stage.
#[derive(Debug)]
pub struct Bars {
    /// The stages, one group of bars each.
    pub stages: Vec<String>,
    /// Per file: its label and one value per stage.
    pub groups: Vec<(String, Vec<f64>)>,
}

/// Reads `metric` per stage from each run's `files` (labelled `labels`, or by their paths).
pub fn read(files: &[PathBuf], labels: &[String], metric: &str) -> Result<Bars> {
    if !labels.is_empty() && labels.len() != files.len() {
        bail!(
            "--label: {} labels for {} files (give one per file, or none)",
            labels.len(),
            files.len()
        );
    }
    let (table, field) = match metric.split_once('.') {
        Some((t, f)) => (t, Some(f)),
        None => (metric, None),
    };
    let mut stages: Vec<String> = Vec::new();
    let mut groups = Vec::new();
    for (i, f) in files.iter().enumerate() {
        let text =
            std::fs::read_to_string(f).with_context(|| format!("{}: cannot read", f.display()))?;
        let v: Value =
            serde_json::from_str(&text).with_context(|| format!("{}: not JSON", f.display()))?;
        let Some(Value::Object(per_stage)) = v["results"].get(table) else {
            bail!(
                "{}: results.{table}: missing or not a table of stages",
                f.display()
            );
        };
        if stages.is_empty() {
            // The "all" entry of buffer_occupancy is not a stage.
            stages = per_stage.keys().filter(|k| *k != "all").cloned().collect();
        }
        let values = stages
            .iter()
            .map(|s| {
                let cell = match field {
                    Some(field) => per_stage.get(s).and_then(|x| x.get(field)),
                    None => per_stage.get(s),
                };
                cell.and_then(Value::as_f64).ok_or_else(|| {
                    let name = field.map_or(format!("results.{table}.{s}"), |fl| {
                        format!("results.{table}.{s}.{fl}")
                    });
                    anyhow!("{}: {name}: missing or not a number", f.display())
                })
            })
            .collect::<Result<Vec<f64>>>()?;
        let label = labels
            .get(i)
            .cloned()
            .unwrap_or_else(|| f.display().to_string());
        groups.push((label, values));
    }
    Ok(Bars { stages, groups })
}

fn plot_err<E: std::error::Error + Send + Sync>(e: DrawingAreaErrorKind<E>) -> anyhow::Error {
    anyhow!("drawing failed: {e}")
}

/// Stage i's group spans x in [i, i + 1): bars side by side in its middle 80%.
pub fn draw<DB: DrawingBackend>(root: &DrawingArea<DB, Shift>, fig: &Figure, b: &Bars) -> Result<()>
where
    DB::ErrorType: 'static,
{
    let n = b.stages.len();
    if n == 0 || b.groups.is_empty() {
        bail!("nothing to plot: no stages");
    }
    let top = b
        .groups
        .iter()
        .flat_map(|(_, v)| v.iter().copied())
        .fold(0.0f64, f64::max);
    let (_, y1) = padded(0.0, top);
    let mut chart = ChartBuilder::on(root);
    chart.margin(15).x_label_area_size(50).y_label_area_size(80);
    if let Some(t) = &fig.title {
        chart.caption(t, ("sans-serif", 22));
    }
    let mut chart = chart
        .build_cartesian_2d(0.0..n as f64, 0.0..y1)
        .map_err(plot_err)?;
    let stage_at = |x: &f64| -> String {
        // Labels sit at the middle of each group (x = i + 0.5); other ticks stay blank.
        let i = x.floor();
        if (x - i - 0.5).abs() < 1e-6 && (i as usize) < n {
            b.stages[i as usize].clone()
        } else {
            String::new()
        }
    };
    chart
        .configure_mesh()
        .disable_x_mesh()
        .x_labels(2 * n + 1)
        .x_label_formatter(&stage_at)
        .y_label_formatter(&super::figure::tick)
        .x_desc(fig.x_label.as_str())
        .y_desc(fig.y_label.as_str())
        .label_style(("sans-serif", 14))
        .axis_desc_style(("sans-serif", 16))
        .light_line_style(RGBColor(235, 235, 235))
        .draw()
        .map_err(plot_err)?;
    let k = b.groups.len() as f64;
    let width = 0.8 / k;
    for (g, (label, values)) in b.groups.iter().enumerate() {
        let c = color(g);
        let rects = values.iter().enumerate().map(|(i, &v)| {
            let x0 = i as f64 + 0.1 + g as f64 * width;
            Rectangle::new([(x0, 0.0), (x0 + width, v)], c.filled())
        });
        chart
            .draw_series(rects)
            .map_err(plot_err)?
            .label(label.as_str())
            .legend(move |(x, y)| Rectangle::new([(x, y - 5), (x + 14, y + 5)], c.filled()));
    }
    chart
        .configure_series_labels()
        .label_font(("sans-serif", 14))
        .background_style(WHITE.mix(0.85))
        .border_style(BLACK)
        .position(fig.legend_at.clone())
        .draw()
        .map_err(plot_err)?;
    Ok(())
}
