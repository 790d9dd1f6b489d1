//! Profiling a Java program on the host JVM with jopcal's agent
//! (`libjopcal_agent.so`, crate `jopcal-agent`): the command line, and the
//! verdict on the run. A profile that was written is always kept, even when
//! the run failed; it is then marked incomplete and the failure says why.

use crate::host::{run_java, Captured, JavaRun};
use crate::jdk::Jdk;
use jopcal_measure::atomic;
use jopcal_profile::agent_options::{AgentOptions, Region, DEFAULT_MARKER};
use jopcal_profile::Profile;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// The file name of the agent library.
pub const AGENT_FILE: &str = "libjopcal_agent.so";

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

/// Why profiling failed. `kept` is the path of a profile that was still
/// written (marked incomplete), if any.
#[derive(Debug, thiserror::Error)]
pub enum ProfileFailure {
    #[error("class path entry {0} does not exist")]
    MissingClasspath(PathBuf),
    #[error("main class {0} was not found on the class path")]
    NoMainClass(String),
    #[error("the JVM refused the profiler agent {agent}: {line}")]
    AgentRefused { agent: PathBuf, line: String },
    #[error("cannot start java: {0}")]
    Spawn(std::io::Error),
    #[error("{why}{}", kept_note(.kept))]
    Run { why: String, kept: Option<PathBuf> },
    #[error("{0}")]
    Unreadable(jopcal_profile::ProfileError),
}

fn kept_note(kept: &Option<PathBuf>) -> String {
    match kept {
        Some(p) => format!(
            "; the profile up to that point is in {} (marked incomplete)",
            p.display()
        ),
        None => "; no profile was written".to_string(),
    }
}

/// The `-agentpath:` argument for `req`.
pub fn agent_argument(agent: &Path, req: &ProfileRequest) -> String {
    let opts = AgentOptions {
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
    };
    format!("-agentpath:{}={}", agent.display(), opts.to_option_string())
}

/// A successful profiling run.
#[derive(Debug)]
pub struct Profiled {
    pub profile: Profile,
    pub captured: Captured,
    pub command: String,
}

/// Runs `req` under the agent and reads back its profile.
pub fn profile_program(jdk: &Jdk, agent: &Path, req: &ProfileRequest) -> Result<Profiled, ProfileFailure> {
    for entry in &req.classpath {
        if !entry.exists() {
            return Err(ProfileFailure::MissingClasspath(entry.clone()));
        }
    }
    let _ = std::fs::remove_file(&req.out);
    let mut jvm_args = req.jvm_args.clone();
    jvm_args.push(agent_argument(agent, req));
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
    let profile = if req.out.is_file() {
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
