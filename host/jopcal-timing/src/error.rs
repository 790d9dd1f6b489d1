//! The timing crate's errors: a model file or parameter override that
//! cannot be used, a method-cache configuration or mode that makes no sense.

/// A problem with a model file or a parameter override, in one line.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ModelError {
    #[error("{path}: {message}")]
    File { path: String, message: String },
    #[error("{path}:{line}:{column}: {message}")]
    At {
        path: String,
        line: usize,
        column: usize,
        message: String,
    },
    #[error("unknown parameter '{name}' (the model has: {known})")]
    UnknownParam { name: String, known: String },
    #[error("parameter override '{0}' is not NAME=NUMBER")]
    BadOverride(String),
    #[error("parameter {name}={value}: above its max {max} (the model's [max]: no such cost can be that high)")]
    AboveMax { name: String, value: String, max: String },
    #[error("parameter {name}={value}: {why}")]
    BadValue {
        name: String,
        value: String,
        why: &'static str,
    },
}

/// A method-cache geometry that cannot exist.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CacheConfigError {
    #[error("a method cache needs at least one block and one byte")]
    Empty,
    #[error("{bytes} bytes do not split into {blocks} blocks of whole 32-bit words")]
    Uneven { bytes: u32, blocks: u32 },
}

/// A cache mode (`--cache`) that cannot be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CacheModeError {
    #[error("cache mode '{0}' is not hit, miss or fifo:<bytes>:<blocks>")]
    Syntax(String),
    #[error("cache mode '{mode}': {why}")]
    Geometry { mode: String, why: CacheConfigError },
}
