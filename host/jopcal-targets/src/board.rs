//! A board on a serial port or TCP (and, through the `emu` and
//! `verilator` modules, the virtual board and the bench, which speak the
//! same line). Each image is downloaded, its result lines are captured and
//! stored as they arrive, and the raw bytes of every attempt are kept in
//! `logs/`.

use crate::toolchain::Toolchain;
use crate::{Job, JobEnd, JobError, Prepared, Progress, Reported, Sink, Target, TargetError, TargetKind};
use jopcal_link::capture::CaptureOptions;
use jopcal_link::session::{run_image, Attempt, SessionOptions};
use jopcal_link::{DownloadOptions, JopImage, Link, Pace, Protocol, StoreError};
use jopcal_measure::result_line::ResultLine;
use jopcal_measure::{atomic, Unit};
use sha2::{Digest, Sha256};
use std::cell::Cell;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// How to reach a board and how to talk to it.
#[derive(Debug, Clone)]
pub struct BoardLine {
    /// Serial device, pseudo-terminal or `tcp://HOST:PORT`.
    pub port: String,
    /// The download protocol.
    pub protocol: Protocol,
    /// Line rate (8N1).
    pub baud: u32,
    /// Shell command run before each download (e.g. reconfiguring the FPGA).
    pub configure: Option<String>,
    /// Shell command that brings the board back to its loader, run before a
    /// retry and before the image after a failed one (jopcal.toml's `reset`).
    pub reset: Option<String>,
    /// Attempts after the first when a download fails or the output cannot be trusted.
    pub retries: u32,
    /// Which failures are retried.
    pub retry_on: jopcal_link::session::RetryOn,
    /// Raise DTR and RTS after opening the port.
    pub dtr_rts: bool,
    /// Silence after which a running image is given up.
    pub line_timeout: Duration,
}

/// How a target's line behaves between two runs.
#[derive(Debug, Clone, Copy)]
pub struct LineHabits {
    /// Silence the line must show before a download (stale output of a board still printing).
    pub quiet: Duration,
    /// How long after `@jopcal done` JOP's trailing `JVM exit!` is awaited.
    pub exit_wait: Duration,
}

/// A real board: it may still print from an earlier run, and JOP prints
/// `JVM exit!` right after `main` returns.
pub const REAL_BOARD: LineHabits = LineHabits {
    quiet: Duration::from_millis(300),
    exit_wait: Duration::from_secs(1),
};

/// Where a board's images come from.
pub enum Images {
    /// The user's files (`--image`), run as they are.
    Given(Vec<PathBuf>),
    /// Built by the JOP tree's toolchain from the suite in `root` (only
    /// `benches` if any are named), each build limited to `limit`.
    Built {
        /// The tree's toolchain.
        tools: Box<Toolchain>,
        /// The workload directory.
        root: PathBuf,
        /// The benchmarks to build (all when empty).
        benches: Vec<String>,
        /// Time one build may take.
        limit: Duration,
        /// Builds at once.
        parallel: usize,
    },
    /// Made by the [`Launcher`] into the staging directory: run, then kept
    /// with the results.
    FromLauncher,
}

/// A process jopcal starts that acts as the board (the virtual board's
/// server, the Verilator bench): started once the images are ready,
/// stopped when the measurement ends.
pub trait Launcher: Send {
    /// Starts it, knowing the `images` it will be sent (built or given);
    /// says where its line is, and the images it made, if any.
    fn launch(&mut self, staging: &Path, images: &[PathBuf], progress: &dyn Progress) -> Result<Launched, TargetError>;
    /// Stops it; with `out`, keeps what it logged there.
    fn stop(&mut self, out: Option<&Path>) -> Result<(), TargetError>;
    /// Before every image but the first (`image`): a board that takes one
    /// download per reset (JOP's serial-boot microcode) or is given its image
    /// when it starts (a preloading simulation) is started afresh; its new line.
    fn restart(&mut self, _image: &Path, _progress: &dyn Progress) -> Result<Option<String>, TargetError> {
        Ok(None)
    }
    /// After a run lost its line: why the board ended, if it says (a
    /// simulation that stopped at the processor's stack overflow).
    fn ended(&mut self) -> Option<String> {
        None
    }
}

/// What a [`Launcher`] started.
#[derive(Debug, Default)]
pub struct Launched {
    /// The line to the board (a pseudo-terminal).
    pub port: String,
    /// Images it made into the staging directory (run, then kept with the results).
    pub images: Vec<PathBuf>,
    /// `(workload, why)` of workloads it could not make an image of.
    pub left_out: Vec<(String, String)>,
}

/// A board as a target: one reached over a line, or one jopcal starts.
pub struct BoardTarget {
    kind: TargetKind,
    line: BoardLine,
    images: Images,
    habits: LineHabits,
    total: Duration,
    note: Option<String>,
    /// Each image with the file it was loaded from.
    loaded: Vec<(Job, JopImage, PathBuf)>,
    /// Images this target made, moved into `out/images/` at the end.
    owned: Vec<PathBuf>,
    link: Option<Box<dyn Link>>,
    launcher: Option<Box<dyn Launcher>>,
    /// The virtual board running a JOP tree's images: the method cache it
    /// simulates (a cache mode), and whether it times as the tree's JopSim
    /// (monitors and all) rather than as the processor.
    simulating: Option<(String, bool)>,
    /// The processor's wait states, where it is a known one.
    wait_states: Option<(f64, f64)>,
    serial_char: Option<f64>,
    serial_free: Option<f64>,
    /// Images run so far.
    started: usize,
    /// Classic download: how it is paced (default: a real board's line
    /// paced for its UART's tolerance, a pseudo-terminal's a window).
    pace: Option<Pace>,
    /// The last image's session failed: the next one starts with a reset.
    failed_before: bool,
    /// A bench that runs a JOP (see [`BoardTarget::is_jop`]).
    jop: bool,
    /// The launcher preloads each image: nothing is downloaded.
    preloaded: bool,
}

impl BoardTarget {
    /// A board reached over `line` running `images`, each given up after
    /// `total`; `kind` and `note` say what the board is (a real board, the
    /// virtual one, the bench).
    pub fn new(
        kind: TargetKind,
        line: BoardLine,
        images: Images,
        habits: LineHabits,
        total: Duration,
        note: Option<String>,
    ) -> BoardTarget {
        BoardTarget {
            kind,
            line,
            images,
            habits,
            total,
            note,
            loaded: Vec::new(),
            owned: Vec::new(),
            link: None,
            launcher: None,
            simulating: None,
            wait_states: None,
            serial_char: None,
            serial_free: None,
            started: 0,
            pace: None,
            failed_before: false,
            jop: false,
            preloaded: false,
        }
    }

    /// The same, for a board that `launcher` starts (its port replaces `line.port`).
    pub fn launched(mut self, launcher: Box<dyn Launcher>) -> BoardTarget {
        self.launcher = Some(launcher);
        self
    }

    /// The board simulates a JOP running the tree's images, with method
    /// cache `cache` (`fifo:<bytes>:<blocks>`): as the tree's JopSim does
    /// (`jopsim`), or as the processor.
    pub fn simulating(mut self, cache: String, jopsim: bool) -> BoardTarget {
        self.simulating = Some((cache, jopsim));
        self
    }

    /// The board is a processor whose memory has read and write wait states `rw`.
    pub fn with_wait_states(mut self, rw: (f64, f64)) -> BoardTarget {
        self.wait_states = Some(rw);
        self
    }

    /// The board's serial line takes `cycles` per character it sends.
    pub fn with_serial_char(mut self, cycles: f64) -> BoardTarget {
        self.serial_char = Some(cycles);
        self
    }

    /// The characters its UART takes without the program waiting (see
    /// [`crate::Target::serial_free`]).
    pub fn with_serial_free(mut self, chars: f64) -> BoardTarget {
        self.serial_free = Some(chars);
        self
    }

    /// Opens the line to `line.port` (again, after a launcher's restart).
    fn open_link(&mut self) -> Result<(), TargetError> {
        self.link = None;
        self.link =
            Some(jopcal_link::open(&self.line.port, self.line.baud, self.line.dtr_rts).map_err(TargetError::Link)?);
        Ok(())
    }

    /// Before `image` (not the first): a launcher that restarts its board gives a new line.
    fn restart_launcher(&mut self, image: &Path, progress: &dyn Progress) -> Result<(), TargetError> {
        let restarted = match self.launcher.as_mut() {
            Some(l) => l.restart(image, progress)?,
            None => None,
        };
        if let Some(port) = restarted {
            self.line.port = port;
            self.open_link()?;
        }
        Ok(())
    }

    /// Each image is preloaded by the launcher: none is downloaded.
    pub fn preloading(mut self) -> BoardTarget {
        self.preloaded = true;
        self
    }

    /// Whether the board is a JOP (a board, the virtual board, a tree's RTL
    /// in the bench) rather than a DUT of the user's, whose images are any words.
    fn is_jop(&self) -> bool {
        self.kind != TargetKind::Verilator || self.jop
    }

    /// The bench runs a JOP (a tree's RTL): its images must be JOP images.
    pub fn jop(mut self) -> BoardTarget {
        self.jop = true;
        self
    }

    /// Classic download paced as `pace` says.
    pub fn with_pace(mut self, pace: Pace) -> BoardTarget {
        self.pace = Some(pace);
        self
    }

    fn session(&self) -> SessionOptions {
        let mut download = DownloadOptions::new(self.line.protocol);
        download.pace = self.pace.unwrap_or(match self.kind {
            TargetKind::Board => Pace::line(self.line.baud),
            // The virtual board's loader echoes what the pseudo-terminal
            // holds, up to 4 KB at a time, with no UART between: half that in
            // flight keeps both directions' buffers from filling, and takes a
            // tree's 70 KB image in 35 round trips instead of 1,100.
            TargetKind::Emu => Pace::Window(2048),
            _ => download.pace,
        });
        download.preloaded = self.preloaded;
        SessionOptions {
            download,
            capture: CaptureOptions {
                line_timeout: self.line.line_timeout,
                total_timeout: self.total,
                require_check: true,
                exit_wait: self.habits.exit_wait.min(self.line.line_timeout),
            },
            retries: self.line.retries,
            retry_on: self.line.retry_on,
            configure: self.line.configure.clone(),
            reset: self.line.reset.clone(),
            reset_first: self.failed_before,
            quiet: self.habits.quiet,
            quiet_limit: Duration::from_secs(10),
        }
    }
}

/// Loads an image and names it by its file stem and content hash.
/// `jop`: the board is a JOP, whose layout the image must have (a DUT of
/// the user's in the bench takes any words).
fn load_image(path: &Path, jop: bool) -> Result<(Job, JopImage), TargetError> {
    let image = if jop {
        JopImage::load_checked(path, None)?
    } else {
        JopImage::load(path, None)?
    };
    let bytes = std::fs::read(path).map_err(|e| TargetError::io(path, e))?;
    let hash = format!("{:x}", Sha256::digest(&bytes));
    let name = path
        .file_stem()
        .map_or("image".into(), |s| s.to_string_lossy().into_owned());
    Ok((
        Job {
            name,
            hash: hash[..16].to_string(),
        },
        image,
    ))
}

impl Target for BoardTarget {
    fn kind(&self) -> TargetKind {
        self.kind
    }

    fn prepare(&mut self, staging: &Path, progress: &dyn Progress) -> Result<Prepared, TargetError> {
        let mut paths = match &self.images {
            Images::Given(p) => p.clone(),
            Images::FromLauncher => Vec::new(),
            Images::Built {
                tools,
                root,
                benches,
                limit,
                parallel,
            } => {
                let suite = jopcal_workloads::Suite::load(root)?;
                let jobs = suite.select(benches)?;
                self.owned = tools.build_all(&suite, &jobs, staging, *limit, *parallel, progress)?;
                self.owned.clone()
            }
        };
        // Started only now: a bench free-runs towards its cycle limit while it waits.
        let mut left_out = Vec::new();
        if let Some(launcher) = self.launcher.as_mut() {
            let launched = launcher.launch(staging, &paths, progress)?;
            self.line.port = launched.port;
            self.owned.extend(launched.images.iter().cloned());
            paths.extend(launched.images);
            left_out = launched.left_out;
        }
        if paths.is_empty() {
            return Err(TargetError::Usage(format!(
                "--target {} needs at least one --image FILE.jop",
                self.kind.name()
            )));
        }
        self.loaded = paths
            .iter()
            .map(|p| load_image(p, self.is_jop()).map(|(j, i)| (j, i, p.clone())))
            .collect::<Result<_, _>>()?;
        self.open_link()?;
        Ok(Prepared {
            jobs: self.loaded.iter().map(|(j, _, _)| j.clone()).collect(),
            left_out,
        })
    }

    fn method_cache(&self) -> Option<String> {
        self.simulating.as_ref().map(|(c, _)| c.clone())
    }

    fn times_monitors_as_jopsim(&self) -> bool {
        self.simulating.as_ref().is_some_and(|(_, jopsim)| *jopsim)
    }

    fn wait_states(&self) -> Option<(f64, f64)> {
        self.wait_states
    }

    fn serial_char(&self) -> Option<f64> {
        self.serial_char
    }

    fn serial_free(&self) -> Option<f64> {
        self.serial_free
    }

    fn runs_tree_images(&self) -> bool {
        self.kind.runs_tree_images() || self.simulating.is_some()
    }

    fn config(&self) -> String {
        let over = self.link.as_ref().map_or(self.line.port.clone(), |l| l.describe());
        match &self.note {
            Some(note) => format!("{note} over {over} ({})", self.line.protocol),
            None => format!("{over} {}", self.line.protocol),
        }
    }

    fn run(
        &mut self,
        job: &Job,
        run: u32,
        out: &Path,
        sink: &mut Sink<'_>,
        progress: &dyn Progress,
    ) -> Result<JobEnd, JobError> {
        let opts = self.session();
        let at = self
            .loaded
            .iter()
            .position(|(j, _, _)| j == job)
            .ok_or_else(|| JobError::Unknown {
                what: "image",
                name: job.name.clone(),
            })?;
        self.started += 1;
        // A launcher starts its board with the first image (a preloading bench
        // has it in memory): any other image, or a second one, needs a restart
        // (side by side, a target's first job may be any image).
        if self.started > 1 || at != 0 {
            let path = self.loaded[at].2.clone();
            self.restart_launcher(&path, progress).map_err(|e| JobError::Session {
                log: String::new(),
                why: e.to_string(),
            })?;
        }
        let image = &self.loaded[at].1;
        let link = self.link.as_mut().ok_or(JobError::NotPrepared("board"))?;
        let stem = &job.name;
        // Runs after the first keep their own logs (`--runs N`).
        let log_rel = |k: u32| match run {
            1 => format!("logs/{stem}-attempt{k}.log"),
            n => format!("logs/{stem}-run{n}-attempt{k}.log"),
        };
        // Attempts finished so far; results arrive during attempt `done + 1`.
        let done = Cell::new(0u32);
        let mut on_result = |r: &ResultLine| -> Result<(), StoreError> {
            let ResultLine::Result {
                bench,
                iterations,
                cycles,
                ..
            } = r
            else {
                return Ok(());
            };
            sink(Reported {
                bench: bench.clone(),
                iterations: *iterations,
                value: *cycles,
                unit: Unit::Cycles,
                log: log_rel(done.get() + 1),
            })
        };
        let header = format!("image {stem} on {}, {} protocol", self.line.port, self.line.protocol);
        let mut log_err: Option<JobError> = None;
        let mut on_attempt = |att: &Attempt| {
            done.set(att.number);
            let path = out.join(log_rel(att.number));
            if let Err(source) = atomic::write_atomic(&path, &att.log_bytes(&header)) {
                log_err = Some(JobError::WriteLog { path, source });
            }
            if let Some(v) = &att.verdict {
                progress.note(&format!("{stem} attempt {}: {v}", att.number));
            }
        };
        let outcome = run_image(link.as_mut(), image, &opts, &mut on_result, &mut on_attempt);
        self.failed_before = outcome.is_err();
        if let Some(e) = log_err {
            return Err(e);
        }
        match outcome {
            Err(f) => {
                let ended = self.launcher.as_mut().and_then(|l| l.ended());
                Err(JobError::Session {
                    log: log_rel(f.attempts.last().map_or(1, |a| a.number)),
                    why: match ended {
                        Some(e) => format!("{e} ({})", f.why),
                        None => f.why,
                    },
                })
            }
            Ok(attempts) => {
                let last = attempts.last();
                let output = last
                    .and_then(|a| a.captured.as_ref())
                    .map(|c| String::from_utf8_lossy(&c.raw).into_owned())
                    .unwrap_or_default();
                let stop = uncaught_exception(&output, &self.loaded[at].2);
                Ok(JobEnd {
                    output,
                    log: log_rel(last.map_or(1, |a| a.number)),
                    stop,
                })
            }
        }
    }

    fn finish(&mut self, out: Option<&Path>) -> Result<(), TargetError> {
        self.link = None;
        let kept = match out {
            Some(out) if !self.owned.is_empty() => crate::keep_images(&self.owned, &out.join("images")),
            _ => Ok(()),
        };
        let stopped = match self.launcher.as_mut() {
            Some(l) => l.stop(out),
            None => Ok(()),
        };
        kept.and(stopped)
    }
}

/// Why a JOP runtime stopped the program, as it reported in `output` (an
/// uncaught exception, or something it does not implement), its methods
/// named from the link map beside `image` (`<image>.link.txt`) where there is one.
pub(crate) fn uncaught_exception(output: &str, image: &Path) -> Option<String> {
    use jopcal_jop::uncaught;
    let map = || {
        std::fs::read_to_string(jopcal_jop::linkmap::beside(image))
            .ok()
            .and_then(|t| jopcal_jop::linkmap::LinkMap::parse(&t).ok())
    };
    // The later of the two reports is the one that stopped it.
    let thrown = output.rfind("Uncaught exception:");
    let lacking = output.rfind("JOP: bytecode ");
    if lacking > thrown {
        if let Some(n) = uncaught::parse_not_implemented(output) {
            return Some(n.describe(map().as_ref()));
        }
    }
    uncaught::parse(output).map(|u| u.describe(map().as_ref()))
}
