//! Where things are: the suite's firmware directory, the build cache, and the
//! default output directory of a verb.

use anyhow::{bail, Result};
use std::path::{Path, PathBuf};

/// Locates the firmware directory: `--firmware`, `$JOPCAL_FIRMWARE`, a
/// `jop-firmware/suite.toml` found from the current directory upwards, or the
/// checkout this binary was built from.
pub fn firmware_dir(explicit: Option<&Path>) -> Result<PathBuf> {
    let manifest = jopcal_workloads::suite::MANIFEST;
    if let Some(dir) = explicit
        .map(Path::to_path_buf)
        .or_else(|| std::env::var_os("JOPCAL_FIRMWARE").map(PathBuf::from))
    {
        if !dir.join(manifest).is_file() {
            bail!(
                "{}: no {manifest} in this directory (not a jopcal firmware/suite directory)",
                dir.display()
            );
        }
        return Ok(dir);
    }
    let cwd = std::env::current_dir()?;
    for dir in cwd.ancestors() {
        let candidate = dir.join("jop-firmware");
        if candidate.join(manifest).is_file() {
            return Ok(candidate);
        }
    }
    let built_from = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../jop-firmware");
    if built_from.join(manifest).is_file() {
        return Ok(built_from.canonicalize().unwrap_or(built_from));
    }
    bail!(
        "cannot find the built-in suite (jop-firmware/{manifest}): run from the jopcal checkout or pass --firmware DIR"
    )
}

/// The build cache: `$JOPCAL_CACHE`, else `target/jopcal-cache` beside the
/// firmware directory, or of the checkout when the firmware directory has no
/// `target/` beside it (a generated micro-benchmark suite).
pub fn cache_dir(firmware: &Path) -> PathBuf {
    if let Some(c) = std::env::var_os("JOPCAL_CACHE") {
        return PathBuf::from(c);
    }
    let root = firmware.parent().unwrap_or(Path::new("."));
    let beside = root.join("target");
    let checkout = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../target");
    if !beside.is_dir() && checkout.is_dir() {
        return checkout.join("jopcal-cache");
    }
    beside.join("jopcal-cache")
}

/// `--out` if given, else `out/<verb>-<stamp>` (a new directory per run).
pub fn out_dir(explicit: Option<&Path>, verb: &str, stamp: &str) -> PathBuf {
    explicit
        .map(Path::to_path_buf)
        .unwrap_or_else(|| PathBuf::from("out").join(format!("{verb}-{stamp}")))
}

/// `--model` if given, else `calibration/jop-wcet.toml` beside the firmware directory.
pub fn model_path(explicit: Option<&Path>, firmware: Option<&Path>) -> Result<PathBuf> {
    if let Some(p) = explicit {
        return Ok(p.to_path_buf());
    }
    let p = calibration_file(firmware, "jop-wcet.toml")?;
    if !p.is_file() {
        bail!("{}: default timing model not found; pass --model FILE", p.display());
    }
    Ok(p)
}

/// The profiler agent library: `$JOPCAL_AGENT`, else `libjopcal_agent.so` next
/// to this executable or in its `deps/` (where cargo leaves it when it builds
/// the CLI).
pub fn agent_path() -> Result<PathBuf> {
    use jopcal_workloads::profile::AGENT_FILE;
    if let Some(p) = std::env::var_os("JOPCAL_AGENT").map(PathBuf::from) {
        if !p.is_file() {
            bail!("JOPCAL_AGENT={}: no such file", p.display());
        }
        return Ok(p);
    }
    let exe = std::env::current_exe()?;
    let dir = exe.parent().unwrap_or(Path::new("."));
    // cargo refreshes deps/ whenever it builds the CLI, and the copy beside
    // the executable only when the agent is built by name: take the newer.
    let newest = [dir.join(AGENT_FILE), dir.join("deps").join(AGENT_FILE)]
        .into_iter()
        .filter_map(|p| Some((std::fs::metadata(&p).ok()?.modified().ok()?, p)))
        .max();
    if let Some((_, p)) = newest {
        return Ok(p);
    }
    bail!(
        "the profiler agent {AGENT_FILE} is not next to {} nor in its deps/: build it with `cargo build --release -p jopcal-agent`, or set JOPCAL_AGENT",
        exe.display()
    )
}

/// `--emu-config` if given, else `calibration/emu-board.toml` beside the firmware directory.
pub fn emu_config_path(explicit: Option<&Path>, firmware: Option<&Path>) -> Result<PathBuf> {
    if let Some(p) = explicit {
        return Ok(p.to_path_buf());
    }
    let p = calibration_file(firmware, "emu-board.toml")?;
    if !p.is_file() {
        bail!(
            "{}: the virtual board's configuration was not found; pass --emu-config FILE",
            p.display()
        );
    }
    Ok(p)
}

/// `calibration/reference/` (published measurements) of this checkout, if it is there.
pub fn reference_dir() -> Option<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../calibration/reference");
    dir.is_dir().then(|| dir.canonicalize().unwrap_or(dir))
}

/// `calibration/<name>` beside the firmware directory, else of this checkout
/// (for a generated workload directory such as the micro-benchmarks).
fn calibration_file(firmware: Option<&Path>, name: &str) -> Result<PathBuf> {
    let fw = firmware_dir(firmware)?;
    let beside = fw.parent().unwrap_or(Path::new(".")).join("calibration").join(name);
    if beside.is_file() {
        return Ok(beside);
    }
    let checkout = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../calibration")
        .join(name);
    if checkout.is_file() {
        return Ok(checkout.canonicalize().unwrap_or(checkout));
    }
    Ok(beside)
}

/// The JOP tree: `--jop-home`, `$JOPCAL_JOP_HOME`, or `[jop] home` of a
/// `jopcal.toml` found from the current directory upwards (relative to that file).
pub fn jop_home(explicit: Option<&Path>) -> Result<PathBuf> {
    if let Some(p) = explicit
        .map(Path::to_path_buf)
        .or_else(|| std::env::var_os("JOPCAL_JOP_HOME").map(PathBuf::from))
    {
        return Ok(p);
    }
    match jop_config()?.and_then(|c| c.home) {
        Some(h) => Ok(h),
        None => bail!(
            "this needs the JOP tree: pass --jop-home DIR, set JOPCAL_JOP_HOME, or write [jop] home = \"...\" in jopcal.toml"
        ),
    }
}

/// The project's `jopcal.toml`, found from the current directory upwards.
pub fn jop_config() -> Result<Option<jopcal_jop::config::JopConfig>> {
    jopcal_jop::config::JopConfig::find(&std::env::current_dir()?).map_err(|e| anyhow::anyhow!(e))
}

/// The workload directory of `--suite NAME`: the built-in suite's firmware
/// directory for `builtin`; for `jembench` and `jbe`, a directory generated
/// from the JOP tree's fixed-count harnesses (see `jopcal_jop::tree`), kept in
/// the build cache under a name derived from its content.
pub fn suite_dir(firmware: Option<&Path>, home: Option<&Path>, suite: &str) -> Result<PathBuf> {
    use jopcal_jop::tree::{generate_suite, JopTree, TreeSuite};
    let fw = firmware_dir(firmware)?;
    if suite == "builtin" {
        return Ok(fw);
    }
    let Some(tree_suite) = TreeSuite::from_name(suite) else {
        bail!("unknown suite `{suite}`: the suites are: builtin, jembench, jbe");
    };
    let home = jop_home(home)?;
    let tree = JopTree::open(&home).map_err(|e| anyhow::anyhow!(e))?;
    let selected = tree.select(tree_suite, &[]).map_err(|e| anyhow::anyhow!(e))?;
    // Generated into a private directory, then published under a name that
    // is a hash of its content: a concurrent run never sees a half-written
    // suite, and an unchanged tree reuses the same directory.
    let base = cache_dir(&fw).join("tree-suites");
    let tmp = base.join(format!(".generating-{}", std::process::id()));
    if tmp.exists() {
        std::fs::remove_dir_all(&tmp).map_err(|e| anyhow::anyhow!("{}: {e}", tmp.display()))?;
    }
    let g = generate_suite(tree_suite, &selected, &fw, &tmp).map_err(|e| {
        let _ = std::fs::remove_dir_all(&tmp);
        anyhow::anyhow!(e)
    })?;
    let digest = content_hash(&tmp)?;
    let dir = base.join(format!("{suite}-{}", &digest[..16]));
    if dir.join(jopcal_workloads::suite::MANIFEST).is_file() {
        let _ = std::fs::remove_dir_all(&tmp);
    } else {
        if dir.exists() {
            std::fs::remove_dir_all(&dir).map_err(|e| anyhow::anyhow!("{}: {e}", dir.display()))?;
        }
        if let Err(e) = std::fs::rename(&tmp, &dir) {
            // Another run published the same content first.
            let _ = std::fs::remove_dir_all(&tmp);
            if !dir.join(jopcal_workloads::suite::MANIFEST).is_file() {
                bail!("publishing {}: {e}", dir.display());
            }
        }
    }
    for s in &g.skipped {
        eprintln!("     note: left out of the {suite} suite: {s}");
    }
    eprintln!(
        "     suite {suite}: {} harnesses of {} ({})",
        g.names.len(),
        home.display(),
        g.names.join(", ")
    );
    Ok(dir)
}

/// SHA-256 (hex) over every file below `dir`: relative path and bytes, in path order.
fn content_hash(dir: &Path) -> Result<String> {
    use sha2::{Digest, Sha256};
    fn walk(d: &Path, out: &mut Vec<PathBuf>) -> std::io::Result<()> {
        for e in std::fs::read_dir(d)? {
            let p = e?.path();
            if p.is_dir() {
                walk(&p, out)?;
            } else {
                out.push(p);
            }
        }
        Ok(())
    }
    let mut files = Vec::new();
    walk(dir, &mut files).map_err(|e| anyhow::anyhow!("{}: {e}", dir.display()))?;
    files.sort();
    let mut h = Sha256::new();
    for f in files {
        h.update(f.strip_prefix(dir).unwrap_or(&f).to_string_lossy().as_bytes());
        h.update([0]);
        h.update(std::fs::read(&f).map_err(|e| anyhow::anyhow!("{}: {e}", f.display()))?);
        h.update([0]);
    }
    Ok(h.finalize().iter().map(|b| format!("{b:02x}")).collect())
}
