//! Cache directories: named by a hash of what they are made from, and built
//! once, so that a run that fails or is killed half-way leaves nothing that
//! looks done and two runs that build one at once both end with it whole.

use std::io;
use std::path::Path;

/// The file that marks a cache directory complete.
const COMPLETE: &str = ".complete";

/// SHA-256 (hex) over every file below `dir`: relative path and bytes, in path order.
pub fn content_hash(dir: &Path) -> io::Result<String> {
    use sha2::{Digest, Sha256};
    let mut files = Vec::new();
    for e in walkdir::WalkDir::new(dir) {
        let e = e.map_err(|e| io::Error::other(format!("{}: {e}", dir.display())))?;
        if !e.file_type().is_dir() {
            files.push(e.into_path());
        }
    }
    files.sort();
    let mut h = Sha256::new();
    for f in files {
        h.update(f.strip_prefix(dir).unwrap_or(&f).to_string_lossy().as_bytes());
        h.update([0]);
        h.update(std::fs::read(&f).map_err(|e| io::Error::other(format!("{}: {e}", f.display())))?);
        h.update([0]);
    }
    Ok(h.finalize().iter().map(|b| format!("{b:02x}")).collect())
}

/// `e` with what was being done, to which path.
fn said<'a>(what: &'a str, path: &'a Path) -> impl Fn(io::Error) -> io::Error + 'a {
    move |e| io::Error::new(e.kind(), format!("{what} {}: {e}", path.display()))
}

/// Builds the cache directory `dir` once: `build` fills a private
/// directory beside it, which is marked complete and renamed into place. A
/// complete `dir` (another run's, or an earlier one's) is kept as it is; an
/// incomplete one (left by a run that crashed mid-rename) is replaced.
pub fn build_once<E: From<io::Error>>(dir: &Path, build: impl FnOnce(&Path) -> Result<(), E>) -> Result<(), E> {
    if dir.join(COMPLETE).is_file() {
        return Ok(());
    }
    let parent = dir.parent().unwrap_or(Path::new("."));
    std::fs::create_dir_all(parent).map_err(said("creating", parent))?;
    let tmp = parent.join(format!(
        ".writing-{}-{}",
        std::process::id(),
        dir.file_name().map_or("x".into(), |n| n.to_string_lossy())
    ));
    if tmp.exists() {
        std::fs::remove_dir_all(&tmp).map_err(said("removing", &tmp))?;
    }
    std::fs::create_dir_all(&tmp).map_err(said("creating", &tmp))?;
    let built = build(&tmp).and_then(|()| {
        crate::atomic::write_atomic(&tmp.join(COMPLETE), b"").map_err(|e| said("writing in", &tmp)(e).into())
    });
    if let Err(e) = built {
        let _ = std::fs::remove_dir_all(&tmp);
        return Err(e);
    }
    if dir.exists() && !dir.join(COMPLETE).is_file() {
        let _ = std::fs::remove_dir_all(dir);
    }
    if let Err(e) = std::fs::rename(&tmp, dir) {
        let _ = std::fs::remove_dir_all(&tmp);
        // A concurrent run published the same content first.
        if !dir.join(COMPLETE).is_file() {
            return Err(said("publishing", dir)(e).into());
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_failed_build_leaves_nothing_and_a_finished_one_is_not_built_again() {
        let root = tempfile::tempdir().unwrap();
        let dir = root.path().join("entry");
        let failed: io::Result<()> = build_once(&dir, |tmp| {
            std::fs::create_dir_all(tmp)?;
            std::fs::write(tmp.join("half"), b"x")?;
            Err(io::Error::other("stopped"))
        });
        assert!(failed.is_err());
        assert!(!dir.exists());
        assert_eq!(
            std::fs::read_dir(root.path()).unwrap().count(),
            0,
            "the private directory is gone"
        );
        build_once(&dir, |tmp| {
            std::fs::create_dir_all(tmp)?;
            std::fs::write(tmp.join("whole"), b"y")
        })
        .unwrap();
        let again: io::Result<()> = build_once(&dir, |_| panic!("built twice"));
        again.unwrap();
        assert_eq!(std::fs::read(dir.join("whole")).unwrap(), b"y");
        let before = content_hash(&dir).unwrap();
        std::fs::write(dir.join("whole"), b"z").unwrap();
        assert_ne!(content_hash(&dir).unwrap(), before, "the hash follows the bytes");
    }
}
