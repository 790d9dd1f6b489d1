//! How jopcal writes what it produces, whatever it is: every file is written
//! to a temporary name and renamed into place ([`atomic`]), so an
//! interrupted run never leaves a half-written result or destroys an earlier
//! one, and a cache directory is built once or not at all ([`cached`]);
//! each run's directory moves an earlier run aside ([`outdir`]); and
//! runs are stamped with the time ([`clock`]); a named output file is never
//! replaced ([`new_file`]); an interrupted run says what it kept
//! ([`interrupt`]) and ends the programs it started ([`children`]).
#![forbid(unsafe_code)]

pub mod atomic;
pub mod cached;
pub mod children;
pub mod clock;
pub mod interrupt;
pub mod new_file;
pub mod outdir;
pub mod provenance;

pub use outdir::OutDir;
