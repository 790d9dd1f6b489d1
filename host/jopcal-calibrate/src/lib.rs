//! Calibration: fitting a timing model's named parameters to measurements
//! ([`fit`], with bounded least squares from [`nnls`]), leave-one-benchmark-out
//! cross-validation, identifiability and inconsistency reports, writing the
//! fitted table as a model derived from the original ([`output`]) and what
//! the fit found as `calibration.json` ([`report`]), and
//! generating micro-benchmarks that isolate one bytecode group each
//! ([`micro`]).
#![forbid(unsafe_code)]

pub mod fit;
pub mod micro;
pub mod nnls;
pub mod output;
pub mod report;
