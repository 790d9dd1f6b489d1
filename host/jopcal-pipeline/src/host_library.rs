//! The JOP tree's own versions of JDK classes on the host: JOP runs its own
//! library (its `java.util.Random`, `Vector`, ...), whose code differs from
//! the host JDK's, so a profile of the host's version counts work the target
//! never does. `host_library` in `jopcal.toml` names such classes; they are
//! compiled from the tree's sources for the host JVM and the profiled JVM
//! runs them in place of its own (`--patch-module java.base=...`), so the
//! host profile counts the bytecodes of the library JOP runs.

use crate::locate;
use anyhow::{anyhow, bail, Context, Result};
use jopcal_measure::atomic;
use sha2::{Digest, Sha256};
use std::path::{Path, PathBuf};

/// The tree's source roots of its JDK classes, in the order its Makefile's
/// default `TARGET_SOURCE` lists them (the first that has a class wins).
const JDK_ROOTS: [&str; 3] = [
    "java/target/src/common",
    "java/target/src/jdk_base",
    "java/target/src/jdk11",
];

/// The options that add `dirs` to `java.base`.
pub fn patch(dirs: &[&Path]) -> Result<Vec<String>> {
    let joined =
        std::env::join_paths(dirs).map_err(|e| anyhow!("the JVM's --patch-module cannot name {dirs:?}: {e}"))?;
    Ok(vec![
        "--patch-module".to_string(),
        format!("java.base={}", joined.to_string_lossy()),
    ])
}

/// The directory of the tree's versions of `classes` (dotted names of
/// `java.base` classes) compiled for the host JVM to run in place of its
/// own (`--patch-module`, [`patch`]), compiled here with the host JDK
/// (cached by a hash of the sources and the compiler); `None` without
/// classes.
pub fn library_dir(
    home: &Path,
    classes: &[String],
    encoding: jopcal_workloads::SourceEncoding,
    say: &dyn Fn(&str),
) -> Result<Option<PathBuf>> {
    if classes.is_empty() {
        return Ok(None);
    }
    let jdk = jopcal_workloads::Jdk::detect()?;
    let mut sources: Vec<(String, PathBuf, PathBuf)> = Vec::new();
    for class in classes {
        if !class.starts_with("java.") || class.contains('/') || class.ends_with('.') {
            bail!("host_library {class}: name a class of the host JDK's java.base by its dotted name (e.g. java.util.Random)");
        }
        let rel = format!("{}.java", class.replace('.', "/"));
        let Some(root) = JDK_ROOTS.iter().map(|r| home.join(r)).find(|r| r.join(&rel).is_file()) else {
            bail!(
                "host_library {class}: the tree has no {rel} under {}",
                JDK_ROOTS.join(", ")
            );
        };
        let file = root.join(&rel);
        sources.push((class.clone(), root, file));
    }
    let mut h = Sha256::new();
    h.update(jdk.version.as_bytes());
    h.update(encoding.javac_name().as_bytes());
    for (class, _, file) in &sources {
        let bytes = std::fs::read(file).with_context(|| format!("reading {}", file.display()))?;
        h.update(class.as_bytes());
        h.update((bytes.len() as u64).to_le_bytes());
        h.update(&bytes);
    }
    let key: String = h.finalize().iter().take(8).map(|b| format!("{b:02x}")).collect();
    let dir = locate::cache_root()?.join("host-library").join(key);
    if !dir.join(".complete").is_file() {
        let tmp = dir.with_extension(format!("tmp{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&tmp);
        std::fs::create_dir_all(&tmp)?;
        // Each class compiles as part of java.base with its own root as the
        // module's source: the rest of the module comes from the host JDK.
        for (class, root, file) in &sources {
            let o = std::process::Command::new(&jdk.javac)
                .args(["-nowarn", "-encoding", encoding.javac_name(), "--patch-module"])
                .arg(format!("java.base={}", root.display()))
                .arg("-d")
                .arg(&tmp)
                .arg("-implicit:none")
                .arg(file)
                .output()
                .with_context(|| format!("running {}", jdk.javac.display()))?;
            if !o.status.success() {
                let text = String::from_utf8_lossy(&o.stderr);
                let first = text
                    .lines()
                    .find(|l| l.contains("error:"))
                    .unwrap_or("javac failed")
                    .trim();
                let _ = std::fs::remove_dir_all(&tmp);
                bail!("host_library {class}: the tree's source does not compile for the host JDK: {first}");
            }
        }
        atomic::write_atomic(&tmp.join(".complete"), b"")?;
        if std::fs::rename(&tmp, &dir).is_err() && !dir.join(".complete").is_file() {
            return Err(anyhow!("cannot move {} to {}", tmp.display(), dir.display()));
        }
        let _ = std::fs::remove_dir_all(&tmp);
    }
    say(&format!(
        "  profile host library: the tree's {} on the host JVM instead of its own ({})",
        classes.join(", "),
        dir.display()
    ));
    Ok(Some(dir))
}
