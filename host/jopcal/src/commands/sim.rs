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
            no_taps,
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
                taps: !*no_taps,
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
        SimAction::Bench { sim, cycles, image } => {
            let bin = bench_binary(sim)?;
            let time = |args: &[String]| -> Result<f64> {
                let mut best = f64::MAX;
                for _ in 0..3 {
                    let t = std::time::Instant::now();
                    let o = Command::new(&bin)
                        .args(args)
                        .stdin(std::process::Stdio::null())
                        .stdout(std::process::Stdio::null())
                        .output()?;
                    if !matches!(o.status.code(), Some(0) | Some(2)) {
                        bail!("bench {args:?}: {}", String::from_utf8_lossy(&o.stderr).trim());
                    }
                    best = best.min(t.elapsed().as_secs_f64());
                }
                Ok(best)
            };
            let n = cycles.to_string();
            let rate = |s: f64| *cycles as f64 / s / 1e6;
            let bare = time(&["--bare".into(), n.clone()])?;
            let mut run: Vec<String> = jopcal_targets::verilator::build_args(sim);
            run.extend(["--stdout".into(), "--cycle-limit".into(), n.clone()]);
            if let Some(img) = image {
                run.extend(["--preload".into(), img.display().to_string()]);
            }
            let full = time(&run)?;
            println!("bench overhead over {cycles} cycles (best of 3):");
            println!(
                "  bare model, trivial clock loop: {bare:.3} s ({:.2} M cycles/s)",
                rate(bare)
            );
            println!(
                "  full bench (memory, UART, limits): {full:.3} s ({:.2} M cycles/s)",
                rate(full)
            );
            println!("  overhead: {:+.1}%", 100.0 * (full / bare - 1.0));
            if image.is_some() {
                let dir = tempfile::tempdir()?;
                let mut traced = run.clone();
                for (flag, file) in [("--methods", "methods.csv"), ("--events", "events")] {
                    traced.push(flag.into());
                    traced.push(dir.path().join(file).display().to_string());
                }
                let t = time(&traced)?;
                println!(
                    "  the same, traced (per-method tallies and every bytecode's event): {t:.3} s ({:.2} M cycles/s): {:+.1}% over the untraced bench",
                    rate(t),
                    100.0 * (t / full - 1.0)
                );
            }
            Ok(())
        }
    }
}
