//! One plan per run: what a `validate` or `run` will use, every input
//! resolved once before any work (the suite and its workloads, the tree and
//! its commit, the project file, the target and what it runs, the timeouts,
//! the profiler, the starting table, the cache, the output directory, the
//! launcher), and what it will do with them. `--dry-run` prints it and stops;
//! the run itself takes its workloads, output directory and timeouts from it.

use crate::measure::TargetOptions;
use crate::{locate, Session};
use anyhow::Result;
use jopcal_targets::TargetKind;
use jopcal_tree::programs::ProgramRequest;
use std::path::PathBuf;

/// What a plan is made from: the run's options as the user gave them.
pub struct PlanRequest<'a> {
    /// `validate` or `run`.
    pub verb: &'static str,
    pub suite: &'a str,
    pub programs: &'a ProgramRequest,
    pub benches: &'a [String],
    pub target: TargetKind,
    pub timeout: Option<u64>,
    pub on: &'a TargetOptions,
    pub out: Option<&'a std::path::Path>,
    /// The table to start from (`--model`), or the microcode to derive it from (`--microcode`).
    pub model: Option<&'a std::path::Path>,
    pub microcode: Option<&'a std::path::Path>,
    /// The output directory's time stamp.
    pub stamp: &'a str,
}

/// Every input of a run, resolved.
#[derive(Debug, Clone)]
pub struct Plan {
    pub verb: &'static str,
    pub suite: String,
    /// The workload directory (the built-in suite, or one generated in the cache).
    pub root: PathBuf,
    /// The workloads the run measures.
    pub workloads: Vec<String>,
    /// The JOP tree and its commit, where there is one.
    pub tree: Option<(PathBuf, String)>,
    /// The project file that says how the tree builds its images.
    pub project: Option<PathBuf>,
    pub target: TargetKind,
    /// What the target runs, in words.
    pub runs: String,
    /// Seconds a workload may take on the target, and its host profile.
    pub timeout: u64,
    pub profile_timeout: u64,
    pub profiler: crate::instrumenter::ProfilerKind,
    /// The table the estimates start from, in words.
    pub table: String,
    pub cache: PathBuf,
    pub out: PathBuf,
    /// The output directory's time stamp.
    pub stamp: String,
    /// Where the measurements run, in words.
    pub launcher: String,
}

/// Resolves every input of `r` (nothing is built, measured or written but
/// the generated suite in the cache).
pub fn resolve(s: Session, r: &PlanRequest) -> Result<Plan> {
    let root = locate::workload_dir(s.firmware, s.jop_home, r.suite, r.programs, s.progress)?;
    let out = locate::out_dir(r.out, r.verb, r.stamp)?;
    let workloads: Vec<String> = jopcal_workloads::Suite::load(&root)?
        .select(r.benches)?
        .into_iter()
        .map(|w| w.name)
        .collect();
    let tree_suite = r.suite != "builtin";
    let tree = if tree_suite || s.jop_home.is_some() {
        locate::jop_home(s.jop_home).ok().map(|h| {
            let commit = jopcal_measure::provenance::git_commit(&h)
                .map_or("not a git checkout".to_string(), |c| format!("commit {c}"));
            (h, commit)
        })
    } else {
        None
    };
    let config = locate::jop_config()?;
    let project = config.as_ref().map(|c| c.file.clone());
    let toolchain = tree_suite && config.as_ref().is_some_and(|c| c.build.is_some());
    let runs = match r.target {
        TargetKind::Host => "the suite's class files on the host JVM (time, not cycles)".to_string(),
        TargetKind::Emu if !toolchain => {
            "the suite's class files as class bundles, with the virtual board's own small library and timing (calibration/emu-board.toml)".to_string()
        }
        TargetKind::Emu => match &r.on.sim {
            Some(sim) => format!("the tree's linked images on the processor of the bench in {}", sim.display()),
            None => "the tree's linked images on its processor (microcode and VHDL of its default top)".to_string(),
        },
        TargetKind::Verilator => match &r.on.sim {
            Some(sim) => format!("the tree's linked images on the RTL of the bench in {}", sim.display()),
            None => "nothing: --target verilator needs --sim DIR".to_string(),
        },
        TargetKind::Jopsim => "the tree's linked images on its JopSim".to_string(),
        TargetKind::Board => format!(
            "the tree's linked images on the board at {}",
            r.on.board.port.as_deref().unwrap_or("(no --port given)")
        ),
    };
    let timeout = locate::workload_timeout(r.timeout, r.target)?;
    let table = match (r.model, r.microcode, &tree) {
        (Some(m), None, _) => m.display().to_string(),
        (m, Some(src), _) => format!(
            "derived from {} on {}",
            src.display(),
            m.map_or("the tree's table (calibration/jop-devel.toml)".to_string(), |m| m
                .display()
                .to_string())
        ),
        (None, None, _)
            if toolchain && r.target == TargetKind::Jopsim
                || toolchain
                    && r.target == TargetKind::Emu
                    && r.on.emu.timing == crate::processor::EmuTiming::Jopsim =>
        {
            "calibration/jop-devel.toml (JopSim's table: the target times as JopSim)".to_string()
        }
        (None, None, Some((home, _))) if toolchain && r.target != TargetKind::Host => format!(
            "derived from {} at the target's wait states (the bytecodes the runtime implements in Java timed by the micro-benchmarks on the virtual board)",
            home.join("asm/src/jvm.asm").display()
        ),
        _ => "calibration/jop-wcet.toml (the published table)".to_string(),
    };
    let launcher = match &r.on.launcher {
        jopcal_launch::slurm::Launcher::Local => format!("this machine, {} at a time", r.on.jobs.max(1)),
        jopcal_launch::slurm::Launcher::Slurm(o) => format!(
            "a Slurm job array (sbatch{}), tasks in {}",
            o.sbatch_args.iter().map(|a| format!(" {a}")).collect::<String>(),
            o.dir
                .as_ref()
                .map_or("./jopcal-slurm".to_string(), |d| d.display().to_string())
        ),
    };
    Ok(Plan {
        verb: r.verb,
        suite: r.suite.to_string(),
        root,
        workloads,
        tree,
        project,
        target: r.target,
        runs,
        timeout,
        profile_timeout: locate::profile_timeout(r.timeout, timeout),
        profiler: s.profiler,
        table,
        cache: locate::cache_root()?,
        out,
        stamp: r.stamp.to_string(),
        launcher,
    })
}

impl Plan {
    /// The plan in words, a line per input, then what the run does.
    pub fn text(&self) -> String {
        let mut lines = vec![
            format!("{} plan", self.verb),
            format!("  suite      {} ({})", self.suite, self.root.display()),
            format!("  workloads  {} ({})", self.workloads.len(), self.workloads.join(", ")),
        ];
        if let Some((home, commit)) = &self.tree {
            lines.push(format!("  tree       {} ({commit})", home.display()));
        }
        if let Some(p) = &self.project {
            lines.push(format!("  project    {}", p.display()));
        }
        lines.push(format!("  target     {}: {}", self.target.name(), self.runs));
        lines.push(format!("  timeout    {} s a workload", self.timeout));
        lines.push(format!("  launcher   {}", self.launcher));
        if self.verb == "validate" {
            lines.push(format!(
                "  profiler   {} ({} s a workload)",
                self.profiler.name(),
                self.profile_timeout
            ));
            lines.push(format!("  table      {}", self.table));
        }
        lines.push(format!("  cache      {}", self.cache.display()));
        lines.push(format!("  output     {}", self.out.display()));
        let mut steps = vec![format!(
            "measure the {} workload{} on {} into {}",
            self.workloads.len(),
            if self.workloads.len() == 1 { "" } else { "s" },
            self.target.name(),
            self.out.join("measurements.csv").display()
        )];
        if self.verb == "validate" {
            steps.extend([
                format!(
                    "profile them on the host JVM into {}",
                    self.out.join("profiles").display()
                ),
                "estimate each with the table above, and with the published one under its cache modes".to_string(),
                "fit the table's parameters to the measurements (leave-one-out), and on the micro-benchmarks alone"
                    .to_string(),
                format!(
                    "write accuracy.md, plots/, calibrated.toml and summary.json into {}",
                    self.out.display()
                ),
            ]);
        }
        with_steps(lines, &steps)
    }
}

/// A dry run's plan as printed: its lines of inputs, then its steps, numbered.
pub fn with_steps(mut lines: Vec<String>, steps: &[String]) -> String {
    lines.push("  steps".into());
    for (k, step) in steps.iter().enumerate() {
        lines.push(format!("    {}. {step}", k + 1));
    }
    lines.join("\n") + "\n"
}
