//! Profiles: what ran on the host JVM, in the form the estimator needs.
//!
//! A profile is a calling-context tree (CCT): node 0 is the context in which
//! the measured region began; every other node is one (caller context, call
//! site, callee) with its invocation count, the invoke opcode at the call site,
//! exact per-opcode execution counts and per-basic-block counts. Beside the
//! tree, the call/return event stream of the region lets any method-cache
//! configuration be replayed offline. This crate owns the data model, the
//! versioned binary format (`.jopprof`, see [`format`]) and its JSON view; the
//! profiler agent writes it and the estimator reads it. It also owns the
//! agent's option string ([`agent_options`]): what the host passes to the
//! profiler and what the profiler parses, one definition for both ends.
#![forbid(unsafe_code)]

pub mod agent_options;
pub mod compare;
pub mod error;
pub mod examples;
pub mod format;
pub mod model;
pub mod routed;
pub mod routed_ops;

pub use format::{decode, encode, read_dir, read_file, to_json, DecodeError, ProfileError, EXTENSION, FORMAT_VERSION};
pub use model::{
    allocation_totals, search_table, Arrival, Event, Exceptions, FieldKind, FrameSearch, HandlerEntry, HeapStart,
    MethodInfo, Node, Profile,
};
