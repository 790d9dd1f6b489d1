//! The profiler, end to end: the real `jopcal profile` runs javac-compiled
//! programs on the real JVM under the agent; the counts are checked against
//! values computed by hand from the bytecode semantics.

mod common;
#[allow(unused_imports)]
use common::{jopcal, repo, stderr, text};

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// Compiles the test programs in tests/java into `dir`.
fn compile(dir: &Path) {
    let jdk = jopcal_workloads::Jdk::detect().expect("a JDK (run scripts/setup)");
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/java");
    let files: Vec<PathBuf> = ["Exact.java", "ExitInside.java"].iter().map(|f| src.join(f)).collect();
    let o = Command::new(&jdk.javac)
        .args(["--release", "8", "-d"])
        .arg(dir)
        .args(&files)
        .output()
        .unwrap();
    assert!(o.status.success(), "javac: {}", stderr(&o));
}

fn profile_main(classes: &Path, main: &str, out: &Path) -> Output {
    profile_main_with("step", classes, main, out)
}

fn profile_main_with(profiler: &str, classes: &Path, main: &str, out: &Path) -> Output {
    jopcal()
        .args(["profile", "--profiler", profiler, "--cp"])
        .arg(classes)
        .args(["--main", main, "--format", "json", "--out"])
        .arg(out)
        .output()
        .unwrap()
}

/// Nodes of the JSON tree as (path of method names, node), depth first.
fn flatten<'a>(node: &'a Value, path: &mut Vec<String>, out: &mut Vec<(Vec<String>, &'a Value)>) {
    path.push(node["method"].as_str().unwrap().to_string());
    out.push((path.clone(), node));
    for c in node["children"].as_array().unwrap() {
        flatten(c, path, out);
    }
    path.pop();
}

fn ops(node: &Value) -> Vec<(String, u64)> {
    let mut v: Vec<(String, u64)> = node["opcodes"]
        .as_object()
        .unwrap()
        .iter()
        .map(|(k, c)| (k.clone(), c.as_u64().unwrap()))
        .collect();
    v.sort();
    v
}

fn expect(pairs: &[(&str, u64)]) -> Vec<(String, u64)> {
    let mut v: Vec<(String, u64)> = pairs.iter().map(|(k, c)| (k.to_string(), *c)).collect();
    v.sort();
    v
}

#[test]
fn counts_equal_the_bytecode_semantics() {
    counts_by_hand("step");
}

#[test]
fn the_instrumenting_profilers_counts_equal_the_bytecode_semantics_too() {
    counts_by_hand("instrument");
}

fn counts_by_hand(profiler: &str) {
    let tmp = tempfile::tempdir().unwrap();
    let classes = tmp.path().join("classes");
    compile(&classes);
    let out = tmp.path().join("prof");
    let o = profile_main_with(profiler, &classes, "Exact", &out);
    assert!(o.status.success(), "{}", stderr(&o));
    let json: Value = serde_json::from_slice(&std::fs::read(out.join("Exact.json")).unwrap()).unwrap();
    assert_eq!(json["complete"], true);
    assert_eq!(json["region"], "main");
    let mut nodes = Vec::new();
    flatten(&json["root"], &mut Vec::new(), &mut nodes);
    let find = |suffix: &[&str]| -> Vec<&Value> {
        nodes
            .iter()
            .filter(|(p, _)| {
                p.len() >= suffix.len() && p[p.len() - suffix.len()..].iter().zip(suffix).all(|(a, b)| a == b)
            })
            .map(|(_, n)| *n)
            .collect()
    };
    let main = "Exact.main([Ljava/lang/String;)V";
    let root = &json["root"];
    assert_eq!(root["method"], main);
    assert_eq!(root["callsite"], -1);

    // A loop of 10 trips: `s += i` ten times, the condition eleven times.
    let lp = find(&[main, "Exact.loop(I)I"]);
    assert_eq!(lp.len(), 1);
    assert_eq!(lp[0]["calls"], 1);
    assert_eq!(
        ops(lp[0]),
        expect(&[
            ("iconst_0", 2),
            ("istore_1", 11),
            ("istore_2", 1),
            ("iload_2", 21),
            ("iload_0", 11),
            ("if_icmpge", 11),
            ("iload_1", 11),
            ("iadd", 10),
            ("iinc", 10),
            ("goto", 10),
            ("ireturn", 1),
        ])
    );

    // One polymorphic call site, two receiver classes, two calls each.
    let sq = find(&[main, "Exact$Sq.area()I"]);
    let rect = find(&[main, "Exact$Rect.area()I"]);
    assert_eq!((sq.len(), rect.len()), (1, 1));
    assert_eq!(sq[0]["callsite"], rect[0]["callsite"], "same call site");
    assert_eq!((sq[0]["calls"].as_u64(), rect[0]["calls"].as_u64()), (Some(2), Some(2)));
    let area = expect(&[("aload_0", 4), ("getfield", 4), ("imul", 2), ("ireturn", 2)]);
    assert_eq!(ops(sq[0]), area);
    assert_eq!(ops(rect[0]), area);

    // Recursion: fact(5) is five nested contexts, one call each.
    let mut chain = vec![main, "Exact.fact(I)I"];
    for depth in 1..=5 {
        let n = find(&chain);
        assert_eq!(n.len(), 1, "fact at depth {depth}");
        assert_eq!(n[0]["calls"], 1);
        let expected = if depth < 5 {
            expect(&[
                ("iload_0", 3),
                ("iconst_1", 2),
                ("if_icmpgt", 1),
                ("isub", 1),
                ("invokestatic", 1),
                ("imul", 1),
                ("ireturn", 1),
            ])
        } else {
            expect(&[
                ("iload_0", 1),
                ("iconst_1", 2),
                ("if_icmpgt", 1),
                ("goto", 1),
                ("ireturn", 1),
            ])
        };
        assert_eq!(ops(n[0]), expected, "fact at depth {depth}");
        chain.push("Exact.fact(I)I");
    }
    assert!(find(&chain).is_empty(), "no sixth level");

    // An exception thrown two frames below its handler.
    let catcher = find(&[main, "Exact.catcher(I)I"]);
    assert_eq!(
        ops(catcher[0]),
        expect(&[
            ("iload_0", 1),
            ("invokestatic", 1),
            ("astore_1", 1),
            ("iconst_m1", 1),
            ("ireturn", 1)
        ])
    );
    let middle = find(&[main, "Exact.catcher(I)I", "Exact.middle(I)I"]);
    assert_eq!(ops(middle[0]), expect(&[("iload_0", 1), ("invokestatic", 1)]));
    let thrower = find(&[main, "Exact.catcher(I)I", "Exact.middle(I)I", "Exact.thrower(I)I"]);
    assert_eq!(
        ops(thrower[0]),
        expect(&[
            ("iload_0", 1),
            ("ifle", 1),
            ("new", 1),
            ("dup", 1),
            ("invokespecial", 1),
            ("athrow", 1)
        ])
    );
    let ctor = find(&["Exact.thrower(I)I", "java.lang.IllegalStateException.<init>()V"]);
    assert_eq!(ctor.len(), 1, "the exception's constructor is a context of its own");

    // A static initializer run inside the region, entered by the JVM.
    let clinit = find(&[main, "Exact$Lazy.<clinit>()V"]);
    assert_eq!(clinit.len(), 1);
    assert_eq!(clinit[0]["calls"], 1);
    assert_eq!(
        ops(clinit[0]),
        expect(&[
            ("iconst_3", 1),
            ("newarray", 1),
            ("putstatic", 1),
            ("getstatic", 1),
            ("iconst_1", 1),
            ("bipush", 1),
            ("iastore", 1),
            ("return", 1),
        ])
    );
    // Its field accesses name an array (a reference, which JOP's linker
    // types apart), in a method without invokes; `area`'s ints are not typed.
    assert_eq!(
        clinit[0]["fields"],
        serde_json::json!([["getstatic", "reference", 1], ["putstatic", "reference", 1]])
    );
    assert_eq!(sq[0]["fields"], serde_json::json!([]));

    // The binary profile reads back and agrees with the JSON view.
    let p = jopcal_profile::read_file(&out.join("Exact.jopprof")).unwrap();
    p.validate().unwrap();
    assert_eq!(p.bytecodes(), json["bytecodes"].as_u64().unwrap());
    let lazy = p
        .nodes
        .iter()
        .find(|n| p.methods[n.method as usize].qualified() == "Exact$Lazy.<clinit>()V")
        .unwrap();
    assert!(lazy.entered_by_jvm());
    let unwinds = p.events.iter().filter(|e| **e == jopcal_profile::Event::Unwind).count();
    assert_eq!(unwinds, 2, "thrower and middle are left by the exception");
    // The handler of catcher() is a block that ran once.
    let catcher_node = p
        .nodes
        .iter()
        .find(|n| p.methods[n.method as usize].name == "catcher")
        .unwrap();
    assert_eq!(
        catcher_node.blocks.len(),
        2,
        "entry block and handler block: {:?}",
        catcher_node.blocks
    );
    assert!(catcher_node.blocks.values().all(|c| *c == 1));
}

#[test]
fn suite_region_is_exactly_between_start_and_stop() {
    let tmp = tempfile::tempdir().unwrap();
    let cache = tmp.path().join("cache");
    let profile = |out: &str| {
        jopcal()
            .env("JOPCAL_CACHE", &cache)
            .args([
                "profile", "--suite", "builtin", "--bench", "Sieve", "--bench", "Fib", "--out",
            ])
            .arg(tmp.path().join(out))
            .output()
            .unwrap()
    };
    let o = profile("first");
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(!stderr(&o).contains("(cached"), "{}", stderr(&o));
    // Nothing changed: the cache's profiles, byte for byte what the JVM gave.
    let again = profile("again");
    assert!(again.status.success(), "{}", stderr(&again));
    assert_eq!(
        stderr(&again).matches("(cached: its inputs are unchanged)").count(),
        2,
        "{}",
        stderr(&again)
    );
    for b in ["Sieve.jopprof", "Fib.jopprof"] {
        let first = std::fs::read(tmp.path().join("first").join(b)).unwrap();
        assert_eq!(first, std::fs::read(tmp.path().join("again").join(b)).unwrap(), "{b}");
    }
    assert!(std::fs::read_to_string(tmp.path().join("again/logs/Sieve.log"))
        .unwrap()
        .contains("inputs are unchanged"));
    let tmp = tmp.path().join("first");
    let sieve = jopcal_profile::read_file(&tmp.join("Sieve.jopprof")).unwrap();
    assert!(sieve.complete);
    assert_eq!(sieve.region, "harness");
    // The tree starts at main: calls before the region are tracked for the
    // method cache, with zero counts; the region is measure()'s part.
    assert_eq!(
        sieve.methods[sieve.nodes[0].method as usize].qualified(),
        "jopcal.suite.Sieve.main([Ljava/lang/String;)V"
    );
    let named = |name: &str| -> Vec<&jopcal_profile::Node> {
        sieve
            .nodes
            .iter()
            .filter(|n| sieve.methods[n.method as usize].name == name)
            .collect()
    };
    let measure = named("measure");
    assert_eq!(measure.len(), 1);
    // After start() returns: aload_0, iload_1, invokevirtual run, istore_2,
    // and the invokestatic of stop(), whose entry closes the region.
    let root_ops: Vec<(u8, u64)> = measure[0].opcodes.iter().map(|(o, c)| (*o, *c)).collect();
    assert_eq!(root_ops, vec![(0x1b, 1), (0x2a, 1), (0x3d, 1), (0xb6, 1), (0xb8, 1)]);
    assert_eq!(measure[0].calls, 0, "measure was entered before the region");
    let run = named("run");
    assert_eq!((run.len(), run[0].calls), (1, 1));
    assert_eq!(
        sieve.bytecodes(),
        measure[0].bytecodes() + run[0].bytecodes(),
        "nothing else counts"
    );
    let setup = named("setup");
    assert_eq!(
        setup[0].bytecodes(),
        0,
        "setup() runs before the region: tracked, not counted"
    );
    assert!(sieve.region_start > 0 && (sieve.region_start as usize) < sieve.events.len());
    // Fib is recursive: every call returns, and the stream is balanced.
    let fib = jopcal_profile::read_file(&tmp.join("Fib.jopprof")).unwrap();
    let region = &fib.events[fib.region_start as usize..];
    let invokes = region
        .iter()
        .filter(|e| matches!(e, jopcal_profile::Event::Invoke(_)))
        .count();
    // run() is invoked and returns inside the region; stop()'s entry closes it.
    assert_eq!(invokes, region.len() - invokes);
    let calls: u64 = fib.nodes.iter().skip(1).map(|n| n.calls).sum();
    assert_eq!(calls as usize, invokes);
}

#[test]
fn bad_programs_get_clear_errors_and_keep_what_was_profiled() {
    let tmp = tempfile::tempdir().unwrap();
    let classes = tmp.path().join("classes");
    compile(&classes);
    // System.exit inside the region: the profile is written, marked incomplete.
    let out = tmp.path().join("exit");
    let o = profile_main(&classes, "ExitInside", &out);
    assert!(!o.status.success());
    let err = stderr(&o);
    let last = err.lines().last().unwrap();
    assert!(
        last.starts_with("jopcal: error: workload ExitInside: java exited with status 7"),
        "{err}"
    );
    assert!(last.contains("marked incomplete"), "{err}");
    let p = jopcal_profile::read_file(&out.join("ExitInside.jopprof")).unwrap();
    assert!(!p.complete);
    let work = p
        .nodes
        .iter()
        .find(|n| p.methods[n.method as usize].name == "work")
        .unwrap();
    assert_eq!(work.calls, 1);
    assert_eq!(work.opcodes[&0x60], 100, "iadd ran 100 times before the exit");

    // A main class that does not exist.
    let o = profile_main(&classes, "NoSuchClass", &tmp.path().join("x"));
    assert!(!o.status.success());
    assert!(
        stderr(&o).contains("main class NoSuchClass was not found on the class path"),
        "{}",
        stderr(&o)
    );
    // A class path that does not exist.
    let o = profile_main(&tmp.path().join("nowhere"), "Exact", &tmp.path().join("y"));
    assert!(
        stderr(&o).contains("class path entry") && stderr(&o).contains("does not exist"),
        "{}",
        stderr(&o)
    );
    // A JVM that refuses the agent (not a shared library).
    let fake = tmp.path().join("libjopcal_agent.so");
    std::fs::write(&fake, b"not an ELF file").unwrap();
    let o = jopcal()
        .env("JOPCAL_AGENT", &fake)
        .args(["profile", "--profiler", "step", "--cp"])
        .arg(&classes)
        .args(["--main", "Exact", "--out"])
        .arg(tmp.path().join("z"))
        .output()
        .unwrap();
    assert!(!o.status.success());
    assert!(
        stderr(&o).contains("the JVM refused the profiler agent"),
        "{}",
        stderr(&o)
    );
    assert_eq!(stderr(&o).lines().filter(|l| l.starts_with("jopcal: error")).count(), 1);
}

#[test]
fn a_methods_dynamic_extent_is_a_region() {
    let tmp = tempfile::tempdir().unwrap();
    let classes = tmp.path().join("classes");
    compile(&classes);
    let out = tmp.path().join("prof");
    let o = jopcal()
        .args(["profile", "--cp"])
        .arg(&classes)
        .args([
            "--main",
            "Exact",
            "--region",
            "method",
            "--method",
            "Exact.fact",
            "--out",
        ])
        .arg(&out)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let p = jopcal_profile::read_file(&out.join("Exact.jopprof")).unwrap();
    assert_eq!(p.region, "method");
    assert_eq!(p.methods[p.nodes[0].method as usize].qualified(), "Exact.fact(I)I");
    // fact(5): four levels of 10 bytecodes and the leaf's 6; nothing of main.
    assert_eq!(p.bytecodes(), 4 * 10 + 6);
    assert_eq!(p.nodes.len(), 5);
    assert_eq!(p.nodes[0].calls, 1);
}
