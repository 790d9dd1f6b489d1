//! A board stand-in: the board-side loader, a program, and optional faults,
//! serving one image after another on the board end of a link. The tests and
//! benchmarks drive the host side against it; the virtual board plugs in its
//! own program.

use crate::board::{receive, LoaderLog, LoaderOptions};
use crate::fault::{FaultPlan, FaultyLink};
use crate::image::JopImage;
use crate::link::Link;
use crate::uart::UartLink;
use jopcal_measure::result_line::line_check;
use std::io;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

/// What runs on the board once an image is in.
pub trait BoardProgram: Send {
    /// Runs `image`; everything it prints goes to `uart`.
    fn run(&mut self, image: &JopImage, uart: &mut dyn FnMut(&[u8]) -> io::Result<()>) -> io::Result<()>;
}

/// A program for tests: prints one result line whose cycle count is the sum
/// of the image's payload words (mod 10^9), so a corrupted image shows up as a
/// wrong count, then `@jopcal done`, and, as JOP does when `main` returns,
/// `JVM exit!` after `exit_delay` (a busy board's trailing line arrives late).
pub struct ChecksumProgram {
    pub bench: String,
    /// `None`: no `JVM exit!` line (a program that never returns from `main`).
    pub exit_delay: Option<std::time::Duration>,
}

impl ChecksumProgram {
    /// A program that prints `JVM exit!` right after `@jopcal done`, as JOP does.
    pub fn new(bench: &str) -> Self {
        ChecksumProgram {
            bench: bench.into(),
            exit_delay: Some(std::time::Duration::ZERO),
        }
    }

    /// The cycle count this program reports for `image`.
    pub fn cycles_for(image: &JopImage) -> u64 {
        image.words.iter().skip(1).map(|w| u64::from(*w)).sum::<u64>() % 1_000_000_000
    }
}

impl BoardProgram for ChecksumProgram {
    fn run(&mut self, image: &JopImage, uart: &mut dyn FnMut(&[u8]) -> io::Result<()>) -> io::Result<()> {
        let body = format!(
            "@jopcal result bench={} iter=1 cycles={}",
            self.bench,
            Self::cycles_for(image)
        );
        uart(
            format!(
                "booted {} words\n{body} chk={}\n@jopcal done\n",
                image.words.len(),
                line_check(&body)
            )
            .as_bytes(),
        )?;
        match self.exit_delay {
            Some(delay) => {
                std::thread::sleep(delay);
                uart(b"JVM exit!\n")
            }
            None => Ok(()),
        }
    }
}

/// The board's own record of a session.
#[derive(Debug, Default, Clone)]
pub struct BoardLog {
    pub images: usize,
    pub loader: Vec<String>,
    pub faults: Vec<String>,
    pub ended: Option<String>,
}

/// Serves images on `link` until `stop` is set, the link fails, or `max_images` were run.
pub fn serve<L: Link>(
    link: L,
    loader: LoaderOptions,
    program: &mut dyn BoardProgram,
    plan: FaultPlan,
    seed: u64,
    stop: Arc<AtomicBool>,
    log: Arc<Mutex<BoardLog>>,
) {
    let timing = plan.uart_timing();
    let mut link = FaultyLink::new(UartLink::new(link, timing, loader.host_writes.clone()), plan, seed);
    let end = |log: &Arc<Mutex<BoardLog>>, why: String| {
        if let Ok(mut l) = log.lock() {
            l.ended = Some(why);
        }
    };
    for (bytes, pause) in link.preamble() {
        if link.send(&bytes).is_err() {
            break;
        }
        std::thread::sleep(pause);
    }
    loop {
        let mut llog = LoaderLog::default();
        let stopped = || stop.load(Ordering::Relaxed);
        // A handshake loader writes its sync byte and checksum as a program
        // does: only the classic one echoes without looking for room.
        link.inner_mut()
            .set_loading(loader.protocol != crate::download::Protocol::Handshake);
        let got = receive(&mut link, &loader, &mut llog, &stopped);
        if let Ok(mut l) = log.lock() {
            l.loader.append(&mut llog.restarts);
            l.faults.append(&mut link.injected);
            let lost = std::mem::take(&mut link.inner_mut().lost_echoes);
            if lost > 0 {
                l.faults
                    .push(format!("the transmit FIFO was full: {lost} echo(es) lost"));
            }
        }
        let image = match got {
            Ok(Some(img)) => img,
            // A reset: the transmitter's bytes are lost, the loader starts over.
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {
                link.inner_mut().reset();
                continue;
            }
            Ok(None) => return end(&log, "stopped".into()),
            Err(e) => return end(&log, format!("link: {e}")),
        };
        // The last echoes reach the host before the program's first output.
        if let Err(e) = link.inner_mut().flush() {
            return end(&log, format!("link: {e}"));
        }
        link.inner_mut().set_loading(false);
        let mut uart = |b: &[u8]| link.send(b);
        if let Err(e) = program.run(&image, &mut uart) {
            return end(&log, format!("link: {e}"));
        }
        if let Ok(mut l) = log.lock() {
            l.images += 1;
            l.faults.append(&mut link.injected);
        }
    }
}
