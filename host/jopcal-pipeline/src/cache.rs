//! jopcal's cache ([`crate::locate::cache_root`]) as `jopcal cache` shows
//! it: what each entry holds, and clearing it.

use crate::Session;
use anyhow::{Context, Result};
use std::path::Path;

/// Bytes and files below `dir` (0 for a missing directory).
fn usage(dir: &Path) -> (u64, u64) {
    walkdir::WalkDir::new(dir)
        .into_iter()
        .filter_map(|e| e.ok())
        .filter(|e| e.file_type().is_file())
        .fold((0, 0), |(bytes, files), e| {
            (bytes + e.metadata().map_or(0, |m| m.len()), files + 1)
        })
}

/// Says what the cache at `root` holds: each entry's files and size, and the total.
pub fn describe(s: Session, root: &Path) {
    let mut entries: Vec<_> = std::fs::read_dir(root)
        .map(|d| d.filter_map(|e| e.ok()).map(|e| e.path()).collect())
        .unwrap_or_default();
    entries.sort();
    for e in entries {
        let (b, f) = usage(&e);
        s.say(&format!(
            "     {:<14} {f:>6} files {:>8.1} MB",
            e.file_name()
                .map_or(String::new(), |n| n.to_string_lossy().into_owned()),
            b as f64 / 1e6
        ));
    }
    let (bytes, files) = usage(root);
    s.say(&format!(
        "     total {files} files, {:.1} MB (jopcal cache --clear removes them)",
        bytes as f64 / 1e6
    ));
}

/// Removes the cache at `root` and says what it held.
pub fn clear(s: Session, root: &Path) -> Result<()> {
    let (bytes, files) = usage(root);
    if root.exists() {
        std::fs::remove_dir_all(root).with_context(|| format!("clearing {}", root.display()))?;
    }
    s.say(&format!(
        "     cache {} cleared ({files} files, {:.1} MB)",
        root.display(),
        bytes as f64 / 1e6
    ));
    Ok(())
}
