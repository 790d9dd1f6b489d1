//! `jopcal validate`: the main job. It runs every stage of the pipeline that
//! exists so far and says plainly which stages do not exist yet; it never
//! fills a missing stage with invented numbers.

use super::estimate::{estimate_all, write_estimates};
use super::profile::profile_suite;
use super::run::{fail_on_failures, measure, prepare_host};
use crate::cli::ProfileFormat;
use crate::cli::ValidateArgs;
use crate::context;
use anyhow::{bail, Context, Result};
use jopcal_measure::{atomic, clock};
use jopcal_timing::cache::CacheMode;
use jopcal_timing::TimingModel;
use serde::Serialize;
use std::path::Path;
use std::time::Duration;

/// Stages of the pipeline in order, and what this build does with them:
/// `None` runs the stage; `Some(why)` says why it does not run.
const STAGES: [(&str, Option<&str>); 8] = [
    ("build", None),
    ("measure", None),
    ("profile", None),
    ("estimate", None),
    ("reconcile", Some("not implemented yet")),
    ("calibrate", Some("not implemented yet")),
    ("plot", Some("not implemented yet")),
    ("summary", None),
];

#[derive(Serialize)]
struct Summary<'a> {
    target: &'a str,
    suite: &'a str,
    /// False while any stage of the pipeline is missing from this build.
    complete: bool,
    stages: Vec<Stage<'a>>,
    benchmarks: Vec<Bench>,
    failures: Vec<Failure>,
    measurements: String,
    tool_version: &'a str,
    timestamp: String,
}

#[derive(Serialize)]
struct Stage<'a> {
    name: &'a str,
    status: &'a str,
}

#[derive(Serialize)]
struct Bench {
    name: String,
    iterations: u64,
    /// Measured value of the region, in `unit`.
    measured: u64,
    /// The same in cycles; null when the target measures time (the host JVM).
    measured_cycles: Option<u64>,
    /// `cycles` on JOP targets, `ns` on the host JVM.
    unit: String,
    estimates: Vec<BenchEstimate>,
}

#[derive(Serialize)]
struct BenchEstimate {
    model: String,
    cache: String,
    cycles: f64,
    /// Error of the estimate against the measurement, in percent; null when
    /// the measurement is not in cycles (the host JVM measures ns).
    error_pct: Option<f64>,
}

/// The cache modes validate estimates with.
const CACHE_MODES: [&str; 3] = ["hit", "miss", "fifo:1024:16"];

#[derive(Serialize)]
struct Failure {
    name: String,
    reason: String,
}

pub fn validate(firmware: Option<&Path>, a: &ValidateArgs) -> Result<()> {
    if a.suite != "builtin" {
        bail!("unknown suite '{}': only 'builtin' exists so far", a.suite);
    }
    let stamp = clock::now_stamp();
    let out = context::out_dir(a.out.as_deref(), "validate", &stamp);
    let m = measure(firmware, a.target, &[], 1, &out, &stamp, a.timeout, &[], None)?;
    let setup = prepare_host(firmware, &[])?;
    let profiled = profile_suite(
        &setup,
        &m.out.join("profiles"),
        &stamp,
        None,
        ProfileFormat::Binary,
        Duration::from_secs(a.timeout),
        &[],
    )?;
    let model_path = context::model_path(None, firmware)?;
    let model = TimingModel::load(&model_path)?;
    let modes: Vec<CacheMode> = CACHE_MODES.iter().map(|c| c.parse().expect("valid mode")).collect();
    let estimates = estimate_all(&profiled.profiles, &model, &modes);
    write_estimates(
        &estimates,
        &profiled.profiles,
        modes.len(),
        &model,
        &model_path,
        &m.out.join("estimates.csv"),
        &m.out.join("estimates.json"),
    )?;
    let summary = Summary {
        target: a.target.name(),
        suite: &a.suite,
        complete: STAGES.iter().all(|(_, why)| why.is_none()),
        stages: STAGES
            .iter()
            .map(|(name, why)| Stage {
                name,
                status: why.unwrap_or("done"),
            })
            .collect(),
        benchmarks: m
            .rows
            .iter()
            .map(|r| Bench {
                name: r.benchmark.clone(),
                iterations: r.iterations,
                measured: r.cycles,
                measured_cycles: (r.unit == jopcal_measure::Unit::Cycles).then_some(r.cycles),
                unit: r.unit.to_string(),
                estimates: estimates
                    .iter()
                    .filter(|e| e.benchmark == r.benchmark)
                    .map(|e| BenchEstimate {
                        model: e.model.clone(),
                        cache: e.cache.to_string(),
                        cycles: e.cycles,
                        error_pct: (r.unit == jopcal_measure::Unit::Cycles)
                            .then(|| 100.0 * (e.cycles - r.cycles as f64) / r.cycles as f64),
                    })
                    .collect(),
            })
            .collect(),
        failures: m
            .failures
            .iter()
            .chain(&profiled.failures)
            .map(|(name, reason)| Failure {
                name: name.clone(),
                reason: reason.clone(),
            })
            .collect(),
        measurements: "measurements.csv".into(),
        tool_version: env!("CARGO_PKG_VERSION"),
        timestamp: clock::now_rfc3339(),
    };
    let path = m.out.join("summary.json");
    let json = serde_json::to_string_pretty(&summary)? + "\n";
    atomic::write_atomic(&path, json.as_bytes()).with_context(|| format!("writing {}", path.display()))?;
    let missing: Vec<&str> = STAGES
        .iter()
        .filter(|(_, why)| why.is_some())
        .map(|(n, _)| *n)
        .collect();
    eprintln!(
        "  validate {} benchmarks measured on {}; stages not run: {}",
        summary.benchmarks.len(),
        summary.target,
        missing.join(", ")
    );
    println!("{}", path.display());
    let failures: Vec<(String, String)> = m.failures.iter().chain(&profiled.failures).cloned().collect();
    fail_on_failures(&failures)
}
