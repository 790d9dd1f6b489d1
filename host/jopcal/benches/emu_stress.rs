//! Stress of the virtual board's serial path: `jopcal run --target emu` over
//! the whole built-in suite, round after round, while other processes keep
//! every core busy. A late byte on the pseudo-terminal (the board's trailing
//! `JVM exit!` after a preempted thread) must never fail a download; the
//! virtual board target never retries, so any race shows as a failed run.
//! Prints the rounds, failures and the wall time per round; exits non-zero on
//! any failure. Run with `cargo bench -p jopcal --bench emu_stress`
//! (`JOPCAL_STRESS_ROUNDS`, default 200).

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
        .unwrap_or(200);
    let cores = std::thread::available_parallelism().map_or(2, |n| n.get());
    let out = tempfile::tempdir().unwrap();
    // Warm-up without load: compiles the suite into the cache once.
    let warm = Command::new(env!("CARGO_BIN_EXE_jopcal"))
        .args(["run", "--target", "emu", "--out"])
        .arg(out.path().join("warm-up"))
        .output()
        .expect("run jopcal");
    assert!(warm.status.success(), "{}", String::from_utf8_lossy(&warm.stderr));
    let mut burners: Vec<Child> = (0..cores).map(|_| burner()).collect();
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
        if !o.status.success() || stderr.contains("attempt") {
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
        "virtual board under load ({cores} busy processes on {cores} cores): {rounds} rounds of the whole suite, {} failed, {:.2} s a round",
        failures.len(),
        wall / rounds.max(1) as f64
    );
    if !failures.is_empty() {
        std::process::exit(1);
    }
}
