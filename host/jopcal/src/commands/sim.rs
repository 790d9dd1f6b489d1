//! `jopcal sim`: build, run and benchmark the Verilator bench (measuring on
//! it is `jopcal_targets::verilator`).

use crate::cli::{SimAction, SimArgs};
use anyhow::{anyhow, bail, Context, Result};
use jopcal_targets::verilator::bench_binary;
use std::path::{Path, PathBuf};
use std::process::Command;

/// `hdl-sim/bench` beside the firmware directory (a checkout), else the copy
/// this executable carries.
fn bench_dir(firmware: Option<&Path>) -> Result<PathBuf> {
    let fw = jopcal_pipeline::locate::firmware_dir(firmware)?;
    let d = fw.parent().unwrap_or(Path::new(".")).join("hdl-sim/bench");
    if d.is_dir() {
        return Ok(d);
    }
    Ok(jopcal_pipeline::locate::share_dir()?.join("hdl-sim/bench"))
}

pub fn sim(firmware: Option<&Path>, jop_home: Option<&Path>, a: &SimArgs) -> Result<()> {
    match &a.action {
        SimAction::Build {
            rtl,
            top,
            out,
            trace,
            preload,
            bit_cycles,
        } if rtl.is_empty() => {
            let start = std::time::Instant::now();
            let home = jopcal_pipeline::locate::jop_home(jop_home)
                .context("sim build needs --rtl FILE... --top MODULE, or a JOP tree")?;
            let req = jopcal_sim::jop::TreeBuild {
                jop_home: home,
                top: top.clone().unwrap_or_else(|| jopcal_sim::jop::DEFAULT_TOP.to_string()),
                out: out.clone(),
                preload: *preload,
                bit_cycles: *bit_cycles,
                trace: *trace,
                bench_dir: bench_dir(firmware)?,
            };
            let mut step = |what: &str| {
                eprintln!("       sim [{:6.1} s] {what}", start.elapsed().as_secs_f64());
            };
            let built = jopcal_sim::jop::build_tree(&req, &mut step).map_err(|e| anyhow!(e))?;
            eprintln!(
                "       sim {} {} in {:.1} s (bench options: {}; {} microcode)",
                if built.cached { "kept" } else { "built" },
                built.bench.binary.display(),
                start.elapsed().as_secs_f64(),
                built.bench_args.join(" "),
                if *preload { "simulation" } else { "serial-download" }
            );
            println!("{}", out.display());
            Ok(())
        }
        SimAction::Build {
            rtl, top, out, trace, ..
        } => {
            let Some(top) = top else {
                bail!("sim build --rtl needs --top MODULE");
            };
            let start = std::time::Instant::now();
            eprintln!("       sim verilating {top} with the bench (this takes a while)");
            let built = jopcal_sim::build(rtl, top, out, &bench_dir(firmware)?, *trace).map_err(|e| anyhow!(e))?;
            eprintln!(
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
            );
            println!("{}", out.display());
            Ok(())
        }
        SimAction::Run { sim, args } => {
            let status = Command::new(bench_binary(sim)?)
                .args(args)
                .status()
                .context("starting the bench")?;
            match status.code() {
                Some(0) => Ok(()),
                Some(2) => bail!("the bench stopped at its cycle limit or timeout (see its last line above)"),
                Some(3) => bail!("the DUT failed (see the bench's last line above)"),
                Some(c) => bail!("the bench exited with status {c}"),
                None => bail!("the bench was killed by a signal"),
            }
        }
        SimAction::Bench { sim, cycles } => {
            let bin = bench_binary(sim)?;
            let time = |args: &[String]| -> Result<f64> {
                let mut best = f64::MAX;
                for _ in 0..3 {
                    let t = std::time::Instant::now();
                    let o = Command::new(&bin)
                        .args(args)
                        .stdin(std::process::Stdio::null())
                        .output()?;
                    if !matches!(o.status.code(), Some(0) | Some(2)) {
                        bail!("bench {args:?}: {}", String::from_utf8_lossy(&o.stderr).trim());
                    }
                    best = best.min(t.elapsed().as_secs_f64());
                }
                Ok(best)
            };
            let n = cycles.to_string();
            let bare = time(&["--bare".into(), n.clone()])?;
            let full = time(&["--stdout".into(), "--cycle-limit".into(), n.clone()])?;
            println!("bench overhead over {cycles} cycles (best of 3):");
            println!(
                "  bare model, trivial clock loop: {bare:.3} s ({:.1} M cycles/s)",
                *cycles as f64 / bare / 1e6
            );
            println!(
                "  full bench (memory, UART, limits): {full:.3} s ({:.1} M cycles/s)",
                *cycles as f64 / full / 1e6
            );
            println!("  overhead: {:+.1}%", 100.0 * (full / bare - 1.0));
            Ok(())
        }
    }
}
