//! Private copies of a JOP tree, so that builds never collide.
//!
//! The tree's `make java_app` deletes `java/target/dist`, rewrites
//! `Config.java` and drops `mem_main.dat` into the tree: two builds in one
//! tree at once (two jobs of one run, or two runs) corrupt each other's
//! images. Each build therefore runs in a private copy of the tree, leased
//! under an exclusive file lock and brought up to date with the tree
//! (files whose size or modification time differ) before the build. The
//! copies live in jopcal's cache and are reused, so only the first build
//! pays for the copy (the jop-devel tree: 57 MB, 4,950 files).
//!
//! [`fingerprint`] names what a tree's builds read, for a cache of images:
//! every file's path, size and modification time, build outputs excluded.

use sha2::{Digest, Sha256};
use std::fs::File;
use std::io;
use std::path::{Path, PathBuf};
use std::time::SystemTime;

/// Where the tree's build writes the runtime's options (`Config.USE_SCOPES`,
/// ..., which the collector reads): its Makefile's `jop_config` target, the
/// first step of every image build, relative to the tree.
pub const CONFIG_SOURCE: &str = "java/target/src/common/com/jopdesign/sys/Config.java";

/// At most this many copies of one tree: more jobs than this wait for a lease.
const MAX_COPIES: usize = 32;

/// Whether `rel` (a path relative to the tree's root) is written by the
/// tree's image build, not read by it: never copied, never fingerprinted.
pub fn is_build_output(rel: &Path) -> bool {
    let s = rel.to_string_lossy();
    let s = s.as_ref();
    s == ".git"
        || s.starts_with(".git/")
        || s == "java/target/dist"
        || s.starts_with("java/target/dist/")
        || s == CONFIG_SOURCE
        // jop2dat writes mem_main.dat (and its kin) in the root, then copies it to modelsim/.
        || ((!s.contains('/') || s.starts_with("modelsim/") && s.matches('/').count() == 1)
            && s.ends_with(".dat"))
}

/// One file of a tree as the fingerprint and the sync see it.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Entry {
    rel: PathBuf,
    len: u64,
    modified: Option<SystemTime>,
    symlink: bool,
}

/// Every file (and symbolic link) of `tree` that a build reads, sorted by path.
fn entries(tree: &Path) -> io::Result<Vec<Entry>> {
    let mut out = Vec::new();
    let walk = walkdir::WalkDir::new(tree)
        .follow_links(false)
        .sort_by_file_name()
        .into_iter()
        .filter_entry(|e| {
            e.path()
                .strip_prefix(tree)
                .map_or(true, |rel| rel.as_os_str().is_empty() || !is_build_output(rel))
        });
    for e in walk {
        let e = e.map_err(io::Error::other)?;
        if e.file_type().is_dir() {
            continue;
        }
        let meta = e.path().symlink_metadata()?;
        let rel = e.path().strip_prefix(tree).map_err(io::Error::other)?.to_path_buf();
        out.push(Entry {
            rel,
            len: meta.len(),
            modified: meta.modified().ok(),
            symlink: meta.file_type().is_symlink(),
        });
    }
    Ok(out)
}

/// A hash (16 hex digits) of every file a build of `tree` reads: its path,
/// size and modification time. Any edit of the tree changes it; a build
/// (whose outputs are excluded) does not.
pub fn fingerprint(tree: &Path) -> io::Result<String> {
    let mut h = Sha256::new();
    for e in entries(tree)? {
        h.update(e.rel.to_string_lossy().as_bytes());
        h.update([0]);
        h.update(e.len.to_le_bytes());
        let t = e
            .modified
            .and_then(|m| m.duration_since(SystemTime::UNIX_EPOCH).ok())
            .map_or(0, |d| d.as_nanos());
        h.update(t.to_le_bytes());
        h.update([u8::from(e.symlink)]);
    }
    Ok(format!("{:x}", h.finalize())[..16].to_string())
}

/// A hash (16 hex digits) of the paths and contents of every file under
/// `dir`: what a generated suite is, wherever it was written.
pub fn content_hash(dir: &Path) -> io::Result<String> {
    let mut h = Sha256::new();
    for e in walkdir::WalkDir::new(dir).sort_by_file_name() {
        let e = e.map_err(io::Error::other)?;
        if !e.file_type().is_file() {
            continue;
        }
        let rel = e.path().strip_prefix(dir).map_err(io::Error::other)?;
        h.update(rel.to_string_lossy().as_bytes());
        h.update([0]);
        let bytes = std::fs::read(e.path())?;
        h.update((bytes.len() as u64).to_le_bytes());
        h.update(&bytes);
    }
    Ok(format!("{:x}", h.finalize())[..16].to_string())
}

/// What [`sync`] did.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Synced {
    /// Files copied (new or changed).
    pub copied: usize,
    /// Files removed (gone from the tree).
    pub removed: usize,
}

/// Makes `copy` hold what `tree` holds (build outputs aside): files new or
/// changed in size or modification time are copied (with the tree's time,
/// so that the next sync skips them), files gone from the tree removed.
pub fn sync(tree: &Path, copy: &Path) -> io::Result<Synced> {
    let want = entries(tree)?;
    let have = if copy.is_dir() { entries(copy)? } else { Vec::new() };
    let mut done = Synced::default();
    let have_map: std::collections::BTreeMap<&Path, &Entry> = have.iter().map(|e| (e.rel.as_path(), e)).collect();
    for e in &want {
        if have_map.get(e.rel.as_path()).is_some_and(|h| *h == e) {
            continue;
        }
        let (from, to) = (tree.join(&e.rel), copy.join(&e.rel));
        if let Some(parent) = to.parent() {
            std::fs::create_dir_all(parent)?;
        }
        if to.symlink_metadata().is_ok() {
            std::fs::remove_file(&to)?;
        }
        if e.symlink {
            std::os::unix::fs::symlink(std::fs::read_link(&from)?, &to)?;
        } else {
            std::fs::copy(&from, &to)?;
            if let Some(m) = e.modified {
                File::options().write(true).open(&to)?.set_modified(m)?;
            }
        }
        done.copied += 1;
    }
    let want_set: std::collections::BTreeSet<&Path> = want.iter().map(|e| e.rel.as_path()).collect();
    for e in &have {
        if !want_set.contains(e.rel.as_path()) {
            std::fs::remove_file(copy.join(&e.rel))?;
            done.removed += 1;
        }
    }
    Ok(done)
}

/// The private copies of one tree, kept in `<cache>/trees/<hash of the tree's path>/`.
#[derive(Debug, Clone)]
pub struct TreeCopies {
    tree: PathBuf,
    dir: PathBuf,
}

/// A tree to build in, held exclusively until dropped: a copy brought up
/// to date ([`TreeCopies::lease`]) or the tree itself ([`TreeCopies::lock_tree`]).
#[derive(Debug)]
pub struct Lease {
    /// The root to build in.
    pub dir: PathBuf,
    /// What bringing it up to date took (nothing for the tree itself).
    pub synced: Synced,
    _lock: File,
}

impl TreeCopies {
    /// The copies of `tree` kept under `cache`.
    pub fn new(tree: &Path, cache: &Path) -> io::Result<TreeCopies> {
        let tree = std::fs::canonicalize(tree)?;
        let key = format!("{:x}", Sha256::digest(tree.to_string_lossy().as_bytes()));
        let dir = cache.join("trees").join(&key[..16]);
        std::fs::create_dir_all(&dir)?;
        // Say whose copies these are, for a user looking into the cache.
        let origin = dir.join("TREE");
        if !origin.is_file() {
            jopcal_output::atomic::write_atomic(&origin, format!("{}\n", tree.display()).as_bytes())?;
        }
        Ok(TreeCopies { tree, dir })
    }

    /// The tree the copies are of.
    pub fn tree(&self) -> &Path {
        &self.tree
    }

    /// A copy no other build holds (waiting for one when [`MAX_COPIES`]
    /// are busy), brought up to date with the tree.
    pub fn lease(&self) -> io::Result<Lease> {
        let lock_file = |k: usize| {
            File::options()
                .create(true)
                .truncate(false)
                .write(true)
                .open(self.dir.join(format!("copy-{k}.lock")))
        };
        let mut held = None;
        for k in 0..MAX_COPIES {
            let f = lock_file(k)?;
            match f.try_lock() {
                Ok(()) => {
                    held = Some((k, f));
                    break;
                }
                Err(std::fs::TryLockError::WouldBlock) => continue,
                Err(std::fs::TryLockError::Error(e)) => return Err(e),
            }
        }
        let (k, lock) = match held {
            Some(h) => h,
            None => {
                let k = std::process::id() as usize % MAX_COPIES;
                let f = lock_file(k)?;
                f.lock()?;
                (k, f)
            }
        };
        let dir = self.dir.join(format!("copy-{k}"));
        let synced = sync(&self.tree, &dir)?;
        Ok(Lease {
            dir,
            synced,
            _lock: lock,
        })
    }

    /// The tree itself, held exclusively (by every jopcal on this machine
    /// that uses the same cache) until dropped: for builds that cannot run
    /// in a copy (a template that names the tree's path instead of `{home}`).
    pub fn lock_tree(&self) -> io::Result<Lease> {
        let f = File::options()
            .create(true)
            .truncate(false)
            .write(true)
            .open(self.dir.join("tree.lock"))?;
        f.lock()?;
        Ok(Lease {
            dir: self.tree.clone(),
            synced: Synced::default(),
            _lock: f,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(p: &Path, s: &str) {
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, s).unwrap();
    }

    #[test]
    fn build_outputs_are_neither_copied_nor_fingerprinted() {
        for out in [
            ".git/HEAD",
            "java/target/dist/bin/X.jop",
            "java/target/src/common/com/jopdesign/sys/Config.java",
            "mem_main.dat",
            "modelsim/mem_main.dat",
        ] {
            assert!(is_build_output(Path::new(out)), "{out}");
        }
        for input in [
            "Makefile",
            "java/target/src/common/com/jopdesign/sys/Const.java",
            "java/tools/dist/lib/jop-tools.jar",
            "vhdl/mem/x.dat",
            "java/target/distx/a",
        ] {
            assert!(!is_build_output(Path::new(input)), "{input}");
        }
    }

    #[test]
    fn a_copy_follows_the_tree_and_leases_exclude_each_other() {
        let tmp = tempfile::tempdir().unwrap();
        let (tree, cache) = (tmp.path().join("jop"), tmp.path().join("cache"));
        write(&tree.join("Makefile"), "all:\n");
        write(&tree.join("java/target/src/A.java"), "class A {}");
        write(&tree.join("java/target/dist/bin/Old.jop"), "1");
        let before = fingerprint(&tree).unwrap();
        let copies = TreeCopies::new(&tree, &cache).unwrap();
        let a = copies.lease().unwrap();
        assert_eq!(a.synced, Synced { copied: 2, removed: 0 });
        assert!(a.dir.join("java/target/src/A.java").is_file());
        assert!(!a.dir.join("java/target/dist").exists(), "outputs stay out");
        // A second build at the same time gets another copy.
        let b = copies.lease().unwrap();
        assert_ne!(a.dir, b.dir);
        let a_dir = a.dir.clone();
        drop(a);
        drop(b);
        // A build's outputs do not change the fingerprint; an edit does.
        write(&tree.join("java/target/dist/bin/New.jop"), "2");
        write(&tree.join("mem_main.dat"), "3");
        assert_eq!(fingerprint(&tree).unwrap(), before);
        write(&tree.join("java/target/src/B.java"), "class B {}");
        std::fs::remove_file(tree.join("java/target/src/A.java")).unwrap();
        assert_ne!(fingerprint(&tree).unwrap(), before);
        // The copy written by a build of its own, then brought up to date.
        write(&a_dir.join("java/target/dist/bin/Mine.jop"), "4");
        let again = copies.lease().unwrap();
        assert_eq!(again.dir, a_dir, "the first free copy is reused");
        assert_eq!(again.synced, Synced { copied: 1, removed: 1 });
        assert!(again.dir.join("java/target/src/B.java").is_file());
        assert!(!again.dir.join("java/target/src/A.java").exists());
        assert!(
            again.dir.join("java/target/dist/bin/Mine.jop").is_file(),
            "outputs are the build's own"
        );
        drop(again);
        assert_eq!(copies.lease().unwrap().synced, Synced::default(), "nothing to do");
    }
}
