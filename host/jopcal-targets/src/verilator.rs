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

/// The bench built in `sim`, started with `args`, as a target running
/// `images` downloaded as `line` says (its port is the bench's); a run is
/// given up after `total`.
pub fn target(sim: &Path, args: &[String], line: BoardLine, images: Images, total: Duration) -> BoardTarget {
    let note = format!("verilator bench {} {}", sim.display(), args.join(" "));
    BoardTarget::new(
        TargetKind::Verilator,
        line,
        images,
        REAL_BOARD,
        total,
        Some(note.trim().to_string()),
    )
    .launched(Box::new(Bench {
        sim: sim.to_path_buf(),
        args: args.to_vec(),
        running: None,
    }))
}

/// The bench process.
struct Bench {
    sim: PathBuf,
    args: Vec<String>,
    running: Option<RunningBench>,
}

impl Launcher for Bench {
    fn launch(
        &mut self,
        _staging: &Path,
        _images: &[PathBuf],
        _progress: &dyn Progress,
    ) -> Result<Launched, TargetError> {
        let bin = bench_binary(&self.sim)?;
        let running = jopcal_sim::start(&bin, &self.args, Duration::from_secs(10)).map_err(TargetError::Bench)?;
        let port = running.port.clone();
        self.running = Some(running);
        Ok(Launched {
            port,
            ..Launched::default()
        })
    }

    /// Stops the bench and keeps what it said in `logs/bench.log`.
    fn stop(&mut self, out: Option<&Path>) -> Result<(), TargetError> {
        let Some(running) = self.running.take() else {
            return Ok(());
        };
        let log = running.stop();
        if let Some(out) = out {
            let path = out.join("logs/bench.log");
            jopcal_measure::atomic::write_atomic(&path, log.as_bytes()).map_err(|e| TargetError::io(&path, e))?;
        }
        Ok(())
    }
}
