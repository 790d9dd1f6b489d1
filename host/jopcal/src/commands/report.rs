//! `jopcal reconcile`, `jopcal regress` and `jopcal report`: accuracy tables
//! and plots from measurements and estimates, the regression gate, and
//! re-rendering an earlier validate run.

use crate::cli::{ReconcileArgs, RegressArgs, ReportArgs};
use crate::context;
use anyhow::{anyhow, bail, Context, Result};
use jopcal_measure::{atomic, clock, measurements, OutDir};
use jopcal_report::accuracy::{reconcile as reconcile_sets, to_csv, to_latex, to_markdown, Accuracy};
use jopcal_report::estimates::read_estimates;
use jopcal_report::plots;
use jopcal_report::regress::{compare, junit};
use std::path::{Path, PathBuf};

/// Writes accuracy.{csv,md,tex} and the plots into `dir`; returns the files.
pub fn write_accuracy(a: &Accuracy, dir: &Path) -> Result<Vec<PathBuf>> {
    let mut files = Vec::new();
    for (name, text) in [
        ("accuracy.csv", to_csv(a)),
        ("accuracy.md", to_markdown(a)),
        ("accuracy.tex", to_latex(a)),
    ] {
        let p = dir.join(name);
        atomic::write_atomic(&p, text.as_bytes()).with_context(|| format!("writing {}", p.display()))?;
        files.push(p);
    }
    files.extend(plots::measured_vs_estimated(a, &dir.join("plots/measured-vs-estimated")).map_err(|e| anyhow!(e))?);
    files.extend(plots::error_by_variant(a, &dir.join("plots/error-by-estimator")).map_err(|e| anyhow!(e))?);
    Ok(files)
}

pub fn reconcile(a: &ReconcileArgs) -> Result<()> {
    let stamp = clock::now_stamp();
    let out = context::out_dir(a.out.as_deref(), "reconcile", &stamp)?;
    let measured = measurements::read(&a.measured).map_err(|e| anyhow!(e))?;
    if measured.is_empty() {
        bail!(
            "{}: no measurement rows, only the header: measure first (`jopcal run`), or name another file",
            a.measured.display()
        );
    }
    let estimates = read_estimates(&a.estimates).map_err(|e| anyhow!(e))?;
    if estimates.is_empty() {
        bail!(
            "{}: no estimate rows, only the header: estimate first (`jopcal estimate`), or name another file",
            a.estimates.display()
        );
    }
    let acc = reconcile_sets(&measured, &estimates).map_err(|e| anyhow!(e))?;
    for w in &acc.warnings {
        eprintln!("  reconcile warning: {w}");
    }
    let dir = OutDir::prepare(&out, &stamp).with_context(|| format!("preparing {}", out.display()))?;
    write_accuracy(&acc, &dir.path)?;
    for (v, name) in acc.variants.iter().enumerate() {
        eprintln!(
            "  reconcile {name}: geometric mean |error| {:.3}%",
            acc.geomean_abs_error(v)
        );
    }
    println!("{}", dir.join("accuracy.md").display());
    Ok(())
}

pub fn regress(a: &RegressArgs) -> Result<()> {
    if !(a.threshold.is_finite() && a.threshold >= 0.0) {
        bail!("--threshold must be a non-negative percentage, not {}", a.threshold);
    }
    let base = measurements::read(&a.baseline).map_err(|e| anyhow!(e))?;
    let cand = measurements::read(&a.candidate).map_err(|e| anyhow!(e))?;
    let r = compare(&base, &cand, a.threshold).map_err(|e| anyhow!(e))?;
    for d in &r.deltas {
        println!(
            "{}{:<16} {:>14.0} -> {:>14.0} cycles  {:+8.3}%",
            if d.regressed { "! " } else { "  " },
            d.benchmark,
            d.baseline,
            d.candidate,
            d.delta_pct
        );
    }
    for m in &r.missing {
        println!("! {m}");
    }
    if let Some(j) = &a.junit {
        atomic::write_atomic(j, junit(&r, &a.candidate).as_bytes())
            .with_context(|| format!("writing {}", j.display()))?;
    }
    if r.failed() {
        let moved: Vec<String> = r
            .deltas
            .iter()
            .filter(|d| d.regressed)
            .map(|d| format!("{} {:+.3}%", d.benchmark, d.delta_pct))
            .chain(r.missing.iter().map(|m| format!("missing {m}")))
            .collect();
        bail!(
            "{} benchmark(s) moved more than {}% or are missing: {}",
            moved.len(),
            a.threshold,
            moved.join(", ")
        );
    }
    Ok(())
}

pub fn report(a: &ReportArgs) -> Result<()> {
    let m = a.from.join("measurements.csv");
    let e = a.from.join("estimates.csv");
    if !m.is_file() || !e.is_file() {
        bail!(
            "{}: no measurements.csv and estimates.csv here (not a validate output directory)",
            a.from.display()
        );
    }
    let measured = measurements::read(&m).map_err(|e| anyhow!(e))?;
    let estimates = read_estimates(&e).map_err(|e| anyhow!(e))?;
    let acc = reconcile_sets(&measured, &estimates).map_err(|e| anyhow!(e))?;
    let mut files = write_accuracy(&acc, &a.from)?;
    let cal = a.from.join("calibration.json");
    if cal.is_file() {
        files.extend(crate::commands::calibrate::plot_from_json(
            &cal,
            &a.from.join("plots/calibration-residuals"),
        )?);
    }
    eprintln!("    report re-rendered {} files from {}", files.len(), a.from.display());
    if let Some(dest) = &a.publish {
        publish(&a.from, dest)?;
        println!("{}", dest.join("accuracy.md").display());
        return Ok(());
    }
    println!("{}", a.from.join("accuracy.md").display());
    Ok(())
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
fn publish(from: &Path, dest: &Path) -> Result<()> {
    std::fs::create_dir_all(dest.join("plots")).with_context(|| format!("creating {}", dest.display()))?;
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
            let moved = |rel: &str| jopcal_calibrate::output::relative_base(&from.join(rel), &dest.join(name));
            if name.ends_with(".toml") {
                let text = String::from_utf8_lossy(&bytes).into_owned();
                if let Some(base) = base_of(&text) {
                    bytes = rewrite_base(&text, &moved(&base)).into_bytes();
                }
            } else if name == "calibration.json" {
                // Only that one value changes: the rest is copied byte for byte.
                let v: serde_json::Value =
                    serde_json::from_slice(&bytes).with_context(|| format!("reading {}", src.display()))?;
                if let Some(f) = v.get("model_file").and_then(|f| f.as_str()) {
                    let (old, new) = (
                        format!("\"model_file\": {}", serde_json::Value::from(f)),
                        format!("\"model_file\": {}", serde_json::Value::from(moved(f))),
                    );
                    bytes = String::from_utf8_lossy(&bytes).replacen(&old, &new, 1).into_bytes();
                }
            }
            atomic::write_atomic(&dest.join(name), &bytes)?;
        }
    }
    eprintln!("    report published {} into {}", from.display(), dest.display());
    Ok(())
}

fn base_of(toml: &str) -> Option<String> {
    toml.lines()
        .find_map(|l| l.strip_prefix("base = \""))
        .map(|r| r.trim_end_matches('"').to_string())
}

fn rewrite_base(toml: &str, base: &str) -> String {
    toml.lines()
        .map(|l| {
            if l.starts_with("base = \"") {
                format!("base = \"{base}\"")
            } else {
                l.to_string()
            }
        })
        .collect::<Vec<_>>()
        .join("\n")
        + "\n"
}
