//! The virtual board's errors: loading its configuration, reading a bundle,
//! and what stops a program.

use std::path::PathBuf;

/// Why the board stopped with an error.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum EmuError {
    #[error("{0}")]
    Load(String),
    #[error("{at}: {what}")]
    Unsupported { at: String, what: String },
    #[error("cycle limit of {limit} cycles reached in {at} (an endless loop?)")]
    CycleLimit { limit: u64, at: String },
    #[error("{at}: {what}")]
    Fault { at: String, what: String },
    /// A `goto` to itself: a loop nothing can leave, since the virtual
    /// board simulates no interrupts (JOP's runtime parks a program this
    /// way when it cannot go on, e.g. in `JVMHelp.noim`).
    #[error("the program waits forever in {at}, a jump to itself (after {cycles} cycles)")]
    Hang { at: String, cycles: u64 },
    /// The processor's stack overflowed: its pointer reached its overflow
    /// mark in the bytecode named (the method's code address, the bytecode's
    /// index and opcode), where the processor raises its exception.
    #[error("the processor's stack overflowed (its pointer reached {mark}) in {at}: the program recurses deeper than the processor's {words}-word stack holds")]
    StackOverflow {
        at: String,
        mark: i32,
        words: usize,
        method: u32,
        pc: u16,
        op: u8,
    },
}

/// A board configuration that cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    #[error(transparent)]
    Model(#[from] jopcal_timing::ModelError),
    #[error("{}: the board needs parameter '{name}' in [params]", model.display())]
    MissingParameter { model: PathBuf, name: &'static str },
    #[error("{}: method cache: {why}", model.display())]
    Cache {
        model: PathBuf,
        why: jopcal_timing::CacheConfigError,
    },
}

/// A class bundle that cannot be read; each names the word (or file) where it went wrong.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum BundleError {
    #[error("word 1: not a class bundle (magic 0x4A434231 expected); the virtual board runs bundles made by jopcal, not JOP images")]
    NotABundle,
    #[error("word {at}: bundle ends before {what}")]
    Truncated { at: usize, what: String },
    #[error("word {at}: {what} has {len} bytes, more than the bundle holds")]
    TooLong { at: usize, what: String, len: usize },
    #[error("word 2: the main class name is not UTF-8")]
    MainClassNotUtf8,
    #[error("word {at}: {extra} words after the last class file")]
    Trailing { at: usize, extra: usize },
    #[error("{}: {why}", path.display())]
    Read { path: PathBuf, why: String },
    #[error("{}: no class file for main class {main}", dir.display())]
    NoMainClass { dir: PathBuf, main: String },
}
