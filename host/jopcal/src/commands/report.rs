//! `jopcal reconcile` and `jopcal report` (stages of `jopcal_pipeline::report`),
//! and `jopcal regress`: the regression gate between two measurement sets.

use crate::cli::{ReconcileArgs, RegressArgs, ReportArgs};
use anyhow::{anyhow, bail, Context, Result};
use jopcal_measure::{atomic, measurements};
use jopcal_pipeline::Session;
use jopcal_report::regress::{compare, junit};

pub fn reconcile(s: Session, a: &ReconcileArgs) -> Result<()> {
    let md = jopcal_pipeline::report::reconcile(s, &a.measured, &a.estimates, a.out.as_deref())?;
    println!("{}", md.display());
    Ok(())
}

pub fn report(s: Session, a: &ReportArgs) -> Result<()> {
    let md = jopcal_pipeline::report::report(s, &a.from, a.publish.as_deref())?;
    println!("{}", md.display());
    Ok(())
}

pub fn regress(a: &RegressArgs) -> Result<()> {
    if !(a.threshold.is_finite() && a.threshold >= 0.0) {
        bail!("--threshold must be a non-negative percentage, not {}", a.threshold);
    }
    if let Some(j) = &a.junit {
        jopcal_measure::new_file::ensure_new("--junit", j, &[])?;
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
