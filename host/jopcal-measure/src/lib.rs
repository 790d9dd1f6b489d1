//! Measurements: what a target reports and how jopcal stores it.
//!
//! This crate owns the `@jopcal` result-line grammar (parsed with `nom`, see
//! [`result_line`]) and the `measurements.csv` file format ([`measurements`]),
//! and reads what a JOP tree's own benchmark harnesses print
//! ([`tree_output`]) and the statistics JopSim prints ([`target_counts`]). It knows
//! nothing about how the lines reached the host.
#![forbid(unsafe_code)]

pub mod error;
pub mod events;
pub mod measurements;
pub mod result_line;
pub mod target_counts;
pub mod transcript;
pub mod tree_output;

/// How outputs are written (atomically, into run directories): re-exported
/// for the crates that store measurements.
pub use jopcal_output::{atomic, children, clock, interrupt, new_file, outdir, provenance, OutDir};
pub use measurements::{Measurement, MeasurementWriter, Unit};
pub use result_line::{parse_line, LineError, Record, ResultLine};
pub use transcript::{scan, Ending, Transcript, TranscriptError};
