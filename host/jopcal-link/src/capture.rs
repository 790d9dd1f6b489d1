//! Capture: after the download, read the program's output line by line, keep
//! every raw byte, hand each verified `@jopcal result` line to the caller as
//! it arrives (so it can be stored durably at once), and stop at
//! `@jopcal done`, JOP's `JVM exit!`, or a timeout.

use crate::error::StoreError;
use crate::link::Link;
use jopcal_measure::result_line::{parse_line, ResultLine};
use std::time::{Duration, Instant};

/// Limits of a capture.
#[derive(Debug, Clone)]
pub struct CaptureOptions {
    /// Longest silence between two lines.
    pub line_timeout: Duration,
    /// Longest whole run.
    pub total_timeout: Duration,
    /// Reject result lines without a `chk` (jop-firmware's harness always prints one).
    pub require_check: bool,
    /// After `@jopcal done`, how long to keep reading for JOP's trailing
    /// `JVM exit!`. The board prints it after the harness's last line; if the
    /// capture stopped at `@jopcal done`, that line could arrive while the
    /// next download is under way and be read as the loader's echo. Zero ends
    /// the capture at `@jopcal done`.
    pub exit_wait: Duration,
}

/// How the output ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Ending {
    Done {
        status: Option<String>,
    },
    JvmExit,
    /// No line for `line_timeout`.
    Silent(Duration),
    /// The run took longer than `total_timeout`.
    Overrun(Duration),
    /// The link failed or the board went away.
    Lost(String),
}

impl Ending {
    /// True when the program finished by itself.
    pub fn finished(&self) -> bool {
        matches!(self, Ending::Done { .. } | Ending::JvmExit)
    }
}

impl std::fmt::Display for Ending {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Ending::Done { status: None } => write!(f, "@jopcal done"),
            Ending::Done { status: Some(s) } => write!(f, "@jopcal done status={s}"),
            Ending::JvmExit => write!(f, "JVM exit!"),
            Ending::Silent(d) => write!(f, "no output for {:.1} s", d.as_secs_f64()),
            Ending::Overrun(d) => write!(f, "the run exceeded {:.1} s", d.as_secs_f64()),
            Ending::Lost(e) => write!(f, "the link was lost: {e}"),
        }
    }
}

/// Everything a capture saw.
#[derive(Debug, Clone)]
pub struct Captured {
    /// Every byte received, as received.
    pub raw: Vec<u8>,
    pub results: Vec<ResultLine>,
    /// `(line number, text, reason)` of `@jopcal` lines that were rejected
    /// (malformed, failed check, or an `error` record).
    pub rejected: Vec<(usize, String, String)>,
    pub ending: Ending,
}

impl Captured {
    /// True when the output can be trusted: it ended by itself and no line was rejected.
    pub fn clean(&self) -> bool {
        self.ending.finished() && self.rejected.is_empty()
    }
}

/// Reads until the run ends. `initial` are bytes already received (after the
/// download's last byte). `on_result` gets each accepted result line at once;
/// an error from it stops the capture.
pub fn capture(
    link: &mut dyn Link,
    initial: &[u8],
    opts: &CaptureOptions,
    on_result: &mut dyn FnMut(&ResultLine) -> Result<(), StoreError>,
) -> Captured {
    let start = Instant::now();
    let mut c = Captured {
        raw: initial.to_vec(),
        results: Vec::new(),
        rejected: Vec::new(),
        ending: Ending::Silent(opts.line_timeout),
    };
    let mut pending: Vec<u8> = initial.to_vec();
    let mut line_no = 0usize;
    let mut last_line = Instant::now();
    // Set once `@jopcal done` was read: its status, and until when `JVM exit!`
    // is awaited (`None`: until the line is silent).
    let mut done: Option<(Option<String>, Option<Instant>)> = None;
    let mut buf = [0u8; 4096];
    loop {
        // Complete lines first.
        while let Some(nl) = pending.iter().position(|b| *b == b'\n') {
            let line: Vec<u8> = pending.drain(..=nl).collect();
            line_no += 1;
            last_line = Instant::now();
            let text = String::from_utf8_lossy(&line)
                .trim_end_matches(['\r', '\n'])
                .to_string();
            if text.trim() == "JVM exit!" {
                c.ending = match done.take() {
                    Some((status, _)) => Ending::Done { status },
                    None => Ending::JvmExit,
                };
                return c;
            }
            if done.is_some() {
                // Output after the harness's last line: kept in `raw`, not read.
                continue;
            }
            match parse_line(&text) {
                Ok(None) => {}
                Ok(Some(ResultLine::Done { status })) => {
                    if opts.exit_wait.is_zero() {
                        c.ending = Ending::Done { status };
                        return c;
                    }
                    done = Some((status, Instant::now().checked_add(opts.exit_wait)));
                }
                Ok(Some(r @ ResultLine::Result { .. })) => {
                    if opts.require_check && !text.contains(" chk=") {
                        c.rejected
                            .push((line_no, text, "no chk (the harness always prints one)".into()));
                        continue;
                    }
                    if let Err(e) = on_result(&r) {
                        c.ending = Ending::Lost(e.to_string());
                        return c;
                    }
                    c.results.push(r);
                }
                Ok(Some(ResultLine::Error { .. })) => {
                    c.rejected
                        .push((line_no, text, "the workload reported an error".into()));
                }
                Err(e) => c.rejected.push((line_no, text, e.to_string())),
            }
        }
        let now = Instant::now();
        if let Some((status, until)) = &done {
            // The run is over either way: the trailing line is only awaited.
            let silent = now - last_line >= opts.line_timeout;
            if until.is_some_and(|u| now >= u) || silent || now - start > opts.total_timeout {
                c.ending = Ending::Done { status: status.clone() };
                return c;
            }
        }
        if now - start > opts.total_timeout {
            c.ending = Ending::Overrun(opts.total_timeout);
            return c;
        }
        let left_line = opts.line_timeout.saturating_sub(now - last_line);
        if left_line.is_zero() {
            c.ending = Ending::Silent(opts.line_timeout);
            return c;
        }
        let mut wait = left_line
            .min(opts.total_timeout.saturating_sub(now - start))
            .min(Duration::from_millis(200));
        if let Some((_, Some(until))) = &done {
            wait = wait.min(until.saturating_duration_since(now));
        }
        match link.recv(&mut buf, wait) {
            Ok(n) => {
                c.raw.extend_from_slice(&buf[..n]);
                pending.extend_from_slice(&buf[..n]);
            }
            Err(e) => {
                c.ending = Ending::Lost(e.to_string());
                return c;
            }
        }
    }
}
