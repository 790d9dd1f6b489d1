//! Where workloads run, and how a run becomes rows of `measurements.csv`.
//!
//! Every target implements one trait, [`Target`]: `prepare` (build images,
//! start the board or the bench, say which jobs there are), `run` one job
//! (sending each result to a sink the moment it arrives), `finish` (stop what
//! was started, keep the images that ran). One generic driver, [`measure`],
//! owns what all targets share: the output directory, the durable
//! measurement writer, the failures, the milliseconds fallback for the JOP
//! tree's own harnesses, and progress; [`measure_parallel`] runs equal
//! targets side by side (`--jobs`), each taking the next job, and publishes
//! what one target would have.
//!
//! The targets: [`host::HostTarget`] (the host JVM, nanoseconds),
//! [`emu::EmuTarget`] (the virtual board on a pseudo-terminal),
//! [`board::BoardTarget`] (a board on a serial port or TCP),
//! [`verilator::VerilatorTarget`] (the Verilator bench on a
//! pseudo-terminal) and [`jopsim::JopsimTarget`] (the JOP tree's simulator).
//! [`toolchain::Toolchain`] builds a JOP tree's images for the last three,
//! each in a private copy of the tree, and keeps them by their inputs' hash.
//!
//! As a library: build a target, then
//! `jopcal_targets::measure(&mut target, out, stamp, 1, &progress)`; the
//! library never prints, it reports through [`Progress`].
#![forbid(unsafe_code)]
#![deny(missing_docs)]

pub mod board;
mod driver;
pub mod emu;
mod error;
pub mod host;
pub mod jopsim;
pub mod parallel;
mod progress;
pub mod resident_ecj;
pub mod toolchain;
pub mod verilator;

pub use driver::{failures_message, keep_images, measure, measure_parallel, prepare_out, Measured};
pub use error::{JobError, ShellError, TargetError, ToolError};
pub use progress::{NoProgress, Progress};

use std::path::Path;

/// The kinds of target, as the command line and `measurements.csv` name them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TargetKind {
    /// The host JVM (measures nanoseconds).
    Host,
    /// The virtual JOP board built into jopcal.
    Emu,
    /// A JOP board on a serial port or TCP.
    Board,
    /// The user's JOP RTL in the Verilator bench.
    Verilator,
    /// The JOP tree's simulator.
    Jopsim,
}

impl TargetKind {
    /// The name in `--target` and in the `target` column.
    pub fn name(self) -> &'static str {
        match self {
            TargetKind::Host => "host",
            TargetKind::Emu => "emu",
            TargetKind::Board => "board",
            TargetKind::Verilator => "verilator",
            TargetKind::Jopsim => "jopsim",
        }
    }

    /// True for the targets that run a JOP tree's images and take their
    /// defaults (the workload timeout) from its `jopcal.toml`.
    pub fn runs_tree_images(self) -> bool {
        matches!(self, TargetKind::Jopsim | TargetKind::Board | TargetKind::Verilator)
    }
}

/// One unit of work on a target: a workload (host, JopSim) or an image
/// (board, bench, virtual board), which may report several benchmarks.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Job {
    /// The workload's or the image's name.
    pub name: String,
    /// The first 16 hex digits of the SHA-256 of what runs (the image, or
    /// the suite's class files); empty where it is built during the run.
    pub hash: String,
}

/// One result a job reported, before the driver stamps it into a row.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Reported {
    /// The benchmark it is for.
    pub bench: String,
    /// Iterations the measured region ran.
    pub iterations: u64,
    /// The measured value, in `unit`.
    pub value: u64,
    /// Cycles (JOP targets) or nanoseconds (the host JVM).
    pub unit: jopcal_measure::Unit,
    /// The raw log holding it, relative to the output directory.
    pub log: String,
}

/// What a job that ended by itself leaves besides its results: what it
/// printed (for the tree's millisecond lines and for saying what went wrong
/// when it reported nothing) and where its raw log is.
#[derive(Debug, Clone, Default)]
pub struct JobEnd {
    /// The program's output (its UART or stdout).
    pub output: String,
    /// Its raw log, relative to the output directory.
    pub log: String,
    /// Why the program stopped, decoded from its output where the target
    /// can (an uncaught exception named from the image's link map).
    pub stop: Option<String>,
}

/// What [`Target::prepare`] found to do.
#[derive(Debug, Clone, Default)]
pub struct Prepared {
    /// The jobs, in the order they run.
    pub jobs: Vec<Job>,
    /// `(workload, why)` of selected workloads that cannot run at all.
    pub left_out: Vec<(String, String)>,
}

/// Where results go while a job runs: each is stored durably before the
/// next arrives; `Err` is a one-line reason that ends the measurement.
pub type Sink<'a> = dyn FnMut(Reported) -> Result<(), jopcal_link::StoreError> + 'a;

/// A place where workloads run.
pub trait Target {
    /// The `target` column of its rows.
    fn kind(&self) -> TargetKind;

    /// Everything that must happen before the first job: build or load the
    /// images (into `staging`, a scratch directory the driver removes), open
    /// the line, start the board or bench.
    fn prepare(&mut self, staging: &Path, progress: &dyn Progress) -> Result<Prepared, TargetError>;

    /// The `target_config` column: what exactly ran the jobs (known after `prepare`).
    fn config(&self) -> String;

    /// Runs `job` (for the `run`th time), its raw logs under `out`, each
    /// result into `sink` as it arrives. `Err` is a one-line reason naming
    /// the raw log: the job failed, the others still run.
    fn run(
        &mut self,
        job: &Job,
        run: u32,
        out: &Path,
        sink: &mut Sink<'_>,
        progress: &dyn Progress,
    ) -> Result<JobEnd, JobError>;

    /// The method cache the target reported it ran with, as a cache mode
    /// (`fifo:<bytes>:<blocks>`), when it reports one (JopSim prints its own).
    fn method_cache(&self) -> Option<String> {
        None
    }

    /// Whether the target times `monitorenter` and `monitorexit` as the
    /// tree's JopSim does (a global lock at its table's cost), not as the
    /// processor does: calibration then reports benchmarks that run
    /// `synchronized` code instead of fitting the table to them.
    fn times_monitors_as_jopsim(&self) -> bool {
        false
    }

    /// The memory's read and write wait states `(r, w)`, where the target
    /// knows them (the virtual board and the bench are a known processor;
    /// JopSim's are fixed): a fit then takes them as they are.
    fn wait_states(&self) -> Option<(f64, f64)> {
        None
    }

    /// The cycles one character a program prints takes on the target's
    /// serial line (its UART's frame), where the target knows them (the
    /// virtual board and the bench as the tree's processor): printing on JOP
    /// waits for the line.
    fn serial_char(&self) -> Option<f64> {
        None
    }

    /// The characters a program may print without waiting when the serial
    /// line is idle (its UART's transmit FIFO and the transmitter itself),
    /// where the target knows them.
    fn serial_free(&self) -> Option<f64> {
        None
    }

    /// Whether the workloads run as a JOP tree links them (its images, its
    /// runtime and library, its compiler's class files).
    fn runs_tree_images(&self) -> bool {
        self.kind().runs_tree_images()
    }

    /// After the last job, whatever happened: stop what `prepare` started
    /// and move the images it made into `out/images/` (a record of exactly
    /// what ran). Called with `None` when no output directory was made.
    fn finish(&mut self, out: Option<&Path>) -> Result<(), TargetError>;
}
