//! Measuring a workload directory on any target: the command line's target
//! options turned into a [`jopcal_targets::Target`], measured by
//! [`jopcal_targets::measure`].

use crate::{locate, Session};
use anyhow::{bail, Result};
use jopcal_emu::BoardConfig;
use jopcal_targets::board::{BoardLine, BoardTarget, Images, REAL_BOARD};
use jopcal_targets::emu::VirtualBoard;
use jopcal_targets::host::HostTarget;
use jopcal_targets::jopsim::JopsimTarget;
use jopcal_targets::{failures_message, Measured, TargetKind};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// How to reach the target: the board's line, the virtual board, the bench.
#[derive(Debug, Clone, Default)]
pub struct TargetOptions {
    /// The board's line and what to send it.
    pub board: BoardOptions,
    /// The virtual board's settings.
    pub emu: EmuOptions,
    /// The built bench for the Verilator target.
    pub sim: Option<PathBuf>,
    /// Options for the bench.
    pub sim_args: Vec<String>,
    /// Jobs at once: image builds, and targets (virtual boards, benches,
    /// JopSims) side by side; 0 is taken as 1.
    pub jobs: usize,
    /// Where the workloads run: here, or as tasks of a Slurm job array.
    pub launcher: jopcal_launch::slurm::Launcher,
}

/// The virtual board's settings (`--target emu`), as the verbs that measure take them.
#[derive(Debug, Clone, Default, clap::Args)]
pub struct EmuOptions {
    /// The virtual board's timing and cache (default: calibration/emu-board.toml;
    /// calibration/jop-devel.toml when it runs a JOP tree's images).
    #[arg(long = "emu-config", value_name = "FILE")]
    pub config: Option<PathBuf>,
    /// How the virtual board times a JOP tree's images: processor (the RTL's,
    /// from the tree's microcode and the top's VHDL) or jopsim (the tree's JopSim).
    #[arg(long = "emu-timing", default_value = "processor")]
    pub timing: crate::processor::EmuTiming,
    /// The tree's processor the virtual board is: a Quartus project (default cycmin).
    #[arg(long, value_name = "PROJECT")]
    pub top: Option<String>,
    /// That processor with a generic of its top set, e.g. --emu-generic block_bits=3
    /// (repeatable): as `sim build --generic` builds it.
    #[arg(long = "emu-generic", value_name = "NAME=VALUE", value_parser = parse_generic)]
    pub generics: Vec<(String, i64)>,
    /// Override one of its parameters, e.g. --emu-param r=2 (repeatable).
    #[arg(long = "emu-param", value_name = "NAME=VALUE")]
    pub params: Vec<String>,
    /// Write each run's per-method cycles and call stream into DIR/traces/
    /// (the virtual board, or the Verilator bench's trace taps).
    #[arg(long)]
    pub trace: bool,
}

/// A generic of a top set to a value: `NAME=VALUE` (an integer).
pub fn parse_generic(s: &str) -> Result<(String, i64)> {
    let (name, value) = s
        .split_once('=')
        .ok_or_else(|| anyhow::anyhow!("`{s}`: expected NAME=VALUE, e.g. jpc_width=11"))?;
    let v = value
        .trim()
        .parse::<i64>()
        .map_err(|_| anyhow::anyhow!("`{s}`: the value of {name} must be an integer"))?;
    Ok((name.trim().to_string(), v))
}

/// How to reach a board and what to send it (`--target board`).
#[derive(Debug, Clone)]
pub struct BoardOptions {
    /// Serial device or `tcp://HOST:PORT`.
    pub port: Option<String>,
    /// The board's download protocol.
    pub protocol: jopcal_link::Protocol,
    /// Line rate (8N1).
    pub baud: u32,
    /// `.jop` images to run instead of building the tree's.
    pub images: Vec<PathBuf>,
    /// Shell command run before each download.
    pub configure: Option<String>,
    /// Attempts after the first.
    pub retries: u32,
    /// Raise DTR and RTS after opening the port.
    pub dtr_rts: bool,
    /// Seconds of silence after which a running image is given up.
    pub line_timeout: u64,
    /// The tree's Quartus project whose processor the board holds (its
    /// UART and wait states then known).
    pub top: Option<String>,
    /// How a classic download to a board is paced (default [`jopcal_link::Pace::line`]).
    pub pace: Option<jopcal_link::Pace>,
}

impl Default for BoardOptions {
    fn default() -> Self {
        BoardOptions {
            port: None,
            protocol: jopcal_link::Protocol::Classic,
            baud: 115_200,
            images: Vec::new(),
            configure: None,
            retries: 2,
            dtr_rts: false,
            line_timeout: 30,
            top: None,
            pace: None,
        }
    }
}

/// What to measure, where and how.
pub struct Measure<'a> {
    pub target: TargetKind,
    pub benches: &'a [String],
    pub runs: u32,
    pub timeout: u64,
    pub jvm_args: &'a [String],
    pub on: &'a TargetOptions,
    /// The suite comes from a JOP tree (`jembench`, `jbe`, or the
    /// micro-benchmarks of a validate run on one): the virtual board runs
    /// the images the tree's toolchain links, when `jopcal.toml` configures it.
    pub tree_suite: bool,
}

/// Measures the workload directory `root` on any target into `out`.
/// With `--jobs N`, N virtual boards, benches or JopSims run side by side.
/// With `--launcher slurm`, each workload is a task of a Slurm job array
/// (see [`crate::slurm`]) and the tasks' rows are published as one run's.
pub fn measure_on(s: Session, root: &Path, how: &Measure, out: &Path, stamp: &str) -> Result<Measured> {
    if let jopcal_launch::slurm::Launcher::Slurm(opts) = &how.on.launcher {
        let planned = slurm_tasks(s, root, how, "")?;
        let runs = jopcal_launch::slurm::run_tasks(s.progress, opts, "run", &planned.tasks)?;
        return collect_tasks(&planned, &runs, out, stamp, s.progress);
    }
    let m = measure_here(s, root, how, out, stamp)?;
    write_target_facts(&m)?;
    Ok(m)
}

/// [`measure_on`] on this machine.
fn measure_here(s: Session, root: &Path, how: &Measure, out: &Path, stamp: &str) -> Result<Measured> {
    let n = side_by_side(root, how)?;
    let mut targets = (0..n)
        .map(|k| {
            // The first says what it is; the others are the same.
            let progress: &crate::Progress = if k == 0 {
                s.progress
            } else {
                &jopcal_targets::NoProgress
            };
            open_target(root, s.jop_home, how, out, progress)
        })
        .collect::<Result<Vec<_>>>()?;
    Ok(jopcal_targets::measure_parallel(
        &mut targets,
        out,
        stamp,
        how.runs,
        s.progress,
    )?)
}

/// What the target said of itself, beside `measurements.csv` as
/// `target.json`: what a later stage (or a Slurm run's collector) needs.
#[derive(Debug, Clone, Default, serde::Serialize, serde::Deserialize)]
pub struct TargetFacts {
    /// The method cache it ran with (`fifo:<bytes>:<blocks>`).
    pub method_cache: Option<String>,
    /// It times monitors as JopSim does.
    pub times_monitors_as_jopsim: bool,
    /// It ran a JOP tree's images.
    pub runs_tree_images: bool,
    /// The memory's read and write wait states, where it knows them.
    pub wait_states: Option<(f64, f64)>,
    /// Cycles of one character on its serial line, where it knows them.
    #[serde(default)]
    pub serial_char: Option<f64>,
    /// Characters it prints without waiting on an idle line, where it knows them.
    #[serde(default)]
    pub serial_free: Option<f64>,
    /// What produced the measurements, for the record (jopcal's version and
    /// commit, the command, the JDK, the tree and its commit, the target and
    /// its configuration): read by no stage, compared by `regress`.
    #[serde(default)]
    pub provenance: std::collections::BTreeMap<String, String>,
}

/// How the targets behind two sets of measurements differ, one phrase each
/// ("method cache fifo:4096:16 against fifo:2048:16"); empty when they agree.
pub fn facts_differences(a: &TargetFacts, b: &TargetFacts) -> Vec<String> {
    fn show<T: std::fmt::Debug>(v: &Option<T>) -> String {
        v.as_ref()
            .map_or("unknown".into(), |v| format!("{v:?}").trim_matches('"').to_string())
    }
    let mut d = Vec::new();
    let mut differ = |what: &str, x: String, y: String| {
        if x != y {
            d.push(format!("{what} {x} against {y}"));
        }
    };
    differ("method cache", show(&a.method_cache), show(&b.method_cache));
    differ("wait states (r, w)", show(&a.wait_states), show(&b.wait_states));
    differ("serial character cycles", show(&a.serial_char), show(&b.serial_char));
    differ(
        "serial line's free characters",
        show(&a.serial_free),
        show(&b.serial_free),
    );
    differ(
        "monitors timed as JopSim",
        a.times_monitors_as_jopsim.to_string(),
        b.times_monitors_as_jopsim.to_string(),
    );
    for fact in ["target", "tree"] {
        differ(fact, show(&a.provenance.get(fact)), show(&b.provenance.get(fact)));
    }
    d
}

impl TargetFacts {
    fn of(m: &Measured) -> TargetFacts {
        TargetFacts {
            method_cache: m.method_cache.clone(),
            times_monitors_as_jopsim: m.times_monitors_as_jopsim,
            runs_tree_images: m.runs_tree_images,
            wait_states: m.wait_states,
            serial_char: m.serial_char,
            serial_free: m.serial_free,
            provenance: jopcal_measure::provenance::facts(),
        }
    }
}

/// The facts `target.json` in `dir` holds; `None` without the file (a run
/// made before jopcal wrote it). A file that does not parse is an error
/// naming it.
pub fn read_target_facts(dir: &Path) -> Result<Option<TargetFacts>> {
    let path = dir.join("target.json");
    let Ok(text) = std::fs::read_to_string(&path) else {
        return Ok(None);
    };
    Ok(Some(
        serde_json::from_str(&text).map_err(|e| anyhow::anyhow!("{}: {e}", path.display()))?,
    ))
}

fn write_target_facts(m: &Measured) -> Result<()> {
    let json = serde_json::to_string_pretty(&TargetFacts::of(m))?;
    jopcal_measure::atomic::write_atomic(&m.out.path.join("target.json"), json.as_bytes())?;
    Ok(())
}

/// The Slurm tasks of one measurement: a `jopcal run` of each workload,
/// with this run's target options, and the workload each measures.
pub struct PlannedTasks {
    /// The workload of each task.
    pub benches: Vec<String>,
    pub tasks: Vec<jopcal_launch::slurm::Task>,
}

/// One task per workload of `root` that `how` selects, each a `jopcal run`
/// of that workload alone with every option of `how`; `label` goes before
/// each task's name (a sweep's point).
pub fn slurm_tasks(s: Session, root: &Path, how: &Measure, label: &str) -> Result<PlannedTasks> {
    check_host_only(how)?;
    if how.target == TargetKind::Board {
        bail!("--launcher slurm cannot run --target board: the board is on this machine's port (the Slurm launcher runs emu, verilator, jopsim and host)");
    }
    if !how.on.board.images.is_empty() {
        bail!("--launcher slurm runs a suite's workloads, one task each; --image files run with --launcher local");
    }
    // Every option checked here, before anything is submitted.
    drop(open_target(
        root,
        s.jop_home,
        how,
        Path::new("."),
        &jopcal_targets::NoProgress,
    )?);
    let benches: Vec<String> = jopcal_workloads::Suite::load(root)?
        .select(how.benches)?
        .into_iter()
        .map(|w| w.name)
        .collect();
    let common = run_args(s, root, how)?;
    // The workload's own limit for each run, and time to build its image.
    let limit_secs = how.timeout * u64::from(how.runs.max(1)) + 600;
    let tasks = benches
        .iter()
        .map(|b| {
            let mut args = common.clone();
            args.extend(["--bench".to_string(), b.clone()]);
            jopcal_launch::slurm::Task {
                name: format!("{label}{b}"),
                args,
                limit_secs,
            }
        })
        .collect();
    Ok(PlannedTasks { benches, tasks })
}

/// The `jopcal run` arguments that measure `root` as `how` says, on one
/// job (Slurm runs the tasks side by side), every path absolute.
fn run_args(s: Session, root: &Path, how: &Measure) -> Result<Vec<String>> {
    let abs = |p: &Path| -> Result<String> { Ok(std::path::absolute(p)?.display().to_string()) };
    let on = how.on;
    // `--option=value` each, after the verb (--firmware and --jop-home are global).
    let mut a: Vec<String> = vec![
        "run".into(),
        format!("--target={}", how.target.name()),
        format!("--suite={}", if how.tree_suite { "tree" } else { "builtin" }),
        format!("--suite-root={}", abs(root)?),
        format!("--runs={}", how.runs),
        format!("--timeout={}", how.timeout),
        "--jobs=1".into(),
        format!("--emu-timing={}", on.emu.timing.name()),
        format!("--protocol={}", on.board.protocol),
        format!("--baud={}", on.board.baud),
        format!("--line-timeout={}", on.board.line_timeout),
    ];
    let paths = [
        ("--firmware", s.firmware),
        ("--jop-home", s.jop_home),
        ("--emu-config", on.emu.config.as_deref()),
        ("--sim", on.sim.as_deref()),
    ];
    for (k, p) in paths {
        if let Some(p) = p {
            a.push(format!("{k}={}", abs(p)?));
        }
    }
    a.extend(on.emu.top.iter().map(|t| format!("--top={t}")));
    a.extend(on.board.top.iter().map(|t| format!("--board-top={t}")));
    a.extend(on.emu.generics.iter().map(|(n, v)| format!("--emu-generic={n}={v}")));
    a.extend(on.emu.params.iter().map(|p| format!("--emu-param={p}")));
    if on.emu.trace {
        a.push("--trace".into());
    }
    a.extend(on.sim_args.iter().map(|x| format!("--sim-arg={x}")));
    a.extend(how.jvm_args.iter().map(|x| format!("--jvm-arg={x}")));
    Ok(a)
}

/// The tasks' measurements published in `out` as one run's: rows in the
/// order one machine gives (run, then workload), each task's logs, images
/// and traces beside them, its failure named.
pub fn collect_tasks(
    planned: &PlannedTasks,
    runs: &[jopcal_launch::slurm::TaskRun],
    out: &Path,
    stamp: &str,
    progress: &crate::Progress,
) -> Result<Measured> {
    use jopcal_measure::{measurements, MeasurementWriter};
    let dir = jopcal_targets::prepare_out(out, stamp, progress)?;
    let mut rows = Vec::new();
    let mut failures = Vec::new();
    let mut facts: Option<TargetFacts> = None;
    for (i, (bench, run)) in planned.benches.iter().zip(runs).enumerate() {
        let task_out = run.out();
        if task_out.is_dir() {
            copy_task_files(&task_out, &dir.path)?;
        }
        if let Some(why) = &run.failure {
            // The task's own line already names its workload.
            let why = why.strip_prefix(&format!("workload {bench}: ")).unwrap_or(why);
            failures.push((bench.clone(), why.to_string()));
            continue;
        }
        let csv = task_out.join("measurements.csv");
        // Each row's log is relative to its run's directory, where the copy now is.
        for m in measurements::read(&csv).map_err(|e| anyhow::anyhow!("{}: {e}", csv.display()))? {
            rows.push(((m.run, i), m));
        }
        if facts.is_none() {
            facts = read_target_facts(&task_out)?;
        }
    }
    rows.sort_by_key(|(k, _)| *k);
    let rows: Vec<_> = rows.into_iter().map(|(_, m)| m).collect();
    let mut writer = MeasurementWriter::create(&dir.path)?;
    for m in &rows {
        writer.append(m)?;
    }
    let csv = writer.finish()?;
    jopcal_measure::measurements::record_failures(&csv, &failures)?;
    let facts = facts.unwrap_or_default();
    let m = Measured {
        out: dir,
        csv,
        rows,
        failures,
        method_cache: facts.method_cache,
        times_monitors_as_jopsim: facts.times_monitors_as_jopsim,
        runs_tree_images: facts.runs_tree_images,
        wait_states: facts.wait_states,
        serial_char: facts.serial_char,
        serial_free: facts.serial_free,
    };
    write_target_facts(&m)?;
    Ok(m)
}

/// A task's logs, images and traces copied into the run's directory
/// (its own `measurements.csv` and `target.json` are merged, not copied;
/// its `summary.json` is the run's to write).
fn copy_task_files(task_out: &Path, dir: &Path) -> Result<()> {
    for e in walkdir::WalkDir::new(task_out).min_depth(1) {
        let e = e?;
        let rel = e.path().strip_prefix(task_out)?;
        let top = rel
            .components()
            .next()
            .map(|c| c.as_os_str().to_string_lossy().into_owned());
        if matches!(
            top.as_deref(),
            Some("measurements.csv" | "target.json" | "summary.json" | "previous")
        ) {
            continue;
        }
        let to = dir.join(rel);
        if e.file_type().is_dir() {
            std::fs::create_dir_all(&to)?;
        } else {
            std::fs::copy(e.path(), &to)
                .map_err(|err| anyhow::anyhow!("copying {} to {}: {err}", e.path().display(), to.display()))?;
        }
    }
    Ok(())
}

/// How many targets run side by side: `--jobs`, at most one per workload;
/// one for a board (one port) and the host JVM (it measures time, which
/// other work beside it would disturb).
fn side_by_side(root: &Path, how: &Measure) -> Result<usize> {
    let jobs = how.on.jobs.max(1);
    if jobs == 1 || matches!(how.target, TargetKind::Host | TargetKind::Board) {
        return Ok(1);
    }
    let workloads = if how.on.board.images.is_empty() {
        jopcal_workloads::Suite::load(root)?.select(how.benches)?.len()
    } else {
        how.on.board.images.len()
    };
    Ok(jobs.min(workloads).max(1))
}

/// The target the command line names, with every file it needs found and
/// every option it needs checked (before anything is built).
fn open_target(
    root: &Path,
    jop_home: Option<&Path>,
    how: &Measure,
    out: &Path,
    progress: &crate::Progress,
) -> Result<Box<dyn jopcal_targets::Target + Send>> {
    check_host_only(how)?;
    let on = how.on;
    let limit = Duration::from_secs(how.timeout);
    let line = |port: String| board_line(&on.board, port);
    Ok(match how.target {
        TargetKind::Host => Box::new(HostTarget::new(
            root,
            &locate::cache_root()?,
            how.benches,
            how.jvm_args,
            limit,
        )),
        TargetKind::Emu => {
            let e = &on.emu;
            let images = emu_images(root, jop_home, how, progress)?;
            let (cfg, cfg_note) = if matches!(images, Images::FromLauncher) {
                let cfg_path = locate::emu_config_path(e.config.as_deref(), Some(root))?;
                let cfg = BoardConfig::load(&cfg_path, &e.params)?;
                let rw = |k: &str| cfg.model.params().get(k).map_or("?".into(), |v| v.to_string());
                // For the record only: the estimator is not told (it must find them).
                let what = format!(
                    "{} {}[r={}, w={}, method cache fifo:{}:{}, {} MHz]",
                    cfg_path.display(),
                    e.params.iter().map(|p| format!("{p} ")).collect::<String>(),
                    rw("r"),
                    rw("w"),
                    cfg.cache.bytes,
                    cfg.cache.blocks,
                    cfg.clock_mhz
                );
                (cfg, what)
            } else {
                // A tree's images run on the tree's processor (or as JopSim, asked for).
                let s = Session {
                    firmware: Some(root),
                    jop_home,
                    progress,
                    profiler: Default::default(),
                };
                let (cfg, note) = crate::processor::image_board(
                    s,
                    &crate::processor::ImageBoard {
                        timing: e.timing,
                        config: e.config.as_deref(),
                        top: e.top.as_deref(),
                        generics: &e.generics,
                        // A bench's processor, with its clock and UART, to compare with it.
                        sim: on.sim.as_deref(),
                        params: &e.params,
                    },
                )?;
                progress.say(&format!("the virtual board: {note}"));
                (cfg, format!("{note} {}", e.params.join(" ")))
            };
            let board = VirtualBoard {
                root: root.to_path_buf(),
                cache: locate::cache_root()?,
                benches: how.benches.to_vec(),
                cfg,
                cfg_note: cfg_note.trim().to_string(),
                trace_dir: e.trace.then(|| out.join("traces")),
                // What the program's clock reads gave, for its host profile to read.
                clock_dir: Some(out.join(crate::clocks::CLOCKS_DIR)),
            };
            let line_timeout = Duration::from_secs(on.board.line_timeout);
            Box::new(jopcal_targets::emu::target(
                board,
                images,
                on.board.protocol,
                line_timeout,
                limit,
            ))
        }
        TargetKind::Jopsim => Box::new(JopsimTarget::new(
            locate::toolchain(jop_home, "--target jopsim")?,
            root,
            how.benches,
            limit,
        )?),
        TargetKind::Board => {
            // Say what is missing before any image is built.
            let Some(port) = on.board.port.clone() else {
                bail!("--target board needs --port DEV or --port tcp://HOST:PORT");
            };
            // The tree's processor the board holds, where named.
            let board_top = match (on.board.top.as_deref(), jop_home) {
                (Some(top), Some(home)) => Some((top, home)),
                (Some(top), None) => {
                    bail!("--board-top {top} names a project of a JOP tree: give the tree with --jop-home")
                }
                (None, _) => None,
            };
            let images = images(root, jop_home, how)?;
            let target = BoardTarget::new(
                jopcal_targets::TargetKind::Board,
                line(port),
                images,
                REAL_BOARD,
                limit,
                None,
            );
            let target = match on.board.pace {
                Some(pace) => target.with_pace(pace),
                None => target,
            };
            // Its UART and memory.
            let Some((top, home)) = board_top else {
                return Ok(Box::new(target));
            };
            let known = crate::processor::board_processor(Some(root), home, top)?;
            progress.say(&format!(
                "the board holds quartus/{top} of the tree: its UART sends a character in {} cycles{}",
                known.serial_char,
                match known.wait_states {
                    Some((r, w)) => format!(", its memory reads with {r} and writes with {w} wait states"),
                    None => String::new(),
                }
            ));
            let target = target
                .with_serial_char(known.serial_char)
                .with_serial_free(known.serial_free);
            Box::new(match known.wait_states {
                Some(rw) => target.with_wait_states(rw),
                None => target,
            })
        }
        TargetKind::Verilator => {
            let Some(sim) = on.sim.as_deref() else {
                bail!("--target verilator needs --sim DIR (a bench from `jopcal sim build`)");
            };
            jopcal_targets::verilator::bench_binary(sim)?;
            let images = images(root, jop_home, how)?;
            let target = jopcal_targets::verilator::target(
                sim,
                &on.sim_args,
                line(String::new()),
                images,
                limit,
                on.emu.trace.then(|| out.join("traces")),
            );
            // A tree's JOP that `sim build` made: its UART and memory are known.
            match crate::processor::bench_processor(Some(root), sim)? {
                Some(known) => {
                    let target = target.with_serial_char(known.serial_char);
                    Box::new(match known.wait_states {
                        Some(rw) => target.with_wait_states(rw),
                        None => target,
                    })
                }
                None => Box::new(target),
            }
        }
    })
}

/// What the virtual board runs: `--image` files; for a JOP tree's suite,
/// the images the tree's toolchain links (JOP's runtime and all), when
/// `jopcal.toml` configures the toolchain; else class bundles of the
/// suite's class files with the board's own small library.
fn emu_images(root: &Path, jop_home: Option<&Path>, how: &Measure, progress: &crate::Progress) -> Result<Images> {
    if how.on.board.images.is_empty() && !how.tree_suite {
        return Ok(Images::FromLauncher);
    }
    match images(root, jop_home, how) {
        Ok(images) => Ok(images),
        Err(why) => {
            progress.say(&format!(
                "note: the virtual board runs the suite's class files with its own small library, not the tree's images ({why:#}; see docs/notes/jop-tree.md)"
            ));
            Ok(Images::FromLauncher)
        }
    }
}

/// `--image` files, else the images the JOP tree's toolchain builds.
fn images(root: &Path, jop_home: Option<&Path>, how: &Measure) -> Result<Images> {
    if !how.on.board.images.is_empty() {
        return Ok(Images::Given(how.on.board.images.clone()));
    }
    let why = format!("--target {} without --image", how.target.name());
    Ok(Images::Built {
        tools: Box::new(locate::toolchain(jop_home, &why)?),
        root: root.to_path_buf(),
        benches: how.benches.to_vec(),
        limit: Duration::from_secs(how.timeout),
        parallel: how.on.jobs,
    })
}

/// The line settings of `--port` and its companions.
pub fn board_line(b: &BoardOptions, port: String) -> BoardLine {
    BoardLine {
        port,
        protocol: b.protocol,
        baud: b.baud,
        configure: b.configure.clone(),
        // jopcal.toml's `reset`, where there is one.
        reset: crate::locate::jop_config().ok().flatten().and_then(|c| c.reset),
        retries: b.retries,
        retry_on: jopcal_link::session::RetryOn::AnyFailure,
        dtr_rts: b.dtr_rts,
        line_timeout: Duration::from_secs(b.line_timeout),
    }
}

/// Options that only the host JVM target honours are refused elsewhere,
/// rather than silently ignored.
fn check_host_only(how: &Measure) -> Result<()> {
    if how.target == TargetKind::Host {
        return Ok(());
    }
    if how.runs > 1 {
        bail!(
            "--runs {} applies to --target host only: a JOP target counts cycles, and the same image gives the same count (run the command again to repeat a board measurement)",
            how.runs
        );
    }
    if let Some(arg) = how.jvm_args.first() {
        bail!(
            "--jvm-arg {arg} applies to --target host only (--target {} runs no host JVM)",
            how.target.name()
        );
    }
    Ok(())
}

/// Failed workload runs become the verb's error (after the good rows were kept).
pub fn fail_on_failures(failures: &[(String, String)], out: &Path) -> Result<()> {
    match failures_message(failures, out) {
        Some(msg) => bail!(msg),
        None => Ok(()),
    }
}
