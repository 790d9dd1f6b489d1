//! The board target through the real binary: `jopcal upload` and
//! `jopcal run --target board` against the board-side loader on real
//! pseudo-terminals and TCP, with and without faults.

mod common;
#[allow(unused_imports)]
use common::{jopcal, repo, stderr, text};

use jopcal_link::board::LoaderOptions;
use jopcal_link::fault::FaultPlan;
use jopcal_link::link::TcpLink;
use jopcal_link::peer::{serve, BoardLog, ChecksumProgram};
use jopcal_link::{JopImage, Protocol, PseudoTerminal};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

struct Board {
    port: String,
    stop: Arc<AtomicBool>,
    log: Arc<Mutex<BoardLog>>,
}

impl Drop for Board {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
    }
}

fn loader(protocol: Protocol) -> LoaderOptions {
    let mut l = LoaderOptions::new(protocol);
    l.sync_period = Duration::from_millis(100);
    l.watchdog = Duration::from_millis(300);
    l
}

fn pty_board(protocol: Protocol, plan: &str) -> Board {
    let pty = PseudoTerminal::open().unwrap();
    let port = pty.path.clone();
    let stop = Arc::new(AtomicBool::new(false));
    let log = Arc::new(Mutex::new(BoardLog::default()));
    let plan: FaultPlan = plan.parse().unwrap();
    let (s, l) = (stop.clone(), log.clone());
    std::thread::spawn(move || {
        let PseudoTerminal { board, .. } = pty;
        serve(board, loader(protocol), &mut ChecksumProgram::new("Img"), plan, 1, s, l);
    });
    Board { port, stop, log }
}

fn tcp_board(protocol: Protocol) -> Board {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = format!("tcp://{}", listener.local_addr().unwrap());
    let stop = Arc::new(AtomicBool::new(false));
    let log = Arc::new(Mutex::new(BoardLog::default()));
    let (s, l) = (stop.clone(), log.clone());
    std::thread::spawn(move || {
        if let Ok((stream, _)) = listener.accept() {
            let link = TcpLink::from_stream(stream, "test".into());
            serve(
                link,
                loader(protocol),
                &mut ChecksumProgram::new("Img"),
                FaultPlan::default(),
                1,
                s,
                l,
            );
        }
    });
    Board { port, stop, log }
}

fn write_image(dir: &Path, name: &str, payload: &[u32]) -> (PathBuf, u64) {
    let img = JopImage::bootable(payload);
    let path = dir.join(format!("{name}.jop"));
    std::fs::write(&path, format!("// test image {name}\n{}", img.to_text())).unwrap();
    (path, ChecksumProgram::cycles_for(&img))
}

#[test]
fn upload_is_accepted_over_pty_and_tcp_in_both_protocols() {
    let dir = tempfile::tempdir().unwrap();
    let (img, _) = write_image(dir.path(), "a", &(1..=500).collect::<Vec<u32>>());
    for protocol in [Protocol::Classic, Protocol::Handshake] {
        for board in [pty_board(protocol, ""), tcp_board(protocol)] {
            let o = jopcal()
                .args(["upload", "--port", &board.port, "--protocol", &protocol.to_string()])
                .arg(&img)
                .output()
                .unwrap();
            assert!(o.status.success(), "{protocol} {}: {}", board.port, stderr(&o));
            assert!(stderr(&o).contains("the board accepted it"), "{}", stderr(&o));
        }
    }
}

#[test]
fn run_on_board_writes_one_row_per_result_and_keeps_raw_logs() {
    let dir = tempfile::tempdir().unwrap();
    let (a, ca) = write_image(dir.path(), "a", &[7, 8, 9]);
    let (b, cb) = write_image(dir.path(), "b", &(0..300).collect::<Vec<u32>>());
    let board = pty_board(Protocol::Handshake, "garbage=20,previous=2");
    let out = dir.path().join("out");
    let o = jopcal()
        .args([
            "run",
            "--target",
            "board",
            "--port",
            &board.port,
            "--protocol",
            "handshake",
            "--image",
        ])
        .arg(&a)
        .arg("--image")
        .arg(&b)
        .arg("--out")
        .arg(&out)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let rows = jopcal_measure::measurements::read(&out.join("measurements.csv")).unwrap();
    let got: Vec<(String, u64, String)> = rows
        .iter()
        .map(|m| (m.benchmark.clone(), m.value, m.unit.to_string()))
        .collect();
    assert_eq!(
        got,
        vec![
            ("Img".to_string(), ca, "cycles".to_string()),
            ("Img".to_string(), cb, "cycles".to_string())
        ]
    );
    let log = String::from_utf8_lossy(&std::fs::read(out.join(&rows[1].log)).unwrap()).into_owned();
    assert!(log.contains("# download: 1240 bytes"), "{log}");
    assert!(log.contains(&format!("cycles={cb}")), "{log}");
    assert_eq!(board.log.lock().unwrap().images, 2);
}

#[test]
fn a_failing_later_image_keeps_earlier_results_and_configure_runs_each_attempt() {
    let dir = tempfile::tempdir().unwrap();
    let (a, ca) = write_image(dir.path(), "a", &[1, 2, 3]);
    let (b, _) = write_image(dir.path(), "b", &(0..200).collect::<Vec<u32>>());
    // The board vanishes in the middle of the second download.
    let board = pty_board(Protocol::Classic, "vanish@100");
    let out = dir.path().join("out");
    let marker = dir.path().join("configured");
    let o = jopcal()
        .args([
            "run",
            "--target",
            "board",
            "--port",
            &board.port,
            "--retries",
            "1",
            "--line-timeout",
            "2",
        ])
        .arg("--configure")
        .arg(format!("echo x >> {}", marker.display()))
        .arg("--image")
        .arg(&a)
        .arg("--image")
        .arg(&b)
        .arg("--out")
        .arg(&out)
        .output()
        .unwrap();
    assert!(!o.status.success());
    let err = stderr(&o);
    let last = err.lines().last().unwrap();
    assert!(last.starts_with("jopcal: error: workload b: "), "{err}");
    assert!(last.contains("Broken pipe"), "{err}");
    // The reason names the port and what to check.
    let first = err
        .lines()
        .find(|l| l.contains("b attempt 1: download failed on "))
        .unwrap_or_else(|| panic!("{err}"));
    assert!(
        first.contains(&board.port) && first.contains("the link failed: Broken pipe (check the port"),
        "{err}"
    );
    let rows = jopcal_measure::measurements::read(&out.join("measurements.csv")).unwrap();
    assert_eq!(rows.len(), 1);
    assert_eq!(rows[0].value, ca);
    // The failed download is recorded as data, beside the image that ran.
    let summary = jopcal_report::summary::Summary::read(&out.join("summary.json")).unwrap();
    assert!(!summary.complete);
    assert_eq!(summary.target, "board");
    assert_eq!(summary.benchmarks.len(), 1);
    assert_eq!(summary.benchmarks[0].measured, ca);
    assert_eq!(summary.failures.len(), 1, "{summary:?}");
    assert_eq!(summary.failures[0].name, "b");
    assert!(summary.failures[0].reason.contains("Broken pipe"), "{summary:?}");
    // And in measurements.csv, after its rows (readers skip the comment).
    let failed = jopcal_measure::measurements::recorded_failures(&out.join("measurements.csv")).unwrap();
    assert_eq!(failed.len(), 1, "{failed:?}");
    assert_eq!(failed[0].0, "b");
    assert!(failed[0].1.contains("Broken pipe"), "{failed:?}");
    // Once for image a, twice for b (first attempt and one retry).
    assert_eq!(std::fs::read_to_string(&marker).unwrap().lines().count(), 3);

    // A configure command that fails is a one-line error.
    let o = jopcal()
        .args([
            "run",
            "--target",
            "board",
            "--port",
            &pty_board(Protocol::Classic, "").port,
        ])
        .args(["--configure", "echo 'no board found' >&2; exit 3", "--image"])
        .arg(&a)
        .arg("--out")
        .arg(dir.path().join("o2"))
        .output()
        .unwrap();
    assert!(!o.status.success());
    assert!(
        stderr(&o).contains("configure command") && stderr(&o).contains("no board found"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn bad_images_and_ports_are_one_line_errors() {
    let dir = tempfile::tempdir().unwrap();
    let bad = dir.path().join("bad.jop");
    std::fs::write(&bad, "// image\n4, 1,\n 2 x\n").unwrap();
    let o = jopcal()
        .args(["upload", "--port", "/dev/null-no-such"])
        .arg(&bad)
        .output()
        .unwrap();
    assert!(!o.status.success());
    assert_eq!(
        stderr(&o).trim(),
        format!("jopcal: error: {}:3:4: expected a number, found 'x'", bad.display())
    );
    // An image the processor cannot boot is refused before anything is sent.
    let one = dir.path().join("one.jop");
    std::fs::write(&one, "1,").unwrap();
    let o = jopcal()
        .args(["upload", "--port", &pty_board(Protocol::Classic, "").port])
        .arg(&one)
        .output()
        .unwrap();
    assert!(!o.status.success());
    assert_eq!(
        stderr(&o).trim(),
        format!(
            "jopcal: error: {}: word 0: the image holds no special pointers (a JOP image has at least 8 words)",
            one.display()
        )
    );
    let (good, _) = write_image(dir.path(), "g", &[1]);
    let o = jopcal()
        .args(["upload", "--port", "/dev/no-such-tty"])
        .arg(&good)
        .output()
        .unwrap();
    assert!(!o.status.success());
    assert!(
        stderr(&o).starts_with("jopcal: error: cannot open /dev/no-such-tty"),
        "{}",
        stderr(&o)
    );
    let o = jopcal()
        .args(["run", "--target", "board", "--image"])
        .arg(&good)
        .output()
        .unwrap();
    assert!(stderr(&o).contains("--target board needs --port"), "{}", stderr(&o));
    // A board's processor named as a tree's project needs the tree.
    let o = jopcal()
        .env_remove("JOPCAL_JOP_HOME")
        .current_dir(dir.path())
        .args([
            "run",
            "--target",
            "board",
            "--port",
            "/dev/no-such-tty",
            "--board-top",
            "cycmin",
            "--image",
        ])
        .arg(&good)
        .output()
        .unwrap();
    assert!(!o.status.success());
    assert_eq!(
        stderr(&o).trim(),
        "jopcal: error: --board-top cycmin names a project of a JOP tree: give the tree with --jop-home"
    );
}

#[test]
fn run_on_board_takes_a_pace_and_its_log_names_it() {
    let dir = tempfile::tempdir().unwrap();
    let (a, ca) = write_image(dir.path(), "a", &(0..200).collect::<Vec<u32>>());
    let board = pty_board(Protocol::Classic, "");
    let out = dir.path().join("out");
    let run = |pace: &str| {
        jopcal()
            .args([
                "run",
                "--target",
                "board",
                "--port",
                &board.port,
                "--pace",
                pace,
                "--image",
            ])
            .arg(&a)
            .arg("--out")
            .arg(&out)
            .output()
            .unwrap()
    };
    let o = run("word");
    assert!(o.status.success(), "{}", stderr(&o));
    let rows = jopcal_measure::measurements::read(&out.join("measurements.csv")).unwrap();
    assert_eq!(rows[0].value, ca);
    let log = String::from_utf8_lossy(&std::fs::read(out.join(&rows[0].log)).unwrap()).into_owned();
    assert!(log.contains("bytes/s, word by word)"), "{log}");
    // A pace that is none: one line naming it, before anything is sent.
    let o = run("line:9");
    assert!(!o.status.success());
    let e = stderr(&o);
    assert!(
        e.contains("--pace: unknown pace 'line:9'") && e.trim().lines().count() == 1,
        "{e}"
    );
}

/// `kill -TERM` sent to jopcal alone ends the programs it started, their
/// own children too: here a configure command's background job.
#[test]
fn a_signal_to_jopcal_alone_ends_the_programs_it_started() {
    let dir = tempfile::tempdir().unwrap();
    let (a, _) = write_image(dir.path(), "a", &[1, 2, 3]);
    let board = pty_board(Protocol::Classic, "");
    let pidfile = dir.path().join("sleep.pid");
    let child = jopcal()
        .args(["run", "--target", "board", "--port", &board.port])
        .arg("--configure")
        .arg(format!("sleep 300 & echo $! > {}; wait", pidfile.display()))
        .arg("--image")
        .arg(&a)
        .arg("--out")
        .arg(dir.path().join("out"))
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let start = std::time::Instant::now();
    while std::fs::read_to_string(&pidfile).map_or(true, |s| !s.ends_with('\n')) {
        assert!(start.elapsed().as_secs() < 60, "the configure command never ran");
        std::thread::sleep(Duration::from_millis(20));
    }
    let sleep: u32 = std::fs::read_to_string(&pidfile).unwrap().trim().parse().unwrap();
    let kill = std::process::Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(kill.success());
    let o = child.wait_with_output().unwrap();
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(130), "{err}");
    assert!(err.contains("ended 1 program(s) it had started"), "{err}");
    // Gone, or a zombie waiting for init: never still sleeping.
    let alive = || {
        std::fs::read_to_string(format!("/proc/{sleep}/stat"))
            .is_ok_and(|s| !s.rsplit(')').next().is_some_and(|r| r.trim_start().starts_with('Z')))
    };
    let start = std::time::Instant::now();
    while alive() {
        assert!(start.elapsed().as_secs() < 10, "sleep {sleep} outlived jopcal");
        std::thread::sleep(Duration::from_millis(20));
    }
}
