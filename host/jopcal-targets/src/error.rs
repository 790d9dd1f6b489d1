//! Why a measurement could not start or finish (a single workload's failure
//! is not an error: it is recorded and the others run).

use jopcal_workloads::build::BuildError;
use jopcal_workloads::jdk::JdkError;
use jopcal_workloads::suite::SuiteError;
use std::path::PathBuf;

/// Why a target could not measure at all.
#[derive(Debug, thiserror::Error)]
pub enum TargetError {
    /// Something the command line must add or change (a missing `--port`).
    #[error("{0}")]
    Usage(String),
    /// A file or directory jopcal needs could not be read or written.
    #[error("{path}: {source}")]
    Io {
        /// The file or directory.
        path: PathBuf,
        /// What the system said.
        #[source]
        source: std::io::Error,
    },
    /// The suite's manifest or a benchmark name.
    #[error(transparent)]
    Suite(#[from] SuiteError),
    /// No usable JDK.
    #[error(transparent)]
    Jdk(#[from] JdkError),
    /// The suite does not compile on the host.
    #[error("building the suite in {root}: {source}")]
    Build {
        /// The workload directory.
        root: PathBuf,
        /// javac's complaint.
        #[source]
        source: BuildError,
    },
    /// Nothing is left to run: every selected workload was left out.
    #[error("no workload left to run: {name} {why}")]
    NothingLeft {
        /// The first workload left out.
        name: String,
        /// Why.
        why: String,
    },
    /// The JOP tree's toolchain could not build an image.
    #[error("{0}")]
    Image(String),
    /// An image file could not be loaded.
    #[error(transparent)]
    ImageFile(#[from] jopcal_link::LoadError),
    /// The serial line, TCP connection or pseudo-terminal.
    #[error(transparent)]
    Link(#[from] jopcal_link::OpenError),
    /// The JOP tree's toolchain or `jopcal.toml`.
    #[error("{0}")]
    Toolchain(String),
    /// The virtual board's configuration.
    #[error("{0}")]
    Emu(String),
    /// The Verilator bench.
    #[error("{0}")]
    Bench(String),
}

impl TargetError {
    /// An I/O error on `path`.
    pub fn io(path: impl Into<PathBuf>, source: std::io::Error) -> TargetError {
        TargetError::Io {
            path: path.into(),
            source,
        }
    }
}
