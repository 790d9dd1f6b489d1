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

/// Runs `main` of the class files in `classes` on the virtual board with its
/// own timing; returns the report and what it printed.
fn run_on_board(classes: &Path, main: &str) -> (jopcal_emu::board::RunReport, String) {
    let cfg = BoardConfig::load(&repo().join("calibration/emu-board.toml"), &[]).unwrap();
    let bundle = Bundle::from_dir(classes, main).unwrap();
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
    (report, String::from_utf8_lossy(&out).into_owned())
}

#[test]
fn every_workload_runs_and_checks_itself() {
    let tmp = tempfile::tempdir().unwrap();
    compile_suite(tmp.path());
    let (report, text) = run_on_board(tmp.path(), "jopcal.suite.All");
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

/// A subclass's instance fields come after its superclass's: JemBench's Lift
/// reads `this.io` (declared in its abstract superclass) from a subclass
/// object with fields of its own, which once shared the same slots.
#[test]
fn subclass_fields_never_share_slots_with_superclass_fields() {
    let tmp = tempfile::tempdir().unwrap();
    let classes = compile(
        tmp.path(),
        "Fields",
        r#"
class Io { boolean[] out = new boolean[4]; int[] analog = new int[3]; }
abstract class Base {
    protected Io io; protected int d1, d2;
    Base(Io io) { this.io = io; d1 = 5; }
}
class Sub extends Base {
    int a = 7; Io other; long wide = 1L << 40;
    Sub(Io io) { super(io); other = new Io(); a = 9; d2 = 11; }
    int sum() {
        io.out[1] = true;
        return (io.out[1] ? 1 : 0) + a + d1 + d2 + io.analog.length + (int) (wide >> 40) + other.out.length;
    }
}
public class Fields {
    public static void main(String[] args) { System.out.print(new Sub(new Io()).sum()); }
}
"#,
    );
    let (report, text) = run_on_board(&classes, "Fields");
    assert_eq!(report.exit, Ok(Exit::Returned), "{text}");
    // 1 (out[1]) + 9 (a) + 5 (d1) + 11 (d2) + 3 (analog) + 1 (wide >> 40) + 4 (other.out)
    assert!(text.starts_with("34"), "{text}");
}

/// Compiles `source` (one file, public class `class`) with javac into `dir/classes`.
fn compile(dir: &Path, class: &str, source: &str) -> PathBuf {
    let src = dir.join("src");
    std::fs::create_dir_all(&src).unwrap();
    let file = src.join(format!("{class}.java"));
    std::fs::write(&file, source).unwrap();
    let classes = dir.join("classes");
    let o = std::process::Command::new("javac")
        .args(["--release", "8", "-d"])
        .arg(&classes)
        .arg(&file)
        .output()
        .expect("javac (run scripts/setup)");
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    classes
}

/// JemBench's executors on one CPU: workers that extend `Thread` but are run
/// directly, work handed over as `Runnable`s, the processor count asked of
/// `Runtime`, and a lock on a class object.
#[test]
fn one_cpu_executors_run_without_starting_threads() {
    let tmp = tempfile::tempdir().unwrap();
    let classes = compile(
        tmp.path(),
        "Exec",
        r#"
class Worker extends Thread {
    Runnable work; int done;
    public void run() { work.run(); done++; }
}
public class Exec {
    static int count;
    static synchronized void bump() { count++; }
    public static void main(String[] args) {
        int cpus = Runtime.getRuntime().availableProcessors();
        Worker w = new Worker();
        w.work = new Runnable() { public void run() { synchronized (Exec.class) { bump(); } } };
        Runnable r = w;
        for (int i = 0; i < 5; i++) r.run();
        new Thread(w);
        System.out.print(cpus * 1000 + count * 10 + w.done);
    }
}
"#,
    );
    let (report, text) = run_on_board(&classes, "Exec");
    assert_eq!(report.exit, Ok(Exit::Returned), "{text}");
    // One CPU; bump() 5 times; the worker ran 5 times.
    assert!(text.starts_with("1055"), "{text}");
}
