//! A JOP tree's benchmarks through the real binary, on the miniature tree in
//! `tests/jop-tree` (written for these tests in the layout of a JOP tree):
//! the `jembench` and `jbe` suites generated from its fixed-count harnesses,
//! run on the virtual board, profiled, estimated and calibrated by
//! `validate`; the tree's own harnesses profiled over a method; images built
//! by a configured toolchain and run in "JopSim" and on a board.

mod common;
use common::{copy_tree, estimate_with_board_table, harness_cycles, jopcal, repo, stderr, VirtualBoard};

use std::path::{Path, PathBuf};

fn tree() -> PathBuf {
    repo().join("host/jopcal/tests/jop-tree")
}

/// The class-file directory a command built (from its "build ..." line).
fn classes_dir(err: &str) -> PathBuf {
    let line = err
        .lines()
        .find(|l| l.trim_start().starts_with("build ") && l.contains("class files "))
        .expect("build line");
    PathBuf::from(line.rsplit("class files ").next().unwrap().trim())
}

/// A JemBench micro-benchmark written for this test.
const TWICE: &str = "package jembench.micro;\n\nimport jembench.SerialBenchmark;\n\npublic class Twice extends SerialBenchmark {\n    public int perform(int cnt) {\n        int sum = 0;\n        for (int i = 0; i < cnt; i++) {\n            sum += i + i;\n        }\n        return sum;\n    }\n}\n";

/// A harness of the tree's form whose benchmark uses `java.util.Random`.
const LOOP_RANDOM: &str = "package fixed;\npublic class LoopRandom {\n    public static void main(String[] args) {\n        java.util.Random r = new java.util.Random(5);\n        int t1 = (int) System.currentTimeMillis();\n        for (int i = 0; i < 50; i++) {\n            r.nextInt();\n        }\n        int t2 = (int) System.currentTimeMillis();\n    }\n}\n";

#[test]
fn validate_runs_the_trees_jembench_suite_end_to_end() {
    let dir = tempfile::tempdir().unwrap();
    // The miniature tree plus a harness whose benchmark the virtual board cannot
    // run (it uses java.util.Random): a failure of its own, the rest goes on.
    let home = dir.path().join("jop");
    copy_tree(&tree(), &home);
    std::fs::write(home.join("java/target/src/bench/fixed/LoopRandom.java"), LOOP_RANDOM).unwrap();
    // And a micro-benchmark of JemBench's own, which joins the calibration.
    let jembench = home.join("java/target/src/bench/jembench");
    std::fs::write(jembench.join("micro/Twice.java"), TWICE).unwrap();
    let main = std::fs::read_to_string(jembench.join("Main.java")).unwrap();
    let main = main.replace(
        "execute(new jembench.micro.Plain());",
        "execute(new jembench.micro.Plain());\n        execute(new jembench.micro.Twice());",
    );
    std::fs::write(jembench.join("Main.java"), main).unwrap();
    let out = dir.path().join("v");
    let o = jopcal()
        .arg("--jop-home")
        .arg(&home)
        .args(["validate", "--suite", "jembench", "--out"])
        .arg(&out)
        .output()
        .unwrap();
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(
        err.contains(
            "the tree's 1 micro-benchmarks (JemBench's, as jembench-all times them) join the calibration: Twice"
        ),
        "{err}"
    );
    let calibration: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("calibration.json")).unwrap()).unwrap();
    assert!(
        calibration["fit"]
            .as_array()
            .unwrap()
            .iter()
            .any(|r| r["benchmark"] == "Twice"),
        "{calibration}"
    );
    assert!(
        err.lines().last().unwrap().starts_with("jopcal: error: workload Random: the run printed no result line; last output: virtual board error: fixed.JopcalLoopRandom.main([Ljava/lang/String;)V bytecode index 0: class java/util/Random is not supported by the virtual board"),
        "{err}"
    );
    assert!(
        err.contains("left out of the fit: Random: profiled but not measured"),
        "{err}"
    );
    assert!(
        err.contains("suite jembench: 4 harnesses of ") && err.contains("(Bits, Insertion, Queue, Random)"),
        "{err}"
    );
    let summary: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("summary.json")).unwrap()).unwrap();
    // Every stage ran, but a workload failed: the fit rests on fewer benchmarks.
    assert_eq!(summary["complete"], false, "{summary}");
    assert_eq!(summary["failures"][0]["name"], "Random", "{summary}");
    assert_eq!(summary["suite"], "jembench");
    let benches = summary["benchmarks"].as_array().unwrap();
    let names: Vec<&str> = benches.iter().map(|b| b["name"].as_str().unwrap()).collect();
    assert_eq!(names, ["Bits", "Insertion", "Queue"]);
    for b in benches {
        // The iteration count is the harness's literal.
        let want = match b["name"].as_str().unwrap() {
            "Bits" => 100,
            "Insertion" => 20,
            _ => 200,
        };
        assert_eq!(b["iterations"], want, "{b}");
        let loo = b["loo_error_pct"].as_f64().unwrap();
        assert!(loo.abs() < 1.0, "{b}");
    }

    // Beside the published cross-profilers: none of the miniature tree's benchmarks is theirs.
    let published = std::fs::read_to_string(out.join("published.md")).unwrap();
    assert!(
        published.contains("No benchmark of this run is in the published tables"),
        "{published}"
    );

    // Published elsewhere, the fitted table and the fit's record still find their base.
    let dest = dir.path().join("pub/reports");
    let o = jopcal()
        .args(["report", "--from"])
        .arg(&out)
        .arg("--publish")
        .arg(&dest)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    jopcal_timing::TimingModel::load(&dest.join("calibrated.toml")).unwrap();
    let record: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dest.join("calibration.json")).unwrap()).unwrap();
    let model_file = record["model_file"].as_str().unwrap();
    assert!(!model_file.starts_with('/'), "{model_file}");
    assert!(dest.join(model_file).is_file(), "{model_file}");
    assert!(dest.join("published.md").is_file());

    // The wrappers time exactly the harness's call: the board's cycles are the
    // estimate under the board's own table plus jopcal's harness, for each.
    let model = repo().join("calibration/emu-board.toml");
    let estimated = estimate_with_board_table(&out.join("profiles"), &dir.path().join("est.csv"));
    let m = jopcal_timing::TimingModel::load(&model).unwrap();
    let h = harness_cycles(&m, &classes_dir(&err));
    let measured = jopcal_measure::measurements::read(&out.join("measurements.csv")).unwrap();
    assert_eq!(estimated.len(), 4, "Random is profiled on the host all the same");
    for r in &measured {
        let e = estimated.iter().find(|(b, _)| *b == r.benchmark).unwrap().1;
        assert_eq!(
            r.value as f64 - e,
            h,
            "{}: measured {}, estimated {e}",
            r.benchmark,
            r.value
        );
    }
    assert_eq!(measured.len(), 3);
}

#[test]
fn the_trees_own_harness_profiles_over_a_method_and_agrees_with_the_wrapper() {
    let dir = tempfile::tempdir().unwrap();
    let profile = |args: &[&str], out: &Path| {
        let o = jopcal()
            .arg("--jop-home")
            .arg(tree())
            .args(["profile", "--suite", "jbe", "--out"])
            .arg(out)
            .args(args)
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", stderr(&o));
        jopcal_profile::read_file(&out.join("Filter.jopprof")).unwrap()
    };
    let own = profile(
        &["--region", "method", "--method", "jbe.BenchFilter.test"],
        &dir.path().join("own"),
    );
    assert_eq!(
        own.methods[own.nodes[0].method as usize].qualified(),
        "jbe.BenchFilter.test(I)I"
    );
    let wrapped = profile(&[], &dir.path().join("wrapped"));
    assert_eq!(wrapped.region, "harness");
    // Below the wrapper's region root, the call of test() counts what the
    // tree's harness counts over test() itself.
    let test = wrapped
        .nodes
        .iter()
        .position(|n| wrapped.methods[n.method as usize].qualified() == "jbe.BenchFilter.test(I)I")
        .unwrap();
    let subtree = |p: &jopcal_profile::Profile, root: usize| -> u64 {
        let mut todo = vec![root];
        let mut sum = 0;
        while let Some(i) = todo.pop() {
            sum += p.nodes[i].bytecodes();
            todo.extend(
                p.nodes
                    .iter()
                    .enumerate()
                    .filter(|(_, n)| n.parent == Some(i as u32))
                    .map(|(j, _)| j),
            );
        }
        sum
    };
    assert_eq!(subtree(&wrapped, test), own.bytecodes());
    assert!(own.bytecodes() > 2000 * 10, "{}", own.bytecodes());

    // `targets` lists the tree's suites.
    let o = jopcal().arg("--jop-home").arg(tree()).arg("targets").output().unwrap();
    let listing = String::from_utf8_lossy(&o.stdout).into_owned();
    assert!(listing.contains("(Bits, Insertion, Queue)"), "{listing}");
    assert!(
        listing
            .lines()
            .any(|l| l.starts_with("jbe ") && l.ends_with("(Filter)")),
        "{listing}"
    );

    // Not a JOP tree; a suite the tree does not have: one clear line each.
    let o = jopcal()
        .arg("--jop-home")
        .arg(dir.path())
        .args(["profile", "--suite", "jembench", "--out"])
        .arg(dir.path().join("x"))
        .output()
        .unwrap();
    assert!(!o.status.success());
    assert!(
        stderr(&o)
            .trim()
            .ends_with("not a JOP tree (no java/target/src; pass the root of a JOP checkout as --jop-home)"),
        "{}",
        stderr(&o)
    );
    let o = jopcal()
        .arg("--jop-home")
        .arg(tree())
        .args(["run", "--suite", "jbe", "--bench", "Kfl", "--out"])
        .arg(dir.path().join("y"))
        .output()
        .unwrap();
    assert!(!o.status.success());
    assert!(
        stderr(&o).contains("unknown benchmark 'Kfl' (the suite has: Filter)"),
        "{}",
        stderr(&o)
    );
}

/// A jopcal.toml whose "toolchain" compiles the generated sources with the
/// host JDK (once per suite) and packs each workload for the virtual board
/// (JOP's own tools are not here).
fn toolchain_config(dir: &Path, jopsim: &str) {
    toolchain_config_for(dir, &tree(), jopsim);
}

/// [`toolchain_config`] for the tree at `home`.
fn toolchain_config_for(dir: &Path, home: &Path, jopsim: &str) {
    let jopcal_bin = env!("CARGO_BIN_EXE_jopcal");
    // Builds run side by side (--jobs) and share {out}: the classes are
    // compiled once, under a lock, as a user's template sharing {out} must.
    let build = format!(
        "flock {{out}}/.cls.lock sh -c '[ -f {{out}}/cls/.done ] || (javac --release 8 -nowarn -d {{out}}/cls -sourcepath {{sources}}:{{gen}}/../host-stubs $(find {{gen}} -name \"*.java\") && touch {{out}}/cls/.done)' && {jopcal_bin} emu --classes {{out}}/cls --main {{main}} --out {{out}}/img/{{class}}.jop"
    );
    std::fs::write(
        dir.join("jopcal.toml"),
        format!(
            "[jop]\nhome = {:?}\nbuild = {build:?}\nimage = \"{{out}}/img/{{class}}.jop\"\njopsim = {jopsim:?}\n",
            home.display().to_string()
        ),
    )
    .unwrap();
}

#[test]
fn toolchain_images_run_in_jopsim_and_on_a_board() {
    let dir = tempfile::tempdir().unwrap();
    // "JopSim": the virtual board run on the image, printing what JopSim would.
    let jopcal_bin = env!("CARGO_BIN_EXE_jopcal");
    toolchain_config(dir.path(), &format!("{jopcal_bin} emu --run {{image}}"));
    let o = jopcal()
        .current_dir(dir.path())
        .args([
            "run", "--target", "jopsim", "--suite", "jembench", "--bench", "Bits", "--out",
        ])
        .arg(dir.path().join("sim"))
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let sim = jopcal_measure::measurements::read(&dir.path().join("sim/measurements.csv")).unwrap();
    assert_eq!((sim[0].benchmark.as_str(), sim[0].target.as_str()), ("Bits", "jopsim"));
    assert!(dir.path().join("sim/images/Bits.jop").is_file());

    // A relative --out: the toolchain runs in the tree, so it gets absolute paths.
    let o = jopcal()
        .current_dir(dir.path())
        .args([
            "run", "--target", "jopsim", "--suite", "jembench", "--bench", "Queue", "--out", "relative",
        ])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(dir.path().join("relative/images/Queue.jop").is_file());

    // A board: the virtual board on a pseudo-terminal, images from the toolchain.
    let emu = VirtualBoard::start(&[]);
    let o = jopcal()
        .current_dir(dir.path())
        .args([
            "run", "--target", "board", "--suite", "jembench", "--port", &emu.port, "--out",
        ])
        .arg(dir.path().join("board"))
        .output()
        .unwrap();
    drop(emu);
    assert!(o.status.success(), "{}", stderr(&o));
    let board = jopcal_measure::measurements::read(&dir.path().join("board/measurements.csv")).unwrap();
    let names: Vec<&str> = board.iter().map(|r| r.benchmark.as_str()).collect();
    assert_eq!(names, ["Bits", "Insertion", "Queue"]);
    for b in ["Bits", "Insertion", "Queue"] {
        assert!(dir.path().join(format!("board/images/{b}.jop")).is_file(), "{b}");
    }
    // The same image gives the same count in "JopSim" and on the board.
    assert_eq!(board[0].value, sim[0].value);

    // A toolchain that fails, and an image whose word count is wrong: named.
    let cfg_sim = |build: &str, jopsim: &str| {
        std::fs::write(
            dir.path().join("jopcal.toml"),
            format!(
                "[jop]\nhome = {:?}\nbuild = {build:?}\nimage = \"{{out}}/img/{{class}}.jop\"\njopsim = {jopsim:?}\n",
                tree().display().to_string()
            ),
        )
        .unwrap();
    };
    let cfg = |build: &str| cfg_sim(build, "true");
    let run = || {
        jopcal()
            .current_dir(dir.path())
            .args(["run", "--target", "jopsim", "--suite", "jbe", "--out"])
            .arg(dir.path().join("bad"))
            .output()
            .unwrap()
    };
    cfg("echo 'javac: invalid target release: 1.6' >&2; exit 2");
    let o = run();
    assert!(!o.status.success());
    assert!(stderr(&o).contains("building the image: `echo 'javac: invalid target release: 1.6' >&2; exit 2` failed (exit status: 2): javac: invalid target release: 1.6"), "{}", stderr(&o));
    cfg("mkdir -p {out}/img && printf '5,1,2' > {out}/img/{class}.jop");
    let o = run();
    assert!(
        stderr(&o).contains("JopcalLoopFilter.jop:1:1: word 0 says the image has 5 words, but it has 3"),
        "{}",
        stderr(&o)
    );
    // A simulator that ran the tree's own harness: its `N ms` line is read as
    // milliseconds, never as cycles; a wrapped clock is named.
    let good = "mkdir -p {out}/img && printf '3,1,2' > {out}/img/{class}.jop";
    cfg_sim(good, "printf 'Filter\\n812 ms\\n81200000 cycles\\nJVM exit!\\n'");
    let o = run();
    assert!(o.status.success(), "{}", stderr(&o));
    let rows = jopcal_measure::measurements::read(&dir.path().join("bad/measurements.csv")).unwrap();
    assert_eq!(
        (rows[0].benchmark.as_str(), rows[0].value, rows[0].unit),
        ("Filter", 812, jopcal_measure::Unit::Ms)
    );
    cfg_sim(good, "printf 'Filter\\n-4 ms\\n'");
    let o = run();
    assert!(
        stderr(&o).contains("output line 2: negative time `-4 ms` (the millisecond clock wrapped?) (raw output: logs/Filter-jopsim.log)"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn validate_on_a_board_builds_every_image_with_the_toolchain() {
    let dir = tempfile::tempdir().unwrap();
    toolchain_config(dir.path(), "true");
    let emu = VirtualBoard::start(&[]);
    // A relative --out, as a user types it: the toolchain runs in the tree,
    // so every path it gets (the micro-benchmarks' sources among them) is absolute.
    let out = dir.path().join("v");
    let o = jopcal()
        .current_dir(dir.path())
        .args([
            "validate", "--target", "board", "--suite", "jbe", "--port", &emu.port, "--out", "v",
        ])
        // The board here is the class-bundle virtual board: no floating point.
        .arg("--no-float-micro")
        .output()
        .unwrap();
    drop(emu);
    assert!(o.status.success(), "{}", stderr(&o));
    let summary: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("summary.json")).unwrap()).unwrap();
    assert_eq!(
        (summary["target"].as_str(), summary["complete"].as_bool()),
        (Some("board"), Some(true))
    );
    let filter = &summary["benchmarks"][0];
    assert_eq!(filter["name"], "Filter");
    assert!(filter["loo_error_pct"].as_f64().unwrap().abs() < 1.0, "{filter}");
    // The images that ran are kept: the suite's and the 44 micro-benchmarks'.
    assert!(out.join("images/Filter.jop").is_file());
    assert_eq!(std::fs::read_dir(out.join("micro/images")).unwrap().count(), 44);
    // --image makes no sense for validate.
    let o = jopcal()
        .current_dir(dir.path())
        .args([
            "validate",
            "--target",
            "board",
            "--port",
            "/dev/null",
            "--image",
            "x.jop",
            "--out",
        ])
        .arg(dir.path().join("w"))
        .output()
        .unwrap();
    assert!(stderr(&o).contains("--image is for `jopcal run`"), "{}", stderr(&o));
}

#[test]
fn host_library_profiles_the_trees_own_jdk_classes() {
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("jop");
    copy_tree(&tree(), &home);
    std::fs::write(home.join("java/target/src/bench/fixed/LoopRandom.java"), LOOP_RANDOM).unwrap();
    // The tree's own java.util.Random: a multiply and an add, no call of `next`.
    let jdk = home.join("java/target/src/jdk11/java/util");
    std::fs::create_dir_all(&jdk).unwrap();
    std::fs::write(
        jdk.join("Random.java"),
        "package java.util;\npublic class Random {\n    private long seed;\n    public Random() { this(1); }\n    public Random(long seed) { this.seed = seed; }\n    public int nextInt() { seed = seed * 25214903917L + 11; return (int) (seed >>> 16); }\n}\n",
    )
    .unwrap();
    let work = dir.path().join("work");
    std::fs::create_dir_all(&work).unwrap();
    let config = |classes: &str| {
        std::fs::write(
            work.join("jopcal.toml"),
            format!("[jop]\nhome = \"{}\"\nhost_library = \"{classes}\"\n", home.display()),
        )
        .unwrap();
    };
    config("java.util.Random");
    let out = dir.path().join("p");
    let o = jopcal()
        .current_dir(&work)
        .args([
            "profile", "--suite", "jembench", "--bench", "Random", "--format", "json", "--out",
        ])
        .arg(&out)
        .output()
        .unwrap();
    let err = stderr(&o);
    assert!(o.status.success(), "{err}");
    assert!(
        err.contains("profile host library: the tree's java.util.Random on the host JVM instead of its own"),
        "{err}"
    );
    let json: serde_json::Value = serde_json::from_slice(&std::fs::read(out.join("Random.json")).unwrap()).unwrap();
    let mut found = Vec::new();
    fn walk<'a>(n: &'a serde_json::Value, found: &mut Vec<&'a serde_json::Value>) {
        if n["method"] == "java.util.Random.nextInt()I" {
            found.push(n);
        }
        for c in n["children"].as_array().unwrap() {
            walk(c, found);
        }
    }
    walk(&json["root"], &mut found);
    assert_eq!(found.len(), 1, "{json}");
    assert_eq!(found[0]["calls"], 50);
    assert_eq!(
        found[0]["opcodes"]["lmul"], 50,
        "the tree's nextInt, not the JDK's: {}",
        found[0]
    );
    assert!(
        found[0]["children"].as_array().unwrap().is_empty(),
        "no call of next: {}",
        found[0]
    );

    // A class the tree does not have: one line naming it.
    config("java.util.Nope");
    let o = jopcal()
        .current_dir(&work)
        .args(["profile", "--suite", "jembench", "--bench", "Random", "--out"])
        .arg(dir.path().join("q"))
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(1));
    assert_eq!(
        stderr(&o).lines().last().unwrap(),
        "jopcal: error: host_library java.util.Nope: the tree has no java/util/Nope.java under java/target/src/common, java/target/src/jdk_base, java/target/src/jdk11"
    );
}

/// The miniature tree's own java.lang.Math, written for this test: `sqrt`
/// (a JDK intrinsic) by the runtime's Newton iteration on the bits, `max` by
/// a comparison, and `twice`, which the JDK's Math does not have.
const TREE_MATH: &str = "package java.lang;\n\nimport com.jopdesign.sys.Native;\nimport com.jopdesign.sys.Roots;\n\npublic final class Math {\n    public static final double PI = 3.141592653589793;\n\n    private Math() {\n    }\n\n    public static double sqrt(double a) {\n        return Native.toDouble(Roots.newton(Native.toLong(a)));\n    }\n\n    public static int max(int a, int b) {\n        return a >= b ? a : b;\n    }\n\n    public static int twice(int a) {\n        return max(a, 0) * 2;\n    }\n}\n";

const TREE_ROOTS: &str = "package com.jopdesign.sys;\n\npublic final class Roots {\n    private Roots() {\n    }\n\n    public static long newton(long bits) {\n        double x = Double.longBitsToDouble(bits);\n        double r = x;\n        for (int i = 0; i < 8; i++) {\n            r = 0.5 * (r + x / r);\n        }\n        return Double.doubleToRawLongBits(r);\n    }\n}\n";

const LOOP_ROOTS: &str = "package fixed;\npublic class LoopRoots {\n    public static void main(String[] args) {\n        double sum = 0;\n        int t1 = (int) System.currentTimeMillis();\n        for (int i = 1; i <= 30; i++) {\n            sum += Math.sqrt(i) + Math.max(i, 7);\n        }\n        int t2 = (int) System.currentTimeMillis();\n        System.out.println(sum > 0 ? \"ok \" + (t2 - t1) : \"no\");\n    }\n}\n";

#[test]
fn host_library_merges_the_trees_math_beside_the_jdks() {
    // The JVM runs the JDK's Math.sqrt as an intrinsic, whatever the class's
    // bytecodes, and the JDK's own code calls Math methods the tree's lacks:
    // the tree's methods join the JDK's class under another name, and the
    // program's calls go to them (through the bytecode router, so the tree
    // needs its runtime routines), named as JOP names them in the profile.
    let dir = tempfile::tempdir().unwrap();
    let (home, sys) = tree_with_runtime(dir.path());
    std::fs::write(sys.join("Roots.java"), TREE_ROOTS).unwrap();
    let lang = home.join("java/target/src/jdk11/java/lang");
    std::fs::create_dir_all(&lang).unwrap();
    std::fs::write(lang.join("Math.java"), TREE_MATH).unwrap();
    std::fs::write(home.join("java/target/src/bench/fixed/LoopRoots.java"), LOOP_ROOTS).unwrap();
    let work = dir.path().join("work");
    std::fs::create_dir_all(&work).unwrap();
    std::fs::write(
        work.join("jopcal.toml"),
        format!(
            "[jop]\nhome = \"{}\"\nhost_library = \"java.lang.Math\"\n",
            home.display()
        ),
    )
    .unwrap();
    let out = dir.path().join("p");
    let o = jopcal()
        .current_dir(&work)
        .args(["profile", "--suite", "jembench", "--bench", "Roots", "--out"])
        .arg(&out)
        .output()
        .unwrap();
    let err = stderr(&o);
    assert!(o.status.success(), "{err}");
    assert!(
        err.contains(
            "the tree's java.lang.Math (its 3 methods beside the JDK's, where the program calls them) on the host JVM"
        ),
        "{err}"
    );
    let p = jopcal_profile::read_file(&out.join("Roots.jopprof")).unwrap();
    let calls = |class: &str, name: &str| calls_of(&p, class, name);
    assert_eq!(calls("java/lang/Math", "sqrt"), 30, "the tree's sqrt, as bytecodes");
    assert_eq!(calls("com/jopdesign/sys/Roots", "newton"), 30);
    assert_eq!(calls("java/lang/Math", "max"), 30);
    assert!(
        !p.methods
            .iter()
            .any(|m| m.name.contains('$') && m.class == "java/lang/Math"),
        "the profile names the tree's methods as JOP does"
    );
    let newton = p
        .nodes
        .iter()
        .find(|n| p.methods[n.method as usize].name == "newton")
        .unwrap();
    assert_eq!(newton.opcodes.get(&0x6f), Some(&(8 * 30)), "ddiv: {:?}", newton.opcodes);

    // A tree's class of static methods with instance state cannot be merged: one line.
    std::fs::write(
        lang.join("Math.java"),
        "package java.lang;\npublic final class Math {\n    private int calls;\n    public static int max(int a, int b) { return a >= b ? a : b; }\n}\n",
    )
    .unwrap();
    let o = jopcal()
        .current_dir(&work)
        .args(["profile", "--suite", "jembench", "--bench", "Roots", "--out"])
        .arg(dir.path().join("q"))
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert_eq!(
        stderr(&o).lines().last().unwrap(),
        "jopcal: error: host_library java/lang/Math: the JDK's is a class of static methods and the tree's has the instance field calls: they cannot be merged"
    );
}

const LOOP_PRINT: &str = "package fixed;\npublic class LoopPrint {\n    public static void main(String[] args) {\n        int t1 = (int) System.currentTimeMillis();\n        for (int i = 0; i < 3; i++) {\n            System.out.print(\"ab\");\n            System.out.println(\"c\");\n        }\n        int t2 = (int) System.currentTimeMillis();\n    }\n}\n";

#[test]
fn printed_characters_are_counted_and_priced_by_the_serial_line() {
    // JOP's UART sends each printed character while the program waits: the
    // host profile counts the characters (through jopcal's serial line
    // stand-in, with JOP's line end, CR LF), and a table that knows the
    // line's frame prices each at it instead of the host's printing code.
    let dir = tempfile::tempdir().unwrap();
    let (home, _) = tree_with_runtime(dir.path());
    std::fs::write(home.join("java/target/src/bench/fixed/LoopPrint.java"), LOOP_PRINT).unwrap();
    let out = dir.path().join("p");
    let o = jopcal()
        .arg("--jop-home")
        .arg(&home)
        .args(["profile", "--suite", "jembench", "--bench", "Print", "--out"])
        .arg(&out)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let p = jopcal_profile::read_file(&out.join("Print.jopprof")).unwrap();
    let chars: u64 = p
        .nodes
        .iter()
        .filter(|n| jopcal_profile::routed::is_serial_write(&p.methods[n.method as usize]))
        .map(|n| n.calls)
        .sum();
    assert_eq!(chars, 3 * "abc\r\n".len() as u64);
    let log = std::fs::read_to_string(out.join("logs/Print.log")).unwrap();
    assert!(log.contains("abc\r\nabc\r\n"), "{log}");

    // Priced at the line's frame, and the host's printing code not at all.
    let estimate = |serial_char: &str, name: &str| -> serde_json::Value {
        let o = jopcal()
            .arg("--jop-home")
            .arg(&home)
            .args(["estimate", "--cache", "hit", "--model"])
            .arg(repo().join("calibration/jop-devel.toml"))
            .args(["--param", &format!("serial_char={serial_char}"), "--profiles"])
            .arg(&out)
            .arg("--out")
            .arg(dir.path().join(name))
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", stderr(&o));
        serde_json::from_slice(&std::fs::read(dir.path().join(name).join("estimates.json")).unwrap()).unwrap()
    };
    let cycles = |e: &serde_json::Value| e["estimates"][0]["cycles"].as_f64().unwrap();
    let line = estimate("1000", "e1");
    let by_opcode = &line["estimates"][0]["per_opcode"];
    let serial = by_opcode
        .as_array()
        .unwrap()
        .iter()
        .find(|o| o["opcode"] == "method jopcal.host.SerialLine.write(I)V")
        .unwrap();
    assert_eq!(
        (serial["count"].as_u64(), serial["cycles"].as_f64()),
        (Some(15), Some(15000.0))
    );
    let host = estimate("0", "e0");
    assert!(
        cycles(&line) - 15000.0 < cycles(&host),
        "the host's printing code is not charged by the line: {} vs {}",
        cycles(&line),
        cycles(&host)
    );
}

#[test]
fn validate_on_a_board_starts_from_the_trees_microcode() {
    // A board runs the processor's microcode, not JopSim's table: with no
    // --model, validate derives its starting table from the tree's jvm.asm.
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("jop");
    copy_tree(&tree(), &home);
    std::fs::create_dir_all(home.join("asm/src")).unwrap();
    std::fs::write(
        home.join("asm/src/jvm.asm"),
        "io_exc = -124\nmp ?\niadd: add nxt\niaload:\n stald\n pop\n wait\n wait\n ldmrd nxt\nsys_noim:\n ldm mp\n stbcrd\n nop\n wait\n wait\n nop nxt\n",
    )
    .unwrap();
    toolchain_config_for(dir.path(), &home, "true");
    let emu = VirtualBoard::start(&[]);
    let o = jopcal()
        .current_dir(dir.path())
        .args([
            "validate", "--target", "board", "--suite", "jbe", "--port", &emu.port, "--out", "v",
        ])
        .arg("--no-float-micro")
        .output()
        .unwrap();
    drop(emu);
    let err = stderr(&o);
    assert!(o.status.success(), "{err}");
    assert!(
        err.contains(&format!(
            "validate starting table: 97 bytecodes timed from the microcode {} on jop-devel",
            home.join("asm/src/jvm.asm").display()
        )),
        "{err}"
    );
    let table = dir.path().join("v/microcode-model.toml");
    let est: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.path().join("v/estimates.json")).unwrap()).unwrap();
    assert_eq!(est["model_file"], table.display().to_string());
}

#[test]
fn doctor_passes_a_working_tree_and_names_each_problem_with_its_fix() {
    let dir = tempfile::tempdir().unwrap();
    let jopcal_bin = env!("CARGO_BIN_EXE_jopcal");
    toolchain_config(dir.path(), &format!("{jopcal_bin} emu --run {{image}}"));
    let doctor_with = |more: &[&str]| {
        jopcal()
            .current_dir(dir.path())
            .args(["doctor", "--timeout", "120"])
            .args(more)
            .output()
            .unwrap()
    };
    let doctor = || doctor_with(&[]);
    let o = doctor();
    let err = stderr(&o);
    assert!(o.status.success(), "{err}");
    for line in [
        "ok       jembench harnesses: 3 (Bits, Insertion, Queue)",
        "ok       source encoding: ISO-8859-1 (from JOP's default: no -encoding in a Makefile)",
        "ok       image of Bits: the tree's toolchain built it",
        "ok       virtual board on Bits: @jopcal result bench=Bits",
        "ok       virtual board against JopSim: the same result line, to the cycle",
        "ok       JopSim on Bits: @jopcal result bench=Bits",
        "all checks passed",
    ] {
        assert!(err.contains(line), "{line}: {err}");
    }
    assert!(!err.contains(" links: "), "{err}");
    // --link: every workload of every suite built into an image.
    let o = doctor_with(&["--link"]);
    let err = stderr(&o);
    assert!(o.status.success(), "{err}");
    for name in ["jembench Bits", "jembench Insertion", "jembench Queue"] {
        assert!(err.contains(&format!("ok       {name} links: ")), "{name}: {err}");
    }
    // The tree's Makefile with JDK 17's javac: the problem, and the fix.
    let toml = std::fs::read_to_string(dir.path().join("jopcal.toml")).unwrap();
    let broken: String = toml
        .lines()
        .map(|l| {
            if l.starts_with("build") {
                "build = \"echo 'error: Source option 5 is no longer supported. Use 7 or later.' >&2; exit 2\""
                    .to_string()
            } else {
                l.to_string()
            }
        })
        .collect::<Vec<_>>()
        .join("\n");
    std::fs::write(dir.path().join("jopcal.toml"), broken).unwrap();
    let o = doctor_with(&["--link"]);
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(
        err.contains("PROBLEM  jembench Queue links: building the image:"),
        "{err}"
    );
    let o = doctor();
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(
        err.contains("PROBLEM  image of Bits: building the image:")
            && err.contains("error: Source option 5 is no longer supported. Use 7 or later.; fix: JDK 17's javac cannot compile for Java 1.5 as the tree's Makefile asks: use ecj as `javac` in the build template (docs/notes/jop-tree.md, step 3)"),
        "{err}"
    );
    assert!(
        err.trim_end().ends_with("jopcal: error: 1 problem(s); see above"),
        "{err}"
    );
}

/// `run --suite SUITE --target TARGET --out OUT` on the miniature tree, which
/// must succeed; its standard error.
fn run_suite_ok(suite: &str, target: &str, out: &Path) -> String {
    tree_ok(&["run", "--suite", suite, "--target", target], out)
}

/// The calls a profile counts of methods named `name`, in every context.
/// The calls of `class.name` (internal class name) in `p`, every context's.
fn calls_of(p: &jopcal_profile::Profile, class: &str, name: &str) -> u64 {
    p.nodes
        .iter()
        .filter(|n| {
            let m = &p.methods[n.method as usize];
            m.class == class && m.name == name
        })
        .map(|n| n.calls)
        .sum()
}

fn calls_named(p: &jopcal_profile::Profile, name: &str) -> u64 {
    p.nodes
        .iter()
        .filter(|n| p.methods[n.method as usize].name == name)
        .map(|n| n.calls)
        .sum()
}

/// `jopcal --jop-home TREE ARGS --out OUT` on the miniature tree, which must
/// succeed; its stderr.
fn tree_ok(args: &[&str], out: &Path) -> String {
    let o = jopcal()
        .arg("--jop-home")
        .arg(tree())
        .args(args)
        .arg("--out")
        .arg(out)
        .output()
        .unwrap();
    let err = stderr(&o);
    assert!(o.status.success(), "{}: {err}", args.join(" "));
    err
}

/// `--suite jembench-all`: what the tree's `jembench/Main.java` runs, in its
/// order, a class that is no JemBench benchmark left out by name, on the
/// host JVM, the virtual board and under the profiler.
#[test]
fn jembench_all_is_what_the_trees_main_runs() {
    let dir = tempfile::tempdir().unwrap();
    let names = |csv: &Path| -> Vec<String> {
        jopcal_measure::measurements::read(csv)
            .unwrap()
            .into_iter()
            .map(|m| m.benchmark)
            .collect()
    };
    for target in ["host", "emu"] {
        let out = dir.path().join(target);
        let err = run_suite_ok("jembench-all", target, &out);
        assert!(
            err.contains("left out of the jembench-all suite: jembench.micro.Plain (Main.java line 19): ")
                && err.contains("Plain extends none of JemBench's benchmark classes"),
            "{err}"
        );
        assert!(err.contains("(BenchBits, Spread, BenchQueue)"), "{err}");
        assert_eq!(
            names(&out.join("measurements.csv")),
            ["BenchBits", "Spread", "BenchQueue"],
            "{target}"
        );
    }
    tree_ok(&["profile", "--suite", "jembench-all"], &dir.path().join("p"));
    let spread = jopcal_profile::read_file(&dir.path().join("p/Spread.jopprof")).unwrap();
    // Five workers' runs in the region, each a call of run().
    assert_eq!(calls_named(&spread, "run"), 5);
}

/// `--suite apps`: the tree's applications outside JemBench, a periodic-task
/// application timed as a cyclic executive on the host JVM, the virtual board
/// and under the profiler, one whose work prints left out with the reason.
#[test]
fn apps_time_periodic_tasks_and_name_what_they_leave_out() {
    let dir = tempfile::tempdir().unwrap();
    for target in ["host", "emu"] {
        let out = dir.path().join(target);
        let err = run_suite_ok("apps", target, &out);
        assert!(
            err.contains("left out of the apps suite: talk.Main (talk): ")
                && err.contains("talk/Chatter.java:6: it prints inside its work (System.out)"),
            "{err}"
        );
        let rows = jopcal_measure::measurements::read(&out.join("measurements.csv")).unwrap();
        let names: Vec<&str> = rows.iter().map(|m| m.benchmark.as_str()).collect();
        assert_eq!(names, ["flight"], "{target}");
        assert!(rows[0].value > 0, "{target}");
    }
    tree_ok(&["profile", "--suite", "apps"], &dir.path().join("p"));
    let p = jopcal_profile::read_file(&dir.path().join("p/flight.jopprof")).unwrap();
    // One hyperperiod (50 ms at a 25 ms tick): the 25 ms handler runs twice,
    // the 50 ms one once.
    let runs = |class: &str| -> u64 {
        p.nodes
            .iter()
            .filter(|n| {
                let m = &p.methods[n.method as usize];
                m.name == "run" && m.class.ends_with(class)
            })
            .map(|n| n.calls)
            .sum()
    };
    assert_eq!((runs("Steer"), runs("Report")), (2, 1));
}

/// The miniature tree in `dir/jop` with its runtime's `JVM.java`
/// ([`RUNTIME`]): the tree and its runtime package.
fn tree_with_runtime(dir: &std::path::Path) -> (std::path::PathBuf, std::path::PathBuf) {
    let home = dir.join("jop");
    copy_tree(&tree(), &home);
    let sys = home.join("java/target/src/common/com/jopdesign/sys");
    std::fs::create_dir_all(&sys).unwrap();
    std::fs::write(sys.join("JVM.java"), RUNTIME).unwrap();
    (home, sys)
}

/// The miniature tree's runtime, written for these tests in the form of a JOP
/// tree's `JVM.java`: `idiv` as a Java routine (a restoring division on long
/// shifts), `iadd` as the "not implemented" stub of a microcoded bytecode.
const RUNTIME: &str = "package com.jopdesign.sys;\n\nclass JVM {\n\tprivate static void f_iadd() { JVMHelp.noim(); /* microcode */ }\n\n\tprivate static int f_idiv(int a, int b) {\n\t\tboolean negative = (a < 0) != (b < 0);\n\t\tlong n = a < 0 ? -(long) a : a;\n\t\tlong d = b < 0 ? -(long) b : b;\n\t\tint q = 0;\n\t\tfor (int bit = 31; bit >= 0; bit--) {\n\t\t\tif ((n >> bit) >= d) {\n\t\t\t\tn -= d << bit;\n\t\t\t\tq |= 1 << bit;\n\t\t\t}\n\t\t}\n\t\treturn negative ? -q : q;\n\t}\n}\n";

/// A benchmark that divides `2 * cnt` times, then once by zero (caught), and
/// holds monitors nested (`cnt` times) and recursively (a synchronized method
/// three deep).
const BENCH_DIVIDE: &str = "package jembench.kernel;\n\nimport jembench.SerialBenchmark;\n\npublic class BenchDivide extends SerialBenchmark {\n    private final Object lock = new Object();\n\n    synchronized int depth(int d) {\n        return d == 0 ? 0 : 1 + depth(d - 1);\n    }\n\n    public int perform(int cnt) {\n        int sum = depth(2);\n        for (int i = 1; i <= cnt; i++) {\n            sum += 1000003 / i - (-77777 / i);\n            synchronized (this) {\n                synchronized (lock) {\n                    sum++;\n                }\n            }\n        }\n        try {\n            sum += sum / (cnt - cnt);\n        } catch (ArithmeticException e) {\n            sum++;\n        }\n        return sum;\n    }\n}\n";

const LOOP_DIVIDE: &str = "package fixed;\n\nimport jembench.*;\n\npublic class LoopDivide {\n    public static void main(String[] args) {\n        SerialBenchmark bench = new jembench.kernel.BenchDivide();\n        int t1 = (int) System.currentTimeMillis();\n        bench.perform(40);\n        int t2 = (int) System.currentTimeMillis();\n        System.out.println(t2 - t1);\n    }\n}\n";

#[test]
fn the_host_profile_runs_the_trees_own_routine_on_each_operand() {
    let dir = tempfile::tempdir().unwrap();
    let (home, _) = tree_with_runtime(dir.path());
    let bench = home.join("java/target/src/bench");
    std::fs::write(bench.join("jembench/kernel/BenchDivide.java"), BENCH_DIVIDE).unwrap();
    std::fs::write(bench.join("fixed/LoopDivide.java"), LOOP_DIVIDE).unwrap();
    let profile = |out: &str, asm: Option<&str>| {
        let mut c = jopcal();
        if let Some(jar) = asm {
            c.env("JOPCAL_ASM_JAR", jar);
        }
        let o = c
            .arg("--jop-home")
            .arg(&home)
            .args(["profile", "--suite", "jembench", "--bench", "Divide", "--out"])
            .arg(dir.path().join(out))
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", stderr(&o));
        let p = jopcal_profile::read_file(&dir.path().join(out).join("Divide.jopprof")).unwrap();
        (p, stderr(&o))
    };
    let name = |p: &jopcal_profile::Profile, n: &jopcal_profile::Node| {
        let m = &p.methods[n.method as usize];
        format!("{}.{}", m.class, m.name)
    };

    let (p, err) = profile("routed", None);
    assert!(
        err.contains("profile routines: idiv run as the tree's own routines on their operands, and the operands of lshl, lshr, lushr, lcmp, aastore are recorded ("),
        "{err}"
    );
    let perform = p
        .nodes
        .iter()
        .find(|n| name(&p, n) == "jembench/kernel/BenchDivide.perform")
        .unwrap();
    // The 80 divisions ran the tree's routine, each a context entered by idiv;
    // the division by zero stayed the host's, an idiv of perform's own.
    let routines: Vec<&jopcal_profile::Node> = p
        .nodes
        .iter()
        .filter(|n| name(&p, n) == "com/jopdesign/sys/JVM.f_idiv")
        .collect();
    assert_eq!(routines.len(), 2, "one context per call site");
    for r in &routines {
        assert_eq!(r.invoke_opcode, 0x6c);
        assert_eq!(
            p.methods[p.nodes[r.parent.unwrap() as usize].method as usize].name,
            "perform"
        );
    }
    assert_eq!(routines.iter().map(|r| r.calls).sum::<u64>(), 80);
    assert_eq!(perform.opcodes.get(&0x6c), Some(&1));
    // Every long shift of the routine has its count: 32 a division.
    for r in &routines {
        let shifts = r.opcodes.get(&0x7b).copied().unwrap_or(0);
        let counted: u64 = r.operands.range((0x7b, 0)..=(0x7b, 63)).map(|(_, c)| c).sum();
        assert_eq!((shifts, counted), (32 * r.calls, 32 * r.calls));
        assert_eq!(r.operands.get(&(0x7b, 31)), Some(&r.calls));
    }
    // Each monitor exit is recorded as JOP's lock count decides its path:
    // the inner block's exit leaves the outer one held; only the outermost
    // call of the recursive synchronized method releases.
    assert_eq!(perform.operands.get(&(0xc3, 1)), Some(&40), "{:?}", perform.operands);
    assert_eq!(perform.operands.get(&(0xc3, 0)), Some(&40), "{:?}", perform.operands);
    let depth: Vec<&jopcal_profile::Node> = p
        .nodes
        .iter()
        .filter(|n| name(&p, n) == "jembench/kernel/BenchDivide.depth" && n.calls > 0)
        .collect();
    let exits: Vec<_> = depth.iter().map(|n| n.operands.clone()).collect();
    assert_eq!(depth.len(), 3, "{exits:?}");
    assert_eq!(exits[0].get(&(0xc3, 0)), Some(&1), "{exits:?}");
    assert!(exits[1..].iter().all(|o| o.get(&(0xc3, 1)) == Some(&1)), "{exits:?}");

    // jopcal's bridge left no trace.
    assert!(!p
        .nodes
        .iter()
        .any(|n| p.methods[n.method as usize].class == jopcal_profile::routed::BRIDGE_CLASS));

    // Without ASM: the host's own division, priced by the table's constant, and a note.
    let (plain, err) = profile("plain", Some("/nonexistent/asm.jar"));
    assert!(
        err.contains("note: no ASM (JOPCAL_ASM_JAR, else /usr/share/java/asm.jar"),
        "{err}"
    );
    let perform = plain
        .nodes
        .iter()
        .find(|n| name(&plain, n) == "jembench/kernel/BenchDivide.perform")
        .unwrap();
    assert_eq!(perform.opcodes.get(&0x6c), Some(&81));
    assert!(!plain.nodes.iter().any(|n| name(&plain, n).ends_with("JVM.f_idiv")));
}

/// A benchmark of long shifts by variable counts (`lshl`, `lshr`, `lushr`)
/// and long comparisons, negative operands among them, beside divisions
/// whose routine shifts and compares longs too, and arrays of arrays
/// (`multianewarray`, one level of them empty at times).
const BENCH_SHIFTS: &str = "package jembench.kernel;\n\nimport jembench.SerialBenchmark;\n\npublic class BenchDivide extends SerialBenchmark {\n    public int perform(int cnt) {\n        long x = 0x123456789abcdefL;\n        int sum = 0;\n        for (int i = 1; i <= cnt; i++) {\n            x = (x << (i & 7)) ^ (x >>> (i % 13)) ^ (x >> 3);\n            if (x < -5L) {\n                sum++;\n            } else if (x == 0L) {\n                sum--;\n            }\n            sum += 1000003 / i;\n            long[][] grid = new long[3][i % 4 + 1];\n            int[][][] cube = new int[2][i % 3][4];\n            sum += grid[2].length + cube[1].length;\n        }\n        return sum + (int) x;\n    }\n}\n";

/// The instrumenting profiler runs the bridge's pure methods (the long
/// shifts, `lcmp`) inline rather than as calls; the profile is still the
/// single-step profiler's, spliced: the bytecodes, their operands, the
/// routine's contexts and the call/return stream.
#[test]
fn both_profilers_count_a_routed_suite_alike() {
    let dir = tempfile::tempdir().unwrap();
    let (home, _) = tree_with_runtime(dir.path());
    let bench = home.join("java/target/src/bench");
    std::fs::write(bench.join("jembench/kernel/BenchDivide.java"), BENCH_SHIFTS).unwrap();
    std::fs::write(bench.join("fixed/LoopDivide.java"), LOOP_DIVIDE).unwrap();
    let profile = |profiler: &str, out: &str, against: Option<&str>| {
        let mut c = jopcal();
        c.arg("--jop-home").arg(&home).args([
            "profile",
            "--profiler",
            profiler,
            "--suite",
            "jembench",
            "--bench",
            "Divide",
            "--out",
        ]);
        c.arg(dir.path().join(out));
        if let Some(a) = against {
            c.arg("--against").arg(dir.path().join(a));
        }
        let o = c.output().unwrap();
        assert!(o.status.success(), "{}", stderr(&o));
        stderr(&o)
    };
    profile("step", "step", None);
    let err = profile("instrument", "instrument", Some("step"));
    assert!(err.contains("Divide: the same as"), "{err}");
    let p = jopcal_profile::read_file(&dir.path().join("instrument/Divide.jopprof")).unwrap();
    // Every array the multianewarrays make, by its words in JOP's heap (two
    // a long), in both profiles (the comparison above checks the step
    // profile's allocations against these), and nothing else: the class
    // loading the region's first `idiv` starts (the routine's class, whose
    // loader makes a lock object) is the host JVM's, which JOP does not do.
    let mut arrays = std::collections::BTreeMap::<u32, u64>::new();
    for i in 1..=40u32 {
        let (row, depth) = (i % 4 + 1, i % 3);
        *arrays.entry(3).or_default() += 1;
        *arrays.entry(2 * row).or_default() += 3;
        *arrays.entry(2).or_default() += 1;
        *arrays.entry(depth).or_default() += 2;
        if depth > 0 {
            *arrays.entry(4).or_default() += 2 * u64::from(depth);
        }
    }
    assert_eq!(p.allocations, arrays);
    let step = jopcal_profile::read_file(&dir.path().join("step/Divide.jopprof")).unwrap();
    assert_eq!(step.allocations, arrays);
    let perform = p
        .nodes
        .iter()
        .find(|n| p.methods[n.method as usize].name == "perform")
        .unwrap();
    // Each shift is the program's bytecode, with its count; no bridge is left.
    for op in [0x79u8, 0x7b, 0x7d] {
        let counted: u64 = perform.operands.range((op, 0)..=(op, 63)).map(|(_, c)| c).sum();
        assert_eq!(perform.opcodes.get(&op), Some(&40), "opcode {op:#x}");
        assert_eq!(counted, 40, "opcode {op:#x}");
    }
    assert!(p
        .nodes
        .iter()
        .all(|n| p.methods[n.method as usize].class != "jopcal/host/JopBytecodes"));
}

/// A program in the plain shape (`main` does its work, prints its result),
/// outside the tree: `--cp DIR` takes every main under DIR, `--main` one,
/// on the host JVM, the virtual board and through `validate`.
#[test]
fn your_own_programs_are_timed_whole() {
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path().join("src/demo");
    std::fs::create_dir_all(&src).unwrap();
    std::fs::write(
        src.join("Sum.java"),
        "package demo;\npublic class Sum {\n    public static void main(String[] args) {\n        int s = 0;\n        for (int i = 0; i < 2000; i++) {\n            s += Helper.twice(i);\n        }\n        System.out.println(s);\n    }\n}\nclass Helper {\n    static int twice(int i) { return i + i; }\n}\n",
    )
    .unwrap();
    std::fs::write(
        src.join("Loop.java"),
        "package demo;\npublic class Loop {\n    public static void main(String[] args) throws Exception {\n        int s = 1;\n        for (int i = 0; i < 500; i++) {\n            s = s * 3 + i;\n        }\n        if (s == 42) throw new Exception();\n    }\n}\n",
    )
    .unwrap();
    let cp = dir.path().join("src");
    let cp = cp.to_str().unwrap();
    for target in ["host", "emu"] {
        let out = dir.path().join(target);
        let err = tree_ok(&["run", "--target", target, "--cp", cp], &out);
        assert!(
            err.contains("suite programs: 2 of your programs, each its whole main"),
            "{err}"
        );
        let rows = jopcal_measure::measurements::read(&out.join("measurements.csv")).unwrap();
        let names: Vec<&str> = rows.iter().map(|m| m.benchmark.as_str()).collect();
        assert_eq!(names, ["Loop", "Sum"], "{target}");
        assert!(rows.iter().all(|m| m.value > 0), "{target}");
        let summary: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(out.join("summary.json")).unwrap()).unwrap();
        assert_eq!(summary["suite"], "programs", "{summary}");
    }
    // The whole main is the region: Sum's 2000 calls of twice() are in its profile.
    let out = dir.path().join("v");
    let err = tree_ok(&["validate", "--cp", cp, "--main", "demo.Sum"], &out);
    assert!(err.contains("(Sum)"), "{err}");
    let p = jopcal_profile::read_file(&out.join("profiles/Sum.jopprof")).unwrap();
    assert_eq!(calls_named(&p, "twice"), 2000);
    let md = std::fs::read_to_string(out.join("accuracy.md")).unwrap();
    assert!(md.contains("| Sum |") && md.contains("| worst \\|error\\| |"), "{md}");
    // What cannot run is one line naming it.
    let o = jopcal()
        .arg("--jop-home")
        .arg(tree())
        .args(["run", "--cp", cp, "--main", "demo.Gone"])
        .output()
        .unwrap();
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(err.contains("--main demo.Gone: no demo/Gone.java under "), "{err}");
    let o = jopcal()
        .arg("--jop-home")
        .arg(tree())
        .args(["run", "--suite", "jembench", "--main", "demo.Sum"])
        .output()
        .unwrap();
    assert!(
        stderr(&o).contains("--suite jembench and --main/--cp: a run measures either a suite or your programs"),
        "{}",
        stderr(&o)
    );
}

/// The tree's own class library on the host: a program compiled against a
/// tree's `String`, `StringBuilder` and `Integer` (a miniature library
/// written for this test, `tests/java/tree-library`) runs them on the host
/// under shadow names, and its profile reads as the tree's classes, with
/// jopcal's conversions and bridges gone; what the JDK keeps (the
/// exception, `System.out`) gets its strings converted.
#[test]
fn the_host_runs_the_trees_library_as_the_trees() {
    let dir = tempfile::tempdir().unwrap();
    let (home, sys) = tree_with_runtime(dir.path());
    std::fs::write(
        sys.join("Native.java"),
        "package com.jopdesign.sys;\n\npublic final class Native {\n    public static native int rd(int address);\n    public static native void wr(int value, int address);\n}\n",
    )
    .unwrap();
    std::fs::write(
        sys.join("Const.java"),
        "package com.jopdesign.sys;\n\npublic final class Const {\n    public static final int IO_BASE = 0xffffff80;\n    public static final int IO_CNT = IO_BASE + 0;\n    public static final int IO_US_CNT = IO_BASE + 1;\n}\n",
    )
    .unwrap();
    copy_tree(
        &repo().join("host/jopcal/tests/java/tree-library"),
        &home.join("java/target/src/jdk_base"),
    );
    let src = dir.path().join("src/demo");
    std::fs::create_dir_all(&src).unwrap();
    std::fs::copy(repo().join("host/jopcal/tests/java/Words.java"), src.join("Words.java")).unwrap();
    // The tree's compiler, as a tree's users configure it (docs/notes/jop-tree.md).
    std::fs::write(
        dir.path().join("jopcal.toml"),
        format!(
            "[jop]\nhome = \"{}\"\nhost_javac = \"ecj -source 1.5 -target 1.5 -nowarn\"\nhost_library = \"\"\n",
            home.display()
        ),
    )
    .unwrap();
    let out = dir.path().join("v");
    // The host JVM as the target: the virtual board's own small library has no StringBuilder.
    let o = jopcal()
        .current_dir(dir.path())
        .args(["validate", "--target", "host", "--cp"])
        .arg(dir.path().join("src"))
        .arg("--out")
        .arg(&out)
        .output()
        .unwrap();
    let err = stderr(&o);
    assert!(o.status.success(), "{err}");
    assert!(
        err.contains("of its classes run on the host as the tree's (java.io.PrintStream, java.lang.Integer, java.lang.String, java.lang.StringBuilder)"),
        "{err}"
    );
    let p = jopcal_profile::read_file(&out.join("profiles/Words.jopprof")).unwrap();
    let calls = |class: &str, name: &str| calls_of(&p, class, name);
    // The tree's Integer.toString ran for each of the 20 appends and the
    // printed line's number; the tree's String.charAt for each of the 30
    // digits main reads.
    assert_eq!(calls("java/lang/Integer", "toString"), 21);
    let from_main: u64 = p
        .nodes
        .iter()
        .filter(|n| {
            let m = &p.methods[n.method as usize];
            let caller = n.parent.map(|c| &p.methods[p.nodes[c as usize].method as usize]);
            m.class == "java/lang/String" && m.name == "charAt" && caller.is_some_and(|c| c.class == "demo/Words")
        })
        .map(|n| n.calls)
        .sum();
    assert_eq!(from_main, 30);
    assert!(calls("java/lang/StringBuilder", "append") > 0);
    // The exception's message came back through the JDK's Throwable as the tree's String.
    assert!(calls("java/lang/String", "length") > 30);
    // No shadow name, conversion or bridge is left.
    for m in &p.methods {
        let text = format!("{}.{}{}", m.class, m.name, m.descriptor);
        assert!(!text.contains("jopcal$tree$"), "{text}");
    }
    // The program's own methods have the tree's String in their descriptors again.
    assert!(p
        .methods
        .iter()
        .any(|m| m.class == "demo/Words" && m.name == "main" && m.descriptor == "([Ljava/lang/String;)V"));
}

/// The builds' `ecj` runs in one resident JVM (jopcal_targets::resident_ecj)
/// and writes the class files, and so the images, a fresh ecj writes: the
/// template here compiles each workload with `ecj` by name, with paths
/// relative to the tree it runs in, and packs the image for the virtual
/// board; `JOPCAL_RESIDENT_ECJ=0` runs a fresh ecj instead. The class files,
/// the images and the counts are the same.
#[test]
fn the_builds_ecj_in_one_resident_jvm_writes_what_a_fresh_ecj_writes() {
    if std::process::Command::new("ecj").arg("-version").output().is_err() {
        eprintln!("skipped: no ecj on PATH (scripts/setup installs it)");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let jopcal_bin = env!("CARGO_BIN_EXE_jopcal");
    // Relative to the tree: java/target/src is where the harnesses' package roots are.
    let build = format!(
        "mkdir -p {{out}}/cls/{{name}} && ecj -nowarn -source 1.5 -target 1.5 -d {{out}}/cls/{{name}} -sourcepath java/target/src/bench:{{gen}}:{{gen}}/../host-stubs $(find {{gen}} -name '*.java') && {jopcal_bin} emu --classes {{out}}/cls/{{name}} --main {{main}} --out {{out}}/img/{{class}}.jop"
    );
    std::fs::write(
        dir.path().join("jopcal.toml"),
        format!(
            "[jop]\nhome = {:?}\nbuild = {build:?}\nimage = \"{{out}}/img/{{class}}.jop\"\njopsim = \"{jopcal_bin} emu --run {{image}}\"\n",
            tree().display().to_string()
        ),
    )
    .unwrap();
    // "JopSim" is the virtual board run on each image (the tree has no processor to describe).
    let run = |out: &str, resident: bool| -> String {
        let mut c = jopcal();
        c.current_dir(dir.path())
            .env("JOPCAL_CACHE", dir.path().join(format!("cache-{out}")))
            .args([
                "run", "--target", "jopsim", "--suite", "jembench", "--bench", "Bits", "--bench", "Queue", "--out", out,
            ]);
        if !resident {
            c.env("JOPCAL_RESIDENT_ECJ", "0");
        }
        let o = c.output().unwrap();
        assert!(o.status.success(), "{}", stderr(&o));
        stderr(&o)
    };
    let said = run("resident", true);
    assert!(
        said.contains("build: the builds' ecj compiled in one resident JVM"),
        "{said}"
    );
    let said = run("fresh", false);
    assert!(!said.contains("resident JVM"), "{said}");
    let files = |root: PathBuf| -> Vec<(String, Vec<u8>)> {
        let mut out = Vec::new();
        let mut todo = vec![root.clone()];
        while let Some(d) = todo.pop() {
            for e in std::fs::read_dir(&d).unwrap().flatten() {
                let p = e.path();
                if p.is_dir() {
                    todo.push(p);
                } else {
                    out.push((
                        p.strip_prefix(&root).unwrap().display().to_string(),
                        std::fs::read(&p).unwrap(),
                    ));
                }
            }
        }
        out.sort();
        out
    };
    for part in ["cls", "images"] {
        let (a, b) = (
            files(dir.path().join("resident").join(part)),
            files(dir.path().join("fresh").join(part)),
        );
        assert!(a.len() >= 2, "{part}: {:?}", a.iter().map(|f| &f.0).collect::<Vec<_>>());
        assert!(a == b, "{part} differ");
    }
    let rows = |out: &str| -> Vec<(String, u64)> {
        jopcal_measure::measurements::read(&dir.path().join(out).join("measurements.csv"))
            .unwrap()
            .into_iter()
            .map(|m| (m.benchmark, m.value))
            .collect()
    };
    assert_eq!(rows("resident"), rows("fresh"));
}
