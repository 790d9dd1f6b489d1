//! Launchers: where the workloads of a run are measured. [`Launcher::Local`]
//! is this machine (the pipeline measures in its own process, `--jobs` at a
//! time); [`Launcher::Slurm`] makes each workload a task, one jopcal command,
//! of a Slurm job array ([`slurm`]), and collects the tasks' results. The
//! pipeline plans the tasks; scheduling them is Slurm's.
#![forbid(unsafe_code)]

pub mod slurm;

pub use slurm::{Launcher, SlurmOptions, Task, TaskRun};

/// Where progress and report lines go.
pub type Progress = dyn jopcal_targets::Progress + Sync;
