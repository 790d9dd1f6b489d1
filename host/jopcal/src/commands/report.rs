//! `jopcal reconcile` and `jopcal report` (stages of `jopcal_pipeline::report`),
//! and `jopcal regress`: the regression gate between two measurement sets.

use crate::cli::{ReconcileArgs, RegressArgs, ReportArgs};
use anyhow::{anyhow, bail, Context, Result};
use jopcal_measure::{atomic, measurements};
use jopcal_pipeline::versions::{regress_versions, OtherVersion, VersionsOptions};
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

pub fn regress(s: Session, a: &RegressArgs) -> Result<()> {
    if !(a.threshold.is_finite() && a.threshold >= 0.0) {
        bail!("--threshold must be a non-negative percentage, not {}", a.threshold);
    }
    if let Some(j) = &a.junit {
        jopcal_measure::new_file::ensure_new("--junit", j, &[])?;
    }
    let (baseline, candidate) = match (&a.baseline, &a.candidate, &a.against, &a.candidate_home) {
        (Some(b), Some(c), None, None) => (b, c),
        (None, None, Some(rev), None) => return versions(s, a, OtherVersion::Revision(rev.clone())),
        (None, None, None, Some(dir)) => return versions(s, a, OtherVersion::Tree(dir.clone())),
        _ => bail!(
            "regress compares either two measurement sets (--baseline FILE --candidate FILE) or two versions of the processor (--against REV, or --candidate-home DIR)"
        ),
    };
    let base = measurements::read(baseline).map_err(|e| anyhow!(e))?;
    let cand = measurements::read(candidate).map_err(|e| anyhow!(e))?;
    let r = compare(&base, &cand, a.threshold, a.fail_on).map_err(|e| anyhow!(e))?;
    // Two targets configured differently: a change may be theirs, not the processor's.
    let configuration = configuration_changes(baseline, candidate)?;
    for c in &configuration {
        eprintln!("note: the two sets' targets differ: {c}");
    }
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
        atomic::write_atomic(j, junit(&r, candidate).as_bytes()).with_context(|| format!("writing {}", j.display()))?;
    }
    if r.failed() {
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
        bail!(
            "{} benchmark(s) {} by more than {}% or are missing: {}{differ}",
            moved.len(),
            a.fail_on.verb(),
            a.threshold,
            moved.join(", ")
        );
    }
    Ok(())
}

/// `regress --against REV` / `--candidate-home DIR`: the suite on two
/// versions of the processor (`jopcal_pipeline::versions`).
fn versions(s: Session, a: &RegressArgs, other: OtherVersion) -> Result<()> {
    let (programs, suite) = a.programs.request(&a.suite)?;
    let on = jopcal_pipeline::measure::TargetOptions {
        jobs: a.jobs.map_or_else(crate::cli::default_jobs, |n| n as usize),
        launcher: a.launch.clone().launcher()?,
        ..Default::default()
    };
    let c = regress_versions(
        s,
        &VersionsOptions {
            other,
            suite,
            programs,
            benches: a.benches.clone(),
            target: a.target.kind(),
            timeout: a.timeout,
            on,
            threshold: a.threshold,
            fail_on: a.fail_on,
            out: a.out.clone(),
            check_model: !a.no_model_check,
            dry_run: a.dry_run,
        },
    )?;
    if let Some(plan) = &c.plan {
        print!("{plan}");
        return Ok(());
    }
    if let Some(j) = &a.junit {
        std::fs::copy(c.dir.join("regress.junit.xml"), j).with_context(|| format!("writing {}", j.display()))?;
    }
    print!("{}", std::fs::read_to_string(&c.md).unwrap_or_default());
    println!("{}", c.md.display());
    match c.failure {
        Some(why) => bail!("{why} (see {})", c.md.display()),
        None => Ok(()),
    }
}

/// How the targets that measured the two sets differ, from the `target.json`
/// beside each `measurements.csv` (nothing where either lacks one).
fn configuration_changes(baseline: &std::path::Path, candidate: &std::path::Path) -> Result<Vec<String>> {
    let facts = |csv: &std::path::Path| {
        let dir = csv
            .parent()
            .filter(|p| !p.as_os_str().is_empty())
            .unwrap_or(std::path::Path::new("."));
        jopcal_pipeline::measure::read_target_facts(dir)
    };
    let (Some(b), Some(c)) = (facts(baseline)?, facts(candidate)?) else {
        return Ok(Vec::new());
    };
    Ok(jopcal_pipeline::measure::facts_differences(&b, &c))
}
