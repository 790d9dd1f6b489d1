//! The timing model: what a bytecode costs on a JOP.
//!
//! Owns the timing-table file format (`calibration/*.toml`: read by [`model`],
//! written by [`file`]), the
//! small formula language its entries are written in ([`expr`]), the
//! method-cache simulator that decides hit or miss for every invoke and return
//! ([`cache`]), and the resolved per-opcode table in the form calibrated tables
//! are published ([`table`]). No cycle count is a constant in this code: they
//! all come from the model file and its parameters.
#![forbid(unsafe_code)]

pub mod cache;
pub mod collector;
pub mod error;
pub mod estimate;
pub mod expr;
pub mod file;
pub mod jop;
pub mod model;
pub mod table;

pub use cache::{CacheConfig, MethodCache};
pub use error::{CacheConfigError, CacheModeError, ModelError};
pub use expr::Expr;
pub use model::{Cost, TimingModel};
