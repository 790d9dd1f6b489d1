//! Download throughput over a real pseudo-terminal, as a fraction of the
//! board's own line rate, against the board's UART model
//! (`jopcal_link::uart`: the host's line rate, the board's clock error,
//! JOP's 2-byte transmit FIFO and its transmitter's frame), with the host's
//! writes timing the wire. The board's own line rate is what its UART can
//! carry: a classic download's every byte is echoed, so its transmitter's
//! frame at its own clock (11 bit times for JOP's `sc_uart`, 10 for a UART
//! with one stop bit), and never more than the host's 10-bit line. One line
//! per protocol, pace, frame and clock error;
//! `cargo bench -p jopcal-link --bench throughput`.

use jopcal_link::board::LoaderOptions;
use jopcal_link::fault::FaultPlan;
use jopcal_link::peer::{serve, BoardLog, ChecksumProgram};
use jopcal_link::uart::HostWrites;
use jopcal_link::{download, DownloadOptions, JopImage, Pace, Protocol, PseudoTerminal};
use std::sync::atomic::AtomicBool;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// Seconds one download of `words` took, and the board's line-rate ideal.
fn measure(
    protocol: Protocol,
    pace: Pace,
    baud: u32,
    (error_pct, frame): (f64, u32),
    words: usize,
) -> Result<(f64, f64), String> {
    let pty = PseudoTerminal::open().unwrap();
    let path = pty.path.clone();
    let writes = HostWrites::default();
    let mut loader = LoaderOptions::new(protocol);
    loader.sync_period = Duration::from_millis(50);
    loader.host_writes = Some(writes.clone());
    let plan: FaultPlan = format!("baud={baud},uart={error_pct},frame={frame}").parse().unwrap();
    let stop = Arc::new(AtomicBool::new(false));
    let s = stop.clone();
    let board = std::thread::spawn(move || {
        let mut program = ChecksumProgram::new("Bench");
        serve(
            pty.board,
            loader,
            &mut program,
            plan,
            1,
            s,
            Arc::new(Mutex::new(BoardLog::default())),
        );
    });
    let payload: Vec<u32> = (0..words as u32).map(|i| i.wrapping_mul(2_654_435_761)).collect();
    let image = JopImage::from_payload(&payload);
    let mut link = writes.link(jopcal_link::link::SerialLink::open(&path, baud, false).unwrap());
    // Let the handshake loader's first sync byte arrive, so only the transfer is timed.
    std::thread::sleep(Duration::from_millis(100));
    let mut opts = DownloadOptions::new(protocol);
    opts.pace = pace;
    let start = Instant::now();
    let result = download(&mut link, &image, &opts);
    let elapsed = start.elapsed().as_secs_f64();
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    drop(link);
    let _ = board.join();
    let report = result.map_err(|e| e.to_string())?;
    // The board's own line: its transmitter's frame at its clock, for every
    // byte echoed; the host's line where there are no echoes or it is slower.
    let echo_bits = match protocol {
        Protocol::Classic => f64::from(frame) / (1.0 + error_pct / 100.0),
        _ => 10.0 / (1.0 + error_pct / 100.0),
    };
    let ideal = report.bytes as f64 * echo_bits.max(10.0) / f64::from(baud);
    Ok((ideal, elapsed))
}

fn main() {
    if !std::env::args().any(|a| a == "--bench") {
        return;
    }
    let baud = 115_200;
    // The tree's Kfl image.
    let words = 17_414;
    println!("classic download of {words} words at {baud} baud, as a share of the board's own line rate:");
    for (pace, name, frame) in [
        (Pace::line(baud), "line (default)", 11),
        (Pace::line(baud), "line (default)", 10),
        (Pace::parse("line:10", baud).unwrap(), "line:10", 10),
        (Pace::Word, "word by word", 11),
    ] {
        for error in [0.0, -1.4, -3.0] {
            let words = if pace == Pace::Word { 2_000 } else { words };
            match measure(Protocol::Classic, pace, baud, (error, frame), words) {
                Ok((ideal, elapsed)) => println!(
                    "  {name:<15} {frame}-bit UART {error:+.1}%: {elapsed:.3} s for the board's {ideal:.3} s = {:.1}%",
                    100.0 * ideal / elapsed
                ),
                Err(e) => println!("  {name:<15} {frame}-bit UART {error:+.1}%: failed: {e}"),
            }
        }
    }
    for (pace, name, error) in [
        (Pace::Window(64), "window:64", -1.4),
        (Pace::Window(24), "window:24", 0.0),
    ] {
        match measure(Protocol::Classic, pace, baud, (error, 11), words) {
            Ok(_) => println!("  {name:<15} 11-bit UART {error:+.1}%: arrived (the control did not overrun)"),
            Err(e) => println!("  {name:<15} 11-bit UART {error:+.1}%: {e} (the control: it overruns)"),
        }
    }
    match measure(Protocol::Handshake, Pace::line(baud), baud, (0.0, 11), 4_000) {
        Ok((ideal, elapsed)) => println!(
            "  handshake       UART +0.0%: {elapsed:.3} s for {ideal:.3} s = {:.1}%",
            100.0 * ideal / elapsed
        ),
        Err(e) => println!("  handshake       UART +0.0%: failed: {e}"),
    }
}
