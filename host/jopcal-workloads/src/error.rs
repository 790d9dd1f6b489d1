//! Why a suite could not be loaded, built, generated or run, or a JDK not found.

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

/// Why a suite could not be compiled.
#[derive(Debug, thiserror::Error)]
pub enum BuildError {
    #[error("{path}: {source}")]
    Io { path: PathBuf, source: std::io::Error },
    #[error("no Java sources under {0}")]
    NoSources(PathBuf),
    #[error("javac failed ({errors} error(s)); first: {first}")]
    Javac { errors: usize, first: String },
    #[error("the suite's compiler `{program}` does not run: {message} (set `host_javac` in jopcal.toml to a compiler that takes javac's options, or remove it)")]
    Compiler { program: String, message: String },
}

/// Why a workload's output was not accepted.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum WorkloadFailure {
    #[error("malformed result line: stdout {0}")]
    Malformed(String),
    #[error("the workload reported an error: {0}")]
    SelfCheck(String),
    #[error("no '@jopcal done' within {0} s (killed)")]
    Timeout(u64),
    #[error("java exited with status {0}{1}")]
    Exit(i32, String),
    #[error("java was killed by a signal")]
    Signal,
    #[error("output ended without '@jopcal done'")]
    NoDone,
    #[error("no '@jopcal result' line for {0}")]
    NoResult(String),
}

/// Why no usable JDK was found.
#[derive(Debug, thiserror::Error)]
pub enum JdkError {
    #[error("no JDK found ({0}): install one with `apt-get install default-jdk-headless` (or run scripts/setup), or set JAVA_HOME")]
    Missing(String),
    #[error("{javac} does not run: {message}")]
    Broken { javac: PathBuf, message: String },
    #[error("{version} is too old: javac 9 or newer is needed for --release 8")]
    TooOld { version: String },
}

/// Why profiling failed. `kept` is the path of a profile that was still
/// written (marked incomplete), if any.
#[derive(Debug, thiserror::Error)]
pub enum ProfileFailure {
    #[error("class path entry {0} does not exist")]
    MissingClasspath(PathBuf),
    #[error("main class {0} was not found on the class path")]
    NoMainClass(String),
    #[error("the JVM refused the profiler agent {agent}: {line}")]
    AgentRefused { agent: PathBuf, line: String },
    #[error("cannot start java: {0}")]
    Spawn(std::io::Error),
    #[error("{why}{}", kept_note(.kept))]
    Run { why: String, kept: Option<PathBuf> },
    #[error("{0}")]
    Unreadable(jopcal_profile::ProfileError),
}

fn kept_note(kept: &Option<PathBuf>) -> String {
    match kept {
        Some(p) => format!(
            "; the profile up to that point is in {} (marked incomplete)",
            p.display()
        ),
        None => "; no profile was written".to_string(),
    }
}
