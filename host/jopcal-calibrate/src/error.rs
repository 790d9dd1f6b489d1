//! Why a fit could not be specified or made, or a calibration report not read.

pub use crate::report::ReportFileError;
use jopcal_timing::ModelError;

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
