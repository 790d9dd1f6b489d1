//! Integration tests: they drive the real `jopcal` binary on the real host JVM.

mod common;
#[allow(unused_imports)]
use common::{jopcal, repo, stderr, text};

use std::fs;
use std::path::{Path, PathBuf};

const VERBS: [&str; 15] = [
    "validate",
    "run",
    "profile",
    "estimate",
    "table",
    "reconcile",
    "calibrate",
    "report",
    "regress",
    "upload",
    "emu",
    "sim",
    "targets",
    "doctor",
    "cache",
];

#[test]
fn help_lists_every_verb_and_every_verb_has_help() {
    let o = jopcal().arg("--help").output().unwrap();
    assert!(o.status.success());
    let (out, _) = text(&o);
    for v in VERBS {
        assert!(
            out.lines().any(|l| l.trim_start().starts_with(v)),
            "--help lacks {v}:\n{out}"
        );
        let o = jopcal().args([v, "--help"]).output().unwrap();
        assert!(o.status.success(), "{v} --help failed");
    }
}

fn suite_names() -> Vec<String> {
    let manifest = fs::read_to_string(repo().join("jop-firmware/suite.toml")).unwrap();
    manifest
        .lines()
        .filter_map(|l| l.strip_prefix("name = \""))
        .map(|l| l.trim_end_matches('"').to_string())
        .collect()
}

#[test]
fn run_on_host_writes_one_row_per_workload_and_keeps_logs() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("run");
    let o = jopcal()
        .current_dir(repo())
        .args(["run", "--target", "host", "--out"])
        .arg(&out)
        .output()
        .unwrap();
    let (stdout, stderr) = text(&o);
    assert!(o.status.success(), "{stderr}");
    assert_eq!(stdout.trim(), out.join("measurements.csv").display().to_string());
    let csv = fs::read_to_string(out.join("measurements.csv")).unwrap();
    let mut lines = csv.lines();
    // What produced it: jopcal's version and commit, the command, the JDK, the target.
    let provenance = lines.next().unwrap();
    assert!(provenance.starts_with("# jopcal 0.1.0"), "{provenance}");
    for fact in [
        "; command: ",
        " run --target host --out ",
        "; jdk: javac ",
        "; target: host",
    ] {
        assert!(provenance.contains(fact), "{fact}: {provenance}");
    }
    assert_eq!(
        lines.next().unwrap(),
        "target,target_config,benchmark,iterations,cycles,value,unit,run,timestamp,tool_version,suite_hash,log"
    );
    let rows: Vec<Vec<&str>> = lines.map(|l| l.split(',').collect()).collect();
    let names = suite_names();
    assert!(names.len() >= 12, "the suite must have at least 12 workloads");
    assert_eq!(rows.iter().map(|r| r[2].to_string()).collect::<Vec<_>>(), names);
    for r in &rows {
        assert_eq!(r[0], "host");
        assert_eq!(r[6], "ns", "host timings must be labelled ns");
        assert_eq!(r[4], "", "the cycles column holds JOP cycles only, never host time");
        assert!(r[5].parse::<u64>().unwrap() > 0);
        let log = fs::read_to_string(out.join(r[11])).unwrap();
        assert!(log.contains("@jopcal done"), "{log}");
    }
    assert!(!out.join("measurements.csv.partial").exists());
}

#[test]
fn suite_compiles_to_java_8_class_files_and_all_lists_every_workload() {
    let dir = tempfile::tempdir().unwrap();
    let o = jopcal()
        .current_dir(repo())
        .env("JOPCAL_CACHE", dir.path())
        .args(["run", "--bench", "Fib", "--out"])
        .arg(dir.path().join("o"))
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", text(&o).1);
    let mut classes = Vec::new();
    fn walk(d: &Path, out: &mut Vec<PathBuf>) {
        for e in fs::read_dir(d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                walk(&p, out)
            } else if p.extension().is_some_and(|x| x == "class") {
                out.push(p)
            }
        }
    }
    walk(&dir.path().join("classes"), &mut classes);
    assert!(classes.len() > 15);
    for c in &classes {
        let b = fs::read(c).unwrap();
        assert_eq!(&b[..4], &[0xca, 0xfe, 0xba, 0xbe]);
        assert_eq!(
            u16::from_be_bytes([b[6], b[7]]),
            52,
            "{} is not a Java 8 class file",
            c.display()
        );
    }
    let all = fs::read_to_string(repo().join("jop-firmware/src/jopcal/suite/All.java")).unwrap();
    let in_all: Vec<String> = all
        .lines()
        .filter_map(|l| l.split("Harness.measure(new ").nth(1))
        .map(|l| l.split('(').next().unwrap().to_string())
        .collect();
    assert_eq!(in_all, suite_names());
}

/// A firmware tree of test workloads that misbehave in the ways a lab sees.
fn bad_firmware(dir: &Path) -> PathBuf {
    let root = dir.join("fw");
    let src = root.join("src/t");
    fs::create_dir_all(&src).unwrap();
    let prog = |name: &str, body: &str| {
        fs::write(
            src.join(format!("{name}.java")),
            format!("package t;\npublic class {name} {{\n public static void main(String[] a) throws Exception {{\n{body}\n }}\n}}\n"),
        )
        .unwrap();
    };
    prog(
        "Good",
        r#"System.out.println("@jopcal result bench=Good iter=1 cycles=42"); System.out.println("@jopcal done");"#,
    );
    prog(
        "Malformed",
        r#"System.out.println("hello"); System.out.println("@jopcal result bench=Malformed iter=1 cycles=4x2"); System.out.println("@jopcal done");"#,
    );
    prog(
        "Crash",
        r#"System.out.println("@jopcal result bench=Crash iter=1 cycles=1"); throw new IllegalStateException("boom");"#,
    );
    prog(
        "Hang",
        r#"System.out.println("@jopcal result bench=Hang iter=1 cycles=1"); Thread.sleep(60000);"#,
    );
    prog(
        "NoDone",
        r#"System.out.println("@jopcal result bench=NoDone iter=1 cycles=1");"#,
    );
    prog(
        "Wrong",
        r#"System.out.println("@jopcal error bench=Wrong reason=checksum expected=1 got=2"); System.out.println("@jopcal done status=failed"); System.exit(1);"#,
    );
    let mut manifest = String::new();
    for n in ["Good", "Malformed", "Crash", "Hang", "NoDone", "Wrong"] {
        manifest.push_str(&format!("[[workload]]\nname = \"{n}\"\nmain = \"t.{n}\"\n"));
    }
    fs::write(root.join("suite.toml"), manifest).unwrap();
    root
}

#[test]
fn misbehaving_workloads_get_named_errors_and_good_rows_are_kept() {
    let dir = tempfile::tempdir().unwrap();
    let fw = bad_firmware(dir.path());
    let out = dir.path().join("out");
    let run = |bench: &str| {
        let o = jopcal()
            .env("JOPCAL_CACHE", dir.path().join("cache"))
            .arg("--firmware")
            .arg(&fw)
            .args(["run", "--target", "host", "--timeout", "3", "--bench", bench, "--out"])
            .arg(&out)
            .output()
            .unwrap();
        let (_, err) = text(&o);
        (o.status.code(), err.lines().last().unwrap_or("").to_string())
    };
    // Logs are named relative to the output directory (right even after the run is archived).
    let log = |b: &str| format!("logs/{b}-run1.log");
    let o = out.display();
    assert_eq!(run("Good").0, Some(0));
    let cases = [
        ("Malformed", format!("jopcal: error: workload Malformed: malformed result line: stdout line 2, column 46: 'cycles' must be a non-negative integer, found '4x2' (raw output: {}) (in {o})", log("Malformed"))),
        ("Crash", format!("jopcal: error: workload Crash: java exited with status 1: Exception in thread \"main\" java.lang.IllegalStateException: boom (raw output: {}) (in {o})", log("Crash"))),
        ("Hang", format!("jopcal: error: workload Hang: no '@jopcal done' within 3 s (killed) (raw output: {}) (in {o})", log("Hang"))),
        ("NoDone", format!("jopcal: error: workload NoDone: output ended without '@jopcal done' (raw output: {}) (in {o})", log("NoDone"))),
        ("Wrong", format!("jopcal: error: workload Wrong: the workload reported an error: bench=Wrong reason=checksum expected=1 got=2 (raw output: {}) (in {o})", log("Wrong"))),
    ];
    for (bench, want) in cases {
        assert_eq!(run(bench), (Some(1), want));
        assert!(out.join(log(bench)).is_file(), "raw log of {bench} kept");
    }

    // A failing workload does not lose the good one's row measured before it.
    let o = jopcal()
        .env("JOPCAL_CACHE", dir.path().join("cache"))
        .arg("--firmware")
        .arg(&fw)
        .args([
            "run",
            "--target",
            "host",
            "--timeout",
            "3",
            "--bench",
            "Good",
            "--bench",
            "NoDone",
            "--out",
        ])
        .arg(&out)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(1));
    let csv = fs::read_to_string(out.join("measurements.csv")).unwrap();
    let rows: Vec<&str> = csv.lines().filter(|l| !l.starts_with('#')).collect();
    assert_eq!(rows.len(), 2, "{csv}");
    assert!(rows[1].starts_with("host,"));
    // The failed workload is recorded after the rows, with its reason.
    let failed: Vec<&str> = csv.lines().filter(|l| l.starts_with("# failed ")).collect();
    assert_eq!(failed.len(), 1, "{csv}");
    assert!(failed[0].starts_with("# failed NoDone: "), "{csv}");
    // ...and every earlier run in the same --out was archived, not overwritten.
    let previous = fs::read_dir(out.join("previous")).unwrap().count();
    assert_eq!(previous, 6, "six earlier runs archived");
}

#[test]
fn missing_jdk_is_one_line_naming_what_to_install() {
    let dir = tempfile::tempdir().unwrap();
    let o = jopcal()
        .current_dir(repo())
        .env("PATH", dir.path())
        .env_remove("JAVA_HOME")
        .args(["run", "--out"])
        .arg(dir.path().join("o"))
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(1));
    let (_, err) = text(&o);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.contains("no JDK found") && err.contains("apt-get install default-jdk-headless"),
        "{err}"
    );
}

#[test]
fn unknown_benchmark_and_bad_firmware_dir_are_clear_errors() {
    let dir = tempfile::tempdir().unwrap();
    let o = jopcal()
        .current_dir(repo())
        .args(["run", "--bench", "Nope", "--out"])
        .arg(dir.path())
        .output()
        .unwrap();
    let (_, err) = text(&o);
    assert_eq!(o.status.code(), Some(1));
    assert!(
        err.starts_with("jopcal: error: unknown benchmark 'Nope' (the suite has: Sieve, "),
        "{err}"
    );

    let o = jopcal().arg("--firmware").arg(dir.path()).arg("run").output().unwrap();
    let (_, err) = text(&o);
    assert_eq!(
        err.trim(),
        format!(
            "jopcal: error: {}: no suite.toml in this directory (not a jopcal firmware/suite directory)",
            dir.path().display()
        )
    );
}

#[test]
fn validate_runs_the_pipeline_and_calibration_recovers_the_board() {
    // The virtual board's own table (calibration/emu-board.toml: r=3, w=5, its
    // own routine costs, a 2 KB / 16-block cache) is unknown to the estimator,
    // which starts from JOP's published table (r=1, w=2).
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("v");
    let o = jopcal()
        .current_dir(repo())
        .args(["validate", "--trace", "--out"])
        .arg(&out)
        .output()
        .unwrap();
    let (stdout, stderr) = text(&o);
    assert!(o.status.success(), "{stderr}");
    assert_eq!(stdout.trim(), out.join("summary.json").display().to_string());
    let s = fs::read_to_string(out.join("summary.json")).unwrap();
    let j: serde_json::Value = serde_json::from_str(&s).unwrap();
    assert_eq!(j["target"], "emu");
    assert_eq!(j["complete"], true, "{s}");
    // What produced it: jopcal's version and commit (as --version says), the command, the target.
    let version = text(&jopcal().arg("--version").output().unwrap()).0;
    let version = version.trim().strip_prefix("jopcal ").unwrap_or_default().to_string();
    assert!(version.starts_with("0.1.0"), "{version}");
    let prov = &j["provenance"];
    assert_eq!(prov["jopcal"], version.as_str(), "{prov}");
    assert!(
        prov["command"]
            .as_str()
            .unwrap()
            .ends_with(&format!("validate --trace --out {}", out.display())),
        "{prov}"
    );
    assert!(
        prov["target"]
            .as_str()
            .unwrap()
            .contains("[r=3, w=5, method cache fifo:2048:16"),
        "{prov}"
    );
    assert!(prov["jdk"].as_str().unwrap().starts_with("javac "), "{prov}");
    let cal = &j["calibration"];
    assert_eq!(cal["params"]["r"], 3.0, "{cal}");
    assert_eq!(cal["params"]["w"], 5.0, "{cal}");
    assert_eq!(cal["cache"], "fifo:2048:16", "{cal}");
    assert!(cal["loo_max_abs_error_pct"].as_f64().unwrap() < 1.0, "{cal}");
    assert!(cal["fit_max_abs_error_pct"].as_f64().unwrap() < 1.0, "{cal}");
    let benches = j["benchmarks"].as_array().unwrap();
    assert_eq!(benches.len(), suite_names().len());
    for b in benches {
        let est = b["estimates"].as_array().unwrap();
        assert_eq!(
            est.len(),
            4,
            "hit, miss, fifo and the calibrated table for {}",
            b["name"]
        );
        // Out of sample: the table fitted without this benchmark.
        let calibrated = est.iter().find(|e| e["model"] == "jop-wcet-calibrated-loo").unwrap();
        let (err, loo) = (
            calibrated["error_pct"].as_f64().unwrap(),
            b["loo_error_pct"].as_f64().unwrap(),
        );
        assert!((err - loo).abs() < 1e-9, "{b}");
        assert!(calibrated["error_pct"].as_f64().unwrap().abs() < 1.0, "{b}");
        assert!(b["measured_cycles"].as_u64().unwrap() > 0);
    }
    for f in [
        "accuracy.md",
        "accuracy.csv",
        "accuracy.tex",
        "calibrated.toml",
        "calibration.json",
        "plots/measured-vs-estimated.svg",
        "plots/measured-vs-estimated.png",
        "plots/error-by-estimator.png",
        "plots/calibration-residuals.svg",
    ] {
        assert!(out.join(f).is_file(), "{f}");
    }
    // explain.md takes each estimate of the starting table apart; explain
    // with the fitted table and cache finds the estimates within 1%.
    let x: serde_json::Value = serde_json::from_str(&fs::read_to_string(out.join("explain.json")).unwrap()).unwrap();
    assert_eq!(x.as_array().unwrap().len(), suite_names().len());
    assert!(fs::read_to_string(out.join("explain.md"))
        .unwrap()
        .contains("| the estimate by opcode group |"));
    let o = jopcal()
        .arg("explain")
        .arg(&out)
        .args(["--bench", "Fib", "--cache", "fifo:2048:16", "--model"])
        .arg(out.join("calibrated.toml"))
        .arg("--out")
        .arg(dir.path().join("fib.md"))
        .output()
        .unwrap();
    let (stdout, stderr) = text(&o);
    assert!(o.status.success(), "{stderr}");
    assert!(stdout.contains("## Fib\n"), "{stdout}");
    let x: serde_json::Value = serde_json::from_str(&fs::read_to_string(dir.path().join("fib.json")).unwrap()).unwrap();
    let (est, measured) = (x[0]["estimate"].as_f64().unwrap(), x[0]["measured"].as_f64().unwrap());
    assert!((est - measured).abs() < 0.01 * measured, "{x}");
    assert_eq!(x[0]["cache"], "fifo:2048:16");
    // With the board's traces (--trace), each method of the estimate beside
    // the board's own cycles: Fib's recursion makes the same calls on both.
    let methods = x[0]["methods"].as_array().unwrap();
    let fib = methods
        .iter()
        .find(|m| {
            m["method"].as_str().unwrap().starts_with("jopcal.suite.Fib.") && m["calls_estimate"].as_u64() > Some(1)
        })
        .unwrap_or_else(|| panic!("{methods:?}"));
    assert_eq!(fib["calls_estimate"], fib["calls_target"], "{fib}");
    assert!(fs::read_to_string(dir.path().join("fib.md"))
        .unwrap()
        .contains("| per method, against the target's trace (whole run) |"));
    let o = jopcal().args(["explain"]).arg(dir.path()).output().unwrap();
    assert_eq!(
        text(&o).1.trim(),
        format!(
            "jopcal: error: {}: no measurements.csv (explain reads a directory `jopcal validate` wrote)",
            dir.path().display()
        )
    );
    // The fitted table is a loadable model, and report re-renders from the files alone.
    let o = jopcal()
        .args(["table", "--model"])
        .arg(out.join("calibrated.toml"))
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", text(&o).1);
    // explain names the cause: the board's memory against the table's.
    let explained = fs::read_to_string(out.join("explain.md")).unwrap();
    assert!(
        explained.contains("sets r (the memory's read wait states) to 3 where this table has 1"),
        "{explained}"
    );
    // The fitted table is one file: copied alone elsewhere, it loads.
    let alone = dir.path().join("elsewhere");
    fs::create_dir(&alone).unwrap();
    fs::copy(out.join("calibrated.toml"), alone.join("mine.toml")).unwrap();
    let o = jopcal()
        .args(["table", "--model"])
        .arg(alone.join("mine.toml"))
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", text(&o).1);
    // Two fits into one directory: each writes files of its own beside its table.
    for name in ["a.toml", "b.toml"] {
        let o = jopcal()
            .current_dir(repo())
            .args(["calibrate", "--fit", "r,w", "--measured"])
            .arg(out.join("measurements.csv"))
            .arg("--profiles")
            .arg(out.join("profiles"))
            .arg("--out")
            .arg(alone.join(name))
            .output()
            .unwrap();
        assert!(o.status.success(), "{name}: {}", text(&o).1);
    }
    for f in [
        "a.calibration.json",
        "b.calibration.json",
        "plots/a-calibration-residuals.pdf",
        "plots/b-calibration-residuals.svg",
    ] {
        assert!(alone.join(f).is_file(), "{f}");
    }
    reports_are_what_the_code_writes(&out, dir.path());
    fs::remove_file(out.join("accuracy.md")).unwrap();
    let o = jopcal().args(["report", "--from"]).arg(&out).output().unwrap();
    assert!(o.status.success(), "{}", text(&o).1);
    let md = fs::read_to_string(out.join("accuracy.md")).unwrap();
    assert!(md.contains("| geometric mean of \\|error\\| |"), "{md}");
}

/// reports/ is what a default validate (the run in `run`) publishes: the
/// tables, the fitted table and the plots' SVG byte for byte, the data of
/// calibration.json and summary.json (less where they were made, and when).
/// `scripts/reports` makes it so again.
fn reports_are_what_the_code_writes(run: &Path, scratch: &Path) {
    let published = scratch.join("published");
    let o = jopcal()
        .args(["report", "--from"])
        .arg(run)
        .arg("--publish")
        .arg(&published)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", text(&o).1);
    let reports = repo().join("reports");
    let stale = "reports/ is not what this jopcal writes: run scripts/reports";
    for f in [
        "accuracy.md",
        "accuracy.csv",
        "accuracy.tex",
        "calibrated.toml",
        "plots/measured-vs-estimated.svg",
        "plots/error-by-estimator.svg",
        "plots/calibration-residuals.svg",
    ] {
        let (new, old) = (
            fs::read_to_string(published.join(f)).unwrap(),
            fs::read_to_string(reports.join(f)).unwrap_or_default(),
        );
        assert!(new == old, "{stale} ({f} differs)");
    }
    let data = |path: &Path, drop: &[&str]| {
        let mut v: serde_json::Value =
            serde_json::from_str(&fs::read_to_string(path).unwrap_or_default()).unwrap_or(serde_json::Value::Null);
        if let Some(o) = v.as_object_mut() {
            for k in drop {
                o.remove(*k);
            }
        }
        v
    };
    for (f, drop) in [
        ("calibration.json", &["model_file"][..]),
        ("summary.json", &["timestamp", "provenance", "tool_version"][..]),
    ] {
        assert!(
            data(&published.join(f), drop) == data(&reports.join(f), drop),
            "{stale} ({f} differs)"
        );
    }
}

fn write_measurements(path: &Path, rows: &[(&str, u64)]) {
    fs::create_dir_all(path).unwrap();
    let mut w = jopcal_measure::MeasurementWriter::create(path).unwrap();
    for (b, c) in rows {
        w.append(&jopcal_measure::Measurement {
            target: "emu".into(),
            target_config: "test".into(),
            benchmark: b.to_string(),
            iterations: 1,
            value: *c,
            unit: jopcal_measure::Unit::Cycles,
            run: 1,
            timestamp: "2026-01-01T00:00:00Z".into(),
            tool_version: "0".into(),
            suite_hash: "0".into(),
            log: format!("logs/{b}.log"),
        })
        .unwrap();
    }
    w.finish().unwrap();
    fs::create_dir_all(path.join("logs")).unwrap();
    for (b, _) in rows {
        fs::write(path.join(format!("logs/{b}.log")), format!("raw output of {b}\n")).unwrap();
    }
}

#[test]
fn regress_exit_codes_follow_the_threshold_and_junit_carries_logs() {
    let dir = tempfile::tempdir().unwrap();
    let (a, b) = (dir.path().join("a"), dir.path().join("b"));
    write_measurements(&a, &[("Sieve", 1_000_000), ("Fib", 2_000_000)]);
    write_measurements(&b, &[("Sieve", 1_004_000), ("Fib", 2_100_000)]);
    let regress = |threshold: &str, junit: Option<&Path>| {
        let mut c = jopcal();
        c.args(["regress", "--baseline"])
            .arg(a.join("measurements.csv"))
            .arg("--candidate")
            .arg(b.join("measurements.csv"))
            .args(["--threshold", threshold]);
        if let Some(j) = junit {
            c.arg("--junit").arg(j);
        }
        c.output().unwrap()
    };
    // Fib moved +5%: over a 1% threshold, under a 10% one.
    let junit = dir.path().join("junit.xml");
    let o = regress("1", Some(&junit));
    assert_eq!(o.status.code(), Some(1));
    assert_eq!(
        text(&o).1.trim(),
        "jopcal: error: 1 benchmark(s) became slower by more than 1% or are missing: Fib +5.000%"
    );
    let x = fs::read_to_string(&junit).unwrap();
    assert!(x.contains("tests=\"2\" failures=\"1\""), "{x}");
    assert!(x.contains("raw output of Fib"), "{x}");
    let o = regress("10", None);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o).1);
    assert!(text(&o).0.contains("Sieve"));
    // A speed-up passes by default; --fail-on faster or any fails it, and a
    // change of the target's configuration between the two sets is named.
    write_measurements(&b, &[("Sieve", 1_000_000), ("Fib", 1_800_000)]);
    let facts = |cache: &str| {
        format!("{{\"method_cache\": \"{cache}\", \"times_monitors_as_jopsim\": false, \"runs_tree_images\": false, \"wait_states\": [1.0, 2.0]}}")
    };
    fs::write(a.join("target.json"), facts("fifo:1024:16")).unwrap();
    fs::write(b.join("target.json"), facts("fifo:2048:16")).unwrap();
    let o = regress("1", None);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o).1);
    assert!(
        text(&o)
            .1
            .contains("note: the two sets' targets differ: method cache fifo:1024:16 against fifo:2048:16"),
        "{}",
        text(&o).1
    );
    for on in ["faster", "any"] {
        let mut c = jopcal();
        c.args(["regress", "--fail-on", on, "--baseline"])
            .arg(a.join("measurements.csv"))
            .arg("--candidate")
            .arg(b.join("measurements.csv"));
        let o = c.output().unwrap();
        assert_eq!(o.status.code(), Some(1), "{on}");
        let last = text(&o).1.lines().last().unwrap_or("").to_string();
        assert!(
            last.contains("Fib -10.000%") && last.contains("the targets differ"),
            "{on}: {last}"
        );
    }
    // A benchmark missing from the candidate fails too.
    write_measurements(&b, &[("Sieve", 1_000_000)]);
    let o = regress("10", None);
    assert_eq!(o.status.code(), Some(1));
    assert!(
        text(&o).1.contains("missing Fib (not in the candidate)"),
        "{}",
        text(&o).1
    );
}

/// `--dry-run` prints the run's plan, every input resolved, and does nothing:
/// no output directory appears.
#[test]
fn dry_run_prints_the_plan_and_writes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("would-be");
    for verb in ["validate", "run"] {
        let o = jopcal()
            .args([verb, "--dry-run", "--bench", "Sieve", "--bench", "Fib", "--out"])
            .arg(&out)
            .output()
            .unwrap();
        let (stdout, err) = text(&o);
        assert!(o.status.success(), "{err}");
        assert!(stdout.starts_with(&format!("{verb} plan\n")), "{stdout}");
        assert!(stdout.contains("  workloads  2 (Sieve, Fib)"), "{stdout}");
        assert!(stdout.contains(&format!("  output     {}", out.display())), "{stdout}");
        assert!(stdout.contains("1. measure the 2 workloads on emu"), "{stdout}");
        assert_eq!(verb == "validate", stdout.contains("  table      "), "{stdout}");
        assert!(!out.exists(), "{verb} --dry-run made {}", out.display());
    }
    // A plan that cannot be made fails as the run would.
    let o = jopcal()
        .args(["validate", "--dry-run", "--bench", "NoSuch"])
        .output()
        .unwrap();
    assert!(!o.status.success());
    assert!(text(&o).1.contains("NoSuch"), "{}", text(&o).1);
}

/// `regress` across two versions of the processor says in one line what
/// it lacks: which way to compare, a tree, a git checkout, the revision.
#[test]
fn regress_across_versions_names_what_it_lacks() {
    let dir = tempfile::tempdir().unwrap();
    let run = |args: &[&str]| {
        let o = jopcal()
            .current_dir(dir.path())
            .env_remove("JOPCAL_JOP_HOME")
            .args(args)
            .output()
            .unwrap();
        assert_eq!(o.status.code(), Some(1), "{args:?}");
        let err = text(&o).1;
        assert_eq!(err.trim().lines().count(), 1, "{err}");
        err
    };
    let e = run(&["regress"]);
    assert!(
        e.contains("either two measurement sets (--baseline FILE --candidate FILE) or two versions"),
        "{e}"
    );
    let e = run(&["regress", "--against", "HEAD"]);
    assert!(e.contains("this needs the JOP tree: pass --jop-home DIR"), "{e}");
    // A tree that is not a git checkout has no revisions.
    let tree = dir.path().join("tree");
    fs::create_dir_all(tree.join("asm/src")).unwrap();
    let home = tree.to_str().unwrap();
    let e = run(&["--jop-home", home, "regress", "--against", "HEAD"]);
    assert!(
        e.contains("not a git checkout, so it has no revision `HEAD`") && e.contains("--candidate-home"),
        "{e}"
    );
    let e = run(&[
        "--jop-home",
        home,
        "regress",
        "--candidate-home",
        dir.path().to_str().unwrap(),
    ]);
    assert!(e.contains("not a JOP tree (no asm/src/jvm.asm)"), "{e}");
    let e = run(&["--jop-home", home, "regress", "--against", "HEAD", "--target", "host"]);
    assert!(
        e.contains("--target host: comparing two versions of the processor needs"),
        "{e}"
    );
    // A dry run names both versions and what differs between them, the
    // hardware apart, and writes nothing.
    let other = dir.path().join("other");
    for (t, vhd) in [(&tree, "a <= b;"), (&other, "a <= not b;")] {
        fs::create_dir_all(t.join("asm/src")).unwrap();
        fs::write(t.join("asm/src/jvm.asm"), "iadd: add nxt\n").unwrap();
        fs::create_dir_all(t.join("vhdl/core")).unwrap();
        fs::write(t.join("vhdl/core/alu.vhd"), vhd).unwrap();
    }
    let out = dir.path().join("out");
    let o = jopcal()
        .current_dir(dir.path())
        .args([
            "--jop-home",
            home,
            "regress",
            "--candidate-home",
            other.to_str().unwrap(),
            "--dry-run",
            "--out",
        ])
        .arg(&out)
        .output()
        .unwrap();
    let (stdout, err) = text(&o);
    assert!(o.status.success(), "{err}");
    assert!(stdout.starts_with("regress plan\n"), "{stdout}");
    assert!(
        stdout.contains("differ     1 file(s): vhdl/core/alu.vhd; in the hardware description: vhdl/core/alu.vhd"),
        "{stdout}"
    );
    assert!(
        stdout.contains("run the candidate's shortest benchmark on its RTL"),
        "{stdout}"
    );
    assert!(!out.exists());
}

#[test]
fn reconcile_and_calibrate_reject_mismatched_inputs() {
    let dir = tempfile::tempdir().unwrap();
    let m = dir.path().join("m");
    write_measurements(&m, &[("Sieve", 1_000_000)]);
    let est = dir.path().join("e.csv");
    fs::write(
        &est,
        "benchmark,model,cache_mode,cycles,bytecodes\nFib,jop-wcet,hit,123,10\n",
    )
    .unwrap();
    let o = jopcal()
        .args(["reconcile", "--measured"])
        .arg(m.join("measurements.csv"))
        .arg("--estimates")
        .arg(&est)
        .arg("--out")
        .arg(dir.path().join("r"))
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(1));
    assert!(text(&o).1.contains("no benchmark in common"), "{}", text(&o).1);
    fs::write(
        &est,
        "benchmark,model,cache_mode,cycles,bytecodes\nSieve,jop-wcet,hit,-5,10\n",
    )
    .unwrap();
    let o = jopcal()
        .args(["reconcile", "--measured"])
        .arg(m.join("measurements.csv"))
        .arg("--estimates")
        .arg(&est)
        .output()
        .unwrap();
    assert_eq!(
        text(&o).1.trim(),
        format!(
            "jopcal: error: {}: line 2: cycles must be positive, found -5",
            est.display()
        )
    );
    // Profiles of other benchmarks than the measured ones.
    let prof = dir.path().join("p");
    fs::create_dir_all(&prof).unwrap();
    two_call_profile(&prof);
    let calibrate = |out: &Path| {
        jopcal()
            .current_dir(repo())
            .args(["calibrate", "--measured"])
            .arg(m.join("measurements.csv"))
            .arg("--profiles")
            .arg(&prof)
            .arg("--out")
            .arg(out)
            .output()
            .unwrap()
    };
    let o = calibrate(&dir.path().join("c.toml"));
    assert_eq!(o.status.code(), Some(1));
    assert!(
        text(&o)
            .1
            .contains("do not cover the same benchmarks (measured only: Sieve; profiled only: T)"),
        "{}",
        text(&o).1
    );

    // A named output is never replaced: neither the table nor what goes beside it.
    let good = dir.path().join("good.toml");
    for existing in [good.clone(), dir.path().join("good.calibration.json")] {
        fs::write(&existing, "mine").unwrap();
        let o = calibrate(&good);
        assert_eq!(o.status.code(), Some(1));
        assert!(text(&o).1.contains("exists already"), "{}", text(&o).1);
        assert!(text(&o).1.contains(existing.file_name().unwrap().to_str().unwrap()));
        assert_eq!(fs::read_to_string(&existing).unwrap(), "mine");
        fs::remove_file(&existing).unwrap();
    }
}

#[test]
fn table_prints_the_published_values_and_rejects_bad_models() {
    let o = jopcal()
        .current_dir(repo())
        .args(["table", "--param", "r=3", "--param", "w=5"])
        .output()
        .unwrap();
    let (out, err) = text(&o);
    assert!(o.status.success(), "{err}");
    let mut lines = out.lines();
    let header = lines.next().unwrap();
    assert!(
        header.starts_with("opcode,") && header.contains("hit") && header.contains("miss"),
        "{header}"
    );
    let find = |op: &str| {
        out.lines()
            .find(|l| l.starts_with(&format!("{op},")))
            .unwrap()
            .to_string()
    };
    assert_eq!(find("invokevirtual"), "invokevirtual,105,206,microcode");
    assert_eq!(find("invokestatic"), "invokestatic,77,178,microcode");
    assert_eq!(find("ireturn"), "ireturn,23,151,microcode");
    assert_eq!(find("return"), "return,21,150,microcode");
    assert_eq!(find("getfield"), "getfield,14,14,microcode");
    assert_eq!(find("iload_0"), "iload_0,1,1,microcode");

    for (fmt, marker) in [
        ("md", "| invokevirtual | 100 | 135 | microcode |"),
        ("tex", "\\texttt{invokevirtual} & 100 & 135"),
    ] {
        let o = jopcal()
            .current_dir(repo())
            .args(["table", "--format", fmt])
            .output()
            .unwrap();
        assert!(text(&o).0.contains(marker), "{fmt}");
    }

    let dir = tempfile::tempdir().unwrap();
    let bad = dir.path().join("bad.toml");
    let good = fs::read_to_string(repo().join("calibration/jop-wcet.toml")).unwrap();
    fs::write(
        &bad,
        good.replace("getfield = \"8 + 2 * r\"", "getfield = \"8 + 2 * rr\""),
    )
    .unwrap();
    let line = good.lines().position(|l| l.starts_with("getfield =")).unwrap() + 1;
    let o = jopcal().arg("table").arg("--model").arg(&bad).output().unwrap();
    assert_eq!(o.status.code(), Some(1));
    assert_eq!(
        text(&o).1.trim(),
        format!(
            "jopcal: error: {}:{line}:12: opcode 'getfield': unknown name 'rr'",
            bad.display()
        )
    );
    let o = jopcal()
        .current_dir(repo())
        .args(["table", "--param", "q=1"])
        .output()
        .unwrap();
    assert!(text(&o)
        .1
        .starts_with("jopcal: error: unknown parameter 'q' (the model has: "));
}

/// A microcode of this test's own, in JOP's syntax: an array load, a monitor
/// exit on I/O with two paths, a bytecode load, a multiply loop of constant
/// trips, a copy loop on the bytecode's data, and the not-implemented entry.
const OWN_MICROCODE: &str = "
io_exc = -124
io_lock = -123
mp ?
iaload:
 stald
 pop
 wait
 wait
 ldmrd nxt
monitorexit:
 ldi io_lock
 stmwa
 stmwd
 wait
 wait
 ldm mp
 nop
 bnz done
 nop
 nop
 nop
 nop
 nop
done:
 nop nxt
imul:
 stmul
 pop
 ldi 2
imul_loop:
 ldi -1
 add
 dup
 nop
 bnz imul_loop
 nop
 nop
 pop
 ldmul nxt
jopsys_memcpy:
 ldm mp
copy_loop:
 ldi -1
 add
 dup
 nop
 bnz copy_loop
 nop
 nop
 pop nxt
sys_noim:
 ldm mp
 stbcrd
 nop
 wait
 wait
 nop nxt
";

#[test]
fn table_derives_cycles_from_microcode_and_writes_a_model() {
    let dir = tempfile::tempdir().unwrap();
    let asm = dir.path().join("own.asm");
    fs::write(&asm, OWN_MICROCODE).unwrap();
    let out = dir.path().join("derived.toml");
    let o = jopcal()
        .current_dir(repo())
        .arg("table")
        .arg("--microcode")
        .arg(&asm)
        .args(["--format", "md", "--out"])
        .arg(&out)
        .output()
        .unwrap();
    let (md, err) = text(&o);
    assert!(o.status.success(), "{err}");
    let row = |name: &str| {
        md.lines()
            .find(|l| l.starts_with(&format!("| {name} |")))
            .unwrap_or_else(|| panic!("no row {name} in\n{md}"))
            .to_string()
    };
    // At the tree's r=1, w=2: iaload 6 + 3r, as the published table.
    assert!(
        row("iaload").starts_with("| iaload | 6 + 3 * r | 9 | 9 | 9 | 9 |"),
        "{}",
        row("iaload")
    );
    // The I/O write costs its instructions and the device's cycle
    // (calibration/jop-microcode.toml, [io]); the worst of two paths (12 and 15).
    assert!(
        row("monitorexit").starts_with("| monitorexit | 15 | 15 | 15 |"),
        "{}",
        row("monitorexit")
    );
    assert!(row("monitorexit").contains("| 12..15 |"), "{}", row("monitorexit"));
    assert!(row("imul").starts_with("| imul | 19 | 19 | 19 |"), "{}", row("imul"));
    // A bytecode the microcode does not implement costs the Java dispatch
    // (b: the routine's load) and keeps its routine parameter.
    assert!(
        row("idiv").starts_with("| idiv | 6 + max(0, b - 1) |"),
        "{}",
        row("idiv")
    );
    assert!(row("idiv").contains("Java routine impl_idiv"), "{}", row("idiv"));
    assert!(
        row("jopsys_memcpy").contains("not derived: a loop whose trip count depends on the bytecode's data"),
        "{}",
        row("jopsys_memcpy")
    );
    assert!(err.contains("bytecodes derived from the microcode;"), "{err}");
    assert!(err.contains("1 not derived (jopsys_memcpy)"), "{err}");

    // The derived model is a model: table prints its cycles.
    let o = jopcal().arg("table").arg("--model").arg(&out).output().unwrap();
    let (csv, err) = text(&o);
    assert!(o.status.success(), "{err}");
    assert!(csv.lines().any(|l| l == "iaload,9,9,microcode"), "{csv}");
    assert!(csv.lines().any(|l| l == "monitorexit,15,15,microcode"), "{csv}");

    // Derived at other wait states, the table keeps them: loaded anywhere it
    // prices its formulas at r=2, w=3 (iaload 6 + 3r = 12), not at the base's.
    let slower = dir.path().join("derived-r2.toml");
    let o = jopcal()
        .current_dir(repo())
        .arg("table")
        .arg("--microcode")
        .arg(&asm)
        .args(["--param", "r=2", "--param", "w=3", "--out"])
        .arg(&slower)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", text(&o).1);
    let o = jopcal().arg("table").arg("--model").arg(&slower).output().unwrap();
    let (csv, err) = text(&o);
    assert!(o.status.success(), "{err}");
    assert!(csv.lines().any(|l| l == "iaload,12,12,microcode"), "{csv}");

    // Bad microcode: one line naming file and line; the earlier model stays.
    let before = fs::read_to_string(&out).unwrap();
    let bad = dir.path().join("bad.asm");
    fs::write(&bad, "iaload:\n stald\n frobnicate\n").unwrap();
    let o = jopcal()
        .current_dir(repo())
        .arg("table")
        .arg("--microcode")
        .arg(&bad)
        .arg("--out")
        .arg(&out)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(1));
    assert_eq!(
        text(&o).1.trim(),
        format!(
            "jopcal: error: {}:3: unknown microinstruction 'frobnicate'",
            bad.display()
        )
    );
    assert_eq!(fs::read_to_string(&out).unwrap(), before);
}

#[test]
fn validate_starts_from_a_table_derived_from_microcode() {
    let dir = tempfile::tempdir().unwrap();
    let asm = dir.path().join("own.asm");
    fs::write(&asm, OWN_MICROCODE).unwrap();
    let out = dir.path().join("v");
    let o = jopcal()
        .current_dir(repo())
        .arg("validate")
        .arg("--microcode")
        .arg(&asm)
        .arg("--out")
        .arg(&out)
        .output()
        .unwrap();
    let (stdout, err) = text(&o);
    assert!(o.status.success(), "{stdout}{err}");
    let all = format!("{stdout}{err}");
    // Its four bytecodes, and through sys_noim every bytecode the tree's table runs in Java.
    assert!(
        all.contains(&format!(
            "validate starting table: 97 bytecodes timed from the microcode {}",
            asm.display()
        )),
        "{all}"
    );
    let table = out.join("microcode-model.toml");
    let m = jopcal_timing::TimingModel::load(&table).unwrap();
    assert_eq!(m.name, "jop-devel+microcode");
    let est: serde_json::Value = serde_json::from_slice(&fs::read(out.join("estimates.json")).unwrap()).unwrap();
    assert_eq!(est["model_file"], table.display().to_string());

    // A microcode that does not read fails before anything is measured.
    let bad = dir.path().join("bad.asm");
    fs::write(&bad, "#ifdef X\n").unwrap();
    let o = jopcal()
        .current_dir(repo())
        .arg("validate")
        .arg("--microcode")
        .arg(&bad)
        .arg("--out")
        .arg(dir.path().join("w"))
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(1));
    assert_eq!(
        text(&o).1.trim(),
        format!("jopcal: error: {}:1: #ifdef without #endif", bad.display())
    );
    assert!(!dir.path().join("w").exists());
}

/// The two-call example profile (hand-checked in the estimator's tests), as a file.
fn two_call_profile(dir: &Path) {
    let p = jopcal_profile::examples::two_calls();
    fs::write(dir.join("T.jopprof"), jopcal_profile::encode(&p)).unwrap();
}

#[test]
fn estimate_computes_hand_checked_cycles_and_rejects_bad_input() {
    let dir = tempfile::tempdir().unwrap();
    let profiles = dir.path().join("profiles");
    fs::create_dir(&profiles).unwrap();
    two_call_profile(&profiles);
    let out = dir.path().join("est.csv");
    let o = jopcal()
        .current_dir(repo())
        .args(["estimate", "--param", "r=1", "--param", "w=2", "--profiles"])
        .arg(&profiles)
        .arg("--out")
        .arg(&out)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", text(&o).1);
    let csv = fs::read_to_string(&out).unwrap();
    let cycles: Vec<(String, String)> = csv
        .lines()
        .skip(1)
        .map(|l| {
            let f: Vec<&str> = l.split(',').collect();
            (f[2].to_string(), f[3].to_string())
        })
        .collect();
    assert_eq!(
        cycles,
        vec![
            ("hit".into(), "197".into()),
            ("miss".into(), "287".into()),
            ("fifo:1024:16".into(), "234".into())
        ]
    );
    let json = fs::read_to_string(dir.path().join("est.json")).unwrap();
    assert!(json.contains("\"context\": \"T.run > T.f@3\""), "{json}");

    let run = |args: &[&str]| {
        let o = jopcal()
            .current_dir(repo())
            .args(["estimate", "--profiles"])
            .arg(&profiles)
            .args(args)
            .arg("--out")
            .arg(&out)
            .output()
            .unwrap();
        (o.status.code(), text(&o).1.trim().to_string())
    };
    assert_eq!(
        run(&["--cache", "lru"]),
        (
            Some(1),
            "jopcal: error: cache mode 'lru' is not hit, miss or fifo:<bytes>:<blocks>".into()
        )
    );
    assert_eq!(run(&["--param", "x=1"]).0, Some(1));
    assert_eq!(
        run(&["--param", "r=-5"]),
        (
            Some(1),
            "jopcal: error: parameter r=-5: a cost or a wait state count cannot be negative; give 0 or more".into()
        )
    );
    // A good run never overwrites an earlier estimates file.
    let (code, err) = run(&[]);
    assert_eq!(code, Some(1));
    assert!(
        err.contains("est.csv: the file exists already; name a new file"),
        "{err}"
    );
    let mut bytes = fs::read(profiles.join("T.jopprof")).unwrap();
    bytes.truncate(bytes.len() - 2);
    fs::write(profiles.join("T.jopprof"), &bytes).unwrap();
    let (code, err) = run(&[]);
    assert_eq!(code, Some(1));
    assert!(
        err.starts_with(&format!(
            "jopcal: error: --profiles {}: {}: byte ",
            profiles.display(),
            profiles.join("T.jopprof").display()
        )),
        "{err}"
    );
    // The earlier estimates file is untouched by the failed runs.
    assert_eq!(fs::read_to_string(&out).unwrap(), csv);
}

#[test]
fn estimate_uses_method_sizes_from_the_jop_image() {
    let dir = tempfile::tempdir().unwrap();
    let prof = dir.path().join("p");
    fs::create_dir_all(&prof).unwrap();
    two_call_profile(&prof);
    // A small image: run() at word 2 (5 words), f() at word 7 (10 words), method table at 17.
    let mut words = [0u32; 21];
    words[17] = (2 << 10) | 5;
    words[18] = 30 << 10;
    words[19] = (7 << 10) | 10;
    words[20] = 30 << 10;
    words[0] = words.len() as u32;
    let image = dir.path().join("t.jop");
    let numbers: Vec<String> = words.iter().map(u32::to_string).collect();
    fs::write(&image, numbers.join(",\n")).unwrap();
    let map = dir.path().join("t.jop.link.txt");
    fs::write(&map, "class t/T 17 30\nbytecode t/T.run(I)I 2\nbytecode t/T.f(I)I 7\n").unwrap();
    let out = dir.path().join("e.csv");
    let o = jopcal()
        .current_dir(repo())
        .args(["estimate", "--profiles"])
        .arg(&prof)
        .args(["--cache", "miss", "--jop-image"])
        .arg(&image)
        .arg("--link-map")
        .arg(&map)
        .arg("--out")
        .arg(&out)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", text(&o).1);
    assert!(text(&o).1.contains("method sizes of 2 methods"), "{}", text(&o).1);
    assert!(
        text(&o)
            .1
            .contains("t.T.f(I)I is 33 words on the host, 10 in the JOP image"),
        "{}",
        text(&o).1
    );
    let csv = fs::read_to_string(&out).unwrap();
    let got: f64 = csv.lines().nth(1).unwrap().split(',').nth(3).unwrap().parse().unwrap();
    // The same as a profile whose f() is 40 bytes long.
    let model = jopcal_timing::TimingModel::load(&repo().join("calibration/jop-wcet.toml")).unwrap();
    let mut p = jopcal_profile::examples::two_calls();
    p.methods[1].bytecode_len = 40;
    let want = jopcal_timing::estimate::estimate(&p, &model, jopcal_timing::cache::CacheMode::Miss).cycles;
    assert_eq!(got, want);
    // The same from a directory of images, one per benchmark, as `run` keeps them.
    let images = dir.path().join("images");
    fs::create_dir_all(&images).unwrap();
    fs::copy(&image, images.join("T.jop")).unwrap();
    fs::copy(&map, images.join("T.jop.link.txt")).unwrap();
    let out2 = dir.path().join("e2.csv");
    let o = jopcal()
        .current_dir(repo())
        .args(["estimate", "--profiles"])
        .arg(&prof)
        .args(["--cache", "miss", "--images"])
        .arg(&images)
        .arg("--out")
        .arg(&out2)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", text(&o).1);
    assert_eq!(fs::read_to_string(&out2).unwrap(), csv);
    // A malformed link map names its line and column.
    fs::write(&map, "class t/T 17 30\nbytecode t/T.f(I)I seven\n").unwrap();
    let o = jopcal()
        .current_dir(repo())
        .args(["estimate", "--profiles"])
        .arg(&prof)
        .arg("--jop-image")
        .arg(&image)
        .arg("--link-map")
        .arg(&map)
        .arg("--out")
        .arg(&out)
        .output()
        .unwrap();
    assert_eq!(
        text(&o).1.trim(),
        format!(
            "jopcal: error: {}:2:20: expected the method's address (a decimal address)",
            map.display()
        )
    );
}

/// Inputs a new user tries in the first hour: each is one line that names
/// the file, column or parameter and what to do, before any work starts.
#[test]
fn first_hour_mistakes_are_named_with_their_fix() {
    let dir = tempfile::tempdir().unwrap();
    let err = |args: &[&str]| {
        let o = jopcal().current_dir(dir.path()).args(args).output().unwrap();
        assert_eq!(o.status.code(), Some(1), "{args:?} succeeded");
        let e = text(&o).1;
        assert_eq!(e.trim().lines().count(), 1, "{args:?}: {e}");
        e.trim().to_string()
    };
    fs::write(dir.path().join("afile"), "").unwrap();
    assert!(err(&["run", "--out", "afile/x"]).contains("is a file, not a directory: choose another output directory"));
    assert!(err(&["run", "--out", "/proc/nope/x"]).contains("--out /proc/nope/x: cannot create a directory in /proc"));
    assert!(!dir.path().join("out").exists(), "no directory left behind");
    assert_eq!(
        err(&["run", "--target", "emu", "--runs", "2"]),
        "jopcal: error: --runs 2 applies to --target host only: a JOP target counts cycles, and the same image gives the same count (run the command again to repeat a board measurement)"
    );
    assert!(err(&["run", "--emu-param", "r=-5"])
        .ends_with("parameter r=-5: a cost or a wait state count cannot be negative; give 0 or more"));
    assert!(
        err(&["--jop-home", "/nonexistent", "run", "--suite", "jembench"]).contains("/nonexistent: no such directory")
    );
    assert!(
        err(&["upload", "--port", "/dev/null", "x.jop"]).contains("x.jop"),
        "the image is read first"
    );
    let image = dir.path().join("i.jop");
    fs::write(&image, jopcal_link::JopImage::bootable(&[7]).to_text()).unwrap();
    assert!(err(&["upload", "--port", "/dev/null", image.to_str().unwrap()])
        .contains("cannot open /dev/null: not a serial port or pseudo-terminal (Not a typewriter); name the board's serial device"));
    // Header-only files say so, not "no benchmark in common".
    let m = dir.path().join("m.csv");
    fs::write(
        &m,
        "target,target_config,benchmark,iterations,cycles,unit,run,timestamp,tool_version,suite_hash,log\n",
    )
    .unwrap();
    let e = dir.path().join("e.csv");
    fs::write(&e, "benchmark,model,cache_mode,cycles,bytecodes\nA,m,hit,5,1\n").unwrap();
    assert!(err(&[
        "reconcile",
        "--measured",
        m.to_str().unwrap(),
        "--estimates",
        e.to_str().unwrap()
    ])
    .contains("m.csv: no measurement rows, only the header: measure first"));
}

#[test]
fn validate_takes_bench_like_run() {
    let dir = tempfile::tempdir().unwrap();
    let o = jopcal()
        .current_dir(repo())
        .args(["validate", "--bench", "Fib", "--bench", "Sieve", "--out"])
        .arg(dir.path().join("v"))
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", text(&o).1);
    let summary: serde_json::Value =
        serde_json::from_str(&fs::read_to_string(dir.path().join("v/summary.json")).unwrap()).unwrap();
    let names: Vec<&str> = summary["benchmarks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| b["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["Fib", "Sieve"], "in the order named");
    assert_eq!(summary["complete"], true);
}

/// `--profiler auto` (the default): a workload the target ran in fewer than
/// 20 M cycles by the single-step agent, one not measured (`profile` alone)
/// by the instrumenting profiler; each profile line says which.
#[test]
fn auto_takes_the_profiler_by_the_measured_length() {
    let dir = tempfile::tempdir().unwrap();
    // Runs `verb` on Fib and expects its profile line to name `profiler`.
    let profiled_by = |verb: &str, profiler: &str| {
        let o = jopcal()
            .current_dir(repo())
            .args([verb, "--bench", "Fib", "--out"])
            .arg(dir.path().join(verb))
            .output()
            .unwrap();
        let err = text(&o).1;
        assert!(o.status.success(), "{err}");
        assert!(
            err.lines()
                .any(|l| l.contains("profile Fib:") && l.contains(&format!(" ({profiler})"))),
            "{err}"
        );
    };
    profiled_by("validate", "step");
    profiled_by("profile", "instrument");
}

/// SIGINT or SIGTERM mid-run: exit 130, `summary.json` says the run is
/// incomplete and where it stopped, the scratch images are gone, and one
/// line says what is kept.
#[test]
fn an_interrupted_validate_says_what_it_kept() {
    let dir = tempfile::tempdir().unwrap();
    for signal in ["-INT", "-TERM"] {
        let out = dir.path().join(format!("v{signal}"));
        let child = jopcal()
            .current_dir(repo())
            .args(["validate", "--out"])
            .arg(&out)
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        // Wait for the run to be under way: its measurements are written.
        let start = std::time::Instant::now();
        while !out.join("measurements.csv").exists() && start.elapsed().as_secs() < 120 {
            std::thread::sleep(std::time::Duration::from_millis(50));
        }
        let kill = std::process::Command::new("kill")
            .arg(signal)
            .arg(child.id().to_string())
            .status()
            .unwrap();
        assert!(kill.success());
        let o = child.wait_with_output().unwrap();
        let err = text(&o).1;
        if o.status.success() {
            // The run ended before the signal came: nothing to check.
            continue;
        }
        assert_eq!(o.status.code(), Some(130), "{err}");
        let last = err.lines().last().unwrap();
        assert!(last.starts_with("jopcal: interrupted during "), "{last}");
        assert!(last.contains("says complete: false"), "{last}");
        let summary = fs::read_to_string(out.join("summary.json")).unwrap();
        assert!(summary.contains("\"complete\": false"), "{summary}");
        assert!(summary.contains("\"status\": \"interrupted\""), "{summary}");
        let stray: Vec<_> = fs::read_dir(dir.path())
            .unwrap()
            .flatten()
            .filter(|e| e.file_name().to_string_lossy().starts_with(".jopcal-images-"))
            .collect();
        assert!(stray.is_empty(), "scratch left behind");
    }
}

/// A reader that goes away ends jopcal quietly, as it ends any Unix tool.
#[test]
fn a_closed_pipe_ends_jopcal_quietly() {
    let o = std::process::Command::new("bash")
        .arg("-c")
        .arg(format!(
            "{{ sleep 0.5; '{}' table; }} | true; echo \"status ${{PIPESTATUS[0]}}\"",
            env!("CARGO_BIN_EXE_jopcal")
        ))
        .current_dir(repo())
        .output()
        .unwrap();
    let (out, err) = text(&o);
    assert!(!err.contains("panicked"), "{err}");
    assert_eq!(out.trim(), "status 141", "{err}");
    assert!(err.is_empty(), "{err}");
}

/// A directory of the user's own (no earlier jopcal run in it) is never
/// written into: `validate`, `run` and `profile` refuse it, naming what is
/// there, before any work; its files stay as they were.
#[test]
fn a_directory_of_the_users_own_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let mine = dir.path().join("paper");
    fs::create_dir(&mine).unwrap();
    for f in ["accuracy.md", "measurements.csv", "estimates.csv"] {
        fs::write(mine.join(f), "mine").unwrap();
    }
    for verb in ["validate", "run", "profile"] {
        let o = jopcal()
            .current_dir(repo())
            .arg(verb)
            .arg("--out")
            .arg(&mine)
            .output()
            .unwrap();
        let err = text(&o).1;
        assert_eq!(o.status.code(), Some(1), "{verb:?}: {err}");
        assert_eq!(err.trim().lines().count(), 1, "{verb:?}: {err}");
        assert!(
            err.contains("holds files no jopcal run wrote (accuracy.md, estimates.csv, measurements.csv)"),
            "{verb:?}: {err}"
        );
    }
    for f in ["accuracy.md", "measurements.csv", "estimates.csv"] {
        assert_eq!(fs::read_to_string(mine.join(f)).unwrap(), "mine");
    }
    assert_eq!(fs::read_dir(&mine).unwrap().count(), 3, "nothing added");
}

/// The virtual board is deterministic: a program that ends wrong on it (a
/// malformed result line) is not run again, where a board's would be; what
/// a busy host causes (a silence, a failed download) is (the soak bench
/// `emu_stress` runs 1,000 downloads under load).
#[test]
fn the_virtual_board_does_not_retry_a_program_that_ends_wrong() {
    let dir = tempfile::tempdir().unwrap();
    let fw = bad_firmware(dir.path());
    let out = dir.path().join("out");
    let o = jopcal()
        .env("JOPCAL_CACHE", dir.path().join("cache"))
        .arg("--firmware")
        .arg(&fw)
        .args(["run", "--target", "emu", "--bench", "Malformed", "--out"])
        .arg(&out)
        .output()
        .unwrap();
    let err = text(&o).1;
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(err.contains("Malformed attempt 1: output line"), "{err}");
    assert!(!err.contains("attempt 2"), "{err}");
    assert!(out.join("logs/Malformed-attempt1.log").is_file());
    assert!(!out.join("logs/Malformed-attempt2.log").exists());
}
