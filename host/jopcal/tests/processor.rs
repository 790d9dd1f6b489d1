//! The virtual board is the processor: on a real JOP tree (`$JOPCAL_JOP_HOME`,
//! with the `jopcal.toml` of `$JOPCAL_TREE_CONFIG` for its toolchain),
//! generated programs (`common::programs`: monitors, exceptions, garbage
//! collection, long and floating-point arithmetic, switches, interface
//! calls, printing, recursion to and past the stack's limit) are built by
//! the tree's toolchain and each run on the tree's RTL (`sim build
//! --preload`) and on the virtual board, compared bytecode by bytecode by
//! `jopcal diff`: the same cycles for every bytecode, the same output, the
//! same end (a stack overflow in the same bytecode). `$JOPCAL_GENERATED`
//! sets how many (default 100). Ignored without a tree (`scripts/test` includes it when
//! `JOPCAL_JOP_HOME` is set).

mod common;

use common::{jopcal_in, programs, repo, text};
use std::path::Path;

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
#[ignore = "needs a JOP tree: set JOPCAL_JOP_HOME and JOPCAL_TREE_CONFIG (docs/jop-tree.md)"]
fn generated_programs_run_alike_on_the_rtl_and_the_virtual_board() {
    let (tree, config) = (common::tree(), common::tree_config());
    let count: u64 = std::env::var("JOPCAL_GENERATED")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(100);
    // The preloading bench, kept between runs (its build is cached by its inputs).
    let sim = Path::new(env!("CARGO_TARGET_TMPDIR")).join("tree-rtl-preload");
    let (ok, _, err) = jopcal_in(
        &config,
        &tree,
        &["sim", "build", "--preload", "--out", sim.to_str().unwrap()],
    );
    assert!(ok, "sim build: {err}");

    // The programs, as a workload directory the tree's toolchain builds.
    let tmp = tempfile::tempdir().unwrap();
    let kept = Path::new(env!("CARGO_TARGET_TMPDIR")).join("generated");
    let _ = std::fs::remove_dir_all(&kept);
    let gen = kept.join("gen");
    let mut workloads = Vec::new();
    let mut sources = Vec::new();
    for k in 0..count {
        let class = format!("G{k}");
        // Every tenth recurses past the stack's limit.
        let overflow = k % 10 == 9;
        sources.push((
            format!("jopcalgen/{class}.java"),
            programs::source(&class, 1000 + k, overflow),
        ));
        workloads.push(jopcal_workloads::WorkloadSpec {
            name: class.clone(),
            main: format!("jopcalgen.{class}"),
            kind: "generated".into(),
        });
    }
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
    let cfg = jopcal_tree::config::JopConfig::find(&config)
        .unwrap()
        .expect("a jopcal.toml in JOPCAL_TREE_CONFIG");
    let toolchain = jopcal_targets::toolchain::Toolchain::new(cfg, tree.clone(), "the generated programs").unwrap();
    // Kept for a look after a failure (`jopcal diff IMAGE --sim ... --keep DIR`).
    let images = kept.join("images");
    let mut built = Vec::new();
    for w in &workloads {
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
        built.push((w.name.clone(), image));
    }

    // Each on both, two at a time.
    let work = std::sync::Mutex::new(built.into_iter());
    let failures = std::sync::Mutex::new(Vec::new());
    let (same, overflowed) = (
        std::sync::atomic::AtomicUsize::new(0),
        std::sync::atomic::AtomicUsize::new(0),
    );
    std::thread::scope(|s| {
        for _ in 0..2 {
            s.spawn(|| loop {
                let Some((name, image)) = work.lock().unwrap().next() else {
                    break;
                };
                let (ok, out, err) = jopcal_in(
                    &config,
                    &tree,
                    &["diff", image.to_str().unwrap(), "--sim", sim.to_str().unwrap()],
                );
                if ok && out.contains("the same: every bytecode took the same cycles") {
                    same.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                    if out.contains("the stack overflowed in") {
                        overflowed.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                    }
                } else {
                    failures.lock().unwrap().push(format!("{name}:\n{out}{err}"));
                }
            });
        }
    });
    let failures = failures.into_inner().unwrap();
    eprintln!(
        "{} of {count} generated programs the same on the RTL and the virtual board ({} of them ending in the same stack overflow)",
        same.into_inner(),
        overflowed.into_inner()
    );
    assert!(
        failures.is_empty(),
        "{} differ:\n{}",
        failures.len(),
        failures.join("\n")
    );
}
