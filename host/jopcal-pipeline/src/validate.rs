//! The main job, end to end: build and measure the suite on the target,
//! profile it on the host JVM, estimate it with JOP's published table (cache
//! always hit, always miss, and simulated), generate and measure the
//! calibration micro-benchmarks, fit the table to the measurements with
//! leave-one-out cross-validation, estimate again with the fitted table,
//! reconcile everything into accuracy tables and plots, explain each
//! estimate, and write `summary.json`. A stage that cannot run on the chosen
//! target says why.

use crate::calibrate::{run_calibration, CalibrationRun};
use crate::estimate::{benchmark_image, estimate_all, load_image_sizes, write_estimates};
use crate::explain;
use crate::measure::{measure_on, Measure, TargetOptions};
use crate::plan::Plan;
use crate::profile::prepare_host;
use crate::profile::{profile_suite, ProfileFormat, ProfiledSet};
use crate::report::write_accuracy;
use crate::{locate, Session};
use anyhow::{anyhow, bail, Context, Result};
use jopcal_measure::{atomic, interrupt, measurements};
use jopcal_report::accuracy::reconcile;
use jopcal_report::estimates::read_estimates;
use jopcal_report::summary::{Bench, BenchEstimate, CalibrationSummary, Stage, Summary};
use jopcal_targets::{Measured, TargetKind};
use jopcal_timing::cache::CacheMode;
use jopcal_timing::estimate::Estimate;
use jopcal_timing::TimingModel;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// What `jopcal validate` runs, where, and where it writes.
#[derive(Debug, Clone)]
pub struct ValidateOptions {
    /// Where the workloads run.
    pub target: TargetKind,
    /// `builtin`, a tree suite, or `programs` (the user's own, `programs` below).
    pub suite: String,
    /// The user's own programs (`--main`, `--cp`) instead of a suite.
    pub programs: jopcal_tree::programs::ProgramRequest,
    /// Output directory (default `out/validate-<time>/`).
    pub out: Option<PathBuf>,
    /// Only these benchmarks of the suite.
    pub benches: Vec<String>,
    /// Seconds one workload may take.
    pub timeout: Option<u64>,
    /// The published measurements to compare with.
    pub references: Option<PathBuf>,
    /// The timing model to estimate with and to start the fit from.
    pub model: Option<PathBuf>,
    /// How to reach the target.
    pub on: TargetOptions,
    /// Leave out the floating-point micro-benchmarks even where a tree's
    /// images run (a target without JOP's software float).
    pub no_float_micro: bool,
    /// Start from the table derived from this microcode source (on `model`,
    /// default the tree's table).
    pub microcode: Option<PathBuf>,
}

/// What a validate run wrote and what failed in it.
#[derive(Debug)]
pub struct Validated {
    /// The run's directory.
    pub dir: PathBuf,
    /// Its `summary.json`.
    pub summary: PathBuf,
    /// `(workload, why)` of every workload that failed somewhere.
    pub failures: Vec<(String, String)>,
}

/// Marks the calibrated estimates as leave-one-out predictions.
const LOO_SUFFIX: &str = "-loo";
/// Marks the estimates of the table fitted on the micro-benchmarks alone.
const HELD_OUT_SUFFIX: &str = "-on-micro";

/// The cache modes of the published table's estimates.
const CACHE_MODES: [&str; 3] = ["hit", "miss", "fifo:1024:16"];

/// Measures a workload directory's suite on the target into `out` and
/// profiles it on the host JVM into `out/profiles`.
/// `stage`: what the stages are part of, for an interrupted run's summary
/// (`""`, or `"calibrate: "` for the micro-benchmarks).
fn measure_and_profile(
    s: Session,
    root: &Path,
    a: &ValidateOptions,
    plan: &Plan,
    benches: &[String],
    stage: &str,
    out: &Path,
) -> Result<(Measured, ProfiledSet, Vec<String>)> {
    let stamp = plan.stamp.as_str();
    let how = Measure {
        target: a.target,
        ..on_virtual_board(a, plan, benches)
    };
    interrupt::stage(&format!("{stage}measure"));
    let m = measure_on(s, root, &how, out, stamp)?;
    if let (TargetKind::Verilator, Some(sim)) = (a.target, a.on.sim.as_deref()) {
        if let Err(e) = crate::processor::rtl_clocks(s, sim, &m.out.path, &m.rows) {
            s.say(&format!(
                "  validate warning: the RTL's clock for the host's profiles: {e:#}"
            ));
        }
    }
    interrupt::stage(&format!("{stage}profile"));
    let setup = prepare_host(s, root, benches)?;
    let run = crate::profile::tree_host_run(s, root, &setup, a.suite != "builtin")?;
    let mut profiled = profile_suite(
        s,
        &setup,
        &run,
        Some(&m.out.path),
        &m.out.path.join("profiles"),
        stamp,
        None,
        ProfileFormat::Binary,
        Duration::from_secs(plan.profile_timeout),
        a.on.jobs,
    )?;
    let library = use_image_sizes(s, &m.out.path, &mut profiled, &run.tree_library)?;
    warn_of_other_outputs(s, &m.out.path, &m.rows, &profiled.dir);
    Ok((m, profiled, library))
}

/// Says which programs printed differently on the target than in their
/// host profile's run: the host then profiled another run than the one
/// measured (a processor that raises another exception, a library that
/// computes otherwise), and its estimate is not of the measured run.
fn warn_of_other_outputs(s: Session, out: &Path, rows: &[measurements::Measurement], profiles: &Path) {
    let mut seen = std::collections::BTreeSet::new();
    for r in rows {
        if !seen.insert(r.benchmark.as_str()) {
            continue;
        }
        let host = profiles.join("logs").join(format!("{}.log", r.benchmark));
        let (Ok(target_log), Ok(host_log)) = (
            std::fs::read_to_string(out.join(&r.log)),
            std::fs::read_to_string(&host),
        ) else {
            continue;
        };
        use jopcal_measure::transcript::{first_difference, program_lines};
        if let Some((line, t, h)) = first_difference(&program_lines(&target_log), &program_lines(&host_log)) {
            let shown = |l: Option<&str>| l.map_or("nothing".to_string(), |l| format!("`{}`", l.trim_end()));
            s.say(&format!(
                "  validate warning: {} printed differently on the target than on the host JVM, line {line}: the target {}, the host {} ({}, {}): the host profiled another run than the one measured, so its estimate is not of that run",
                r.benchmark,
                shown(t),
                shown(h),
                r.log,
                host.strip_prefix(out).unwrap_or(&host).display()
            ));
        }
    }
}

/// The library methods of `p` to price per call against an image with
/// `sizes`: methods JOP replaces, that is methods the image lacks, and JDK
/// methods (`java.`, `javax.`, `jdk.`, `sun.`) the image holds at another size
/// (JOP's own implementation). Only the outermost of nested ones counts, and
/// only where called by a bytecode of the program (not entered by the JVM
/// itself, nor below such a frame). Where
/// the host printed through jopcal's serial line stand-in, the printing is
/// priced by its characters (`serial_char`), not per call. The classes of
/// `tree_library` ran as the tree has them: only a method the image
/// lacks is priced per call.
fn library_calls(
    p: &jopcal_profile::Profile,
    sizes: &jopcal_jop::sizes::MethodSizes,
    tree_library: &jopcal_host::library::TreeLibrary,
) -> Vec<String> {
    let serial = p.methods.iter().any(jopcal_profile::routed::is_serial_write);
    let printing = if serial {
        jopcal_timing::estimate::in_print_stream(p)
    } else {
        vec![false; p.nodes.len()]
    };
    let replaced: Vec<bool> = p
        .methods
        .iter()
        .map(|m| {
            let q = m.qualified();
            let jdk = ["java.", "javax.", "jdk.", "sun."].iter().any(|pre| q.starts_with(pre))
                && !jopcal_host::library::runs_trees(m, tree_library);
            // A call of Native is one of JOP's own bytecodes, priced as such;
            // System.arraycopy is priced by the elements it copies.
            let jop_bytecode = m.class == jopcal_timing::estimate::JOP_NATIVE_CLASS;
            !m.native
                && !jop_bytecode
                && !jopcal_profile::routed::is_arraycopy(m)
                && m.class != jopcal_profile::routed::SERIAL_LINE_CLASS
                && match sizes.get(&q) {
                    None => true,
                    Some(&w) => jdk && w != jopcal_timing::cache::words_of(m.bytecode_len),
                }
        })
        .collect();
    // Not in the JVM's own work (class loading, static initializers), which
    // no estimate reads: its calls differ with the profiler that watched them.
    let jvm_work = p.jvm_work();
    let mut out: Vec<String> = p
        .nodes
        .iter()
        .enumerate()
        .filter(|(i, n)| {
            n.calls > 0
                && !printing[*i]
                && !jvm_work[*i]
                && n.invoke_opcode != 0
                && replaced[n.method as usize]
                && n.parent.is_some_and(|q| !replaced[p.nodes[q as usize].method as usize])
        })
        .map(|(_, n)| p.methods[n.method as usize].qualified())
        .collect();
    out.sort();
    out.dedup();
    out
}

/// Where the JOP tree's toolchain built the images (kept in `out/images`,
/// each with the linker's `<image>.link.txt`), makes each benchmark's profile
/// carry the method sizes of its image, so that every estimate and the fit
/// charge the method cache for what JOP loads. The host-size profiles are kept
/// in `profiles/host-sizes/`; the methods the two disagree on are reported.
/// Returns the library methods to price per call (see [`library_calls`]).
pub(crate) fn use_image_sizes(
    s: Session,
    out: &Path,
    profiled: &mut ProfiledSet,
    tree_library: &jopcal_host::library::TreeLibrary,
) -> Result<Vec<String>> {
    let host_dir = profiled.dir.join("host-sizes");
    let mut library = std::collections::BTreeSet::new();
    for p in &mut profiled.profiles {
        let Some((image, map)) = benchmark_image(&out.join("images"), &p.benchmark) else {
            continue;
        };
        let sizes = load_image_sizes(s, &image, &map)?;
        let disagreements = jopcal_jop::compare::compare(p, &sizes);
        let not_in_image = disagreements
            .iter()
            .filter(|d| matches!(d, jopcal_jop::compare::Disagreement::NotInImage(..)))
            .count();
        let file = format!("{}.{}", p.benchmark, jopcal_profile::EXTENSION);
        std::fs::create_dir_all(&host_dir)?;
        atomic::write_atomic(&host_dir.join(&file), &jopcal_profile::encode(p))?;
        for m in library_calls(p, &sizes, tree_library) {
            library.insert(m);
        }
        let changed = jopcal_jop::sizes::apply(p, &sizes);
        atomic::write_atomic(&profiled.dir.join(&file), &jopcal_profile::encode(p))?;
        s.say(&format!(
            "  validate {}: method sizes of its JOP image ({changed} differ from the host's); {not_in_image} method(s) ran on the host but are not in the image{}",
            p.benchmark,
            disagreements
                .iter()
                .find_map(|d| match d {
                    jopcal_jop::compare::Disagreement::NotInImage(m, n) => Some(format!(", e.g. {m} ({n} bytecodes)")),
                    _ => None,
                })
                .unwrap_or_default()
        ));
    }
    Ok(library.into_iter().collect())
}

/// The starting table derived from a microcode source, written into the run's
/// directory: the one `--microcode` names, else, on a target that is the
/// processor itself (a board or the bench running the tree's images; not
/// JopSim nor the virtual board, which time as JopSim does) with no
/// `--model`, the tree's own `asm/src/jvm.asm`. `None`: the usual table.
fn microcode_table(s: Session, a: &ValidateOptions, m: &Measured, dir: &Path) -> Result<Option<PathBuf>> {
    let processor = a.model.is_none() && m.runs_tree_images && !m.times_monitors_as_jopsim;
    let home = if processor {
        locate::jop_home(s.jop_home).ok()
    } else {
        None
    };
    let source = match (&a.microcode, home) {
        (Some(f), _) => f.clone(),
        (None, Some(home)) => {
            let f = home.join("asm/src/jvm.asm");
            if !f.is_file() {
                return Ok(None);
            }
            f
        }
        _ => return Ok(None),
    };
    // The table at the target's own wait states, where it knows them.
    let params: Vec<String> = m
        .wait_states
        .map(|(r, w)| vec![format!("r={r}"), format!("w={w}")])
        .unwrap_or_default();
    // Its serial line's character time, where the target knows it.
    let facts: Vec<String> = (m.serial_char.map(|c| format!("serial_char={c}")).into_iter())
        .chain(m.serial_free.map(|n| format!("serial_free={n}")))
        .collect();
    let t = crate::microcode::derive(
        s.firmware,
        &crate::microcode::Request {
            source: &source,
            defines: &[],
            model: a.model.as_deref(),
            params: &params,
            target_params: &facts,
            access: None,
            access_remedy:
                "jopcal ships it in calibration/ (its cache holds a copy: `jopcal cache --clear` rewrites it)",
            made_by: "`jopcal validate`, as its starting table,",
        },
    )?;
    let (derived, base) = (t.derived, t.base);
    // Absolute: estimates.json names it, and a relative --out is relative to here only.
    let path = std::path::absolute(dir.join("microcode-model.toml"))?;
    crate::microcode::write(&derived, &path)?;
    let timed = derived.rows.iter().filter(|r| r.derived.is_some()).count();
    let differ: Vec<&str> = derived
        .rows
        .iter()
        .filter(|r| r.differs())
        .map(|r| r.name.as_str())
        .collect();
    s.say(&format!(
        "  validate starting table: {timed} bytecodes timed from the microcode {} on {} ({} differ from it{}): {}",
        source.display(),
        base.name,
        differ.len(),
        if differ.is_empty() {
            String::new()
        } else {
            format!(
                ", e.g. {}",
                differ.iter().take(6).copied().collect::<Vec<_>>().join(", ")
            )
        },
        path.display()
    ));
    Ok(Some(path))
}

/// The plan of a validate run of `a` (see [`crate::plan`]), its output
/// directory stamped `stamp`: checked, nothing run.
pub fn plan(s: Session, a: &ValidateOptions, stamp: &str) -> Result<Plan> {
    if !a.on.board.images.is_empty() {
        bail!(
            "validate builds every image itself (the suite's and the micro-benchmarks'): --image is for `jopcal run`"
        );
    }
    if let Some(f) = &a.microcode {
        // A microcode that does not read fails now, not after the measurements.
        jopcal_jop::microcode::Program::read(f, &[])?;
    }
    crate::plan::resolve(
        s,
        &crate::plan::PlanRequest {
            verb: "validate",
            suite: &a.suite,
            programs: &a.programs,
            benches: &a.benches,
            target: a.target,
            timeout: a.timeout,
            on: &a.on,
            out: a.out.as_deref(),
            model: a.model.as_deref(),
            microcode: a.microcode.as_deref(),
            stamp,
        },
    )
}

/// Runs the whole pipeline of `a` into one directory, as `plan` (from
/// [`plan`]) says.
pub fn validate(s: Session, a: &ValidateOptions, plan: &Plan) -> Result<Validated> {
    let root = plan.root.clone();
    let s = s.with_firmware(&root);
    let out = plan.out.clone();
    let (target, suite) = (a.target.name().to_string(), a.suite.clone());
    interrupt::on_interrupt_write(Box::new(move |dir, stage, done| {
        let path = dir.join("summary.json");
        atomic::write_atomic(
            &path,
            Summary::interrupted(&target, &suite, stage, done).to_json().as_bytes(),
        )?;
        Ok(path)
    }));
    let mut run = Run::default();
    let (m, mut profiled, library) = measure_and_profile(s, &root, a, plan, &a.benches, "", &out)?;
    // The collector's trigger: the heap each region began with on the
    // target, or, where it reports none, on the virtual board.
    heap_from_board(s, a, plan, (&m, &profiled), &root);
    crate::heap::attach(&mut profiled.profiles, &crate::heap::heap_starts(&m.csv)?);
    let dir = m.out.path.clone();
    run.stage("build", "done");
    run.stage("measure", "done");
    run.stage("profile", "done");
    let derived = microcode_table(s, a, &m, &dir)?;
    let start_path = match &derived {
        Some(p) => p.clone(),
        // The tree's JopSim (or the virtual board timing as it): JopSim's table.
        None if a.model.is_none() && m.runs_tree_images && m.times_monitors_as_jopsim => locate::calibration_path(
            None,
            s.firmware,
            "jop-devel.toml",
            "the JOP tree's table (as JopSim times it)",
            "pass --model FILE",
        )?,
        None => locate::model_path(a.model.as_deref(), s.firmware)?,
    };
    let start = TimingModel::load(&start_path)?;
    let cycles_target = m.rows.iter().all(|r| r.unit == jopcal_measure::Unit::Cycles) && !m.rows.is_empty();
    // The calibration's micro-benchmarks, and the table every fit starts from.
    let micro = if cycles_target {
        let set = micro_set(s, a, &m, plan)?;
        let fs = fit_start(s, &dir, &start_path, &start, [library, set.library.clone()].concat())?;
        Some((set, fs))
    } else {
        None
    };
    // The derived table's Java routines, timed on the virtual board, and
    // the method cache they were timed in.
    let (model_path, routines_cache) = match (&derived, &micro) {
        (Some(_), Some((set, fs))) if m.runs_tree_images => {
            match routines_table(s, a, plan, &m, set, (fs, &format!("{}+routines", start.name))) {
                Ok((p, cache)) => (p, Some(cache)),
                Err(e) => {
                    s.say(&format!(
                        "  validate warning: the derived table's Java routines could not be timed on the virtual board ({e:#}): it prices them at 0"
                    ));
                    (start_path.clone(), None)
                }
            }
        }
        _ => (start_path.clone(), None),
    };
    interrupt::stage("estimate");
    let model = TimingModel::load(&model_path)?;
    let mut modes = cache_modes(s, a, &m)?;
    // Where the target reports no method cache (the RTL bench), the table is
    // also estimated in the cache its routines were timed in (the virtual
    // board's, the processor's configuration).
    if let Some(cache) = routines_cache.filter(|c| !modes.contains(c)) {
        modes.push(cache);
    }
    let estimates = estimate_all(s, &profiled.profiles, &model, &modes);
    run.failures = m.failures.iter().chain(&profiled.failures).cloned().collect();
    // A workload left out of the build fails both the measurement and the profile: name it once.
    let mut seen = std::collections::HashSet::new();
    run.failures.retain(|f| seen.insert(f.clone()));
    let mut calibrated = Vec::new();
    match &micro {
        None => {
            let why = format!("skipped: target {} measures time, not cycles", a.target.name());
            run.stage("estimate", "done");
            for stage in ["calibrate", "reconcile", "plot"] {
                run.stage(stage, &why);
            }
        }
        Some((set, fs)) => {
            let c = calibrate_stage(s, a, (&m, &profiled), set, fs)?;
            for (name, status) in &c.stages {
                run.stage(name, status);
            }
            run.failures.extend(c.failures);
            run.loo_errors = c.loo_errors;
            run.calibration = Some(c.summary);
            calibrated = c.estimates;
        }
    }
    let all = [estimates, calibrated].concat();
    write_estimates(
        &all,
        &estimated_profiles(&profiled.profiles, modes.len(), all.len()),
        1,
        &model,
        &model_path,
        &dir.join("estimates.csv"),
        &dir.join("estimates.json"),
    )?;
    if cycles_target {
        interrupt::stage("reconcile");
        reconcile_stage(s, &m, &profiled, &model, &model_path, &modes, &dir)?;
        run.stage("reconcile", "done");
        run.stage("plot", "done");
    }
    run.stage("summary", "done");
    let failures = run.failures.clone();
    let summary = run.summary(a, &m, &all);
    let path = dir.join("summary.json");
    atomic::write_atomic(&path, summary.to_json().as_bytes()).with_context(|| format!("writing {}", path.display()))?;
    interrupt::run_finished();
    s.say(&format!(
        "  validate {} benchmarks measured on {}",
        summary.benchmarks.len(),
        summary.target
    ));
    Ok(Validated {
        dir,
        summary: path,
        failures,
    })
}

/// Where the target reports no heap (the RTL bench, a board, JopSim) and
/// the profiles allocate, the heap each region began with on the virtual
/// board: the same workloads of `root` run there (`heap-board/`), and its
/// heaps are written beside `m`'s measurements
/// ([`crate::heap::HEAP_STARTS_FILE`]), where every later reader of them
/// (the estimate, the fits, `explain`) finds them. Without them the
/// collector's work is not estimated: a failure here is a warning.
fn heap_from_board(
    s: Session,
    a: &ValidateOptions,
    plan: &Plan,
    (m, profiled): (&Measured, &ProfiledSet),
    root: &Path,
) {
    let allocating = profiled.profiles.iter().any(|p| !p.allocations.is_empty());
    // Only a tree's images tell their heap (their link map locates the
    // collector's statics).
    if a.target == TargetKind::Emu
        || !m.runs_tree_images
        || !allocating
        || m.rows.iter().any(|r| r.unit != jopcal_measure::Unit::Cycles)
    {
        return;
    }
    let board_heaps = || -> Result<Option<PathBuf>> {
        if !crate::heap::heap_starts(&m.csv)?.is_empty() {
            return Ok(None);
        }
        s.say("  validate the target reports no heap: the heap each region begins with (the collector's trigger) is taken from the same workloads on the virtual board");
        let how = on_virtual_board(a, plan, &a.benches);
        let b = measure_on(s, root, &how, &m.out.path.join("heap-board"), &plan.stamp)?;
        let measured: std::collections::HashSet<&str> = m.rows.iter().map(|r| r.benchmark.as_str()).collect();
        match crate::heap::lend_heap_starts(&b.csv, &m.csv, |bench| measured.contains(bench))? {
            Some(path) => Ok(Some(path)),
            None => bail!("it reported none for these workloads"),
        }
    };
    match board_heaps() {
        Ok(None) => {}
        Ok(Some(path)) => s.say(&format!("  validate the virtual board's heaps: {}", path.display())),
        Err(e) => s.say(&format!(
            "  validate warning: the heaps on the virtual board ({e:#}): the collector's work is not estimated"
        )),
    }
}

/// How `a`'s workloads `benches` (all: empty) are measured once on the
/// virtual board, whatever the run's target (its heaps, and the derived
/// table's routines, come from there); with the run's target, as the run
/// measures them.
fn on_virtual_board<'a>(a: &'a ValidateOptions, plan: &Plan, benches: &'a [String]) -> Measure<'a> {
    Measure {
        target: TargetKind::Emu,
        benches,
        runs: 1,
        timeout: plan.timeout,
        jvm_args: &[],
        on: &a.on,
        tree_suite: a.suite != "builtin",
    }
}

/// What the stages of a validate run said, gathered for `summary.json`.
#[derive(Default)]
struct Run {
    stages: Vec<Stage>,
    failures: Vec<(String, String)>,
    loo_errors: Vec<(String, f64)>,
    calibration: Option<CalibrationSummary>,
}

impl Run {
    fn stage(&mut self, name: &str, status: &str) {
        self.stages.push(Stage {
            name: name.to_string(),
            status: status.to_string(),
        });
    }

    /// The run's `summary.json`: each benchmark's measurement beside every estimate of it.
    fn summary(self, a: &ValidateOptions, m: &Measured, estimates: &[Estimate]) -> Summary {
        let measured = Summary::measured(a.target.name(), &a.suite, &m.rows, &self.failures);
        Summary {
            complete: self.stages.iter().all(|s| s.status == "done") && self.failures.is_empty(),
            benchmarks: m
                .rows
                .iter()
                .zip(measured.benchmarks)
                .map(|(r, b)| Bench {
                    estimates: estimates
                        .iter()
                        .filter(|e| e.benchmark == r.benchmark)
                        .map(|e| BenchEstimate {
                            model: e.model.clone(),
                            cache: e.cache.to_string(),
                            cycles: e.cycles,
                            error_pct: r.cycles().map(|c| 100.0 * (e.cycles - c as f64) / c as f64),
                        })
                        .collect(),
                    loo_error_pct: self.loo_errors.iter().find(|(b, _)| *b == r.benchmark).map(|(_, e)| *e),
                    ..b
                })
                .collect(),
            stages: self.stages,
            calibration: self.calibration,
            ..measured
        }
    }
}

/// The published table's cache modes, and the one the target says it ran
/// with (JopSim prints its own).
fn cache_modes(s: Session, a: &ValidateOptions, m: &Measured) -> Result<Vec<CacheMode>> {
    let mut modes: Vec<CacheMode> = CACHE_MODES.iter().map(|c| c.parse().expect("valid mode")).collect();
    if let Some(reported) = m.method_cache.as_deref() {
        let mode: CacheMode = reported
            .parse()
            .map_err(|e| anyhow!("the target reported method cache {reported}: {e}"))?;
        s.say(&format!(
            "  validate {} reports its method cache: {mode}",
            a.target.name()
        ));
        if !modes.contains(&mode) {
            modes.push(mode);
        }
    }
    Ok(modes)
}

/// The profile of each estimate: every profile once per cache mode (the
/// order [`estimate_all`] yields), then once more each for the calibrated
/// estimates when there are any.
fn estimated_profiles(
    profiles: &[jopcal_profile::Profile],
    n_modes: usize,
    n_estimates: usize,
) -> Vec<jopcal_profile::Profile> {
    let mut v: Vec<jopcal_profile::Profile> = profiles
        .iter()
        .flat_map(|p| std::iter::repeat_n(p, n_modes))
        .cloned()
        .collect();
    if n_estimates > v.len() {
        v.extend(profiles.iter().cloned());
    }
    v
}

/// Accuracy tables and plots from the measurements and every estimate
/// written, and the explanation of each benchmark.
fn reconcile_stage(
    s: Session,
    m: &Measured,
    profiled: &ProfiledSet,
    model: &TimingModel,
    model_path: &Path,
    modes: &[CacheMode],
    dir: &Path,
) -> Result<()> {
    let acc = reconcile(
        &measurements::read(&m.csv).map_err(|e| anyhow!(e))?,
        &read_estimates(&dir.join("estimates.csv")).map_err(|e| anyhow!(e))?,
    )
    .map_err(|e| anyhow!(e))?;
    write_accuracy(&acc, dir)?;
    explain_stage(
        &profiled.profiles,
        model,
        model_path,
        modes,
        m.method_cache.as_deref(),
        &m.rows,
        dir,
    )?;
    for p in &profiled.profiles {
        if let Some((replayed, what)) = explain::clock_finding(dir, p)? {
            let kind = if replayed { "" } else { "warning: " };
            s.say(&format!("  validate {kind}{}: {what}", p.benchmark));
        }
    }
    for (v, name) in acc.variants.iter().enumerate() {
        s.say(&format!(
            "  validate {name}: geometric mean |error| {:.3}%",
            acc.geomean_abs_error(v)
        ));
    }
    Ok(())
}

/// `explain.md` and `explain.json`: each benchmark's estimate under the
/// starting table, in the cache the target reported (else the last simulated
/// one), taken apart against its measurement and the target's own counts.
fn explain_stage(
    profiles: &[jopcal_profile::Profile],
    model: &TimingModel,
    model_path: &Path,
    modes: &[CacheMode],
    reported: Option<&str>,
    rows: &[jopcal_measure::Measurement],
    dir: &Path,
) -> Result<()> {
    let mode = reported
        .and_then(|r| r.parse::<CacheMode>().ok())
        .or_else(|| modes.last().copied())
        .unwrap_or(CacheMode::Hit);
    let refs: Vec<&jopcal_profile::Profile> = profiles.iter().collect();
    let xs = explain::explanations(&refs, model, mode, rows, dir)?;
    explain::write(&xs, &explain::markdown(&xs, model_path), &dir.join("explain.md"))
}

/// What the calibration stage added to a validate run.
struct Calibrated {
    /// `(stage, status)` in the order they ran.
    stages: Vec<(&'static str, String)>,
    failures: Vec<(String, String)>,
    /// The leave-one-out predictions of the calibrated table (model `-loo`).
    estimates: Vec<Estimate>,
    loo_errors: Vec<(String, f64)>,
    summary: CalibrationSummary,
}

/// The calibration's own benchmarks beside the suite: jopcal's generated
/// micro-benchmarks and, for a tree suite, the tree's, each measured on the
/// target and profiled, with the library methods they call that JOP
/// implements differently.
struct MicroSet {
    /// The generated micro-benchmarks' workload directory.
    src: PathBuf,
    micro: Measured,
    profiled: ProfiledSet,
    tree: Option<(Measured, ProfiledSet)>,
    library: Vec<String>,
}

/// Generates, measures and profiles the micro-benchmarks of the run whose
/// suite `m` measured.
fn micro_set(s: Session, a: &ValidateOptions, m: &Measured, plan: &Plan) -> Result<MicroSet> {
    let dir = &m.out.path;
    let fw = locate::firmware_dir(s.firmware)?;
    let src = dir.join("micro-suite");
    // Where the tree's images run, the host compiles them as the tree's
    // build does (`host_javac`), and floating point (JOP's software float,
    // which the class-bundle board lacks) is measured too.
    let compiler = if m.runs_tree_images {
        locate::jop_config()?.map(|c| c.host_javac).unwrap_or_default()
    } else {
        Vec::new()
    };
    let floating_point = m.runs_tree_images && !a.no_float_micro;
    jopcal_workloads::micro::generate(&src, &fw, &compiler, floating_point).map_err(|e| anyhow!(e))?;
    let (micro, profiled, mut library) = measure_and_profile(s, &src, a, plan, &[], "calibrate: ", &dir.join("micro"))?;
    // The tree's own micro-benchmarks join jopcal's (in `jembench-all` they
    // are the suite's own).
    let tree = match tree_micro_benchmarks(s, a)? {
        Some((root, names)) => {
            s.say(&format!(
                "  validate the tree's {} micro-benchmarks (JemBench's, as jembench-all times them) join the calibration: {}",
                names.len(),
                names.join(", ")
            ));
            let (tm, tp, tl) = measure_and_profile(
                s.with_firmware(&root),
                &root,
                a,
                plan,
                &names,
                "calibrate: tree ",
                &dir.join("tree-micro"),
            )?;
            library.extend(tl);
            Some((tm, tp))
        }
        None => None,
    };
    Ok(MicroSet {
        src,
        micro,
        profiled,
        tree,
        library,
    })
}

/// The table every fit starts from: a table, or, where the suite or the
/// micro-benchmarks call library methods JOP implements differently, a table
/// over it (`library-model.toml`) that prices each such call by a parameter
/// of its own, named in `params`.
struct FitStart {
    path: PathBuf,
    params: Vec<String>,
}

impl FitStart {
    /// What a fit from this table moves: `groups` (`impl_java`, ...) and the
    /// library methods' parameters.
    fn spec(&self, groups: &[&str]) -> String {
        groups
            .iter()
            .copied()
            .chain(self.params.iter().map(String::as_str))
            .collect::<Vec<_>>()
            .join(",")
    }
}

/// The [`FitStart`] over the table `model` (at `model_path`) for the
/// library methods `library` (sorted here), written into `dir`.
fn fit_start(
    s: Session,
    dir: &Path,
    model_path: &Path,
    model: &TimingModel,
    mut library: Vec<String>,
) -> Result<FitStart> {
    library.sort();
    library.dedup();
    if library.is_empty() {
        return Ok(FitStart {
            path: model_path.to_path_buf(),
            params: Vec::new(),
        });
    }
    let file = dir.join("library-model.toml");
    let base = jopcal_calibrate::output::relative_base(model_path, &file);
    let (text, params) =
        jopcal_calibrate::output::library_model_toml(&base, &format!("{}+library", model.name), &library);
    atomic::write_atomic(&file, text.as_bytes())?;
    s.say(&format!(
        "  validate {} library method(s) JOP implements differently (not in its image, or JDK code at another size); the fits price each call: {}",
        library.len(),
        library.join(", ")
    ));
    Ok(FitStart { path: file, params })
}

/// The derived table (`start`: it, or the library's table over it), named
/// `name`, with JOP's Java-implemented bytecodes priced, and the method
/// cache they were timed in. The microcode cannot time them: `new`, the switches,
/// the type checks, `athrow` and the rest jump to the runtime's Java
/// (`JVM.f_*`, the collector). So the run's micro-benchmarks are measured on
/// the virtual board built from the same microcode and runtime (on
/// `--target emu`, the run's own measurements of them), and only what the
/// microcode cannot time is fitted to them: each routine's own work, the
/// collector's, and each call of a library method JOP implements
/// differently. Every bytecode the microcode times keeps its derived cost;
/// neither the suite nor a measurement of another target enters it.
fn routines_table(
    s: Session,
    a: &ValidateOptions,
    plan: &Plan,
    m: &Measured,
    set: &MicroSet,
    (start, name): (&FitStart, &str),
) -> Result<(PathBuf, CacheMode)> {
    let dir = &m.out.path;
    let board = if a.target == TargetKind::Emu {
        None
    } else {
        s.say("  validate the derived table's Java routines: the micro-benchmarks on the virtual board");
        interrupt::stage("derive: measure");
        let b = measure_on(
            s,
            &set.src,
            &on_virtual_board(a, plan, &[]),
            &dir.join("micro-board"),
            &plan.stamp,
        )?;
        // The calibrated tables' fits of the collector on the target's own
        // micro-benchmarks take the board's heaps where the target has none.
        crate::heap::lend_heap_starts(&b.csv, &set.micro.csv, |_| true)?;
        if m.wait_states.is_some() && b.wait_states != m.wait_states {
            s.say(&format!(
                "  validate warning: the virtual board runs at wait states {:?}, the target at {:?}: the derived routines are the board's",
                b.wait_states, m.wait_states
            ));
        }
        Some(b)
    };
    let on_board = board.as_ref().unwrap_or(&set.micro);
    interrupt::stage("derive: fit");
    let out = dir.join("derived-model.toml");
    let fitted = run_calibration(
        s,
        &CalibrationRun {
            measured: std::slice::from_ref(&on_board.csv),
            profiles: &[set.micro.out.path.join("profiles")],
            model_path: &start.path,
            groups: &start.spec(&["impl_java", "collector"]),
            cache: on_board
                .method_cache
                .as_deref()
                .or(m.method_cache.as_deref())
                .unwrap_or("fifo:1024:16"),
            loo: false,
            lenient: true,
            leave_out_synchronized: false,
            out: &out,
            name: Some(name),
        },
    )?;
    Ok((fitted.toml, fitted.fit.cache))
}

/// Fits the table to the suite and the micro-benchmarks of `set` (each
/// call of a library method JOP implements differently priced by a
/// parameter of its own, `start`), cross-validates, compares with the
/// published figures (tree suites), and estimates every benchmark with the
/// table fitted without it, and with the table fitted on the
/// micro-benchmarks alone.
fn calibrate_stage(
    s: Session,
    a: &ValidateOptions,
    (m, profiled): (&Measured, &ProfiledSet),
    set: &MicroSet,
    start: &FitStart,
) -> Result<Calibrated> {
    let dir = &m.out.path;
    let mut stages: Vec<(&'static str, String)> = Vec::new();
    let mut stage = |name: &'static str, status: &str| stages.push((name, status.to_string()));
    let mut failures: Vec<(String, String)> = Vec::new();
    let (micro, micro_prof, tree_micro) = (&set.micro, &set.profiled, &set.tree);
    interrupt::stage("calibrate: fit");
    // What the fit may move: the memory's wait states and the method cache
    // only where the target does not know them (a processor, JopSim: it
    // does, and the table starts from them).
    let known_wait_states = m.wait_states.is_some() || (m.runs_tree_images && m.times_monitors_as_jopsim);
    let mut groups: Vec<&str> = Vec::new();
    if !known_wait_states {
        groups.extend(["r", "w"]);
    }
    groups.extend(["impl_java", "collector"]);
    if m.method_cache.is_none() {
        groups.push("cache");
    }
    if known_wait_states {
        s.say(&format!(
            "  validate the target's wait states are known ({}): the fit keeps them{}",
            match m.wait_states {
                Some((r, w)) => format!("r={r}, w={w}"),
                None => "JopSim's".into(),
            },
            match &m.method_cache {
                Some(c) => format!(", and its method cache {c}"),
                None => String::new(),
            }
        ));
    }
    let fit_spec = start.spec(&groups);
    failures.extend(micro.failures.iter().cloned());
    failures.extend(micro_prof.failures.iter().cloned());
    let mut measured = vec![m.csv.clone(), micro.csv.clone()];
    let mut profiles = vec![dir.join("profiles"), micro.out.path.join("profiles")];
    if let Some((tm, tp)) = tree_micro {
        failures.extend(tm.failures.iter().chain(&tp.failures).cloned());
        measured.push(tm.csv.clone());
        profiles.push(tm.out.path.join("profiles"));
    }
    let missing: Vec<&(String, String)> = m.failures.iter().chain(&profiled.failures).chain(&failures).collect();
    if !missing.is_empty() {
        // Never silently on fewer: the fit says what it goes without.
        let mut names: Vec<&str> = missing.iter().map(|(n, _)| n.as_str()).collect();
        names.sort_unstable();
        names.dedup();
        s.say(&format!(
            "  validate the fit goes without {} benchmark(s) that failed: {} (each named again at the end; the run is not complete)",
            names.len(),
            names.join(", ")
        ));
    }
    let cal = run_calibration(
        s,
        &CalibrationRun {
            measured: &measured,
            profiles: &profiles,
            model_path: &start.path,
            groups: &fit_spec,
            cache: m.method_cache.as_deref().unwrap_or("fifo:1024:16"),
            loo: true,
            // A workload that failed on the target is a failure of its own, already recorded.
            lenient: true,
            // JopSim's monitors are not the processor's: those benchmarks are reported, not fitted.
            leave_out_synchronized: m.times_monitors_as_jopsim,
            out: &dir.join("calibrated.toml"),
            name: None,
        },
    )?;
    stage("calibrate", "done");
    let suite_loo: Vec<&(String, f64)> = cal
        .loo_errors
        .iter()
        .filter(|(b, _)| m.rows.iter().any(|r| &r.benchmark == b))
        .collect();
    if !suite_loo.is_empty() {
        s.say(&format!(
            "  validate leave-one-out error of the calibrated table, per {} benchmark: {}; largest |error| {:.3}%",
            a.suite,
            suite_loo
                .iter()
                .map(|(b, e)| format!("{b} {}%", jopcal_report::plots::signed(*e, 3)))
                .collect::<Vec<_>>()
                .join(", "),
            suite_loo.iter().map(|(_, e)| e.abs()).fold(0.0, f64::max)
        ));
    }
    let loo_errors = cal.loo_errors.clone();
    if a.suite != "builtin" {
        // The tree's benchmarks: side by side with the published cross-profilers.
        let refs = locate::reference_dir(a.references.as_deref())?;
        let refs = jopcal_report::published::load(&refs).map_err(|e| anyhow!(e))?;
        let ours: Vec<(String, f64)> = suite_loo.iter().map(|(b, e)| (b.clone(), *e)).collect();
        let md = jopcal_report::published::markdown(&ours, &refs, &a.suite);
        atomic::write_atomic(&dir.join("published.md"), md.as_bytes())?;
        stage("compare with published", "done");
    }
    let fitted = TimingModel::load(&cal.toml)?;
    // The calibrated column is out of sample: each benchmark is estimated
    // by the table fitted without it (leave-one-out), never by a fit to
    // its own measurement. The breakdowns stay the full table's.
    let mut calibrated = estimate_all(s, &profiled.profiles, &fitted, &[cal.fit.cache]);
    for e in &mut calibrated {
        if let Some((_, predicted)) = cal.loo_predicted.iter().find(|(b, _)| *b == e.benchmark) {
            e.cycles = *predicted;
        }
        e.model = format!("{}{LOO_SUFFIX}", e.model);
    }
    // Held out entirely, for a tree's suites and your programs: the table
    // fitted on the micro-benchmarks alone (jopcal's and the tree's), which
    // predicts every benchmark of the suite without having seen any.
    if a.suite != "builtin" {
        let held_out_dir = dir.join("held-out");
        std::fs::create_dir_all(&held_out_dir)?;
        let held_out = run_calibration(
            s,
            &CalibrationRun {
                measured: &measured[1..],
                profiles: &profiles[1..],
                // The library methods' costs too, where the micro-benchmarks
                // call them (an exception's constructor); a method only the
                // suite calls keeps its host code's price (its cost unfitted).
                model_path: &start.path,
                groups: &fit_spec,
                cache: m.method_cache.as_deref().unwrap_or("fifo:1024:16"),
                loo: false,
                lenient: true,
                leave_out_synchronized: m.times_monitors_as_jopsim,
                out: &held_out_dir.join("calibrated.toml"),
                name: None,
            },
        )?;
        let on_micro = TimingModel::load(&held_out.toml)?;
        for mut e in estimate_all(s, &profiled.profiles, &on_micro, &[held_out.fit.cache]) {
            e.model = format!("{}{HELD_OUT_SUFFIX}", e.model);
            calibrated.push(e);
        }
    }
    stage("estimate", "done");
    let summary = CalibrationSummary {
        model: fitted.name.clone(),
        cache: cal.fit.cache.to_string(),
        benchmarks: cal.fit.rows.len(),
        fit_max_abs_error_pct: cal.fit.max_abs_error_pct(),
        loo_max_abs_error_pct: cal.loo_max_abs_error_pct,
        params: cal
            .fit
            .params
            .iter()
            .filter(|p| p.unidentified.is_none())
            .map(|p| (p.name.clone(), p.value))
            .collect(),
        not_fitted: cal
            .fit
            .params
            .iter()
            .filter_map(|p| p.unidentified.as_ref().map(|w| format!("{}: {w}", p.name)))
            .collect(),
    };
    Ok(Calibrated {
        stages,
        failures,
        estimates: calibrated,
        loo_errors,
        summary,
    })
}

/// The tree's micro-benchmarks that join jopcal's in the calibration of a
/// tree suite other than `jembench-all`: JemBench's `micro` group as
/// `jembench-all` times them (its suite's directory and their names).
/// `None` for the built-in suite, for `jembench-all` itself, and for a tree
/// whose JemBench has none that jopcal times.
fn tree_micro_benchmarks(s: Session, a: &ValidateOptions) -> Result<Option<(PathBuf, Vec<String>)>> {
    use jopcal_tree::tree::{JopTree, TreeSuite};
    if a.suite == "builtin" || a.suite == TreeSuite::JemBenchAll.name() {
        return Ok(None);
    }
    let home = locate::jop_home(s.jop_home)?;
    let tree = JopTree::open(&home).map_err(|e| anyhow!(e))?;
    let Ok(listed) = tree.select(TreeSuite::JemBenchAll, &[]) else {
        return Ok(None);
    };
    let micro: Vec<String> = listed
        .iter()
        .filter(|w| w.listed.as_ref().is_some_and(|l| l.group() == "micro"))
        .map(|w| w.name.clone())
        .collect();
    if micro.is_empty() {
        return Ok(None);
    }
    let root = locate::suite_dir(s.firmware, s.jop_home, TreeSuite::JemBenchAll.name(), s.progress)?;
    // Those the suite times (a class that is no JemBench benchmark is left out there).
    let timed = jopcal_workloads::Suite::load(&root)?;
    let names: Vec<String> = micro
        .into_iter()
        .filter(|n| timed.workloads.iter().any(|w| &w.name == n))
        .collect();
    Ok((!names.is_empty()).then_some((root, names)))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn session() -> Session<'static> {
        Session {
            firmware: None,
            jop_home: None,
            progress: &jopcal_targets::NoProgress,
            profiler: Default::default(),
        }
    }

    #[test]
    fn library_calls_are_the_outermost_replaced_methods() {
        let method = |class: &str, name: &str, desc: &str, len: u32| jopcal_profile::MethodInfo {
            class: class.into(),
            name: name.into(),
            descriptor: desc.into(),
            bytecode_len: len,
            native: false,
            synchronized: false,
        };
        let node = |m: u32, parent: Option<u32>| jopcal_profile::Node {
            parent,
            method: m,
            calls: 1,
            invoke_opcode: if parent.is_some() { 0xb6 } else { 0 },
            ..Default::default()
        };
        let p = jopcal_profile::Profile {
            methods: vec![
                method("app/Main", "run", "()V", 20),
                method("java/util/Random", "nextInt", "()I", 40),
                method("java/util/concurrent/atomic/AtomicLong", "get", "()J", 5),
                method("java/lang/Object", "<init>", "()V", 1),
                method("app/Helper", "gone", "()V", 8),
                method("app/Main", "<clinit>", "()V", 7),
                method("java/lang/String", "coder", "()B", 4),
            ],
            nodes: vec![
                node(0, None),
                node(1, Some(0)),
                node(2, Some(1)),
                node(3, Some(0)),
                node(4, Some(0)),
                // A static initializer the JVM entered in the region (JOP runs
                // them all at its start), and a call it made: the JVM's work.
                jopcal_profile::Node {
                    invoke_opcode: 0,
                    ..node(5, Some(0))
                },
                node(6, Some(5)),
            ],
            ..Default::default()
        };
        let sizes = jopcal_jop::sizes::MethodSizes::from([
            ("app.Main.run()V".to_string(), 5),
            ("app.Main.<clinit>()V".to_string(), 2),
            // JOP's own Random: another size, so another implementation.
            ("java.util.Random.nextInt()I".to_string(), 3),
            ("java.lang.Object.<init>()V".to_string(), 1),
        ]);
        assert_eq!(
            library_calls(&p, &sizes, &Default::default()),
            ["app.Helper.gone()V", "java.util.Random.nextInt()I"],
            "AtomicLong.get runs inside Random.nextInt: priced with it; String.coder is the static initializer's"
        );
    }

    #[test]
    fn profiles_take_the_method_sizes_of_their_jop_image() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path();
        std::fs::create_dir_all(out.join("images")).unwrap();
        std::fs::create_dir_all(out.join("profiles")).unwrap();
        // An image whose method table gives a.B.run()V 7 words at address 2 (constant pool 40).
        let mut words = vec![0u32; 11];
        words[9] = (2 << 10) | 7;
        words[10] = 40 << 10;
        words[0] = words.len() as u32;
        let image = jopcal_link::JopImage { words };
        std::fs::write(out.join("images/Toy.jop"), image.to_text()).unwrap();
        std::fs::write(
            out.join("images/Toy.jop.link.txt"),
            "class a.B 9 40\nbytecode a.B.run()V 2\n",
        )
        .unwrap();
        let method = |name: &str| jopcal_profile::MethodInfo {
            class: "a/B".into(),
            name: name.into(),
            descriptor: "()V".into(),
            bytecode_len: 10,
            native: false,
            synchronized: false,
        };
        let node = |m: u32, parent: Option<u32>| jopcal_profile::Node {
            parent,
            method: m,
            calls: 1,
            invoke_opcode: if parent.is_some() { 0xb8 } else { 0 },
            opcodes: [(0xb1u8, 1u64)].into(),
            ..Default::default()
        };
        let profile = jopcal_profile::Profile {
            benchmark: "Toy".into(),
            methods: vec![method("run"), method("hostOnly")],
            nodes: vec![node(0, None), node(1, Some(0))],
            ..Default::default()
        };
        let mut set = ProfiledSet {
            dir: out.join("profiles"),
            profiles: vec![profile.clone()],
            failures: Vec::new(),
        };
        let library = use_image_sizes(session(), out, &mut set, &Default::default()).unwrap();
        assert_eq!(
            library,
            ["a.B.hostOnly()V"],
            "called from the image's run(), not in the image"
        );
        assert_eq!(set.profiles[0].methods[0].bytecode_len, 28, "7 words");
        assert_eq!(
            set.profiles[0].methods[1].bytecode_len, 10,
            "not in the image: the host's size"
        );
        let written = jopcal_profile::read_file(&out.join("profiles/Toy.jopprof")).unwrap();
        assert_eq!(written, set.profiles[0]);
        let host = jopcal_profile::read_file(&out.join("profiles/host-sizes/Toy.jopprof")).unwrap();
        assert_eq!(host, profile);
        // Without a link map beside the image, nothing changes.
        std::fs::remove_file(out.join("images/Toy.jop.link.txt")).unwrap();
        let mut again = ProfiledSet {
            dir: out.join("profiles"),
            profiles: vec![profile.clone()],
            failures: Vec::new(),
        };
        assert!(use_image_sizes(session(), out, &mut again, &Default::default())
            .unwrap()
            .is_empty());
        assert_eq!(again.profiles[0], profile);
    }
}
