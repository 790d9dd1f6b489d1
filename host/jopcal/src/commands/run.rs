//! `jopcal run`: measure workloads on a target into measurements.csv. The
//! measuring is `jopcal_targets`; this file turns the command line into a
//! target.

use crate::cli::{BoardArgs, RunArgs, Target, TargetArgs};
use crate::context;
use crate::progress::Reporter;
use anyhow::{bail, Result};
use jopcal_emu::BoardConfig;
use jopcal_measure::clock;
use jopcal_targets::board::{BoardLine, BoardTarget, Images, REAL_BOARD};
use jopcal_targets::emu::VirtualBoard;
use jopcal_targets::host::{HostSetup, HostTarget};
use jopcal_targets::jopsim::JopsimTarget;
use jopcal_targets::{failures_message, Measured};
use std::path::Path;
use std::time::Duration;

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
    fail_on_failures(&m.failures, &m.out.path)
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

/// Measures the workload directory `root` on any target into `out`.
pub fn measure_on(root: &Path, jop_home: Option<&Path>, how: &Measure, out: &Path, stamp: &str) -> Result<Measured> {
    let mut target = open_target(root, jop_home, how, out)?;
    Ok(jopcal_targets::measure(
        target.as_mut(),
        out,
        stamp,
        how.runs,
        &Reporter::default(),
    )?)
}

/// The target the command line names, with every file it needs found and
/// every option it needs checked (before anything is built).
fn open_target(
    root: &Path,
    jop_home: Option<&Path>,
    how: &Measure,
    out: &Path,
) -> Result<Box<dyn jopcal_targets::Target>> {
    check_host_only(how)?;
    let on = how.on;
    let limit = Duration::from_secs(how.timeout);
    let line = |port: String| board_line(&on.board, port);
    Ok(match how.target {
        Target::Host => Box::new(HostTarget::new(
            root,
            &context::cache_root()?,
            how.benches,
            how.jvm_args,
            limit,
        )),
        Target::Emu => {
            let e = &on.emu;
            let cfg_path = context::emu_config_path(e.emu_config.as_deref(), Some(root))?;
            let cfg = BoardConfig::load(&cfg_path, &e.emu_params).map_err(anyhow::Error::msg)?;
            let board = VirtualBoard {
                root: root.to_path_buf(),
                cache: context::cache_root()?,
                benches: how.benches.to_vec(),
                cfg,
                cfg_note: format!("{} {}", cfg_path.display(), e.emu_params.join(" ")),
                trace_dir: e.trace.then(|| out.join("traces")),
            };
            let line_timeout = Duration::from_secs(on.board.line_timeout);
            Box::new(jopcal_targets::emu::target(
                board,
                on.board.protocol,
                line_timeout,
                limit,
            ))
        }
        Target::Jopsim => Box::new(JopsimTarget::new(
            context::toolchain(jop_home, "--target jopsim")?,
            root,
            how.benches,
            limit,
        )?),
        Target::Board => {
            // Say what is missing before any image is built.
            let Some(port) = on.board.port.clone() else {
                bail!("--target board needs --port DEV or --port tcp://HOST:PORT");
            };
            let images = images(root, jop_home, how)?;
            Box::new(BoardTarget::new(
                jopcal_targets::TargetKind::Board,
                line(port),
                images,
                REAL_BOARD,
                limit,
                None,
            ))
        }
        Target::Verilator => {
            let Some(sim) = on.sim.as_deref() else {
                bail!("--target verilator needs --sim DIR (a bench from `jopcal sim build`)");
            };
            jopcal_targets::verilator::bench_binary(sim)?;
            let images = images(root, jop_home, how)?;
            Box::new(jopcal_targets::verilator::target(
                sim,
                &on.sim_args,
                line(String::new()),
                images,
                limit,
            ))
        }
    })
}

/// `--image` files, else the images the JOP tree's toolchain builds.
fn images(root: &Path, jop_home: Option<&Path>, how: &Measure) -> Result<Images> {
    if !how.on.board.images.is_empty() {
        return Ok(Images::Given(how.on.board.images.clone()));
    }
    let why = format!("--target {} without --image", how.target.name());
    Ok(Images::Built {
        tools: Box::new(context::toolchain(jop_home, &why)?),
        root: root.to_path_buf(),
        benches: how.benches.to_vec(),
        limit: Duration::from_secs(how.timeout),
    })
}

/// The line settings of `--port` and its companions.
pub fn board_line(b: &BoardArgs, port: String) -> BoardLine {
    BoardLine {
        port,
        protocol: b.protocol,
        baud: b.baud,
        configure: b.configure.clone(),
        retries: b.retries,
        dtr_rts: b.dtr_rts,
        line_timeout: Duration::from_secs(b.line_timeout),
    }
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

/// Compiles the suite in `root` for the host JVM (or takes it from the cache).
pub fn prepare_host(root: &Path, benches: &[String]) -> Result<HostSetup> {
    Ok(jopcal_targets::host::prepare_host(
        root,
        &context::cache_root()?,
        benches,
        &Reporter::default(),
    )?)
}

/// Failed workload runs become the verb's error (after the good rows were kept).
pub fn fail_on_failures(failures: &[(String, String)], out: &Path) -> Result<()> {
    match failures_message(failures, out) {
        Some(msg) => bail!(msg),
        None => Ok(()),
    }
}
