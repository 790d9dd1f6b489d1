//! Why a measurement could not start or finish (a single workload's failure
//! is not an error: it is recorded and the others run).

use jopcal_workloads::build::BuildError;
use jopcal_workloads::error::SuiteError;
use jopcal_workloads::jdk::JdkError;
use std::path::PathBuf;

/// Why a command of the JOP tree's toolchain did not do its job.
#[derive(Debug, thiserror::Error)]
pub enum ShellError {
    /// `sh` could not start it.
    #[error("cannot run `{cmd}`: {source}")]
    Start {
        /// The command.
        cmd: String,
        /// What the system said.
        #[source]
        source: std::io::Error,
    },
    /// Waiting for it failed.
    #[error("{0}")]
    Wait(#[source] std::io::Error),
    /// It ran past its time limit and was killed.
    #[error("`{cmd}` did not finish within {seconds} s (killed)")]
    Timeout {
        /// The command.
        cmd: String,
        /// The limit.
        seconds: u64,
    },
    /// It exited with a failure.
    #[error("`{cmd}` failed ({status}): {telling_line}")]
    Failed {
        /// The command.
        cmd: String,
        /// Its exit status.
        status: std::process::ExitStatus,
        /// The line of its output that says why.
        telling_line: String,
    },
}

/// Why the tree's toolchain could not build or run an image.
#[derive(Debug, thiserror::Error)]
pub enum ToolError {
    /// A path given to the templates could not be made absolute.
    #[error("{0}")]
    Paths(#[source] std::io::Error),
    /// The build command failed.
    #[error("building the image: {0}")]
    Build(#[source] ShellError),
    /// A command (JopSim) failed.
    #[error(transparent)]
    Run(#[from] ShellError),
    /// The image it made cannot be read.
    #[error(transparent)]
    Image(#[from] jopcal_link::LoadError),
    /// A directory could not be made.
    #[error("{}: {source}", path.display())]
    Dir {
        /// The directory.
        path: PathBuf,
        /// What the system said.
        #[source]
        source: std::io::Error,
    },
    /// The image or its link map could not be copied.
    #[error("copying {} to {}: {source}", from.display(), to.display())]
    Copy {
        /// The toolchain's file.
        from: PathBuf,
        /// Where it is kept.
        to: PathBuf,
        /// What the system said.
        #[source]
        source: std::io::Error,
    },
    /// `jopcal.toml` has no `jopsim` template.
    #[error("[jop] has no `jopsim` template")]
    NoJopsimTemplate,
    /// The tree could not be copied or locked for a build, or the image
    /// cache could not be read or written.
    #[error("{what} {}: {source}", path.display())]
    Workspace {
        /// What was being done.
        what: &'static str,
        /// The file or directory.
        path: PathBuf,
        /// What the system said.
        #[source]
        source: std::io::Error,
    },
}

/// Why one job failed; the others still run. Its text is the one line
/// recorded among the run's failures, naming the raw log where there is one.
#[derive(Debug, thiserror::Error)]
pub enum JobError {
    /// The driver ran a job before `prepare`.
    #[error("the {0} target was not prepared")]
    NotPrepared(&'static str),
    /// The job names a workload or image `prepare` did not make.
    #[error("no {what} {name}")]
    Unknown {
        /// `workload` or `image`.
        what: &'static str,
        /// The job's name.
        name: String,
    },
    /// The program could not be started.
    #[error("cannot start {}: {source}", program.display())]
    Start {
        /// The program.
        program: PathBuf,
        /// What the system said.
        #[source]
        source: std::io::Error,
    },
    /// The raw log could not be written.
    #[error("cannot write {}: {source}", path.display())]
    WriteLog {
        /// The log.
        path: PathBuf,
        /// What the system said.
        #[source]
        source: std::io::Error,
    },
    /// The host JVM run failed (it crashed, timed out or reported an error).
    #[error("{source} (raw output: {log})")]
    Host {
        /// What went wrong.
        #[source]
        source: jopcal_workloads::host::WorkloadFailure,
        /// The raw log, relative to the output directory.
        log: String,
    },
    /// The download session gave up.
    #[error("{why} (raw output: {log})")]
    Session {
        /// Why, in one line.
        why: String,
        /// The last attempt's raw log, relative to the output directory.
        log: String,
    },
    /// A result line the harness printed is malformed.
    #[error("malformed result line: stdout {0}")]
    ResultLine(#[source] jopcal_measure::transcript::TranscriptError),
    /// A result could not be stored: the measurement stops.
    #[error(transparent)]
    Store(#[from] jopcal_link::StoreError),
    /// The tree's toolchain.
    #[error(transparent)]
    Tool(#[from] ToolError),
}

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
    /// The JOP tree's toolchain could not build a workload's image.
    #[error("workload {workload}: {source}")]
    Image {
        /// The workload.
        workload: String,
        /// Why.
        #[source]
        source: ToolError,
    },
    /// An image file could not be loaded.
    #[error(transparent)]
    ImageFile(#[from] jopcal_link::LoadError),
    /// The serial line, TCP connection or pseudo-terminal.
    #[error(transparent)]
    Link(#[from] jopcal_link::OpenError),
    /// `jopcal.toml` lacks a template the target needs.
    #[error("{}: [jop] has no `{key}` template ({why})", file.display())]
    MissingTemplate {
        /// The `jopcal.toml`.
        file: PathBuf,
        /// The template (`build`, `image`, `jopsim`).
        key: &'static str,
        /// What needs it.
        why: String,
    },
    /// A workload's class files could not be bundled for the virtual board.
    #[error(transparent)]
    Bundle(#[from] jopcal_emu::BundleError),
    /// The Verilator bench.
    #[error(transparent)]
    Bench(#[from] jopcal_sim::BenchError),
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
