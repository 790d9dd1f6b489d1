//! The virtual board as `jopcal emu` uses it directly: writing a class
//! bundle, running an image (a bundle or a JOP tree's linked image) with its
//! output handed to the caller, and serving downloads on a pseudo-terminal.
//! Measuring on the board is `jopcal_targets::emu`'s.

use crate::locate;
use crate::processor::{image_board, EmuTiming, ImageBoard};
use crate::Session;
use anyhow::{anyhow, bail, Context, Result};
use jopcal_emu::board::write_trace;
use jopcal_emu::{run_bundle, BoardConfig, Bundle, EmuProgram, RunReport};
use jopcal_link::board::LoaderOptions;
use jopcal_link::fault::FaultPlan;
use jopcal_link::peer::{serve as serve_line, BoardLog};
use jopcal_link::{JopImage, Protocol, PseudoTerminal};
use jopcal_measure::atomic;
use std::io;
use std::path::Path;
use std::sync::atomic::AtomicBool;
use std::sync::{Arc, Mutex};

/// Where a program's output goes, a chunk at a time as the board prints it.
pub type Output<'o> = dyn FnMut(&[u8]) -> io::Result<()> + 'o;

/// The board every job runs on.
#[derive(Debug, Clone, Copy, Default)]
pub struct Board<'a> {
    /// The configuration file and parameters, and how a tree's images are
    /// timed (`config` and `params` also set the bundles' board).
    pub image: ImageBoard<'a>,
    /// Stop a run after this many cycles.
    pub cycle_limit: Option<u64>,
    /// Write each run's per-method cycles and call stream here.
    pub trace: Option<&'a Path>,
}

/// How the board serves its line.
#[derive(Debug, Clone, Copy)]
pub struct Serve<'a> {
    /// The download protocol of the board's loader.
    pub protocol: Protocol,
    /// Faults to inject on the line (empty: none).
    pub fault: Option<&'a str>,
    /// Seed of the fault injection.
    pub seed: u64,
}

/// Writes a bundle of every class file under `classes` with main class
/// `main` to `out`, which must not exist yet.
pub fn write_bundle(s: Session, classes: &Path, main: &str, out: &Path) -> Result<()> {
    jopcal_measure::new_file::ensure_new("--out", out, &[])?;
    let bundle = Bundle::from_dir(classes, main).map_err(|e| anyhow!(e))?;
    if bundle.classes.is_empty() {
        bail!("{}: no .class files", classes.display());
    }
    atomic::write_atomic(out, bundle.to_image().to_text().as_bytes())
        .with_context(|| format!("writing {}", out.display()))?;
    s.say(&format!(
        "       emu bundle of {} class files, main {main}",
        bundle.classes.len()
    ));
    Ok(())
}

/// The board class bundles run on: `--config` or the default board, with
/// the parameters and the cycle limit applied.
pub fn bundle_board(s: Session, b: &Board) -> Result<BoardConfig> {
    load_config(s.firmware, b.image.config, b.image.params, b.cycle_limit, false)
}

fn load_config(
    firmware: Option<&Path>,
    explicit: Option<&Path>,
    params: &[String],
    limit: Option<u64>,
    for_images: bool,
) -> Result<BoardConfig> {
    let path = if for_images {
        locate::image_config_path(explicit, firmware)?
    } else {
        locate::emu_config_path(explicit, firmware)?
    };
    let mut cfg = BoardConfig::load(&path, params).map_err(|e| anyhow!(e))?;
    if let Some(l) = limit {
        cfg.cycle_limit = l;
    }
    Ok(cfg)
}

/// The board for a tree's images: the processor (or JopSim's timing, or
/// `--config`), with the cycle limit applied, and what it is in words.
fn tree_board(s: Session, b: &Board) -> Result<(BoardConfig, String)> {
    let (mut cfg, what) = image_board(s, &b.image)?;
    if let Some(l) = b.cycle_limit {
        cfg.cycle_limit = l;
    }
    Ok((cfg, what))
}

/// Runs the image at `path` (a class bundle, or a JOP tree's linked image)
/// on a fresh board, its output to `output`; the program's failure is the
/// error.
pub fn run(s: Session, b: &Board, path: &Path, output: &mut Output) -> Result<()> {
    let img = JopImage::load(path, None).map_err(|e| anyhow!(e))?;
    if !Bundle::is_bundle(&img) {
        let (cfg, what) = tree_board(s, b)?;
        s.say(&format!("the virtual board: {what}"));
        return run_tree_image(s, path, &img, &cfg, b.trace, output);
    }
    let cfg = bundle_board(s, b)?;
    let bundle = Bundle::from_image(&img).map_err(|e| anyhow!("{}: {e}", path.display()))?;
    let report = run_bundle(&bundle, &cfg, b.trace.is_some(), output, &mut |r| trace_run(b.trace, r))?;
    s.say(&format!(
        "       emu {} cycles in {:.3} s ({:.0} M cycles/s)",
        report.cycles,
        report.wall.as_secs_f64(),
        report.cycles as f64 / report.wall.as_secs_f64().max(1e-9) / 1e6
    ));
    report.exit.map(|_| ()).map_err(|e| anyhow!(e))
}

/// Writes a run's trace into `dir` (as `run1`), if there is one.
fn trace_run(dir: Option<&Path>, r: &RunReport) -> io::Result<()> {
    match dir {
        Some(dir) => {
            std::fs::create_dir_all(dir)?;
            write_trace(r, &dir.join("run1"))
        }
        None => Ok(()),
    }
}

/// Runs a JOP tree's linked image; with a trace, per-method cycles named
/// from the link map beside the image (`<image>.link.txt`).
fn run_tree_image(
    s: Session,
    path: &Path,
    image: &JopImage,
    cfg: &BoardConfig,
    trace: Option<&Path>,
    output: &mut Output,
) -> Result<()> {
    let map_path = jopcal_jop::linkmap::beside(path);
    let link_map = match std::fs::read_to_string(&map_path) {
        Ok(text) => {
            Some(jopcal_jop::linkmap::LinkMap::parse(&text).map_err(|e| anyhow!("{}:{e}", map_path.display()))?)
        }
        Err(_) => None,
    };
    let report = jopcal_emu::run_jop_image(image, cfg, trace.is_some(), link_map.as_ref(), output, &mut |r| {
        trace_run(trace, r)
    })?;
    let wall = report.wall.as_secs_f64().max(1e-9);
    if let Some((bytecodes, cache)) = report.image_counts {
        s.say(&format!(
            "       emu {} cycles in {wall:.3} s ({:.0} M cycles/s); since the statistics reset: {bytecodes} bytecodes; method cache loads {cache} cycles",
            report.cycles,
            report.cycles as f64 / wall / 1e6
        ));
    }
    report.exit.map(|_| ()).map_err(|e| anyhow!("{}: {e}", path.display()))
}

/// Serves downloads on a new pseudo-terminal with `cfg` as the bundles'
/// board; `ready` is told the terminal's path before the first download.
/// Without `--config`, a tree's images run on the tree's processor (where
/// there is a tree), else with the tree's JopSim table. Returns when the
/// line ends, with why as the error.
pub fn serve(
    s: Session,
    b: &Board,
    cfg: BoardConfig,
    how: &Serve,
    ready: &mut dyn FnMut(&str) -> io::Result<()>,
) -> Result<()> {
    let plan: FaultPlan = how
        .fault
        .unwrap_or("")
        .parse()
        .map_err(|e: jopcal_link::SettingError| anyhow!(e))?;
    let pty = PseudoTerminal::open().map_err(|e| anyhow!(e))?;
    ready(&pty.path)?;
    // Both kinds of image may arrive: say how each is timed.
    let bundles = locate::emu_config_path(b.image.config, s.firmware)?;
    let (image_cfg, images) = match b.image.config {
        Some(_) => (None, format!("as {}", bundles.display())),
        None => match tree_board(s, b) {
            Ok((cfg, what)) => (Some(cfg), format!("on {what}")),
            Err(_) if b.image.timing == EmuTiming::Processor && b.image.sim.is_none() => {
                let path = locate::image_config_path(None, s.firmware)?;
                (
                    Some(load_config(s.firmware, None, b.image.params, b.cycle_limit, true)?),
                    format!(
                        "with JopSim's timing ({}): no JOP tree to read the processor from",
                        path.display()
                    ),
                )
            }
            Err(e) => return Err(e),
        },
    };
    s.say(&format!(
        "the virtual board: jopcal's class bundles time as {}; a JOP tree's images {images}",
        bundles.display()
    ));
    let mut program = EmuProgram {
        cfg,
        image_cfg,
        known: Default::default(),
        trace_dir: b.trace.map(Path::to_path_buf),
        clock_dir: None,
        names: Vec::new(),
        reports: Vec::new(),
    };
    let log = Arc::new(Mutex::new(BoardLog::default()));
    serve_line(
        pty.board,
        LoaderOptions::new(how.protocol),
        &mut program,
        plan,
        how.seed,
        Arc::new(AtomicBool::new(false)),
        log.clone(),
    );
    let l = log.lock().map_err(|_| anyhow!("board log poisoned"))?;
    bail!("the line ended: {}", l.ended.clone().unwrap_or_default())
}
