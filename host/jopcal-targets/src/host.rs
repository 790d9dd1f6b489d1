//! The host JVM: each workload runs in its own `java` process; its
//! `@jopcal` result lines give nanoseconds of the host's clock.

use crate::{Job, JobEnd, JobError, Prepared, Progress, Reported, Sink, Target, TargetError, TargetKind};
use jopcal_measure::{atomic, Unit};
use jopcal_workloads::host::{interpret, run_java, JavaRun};
use jopcal_workloads::{build_suite_lenient, BuiltSuite, Jdk, Suite, WorkloadSpec};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// Everything needed to run a suite on the host JVM.
#[derive(Debug)]
pub struct HostSetup {
    /// The JDK that compiled and runs it.
    pub jdk: Jdk,
    /// The workloads to run, in suite order unless named explicitly.
    pub selected: Vec<WorkloadSpec>,
    /// The suite's class files.
    pub built: BuiltSuite,
    /// `(workload, why)` of selected workloads left out because they do not compile.
    pub left_out: Vec<(String, String)>,
}

/// Loads the suite in `root`, checks the benchmark names, finds the JDK and
/// compiles the suite into the build cache under `cache` (or takes it from
/// there). One workload that does not compile is left out, never the whole
/// suite.
pub fn prepare_host(
    root: &Path,
    cache: &Path,
    benches: &[String],
    progress: &dyn Progress,
) -> Result<HostSetup, TargetError> {
    let suite = Suite::load(root)?;
    let mut selected = suite.select(benches)?;
    let jdk = Jdk::detect()?;
    let lenient = build_suite_lenient(root, &jdk, cache).map_err(|source| TargetError::Build {
        root: root.to_path_buf(),
        source,
    })?;
    let built = lenient.built;
    let left_out: Vec<(String, String)> = lenient
        .left_out
        .into_iter()
        .filter(|(name, _)| selected.iter().any(|w| &w.name == name))
        .map(|(name, why)| (name, format!("does not compile on the host: {why}")))
        .collect();
    for (name, why) in &left_out {
        progress.note(&format!("note: {name} left out: {why}"));
    }
    selected.retain(|w| !left_out.iter().any(|(n, _)| n == &w.name));
    if let (true, Some((name, why))) = (selected.is_empty(), left_out.first()) {
        return Err(TargetError::NothingLeft {
            name: name.clone(),
            why: why.clone(),
        });
    }
    progress.note(&format!(
        "build {} workloads, {} ({}), class files {}",
        suite.workloads.len(),
        built.compiler,
        if built.cached { "cached" } else { "compiled" },
        built.classes.display()
    ));
    Ok(HostSetup {
        jdk,
        selected,
        built,
        left_out,
    })
}

/// The host JVM as a target.
pub struct HostTarget {
    root: PathBuf,
    cache: PathBuf,
    benches: Vec<String>,
    jvm_args: Vec<String>,
    timeout: Duration,
    setup: Option<HostSetup>,
}

impl HostTarget {
    /// The suite in `root` (compiled into `cache`), only `benches` if any
    /// are named, each run with `jvm_args` and killed after `timeout`.
    pub fn new(root: &Path, cache: &Path, benches: &[String], jvm_args: &[String], timeout: Duration) -> HostTarget {
        HostTarget {
            root: root.to_path_buf(),
            cache: cache.to_path_buf(),
            benches: benches.to_vec(),
            jvm_args: jvm_args.to_vec(),
            timeout,
            setup: None,
        }
    }
}

impl Target for HostTarget {
    fn kind(&self) -> TargetKind {
        TargetKind::Host
    }

    fn prepare(&mut self, _staging: &Path, progress: &dyn Progress) -> Result<Prepared, TargetError> {
        let setup = prepare_host(&self.root, &self.cache, &self.benches, progress)?;
        let prepared = Prepared {
            jobs: setup
                .selected
                .iter()
                .map(|w| Job {
                    name: w.name.clone(),
                    hash: setup.built.hash[..16].to_string(),
                })
                .collect(),
            left_out: setup.left_out.clone(),
        };
        self.setup = Some(setup);
        Ok(prepared)
    }

    fn config(&self) -> String {
        let jdk = self
            .setup
            .as_ref()
            .map_or("jdk".to_string(), |s| s.jdk.version.replace("javac", "jdk"));
        std::iter::once(jdk)
            .chain(self.jvm_args.iter().cloned())
            .collect::<Vec<_>>()
            .join(" ")
    }

    fn run(
        &mut self,
        job: &Job,
        run: u32,
        out: &Path,
        sink: &mut Sink<'_>,
        _progress: &dyn Progress,
    ) -> Result<JobEnd, JobError> {
        let setup = self.setup.as_ref().ok_or(JobError::NotPrepared("host"))?;
        let w = setup
            .selected
            .iter()
            .find(|w| w.name == job.name)
            .ok_or_else(|| JobError::Unknown {
                what: "workload",
                name: job.name.clone(),
            })?;
        // Relative to the output directory, so it stays right when the run is archived.
        let log_rel = format!("logs/{}-run{run}.log", w.name);
        let log = out.join(&log_rel);
        let java = JavaRun {
            classpath: vec![setup.built.classes.clone()],
            main: w.main.clone(),
            jvm_args: self.jvm_args.clone(),
            args: vec![],
            timeout: self.timeout,
        };
        let captured = run_java(&setup.jdk, &java).map_err(|source| JobError::Start {
            program: setup.jdk.java.clone(),
            source,
        })?;
        atomic::write_atomic(&log, captured.log_text(&java.command_line(&setup.jdk)).as_bytes())
            .map_err(|source| JobError::WriteLog { path: log, source })?;
        let reported = interpret(&w.name, &captured, self.timeout).map_err(|source| JobError::Host {
            source,
            log: log_rel.clone(),
        })?;
        for r in reported.into_iter().filter(|r| r.bench == w.name) {
            sink(Reported {
                bench: r.bench,
                iterations: r.iterations,
                value: r.cycles,
                unit: Unit::Ns,
                log: log_rel.clone(),
            })?;
        }
        Ok(JobEnd {
            output: captured.stdout.clone(),
            log: log_rel,
            stop: None,
        })
    }

    fn finish(&mut self, _out: Option<&Path>) -> Result<(), TargetError> {
        Ok(())
    }
}
