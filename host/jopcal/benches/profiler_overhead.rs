//! Profiler overhead on the built-in suite: the wall time of profiling every
//! workload (one JVM each, as `jopcal profile` does) against running the same
//! workloads with `-Xint` and plainly (`jopcal run --target host`), in
//! interleaved rounds so that all three see the same machine state. Prints the
//! median of each and the ratios. Run with `cargo bench -p jopcal --bench profiler_overhead`.

use std::process::Command;
use std::time::Instant;

const ROUNDS: usize = 5;

fn time(args: &[&str]) -> f64 {
    let out = tempfile::tempdir().unwrap();
    let start = Instant::now();
    let o = Command::new(env!("CARGO_BIN_EXE_jopcal"))
        .args(args)
        .arg("--out")
        .arg(out.path())
        .output()
        .expect("run jopcal");
    let t = start.elapsed().as_secs_f64();
    assert!(
        o.status.success(),
        "jopcal {args:?} failed: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    t
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn main() {
    // `cargo bench` passes --bench; `cargo test --benches` would too: only run when benchmarking.
    if !std::env::args().any(|a| a == "--bench") {
        return;
    }
    let variants: [(&str, &[&str]); 3] = [
        ("plain JVM", &["run", "--target", "host"]),
        ("JVM -Xint", &["run", "--target", "host", "--jvm-arg=-Xint"]),
        ("profiled", &["profile", "--suite", "builtin"]),
    ];
    // Warm-up: compiles the suite into the cache once.
    time(variants[0].1);
    let mut times = vec![Vec::new(); variants.len()];
    for _ in 0..ROUNDS {
        for (i, (_, args)) in variants.iter().enumerate() {
            times[i].push(time(args));
        }
    }
    let med: Vec<f64> = times.into_iter().map(median).collect();
    println!(
        "profiler overhead on the built-in suite (15 workloads, one JVM each), median of {ROUNDS} interleaved rounds:"
    );
    for ((name, _), t) in variants.iter().zip(&med) {
        println!("  {name:<10} {t:>7.2} s");
    }
    println!("  profiled / -Xint = {:.2}x", med[2] / med[1]);
    println!("  profiled / plain = {:.2}x", med[2] / med[0]);
}
