//! What the three host builds share: the tree's paths they read, ASM, and
//! running the compiler and jopcal's Java tools.

use anyhow::{bail, Context, Result};
use jopcal_output::children::InGroup;
use std::path::{Path, PathBuf};

/// Where the tree keeps its runtime (its `JVM.java` and the software float).
pub const RUNTIME_DIR: &str = "java/target/src/common/com/jopdesign/sys";
/// The runtime's classes the routines are not compiled with: the generated
/// runtime class and JVMHelp stand in for the first two, and the suite's
/// host stand-in for Native (the tree's declares JOP's native methods and
/// needs the whole runtime).
pub const NOT_FROM_THE_TREE: [&str; 3] = ["JVM.java", "JVMHelp.java", "Native.java"];
/// Where a suite keeps its host stand-ins of the runtime package.
pub const STAND_INS: &str = "host-stubs/com/jopdesign/sys";
/// Where Debian's `libasm-java` puts ASM.
pub const DEBIAN_ASM: &str = "/usr/share/java/asm.jar";
/// ASM's jar: `JOPCAL_ASM_JAR`, else Debian's.
pub fn asm_jar() -> Option<PathBuf> {
    let jar = std::env::var_os("JOPCAL_ASM_JAR")
        .filter(|v| !v.is_empty())
        .map_or_else(|| PathBuf::from(DEBIAN_ASM), PathBuf::from);
    jar.is_file().then_some(jar)
}

/// Runs jopcal's Java tool `class` (on the class path `cp`, with ASM) with
/// `args`: its standard output, or the first line it wrote to standard
/// error (`None` when it wrote none) when it failed.
pub fn run_tool(
    jdk: &jopcal_workloads::Jdk,
    cp: &std::ffi::OsStr,
    class: &str,
    args: &[std::ffi::OsString],
) -> Result<std::result::Result<Vec<u8>, Option<String>>> {
    let o = std::process::Command::new(&jdk.java)
        .arg("-cp")
        .arg(cp)
        .arg(class)
        .args(args)
        .output_in_group()
        .with_context(|| format!("running {}", jdk.java.display()))?;
    Ok(if o.status.success() {
        Ok(o.stdout)
    } else {
        let text = String::from_utf8_lossy(&o.stderr);
        Err(text.lines().find(|l| !l.trim().is_empty()).map(str::to_string))
    })
}

/// Runs the compiler `argv` (its command line up to `-d`) on `files`.
pub fn compile(argv: &[String], out: &Path, files: impl IntoIterator<Item = PathBuf>) -> Result<()> {
    let o = std::process::Command::new(&argv[0])
        .args(&argv[1..])
        .arg("-d")
        .arg(out)
        .args(files)
        .output()
        .with_context(|| format!("running {}", argv[0]))?;
    if !o.status.success() {
        let text = String::from_utf8_lossy(&o.stderr) + String::from_utf8_lossy(&o.stdout);
        if let Some(first) = jopcal_workloads::build::ecj_errors(&text).first() {
            bail!("{first}");
        }
        let mut lines = text.lines().skip_while(|l| !l.contains("error"));
        let first = lines.next().unwrap_or("failed").trim();
        // javac names what it could not find on a line of its own.
        let symbol = lines.take(4).find(|l| l.trim_start().starts_with("symbol:"));
        bail!(
            "javac: {first}{}",
            symbol.map(|s| format!(" ({})", s.trim())).unwrap_or_default()
        );
    }
    Ok(())
}

/// Copies the Java sources in `from` whose file name `keep` accepts into `to`.
pub fn copy_sources(from: &Path, to: &Path, keep: impl Fn(&str) -> bool) -> Result<()> {
    for e in std::fs::read_dir(from).with_context(|| format!("reading {}", from.display()))? {
        let p = e?.path();
        let name = p.file_name().and_then(|n| n.to_str()).unwrap_or_default();
        if name.ends_with(".java") && keep(name) {
            std::fs::copy(&p, to.join(name)).with_context(|| format!("copying {}", p.display()))?;
        }
    }
    Ok(())
}

pub fn copy_tree(from: &Path, to: &Path) -> Result<()> {
    for e in walkdir::WalkDir::new(from) {
        let e = e.with_context(|| format!("reading {}", from.display()))?;
        let target = to.join(e.path().strip_prefix(from).unwrap_or(e.path()));
        if e.file_type().is_dir() {
            std::fs::create_dir_all(&target)?;
        } else if e.file_type().is_file() {
            std::fs::copy(e.path(), &target).with_context(|| format!("copying {}", e.path().display()))?;
        }
    }
    Ok(())
}

/// The options that add `dirs` to `java.base`.
pub fn patch(dirs: &[&Path]) -> Result<Vec<String>> {
    let joined = std::env::join_paths(dirs)
        .map_err(|e| anyhow::anyhow!("the JVM's --patch-module cannot name {dirs:?}: {e}"))?;
    Ok(vec![
        "--patch-module".to_string(),
        format!("java.base={}", joined.to_string_lossy()),
    ])
}

/// In a library directory (`host_library`): the tree's methods merged into
/// a JDK class, one "OWNER NAME DESCRIPTOR" a line (what `RouteBytecodes
/// --methods` reads).
pub const MERGED_LIST: &str = "merged.txt";
