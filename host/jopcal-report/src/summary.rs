//! `summary.json`: what one `jopcal validate` (or `jopcal run`) did, stage
//! by stage, and what it found per benchmark. One type writes it and reads
//! it back.

use crate::error::SummaryError;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::Path;

/// The whole file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Summary {
    /// Where the workloads ran (`emu`, `board`, ...).
    pub target: String,
    /// The suite (`builtin`, `jembench`, `jbe`).
    pub suite: String,
    /// True when every stage ran and no workload failed (a failed workload
    /// is missing from the fit, which then rests on fewer benchmarks).
    pub complete: bool,
    /// Each stage and how it ended.
    pub stages: Vec<Stage>,
    /// Each measured benchmark.
    pub benchmarks: Vec<Bench>,
    /// The calibration, when the target measures cycles.
    pub calibration: Option<CalibrationSummary>,
    /// Workloads that failed or were left out, with why.
    pub failures: Vec<Failure>,
    /// The measurements file, relative to this one.
    pub measurements: String,
    /// jopcal's version (`+<commit>`, `.dirty` as it was built).
    pub tool_version: String,
    /// What produced the run: jopcal's version, the command line, the JDK,
    /// the JOP tree and its commit, the target and its configuration.
    #[serde(default)]
    pub provenance: std::collections::BTreeMap<String, String>,
    /// When the summary was written (RFC 3339).
    pub timestamp: String,
}

/// One stage of the run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Stage {
    /// `build`, `measure`, `profile`, `estimate`, `calibrate`, ...
    pub name: String,
    /// `done`, or why it was skipped.
    pub status: String,
}

/// One benchmark.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Bench {
    /// Its name.
    pub name: String,
    /// Iterations of the measured region.
    pub iterations: u64,
    /// Measured value of the region, in `unit`.
    pub measured: u64,
    /// The same in cycles; null when the target measures time (the host JVM).
    pub measured_cycles: Option<u64>,
    /// `cycles` on JOP targets, `ns` on the host JVM.
    pub unit: String,
    /// Every estimate of it.
    pub estimates: Vec<BenchEstimate>,
    /// Error of the calibrated estimate fitted without this benchmark
    /// (leave-one-out), in percent; null when there was no calibration.
    pub loo_error_pct: Option<f64>,
}

/// One estimate of a benchmark.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BenchEstimate {
    /// The timing model (`-loo`: predicted by the table fitted without this benchmark).
    pub model: String,
    /// The method-cache mode.
    pub cache: String,
    /// Estimated cycles.
    pub cycles: f64,
    /// Error of the estimate against the measurement, in percent; null when
    /// the measurement is not in cycles (the host JVM measures ns).
    pub error_pct: Option<f64>,
}

/// What the calibration found.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CalibrationSummary {
    /// The fitted table's name.
    pub model: String,
    /// The method cache it chose.
    pub cache: String,
    /// Benchmarks it was fitted to.
    pub benchmarks: usize,
    /// Largest |error| over those.
    pub fit_max_abs_error_pct: f64,
    /// Largest |error| of the leave-one-out predictions.
    pub loo_max_abs_error_pct: Option<f64>,
    /// The fitted values.
    pub params: BTreeMap<String, f64>,
    /// `name: why` of each parameter the data could not identify.
    pub not_fitted: Vec<String>,
}

/// A workload that failed.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Failure {
    /// The workload.
    pub name: String,
    /// Why, in one line, naming its raw log.
    pub reason: String,
}

impl Bench {
    /// The measurement `m`, with no estimate yet.
    fn measured(m: &jopcal_measure::measurements::Measurement) -> Bench {
        Bench {
            name: m.benchmark.clone(),
            iterations: m.iterations,
            measured: m.value,
            measured_cycles: m.cycles(),
            unit: m.unit.to_string(),
            estimates: Vec::new(),
            loo_error_pct: None,
        }
    }
}

impl Failure {
    /// The failures `(workload, why)` of a run, in its order.
    fn all(failures: &[(String, String)]) -> Vec<Failure> {
        failures
            .iter()
            .map(|(name, reason)| Failure {
                name: name.clone(),
                reason: reason.clone(),
            })
            .collect()
    }
}

impl Summary {
    /// The summary of a run that only measures (`jopcal run`), and the
    /// part of `validate`'s its later stages add to: each benchmark's
    /// measurement, and every workload that failed (a board's failed
    /// download included) with why; complete when none did.
    pub fn measured(
        target: &str,
        suite: &str,
        rows: &[jopcal_measure::measurements::Measurement],
        failures: &[(String, String)],
    ) -> Summary {
        Summary {
            target: target.to_string(),
            suite: suite.to_string(),
            complete: failures.is_empty(),
            stages: ["build", "measure"]
                .iter()
                .map(|name| Stage {
                    name: name.to_string(),
                    status: "done".into(),
                })
                .collect(),
            benchmarks: rows.iter().map(Bench::measured).collect(),
            calibration: None,
            failures: Failure::all(failures),
            measurements: "measurements.csv".into(),
            tool_version: jopcal_measure::provenance::VERSION.to_string(),
            provenance: jopcal_measure::provenance::facts(),
            timestamp: jopcal_measure::clock::now_rfc3339(),
        }
    }

    /// The summary of a run stopped by a signal during `stage`, after the
    /// stages `done`: incomplete, with no benchmark (the directory holds
    /// what the stages done wrote).
    pub fn interrupted(target: &str, suite: &str, stage: &str, done: &[String]) -> Summary {
        let stages = done
            .iter()
            .map(|name| Stage {
                name: name.clone(),
                status: "done".into(),
            })
            .chain(std::iter::once(Stage {
                name: stage.to_string(),
                status: "interrupted".into(),
            }))
            .collect();
        Summary {
            target: target.to_string(),
            suite: suite.to_string(),
            complete: false,
            stages,
            benchmarks: Vec::new(),
            calibration: None,
            failures: Vec::new(),
            measurements: "measurements.csv".into(),
            tool_version: jopcal_measure::provenance::VERSION.to_string(),
            provenance: jopcal_measure::provenance::facts(),
            timestamp: jopcal_measure::clock::now_rfc3339(),
        }
    }

    /// The file's text (pretty JSON, ending in a newline).
    pub fn to_json(&self) -> String {
        serde_json::to_string_pretty(self).expect("a summary serialises") + "\n"
    }

    /// Reads `path`; an error names the file, line and column.
    pub fn read(path: &Path) -> Result<Summary, SummaryError> {
        let text = std::fs::read(path).map_err(|source| SummaryError::Io {
            path: path.to_path_buf(),
            source,
        })?;
        serde_json::from_slice(&text).map_err(|source| SummaryError::Json {
            path: path.to_path_buf(),
            line: source.line(),
            column: source.column(),
            source,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_summary_reads_back_as_written() {
        let s = Summary {
            target: "emu".into(),
            suite: "builtin".into(),
            complete: false,
            stages: vec![Stage {
                name: "measure".into(),
                status: "done".into(),
            }],
            benchmarks: vec![Bench {
                name: "Sieve".into(),
                iterations: 4,
                measured: 1000,
                measured_cycles: Some(1000),
                unit: "cycles".into(),
                estimates: vec![BenchEstimate {
                    model: "jop-wcet".into(),
                    cache: "hit".into(),
                    cycles: 990.5,
                    error_pct: Some(-0.95),
                }],
                loo_error_pct: None,
            }],
            calibration: None,
            failures: vec![Failure {
                name: "Aes".into(),
                reason: "does not compile".into(),
            }],
            measurements: "measurements.csv".into(),
            tool_version: "0.1.0".into(),
            provenance: [("jopcal".to_string(), "0.1.0+abc".to_string())].into(),
            timestamp: "2026-11-23T20:00:00Z".into(),
        };
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("summary.json");
        std::fs::write(&p, s.to_json()).unwrap();
        assert_eq!(Summary::read(&p).unwrap(), s);
        std::fs::write(&p, "{\"target\": 1}").unwrap();
        assert!(Summary::read(&p).unwrap_err().to_string().contains("summary.json:1:"));
    }
}
