//! Profiling a Java program on the host JVM with one of jopcal's profilers
//! (crate `jopcal-agent`): the single-step JVMTI agent
//! (`libjopcal_agent.so`), or the instrumenting profiler (a `-javaagent`
//! that rewrites the classes, whose raw counts are read back here into the
//! same profile): the command line, and the verdict on the run. A profile
//! that was written is always kept, even when the run failed; it is then
//! marked incomplete and the failure says why.

pub use crate::error::ProfileFailure;
use crate::host::{run_java, Captured, JavaRun};
use crate::jdk::Jdk;
use jopcal_measure::atomic;
use jopcal_profile::agent_options::{AgentOptions, Region, DEFAULT_MARKER};
use jopcal_profile::Profile;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// The file name of the agent library.
pub const AGENT_FILE: &str = "libjopcal_agent.so";

/// Which profiler counts a run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Profiler {
    /// The single-step JVMTI agent, the oracle: the library's path.
    Step { agent: PathBuf },
    /// The instrumenting profiler: its `-javaagent` jar and what goes on
    /// the boot class path (its classes, and ASM's); with `clock_only`, only
    /// the region's bounds are rewritten and only its wall time is
    /// recorded: the baseline of the profilers' cost.
    Instrument {
        agent_jar: PathBuf,
        boot: Vec<PathBuf>,
        clock_only: bool,
    },
}

impl Profiler {
    /// Its name on the command line (`--profiler`).
    pub fn name(&self) -> &'static str {
        match self {
            Profiler::Step { .. } => "step",
            Profiler::Instrument { clock_only: false, .. } => "instrument",
            Profiler::Instrument { clock_only: true, .. } => "clock",
        }
    }
}

/// The JIT and collector the instrumenting profiler's JVM runs with (the
/// plain JVM it is measured against, `clock`, keeps the JVM's own). A
/// region is short against the JIT's warm-up, and a rewritten method is
/// about three times its original size: C2 compiled JemBench's hot routines
/// only after most of the region had run, and C1 alone (tier 1, no
/// profiling) reaches compiled code within milliseconds. Its counters and
/// shadow stack store references at every call, which the serial
/// collector's barrier makes cheaper than G1's. Measured on JemBench's
/// region times: docs/notes/profilers.md.
pub const INSTRUMENT_JIT: [&str; 2] = ["-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC"];

/// The JVM options that run `req` under the instrumenting profiler, which
/// writes its raw counts to `raw`.
pub fn instrument_arguments(
    agent_jar: &Path,
    boot: &[PathBuf],
    clock_only: bool,
    req: &ProfileRequest,
    raw: &Path,
) -> Vec<String> {
    use jopcal_profile::agent_options::escape;
    let opts = agent_options(req);
    let (region, main, marker, method) = match &opts.region {
        Region::Harness { marker, main } => (
            "harness",
            main.clone().unwrap_or_default(),
            marker.clone(),
            String::new(),
        ),
        Region::Main { class } => ("main", class.clone(), String::new(), String::new()),
        Region::Method { class, name } => ("method", class.clone(), String::new(), name.clone()),
    };
    // jopcal's bridge methods whose operands JOP's microcode path depends on.
    let mut observe = jopcal_profile::routed::BRIDGE_CLASS.to_string();
    for o in &jopcal_profile::routed::OBSERVED {
        let (slot, mask) = match o.operand {
            jopcal_profile::routed::Operand::Count { slot, mask } => (i32::from(slot), mask),
            jopcal_profile::routed::Operand::LongCompare => (-1, 0),
            jopcal_profile::routed::Operand::OldElement => (-2, 0),
        };
        observe.push_str(&format!(";{}:{}:{slot}:{mask}", o.mnemonic, o.opcode));
    }
    let mut option = format!(
        "out={},bench={},region={region},main={},observe={},mains={}",
        escape(&raw.to_string_lossy()),
        escape(&opts.benchmark),
        escape(&main),
        escape(&observe),
        escape(&jopcal_profile::routed::MAIN_DESCRIPTORS.join("|"))
    );
    if !marker.is_empty() {
        option.push_str(&format!(",marker={}", escape(&marker)));
    }
    if !method.is_empty() {
        option.push_str(&format!(",method={}", escape(&method)));
    }
    if clock_only {
        option.push_str(",clock-only");
    }
    vec![
        // An implicit exception is built by its constructor every time, as the
        // interpreter does, not taken from a preallocated one.
        "-XX:-OmitStackTraceInFastThrow".into(),
        format!(
            "-Xbootclasspath/a:{}",
            std::env::join_paths(boot).map_or_else(|_| String::new(), |p| p.to_string_lossy().into_owned())
        ),
        format!("-javaagent:{}={option}", agent_jar.display()),
    ]
}

/// Which part of the program the agent counts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ProfileRegion {
    /// Between the jop-firmware harness's `start()` and `stop()`.
    Harness,
    /// The dynamic extent of the main class's `main`.
    Main,
    /// The dynamic extent of the first call of a method (`pkg.Class.name`).
    Method(String),
}

/// One program to profile.
#[derive(Debug, Clone)]
pub struct ProfileRequest {
    pub classpath: Vec<PathBuf>,
    /// Main class, dotted or slashed.
    pub main: String,
    pub region: ProfileRegion,
    /// Benchmark name written into the profile.
    pub bench: String,
    /// The `.jopprof` file to write.
    pub out: PathBuf,
    pub timeout: Duration,
    pub jvm_args: Vec<String>,
    /// Where the JVM's raw output is kept, whatever the outcome.
    pub log: PathBuf,
    /// A launcher class the JVM starts instead, with `main` as its first
    /// argument (a tree suite's host run: jopcal's serial line stand-in).
    pub launcher: Option<String>,
}

/// The `-agentpath:` argument for `req`.
pub fn agent_argument(agent: &Path, req: &ProfileRequest) -> String {
    format!(
        "-agentpath:{}={}",
        agent.display(),
        agent_options(req).to_option_string()
    )
}

/// The region and output of `req` as the profilers take them.
fn agent_options(req: &ProfileRequest) -> AgentOptions {
    AgentOptions {
        out: req.out.clone(),
        benchmark: req.bench.clone(),
        region: match &req.region {
            ProfileRegion::Harness => Region::Harness {
                marker: DEFAULT_MARKER.to_string(),
                main: Some(req.main.replace('.', "/")),
            },
            ProfileRegion::Main => Region::Main {
                class: req.main.replace('.', "/"),
            },
            ProfileRegion::Method(m) => {
                let (class, name) = m.rsplit_once('.').unwrap_or(("", m.as_str()));
                Region::Method {
                    class: class.replace('.', "/"),
                    name: name.to_string(),
                }
            }
        },
    }
}

/// A successful profiling run.
#[derive(Debug)]
pub struct Profiled {
    pub profile: Profile,
    pub captured: Captured,
    pub command: String,
}

/// Runs `req` under `profiler` and reads back its profile.
pub fn profile_program(jdk: &Jdk, profiler: &Profiler, req: &ProfileRequest) -> Result<Profiled, ProfileFailure> {
    for entry in &req.classpath {
        if !entry.exists() {
            return Err(ProfileFailure::MissingClasspath(entry.clone()));
        }
    }
    let _ = std::fs::remove_file(&req.out);
    let raw = req.out.with_extension("jopraw");
    let _ = std::fs::remove_file(&raw);
    let mut jvm_args = req.jvm_args.clone();
    let agent = match profiler {
        Profiler::Step { agent } => {
            jvm_args.push(agent_argument(agent, req));
            agent.clone()
        }
        Profiler::Instrument {
            agent_jar,
            boot,
            clock_only,
        } => {
            if !*clock_only {
                // Before the caller's own options, which may override them.
                jvm_args.splice(0..0, INSTRUMENT_JIT.iter().map(|a| a.to_string()));
            }
            jvm_args.extend(instrument_arguments(agent_jar, boot, *clock_only, req, &raw));
            agent_jar.clone()
        }
    };
    let agent = agent.as_path();
    let main = req.main.replace('/', ".");
    let run = JavaRun {
        classpath: req.classpath.clone(),
        main: req.launcher.clone().unwrap_or_else(|| main.clone()),
        jvm_args,
        args: req.launcher.as_ref().map(|_| vec![main.clone()]).unwrap_or_default(),
        timeout: req.timeout,
    };
    let command = run.command_line(jdk);
    let captured = run_java(jdk, &run).map_err(ProfileFailure::Spawn)?;
    atomic::write_atomic(&req.log, captured.log_text(&command).as_bytes()).map_err(ProfileFailure::Spawn)?;
    // HotSpot prints start-up failures to stdout, the agent to stderr: look at both.
    let agent_line = |needle: &str| {
        captured
            .stderr
            .lines()
            .chain(captured.stdout.lines())
            .find(|l| l.contains(needle))
            .map(str::to_string)
    };
    if let Some(line) = agent_line("Could not find agent library")
        .or_else(|| agent_line("agent library failed"))
        .or_else(|| agent_line("Error opening zip file or JAR manifest missing"))
        .or_else(|| agent_line("agent JAR loaded but agent failed"))
        .or_else(|| agent_line("jopcal-agent: bad options"))
        .or_else(|| agent_line("jopcal-agent: the JVM refuses"))
    {
        return Err(ProfileFailure::AgentRefused {
            agent: agent.to_path_buf(),
            line: line.trim().to_string(),
        });
    }
    if captured.stderr.contains("Could not find or load main class") {
        return Err(ProfileFailure::NoMainClass(main));
    }
    let profile = if raw.is_file() {
        // The instrumenting profiler's counts, read into the profile the step agent writes.
        let bytes = std::fs::read(&raw).map_err(ProfileFailure::Spawn)?;
        let (profile, _) = jopcal_profiler::instrumented::read_raw(&bytes).map_err(|e| {
            ProfileFailure::Unreadable(jopcal_profile::ProfileError::Corrupt {
                path: raw.clone(),
                offset: e.offset,
                message: e.message,
            })
        })?;
        atomic::write_atomic(&req.out, &jopcal_profile::encode(&profile)).map_err(ProfileFailure::Spawn)?;
        let _ = std::fs::remove_file(&raw);
        Some(profile)
    } else if req.out.is_file() {
        Some(jopcal_profile::read_file(&req.out).map_err(ProfileFailure::Unreadable)?)
    } else {
        None
    };
    let kept = profile.as_ref().map(|_| req.out.clone());
    let agent_says = || {
        captured
            .stderr
            .lines()
            .rev()
            .find_map(|l| l.strip_prefix("jopcal-agent: "))
            .map(str::to_string)
    };
    let failed = |why: String| ProfileFailure::Run {
        why: format!("{why} (JVM output: {})", req.log.display()),
        kept: kept.clone(),
    };
    if captured.timed_out {
        return Err(failed(format!("killed after the {} s timeout", req.timeout.as_secs())));
    }
    match captured.status {
        Some(0) => {}
        Some(c) => {
            let detail = agent_says().map(|s| format!(" ({s})")).unwrap_or_default();
            return Err(failed(format!("java exited with status {c}{detail}")));
        }
        None => return Err(failed("java was killed by a signal".to_string())),
    }
    let Some(profile) = profile else {
        return Err(failed(
            agent_says().unwrap_or_else(|| "the agent wrote no profile".to_string()),
        ));
    };
    if !profile.complete {
        return Err(failed(
            agent_says().unwrap_or_else(|| "the profile is incomplete".to_string()),
        ));
    }
    Ok(Profiled {
        profile,
        captured,
        command,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn agent_argument_escapes_paths() {
        let req = ProfileRequest {
            classpath: vec![],
            main: "a.B".into(),
            region: ProfileRegion::Main,
            bench: "B".into(),
            out: PathBuf::from("/tmp/x,y/B.jopprof"),
            timeout: Duration::from_secs(1),
            jvm_args: vec![],
            log: PathBuf::from("/tmp/B.log"),
            launcher: None,
        };
        assert_eq!(
            agent_argument(Path::new("/l/libjopcal_agent.so"), &req),
            "-agentpath:/l/libjopcal_agent.so=out=/tmp/x%2Cy/B.jopprof,bench=B,region=main,main=a/B"
        );
    }
}
