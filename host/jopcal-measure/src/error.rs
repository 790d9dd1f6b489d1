//! Why a result line, transcript, measurements file or JopSim statistic could not be read.

pub use crate::measurements::MeasurementsError;
pub use crate::result_line::LineError;
pub use crate::target_counts::CountsError;
pub use crate::transcript::TranscriptError;

/// Why a row of a measurements file does not hold one consistent measurement.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RowError {
    /// A cycles row whose `cycles` and `value` columns differ.
    #[error("columns `cycles` ({cycles}) and `value` ({value}) disagree: fix one of them")]
    Disagree {
        /// The `cycles` column.
        cycles: u64,
        /// The `value` column.
        value: u64,
    },
    /// A row measuring time that fills in `cycles`.
    #[error(
        "column `cycles` holds {cycles} but the unit is {unit}: leave `cycles` empty for a target that measures time"
    )]
    CyclesNotCycles {
        /// The `cycles` column.
        cycles: u64,
        /// The row's unit.
        unit: crate::measurements::Unit,
    },
    /// Both `cycles` and `value` are empty.
    #[error("neither `cycles` nor `value` holds the measurement")]
    NoMeasurement,
}

/// A count in JopSim's statistics that is not a decimal number.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("`{0}` is not a count (expected decimal digits)")]
pub struct NotACount(pub String);
