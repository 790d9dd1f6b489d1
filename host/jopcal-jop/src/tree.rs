//! A user's JOP source tree: finding the benchmark sources in it. The fixed-
//! count harnesses of JemBench/JBE (`Loop*.java` in a `fixed` directory under
//! `java/target/src`, e.g. LoopKfl, LoopLift, LoopUdpIp, LoopMatrix,
//! LoopQueens, LoopAes) become the `jembench` suite: bench name = the class
//! name without `Loop`, main class from the file's package.

use std::path::{Path, PathBuf};

/// One discovered benchmark harness.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TreeWorkload {
    pub name: String,
    /// Fully qualified main class.
    pub main: String,
    pub file: PathBuf,
    /// The source root its package hangs from (for javac -sourcepath).
    pub source_root: PathBuf,
}

/// An opened JOP tree.
#[derive(Debug, Clone)]
pub struct JopTree {
    pub home: PathBuf,
    pub workloads: Vec<TreeWorkload>,
}

fn package_of(text: &str) -> Option<String> {
    text.lines()
        .map(str::trim)
        .find_map(|l| l.strip_prefix("package "))
        .map(|p| p.trim_end_matches(';').trim().to_string())
}

impl JopTree {
    /// Opens `home`; it must hold `java/target/src` (the JOP tree's target Java sources).
    pub fn open(home: &Path) -> Result<JopTree, String> {
        let src = home.join("java/target/src");
        if !src.is_dir() {
            return Err(format!(
                "{}: not a JOP tree (no java/target/src; pass the root of a JOP checkout as --jop-home)",
                home.display()
            ));
        }
        let mut workloads = Vec::new();
        let mut todo = vec![src.clone()];
        while let Some(d) = todo.pop() {
            let entries = std::fs::read_dir(&d).map_err(|e| format!("{}: {e}", d.display()))?;
            for e in entries {
                let p = e.map_err(|e| format!("{}: {e}", d.display()))?.path();
                if p.is_dir() {
                    todo.push(p);
                    continue;
                }
                let in_fixed = p.parent().and_then(|x| x.file_name()).is_some_and(|n| n == "fixed");
                let stem = p
                    .file_stem()
                    .map(|s| s.to_string_lossy().into_owned())
                    .unwrap_or_default();
                if !in_fixed || !stem.starts_with("Loop") || p.extension().is_none_or(|x| x != "java") {
                    continue;
                }
                let text = std::fs::read_to_string(&p).map_err(|e| format!("{}: {e}", p.display()))?;
                let package = package_of(&text);
                let main = match &package {
                    Some(pk) => format!("{pk}.{stem}"),
                    None => stem.clone(),
                };
                // The root is the file's directory minus the package's directories.
                let mut root = p.parent().unwrap_or(&src).to_path_buf();
                for _ in package.iter().flat_map(|pk| pk.split('.')) {
                    root = root.parent().unwrap_or(&src).to_path_buf();
                }
                workloads.push(TreeWorkload {
                    name: stem.trim_start_matches("Loop").to_string(),
                    main,
                    file: p,
                    source_root: root,
                });
            }
        }
        if workloads.is_empty() {
            return Err(format!(
                "{}: no fixed-count harnesses (Loop*.java in a `fixed` directory under java/target/src)",
                home.display()
            ));
        }
        workloads.sort_by(|a, b| a.name.cmp(&b.name));
        Ok(JopTree {
            home: home.to_path_buf(),
            workloads,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_fixed_harnesses_and_rejects_other_directories() {
        let t = std::env::temp_dir().join(format!("jopcal-tree-{}", std::process::id()));
        let fixed = t.join("java/target/src/bench/jbe/fixed");
        std::fs::create_dir_all(&fixed).unwrap();
        std::fs::write(
            fixed.join("LoopKfl.java"),
            "package jbe.fixed;\npublic class LoopKfl {}\n",
        )
        .unwrap();
        std::fs::write(fixed.join("Helper.java"), "package jbe.fixed;\nclass Helper {}\n").unwrap();
        let tree = JopTree::open(&t).unwrap();
        assert_eq!(tree.workloads.len(), 1);
        let w = &tree.workloads[0];
        assert_eq!((w.name.as_str(), w.main.as_str()), ("Kfl", "jbe.fixed.LoopKfl"));
        assert_eq!(w.source_root, t.join("java/target/src/bench"));
        let e = JopTree::open(&t.join("java")).unwrap_err();
        assert!(
            e.ends_with("not a JOP tree (no java/target/src; pass the root of a JOP checkout as --jop-home)"),
            "{e}"
        );
        let _ = std::fs::remove_dir_all(&t);
    }
}
