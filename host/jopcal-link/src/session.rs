//! One image on a board, end to end: optionally reconfigure the board, wait
//! out stale output, download, capture — and retry when the download failed
//! or the output cannot be trusted. Every attempt is kept with its reason.

use crate::capture::{capture, CaptureOptions, Captured};
use crate::download::{download, DownloadError, DownloadOptions, DownloadReport, Protocol};
use crate::error::StoreError;
use crate::image::JopImage;
use crate::link::{drain, Link};
use jopcal_measure::children::InGroup;
use jopcal_measure::result_line::ResultLine;
use std::process::Command;
use std::time::Duration;

/// Which failed attempts are made again.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum RetryOn {
    /// Any failure: a board's line can drop or garble a byte.
    #[default]
    AnyFailure,
    /// Only what a busy host causes: a failed download, a silence, an
    /// overrun. A deterministic board (the virtual one) that ran the program
    /// to a wrong end would end it the same way again.
    Transient,
}

/// Settings of a session.
#[derive(Debug, Clone)]
pub struct SessionOptions {
    pub download: DownloadOptions,
    pub capture: CaptureOptions,
    /// Attempts after the first.
    pub retries: u32,
    /// Which failures the retries are for.
    pub retry_on: RetryOn,
    /// Shell command run before every attempt (e.g. an openFPGALoader call).
    pub configure: Option<String>,
    /// Shell command that brings the board back to its loader: run before
    /// a retry, and before the first attempt when `reset_first`.
    pub reset: Option<String>,
    /// The image before this one failed: the board is in no known state.
    pub reset_first: bool,
    /// Before downloading, input is drained until quiet this long (stale output).
    pub quiet: Duration,
    /// ... but for at most this long.
    pub quiet_limit: Duration,
}

/// One attempt and what happened in it.
#[derive(Debug)]
pub struct Attempt {
    pub number: u32,
    /// Bytes drained before the download (a board still printing).
    pub stale: Vec<u8>,
    pub download: Result<DownloadReport, DownloadError>,
    pub captured: Option<Captured>,
    /// Why another attempt was made (or the session failed), if it was.
    pub verdict: Option<String>,
}

impl Attempt {
    /// The attempt as a log: notes first, then the raw bytes as received.
    pub fn log_bytes(&self, header: &str) -> Vec<u8> {
        let mut text = format!("# {header}\n# attempt {}\n", self.number);
        if !self.stale.is_empty() {
            text.push_str(&format!(
                "# {} stale bytes drained before the download\n",
                self.stale.len()
            ));
        }
        match &self.download {
            Ok(r) => {
                let secs = r.elapsed.as_secs_f64();
                let paced = r.pace.map(|p| format!(", {p}")).unwrap_or_default();
                text.push_str(&format!(
                    "# download: {} bytes in {secs:.3} s ({:.0} bytes/s{paced}), {} handshake attempt(s)\n",
                    r.bytes,
                    r.bytes as f64 / secs.max(1e-9),
                    r.attempts
                ));
                for n in &r.notes {
                    text.push_str(&format!("# download note: {n}\n"));
                }
            }
            Err(e) => text.push_str(&format!("# download failed: {e}\n")),
        }
        if let Some(c) = &self.captured {
            text.push_str(&format!("# output ended: {}\n", c.ending));
            for (line, t, why) in &c.rejected {
                text.push_str(&format!("# rejected output line {line}: {why}: {t}\n"));
            }
        }
        if let Some(v) = &self.verdict {
            text.push_str(&format!("# verdict: {v}\n"));
        }
        text.push_str("# ---- raw output ----\n");
        let mut bytes = text.into_bytes();
        if let Some(c) = &self.captured {
            bytes.extend_from_slice(&c.raw);
        }
        bytes
    }
}

/// Before a download: reads away output still coming from an earlier run
/// until the line is quiet for `quiet` (at most `limit`). A handshake loader
/// repeats 0xAA, so its line is never quiet; the handshake skips stale bytes
/// itself, and nothing is drained for it.
pub fn drain_stale(
    link: &mut dyn Link,
    protocol: Protocol,
    quiet: Duration,
    limit: Duration,
) -> std::io::Result<Vec<u8>> {
    if protocol == Protocol::Handshake {
        return Ok(Vec::new());
    }
    drain(link, quiet, limit)
}

/// Runs `cmd` with `sh -c`; a failure is one line with its exit status and last output line.
pub fn run_configure(cmd: &str) -> Result<(), crate::ConfigureError> {
    let o = Command::new("sh")
        .args(["-c", cmd])
        .output_in_group()
        .map_err(|source| crate::ConfigureError::Start {
            cmd: cmd.to_string(),
            source,
        })?;
    if o.status.success() {
        return Ok(());
    }
    let text = String::from_utf8_lossy(&o.stderr).into_owned() + &String::from_utf8_lossy(&o.stdout);
    let last = text
        .lines()
        .rev()
        .find(|l| !l.trim().is_empty())
        .unwrap_or("")
        .trim()
        .to_string();
    Err(crate::ConfigureError::Failed {
        cmd: cmd.to_string(),
        status: o.status,
        last_line: last,
    })
}

/// A session that gave up: every attempt it made, and why it gave up.
#[derive(Debug, thiserror::Error)]
#[error("{why}")]
pub struct SessionFailure {
    /// The attempts, each with its raw bytes (for the logs).
    pub attempts: Vec<Attempt>,
    /// Why, in one line.
    pub why: String,
}

/// Downloads and runs `image`; `on_result` stores each accepted result at once.
/// Returns every attempt, or how the session failed.
pub fn run_image(
    link: &mut dyn Link,
    image: &JopImage,
    opts: &SessionOptions,
    on_result: &mut dyn FnMut(&ResultLine) -> Result<(), StoreError>,
    on_attempt: &mut dyn FnMut(&Attempt),
) -> Result<Vec<Attempt>, SessionFailure> {
    let mut attempts: Vec<Attempt> = Vec::new();
    let total = opts.retries + 1;
    let mut download_opts = opts.download.clone();
    for number in 1..=total {
        if number > 1 || opts.reset_first {
            if let Some(cmd) = &opts.reset {
                if let Err(e) = run_configure(cmd) {
                    return Err(SessionFailure {
                        attempts,
                        why: format!("reset: {e}"),
                    });
                }
            }
        }
        // A paced classic download the board's echoes refused: the retry
        // goes word by word, which no UART clock can overrun.
        if let Some(Err(DownloadError::EchoMismatch { .. } | DownloadError::NoEcho { .. })) =
            attempts.last().map(|a| &a.download)
        {
            download_opts.pace = crate::download::Pace::Word;
        }
        if let Some(cmd) = &opts.configure {
            if let Err(e) = run_configure(cmd) {
                return Err(SessionFailure {
                    attempts,
                    why: e.to_string(),
                });
            }
        }
        // A preloaded board is already running its program: all it says is output.
        let drained = if opts.download.preloaded {
            Ok(Vec::new())
        } else {
            drain_stale(link, opts.download.protocol, opts.quiet, opts.quiet_limit)
        };
        let stale = match drained {
            Ok(s) => s,
            Err(e) => {
                return Err(SessionFailure {
                    attempts,
                    why: format!("{}: the line failed before the download: {e}", link.describe()),
                })
            }
        };
        let downloaded = download(link, image, &download_opts);
        let mut a = Attempt {
            number,
            stale,
            download: downloaded,
            captured: None,
            verdict: None,
        };
        match &a.download {
            Err(e) => {
                let check = e.what_to_check(download_opts.pace, None);
                a.verdict = Some(format!("download failed on {}: {e} ({check})", link.describe()));
            }
            Ok(report) => {
                let c = capture(link, &report.leftover, &opts.capture, on_result);
                if !c.clean() {
                    let why = match c.rejected.first() {
                        Some((line, _, reason)) => format!("output line {line} rejected: {reason}"),
                        None => {
                            // The last thing the board said is usually why (e.g. an error before `JVM exit!`).
                            let text = String::from_utf8_lossy(&c.raw).into_owned();
                            let last = text
                                .lines()
                                .rev()
                                .map(str::trim)
                                .find(|l| !l.is_empty() && *l != "JVM exit!")
                                .map(|l| format!(" (last output: {l})"))
                                .unwrap_or_default();
                            format!("the run did not finish: {}{last}", c.ending)
                        }
                    };
                    a.verdict = Some(why);
                }
                a.captured = Some(c);
            }
        }
        on_attempt(&a);
        let failed = a.verdict.clone();
        let lost = a
            .captured
            .as_ref()
            .is_some_and(|c| matches!(c.ending, crate::capture::Ending::Lost(_)));
        let transient = match &a.captured {
            None => true,
            Some(c) => {
                c.rejected.is_empty()
                    && matches!(
                        c.ending,
                        crate::capture::Ending::Silent(_) | crate::capture::Ending::Overrun(_)
                    )
            }
        };
        let again = opts.retry_on == RetryOn::AnyFailure || transient;
        attempts.push(a);
        match failed {
            None => return Ok(attempts),
            Some(why) if number == total || lost || !again => {
                return Err(SessionFailure {
                    attempts,
                    why: format!("{why} (after {number} attempt(s))"),
                });
            }
            Some(_) => {}
        }
    }
    unreachable!("the loop returns on its last attempt")
}
