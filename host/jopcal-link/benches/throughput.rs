//! Download throughput over a real pseudo-terminal as a fraction of the line
//! rate's payload capacity (8N1: 10 bit times per byte). A pseudo-terminal
//! has no line rate of its own, so the board end takes each byte only when a
//! UART at the given rate would have delivered it, and its own bytes (echoes,
//! checksum) leave at the same rate. Prints one line per protocol and rate.

use jopcal_link::board::{receive, LoaderLog, LoaderOptions};
use jopcal_link::link::Link;
use jopcal_link::{download, DownloadOptions, JopImage, Protocol, PseudoTerminal};
use std::io;
use std::time::{Duration, Instant};

/// The board end of a UART at `baud`: received bytes become available one
/// byte time apart (read from the pseudo-terminal in bulk, then released on
/// schedule). Transmission runs beside reception, as on a real UART, so the
/// board's own bytes are not delayed here.
struct Uart<L: Link> {
    inner: L,
    byte_time: Duration,
    last_arrival: Instant,
    queue: std::collections::VecDeque<(Instant, u8)>,
}

fn wait_until(t: Instant) {
    loop {
        let now = Instant::now();
        if now >= t {
            return;
        }
        let left = t - now;
        if left > Duration::from_micros(200) {
            std::thread::sleep(left - Duration::from_micros(150));
        } else {
            std::hint::spin_loop();
        }
    }
}

impl<L: Link> Link for Uart<L> {
    fn send(&mut self, bytes: &[u8]) -> io::Result<()> {
        self.inner.send(bytes)
    }

    fn recv(&mut self, buf: &mut [u8], timeout: Duration) -> io::Result<usize> {
        if self.queue.is_empty() {
            let mut bulk = [0u8; 4096];
            let n = self.inner.recv(&mut bulk, timeout)?;
            let mut t = self.last_arrival.max(Instant::now());
            for b in &bulk[..n] {
                t += self.byte_time;
                self.queue.push_back((t, *b));
            }
            self.last_arrival = t;
        }
        let Some((at, b)) = self.queue.pop_front() else {
            return Ok(0);
        };
        wait_until(at);
        buf[0] = b;
        Ok(1)
    }

    fn describe(&self) -> String {
        self.inner.describe()
    }
}

fn measure(protocol: Protocol, baud: u32, words: usize) -> (f64, f64) {
    let pty = PseudoTerminal::open().unwrap();
    let path = pty.path.clone();
    let byte_time = Duration::from_secs_f64(10.0 / f64::from(baud));
    let (done_tx, done_rx) = std::sync::mpsc::channel::<()>();
    let board = std::thread::spawn(move || {
        let mut uart = Uart {
            inner: pty.board,
            byte_time,
            last_arrival: Instant::now(),
            queue: Default::default(),
        };
        let mut opts = LoaderOptions::new(protocol);
        opts.sync_period = Duration::from_millis(50);
        let image = receive(&mut uart, &opts, &mut LoaderLog::default(), &|| false);
        // Keep the line open until the host has read everything.
        let _ = done_rx.recv();
        image
    });
    let payload: Vec<u32> = (0..words as u32).map(|i| i.wrapping_mul(2_654_435_761)).collect();
    let image = JopImage::from_payload(&payload);
    let mut link = jopcal_link::open(&path, baud, false).unwrap();
    // Let the handshake loader's first sync byte arrive, so only the transfer is timed.
    std::thread::sleep(Duration::from_millis(100));
    let start = Instant::now();
    let result = download(link.as_mut(), &image, &DownloadOptions::new(protocol));
    let elapsed = start.elapsed().as_secs_f64();
    let _ = done_tx.send(());
    let report = match result {
        Ok(r) => r,
        Err(e) => panic!(
            "{protocol} at {baud}: {e}; board: {:?}",
            board.join().map(|r| r.map(|i| i.map(|i| i.words.len())))
        ),
    };
    let received = board.join().unwrap().unwrap().expect("an image");
    assert_eq!(received, image);
    let ideal = report.bytes as f64 * 10.0 / f64::from(baud);
    (ideal, elapsed)
}

fn main() {
    if !std::env::args().any(|a| a == "--bench") {
        return;
    }
    println!("download throughput over a pseudo-terminal paced at the line rate (8N1):");
    for (protocol, baud, words) in [
        (Protocol::Classic, 115_200, 4_000),
        (Protocol::ClassicNoEcho, 115_200, 4_000),
        (Protocol::Handshake, 115_200, 4_000),
        (Protocol::Handshake, 2_000_000, 20_000),
    ] {
        let (ideal, elapsed) = measure(protocol, baud, words);
        println!(
            "  {protocol:<15} {baud:>9} baud {words:>6} words: {elapsed:.3} s for an ideal {ideal:.3} s = {:.1}% of payload capacity",
            100.0 * ideal / elapsed
        );
    }
}
