//! The virtual board through the real binary: the default `jopcal run`, the
//! agreement of its cycles with the estimator under the same timing table,
//! `jopcal emu --pty` driven like a board, and its errors.

mod common;
#[allow(unused_imports)]
use common::{jopcal, repo, stderr, text};

use std::path::{Path, PathBuf};
use std::process::Command;

fn cycles(csv: &Path) -> Vec<(String, u64)> {
    jopcal_measure::measurements::read(csv)
        .unwrap()
        .into_iter()
        .map(|m| (m.cycles().expect("the virtual board measures cycles"), m.benchmark))
        .map(|(c, b)| (b, c))
        .collect()
}

/// The class-file directory the last `run` built (from its "build ..." line).
fn classes_dir(err: &str) -> PathBuf {
    let line = err
        .lines()
        .find(|l| l.trim_start().starts_with("build ") && l.contains("class files "))
        .expect("build line");
    PathBuf::from(line.rsplit("class files ").next().unwrap().trim())
}

#[test]
fn estimator_with_the_boards_table_matches_the_board_to_the_cycle() {
    let dir = tempfile::tempdir().unwrap();
    let run = |out: &Path| {
        let o = jopcal()
            .current_dir(repo())
            .args(["run", "--out"])
            .arg(out)
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", stderr(&o));
        stderr(&o)
    };
    let err = run(&dir.path().join("a"));
    let measured = cycles(&dir.path().join("a/measurements.csv"));
    assert_eq!(measured.len(), 15);
    // Determinism: the same bundles and configuration give the same cycles.
    run(&dir.path().join("b"));
    assert_eq!(cycles(&dir.path().join("b/measurements.csv")), measured);

    let prof = dir.path().join("prof");
    let o = jopcal()
        .current_dir(repo())
        .args(["profile", "--out"])
        .arg(&prof)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let model = repo().join("calibration/emu-board.toml");
    let estimated = common::estimate_with_board_table(&prof, &dir.path().join("est.csv"));

    let m = jopcal_timing::TimingModel::load(&model).unwrap();
    let harness_cycles = common::harness_cycles(&m, &classes_dir(&err));
    for (bench, c) in &measured {
        let e = estimated.iter().find(|(b, _)| b == bench).unwrap().1;
        assert_eq!(
            *c as f64 - e,
            harness_cycles,
            "{bench}: measured {c}, estimated {e}, harness {harness_cycles}"
        );
    }
}

fn compile(dir: &Path, file: &str) {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/java").join(file);
    let o = Command::new("javac")
        .args(["--release", "8", "-d"])
        .arg(dir)
        .arg(src)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
}

fn bundle(classes: &Path, main: &str, out: &Path) {
    let o = jopcal()
        .current_dir(repo())
        .args(["emu", "--classes"])
        .arg(classes)
        .args(["--main", main, "--out"])
        .arg(out)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
}

#[test]
fn emu_on_a_pty_is_driven_like_a_board() {
    let dir = tempfile::tempdir().unwrap();
    // The suite's classes, via a host build.
    let o = jopcal()
        .current_dir(repo())
        .args(["run", "--target", "host", "--bench", "Fib", "--out"])
        .arg(dir.path().join("h"))
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let classes = classes_dir(&stderr(&o));
    let image = dir.path().join("fib.jop");
    bundle(&classes, "jopcal.suite.Fib", &image);
    let trace_dir = dir.path().join("trace");
    let emu = common::VirtualBoard::start(&[
        "--protocol".as_ref(),
        "handshake".as_ref(),
        "--trace".as_ref(),
        trace_dir.as_os_str(),
    ]);
    let port = emu.port.clone();
    let out = dir.path().join("b");
    let o = jopcal()
        .args([
            "run",
            "--target",
            "board",
            "--protocol",
            "handshake",
            "--port",
            &port,
            "--image",
        ])
        .arg(&image)
        .arg("--out")
        .arg(&out)
        .output()
        .unwrap();
    // The board writes the trace when the run ends, just after the host has its results.
    let trace = dir.path().join("trace/run1.methods.csv");
    for _ in 0..100 {
        if trace.is_file() {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    drop(emu);
    assert!(o.status.success(), "{}", stderr(&o));
    let board = cycles(&out.join("measurements.csv"));
    // The same bundle through `run --target emu` gives the same count.
    let o = jopcal()
        .current_dir(repo())
        .args(["run", "--bench", "Fib", "--out"])
        .arg(dir.path().join("e"))
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(board, cycles(&dir.path().join("e/measurements.csv")));
    // The trace shows where the cycles went: fib() dominates.
    let methods = std::fs::read_to_string(dir.path().join("trace/run1.methods.csv")).unwrap();
    let top = methods.lines().nth(1).unwrap();
    assert!(top.starts_with("\"jopcal.suite.Fib.fib(I)I\","), "{methods}");
    let calls = std::fs::read_to_string(dir.path().join("trace/run1.calls.txt")).unwrap();
    assert!(calls.lines().any(|l| l.trim() == "> jopcal.suite.Fib.run(I)I"));
}

#[test]
fn unsupported_code_and_endless_loops_are_named_errors() {
    let dir = tempfile::tempdir().unwrap();
    let classes = dir.path().join("c");
    for f in ["Floaty.java", "Spin.java", "Library.java"] {
        compile(&classes, f);
    }
    let run = |main: &str, extra: &[&str]| {
        let image = dir.path().join(format!("{main}.jop"));
        let one = dir.path().join(main);
        std::fs::create_dir_all(&one).unwrap();
        std::fs::copy(classes.join(format!("{main}.class")), one.join(format!("{main}.class"))).unwrap();
        bundle(&one, main, &image);
        let o = jopcal()
            .current_dir(repo())
            .args(["emu", "--run"])
            .arg(&image)
            .args(extra)
            .output()
            .unwrap();
        assert!(!o.status.success());
        stderr(&o).lines().last().unwrap().to_string()
    };
    let e = run("Floaty", &[]);
    assert!(
        e.starts_with("jopcal: error: Floaty.main([Ljava/lang/String;)V bytecode index ")
            && e.contains("is not supported by the virtual board (no floating point)"),
        "{e}"
    );
    let e = run("Library", &[]);
    assert!(
        e.starts_with("jopcal: error: Library.main([Ljava/lang/String;)V bytecode index ")
            && e.contains("java.lang.Math.abs(I)I is not supported by the virtual board"),
        "{e}"
    );
    let e = run("Spin", &["--cycle-limit", "100000"]);
    assert!(
        e.starts_with(
            "jopcal: error: cycle limit of 100000 cycles reached in Spin.main([Ljava/lang/String;)V bytecode index"
        ),
        "{e}"
    );
}

/// A suite directory under `dir` whose one workload, `name`, is the test
/// program `file` (from tests/java), put in `package` if given.
fn one_workload_suite(dir: &Path, file: &str, package: Option<&str>, name: &str) -> PathBuf {
    let fw = dir.join("fw");
    let class = file.trim_end_matches(".java");
    let src = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/java").join(file)).unwrap();
    let (dir_rel, text, main) = match package {
        Some(p) => (
            format!("src/{p}"),
            format!("package {p};\n{src}"),
            format!("{p}.{class}"),
        ),
        None => ("src".to_string(), src, class.to_string()),
    };
    std::fs::create_dir_all(fw.join(&dir_rel)).unwrap();
    std::fs::write(fw.join(&dir_rel).join(file), text).unwrap();
    std::fs::write(
        fw.join("suite.toml"),
        format!("[[workload]]\nname = \"{name}\"\nmain = \"{main}\"\n"),
    )
    .unwrap();
    fw
}

#[test]
fn an_endless_workload_on_the_board_is_a_named_failure() {
    let dir = tempfile::tempdir().unwrap();
    let fw = one_workload_suite(dir.path(), "Spin.java", Some("t"), "Spin");
    let o = jopcal()
        .env("JOPCAL_CACHE", dir.path().join("cache"))
        .arg("--firmware")
        .arg(&fw)
        .args(["run", "--timeout", "2", "--out"])
        .arg(dir.path().join("out"))
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(1));
    let e = stderr(&o);
    assert!(
        e.lines().last().unwrap().starts_with(
            "jopcal: error: workload Spin: the run printed no result line; last output: virtual board error: cycle limit of 200000000 cycles reached in t.Spin.main"
        ),
        "{e}"
    );
}

#[test]
fn a_trees_own_harness_on_the_board_is_read_as_milliseconds() {
    let dir = tempfile::tempdir().unwrap();
    let fw = one_workload_suite(dir.path(), "TreeStyle.java", None, "Toy");
    let o = jopcal()
        .env("JOPCAL_CACHE", dir.path().join("cache"))
        .arg("--firmware")
        .arg(&fw)
        .args(["run", "--out"])
        .arg(dir.path().join("out"))
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let rows = jopcal_measure::measurements::read(&dir.path().join("out/measurements.csv")).unwrap();
    assert_eq!(rows.len(), 1);
    let r = &rows[0];
    assert_eq!(
        (r.benchmark.as_str(), r.unit, r.iterations),
        ("Toy", jopcal_measure::Unit::Ms, 0)
    );
    // Two million trips of a loop of about forty cycles at 100 MHz: most of a second.
    assert!((100..5000).contains(&r.value), "{}", r.value);
}
