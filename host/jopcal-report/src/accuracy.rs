//! Reconciliation: measured against estimated cycles, per benchmark and per
//! estimator variant, with a naive baseline (every bytecode at one average
//! cost, fitted to the other benchmarks' measurements: scored out of sample,
//! like every estimate here) so the model's value is visible. Rendered
//! like the published tables: benchmarks as rows, variants then the
//! measurement as columns, million cycles, and a last row with the geometric
//! mean of |error| (the LaTeX table, for a paper's column: the measurement,
//! then each estimator's error only, with booktabs rules).

use crate::error::ReconcileError;
use crate::estimates::EstimateRow;
use jopcal_measure::Measurement;
use std::collections::BTreeMap;

/// The naive baseline's variant name.
pub const NAIVE: &str = "naive (one average cost per bytecode)";

/// The reconciled table.
#[derive(Debug, Clone, PartialEq)]
pub struct Accuracy {
    /// Benchmarks in the measurements' order.
    pub benchmarks: Vec<String>,
    /// Mean measured cycles per benchmark.
    pub measured: Vec<f64>,
    /// Estimator variants; the naive baseline is last.
    pub variants: Vec<String>,
    /// `estimates[v][b]`.
    pub estimates: Vec<Vec<f64>>,
    /// Average cycles per bytecode over all benchmarks (the naive baseline
    /// scores each benchmark with the average of the others).
    pub naive_cost: f64,
    /// Warnings (benchmarks without estimates or without measurements).
    pub warnings: Vec<String>,
}

impl Accuracy {
    pub fn error_pct(&self, v: usize, b: usize) -> f64 {
        100.0 * (self.estimates[v][b] - self.measured[b]) / self.measured[b]
    }

    /// Geometric mean of |error| of variant `v` (errors below 0.001% count as 0.001%).
    pub fn geomean_abs_error(&self, v: usize) -> f64 {
        let n = self.benchmarks.len().max(1) as f64;
        let s: f64 = (0..self.benchmarks.len())
            .map(|b| self.error_pct(v, b).abs().max(1e-3).ln())
            .sum();
        (s / n).exp()
    }

    /// The benchmark with the largest |error| of variant `v`, and that error:
    /// the figure a geometric mean hides.
    pub fn worst(&self, v: usize) -> Option<(&str, f64)> {
        (0..self.benchmarks.len())
            .map(|b| (self.benchmarks[b].as_str(), self.error_pct(v, b)))
            .filter(|(_, e)| e.is_finite())
            // The first of equal errors.
            .fold(None, |best: Option<(&str, f64)>, x| match best {
                Some(b) if b.1.abs() >= x.1.abs() => Some(b),
                _ => Some(x),
            })
    }
}

/// Reconciles `measured` (unit cycles) with `estimates`. Benchmarks only on one
/// side are left out with a warning; none in common is an error.
pub fn reconcile(measured: &[Measurement], estimates: &[EstimateRow]) -> Result<Accuracy, ReconcileError> {
    let mut by_bench: BTreeMap<&str, Vec<f64>> = BTreeMap::new();
    let mut order: Vec<String> = Vec::new();
    for m in measured {
        if m.unit != jopcal_measure::Unit::Cycles {
            return Err(ReconcileError::NotCycles {
                benchmark: m.benchmark.clone(),
                unit: m.unit,
            });
        }
        if !by_bench.contains_key(m.benchmark.as_str()) {
            order.push(m.benchmark.clone());
        }
        by_bench.entry(&m.benchmark).or_default().push(m.value as f64);
    }
    let mut variants: Vec<String> = Vec::new();
    for e in estimates {
        if !variants.contains(&e.variant()) {
            variants.push(e.variant());
        }
    }
    let mut warnings = Vec::new();
    let estimated: std::collections::BTreeSet<&str> = estimates.iter().map(|e| e.benchmark.as_str()).collect();
    for b in &estimated {
        if !by_bench.contains_key(b) {
            warnings.push(format!("{b} has estimates but no measurement: left out"));
        }
    }
    let mut benchmarks = Vec::new();
    let mut measured_mean = Vec::new();
    let mut bytecodes = Vec::new();
    for b in order {
        if !estimated.contains(b.as_str()) {
            warnings.push(format!("{b} was measured but has no estimate: left out"));
            continue;
        }
        let v = &by_bench[b.as_str()];
        measured_mean.push(v.iter().sum::<f64>() / v.len() as f64);
        bytecodes.push(estimates.iter().find(|e| e.benchmark == b).map_or(0, |e| e.bytecodes));
        benchmarks.push(b);
    }
    if benchmarks.is_empty() {
        return Err(ReconcileError::NothingInCommon);
    }
    let mut table = Vec::new();
    for v in &variants {
        let mut col = Vec::new();
        for b in &benchmarks {
            match estimates.iter().find(|e| &e.benchmark == b && &e.variant() == v) {
                Some(e) => col.push(e.cycles),
                None => {
                    return Err(ReconcileError::MissingEstimate {
                        variant: v.clone(),
                        benchmark: b.clone(),
                    })
                }
            }
        }
        table.push(col);
    }
    let total_bc: u64 = bytecodes.iter().sum();
    let total_cycles: f64 = measured_mean.iter().sum();
    let naive_cost = total_cycles / total_bc.max(1) as f64;
    if benchmarks.len() < 2 {
        warnings.push("no naive baseline: it is fitted on the other benchmarks, and there is only one".into());
    } else {
        table.push(
            bytecodes
                .iter()
                .zip(&measured_mean)
                .map(|(&n, &cycles)| {
                    let others_bc = (total_bc - n).max(1) as f64;
                    n as f64 * (total_cycles - cycles) / others_bc
                })
                .collect(),
        );
        variants.push(NAIVE.to_string());
    }
    Ok(Accuracy {
        benchmarks,
        measured: measured_mean,
        variants,
        estimates: table,
        naive_cost,
        warnings,
    })
}

fn mc(x: f64) -> String {
    format!("{:.3}", x / 1e6)
}

/// `benchmark, measured_cycles, <variant>_cycles, <variant>_error_pct, ...`;
/// then a row `geomean_abs_error_pct` and a row `max_abs_error_pct` (the worst
/// benchmark's |error|; its name in the cycles column).
/// The table `accuracy.csv` holds ([`to_csv`]), read back: what a published
/// directory keeps, from which its tables and plots are drawn again. The
/// naive baseline's average cost is not in the file (0 here). An error
/// names the line and what is wrong with it.
pub fn read_csv(text: &str) -> Result<Accuracy, crate::error::AccuracyCsvError> {
    let at = |line: usize, message: String| crate::error::AccuracyCsvError { line, message };
    let mut r = csv::ReaderBuilder::new().flexible(true).from_reader(text.as_bytes());
    let head: Vec<String> = r
        .headers()
        .map_err(|e| at(1, e.to_string()))?
        .iter()
        .map(str::to_string)
        .collect();
    if head.len() < 2 || head[0] != "benchmark" || head[1] != "measured_cycles" || !head.len().is_multiple_of(2) {
        return Err(at(
            1,
            "not the header accuracy.csv has (benchmark, measured_cycles, then <variant> cycles and <variant> error_pct)".into(),
        ));
    }
    let mut variants = Vec::new();
    for (k, pair) in head[2..].chunks(2).enumerate() {
        let v = pair[0]
            .strip_suffix(" cycles")
            .filter(|v| pair[1].strip_suffix(" error_pct") == Some(*v))
            .ok_or_else(|| {
                at(
                    1,
                    format!(
                        "column {}: `{}` and `{}` are not a variant's cycles and error_pct",
                        3 + 2 * k,
                        pair[0],
                        pair[1]
                    ),
                )
            })?;
        variants.push(v.to_string());
    }
    let mut a = Accuracy {
        benchmarks: Vec::new(),
        measured: Vec::new(),
        estimates: vec![Vec::new(); variants.len()],
        variants,
        naive_cost: 0.0,
        warnings: Vec::new(),
    };
    for (i, row) in r.records().enumerate() {
        let line = i + 2;
        let row = row.map_err(|e| at(line, e.to_string()))?;
        let name = row.get(0).unwrap_or("");
        if name == "geomean_abs_error_pct" || name == "max_abs_error_pct" {
            continue;
        }
        let number = |col: usize| {
            let cell = row.get(col).unwrap_or("");
            cell.parse::<f64>()
                .ok()
                .filter(|x| x.is_finite())
                .ok_or_else(|| at(line, format!("column {}: `{cell}` is not a number of cycles", col + 1)))
        };
        a.benchmarks.push(name.to_string());
        a.measured.push(number(1)?);
        for v in 0..a.variants.len() {
            let cycles = number(2 + 2 * v)?;
            a.estimates[v].push(cycles);
        }
    }
    Ok(a)
}

pub fn to_csv(a: &Accuracy) -> String {
    let mut w = csv::Writer::from_writer(Vec::new());
    let mut head = vec!["benchmark".to_string(), "measured_cycles".to_string()];
    for v in &a.variants {
        head.push(format!("{v} cycles"));
        head.push(format!("{v} error_pct"));
    }
    w.write_record(&head).expect("in memory");
    for (b, name) in a.benchmarks.iter().enumerate() {
        let mut row = vec![name.clone(), format!("{:.0}", a.measured[b])];
        for v in 0..a.variants.len() {
            row.push(format!("{:.0}", a.estimates[v][b]));
            row.push(format!("{:.3}", a.error_pct(v, b)));
        }
        w.write_record(&row).expect("in memory");
    }
    let mut row = vec!["geomean_abs_error_pct".to_string(), String::new()];
    for v in 0..a.variants.len() {
        row.push(String::new());
        row.push(format!("{:.3}", a.geomean_abs_error(v)));
    }
    w.write_record(&row).expect("in memory");
    let mut row = vec!["max_abs_error_pct".to_string(), String::new()];
    for v in 0..a.variants.len() {
        let (name, e) = a.worst(v).unwrap_or(("", f64::NAN));
        row.push(name.to_string());
        row.push(format!("{:.3}", e.abs()));
    }
    w.write_record(&row).expect("in memory");
    String::from_utf8(w.into_inner().expect("in memory")).expect("utf-8")
}

/// Markdown: million cycles, the error in parentheses.
pub fn to_markdown(a: &Accuracy) -> String {
    let mut s = String::from("| benchmark |");
    for v in &a.variants {
        s.push_str(&format!(" {v} |"));
    }
    s.push_str(" measured |\n|---|");
    for _ in &a.variants {
        s.push_str("---:|");
    }
    s.push_str("---:|\n");
    for (b, name) in a.benchmarks.iter().enumerate() {
        s.push_str(&format!("| {name} |"));
        for v in 0..a.variants.len() {
            s.push_str(&format!(
                " {} ({}%) |",
                mc(a.estimates[v][b]),
                crate::number::signed(a.error_pct(v, b), 2)
            ));
        }
        s.push_str(&format!(" {} |\n", mc(a.measured[b])));
    }
    s.push_str("| geometric mean of \\|error\\| |");
    for v in 0..a.variants.len() {
        s.push_str(&format!(" {:.2}% |", a.geomean_abs_error(v)));
    }
    s.push_str(" |\n| worst \\|error\\| |");
    for v in 0..a.variants.len() {
        match a.worst(v) {
            Some((name, e)) => s.push_str(&format!(" {}% ({name}) |", crate::number::signed(e, 2))),
            None => s.push_str(" |"),
        }
    }
    s.push_str(" |\n\nMillion cycles; in parentheses the estimate's error against the measurement.\n");
    s
}

fn tex_escape(s: &str) -> String {
    s.replace('\\', "\\textbackslash{}")
        .replace('_', "\\_")
        .replace('%', "\\%")
        .replace('&', "\\&")
        .replace('#', "\\#")
}

/// LaTeX tabular with booktabs rules, narrow enough for one column of a
/// two-column paper at `\footnotesize`: the benchmark, the measured cycles
/// (millions), then only each estimator's error against the measurement
/// (percent), under short headers named in the comments above the table,
/// and a last row with each estimator's geometric mean |error|.
pub fn to_latex(a: &Accuracy) -> String {
    /// A signed number for LaTeX: `$-$` for a minus (a hyphen sets as a
    /// hyphen), `+` for a plus, no sign on a zero.
    fn tex_signed(x: f64, decimals: usize) -> String {
        let s = crate::number::signed(x, decimals);
        match s.strip_prefix('-') {
            Some(rest) => format!("$-${rest}"),
            None => s,
        }
    }

    /// Decimals of an estimator's error column: two significant digits of its
    /// geometric mean |error| (one decimal at 1% and above, at most three).
    fn error_decimals(geomean_pct: f64) -> usize {
        if geomean_pct.is_finite() && geomean_pct > 0.0 {
            (1.0 - geomean_pct.log10().floor()).clamp(1.0, 3.0) as usize
        } else {
            1
        }
    }

    /// Estimator names this long or shorter head their columns; longer ones
    /// make every column headed by a letter, (a), (b), ..., named in the comments.
    const HEADER_CHARS: usize = 7;

    let nv = a.variants.len();
    let short = a.variants.iter().all(|v| v.chars().count() <= HEADER_CHARS);
    let key = |v: usize| -> String {
        let letter = char::from(b'a' + (v % 26) as u8);
        if v < 26 {
            format!("({letter})")
        } else {
            format!("({letter}{})", v / 26)
        }
    };
    let header = |v: usize| -> String {
        if short {
            tex_escape(&a.variants[v])
        } else {
            key(v)
        }
    };
    let mut s = String::from("% needs \\usepackage{booktabs}\n");
    s.push_str("% measured: mean cycles on the target, in millions (Mcycles).\n");
    if nv > 0 {
        s.push_str("% error: (estimate - measured) / measured, in percent, of each estimator:\n");
        for (v, name) in a.variants.iter().enumerate() {
            let name = name.replace(['\n', '\r'], " ");
            if short {
                s.push_str(&format!("%   {name}\n"));
            } else {
                s.push_str(&format!("%   {} {name}\n", key(v)));
            }
        }
        s.push_str("% Last rows: the geometric mean of each estimator's |error|, and its largest |error|.\n");
    }
    // Columns 8pt apart rather than 12pt (no \tabcolsep to set and leak).
    let sep = "@{\\hspace{8pt}}";
    s.push_str(&format!("\\begin{{tabular}}{{@{{}}l{sep}r"));
    for _ in 0..nv {
        s.push_str(&format!("{sep}r"));
    }
    s.push_str("@{}}\n\\toprule\n");
    if nv > 0 {
        s.push_str(&format!(
            " & measured & \\multicolumn{{{nv}}}{{c@{{}}}}{{error (\\%)}} \\\\\n\\cmidrule(l){{3-{}}}\n",
            nv + 2
        ));
        s.push_str("benchmark & (Mcycles)");
        for v in 0..nv {
            s.push_str(&format!(" & {}", header(v)));
        }
    } else {
        s.push_str("benchmark & measured (Mcycles)");
    }
    s.push_str(" \\\\\n\\midrule\n");
    let decimals: Vec<usize> = (0..nv).map(|v| error_decimals(a.geomean_abs_error(v))).collect();
    for (b, name) in a.benchmarks.iter().enumerate() {
        s.push_str(&format!("{} & {}", tex_escape(name), mc(a.measured[b])));
        for (v, d) in decimals.iter().enumerate() {
            s.push_str(&format!(" & {}", tex_signed(a.error_pct(v, b), *d)));
        }
        s.push_str(" \\\\\n");
    }
    if nv > 0 {
        s.push_str("\\midrule\ngeo.\\ mean &");
        for (v, d) in decimals.iter().enumerate() {
            s.push_str(&format!(" & {:.*}", *d, a.geomean_abs_error(v)));
        }
        s.push_str(" \\\\\nworst &");
        for (v, d) in decimals.iter().enumerate() {
            let e = a.worst(v).map_or(f64::NAN, |(_, e)| e.abs());
            s.push_str(&format!(" & {:.*}", *d, e));
        }
        s.push_str(" \\\\\n");
    }
    s.push_str("\\bottomrule\n\\end{tabular}\n");
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn accuracy_csv_reads_back_and_bad_lines_are_named() {
        let a = Accuracy {
            benchmarks: vec!["A".into(), "B".into()],
            measured: vec![1000.0, 2000.0],
            variants: vec!["t hit".into(), NAIVE.into()],
            estimates: vec![vec![900.0, 2100.0], vec![1500.0, 1500.0]],
            naive_cost: 0.0,
            warnings: vec![],
        };
        let text = to_csv(&a);
        assert_eq!(read_csv(&text).unwrap(), a);
        let bad = text.replace("A,1000", "A,lots");
        assert_eq!(
            read_csv(&bad).unwrap_err().to_string(),
            "line 2: column 2: `lots` is not a number of cycles"
        );
        assert_eq!(read_csv("benchmark,x\n").unwrap_err().line, 1);
    }
    use jopcal_measure::Unit;

    fn m(b: &str, c: u64) -> Measurement {
        crate::testutil::measurement(b, c)
    }

    fn e(b: &str, cache: &str, c: f64, n: u64) -> EstimateRow {
        EstimateRow {
            benchmark: b.into(),
            model: "m".into(),
            cache_mode: cache.into(),
            cycles: c,
            bytecodes: n,
            java_dispatch_cycles: 0.0,
            java_routine_cycles: 0.0,
            invoke_return_cycles: 0.0,
            cache_hits: 0,
            cache_misses: 0,
            profile_complete: true,
        }
    }

    #[test]
    fn errors_geomean_and_naive_baseline() {
        let meas = [m("A", 1000), m("B", 2000), m("A", 1200)];
        let est = [
            e("A", "hit", 1210.0, 100),
            e("B", "hit", 1800.0, 300),
            e("C", "hit", 5.0, 1),
        ];
        let a = reconcile(&meas, &est).unwrap();
        assert_eq!(a.benchmarks, vec!["A", "B"]);
        assert_eq!(a.measured, vec![1100.0, 2000.0]);
        assert!((a.error_pct(0, 0) - 10.0).abs() < 1e-9);
        assert!((a.error_pct(0, 1) + 10.0).abs() < 1e-9);
        assert!((a.geomean_abs_error(0) - 10.0).abs() < 1e-9);
        // Naive: 3100 cycles over 400 bytecodes in all; each benchmark is
        // scored with the others' average (A: 2000/300, B: 1100/100).
        assert_eq!(a.naive_cost, 7.75);
        assert!((a.estimates[1][0] - 100.0 * 2000.0 / 300.0).abs() < 1e-9);
        assert_eq!(a.estimates[1][1], 3300.0);
        assert_eq!(a.warnings, vec!["C has estimates but no measurement: left out"]);
        let md = to_markdown(&a);
        assert!(md.contains("| A | 0.001 (+10.00%) | 0.001 (-39.39%) | 0.001 |"), "{md}");
        // One benchmark: no baseline to fit, and none pretended.
        let one = reconcile(&meas[..1], &est[..1]).unwrap();
        assert_eq!(one.variants, vec!["m hit"]);
        assert!(one.warnings[0].starts_with("no naive baseline"), "{:?}", one.warnings);
        let csv = to_csv(&a);
        let last: Vec<&str> = csv.lines().rev().take(2).collect();
        assert!(last[1].starts_with("geomean_abs_error_pct,,,10.000,"), "{csv}");
        // The worst benchmark beside the mean: A and B are both 10% off, A first.
        assert!(last[0].starts_with("max_abs_error_pct,,A,10.000,"), "{csv}");
        assert!(md.contains("| worst \\|error\\| | +10.00% (A) |"), "{md}");
        let skewed = Accuracy {
            estimates: vec![vec![1100.0, 1000.0]],
            variants: vec!["m hit".into()],
            ..a.clone()
        };
        assert_eq!(skewed.worst(0), Some(("B", -50.0)));
        let tex = to_latex(&a);
        assert!(tex.starts_with("% needs \\usepackage{booktabs}\n"), "{tex}");
        assert!(tex.contains("\\toprule") && tex.contains("\\bottomrule"), "{tex}");
    }

    /// The lines of a LaTeX text that are not comments.
    fn tex_body(tex: &str) -> Vec<&str> {
        tex.lines().filter(|l| !l.starts_with('%')).collect()
    }

    #[test]
    fn latex_is_one_column_wide_with_booktabs_units_and_minus_signs() {
        let meas = [m("Sieve", 2_552_462), m("Sort", 1_414_515), m("Fib", 1_054_010)];
        let est = [
            e("Sieve", "hit", 2_173_815.0, 100),
            e("Sort", "hit", 1_188_281.0, 300),
            e("Fib", "hit", 1_120_992.0, 50),
            e("Sieve", "fifo:2048:16", 2_552_345.0, 100),
            e("Sort", "fifo:2048:16", 1_414_398.0, 300),
            e("Fib", "fifo:2048:16", 1_053_893.0, 50),
        ];
        let a = reconcile(&meas, &est).unwrap();
        assert_eq!(a.variants, vec!["m hit", "m fifo:2048:16", NAIVE]);
        let tex = to_latex(&a);
        let lines: Vec<&str> = tex.lines().collect();
        assert_eq!(lines[0], "% needs \\usepackage{booktabs}");
        let body = tex_body(&tex);
        // The benchmark, the measurement, one error column per estimator.
        assert_eq!(
            body[0],
            "\\begin{tabular}{@{}l@{\\hspace{8pt}}r@{\\hspace{8pt}}r@{\\hspace{8pt}}r@{\\hspace{8pt}}r@{}}"
        );
        assert_eq!(body[1], "\\toprule");
        assert_eq!(body[2], " & measured & \\multicolumn{3}{c@{}}{error (\\%)} \\\\");
        assert_eq!(body[3], "\\cmidrule(l){3-5}");
        // Long names: letters, named in the comments.
        assert_eq!(body[4], "benchmark & (Mcycles) & (a) & (b) & (c) \\\\");
        assert!(tex.contains("%   (b) m fifo:2048:16\n"), "{tex}");
        assert_eq!(body[5], "\\midrule");
        // One decimal for errors of percents, three for the calibrated
        // estimator's hundredths; `$-$` for a minus, never a hyphen.
        assert_eq!(body[6], "Sieve & 2.552 & $-$14.8 & $-$0.005 & $-$72.4 \\\\");
        assert_eq!(body[8], "Fib & 1.054 & +6.4 & $-$0.011 & $-$53.0 \\\\");
        assert_eq!(body[10], "geo.\\ mean & & 11.5 & 0.007 & 116.2 \\\\");
        assert_eq!(body[11], "worst & & 16.0 & 0.011 & 409.9 \\\\");
        assert_eq!(&body[12..], ["\\bottomrule", "\\end{tabular}"]);
        for l in &body {
            let cells: Vec<&str> = l.split('&').collect();
            assert!(
                cells.iter().all(|c| !c.trim_start().starts_with('-')),
                "a hyphen for a minus: {l}"
            );
            if l.ends_with("\\\\") && !l.contains("multicolumn") {
                assert_eq!(cells.len(), 5, "{l}");
            }
        }
        // Short names head their columns themselves.
        let mut short = a.clone();
        short.variants = vec!["hit".into(), "FIFO".into(), "naive".into()];
        let tex = to_latex(&short);
        assert!(
            tex_body(&tex).contains(&"benchmark & (Mcycles) & hit & FIFO & naive \\\\"),
            "{tex}"
        );
    }

    #[test]
    fn nothing_in_common_and_time_units_are_errors() {
        assert!(reconcile(&[m("A", 1)], &[e("B", "hit", 1.0, 1)])
            .unwrap_err()
            .to_string()
            .contains("no benchmark in common"));
        let mut ns = m("A", 1);
        ns.unit = Unit::Ns;
        assert!(reconcile(&[ns], &[e("A", "hit", 1.0, 1)])
            .unwrap_err()
            .to_string()
            .contains("not cycles"));
    }
}
