//! The command line: one verb per stage of the pipeline (clap derive).

use clap::{Args, Parser, Subcommand, ValueEnum};
use std::path::PathBuf;

#[derive(Debug, Parser)]
#[command(name = "jopcal", version = jopcal_measure::provenance::VERSION, about = "Validate and calibrate cycle estimators for JOP-family Java processors", long_about = None)]
pub struct Cli {
    /// Directory of the workload suite (holds suite.toml, src/, host-stubs/).
    /// Default: $JOPCAL_FIRMWARE, else jop-firmware/ found from the current directory up,
    /// else the built-in suite jopcal carries.
    #[arg(long, global = true, value_name = "DIR")]
    pub firmware: Option<PathBuf>,

    /// The user's JOP tree (its suites, its images, its microcode and RTL). Default: $JOPCAL_JOP_HOME, else
    /// `home` in the [jop] table of a jopcal.toml found from the current directory up.
    #[arg(long, global = true, value_name = "DIR")]
    pub jop_home: Option<PathBuf>,
    /// Which profiler counts the host runs: `step`, the single-step JVMTI
    /// agent (the oracle), or `instrument`, classes rewritten as they load
    /// (the JVM's speed), which give the same profiles; `auto` takes the
    /// faster of the two per workload (step below 20 M measured cycles);
    /// `clock` counts nothing but the region's wall time (the baseline the
    /// profilers' cost is measured against).
    #[arg(long, global = true, value_enum, default_value = "auto")]
    pub profiler: jopcal_pipeline::instrumenter::ProfilerKind,

    #[command(subcommand)]
    pub verb: Verb,
}

#[derive(Debug, Subcommand)]
pub enum Verb {
    /// The whole pipeline: build, measure, profile, estimate, reconcile, calibrate, plot.
    Validate(ValidateArgs),
    /// Run workloads on a target and write measurements.csv.
    Run(RunArgs),
    /// Profile workloads on the host JVM (calling-context tree, exact bytecode counts).
    Profile(ProfileArgs),
    /// Estimate target cycles from profiles with a timing model.
    Estimate(jopcal_pipeline::estimate::EstimateOptions),
    /// Print a timing model's resolved per-opcode cycle table.
    Table(jopcal_pipeline::table::TableRequest),
    /// Take each benchmark's estimate apart against its measurement and the target's own counts.
    Explain(jopcal_pipeline::explain::ExplainOptions),
    /// Compare measured and estimated cycles: accuracy tables.
    Reconcile(ReconcileArgs),
    /// Fit a timing model's parameters to measurements.
    Calibrate(CalibrateArgs),
    /// Re-render tables and plots of an earlier validate run.
    Report(ReportArgs),
    /// Compare two measurement sets, or two versions of the processor (--against REV), and fail on cycle regressions.
    Regress(RegressArgs),
    /// Download a .jop image to a board over serial or TCP.
    Upload(UploadArgs),
    /// Start the virtual JOP board.
    Emu(EmuArgs),
    /// Build or run the Verilator simulation bench.
    Sim(SimArgs),
    /// List the targets and whether each can be used here.
    Targets,
    /// Show the cache (compiled suites, generated tree suites, jopcal's own files) or clear it.
    Cache(CacheArgs),
    /// Check a JOP tree and its jopcal.toml (harnesses, encoding, host build, one image, JopSim).
    Doctor(DoctorArgs),
    /// Run one image on two targets and compare them bytecode by bytecode.
    Diff(jopcal_pipeline::diff::DiffRequest),
    /// Measure a tree suite at every point of a cross product of its top's generics
    /// (method cache, memory) on the RTL or the virtual board, beside the estimator's prediction.
    Sweep(SweepArgs),
    /// Run one task of a Slurm job array (what --launcher slurm submits; not for use by hand).
    #[command(hide = true)]
    Task {
        /// The task's directory (its task.json).
        dir: PathBuf,
    },
}

/// Where the measurements run: here, or on a cluster through Slurm.
#[derive(Debug, Args, Clone, Default)]
pub struct LauncherArgs {
    /// local (this machine, --jobs at a time) or slurm (each workload a task of a Slurm job
    /// array, submitted with sbatch; the same command run again runs only what is missing or
    /// failed; docs/slurm.md).
    #[arg(long, value_enum, default_value_t = LauncherKind::Local)]
    pub launcher: LauncherKind,
    /// Option passed to sbatch with --launcher slurm, e.g. --slurm-arg=--partition=fpga (repeatable).
    #[arg(long = "slurm-arg", value_name = "ARG", allow_hyphen_values = true)]
    pub slurm_args: Vec<String>,
    /// A directory every node sees at the same path, for the tasks' commands, results and
    /// logs (default ./jopcal-slurm).
    #[arg(long, value_name = "DIR")]
    pub slurm_dir: Option<PathBuf>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum, Default)]
pub enum LauncherKind {
    #[default]
    Local,
    Slurm,
}

impl LauncherArgs {
    /// The launcher asked for; Slurm options without Slurm are refused.
    pub fn launcher(self) -> anyhow::Result<jopcal_launch::slurm::Launcher> {
        use jopcal_launch::slurm::{Launcher, SlurmOptions};
        match self.launcher {
            LauncherKind::Slurm => Ok(Launcher::Slurm(SlurmOptions {
                sbatch_args: self.slurm_args,
                dir: self.slurm_dir,
            })),
            LauncherKind::Local if !self.slurm_args.is_empty() || self.slurm_dir.is_some() => {
                anyhow::bail!("--slurm-arg and --slurm-dir apply to --launcher slurm only")
            }
            LauncherKind::Local => Ok(Launcher::Local),
        }
    }
}

#[derive(Debug, Args)]
pub struct SweepArgs {
    /// Print the plan (every point, the suite, the table, the output) and stop.
    #[arg(long)]
    pub dry_run: bool,
    /// A generic of the tree's top and the values it takes, e.g. --generic jpc_width=10,11,12
    /// (repeatable: the sweep runs every combination).
    #[arg(long = "generic", value_name = "NAME=V1,V2,...", required = true)]
    pub generics: Vec<String>,
    /// The tree suite: jembench, jbe or jembench-all.
    #[arg(long)]
    pub suite: String,
    /// Only these benchmarks (repeatable).
    #[arg(long = "bench", value_name = "NAME")]
    pub benches: Vec<String>,
    /// verilator (the tree's RTL, a bench built per point and kept in the cache) or emu
    /// (the virtual board as that processor).
    #[arg(long, value_enum)]
    pub target: Target,
    /// The tree's Quartus project whose generics are swept (default cycmin).
    #[arg(long, value_name = "PROJECT")]
    pub top: Option<String>,
    /// The timing table the estimator derives the processor's from. Default: the tree's, with
    /// what its microcode does not time (bytecodes JOP runs in Java) fitted first by a
    /// `validate` on the virtual board at the top's own configuration (DIR/calibration/).
    #[arg(long, value_name = "FILE")]
    pub model: Option<PathBuf>,
    /// Seconds one workload may take (default: jopcal.toml's `timeout`, else 120).
    #[arg(long)]
    pub timeout: Option<u64>,
    /// Clock cycles per UART bit of the benches built (a multiple of 16).
    #[arg(long, default_value_t = 32)]
    pub bit_cycles: u32,
    /// Jobs at once: image builds, profiles, and targets side by side (default: the machine's cores).
    #[arg(long, short = 'j', value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
    pub jobs: Option<u32>,
    /// Output directory (default out/sweep-<time>/).
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
    #[command(flatten)]
    pub launch: LauncherArgs,
}

#[derive(Debug, Args)]
pub struct DoctorArgs {
    /// Seconds the image build and the JopSim run may each take.
    #[arg(long, default_value_t = 300)]
    pub timeout: u64,
    /// Also build every workload of every suite into an image with the tree's toolchain
    /// (one `make java_app` each, minutes for the whole tree; images built before from the
    /// same inputs come from the cache) and name each that does not link.
    #[arg(long)]
    pub link: bool,
}

#[derive(Debug, Args)]
pub struct CacheArgs {
    /// Remove everything in the cache (it is rebuilt on demand).
    #[arg(long)]
    pub clear: bool,
}

/// Where workloads run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Target {
    /// The host JVM (measures nanoseconds, not JOP cycles).
    Host,
    /// The virtual JOP board built into jopcal.
    Emu,
    /// A JOP board on a serial port or TCP.
    Board,
    /// A Verilator-simulated JOP RTL.
    Verilator,
    /// The JOP tree's own bytecode simulator.
    Jopsim,
}

impl Target {
    /// The target used when none is given: the virtual board, which needs no hardware.
    pub const DEFAULT: Target = Target::Emu;

    /// The library's name for it.
    pub fn kind(self) -> jopcal_targets::TargetKind {
        use jopcal_targets::TargetKind;
        match self {
            Target::Host => TargetKind::Host,
            Target::Emu => TargetKind::Emu,
            Target::Board => TargetKind::Board,
            Target::Verilator => TargetKind::Verilator,
            Target::Jopsim => TargetKind::Jopsim,
        }
    }

    pub fn name(self) -> &'static str {
        self.kind().name()
    }
}

#[derive(Debug, Args)]
pub struct RunArgs {
    /// Print the run's plan (suite, workloads, tree, target, output directory) and stop.
    #[arg(long)]
    pub dry_run: bool,
    /// Where the workloads run.
    #[arg(long, value_enum, default_value_t = Target::DEFAULT)]
    pub target: Target,
    /// The workload suite: `builtin` (jop-firmware/), or one of the JOP tree's (--jop-home):
    /// `jembench` / `jbe` (its fixed-count harnesses, each timed by a generated wrapper),
    /// `jembench-all` (every benchmark JemBench's Main runs), `apps` (its applications).
    /// Your own programs: --main CLASS / --cp DIR instead.
    #[arg(long, default_value = "builtin")]
    pub suite: String,
    /// Only these benchmarks (repeatable; default: the whole suite).
    #[arg(long = "bench", value_name = "NAME")]
    pub benches: Vec<String>,
    /// Measure every workload this many times (the `run` column).
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..))]
    pub runs: u32,
    /// Output directory (created if missing; an earlier run in it is moved to previous/).
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
    /// Seconds one workload may take before it is killed (default 120; on the JOP tree's
    /// targets `timeout` of jopcal.toml's [jop] table, if given).
    #[arg(long)]
    pub timeout: Option<u64>,
    /// Extra option for the host JVM, e.g. --jvm-arg=-Xint (repeatable; host target).
    #[arg(long = "jvm-arg", value_name = "ARG", allow_hyphen_values = true)]
    pub jvm_args: Vec<String>,
    /// The suite's generated directory, as a Slurm task is given it (--suite then says
    /// only whether it is a tree's: `builtin` or `tree`).
    #[arg(long, value_name = "DIR", hide = true)]
    pub suite_root: Option<PathBuf>,
    #[command(flatten)]
    pub programs: ProgramArgs,
    #[command(flatten)]
    pub on: TargetArgs,
}

/// How to reach the target: the board's line, the virtual board, the bench.
#[derive(Debug, Args, Clone)]
pub struct TargetArgs {
    #[command(flatten)]
    pub board: BoardArgs,
    #[command(flatten)]
    pub emu: jopcal_pipeline::measure::EmuOptions,
    /// The built bench for --target verilator (from `jopcal sim build`); with --target emu the virtual board is that bench's processor, its clock and UART included.
    #[arg(long, value_name = "DIR")]
    pub sim: Option<PathBuf>,
    /// Options for the bench with --target verilator, e.g. --sim-arg=--read-wait --sim-arg=3 (repeatable).
    #[arg(long = "sim-arg", value_name = "ARG", allow_hyphen_values = true)]
    pub sim_args: Vec<String>,
    /// Jobs at once: image builds, and virtual boards, benches or JopSims side by side,
    /// each taking the next workload (default: the machine's cores). Results are those
    /// of --jobs 1. A board (one port) and the host JVM (which measures time) run one
    /// workload at a time whatever this says.
    #[arg(long, short = 'j', value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
    pub jobs: Option<u32>,
    #[command(flatten)]
    pub launch: LauncherArgs,
}

/// Your own programs instead of a suite (a JOP tree's targets: the tree's
/// build, runtime and library run them).
#[derive(Debug, Args, Clone, Default)]
pub struct ProgramArgs {
    /// A main class of yours (repeatable): the whole of its main is timed,
    /// what it prints included. Found under --cp DIR, else where the tree's
    /// build finds applications (java/target/src/bench, java/target/src/app).
    #[arg(long = "main", value_name = "CLASS")]
    pub mains: Vec<String>,
    /// The root of your programs' sources (their packages below it), in the
    /// tree or anywhere; without --main, every class with a main under it.
    #[arg(long, value_name = "DIR")]
    pub cp: Option<PathBuf>,
}

impl ProgramArgs {
    /// The request, and the suite name the run then carries.
    pub fn request(&self, suite: &str) -> anyhow::Result<(jopcal_tree::programs::ProgramRequest, String)> {
        let r = jopcal_tree::programs::ProgramRequest {
            mains: self.mains.clone(),
            cp: self.cp.clone(),
        };
        if !r.is_requested() {
            return Ok((r, suite.to_string()));
        }
        if suite != "builtin" {
            anyhow::bail!("--suite {suite} and --main/--cp: a run measures either a suite or your programs");
        }
        Ok((r, jopcal_pipeline::locate::PROGRAMS_SUITE.to_string()))
    }
}

use jopcal_pipeline::measure::parse_generic;

pub use jopcal_pipeline::default_jobs;

/// How to reach a board and what to send it (`--target board`).
#[derive(Debug, Args, Clone)]
pub struct BoardArgs {
    /// Serial device (/dev/ttyUSB0, a pseudo-terminal) or tcp://HOST:PORT.
    #[arg(long, value_name = "DEV|tcp://HOST:PORT")]
    pub port: Option<String>,
    /// The board's download protocol: classic (original JOP), classic-noecho
    /// (USB mode: echoes not verified), handshake (SpinalHDL port).
    #[arg(long, default_value = "classic", value_parser = parse_protocol)]
    pub protocol: jopcal_link::Protocol,
    /// Line rate (8N1, no flow control). Ignored for tcp:// and pseudo-terminals.
    #[arg(long, default_value_t = 115_200)]
    pub baud: u32,
    /// .jop image to run: one per workload, or one running the whole suite (repeatable).
    #[arg(long = "image", value_name = "FILE.jop")]
    pub images: Vec<PathBuf>,
    /// Shell command run before each download, e.g. an openFPGALoader call that reconfigures the board.
    #[arg(long, value_name = "CMD")]
    pub configure: Option<String>,
    /// Attempts after the first when a download fails or the output cannot be trusted.
    #[arg(long, default_value_t = 2)]
    pub retries: u32,
    /// Raise DTR and RTS after opening the port (boards that need them; tolerated where missing).
    #[arg(long)]
    pub dtr_rts: bool,
    /// Seconds of silence after which a running image is given up.
    #[arg(long, default_value_t = 30)]
    pub line_timeout: u64,
    /// The tree's Quartus project whose processor the board's FPGA holds (built from
    /// this tree, e.g. cycmin): its UART's character time and memory wait states are
    /// then known, as they are to the virtual board, and printing in a timed region is
    /// priced by them. Without it a board's printing is priced without its UART.
    #[arg(long, value_name = "PROJECT")]
    pub board_top: Option<String>,
    /// Classic download to a board: `line` (default: paced for JOP's transmitter, 11 bit
    /// times a byte, up to 3.5% slow, each burst when all but 2 echoes of the one before have
    /// come), `line:10` (a UART with one stop bit), `word`, `window:N`.
    #[arg(long = "pace", value_name = "PACE")]
    pub pace: Option<String>,
}

fn parse_protocol(s: &str) -> Result<jopcal_link::Protocol, jopcal_link::SettingError> {
    s.parse()
}

#[derive(Debug, Args)]
pub struct EmuArgs {
    /// Open a pseudo-terminal, print its path on the first line, and serve downloads until killed.
    #[arg(long)]
    pub pty: bool,
    /// The download protocol the virtual board's loader speaks.
    #[arg(long, default_value = "classic", value_parser = parse_protocol)]
    pub protocol: jopcal_link::Protocol,
    /// The board's timing and cache (default: calibration/emu-board.toml for
    /// class bundles, calibration/jop-devel.toml for a JOP tree's images).
    #[arg(long, value_name = "FILE")]
    pub config: Option<PathBuf>,
    /// Override a board parameter, e.g. --param r=2 (repeatable).
    #[arg(long = "param", value_name = "NAME=VALUE")]
    pub params: Vec<String>,
    /// Faults to inject on the line, e.g. drop=0.001,stall=3000@200 (see docs/formats.md).
    #[arg(long, value_name = "PLAN")]
    pub fault: Option<String>,
    /// Seed of the fault injection.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Write each run's per-method cycles and call stream as DIR/run<N>.methods.csv and .calls.txt.
    #[arg(long, value_name = "DIR")]
    pub trace: Option<PathBuf>,
    /// Stop a run after this many cycles (an endless loop).
    #[arg(long)]
    pub cycle_limit: Option<u64>,
    /// Run an image directly (no serial line) and print its output: a class
    /// bundle, or a JOP tree's linked image (its link map beside it names
    /// the methods of --trace).
    #[arg(long, value_name = "FILE.jop", conflicts_with = "pty")]
    pub run: Option<PathBuf>,
    /// How a JOP tree's image is timed: processor (the RTL's: the tree's
    /// microcode for its top's memory, monitors, stack and UART) or jopsim.
    #[arg(long, default_value = "processor")]
    pub timing: jopcal_pipeline::processor::EmuTiming,
    /// The processor: the tree's Quartus project (default: cycmin, as `sim build`).
    #[arg(long, value_name = "PROJECT")]
    pub top: Option<String>,
    /// The processor of a bench `jopcal sim build --jop-home` built (its top and clock).
    #[arg(long, value_name = "DIR")]
    pub sim: Option<PathBuf>,
    /// Write a bundle of every class file under DIR (with --main and --out) instead of serving.
    #[arg(long, value_name = "DIR", requires_all = ["main", "out"], conflicts_with_all = ["pty", "run"])]
    pub classes: Option<PathBuf>,
    /// Main class of the bundle (with --classes).
    #[arg(long, value_name = "CLASS")]
    pub main: Option<String>,
    /// Bundle file to write (with --classes).
    #[arg(long, value_name = "FILE.jop")]
    pub out: Option<PathBuf>,
}

#[derive(Debug, Args)]
pub struct ReconcileArgs {
    /// measurements.csv of a JOP target (cycles).
    #[arg(long, value_name = "FILE")]
    pub measured: PathBuf,
    /// estimates.csv from `jopcal estimate`.
    #[arg(long, value_name = "FILE")]
    pub estimates: PathBuf,
    /// Output directory for accuracy.{csv,md,tex} and plots/.
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
}

#[derive(Debug, Args)]
pub struct CalibrateArgs {
    /// measurements.csv (repeatable: e.g. the suite's and the micro-benchmarks').
    #[arg(long = "measured", value_name = "FILE", required_unless_present = "generate_micro")]
    pub measured: Vec<PathBuf>,
    /// Directory of .jopprof profiles of the same benchmarks (repeatable).
    #[arg(long = "profiles", value_name = "DIR", required_unless_present = "generate_micro")]
    pub profiles: Vec<PathBuf>,
    /// The starting timing model (default: calibration/jop-wcet.toml).
    #[arg(long, value_name = "FILE")]
    pub model: Option<PathBuf>,
    /// The fitted table to write (a model deriving from --model); calibration.json goes beside it.
    #[arg(long, value_name = "FILE", default_value = "calibrated.toml")]
    pub out: PathBuf,
    /// What to fit: parameter names and groups (impl_java: every Java-implemented bytecode's own cost; cache: the method cache).
    #[arg(long, default_value = "r,w,impl_java,cache")]
    pub fit: String,
    /// The method cache when `cache` is not fitted.
    #[arg(long, default_value = "fifo:1024:16")]
    pub cache: String,
    /// Leave benchmarks that run synchronized code out of the fit and only predict them
    /// (for JopSim, which does not time monitors as the processor does).
    #[arg(long)]
    pub leave_out_synchronized: bool,
    /// Cross-validation: loo (leave one benchmark out) or none.
    #[arg(long, default_value = "loo")]
    pub cv: String,
    /// Instead: write calibration micro-benchmarks (a workload directory for --firmware) into DIR.
    #[arg(long, value_name = "DIR")]
    pub generate_micro: Option<PathBuf>,
    /// With --generate-micro: floating-point micro-benchmarks too (for a
    /// target that runs a JOP tree's images; the class-bundle board has no floating point).
    #[arg(long, requires = "generate_micro")]
    pub floating_point: bool,
}

#[derive(Debug, Args)]
pub struct RegressArgs {
    /// The reference measurements.csv (with --candidate).
    #[arg(
        long,
        value_name = "FILE",
        requires = "candidate",
        conflicts_with_all = ["against", "candidate_home", "dry_run", "out", "benches", "no_model_check", "jobs", "timeout"]
    )]
    pub baseline: Option<PathBuf>,
    /// The measurements.csv to check against it.
    #[arg(long, value_name = "FILE", requires = "baseline")]
    pub candidate: Option<PathBuf>,
    /// Instead: the tree (--jop-home) as it is against this git revision of it (e.g. HEAD):
    /// the suite runs on both versions of the processor, and each change is explained by bytecode.
    #[arg(long, value_name = "REV", conflicts_with = "candidate_home")]
    pub against: Option<String>,
    /// Instead: this second tree (the candidate) against the tree (--jop-home).
    #[arg(long, value_name = "DIR")]
    pub candidate_home: Option<PathBuf>,
    /// With --against/--candidate-home: the target each version makes: emu (its virtual
    /// board), verilator (a bench built from its VHDL) or jopsim.
    #[arg(long, value_enum, default_value_t = Target::DEFAULT)]
    pub target: Target,
    /// With --against/--candidate-home: the suite (jembench, jbe, jembench-all, apps).
    #[arg(long, default_value = "jembench")]
    pub suite: String,
    /// Only these benchmarks (repeatable).
    #[arg(long = "bench", value_name = "NAME")]
    pub benches: Vec<String>,
    /// Output directory of --against/--candidate-home (default out/regress-<time>).
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
    /// Seconds one workload may take.
    #[arg(long)]
    pub timeout: Option<u64>,
    /// Jobs at once (image builds, targets side by side).
    #[arg(long, short = 'j', value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
    pub jobs: Option<u32>,
    /// Do not check on the candidate's RTL that the virtual board follows a VHDL change
    /// (the regression then fails when the VHDL differs: it cannot say what the change did).
    #[arg(long)]
    pub no_model_check: bool,
    /// With --against/--candidate-home: print both versions, what differs and the steps, and stop.
    #[arg(long)]
    pub dry_run: bool,
    #[command(flatten)]
    pub programs: ProgramArgs,
    #[command(flatten)]
    pub launch: LauncherArgs,
    /// Largest allowed change of a benchmark's cycles, in percent.
    #[arg(long, default_value_t = 1.0)]
    pub threshold: f64,
    /// Which changes past the threshold fail: slower (more cycles), faster, or any.
    #[arg(long, default_value = "slower", value_name = "slower|faster|any")]
    pub fail_on: jopcal_report::regress::FailOn,
    /// Also write JUnit XML (with the candidate's raw logs) here.
    #[arg(long, value_name = "FILE")]
    pub junit: Option<PathBuf>,
}

#[derive(Debug, Args)]
pub struct ReportArgs {
    /// A directory `jopcal validate` wrote: tables and plots are rendered again from its files.
    #[arg(long, value_name = "DIR")]
    pub from: PathBuf,
    /// Also copy the tables, plots, summary and fitted table into DIR (e.g. the repository's reports/).
    #[arg(long, value_name = "DIR")]
    pub publish: Option<PathBuf>,
}

#[derive(Debug, Args)]
pub struct SimArgs {
    #[command(subcommand)]
    pub action: SimAction,
}

#[derive(Debug, Subcommand)]
pub enum SimAction {
    /// Verilate RTL with the bench: your Verilog (--rtl FILE... --top MODULE, whose ports
    /// hdl-sim/CONTRACT.md gives), or, without --rtl, the JOP of the tree given by --jop-home
    /// (its VHDL converted with GHDL; --top names its Quartus project, default cycmin).
    Build {
        /// Verilog sources of the DUT (repeatable).
        #[arg(long = "rtl", value_name = "FILE", num_args = 1..)]
        rtl: Vec<PathBuf>,
        /// The top module (with --rtl), or the tree's Quartus project (quartus/NAME/jop.qsf).
        #[arg(long, value_name = "NAME")]
        top: Option<String>,
        /// Where the bench is built.
        #[arg(long, value_name = "DIR")]
        out: PathBuf,
        /// Build with VCD tracing (--trace FILE --trace-from C --trace-to C at run time).
        #[arg(long)]
        trace: bool,
        /// A tree's JOP with simulation microcode: images are preloaded into memory
        /// (`run --target verilator --preload`) instead of downloaded over the UART.
        #[arg(long, conflicts_with = "rtl")]
        preload: bool,
        /// A tree's JOP: clock cycles per UART bit (a multiple of 16). The board's
        /// 868 would make a download take the simulation an hour.
        #[arg(long, default_value_t = 32, conflicts_with = "rtl")]
        bit_cycles: u32,
        /// A tree's JOP without the trace taps (to measure what they cost).
        #[arg(long, conflicts_with = "rtl")]
        no_taps: bool,
        /// A tree's JOP with GHDL's netlist of every entity: no jopcal stand-ins for
        /// the method cache's and the object cache's tags (slower; the stand-ins
        /// are used only where the tree's VHDL is the text they were written from).
        #[arg(long, conflicts_with = "rtl")]
        no_stand_ins: bool,
        /// A tree's JOP with a generic of its top set, e.g. --generic jpc_width=11
        /// (repeatable): the method cache (jpc_width, block_bits), the memory (ram_cnt).
        #[arg(long = "generic", value_name = "NAME=VALUE", conflicts_with = "rtl", value_parser = parse_generic)]
        generics: Vec<(String, i64)>,
    },
    /// Run a built bench; everything after --sim DIR goes to the bench (e.g. --pty, --stdout, --preload FILE, --cycle-limit N).
    Run {
        #[arg(long, value_name = "DIR")]
        sim: PathBuf,
        #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
        args: Vec<String>,
    },
    /// Measure the bench's overhead: the bench loop against the bare model clocked by a trivial loop,
    /// and tracing (per-method tallies and the bytecode event stream) on a preloaded image.
    Bench {
        #[arg(long, value_name = "DIR")]
        sim: PathBuf,
        /// Cycles per run.
        #[arg(long, default_value_t = 20_000_000)]
        cycles: u64,
        /// An image to run preloaded (a `sim build --preload` bench): the bench runs it with and without tracing.
        #[arg(long, value_name = "FILE.jop")]
        image: Option<PathBuf>,
    },
}

#[derive(Debug, Args)]
pub struct UploadArgs {
    /// Serial device (/dev/ttyUSB0, a pseudo-terminal) or tcp://HOST:PORT.
    #[arg(long, value_name = "DEV|tcp://HOST:PORT")]
    pub port: String,
    /// The board's download protocol.
    #[arg(long, default_value = "classic", value_parser = parse_protocol)]
    pub protocol: jopcal_link::Protocol,
    /// Line rate (8N1, no flow control).
    #[arg(long, default_value_t = 115_200)]
    pub baud: u32,
    /// Raise DTR and RTS after opening the port.
    #[arg(long)]
    pub dtr_rts: bool,
    /// Classic download: `line` (bursts paced for JOP's transmitter, 11 bit times a byte,
    /// on a board whose UART is up to 3.5% slow, each when all but 2 echoes of the one before
    /// have come), `line:10` (a board whose UART sends one stop bit), `word` (each word's echo
    /// awaited), or `window:N` (N bytes in flight, unpaced).
    #[arg(long, default_value = "line", value_name = "PACE")]
    pub pace: String,
    /// The image to download.
    #[arg(value_name = "IMAGE.jop")]
    pub image: PathBuf,
}

#[derive(Debug, Args)]
pub struct ValidateArgs {
    /// Print the run's plan (every input resolved: suite, workloads, tree, target, table,
    /// cache, output directory, launcher; and the steps) and stop.
    #[arg(long)]
    pub dry_run: bool,
    /// Where the workloads run.
    #[arg(long, value_enum, default_value_t = Target::DEFAULT)]
    pub target: Target,
    /// The workload suite: `builtin` (jop-firmware/), or one of the JOP tree's (--jop-home):
    /// `jembench` / `jbe` (its fixed-count harnesses, each timed by a generated wrapper),
    /// `jembench-all` (every benchmark JemBench's Main runs), `apps` (its applications).
    /// Your own programs: --main CLASS / --cp DIR instead.
    #[arg(long, default_value = "builtin")]
    pub suite: String,
    /// Output directory (created if missing; an earlier run in it is moved to previous/).
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
    /// Only these benchmarks of the suite (repeatable; default: the whole suite). The
    /// calibration micro-benchmarks always run in full.
    #[arg(long = "bench", value_name = "NAME")]
    pub benches: Vec<String>,
    /// Seconds one workload may take before it is killed (default 120; on the JOP tree's
    /// targets `timeout` of jopcal.toml's [jop] table, if given).
    #[arg(long)]
    pub timeout: Option<u64>,
    /// The published measurements to compare with (`jp2-jembench-jop.csv`,
    /// `cprof-jbe-jop.csv`); default: the copy jopcal carries.
    #[arg(long, value_name = "DIR")]
    pub references: Option<PathBuf>,
    /// The timing model to estimate with and to start the fit from (default:
    /// calibration/jop-wcet.toml, JOP's published table; for the jop-devel/jop
    /// tree on JopSim, calibration/jop-devel.toml).
    #[arg(long, value_name = "FILE")]
    pub model: Option<PathBuf>,
    /// On a board, the bench or JopSim, every image (the suite's and the
    /// calibration micro-benchmarks') is built by the JOP tree's toolchain as
    /// jopcal.toml configures it.
    #[command(flatten)]
    pub on: TargetArgs,
    /// Leave out the floating-point calibration micro-benchmarks, which run
    /// wherever a JOP tree's images run (JOP's software float): for a target
    /// without floating point.
    #[arg(long)]
    pub no_float_micro: bool,
    /// Start from the timing table derived from this JOP microcode source (a
    /// tree's asm/src/jvm.asm; see `jopcal table --microcode`), deriving from
    /// --model (default calibration/jop-devel.toml). On a board or the bench
    /// running a tree's images, validate does so from the tree's microcode by
    /// itself unless --model is given.
    #[arg(long, value_name = "FILE")]
    pub microcode: Option<PathBuf>,
    #[command(flatten)]
    pub programs: ProgramArgs,
}

#[derive(Debug, Args)]
pub struct ProfileArgs {
    #[command(flatten)]
    pub options: jopcal_pipeline::profile::ProfileOptions,
    /// Compare each profile with the one of the same benchmark in DIR (e.g.
    /// the other profiler's) and name the first difference; fails when any
    /// differ.
    #[arg(long, value_name = "DIR")]
    pub against: Option<PathBuf>,
}

// The arguments as the options of the pipeline's stages.

impl TryFrom<TargetArgs> for jopcal_pipeline::measure::TargetOptions {
    type Error = anyhow::Error;
    fn try_from(a: TargetArgs) -> anyhow::Result<Self> {
        let b = a.board;
        Ok(jopcal_pipeline::measure::TargetOptions {
            board: jopcal_pipeline::measure::BoardOptions {
                port: b.port,
                protocol: b.protocol,
                baud: b.baud,
                images: b.images,
                configure: b.configure,
                retries: b.retries,
                dtr_rts: b.dtr_rts,
                line_timeout: b.line_timeout,
                top: b.board_top,
                pace: b
                    .pace
                    .map(|p| jopcal_link::Pace::parse(&p, b.baud))
                    .transpose()
                    .map_err(|e| anyhow::anyhow!("--pace: {e}"))?,
            },
            emu: a.emu,
            sim: a.sim,
            sim_args: a.sim_args,
            jobs: a.jobs.map_or_else(default_jobs, |n| n as usize),
            launcher: a.launch.launcher()?,
        })
    }
}

impl TryFrom<ValidateArgs> for jopcal_pipeline::validate::ValidateOptions {
    type Error = anyhow::Error;
    fn try_from(a: ValidateArgs) -> anyhow::Result<Self> {
        let (programs, suite) = a.programs.request(&a.suite)?;
        Ok(jopcal_pipeline::validate::ValidateOptions {
            target: a.target.kind(),
            suite,
            programs,
            out: a.out,
            benches: a.benches,
            timeout: a.timeout,
            references: a.references,
            model: a.model,
            on: a.on.try_into()?,
            no_float_micro: a.no_float_micro,
            microcode: a.microcode,
        })
    }
}
