//! Why a suite could not be loaded, built, generated or run, or a JDK not found.

pub use crate::build::BuildError;
pub use crate::host::WorkloadFailure;
pub use crate::jdk::JdkError;
pub use crate::profile::ProfileFailure;
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

/// A suite's manifest that could not be read, or a benchmark it lacks.
#[derive(Debug, thiserror::Error)]
pub enum SuiteError {
    #[error("{path}: {source}")]
    Io { path: PathBuf, source: std::io::Error },
    #[error("{path}: {message}")]
    Invalid { path: PathBuf, message: String },
    #[error("unknown benchmark '{name}' (the suite has: {known})")]
    UnknownBench { name: String, known: String },
    /// The manifest's `encoding` is not one jopcal reads.
    #[error("{path}: {source}")]
    Encoding {
        path: PathBuf,
        #[source]
        source: UnknownEncoding,
    },
}
