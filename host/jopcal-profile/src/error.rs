//! Why a profile is malformed, or the agent's option string cannot be read.

use std::path::PathBuf;

/// Why a decoded profile is not a consistent call tree.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum InvalidProfile {
    /// The profile has not even a root.
    #[error("profile has no nodes")]
    NoNodes,
    /// A node names a method past the method table.
    #[error("node {node} names method {method} of {methods}")]
    UnknownMethod {
        /// The node's index.
        node: usize,
        /// The method it names.
        method: u32,
        /// How many methods the table holds.
        methods: usize,
    },
    /// The root has a parent.
    #[error("node 0 (the root) has a parent")]
    RootHasParent,
    /// A node other than the root has no parent.
    #[error("node {0} has no parent")]
    NoParent(usize),
    /// A node's parent does not come before it.
    #[error("node {node} has parent {parent}, not an earlier node")]
    LaterParent {
        /// The node's index.
        node: usize,
        /// Its parent.
        parent: u32,
    },
    /// An exception's arrival names a node past the tree.
    #[error("an exception's arrival names node {0}, past the tree")]
    ArrivalNode(u32),
    /// An exception table names a method past the method table.
    #[error("an exception table names method {0}, past the method table")]
    TableMethod(u32),
    /// The root was entered by an invoke.
    #[error("the root node has invoke opcode {0}, not 0")]
    RootInvoke(u8),
    /// A node records more executions by operand than of the bytecode, or
    /// an operand of a bytecode that has none recorded (or out of range).
    #[error("node {node} records {observed} executions of opcode {opcode} by operand, but executed {executed} (or an operand the bytecode cannot have)")]
    OperandCounts {
        /// The node's index.
        node: usize,
        /// The opcode.
        opcode: u8,
        /// Executions recorded by operand (or the bad operand).
        observed: u64,
        /// Executions of the opcode.
        executed: u64,
    },
    /// A node was entered by an opcode that is not an invoke.
    #[error(
        "node {node} was entered by opcode {opcode}, which is neither an invoke nor a bytecode JOP runs as a routine"
    )]
    NotAnInvoke {
        /// The node's index.
        node: usize,
        /// The opcode.
        opcode: u8,
    },
    /// A node counts an opcode the JVM does not have.
    #[error("node {node} counts opcode {opcode}, which is not a JVM opcode")]
    UnknownOpcode {
        /// The node's index.
        node: usize,
        /// The opcode.
        opcode: u8,
    },
    /// A node has more `iinc` operand counts than `iinc`s executed.
    #[error("node {node} has {forms} iinc operand counts but executed {iincs} iinc (and {wides} wide)")]
    IincCounts {
        /// The node's index.
        node: usize,
        /// The operand counts' sum.
        forms: u64,
        /// `iinc`s executed.
        iincs: u64,
        /// `wide`s executed.
        wides: u64,
    },
    /// A node has more field accesses by kind than it executed of that opcode
    /// (or counts a kind for an opcode that accesses no field).
    #[error("node {node} has {typed} typed field accesses of opcode {opcode} but executed {executed}")]
    FieldCounts {
        /// The node's index.
        node: usize,
        /// The field access opcode.
        opcode: u8,
        /// The counts by kind, summed.
        typed: u64,
        /// Executions of the opcode.
        executed: u64,
    },
    /// The event stream invokes a node that does not exist (or the root).
    #[error("event stream invokes node {0}, which does not exist")]
    EventNode(u32),
    /// The region starts past the event stream.
    #[error("region starts at event {start} of {events}")]
    RegionStart {
        /// The region's first event.
        start: u64,
        /// How many events there are.
        events: usize,
    },
    /// The entry stack names a node that does not exist.
    #[error("entry stack names node {0}, which does not exist")]
    EntryStackNode(u32),
}

/// Why the agent's option string cannot be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum OptionsError {
    /// A comma-separated item without `=`.
    #[error("option `{0}` is not key=value")]
    NotKeyValue(String),
    /// A key the agent does not know.
    #[error("unknown option `{0}`")]
    UnknownOption(String),
    /// `out=` is missing.
    #[error("missing option out=PATH")]
    MissingOut,
    /// `region=main` without `main=`.
    #[error("region=main needs main=CLASS")]
    MainNeedsClass,
    /// `region=method` without `method=`.
    #[error("region=method needs method=CLASS.NAME")]
    MethodNeedsMethod,
    /// `method=` without a dot.
    #[error("method=`{0}` is not CLASS.NAME")]
    NotClassDotName(String),
    /// A region the agent does not know.
    #[error("unknown region `{0}` (harness, main or method)")]
    UnknownRegion(String),
}

/// Why a `.jopprof` file or a directory of them could not be read.
#[derive(Debug, thiserror::Error)]
pub enum ProfileError {
    #[error("{path}: {source}")]
    Io { path: PathBuf, source: std::io::Error },
    #[error("{path}: byte {offset}: {message}")]
    Corrupt {
        path: PathBuf,
        offset: usize,
        message: String,
    },
    #[error("{0}: no .jopprof profiles in this directory")]
    Empty(PathBuf),
}
