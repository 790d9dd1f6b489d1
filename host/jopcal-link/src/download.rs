//! The host side of JOP's two download protocols.
//!
//! Classic (original JOP): every word as 4 bytes, most significant first; the
//! serial-boot microcode echoes every byte. [`Protocol::Classic`] keeps a
//! window of bytes in flight and checks every echoed byte in order (so it runs
//! at line rate while still verifying each byte); [`Protocol::ClassicNoEcho`]
//! is the `down` tool's USB mode: 128-byte chunks, echoes drained but not
//! compared, so corruption on the way goes unnoticed (use it only for bridges
//! that lose echo bytes). Handshake (SpinalHDL port): wait for `0xAA`, answer
//! `0x55` and drain, send the words without echo, read the board's XOR of all
//! words (4 bytes, MSB first), answer `0x00` to boot or `0xFF` to start over;
//! bounded retries.

use crate::error::SettingError;
use crate::image::JopImage;
use crate::link::{drain, recv_byte, recv_exact, Link};
use std::fmt;
use std::io;
use std::str::FromStr;
use std::time::{Duration, Instant};

/// Which download protocol the board's loader speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Protocol {
    Classic,
    ClassicNoEcho,
    Handshake,
}

impl FromStr for Protocol {
    type Err = SettingError;
    fn from_str(s: &str) -> Result<Protocol, SettingError> {
        match s {
            "classic" => Ok(Protocol::Classic),
            "classic-noecho" => Ok(Protocol::ClassicNoEcho),
            "handshake" => Ok(Protocol::Handshake),
            other => Err(SettingError::UnknownProtocol(other.to_string())),
        }
    }
}

impl fmt::Display for Protocol {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.pad(match self {
            Protocol::Classic => "classic",
            Protocol::ClassicNoEcho => "classic-noecho",
            Protocol::Handshake => "handshake",
        })
    }
}

/// How a classic download paces what it sends. JOP's serial-boot microcode
/// echoes each byte into a 2-byte transmit FIFO without waiting for room,
/// and its UART (`sc_uart`) sends two stop bits: 11 bit times a byte against
/// the host's 10. A host that sends back to back outruns the echoes by a
/// bit a byte, and a board whose clock is slow by more still: the FIFO
/// overruns after a few dozen bytes unless the host leaves the transmitter
/// time to catch up.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Pace {
    /// Bursts of [`BURST`] bytes started no faster than `baud` /
    /// `echo_frame_bits` bytes a second, times (1 - `tolerance`), so that a
    /// board whose UART is up to `tolerance` slower than the line keeps up,
    /// and each only when all but [`GATE`] echoes of the one before have
    /// come back: a delay on the way that makes two bursts one run then
    /// costs pace, never an echo ([`LATE_BURST`]s on a line whose echoes
    /// come late). Echoes are verified as they come.
    Line {
        baud: u32,
        echo_frame_bits: u32,
        tolerance: f64,
    },
    /// Up to this many bytes in flight, refilled as their echoes come: for a
    /// board without a UART between (the virtual board on a pseudo-terminal).
    Window(usize),
    /// One word, then its four echoes: safe on any board, one round trip a word.
    Word,
}

/// Bytes sent back to back under [`Pace::Line`]. A burst of n bytes leaves
/// JOP's transmitter about n/11 bytes behind (n × 0.12 on a board 3.5%
/// slow), and a delay on the way may put two of the host's writes on the
/// wire as one: two bursts of 8 still fit the FIFO, two of 16 would not.
pub const BURST: usize = 8;

/// The UART tolerance [`Pace::Line`] allows by default: 3% between host and
/// board, as 8N1 UARTs are specified, and half a percent to spare.
pub const UART_TOLERANCE: f64 = 0.035;

/// Bit times JOP's transmitter spends on a byte: `sc_uart` sends a start
/// bit, 8 data bits and two stop bits (its shift register shifts 11 times
/// a byte), so its echoes of bytes received back to back, 10 bit times
/// apart, fall behind by a bit each. Measured on the tree's RTL: a stream
/// with 1 idle bit after each byte downloads intact, one with 0.36 or 0.9
/// overruns.
pub const JOP_ECHO_FRAME_BITS: u32 = 11;

impl Pace {
    /// The default on a serial line of `baud` bits/s to a JOP board: paced
    /// for JOP's transmitter, the board's echoes gating each burst.
    pub fn line(baud: u32) -> Pace {
        Pace::Line {
            baud,
            echo_frame_bits: JOP_ECHO_FRAME_BITS,
            tolerance: UART_TOLERANCE,
        }
    }

    /// Parses `line`, `line:BITS` (a board whose transmitter spends BITS
    /// bit times a byte, 10 to 12), `window:N` or `word` (`line` at `baud`).
    pub fn parse(s: &str, baud: u32) -> Result<Pace, SettingError> {
        let bad = || SettingError::BadPace(s.to_string());
        match s {
            "line" => Ok(Pace::line(baud)),
            "word" => Ok(Pace::Word),
            _ => {
                if let Some(bits) = s.strip_prefix("line:") {
                    let bits = bits
                        .parse::<u32>()
                        .ok()
                        .filter(|b| (10..=12).contains(b))
                        .ok_or_else(bad)?;
                    return Ok(Pace::Line {
                        baud,
                        echo_frame_bits: bits,
                        tolerance: UART_TOLERANCE,
                    });
                }
                match s.strip_prefix("window:").and_then(|n| n.parse::<usize>().ok()) {
                    Some(n) if n >= 1 => Ok(Pace::Window(n)),
                    _ => Err(bad()),
                }
            }
        }
    }

    /// Under [`Pace::Line`]: the bytes a second sent, and the share of the
    /// line's 10-bit rate that is.
    pub fn line_rate(&self) -> Option<(f64, f64)> {
        match *self {
            Pace::Line {
                baud,
                echo_frame_bits,
                tolerance,
            } => {
                let rate = f64::from(baud) / f64::from(echo_frame_bits.max(1)) * (1.0 - tolerance);
                Some((rate, rate / (f64::from(baud) / 10.0)))
            }
            _ => None,
        }
    }

    /// Under [`Pace::Line`]: the idle bit times (of the host's line) after
    /// each burst of [`BURST`] bytes, for a simulated line that paces in
    /// its own time what this host paces in wall-clock time.
    pub fn idle_bits_per_burst(&self) -> Option<f64> {
        let (_, share) = self.line_rate()?;
        Some(BURST as f64 * 10.0 * (1.0 / share - 1.0))
    }
}

impl fmt::Display for Pace {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Pace::Line {
                echo_frame_bits,
                tolerance,
                ..
            } => {
                let (rate, share) = self.line_rate().unwrap_or_default();
                write!(f, "paced at {rate:.0} bytes/s ({:.1}% of the line", 100.0 * share)?;
                if echo_frame_bits != 10 {
                    write!(
                        f,
                        ": echoes of {echo_frame_bits} bit times, for a board up to {:.1}% slow",
                        100.0 * tolerance
                    )?;
                }
                write!(
                    f,
                    "), each burst of {BURST} when all but {GATE} echoes of the one before have come"
                )
            }
            Pace::Window(n) => write!(f, "{n} bytes in flight"),
            Pace::Word => write!(f, "word by word"),
        }
    }
}

/// Timing and retry settings of a download.
#[derive(Debug, Clone)]
pub struct DownloadOptions {
    pub protocol: Protocol,
    /// Longest wait for the next expected byte (echo, checksum).
    pub byte_timeout: Duration,
    /// Longest wait for the handshake loader's `0xAA`.
    pub sync_timeout: Duration,
    /// Handshake attempts (the reference tools make 3).
    pub attempts: u32,
    /// Classic: how what is sent is paced against the board's echoes.
    pub pace: Pace,
    /// The image is already in the board's memory (a simulation preloaded
    /// it): nothing is sent, and the board's output is read from the start.
    pub preloaded: bool,
}

impl DownloadOptions {
    pub fn new(protocol: Protocol) -> DownloadOptions {
        DownloadOptions {
            protocol,
            byte_timeout: Duration::from_secs(2),
            sync_timeout: Duration::from_secs(5),
            attempts: 3,
            pace: Pace::Window(64),
            preloaded: false,
        }
    }
}

/// What a successful download did.
#[derive(Debug, Clone, Default)]
pub struct DownloadReport {
    pub bytes: usize,
    pub elapsed: Duration,
    /// Handshake attempts used (1 when the first succeeded).
    pub attempts: u32,
    /// Classic: how the download was paced.
    pub pace: Option<Pace>,
    /// One line per noteworthy event: retries and their reasons, skipped bytes.
    pub notes: Vec<String>,
    /// Bytes that arrived after the download's last expected byte: the start
    /// of the program's output.
    pub leftover: Vec<u8>,
}

/// Why a download failed.
#[derive(Debug, thiserror::Error)]
pub enum DownloadError {
    #[error("echo mismatch at word {word} byte {byte}: sent 0x{sent:02x}, the board echoed 0x{got:02x}")]
    EchoMismatch {
        word: usize,
        byte: usize,
        sent: u8,
        got: u8,
    },
    #[error("no echo for word {word} byte {byte} within {timeout:?} (the board lost a byte or stopped)")]
    NoEcho {
        word: usize,
        byte: usize,
        timeout: Duration,
    },
    #[error("no handshake: the board sent no 0xAA within {0:?} (is its loader waiting? {1} other bytes seen)")]
    NoSync(Duration, usize),
    #[error(
        "the board's checksum was wrong in all {attempts} attempts (last: expected 0x{expected:08x}, got 0x{got:08x})"
    )]
    Checksum { attempts: u32, expected: u32, got: u32 },
    #[error("{0}")]
    Failed(String),
    #[error("the link failed: {0}")]
    Link(#[from] io::Error),
}

impl DownloadError {
    /// What to check after this failure, for a download paced as `pace` at
    /// `baud` (where known; a paced line knows its own): a board that never
    /// echoed its first byte right is elsewhere (another port, another baud
    /// rate, not in its loader); one that stopped or garbled later lost a
    /// byte on the way.
    pub fn what_to_check(&self, pace: Pace, baud: Option<u32>) -> String {
        let baud = match (baud, pace) {
            (Some(b), _) | (None, Pace::Line { baud: b, .. }) => format!("{b} baud"),
            _ => "the baud rate given".to_string(),
        };
        match self {
            DownloadError::NoEcho { word: 0, byte: 0, .. } => {
                format!("nothing came back: is the board on this port, in its loader (reset it), at {baud}?")
            }
            DownloadError::EchoMismatch { word: 0, byte: 0, .. } => {
                format!("the first echo was wrong: is the board at {baud} and in its loader (reset it)?")
            }
            DownloadError::NoEcho { .. } if pace == Pace::Word => {
                "the board stopped answering: check its power and cable, then reset it".to_string()
            }
            DownloadError::EchoMismatch { .. } if pace == Pace::Word => {
                "a byte changed on the line: check the cable and the baud rate, then reset the board".to_string()
            }
            DownloadError::NoEcho { .. } | DownloadError::EchoMismatch { .. } => {
                "an echo was lost or changed: reset the board; `--pace word` is safe on any board".to_string()
            }
            DownloadError::NoSync(..) => {
                format!("is the board's handshake loader waiting (reset it), at {baud}?")
            }
            DownloadError::Checksum { .. } => {
                "bytes changed on the line: check the cable and the baud rate".to_string()
            }
            DownloadError::Failed(_) | DownloadError::Link(_) => {
                "check the port and the board, then reset it".to_string()
            }
        }
    }
}

fn image_bytes(image: &JopImage) -> Vec<u8> {
    image.words.iter().flat_map(|w| w.to_be_bytes()).collect()
}

/// Downloads `image` over `link`; `note` receives each noteworthy event as it happens.
pub fn download(
    link: &mut dyn Link,
    image: &JopImage,
    opts: &DownloadOptions,
) -> Result<DownloadReport, DownloadError> {
    let start = Instant::now();
    if opts.preloaded {
        return Ok(DownloadReport {
            attempts: 1,
            notes: vec!["preloaded: nothing sent".into()],
            ..DownloadReport::default()
        });
    }
    let bytes = image_bytes(image);
    let mut report = match opts.protocol {
        Protocol::Classic => classic_verified(link, &bytes, opts)?,
        Protocol::ClassicNoEcho => classic_chunked(link, &bytes, opts)?,
        Protocol::Handshake => handshake(link, image, &bytes, opts)?,
    };
    report.bytes = bytes.len();
    report.elapsed = start.elapsed();
    Ok(report)
}

/// How many bytes a download with a window of `n` sends at once: it
/// waits until half the window is free (a bench that waits for the host's
/// bytes mirrors this rule).
pub fn window_refill(n: usize) -> usize {
    (n / 2).max(1)
}

fn classic_verified(
    link: &mut dyn Link,
    bytes: &[u8],
    opts: &DownloadOptions,
) -> Result<DownloadReport, DownloadError> {
    // Bytes in flight at most: a word, a window, or (paced) a burst and
    // the last [`GATE`] bytes of the one before; on a late line, a larger
    // burst and fewer of them ([`LATE_BURST`]).
    let mut cap = match opts.pace {
        Pace::Word => 4,
        Pace::Window(n) => n.max(1),
        Pace::Line { .. } => BURST + GATE,
    };
    // Seconds per byte between burst starts (zero: no pacing).
    let spacing = match opts.pace.line_rate() {
        Some((rate, _)) if rate > 0.0 => 1.0 / rate,
        _ => 0.0,
    };
    let mut paced = (spacing > 0.0).then(|| EchoLag::new(1.0 / spacing));
    let (mut sent, mut verified) = (0usize, 0usize);
    let mut buf = vec![0u8; 4096];
    let mut report = DownloadReport {
        attempts: 1,
        pace: Some(opts.pace),
        ..DownloadReport::default()
    };
    // A window is refilled once half of it is free: topped up byte by byte
    // as each echo comes, host and board trade one-byte writes and reads
    // (two system calls a byte; 80% of a virtual board's run was that).
    let mut refill = match opts.pace {
        Pace::Window(n) => window_refill(n),
        Pace::Line { .. } => BURST,
        Pace::Word => 1,
    };
    let mut next_burst = Instant::now();
    let mut last_progress = Instant::now();
    while verified < bytes.len() {
        let now = Instant::now();
        let room = cap.saturating_sub(sent - verified);
        let need = refill.min(bytes.len() - sent);
        let may_send =
            sent < bytes.len() && room >= need && now >= next_burst && (opts.pace != Pace::Word || sent == verified);
        if may_send {
            let n = match opts.pace {
                Pace::Line { .. } => refill,
                _ => room,
            }
            .min(room)
            .min(bytes.len() - sent);
            let writing = Instant::now();
            link.send(&bytes[sent..sent + n])?;
            let written = Instant::now();
            sent += n;
            // The next burst is timed from this one's write, not from when
            // it was due: a write the OS delayed would otherwise bring the
            // next closer, and on a board 3% slow the pace has 0.5% to
            // spare. A write that took long (the host was preempted in it)
            // counts from its end, as its bytes may have left only then.
            let base = if written - writing > Duration::from_micros(50) {
                written
            } else {
                writing
            };
            if let Some(p) = paced.as_mut() {
                p.sent(sent, written);
            }
            // Late, the schedule starts again from the write, never with
            // bursts back to back to catch up.
            next_burst = next_burst.max(base) + Duration::from_secs_f64(n as f64 * spacing);
            if sent - verified == n {
                last_progress = Instant::now();
            }
        }
        // Wait for echoes when nothing more may go before they come;
        // otherwise not past the next burst's start: a wait shorter than the
        // OS's poll resolution (1 ms) is slept, then the line polled.
        let room = cap.saturating_sub(sent - verified);
        let waiting_for_echoes = sent == bytes.len()
            || room < refill.min(bytes.len() - sent)
            || (opts.pace == Pace::Word && sent > verified);
        let wait = if waiting_for_echoes {
            opts.byte_timeout
        } else if spacing > 0.0 {
            let left = next_burst
                .saturating_duration_since(Instant::now())
                .min(opts.byte_timeout);
            if left < Duration::from_millis(2) {
                wait_until(next_burst);
                Duration::ZERO
            } else {
                left - Duration::from_millis(1)
            }
        } else {
            Duration::ZERO
        };
        let n = link.recv(&mut buf, wait)?;
        if n == 0 {
            if verified < sent && last_progress.elapsed() >= opts.byte_timeout {
                return Err(DownloadError::NoEcho {
                    word: verified / 4,
                    byte: verified % 4,
                    timeout: opts.byte_timeout,
                });
            }
            continue;
        }
        last_progress = Instant::now();
        for (k, &got) in buf[..n].iter().enumerate() {
            if verified == bytes.len() {
                report.leftover.extend_from_slice(&buf[k..n]);
                break;
            }
            if verified >= sent || got != bytes[verified] {
                return Err(DownloadError::EchoMismatch {
                    word: verified / 4,
                    byte: verified % 4,
                    sent: bytes.get(verified).copied().unwrap_or(0),
                    got,
                });
            }
            verified += 1;
        }
        if let Some(p) = paced.as_mut() {
            p.verified(verified, Instant::now());
            if p.late.is_some() {
                (refill, cap) = (LATE_BURST, LATE_BURST + LATE_GATE);
            }
        }
    }
    if let Some(lag) = paced.and_then(|p| p.late) {
        report.notes.push(format!(
            "the echoes came up to {:.1} ms after their bytes (a USB adapter's latency timer?), and each burst waited for them: a latency of 1 ms (Linux: /sys/bus/usb-serial/devices/ttyUSB0/latency_timer) makes downloads faster",
            lag.as_secs_f64() * 1e3
        ));
    }
    Ok(report)
}

/// Bytes of a burst whose echoes may be awaited when the next goes under
/// [`Pace::Line`]. JOP's transmitter falls a bit behind for every byte that
/// comes back to back (11 bit times out, 10 in), and its FIFO holds two: a
/// run of about 17 bytes at the line's rate overruns a board 3.5% slow. A
/// pace keeps the bursts apart on the wire, but not where they are delayed
/// on their way (a USB adapter's transfers, a loaded machine, a board model
/// that times bytes by when it reads them): there a late burst and the next
/// arrive as one run, and any burst sent while the board is still behind
/// extends it. Waiting for all but two echoes of the burst before, the next
/// finds the board caught up to within its FIFO whatever the delays, so a
/// delay costs pace, never an echo; on time, the sixth echo of a burst of 8
/// comes 76 bit times after its write, and the pace's next burst 91. Measured
/// on a board model that times bytes by when it reads them (`jopcal emu
/// --pty`): two bursts in flight, the previous rule, overran it at word
/// 1,800-5,000 of Kfl on an idle machine. A simulation of the FIFO with the
/// host's writes delayed at random (stalls of up to 9 ms) lost echoes with
/// 16 in flight on lines whose echoes come 2-10 ms late, and none with
/// this gate, so a line with latency waits for its echoes too.
pub const GATE: usize = 2;

/// Under [`Pace::Line`] on a line whose echoes come late (each burst waits
/// for them, and so carries what a round trip carries): bursts of 16, each
/// when all but one echo of the one before have come. With that byte still
/// to go, a burst of 16 is the run of 17 JOP's FIFO takes at 3.5% slow
/// (a simulation of the FIFO with random delays on the host's writes lost
/// none, at twice the throughput of bursts of 8 on lines 2-16 ms late). On
/// time the smaller bursts keep the pace better: the gate of one echo binds
/// when the board is slower than the pace (the throughput bench: 92.8% of a
/// board 3% slow, against 99.1% with bursts of 8).
pub const LATE_BURST: usize = 16;
/// The echoes of a [`LATE_BURST`] that may be awaited when the next goes.
pub const LATE_GATE: usize = 1;

/// Under [`Pace::Line`]: the echoes' lag (the median of the last [`LAGS`]
/// bursts, from a burst's write to its last echo), for the user whose line
/// holds them back (a USB adapter's latency timer, 16 ms by default): each
/// burst waits for them, and a shorter latency makes the download faster.
#[derive(Debug)]
struct EchoLag {
    bytes_per_s: f64,
    /// Bursts awaiting their last echo: the count sent after each, and when.
    waiting: std::collections::VecDeque<(usize, Instant)>,
    lags: std::collections::VecDeque<Duration>,
    /// The longest median lag beyond [`LATE_BURSTS`] bursts' time.
    late: Option<Duration>,
}

/// Bursts whose echoes' lag is kept.
const LAGS: usize = 16;
/// Echoes later than this many bursts' time are a late line's (a burst of
/// 8 and its echoes take about one at the pace's rate).
const LATE_BURSTS: f64 = 4.0;

impl EchoLag {
    fn new(bytes_per_s: f64) -> EchoLag {
        EchoLag {
            bytes_per_s,
            waiting: Default::default(),
            lags: Default::default(),
            late: None,
        }
    }

    fn sent(&mut self, total: usize, at: Instant) {
        self.waiting.push_back((total, at));
    }

    fn verified(&mut self, total: usize, now: Instant) {
        let mut lagged = false;
        while let Some(&(end, at)) = self.waiting.front() {
            if end > total {
                break;
            }
            self.waiting.pop_front();
            if self.lags.len() == LAGS {
                self.lags.pop_front();
            }
            self.lags.push_back(now.saturating_duration_since(at));
            lagged = true;
        }
        if lagged && self.lags.len() >= 4 {
            let mut lags: Vec<Duration> = self.lags.iter().copied().collect();
            lags.sort();
            let median = lags[lags.len() / 2];
            let burst_time = BURST as f64 / self.bytes_per_s;
            if median.as_secs_f64() > LATE_BURSTS * burst_time {
                self.late = Some(self.late.map_or(median, |l| l.max(median)));
            }
        }
    }
}

/// Waits until `t`: a sleep overshoots by tens of microseconds, so the last
/// 200 µs are spun (a paced download loses no pace to it, a UART model no
/// byte time).
pub(crate) fn wait_until(t: Instant) {
    loop {
        let now = Instant::now();
        if now >= t {
            return;
        }
        let left = t - now;
        if left > Duration::from_micros(300) {
            std::thread::sleep(left - Duration::from_micros(200));
        } else {
            std::hint::spin_loop();
        }
    }
}

fn classic_chunked(link: &mut dyn Link, bytes: &[u8], opts: &DownloadOptions) -> Result<DownloadReport, DownloadError> {
    const CHUNK: usize = 128;
    let mut echoed = 0usize;
    let mut buf = [0u8; 512];
    let mut report = DownloadReport {
        attempts: 1,
        notes: vec!["classic-noecho: echoes are drained, not compared; the transfer is not verified".into()],
        ..DownloadReport::default()
    };
    let take = |got: &[u8], echoed: &mut usize, report: &mut DownloadReport| {
        let want = bytes.len() - *echoed;
        if got.len() > want {
            report.leftover.extend_from_slice(&got[want..]);
        }
        *echoed += got.len().min(want);
    };
    for chunk in bytes.chunks(CHUNK) {
        link.send(chunk)?;
        let n = link.recv(&mut buf, Duration::ZERO)?;
        take(&buf[..n], &mut echoed, &mut report);
    }
    while echoed < bytes.len() {
        let n = link.recv(&mut buf, opts.byte_timeout)?;
        if n == 0 {
            report.notes.push(format!(
                "only {echoed} of {} echo bytes came back; carrying on unverified",
                bytes.len()
            ));
            break;
        }
        take(&buf[..n], &mut echoed, &mut report);
    }
    Ok(report)
}

fn handshake(
    link: &mut dyn Link,
    image: &JopImage,
    bytes: &[u8],
    opts: &DownloadOptions,
) -> Result<DownloadReport, DownloadError> {
    let mut report = DownloadReport::default();
    let expected = image.xor();
    let mut last_got = 0;
    for attempt in 1..=opts.attempts.max(1) {
        report.attempts = attempt;
        // Wait for the loader's sync byte, skipping anything else (stale output).
        let deadline = Instant::now() + opts.sync_timeout;
        let mut skipped = 0usize;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return Err(DownloadError::NoSync(opts.sync_timeout, skipped));
            }
            match recv_byte(link, left)? {
                Some(0xAA) => break,
                Some(_) => skipped += 1,
                None => {}
            }
        }
        if skipped > 0 {
            report
                .notes
                .push(format!("attempt {attempt}: skipped {skipped} bytes before the 0xAA"));
        }
        link.send(&[0x55])?;
        // The loader may have queued more 0xAA before it saw our answer.
        let _ = drain(link, Duration::from_millis(5), Duration::from_millis(200))?;
        link.send(bytes)?;
        let mut sum = [0u8; 4];
        let got_n = recv_exact(link, &mut sum, opts.byte_timeout.max(Duration::from_millis(500)))?;
        if got_n < 4 {
            report.notes.push(format!(
                "attempt {attempt}: no checksum from the board within {:?} ({got_n} of 4 bytes; a byte was lost?)",
                opts.byte_timeout
            ));
            continue;
        }
        let got = u32::from_be_bytes(sum);
        if got == expected {
            link.send(&[0x00])?;
            return Ok(report);
        }
        last_got = got;
        report.notes.push(format!(
            "attempt {attempt}: checksum mismatch (expected 0x{expected:08x}, got 0x{got:08x}); asking the board to start over"
        ));
        link.send(&[0xFF])?;
    }
    if report.notes.last().is_some_and(|n| n.contains("no checksum")) {
        return Err(DownloadError::Failed(format!(
            "no checksum from the board in {} attempts: {}",
            report.attempts,
            report.notes.join("; ")
        )));
    }
    Err(DownloadError::Checksum {
        attempts: report.attempts,
        expected,
        got: last_got,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_line_pace_stays_below_a_slow_jop_transmitter() {
        let baud = 115_200;
        let (rate, share) = Pace::line(baud).line_rate().unwrap();
        // JOP's transmitter 3% slow: 11 bit times of a clock 3% slow.
        assert!(rate < f64::from(baud) / 11.0 * 0.97, "{rate}");
        assert!((share - 10.0 / 11.0 * (1.0 - UART_TOLERANCE)).abs() < 1e-12);
        assert_eq!(Pace::parse("line:11", baud).unwrap(), Pace::line(baud));
        // One stop bit: the line's rate, less the tolerance.
        let (one, one_share) = Pace::parse("line:10", baud).unwrap().line_rate().unwrap();
        assert!(one > rate && (one_share - (1.0 - UART_TOLERANCE)).abs() < 1e-12);
        // The idle time after each burst makes a simulated line's average
        // byte as long as the wall-clock pace's.
        let idle = Pace::line(baud).idle_bits_per_burst().unwrap();
        let bits_a_byte = (BURST as f64 * 10.0 + idle) / BURST as f64;
        assert!((f64::from(baud) / bits_a_byte - rate).abs() < 1e-6);
        assert_eq!(Pace::Word.idle_bits_per_burst(), None);
    }

    #[test]
    fn a_failure_says_what_to_check() {
        let t = Duration::from_secs(2);
        let check = |e: DownloadError, pace: Pace| e.what_to_check(pace, None);
        assert!(check(
            DownloadError::NoEcho {
                word: 0,
                byte: 0,
                timeout: t
            },
            Pace::line(115_200)
        )
        .contains("115200 baud"));
        let wrong_first = DownloadError::EchoMismatch {
            word: 0,
            byte: 0,
            sent: 0,
            got: 0x80,
        };
        assert!(check(wrong_first, Pace::Word).contains("the baud rate given"));
        let late = || DownloadError::EchoMismatch {
            word: 366,
            byte: 1,
            sent: 0,
            got: 0x2a,
        };
        assert!(check(late(), Pace::line(115_200)).contains("--pace word"));
        assert!(check(late(), Pace::Word).contains("cable"));
        assert!(check(
            DownloadError::NoEcho {
                word: 9,
                byte: 2,
                timeout: t
            },
            Pace::Word
        )
        .contains("stopped answering"));
    }

    #[test]
    fn late_echoes_are_told_and_timely_ones_are_not() {
        let t0 = Instant::now();
        let ms = |m: u64| t0 + Duration::from_millis(m);
        // 10,000 bytes/s: a burst's echoes 1 ms or 2 ms after its write are
        // on time (a burst takes 0.8 ms, late is 3.2); 16 ms are late.
        for (lag, late) in [(1, false), (2, false), (16, true)] {
            let mut l = EchoLag::new(10_000.0);
            for k in 0..8u64 {
                l.sent(8 * (k as usize + 1), ms(20 * k));
                l.verified(8 * (k as usize + 1), ms(20 * k + lag));
            }
            assert_eq!(l.late, late.then(|| Duration::from_millis(lag)), "{lag} ms");
        }
        // A burst not yet echoed in full is no lag yet.
        let mut part = EchoLag::new(10_000.0);
        part.sent(8, ms(0));
        part.verified(7, ms(50));
        assert!(part.lags.is_empty());
    }

    #[test]
    fn paces_parse_or_name_what_is_wrong() {
        assert_eq!(Pace::parse("word", 9600).unwrap(), Pace::Word);
        assert_eq!(Pace::parse("window:64", 9600).unwrap(), Pace::Window(64));
        for bad in ["line:9", "line:13", "line:x", "window:0", "fast"] {
            let e = Pace::parse(bad, 9600).unwrap_err().to_string();
            assert!(e.contains(bad), "{e}");
        }
    }
}
