//! `jopcal validate`: the main job. It runs every stage of the pipeline that
//! exists so far and says plainly which stages do not exist yet; it never
//! fills a missing stage with invented numbers.

use super::run::{fail_on_rejected, measure};
use crate::cli::ValidateArgs;
use crate::context;
use anyhow::{bail, Context, Result};
use jopcal_measure::{atomic, clock};
use serde::Serialize;
use std::path::Path;

/// Stages of the pipeline in order, and what this build does with them:
/// `None` runs the stage; `Some(why)` says why it does not run.
const STAGES: [(&str, Option<&str>); 8] = [
    ("build", None),
    ("measure", None),
    ("profile", Some("not implemented yet")),
    (
        "estimate",
        Some("skipped: needs the profile stage (jopcal estimate works on existing profiles)"),
    ),
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
    /// `cycles` on JOP targets, `ns` on the host JVM.
    unit: String,
}

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
    let m = measure(firmware, a.target, &[], 1, &out, &stamp, a.timeout, &[])?;
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
                unit: r.unit.to_string(),
            })
            .collect(),
        failures: m
            .failures
            .iter()
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
    fail_on_rejected(&m)
}
