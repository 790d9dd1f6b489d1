//! Another version of the user's JOP tree, to compare a change against:
//! a git revision of the tree checked out into jopcal's cache
//! ([`checkout`]), and what differs between two trees ([`differences`]).
//!
//! A checkout is the revision's files (`git archive`, so every file keeps
//! the commit's time and the image cache's fingerprint of the checkout is
//! the same every time it is made) and, beside them, the files of the tree
//! that git does not track and the revision lacks: the tools the user built
//! by hand (`java/tools/dist`), which the revision's image builds need and
//! which no commit holds. Checkouts are kept by commit and reused; the
//! untracked files are brought up to date on each use.

use std::path::{Path, PathBuf};
use std::process::Command;

/// Why a revision cannot be checked out.
#[derive(Debug, thiserror::Error)]
pub enum RevisionError {
    #[error("{tree}: not a git checkout, so it has no revision `{rev}` (give the other version as a tree of its own with --candidate-home DIR)")]
    NotGit { tree: PathBuf, rev: String },
    #[error("{tree}: no revision `{rev}` (git: {why})")]
    Unknown { tree: PathBuf, rev: String, why: String },
    #[error("{tree}: git {what} failed: {why}")]
    Git { tree: PathBuf, what: String, why: String },
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
}

/// A revision of a tree, checked out.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Checkout {
    /// The revision's full commit hash.
    pub commit: String,
    /// Where its files are.
    pub dir: PathBuf,
    /// The tree's untracked files copied beside them (new or changed this time).
    pub untracked_copied: usize,
}

fn io_err(path: &Path) -> impl FnOnce(std::io::Error) -> RevisionError + '_ {
    move |source| RevisionError::Io {
        path: path.to_path_buf(),
        source,
    }
}

/// Runs `git -C tree ARGS`, its standard output.
fn git(tree: &Path, args: &[&str]) -> Result<Vec<u8>, RevisionError> {
    let out = Command::new("git")
        .arg("-C")
        .arg(tree)
        .args(args)
        .output()
        .map_err(|e| RevisionError::Git {
            tree: tree.to_path_buf(),
            what: args.first().copied().unwrap_or("").to_string(),
            why: format!("cannot run git: {e}"),
        })?;
    if !out.status.success() {
        return Err(RevisionError::Git {
            tree: tree.to_path_buf(),
            what: args.join(" "),
            why: String::from_utf8_lossy(&out.stderr).trim().to_string(),
        });
    }
    Ok(out.stdout)
}

/// The full commit hash `rev` names in `tree`.
pub fn resolve(tree: &Path, rev: &str) -> Result<String, RevisionError> {
    if git(tree, &["rev-parse", "--git-dir"]).is_err() {
        return Err(RevisionError::NotGit {
            tree: tree.to_path_buf(),
            rev: rev.to_string(),
        });
    }
    let spec = format!("{rev}^{{commit}}");
    match git(tree, &["rev-parse", "--verify", "--quiet", &spec]) {
        Ok(out) => Ok(String::from_utf8_lossy(&out).trim().to_string()),
        Err(e) => Err(RevisionError::Unknown {
            tree: tree.to_path_buf(),
            rev: rev.to_string(),
            why: match e {
                RevisionError::Git { why, .. } if !why.is_empty() => why,
                _ => "not a commit".into(),
            },
        }),
    }
}

/// The files of `tree` git ignores (what its builds made, the tools
/// built by hand), build outputs aside, relative to the tree.
fn untracked(tree: &Path) -> Result<Vec<PathBuf>, RevisionError> {
    // Ignored files only (the built tools): an untracked file git does not
    // ignore is part of the change, and stays out of the baseline.
    let out = git(tree, &["ls-files", "--others", "--ignored", "--exclude-standard", "-z"])?;
    Ok(paths(&out)
        .into_iter()
        .filter(|p| !crate::copies::is_build_output(p))
        .collect())
}

/// Copies the tree's untracked files into `dir` where `dir` lacks them or
/// holds another version of them (by size and time), keeping their times.
fn copy_untracked(
    tree: &Path,
    dir: &Path,
    files: &[PathBuf],
    tracked_at_rev: &std::collections::BTreeSet<PathBuf>,
) -> Result<usize, RevisionError> {
    let mut copied = 0;
    for rel in files {
        if tracked_at_rev.contains(rel) {
            continue;
        }
        let (from, to) = (tree.join(rel), dir.join(rel));
        let meta = from.symlink_metadata().map_err(io_err(&from))?;
        if !meta.is_file() {
            continue;
        }
        if let Ok(have) = to.metadata() {
            if have.len() == meta.len() && have.modified().ok() == meta.modified().ok() {
                continue;
            }
        }
        if let Some(parent) = to.parent() {
            std::fs::create_dir_all(parent).map_err(io_err(parent))?;
        }
        // Written aside and renamed: another run's build may be reading it.
        let mut aside = to.clone().into_os_string();
        aside.push(format!(".jopcal-{}", std::process::id()));
        let aside = PathBuf::from(aside);
        std::fs::copy(&from, &aside).map_err(io_err(&aside))?;
        if let Ok(m) = meta.modified() {
            std::fs::File::options()
                .write(true)
                .open(&aside)
                .and_then(|f| f.set_modified(m))
                .map_err(io_err(&aside))?;
        }
        std::fs::rename(&aside, &to).map_err(io_err(&to))?;
        copied += 1;
    }
    Ok(copied)
}

/// Revision `commit` of `tree`'s files into `dir` (which exists), with the stamp.
fn extract(tree: &Path, commit: &str, dir: &Path) -> Result<(), RevisionError> {
    let tar = dir.join(".archive.tar");
    git(tree, &["archive", "--format=tar", "-o", &tar.to_string_lossy(), commit])?;
    let untar = Command::new("tar")
        .arg("-xf")
        .arg(&tar)
        .arg("-C")
        .arg(dir)
        .output()
        .map_err(io_err(&tar))?;
    if !untar.status.success() {
        return Err(RevisionError::Io {
            path: tar,
            source: std::io::Error::other(String::from_utf8_lossy(&untar.stderr).trim().to_string()),
        });
    }
    std::fs::remove_file(&tar).map_err(io_err(&tar))?;
    std::fs::write(dir.join(".jopcal-revision"), format!("{commit}\n")).map_err(io_err(dir))
}

/// Revision `rev` of `tree`, checked out under `cache/revisions/`, with the
/// tree's untracked files beside it (see the module's doc).
pub fn checkout(tree: &Path, rev: &str, cache: &Path) -> Result<Checkout, RevisionError> {
    let commit = resolve(tree, rev)?;
    let root = cache.join("revisions");
    let dir = root.join(&commit);
    let tracked: std::collections::BTreeSet<PathBuf> =
        paths(&git(tree, &["ls-tree", "-r", "-z", "--name-only", &commit])?)
            .into_iter()
            .collect();
    let files = untracked(tree)?;
    let stamp = dir.join(".jopcal-revision");
    if !stamp.is_file() {
        std::fs::create_dir_all(&root).map_err(io_err(&root))?;
        let tmp = root.join(format!(".{commit}.{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&tmp);
        std::fs::create_dir_all(&tmp).map_err(io_err(&tmp))?;
        // A checkout that fails half-way leaves nothing behind.
        if let Err(e) = extract(tree, &commit, &tmp) {
            let _ = std::fs::remove_dir_all(&tmp);
            return Err(e);
        }
        if let Err(e) = std::fs::rename(&tmp, &dir) {
            // Another run made it first: theirs is the same.
            let _ = std::fs::remove_dir_all(&tmp);
            if !stamp.is_file() {
                return Err(io_err(&dir)(e));
            }
        }
    }
    let untracked_copied = copy_untracked(tree, &dir, &files, &tracked)?;
    Ok(Checkout {
        commit,
        dir,
        untracked_copied,
    })
}

/// The files that differ between two trees (in content, or present in one
/// only), build outputs and jopcal's marks aside, relative and sorted.
pub fn differences(a: &Path, b: &Path) -> std::io::Result<Vec<PathBuf>> {
    fn files(root: &Path) -> std::io::Result<std::collections::BTreeMap<PathBuf, u64>> {
        let mut out = std::collections::BTreeMap::new();
        let walk = walkdir::WalkDir::new(root)
            .follow_links(false)
            .into_iter()
            .filter_entry(|e| {
                e.path().strip_prefix(root).map_or(true, |rel| {
                    rel.as_os_str().is_empty()
                        || !(crate::copies::is_build_output(rel) || rel.starts_with(".jopcal-revision"))
                })
            });
        for e in walk {
            let e = e.map_err(std::io::Error::other)?;
            if e.file_type().is_file() {
                let rel = e
                    .path()
                    .strip_prefix(root)
                    .map_err(std::io::Error::other)?
                    .to_path_buf();
                out.insert(rel, e.metadata().map_err(std::io::Error::other)?.len());
            }
        }
        Ok(out)
    }
    let (fa, fb) = (files(a)?, files(b)?);
    let mut out = Vec::new();
    for (rel, len) in &fa {
        match fb.get(rel) {
            Some(l) if l == len => {
                if std::fs::read(a.join(rel))? != std::fs::read(b.join(rel))? {
                    out.push(rel.clone());
                }
            }
            _ => out.push(rel.clone()),
        }
    }
    out.extend(fb.keys().filter(|rel| !fa.contains_key(*rel)).cloned());
    out.sort();
    Ok(out)
}

/// Whether a changed file may change the processor's hardware (what the
/// virtual board does not follow): everything but the microcode (`asm/`),
/// the Java runtime, library and tools (`java/`, `.java`) and documents.
/// On the safe side: a file of unknown kind counts as hardware.
pub fn is_hardware(rel: &Path) -> bool {
    let top = rel
        .components()
        .next()
        .map(|c| c.as_os_str().to_string_lossy().to_lowercase());
    if matches!(top.as_deref(), Some("asm" | "java" | "doc" | "docs")) {
        return false;
    }
    let ext = rel.extension().map(|e| e.to_string_lossy().to_lowercase());
    !matches!(
        ext.as_deref(),
        Some("java" | "md" | "txt" | "pdf" | "html" | "htm" | "tex" | "png" | "jpg")
    ) && !rel.to_string_lossy().starts_with(".git")
        && !rel.starts_with(".jopcal-revision")
}

/// What differs between the tree's working files and `commit` without a
/// checkout (for a dry run): tracked files changed since, and untracked
/// files git does not ignore.
pub fn changes_since(tree: &Path, commit: &str) -> Result<Vec<PathBuf>, RevisionError> {
    let mut out = paths(&git(tree, &["diff", "--name-only", "-z", commit])?);
    out.extend(paths(&git(
        tree,
        &["ls-files", "--others", "--exclude-standard", "-z"],
    )?));
    out.sort();
    out.dedup();
    Ok(out)
}

/// NUL-separated paths, as git's `-z` prints them.
fn paths(out: &[u8]) -> Vec<PathBuf> {
    out.split(|b| *b == 0)
        .filter(|p| !p.is_empty())
        .map(|p| PathBuf::from(String::from_utf8_lossy(p).into_owned()))
        .collect()
}

/// The first 12 digits of a commit, as people read it.
pub fn short(commit: &str) -> &str {
    commit.get(..12).unwrap_or(commit)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sh(dir: &Path, args: &[&str]) {
        let ok = Command::new("git")
            .arg("-C")
            .arg(dir)
            .args(["-c", "user.name=t", "-c", "user.email=t@t"])
            .args(args)
            .output()
            .expect("git")
            .status
            .success();
        assert!(ok, "git {args:?}");
    }

    #[test]
    fn a_revision_is_its_commits_files_with_the_trees_untracked_ones() {
        let t = tempfile::tempdir().unwrap();
        let tree = t.path().join("tree");
        std::fs::create_dir_all(tree.join("asm/src")).unwrap();
        std::fs::write(tree.join("asm/src/jvm.asm"), "iadd: add nxt\n").unwrap();
        sh(&tree, &["init", "-q"]);
        sh(&tree, &["add", "-A"]);
        sh(&tree, &["commit", "-q", "-m", "one"]);
        // The change under test, not committed; a tool the user built.
        std::fs::write(tree.join("asm/src/jvm.asm"), "iadd: nop\n add nxt\n").unwrap();
        std::fs::write(tree.join(".gitignore"), "java/tools/dist/\n").unwrap();
        std::fs::create_dir_all(tree.join("java/tools/dist/lib")).unwrap();
        std::fs::write(tree.join("java/tools/dist/lib/jop-tools.jar"), "jar").unwrap();
        // A new source of the change, untracked and not ignored: not the baseline's.
        std::fs::write(tree.join("asm/src/new.inc"), "nop\n").unwrap();
        let cache = t.path().join("cache");
        let c = checkout(&tree, "HEAD", &cache).unwrap();
        assert_eq!(c.commit.len(), 40);
        assert_eq!(
            std::fs::read_to_string(c.dir.join("asm/src/jvm.asm")).unwrap(),
            "iadd: add nxt\n"
        );
        assert_eq!(
            std::fs::read_to_string(c.dir.join("java/tools/dist/lib/jop-tools.jar")).unwrap(),
            "jar"
        );
        assert_eq!(c.untracked_copied, 1);
        // Reused: nothing copied again.
        assert_eq!(checkout(&tree, "HEAD", &cache).unwrap().untracked_copied, 0);
        assert!(!c.dir.join("asm/src/new.inc").exists());
        let changed = vec![
            PathBuf::from(".gitignore"),
            PathBuf::from("asm/src/jvm.asm"),
            PathBuf::from("asm/src/new.inc"),
        ];
        assert_eq!(differences(&c.dir, &tree).unwrap(), changed);
        assert_eq!(changes_since(&tree, &c.commit).unwrap(), changed);
        let e = checkout(&tree, "no-such-rev", &cache).unwrap_err().to_string();
        assert!(e.contains("no revision `no-such-rev`"), "{e}");
        let plain = t.path().join("plain");
        std::fs::create_dir_all(&plain).unwrap();
        let e = checkout(&plain, "HEAD", &cache).unwrap_err().to_string();
        assert!(e.contains("not a git checkout"), "{e}");
    }

    #[test]
    fn hardware_is_told_from_microcode_and_java() {
        assert!(is_hardware(Path::new("vhdl/core/mem_sc.vhd")));
        assert!(is_hardware(Path::new("quartus/cycmin/jop.qsf")));
        assert!(is_hardware(Path::new("vhdl/top/JOP.VHD")));
        assert!(is_hardware(Path::new("quartus/cycmin/ram.mif")));
        assert!(!is_hardware(Path::new("asm/src/jvm.asm")));
        assert!(!is_hardware(Path::new(
            "java/target/src/common/com/jopdesign/sys/JVM.java"
        )));
    }
}
