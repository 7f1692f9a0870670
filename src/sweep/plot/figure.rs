//! What every `weft plot` figure shares: its labels and size, the series palette, the
//! bundled font, the output format from the file extension, and the line renderer (line
//! plots with error bars, CDFs, time series).

use anyhow::{anyhow, bail, Result};
use plotters::coord::ranged1d::{AsRangedCoord, ValueFormatter};
use plotters::coord::Shift;
use plotters::prelude::*;
use std::path::Path;

/// DejaVu Sans (assets/fonts, Bitstream Vera licence), compiled in so that text renders the
/// same on a machine without fontconfig or any font installed.
static FONT: &[u8] = include_bytes!("../../../assets/fonts/DejaVuSans.ttf");

/// Series colours, in order (Tableau 10: distinct, readable in print, with navy in place of
/// its grey, which would read as the grid and the anti-aliased text); series past the tenth
/// reuse them.
pub const PALETTE: [RGBColor; 10] = [
    RGBColor(31, 119, 180),
    RGBColor(255, 127, 14),
    RGBColor(44, 160, 44),
    RGBColor(214, 39, 40),
    RGBColor(148, 103, 189),
    RGBColor(140, 86, 75),
    RGBColor(227, 119, 194),
    RGBColor(0, 0, 128),
    RGBColor(188, 189, 34),
    RGBColor(23, 190, 207),
];

/// The colour of the `i`-th line (the palette repeats).
pub fn color(i: usize) -> RGBColor {
    PALETTE[i % PALETTE.len()]
}

/// Labels and size of a figure.
#[derive(Clone)]
pub struct Figure {
    /// Title above the plot, if any.
    pub title: Option<String>,
    /// Label of the x axis.
    pub x_label: String,
    /// Label of the y axis.
    pub y_label: String,
    /// Width, in pixels.
    pub width_px: u32,
    /// Height, in pixels.
    pub height_px: u32,
    /// Mark every point (line plots of a few points); CDFs and time series have many.
    pub markers: bool,
    /// Corner of the legend (each kind picks the one its curves leave free most often).
    pub legend_at: SeriesLabelPosition,
    /// Logarithmic x axis (every x must then be positive; likewise y for `log_y`).
    pub log_x: bool,
    /// Logarithmic y axis.
    pub log_y: bool,
}

/// A line: points in x order and, optionally, a standard error per point (error bars of ±1
/// standard error; none where unknown).
#[derive(Clone, Debug)]
pub struct Series {
    /// Its name in the legend.
    pub label: String,
    /// `(x, y)` points, in x order.
    pub points: Vec<(f64, f64)>,
    /// A standard error per point, where known.
    pub errors: Option<Vec<Option<f64>>>,
}

/// The image format a figure is written in.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Format {
    /// SVG (vector).
    Svg,
    /// PNG (raster).
    Png,
}

/// The output format from `path`'s extension.
pub fn format_of(path: &Path) -> Result<Format> {
    match path
        .extension()
        .and_then(|e| e.to_str())
        .map(str::to_ascii_lowercase)
        .as_deref()
    {
        Some("svg") => Ok(Format::Svg),
        Some("png") => Ok(Format::Png),
        _ => bail!(
            "-o {}: the file name must end in .svg or .png",
            path.display()
        ),
    }
}

fn register_font() {
    // Registering twice replaces the same font: harmless.
    plotters::style::register_font("sans-serif", FontStyle::Normal, FONT)
        .map_err(|_| ())
        .expect("the bundled font parses");
}

/// Draws with `draw` on an SVG or PNG backend chosen by `path`'s extension, then writes it.
/// The figure is drawn into a hidden file next to `path` and renamed onto it once complete,
/// so a figure that fails (e.g. a log axis over a zero) leaves no file behind.
pub fn render(
    path: &Path,
    fig: &Figure,
    draw: impl Fn(&DrawingArea<SVGBackend, Shift>) -> Result<()>,
    draw_png: impl Fn(&DrawingArea<BitMapBackend, Shift>) -> Result<()>,
) -> Result<()> {
    let format = format_of(path)?;
    register_font();
    let size = (fig.width_px, fig.height_px);
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    // Same extension: the bitmap backend picks its encoder by it.
    let tmp = path.with_file_name(format!(
        ".{name}.partial.{}",
        if format == Format::Svg { "svg" } else { "png" }
    ));
    let err = |e: String| anyhow!("-o {}: {e}", path.display());
    let drawn = match format {
        Format::Svg => {
            let root = SVGBackend::new(&tmp, size).into_drawing_area();
            root.fill(&WHITE)
                .map_err(|e| err(e.to_string()))
                .and_then(|()| draw(&root))
                .and_then(|()| root.present().map_err(|e| err(e.to_string())))
        }
        Format::Png => {
            let root = BitMapBackend::new(&tmp, size).into_drawing_area();
            root.fill(&WHITE)
                .map_err(|e| err(e.to_string()))
                .and_then(|()| draw_png(&root))
                .and_then(|()| root.present().map_err(|e| err(e.to_string())))
        }
    };
    // The backend is dropped by now (a dropped SVG backend writes what it has).
    match drawn {
        Ok(()) => std::fs::rename(&tmp, path).map_err(|e| err(format!("cannot write: {e}"))),
        Err(e) => {
            let _ = std::fs::remove_file(&tmp);
            Err(e)
        }
    }
}

/// `[lo, hi]` padded by 5% on each side (one unit when all values are equal).
pub fn padded(lo: f64, hi: f64) -> (f64, f64) {
    assert!(lo <= hi, "range {lo}..{hi}");
    let pad = if hi > lo {
        (hi - lo) * 0.05
    } else {
        lo.abs().max(1.0) * 0.5
    };
    (lo - pad, hi + pad)
}

/// A tick label: integers without decimals, others to 6 decimals without trailing zeros,
/// very small or large values in scientific notation.
pub fn tick(v: &f64) -> String {
    let v = *v;
    if v != 0.0 && (v.abs() < 1e-3 || v.abs() >= 1e15) {
        format!("{v:e}")
    } else if v == v.round() {
        format!("{v:.0}")
    } else {
        let s = format!("{v:.6}");
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    }
}

/// Labels of a logarithmic axis: only at 1, 2 and 5 times a power of ten (plotters puts a
/// tick at every integer multiple, whose labels would run into each other).
pub fn log_tick(v: &f64) -> String {
    let mantissa = *v / 10f64.powf(v.log10().floor());
    let shown = [1.0, 2.0, 5.0, 10.0]
        .iter()
        .any(|m| (mantissa - m).abs() < 1e-6 * m);
    match shown {
        true => tick(v),
        false => String::new(),
    }
}

fn plot_err<E: std::error::Error + Send + Sync>(e: DrawingAreaErrorKind<E>) -> anyhow::Error {
    anyhow!("drawing failed: {e}")
}

/// The axis range of values `lo..=hi`: padded by 5% (linear) or by a factor 1.1 (log, where
/// every value must be positive; `axis` names the flag for the error).
fn axis_range(lo: f64, hi: f64, log: bool, axis: &str) -> Result<(f64, f64)> {
    if !log {
        return Ok(padded(lo, hi));
    }
    if lo <= 0.0 {
        bail!("{axis}: a logarithmic axis needs positive values (got {lo})");
    }
    let hi = if hi > lo { hi } else { lo * 10.0 };
    Ok((lo / 1.1, hi * 1.1))
}

/// A line figure: every series a line (with markers if `fig.markers`), error bars where
/// known, a legend.
pub fn draw_lines<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    fig: &Figure,
    series: &[Series],
) -> Result<()>
where
    DB::ErrorType: 'static,
{
    let all = series.iter().flat_map(|s| {
        s.points.iter().enumerate().flat_map(move |(i, &(x, y))| {
            let e = s.errors.as_ref().and_then(|e| e[i]).unwrap_or(0.0);
            // On a log axis an error bar reaching 0 or below is cut at the axis.
            let low = if fig.log_y && y - e <= 0.0 { y } else { y - e };
            [(x, low), (x, y + e)]
        })
    });
    let (mut x0, mut x1, mut y0, mut y1) = (f64::MAX, f64::MIN, f64::MAX, f64::MIN);
    for (x, y) in all {
        (x0, x1, y0, y1) = (x0.min(x), x1.max(x), y0.min(y), y1.max(y));
    }
    if x0 > x1 {
        bail!("nothing to plot: every series is empty");
    }
    let (x0, x1) = axis_range(x0, x1, fig.log_x, "--logx")?;
    let (y0, y1) = axis_range(y0, y1, fig.log_y, "--logy")?;
    match (fig.log_x, fig.log_y) {
        (false, false) => draw_lines_on(root, fig, series, x0..x1, y0..y1, y0),
        (true, false) => draw_lines_on(root, fig, series, (x0..x1).log_scale(), y0..y1, y0),
        (false, true) => draw_lines_on(root, fig, series, x0..x1, (y0..y1).log_scale(), y0),
        (true, true) => draw_lines_on(
            root,
            fig,
            series,
            (x0..x1).log_scale(),
            (y0..y1).log_scale(),
            y0,
        ),
    }
}

/// `y_floor`: the bottom of the y axis, where error bars are cut.
fn draw_lines_on<DB, X, Y>(
    root: &DrawingArea<DB, Shift>,
    fig: &Figure,
    series: &[Series],
    x: X,
    y: Y,
    y_floor: f64,
) -> Result<()>
where
    DB: DrawingBackend,
    DB::ErrorType: 'static,
    X: AsRangedCoord<Value = f64>,
    Y: AsRangedCoord<Value = f64>,
    X::CoordDescType: ValueFormatter<f64>,
    Y::CoordDescType: ValueFormatter<f64>,
{
    let mut chart = ChartBuilder::on(root);
    chart.margin(15).x_label_area_size(50).y_label_area_size(80);
    if let Some(t) = &fig.title {
        chart.caption(t, ("sans-serif", 22));
    }
    let mut chart = chart.build_cartesian_2d(x, y).map_err(plot_err)?;
    let label = |log: bool| -> fn(&f64) -> String {
        match log {
            true => log_tick,
            false => tick,
        }
    };
    let (x_tick, y_tick) = (label(fig.log_x), label(fig.log_y));
    chart
        .configure_mesh()
        .x_label_formatter(&x_tick)
        .y_label_formatter(&y_tick)
        .x_desc(fig.x_label.as_str())
        .y_desc(fig.y_label.as_str())
        .label_style(("sans-serif", 14))
        .axis_desc_style(("sans-serif", 16))
        .light_line_style(RGBColor(235, 235, 235))
        .draw()
        .map_err(plot_err)?;
    for (i, s) in series.iter().enumerate() {
        let c = color(i);
        chart
            .draw_series(LineSeries::new(s.points.iter().copied(), c.stroke_width(2)))
            .map_err(plot_err)?
            .label(s.label.as_str())
            .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], c.stroke_width(2)));
        if fig.markers {
            chart
                .draw_series(s.points.iter().map(|&p| Circle::new(p, 3, c.filled())))
                .map_err(plot_err)?;
        }
        if let Some(errors) = &s.errors {
            let bars = s.points.iter().zip(errors).filter_map(|(&(x, y), e)| {
                e.map(|e| {
                    ErrorBar::new_vertical(x, (y - e).max(y_floor), y, y + e, c.stroke_width(1), 8)
                })
            });
            chart.draw_series(bars).map_err(plot_err)?;
        }
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn log_axes_label_only_1_2_and_5_times_powers_of_ten() {
        let labels: Vec<String> = [1e5, 2e5, 3e5, 5e5, 7e5, 1e6, 0.02, 0.03]
            .iter()
            .map(log_tick)
            .collect();
        assert_eq!(
            labels,
            ["100000", "200000", "", "500000", "", "1000000", "0.02", ""]
        );
    }
}
