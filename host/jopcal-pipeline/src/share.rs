//! What jopcal carries inside its executable, so that an installed or copied
//! binary needs no checkout: the built-in suite and harness (`jop-firmware/`),
//! the timing tables and published references (`calibration/`), the
//! Verilator bench's sources (`hdl-sim/bench/`) and the JVMTI profiler agent.
//! On first use they are written into the cache directory under a name that is
//! a hash of their content (written aside, then renamed, so concurrent runs
//! and other versions of jopcal never see a half-written or foreign copy).

use anyhow::{Context, Result};
use include_dir::{include_dir, Dir};
use sha2::{Digest, Sha256};
use std::path::{Path, PathBuf};

static FIRMWARE: Dir<'static> = include_dir!("$CARGO_MANIFEST_DIR/../../jop-firmware");
static CALIBRATION: Dir<'static> = include_dir!("$CARGO_MANIFEST_DIR/../../calibration");
static BENCH: Dir<'static> = include_dir!("$CARGO_MANIFEST_DIR/../../hdl-sim/bench");
static AGENT: &[u8] = include_bytes!(env!("JOPCAL_EMBEDDED_AGENT"));

/// The embedded trees and where each goes below the share directory.
fn trees() -> [(&'static Dir<'static>, &'static str); 3] {
    [
        (&FIRMWARE, "jop-firmware"),
        (&CALIBRATION, "calibration"),
        (&BENCH, "hdl-sim/bench"),
    ]
}

/// Every embedded file as (path below the share directory, bytes), in path order.
fn files() -> Vec<(PathBuf, &'static [u8])> {
    fn walk(d: &'static Dir<'static>, prefix: &Path, out: &mut Vec<(PathBuf, &'static [u8])>) {
        for f in d.files() {
            out.push((prefix.join(f.path()), f.contents()));
        }
        for sub in d.dirs() {
            walk(sub, prefix, out);
        }
    }
    let mut out = Vec::new();
    for (dir, at) in trees() {
        walk(dir, Path::new(at), &mut out);
    }
    out.sort();
    out
}

pub(crate) fn hex16(h: Sha256) -> String {
    h.finalize().iter().take(8).map(|b| format!("{b:02x}")).collect()
}

/// The share directory (holding `jop-firmware/`, `calibration/`,
/// `hdl-sim/bench/`) in `cache`, written there if it is not yet.
pub fn share_dir(cache: &Path) -> Result<PathBuf> {
    let files = files();
    let mut h = Sha256::new();
    for (p, bytes) in &files {
        h.update(p.to_string_lossy().as_bytes());
        h.update([0]);
        h.update((bytes.len() as u64).to_le_bytes());
        h.update(bytes);
    }
    let dir = cache.join("share").join(hex16(h));
    publish(&dir, |tmp| {
        for (p, bytes) in &files {
            let path = tmp.join(p);
            if let Some(parent) = path.parent() {
                std::fs::create_dir_all(parent).with_context(|| format!("creating {}", parent.display()))?;
            }
            std::fs::write(&path, bytes).with_context(|| format!("writing {}", path.display()))?;
        }
        Ok(())
    })?;
    Ok(dir)
}

/// The embedded profiler agent, written into `cache` if it is not there yet.
pub fn agent(cache: &Path) -> Result<PathBuf> {
    use jopcal_workloads::profile::AGENT_FILE;
    let mut h = Sha256::new();
    h.update(AGENT);
    let dir = cache.join("agent").join(hex16(h));
    publish(&dir, |tmp| {
        let path = tmp.join(AGENT_FILE);
        std::fs::write(&path, AGENT).with_context(|| format!("writing {}", path.display()))
    })?;
    Ok(dir.join(AGENT_FILE))
}

/// Makes `dir` exist with the content `fill` writes, atomically (see
/// [`jopcal_output::cached::build_once`]).
pub(crate) fn publish(dir: &Path, fill: impl FnOnce(&Path) -> Result<()>) -> Result<()> {
    jopcal_output::cached::build_once(dir, fill)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_share_directory_holds_the_suite_tables_and_bench() {
        let cache = tempfile::tempdir().unwrap();
        let dir = share_dir(cache.path()).unwrap();
        let checkout = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
        for f in [
            "jop-firmware/suite.toml",
            "jop-firmware/src/jopcal/harness/Harness.java",
            "calibration/jop-wcet.toml",
            "calibration/emu-board.toml",
            "calibration/reference/jp2-jembench-jop.csv",
            "hdl-sim/bench/bench.cpp",
        ] {
            let got = std::fs::read(dir.join(f)).unwrap_or_else(|e| panic!("{f}: {e}"));
            assert_eq!(got, std::fs::read(checkout.join(f)).unwrap(), "{f}");
        }
        // A second call reuses the copy; the agent is a shared library.
        assert_eq!(share_dir(cache.path()).unwrap(), dir);
        let agent = agent(cache.path()).unwrap();
        assert_eq!(&std::fs::read(&agent).unwrap()[..4], b"\x7fELF");
    }
}
