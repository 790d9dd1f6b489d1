//! The built-in suite on the virtual board, without the serial line: every
//! workload runs to `@jopcal done` with its self-check passing.

use jopcal_emu::{run_bundle, BoardConfig, Bundle, Exit};
use std::path::{Path, PathBuf};
use std::process::Command;

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .canonicalize()
        .unwrap()
}

/// Compiles the suite with javac into a temporary directory.
pub fn compile_suite(out: &Path) {
    let root = repo().join("jop-firmware");
    let mut files = Vec::new();
    let mut todo = vec![root.join("src"), root.join("host-stubs")];
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
        .args(["--release", "8", "-encoding", "UTF-8", "-d"])
        .arg(out)
        .args(&files)
        .output()
        .expect("javac (run scripts/setup)");
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
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
