//! How fast the virtual board simulates: the whole built-in suite (the `All`
//! program) run five times on one board configuration; prints simulated
//! cycles per wall-clock second and the simulated time of a 100 MHz board
//! against the wall time, as a ratio.

use jopcal_emu::{run_bundle, BoardConfig, Bundle};
use std::path::Path;
use std::process::Command;
use std::time::Instant;

fn main() {
    if !std::env::args().any(|a| a == "--bench") {
        return;
    }
    let repo = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let tmp = tempfile::tempdir().unwrap();
    let mut files = Vec::new();
    let mut todo = vec![repo.join("jop-firmware/src"), repo.join("jop-firmware/host-stubs")];
    while let Some(d) = todo.pop() {
        for e in std::fs::read_dir(d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                todo.push(p);
            } else if p.extension().is_some_and(|x| x == "java") {
                files.push(p);
            }
        }
    }
    let o = Command::new("javac")
        .args(["--release", "8", "-d"])
        .arg(tmp.path())
        .args(&files)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let cfg = BoardConfig::load(&repo.join("calibration/emu-board.toml"), &[]).unwrap();
    let bundle = Bundle::from_dir(tmp.path(), "jopcal.suite.All").unwrap();
    let mut best = f64::MAX;
    let mut cycles = 0;
    for _ in 0..5 {
        let start = Instant::now();
        let r = run_bundle(&bundle, &cfg, false, &mut |_| Ok(()), &mut |_| Ok(())).unwrap();
        best = best.min(start.elapsed().as_secs_f64());
        cycles = r.cycles;
    }
    let rate = cycles as f64 / best;
    println!("virtual board, whole suite (All): {cycles} cycles in {best:.3} s (best of 5)");
    println!("  {:.0} M simulated cycles/s", rate / 1e6);
    println!(
        "  {:.2}x real time of a {} MHz JOP",
        rate / (cfg.clock_mhz * 1e6),
        cfg.clock_mhz
    );
}
