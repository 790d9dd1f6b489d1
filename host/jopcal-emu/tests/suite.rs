//! The built-in suite on the virtual board, without the serial line: every
//! workload runs to `@jopcal done` with its self-check passing.

use jopcal_emu::{run_bundle, BoardConfig, Bundle, Exit};
use std::path::{Path, PathBuf};

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .canonicalize()
        .unwrap()
}

/// Compiles the suite with javac (jopcal's own build) into `out`.
pub fn compile_suite(out: &Path) {
    let jdk = jopcal_workloads::Jdk::detect().expect("a JDK (run scripts/setup)");
    let built = jopcal_workloads::build_suite(&repo().join("jop-firmware"), &jdk, out).unwrap();
    copy_dir(&built.classes, out);
}

fn copy_dir(from: &Path, to: &Path) {
    for e in std::fs::read_dir(from).unwrap() {
        let p = e.unwrap().path();
        let t = to.join(p.file_name().unwrap());
        if p.is_dir() {
            std::fs::create_dir_all(&t).unwrap();
            copy_dir(&p, &t);
        } else {
            std::fs::copy(&p, &t).unwrap();
        }
    }
}

#[test]
fn every_workload_runs_and_checks_itself() {
    let tmp = tempfile::tempdir().unwrap();
    compile_suite(tmp.path());
    let cfg = BoardConfig::load(&repo().join("calibration/emu-board.toml"), &[]).unwrap();
    let bundle = Bundle::from_dir(tmp.path(), "jopcal.suite.All").unwrap();
    let mut out = Vec::new();
    let report = run_bundle(
        &bundle,
        &cfg,
        false,
        &mut |b| {
            out.extend_from_slice(b);
            Ok(())
        },
        &mut |_| Ok(()),
    )
    .unwrap();
    let text = String::from_utf8_lossy(&out);
    assert_eq!(report.exit, Ok(Exit::Returned), "{text}");
    assert!(text.contains("@jopcal done\n"), "{text}");
    assert!(!text.contains("@jopcal error"), "{text}");
    assert_eq!(text.matches("@jopcal result").count(), 15, "{text}");
    eprintln!("{text}{} cycles in {:?}", report.cycles, report.wall);
}

/// A corrupted class file is a load error or a run-time error, never a crash.
#[test]
fn corrupted_class_files_never_crash_the_board() {
    let tmp = tempfile::tempdir().unwrap();
    compile_suite(tmp.path());
    let mut cfg = BoardConfig::load(&repo().join("calibration/emu-board.toml"), &[]).unwrap();
    cfg.cycle_limit = 5_000_000;
    let good = Bundle::from_dir(tmp.path(), "jopcal.suite.Fib").unwrap();
    let mut rng = jopcal_link::fault::Rng::new(42);
    for case in 0..300 {
        let mut b = good.clone();
        let k = (rng.next_u64() % b.classes.len() as u64) as usize;
        let class = &mut b.classes[k];
        for _ in 0..1 + rng.next_u64() % 3 {
            let at = (rng.next_u64() % class.len() as u64) as usize;
            class[at] = rng.next_u64() as u8;
        }
        let report = run_bundle(&b, &cfg, false, &mut |_| Ok(()), &mut |_| Ok(()));
        match report {
            Ok(_) => {}
            Err(e) => panic!("case {case}: the board crashed: {e}"),
        }
    }
}
