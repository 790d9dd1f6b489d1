//! jopcal's stages as library functions, in the order the data flows:
//! [`measure`] (workloads on a target → `measurements.csv`), [`profile`]
//! (the host JVM under the profiler → `.jopprof`), [`estimate`] (profiles ×
//! timing model → `estimates.csv`/`.json`), [`calibrate`] (measurements +
//! profiles → a fitted table), [`report`] (reconciliation → accuracy tables
//! and plots), [`explain`] (each estimate taken apart against the target's
//! counts) and [`validate`], which runs them all into one directory.
//!
//! [`plan`] resolves a run's every input once (`--dry-run` prints it).
//! [`versions`] compares two versions of a JOP tree's processor on a suite
//! (`regress --against`).
//!
//! [`locate`] finds what the user did not name (the suite, the default
//! tables, the JOP tree, the cache) and [`share`] carries the files an
//! installed jopcal needs. [`doctor`] checks a JOP tree the way the stages
//! use it.
//!
//! The command line parses arguments into the option types here and calls
//! one function per verb. Nothing here prints: progress and report lines go
//! to the [`Progress`] callbacks the caller passes in a [`Session`].
#![forbid(unsafe_code)]

/// Programs run or profiled at once by default: the machine's cores.
pub fn default_jobs() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

pub mod cache;
pub mod calibrate;
pub mod clocks;
pub mod diff;
pub mod doctor;
pub mod emu;
pub mod estimate;
pub mod explain;
pub mod heap;
pub mod instrumenter;
pub mod locate;
pub mod measure;
pub mod microcode;
pub mod plan;
pub mod processor;
pub mod profile;
pub mod report;
pub mod share;
pub mod sim;
pub mod sweep;
pub mod table;
pub mod targets;
pub mod validate;
pub mod versions;

use std::path::Path;

/// Where progress and report lines go: shared with the fit's worker threads.
pub type Progress = dyn jopcal_targets::Progress + Sync;

/// What every stage is given: the directories the user named (the others
/// are found, see [`locate`]) and where progress goes.
#[derive(Clone, Copy)]
pub struct Session<'a> {
    /// The workload suite's directory (`--firmware`).
    pub firmware: Option<&'a Path>,
    /// The user's JOP tree (`--jop-home`).
    pub jop_home: Option<&'a Path>,
    /// Progress bars and report lines.
    pub progress: &'a Progress,
    /// Which profiler the host profiles come from (`--profiler`).
    pub profiler: instrumenter::ProfilerKind,
}

impl<'a> Session<'a> {
    /// The same session with another firmware directory (a generated suite).
    pub fn with_firmware(self, firmware: &'a Path) -> Session<'a> {
        Session {
            firmware: Some(firmware),
            ..self
        }
    }

    /// A line of the verb's report, shown as given.
    pub fn say(&self, line: &str) {
        self.progress.say(line);
    }
}
