//! Workloads: the Java programs jopcal measures, from source to a host run.
//!
//! Owns the suite manifest (`jop-firmware/suite.toml`, [`suite`]), finding a
//! JDK ([`jdk`]), compiling the sources with `javac --release 8` into a cache
//! keyed by a hash of their content ([`build`]), and running a workload on the
//! host JVM with a timeout while keeping its raw output ([`host`]), and running
//! a program under the profiler agent ([`profile`]), and generating the
//! calibration micro-benchmarks, each isolating one bytecode group ([`micro`]).
#![forbid(unsafe_code)]

pub mod build;
pub mod encoding;
pub mod error;
pub mod host;
pub mod jdk;
pub mod micro;
pub mod profile;
pub mod suite;

pub use build::{build_suite, build_suite_lenient, BuiltSuite, LenientBuild};
pub use encoding::SourceEncoding;
pub use host::{run_java, Captured, JavaRun};
pub use jdk::Jdk;
pub use suite::{Suite, WorkloadSpec};
