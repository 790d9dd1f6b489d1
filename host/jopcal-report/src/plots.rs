//! Plots, each written as SVG and PNG: grouped bar charts with titles, units
//! and legends. Text is laid out with DejaVu Sans embedded in the binary
//! (`dejavu` crate, via plotters' ab_glyph backend), and the PNG is the SVG
//! rasterised by resvg with the same font, so no system font is needed and
//! both files show the same picture.

use crate::error::{PlotError, RasterError};
use plotters::prelude::*;
use plotters::style::FontStyle;
use std::path::{Path, PathBuf};
use std::sync::Once;

const FONT: &str = "sans-serif";

fn ensure_font() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        // Registration fails only for a malformed font; the embedded one is fine.
        let _ = plotters::style::register_font(FONT, FontStyle::Normal, dejavu::sans::regular());
    });
}

/// One series of a grouped bar chart.
pub struct Series {
    pub name: String,
    pub values: Vec<f64>,
    /// A label above each bar (e.g. the error), if any.
    pub labels: Option<Vec<String>>,
    /// Its colour: an index into the palette, so that one estimator has one
    /// colour in every plot (see [`color_of_variant`]).
    pub color: usize,
}

const COLORS: [RGBColor; 8] = [
    RGBColor(60, 60, 60),
    RGBColor(31, 119, 180),
    RGBColor(255, 127, 14),
    RGBColor(44, 160, 44),
    RGBColor(214, 39, 40),
    RGBColor(148, 103, 189),
    RGBColor(140, 86, 75),
    RGBColor(23, 190, 207),
];

/// The measurement's colour.
pub const MEASURED_COLOR: usize = 0;

/// The colour of estimator variant `v` of an accuracy table (the measurement has its own).
pub fn color_of_variant(v: usize) -> usize {
    1 + v % (COLORS.len() - 1)
}

/// Width of the legend column to the right of the chart, in pixels: room
/// for the swatch and the longest series name.
fn legend_width(series: &[Series]) -> u32 {
    let longest = series.iter().map(|s| s.name.chars().count()).max().unwrap_or(0) as u32;
    (40 + longest * 8).max(160)
}

/// Decimals that tell the axis's ticks apart over `span`.
fn axis_decimals(span: f64) -> usize {
    if span <= 0.0 || !span.is_finite() {
        return 1;
    }
    (2.0 - span.log10().floor()).clamp(0.0, 5.0) as usize
}

/// Categories beyond this many get their names written upright (rotated), so they never overprint.
const FLAT_LABELS: usize = 16;

fn draw<DB: DrawingBackend>(
    root: DrawingArea<DB, plotters::coord::Shift>,
    title: &str,
    y_desc: &str,
    categories: &[String],
    series: &[Series],
) -> Result<(), DrawingAreaErrorKind<DB::ErrorType>>
where
    DB::ErrorType: 'static,
{
    root.fill(&WHITE)?;
    let (w, _) = root.dim_in_pixel();
    let (plot_area, legend_area) = root.split_horizontally(w.saturating_sub(legend_width(series)));
    let n = categories.len().max(1);
    let all = series.iter().flat_map(|s| s.values.iter().copied());
    let (lo, hi) = all.fold((0f64, 0f64), |(lo, hi), v| (lo.min(v), hi.max(v)));
    // Room above (and below) the bars for their value labels only: the
    // legend has a column of its own.
    let span = (hi - lo).max(1e-9);
    let labelled = series.iter().any(|s| s.labels.is_some());
    let pad = if labelled { 0.14 } else { 0.05 };
    let (ylo, yhi) = (
        if lo < 0.0 { lo - span * pad } else { 0.0 },
        if hi > 0.0 || lo >= 0.0 { hi + span * pad } else { 0.0 },
    );
    let decimals = axis_decimals(yhi - ylo);
    let upright = categories.len() > FLAT_LABELS;
    let longest = categories.iter().map(|c| c.chars().count()).max().unwrap_or(0) as u32;
    let mut chart = ChartBuilder::on(&plot_area)
        .caption(title, (FONT, 22))
        .margin(12)
        .x_label_area_size(if upright { 16 + 8 * longest } else { 50 })
        .y_label_area_size(80)
        .build_cartesian_2d(-0.5f64..(n as f64 - 0.5), ylo..yhi)?;
    let names = categories.to_vec();
    let x_style = if upright {
        // Centred on the tick by plotters (its mesh ignores the anchor); see
        // `anchor_upright_labels`, which starts each just under the axis.
        TextStyle::from((FONT, 13).into_font().transform(FontTransform::Rotate90))
    } else {
        TextStyle::from((FONT, 13).into_font())
    };
    chart
        .configure_mesh()
        .disable_x_mesh()
        .x_labels(n)
        .x_label_formatter(&move |x| {
            let i = x.round();
            if (x - i).abs() < 1e-6 && i >= 0.0 {
                names.get(i as usize).cloned().unwrap_or_default()
            } else {
                String::new()
            }
        })
        .x_label_style(x_style)
        .y_label_style((FONT, 13))
        .y_label_formatter(&|y| trim_zero(&format!("{y:.decimals$}")))
        .y_desc(y_desc)
        .axis_desc_style((FONT, 15))
        .draw()?;
    let k = series.len().max(1) as f64;
    let width = 0.8 / k;
    for (si, s) in series.iter().enumerate() {
        let color = COLORS[s.color % COLORS.len()];
        let x0 = |i: usize| i as f64 - 0.4 + si as f64 * width;
        chart.draw_series(
            s.values
                .iter()
                .enumerate()
                .map(|(i, v)| Rectangle::new([(x0(i), 0.0), (x0(i) + width * 0.92, *v)], color.filled())),
        )?;
        if let Some(labels) = &s.labels {
            chart.draw_series(s.values.iter().zip(labels).enumerate().map(|(i, (v, l))| {
                let y = if *v >= 0.0 { *v } else { 0.0 };
                Text::new(
                    l.clone(),
                    (x0(i), y + (yhi - ylo) * 0.01),
                    (FONT, 10).into_font().transform(FontTransform::Rotate270),
                )
            }))?;
        }
    }
    // The legend: one swatch and name per series, in its own column.
    for (si, s) in series.iter().enumerate() {
        let y = 50 + 24 * si as i32;
        let color = COLORS[s.color % COLORS.len()];
        legend_area.draw(&Rectangle::new([(4, y - 6), (18, y + 6)], color.filled()))?;
        legend_area.draw(&Text::new(s.name.clone(), (24, y - 7), (FONT, 13).into_font()))?;
    }
    root.present()?;
    Ok(())
}

/// A number as printed (`-0.00`, `+0.0%`, `12.5`), with the sign of a
/// value that rounds to zero dropped: `-0.00%` reads as an error that is not there.
pub fn trim_zero(s: &str) -> String {
    match s.strip_prefix(['-', '+']) {
        Some(rest) if rest.chars().all(|c| c == '0' || c == '.' || c == '%') => rest.to_string(),
        _ => s.to_string(),
    }
}

/// `x` with its sign and `decimals` decimals, zero without a sign.
pub fn signed(x: f64, decimals: usize) -> String {
    trim_zero(&format!("{x:+.decimals$}"))
}

/// Writes `<stem>.svg` and `<stem>.png`; returns both paths.
pub fn bar_chart(
    stem: &Path,
    title: &str,
    y_desc: &str,
    categories: &[String],
    series: &[Series],
) -> Result<Vec<PathBuf>, PlotError> {
    ensure_font();
    let upright = categories.len() > FLAT_LABELS;
    let per_category = if upright { 30 } else { 70 };
    let size = (
        (120 + per_category * categories.len() as u32).clamp(640, 2400) + legend_width(series),
        if upright { 600u32 } else { 520u32 },
    );
    let svg = stem.with_extension("svg");
    let png = stem.with_extension("png");
    if let Some(d) = svg.parent() {
        std::fs::create_dir_all(d).map_err(|source| PlotError::Io {
            path: d.to_path_buf(),
            source,
        })?;
    }
    let mut text = String::new();
    draw(
        SVGBackend::with_string(&mut text, size).into_drawing_area(),
        title,
        y_desc,
        categories,
        series,
    )
    .map_err(|e| PlotError::Draw {
        path: svg.clone(),
        source: Box::new(e),
    })?;
    if upright {
        text = anchor_upright_labels(&text);
    }
    let png_bytes = rasterise(&text).map_err(|source| PlotError::Raster {
        path: png.clone(),
        source,
    })?;
    // Each file is written to a temporary name and renamed, like every other output.
    for (path, bytes) in [(&svg, text.as_bytes()), (&png, png_bytes.as_slice())] {
        let tmp = path.with_extension("partial");
        std::fs::write(&tmp, bytes).map_err(|source| PlotError::Io {
            path: tmp.clone(),
            source,
        })?;
        std::fs::rename(&tmp, path).map_err(|source| PlotError::Io {
            path: path.clone(),
            source,
        })?;
    }
    Ok(vec![svg, png])
}

/// Plotters centres an x-axis label rotated by 90 degrees on its tick, so a
/// long name reaches up into the chart; anchored at its start it hangs below
/// the axis. Only the rotated axis labels change (`rotate(90,` in their
/// transform; the bar labels are rotated the other way).
fn anchor_upright_labels(svg: &str) -> String {
    svg.split_inclusive('>')
        .map(|tag| {
            if tag.trim_start().starts_with("<text") && tag.contains("transform=\"rotate(90,") {
                tag.replacen("text-anchor=\"middle\"", "text-anchor=\"start\"", 1)
            } else {
                tag.to_string()
            }
        })
        .collect()
}

/// The SVG as a PNG, its text in the embedded DejaVu Sans.
fn rasterise(svg: &str) -> Result<Vec<u8>, RasterError> {
    use resvg::{tiny_skia, usvg};
    let mut options = usvg::Options::default();
    let fonts = options.fontdb_mut();
    fonts.load_font_data(dejavu::sans::regular().to_vec());
    fonts.set_sans_serif_family("DejaVu Sans");
    options.font_family = "DejaVu Sans".into();
    let tree = usvg::Tree::from_str(svg, &options)?;
    let size = tree.size().to_int_size();
    let mut pixmap = tiny_skia::Pixmap::new(size.width(), size.height()).ok_or(RasterError::NoArea)?;
    resvg::render(&tree, tiny_skia::Transform::default(), &mut pixmap.as_mut());
    pixmap.encode_png().map_err(|e| RasterError::Png(Box::new(e)))
}

/// Measured against each estimate per benchmark, million cycles, errors above the bars.
pub fn measured_vs_estimated(a: &crate::accuracy::Accuracy, stem: &Path) -> Result<Vec<PathBuf>, PlotError> {
    let mut series = vec![Series {
        name: "measured".into(),
        values: a.measured.iter().map(|c| c / 1e6).collect(),
        labels: None,
        color: MEASURED_COLOR,
    }];
    for (v, name) in a.variants.iter().enumerate() {
        series.push(Series {
            name: name.clone(),
            values: a.estimates[v].iter().map(|c| c / 1e6).collect(),
            labels: Some(
                (0..a.benchmarks.len())
                    .map(|b| format!("{}%", signed(a.error_pct(v, b), 1)))
                    .collect(),
            ),
            color: color_of_variant(v),
        });
    }
    bar_chart(
        stem,
        "Measured and estimated cycles per benchmark",
        "million cycles",
        &a.benchmarks,
        &series,
    )
}

/// The error of each estimator variant (e.g. each cache configuration), per benchmark.
pub fn error_by_variant(a: &crate::accuracy::Accuracy, stem: &Path) -> Result<Vec<PathBuf>, PlotError> {
    let series: Vec<Series> = a
        .variants
        .iter()
        .enumerate()
        .map(|(v, name)| Series {
            name: format!("{name} (geo. mean |error| {:.2}%)", a.geomean_abs_error(v)),
            values: (0..a.benchmarks.len()).map(|b| a.error_pct(v, b)).collect(),
            labels: None,
            color: color_of_variant(v),
        })
        .collect();
    bar_chart(
        stem,
        "Estimation error by estimator and cache configuration",
        "error (%)",
        &a.benchmarks,
        &series,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn writes_svg_and_png_with_text() {
        let dir = tempfile::tempdir().unwrap();
        let files = bar_chart(
            &dir.path().join("p"),
            "Title here",
            "million cycles",
            &["Sieve".into(), "Sort".into()],
            &[Series {
                name: "measured".into(),
                values: vec![1.5, 2.5],
                labels: Some(vec!["+1.0%".into(), "-2.0%".into()]),
                color: MEASURED_COLOR,
            }],
        )
        .unwrap();
        let svg = std::fs::read_to_string(&files[0]).unwrap();
        assert!(
            svg.contains("Title here") && svg.contains("Sieve") && svg.contains("measured"),
            "{svg}"
        );
        let png = std::fs::read(&files[1]).unwrap();
        assert_eq!(&png[1..4], b"PNG");
        assert!(png.len() > 5000, "a PNG with drawn text and bars");
        assert_eq!(trim_zero("-0.00%"), "0.00%");
        assert_eq!(trim_zero("-0.01%"), "-0.01%");
        assert_eq!(signed(-0.0004, 2), "0.00");
        assert_eq!(signed(0.006, 2), "+0.01");
        assert_eq!(signed(-1.5, 1), "-1.5");
        assert_eq!(axis_decimals(180.0), 0);
        assert_eq!(axis_decimals(0.2), 3);
    }
}
