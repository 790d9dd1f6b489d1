//! Reports: reconciling measured against estimated cycles into accuracy
//! tables ([`accuracy`]), one benchmark's estimate taken apart against the
//! target's own counts ([`explain`]), the regression check between two measurement sets
//! with JUnit output ([`regress`]), two versions of the processor compared
//! bytecode by bytecode ([`versions`]), `estimates.csv` ([`estimates`]) and
//! `estimates.json` ([`breakdown`]),
//! and plots rendered with plotters as SVG and PNG, with a font embedded in
//! the binary ([`plots`]), and jopcal's errors beside the published
//! cross-profilers' ([`published`]), and `summary.json` ([`summary`]); the
//! tables and the plots print their numbers alike ([`number`]).
#![forbid(unsafe_code)]

pub mod accuracy;
pub mod breakdown;
pub mod error;
pub mod estimates;
pub mod explain;
pub mod number;
pub mod plots;
pub mod published;
pub mod regress;
pub mod summary;
pub mod versions;

/// Measurements for the unit tests.
#[cfg(test)]
pub(crate) mod testutil {
    use jopcal_measure::{Measurement, Unit};

    /// A one-run measurement of `bench` in cycles.
    pub fn measurement(bench: &str, cycles: u64) -> Measurement {
        Measurement {
            target: "emu".into(),
            target_config: String::new(),
            benchmark: bench.into(),
            iterations: 1,
            value: cycles,
            unit: Unit::Cycles,
            run: 1,
            timestamp: String::new(),
            tool_version: String::new(),
            suite_hash: String::new(),
            log: "logs/x.log".into(),
        }
    }
}
