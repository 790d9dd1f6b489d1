//! `jopcal reconcile` and `jopcal report` (stages of `jopcal_pipeline::report`),
//! and `jopcal regress`: the regression gate between two measurement sets.

use crate::cli::{ReconcileArgs, RegressArgs, ReportArgs};
use anyhow::{bail, Context, Result};
use jopcal_pipeline::versions::{regress_versions, OtherVersion, VersionsOptions};
use jopcal_pipeline::Session;

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
    let (baseline, candidate) = match (&a.baseline, &a.candidate, &a.against, &a.candidate_home) {
        (Some(b), Some(c), None, None) => (b, c),
        (None, None, Some(rev), None) => return versions(s, a, OtherVersion::Revision(rev.clone())),
        (None, None, None, Some(dir)) => return versions(s, a, OtherVersion::Tree(dir.clone())),
        _ => bail!(
            "regress compares either two measurement sets (--baseline FILE --candidate FILE) or two versions of the processor (--against REV, or --candidate-home DIR)"
        ),
    };
    let r = jopcal_pipeline::report::regress_sets(baseline, candidate, a.threshold, a.fail_on, a.junit.as_deref())?;
    for c in &r.configuration {
        eprintln!("note: the two sets' targets differ: {c}");
    }
    print!("{}", r.text);
    match r.failure {
        Some(why) => bail!(why),
        None => Ok(()),
    }
}

/// `regress --against REV` / `--candidate-home DIR`: the suite on two
/// versions of the processor (`jopcal_pipeline::versions`).
fn versions(s: Session, a: &RegressArgs, other: OtherVersion) -> Result<()> {
    if let Some(j) = &a.junit {
        jopcal_measure::new_file::ensure_new("--junit", j, &[])?;
    }
    let (programs, suite) = a.programs.request(&a.suite)?;
    let on = jopcal_pipeline::measure::TargetOptions {
        jobs: a.jobs.map_or_else(jopcal_pipeline::default_jobs, |n| n as usize),
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
