//! The virtual board is the processor: on a real JOP tree (`$JOPCAL_JOP_HOME`,
//! with the `jopcal.toml` of `$JOPCAL_TREE_CONFIG` for its toolchain),
//! generated programs (`common::programs`: monitors, exceptions, garbage
//! collection, long and floating-point arithmetic, switches, interface
//! calls, printing, recursion to and past the stack's limit) are built by
//! the tree's toolchain and each run on the tree's RTL (`sim build
//! --preload`) and on the virtual board, compared bytecode by bytecode by
//! `jopcal diff`: the same cycles for every bytecode, the same output, the
//! same end (a stack overflow in the same bytecode). `$JOPCAL_GENERATED`
//! sets how many (default 100); `$JOPCAL_GENERATED_GENERICS` (e.g.
//! `ram_cnt=1 jpc_width=11`) builds the RTL with those generics of its top,
//! and the virtual board is that bench's processor. Ignored without a tree
//! (`scripts/test` includes it when `JOPCAL_JOP_HOME` is set).

mod common;

use common::{jopcal_in, programs, repo, text};
use std::path::{Path, PathBuf};

#[test]
fn generated_programs_compile_as_the_trees_compiler_compiles() {
    // Java 1.5 with ecj, as a JOP tree's build (scripts/setup installs it).
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("jopcalgen");
    std::fs::create_dir_all(&dir).unwrap();
    let mut files = Vec::new();
    for k in 0..100u64 {
        let class = format!("G{k}");
        let f = dir.join(format!("{class}.java"));
        std::fs::write(&f, programs::source(&class, 1000 + k, k % 10 == 9)).unwrap();
        files.push(f);
    }
    let o = std::process::Command::new("ecj")
        .args(["-source", "1.5", "-target", "1.5", "-nowarn", "-proceedOnError", "-d"])
        .arg(tmp.path().join("classes"))
        .args(&files)
        .output()
        .expect("ecj (scripts/setup installs it)");
    let (out, err) = text(&o);
    assert!(o.status.success(), "{out}{err}");
}

#[test]
#[ignore = "needs a JOP tree: set JOPCAL_JOP_HOME and JOPCAL_TREE_CONFIG (docs/notes/jop-tree.md)"]
fn generated_programs_run_alike_on_the_rtl_and_the_virtual_board() {
    let _tree = one_at_a_time();
    let (tree, config) = (common::tree(), common::tree_config());
    let count: u64 = std::env::var("JOPCAL_GENERATED")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(100);
    let sim = rtl_bench(&tree, &config);
    let programs: Vec<(String, String)> = (0..count)
        .map(|k| {
            let class = format!("G{k}");
            // Every tenth recurses past the stack's limit.
            let source = programs::source(&class, 1000 + k, k % 10 == 9);
            (class, source)
        })
        .collect();
    let built = build_images(&tree, &config, "generated", &programs);
    let mut failures = Vec::new();
    let (mut same, mut overflowed) = (0, 0);
    for (name, ok, out) in diff_each(&tree, &config, &sim, built) {
        if ok && out.contains("the same: every bytecode took the same cycles") {
            same += 1;
            if out.contains("the stack overflowed in") {
                overflowed += 1;
            }
        } else {
            failures.push(format!("{name}:\n{out}"));
        }
    }
    eprintln!(
        "{same} of {count} generated programs the same on the RTL and the virtual board ({overflowed} of them ending in the same stack overflow)"
    );
    assert!(
        failures.is_empty(),
        "{} differ:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

#[test]
#[ignore = "needs a JOP tree: set JOPCAL_JOP_HOME and JOPCAL_TREE_CONFIG (docs/notes/jop-tree.md)"]
fn the_memory_interfaces_own_cases_take_its_cycles_on_the_virtual_board() {
    let _tree = one_at_a_time();
    let (tree, config) = (common::tree(), common::tree_config());
    let sim = rtl_bench(&tree, &config);
    let cases = programs::memory_interface_cases();
    let programs: Vec<(String, String)> = cases.iter().map(|(c, _, s)| (c.clone(), s.clone())).collect();
    let built = build_images(&tree, &config, "exceptions", &programs);
    let mut failures = Vec::new();
    for (name, ok, out) in diff_each(&tree, &config, &sim, built) {
        let op = cases.iter().find(|(c, _, _)| *c == name).map_or("", |(_, op, _)| *op);
        // Every bytecode's cycles, the stack words it leaves and the output
        // alike, to the end: the exception paths included.
        let whole = ok && out.contains("the same: every bytecode took the same cycles");
        if !whole {
            failures.push(format!("{name} ({op}):\n{out}"));
        }
    }
    assert!(
        failures.is_empty(),
        "{} differ:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

/// The tree's build and its bench serve one test at a time: the tree's
/// `make java_app` starts by deleting its `dist/`, and `sim build` rewrites
/// the bench it checks.
fn one_at_a_time() -> std::sync::MutexGuard<'static, ()> {
    static TREE: std::sync::Mutex<()> = std::sync::Mutex::new(());
    TREE.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// The preloading bench of the tree's RTL, kept between runs (its build is
/// cached by its inputs), with the top's generics `$JOPCAL_GENERATED_GENERICS` names.
fn rtl_bench(tree: &Path, config: &Path) -> PathBuf {
    let generics: Vec<String> = std::env::var("JOPCAL_GENERATED_GENERICS")
        .unwrap_or_default()
        .split_whitespace()
        .map(str::to_string)
        .collect();
    let sim = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("tree-rtl-preload{}", generics.concat()));
    let mut build = vec!["sim", "build", "--preload", "--out", sim.to_str().unwrap()];
    for g in &generics {
        build.extend(["--generic", g.as_str()]);
    }
    let (ok, _, err) = jopcal_in(config, tree, &build);
    assert!(ok, "sim build: {err}");
    sim
}

/// `programs` (class in package `jopcalgen`, source) built into images by
/// the tree's toolchain, kept in the target directory under `dir` for a look
/// after a failure (`jopcal diff IMAGE --sim ... --keep DIR`).
fn build_images(tree: &Path, config: &Path, dir: &str, programs: &[(String, String)]) -> Vec<(String, PathBuf)> {
    let tmp = tempfile::tempdir().unwrap();
    let kept = Path::new(env!("CARGO_TARGET_TMPDIR")).join(dir);
    let _ = std::fs::remove_dir_all(&kept);
    let gen = kept.join("gen");
    let sources: Vec<(String, String)> = programs
        .iter()
        .map(|(class, source)| (format!("jopcalgen/{class}.java"), source.clone()))
        .collect();
    let workloads: Vec<jopcal_workloads::WorkloadSpec> = programs
        .iter()
        .map(|(class, _)| jopcal_workloads::WorkloadSpec {
            name: class.clone(),
            main: format!("jopcalgen.{class}"),
            kind: "generated".into(),
        })
        .collect();
    jopcal_workloads::suite::write_generated(
        &gen,
        &repo().join("jop-firmware"),
        "Programs generated for `jopcal diff` by the tree tests.",
        &jopcal_workloads::suite::CompileWith::default(),
        &workloads,
        &sources,
    )
    .unwrap();
    let suite = jopcal_workloads::Suite::load(&gen).unwrap();
    let cfg = jopcal_tree::config::JopConfig::find(config)
        .unwrap()
        .expect("a jopcal.toml in JOPCAL_TREE_CONFIG");
    let toolchain =
        jopcal_targets::toolchain::Toolchain::new(cfg, tree.to_path_buf(), "the generated programs").unwrap();
    let images = kept.join("images");
    workloads
        .iter()
        .map(|w| {
            let keep = images.join(format!("{}.jop", w.name));
            let image = toolchain
                .build_image(
                    &suite,
                    w,
                    &tmp.path().join("build"),
                    &keep,
                    std::time::Duration::from_secs(300),
                )
                .unwrap_or_else(|e| panic!("{}: {e}", w.name))
                .0;
            (w.name.clone(), image)
        })
        .collect()
}

/// `jopcal diff` of each image against the bench `sim`, two at a time:
/// `(name, exit status 0, its output)`.
fn diff_each(tree: &Path, config: &Path, sim: &Path, images: Vec<(String, PathBuf)>) -> Vec<(String, bool, String)> {
    let work = std::sync::Mutex::new(images.into_iter());
    let results = std::sync::Mutex::new(Vec::new());
    std::thread::scope(|s| {
        for _ in 0..2 {
            s.spawn(|| loop {
                let Some((name, image)) = work.lock().unwrap().next() else {
                    break;
                };
                let (ok, out, err) = jopcal_in(
                    config,
                    tree,
                    &["diff", image.to_str().unwrap(), "--sim", sim.to_str().unwrap()],
                );
                results.lock().unwrap().push((name, ok, format!("{out}{err}")));
            });
        }
    });
    let mut results = results.into_inner().unwrap();
    results.sort();
    results
}
