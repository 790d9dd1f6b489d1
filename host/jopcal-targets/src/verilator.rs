//! The Verilator bench: the user's JOP RTL, built by `jopcal sim build`,
//! started with its UART on a pseudo-terminal and measured through the same
//! code as a board.

use crate::board::{BoardLine, BoardTarget, Images, Launched, Launcher, REAL_BOARD};
use crate::{Progress, TargetError, TargetKind};
use jopcal_sim::RunningBench;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// The bench executable inside a `sim build` directory.
pub fn bench_binary(sim: &Path) -> Result<PathBuf, TargetError> {
    let b = sim.join("obj/bench");
    if !b.is_file() {
        return Err(TargetError::Usage(format!(
            "{}: no built bench here: run `jopcal sim build --rtl ... --top ... --out {}` first",
            sim.display(),
            sim.display()
        )));
    }
    Ok(b)
}

/// Options a `sim build --jop-home` bench needs for its JOP (`bench.args`:
/// the UART's cycles per bit, the SRAM's size), before the user's.
pub fn build_args(sim: &Path) -> Vec<String> {
    std::fs::read_to_string(sim.join("bench.args"))
        .map(|t| t.split_whitespace().map(str::to_string).collect())
        .unwrap_or_default()
}

/// The bench built in `sim`, started with `args`, as a target running
/// `images` downloaded as `line` says (its port is the bench's); a run is
/// given up after `total`.
pub fn target(
    sim: &Path,
    args: &[String],
    mut line: BoardLine,
    images: Images,
    total: Duration,
    trace_dir: Option<PathBuf>,
) -> BoardTarget {
    let microcode = std::fs::read_to_string(sim.join("microcode")).unwrap_or_default();
    let tree_jop = !microcode.is_empty();
    let preload = microcode.trim() == "simulation";
    if tree_jop {
        // A tree's harness prints once, at its end: at about a million
        // simulated cycles a second that silence lasts minutes, so only the
        // workload's own time limit applies.
        line.line_timeout = line.line_timeout.max(total);
        // The simulation is deterministic and its JOP boots once per reset:
        // another attempt on the same bench could only fail at its download.
        line.retries = 0;
    }
    // JOP's serial-boot microcode echoes each byte into a 2-byte FIFO
    // without waiting, and its UART sends 11 bit times a byte: a stream
    // sent back to back overruns it within a few dozen bytes. The bench's
    // side of the line paces as a board's host does, in simulated time
    // (the host's wall-clock pace means nothing to a simulation running at
    // about a fifth of real time): bursts of BURST bytes with the idle time
    // `Pace::line` leaves after each. What the host writes to the bench's
    // terminal is then only bounded by a window.
    let pace = jopcal_link::Pace::line(line.baud);
    // And the host's window, with which the bench waits for bytes the host
    // is sure to send: the download's timing is then the simulation's own,
    // and a program that reads the clock counts the same cycles every run.
    let pacing: Vec<String> = match (tree_jop && !preload, pace.idle_bits_per_burst()) {
        (true, Some(idle)) => vec![
            "--host-burst".into(),
            jopcal_link::download::BURST.to_string(),
            "--host-gap-bits".into(),
            format!("{idle:.4}"),
            "--host-window".into(),
            VERILATOR_WINDOW.to_string(),
            "--host-refill".into(),
            jopcal_link::download::window_refill(VERILATOR_WINDOW).to_string(),
        ],
        _ => Vec::new(),
    };
    let note = format!(
        "verilator bench {} {}",
        sim.display(),
        pacing.iter().chain(args).cloned().collect::<Vec<_>>().join(" ")
    );
    let target = BoardTarget::new(
        TargetKind::Verilator,
        line,
        images,
        REAL_BOARD,
        total,
        Some(note.trim().to_string()),
    )
    .launched(Box::new(Bench {
        sim: sim.to_path_buf(),
        args: build_args(sim)
            .into_iter()
            .chain(pacing)
            .chain(args.iter().cloned())
            .collect(),
        running: None,
        // A tree's JOP boots once per reset: a fresh bench for every image.
        fresh_per_image: tree_jop,
        preload,
        log: String::new(),
        trace_dir,
        tracing: None,
    }));
    if preload {
        // Simulation microcode: the bench puts each image in memory before reset.
        return target.preloading().jop();
    }
    if tree_jop {
        target.with_pace(jopcal_link::Pace::Window(VERILATOR_WINDOW)).jop()
    } else {
        target
    }
}

/// Bytes in flight to a bench whose own line paces them: about a tenth of
/// a second of its simulated line at the bench's speed, so an echo is
/// never awaited longer than the download's byte timeout.
const VERILATOR_WINDOW: usize = 256;

impl Bench {
    fn start(&mut self, image: Option<&Path>) -> Result<String, TargetError> {
        let bin = bench_binary(&self.sim)?;
        let mut args = self.args.clone();
        // Tracing: the bench's trace taps give each image's per-method cycles.
        if let (Some(dir), Some(image)) = (&self.trace_dir, image) {
            let raw = dir.join(".bench").join(format!("{}.csv", stem(image)));
            std::fs::create_dir_all(raw.parent().unwrap_or(dir)).map_err(|e| TargetError::io(dir.clone(), e))?;
            args.push("--methods".into());
            args.push(raw.display().to_string());
            self.tracing = Some((image.to_path_buf(), raw));
        }
        if self.preload {
            let Some(image) = image else {
                return Err(TargetError::Usage("a preloading bench needs an image".into()));
            };
            args.push("--preload".into());
            args.push(image.display().to_string());
        }
        let running = jopcal_sim::start(&bin, &args, Duration::from_secs(10)).map_err(TargetError::Bench)?;
        let port = running.port.clone();
        self.running = Some(running);
        Ok(port)
    }
}

/// The bench process.
struct Bench {
    sim: PathBuf,
    args: Vec<String>,
    running: Option<RunningBench>,
    fresh_per_image: bool,
    /// Started with `--preload IMAGE` for each image (simulation microcode).
    preload: bool,
    /// What the benches stopped so far said.
    log: String,
    /// Write each image's per-method trace here (`<image>.methods.csv`).
    trace_dir: Option<PathBuf>,
    /// The image being traced, and where its bench writes its tallies.
    tracing: Option<(PathBuf, PathBuf)>,
}

/// An image's name without its extension.
fn stem(image: &Path) -> String {
    image
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|| "image".into())
}

impl Bench {
    /// Stops the running bench and names its per-method trace, if it traced.
    fn stop_running(&mut self) -> Result<(), TargetError> {
        if let Some(r) = self.running.take() {
            self.log.push_str(&r.stop());
        }
        let (Some(dir), Some((image, raw))) = (self.trace_dir.clone(), self.tracing.take()) else {
            return Ok(());
        };
        let Ok(text) = std::fs::read_to_string(&raw) else {
            self.log
                .push_str(&format!("no per-method trace from the bench for {}\n", image.display()));
            return Ok(());
        };
        let map_path = PathBuf::from(format!("{}.link.txt", image.display()));
        let map = std::fs::read_to_string(&map_path)
            .ok()
            .and_then(|t| jopcal_jop::linkmap::LinkMap::parse(&t).ok());
        let trace =
            bench_trace(&text, map.as_ref()).map_err(|why| TargetError::Usage(format!("{}: {why}", raw.display())))?;
        let prefix = dir.join(stem(&image));
        jopcal_emu::trace::write_trace(&trace, &prefix).map_err(|e| TargetError::io(prefix, e))?;
        let _ = std::fs::remove_file(&raw);
        Ok(())
    }
}

/// The bench's per-method tallies (`code_word,calls,bytecodes,cycles,cache_loads`,
/// hdl-sim/bench) as a trace, each method named from the image's link map.
pub fn bench_trace(
    text: &str,
    map: Option<&jopcal_jop::linkmap::LinkMap>,
) -> Result<jopcal_emu::trace::MethodTrace, String> {
    let name = jopcal_emu::image::method_names(map);
    let mut rows = Vec::new();
    for (i, line) in text.lines().enumerate().skip(1) {
        let f: Vec<&str> = line.split(',').collect();
        let num = |k: usize| -> Result<u64, String> {
            f.get(k)
                .and_then(|v| v.trim().parse().ok())
                .ok_or_else(|| format!("line {}: field {} is not a whole number", i + 1, k + 1))
        };
        rows.push(jopcal_emu::trace::MethodRow {
            name: name(num(0)? as u32),
            calls: num(1)?,
            bytecodes: Some(num(2)?),
            cycles: num(3)?,
            cache_loads: Some(num(4)?),
        });
    }
    Ok(jopcal_emu::trace::MethodTrace {
        rows,
        calls: Vec::new(),
    })
}

impl Launcher for Bench {
    fn launch(
        &mut self,
        _staging: &Path,
        images: &[PathBuf],
        _progress: &dyn Progress,
    ) -> Result<Launched, TargetError> {
        Ok(Launched {
            port: self.start(images.first().map(PathBuf::as_path))?,
            ..Launched::default()
        })
    }

    fn restart(&mut self, image: &Path, _progress: &dyn Progress) -> Result<Option<String>, TargetError> {
        if !self.fresh_per_image {
            return Ok(None);
        }
        self.stop_running()?;
        self.start(Some(image)).map(Some)
    }

    /// The bench's last word when it has ended by itself (its exit reason).
    fn ended(&mut self) -> Option<String> {
        let exited = self
            .running
            .as_mut()
            .is_some_and(|r| matches!(r.child.try_wait(), Ok(Some(_))));
        if !exited {
            return None;
        }
        let said = self.running.take()?.stop();
        self.log.push_str(&said);
        said.lines()
            .rev()
            .find_map(|l| l.strip_prefix("jopcal-bench: "))
            .map(|l| format!("the bench: {l}"))
    }

    /// Stops the bench and keeps what it said in `logs/bench.log`.
    fn stop(&mut self, out: Option<&Path>) -> Result<(), TargetError> {
        if self.running.is_none() {
            return Ok(());
        }
        self.stop_running()?;
        let log = std::mem::take(&mut self.log);
        if let Some(out) = out {
            let path = out.join("logs/bench.log");
            // Benches side by side (--jobs) each add what they said.
            let mut all = std::fs::read(&path).unwrap_or_default();
            all.extend_from_slice(log.as_bytes());
            jopcal_measure::atomic::write_atomic(&path, &all).map_err(|e| TargetError::io(&path, e))?;
        }
        Ok(())
    }
}
