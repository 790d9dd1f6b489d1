//! Soak of the virtual board's serial path: `jopcal run --target emu` over
//! the whole built-in suite, round after round, while spinning processes
//! oversubscribe the cores four times. A late byte on the pseudo-terminal
//! (the board's trailing `JVM exit!` after a preempted thread) must never
//! fail a download; a download or a silence the busy host causes is retried
//! (and said: `attempt` lines), so a run fails only when every attempt did.
//! Prints the downloads, the retried ones, the failures and the wall time per
//! round; exits non-zero on any failure. Run with
//! `cargo bench -p jopcal --bench emu_stress` (`JOPCAL_STRESS_ROUNDS`,
//! default 67: 1,005 downloads of the 15 workloads).

use std::process::{Child, Command, Stdio};
use std::time::Instant;

/// A process that spins on one core until killed.
fn burner() -> Child {
    Command::new("sh")
        .args(["-c", "while :; do :; done"])
        .stdout(Stdio::null())
        .spawn()
        .expect("start a CPU burner")
}

fn main() {
    // `cargo bench` passes --bench; `cargo test --benches` would too: only run when benchmarking.
    if !std::env::args().any(|a| a == "--bench") {
        return;
    }
    let rounds: usize = std::env::var("JOPCAL_STRESS_ROUNDS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(67);
    let cores = std::thread::available_parallelism().map_or(2, |n| n.get());
    let out = tempfile::tempdir().unwrap();
    // Warm-up without load: compiles the suite into the cache once.
    let warm = Command::new(env!("CARGO_BIN_EXE_jopcal"))
        .args(["run", "--target", "emu", "--out"])
        .arg(out.path().join("warm-up"))
        .output()
        .expect("run jopcal");
    assert!(warm.status.success(), "{}", String::from_utf8_lossy(&warm.stderr));
    // One download per workload of the built-in suite.
    let firmware = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../jop-firmware");
    let workloads = jopcal_workloads::Suite::load(&firmware).map_or(0, |s| s.workloads.len());
    let mut burners: Vec<Child> = (0..4 * cores).map(|_| burner()).collect();
    let mut retried = 0;
    let start = Instant::now();
    let mut failures = Vec::new();
    for k in 0..rounds {
        let dir = out.path().join(format!("round{k}"));
        let o = Command::new(env!("CARGO_BIN_EXE_jopcal"))
            .args(["run", "--target", "emu", "--out"])
            .arg(&dir)
            .output()
            .expect("run jopcal");
        let stderr = String::from_utf8_lossy(&o.stderr);
        retried += stderr.lines().filter(|l| l.contains(" attempt ")).count();
        if !o.status.success() {
            let line = stderr
                .lines()
                .rev()
                .find(|l| !l.trim().is_empty())
                .unwrap_or("")
                .to_string();
            eprintln!("round {k}: {line}");
            failures.push(line);
        }
        let _ = std::fs::remove_dir_all(&dir);
    }
    let wall = start.elapsed().as_secs_f64();
    for b in &mut burners {
        let _ = b.kill();
        let _ = b.wait();
    }
    println!(
        "virtual board under load ({} busy processes on {cores} cores): {rounds} rounds of the whole suite ({} downloads), {retried} attempt(s) retried, {} round(s) failed, {:.2} s a round",
        4 * cores,
        rounds * workloads,
        failures.len(),
        wall / rounds.max(1) as f64
    );
    if !failures.is_empty() {
        std::process::exit(1);
    }
}
