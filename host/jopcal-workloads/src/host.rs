//! Running Java programs on the host JVM: a child process with a wall-clock
//! timeout, both output streams captured in full, and the verdict on a
//! workload's output (its results, or why the run cannot be trusted).

pub use crate::error::WorkloadFailure;
use crate::jdk::Jdk;
use jopcal_measure::children::InGroup;
use jopcal_measure::transcript::{scan, Ending};
use jopcal_measure::ResultLine;
use std::io::Read;
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};
use wait_timeout::ChildExt;

/// One JVM invocation.
#[derive(Debug, Clone)]
pub struct JavaRun {
    pub classpath: Vec<PathBuf>,
    pub main: String,
    /// Options before the main class (`-Xint`, `-agentpath:...`).
    pub jvm_args: Vec<String>,
    pub args: Vec<String>,
    pub timeout: Duration,
}

/// What a JVM run printed and how it ended.
#[derive(Debug, Clone)]
pub struct Captured {
    pub stdout: String,
    pub stderr: String,
    /// Exit code; `None` when killed (timeout or signal).
    pub status: Option<i32>,
    pub timed_out: bool,
    pub elapsed: Duration,
}

impl Captured {
    /// The raw log kept beside the results: both streams, labelled.
    pub fn log_text(&self, command: &str) -> String {
        let status = match (self.timed_out, self.status) {
            (true, _) => "killed after timeout".to_string(),
            (false, Some(c)) => format!("exit status {c}"),
            (false, None) => "killed by a signal".to_string(),
        };
        format!(
            "# command: {command}\n# {status}, {:.3} s\n# ---- stdout ----\n{}# ---- stderr ----\n{}",
            self.elapsed.as_secs_f64(),
            self.stdout,
            self.stderr
        )
    }
}

impl JavaRun {
    /// The command line, for logs and error messages.
    pub fn command_line(&self, jdk: &Jdk) -> String {
        let mut parts = vec![jdk.java.display().to_string()];
        parts.extend(self.jvm_args.iter().cloned());
        parts.push("-cp".into());
        parts.push(self.classpath_string());
        parts.push(self.main.clone());
        parts.extend(self.args.iter().cloned());
        parts.join(" ")
    }

    fn classpath_string(&self) -> String {
        std::env::join_paths(&self.classpath)
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_default()
    }
}

/// Runs `run` to completion or until its timeout, capturing everything.
pub fn run_java(jdk: &Jdk, run: &JavaRun) -> std::io::Result<Captured> {
    let start = Instant::now();
    let mut child = Command::new(&jdk.java)
        .args(&run.jvm_args)
        .arg("-cp")
        .arg(run.classpath_string())
        .arg(&run.main)
        .args(&run.args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn_in_group()?;
    let drain = |mut r: Box<dyn Read + Send>| {
        std::thread::spawn(move || {
            let mut buf = Vec::new();
            let _ = r.read_to_end(&mut buf);
            String::from_utf8_lossy(&buf).into_owned()
        })
    };
    let out = drain(Box::new(child.stdout.take().expect("piped")));
    let err = drain(Box::new(child.stderr.take().expect("piped")));
    let (status, timed_out) = match child.wait_timeout(run.timeout)? {
        Some(s) => (s.code(), false),
        None => {
            let _ = child.kill();
            let _ = child.wait();
            (None, true)
        }
    };
    Ok(Captured {
        stdout: out.join().unwrap_or_default(),
        stderr: err.join().unwrap_or_default(),
        status,
        timed_out,
        elapsed: start.elapsed(),
    })
}

/// One measurement a workload reported.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Reported {
    pub bench: String,
    pub iterations: u64,
    pub cycles: u64,
}

/// Judges a finished run of workload `bench`: its results, or the reason to reject it.
pub fn interpret(bench: &str, c: &Captured, timeout: Duration) -> Result<Vec<Reported>, WorkloadFailure> {
    let t = scan(&c.stdout).map_err(|e| WorkloadFailure::Malformed(e.to_string()))?;
    if let Some((_, e)) = t.errors.first() {
        let text = e.to_string();
        return Err(WorkloadFailure::SelfCheck(
            text.trim_start_matches("@jopcal error ").to_string(),
        ));
    }
    if c.timed_out {
        return Err(WorkloadFailure::Timeout(timeout.as_secs()));
    }
    match c.status {
        Some(0) => {}
        Some(code) => {
            let hint = c
                .stderr
                .lines()
                .find(|l| l.contains("Exception") || l.contains("Error"))
                .map(|l| format!(": {}", l.trim()))
                .unwrap_or_default();
            return Err(WorkloadFailure::Exit(code, hint));
        }
        None => return Err(WorkloadFailure::Signal),
    }
    if t.ending == Ending::Missing {
        return Err(WorkloadFailure::NoDone);
    }
    let results: Vec<Reported> = t
        .results
        .into_iter()
        .filter_map(|(_, r)| match r {
            ResultLine::Result {
                bench,
                iterations,
                cycles,
                ..
            } => Some(Reported {
                bench,
                iterations,
                cycles,
            }),
            _ => None,
        })
        .collect();
    if !results.iter().any(|r| r.bench == bench) {
        return Err(WorkloadFailure::NoResult(bench.to_string()));
    }
    Ok(results)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cap(stdout: &str, status: Option<i32>, timed_out: bool) -> Captured {
        Captured {
            stdout: stdout.into(),
            stderr: String::new(),
            status,
            timed_out,
            elapsed: Duration::ZERO,
        }
    }

    const T: Duration = Duration::from_secs(5);

    #[test]
    fn verdicts() {
        let ok = cap("@jopcal result bench=A iter=2 cycles=9\n@jopcal done\n", Some(0), false);
        assert_eq!(interpret("A", &ok, T).unwrap()[0].cycles, 9);
        let cases = [
            (
                cap("@jopcal result bench=A iter=2 cycles=x\n", Some(0), false),
                "malformed result line: stdout line 1, column 38: 'cycles' must be a non-negative integer, found 'x'",
            ),
            (
                cap(
                    "@jopcal error bench=A reason=checksum expected=1 got=2\n@jopcal done status=failed\n",
                    Some(1),
                    false,
                ),
                "the workload reported an error: bench=A reason=checksum expected=1 got=2",
            ),
            (
                cap("@jopcal result bench=A iter=2 cycles=9\n", None, true),
                "no '@jopcal done' within 5 s (killed)",
            ),
            (cap("", Some(3), false), "java exited with status 3"),
            (
                cap("@jopcal result bench=A iter=2 cycles=9\n", Some(0), false),
                "output ended without '@jopcal done'",
            ),
            (
                cap("@jopcal result bench=B iter=2 cycles=9\n@jopcal done\n", Some(0), false),
                "no '@jopcal result' line for A",
            ),
        ];
        for (c, want) in cases {
            assert_eq!(interpret("A", &c, T).unwrap_err().to_string(), want);
        }
    }
}
