//! How fast the virtual board simulates: the whole built-in suite (the `All`
//! program) run five times on one board configuration; prints simulated
//! cycles per wall-clock second and the simulated time of a 100 MHz board
//! against the wall time, as a ratio.

use jopcal_emu::{run_bundle, BoardConfig, Bundle};
use std::path::Path;
use std::time::Instant;

fn main() {
    if !std::env::args().any(|a| a == "--bench") {
        return;
    }
    let repo = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let tmp = tempfile::tempdir().unwrap();
    let jdk = jopcal_workloads::Jdk::detect().expect("a JDK (run scripts/setup)");
    let built = jopcal_workloads::build_suite(&repo.join("jop-firmware"), &jdk, tmp.path()).unwrap();
    let cfg = BoardConfig::load(&repo.join("calibration/emu-board.toml"), &[]).unwrap();
    let bundle = Bundle::from_dir(&built.classes, "jopcal.suite.All").unwrap();
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
