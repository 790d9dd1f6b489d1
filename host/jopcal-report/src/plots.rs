//! Plots, each written as SVG and PNG: grouped bar charts with titles, units
//! and legends. Text is drawn with DejaVu Sans embedded in the binary
//! (`dejavu` crate, via plotters' ab_glyph backend), so no system font is
//! needed.

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
}

const COLORS: [RGBColor; 6] = [
    RGBColor(60, 60, 60),
    RGBColor(31, 119, 180),
    RGBColor(255, 127, 14),
    RGBColor(44, 160, 44),
    RGBColor(214, 39, 40),
    RGBColor(148, 103, 189),
];

fn draw<DB: DrawingBackend>(
    root: DrawingArea<DB, plotters::coord::Shift>,
    title: &str,
    y_desc: &str,
    categories: &[String],
    series: &[Series],
) -> Result<(), String>
where
    DB::ErrorType: 'static,
{
    let err = |e: &dyn std::fmt::Display| e.to_string();
    root.fill(&WHITE).map_err(|e| err(&e))?;
    let n = categories.len().max(1);
    let all = series.iter().flat_map(|s| s.values.iter().copied());
    let (lo, hi) = all.fold((0f64, 0f64), |(lo, hi), v| (lo.min(v), hi.max(v)));
    // Head room above the bars for the value labels and the legend.
    let span = (hi - lo).max(1e-9);
    let (ylo, yhi) = (
        if lo < 0.0 { lo - span * 0.15 } else { 0.0 },
        hi + span * (0.25 + 0.06 * series.len() as f64),
    );
    let mut chart = ChartBuilder::on(&root)
        .caption(title, (FONT, 22))
        .margin(12)
        .x_label_area_size(50)
        .y_label_area_size(80)
        .build_cartesian_2d(-0.5f64..(n as f64 - 0.5), ylo..yhi)
        .map_err(|e| err(&e))?;
    let names = categories.to_vec();
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
        .x_label_style((FONT, 13))
        .y_label_style((FONT, 13))
        .y_desc(y_desc)
        .axis_desc_style((FONT, 15))
        .draw()
        .map_err(|e| err(&e))?;
    let k = series.len().max(1) as f64;
    let width = 0.8 / k;
    for (si, s) in series.iter().enumerate() {
        let color = COLORS[si % COLORS.len()];
        let x0 = |i: usize| i as f64 - 0.4 + si as f64 * width;
        chart
            .draw_series(
                s.values
                    .iter()
                    .enumerate()
                    .map(|(i, v)| Rectangle::new([(x0(i), 0.0), (x0(i) + width * 0.92, *v)], color.filled())),
            )
            .map_err(|e| err(&e))?
            .label(s.name.clone())
            .legend(move |(x, y)| Rectangle::new([(x, y - 5), (x + 12, y + 5)], color.filled()));
        if let Some(labels) = &s.labels {
            chart
                .draw_series(s.values.iter().zip(labels).enumerate().map(|(i, (v, l))| {
                    let y = if *v >= 0.0 { *v } else { 0.0 };
                    Text::new(
                        l.clone(),
                        (x0(i), y + (yhi - ylo) * 0.01),
                        (FONT, 10).into_font().transform(FontTransform::Rotate270),
                    )
                }))
                .map_err(|e| err(&e))?;
        }
    }
    chart
        .configure_series_labels()
        .background_style(WHITE.mix(0.85))
        .border_style(BLACK)
        .label_font((FONT, 13))
        .position(SeriesLabelPosition::UpperRight)
        .draw()
        .map_err(|e| err(&e))?;
    root.present().map_err(|e| err(&e))?;
    Ok(())
}

/// Writes `<stem>.svg` and `<stem>.png`; returns both paths.
pub fn bar_chart(
    stem: &Path,
    title: &str,
    y_desc: &str,
    categories: &[String],
    series: &[Series],
) -> Result<Vec<PathBuf>, String> {
    ensure_font();
    let size = ((120 + 70 * categories.len()).clamp(640, 1800) as u32, 520u32);
    let svg = stem.with_extension("svg");
    let png = stem.with_extension("png");
    for p in [&svg, &png] {
        if let Some(d) = p.parent() {
            std::fs::create_dir_all(d).map_err(|e| format!("{}: {e}", d.display()))?;
        }
    }
    // Each file is drawn to a temporary name and renamed, like every other output.
    let tmp_svg = stem.with_extension("svg.partial");
    let tmp_png = stem.with_extension("partial.png");
    draw(
        SVGBackend::new(&tmp_svg, size).into_drawing_area(),
        title,
        y_desc,
        categories,
        series,
    )
    .map_err(|e| format!("{}: {e}", svg.display()))?;
    draw(
        BitMapBackend::new(&tmp_png, size).into_drawing_area(),
        title,
        y_desc,
        categories,
        series,
    )
    .map_err(|e| format!("{}: {e}", png.display()))?;
    std::fs::rename(&tmp_svg, &svg).map_err(|e| format!("{}: {e}", svg.display()))?;
    std::fs::rename(&tmp_png, &png).map_err(|e| format!("{}: {e}", png.display()))?;
    Ok(vec![svg, png])
}

/// Measured against each estimate per benchmark, million cycles, errors above the bars.
pub fn measured_vs_estimated(a: &crate::accuracy::Accuracy, stem: &Path) -> Result<Vec<PathBuf>, String> {
    let mut series = vec![Series {
        name: "measured".into(),
        values: a.measured.iter().map(|c| c / 1e6).collect(),
        labels: None,
    }];
    for (v, name) in a.variants.iter().enumerate() {
        series.push(Series {
            name: name.clone(),
            values: a.estimates[v].iter().map(|c| c / 1e6).collect(),
            labels: Some(
                (0..a.benchmarks.len())
                    .map(|b| format!("{:+.1}%", a.error_pct(v, b)))
                    .collect(),
            ),
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
pub fn error_by_variant(a: &crate::accuracy::Accuracy, stem: &Path) -> Result<Vec<PathBuf>, String> {
    let series: Vec<Series> = a
        .variants
        .iter()
        .enumerate()
        .map(|(v, name)| Series {
            name: format!("{name} (geo. mean |error| {:.2}%)", a.geomean_abs_error(v)),
            values: (0..a.benchmarks.len()).map(|b| a.error_pct(v, b)).collect(),
            labels: None,
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
    }
}
