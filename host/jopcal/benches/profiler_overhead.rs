//! What profiling costs, per benchmark and in one run: each program's
//! region (from the harness's start() returning to its stop()) on the plain
//! JVM (`jopcal run --target host`, which times the region itself), and
//! the same region under each profiler (the wall time each profile records
//! of its region), as ratios to the plain JVM; the whole profiling process
//! (JVM start-up, class loading and rewriting, writing the profile) is a
//! separate column. The geometric mean hides the outliers: the worst ratio
//! is printed too.
//!
//! `cargo bench -p jopcal --bench profiler_overhead` runs the built-in
//! suite. Set `JOPCAL_BENCH_SUITE=jembench` (with `JOPCAL_JOP_HOME` naming a
//! tree, and `JOPCAL_TREE_CONFIG` its jopcal.toml directory if the tree
//! needs one) for JemBench's harnesses. Profiles are never taken from the
//! cache here: each run passes the JVM a property of its own, which is part
//! of the cache key. The plain JVM's region is the median of
//! `JOPCAL_BENCH_ROUNDS` runs (default 3).

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

fn jopcal(args: &[&str], dir: Option<&Path>) -> std::process::Output {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_jopcal"));
    cmd.args(args);
    if let Some(d) = dir {
        cmd.current_dir(d);
    }
    let o = cmd.output().expect("run jopcal");
    assert!(
        o.status.success(),
        "jopcal {args:?} failed: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    o
}

/// Region nanoseconds per benchmark from a host run's measurements.csv.
fn plain_regions(csv: &Path) -> Vec<(String, f64)> {
    let mut r = csv::Reader::from_path(csv).expect("measurements.csv");
    let h = r.headers().expect("header").clone();
    let col = |n: &str| h.iter().position(|c| c == n).expect("column");
    let (b, v) = (col("benchmark"), col("value"));
    r.records()
        .map(|rec| {
            let rec = rec.expect("record");
            (rec[b].to_string(), rec[v].parse::<f64>().expect("ns"))
        })
        .collect()
}

/// Per benchmark: the profile's region nanoseconds, and the profiling JVM's
/// whole wall time (from its log's `# exit status ..., <s> s` line).
fn profiled(dir: &Path, bench: &str) -> (f64, f64) {
    let json = std::fs::read_to_string(dir.join(format!("{bench}.json"))).expect("profile json");
    let v: serde_json::Value = serde_json::from_str(&json).expect("json");
    let region = v["region_nanos"].as_f64().unwrap_or(0.0);
    let log = std::fs::read_to_string(dir.join("logs").join(format!("{bench}.log"))).unwrap_or_default();
    let process = log
        .lines()
        .rev()
        .find_map(|l| {
            l.strip_prefix("# exit status ")?
                .split(", ")
                .nth(1)?
                .strip_suffix(" s")?
                .parse()
                .ok()
        })
        .unwrap_or(f64::NAN);
    (region, process)
}

fn geomean(v: &[f64]) -> f64 {
    (v.iter().map(|x| x.ln()).sum::<f64>() / v.len() as f64).exp()
}

fn main() {
    // `cargo bench` passes --bench; `cargo test --benches` would too: only run when benchmarking.
    if !std::env::args().any(|a| a == "--bench") {
        return;
    }
    let suite = std::env::var("JOPCAL_BENCH_SUITE").unwrap_or_else(|_| "builtin".into());
    let rounds: usize = std::env::var("JOPCAL_BENCH_ROUNDS")
        .ok()
        .and_then(|r| r.parse().ok())
        .unwrap_or(3);
    let cwd: Option<PathBuf> = std::env::var_os("JOPCAL_TREE_CONFIG").map(PathBuf::from);
    let tmp = tempfile::tempdir().expect("tempdir");
    let nonce = format!(
        "--jvm-arg=-Djopcal.bench={}",
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos())
    );
    // The plain JVM's region, `rounds` times (the first also builds the suite).
    let mut plain: Vec<Vec<(String, f64)>> = Vec::new();
    for k in 0..rounds {
        let out = tmp.path().join(format!("plain{k}"));
        jopcal(
            &[
                "run",
                "--target",
                "host",
                "--suite",
                &suite,
                "--out",
                &out.to_string_lossy(),
            ],
            cwd.as_deref(),
        );
        plain.push(plain_regions(&out.join("measurements.csv")));
    }
    let mut rows = Vec::new();
    let mut took = Vec::new();
    for profiler in ["step", "instrument"] {
        let out = tmp.path().join(profiler);
        let start = Instant::now();
        jopcal(
            &[
                "profile",
                "--profiler",
                profiler,
                "--suite",
                &suite,
                "--format",
                "json",
                "-j",
                "1",
                &nonce,
                "--out",
                &out.to_string_lossy(),
            ],
            cwd.as_deref(),
        );
        took.push(start.elapsed().as_secs_f64());
        rows.push(out);
    }
    println!(
        "profiler overhead, suite {suite}: region time under each profiler against the plain JVM's (median of {rounds} runs), one run"
    );
    println!(
        "{:<12} {:>12} {:>14} {:>8} {:>14} {:>8} {:>10} {:>10}",
        "benchmark", "plain ms", "step ms", "x", "instrument ms", "x", "step s", "instr. s"
    );
    let (mut step_x, mut instr_x) = (Vec::new(), Vec::new());
    for (i, (bench, _)) in plain[0].iter().enumerate() {
        let mut p: Vec<f64> = plain.iter().filter_map(|r| r.get(i).map(|x| x.1)).collect();
        p.sort_by(f64::total_cmp);
        let p = p[p.len() / 2];
        let (s, sp) = profiled(&rows[0], bench);
        let (n, np) = profiled(&rows[1], bench);
        if p <= 0.0 || s <= 0.0 || n <= 0.0 {
            println!("{bench:<12} (no region time)");
            continue;
        }
        step_x.push(s / p);
        instr_x.push(n / p);
        println!(
            "{bench:<12} {:>12.3} {:>14.3} {:>8.1} {:>14.3} {:>8.2} {:>10.2} {:>10.2}",
            p / 1e6,
            s / 1e6,
            s / p,
            n / 1e6,
            n / p,
            sp,
            np
        );
    }
    let worst = |v: &[f64]| v.iter().copied().fold(f64::NAN, f64::max);
    println!(
        "geometric mean: step {:.1}x, instrument {:.2}x; worst: step {:.1}x, instrument {:.2}x",
        geomean(&step_x),
        geomean(&instr_x),
        worst(&step_x),
        worst(&instr_x)
    );
    println!(
        "whole `jopcal profile` (one JVM at a time): step {:.1} s, instrument {:.1} s",
        took[0], took[1]
    );
}
