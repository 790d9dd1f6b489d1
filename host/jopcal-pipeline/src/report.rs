//! Reconciling: accuracy tables and plots from measurements and estimates,
//! re-rendering an earlier validate run, and publishing its reviewable files;
//! the regression gate between two measurement sets.

use crate::{locate, Session};
use anyhow::{anyhow, bail, Context, Result};
use jopcal_measure::{atomic, clock, measurements, OutDir};
use jopcal_report::accuracy::{reconcile as reconcile_sets, to_csv, to_latex, to_markdown, Accuracy};
use jopcal_report::estimates::read_estimates;
use jopcal_report::plots;
use std::path::{Path, PathBuf};

/// Writes accuracy.{csv,md,tex} and the plots into `dir`; returns the files.
pub fn write_accuracy(a: &Accuracy, dir: &Path) -> Result<Vec<PathBuf>> {
    let p = dir.join("accuracy.csv");
    atomic::write_atomic(&p, to_csv(a).as_bytes()).with_context(|| format!("writing {}", p.display()))?;
    let mut files = vec![p];
    files.extend(draw_accuracy(a, dir)?);
    Ok(files)
}

/// What is drawn from an accuracy table: `accuracy.md`, `accuracy.tex` and the plots.
fn draw_accuracy(a: &Accuracy, dir: &Path) -> Result<Vec<PathBuf>> {
    let mut files = Vec::new();
    for (name, text) in [("accuracy.md", to_markdown(a)), ("accuracy.tex", to_latex(a))] {
        let p = dir.join(name);
        atomic::write_atomic(&p, text.as_bytes()).with_context(|| format!("writing {}", p.display()))?;
        files.push(p);
    }
    files.extend(plots::measured_vs_estimated(a, &dir.join("plots/measured-vs-estimated")).map_err(|e| anyhow!(e))?);
    files.extend(plots::error_by_variant(a, &dir.join("plots/error-by-estimator")).map_err(|e| anyhow!(e))?);
    Ok(files)
}

/// Reconciles `measured` (a `measurements.csv`) against `estimated` (an
/// `estimates.csv`) into `out` (default `out/reconcile-<time>/`); returns
/// the `accuracy.md` written.
pub fn reconcile(s: Session, measured: &Path, estimated: &Path, out: Option<&Path>) -> Result<PathBuf> {
    let stamp = clock::now_stamp();
    let out = locate::out_dir(out, "reconcile", &stamp)?;
    let rows = measurements::read(measured).map_err(|e| anyhow!(e))?;
    if rows.is_empty() {
        bail!(
            "{}: no measurement rows, only the header: measure first (`jopcal run`), or name another file",
            measured.display()
        );
    }
    let estimates = read_estimates(estimated).map_err(|e| anyhow!(e))?;
    if estimates.is_empty() {
        bail!(
            "{}: no estimate rows, only the header: estimate first (`jopcal estimate`), or name another file",
            estimated.display()
        );
    }
    let acc = reconcile_sets(&rows, &estimates).map_err(|e| anyhow!(e))?;
    for w in &acc.warnings {
        s.say(&format!(" reconcile warning: {w}"));
    }
    let dir = OutDir::prepare(&out, &stamp).with_context(|| format!("preparing {}", out.display()))?;
    write_accuracy(&acc, &dir.path)?;
    for (v, name) in acc.variants.iter().enumerate() {
        s.say(&format!(
            " reconcile {name}: geometric mean |error| {:.3}%",
            acc.geomean_abs_error(v)
        ));
    }
    Ok(dir.join("accuracy.md"))
}

/// Re-renders the tables and plots of the validate run in `from`, and
/// publishes its reviewable files into `publish` when given; returns the
/// `accuracy.md` to read.
pub fn report(s: Session, from: &Path, publish_to: Option<&Path>) -> Result<PathBuf> {
    let m = from.join("measurements.csv");
    let e = from.join("estimates.csv");
    let published = from.join("accuracy.csv");
    let (acc, keep_csv) = if m.is_file() && e.is_file() {
        let measured = measurements::read(&m).map_err(|e| anyhow!(e))?;
        let estimates = read_estimates(&e).map_err(|e| anyhow!(e))?;
        (reconcile_sets(&measured, &estimates).map_err(|e| anyhow!(e))?, false)
    } else if published.is_file() {
        // A published directory (reports/...): its table is the data, kept
        // as it is (its cycles are rounded: errors recomputed from them
        // could differ in the last digit); the rest is drawn from it.
        let text = std::fs::read_to_string(&published).with_context(|| format!("reading {}", published.display()))?;
        let acc = jopcal_report::accuracy::read_csv(&text).map_err(|e| anyhow!("{}: {e}", published.display()))?;
        (acc, true)
    } else {
        bail!(
            "{}: no measurements.csv and estimates.csv here (a validate output directory), nor an accuracy.csv (a published one)",
            from.display()
        );
    };
    let mut files = if keep_csv {
        draw_accuracy(&acc, from)?
    } else {
        write_accuracy(&acc, from)?
    };
    let cal = from.join("calibration.json");
    if cal.is_file() {
        files.extend(crate::calibrate::plot_from_json(
            &cal,
            &from.join("plots/calibration-residuals"),
        )?);
    }
    s.say(&format!(
        "    report re-rendered {} files from {}",
        files.len(),
        from.display()
    ));
    if let Some(dest) = publish_to {
        publish(s, from, dest)?;
        return Ok(dest.join("accuracy.md"));
    }
    Ok(from.join("accuracy.md"))
}

/// The files of a validate run that are published (small, reviewable ones).
/// Those a run lacks (`library-model.toml`, `published.md`) are skipped.
const PUBLISHED: [&str; 9] = [
    "accuracy.md",
    "accuracy.csv",
    "accuracy.tex",
    "summary.json",
    "calibrated.toml",
    "library-model.toml",
    "calibration.json",
    "published.md",
    "plots",
];

/// Copies the published files of `from` into `dest`, each atomically.
fn publish(s: Session, from: &Path, dest: &Path) -> Result<()> {
    std::fs::create_dir_all(dest.join("plots")).with_context(|| format!("creating {}", dest.display()))?;
    // A path into what is published with the file stays as it is.
    let published_with = |rel: &str| PUBLISHED.iter().any(|p| rel.starts_with(&format!("{p}/")));
    for name in PUBLISHED {
        let src = from.join(name);
        if src.is_dir() {
            for e in std::fs::read_dir(&src)? {
                let p = e?.path();
                if p.is_file() {
                    let target = dest.join(name).join(p.file_name().expect("file"));
                    atomic::write_atomic(&target, &std::fs::read(&p)?)?;
                }
            }
        } else if src.is_file() {
            let mut bytes = std::fs::read(&src)?;
            // Paths to other files are relative to where they were written: re-aim them.
            let moved = |rel: &str| {
                if published_with(rel) {
                    rel.to_string()
                } else {
                    jopcal_calibrate::output::relative_base(&from.join(rel), &dest.join(name))
                }
            };
            if name.ends_with(".toml") {
                let text = String::from_utf8_lossy(&bytes).into_owned();
                let carried = jopcal_timing::file::base_is_carried(&text);
                if let Some(base) = jopcal_timing::file::base_of(&text).filter(|_| !carried) {
                    bytes = jopcal_timing::file::rebase(&text, &moved(&base))
                        .with_context(|| format!("reading {}", src.display()))?
                        .into_bytes();
                }
            } else if name == "calibration.json" {
                let mut report = jopcal_calibrate::report::CalibrationReport::read(&src)?;
                report.model_file = moved(&report.model_file);
                bytes = report.to_json().into_bytes();
            }
            atomic::write_atomic(&dest.join(name), &bytes)?;
        }
    }
    s.say(&format!(
        "    report published {} into {}",
        from.display(),
        dest.display()
    ));
    Ok(())
}

/// Two measurement sets compared benchmark by benchmark (`jopcal regress
/// --baseline --candidate`).
pub struct SetsCompared {
    /// One line per benchmark (`!` where it moved past the threshold), then the missing.
    pub text: String,
    /// How the targets that measured the two sets differ (a change may be theirs).
    pub configuration: Vec<String>,
    /// Why the gate fails, if it does.
    pub failure: Option<String>,
}

/// A regression threshold: a percentage, not negative.
pub fn check_threshold(threshold: f64) -> Result<()> {
    if !(threshold.is_finite() && threshold >= 0.0) {
        bail!("--threshold must be a non-negative percentage, not {threshold}");
    }
    Ok(())
}

/// Compares two `measurements.csv`; the JUnit report goes to `junit` (a new
/// file) if given.
pub fn regress_sets(
    baseline: &Path,
    candidate: &Path,
    threshold: f64,
    fail_on: jopcal_report::regress::FailOn,
    junit: Option<&Path>,
) -> Result<SetsCompared> {
    use jopcal_report::regress::{compare, junit as junit_xml};
    check_threshold(threshold)?;
    if let Some(j) = junit {
        jopcal_measure::new_file::ensure_new("--junit", j, &[])?;
    }
    let base = measurements::read(baseline).map_err(|e| anyhow!(e))?;
    let cand = measurements::read(candidate).map_err(|e| anyhow!(e))?;
    let r = compare(&base, &cand, threshold, fail_on).map_err(|e| anyhow!(e))?;
    let configuration = configuration_changes(baseline, candidate)?;
    let mut text = String::new();
    for d in &r.deltas {
        text.push_str(&format!(
            "{}{:<16} {:>14.0} -> {:>14.0} cycles  {:+8.3}%\n",
            if d.regressed { "! " } else { "  " },
            d.benchmark,
            d.baseline,
            d.candidate,
            d.delta_pct
        ));
    }
    for m in &r.missing {
        text.push_str(&format!("! {m}\n"));
    }
    if let Some(j) = junit {
        atomic::write_atomic(j, junit_xml(&r, candidate).as_bytes())
            .with_context(|| format!("writing {}", j.display()))?;
    }
    let failure = r.failed().then(|| {
        let moved: Vec<String> = r
            .deltas
            .iter()
            .filter(|d| d.regressed)
            .map(|d| format!("{} {:+.3}%", d.benchmark, d.delta_pct))
            .chain(r.missing.iter().map(|m| format!("missing {m}")))
            .collect();
        let differ = if configuration.is_empty() {
            String::new()
        } else {
            format!(" (and the targets differ: {})", configuration.join("; "))
        };
        format!(
            "{} benchmark(s) {} by more than {threshold}% or are missing: {}{differ}",
            moved.len(),
            fail_on.verb(),
            moved.join(", ")
        )
    });
    Ok(SetsCompared {
        text,
        configuration,
        failure,
    })
}

/// How the targets that measured the two sets differ, from the `target.json`
/// beside each `measurements.csv` (nothing where either lacks one).
fn configuration_changes(baseline: &Path, candidate: &Path) -> Result<Vec<String>> {
    let facts = |csv: &Path| {
        let dir = csv
            .parent()
            .filter(|p| !p.as_os_str().is_empty())
            .unwrap_or(Path::new("."));
        crate::measure::read_target_facts(dir)
    };
    let (Some(b), Some(c)) = (facts(baseline)?, facts(candidate)?) else {
        return Ok(Vec::new());
    };
    Ok(crate::measure::facts_differences(&b, &c))
}
