//! `calibration.json`: what a calibration fitted, how well, and what it
//! could not fit. One type writes it and reads it back (`jopcal report`
//! re-draws its residual plot from it). Fields are declared in alphabetical
//! order, the order the file has always had.

pub use crate::error::ReportFileError;
use crate::fit::Fit;
use serde::{Deserialize, Serialize};
use std::path::Path;

/// The whole file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CalibrationReport {
    /// The method cache the fit chose (or was given).
    pub cache: String,
    /// Each benchmark under the fitted table.
    pub fit: Vec<FitRow>,
    /// The largest |error| of the fitted table over the benchmarks it was fitted to.
    pub fit_max_abs_error_pct: f64,
    /// Opcodes whose fitted cost differs from the starting table's by more than 5%.
    pub inconsistent_opcodes: Vec<OpcodeChange>,
    /// Each benchmark predicted by the table fitted without it; absent without cross-validation.
    pub loo: Option<Vec<LooRow>>,
    /// The largest |error| of those predictions.
    pub loo_max_abs_error_pct: Option<f64>,
    /// The starting table's name.
    pub model: String,
    /// The starting table's file, relative to this file.
    pub model_file: String,
    /// Every parameter the fit was asked for.
    pub params: Vec<ParamRow>,
    /// What the user should know (benchmarks left out, parameters not fitted).
    pub warnings: Vec<String>,
}

/// One fitted (or not fitted) parameter.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ParamRow {
    /// True when the data identified it.
    pub fitted: bool,
    /// Its name in the timing model.
    pub name: String,
    /// The one benchmark whose estimate depends on it, when only one does
    /// (nothing else checks its value).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub only_from: Option<String>,
    /// Its value in the starting table.
    pub start: f64,
    /// Its value in the fitted table (the start when not fitted).
    pub value: f64,
    /// The value the fit wanted, above the parameter's physical bound (the
    /// model's `[max]`, where it was held instead).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub wanted_above_max: Option<f64>,
    /// Why the data cannot identify it.
    pub why_not: Option<String>,
}

/// One benchmark under the fitted table.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FitRow {
    /// The benchmark.
    pub benchmark: String,
    /// `100 * (estimated - measured) / measured`.
    pub error_pct: f64,
    /// Cycles the fitted table estimates.
    pub estimated: f64,
    /// Cycles measured.
    pub measured: f64,
}

/// One benchmark predicted by the table fitted without it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LooRow {
    /// The benchmark.
    pub benchmark: String,
    /// `100 * (predicted - measured) / measured`.
    pub error_pct: f64,
    /// Cycles measured.
    pub measured: f64,
    /// Cycles predicted.
    pub predicted: f64,
}

/// An opcode whose fitted cost differs from the starting table's.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct OpcodeChange {
    /// Its cost (on a cache hit) in the fitted table.
    pub fitted: f64,
    /// The mnemonic.
    pub opcode: String,
    /// Its cost in the starting table.
    pub published: f64,
}

fn pct(measured: f64, other: f64) -> f64 {
    100.0 * (other - measured) / measured
}

impl CalibrationReport {
    /// The report of fit `f` of `model` (its file `model_file`, relative to
    /// the report), with the leave-one-out rows `(bench, measured, predicted)`.
    pub fn new(
        f: &Fit,
        model: &str,
        model_file: &str,
        loo: Option<&[(String, f64, f64)]>,
        inconsistent: &[(String, f64, f64)],
        warnings: &[String],
    ) -> CalibrationReport {
        let loo: Option<Vec<LooRow>> = loo.map(|rows| {
            rows.iter()
                .map(|(b, m, p)| LooRow {
                    benchmark: b.clone(),
                    error_pct: pct(*m, *p),
                    measured: *m,
                    predicted: *p,
                })
                .collect()
        });
        CalibrationReport {
            cache: f.cache.to_string(),
            fit: f
                .rows
                .iter()
                .map(|(b, m, e)| FitRow {
                    benchmark: b.clone(),
                    error_pct: pct(*m, *e),
                    estimated: *e,
                    measured: *m,
                })
                .collect(),
            fit_max_abs_error_pct: f.max_abs_error_pct(),
            inconsistent_opcodes: inconsistent
                .iter()
                .map(|(op, a, b)| OpcodeChange {
                    fitted: *b,
                    opcode: op.clone(),
                    published: *a,
                })
                .collect(),
            loo_max_abs_error_pct: loo
                .as_ref()
                .map(|rows| rows.iter().map(|r| r.error_pct.abs()).fold(0.0, f64::max)),
            loo,
            model: model.to_string(),
            model_file: model_file.to_string(),
            params: f
                .params
                .iter()
                .map(|p| ParamRow {
                    fitted: p.unidentified.is_none(),
                    name: p.name.clone(),
                    only_from: p.sole_benchmark.clone(),
                    start: p.start,
                    value: p.value,
                    wanted_above_max: p.above_max,
                    why_not: p.unidentified.clone(),
                })
                .collect(),
            warnings: warnings.to_vec(),
        }
    }

    /// The file's text (pretty JSON, ending in a newline).
    pub fn to_json(&self) -> String {
        serde_json::to_string_pretty(self).expect("a calibration report serialises") + "\n"
    }

    /// Reads `path`; an error names the file, line and column.
    pub fn read(path: &Path) -> Result<CalibrationReport, ReportFileError> {
        let text = std::fs::read(path).map_err(|source| ReportFileError::Io {
            path: path.to_path_buf(),
            source,
        })?;
        CalibrationReport::parse(&text, path)
    }

    /// Parses the text of a report read from `path` (named in errors).
    pub fn parse(text: &[u8], path: &Path) -> Result<CalibrationReport, ReportFileError> {
        serde_json::from_slice(text).map_err(|e| ReportFileError::Format {
            path: path.to_path_buf(),
            line: e.line(),
            column: e.column(),
            message: e.to_string().split(" at line ").next().unwrap_or_default().to_string(),
        })
    }

    /// The leave-one-out error of `bench`, if it was cross-validated.
    pub fn loo_error_pct(&self, bench: &str) -> Option<f64> {
        self.loo
            .as_ref()?
            .iter()
            .find(|r| r.benchmark == bench)
            .map(|r| r.error_pct)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fit::FittedParam;
    use jopcal_timing::cache::CacheMode;

    fn fit() -> Fit {
        Fit {
            cache: CacheMode::Hit,
            params: vec![
                FittedParam {
                    name: "r".into(),
                    start: 1.0,
                    value: 3.0,
                    unidentified: None,
                    sole_benchmark: None,
                    above_max: None,
                },
                FittedParam {
                    name: "impl_lrem".into(),
                    start: 0.0,
                    value: 0.0,
                    unidentified: Some("no benchmark's estimate depends on it".into()),
                    sole_benchmark: None,
                    above_max: None,
                },
            ],
            rows: vec![("A".into(), 100.0, 101.0), ("B".into(), 200.0, 198.0)],
        }
    }

    #[test]
    fn writes_and_reads_back_the_same_report_with_keys_in_order() {
        let loo = [("A".to_string(), 100.0, 104.0), ("B".to_string(), 200.0, 190.0)];
        let r = CalibrationReport::new(&fit(), "jop-wcet", "../jop-wcet.toml", Some(&loo), &[], &["w".into()]);
        assert_eq!(r.loo_max_abs_error_pct, Some(5.0));
        assert_eq!(r.loo_error_pct("B"), Some(-5.0));
        assert_eq!(r.fit_max_abs_error_pct, 1.0);
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("calibration.json");
        let text = r.to_json();
        std::fs::write(&p, &text).unwrap();
        assert_eq!(CalibrationReport::read(&p).unwrap(), r);
        // The key order of every file written so far: alphabetical.
        let v: serde_json::Value = serde_json::from_str(&text).unwrap();
        let keys: Vec<&String> = v.as_object().unwrap().keys().collect();
        let mut sorted = keys.clone();
        sorted.sort();
        assert_eq!(keys, sorted);
        assert!(text.find("\"cache\"").unwrap() < text.find("\"warnings\"").unwrap());
    }

    #[test]
    fn a_file_that_is_not_a_report_is_named_with_line_and_column() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("calibration.json");
        std::fs::write(&p, "{\n  \"cache\": 3\n}\n").unwrap();
        let e = CalibrationReport::read(&p).unwrap_err().to_string();
        assert!(e.starts_with(&format!("{}:2:", p.display())), "{e}");
        assert!(e.contains("invalid type"), "{e}");
        let e = CalibrationReport::read(&dir.path().join("none.json"))
            .unwrap_err()
            .to_string();
        assert!(e.contains("none.json: No such file"), "{e}");
    }
}
