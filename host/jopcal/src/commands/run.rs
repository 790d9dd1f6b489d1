//! `jopcal run`: measure workloads on a target into measurements.csv.

use crate::cli::{BoardArgs, EmuBoardArgs, RunArgs, Target, TargetArgs};
use crate::commands::board::{measure_board, REAL_BOARD};
use crate::commands::emu::measure_emu;
use crate::context;
use crate::progress::Progress;
use anyhow::{bail, Context, Result};
use jopcal_measure::{atomic, clock, Measurement, MeasurementWriter, OutDir, Unit};
use jopcal_workloads::host::{interpret, run_java, JavaRun};
use jopcal_workloads::{build_suite_lenient, BuiltSuite, Jdk, Suite, WorkloadSpec};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// What a measurement pass produced.
pub struct Measured {
    pub out: OutDir,
    pub csv: PathBuf,
    pub rows: Vec<Measurement>,
    /// `(bench, one-line reason)` for every workload run that was rejected.
    pub failures: Vec<(String, String)>,
}

/// Everything needed to run the suite on the host JVM.
pub struct HostSetup {
    pub jdk: Jdk,
    /// The workloads to run, in suite order unless named explicitly.
    pub selected: Vec<WorkloadSpec>,
    pub built: BuiltSuite,
    /// `(workload, why)` of selected workloads left out because they do not compile.
    pub left_out: Vec<(String, String)>,
}

/// Finds the suite, checks the benchmark names, finds the JDK and compiles the
/// suite (or takes it from the cache).
pub fn prepare_host(firmware: Option<&Path>, benches: &[String]) -> Result<HostSetup> {
    let root = context::firmware_dir(firmware)?;
    let suite = Suite::load(&root)?;
    let mut selected = suite.select(benches)?;
    let jdk = Jdk::detect()?;
    let cache = context::cache_root()?;
    // One harness that does not compile is left out, never the whole suite.
    let lenient = build_suite_lenient(&root, &jdk, &cache)
        .with_context(|| format!("building the suite in {}", root.display()))?;
    let built = lenient.built;
    let left_out: Vec<(String, String)> = lenient
        .left_out
        .into_iter()
        .filter(|(name, _)| selected.iter().any(|w| &w.name == name))
        .map(|(name, why)| (name, format!("does not compile on the host: {why}")))
        .collect();
    for (name, why) in &left_out {
        eprintln!("     note: {name} left out: {why}");
    }
    selected.retain(|w| !left_out.iter().any(|(n, _)| n == &w.name));
    if let (true, Some((name, why))) = (selected.is_empty(), left_out.first()) {
        bail!("no workload left to run: {name} {why}");
    }
    eprintln!(
        "     build {} workloads, {} ({}), class files {}",
        suite.workloads.len(),
        jdk.version,
        if built.cached { "cached" } else { "compiled" },
        built.classes.display()
    );
    Ok(HostSetup {
        jdk,
        selected,
        built,
        left_out,
    })
}

pub fn run(firmware: Option<&Path>, jop_home: Option<&Path>, a: &RunArgs) -> Result<()> {
    let stamp = clock::now_stamp();
    let out = context::out_dir(a.out.as_deref(), "run", &stamp)?;
    let root = context::suite_dir(firmware, jop_home, &a.suite)?;
    let how = Measure {
        target: a.target,
        benches: &a.benches,
        runs: a.runs,
        timeout: context::workload_timeout(a.timeout, a.target)?,
        jvm_args: &a.jvm_args,
        on: &a.on,
    };
    let m = measure_on(&root, jop_home, &how, &out, &stamp)?;
    println!("{}", m.csv.display());
    fail_on_rejected(&m)
}

/// What to measure, where and how.
pub struct Measure<'a> {
    pub target: Target,
    pub benches: &'a [String],
    pub runs: u32,
    pub timeout: u64,
    pub jvm_args: &'a [String],
    pub on: &'a TargetArgs,
}

/// Measures the workload directory `root` on any target. On a board or the
/// bench without `--image`, and in JopSim, the JOP tree's toolchain builds
/// each workload's image (jopcal.toml).
pub fn measure_on(root: &Path, jop_home: Option<&Path>, how: &Measure, out: &Path, stamp: &str) -> Result<Measured> {
    let on = how.on;
    check_host_only(how)?;
    Ok(match how.target {
        Target::Jopsim => {
            crate::commands::jopsim::measure_jopsim(root, jop_home, how.benches, out, stamp, how.timeout)?
        }
        Target::Board | Target::Verilator => {
            // Say what is missing before any image is built.
            if how.target == Target::Board && on.board.port.is_none() {
                bail!("--target board needs --port DEV or --port tcp://HOST:PORT");
            }
            if how.target == Target::Verilator && on.sim.is_none() {
                bail!("--target verilator needs --sim DIR (a bench from `jopcal sim build`)");
            }
            let mut board = on.board.clone();
            // Without --image, the JOP tree's toolchain builds the suite's images.
            let staging = if board.images.is_empty() {
                let why = format!("--target {} without --image", how.target.name());
                let tools = crate::commands::jopsim::Toolchain::load(jop_home, &why)?;
                let suite = Suite::load(root)?;
                let staging = staging_dir(out)?;
                board.images = tools.build_all(
                    &suite,
                    &suite.select(how.benches)?,
                    &staging,
                    Duration::from_secs(how.timeout),
                )?;
                Some(staging)
            } else {
                None
            };
            let m = if how.target == Target::Board {
                measure_board(&board, out, stamp, how.timeout, "board", None, REAL_BOARD)
            } else {
                crate::commands::sim::measure_verilator(
                    on.sim.as_deref(),
                    &on.sim_args,
                    &board,
                    out,
                    stamp,
                    how.timeout,
                )
            };
            if let Some(staging) = staging {
                let m = m?;
                keep_images(&board.images, &m.out.join("images"))?;
                let _ = std::fs::remove_dir_all(&staging);
                m
            } else {
                m?
            }
        }
        _ => measure(
            Some(root),
            how.target,
            how.benches,
            how.runs,
            out,
            stamp,
            how.timeout,
            how.jvm_args,
            Some((&on.board, &on.emu)),
        )?,
    })
}

/// Options that only the host JVM target honours are refused elsewhere,
/// rather than silently ignored.
fn check_host_only(how: &Measure) -> Result<()> {
    if how.target == Target::Host {
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

/// A directory beside `out` for images made before `out` is prepared.
pub fn staging_dir(out: &Path) -> Result<PathBuf> {
    let base = out.parent().unwrap_or(Path::new("."));
    std::fs::create_dir_all(base)?;
    let dir = base.join(format!(".jopcal-images-{}", std::process::id()));
    std::fs::create_dir_all(&dir).with_context(|| format!("creating {}", dir.display()))?;
    Ok(dir)
}

/// Moves the images that ran (and JOP link maps beside them) into `dir`: a
/// record of exactly what ran.
pub fn keep_images(images: &[PathBuf], dir: &Path) -> Result<()> {
    std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    let maps: Vec<PathBuf> = images
        .iter()
        .map(|p| PathBuf::from(format!("{}.link.txt", p.display())))
        .filter(|p| p.is_file())
        .collect();
    for p in images.iter().chain(&maps) {
        if let Some(name) = p.file_name() {
            std::fs::rename(p, dir.join(name)).or_else(|_| std::fs::copy(p, dir.join(name)).map(|_| ()))?;
        }
    }
    Ok(())
}

/// Turns rejected workload runs into the verb's error (after the good rows were kept).
pub fn fail_on_rejected(m: &Measured) -> Result<()> {
    fail_on_failures(&m.failures, &m.out.path)
}

/// One error for a list of `(bench, reason)` failures: the first in full, and
/// how many; the files they name are in `out`.
pub fn fail_on_failures(failures: &[(String, String)], out: &Path) -> Result<()> {
    match failures {
        [] => Ok(()),
        [(bench, why)] => bail!("workload {bench}: {why} (in {})", out.display()),
        many => bail!(
            "{} workload runs failed ({}); first: {}: {} (in {})",
            many.len(),
            many.iter().map(|(b, _)| b.as_str()).collect::<Vec<_>>().join(", "),
            many[0].0,
            many[0].1,
            out.display()
        ),
    }
}

/// Runs the selected workloads `runs` times on `target`, appending each
/// accepted result to `<out>/measurements.csv` as it arrives.
#[allow(clippy::too_many_arguments)]
pub fn measure(
    firmware: Option<&Path>,
    target: Target,
    benches: &[String],
    runs: u32,
    out: &Path,
    stamp: &str,
    timeout: u64,
    jvm_args: &[String],
    board: Option<(&BoardArgs, &EmuBoardArgs)>,
) -> Result<Measured> {
    match (target, board) {
        (Target::Host, _) => {}
        (Target::Board, Some((b, _))) => return measure_board(b, out, stamp, timeout, target.name(), None, REAL_BOARD),
        (Target::Emu, Some((b, e))) => return measure_emu(firmware, benches, b, e, out, stamp, timeout),
        (Target::Emu, None) => {
            let b = BoardArgs {
                port: None,
                protocol: jopcal_link::Protocol::Classic,
                baud: 115_200,
                images: Vec::new(),
                configure: None,
                retries: 2,
                dtr_rts: false,
                line_timeout: 30,
            };
            return measure_emu(firmware, benches, &b, &EmuBoardArgs::default(), out, stamp, timeout);
        }
        (Target::Board, None) => {
            bail!("--target board is not available here: use `jopcal run --target board --port ... --image ...`")
        }
        _ => bail!("not implemented yet: target {}", target.name()),
    }
    let setup = prepare_host(firmware, benches)?;
    let selected = &setup.selected;
    let out = OutDir::prepare(out, stamp).with_context(|| format!("preparing {}", out.display()))?;
    if let Some(old) = &out.archived {
        eprintln!(
            "     note: the earlier run in {} was moved to {}",
            out.path.display(),
            old.display()
        );
    }
    let mut writer = MeasurementWriter::create(&out.path)
        .with_context(|| format!("creating measurements in {}", out.path.display()))?;
    let target_config = std::iter::once(setup.jdk.version.replace("javac", "jdk"))
        .chain(jvm_args.iter().cloned())
        .collect::<Vec<_>>()
        .join(" ");
    let timeout_d = Duration::from_secs(timeout);
    let progress = Progress::new("measure", selected.len() as u64 * u64::from(runs));
    let mut rows = Vec::new();
    let mut failures = setup.left_out.clone();
    for run_no in 1..=runs {
        for w in selected {
            progress.working_on(&w.name);
            let log_rel = format!("logs/{}-run{run_no}.log", w.name);
            let outcome = measure_one(&setup, w, jvm_args, timeout_d, &out.path, &log_rel);
            match outcome {
                Ok(reported) => {
                    for r in reported.into_iter().filter(|r| r.bench == w.name) {
                        let m = Measurement {
                            benchmark: r.bench,
                            iterations: r.iterations,
                            cycles: r.cycles,
                            unit: Unit::Ns,
                            run: run_no,
                            ..Measurement::stamped(target.name(), &target_config, &setup.built.hash[..16], &log_rel)
                        };
                        writer
                            .append(&m)
                            .with_context(|| format!("appending to {}", writer.partial_path().display()))?;
                        progress.finished(&format!("{} run {run_no}: {} {}", w.name, m.cycles, m.unit));
                        rows.push(m);
                    }
                }
                Err(why) => {
                    progress.finished(&format!("{} run {run_no}: FAILED: {why}", w.name));
                    failures.push((w.name.clone(), why));
                }
            }
        }
    }
    progress.done();
    let csv = writer.finish().context("publishing measurements.csv")?;
    Ok(Measured {
        out,
        csv,
        rows,
        failures,
    })
}

/// Runs one workload once; `Err` is a one-line reason naming the raw log
/// (relative to the output directory, so it stays right when the run is archived).
fn measure_one(
    setup: &HostSetup,
    w: &WorkloadSpec,
    jvm_args: &[String],
    timeout: Duration,
    out: &Path,
    log_rel: &str,
) -> Result<Vec<jopcal_workloads::host::Reported>, String> {
    let log = &out.join(log_rel);
    let run = JavaRun {
        classpath: vec![setup.built.classes.clone()],
        main: w.main.clone(),
        jvm_args: jvm_args.to_vec(),
        args: vec![],
        timeout,
    };
    let captured = run_java(&setup.jdk, &run).map_err(|e| format!("cannot start {}: {e}", setup.jdk.java.display()))?;
    atomic::write_atomic(log, captured.log_text(&run.command_line(&setup.jdk)).as_bytes())
        .map_err(|e| format!("cannot write {}: {e}", log.display()))?;
    interpret(&w.name, &captured, timeout).map_err(|e| format!("{e} (raw output: {log_rel})"))
}
