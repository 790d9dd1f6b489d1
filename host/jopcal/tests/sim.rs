//! The Verilator bench end to end: build the project's test DUT with the real
//! Verilator, download images through a pseudo-terminal with the classic
//! protocol, and check the memory model's wait states to the cycle.

mod common;
#[allow(unused_imports)]
use common::{jopcal, repo, stderr, text};

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

/// `jopcal sim build --rtl RTL... --top TOP --out DIR`.
fn sim_build(rtl: &[&Path], top: &str, dir: &Path) -> std::process::Output {
    jopcal()
        .args(["sim", "build", "--rtl"])
        .args(rtl)
        .args(["--top", top, "--out"])
        .arg(dir)
        .output()
        .unwrap()
}

/// `img` run on the bench in `sim` with `--read-wait read_wait`: its one
/// measurement and that run's log.
fn run_on_bench(
    sim: &Path,
    read_wait: &str,
    img: &Path,
    out: &Path,
) -> (jopcal_measure::measurements::Measurement, String) {
    let o = jopcal()
        .args(["run", "--target", "verilator", "--sim"])
        .arg(sim)
        .arg("--sim-arg=--read-wait")
        .arg(format!("--sim-arg={read_wait}"))
        .arg("--image")
        .arg(img)
        .arg("--out")
        .arg(out)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let mut rows = jopcal_measure::measurements::read(&out.join("measurements.csv")).unwrap();
    assert_eq!(rows.len(), 1);
    let row = rows.remove(0);
    let log = String::from_utf8_lossy(&std::fs::read(out.join(&row.log)).unwrap()).into_owned();
    (row, log)
}

/// The test DUT's bench, built once for all tests here.
fn bench() -> &'static Path {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let dir =
            std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("jopcal-sim-test-{}", std::process::id()));
        let o = sim_build(
            &[&repo().join("hdl-sim/test-dut/jopcal_test_dut.v")],
            "jopcal_test_dut",
            &dir,
        );
        assert!(o.status.success(), "{}", stderr(&o));
        dir
    })
}

fn image(dir: &Path, payload: &[u32]) -> (PathBuf, u32) {
    let mut words = vec![payload.len() as u32 + 1];
    words.extend_from_slice(payload);
    let xor = words.iter().fold(0, |a, w| a ^ w);
    let p = dir.join("img.jop");
    let text: Vec<String> = words.iter().map(u32::to_string).collect();
    std::fs::write(&p, format!("// test image\n{}\n", text.join(",\n"))).unwrap();
    (p, xor)
}

#[test]
fn downloads_through_the_bench_and_counts_wait_states_exactly() {
    let tmp = tempfile::tempdir().unwrap();
    let (img, xor) = image(tmp.path(), &(1..=99).map(|i| i * 7919).collect::<Vec<u32>>());
    let words = 100u64;
    let mut cycles = Vec::new();
    for read_wait in ["1", "4"] {
        let out = tmp.path().join(format!("r{read_wait}"));
        let (row, log) = run_on_bench(bench(), read_wait, &img, &out);
        assert_eq!((row.benchmark.as_str(), row.iterations), ("dut", words));
        // The image reached memory intact: the DUT's read-back XOR is the image's.
        assert!(log.contains(&format!(" sum={xor} ")), "{log}");
        let bench_log = std::fs::read_to_string(out.join("logs/bench.log")).unwrap();
        assert!(bench_log.contains("stopped by the host"), "{bench_log}");
        cycles.push(row.value);
    }
    // Each of the 100 reads waits 3 cycles longer.
    assert_eq!(cycles[1] - cycles[0], 3 * words, "{cycles:?}");
}

/// `sim build` compiles the model with the C++ compiler `JOPCAL_SIM_CXX`
/// names (else clang++ where it is installed, else Verilator's g++), and
/// the bench counts the same cycles whichever compiled it.
#[test]
fn the_model_counts_the_same_cycles_whichever_compiler_built_it() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("gxx");
    let o = jopcal()
        .env("JOPCAL_SIM_CXX", "g++")
        .args(["sim", "build", "--rtl"])
        .arg(repo().join("hdl-sim/test-dut/jopcal_test_dut.v"))
        .args(["--top", "jopcal_test_dut", "--out"])
        .arg(&dir)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let made_with = |sim: &Path| std::fs::read_to_string(sim.join("obj/Vjopcal_test_dut__verFiles.dat")).unwrap();
    assert!(made_with(&dir).contains("CXX=g++ LINK=g++"), "{}", made_with(&dir));
    let clang = std::process::Command::new("clang++")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    assert_eq!(
        made_with(bench()).contains("CXX=clang++"),
        clang,
        "{}",
        made_with(bench())
    );
    let (img, _) = image(tmp.path(), &(1..=40).map(|i| i * 104_729).collect::<Vec<u32>>());
    let (by_gxx, _) = run_on_bench(&dir, "2", &img, &tmp.path().join("g"));
    let (by_default, _) = run_on_bench(bench(), "2", &img, &tmp.path().join("d"));
    assert_eq!(by_gxx.value, by_default.value);
}

#[test]
fn an_sram_behind_the_duts_own_controller_keeps_the_image_and_its_wait_states() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("sram");
    let o = sim_build(
        &[
            &repo().join("hdl-sim/test-dut/jopcal_sram_dut.v"),
            &repo().join("hdl-sim/test-dut/jopcal_test_dut.v"),
        ],
        "jopcal_sram_dut",
        &dir,
    );
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(std::fs::read_to_string(dir.join("bench_config.h"))
        .unwrap()
        .contains("HAS_SRAM"));
    let (img, xor) = image(tmp.path(), &(1..=99).map(|i| i * 7919).collect::<Vec<u32>>());
    let mut cycles = Vec::new();
    for (sim, read_wait) in [(dir.as_path(), "0"), (bench(), "0")] {
        let out = tmp.path().join(format!("out{}", cycles.len()));
        let (row, log) = run_on_bench(sim, read_wait, &img, &out);
        // Through the SRAM pins the image reached memory intact.
        assert!(log.contains(&format!(" sum={xor} ")), "{log}");
        cycles.push(row.value);
    }
    // The controller's reads (RD_WAIT = 2, registered pins) cost more than the
    // bench's zero-wait request/ready port, by the same amount for each of the 100.
    assert!(cycles[0] > cycles[1], "{cycles:?}");
    assert_eq!((cycles[0] - cycles[1]) % 100, 0, "{cycles:?}");
}

#[test]
fn contract_violations_and_bad_rtl_are_named() {
    let tmp = tempfile::tempdir().unwrap();
    let no_reset = tmp.path().join("no_reset.v");
    std::fs::write(
        &no_reset,
        "module t(input wire clk, output wire uart_txd, input wire uart_rxd);\n  assign uart_txd = uart_rxd;\nendmodule\n",
    )
    .unwrap();
    let o = sim_build(&[&no_reset], "t", &tmp.path().join("a"));
    assert!(!o.status.success());
    assert_eq!(
        stderr(&o).lines().last().unwrap(),
        "jopcal: error: top module t lacks port `reset` (input 1 bit; see hdl-sim/CONTRACT.md)"
    );
    let broken = tmp.path().join("broken.v");
    std::fs::write(&broken, "module t(input wire clk;\nendmodule\n").unwrap();
    let o = sim_build(&[&broken], "t", &tmp.path().join("b"));
    let e = stderr(&o);
    assert!(
        e.lines()
            .last()
            .unwrap()
            .starts_with("jopcal: error: verilator rejects the RTL: %Error:"),
        "{e}"
    );
    assert!(e.contains("broken.v:1"), "{e}");
}

#[test]
fn a_silent_dut_ends_at_the_cycle_limit() {
    let o = jopcal()
        .args(["sim", "run", "--sim"])
        .arg(bench())
        .args(["--stdout", "--cycle-limit", "50000"])
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(1));
    let e = stderr(&o);
    assert!(
        e.contains("jopcal-bench: cycle limit of 50000 cycles reached after"),
        "{e}"
    );
    assert_eq!(
        e.lines().last().unwrap(),
        "jopcal: error: the bench stopped at its cycle limit or timeout (see its last line above)"
    );
}

/// The bench of the serial echo DUT (a serial-line UART), built in `tmp`.
fn echo_bench(tmp: &Path) -> PathBuf {
    let dir = tmp.join("echo");
    let o = sim_build(
        &[&repo().join("hdl-sim/test-dut/jopcal_serial_echo.v")],
        "jopcal_serial_echo",
        &dir,
    );
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stderr(&o).contains("Serial UART"), "{}", stderr(&o));
    dir
}

#[test]
fn serial_lines_carry_a_classic_download_bit_by_bit() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = echo_bench(tmp.path());
    let running = jopcal_sim::start(
        &dir.join("obj/bench"),
        &["--bit-cycles".to_string(), "16".to_string()],
        std::time::Duration::from_secs(10),
    )
    .unwrap();
    // The echo DUT answers every byte like a classic loader: the upload verifies each echo.
    // `upload` sends JOP images only: the payload in a JOP image's layout.
    let img = tmp.path().join("boot.jop");
    std::fs::write(&img, jopcal_link::JopImage::bootable(&[11, 22, 33, 44, 55]).to_text()).unwrap();
    let o = jopcal()
        .args(["upload", "--port", &running.port, "--protocol", "classic"])
        .arg(&img)
        .output()
        .unwrap();
    let bench_log = running.stop();
    assert!(o.status.success(), "{}\n{bench_log}", stderr(&o));
    assert!(stderr(&o).contains("upload 15 words (60 bytes)"), "{}", stderr(&o));
}

/// Told the host's download window, the bench waits for the host's bytes
/// where the host is sure to send them, so the image reaches the DUT at the
/// same simulated cycle on every run, however fast the host answers (a
/// program that reads the clock then counts the same cycles every time).
#[test]
fn a_download_reaches_the_dut_at_the_same_cycle_on_every_run() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = echo_bench(tmp.path());
    let img = tmp.path().join("boot.jop");
    let payload: Vec<u32> = (0..200u32).map(|i| i.wrapping_mul(2_654_435_761)).collect();
    std::fs::write(&img, jopcal_link::JopImage::bootable(&payload).to_text()).unwrap();
    let arrival = || {
        let args = [
            "--bit-cycles",
            "16",
            "--host-burst",
            "8",
            "--host-gap-bits",
            "2",
            "--host-window",
            "32",
            "--host-refill",
            "16",
        ]
        .map(String::from);
        let running = jopcal_sim::start(&dir.join("obj/bench"), &args, std::time::Duration::from_secs(20)).unwrap();
        let o = jopcal()
            .args([
                "upload",
                "--port",
                &running.port,
                "--protocol",
                "classic",
                "--pace",
                "window:32",
            ])
            .arg(&img)
            .output()
            .unwrap();
        let log = running.stop();
        assert!(o.status.success(), "{}\n{log}", stderr(&o));
        let line = log
            .lines()
            .find(|l| l.contains("the host's download of"))
            .unwrap_or_else(|| panic!("no arrival named:\n{log}"))
            .to_string();
        line.rsplit(' ').next().unwrap().parse::<u64>().unwrap()
    };
    let (first, second) = (arrival(), arrival());
    assert_eq!(first, second, "the same download, two arrival cycles");
    assert!(first > 1 << 16, "fed from cycle 65,536 on: {first}");
}
