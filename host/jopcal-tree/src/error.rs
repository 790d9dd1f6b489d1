//! Why `jopcal.toml`, a JOP tree or one of its harnesses could not be read, or a tree suite not generated.

use crate::config::{KEYS, PLACEHOLDERS};
pub use crate::harness::HarnessError;
use crate::tree::TreeSuite;
use jopcal_workloads::error::{UnknownEncoding, WriteError};
use std::path::PathBuf;

/// Why `jopcal.toml` could not be read; every message starts with the file
/// (and, where known, `:line:column`).
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    /// The file could not be read.
    #[error("{file}: {source}")]
    Io {
        /// The file.
        file: PathBuf,
        /// What the system said.
        #[source]
        source: std::io::Error,
    },
    /// The text is not TOML (the parser's message), at a known place.
    #[error("{file}:{line}:{column}: {message}")]
    Syntax {
        file: PathBuf,
        line: usize,
        column: usize,
        /// The TOML parser's message.
        message: String,
    },
    /// The text is not TOML, at no known place.
    #[error("{file}: {message}")]
    SyntaxNowhere {
        file: PathBuf,
        /// The TOML parser's message.
        message: String,
    },
    /// `jop` is not a table.
    #[error("{file}: [jop] must be a table")]
    JopNotTable { file: PathBuf },
    /// A key of `[jop]` jopcal does not know.
    #[error("{file}:{line}:{column}: unknown key `{key}` in [jop] (known: {})", KEYS.join(", "))]
    UnknownKey {
        file: PathBuf,
        line: usize,
        column: usize,
        key: String,
    },
    /// `timeout` is not a positive integer.
    #[error("{file}:{line}:{column}: `timeout` must be a whole number of seconds, at least 1")]
    BadTimeout { file: PathBuf, line: usize, column: usize },
    /// A key whose value must be a string is not one.
    #[error("{file}:{line}:{column}: `{key}` must be a string")]
    NotAString {
        file: PathBuf,
        line: usize,
        column: usize,
        key: String,
    },
    /// `host_javac` names no compiler.
    #[error("{file}:{line}:{column}: `host_javac` is empty: name a compiler (e.g. \"ecj -source 1.5 -target 1.5 -nowarn\") or remove the key")]
    EmptyHostJavac { file: PathBuf, line: usize, column: usize },
    /// `encoding` names an encoding jopcal does not read.
    #[error("{file}:{line}:{column}: {source}")]
    Encoding {
        file: PathBuf,
        line: usize,
        column: usize,
        #[source]
        source: UnknownEncoding,
    },
    /// A template uses a placeholder jopcal does not fill.
    #[error(
        "{file}:{line}:{column}: unknown placeholder {{{placeholder}}} in `{key}` (known: {})",
        PLACEHOLDERS.join(", ")
    )]
    UnknownPlaceholder {
        file: PathBuf,
        line: usize,
        column: usize,
        /// The placeholder, without braces.
        placeholder: String,
        /// The template's key.
        key: String,
    },
}

/// Why a JOP tree could not be opened or searched, or a tree suite not generated.
#[derive(Debug, thiserror::Error)]
pub enum TreeError {
    /// The tree's directory does not exist.
    #[error("{0}: no such directory (--jop-home, JOPCAL_JOP_HOME or [jop] home in jopcal.toml)")]
    NoSuchDirectory(PathBuf),
    /// The directory has no `java/target/src`.
    #[error("{0}: not a JOP tree (no java/target/src; pass the root of a JOP checkout as --jop-home)")]
    NotATree(PathBuf),
    /// Walking the tree's sources failed.
    #[error("{dir}: {source}")]
    Walk {
        /// The directory walked.
        dir: PathBuf,
        #[source]
        source: walkdir::Error,
    },
    /// A file could not be read.
    #[error("{path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// What the system said.
        #[source]
        source: std::io::Error,
    },
    /// The tree holds no fixed-count harness at all.
    #[error("{0}: no fixed-count harnesses (Loop*.java in a `fixed` or `jbe` directory under java/target/src)")]
    NoHarnesses(PathBuf),
    /// The Makefile's `-encoding` names an encoding jopcal does not read.
    #[error("{makefile}:{line}: {source}")]
    MakefileEncoding {
        /// The tree's Makefile.
        makefile: PathBuf,
        /// The 1-based line of its `-encoding`.
        line: usize,
        #[source]
        source: UnknownEncoding,
    },
    /// The tree holds no harness of a suite.
    #[error(
        "{home}: no {} harnesses (Loop*.java in a `{}` directory under java/target/src)",
        .suite.name(),
        .suite.directory()
    )]
    NoSuiteHarnesses {
        /// The tree.
        home: PathBuf,
        suite: TreeSuite,
    },
    /// A benchmark name the suite does not have.
    #[error("no {} benchmark {name} in {home} (it has: {})", .suite.name(), .known.join(", "))]
    UnknownBench {
        suite: TreeSuite,
        /// The name asked for.
        name: String,
        /// The tree.
        home: PathBuf,
        /// The suite's benchmarks.
        known: Vec<String>,
    },
    /// Every selected harness was left out; `first` says why the first was.
    #[error("no {} harness jopcal can wrap; first: {first}", .suite.name())]
    NothingToWrap { suite: TreeSuite, first: String },
    /// No harness was selected.
    #[error("no {} harnesses selected", .0.name())]
    NoneSelected(TreeSuite),
    /// The generated workload directory could not be written.
    #[error(transparent)]
    Write(#[from] WriteError),
}
