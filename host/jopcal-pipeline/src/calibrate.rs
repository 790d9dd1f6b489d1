//! Calibrating: fitting a timing model to measurements, with cross-
//! validation, identifiability and inconsistency reports, into a loadable
//! table, `calibration.json` and the residual plot.

use crate::{Progress, Session};
use anyhow::{anyhow, bail, Context, Result};
use jopcal_calibrate::fit::{
    fit_without_outliers, inconsistencies, leave_one_out, suspects, Fit, FitSpec, Observation,
};
use jopcal_calibrate::output::calibrated_toml;
use jopcal_calibrate::report::CalibrationReport;
use jopcal_measure::{atomic, measurements};
use jopcal_report::number::thousands;
use jopcal_report::plots::{bar_chart_with, Axes, Series};
use jopcal_timing::cache::CacheMode;
use jopcal_timing::TimingModel;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// How many times off the starting table's estimate (either way) a
/// measurement is suspect: a table's errors are percents, not factors.
const SUSPECT_FACTOR: f64 = 10.0;

/// |error| in percent above which a benchmark the other benchmarks cannot
/// explain (also ten times their median |error|) is left out of the fit.
const OUTLIER_PCT: f64 = 5.0;

/// What a calibration produced, for validate's summary.
pub struct Calibration {
    pub fit: Fit,
    pub loo_max_abs_error_pct: Option<f64>,
    /// `(benchmark, error in percent)` of each benchmark predicted by the fit without it.
    pub loo_errors: Vec<(String, f64)>,
    /// `(benchmark, predicted cycles)` of the same predictions.
    pub loo_predicted: Vec<(String, f64)>,
    pub toml: PathBuf,
}

/// Loads measurements and profiles and pairs them by benchmark. With
/// `left_out`, a benchmark without a measurement, without a profile or with an
/// incomplete profile is left out and named there (validate, where a failed
/// workload is already recorded); without it, that is an error.
fn observations(
    measured: &[PathBuf],
    profiles: &[PathBuf],
    mut left_out: Option<&mut Vec<String>>,
) -> Result<Vec<Observation>> {
    let mut meas: BTreeMap<String, Vec<f64>> = BTreeMap::new();
    let mut heaps = BTreeMap::new();
    for m in measured {
        heaps.extend(crate::heap::heap_starts(m)?);
        for r in measurements::read(m).map_err(|e| anyhow!(e))? {
            if r.unit != jopcal_measure::Unit::Cycles {
                bail!(
                    "{}: {} is measured in {}, not cycles: calibrate needs a JOP target",
                    m.display(),
                    r.benchmark,
                    r.unit
                );
            }
            meas.entry(r.benchmark).or_default().push(r.value as f64);
        }
    }
    let mut profs = BTreeMap::new();
    for d in profiles {
        for p in jopcal_profile::read_dir(d)? {
            if !p.complete {
                let why = format!("{}: the profile of {} is incomplete", d.display(), p.benchmark);
                match left_out.as_deref_mut() {
                    Some(l) => {
                        l.push(why);
                        continue;
                    }
                    None => bail!("{why}: profile it again"),
                }
            }
            profs.insert(p.benchmark.clone(), p);
        }
    }
    crate::heap::attach(profs.values_mut(), &heaps);
    let only_measured: Vec<&String> = meas.keys().filter(|b| !profs.contains_key(*b)).collect();
    let only_profiled: Vec<&String> = profs.keys().filter(|b| !meas.contains_key(*b)).collect();
    if let Some(l) = left_out {
        l.extend(only_measured.iter().map(|b| format!("{b}: measured but not profiled")));
        l.extend(only_profiled.iter().map(|b| format!("{b}: profiled but not measured")));
        for b in only_measured.iter().map(|b| b.to_string()).collect::<Vec<_>>() {
            meas.remove(&b);
        }
    } else if !only_measured.is_empty() || !only_profiled.is_empty() {
        bail!(
            "the measurements and the profiles do not cover the same benchmarks (measured only: {}; profiled only: {})",
            list(&only_measured),
            list(&only_profiled)
        );
    }
    Ok(meas
        .into_iter()
        .filter_map(|(b, v)| {
            Some(Observation {
                measured: v.iter().sum::<f64>() / v.len() as f64,
                profile: profs.remove(&b)?,
                benchmark: b,
            })
        })
        .collect())
}

fn list(v: &[&String]) -> String {
    if v.is_empty() {
        "none".into()
    } else {
        v.iter().map(|s| s.as_str()).collect::<Vec<_>>().join(", ")
    }
}

/// What `run_calibration` fits, to what, and where it writes.
pub struct CalibrationRun<'a> {
    pub measured: &'a [PathBuf],
    pub profiles: &'a [PathBuf],
    pub model_path: &'a Path,
    /// Parameters and groups to fit (`r,w,impl_java,cache`).
    pub groups: &'a str,
    /// The cache mode when `cache` is not fitted.
    pub cache: &'a str,
    /// Leave-one-out cross-validation.
    pub loo: bool,
    /// Leave out (and warn about) benchmarks that lack a measurement or a
    /// complete profile, instead of failing.
    pub lenient: bool,
    /// Leave benchmarks that run `synchronized` code out of the fit (JopSim
    /// does not time monitors as the processor does): they
    /// are predicted and reported, not tuned to.
    pub leave_out_synchronized: bool,
    pub out: &'a Path,
    /// The written table's name (default: the starting table's, `-calibrated`).
    pub name: Option<&'a str>,
}

/// What a fit writes beside its table `out`: the report and the residual
/// plot's stem. `calibrated.toml` keeps the plain names (`calibration.json`,
/// `plots/calibration-residuals`); any other table's carry its stem, so
/// that two fits into one directory never collide.
pub fn siblings(out: &Path) -> (PathBuf, PathBuf) {
    let stem = out
        .file_stem()
        .map_or("calibrated".into(), |s| s.to_string_lossy().into_owned());
    if stem == "calibrated" {
        (
            out.with_file_name("calibration.json"),
            out.with_file_name("plots").join("calibration-residuals"),
        )
    } else {
        (
            out.with_file_name(format!("{stem}.calibration.json")),
            out.with_file_name("plots")
                .join(format!("{stem}-calibration-residuals")),
        )
    }
}

/// Fits, cross-validates, writes `out` (the table) and `calibration.json` beside it.
pub fn run_calibration(s: Session, run: &CalibrationRun) -> Result<Calibration> {
    let CalibrationRun {
        measured,
        profiles,
        model_path,
        groups,
        cache,
        loo,
        lenient,
        leave_out_synchronized,
        out,
        name,
    } = *run;
    let (json, plot) = siblings(out);
    jopcal_measure::new_file::ensure_new(
        "--out",
        out,
        &["svg", "png", "pdf"]
            .iter()
            .map(|e| PathBuf::from(format!("{}.{e}", plot.display())))
            .chain([json])
            .collect::<Vec<_>>(),
    )?;
    let start = TimingModel::load(model_path)?;
    let default_cache: CacheMode = cache.parse()?;
    let spec = FitSpec::parse(groups, &start, default_cache).map_err(|e| anyhow!(e))?;
    let mut left_out = Vec::new();
    let obs = observations(measured, profiles, lenient.then_some(&mut left_out))?;
    let refs: Vec<&Observation> = obs.iter().collect();
    let mut warnings: Vec<String> = left_out
        .into_iter()
        .map(|w| format!("left out of the fit: {w}"))
        .collect();
    if obs.len() < spec.params.len() {
        warnings.push(format!(
            "{} benchmarks for {} parameters: the fit cannot identify them all (see the parameters marked not fitted)",
            obs.len(),
            spec.params.len()
        ));
    }
    let progress = s.progress;
    progress.begin("calibrate", if loo { obs.len() as u64 + 1 } else { 1 });
    progress.started(&format!(
        "fitting {} parameter(s) to {} benchmarks",
        spec.params.len(),
        obs.len()
    ));
    let memo = jopcal_calibrate::fit::Memo::default();
    // A benchmark more than 5% off that the others cannot explain is left
    // out of the fit by name rather than moving every parameter.
    let (fit_set, synchronized): (Vec<&Observation>, Vec<&Observation>) = refs
        .iter()
        .partition(|o| !(leave_out_synchronized && o.profile.runs_synchronized_code()));
    for o in &synchronized {
        warnings.push(format!(
            "left out of the fit: {} runs synchronized code, whose monitors JopSim does not time as the processor does (reported, not tuned to)",
            o.benchmark
        ));
    }
    // A measurement no table could produce is named, not fitted to (nor
    // left to the outlier rule, which would call it the model's failing).
    let java_routines = jopcal_calibrate::fit::routine_params(&start);
    let routines: Vec<String> = spec
        .params
        .iter()
        .filter(|p| p.starts_with("lib") || java_routines.contains(p))
        .cloned()
        .collect();
    let suspect = suspects(&fit_set, &start, default_cache, SUSPECT_FACTOR, &routines);
    for x in &suspect {
        let counter = if x.measured > jopcal_calibrate::fit::COUNTER_LIMIT {
            " and more than JOP's 32-bit cycle counter counts"
        } else {
            ""
        };
        let line = format!(
            "suspect measurement, left out of the fit: {} measured {} cycles, {} the starting table's estimate of {}{counter}: no timing table the fit can reach makes that; check its run",
            x.benchmark,
            thousands(x.measured),
            if x.ratio() >= 1.0 {
                format!("{:.0}x", x.ratio())
            } else {
                format!("1/{:.0} of", 1.0 / x.ratio())
            },
            thousands(x.estimated)
        );
        s.say(&format!(" calibrate {line}"));
        warnings.push(line);
    }
    let fit_set: Vec<&Observation> = fit_set
        .into_iter()
        .filter(|o| !suspect.iter().any(|x| x.benchmark == o.benchmark))
        .collect();
    let (f, outliers) = fit_without_outliers(&fit_set, &start, &spec, &memo, OUTLIER_PCT).map_err(|e| anyhow!(e))?;
    for o in &outliers {
        warnings.push(format!(
            "left out of the fit as an outlier: {} ({}% under the fit that included it): the model cannot express what it measures; its leave-one-out prediction is the fit without it",
            o.benchmark,
            jopcal_report::plots::signed(o.error_pct, 1)
        ));
    }
    let kept: Vec<&Observation> = fit_set
        .iter()
        .copied()
        .filter(|o| !outliers.iter().any(|x| x.benchmark == o.benchmark))
        .collect();
    progress.finished(&format!(
        "fit: cache {}, largest |error| {:.4}%",
        f.cache,
        f.max_abs_error_pct()
    ));
    let fitted = f.apply(&start);
    let loo_rows = if loo {
        let fitted_run = FittedRun {
            all: &refs,
            kept: &kept,
            start: &start,
            fitted: &fitted,
            spec: &spec,
            fit: &f,
            memo: &memo,
        };
        Some(out_of_sample(&fitted_run, progress)?)
    } else {
        None
    };
    progress.end();
    let incons = inconsistencies(&refs, &start, &fitted, 5.0);
    warnings.extend(parameter_warnings(&f, &start));
    // The starting table (and what it derives from) goes inside the fitted
    // one: a copy of calibrated.toml alone loads anywhere, whatever becomes
    // of the original; calibration.json names the original.
    let carried = jopcal_timing::file::chain(model_path)?;
    let origin = model_path.canonicalize().unwrap_or_else(|_| model_path.to_path_buf());
    let report = CalibrationReport::new(
        &f,
        &start.name,
        &origin.display().to_string(),
        loo_rows.as_deref(),
        &incons,
        &warnings,
    );
    let loo_max = report.loo_max_abs_error_pct;
    let name = name.map_or_else(|| format!("{}-calibrated", start.name), str::to_string);
    write_calibration(&f, &start, (&carried, &origin), &report, (out, &name))?;
    say_calibration(&s, &f, loo_max, &warnings, &incons);
    Ok(Calibration {
        fit: f,
        loo_max_abs_error_pct: loo_max,
        loo_errors: loo_rows
            .iter()
            .flatten()
            .map(|(b, m, e)| (b.clone(), 100.0 * (e - m) / m))
            .collect(),
        loo_predicted: loo_rows.iter().flatten().map(|(b, _, e)| (b.clone(), *e)).collect(),
        toml: out.to_path_buf(),
    })
}

/// A finished fit and what it was made from, for its out-of-sample checks.
struct FittedRun<'a> {
    /// Every benchmark with a measurement and a profile.
    all: &'a [&'a Observation],
    /// The ones the fit was made from.
    kept: &'a [&'a Observation],
    start: &'a TimingModel,
    fitted: &'a TimingModel,
    spec: &'a FitSpec,
    fit: &'a Fit,
    memo: &'a jopcal_calibrate::fit::Memo,
}

/// Every benchmark's out-of-sample prediction, `(benchmark, measured,
/// predicted)`: leave-one-out for those in the fit, the fit itself for the
/// outliers and synchronized ones it never saw. Shows each as it comes and
/// reports them all, by name, at the end (the fits finish in any order).
fn out_of_sample(run: &FittedRun, progress: &Progress) -> Result<Vec<(String, f64, f64)>> {
    progress.started(&format!(
        "leave-one-out: {} fits, each without one benchmark",
        run.all.len()
    ));
    let on_predicted = |bench: &str, _: f64, _: f64| progress.working_on(&format!("leave-one-out: {bench} done"));
    let cache = run.fit.cache;
    let mut rows = leave_one_out(
        run.kept,
        run.start,
        run.fitted,
        run.spec,
        cache,
        run.memo,
        &on_predicted,
    )
    .map_err(|e| anyhow!(e))?;
    // The outliers and the synchronized ones were not in the fit: it predicts them out of sample.
    for o in run
        .all
        .iter()
        .filter(|o| !run.kept.iter().any(|k| k.benchmark == o.benchmark))
    {
        let predicted = run.memo.tally(o, run.fitted, cache).price(run.fitted);
        rows.push((o.benchmark.clone(), o.measured, predicted));
    }
    rows.sort_by(|a, b| a.0.cmp(&b.0));
    for (bench, measured, predicted) in &rows {
        progress.finished(&format!(
            "leave-one-out {bench}: {}%",
            jopcal_report::plots::signed(100.0 * (predicted - measured) / measured, 3)
        ));
    }
    Ok(rows)
}

/// What a user must know about the fitted parameters: those fitted from one
/// benchmark alone, library methods priced by their host code, parameters
/// the data could not identify.
fn parameter_warnings(f: &Fit, start: &TimingModel) -> Vec<String> {
    let mut warnings = Vec::new();
    for p in f.params.iter().filter(|p| p.value != p.start) {
        if let Some(b) = &p.sole_benchmark {
            warnings.push(format!(
                "{} fitted from {b} alone: no other benchmark depends on it, so nothing checks its value, and the leave-one-out prediction of {b} cannot use it",
                p.name
            ));
        }
    }
    for p in &f.params {
        if let Some(wanted) = p.above_max {
            warnings.push(format!(
                "{} held at its max {}: the fit wanted {}, which no such cost can be (the model's [max]); what the benchmarks that depend on it measure is something the model does not express",
                p.name,
                jopcal_timing::file::number(p.value),
                jopcal_timing::file::number(wanted)
            ));
        }
    }
    let host = f.host_priced(start);
    if !host.is_empty() {
        let names: Vec<&str> = host.iter().map(|(m, _)| m.as_str()).collect();
        warnings.push(format!(
            "{} library method(s) that no benchmark of the fit calls are priced by their host code, not at a guessed per-call cost: {}",
            names.len(),
            names.join(", ")
        ));
    }
    for p in f
        .params
        .iter()
        .filter(|p| p.unidentified.is_some() && !host.iter().any(|(_, q)| *q == p.name))
    {
        warnings.push(format!(
            "{} not fitted: {}",
            p.name,
            p.unidentified.as_deref().unwrap_or("")
        ));
    }
    warnings
}

/// Writes the fitted table to `out` (after checking that it loads),
/// `calibration.json` beside it and the residual plot.
/// `carried`: the starting table and its chain (carried inside the fitted
/// one), and the file it was read from.
fn write_calibration(
    f: &Fit,
    start: &TimingModel,
    (carried, origin): (&[(String, String)], &Path),
    report: &CalibrationReport,
    (out, name): (&Path, &str),
) -> Result<()> {
    // The file's name, not its path: the table reads the same wherever it was made.
    let notes: Vec<String> = std::iter::once(format!(
        "Fitted from the table {} ({}), carried below in [bases]: this file needs no other.",
        start.name,
        origin
            .file_name()
            .map_or(String::new(), |n| n.to_string_lossy().into_owned())
    ))
    .chain(report.warnings.iter().cloned())
    .collect();
    let toml_text = calibrated_toml(f, start, carried, name, report.loo_max_abs_error_pct, &notes);
    // The written table must load: check before anything is published.
    let tmp_check = out.with_extension("toml.check");
    atomic::write_atomic(&tmp_check, toml_text.as_bytes())?;
    let reloaded = TimingModel::load(&tmp_check);
    let _ = std::fs::remove_file(&tmp_check);
    reloaded.with_context(|| "the fitted table does not load (a bug: please report it)")?;
    atomic::write_atomic(out, toml_text.as_bytes()).with_context(|| format!("writing {}", out.display()))?;
    let (json_path, plot_stem) = siblings(out);
    atomic::write_atomic(&json_path, report.to_json().as_bytes())?;
    plot_from_json(&json_path, &plot_stem)?;
    Ok(())
}

/// The calibration's report lines: what was fitted, the errors, the warnings.
fn say_calibration(s: &Session, f: &Fit, loo_max: Option<f64>, warnings: &[String], incons: &[(String, f64, f64)]) {
    let changed: Vec<String> = f
        .params
        .iter()
        .filter(|p| p.unidentified.is_none() && p.value != p.start)
        .map(|p| format!("{}={}", p.name, trim(p.value)))
        .collect();
    s.say(&format!(" calibrate fitted {}", changed.join(" ")));
    s.say(&format!(
        " calibrate largest |error|: fit {:.4}%{}",
        f.max_abs_error_pct(),
        loo_max.map(|l| format!(", leave-one-out {l:.4}%")).unwrap_or_default()
    ));
    for w in warnings {
        s.say(&format!(" calibrate warning: {w}"));
    }
    if !incons.is_empty() {
        s.say(&format!(
            " calibrate the fitted table is more than 5% off the published table on {} opcode{}, e.g. {}",
            incons.len(),
            if incons.len() == 1 { "" } else { "s" },
            incons
                .iter()
                .take(4)
                .map(|(o, a, b)| format!("{o} {a:.0} -> {b:.0} cycles"))
                .collect::<Vec<_>>()
                .join(", ")
        ));
    }
}

fn trim(v: f64) -> String {
    if v.fract() == 0.0 {
        format!("{v:.0}")
    } else {
        format!("{v:.3}")
    }
}

/// Draws the residual plot of a `calibration.json`; returns the files written.
pub fn plot_from_json(json_path: &Path, stem: &Path) -> Result<Vec<PathBuf>> {
    let report = CalibrationReport::read(json_path)?;
    let names: Vec<String> = report.fit.iter().map(|r| r.benchmark.clone()).collect();
    // The fitted table has the colour of the calibrated estimator in validate's
    // plots (the fourth variant, after the published table's three cache modes:
    // blue); the leave-one-out predictions beside it the first variant's
    // (orange), far from it in hue and in greyscale.
    let mut series = vec![Series {
        name: "fitted table".into(),
        values: report.fit.iter().map(|r| r.error_pct).collect(),
        labels: None,
        color: jopcal_report::plots::color_of_variant(3),
    }];
    if report.loo.is_some() {
        series.push(Series {
            name: "leave-one-out prediction".into(),
            values: names.iter().map(|n| report.loo_error_pct(n).unwrap_or(0.0)).collect(),
            labels: None,
            color: jopcal_report::plots::color_of_variant(0),
        });
    }
    // "(%)": a percent axis, its ticks with a % sign.
    bar_chart_with(
        stem,
        "Calibration residuals per benchmark",
        &Axes {
            x_desc: "benchmark; error = (estimated \u{2212} measured) / measured".into(),
            y_desc: "error".into(),
            percent: true,
            ..Axes::default()
        },
        &names,
        &series,
    )
    .map_err(|e| anyhow!(e))
}
