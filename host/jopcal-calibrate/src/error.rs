//! Why a fit could not be specified or made, or a calibration report not read.

use jopcal_timing::ModelError;
use std::path::PathBuf;

/// Why `--fit` does not name what to fit.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FitSpecError {
    /// A name that is neither a parameter of the model nor a group.
    #[error("--fit: '{name}' is neither a parameter of {model} nor a group (impl_java, cache)")]
    Unknown {
        /// The name given.
        name: String,
        /// The timing model's name.
        model: String,
    },
    /// The groups name no parameter.
    #[error("--fit names no parameter to fit")]
    NoParameter,
}

/// Why a fit could not be made.
#[derive(Debug, thiserror::Error)]
pub enum FitError {
    /// Fewer than two observations.
    #[error("{0} observation(s): too few to fit anything")]
    TooFew(usize),
    /// A parameter could not be set in the model.
    #[error(transparent)]
    Model(#[from] ModelError),
}

/// Why `calibration.json` could not be read.
#[derive(Debug, thiserror::Error)]
pub enum ReportFileError {
    /// The file could not be read.
    #[error("{path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// What the system said.
        #[source]
        source: std::io::Error,
    },
    /// It is not a calibration report.
    #[error("{path}:{line}:{column}: {message} (is this a calibration.json?)")]
    Format {
        /// The file.
        path: PathBuf,
        /// 1-based line of the fault.
        line: usize,
        /// 1-based column.
        column: usize,
        /// What is wrong.
        message: String,
    },
}
