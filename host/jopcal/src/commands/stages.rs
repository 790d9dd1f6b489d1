//! The verbs of the pipeline's stages: `validate`, `run`, `profile`,
//! `estimate`, `calibrate` and `explain`. Each calls its stage in
//! `jopcal_pipeline` and prints the path of the main file it wrote.

use crate::cli::{CalibrateArgs, ProfileArgs, RunArgs, SweepArgs, ValidateArgs};
use anyhow::{anyhow, bail, Result};
use jopcal_measure::{atomic, clock};
use jopcal_pipeline::calibrate::{run_calibration, CalibrationRun};
use jopcal_pipeline::measure::{measure_on, Measure};
use jopcal_pipeline::{estimate::EstimateOptions, explain::ExplainOptions};
use jopcal_pipeline::{locate, Session};
use std::path::Path;

/// Failed workload runs become the verb's error (after the good rows were kept).
fn fail_on_failures(failures: &[(String, String)], out: &Path) -> Result<()> {
    match jopcal_targets::failures_message(failures, out) {
        Some(msg) => bail!(msg),
        None => Ok(()),
    }
}

pub fn validate(s: Session, a: ValidateArgs) -> Result<()> {
    let dry_run = a.dry_run;
    let opts = a.try_into()?;
    let plan = jopcal_pipeline::validate::plan(s, &opts, &clock::now_stamp())?;
    if dry_run {
        print!("{}", plan.text());
        return Ok(());
    }
    let v = jopcal_pipeline::validate::validate(s, &opts, &plan)?;
    println!("{}", v.summary.display());
    fail_on_failures(&v.failures, &v.dir)
}

pub fn run(s: Session, a: RunArgs) -> Result<()> {
    let stamp = clock::now_stamp();
    let (programs, suite) = a.programs.request(&a.suite)?;
    let on = a.on.try_into()?;
    let (root, out, timeout) = match &a.suite_root {
        // A Slurm task: the suite as the submitting run generated it.
        Some(root) => (
            root.clone(),
            locate::out_dir(a.out.as_deref(), "run", &stamp)?,
            locate::workload_timeout(a.timeout, a.target.kind())?,
        ),
        None => {
            let plan = jopcal_pipeline::plan::resolve(
                s,
                &jopcal_pipeline::plan::PlanRequest {
                    verb: "run",
                    suite: &suite,
                    programs: &programs,
                    benches: &a.benches,
                    target: a.target.kind(),
                    timeout: a.timeout,
                    on: &on,
                    out: a.out.as_deref(),
                    model: None,
                    microcode: None,
                    stamp: &stamp,
                },
            )?;
            if a.dry_run {
                print!("{}", plan.text());
                return Ok(());
            }
            (plan.root, plan.out, plan.timeout)
        }
    };
    let how = Measure {
        target: a.target.kind(),
        benches: &a.benches,
        runs: a.runs,
        timeout,
        jvm_args: &a.jvm_args,
        on: &on,
        tree_suite: suite != "builtin",
    };
    let m = measure_on(s, &root, &how, &out, &stamp)?;
    // What ran and what failed (a board's failed download included), as data.
    let summary = jopcal_report::summary::Summary::measured(a.target.kind().name(), &suite, &m.rows, &m.failures);
    atomic::write_atomic(&m.out.path.join("summary.json"), summary.to_json().as_bytes())?;
    println!("{}", m.csv.display());
    fail_on_failures(&m.failures, &m.out.path)
}

pub fn sweep(s: Session, a: SweepArgs) -> Result<()> {
    let generics = a
        .generics
        .iter()
        .map(|g| jopcal_pipeline::sweep::parse_generic_values(g))
        .collect::<Result<Vec<_>>>()?;
    let on = jopcal_pipeline::measure::TargetOptions {
        jobs: a.jobs.map_or_else(jopcal_pipeline::default_jobs, |n| n as usize),
        launcher: a.launch.launcher()?,
        ..Default::default()
    };
    let swept = jopcal_pipeline::sweep::sweep(
        s,
        &jopcal_pipeline::sweep::SweepOptions {
            target: a.target.kind(),
            suite: a.suite,
            benches: a.benches,
            generics,
            top: a.top,
            model: a.model,
            timeout: a.timeout,
            bit_cycles: a.bit_cycles,
            on,
            out: a.out,
            dry_run: a.dry_run,
        },
    )?;
    if let Some(plan) = &swept.plan {
        print!("{plan}");
        return Ok(());
    }
    println!("{}", swept.csv.display());
    fail_on_failures(&swept.failures, &swept.dir)
}

pub fn profile(s: Session, a: ProfileArgs) -> Result<()> {
    let against = a.against.clone();
    let set = jopcal_pipeline::profile::profile(s, &a.options)?;
    println!("{}", set.dir.display());
    fail_on_failures(&set.failures, &set.dir)?;
    if let Some(dir) = against {
        let differ = jopcal_pipeline::profile::compare_with(s, &set, &dir)?;
        if differ > 0 {
            anyhow::bail!(
                "{differ} of {} profiles differ from those in {}",
                set.profiles.len(),
                dir.display()
            );
        }
    }
    Ok(())
}

pub fn estimate(s: Session, a: EstimateOptions) -> Result<()> {
    let csv = jopcal_pipeline::estimate::estimate(s, &a)?;
    println!("{}", csv.display());
    Ok(())
}

pub fn explain(s: Session, a: ExplainOptions) -> Result<()> {
    print!("{}", jopcal_pipeline::explain::explain(s, &a)?);
    Ok(())
}

pub fn calibrate(s: Session, a: CalibrateArgs) -> Result<()> {
    if let Some(dir) = &a.generate_micro {
        let fw = locate::firmware_dir(s.firmware)?;
        let names = jopcal_workloads::micro::generate(dir, &fw, &[], a.floating_point).map_err(|e| anyhow!(e))?;
        s.say(&format!(
            " calibrate wrote {} micro-benchmarks; run them with `jopcal --firmware {} run`",
            names.len(),
            dir.display()
        ));
        println!("{}", dir.display());
        return Ok(());
    }
    let model_path = locate::model_path(a.model.as_deref(), s.firmware)?;
    let cal = run_calibration(
        s,
        &CalibrationRun {
            measured: &a.measured,
            profiles: &a.profiles,
            model_path: &model_path,
            groups: &a.fit,
            cache: &a.cache,
            loo: a.cv == "loo",
            lenient: false,
            leave_out_synchronized: a.leave_out_synchronized,
            out: &a.out,
            name: None,
        },
    )?;
    println!("{}", cal.toml.display());
    Ok(())
}

/// `jopcal task DIR`: one task of a Slurm job array; its result is in
/// DIR/result.json, and the exit status says whether it succeeded.
pub fn task(dir: &Path) -> Result<()> {
    if jopcal_launch::slurm::run_task(dir)? {
        Ok(())
    } else {
        bail!("the task in {} failed: see its result.json", dir.display())
    }
}
