//! Makes jopcal self-contained: the data it embeds (`src/share.rs`) must
//! rebuild it when it changes, and the JVMTI profiler agent, a cdylib that
//! `cargo install` would not install, is built here and embedded whole, so an
//! installed jopcal can write it out and hand it to the JVM.

use std::path::{Path, PathBuf};
use std::process::Command;

fn main() {
    let manifest = PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR"));
    let root = manifest.join("../..");
    // Directories: cargo scans them whole for changes (new files included,
    // which include_dir's own tracking would miss).
    for dir in ["jop-firmware", "calibration", "hdl-sim/bench"] {
        println!("cargo:rerun-if-changed={}", root.join(dir).display());
    }
    for krate in ["jopcal-agent", "jopcal-profiler", "jopcal-profile", "jopcal-classfile"] {
        println!("cargo:rerun-if-changed={}", manifest.join("..").join(krate).display());
    }
    println!("cargo:rerun-if-changed={}", root.join("Cargo.lock").display());
    println!("cargo:rerun-if-env-changed=JOPCAL_AGENT_PREBUILT");
    let out = PathBuf::from(std::env::var_os("OUT_DIR").expect("cargo sets OUT_DIR"));
    let agent = out.join("libjopcal_agent.so");
    let built = match std::env::var_os("JOPCAL_AGENT_PREBUILT") {
        // A packager that built the agent already can hand it over.
        Some(p) => PathBuf::from(p),
        None => build_agent(&root, &out),
    };
    std::fs::copy(&built, &agent).unwrap_or_else(|e| panic!("copying the profiler agent {}: {e}", built.display()));
    println!("cargo:rustc-env=JOPCAL_EMBEDDED_AGENT={}", agent.display());
}

/// Builds `jopcal-agent` (release) with a nested cargo in a target directory
/// of its own: the outer build holds the lock of its own target directory,
/// and the agent must be a finished cdylib before this crate compiles.
fn build_agent(root: &Path, out: &Path) -> PathBuf {
    // `<target>/<profile>/build/jopcal-<hash>/out`: keep the nested build
    // beside the profiles, so it is reused across builds of this crate.
    let target = out.ancestors().nth(4).unwrap_or(out).join("jopcal-agent-embed");
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let mut cmd = Command::new(cargo);
    cmd.arg("build")
        .arg("--release")
        .arg("--quiet")
        .args(["-p", "jopcal-agent", "--lib"])
        .arg("--manifest-path")
        .arg(root.join("Cargo.toml"))
        .arg("--target-dir")
        .arg(&target);
    if root.join("Cargo.lock").is_file() {
        cmd.arg("--locked");
    }
    // Share the outer build's job slots rather than starting as many again.
    if let Some(flags) = std::env::var_os("CARGO_MAKEFLAGS") {
        cmd.env("MAKEFLAGS", flags);
    }
    for (key, _) in std::env::vars_os() {
        let key = key.to_string_lossy().into_owned();
        if key.starts_with("CARGO_FEATURE_") || key.starts_with("CARGO_CFG_") || key == "CARGO_TARGET_DIR" {
            cmd.env_remove(&key);
        }
    }
    let status = cmd
        .status()
        .unwrap_or_else(|e| panic!("cannot start cargo to build the profiler agent: {e}"));
    assert!(
        status.success(),
        "building the profiler agent (cargo build --release -p jopcal-agent) failed: {status}"
    );
    target.join("release/libjopcal_agent.so")
}
