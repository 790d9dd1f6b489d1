//! The instrumenting profiler against the single-step one, its oracle: the
//! real `jopcal profile` runs the same programs on the real JVM under each
//! (`--profiler step`, `--profiler instrument`), and `--against` compares
//! every context's counts per opcode form, the operands, the native calls
//! and the call/return stream of the region, naming the first difference.

mod common;
use common::{jopcal, stderr, text};

use std::path::Path;
use std::process::Command;

fn profile(profiler: &str, args: &[&str], out: &Path, against: Option<&Path>) -> (bool, String, String) {
    let mut cmd = jopcal();
    cmd.args(["profile", "--profiler", profiler])
        .args(args)
        .arg("--out")
        .arg(out);
    if let Some(a) = against {
        cmd.arg("--against").arg(a);
    }
    let o = cmd.output().unwrap();
    let (so, se) = text(&o);
    (o.status.success(), so, se)
}

#[test]
fn both_profilers_count_the_same_tricky_code() {
    both_count_alike("Tricky", &[]);
}

/// Without class data sharing (as under `--patch-module`, which a tree's
/// host runs use) the JVM keeps no stack maps of the boot loader's classes,
/// which it does not verify, and hands them so to a retransformation: the
/// instrumenting profiler still rewrites them and counts their code.
#[test]
fn both_profilers_count_the_jdk_alike_without_class_data_sharing() {
    both_count_alike("Switchy", &["--jvm-arg=-Xshare:off"]);
}

/// Recursive calls that return to the very bytecode they left from, which
/// HotSpot does not report to the single-step agent a second time in a row
/// (docs/notes/profilers.md, item 8): the agent missed one return a level.
#[test]
fn both_profilers_count_the_returns_of_recursive_calls() {
    both_count_alike("Recursive", &[]);
}

/// `anewarray` and `multianewarray` in methods with nothing else that names
/// the constant pool: the single-step agent recorded none of their arrays.
#[test]
fn both_profilers_record_arrays_of_references() {
    let profile = both_count_alike("RefArrays", &[]);
    // 100 Object[2] and 50 int[2][3] (an outer array of 2 and 2 of 3 each).
    let made = std::collections::BTreeMap::from([(2u32, 150u64), (3, 100)]);
    assert_eq!(profile.allocations, made);
}

/// A synchronized block left by an exception, through its handler (whose
/// hooks the rewrite moves to where the handler's own range ends).
#[test]
fn both_profilers_count_the_same_synchronized_blocks() {
    both_count_alike("Locked", &[]);
}

/// The instrumenting profiler's JVM compiles with C1 alone (tier 1), which
/// compiles no method whose exception handler may throw to itself. javac's
/// handler of a synchronized block covers its own code, and the calls the
/// rewrite adds there would make it so: the method would stay interpreted.
/// A hot method with a synchronized block must be compiled.
#[test]
fn a_synchronized_block_stays_compilable_under_the_instrumenting_profiler() {
    let tmp = tempfile::tempdir().unwrap();
    let classes = compile_test_class(tmp.path(), "Locked");
    let cp = classes.to_string_lossy().into_owned();
    let out = tmp.path().join("instrument");
    let args = [
        "--cp",
        &cp,
        "--main",
        "Locked",
        "--region",
        "method",
        "--method",
        "Locked.run",
        "--jvm-arg=-XX:+PrintCompilation",
    ];
    let (ok, so, se) = profile("instrument", &args, &out, None);
    assert!(ok, "profile failed: {so}{se}");
    let log = std::fs::read_to_string(out.join("logs/Locked.log")).expect("the JVM's log");
    let bump: Vec<&str> = log.lines().filter(|l| l.contains("Locked::bump")).collect();
    assert!(!bump.is_empty(), "Locked.bump was never compiled:\n{log}");
    assert!(
        bump.iter().all(|l| !l.contains("SKIPPED")),
        "C1 gave up on Locked.bump: {bump:?}"
    );
}

fn compile_test_class(dir: &Path, class: &str) -> std::path::PathBuf {
    let classes = dir.join("classes");
    let jdk = jopcal_workloads::Jdk::detect().expect("a JDK (run scripts/setup)");
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("tests/java/{class}.java"));
    let o = Command::new(&jdk.javac)
        .args(["--release", "8", "-d"])
        .arg(&classes)
        .arg(&src)
        .output()
        .unwrap();
    assert!(o.status.success(), "javac: {}", stderr(&o));
    classes
}

/// Compiles `tests/java/<class>.java`, profiles its `run()` under each
/// profiler (with `extra` options) and expects the same profile.
fn both_count_alike(class: &str, extra: &[&str]) -> jopcal_profile::Profile {
    let tmp = tempfile::tempdir().unwrap();
    let classes = compile_test_class(tmp.path(), class);
    let cp = classes.to_string_lossy().into_owned();
    let method = format!("{class}.run");
    let mut args = vec!["--cp", &cp, "--main", class, "--region", "method", "--method", &method];
    args.extend(extra);
    let step = tmp.path().join("step");
    let (ok, _, err) = profile("step", &args, &step, None);
    assert!(ok, "{err}");
    let (ok, _, err) = profile("instrument", &args, &tmp.path().join("instrument"), Some(&step));
    assert!(ok, "{err}");
    assert!(err.contains(&format!("{class}: the same as")), "{err}");
    jopcal_profile::read_file(&step.join(format!("{class}.jopprof"))).unwrap()
}

/// The whole built-in suite. Shapes and Alloc load a class inside their
/// region: the JDK's class loader then runs with the instrumenting
/// profiler's own classes in its state, and may take another path for a
/// few bytecodes (docs/notes/profilers.md), which is the JVM's own work:
/// no estimate reads it, and the comparison says it aside.
#[test]
fn both_profilers_count_the_same_builtin_workloads() {
    let tmp = tempfile::tempdir().unwrap();
    let benches = [
        "Sieve", "Sort", "MatMul", "Crc32", "Fir", "Lift", "Pid", "Queens", "Fib", "Long64", "Aes", "Packet", "Shapes",
        "Alloc", "Switch",
    ];
    let mut args = Vec::new();
    for b in benches {
        args.extend(["--bench", b]);
    }
    let step = tmp.path().join("step");
    let (ok, _, err) = profile("step", &args, &step, None);
    assert!(ok, "{err}");
    let (ok, _, err) = profile("instrument", &args, &tmp.path().join("instrument"), Some(&step));
    assert!(ok, "{err}");
    for b in benches {
        assert!(err.contains(&format!("{b}: the same as")), "{b}: {err}");
    }
}

/// Every allocation of the region, and only the program's, in both
/// profiles: the built-in Alloc makes 600 nodes of three fields (a word
/// each) and 600 `int[4]`, and nothing else. Its region also loads a class
/// (docs/notes/profilers.md, item 1), which allocates on the host and not
/// on JOP. (The single-step agent recorded no allocation here before it
/// primed HotSpot's heap sampling: item 6.)
#[test]
fn both_profilers_record_the_programs_allocations_alone() {
    let tmp = tempfile::tempdir().unwrap();
    let made = std::collections::BTreeMap::from([(3u32, 600u64), (4, 600)]);
    for profiler in ["step", "instrument"] {
        let out = tmp.path().join(profiler);
        let (ok, _, err) = profile(profiler, &["--bench", "Alloc"], &out, None);
        assert!(ok, "{err}");
        let p = jopcal_profile::read_file(&out.join("Alloc.jopprof")).unwrap();
        assert_eq!(p.allocations, made, "{profiler}");
    }
}

#[test]
fn a_difference_is_named_and_fails_the_run() {
    let tmp = tempfile::tempdir().unwrap();
    let step = tmp.path().join("step");
    let (ok, _, err) = profile("step", &["--bench", "Fib"], &step, None);
    assert!(ok, "{err}");
    // Another benchmark's profile under Fib's name: every count differs.
    std::fs::copy(step.join("Fib.jopprof"), tmp.path().join("Fib.jopprof")).unwrap();
    let (ok, _, err) = profile("step", &["--bench", "Sieve"], &step, None);
    assert!(ok, "{err}");
    std::fs::copy(tmp.path().join("Fib.jopprof"), step.join("Sieve.jopprof")).unwrap();
    let (ok, _, err) = profile("instrument", &["--bench", "Sieve"], &tmp.path().join("i"), Some(&step));
    assert!(!ok, "a different profile passed: {err}");
    assert!(err.contains("Sieve: differs from"), "{err}");
    assert!(err.contains("1 of 1 profiles differ"), "{err}");
}
