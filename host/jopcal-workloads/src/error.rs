//! Why a suite could not be loaded, built, generated or run, or a JDK not found.

pub use crate::build::BuildError;
pub use crate::host::WorkloadFailure;
pub use crate::jdk::JdkError;
pub use crate::profile::ProfileFailure;
pub use crate::suite::SuiteError;
use std::path::PathBuf;

/// A source encoding jopcal does not read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown source encoding `{0}` (jopcal reads UTF-8 and ISO-8859-1, also called Latin1)")]
pub struct UnknownEncoding(pub String);

/// A file or directory of a generated workload directory that could not be
/// read or written.
#[derive(Debug, thiserror::Error)]
#[error("{path}: {source}")]
pub struct WriteError {
    /// The file or directory.
    pub path: PathBuf,
    /// What the system said.
    #[source]
    pub source: std::io::Error,
}
