//! The virtual board: each selected workload is bundled from the suite's
//! class files (or, with a JOP tree, the tree's toolchain links its image),
//! the board is started on a pseudo-terminal in this process, and it is
//! driven exactly as a real board, through [`crate::board`].

use crate::board::{BoardLine, BoardTarget, Images, Launched, Launcher, LineHabits};
use crate::host::prepare_host;
use crate::{Progress, TargetError, TargetKind};
use jopcal_emu::{BoardConfig, Bundle, EmuProgram};
use jopcal_link::board::LoaderOptions;
use jopcal_link::fault::FaultPlan;
use jopcal_link::peer::{serve, BoardLog};
use jopcal_link::{Protocol, PseudoTerminal};
use jopcal_measure::atomic;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

/// What the virtual board runs, and how it is set up.
pub struct VirtualBoard {
    /// The workload directory.
    pub root: PathBuf,
    /// The build cache the suite is compiled into.
    pub cache: PathBuf,
    /// The benchmarks to run (all when empty).
    pub benches: Vec<String>,
    /// Its timing and cache.
    pub cfg: BoardConfig,
    /// What configured it (file and overridden parameters), for `target_config`.
    pub cfg_note: String,
    /// Write each run's per-method cycles here.
    pub trace_dir: Option<PathBuf>,
    /// Write each image run's reads of the microsecond counter here
    /// (`NAME.txt`, see [`jopcal_emu::board::write_clock_reads`]).
    pub clock_dir: Option<PathBuf>,
}

/// The virtual board as a target: `board` downloaded with `protocol`; a run
/// is given up after `total` seconds of board time or `line_timeout` of
/// silence, and so an endless loop stops at the cycles a board at the
/// configured clock runs in `total`. `images` are the JOP tree's images
/// (built by its toolchain, or given); `Images::FromLauncher` bundles the
/// suite's class files instead.
pub fn target(
    mut board: VirtualBoard,
    images: Images,
    protocol: Protocol,
    line_timeout: Duration,
    total: Duration,
) -> BoardTarget {
    let cfg = &mut board.cfg;
    // The workload's time limit as cycles of the board's clock, at least a
    // 100 MHz clock's: a bench's slow simulated clock (3.7 MHz) would
    // otherwise stop a long benchmark the processor finishes, and the board
    // runs far faster than 100 M cycles/s, so an endless loop still ends
    // here, named, before the host's own time limit.
    let limit = total.as_secs_f64() * cfg.clock_mhz.max(100.0) * 1e6;
    cfg.cycle_limit = cfg.cycle_limit.min(limit as u64);
    let line = BoardLine {
        port: String::new(),
        protocol,
        baud: 115_200,
        configure: None,
        reset: None,
        // The virtual board is deterministic and its line cannot drop a byte:
        // a program that ends wrong ends wrong again. A busy host can still
        // starve the line (a download, a silence): that is tried again.
        retries: 2,
        retry_on: jopcal_link::session::RetryOn::Transient,
        dtr_rts: false,
        line_timeout,
    };
    // The virtual board ends every run with `JVM exit!`, however late a busy
    // machine delivers it: the capture waits for it (up to the line timeout),
    // so nothing is left on the line when the next download starts.
    let habits = LineHabits {
        quiet: Duration::from_millis(20),
        exit_wait: Duration::MAX,
    };
    let bundles = matches!(images, Images::FromLauncher);
    let what = if bundles { "class bundles" } else { "JOP images" };
    let note = format!("virtual board ({what}) {}", board.cfg_note.trim());
    let cache = format!("fifo:{}:{}", board.cfg.cache.bytes, board.cfg.cache.blocks);
    let jopsim = board.cfg.processor.is_none();
    let cfg_params = board.cfg.model.params().clone();
    let frame = board
        .cfg
        .processor
        .as_ref()
        .map(|p| jopcal_emu::uart_frame_cycles(p.uart_tick) as f64);
    // Its transmit FIFO's bytes and the one the transmitter sends.
    let free = board.cfg.processor.as_ref().map(|p| (p.uart_tx_depth + 1) as f64);
    let target =
        BoardTarget::new(TargetKind::Emu, line, images, habits, total, Some(note)).launched(Box::new(Server {
            board,
            bundles,
            protocol,
            running: None,
        }));
    // Running the tree's images it is the tree's processor, or its JopSim;
    // either way its wait states are its table's.
    if bundles {
        target
    } else {
        let p = cfg_params;
        let mut target = target.simulating(cache, jopsim);
        if let Some(c) = frame {
            target = target.with_serial_char(c);
        }
        if let Some(n) = free {
            target = target.with_serial_free(n);
        }
        match (p.get("r"), p.get("w")) {
            (Some(r), Some(w)) => target.with_wait_states((*r, *w)),
            _ => target,
        }
    }
}

/// The board's server thread on a pseudo-terminal.
struct Server {
    board: VirtualBoard,
    /// Whether it makes the images (class bundles) itself.
    bundles: bool,
    protocol: Protocol,
    running: Option<(Arc<AtomicBool>, JoinHandle<()>)>,
}

impl Launcher for Server {
    fn launch(&mut self, staging: &Path, sent: &[PathBuf], progress: &dyn Progress) -> Result<Launched, TargetError> {
        let b = &self.board;
        let (mut images, mut names, mut left_out) = (Vec::new(), Vec::new(), Vec::new());
        // Each image is recognised by its words when it arrives (side by side,
        // a board is sent any of them first), for its trace's name.
        let mut known = jopcal_emu::board::KnownImages::default();
        if self.bundles {
            let setup = prepare_host(&b.root, &b.cache, &b.benches, progress)?;
            for w in &setup.selected {
                let bundle = Bundle::from_dir(&setup.built.classes, &w.main)?;
                let path = staging.join(format!("{}.jop", w.name));
                let image = bundle.to_image();
                atomic::write_atomic(&path, image.to_text().as_bytes()).map_err(|e| TargetError::io(&path, e))?;
                if b.trace_dir.is_some() {
                    known.add(&image, w.name.clone(), None);
                }
                images.push(path);
                names.push(w.name.clone());
            }
            left_out = setup.left_out;
        }
        // A JOP image's trace is named after its file and its methods after
        // the link map beside it.
        // (Its clock reads too, named so for the host's profile.)
        for path in sent.iter().filter(|_| b.trace_dir.is_some() || b.clock_dir.is_some()) {
            if let Ok(image) = jopcal_link::JopImage::load(path, None) {
                let map = std::fs::read_to_string(format!("{}.link.txt", path.display()))
                    .ok()
                    .and_then(|t| jopcal_jop::linkmap::LinkMap::parse(&t).ok());
                let name = path
                    .file_stem()
                    .map_or("image".into(), |s| s.to_string_lossy().into_owned());
                known.add(&image, name, map);
            }
        }
        let pty = PseudoTerminal::open().map_err(TargetError::Link)?;
        let port = pty.path.clone();
        let stop = Arc::new(AtomicBool::new(false));
        let mut program = EmuProgram {
            cfg: b.cfg.clone(),
            image_cfg: None,
            known,
            trace_dir: b.trace_dir.clone(),
            clock_dir: b.clock_dir.clone(),
            names,
            reports: Vec::new(),
        };
        let (protocol, s) = (self.protocol, stop.clone());
        let log = Arc::new(Mutex::new(BoardLog::default()));
        let thread = std::thread::spawn(move || {
            serve(
                pty.board,
                LoaderOptions::new(protocol),
                &mut program,
                FaultPlan::default(),
                1,
                s,
                log,
            );
        });
        self.running = Some((stop, thread));
        Ok(Launched { port, images, left_out })
    }

    fn stop(&mut self, _out: Option<&Path>) -> Result<(), TargetError> {
        if let Some((stop, thread)) = self.running.take() {
            stop.store(true, Ordering::Relaxed);
            let _ = thread.join();
        }
        Ok(())
    }
}
