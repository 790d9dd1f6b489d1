//! A board's UART in time, on the board end of a pseudo-terminal (which
//! moves bytes at once): bytes from the host arrive no faster than the
//! host's line rate; the board's echoes and output leave through JOP's
//! transmitter, a FIFO of [`UartTiming::tx_fifo`] bytes before a shift
//! register clocked by the board's own, possibly slow or fast, UART clock,
//! [`UartTiming::tx_frame_bits`] bit times a byte;
//! and they reach the host in batches, as a USB adapter's latency timer
//! delivers them. JOP's serial-boot microcode writes each echo into that
//! FIFO without looking for room (`asm/src/jvm.asm`): an echo that finds it
//! full is lost, as on the board. A program's output waits for room, as
//! JOP's `System.out` does. A reset mid-download loses what the transmitter
//! holds and starts the loader over.

use crate::link::Link;
use std::collections::VecDeque;
use std::io;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{Receiver, RecvTimeoutError};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// When the host wrote each byte it sent, in order: a pseudo-terminal moves
/// bytes in batches a few milliseconds late under load, where a UART's wire
/// takes them as they are written. A host that records its writes here
/// ([`HostWrites::link`]) gives the board's UART model the wire's timing;
/// without it the model times bytes by when they come out of the terminal.
#[derive(Debug, Clone, Default)]
pub struct HostWrites(Arc<Mutex<VecDeque<Instant>>>);

impl HostWrites {
    /// `link`, recording the time of each byte written to it here.
    pub fn link<L: Link>(&self, link: L) -> RecordedLink<L> {
        RecordedLink {
            inner: link,
            writes: self.clone(),
        }
    }

    /// The write times of the next `n` bytes (the times it has).
    fn take(&self, n: usize) -> Vec<Instant> {
        let mut q = self.0.lock().unwrap_or_else(|e| e.into_inner());
        let k = n.min(q.len());
        q.drain(..k).collect()
    }
}

/// A host's link that records when it writes each byte (see [`HostWrites`]).
pub struct RecordedLink<L: Link> {
    inner: L,
    writes: HostWrites,
}

impl<L: Link> Link for RecordedLink<L> {
    fn send(&mut self, bytes: &[u8]) -> io::Result<()> {
        {
            let now = Instant::now();
            let mut q = self.writes.0.lock().unwrap_or_else(|e| e.into_inner());
            q.extend(std::iter::repeat_n(now, bytes.len()));
        }
        self.inner.send(bytes)
    }

    fn recv(&mut self, buf: &mut [u8], timeout: Duration) -> io::Result<usize> {
        self.inner.recv(buf, timeout)
    }

    fn describe(&self) -> String {
        self.inner.describe()
    }
}

/// What the reading thread saw: bytes with the time they came, or the error
/// that ended it.
type Arrival = io::Result<(Instant, Vec<u8>)>;

/// A thread that only reads the line and stamps what comes with the time it
/// came: the board's own thread may be busy (echoing, sleeping until a byte
/// is due), and a byte stamped late would be timed as if the host had sent
/// it late, which it did not.
struct Arrivals {
    from: Receiver<Arrival>,
    stop: Arc<AtomicBool>,
}

impl Arrivals {
    fn start(mut reader: Box<dyn Link>) -> Arrivals {
        let (to, from) = std::sync::mpsc::channel();
        let stop = Arc::new(AtomicBool::new(false));
        let stopped = stop.clone();
        std::thread::spawn(move || {
            let mut buf = [0u8; 4096];
            while !stopped.load(Ordering::Relaxed) {
                let got = reader
                    .recv(&mut buf, Duration::from_millis(50))
                    .map(|n| (Instant::now(), buf[..n].to_vec()));
                let failed = got.is_err();
                if matches!(&got, Ok((_, b)) if b.is_empty()) {
                    continue;
                }
                if to.send(got).is_err() || failed {
                    return;
                }
            }
        });
        Arrivals { from, stop }
    }
}

impl Drop for Arrivals {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
    }
}

/// The line's timing as the board sees it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct UartTiming {
    /// The host's line rate, bits per second (8N1: 10 bits a byte).
    pub host_baud: u32,
    /// The board's UART clock against the host's, in percent: −1.4 runs
    /// 1.4% slow (its bytes take 1/0.986 of the host's time).
    pub board_error_pct: f64,
    /// The transmit FIFO's depth (JOP's `scio_min`: 2).
    pub tx_fifo: usize,
    /// Bit times the transmitter spends on a byte ([`crate::download::JOP_ECHO_FRAME_BITS`]).
    pub tx_frame_bits: u32,
    /// The host gets the board's bytes in batches this far apart (zero: at once).
    pub latency: Duration,
}

impl UartTiming {
    fn host_byte(&self) -> Duration {
        Duration::from_secs_f64(10.0 / f64::from(self.host_baud.max(1)))
    }

    fn board_byte(&self) -> Duration {
        self.host_byte()
            .mul_f64(f64::from(self.tx_frame_bits) / 10.0)
            .div_f64((1.0 + self.board_error_pct / 100.0).max(0.01))
    }
}

/// The board end of a link, timed as [`UartTiming`] says.
pub struct UartLink<L: Link> {
    inner: L,
    /// `None`: bytes pass untimed (a board with no UART between).
    timing: Option<UartTiming>,
    epoch: Instant,
    /// Bytes from the host with the time each is fully received.
    rx: VecDeque<(Instant, u8)>,
    last_rx: Instant,
    /// When each byte in the transmitter starts shifting out.
    tx_starts: VecDeque<Instant>,
    tx_end: Instant,
    /// The board's bytes with the time the host gets them.
    out: VecDeque<(Instant, u8)>,
    /// JOP's classic loader is receiving: what it sends is an echo, written
    /// without waiting for room.
    loading: bool,
    /// When the last byte handed to the loader was received: its echo is
    /// written then (the microcode echoes at once), whatever this thread's
    /// scheduling.
    received_at: Option<Instant>,
    /// Echoes the full FIFO lost.
    pub lost_echoes: u64,
    /// The line's reading thread, where the link can be shared.
    arrivals: Option<Arrivals>,
    /// The host's write times, where the host records them.
    host_writes: Option<HostWrites>,
}

impl<L: Link> UartLink<L> {
    /// `host_writes`: the host's write times, where it records them.
    pub fn new(inner: L, timing: Option<UartTiming>, host_writes: Option<HostWrites>) -> UartLink<L> {
        let now = Instant::now();
        let arrivals = timing.and_then(|_| inner.reader()).map(Arrivals::start);
        UartLink {
            arrivals,
            host_writes,
            inner,
            timing,
            epoch: now,
            rx: VecDeque::new(),
            last_rx: now,
            tx_starts: VecDeque::new(),
            tx_end: now,
            out: VecDeque::new(),
            loading: true,
            received_at: None,
            lost_echoes: 0,
        }
    }

    /// JOP's classic loader, which echoes into the FIFO without looking for
    /// room, is (or is no longer) receiving an image.
    pub fn set_loading(&mut self, loading: bool) {
        self.loading = loading;
    }

    /// The board resets: what the transmitter holds is lost, bytes on their
    /// way in are dropped.
    pub fn reset(&mut self) {
        let now = Instant::now();
        self.out.retain(|(at, _)| *at <= now);
        self.tx_starts.clear();
        self.tx_end = now;
        self.rx.clear();
    }

    /// Waits until every byte the board sent has reached the host.
    pub fn flush(&mut self) -> io::Result<()> {
        while let Some(&(at, _)) = self.out.back() {
            self.deliver_until(at)?;
        }
        Ok(())
    }

    /// Writes the board's bytes due by `until` to the host, each at its time.
    fn deliver_until(&mut self, until: Instant) -> io::Result<()> {
        loop {
            let now = Instant::now();
            let due: Vec<u8> = std::iter::from_fn(|| match self.out.front() {
                Some(&(at, b)) if at <= now => {
                    self.out.pop_front();
                    Some(b)
                }
                _ => None,
            })
            .collect();
            if !due.is_empty() {
                self.inner.send(&due)?;
            }
            if now >= until {
                return Ok(());
            }
            let next = self.out.front().map_or(until, |(at, _)| (*at).min(until));
            crate::download::wait_until(next);
        }
    }

    /// When the host gets a byte that has left the board at `at`.
    fn arrival(&self, at: Instant, l: Duration) -> Instant {
        if l.is_zero() {
            return at;
        }
        let since = at.saturating_duration_since(self.epoch).as_secs_f64();
        let batches = (since / l.as_secs_f64()).ceil();
        self.epoch + l.mul_f64(batches)
    }

    fn transmit(&mut self, b: u8, timing: UartTiming) {
        // The echo of the byte just received goes when it came; anything
        // else the loader sends (a sync byte, a checksum) when it is sent.
        let now = match self.received_at.take() {
            Some(t) if self.loading => t,
            _ => Instant::now(),
        };
        while self.tx_starts.front().is_some_and(|s| *s <= now) {
            self.tx_starts.pop_front();
        }
        if self.loading && self.tx_starts.len() >= timing.tx_fifo {
            self.lost_echoes += 1;
            return;
        }
        let start = self.tx_end.max(now);
        self.tx_end = start + timing.board_byte();
        self.tx_starts.push_back(start);
        let at = self.arrival(self.tx_end, timing.latency);
        self.out.push_back((at, b));
    }
}

impl<L: Link> Link for UartLink<L> {
    fn send(&mut self, bytes: &[u8]) -> io::Result<()> {
        let Some(timing) = self.timing else {
            return self.inner.send(bytes);
        };
        for &b in bytes {
            self.transmit(b, timing);
        }
        if self.loading {
            self.deliver_until(Instant::now())
        } else {
            // A program's print returns when its bytes are in the FIFO:
            // near enough, when all but the FIFO's worth have left.
            self.flush()
        }
    }

    fn recv(&mut self, buf: &mut [u8], timeout: Duration) -> io::Result<usize> {
        let Some(timing) = self.timing else {
            return self.inner.recv(buf, timeout);
        };
        let deadline = Instant::now() + timeout;
        loop {
            if let Some(&(at, b)) = self.rx.front() {
                self.deliver_until(at)?;
                self.rx.pop_front();
                self.received_at = Some(at);
                buf[0] = b;
                return Ok(1);
            }
            let now = Instant::now();
            self.deliver_until(now)?;
            if now >= deadline {
                return Ok(0);
            }
            let wait = self
                .out
                .front()
                .map_or(deadline, |(at, _)| (*at).min(deadline))
                .saturating_duration_since(now)
                .max(Duration::from_micros(100));
            let (came, bytes) = match &self.arrivals {
                Some(a) => match a.from.recv_timeout(wait) {
                    Ok(got) => got?,
                    Err(RecvTimeoutError::Timeout) => continue,
                    Err(RecvTimeoutError::Disconnected) => {
                        return Err(io::Error::new(io::ErrorKind::BrokenPipe, "the line's reader ended"))
                    }
                },
                None => {
                    let mut bulk = [0u8; 4096];
                    let n = self.inner.recv(&mut bulk, wait)?;
                    (Instant::now(), bulk[..n].to_vec())
                }
            };
            // The host's UART starts a byte when it is written, or when the
            // one before it is done.
            let written = self
                .host_writes
                .as_ref()
                .map(|w| w.take(bytes.len()))
                .unwrap_or_default();
            let mut t = self.last_rx;
            for (k, b) in bytes.into_iter().enumerate() {
                t = t.max(written.get(k).copied().unwrap_or(came)) + timing.host_byte();
                self.rx.push_back((t, b));
            }
            self.last_rx = t;
        }
    }

    fn describe(&self) -> String {
        match self.timing {
            Some(t) => format!(
                "{} (a UART {:+.1}% against the host's {} baud)",
                self.inner.describe(),
                t.board_error_pct,
                t.host_baud
            ),
            None => self.inner.describe(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Both ends in memory: what the host sends, and what reaches it when.
    struct Memory {
        incoming: VecDeque<u8>,
        sent: Vec<(Instant, u8)>,
    }

    impl Link for Memory {
        fn send(&mut self, bytes: &[u8]) -> io::Result<()> {
            let now = Instant::now();
            self.sent.extend(bytes.iter().map(|b| (now, *b)));
            Ok(())
        }
        fn recv(&mut self, buf: &mut [u8], _: Duration) -> io::Result<usize> {
            let n = self.incoming.len().min(buf.len());
            for (k, b) in self.incoming.drain(..n).enumerate() {
                buf[k] = b;
            }
            Ok(n)
        }
        fn describe(&self) -> String {
            "memory".into()
        }
    }

    /// Echoes `n` bytes sent back to back; returns the echoes lost.
    fn echo_burst(n: usize, error_pct: f64, frame_bits: u32) -> u64 {
        let mem = Memory {
            incoming: (0..n).map(|i| i as u8).collect(),
            sent: Vec::new(),
        };
        let mut u = UartLink::new(
            mem,
            Some(UartTiming {
                host_baud: 1_000_000,
                board_error_pct: error_pct,
                tx_fifo: 2,
                tx_frame_bits: frame_bits,
                latency: Duration::ZERO,
            }),
            None,
        );
        let mut b = [0u8; 1];
        for _ in 0..n {
            assert_eq!(u.recv(&mut b, Duration::from_secs(1)).unwrap(), 1);
            u.send(&b).unwrap();
        }
        u.flush().unwrap();
        assert_eq!(u.inner.sent.len() as u64 + u.lost_echoes, n as u64);
        u.lost_echoes
    }

    #[test]
    fn a_slow_uart_loses_echoes_of_a_long_burst_and_a_fast_one_does_not() {
        // A UART with one stop bit keeps up unless its clock is slow.
        assert_eq!(echo_burst(400, 0.0, 10), 0);
        assert_eq!(echo_burst(400, 3.0, 10), 0);
        assert!(echo_burst(400, -3.0, 10) > 0);
        // A short burst fits: the FIFO absorbs what the board falls behind.
        assert_eq!(echo_burst(30, -3.0, 10), 0);
        // JOP's, with two, falls behind a bit a byte even on time.
        assert!(echo_burst(400, 0.0, 11) > 0);
        assert!(echo_burst(400, 3.0, 11) > 0);
        assert_eq!(echo_burst(16, -3.0, 11), 0);
    }
}
