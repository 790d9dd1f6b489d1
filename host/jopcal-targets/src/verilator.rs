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
pub fn target(sim: &Path, args: &[String], mut line: BoardLine, images: Images, total: Duration) -> BoardTarget {
    let note = format!("verilator bench {} {}", sim.display(), args.join(" "));
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
        args: build_args(sim).into_iter().chain(args.iter().cloned()).collect(),
        running: None,
        // A tree's JOP boots once per reset: a fresh bench for every image.
        fresh_per_image: tree_jop,
        preload,
        log: String::new(),
    }));
    if preload {
        // Simulation microcode: the bench puts each image in memory before reset.
        return target.preloading();
    }
    // JOP's serial-boot microcode echoes each byte without waiting for its
    // UART's transmitter, whose frames take a little longer than the host's:
    // a stream runs it over after about 1,400 bytes (measured on the tree's
    // cycmin JOP). The `down` tool's echo mode sends a word and waits for its
    // echo; so does jopcal, on a tree's JOP.
    if tree_jop {
        target.with_window(4)
    } else {
        target
    }
}

impl Bench {
    fn start(&mut self, image: Option<&Path>) -> Result<String, TargetError> {
        let bin = bench_binary(&self.sim)?;
        let mut args = self.args.clone();
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
        if let Some(r) = self.running.take() {
            self.log.push_str(&r.stop());
        }
        self.start(Some(image)).map(Some)
    }

    /// Stops the bench and keeps what it said in `logs/bench.log`.
    fn stop(&mut self, out: Option<&Path>) -> Result<(), TargetError> {
        let Some(running) = self.running.take() else {
            return Ok(());
        };
        let log = std::mem::take(&mut self.log) + &running.stop();
        if let Some(out) = out {
            let path = out.join("logs/bench.log");
            jopcal_measure::atomic::write_atomic(&path, log.as_bytes()).map_err(|e| TargetError::io(&path, e))?;
        }
        Ok(())
    }
}
