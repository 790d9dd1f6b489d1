//! `jopcal cache`: where the cache is, what it holds, and `--clear`.

use crate::cli::CacheArgs;
use anyhow::{Context, Result};
use jopcal_pipeline::locate as context;
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

pub fn cache(a: &CacheArgs) -> Result<()> {
    let root = context::cache_root()?;
    let (bytes, files) = usage(&root);
    if a.clear {
        if root.exists() {
            std::fs::remove_dir_all(&root).with_context(|| format!("clearing {}", root.display()))?;
        }
        eprintln!(
            "     cache {} cleared ({files} files, {:.1} MB)",
            root.display(),
            bytes as f64 / 1e6
        );
        return Ok(());
    }
    println!("{}", root.display());
    let mut entries: Vec<_> = std::fs::read_dir(&root)
        .map(|d| d.filter_map(|e| e.ok()).map(|e| e.path()).collect())
        .unwrap_or_default();
    entries.sort();
    for e in entries {
        let (b, f) = usage(&e);
        eprintln!(
            "     {:<14} {f:>6} files {:>8.1} MB",
            e.file_name()
                .map_or(String::new(), |n| n.to_string_lossy().into_owned()),
            b as f64 / 1e6
        );
    }
    eprintln!(
        "     total {files} files, {:.1} MB (jopcal cache --clear removes them)",
        bytes as f64 / 1e6
    );
    Ok(())
}
