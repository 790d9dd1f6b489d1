//! Both download protocols over real pseudo-terminal pairs, against the
//! board-side loader, with and without injected faults. The board stand-in
//! reports the sum of the payload it received as its cycle count, so a
//! corrupted image or a corrupted output line accepted as right would show up
//! as a wrong count.

use jopcal_link::board::LoaderOptions;
use jopcal_link::capture::CaptureOptions;
use jopcal_link::fault::{FaultPlan, Rng};
use jopcal_link::link::{Link, SerialLink};
use jopcal_link::peer::{serve, BoardLog, ChecksumProgram};
use jopcal_link::session::{run_image, Attempt, SessionFailure, SessionOptions};
use jopcal_link::uart::{HostWrites, RecordedLink};
use jopcal_link::{DownloadOptions, JopImage, Pace, Protocol, PseudoTerminal};
use jopcal_measure::result_line::ResultLine;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

struct Board {
    path: String,
    stop: Arc<AtomicBool>,
    log: Arc<Mutex<BoardLog>>,
    thread: Option<JoinHandle<()>>,
}

impl Drop for Board {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

fn loader(protocol: Protocol) -> LoaderOptions {
    let mut l = LoaderOptions::new(protocol);
    l.sync_period = Duration::from_millis(100);
    l.watchdog = Duration::from_millis(150);
    l
}

fn start_board(protocol: Protocol, plan: &str, seed: u64) -> Board {
    start_board_with(protocol, plan, seed, ChecksumProgram::new("Img"))
}

fn start_board_with(protocol: Protocol, plan: &str, seed: u64, program: ChecksumProgram) -> Board {
    start_board_full(loader(protocol), plan, seed, program)
}

/// A board whose UART `plan` times, and the host's line to it at `baud`:
/// the host's writes time the board's UART (a pseudo-terminal has no wire).
fn start_board_timed(protocol: Protocol, plan: &str, baud: u32) -> (Board, RecordedLink<SerialLink>) {
    let writes = HostWrites::default();
    let mut l = loader(protocol);
    l.host_writes = Some(writes.clone());
    let board = start_board_full(l, plan, 7, ChecksumProgram::new("Img"));
    let link = writes.link(SerialLink::open(&board.path, baud, false).unwrap());
    (board, link)
}

fn start_board_full(loader: LoaderOptions, plan: &str, seed: u64, mut program: ChecksumProgram) -> Board {
    let pty = PseudoTerminal::open().unwrap();
    let path = pty.path.clone();
    let stop = Arc::new(AtomicBool::new(false));
    let log = Arc::new(Mutex::new(BoardLog::default()));
    let plan: FaultPlan = plan.parse().unwrap();
    let (s, l) = (stop.clone(), log.clone());
    let thread = std::thread::spawn(move || {
        let PseudoTerminal { board, .. } = pty;
        serve(board, loader, &mut program, plan, seed, s, l);
    });
    Board {
        path,
        stop,
        log,
        thread: Some(thread),
    }
}

fn image(seed: u64, words: usize) -> JopImage {
    let mut r = Rng::new(seed);
    let payload: Vec<u32> = (0..words).map(|_| r.next_u64() as u32).collect();
    JopImage::from_payload(&payload)
}

fn session(protocol: Protocol, retries: u32) -> SessionOptions {
    let mut d = DownloadOptions::new(protocol);
    d.byte_timeout = Duration::from_millis(300);
    d.sync_timeout = Duration::from_millis(1000);
    SessionOptions {
        retry_on: Default::default(),
        download: d,
        capture: CaptureOptions {
            line_timeout: Duration::from_millis(600),
            total_timeout: Duration::from_secs(5),
            require_check: true,
            exit_wait: Duration::from_millis(500),
        },
        retries,
        configure: None,
        reset: None,
        reset_first: false,
        quiet: Duration::from_millis(200),
        quiet_limit: Duration::from_secs(2),
    }
}

/// Runs `img` in one session on `link`: the counts of the result lines
/// accepted, and the session's attempts or why it failed.
fn counted(
    link: &mut dyn Link,
    img: &JopImage,
    opts: &SessionOptions,
) -> (Vec<u64>, Result<Vec<Attempt>, SessionFailure>) {
    let mut got = Vec::new();
    let mut on_result = |r: &ResultLine| {
        if let ResultLine::Result { cycles, .. } = r {
            got.push(*cycles);
        }
        Ok(())
    };
    let outcome = run_image(link, img, opts, &mut on_result, &mut |_| {});
    (got, outcome)
}

/// Runs `img` once on a fresh board; returns the accepted cycle counts and the outcome.
fn run(
    protocol: Protocol,
    plan: &str,
    seed: u64,
    img: &JopImage,
    retries: u32,
) -> (Vec<u64>, Result<u32, String>, Board) {
    let board = start_board(protocol, plan, seed);
    let mut link = SerialLink::open(&board.path, 115_200, true).unwrap();
    let (accepted, outcome) = counted(&mut link, img, &session(protocol, retries));
    let outcome = match outcome {
        Ok(attempts) => Ok(attempts.len() as u32),
        Err(f) => Err(f.why),
    };
    (accepted, outcome, board)
}

#[test]
fn both_protocols_deliver_images_and_results() {
    for protocol in [Protocol::Classic, Protocol::ClassicNoEcho, Protocol::Handshake] {
        let img = image(1, 300);
        let (accepted, outcome, board) = run(protocol, "", 0, &img, 0);
        assert_eq!(outcome, Ok(1), "{protocol}");
        assert_eq!(accepted, vec![ChecksumProgram::cycles_for(&img)], "{protocol}");
        // The board waits for the next image: a second download on the same line works.
        let mut link = SerialLink::open(&board.path, 115_200, false).unwrap();
        let img2 = image(2, 50);
        let (got, r) = counted(&mut link, &img2, &session(protocol, 0));
        assert!(r.is_ok(), "{protocol}: second image: {:?}", r.err().map(|e| e.why));
        assert_eq!(got, vec![ChecksumProgram::cycles_for(&img2)]);
        // The board counts an image once its program has returned, which may
        // be just after the host has read the last line: wait for it a little.
        let counted = (0..200).any(|_| {
            let n = board.log.lock().unwrap().images;
            n == 2 || {
                std::thread::sleep(std::time::Duration::from_millis(10));
                false
            }
        });
        assert!(counted, "images counted: {}", board.log.lock().unwrap().images);
    }
}

/// JOP prints `JVM exit!` after the harness's `@jopcal done`; on a busy
/// machine it can come later than the quiet period before the next download.
/// The capture waits for it, so the next download's echoes are clean; a
/// capture that stopped at `@jopcal done` reads its `J` as the echo of word 0.
#[test]
fn a_late_jvm_exit_line_never_reaches_the_next_download() {
    let late = Duration::from_millis(300);
    for exit_wait in [Duration::from_secs(2), Duration::ZERO] {
        let board = start_board_with(
            Protocol::Classic,
            "",
            0,
            ChecksumProgram {
                bench: "Img".into(),
                exit_delay: Some(late),
            },
        );
        let mut link = SerialLink::open(&board.path, 115_200, false).unwrap();
        let mut opts = session(Protocol::Classic, 0);
        opts.quiet = Duration::from_millis(20);
        opts.capture.exit_wait = exit_wait;
        opts.capture.line_timeout = Duration::from_secs(3);
        let mut outcomes = Vec::new();
        for seed in 1..=2 {
            let img = image(seed, 40);
            let (got, r) = counted(&mut link, &img, &opts);
            outcomes.push(r.map(|_| got).map_err(|f| f.why));
            if outcomes.last().unwrap().is_err() {
                break;
            }
        }
        if exit_wait.is_zero() {
            let why = outcomes.last().unwrap().clone().unwrap_err();
            assert!(why.contains("echo mismatch"), "without the wait: {why}");
        } else {
            for (k, o) in outcomes.iter().enumerate() {
                let img = image(k as u64 + 1, 40);
                assert_eq!(o, &Ok(vec![ChecksumProgram::cycles_for(&img)]), "image {}", k + 1);
            }
        }
    }
}

/// Sweeps one fault kind over many seeds: every session ends with the right
/// count or a clear failure, never a wrong count; returns (successes, failures).
/// Asserts that the plan did inject faults.
fn sweep(protocol: Protocol, plan: &str, seeds: u64) -> (u32, u32) {
    let (mut ok, mut failed) = (0, 0);
    let mut injected_total = 0;
    for seed in 0..seeds {
        let img = image(100 + seed, 120);
        let want = ChecksumProgram::cycles_for(&img);
        let (accepted, outcome, board) = run(protocol, plan, seed, &img, 3);
        // Stop the board first: it files its fault log when its loader returns.
        let log = board.log.clone();
        drop(board);
        let injected = log.lock().unwrap().faults.clone();
        injected_total += injected.len();
        for c in &accepted {
            assert_eq!(
                *c, want,
                "{protocol} {plan} seed {seed}: wrong count accepted; faults {injected:?}"
            );
        }
        match outcome {
            Ok(_) => {
                // A retry after a corrupted later line may deliver the same result again.
                assert!(!accepted.is_empty(), "{protocol} {plan} seed {seed}");
                ok += 1;
            }
            Err(why) => {
                assert!(!why.is_empty() && !why.contains('\n'), "one-line reason: {why:?}");
                failed += 1;
            }
        }
    }
    assert!(
        injected_total > 0,
        "{protocol} {plan}: no fault was injected in {seeds} runs"
    );
    (ok, failed)
}

const SEEDS: u64 = 5;

/// Fault kinds a retry can recover from; every one must recover in some seed.
const RECOVERABLE: [&str; 6] = [
    "drop=0.0005",
    "flip=0.0005",
    "dup=0.0005",
    "garbage=40",
    "previous=3",
    "stall=700@300",
];

/// Sweeps the recoverable faults, then a vanishing board (which must fail clearly).
fn sweep_all(protocol: Protocol) {
    for plan in RECOVERABLE {
        let (ok, failed) = sweep(protocol, plan, SEEDS);
        eprintln!("{protocol} {plan}: {ok} right, {failed} clear failures");
        assert!(ok > 0, "{protocol} {plan}: retries never recovered");
    }
    let (ok, failed) = sweep(protocol, "vanish@200", 2);
    assert_eq!((ok, failed), (0, 2));
}

#[test]
fn faults_on_classic_end_right_or_fail_clearly() {
    sweep_all(Protocol::Classic);
    // Heavy corruption of the output alone: the line checks must catch it.
    let (ok, failed) = sweep(Protocol::Classic, "flip-out=0.01", 4);
    eprintln!("classic flip-out=0.01: {ok} right, {failed} clear failures");
}

#[test]
fn faults_on_handshake_end_right_or_fail_clearly() {
    sweep_all(Protocol::Handshake);
}

/// The largest image of the tree's JemBench (Aes, 20,040 words).
const LARGEST_JEMBENCH_WORDS: usize = 20_040;

/// One classic download of `img` at `baud`, paced as `pace`, to a board
/// whose UART `plan` times (its clock error, latency, faults): the count
/// the board's program reports, or the host's one-line reason.
fn paced(plan: &str, img: &JopImage, baud: u32, pace: Pace) -> Result<u64, String> {
    let (board, mut link) = start_board_timed(Protocol::Classic, plan, baud);
    let mut opts = session(Protocol::Classic, 0);
    opts.download.pace = pace;
    opts.download.byte_timeout = Duration::from_millis(800);
    opts.capture.total_timeout = Duration::from_secs(60);
    let (got, outcome) = counted(&mut link, img, &opts);
    outcome.map_err(|f| {
        let log = board.log.lock().unwrap();
        format!("{} [board: {:?} {:?}]", f.why, log.faults, log.loader)
    })?;
    got.last().copied().ok_or_else(|| "no result line".to_string())
}

/// JOP's loader echoes into a 2-byte FIFO without waiting, and its UART
/// sends 11 bit times a byte: each burst waiting for the echoes of the one
/// before, every download of the largest JemBench image arrives intact from
/// a UART 3% slow to 3% fast, and on a board whose UART sends one stop bit;
/// with a USB adapter's latency too (a smaller image: each burst waits for
/// the latency).
#[test]
fn paced_downloads_arrive_intact_on_any_uart_within_tolerance() {
    let baud = 230_400;
    let largest = image(11, LARGEST_JEMBENCH_WORDS);
    let small = image(15, 600);
    for (error, latency, frame, img) in [
        (-3.0, 0, 11, &largest),
        (-1.4, 0, 11, &largest),
        (0.0, 0, 11, &largest),
        (1.4, 0, 11, &largest),
        (3.0, 0, 11, &largest),
        (-3.0, 0, 10, &largest),
        (-3.0, 16, 11, &small),
        (3.0, 4, 10, &small),
    ] {
        let plan = format!("baud={baud},uart={error},latency={latency},frame={frame}");
        let want = ChecksumProgram::cycles_for(img);
        assert_eq!(paced(&plan, img, baud, Pace::line(baud)), Ok(want), "{plan}");
    }
}

/// A board model in which nothing tells the wire's time (as one in a process
/// of its own): it times the host's bytes by when its reader gets them, so
/// a reader woken late takes two bursts as one run. Each burst waiting for
/// the echoes of all but two bytes of the one before, the board has caught
/// up when the next comes: downloads arrive intact however the reader is
/// scheduled (the previous rule, two bursts in flight, overran such a model
/// on an idle machine at word 1,800-5,000 of a Kfl download).
#[test]
fn a_board_model_timing_by_arrival_gets_every_byte_too() {
    let baud = 115_200;
    let img = image(16, 6_000);
    let want = ChecksumProgram::cycles_for(&img);
    for error in [-3.0, 0.0] {
        let plan = format!("baud={baud},uart={error}");
        let board = start_board_full(loader(Protocol::Classic), &plan, 7, ChecksumProgram::new("Img"));
        let mut link = SerialLink::open(&board.path, baud, false).unwrap();
        let mut opts = session(Protocol::Classic, 0);
        opts.download.pace = Pace::line(baud);
        opts.download.byte_timeout = Duration::from_millis(800);
        opts.capture.total_timeout = Duration::from_secs(60);
        let (got, outcome) = counted(&mut link, &img, &opts);
        if let Err(f) = outcome {
            let log = board.log.lock().unwrap();
            panic!("{plan}: {} [board: {:?} {:?}]", f.why, log.faults, log.loader);
        }
        assert_eq!(got.last().copied(), Some(want), "{plan}");
    }
}

/// The controls: a window of bytes in flight, unpaced, overruns a UART 1.4%
/// slow (as on the simulated RTL), and a smaller one JOP's UART on time,
/// which sends two stop bits; the host says at which word. Word by word is
/// safe however slow the board.
#[test]
fn an_unpaced_window_overruns_a_slow_uart_and_names_the_word() {
    let baud = 230_400;
    let img = image(12, 4_000);
    let e = paced(&format!("baud={baud},uart=-1.4"), &img, baud, Pace::Window(64)).unwrap_err();
    assert!(e.contains("at word"), "{e}");
    let e = paced(&format!("baud={baud},uart=0"), &img, baud, Pace::Window(24)).unwrap_err();
    assert!(e.contains("at word"), "{e}");
    let want = ChecksumProgram::cycles_for(&image(13, 400));
    assert_eq!(
        paced(&format!("baud={baud},uart=-6"), &image(13, 400), baud, Pace::Word),
        Ok(want)
    );
}

/// A lost echo, a corrupted echo, a board that resets mid-download: each
/// fails with a reason naming the word, or (a reset between bursts, which no
/// echo shows) with no result; never a wrong count.
#[test]
fn lost_and_corrupted_echoes_and_a_reset_never_pass_unnoticed() {
    let baud = 230_400;
    let img = image(14, 6_000);
    let want = ChecksumProgram::cycles_for(&img);
    for fault in ["drop-out=0.0005", "flip-out=0.0005", "reset@9000"] {
        let plan = format!("baud={baud},uart=-1.4,{fault}");
        match paced(&plan, &img, baud, Pace::line(baud)) {
            Ok(c) => panic!("{plan}: accepted a count ({c}, the image's is {want})"),
            Err(e) => assert!(e.contains("at word") || fault.starts_with("reset"), "{plan}: {e}"),
        }
    }
}

/// A download the board's echoes refuse is retried after the board's reset
/// command, word by word: the image arrives on the second attempt.
#[test]
fn a_refused_download_is_retried_after_a_reset_word_by_word() {
    let baud = 230_400;
    let (_board, mut link) = start_board_timed(Protocol::Classic, &format!("baud={baud},uart=-2"), baud);
    let dir = tempfile::tempdir().unwrap();
    let marker = dir.path().join("resets");
    let mut opts = session(Protocol::Classic, 1);
    opts.download.pace = Pace::Window(64);
    opts.download.byte_timeout = Duration::from_millis(800);
    opts.capture.total_timeout = Duration::from_secs(30);
    opts.reset = Some(format!("echo reset >> {}", marker.display()));
    let img = image(15, 1_500);
    let (got, attempts) = counted(&mut link, &img, &opts);
    let attempts = attempts.map_err(|f| f.why).unwrap();
    assert_eq!(attempts.len(), 2);
    assert!(attempts[0].download.is_err());
    assert_eq!(got, vec![ChecksumProgram::cycles_for(&img)]);
    assert_eq!(std::fs::read_to_string(&marker).unwrap(), "reset\n");
}

/// The handshake protocol sends without echoes: a board's UART model at any
/// clock error takes it (its loader's 0xAA and checksum go through the
/// model's transmitter too).
#[test]
fn handshake_downloads_pass_a_timed_uart() {
    let baud = 230_400;
    let (_board, mut link) = start_board_timed(Protocol::Handshake, &format!("baud={baud},uart=-3"), baud);
    let img = image(16, 2_000);
    let (got, r) = counted(&mut link, &img, &session(Protocol::Handshake, 0));
    assert!(r.is_ok(), "{:?}", r.err().map(|f| f.why));
    assert_eq!(got, vec![ChecksumProgram::cycles_for(&img)]);
}

/// A link that counts the host's writes.
struct CountedSends<L: Link> {
    inner: L,
    sends: usize,
}

impl<L: Link> Link for CountedSends<L> {
    fn send(&mut self, bytes: &[u8]) -> std::io::Result<()> {
        self.sends += 1;
        self.inner.send(bytes)
    }
    fn recv(&mut self, buf: &mut [u8], timeout: Duration) -> std::io::Result<usize> {
        self.inner.recv(buf, timeout)
    }
    fn describe(&self) -> String {
        self.inner.describe()
    }
}

#[test]
fn a_window_is_refilled_in_halves_not_byte_by_byte() {
    // The virtual board's pace: 2 KB in flight over a pseudo-terminal. Topped
    // up as each echo came, it took one write a byte (and the board one read).
    let board = start_board(Protocol::Classic, "", 1);
    let mut link = CountedSends {
        inner: SerialLink::open(&board.path, 115_200, false).unwrap(),
        sends: 0,
    };
    let img = image(9, 20_040);
    let mut opts = session(Protocol::Classic, 0);
    opts.download.pace = Pace::Window(2048);
    let (got, r) = counted(&mut link, &img, &opts);
    assert!(r.is_ok(), "{:?}", r.err().map(|f| f.why));
    assert_eq!(got.len(), 1, "the image ran intact");
    let bytes = img.words.len() * 4;
    assert!(
        link.sends <= bytes / 1024 + 8,
        "{} writes for {bytes} bytes with 2,048 in flight",
        link.sends
    );
}
