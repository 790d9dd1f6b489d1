//! Profiling: workloads on the host JVM under the profiler agent, one
//! `.jopprof` per benchmark (and optionally a JSON view).

use crate::clocks::target_clock;
use crate::instrumenter::ProfilerKind;
use crate::{locate, Session};
use anyhow::{bail, Context, Result};
use jopcal_measure::children::InGroup;
use jopcal_measure::{atomic, clock, OutDir};
use jopcal_profile::{Profile, EXTENSION};
use jopcal_targets::host::HostSetup;
use jopcal_tree::tree::TreeSuite;
use jopcal_workloads::profile::{profile_program, ProfileRegion, ProfileRequest, Profiler};
use jopcal_workloads::Jdk;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// What a profiling pass produced.
pub struct ProfiledSet {
    pub dir: PathBuf,
    pub profiles: Vec<Profile>,
    /// `(bench, one-line reason)` per program that could not be profiled completely.
    pub failures: Vec<(String, String)>,
}

/// Which part of a program a profile counts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum RegionChoice {
    /// Between the jop-firmware harness's Harness.start() and Harness.stop() (all threads).
    Harness,
    /// The dynamic extent of the main class's main(String[]).
    Main,
    /// The dynamic extent of the first call of --method CLASS.NAME (e.g. a JemBench benchmark's test method).
    Method,
}

/// Extra files a profiling pass writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum ProfileFormat {
    /// Only the binary .jopprof files.
    Binary,
    /// Also a JSON view (<bench>.json) of each tree.
    Json,
}

/// What `jopcal profile` profiles, and how (the verb's arguments as they are).
#[derive(Debug, Clone, clap::Args)]
pub struct ProfileOptions {
    /// The workload suite to profile: `builtin` (jop-firmware/), or `jembench` / `jbe` (the
    /// fixed-count harnesses of the JOP tree given by --jop-home: by default jopcal's wrapper
    /// of each, over the harness region; with --region main|method the tree's harness
    /// itself). Not with --cp/--main.
    #[arg(long, value_name = "SUITE", conflicts_with_all = ["cp", "main"])]
    pub suite: Option<String>,
    /// Only these benchmarks of the suite (repeatable; default: all).
    #[arg(long = "bench", value_name = "NAME")]
    pub benches: Vec<String>,
    /// Class path of an arbitrary program (':'-separated), with --main.
    #[arg(long, value_name = "PATH", requires = "main")]
    pub cp: Option<String>,
    /// Main class of that program.
    #[arg(long, value_name = "CLASS", requires = "cp")]
    pub main: Option<String>,
    /// What to count (default: harness for the suite, main for --main programs).
    #[arg(long, value_enum)]
    pub region: Option<RegionChoice>,
    /// The method whose first call is the region (with --region method), as pkg.Class.name
    /// (for --suite jembench|jbe, a bare name means that method of each harness class).
    #[arg(long, value_name = "CLASS.NAME")]
    pub method: Option<String>,
    /// Output directory for <bench>.jopprof (an earlier run in it is moved to previous/).
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
    /// Also write a JSON view of each profile.
    #[arg(long, value_enum, default_value_t = ProfileFormat::Binary)]
    pub format: ProfileFormat,
    /// Seconds one program may run before it is killed (the profiler
    /// single-steps every bytecode: a tree's Raytrace takes about 3 minutes).
    #[arg(long, default_value_t = 900)]
    pub timeout: u64,
    /// Extra option for the JVM (repeatable).
    #[arg(long = "jvm-arg", value_name = "ARG", allow_hyphen_values = true)]
    pub jvm_args: Vec<String>,
    /// Programs profiled at once, each in a JVM of its own (default: the machine's cores);
    /// the profiles are those of --jobs 1.
    #[arg(long, short = 'j', value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
    pub jobs: Option<u32>,
}

impl ProfileOptions {
    /// Programs profiled at once.
    pub fn jobs(&self) -> usize {
        self.jobs.map_or_else(crate::default_jobs, |n| n as usize)
    }
}

/// One program to profile.
struct Job {
    bench: String,
    request: ProfileRequest,
    /// The cycles the target ran it in, where it was measured: what
    /// `--profiler auto` chooses by.
    cycles: Option<u64>,
}

/// Profiles what `a` names into its output directory (a suite's workloads,
/// a JOP tree's harnesses themselves, or one `--cp`/`--main` program).
pub fn profile(s: Session, a: &ProfileOptions) -> Result<ProfiledSet> {
    let stamp = clock::now_stamp();
    let out = locate::out_dir(a.out.as_deref(), "profile", &stamp)?;
    let timeout = Duration::from_secs(a.timeout);
    let set = match (&a.cp, &a.main) {
        (Some(cp), Some(main)) => {
            let jdk = Jdk::detect()?;
            let classpath: Vec<PathBuf> = std::env::split_paths(cp).collect();
            let bench = a
                .benches
                .first()
                .cloned()
                .unwrap_or_else(|| main.rsplit(['.', '/']).next().unwrap_or(main).to_string());
            let region = match a.region.unwrap_or(RegionChoice::Main) {
                RegionChoice::Main => ProfileRegion::Main,
                RegionChoice::Harness => ProfileRegion::Harness,
                RegionChoice::Method => {
                    ProfileRegion::Method(a.method.clone().context("--region method needs --method CLASS.NAME")?)
                }
            };
            let out = prepare(s, &out, &stamp)?;
            let job = Job {
                request: ProfileRequest {
                    classpath,
                    main: main.clone(),
                    region,
                    bench: bench.clone(),
                    out: out.join(format!("{bench}.{EXTENSION}")),
                    timeout,
                    jvm_args: a.jvm_args.clone(),
                    log: out.join("logs").join(format!("{bench}.log")),
                    launcher: None,
                },
                bench,
                cycles: None,
            };
            run_jobs(s, &jdk, vec![job], &out, a.format, 1)?
        }
        _ if a.suite.as_deref().and_then(TreeSuite::from_name).is_some()
            && matches!(a.region, Some(RegionChoice::Main | RegionChoice::Method)) =>
        {
            let suite = a.suite.as_deref().and_then(TreeSuite::from_name).expect("checked");
            let home = locate::jop_home(s.jop_home)?;
            let out = prepare(s, &out, &stamp)?;
            original_harness_jobs(s, &home, suite, a, &out, timeout)?
        }
        _ => {
            let suite = a.suite.as_deref().unwrap_or("builtin");
            let root = locate::suite_dir(s.firmware, s.jop_home, suite, s.progress)?;
            if a.region == Some(RegionChoice::Method) {
                bail!("--region method applies to a --cp/--main program, not to the suite");
            }
            if a.region == Some(RegionChoice::Main) {
                s.progress
                    .note("note: --region main counts the whole of each workload's main, harness included");
            }
            let setup = prepare_host(s, &root, &a.benches)?;
            let mut run = tree_host_run(s, &root, &setup, suite != "builtin")?;
            run.jvm_args.extend(a.jvm_args.iter().cloned());
            profile_suite(
                s,
                &setup,
                &run,
                None,
                &out,
                &stamp,
                a.region,
                a.format,
                timeout,
                a.jobs(),
            )?
        }
    };
    Ok(set)
}

/// Profiles a JOP tree's fixed-count harnesses themselves (not jopcal's
/// wrappers of them): compiled here with the host JDK (javac --release 8, the
/// tree's sources as the source path), each profiled over its whole `main`
/// (`--region main`) or over the harness's method NAME (`--region method
/// --method NAME`).
fn original_harness_jobs(
    s: Session,
    home: &Path,
    suite: TreeSuite,
    a: &ProfileOptions,
    out: &Path,
    timeout: Duration,
) -> Result<ProfiledSet> {
    let tree = jopcal_tree::tree::JopTree::open(home).map_err(|e| anyhow::anyhow!(e))?;
    let selected = tree.select(suite, &a.benches).map_err(|e| anyhow::anyhow!(e))?;
    let jdk = Jdk::detect()?;
    let classes = out.join("classes");
    std::fs::create_dir_all(&classes)?;
    let mut roots: Vec<PathBuf> = selected.iter().map(|w| w.source_root.clone()).collect();
    roots.sort();
    roots.dedup();
    // The tree's encoding and, when jopcal.toml names one, the tree's compiler,
    // as for the generated suites.
    let config = locate::jop_config()?;
    let encoding = locate::tree_encoding(config.as_ref(), &tree)?;
    let host_javac = config.map(|c| c.host_javac).unwrap_or_default();
    let compiler = jopcal_workloads::build::Compiler::of(&host_javac, &jdk, encoding)?.argv;
    let o = std::process::Command::new(&compiler[0])
        .args(&compiler[1..])
        .arg("-d")
        .arg(&classes)
        .arg("-sourcepath")
        .arg(std::env::join_paths(&roots)?)
        .args(selected.iter().map(|w| &w.file))
        .output_in_group()
        .context("running javac")?;
    if !o.status.success() {
        let text = String::from_utf8_lossy(&o.stderr);
        let first = text
            .lines()
            .find(|l| l.contains("error:") || l.contains(". ERROR in "))
            .unwrap_or("javac failed")
            .trim();
        bail!(
            "compiling the JOP tree's harnesses with `{}`: {first}",
            compiler.join(" ")
        );
    }
    let jobs = selected
        .iter()
        .map(|w| {
            let region = match (a.region, &a.method) {
                (Some(RegionChoice::Method), Some(m)) if m.contains('.') => Ok(ProfileRegion::Method(m.clone())),
                (Some(RegionChoice::Method), Some(m)) => Ok(ProfileRegion::Method(format!("{}.{m}", w.main))),
                (Some(RegionChoice::Method), None) => Err(anyhow::anyhow!("--region method needs --method NAME")),
                // (Only main and method come here: the harness region is the wrappers'.)
                _ => Ok(ProfileRegion::Main),
            }?;
            Ok(Job {
                bench: w.name.clone(),
                request: ProfileRequest {
                    classpath: vec![classes.clone()],
                    main: w.main.clone(),
                    region,
                    bench: w.name.clone(),
                    out: out.join(format!("{}.{EXTENSION}", w.name)),
                    timeout,
                    jvm_args: a.jvm_args.clone(),
                    log: out.join("logs").join(format!("{}.log", w.name)),
                    launcher: None,
                },
                cycles: None,
            })
        })
        .collect::<Result<Vec<_>>>()?;
    run_jobs(s, &jdk, jobs, out, a.format, a.jobs())
}

fn prepare(s: Session, out: &Path, stamp: &str) -> Result<PathBuf> {
    let dir = OutDir::prepare(out, stamp).with_context(|| format!("preparing {}", out.display()))?;
    if let Some(old) = &dir.archived {
        s.progress.note(&format!(
            "note: the earlier run in {} was moved to {}",
            dir.path.display(),
            old.display()
        ));
    }
    Ok(dir.path)
}

/// How the host runs a suite's classes: its class path and JVM options,
/// and the launcher class that starts its main, if any.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HostRun {
    pub classpath: Vec<PathBuf>,
    pub jvm_args: Vec<String>,
    pub launcher: Option<String>,
    /// What of the JDK the host runs the tree's versions of: JOP's own
    /// code, whatever size its linker gives their methods.
    pub tree_library: jopcal_host::library::TreeLibrary,
}

/// How the host runs the suite in `root` (built in `setup`). For a tree's
/// suite (`tree_suite`): with the tree's versions of the JDK classes
/// `host_library` in jopcal.toml names ([`jopcal_host::library`]), and with
/// the bytecodes JOP implements as Java routines routed through the tree's
/// own routines ([`jopcal_host::routines`]) where that can be done (a note
/// says why not). The built-in suite: its classes as built.
pub fn tree_host_run(s: Session, root: &Path, setup: &HostSetup, tree_suite: bool) -> Result<HostRun> {
    let plain = HostRun {
        classpath: vec![setup.built.classes.clone()],
        jvm_args: Vec::new(),
        launcher: None,
        tree_library: Default::default(),
    };
    if !tree_suite {
        return Ok(plain);
    }
    let config = locate::jop_config()?;
    let home = locate::jop_home(s.jop_home)?;
    let tree = jopcal_tree::tree::JopTree::open(&home).map_err(|e| anyhow::anyhow!(e))?;
    let encoding = locate::tree_encoding(config.as_ref(), &tree)?;
    let (named, host_javac) = config.map(|c| (c.host_library, c.host_javac)).unwrap_or_default();
    let compiler = jopcal_workloads::build::Compiler::of(&host_javac, &setup.jdk, encoding)?;
    // The tree's JDK classes are compiled as the suite is, by the tree's
    // compiler where jopcal.toml names one (JOP links what it compiles).
    let cache = locate::cache_root()?;
    let how_library = jopcal_host::library::How {
        stubs: &root.join(jopcal_host::java::STAND_INS),
        compiler: (!host_javac.is_empty()).then_some(&compiler),
        encoding,
        cache: &cache,
    };
    // Not named: the default classes the tree has, and where they cannot
    // run on the host, the host's own with a note.
    let (classes, named) = match named {
        Some(classes) => (classes, true),
        None => (jopcal_host::library::default_classes(&home), false),
    };
    let library = match jopcal_host::library::library_dir(&home, &classes, &how_library, &|m| s.say(m)) {
        Ok(dir) => dir,
        Err(e) if !named => {
            s.say(&format!(
                "  note: the host runs its own JDK classes ({e:#}); `host_library = \"\"` in jopcal.toml says so without this note"
            ));
            None
        }
        Err(e) => return Err(e),
    };
    // The classes the host runs the tree's versions of.
    let mut tree_library = jopcal_host::library::TreeLibrary {
        classes: if library.is_some() { classes } else { Vec::new() },
        merged: Vec::new(),
    };
    // The rest of the tree's library, under names of its own.
    let shadow = match jopcal_host::shadow::shadow(&home, root, &compiler, library.as_deref(), &cache, &|m| s.say(m)) {
        Ok(shadow) => Some(shadow),
        Err(e) => {
            s.say(&format!(
                "  note: the host runs the JDK's String, StringBuffer, Integer, Vector, ... where JOP runs the tree's ({e:#})"
            ));
            None
        }
    };
    let routed = |shadow: Option<&jopcal_host::shadow::Shadowed>| {
        let how = jopcal_host::routines::Suite {
            root,
            classes: &setup.built.classes,
            program: shadow.map(|sh| sh.program.as_path()),
            library: shadow.map_or(library.as_deref(), |sh| Some(sh.library.as_path())),
            compiler: &compiler,
            encoding,
            cache: &cache,
        };
        jopcal_host::routines::route(&home, &how, &|m| s.say(m))
    };
    // The shadow runs only through jopcal's launcher, which the routed run has.
    let (routed, shadow) = match shadow {
        Some(sh) => match routed(Some(&sh))? {
            Some(r) => (Some(r), Some(sh)),
            None => (routed(None)?, None),
        },
        None => (routed(None)?, None),
    };
    if let Some(sh) = &shadow {
        tree_library.classes.extend(sh.classes.iter().cloned());
        tree_library.merged.extend(sh.merged.iter().cloned());
    }
    Ok(match routed {
        // The routed classes print through jopcal's serial line stand-in.
        Some(mut r) => HostRun {
            classpath: r.classpath,
            jvm_args: {
                r.jvm_args.extend(shadow.map(|sh| sh.init_option()));
                r.jvm_args
            },
            launcher: Some(jopcal_host::routines::SERIAL_MAIN.to_string()),
            tree_library,
        },
        None => HostRun {
            classpath: plain.classpath,
            jvm_args: match library {
                Some(dir) => jopcal_host::library::jvm_args(&dir)?,
                None => Vec::new(),
            },
            launcher: None,
            tree_library,
        },
    })
}

/// Compiles the suite in `root` for the host JVM (or takes it from the cache).
pub fn prepare_host(s: Session, root: &Path, benches: &[String]) -> Result<HostSetup> {
    Ok(jopcal_targets::host::prepare_host(
        root,
        &locate::cache_root()?,
        benches,
        s.progress,
    )?)
}

/// The JVM option that gives a profiled run the target's clock values
/// (read by the host's `Native`, see `jop-firmware/host-stubs`).
fn clock_option(values: &[i32]) -> String {
    let list: Vec<String> = values.iter().map(i32::to_string).collect();
    format!("-Djopcal.clock={}", list.join(","))
}

/// Profiles the selected workloads of the built suite into `out`, run as
/// `run` says (see [`tree_host_run`]); where the measured run in `measured`
/// kept a program's clock reads ([`target_clock`]), its host run reads them.
#[allow(clippy::too_many_arguments)]
pub fn profile_suite(
    s: Session,
    setup: &HostSetup,
    run: &HostRun,
    measured: Option<&Path>,
    out: &Path,
    stamp: &str,
    region: Option<RegionChoice>,
    format: ProfileFormat,
    timeout: Duration,
    parallel: usize,
) -> Result<ProfiledSet> {
    let out = prepare(s, out, stamp)?;
    let measured_cycles = measured.map(cycles_measured).unwrap_or_default();
    let mut clock_args = std::collections::BTreeMap::new();
    if let Some(dir) = measured {
        for w in &setup.selected {
            if let Some(values) = target_clock(dir, &w.name)? {
                clock_args.insert(w.name.clone(), clock_option(&values));
            }
        }
    }
    let jobs = setup
        .selected
        .iter()
        .map(|w| Job {
            bench: w.name.clone(),
            request: ProfileRequest {
                classpath: run.classpath.clone(),
                main: w.main.clone(),
                region: match region {
                    Some(RegionChoice::Main) => ProfileRegion::Main,
                    _ => ProfileRegion::Harness,
                },
                // (--region method applies to --cp/--main programs.)
                bench: w.name.clone(),
                out: out.join(format!("{}.{EXTENSION}", w.name)),
                timeout,
                jvm_args: run.jvm_args.iter().chain(clock_args.get(&w.name)).cloned().collect(),
                log: out.join("logs").join(format!("{}.log", w.name)),
                launcher: run.launcher.clone(),
            },
            cycles: measured_cycles.get(&w.name).copied(),
        })
        .collect();
    let mut set = run_jobs(s, &setup.jdk, jobs, &out, format, parallel)?;
    set.failures.splice(0..0, setup.left_out.iter().cloned());
    Ok(set)
}

/// The cycles each benchmark ran in, from the `measurements.csv` of the
/// run in `dir` (none where it has none or cannot be read: `auto` then
/// takes the instrumenting profiler, whose cost grows least with a
/// program's length).
fn cycles_measured(dir: &Path) -> std::collections::BTreeMap<String, u64> {
    let rows = jopcal_measure::measurements::read(&dir.join("measurements.csv")).unwrap_or_default();
    rows.into_iter()
        .filter(|m| m.unit == jopcal_measure::measurements::Unit::Cycles)
        .map(|m| (m.benchmark, m.value))
        .collect()
}

/// Profiles `jobs`, `parallel` at a time (each a JVM of its own; a
/// profile counts bytecodes, which other work beside it does not change);
/// the profiles and failures in the order of `jobs`.
fn run_jobs(
    s: Session,
    jdk: &Jdk,
    jobs: Vec<Job>,
    out: &Path,
    format: ProfileFormat,
    parallel: usize,
) -> Result<ProfiledSet> {
    // Each job's profiler (`auto` chooses per job), made ready once each.
    // `auto` without ASM (which the instrumenting profiler needs): the single-step agent throughout.
    let instrument_here = s.profiler != ProfilerKind::Auto || crate::instrumenter::instrumenting_available();
    if !instrument_here {
        s.say("  profile note: no ASM (scripts/setup installs Debian's libasm-java): every workload is profiled by the single-step agent");
    }
    let kind = |job: &Job| match s.profiler.for_workload(job.cycles) {
        ProfilerKind::Instrument if !instrument_here => ProfilerKind::Step,
        k => k,
    };
    // The class path's hashes, taken once whichever profilers run.
    let classpath = classpath_hashes(&jobs)?;
    let mut profilers = std::collections::BTreeMap::new();
    for job in &jobs {
        if let std::collections::btree_map::Entry::Vacant(e) = profilers.entry(kind(job)) {
            let profiler = crate::instrumenter::profiler(kind(job), jdk)?;
            let cache = ProfileCache::open(jdk, &profiler, &classpath)?;
            e.insert((profiler, cache));
        }
    }
    let progress = s.progress;
    progress.begin("profile", jobs.len() as u64);
    let done = jopcal_targets::parallel::map_in_order(
        &jobs,
        parallel,
        |_| false,
        |job| {
            progress.working_on(&job.bench);
            let (profiler, cache) = &profilers[&kind(job)];
            let r = cache.profile(job, || Ok(profile_program(jdk, profiler, &job.request)?.profile));
            // Under `auto`, which of the two counted it.
            let whose = if s.profiler == ProfilerKind::Auto {
                format!(" ({})", kind(job).name())
            } else {
                String::new()
            };
            match &r {
                Ok((p, cached)) => progress.finished(&format!(
                    "{}: {} bytecodes, {} contexts, {} calls/returns{whose}{}",
                    job.bench,
                    p.bytecodes(),
                    p.nodes.len(),
                    p.events.len(),
                    if *cached {
                        " (cached: its inputs are unchanged)"
                    } else {
                        ""
                    }
                )),
                Err(e) => progress.finished(&format!("{}: FAILED: {e:#}", job.bench)),
            }
            let r = r.map(|(p, _)| p);
            if let (Ok(p), ProfileFormat::Json) = (&r, format) {
                write_json(p, &job.request.out)?;
            }
            r
        },
    );
    progress.end();
    let mut set = ProfiledSet {
        dir: out.to_path_buf(),
        profiles: Vec::new(),
        failures: Vec::new(),
    };
    for (job, r) in jobs.iter().zip(done) {
        match r {
            Some(Ok(p)) => set.profiles.push(p),
            Some(Err(e)) => set.failures.push((job.bench.clone(), format!("{e:#}"))),
            None => set.failures.push((job.bench.clone(), "not profiled".into())),
        }
    }
    Ok(set)
}

/// Compares each profile of `set` with the one of the same benchmark in
/// `dir` and says, per benchmark, whether they are the same or where they
/// first differ; returns how many differ (a missing one counts).
pub fn compare_with(s: Session, set: &ProfiledSet, dir: &Path) -> Result<usize> {
    use jopcal_profile::compare::Scope;
    let mut differ = 0;
    for p in &set.profiles {
        let other = dir.join(format!("{}.{EXTENSION}", p.benchmark));
        let line = match jopcal_profile::read_file(&other) {
            Ok(q) => match jopcal_profile::compare::first_difference(p, &q, Scope::Program) {
                None => {
                    // What the estimate does not read, said beside: the JVM's
                    // own work in the region, else what was tracked before it.
                    let first = |scope| jopcal_profile::compare::first_difference(p, &q, scope);
                    let aside = first(Scope::Region)
                        .map(|d| format!(" (the JVM's own work, which no estimate reads, differs: {d})"))
                        .or_else(|| first(Scope::All).map(|d| format!(" (before the region: {d})")))
                        .unwrap_or_default();
                    format!("  {}: the same as {}{aside}", p.benchmark, other.display())
                }
                Some(d) => {
                    differ += 1;
                    format!("  {}: differs from {}: {d}", p.benchmark, other.display())
                }
            },
            Err(e) => {
                differ += 1;
                format!("  {}: {e:#}", p.benchmark)
            }
        };
        s.say(&line);
    }
    Ok(differ)
}

/// What tells this jopcal executable from another build: its version, and
/// its file's size and modification time.
fn executable_identity() -> String {
    let stamp = std::env::current_exe()
        .and_then(std::fs::metadata)
        .map(|m| {
            let modified = m
                .modified()
                .ok()
                .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok());
            format!("{} {:?}", m.len(), modified)
        })
        .unwrap_or_default();
    format!("{} {stamp}", jopcal_output::provenance::VERSION)
}

/// Profiles kept in jopcal's cache (`profiles/<hash>/`) under a hash of
/// everything a profile is made of: the agent's bytes (and, for the
/// instrumenting profiler, the executable that reads its counts), the JVM, every file
/// of the class path, the program, its region and the JVM's options. A
/// profile counts bytecodes, which the same inputs give the same way every
/// time (checked: byte-identical `.jopprof` files from two runs of the tree's
/// JemBench), so an unchanged workload is not profiled again.
struct ProfileCache<'a> {
    dir: PathBuf,
    /// The hash of what every job shares: the agent and the JVM.
    common: String,
    /// Each class-path entry's content hash ([`classpath_hashes`]).
    classpath: &'a std::collections::BTreeMap<PathBuf, String>,
}

/// The content hash of each existing class-path entry of `jobs`, taken once.
fn classpath_hashes(jobs: &[Job]) -> Result<std::collections::BTreeMap<PathBuf, String>> {
    let mut classpath = std::collections::BTreeMap::new();
    for entry in jobs.iter().flat_map(|j| &j.request.classpath) {
        if !classpath.contains_key(entry) && entry.exists() {
            classpath.insert(entry.clone(), locate::content_hash(entry)?);
        }
    }
    Ok(classpath)
}

impl<'a> ProfileCache<'a> {
    fn open(
        jdk: &Jdk,
        profiler: &Profiler,
        classpath: &'a std::collections::BTreeMap<PathBuf, String>,
    ) -> Result<ProfileCache<'a>> {
        use sha2::{Digest, Sha256};
        // What the profiler is made of: the agent library, or the jar and its run-time.
        let mut bytes = profiler.name().as_bytes().to_vec();
        let parts = match profiler {
            Profiler::Step { agent } => vec![agent.clone()],
            Profiler::Instrument { agent_jar, boot, .. } => std::iter::once(agent_jar).chain(boot).cloned().collect(),
        };
        for p in parts {
            let part = if p.is_dir() {
                locate::content_hash(&p)?.into_bytes()
            } else {
                std::fs::read(&p).with_context(|| format!("reading the profiler {}", p.display()))?
            };
            bytes.extend(part);
        }
        if matches!(profiler, Profiler::Instrument { .. }) {
            // The instrumenting profiler's counts become a profile in this
            // executable (`jopcal_profiler::instrumented`): another build reads anew.
            bytes.extend(executable_identity().into_bytes());
        }
        let mut h = Sha256::new();
        for part in [
            "jopcal profile v1".as_bytes(),
            &bytes,
            jdk.java.display().to_string().as_bytes(),
            jdk.version.as_bytes(),
        ] {
            h.update(part);
            h.update([0]);
        }
        Ok(ProfileCache {
            dir: locate::cache_root()?.join("profiles"),
            common: format!("{:x}", h.finalize()),
            classpath,
        })
    }

    /// Where `job`'s profile is kept; `None` when a class-path entry is
    /// missing (the run then fails as it should).
    fn entry(&self, job: &Job) -> Option<PathBuf> {
        use sha2::{Digest, Sha256};
        let r = &job.request;
        let mut h = Sha256::new();
        let mut part = |p: &str| {
            h.update(p.as_bytes());
            h.update([0]);
        };
        part(&self.common);
        for c in &r.classpath {
            part(self.classpath.get(c)?);
        }
        part(&r.main);
        part(&format!("{:?}", r.region));
        part(&r.bench);
        for a in &r.jvm_args {
            part(a);
        }
        if let Some(l) = &r.launcher {
            part(l);
        }
        Some(self.dir.join(&format!("{:x}", h.finalize())[..32]))
    }

    /// `job`'s profile from the cache (with its log), or made by `run` and
    /// stored; `true` when it came from the cache.
    fn profile(&self, job: &Job, run: impl FnOnce() -> Result<Profile>) -> Result<(Profile, bool)> {
        let r = &job.request;
        let Some(entry) = self.entry(job) else {
            return Ok((run()?, false));
        };
        let (kept, log) = (entry.join(format!("profile.{EXTENSION}")), entry.join("jvm.log"));
        if let Ok(p) = jopcal_profile::read_file(&kept) {
            std::fs::copy(&kept, &r.out).with_context(|| format!("writing {}", r.out.display()))?;
            if let Some(d) = r.log.parent() {
                std::fs::create_dir_all(d)?;
            }
            let text = std::fs::read_to_string(&log).unwrap_or_default();
            let note = format!(
                "(jopcal: this profile's inputs are unchanged; it and this log come from {})\n",
                entry.display()
            );
            atomic::write_atomic(&r.log, (note + &text).as_bytes())?;
            return Ok((p, true));
        }
        let p = run()?;
        // Stored aside, then renamed into place: a concurrent run stores the same bytes.
        let aside = self.dir.join(format!(
            ".{}.{}.{:?}",
            entry.file_name().unwrap_or_default().to_string_lossy(),
            std::process::id(),
            std::thread::current().id()
        ));
        let stored = std::fs::create_dir_all(&aside)
            .and_then(|_| std::fs::copy(&r.out, aside.join(format!("profile.{EXTENSION}"))))
            .and_then(|_| std::fs::copy(&r.log, aside.join("jvm.log")));
        if stored.is_err() || std::fs::rename(&aside, &entry).is_err() {
            let _ = std::fs::remove_dir_all(&aside);
        }
        Ok((p, false))
    }
}

/// The JSON view of `p` beside its `.jopprof` file `out`.
fn write_json(p: &Profile, out: &Path) -> Result<()> {
    let json = out.with_extension("json");
    let text = serde_json::to_string_pretty(&jopcal_profile::to_json(p))?;
    atomic::write_atomic(&json, text.as_bytes()).with_context(|| format!("writing {}", json.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_target_clock_is_what_systems_clock_methods_read() {
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(target_clock(dir.path(), "P").unwrap(), None);
        let clocks = dir.path().join(crate::clocks::CLOCKS_DIR);
        std::fs::create_dir_all(&clocks).unwrap();
        // The start-up's busy wait reads the counter too: not the program's clock.
        std::fs::write(
            clocks.join("P.txt"),
            "50896 com.jopdesign.sys.Startup.getSpeed()I\n79907 java.lang.System.currentTimeMillis()J\n-5 java.lang.System.nanoTime()J\n7 java.lang.System.nanoTimeX()J\n",
        )
        .unwrap();
        let values = target_clock(dir.path(), "P").unwrap().unwrap();
        assert_eq!(values, vec![79907, -5]);
        assert_eq!(clock_option(&values), "-Djopcal.clock=79907,-5");
        // Only the start-up's reads: none for the host.
        std::fs::write(clocks.join("Q.txt"), "1 com.jopdesign.sys.Startup.getSpeed()I\n").unwrap();
        assert_eq!(target_clock(dir.path(), "Q").unwrap(), None);
        // A line that is not a value names its file and line.
        std::fs::write(clocks.join("R.txt"), "1 java.lang.System.nanoTime()J\nx y\n").unwrap();
        let e = target_clock(dir.path(), "R").unwrap_err().to_string();
        assert!(
            e.ends_with("R.txt:2: \"x y\" is not a value and the method that read it"),
            "{e}"
        );
    }
}
