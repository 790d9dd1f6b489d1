//! The Verilator bench as `jopcal sim` drives it by hand: building it for a
//! JOP tree's processor or for the user's own RTL, running a built bench,
//! and timing the bench's overhead. Measuring on it is
//! `jopcal_targets::verilator`'s.

use crate::{locate, Session};
use anyhow::{anyhow, bail, Context, Result};
use jopcal_measure::children::InGroup;
use jopcal_targets::verilator::{bench_binary, build_args};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Instant;

/// `hdl-sim/bench` beside the firmware directory (a checkout), else the copy
/// this executable carries.
pub fn bench_dir(firmware: Option<&Path>) -> Result<PathBuf> {
    let fw = locate::firmware_dir(firmware)?;
    let d = fw.parent().unwrap_or(Path::new(".")).join("hdl-sim/bench");
    if d.is_dir() {
        return Ok(d);
    }
    Ok(locate::share_dir()?.join("hdl-sim/bench"))
}

/// A bench of the JOP tree's processor.
#[derive(Debug, Clone, Copy)]
pub struct TreeBench<'a> {
    /// The tree's Quartus project (default: [`jopcal_sim::jop::DEFAULT_TOP`]).
    pub top: Option<&'a str>,
    /// Where the bench is built.
    pub out: &'a Path,
    /// Simulation microcode: images are preloaded, not downloaded.
    pub preload: bool,
    /// Clock cycles per UART bit.
    pub bit_cycles: u32,
    /// Build with VCD tracing.
    pub trace: bool,
    /// Add the trace taps.
    pub taps: bool,
    /// Generics of the top set to other values.
    pub generics: &'a [(String, i64)],
    /// jopcal's stand-ins for the entities they were written from (faster);
    /// false keeps GHDL's netlist of every entity.
    pub stand_ins: bool,
}

/// Builds (or keeps, when up to date) the bench of the tree's processor.
pub fn build_for_tree(s: Session, b: &TreeBench) -> Result<()> {
    let start = Instant::now();
    let home = locate::jop_home(s.jop_home).context("sim build needs --rtl FILE... --top MODULE, or a JOP tree")?;
    let req = jopcal_sim::jop::TreeBuild {
        jop_home: home,
        top: b.top.unwrap_or(jopcal_sim::jop::DEFAULT_TOP).to_string(),
        out: b.out.to_path_buf(),
        preload: b.preload,
        bit_cycles: b.bit_cycles,
        trace: b.trace,
        taps: b.taps,
        bench_dir: bench_dir(s.firmware)?,
        generics: b.generics.to_vec(),
        stand_ins: b.stand_ins,
    };
    let mut step = |what: &str| {
        s.say(&format!("       sim [{:6.1} s] {what}", start.elapsed().as_secs_f64()));
    };
    let built = jopcal_sim::jop::build_tree(&req, &mut step).map_err(|e| anyhow!(e))?;
    s.say(&format!(
        "       sim {} {} in {:.1} s (bench options: {}; {} microcode)",
        if built.cached { "kept" } else { "built" },
        built.bench.binary.display(),
        start.elapsed().as_secs_f64(),
        built.bench_args.join(" "),
        if b.preload { "simulation" } else { "serial-download" }
    ));
    Ok(())
}

/// Builds the bench of the user's RTL: Verilog sources `rtl`, top module `top`.
pub fn build_for_rtl(s: Session, rtl: &[PathBuf], top: Option<&str>, out: &Path, trace: bool) -> Result<()> {
    let Some(top) = top else {
        bail!("sim build --rtl needs --top MODULE");
    };
    let start = Instant::now();
    s.say(&format!(
        "       sim verilating {top} with the bench (this takes a while)"
    ));
    let built = jopcal_sim::build(rtl, top, out, &bench_dir(s.firmware)?, trace).map_err(|e| anyhow!(e))?;
    s.say(&format!(
        "       sim built {} in {:.1} s ({:?} UART{}{})",
        built.binary.display(),
        start.elapsed().as_secs_f64(),
        built.contract.uart,
        if built.contract.memory.is_some() {
            ", memory port"
        } else {
            ""
        },
        if built.contract.halt { ", halt" } else { "" }
    ));
    Ok(())
}

/// Runs the bench built in `sim` with `args`, its output the caller's; its
/// exit status, where not 0, becomes the error.
pub fn run(sim: &Path, args: &[String]) -> Result<()> {
    let mut child = Command::new(bench_binary(sim)?)
        .args(args)
        .stdin(std::process::Stdio::null())
        .spawn_in_group()
        .context("starting the bench")?;
    let _stop = jopcal_sim::stop_on_interrupt(child.id());
    let status = child.wait().context("waiting for the bench")?;
    match status.code() {
        Some(0) => Ok(()),
        Some(2) => bail!("the bench stopped at its cycle limit or timeout (see its last line above)"),
        Some(3) => bail!("the DUT failed (see the bench's last line above)"),
        Some(c) => bail!("the bench exited with status {c}"),
        None => bail!("the bench was killed by a signal"),
    }
}

/// Times `cycles` of the bench in `sim` against the bare model in a trivial
/// clock loop, and with an `image` preloaded, traced against untraced; each
/// line of the report goes to `line` as soon as it is known.
pub fn overhead(sim: &Path, cycles: u64, image: Option<&Path>, line: &mut dyn FnMut(&str)) -> Result<()> {
    let bin = bench_binary(sim)?;
    let time = |args: &[String]| -> Result<f64> {
        let mut best = f64::MAX;
        for _ in 0..3 {
            let t = Instant::now();
            let o = Command::new(&bin)
                .args(args)
                .stdin(Stdio::null())
                .stdout(Stdio::null())
                .output()?;
            if !matches!(o.status.code(), Some(0) | Some(2)) {
                bail!("bench {args:?}: {}", String::from_utf8_lossy(&o.stderr).trim());
            }
            best = best.min(t.elapsed().as_secs_f64());
        }
        Ok(best)
    };
    let n = cycles.to_string();
    let rate = |s: f64| cycles as f64 / s / 1e6;
    let bare = time(&["--bare".into(), n.clone()])?;
    let mut run: Vec<String> = build_args(sim);
    run.extend(["--stdout".into(), "--cycle-limit".into(), n.clone()]);
    if let Some(img) = image {
        run.extend(["--preload".into(), img.display().to_string()]);
    }
    let full = time(&run)?;
    line(&format!("bench overhead over {cycles} cycles (best of 3):"));
    line(&format!(
        "  bare model, trivial clock loop: {bare:.3} s ({:.2} M cycles/s)",
        rate(bare)
    ));
    line(&format!(
        "  full bench (memory, UART, limits): {full:.3} s ({:.2} M cycles/s)",
        rate(full)
    ));
    line(&format!("  overhead: {:+.1}%", 100.0 * (full / bare - 1.0)));
    if image.is_some() {
        let dir = tempfile::tempdir()?;
        let mut traced = run.clone();
        for (flag, file) in [("--methods", "methods.csv"), ("--events", "events")] {
            traced.push(flag.into());
            traced.push(dir.path().join(file).display().to_string());
        }
        let t = time(&traced)?;
        line(&format!(
            "  the same, traced (per-method tallies and every bytecode's event): {t:.3} s ({:.2} M cycles/s): {:+.1}% over the untraced bench",
            rate(t),
            100.0 * (t / full - 1.0)
        ));
    }
    Ok(())
}
