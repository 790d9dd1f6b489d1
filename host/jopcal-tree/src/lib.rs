//! The user's JOP tree as a source of workloads: finding its fixed-count
//! benchmark harnesses (JemBench, JBE) and generating a jopcal suite that
//! wraps each one ([`tree`]), parsing a harness's loop ([`harness`]), and
//! jopcal's project file `jopcal.toml` that says how to build the tree's
//! images and run JopSim ([`config`]), the private copies of the tree its
//! builds run in ([`copies`]), and the whole JemBench as its own `Main` runs
//! it ([`jembench`]), and another version of the tree to compare a change
//! against ([`revision`]). What the tree's toolchain *produces*
//! (images, link maps) is `jopcal-jop`'s.
#![forbid(unsafe_code)]

pub mod apps;
pub mod config;
pub mod copies;
pub mod error;
pub mod harness;
mod java_text;
pub mod jembench;
pub mod programs;
pub mod revision;
pub mod runtime;
pub mod tree;
