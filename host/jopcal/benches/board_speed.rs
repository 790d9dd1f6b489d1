//! How fast the virtual board runs a JOP tree's images as the processor:
//! `jopcal emu --run IMAGE` on each image, with the tree set, and the
//! fastest of `JOPCAL_BENCH_RUNS` runs (default 5) taken from the board's
//! own report (simulated cycles and the run's wall time, image loading
//! left out). With `JOPCAL_BENCH_BASELINE` naming another jopcal binary
//! (an earlier commit's), both run alternately, run for run, and the table
//! gives their ratio from the one run of this bench, and whether they
//! counted the same cycles.
//!
//! Needs a tree and its images, so it runs only when told where:
//!   JOPCAL_JOP_HOME=TREE  JOPCAL_BENCH_IMAGES=DIR (the `images/` of a
//!   `run --suite jembench` on the tree)
//! `cargo bench -p jopcal --bench board_speed`.

use std::path::{Path, PathBuf};
use std::process::Command;

/// One run's report: (simulated cycles, wall seconds).
fn run_once(bin: &Path, image: &Path) -> (u64, f64) {
    let out = Command::new(bin)
        .arg("emu")
        .arg("--run")
        .arg(image)
        .output()
        .unwrap_or_else(|e| panic!("{}: {e}", bin.display()));
    let text = String::from_utf8_lossy(&out.stderr).into_owned() + &String::from_utf8_lossy(&out.stdout);
    // "emu N cycles in T s (R M cycles/s)"
    let line = text
        .lines()
        .rev()
        .find(|l| l.contains(" cycles in ") && l.contains("M cycles/s"))
        .unwrap_or_else(|| {
            panic!(
                "{} {}: no speed report in its output:\n{text}",
                bin.display(),
                image.display()
            )
        });
    let words: Vec<&str> = line.split_whitespace().collect();
    let at = words.iter().position(|w| *w == "cycles").expect("cycles");
    let cycles = words[at - 1].parse().expect("a cycle count");
    let seconds = words[at + 2].parse().expect("seconds");
    (cycles, seconds)
}

fn main() {
    if !std::env::args().any(|a| a == "--bench") {
        return;
    }
    let (Some(dir), Some(_)) = (
        std::env::var_os("JOPCAL_BENCH_IMAGES"),
        std::env::var_os("JOPCAL_JOP_HOME"),
    ) else {
        println!("board_speed: skipped (set JOPCAL_JOP_HOME=TREE and JOPCAL_BENCH_IMAGES=DIR)");
        return;
    };
    let runs: usize = std::env::var("JOPCAL_BENCH_RUNS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(5);
    let this = PathBuf::from(env!("CARGO_BIN_EXE_jopcal"));
    let baseline = std::env::var_os("JOPCAL_BENCH_BASELINE").map(PathBuf::from);
    let mut images: Vec<PathBuf> = std::fs::read_dir(&dir)
        .expect("JOPCAL_BENCH_IMAGES")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "jop"))
        .collect();
    images.sort();
    println!(
        "{:<10} {:>12} {:>9} {:>11} {:>11} {:>7}  same cycles",
        "image", "cycles", "this s", "M cycles/s", "baseline s", "ratio"
    );
    for image in images {
        let name = image.file_stem().unwrap().to_string_lossy().into_owned();
        let (mut best, mut base_best) = (f64::MAX, f64::MAX);
        let (mut cycles, mut base_cycles) = (0, 0);
        for _ in 0..runs {
            if let Some(b) = &baseline {
                let (c, s) = run_once(b, &image);
                base_cycles = c;
                base_best = base_best.min(s);
            }
            let (c, s) = run_once(&this, &image);
            cycles = c;
            best = best.min(s);
        }
        let rate = cycles as f64 / best / 1e6;
        match baseline {
            Some(_) => println!(
                "{name:<10} {cycles:>12} {best:>9.3} {rate:>11.0} {base_best:>11.3} {:>7.2}  {}",
                best / base_best,
                if cycles == base_cycles { "yes" } else { "NO" }
            ),
            None => println!("{name:<10} {cycles:>12} {best:>9.3} {rate:>11.0}"),
        }
    }
}
