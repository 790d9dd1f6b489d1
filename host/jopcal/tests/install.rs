//! jopcal as an installed tool: the executable, copied out of the checkout
//! (or installed by `cargo install`, which `scripts/test` does and names in
//! `$JOPCAL_INSTALLED_BIN`), runs `validate` and a JOP tree's suite on the
//! host from an unrelated directory, with its cache in the user's cache
//! directory, and never touches the checkout (checked with strace: every
//! open, exec, chdir and Rust's existence checks, statx).

mod common;

use common::{copy_tree, repo, text};
use std::path::{Path, PathBuf};
use std::process::Command;

/// The executable under test, placed outside the checkout: the one
/// `cargo install` made, else the one cargo built for these tests.
fn installed(root: &Path) -> PathBuf {
    let from = std::env::var_os("JOPCAL_INSTALLED_BIN")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_BIN_EXE_jopcal")));
    let bin = root.join("bin/jopcal");
    std::fs::create_dir_all(bin.parent().unwrap()).unwrap();
    std::fs::copy(&from, &bin).unwrap();
    bin
}

/// `bin ARGS` in `cwd` with a home of its own and none of jopcal's variables,
/// under `strace` recording every file operation into `trace`.
fn run_traced(bin: &Path, cwd: &Path, home: &Path, trace: &Path, args: &[&str]) -> std::process::Output {
    let mut cmd = Command::new("strace");
    // --seccomp-bpf: only the traced calls stop the process (the JVMs make many others).
    cmd.args([
        "-f",
        "--seccomp-bpf",
        "-qq",
        "-e",
        "trace=open,openat,execve,chdir,statx,access",
        "-o",
    ])
    .arg(trace)
    .arg(bin)
    .args(args)
    .current_dir(cwd)
    .env("HOME", home)
    .env_remove("XDG_CACHE_HOME")
    // cargo points the dynamic loader at its target directory for tests; a user's shell does not.
    .env_remove("LD_LIBRARY_PATH");
    for (k, _) in std::env::vars_os() {
        if k.to_string_lossy().starts_with("JOPCAL_") {
            cmd.env_remove(&k);
        }
    }
    cmd.output().expect("strace runs (scripts/setup installs it)")
}

/// The lines of a trace that name the checkout.
fn touching_checkout(trace: &Path) -> Vec<String> {
    let checkout = repo().display().to_string();
    std::fs::read_to_string(trace)
        .unwrap()
        .lines()
        .filter(|l| l.contains(&format!("\"{checkout}/")) || l.contains(&format!("\"{checkout}\"")))
        .map(str::to_string)
        .collect()
}

#[test]
fn an_installed_jopcal_runs_anywhere_without_the_checkout() {
    let tmp = tempfile::tempdir().unwrap();
    let (root, home, lab) = (tmp.path().join("root"), tmp.path().join("home"), tmp.path().join("lab"));
    std::fs::create_dir_all(&home).unwrap();
    std::fs::create_dir_all(&lab).unwrap();
    let bin = installed(&root);

    let trace = tmp.path().join("validate.trace");
    let o = run_traced(&bin, &lab, &home, &trace, &["validate", "--out", "v"]);
    let (_, err) = text(&o);
    assert!(o.status.success(), "{err}");
    let summary: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(lab.join("v/summary.json")).unwrap()).unwrap();
    assert_eq!(summary["complete"], true, "{summary}");
    assert_eq!(summary["benchmarks"].as_array().unwrap().len(), 15);
    assert_eq!(
        touching_checkout(&trace),
        Vec::<String>::new(),
        "validate opened the checkout"
    );

    // The cache is the user's: the suite's class files, jopcal's own files, the agent.
    let cache = home.join(".cache/jopcal");
    for d in ["classes", "share", "agent"] {
        assert!(cache.join(d).is_dir(), "{d} not in {}", cache.display());
    }

    // A JOP tree's suite on the host, the tree somewhere of the user's.
    let tree = tmp.path().join("jop");
    copy_tree(&repo().join("host/jopcal/tests/jop-tree"), &tree);
    let trace = tmp.path().join("tree.trace");
    let tree_arg = tree.display().to_string();
    let o = run_traced(
        &bin,
        &lab,
        &home,
        &trace,
        &[
            "--jop-home",
            &tree_arg,
            "run",
            "--suite",
            "jembench",
            "--target",
            "host",
            "--out",
            "t",
        ],
    );
    let (_, err) = text(&o);
    assert!(o.status.success(), "{err}");
    let rows = std::fs::read_to_string(lab.join("t/measurements.csv")).unwrap();
    assert_eq!(
        rows.lines().filter(|l| !l.starts_with('#')).count(),
        4,
        "a header and Bits, Insertion, Queue: {rows}"
    );
    assert_eq!(
        touching_checkout(&trace),
        Vec::<String>::new(),
        "the tree run opened the checkout"
    );
    assert!(cache.join("tree-suites").is_dir());

    // `cache` names the directory; `cache --clear` empties it.
    let cache_cmd = |args: &[&str]| {
        Command::new(&bin)
            .args(args)
            .current_dir(&lab)
            .env("HOME", &home)
            .env_remove("XDG_CACHE_HOME")
            .env_remove("JOPCAL_CACHE")
            .output()
            .unwrap()
    };
    let o = cache_cmd(&["cache"]);
    assert!(o.status.success());
    assert_eq!(text(&o).0.trim(), cache.display().to_string());
    let o = cache_cmd(&["cache", "--clear"]);
    assert!(o.status.success(), "{}", text(&o).1);
    assert!(!cache.exists());
}
