//! Plots, each written as SVG and PNG: grouped bar charts with titles, units
//! and legends, sized for one column of a two-column paper (1000 × 620 px
//! up to 16 categories, printed at 8.5 cm its text is 5.5 to 6.5 pt; wider
//! by 8 px a category beyond, at most 1400 px, with every size scaled alike;
//! taller by what long category names need beyond the room allowed them).
//! Text is laid out with DejaVu Sans embedded in the binary (`dejavu`
//! crate, via plotters' ab_glyph backend), and the PNG is the SVG
//! rasterised by resvg with the same font, so no system font is needed and
//! both files show the same picture.
//!
//! The layout is computed here, in pixels, rather than by plotters' chart
//! builder: the legend sits in rows above the bars, the value labels are
//! horizontal and drawn only where they cannot overprint, category names
//! turn by 45 or 90 degrees only when they do not fit flat, and every
//! number printed (ticks, labels, legend notes) takes the minus sign U+2212.

use crate::error::{PlotError, RasterError};
pub use crate::number::{signed, trim_zero};
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};
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
    /// A label for each bar (e.g. the error), if any: drawn horizontally
    /// above its bar, or stacked above its group, where there is room for
    /// it; left out where there is not (see [`bar_chart`]).
    pub labels: Option<Vec<String>>,
    /// Its colour: an index into the palette, so that one estimator has one
    /// colour in every plot (see [`color_of_variant`]).
    pub color: usize,
}

/// The Okabe–Ito palette (distinguishable with the common colour-vision
/// deficiencies), ordered so that neighbouring series also differ in
/// lightness, in greyscale: black (the measurement), then orange, bluish
/// green, yellow, blue, sky blue, vermillion, reddish purple.
const COLORS: [RGBColor; 8] = [
    RGBColor(34, 34, 34),
    RGBColor(230, 159, 0),
    RGBColor(0, 158, 115),
    RGBColor(240, 228, 66),
    RGBColor(0, 114, 178),
    RGBColor(86, 180, 233),
    RGBColor(213, 94, 0),
    RGBColor(204, 121, 167),
];

/// How the bars of a colour are filled besides the colour, so that series
/// stay apart in greyscale (orange, sky blue and reddish purple print as
/// nearly the same grey): by palette index, as [`COLORS`].
#[derive(Debug, Clone, Copy, PartialEq)]
enum Pattern {
    Solid,
    /// Lines rising to the right.
    Rising,
    Horizontal,
    /// Lines falling to the right.
    Falling,
    Crossed,
    Vertical,
    Dotted,
}

const PATTERNS: [Pattern; 8] = [
    Pattern::Solid,
    Pattern::Solid,
    Pattern::Rising,
    Pattern::Horizontal,
    Pattern::Falling,
    Pattern::Crossed,
    Pattern::Vertical,
    Pattern::Dotted,
];

/// The measurement's colour.
pub const MEASURED_COLOR: usize = 0;

/// The colour of estimator variant `v` of an accuracy table (the measurement has its own).
pub fn color_of_variant(v: usize) -> usize {
    1 + v % (COLORS.len() - 1)
}

/// How a bar chart's axes are described.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Axes {
    /// Under the category names (e.g. "benchmark"); none if empty.
    pub x_desc: String,
    /// Beside the values (e.g. "million cycles", or "error" when `percent`).
    pub y_desc: String,
    /// The values are percents: each tick gets a % sign.
    pub percent: bool,
    /// A logarithmic value axis, ticked at each decade: for values that span
    /// decades (small workloads beside large ones). The bars rise from the
    /// lowest decade shown; values of 0 or less are not drawn.
    pub log: bool,
    /// The last `apart` categories are summaries (a mean over the others),
    /// set apart on a shaded ground behind a rule.
    pub apart: usize,
    /// What the value labels say, added to `x_desc` when they are drawn
    /// (e.g. "labels: error = ..."); they are left out where they do not fit.
    pub labels_desc: String,
}

impl Axes {
    /// The axes [`bar_chart`] draws for `y_desc`: a trailing "(%)" makes it a
    /// percent axis (the % goes to the ticks), and the categories have no description.
    pub fn from_y_desc(y_desc: &str) -> Axes {
        match y_desc.trim_end().strip_suffix("(%)") {
            Some(rest) => Axes {
                y_desc: rest.trim_end().to_string(),
                percent: true,
                ..Axes::default()
            },
            None => Axes {
                y_desc: y_desc.to_string(),
                ..Axes::default()
            },
        }
    }
}

/// `s` with each hyphen that is a minus sign (before a digit or a point, and
/// not inside a word such as `jop-wcet`) replaced by U+2212, the minus sign
/// of typeset numbers.
pub fn minus_signs(s: &str) -> String {
    let chars: Vec<char> = s.chars().collect();
    chars
        .iter()
        .enumerate()
        .map(|(i, &c)| {
            let before_number = chars.get(i + 1).is_some_and(|n| n.is_ascii_digit() || *n == '.');
            let in_word = i > 0 && (chars[i - 1].is_alphanumeric() || chars[i - 1] == '.');
            if c == '-' && before_number && !in_word {
                '\u{2212}'
            } else {
                c
            }
        })
        .collect()
}

/// A tick's number: `decimals` decimals, U+2212 for a minus, no sign on a
/// zero, and a % sign on a percent axis (`−20%`, `0%`, `1.5`).
pub fn tick_label(y: f64, decimals: usize, percent: bool) -> String {
    let n = minus_signs(&trim_zero(&format!("{y:.decimals$}")));
    if percent {
        format!("{n}%")
    } else {
        n
    }
}

/// Decimals that print `x` (a tick step such as 0.25 or 20) exactly.
fn decimals_of(x: f64) -> usize {
    (0..6)
        .find(|&d| {
            let scaled = x * 10f64.powi(d as i32);
            (scaled - scaled.round()).abs() < 1e-6 * scaled.abs().max(1.0)
        })
        .unwrap_or(6)
}

/// A few round ticks over `lo..hi`: the smallest step of 1, 2 or 5 times a
/// power of ten (or 25 times one, which needs no more decimals than 50)
/// that gives at most 8 of them; and their decimals.
fn ticks(lo: f64, hi: f64) -> (Vec<f64>, usize) {
    let span = (hi - lo).max(1e-12);
    let mut exp = (span / 8.0).log10().floor() as i32;
    loop {
        for m in [1.0, 2.0, 2.5, 5.0] {
            if m == 2.5 && exp < 1 {
                continue;
            }
            let step = m * 10f64.powi(exp);
            let first = (lo / step - 1e-9).ceil() as i64;
            let last = (hi / step + 1e-9).floor() as i64;
            if last - first < 8 {
                let decimals = decimals_of(step);
                return ((first..=last).map(|i| i as f64 * step).collect(), decimals);
            }
        }
        exp += 1;
    }
}

/// The smallest of 1, 2 or 5 times a power of ten above `x` (> 0): the
/// bound a legend gives for values too small to draw.
fn round_bound(x: f64) -> f64 {
    let power = 10f64.powi(x.log10().floor() as i32);
    [1.0, 2.0, 5.0, 10.0]
        .into_iter()
        .map(|m| m * power)
        .find(|b| *b > x * (1.0 + 1e-9))
        .unwrap_or(10.0 * power)
}

/// The canvas, at most this wide.
const BASE_W: f64 = 1000.0;
const BASE_H: f64 = 620.0;
const MAX_W: f64 = 1400.0;
/// The height below the plot the base height allows for the category
/// names and the x axis's description; taller names add to the height.
const X_AREA: f64 = 150.0;
/// Categories the base width holds; each beyond adds this many pixels.
const BASE_CATEGORIES: usize = 16;
const PER_EXTRA_CATEGORY: f64 = 8.0;

/// Font sizes at the base width, in plotters' units (the SVG's font-size is
/// these over 1.24: 34 is 27.4 px, 6.6 pt printed 1000 px to 8.5 cm).
const TITLE_SIZE: f64 = 34.0;
const DESC_SIZE: f64 = 33.0;
const TICK_SIZE: f64 = 32.0;
const LEGEND_SIZE: f64 = 28.0;
const LABEL_SIZE: f64 = 27.0;
/// Category names turned by 90 degrees to fit get no smaller than this.
const MIN_CATEGORY_SIZE: f64 = 12.0;
/// A series all of whose bars are lower than this many pixels is said to be so in its legend.
const VISIBLE_PX: f64 = 2.5;

/// The SVG font size (the em, in pixels) of a plotters size.
fn em(size: f64) -> f64 {
    size / 1.24
}

/// Width in pixels of `text` drawn at plotters size `size` (plotters
/// measures with the glyphs scaled to the font's height; the SVG's em is
/// smaller by 2384/2048 × 1/1.24 for DejaVu Sans).
fn text_width(text: &str, size: f64) -> f64 {
    match (FONT, size).into_font().box_size(text) {
        Ok((w, _)) => w as f64 * 0.939,
        Err(_) => text.chars().count() as f64 * em(size) * 0.6,
    }
}

/// The canvas for `n` categories, before long category names add to its height.
fn canvas(n: usize) -> (u32, u32) {
    let w = (BASE_W + PER_EXTRA_CATEGORY * n.saturating_sub(BASE_CATEGORIES) as f64).min(MAX_W);
    (w.round() as u32, (BASE_H * w / BASE_W).round() as u32)
}

/// How the category names are written.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Turn {
    Flat,
    Diagonal,
    Upright,
}

/// Where the value labels go.
#[derive(Debug, Clone, Copy, PartialEq)]
enum LabelPlace {
    None,
    /// Above each bar (below a negative one).
    PerBar,
    /// In a column above each group, one line per labelled series, with its swatch.
    Stacked,
}

/// Everything [`draw`] needs, in pixels.
struct Layout {
    w: f64,
    h: f64,
    /// The scale of every size (the width over the base width).
    s: f64,
    margin: f64,
    /// The plot area: left, top, right, bottom.
    left: f64,
    top: f64,
    right: f64,
    bottom: f64,
    ylo: f64,
    yhi: f64,
    ticks: Vec<f64>,
    decimals: usize,
    turn: Turn,
    category_size: f64,
    labels: LabelPlace,
    /// Legend rows: per entry its series and text.
    legend: Vec<Vec<(usize, String)>>,
    /// The legend's type size (smaller than [`LEGEND_SIZE`] where an entry is long).
    legend_size: f64,
    legend_top: f64,
    /// The width of the y-axis area (ticks and description), for the next pass.
    y_area: f64,
    /// On a log axis, the decade (a power of ten) that value 0 stands for:
    /// the values drawn are `log10(v) - log_base`.
    log_base: Option<i32>,
}

impl Layout {
    fn y(&self, v: f64) -> f64 {
        self.bottom - (v - self.ylo) / (self.yhi - self.ylo) * (self.bottom - self.top)
    }
    fn pitch(&self, n: usize) -> f64 {
        (self.right - self.left) / n.max(1) as f64
    }
    /// Centre of category `i`.
    fn x(&self, n: usize, i: usize) -> f64 {
        self.left + (i as f64 + 0.5) * self.pitch(n)
    }
    fn size(&self, base: f64) -> f64 {
        base * self.s
    }
    fn legend_row_h(&self) -> f64 {
        em(self.legend_size) * 1.45
    }
    fn stack_line_h(&self) -> f64 {
        em(self.size(LABEL_SIZE)) * 1.3
    }
}

/// Share of a category's width its bars take.
const GROUP: f64 = 0.8;

/// Lays the chart out: computed three times, each pass with the previous
/// one's plot height and y-axis width (they settle at once).
fn layout(title: &str, axes: &Axes, categories: &[String], series: &[Series], log_base: Option<i32>) -> Layout {
    let (w, h) = canvas(categories.len());
    let (w, h) = (w as f64, h as f64);
    let s = w / BASE_W;
    let mut y_area = 120.0 * s;
    let mut plot_h = 0.6 * h;
    let mut l = layout_pass(title, axes, categories, series, (w, h, s), (y_area, plot_h), log_base);
    for _ in 0..2 {
        y_area = l.y_area;
        plot_h = l.bottom - l.top;
        l = layout_pass(title, axes, categories, series, (w, h, s), (y_area, plot_h), log_base);
    }
    l
}

fn layout_pass(
    title: &str,
    axes: &Axes,
    categories: &[String],
    series: &[Series],
    (w, h, s): (f64, f64, f64),
    (y_area_guess, plot_h): (f64, f64),
    log_base: Option<i32>,
) -> Layout {
    let n = categories.len().max(1);
    let k = series.len().max(1);
    let margin = 12.0 * s;
    let right_pad = 16.0 * s;
    let plot_w = w - 2.0 * margin - y_area_guess - right_pad;
    let pitch = plot_w / n as f64;

    // Category names: flat if they fit, else diagonal, else upright and smaller.
    let cat_base = TICK_SIZE * s;
    let widest = |size: f64| categories.iter().map(|c| text_width(c, size)).fold(0.0, f64::max);
    let (turn, category_size) = if widest(cat_base) <= pitch * 0.92 {
        (Turn::Flat, cat_base)
    } else if pitch >= em(cat_base) * 1.7 {
        (Turn::Diagonal, cat_base)
    } else {
        (
            Turn::Upright,
            (pitch / 1.1 * 1.24).clamp(MIN_CATEGORY_SIZE * s.min(1.0), cat_base),
        )
    };
    let cat_extent = match turn {
        Turn::Flat => em(category_size) * 1.2,
        Turn::Diagonal => widest(category_size) * std::f64::consts::FRAC_1_SQRT_2 + em(category_size) * 0.7,
        Turn::Upright => widest(category_size),
    };

    // Value labels: above each bar if each fits its bar's width, else
    // stacked above the group if the widest fits the group, else none.
    let label_size = LABEL_SIZE * s;
    let labelled: Vec<&Series> = series.iter().filter(|s| s.labels.is_some()).collect();
    let label_w = labelled
        .iter()
        .flat_map(|s| s.labels.iter().flatten())
        .map(|l| text_width(&minus_signs(l), label_size))
        .fold(0.0, f64::max);
    let swatch = em(label_size) * 0.7;
    let line_h = em(label_size) * 1.3;
    let labels = if labelled.is_empty() {
        LabelPlace::None
    } else if label_w <= pitch * GROUP / k as f64 * 0.98 {
        LabelPlace::PerBar
    } else if swatch * 1.4 + label_w <= pitch * 0.95 && labelled.len() as f64 * line_h <= plot_h * 0.45 {
        LabelPlace::Stacked
    } else {
        LabelPlace::None
    };

    // The value range, with room for the labels.
    let value = |si: usize, i: usize| series[si].values.get(i).copied().filter(|v| v.is_finite());
    let all = series
        .iter()
        .flat_map(|s| s.values.iter().copied().filter(|v| v.is_finite()));
    let (lo, hi) = all.fold((0f64, 0f64), |(lo, hi), v| (lo.min(v), hi.max(v)));
    // On a log axis the values are decades above the lowest one shown: never negative.
    let hi = if lo == 0.0 && hi == 0.0 { 1.0 } else { hi };
    let span = hi - lo;
    let (mut ylo, mut yhi) = (
        if lo < 0.0 { lo - 0.03 * span } else { 0.0 },
        if hi > 0.0 { hi + 0.03 * span } else { 0.0 },
    );
    // (value, pixels needed above it) and (value, pixels needed below it).
    let mut above: Vec<(f64, f64)> = Vec::new();
    let mut below: Vec<(f64, f64)> = Vec::new();
    let gap = 4.0 * s;
    match labels {
        LabelPlace::None => {}
        LabelPlace::PerBar => {
            for (si, sr) in series.iter().enumerate() {
                if sr.labels.is_some() {
                    for i in 0..categories.len() {
                        match value(si, i) {
                            Some(v) if v < 0.0 => below.push((v, gap + em(label_size) * 1.2)),
                            Some(v) => above.push((v, gap + em(label_size) * 1.2)),
                            None => {}
                        }
                    }
                }
            }
        }
        LabelPlace::Stacked => {
            for i in 0..categories.len() {
                let top = (0..series.len()).filter_map(|si| value(si, i)).fold(0f64, f64::max);
                above.push((top, gap + labelled.len() as f64 * line_h));
            }
        }
    }
    for _ in 0..40 {
        let per_px = (yhi - ylo) / plot_h.max(1.0);
        for &(v, px) in &above {
            yhi = yhi.max(v + px * per_px);
        }
        for &(v, px) in &below {
            ylo = ylo.min(v - px * per_px);
        }
    }
    let (ticks, decimals) = if axes.log {
        // A tick at each decade; at 2 and 5 times it too over three decades or fewer.
        let steps: &[f64] = if yhi - ylo <= 3.0 { &[1.0, 2.0, 5.0] } else { &[1.0] };
        let ticks = (ylo.floor() as i64..=yhi.floor() as i64)
            .flat_map(|d| steps.iter().map(move |m| d as f64 + m.log10()))
            .filter(|t| *t >= ylo - 1e-9 && *t <= yhi + 1e-9)
            .collect::<Vec<f64>>();
        (ticks, 0)
    } else {
        ticks(ylo, yhi)
    };

    // The legend, in rows over the plot's width; a series too small to see says so.
    let per_px = (yhi - ylo) / plot_h.max(1.0);
    let noun = if axes.percent && !axes.y_desc.is_empty() {
        axes.y_desc.as_str()
    } else {
        "value"
    };
    let entries: Vec<(usize, String)> = series
        .iter()
        .enumerate()
        .map(|(si, sr)| {
            let max = sr
                .values
                .iter()
                .filter(|v| v.is_finite())
                .fold(0f64, |m, v| m.max(v.abs()));
            let text = if sr.values.is_empty() || axes.log || max / per_px >= VISIBLE_PX {
                sr.name.clone()
            } else if max == 0.0 {
                format!("{} (all zero)", sr.name)
            } else {
                let b = round_bound(max);
                let unit = if axes.percent { "%" } else { "" };
                format!(
                    "{} (all |{noun}| < {}{unit})",
                    sr.name,
                    tick_label(b, decimals_of(b), false)
                )
            };
            (si, text)
        })
        .collect();
    // Smaller type (to 70%) where the longest entry would run past the plot.
    let legend_size = {
        let base = LEGEND_SIZE * s;
        let widest = entries
            .iter()
            .map(|(_, t)| em(base) * 1.2 + text_width(t, base))
            .fold(0.0, f64::max);
        if widest > plot_w {
            base * (plot_w / widest).max(0.7)
        } else {
            base
        }
    };
    let entry_w = |t: &str| em(legend_size) * 1.2 + text_width(t, legend_size);
    let spacing = em(legend_size) * 1.3;
    let mut legend: Vec<Vec<(usize, String)>> = Vec::new();
    let mut row_w = 0.0;
    for (si, t) in entries {
        let ew = entry_w(&t);
        match legend.last_mut() {
            Some(row) if row_w + spacing + ew <= plot_w => {
                row_w += spacing + ew;
                row.push((si, t));
            }
            _ => {
                row_w = ew;
                legend.push(vec![(si, t)]);
            }
        }
    }

    // The y axis's width: its description, then the widest tick label.
    let tick_size = TICK_SIZE * s;
    let tick_len = 6.0 * s;
    let widest_tick = ticks
        .iter()
        .map(|t| text_width(&tick_text(*t, decimals, axes, log_base), tick_size))
        .fold(0.0, f64::max);
    let desc_em = em(DESC_SIZE * s);
    let y_area = if axes.y_desc.is_empty() { 0.0 } else { desc_em * 1.4 } + widest_tick + tick_len + 2.0 * gap;
    let x_area = tick_len
        + gap
        + cat_extent
        + if x_desc(axes, labels).is_empty() {
            0.0
        } else {
            desc_em * 1.35
        };
    // Long category names make the canvas taller rather than the bars shorter.
    let h = (h + (x_area - X_AREA * s).max(0.0)).round();
    let title_h = if title.is_empty() {
        0.0
    } else {
        em(TITLE_SIZE * s) * 1.55
    };
    let legend_h = legend.len() as f64 * em(legend_size) * 1.45 + if legend.is_empty() { 0.0 } else { 6.0 * s };
    let legend_top = margin + title_h;
    Layout {
        w,
        h,
        s,
        margin,
        left: margin + y_area,
        top: legend_top + legend_h + 8.0 * s,
        right: w - margin - right_pad,
        bottom: h - margin - x_area,
        ylo,
        yhi,
        ticks,
        decimals,
        turn,
        category_size,
        labels,
        legend,
        legend_size,
        legend_top,
        y_area,
        log_base,
    }
}

/// The x axis's description, with what the labels say when they are drawn.
fn x_desc(axes: &Axes, labels: LabelPlace) -> String {
    match (labels, axes.labels_desc.is_empty(), axes.x_desc.is_empty()) {
        (LabelPlace::None, _, _) | (_, true, _) => axes.x_desc.clone(),
        (_, false, true) => axes.labels_desc.clone(),
        (_, false, false) => format!("{}; {}", axes.x_desc, axes.labels_desc),
    }
}

/// A tick's text: its value, or on a log axis the decade it stands for.
fn tick_text(t: f64, decimals: usize, axes: &Axes, log_base: Option<i32>) -> String {
    match log_base {
        Some(base) => {
            // t = log10(m) + decade above `base`, m one of 1, 2, 5.
            let decade = t.floor();
            let m = 10f64.powf(t - decade).round();
            let e = base + decade as i32;
            tick_label(m * 10f64.powi(e), e.min(0).unsigned_abs() as usize, axes.percent)
        }
        None => tick_label(t, decimals, axes.percent),
    }
}

/// The series as drawn on a log axis: each value `log10(v) - base`, where
/// `base` is the decade at or below the smallest positive value; values of
/// 0 or less become NaN (not drawn). Returns them and `base`.
fn on_log_axis(series: &[Series]) -> (Vec<Series>, i32) {
    let smallest = series
        .iter()
        .flat_map(|s| s.values.iter().copied())
        .filter(|v| v.is_finite() && *v > 0.0)
        .fold(f64::INFINITY, f64::min);
    let base = if smallest.is_finite() {
        smallest.log10().floor() as i32
    } else {
        0
    };
    let moved = series
        .iter()
        .map(|s| Series {
            name: s.name.clone(),
            values: s
                .values
                .iter()
                .map(|v| {
                    if *v > 0.0 {
                        v.log10() - f64::from(base)
                    } else {
                        f64::NAN
                    }
                })
                .collect(),
            labels: s.labels.clone(),
            color: s.color,
        })
        .collect();
    (moved, base)
}

/// Marks the category names drawn turned: plotters turns text by
/// multiples of 90 degrees, clockwise; the SVG is rewritten so these are
/// turned anticlockwise by 45 or 90 degrees (see [`turn_category_names`]).
const TURN_MARK: FontTransform = FontTransform::Rotate90;

/// A rectangle from `a` to `b` (pixels) in palette colour `color`, with
/// that colour's [`Pattern`] over it: white lines on a dark colour, dark
/// ones on a light colour, so the pattern shows in greyscale too.
fn swatch<DB: DrawingBackend>(
    root: &DrawingArea<DB, plotters::coord::Shift>,
    color: usize,
    a: (f64, f64),
    b: (f64, f64),
    scale: f64,
) -> Result<(), DrawingAreaErrorKind<DB::ErrorType>>
where
    DB::ErrorType: 'static,
{
    let fill = COLORS[color % COLORS.len()];
    let p = |x: f64, y: f64| (x.round() as i32, y.round() as i32);
    root.draw(&Rectangle::new([p(a.0, a.1), p(b.0, b.1)], fill.filled()))?;
    let luma = 0.299 * f64::from(fill.0) + 0.587 * f64::from(fill.1) + 0.114 * f64::from(fill.2);
    let ink = if luma > 150.0 {
        RGBColor(40, 40, 40)
    } else {
        RGBColor(255, 255, 255)
    };
    let style = ink.stroke_width((1.4 * scale).round().max(1.0) as u32);
    let step = 6.0 * scale;
    let segments = hatch(PATTERNS[color % PATTERNS.len()], a, b, step);
    for (from, to) in segments {
        root.draw(&PathElement::new(vec![p(from.0, from.1), p(to.0, to.1)], style))?;
    }
    if PATTERNS[color % PATTERNS.len()] == Pattern::Dotted {
        let r = (1.3 * scale).max(1.0);
        let mut y = a.1 + step / 2.0;
        while y < b.1 {
            let mut x = a.0 + step / 2.0;
            while x < b.0 {
                root.draw(&Circle::new(p(x, y), r.round() as i32, ink.filled()))?;
                x += step;
            }
            y += step;
        }
    }
    Ok(())
}

/// A line segment, from one point (pixels) to another.
type Segment = ((f64, f64), (f64, f64));

/// The line segments of `pattern` inside the rectangle `a`..`b` (pixels,
/// `a` top left), lines `step` apart.
fn hatch(pattern: Pattern, a: (f64, f64), b: (f64, f64), step: f64) -> Vec<Segment> {
    let (w, h) = (b.0 - a.0, b.1 - a.1);
    if w <= 0.0 || h <= 0.0 || step <= 0.0 {
        return Vec::new();
    }
    let mut out = Vec::new();
    // Diagonals: y - a.1 = ±(x - a.0) + c, clipped to the rectangle.
    let diagonal = |rising: bool, out: &mut Vec<Segment>| {
        let mut c = step / 2.0;
        while c < w + h {
            // Along the line, t from the left or top edge: x = a.0 + t, and
            // (rising) y = a.1 + c - t or (falling) y = b.1 - c + t.
            let t0 = (c - h).max(0.0);
            let t1 = c.min(w);
            if t1 > t0 {
                let y = |t: f64| if rising { a.1 + c - t } else { b.1 - c + t };
                out.push(((a.0 + t0, y(t0)), (a.0 + t1, y(t1))));
            }
            c += step * std::f64::consts::SQRT_2;
        }
    };
    match pattern {
        Pattern::Solid | Pattern::Dotted => {}
        Pattern::Rising => diagonal(true, &mut out),
        Pattern::Falling => diagonal(false, &mut out),
        Pattern::Crossed => {
            diagonal(true, &mut out);
            diagonal(false, &mut out);
        }
        Pattern::Horizontal => {
            let mut y = a.1 + step / 2.0;
            while y < b.1 {
                out.push(((a.0, y), (b.0, y)));
                y += step;
            }
        }
        Pattern::Vertical => {
            let mut x = a.0 + step / 2.0;
            while x < b.0 {
                out.push(((x, a.1), (x, b.1)));
                x += step;
            }
        }
    }
    out
}

fn draw<DB: DrawingBackend>(
    root: DrawingArea<DB, plotters::coord::Shift>,
    l: &Layout,
    title: &str,
    axes: &Axes,
    categories: &[String],
    series: &[Series],
) -> Result<(), DrawingAreaErrorKind<DB::ErrorType>>
where
    DB::ErrorType: 'static,
{
    let n = categories.len().max(1);
    let k = series.len().max(1);
    let p = |x: f64, y: f64| (x.round() as i32, y.round() as i32);
    let text = |size: f64, h: HPos, v: VPos| TextStyle::from((FONT, size).into_font()).pos(Pos::new(h, v));
    let line_w = l.s.round().max(1.0) as u32;
    root.fill(&WHITE)?;
    if !title.is_empty() {
        root.draw(&Text::new(
            title.to_string(),
            p(l.w / 2.0, l.margin),
            text(l.size(TITLE_SIZE), HPos::Center, VPos::Top),
        ))?;
    }

    // The legend, in rows above the plot, left-aligned with it.
    let legend_size = l.legend_size;
    let lem = em(legend_size);
    for (row, entries) in l.legend.iter().enumerate() {
        let y = l.legend_top + (row as f64 + 0.5) * l.legend_row_h();
        let mut x = l.left;
        for (si, t) in entries {
            swatch(
                &root,
                series[*si].color,
                (x, y - lem * 0.4),
                (x + lem * 0.8, y + lem * 0.4),
                l.s,
            )?;
            root.draw(&Text::new(
                t.clone(),
                p(x + lem * 1.2, y),
                text(legend_size, HPos::Left, VPos::Center),
            ))?;
            x += lem * 1.2 + text_width(t, legend_size) + lem * 1.3;
        }
    }

    // The summary categories on a shaded ground, behind a rule.
    if axes.apart > 0 && axes.apart < n {
        let x_rule = l.left + (n - axes.apart) as f64 * l.pitch(n);
        root.draw(&Rectangle::new(
            [p(x_rule, l.top), p(l.right, l.bottom)],
            RGBColor(238, 238, 238).filled(),
        ))?;
        root.draw(&PathElement::new(
            vec![p(x_rule, l.top), p(x_rule, l.bottom)],
            RGBColor(120, 120, 120).stroke_width(line_w),
        ))?;
    }

    // Light major gridlines at the ticks, then the bars over them.
    let grid = RGBColor(222, 222, 222);
    for t in &l.ticks {
        let y = l.y(*t);
        root.draw(&PathElement::new(
            vec![p(l.left, y), p(l.right, y)],
            grid.stroke_width(line_w),
        ))?;
    }
    let pitch = l.pitch(n);
    let slot = pitch * GROUP / k as f64;
    let zero = l.y(0.0);
    for (si, s) in series.iter().enumerate() {
        for (i, v) in s.values.iter().enumerate().take(categories.len()) {
            if !v.is_finite() {
                continue;
            }
            let x0 = l.x(n, i) - pitch * GROUP / 2.0 + si as f64 * slot;
            let (ya, yb) = (zero, l.y(*v));
            if (ya - yb).abs() >= 0.5 {
                swatch(
                    &root,
                    s.color,
                    (x0 + slot * 0.05, ya.min(yb)),
                    (x0 + slot * 0.95, ya.max(yb)),
                    l.s,
                )?;
            }
        }
    }

    // The axes: the zero line when there are negatives, the left and bottom lines, ticks and their numbers.
    let axis = RGBColor(40, 40, 40);
    if l.ylo < 0.0 && l.yhi > 0.0 {
        root.draw(&PathElement::new(
            vec![p(l.left, zero), p(l.right, zero)],
            RGBColor(90, 90, 90).stroke_width(line_w),
        ))?;
    }
    root.draw(&PathElement::new(
        vec![p(l.left, l.top), p(l.left, l.bottom), p(l.right, l.bottom)],
        axis.stroke_width(line_w),
    ))?;
    let tick_len = 6.0 * l.s;
    let gap = 4.0 * l.s;
    for t in &l.ticks {
        let y = l.y(*t);
        root.draw(&PathElement::new(
            vec![p(l.left - tick_len, y), p(l.left, y)],
            axis.stroke_width(line_w),
        ))?;
        root.draw(&Text::new(
            tick_text(*t, l.decimals, axes, l.log_base),
            p(l.left - tick_len - gap, y),
            text(l.size(TICK_SIZE), HPos::Right, VPos::Center),
        ))?;
    }
    let desc_size = l.size(DESC_SIZE);
    if !axes.y_desc.is_empty() {
        root.draw(&Text::new(
            axes.y_desc.clone(),
            p(l.margin + em(desc_size) * 0.6, (l.top + l.bottom) / 2.0),
            TextStyle::from((FONT, desc_size).into_font().transform(FontTransform::Rotate270))
                .pos(Pos::new(HPos::Center, VPos::Center)),
        ))?;
    }
    let x_text = x_desc(axes, l.labels);
    if !x_text.is_empty() {
        root.draw(&Text::new(
            x_text,
            p((l.left + l.right) / 2.0, l.h - l.margin),
            text(desc_size, HPos::Center, VPos::Bottom),
        ))?;
    }

    // The category names under the axis.
    for (i, c) in categories.iter().enumerate() {
        let x = l.x(n, i);
        let y = l.bottom + tick_len + gap;
        let style = match l.turn {
            Turn::Flat => text(l.category_size, HPos::Center, VPos::Top),
            Turn::Diagonal | Turn::Upright => TextStyle::from((FONT, l.category_size).into_font().transform(TURN_MARK))
                .pos(Pos::new(HPos::Right, VPos::Center)),
        };
        let x = if l.turn == Turn::Diagonal {
            x + em(l.category_size) * 0.3
        } else {
            x
        };
        root.draw(&Text::new(c.clone(), p(x, y), style))?;
    }

    // The value labels, horizontal.
    let label_size = l.size(LABEL_SIZE);
    let lab_em = em(label_size);
    match l.labels {
        LabelPlace::None => {}
        LabelPlace::PerBar => {
            for (si, s) in series.iter().enumerate() {
                let Some(labels) = &s.labels else { continue };
                for (i, (v, lab)) in s.values.iter().zip(labels).enumerate().take(categories.len()) {
                    if !v.is_finite() {
                        continue;
                    }
                    let x = l.x(n, i) - pitch * GROUP / 2.0 + (si as f64 + 0.5) * slot;
                    let (y, v_pos) = if *v < 0.0 {
                        (l.y(*v) + gap, VPos::Top)
                    } else {
                        (l.y(*v) - gap, VPos::Bottom)
                    };
                    root.draw(&Text::new(
                        minus_signs(lab),
                        p(x, y),
                        text(label_size, HPos::Center, v_pos),
                    ))?;
                }
            }
        }
        LabelPlace::Stacked => {
            let labelled: Vec<&Series> = series.iter().filter(|s| s.labels.is_some()).collect();
            let line_h = l.stack_line_h();
            for i in 0..categories.len() {
                let lines: Vec<(usize, String)> = labelled
                    .iter()
                    .filter_map(|s| {
                        let lab = s.labels.as_ref()?.get(i)?;
                        Some((s.color, minus_signs(lab)))
                    })
                    .collect();
                let block = lines
                    .iter()
                    .map(|(_, t)| lab_em * 1.0 + text_width(t, label_size))
                    .fold(0.0, f64::max);
                let top = series
                    .iter()
                    .filter_map(|s| s.values.get(i).copied().filter(|v| v.is_finite()))
                    .fold(0f64, f64::max);
                let x0 = l.x(n, i) - block / 2.0;
                let m = lines.len();
                for (j, (color, t)) in lines.iter().enumerate() {
                    let yc = l.y(top) - gap - (m - j) as f64 * line_h + line_h / 2.0;
                    swatch(
                        &root,
                        *color,
                        (x0, yc - lab_em * 0.35),
                        (x0 + lab_em * 0.7, yc + lab_em * 0.35),
                        l.s,
                    )?;
                    root.draw(&Text::new(
                        t.clone(),
                        p(x0 + lab_em, yc),
                        text(label_size, HPos::Left, VPos::Center),
                    ))?;
                }
            }
        }
    }
    root.present()?;
    Ok(())
}

/// Writes `<stem>.svg` and `<stem>.png`; returns both paths. `y_desc`
/// ending in "(%)" makes a percent axis ([`Axes::from_y_desc`]).
pub fn bar_chart(
    stem: &Path,
    title: &str,
    y_desc: &str,
    categories: &[String],
    series: &[Series],
) -> Result<Vec<PathBuf>, PlotError> {
    bar_chart_with(stem, title, &Axes::from_y_desc(y_desc), categories, series)
}

/// [`bar_chart`] with its axes described by `axes`.
pub fn bar_chart_with(
    stem: &Path,
    title: &str,
    axes: &Axes,
    categories: &[String],
    series: &[Series],
) -> Result<Vec<PathBuf>, PlotError> {
    ensure_font();
    let (logged, log_base) = if axes.log {
        let (moved, base) = on_log_axis(series);
        (Some(moved), Some(base))
    } else {
        (None, None)
    };
    let series = logged.as_deref().unwrap_or(series);
    let l = layout(title, axes, categories, series, log_base);
    let size = (l.w as u32, l.h as u32);
    // The stem's name may hold dots (`plots/cal.v2-calibration-residuals`): add, never replace.
    let file = |ext: &str| {
        let mut name = stem.as_os_str().to_owned();
        name.push(format!(".{ext}"));
        PathBuf::from(name)
    };
    let (svg, png, pdf) = (file("svg"), file("png"), file("pdf"));
    if let Some(d) = svg.parent() {
        std::fs::create_dir_all(d).map_err(|source| PlotError::Io {
            path: d.to_path_buf(),
            source,
        })?;
    }
    let mut text = String::new();
    draw(
        SVGBackend::with_string(&mut text, size).into_drawing_area(),
        &l,
        title,
        axes,
        categories,
        series,
    )
    .map_err(|e| PlotError::Draw {
        path: svg.clone(),
        source: Box::new(e),
    })?;
    let text = turn_category_names(&text, l.turn);
    let png_bytes = rasterise(&text).map_err(|source| PlotError::Raster {
        path: png.clone(),
        source,
    })?;
    let pdf_bytes = to_pdf(&text).map_err(|source| PlotError::Raster {
        path: pdf.clone(),
        source,
    })?;
    // Each file is written to a temporary name and renamed, like every other output.
    for (path, bytes) in [
        (&svg, text.as_bytes()),
        (&png, png_bytes.as_slice()),
        (&pdf, pdf_bytes.as_slice()),
    ] {
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
    Ok(vec![svg, png, pdf])
}

/// Plotters turns text clockwise only; the category names (the only text
/// drawn turned by 90 degrees clockwise, [`TURN_MARK`]; the y axis's
/// description turns by 270) are turned anticlockwise instead, by 45
/// degrees or upright, so that they read upwards and end under their bars.
fn turn_category_names(svg: &str, turn: Turn) -> String {
    let angle = match turn {
        Turn::Flat => return svg.to_string(),
        Turn::Diagonal => "-45",
        Turn::Upright => "-90",
    };
    svg.split_inclusive('>')
        .map(|tag| {
            if tag.trim_start().starts_with("<text") && tag.contains("transform=\"rotate(90,") {
                tag.replacen("transform=\"rotate(90,", &format!("transform=\"rotate({angle},"), 1)
            } else {
                tag.to_string()
            }
        })
        .collect()
}

/// The SVG read with the embedded DejaVu Sans as its only font.
fn svg_tree(svg: &str) -> Result<resvg::usvg::Tree, RasterError> {
    use resvg::usvg;
    let mut options = usvg::Options::default();
    let fonts = options.fontdb_mut();
    fonts.load_font_data(dejavu::sans::regular().to_vec());
    fonts.set_sans_serif_family("DejaVu Sans");
    options.font_family = "DejaVu Sans".into();
    Ok(usvg::Tree::from_str(svg, &options)?)
}

/// The SVG as a PDF (vector, the font embedded): what a journal takes.
fn to_pdf(svg: &str) -> Result<Vec<u8>, RasterError> {
    let tree = svg_tree(svg)?;
    svg2pdf::to_pdf(
        &tree,
        svg2pdf::ConversionOptions::default(),
        svg2pdf::PageOptions::default(),
    )
    .map_err(|e| RasterError::Pdf(e.to_string()))
}

/// The SVG as a PNG, its text in the embedded DejaVu Sans.
fn rasterise(svg: &str) -> Result<Vec<u8>, RasterError> {
    use resvg::tiny_skia;
    let tree = svg_tree(svg)?;
    let size = tree.size().to_int_size();
    let mut pixmap = tiny_skia::Pixmap::new(size.width(), size.height()).ok_or(RasterError::NoArea)?;
    resvg::render(&tree, tiny_skia::Transform::default(), &mut pixmap.as_mut());
    pixmap.encode_png().map_err(|e| RasterError::Png(Box::new(e)))
}

/// Measured against each estimate per benchmark, million cycles; each
/// estimate's error above its group where the labels fit (with many
/// estimators they do not, and the errors are in [`error_by_variant`]).
pub fn measured_vs_estimated(a: &crate::accuracy::Accuracy, stem: &Path) -> Result<Vec<PathBuf>, PlotError> {
    let mut series = vec![Series {
        name: "measured".into(),
        values: a.measured.iter().map(|c| c / 1e6).collect(),
        labels: None,
        color: MEASURED_COLOR,
    }];
    for (v, name) in reader_names(&a.variants).into_iter().enumerate() {
        series.push(Series {
            name,
            values: a.estimates[v].iter().map(|c| c / 1e6).collect(),
            labels: Some(
                (0..a.benchmarks.len())
                    .map(|b| format!("{}%", signed(a.error_pct(v, b), 1)))
                    .collect(),
            ),
            color: color_of_variant(v),
        });
    }
    bar_chart_with(
        stem,
        "Measured and estimated cycles per benchmark",
        &Axes {
            x_desc: "benchmark".into(),
            labels_desc: "labels: error = (estimated \u{2212} measured) / measured".into(),
            y_desc: "million cycles (log scale)".into(),
            log: true,
            ..Axes::default()
        },
        &a.benchmarks,
        &series,
    )
}

/// The category of [`error_by_variant`] after the benchmarks.
pub const GEOMEAN_CATEGORY: &str = "geo. mean |error|";

/// The estimator variants of an accuracy table (`<table> <cache mode>`, as
/// the tables name them) in words a reader knows, for a legend:
/// `jop-wcet fifo:1024:16` is "published table, simulated cache";
/// `jop-wcet-calibrated-loo fifo:2048:16` is "calibrated, leave-one-out".
/// Where two would read alike, both say their cache's size. A name it does
/// not know stays as it is.
pub fn reader_names(variants: &[String]) -> Vec<String> {
    let short: Vec<String> = variants.iter().map(|v| reader_name(v, false)).collect();
    short
        .iter()
        .zip(variants)
        .map(|(s, v)| {
            if short.iter().filter(|o| *o == s).count() > 1 {
                reader_name(v, true)
            } else {
                s.clone()
            }
        })
        .collect()
}

/// One variant in words; `sized`: a simulated cache with its size.
fn reader_name(variant: &str, sized: bool) -> String {
    if variant == crate::accuracy::NAIVE {
        return "naive: one average cost per bytecode".into();
    }
    let (table, cache) = variant.rsplit_once(' ').unwrap_or((variant, ""));
    // `+library`: per-call costs of library code added for the fit; `+microcode`: the
    // tree's microcode priced the table (what `validate` derives on a tree).
    let base = |t: &str| match t.strip_suffix("+library").unwrap_or(t) {
        "jop-wcet" => "published table".to_string(),
        "jop-devel" => "JopSim's table".to_string(),
        "jop-microcode" | "jop-devel+microcode" => "table derived from the microcode".to_string(),
        "emu-board" => "the board's own table".to_string(),
        other => other.to_string(),
    };
    let fitted = [
        ("-calibrated-loo", "leave-one-out"),
        ("-calibrated-on-micro", "on micro-benchmarks"),
        ("-calibrated", ""),
    ]
    .into_iter()
    .find_map(|(suffix, how)| table.strip_suffix(suffix).map(|t| (t, how)));
    let (table, calibrated) = match fitted {
        // The calibrated table chose its cache: its size only where needed;
        // the table it started from only where two would read alike.
        Some((t, how)) if sized => (format!("calibrated from {}{}", base(t), comma(how)), true),
        Some((_, how)) => (format!("calibrated{}", comma(how)), true),
        None => (base(table), false),
    };
    let sizes = cache.strip_prefix("fifo:").and_then(|r| r.split_once(':'));
    let cache = match (cache, sizes) {
        ("hit", _) => "cache always hits".to_string(),
        ("miss", _) => "cache always misses".to_string(),
        (_, Some((bytes, blocks))) if sized => format!("simulated cache, {} in {blocks} blocks", size_in_words(bytes)),
        (_, Some(_)) if calibrated => String::new(),
        (_, Some(_)) => "simulated cache".to_string(),
        (c, None) => c.to_string(),
    };
    format!("{table}{}", comma(&cache))
}

/// A cache's size for a reader: `4096` is "4 KB", `512` is "512 B".
fn size_in_words(bytes: &str) -> String {
    match bytes.parse::<u64>() {
        Ok(b) if b >= 1024 && b % 1024 == 0 => format!("{} KB", b / 1024),
        _ => format!("{bytes} B"),
    }
}

/// `, s`, or nothing for an empty `s`.
fn comma(s: &str) -> String {
    if s.is_empty() {
        String::new()
    } else {
        format!(", {s}")
    }
}

/// The error of each estimator variant (e.g. each cache configuration), per
/// benchmark, and last the geometric mean of each one's |error|.
pub fn error_by_variant(a: &crate::accuracy::Accuracy, stem: &Path) -> Result<Vec<PathBuf>, PlotError> {
    let series: Vec<Series> = reader_names(&a.variants)
        .into_iter()
        .enumerate()
        .map(|(v, name)| Series {
            name,
            values: (0..a.benchmarks.len())
                .map(|b| a.error_pct(v, b))
                .chain([a.geomean_abs_error(v)])
                .collect(),
            labels: None,
            color: color_of_variant(v),
        })
        .collect();
    let mut categories = a.benchmarks.clone();
    categories.push(GEOMEAN_CATEGORY.into());
    bar_chart_with(
        stem,
        "Estimation error by estimator and cache configuration",
        &Axes {
            x_desc: "benchmark; error = (estimated \u{2212} measured) / measured".into(),
            y_desc: "error".into(),
            percent: true,
            apart: 1,
            ..Axes::default()
        },
        &categories,
        &series,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The SVG's texts.
    fn texts(svg: &str) -> Vec<String> {
        svg.split("<text")
            .skip(1)
            .map(|t| {
                t.split_once('>')
                    .unwrap()
                    .1
                    .split("</text>")
                    .next()
                    .unwrap()
                    .trim()
                    .to_string()
            })
            .collect()
    }

    fn png_size(path: &Path) -> (u32, u32) {
        let png = std::fs::read(path).unwrap();
        assert_eq!(&png[1..4], b"PNG");
        let be = |b: &[u8]| u32::from_be_bytes([b[0], b[1], b[2], b[3]]);
        (be(&png[16..20]), be(&png[20..24]))
    }

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
        // The labels fit above their bars, horizontal, with the minus sign.
        let t = texts(&svg);
        assert!(
            t.contains(&"\u{2212}2.0%".into()) && t.contains(&"+1.0%".into()),
            "{t:?}"
        );
        assert!(!svg.contains("rotate(-"), "no category name turned: {svg}");
        let png = std::fs::read(&files[1]).unwrap();
        assert!(png.len() > 5000, "a PNG with drawn text and bars");
        assert_eq!(png_size(&files[1]), (1000, 620));
        assert_eq!(trim_zero("-0.00%"), "0.00%");
        assert_eq!(trim_zero("-0.01%"), "-0.01%");
        assert_eq!(signed(-0.0004, 2), "0.00");
        assert_eq!(signed(0.006, 2), "+0.01");
        assert_eq!(signed(-1.5, 1), "-1.5");
    }

    #[test]
    fn numbers_take_the_minus_sign_and_percent_ticks_a_percent_sign() {
        assert_eq!(tick_label(-20.0, 0, true), "\u{2212}20%");
        assert_eq!(tick_label(0.5, 1, true), "0.5%");
        assert_eq!(tick_label(-0.0001, 2, true), "0.00%");
        assert_eq!(tick_label(-1.25, 2, false), "\u{2212}1.25");
        assert_eq!(tick_label(3.0, 0, false), "3");
        assert_eq!(minus_signs("-14.8%"), "\u{2212}14.8%");
        assert_eq!(minus_signs("(-.5) +2 -x"), "(\u{2212}.5) +2 -x");
        assert_eq!(minus_signs("jop-wcet-2 fifo:1024:16"), "jop-wcet-2 fifo:1024:16");
        assert_eq!(
            Axes::from_y_desc("error (%)"),
            Axes {
                y_desc: "error".into(),
                percent: true,
                ..Axes::default()
            }
        );
        assert!(!Axes::from_y_desc("million cycles").percent);
    }

    #[test]
    fn legends_name_the_estimators_in_words() {
        let v = |s: &[&str]| reader_names(&s.iter().map(|x| x.to_string()).collect::<Vec<_>>());
        assert_eq!(
            v(&[
                "jop-wcet hit",
                "jop-wcet miss",
                "jop-wcet fifo:1024:16",
                "jop-wcet-calibrated-loo fifo:2048:16",
                crate::accuracy::NAIVE,
            ]),
            [
                "published table, cache always hits",
                "published table, cache always misses",
                "published table, simulated cache",
                "calibrated, leave-one-out",
                "naive: one average cost per bytecode",
            ]
        );
        // Two caches of one table: each says its size.
        assert_eq!(
            v(&["jop-devel fifo:4096:16", "jop-devel fifo:1024:8", "mine hit"]),
            [
                "JopSim's table, simulated cache, 4 KB in 16 blocks",
                "JopSim's table, simulated cache, 1 KB in 8 blocks",
                "mine, cache always hits",
            ]
        );
        assert_eq!(
            v(&[
                "jop-devel+microcode fifo:4096:16",
                "jop-devel+microcode+library-calibrated-loo fifo:4096:16",
                "jop-devel+microcode+library-calibrated-on-micro fifo:4096:16",
            ]),
            [
                "table derived from the microcode, simulated cache",
                "calibrated, leave-one-out",
                "calibrated, on micro-benchmarks"
            ]
        );
    }

    /// Every pattern's lines stay inside the bar.
    #[test]
    fn hatching_stays_inside_its_rectangle() {
        for p in PATTERNS {
            for (a, b) in [((10.0, 20.0), (18.0, 120.0)), ((0.0, 0.0), (40.0, 3.0))] {
                for ((x0, y0), (x1, y1)) in hatch(p, a, b, 6.0) {
                    for (x, y) in [(x0, y0), (x1, y1)] {
                        assert!(x >= a.0 - 1e-9 && x <= b.0 + 1e-9 && y >= a.1 - 1e-9 && y <= b.1 + 1e-9);
                    }
                }
            }
        }
        assert!(hatch(Pattern::Crossed, (0.0, 0.0), (10.0, 10.0), 6.0).len() >= 4);
        assert!(hatch(Pattern::Solid, (0.0, 0.0), (10.0, 10.0), 6.0).is_empty());
    }

    #[test]
    fn a_few_round_ticks() {
        assert_eq!(ticks(0.0, 5.1), (vec![0.0, 1.0, 2.0, 3.0, 4.0, 5.0], 0));
        let (t, d) = ticks(-82.0, 96.0);
        assert_eq!((t.first().copied(), t.last().copied(), d), (Some(-75.0), Some(75.0), 0));
        let (t, d) = ticks(-0.137, 0.038);
        assert_eq!((t.len(), d), (8, 2), "{t:?}");
        let (t, d) = ticks(-0.15, 0.04);
        assert_eq!((t.len(), d), (4, 2), "{t:?}");
        assert_eq!(round_bound(0.047), 0.05);
        assert_eq!(round_bound(0.05), 0.1);
        assert_eq!(round_bound(3.0), 5.0);
        assert_eq!(decimals_of(0.025), 3);
        assert_eq!(decimals_of(20.0), 0);
    }

    fn accuracy(benchmarks: usize) -> crate::accuracy::Accuracy {
        let names: Vec<String> = (0..benchmarks).map(|i| format!("Bench{i}")).collect();
        let measured: Vec<f64> = (0..benchmarks).map(|i| 1e6 * (1.0 + i as f64 * 0.3)).collect();
        let est = |f: f64| {
            measured
                .iter()
                .enumerate()
                .map(|(i, m)| m * (1.0 + f * (i % 3) as f64))
                .collect()
        };
        crate::accuracy::Accuracy {
            benchmarks: names,
            measured: measured.clone(),
            variants: vec!["model hit".into(), "model-calibrated fifo:2048:16".into()],
            estimates: vec![est(-0.2), est(0.0001)],
            naive_cost: 1.0,
            warnings: vec![],
        }
    }

    #[test]
    fn tiny_errors_are_said_so_in_the_legend_and_the_legend_is_above_the_plot() {
        let dir = tempfile::tempdir().unwrap();
        let a = accuracy(15);
        let files = error_by_variant(&a, &dir.path().join("e")).unwrap();
        let t = texts(&std::fs::read_to_string(&files[0]).unwrap());
        assert!(t.contains(&"calibrated (all |error| &lt; 0.05%)".into()), "{t:?}");
        assert!(t.contains(&"model, cache always hits".into()), "{t:?}");
        // The sign convention, on the plot.
        assert!(
            t.contains(&"benchmark; error = (estimated \u{2212} measured) / measured".into()),
            "{t:?}"
        );
        assert!(t.contains(&"\u{2212}40%".into()), "percent ticks with U+2212: {t:?}");
        assert!(t.contains(&GEOMEAN_CATEGORY.into()), "{t:?}");
        // Its long last category name makes it taller, not its bars shorter.
        let (w, h) = png_size(&files[1]);
        assert!(w == 1000 && (620..=720).contains(&h), "{w} x {h}");
        // Fifteen groups of three bars: no room for the errors.
        let files = measured_vs_estimated(&a, &dir.path().join("m")).unwrap();
        let t = texts(&std::fs::read_to_string(&files[0]).unwrap());
        assert!(
            t.contains(&"benchmark".into()) && t.contains(&"million cycles (log scale)".into()),
            "{t:?}"
        );
        assert!(!t.iter().any(|t| t.ends_with('%')), "{t:?}");
        assert!(files[2].is_file() && std::fs::read(&files[2]).unwrap().starts_with(b"%PDF-"));
        // Four groups: the errors fit, stacked above each group.
        let files = measured_vs_estimated(&accuracy(4), &dir.path().join("m4")).unwrap();
        let t = texts(&std::fs::read_to_string(&files[0]).unwrap());
        assert!(
            t.contains(&"\u{2212}40.0%".into()) && t.contains(&"0.0%".into()),
            "{t:?}"
        );
        // The labels drawn, what they are is said under the axis.
        assert!(
            t.contains(&"benchmark; labels: error = (estimated \u{2212} measured) / measured".into()),
            "{t:?}"
        );
        assert!(!t.iter().any(|t| t.starts_with('-')), "no hyphen for a minus: {t:?}");
    }

    #[test]
    fn many_categories_widen_the_plot_moderately_and_turn_their_names() {
        let dir = tempfile::tempdir().unwrap();
        let names: Vec<String> = (0..61).map(|i| format!("Multianewarray{i}")).collect();
        let files = bar_chart(
            &dir.path().join("r"),
            "Calibration residuals per benchmark",
            "error (%)",
            &names,
            &[Series {
                name: "fitted table".into(),
                values: (0..61).map(|i| (i as f64 - 30.0) / 200.0).collect(),
                labels: None,
                color: color_of_variant(3),
            }],
        )
        .unwrap();
        assert_eq!(png_size(&files[1]), (1360, 843));
        let svg = std::fs::read_to_string(&files[0]).unwrap();
        assert!(svg.contains("rotate(-90,") && !svg.contains("rotate(90,"), "{svg}");
    }
}
