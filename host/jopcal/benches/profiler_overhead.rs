//! What profiling costs, per benchmark and in one run: each program's
//! region (from the harness's start() returning to its stop()) on the plain
//! JVM, and the same region under each profiler (the wall time each profile
//! records of its region), as ratios to the plain JVM's; the whole profiling
//! process (JVM start-up, class loading and rewriting, writing the profile)
//! is a separate column. The plain JVM is `jopcal profile --profiler clock`:
//! the same program with the same JVM options (a tree suite's routed
//! routines and shadow library included), only the region's bounds
//! rewritten. The geometric mean hides the outliers: the worst ratio is
//! printed too.
//!
//! `cargo bench -p jopcal --bench profiler_overhead` runs the built-in
//! suite. Set `JOPCAL_BENCH_SUITE=jembench` (with `JOPCAL_JOP_HOME` naming a
//! tree, and `JOPCAL_TREE_CONFIG` its jopcal.toml directory if the tree
//! needs one) for JemBench's harnesses; `JOPCAL_BENCH_PROFILERS` (default
//! `step,instrument`) says which profilers. Profiles are never taken from
//! the cache here: each run passes the JVM a property of its own, which is
//! part of the cache key. The plain JVM's region is the median of
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
    let profile = |profiler: &str, out: &Path, nonce: &str| {
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
                nonce,
                "--out",
                &out.to_string_lossy(),
            ],
            cwd.as_deref(),
        );
        start.elapsed().as_secs_f64()
    };
    let mut plain: Vec<PathBuf> = Vec::new();
    for k in 0..rounds {
        let out = tmp.path().join(format!("plain{k}"));
        profile("clock", &out, &format!("{nonce}.{k}"));
        plain.push(out);
    }
    let names: Vec<String> = std::fs::read_dir(&plain[0])
        .expect("profiles")
        .filter_map(|e| {
            let p = e.ok()?.path();
            (p.extension()? == "json").then(|| p.file_stem().unwrap().to_string_lossy().into_owned())
        })
        .collect();
    let mut names = names;
    names.sort();
    let mut rows = Vec::new();
    let mut took = Vec::new();
    let profilers: Vec<String> = std::env::var("JOPCAL_BENCH_PROFILERS")
        .unwrap_or_else(|_| "step,instrument".into())
        .split(',')
        .map(str::to_string)
        .collect();
    for profiler in &profilers {
        let out = tmp.path().join(profiler);
        took.push(profile(profiler, &out, &nonce));
        rows.push(out);
    }
    println!(
        "profiler overhead, suite {suite}: region time under each profiler against the plain JVM's (`--profiler clock`, median of {rounds} runs), one run"
    );
    print!("{:<12} {:>10}", "benchmark", "plain ms");
    for p in &profilers {
        print!(" {:>14} {:>8} {:>9}", format!("{p} ms"), "x", "JVM s");
    }
    println!();
    let mut ratios = vec![Vec::new(); profilers.len()];
    for bench in &names {
        let mut p: Vec<f64> = plain.iter().map(|d| profiled(d, bench).0).collect();
        p.sort_by(f64::total_cmp);
        let p = p[p.len() / 2];
        print!("{bench:<12} {:>10.3}", p / 1e6);
        for (k, dir) in rows.iter().enumerate() {
            let (r, process) = profiled(dir, bench);
            if p > 0.0 && r > 0.0 {
                ratios[k].push(r / p);
            }
            print!(" {:>14.3} {:>8.2} {:>9.2}", r / 1e6, r / p, process);
        }
        println!();
    }
    let worst = |v: &[f64]| v.iter().copied().fold(f64::NAN, f64::max);
    for (k, p) in profilers.iter().enumerate() {
        println!(
            "{p}: geometric mean {:.2}x, worst {:.2}x the plain JVM's region; whole `jopcal profile` (one JVM at a time) {:.1} s",
            geomean(&ratios[k]),
            worst(&ratios[k]),
            took[k]
        );
    }
}
