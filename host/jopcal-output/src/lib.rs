//! How jopcal writes what it produces, whatever it is: every file is written
//! to a temporary name and renamed into place ([`atomic`]), so an
//! interrupted run never leaves a half-written result or destroys an earlier
//! one; each run's directory moves an earlier run aside ([`outdir`]); and
//! runs are stamped with the time ([`clock`]).
#![forbid(unsafe_code)]

pub mod atomic;
pub mod clock;
pub mod outdir;

pub use outdir::OutDir;
