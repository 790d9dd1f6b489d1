//! Calibration: fitting a timing model's named parameters to measurements
//! ([`fit`], with bounded least squares from [`nnls`]), leave-one-benchmark-out
//! cross-validation, identifiability and inconsistency reports, writing the
//! fitted table as a model derived from the original ([`output`]) and what
//! the fit found as `calibration.json` ([`report`]). The micro-benchmarks
//! it is fitted to are workloads: `jopcal_workloads::micro`.
#![forbid(unsafe_code)]

pub mod error;
pub mod fit;
pub mod nnls;
pub mod output;
pub mod report;
