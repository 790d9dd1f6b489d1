//! The virtual board against the JOP tree's simulator on the same images,
//! side by side in one run: each image runs once in JopSim and (best of
//! three) on the virtual board; prints both wall times, their ratio, and
//! whether the result lines agree.
//!
//! Needs the tree's images and JopSim, so it runs only when told where:
//!   JOPCAL_BENCH_IMAGES=DIR (the `images/` of a `run --target jopsim`)
//!   JOPCAL_BENCH_JOPSIM="java -Dlog=false -cp ... com.jopdesign.tools.JopSim"
//! `cargo bench -p jopcal-emu --bench images`.

use jopcal_emu::image::run_image;
use jopcal_emu::BoardConfig;
use jopcal_link::JopImage;
use std::path::Path;
use std::process::Command;
use std::time::Instant;

fn main() {
    if !std::env::args().any(|a| a == "--bench") {
        return;
    }
    let (Some(dir), Some(jopsim)) = (
        std::env::var_os("JOPCAL_BENCH_IMAGES"),
        std::env::var("JOPCAL_BENCH_JOPSIM").ok(),
    ) else {
        println!("images: skipped (set JOPCAL_BENCH_IMAGES=DIR and JOPCAL_BENCH_JOPSIM=\"java ... JopSim\")");
        return;
    };
    let repo = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let cfg = BoardConfig::load(&repo.join("calibration/jop-devel.toml"), &[]).expect("the tree's table");
    let mut images: Vec<_> = std::fs::read_dir(&dir)
        .expect("JOPCAL_BENCH_IMAGES")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "jop"))
        .collect();
    images.sort();
    println!(
        "{:<10} {:>14} {:>10} {:>10} {:>8}  result lines",
        "image", "cycles", "JopSim s", "board s", "ratio"
    );
    let (mut sim_total, mut board_total) = (0.0, 0.0);
    for path in images {
        let name = path.file_stem().unwrap().to_string_lossy().into_owned();
        let start = Instant::now();
        let out = Command::new("sh")
            .arg("-c")
            .arg(format!("{jopsim} {}", path.display()))
            .output()
            .expect("JopSim runs");
        let sim = start.elapsed().as_secs_f64();
        let sim_line = result_line(&String::from_utf8_lossy(&out.stdout));
        let image = JopImage::load(&path, None).expect("an image");
        let mut best = f64::MAX;
        let mut text = Vec::new();
        let mut cycles = 0;
        for _ in 0..3 {
            text.clear();
            let start = Instant::now();
            let run =
                run_image(&image, &cfg, false, None, &mut |b| text.extend_from_slice(b)).expect("the board runs it");
            best = best.min(start.elapsed().as_secs_f64());
            cycles = run.cycles;
        }
        let board_line = result_line(&String::from_utf8_lossy(&text));
        sim_total += sim;
        board_total += best;
        println!(
            "{name:<10} {cycles:>14} {sim:>10.3} {best:>10.3} {:>7.0}x  {}",
            sim / best,
            if sim_line == board_line { "equal" } else { "DIFFER" }
        );
    }
    println!(
        "{:<10} {:>14} {sim_total:>10.3} {board_total:>10.3} {:>7.0}x",
        "all",
        "",
        sim_total / board_total
    );
}

/// The `@jopcal result` line of a run's output.
fn result_line(out: &str) -> String {
    out.lines()
        .find(|l| l.starts_with("@jopcal result"))
        .unwrap_or("(none)")
        .trim()
        .to_string()
}
