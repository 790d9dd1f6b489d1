//! Where things are when the user did not say: the suite's firmware
//! directory, the default tables, the JOP tree and its `jopcal.toml`, the
//! cache, and the default output directory of a verb.

use anyhow::{bail, Result};
pub(crate) use jopcal_output::cached::content_hash;
use std::path::{Path, PathBuf};

/// Locates the firmware directory: `--firmware`, `$JOPCAL_FIRMWARE`, a
/// `jop-firmware/suite.toml` found from the current directory upwards (a
/// jopcal checkout, whose suite a developer may be editing), or the copy this
/// executable carries (see [`crate::share`]).
pub fn firmware_dir(explicit: Option<&Path>) -> Result<PathBuf> {
    let manifest = jopcal_workloads::suite::MANIFEST;
    if let Some(dir) = explicit
        .map(Path::to_path_buf)
        .or_else(|| std::env::var_os("JOPCAL_FIRMWARE").map(PathBuf::from))
    {
        if !dir.is_dir() {
            bail!("{}: no such directory (--firmware or JOPCAL_FIRMWARE)", dir.display());
        }
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
    Ok(share_dir()?.join("jop-firmware"))
}

/// The copy of the built-in suite, tables and bench this executable carries,
/// written into the cache on first use (and found once per run).
pub fn share_dir() -> Result<PathBuf> {
    static SHARE: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();
    if let Some(d) = SHARE.get() {
        return Ok(d.clone());
    }
    let d = crate::share::share_dir(&cache_root()?)?;
    Ok(SHARE.get_or_init(|| d).clone())
}

/// The cache: `$JOPCAL_CACHE`, else `jopcal/` in the user's cache directory
/// (`$XDG_CACHE_HOME`, else `~/.cache`). Every entry is written aside and
/// renamed into place, so concurrent runs share it safely.
pub fn cache_root() -> Result<PathBuf> {
    if let Some(c) = std::env::var_os("JOPCAL_CACHE").filter(|c| !c.is_empty()) {
        return Ok(PathBuf::from(c));
    }
    match dirs::cache_dir() {
        Some(d) => Ok(d.join("jopcal")),
        None => bail!("no cache directory: set JOPCAL_CACHE, XDG_CACHE_HOME or HOME"),
    }
}

/// `--out` if given, else `out/<verb>-<stamp>` (a new directory per run);
/// checked before any work starts, and not created yet (a run that fails
/// early leaves no empty directory behind).
pub fn out_dir(explicit: Option<&Path>, verb: &str, stamp: &str) -> Result<PathBuf> {
    let out = explicit
        .map(Path::to_path_buf)
        .unwrap_or_else(|| PathBuf::from("out").join(format!("{verb}-{stamp}")));
    check_out_dir(&out)?;
    Ok(out)
}

/// Fails, naming the path, when `out` cannot be an output directory: it
/// holds files of the user's (not an earlier jopcal run's), it or one of its
/// parents is a file, or the nearest existing parent is not writable.
pub fn check_out_dir(out: &Path) -> Result<()> {
    if let Some(files) = jopcal_measure::outdir::foreign_files(out) {
        bail!("{}", jopcal_measure::outdir::refusal(out, &files));
    }
    check_writable(out)
}

/// Fails, naming the path, when a directory cannot be made at `out`: it or
/// one of its parents is a file, or the nearest existing parent is not
/// writable. (For the directory of a named output file, which may hold
/// anything: the file itself is checked to be new.)
pub fn check_writable(out: &Path) -> Result<()> {
    let absolute = std::path::absolute(out).unwrap_or_else(|_| out.to_path_buf());
    for dir in absolute.ancestors() {
        let Ok(meta) = std::fs::metadata(dir) else { continue };
        if !meta.is_dir() {
            bail!(
                "--out {}: {} is a file, not a directory: choose another output directory",
                out.display(),
                dir.display()
            );
        }
        // Writable? Make and remove a directory there (nothing stays behind).
        return match tempfile::Builder::new().prefix(".jopcal-check-").tempdir_in(dir) {
            Ok(_) => Ok(()),
            // The OS's reason, without the scratch name tempfile adds.
            Err(e) => bail!(
                "--out {}: cannot create a directory in {}: {}: choose another output directory",
                out.display(),
                dir.display(),
                e.raw_os_error()
                    .map_or(e.kind().to_string(), |n| std::io::Error::from_raw_os_error(n)
                        .to_string())
            ),
        };
    }
    Ok(())
}

/// A timing table the user named: a file, or the name of one jopcal ships
/// (`jop-devel` or `jop-devel.toml` for `calibration/jop-devel.toml`), found
/// from any directory.
pub fn named_table(named: &Path, firmware: Option<&Path>) -> Result<PathBuf> {
    if named.exists() {
        return Ok(named.to_path_buf());
    }
    let text = named.to_string_lossy();
    let bare = named.components().count() == 1 && !text.is_empty();
    if bare {
        let file = if text.ends_with(".toml") {
            text.to_string()
        } else {
            format!("{text}.toml")
        };
        let shipped = calibration_file(firmware, &file)?;
        if shipped.is_file() {
            return Ok(shipped);
        }
        let dir = calibration_file(firmware, "")?;
        let mut names: Vec<String> = std::fs::read_dir(&dir)
            .map(|d| {
                d.filter_map(|e| e.ok())
                    .filter_map(|e| e.file_name().to_str()?.strip_suffix(".toml").map(str::to_string))
                    .collect()
            })
            .unwrap_or_default();
        names.sort();
        bail!(
            "{text}: no such file, and jopcal ships no table of that name (its tables: {})",
            names.join(", ")
        );
    }
    bail!("{}: no such file", named.display())
}

/// `--model` if given (a file or a shipped table's name), else
/// `calibration/jop-wcet.toml` beside the firmware directory.
pub fn model_path(explicit: Option<&Path>, firmware: Option<&Path>) -> Result<PathBuf> {
    if let Some(p) = explicit {
        return named_table(p, firmware);
    }
    let p = calibration_file(firmware, "jop-wcet.toml")?;
    if !p.is_file() {
        bail!("{}: default timing model not found; pass --model FILE", p.display());
    }
    Ok(p)
}

/// `explicit`, else calibration file `name` beside the firmware directory,
/// which must exist (`what` names it, and `remedy` says what to do, in the
/// error).
pub fn calibration_path(
    explicit: Option<&Path>,
    firmware: Option<&Path>,
    name: &str,
    what: &str,
    remedy: &str,
) -> Result<PathBuf> {
    if let Some(p) = explicit {
        return named_table(p, firmware);
    }
    let p = calibration_file(firmware, name)?;
    if !p.is_file() {
        bail!("{}: {what} was not found; {remedy}", p.display());
    }
    Ok(p)
}

/// The profiler agent library: `$JOPCAL_AGENT`, else `libjopcal_agent.so` next
/// to this executable or in its `deps/` (where cargo leaves it when it builds
/// the CLI), else the copy this executable carries.
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
    crate::share::agent(&cache_root()?)
}

/// `--emu-config` if given, else `calibration/emu-board.toml` beside the firmware directory.
pub fn emu_config_path(explicit: Option<&Path>, firmware: Option<&Path>) -> Result<PathBuf> {
    board_table(
        explicit,
        firmware,
        "emu-board.toml",
        "the virtual board's configuration",
    )
}

/// The virtual board's configuration for a JOP tree's linked images:
/// `--emu-config` if given, else `calibration/jop-devel.toml` (the tree's
/// table, JopSim's method cache) beside the firmware directory.
pub fn image_config_path(explicit: Option<&Path>, firmware: Option<&Path>) -> Result<PathBuf> {
    board_table(explicit, firmware, "jop-devel.toml", "the JOP tree's timing table")
}

/// `explicit`, else calibration file `name` (`what`), which must exist.
fn board_table(explicit: Option<&Path>, firmware: Option<&Path>, name: &str, what: &str) -> Result<PathBuf> {
    calibration_path(explicit, firmware, name, what, "pass --emu-config FILE")
}

/// The published measurements: `--references DIR` if given, else
/// `calibration/reference/` beside the built-in suite.
pub fn reference_dir(explicit: Option<&Path>) -> Result<PathBuf> {
    if let Some(d) = explicit {
        if !d.is_dir() {
            bail!("{}: no such directory (--references)", d.display());
        }
        return Ok(d.to_path_buf());
    }
    calibration_file(None, "reference")
}

/// `calibration/<name>` beside the firmware directory, else beside the
/// built-in suite (for a generated workload directory such as the
/// micro-benchmarks or a JOP tree's suite).
fn calibration_file(firmware: Option<&Path>, name: &str) -> Result<PathBuf> {
    if let Some(fw) = firmware {
        let beside = fw.parent().unwrap_or(Path::new(".")).join("calibration").join(name);
        if beside.exists() {
            return Ok(beside);
        }
    }
    let fw = firmware_dir(None)?;
    Ok(fw.parent().unwrap_or(Path::new(".")).join("calibration").join(name))
}

/// The JOP tree: `--jop-home`, `$JOPCAL_JOP_HOME`, or `[jop] home` of a
/// `jopcal.toml` found from the current directory upwards (relative to that file).
pub fn jop_home(explicit: Option<&Path>) -> Result<PathBuf> {
    let found = match explicit
        .map(Path::to_path_buf)
        .or_else(|| std::env::var_os("JOPCAL_JOP_HOME").map(PathBuf::from))
    {
        Some(p) => Some(p),
        None => jop_config()?.and_then(|c| c.home),
    };
    match found {
        Some(h) => {
            // The tree that made a result, in its record (once: git is asked).
            let said = format!("{} (", h.display());
            if !jopcal_measure::provenance::facts()
                .get("tree")
                .is_some_and(|t| t.starts_with(&said))
            {
                let commit = jopcal_measure::provenance::git_commit(&h)
                    .map_or("not a git checkout: no commit known".to_string(), |c| format!("commit {c}"));
                jopcal_measure::provenance::note("tree", format!("{said}{commit})"));
            }
            Ok(h)
        }
        None => bail!(
            "this needs the JOP tree: pass --jop-home DIR, set JOPCAL_JOP_HOME, or write [jop] home = \"...\" in jopcal.toml"
        ),
    }
}

/// Seconds a workload may take on `target`: `--timeout`, else on the JOP
/// tree's targets (JopSim, a board, the bench) `timeout` of jopcal.toml,
/// else 120.
pub fn workload_timeout(explicit: Option<u64>, target: jopcal_targets::TargetKind) -> Result<u64> {
    if let Some(t) = explicit {
        return Ok(t);
    }
    let configured = if target.runs_tree_images() {
        jop_config()?.and_then(|c| c.timeout)
    } else {
        None
    };
    Ok(configured.unwrap_or(120))
}

/// The least time a host profile gets when `--timeout` does not say: the
/// profiler single-steps every bytecode, and a tree's software floating
/// point runs as the tree's routines (jop-devel/jop's Raytrace: 58 million
/// bytecodes in about 3 minutes), far slower than the workload on a target.
pub const PROFILE_TIMEOUT_FLOOR: u64 = 900;

/// Seconds one host profile may take: `explicit` (`--timeout`), else the
/// workload's timeout but at least [`PROFILE_TIMEOUT_FLOOR`].
pub fn profile_timeout(explicit: Option<u64>, workload: u64) -> u64 {
    explicit.unwrap_or(workload.max(PROFILE_TIMEOUT_FLOOR))
}

/// The JOP tree's toolchain as the `jopcal.toml` found from the current
/// directory upwards configures it; `why` says what needs it.
pub fn toolchain(home: Option<&Path>, why: &str) -> Result<jopcal_targets::toolchain::Toolchain> {
    use anyhow::Context;
    let cfg = jop_config()?.with_context(|| {
        format!(
            "{why} needs a jopcal.toml with a [jop] table giving `build` and `image` templates (see docs/formats.md)"
        )
    })?;
    let toolchain = jopcal_targets::toolchain::Toolchain::new(cfg, jop_home(home)?, why)?.with_cache(&cache_root()?)?;
    // The builds' ecj may run in one resident JVM whose script calls this
    // executable back: only jopcal itself answers `__ecj-client`.
    Ok(
        match std::env::current_exe()
            .ok()
            .filter(|p| p.file_stem().is_some_and(|s| s == "jopcal"))
        {
            Some(exe) => toolchain.with_resident_ecj(exe),
            None => toolchain,
        },
    )
}

/// The project's `jopcal.toml`, found from the current directory upwards.
pub fn jop_config() -> Result<Option<jopcal_tree::config::JopConfig>> {
    jopcal_tree::config::JopConfig::find(&std::env::current_dir()?).map_err(|e| anyhow::anyhow!(e))
}

/// The encoding of `tree`'s sources: `encoding` of its jopcal.toml, else
/// what its Makefile says.
pub fn tree_encoding(
    config: Option<&jopcal_tree::config::JopConfig>,
    tree: &jopcal_tree::tree::JopTree,
) -> Result<jopcal_workloads::SourceEncoding> {
    match config.and_then(|c| c.encoding) {
        Some(e) => Ok(e),
        None => Ok(tree.source_encoding().map_err(|e| anyhow::anyhow!(e))?.0),
    }
}

/// The workload directory of `--suite NAME`: the built-in suite's firmware
/// directory for `builtin`; for `jembench` and `jbe`, a directory generated
/// from the JOP tree's fixed-count harnesses (see `jopcal_tree::tree`), kept in
/// the build cache under a name derived from its content.
pub fn suite_dir(
    firmware: Option<&Path>,
    home: Option<&Path>,
    suite: &str,
    progress: &crate::Progress,
) -> Result<PathBuf> {
    use jopcal_tree::tree::{generate_suite, JopTree, TreeSuite};
    let fw = firmware_dir(firmware)?;
    if suite == "builtin" {
        return Ok(fw);
    }
    let Some(tree_suite) = TreeSuite::from_name(suite) else {
        bail!("unknown suite `{suite}`: the suites are: builtin, jembench, jbe, jembench-all, apps");
    };
    let home = jop_home(home)?;
    let tree = JopTree::open(&home).map_err(|e| anyhow::anyhow!(e))?;
    let selected = tree.select(tree_suite, &[]).map_err(|e| anyhow::anyhow!(e))?;
    let (encoding, compiler) = tree_compile(&tree)?;
    let (g, dir) = publish_suite(suite, |tmp| {
        generate_suite(tree_suite, &selected, encoding, &compiler, &fw, tmp).map_err(|e| anyhow::anyhow!(e))
    })?;
    for s in &g.skipped {
        progress.note(&format!("note: left out of the {suite} suite: {s}"));
    }
    progress.note(&format!(
        "suite {suite}: {} harnesses of {} ({})",
        g.names.len(),
        home.display(),
        g.names.join(", ")
    ));
    Ok(dir)
}

/// How a tree's suites are compiled for the host: the sources' encoding and
/// the compiler (`host_javac` of jopcal.toml; empty: the host JDK's javac).
fn tree_compile(tree: &jopcal_tree::tree::JopTree) -> Result<(jopcal_workloads::SourceEncoding, Vec<String>)> {
    let config = jop_config()?;
    let encoding = tree_encoding(config.as_ref(), tree)?;
    Ok((encoding, config.map(|c| c.host_javac).unwrap_or_default()))
}

/// Generates a suite with `generate` into a private directory, then
/// publishes it in the cache under a name that is a hash of its content: a
/// concurrent run never sees a half-written suite, and an unchanged tree
/// reuses the same directory.
fn publish_suite(
    suite: &str,
    generate: impl FnOnce(&Path) -> Result<jopcal_tree::tree::GeneratedSuite>,
) -> Result<(jopcal_tree::tree::GeneratedSuite, PathBuf)> {
    let base = cache_root()?.join("tree-suites");
    let tmp = base.join(format!(".generating-{}", std::process::id()));
    if tmp.exists() {
        std::fs::remove_dir_all(&tmp).map_err(|e| anyhow::anyhow!("{}: {e}", tmp.display()))?;
    }
    let g = generate(&tmp).inspect_err(|_| {
        let _ = std::fs::remove_dir_all(&tmp);
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
    Ok((g, dir))
}

/// The workload directory of the user's own programs (`--main CLASS`,
/// `--cp DIR`; see `jopcal_tree::programs`), generated from the JOP tree's
/// build as the tree suites are: each program's whole `main` timed.
pub fn program_suite_dir(
    firmware: Option<&Path>,
    home: Option<&Path>,
    request: &jopcal_tree::programs::ProgramRequest,
    progress: &crate::Progress,
) -> Result<PathBuf> {
    let fw = firmware_dir(firmware)?;
    let home = jop_home(home).map_err(|e| {
        anyhow::anyhow!("{e} (--main and --cp run your program as the tree's processor runs it, with the tree's runtime and library)")
    })?;
    let tree = jopcal_tree::tree::JopTree::open(&home).map_err(|e| anyhow::anyhow!(e))?;
    let (encoding, compiler) = tree_compile(&tree)?;
    let (g, dir) = publish_suite(PROGRAMS_SUITE, |tmp| {
        jopcal_tree::programs::generate(&home, request, encoding, &compiler, &fw, tmp).map_err(|e| anyhow::anyhow!(e))
    })?;
    for s in &g.skipped {
        progress.note(&format!("note: left out of your programs: {s}"));
    }
    let names = g.names.join(", ");
    progress.note(&format!(
        "suite {PROGRAMS_SUITE}: {} of your programs, each its whole main, built with {} ({names})",
        g.names.len(),
        home.display(),
    ));
    Ok(dir)
}

/// The suite name of the user's programs (`--main`, `--cp`) in results.
pub const PROGRAMS_SUITE: &str = "programs";

/// The workload directory of a run: the user's programs when it names
/// any, else `--suite`'s.
pub fn workload_dir(
    firmware: Option<&Path>,
    home: Option<&Path>,
    suite: &str,
    programs: &jopcal_tree::programs::ProgramRequest,
    progress: &crate::Progress,
) -> Result<PathBuf> {
    if programs.is_requested() {
        program_suite_dir(firmware, home, programs, progress)
    } else {
        suite_dir(firmware, home, suite, progress)
    }
}
