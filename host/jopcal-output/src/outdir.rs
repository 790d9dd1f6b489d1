//! Output directories. A verb writes into `--out DIR`; if DIR already holds the
//! files of an earlier run (it has a `.jopcal-run` stamp), those files are moved
//! into `DIR/previous/<stamp>/` first, so no earlier result is ever overwritten.
//! A directory that holds anything else (the user's own files) is refused:
//! jopcal never replaces a file it did not write.

use std::fs;
use std::io;
use std::path::{Path, PathBuf};

/// Marks a directory as holding one jopcal run; its content is the run's stamp.
pub const STAMP_FILE: &str = ".jopcal-run";
/// Where earlier runs are kept inside an output directory.
pub const PREVIOUS_DIR: &str = "previous";

/// An output directory prepared for a new run.
#[derive(Debug, Clone)]
pub struct OutDir {
    pub path: PathBuf,
    /// Where the earlier run's files went, if there was one.
    pub archived: Option<PathBuf>,
}

impl OutDir {
    /// Creates `path` if missing and archives an earlier run found in it;
    /// refuses a directory holding files of no jopcal run ([`foreign_files`]).
    pub fn prepare(path: &Path, stamp: &str) -> io::Result<OutDir> {
        if let Some(files) = foreign_files(path) {
            return Err(io::Error::new(io::ErrorKind::AlreadyExists, refusal(path, &files)));
        }
        fs::create_dir_all(path)?;
        let stamp_path = path.join(STAMP_FILE);
        let mut archived = None;
        if stamp_path.exists() {
            let old = fs::read_to_string(&stamp_path).unwrap_or_default();
            let old = old.trim();
            let mut dest = path
                .join(PREVIOUS_DIR)
                .join(if old.is_empty() { "unknown" } else { old });
            let mut n = 1;
            while dest.exists() {
                n += 1;
                dest = path.join(PREVIOUS_DIR).join(format!("{old}-{n}"));
            }
            fs::create_dir_all(&dest)?;
            for entry in fs::read_dir(path)? {
                let entry = entry?;
                if entry.file_name() == PREVIOUS_DIR {
                    continue;
                }
                fs::rename(entry.path(), dest.join(entry.file_name()))?;
            }
            archived = Some(dest);
        }
        fs::write(&stamp_path, format!("{stamp}\n"))?;
        crate::interrupt::run_directory(path);
        Ok(OutDir {
            path: path.to_owned(),
            archived,
        })
    }

    /// A path inside the directory.
    pub fn join(&self, rel: impl AsRef<Path>) -> PathBuf {
        self.path.join(rel)
    }
}

/// The entries of `dir` (a few, by name) when it exists, is not empty and
/// is not an earlier jopcal run (no [`STAMP_FILE`]): files of the user's
/// that a run writing there would replace.
pub fn foreign_files(dir: &Path) -> Option<Vec<String>> {
    if dir.join(STAMP_FILE).exists() {
        return None;
    }
    let mut names: Vec<String> = fs::read_dir(dir)
        .ok()?
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    (!names.is_empty()).then_some(names)
}

/// The one line that refuses `dir`, naming what is in it.
pub fn refusal(dir: &Path, files: &[String]) -> String {
    let shown: Vec<&str> = files.iter().take(3).map(String::as_str).collect();
    let more = if files.len() > 3 {
        format!(" and {} more", files.len() - 3)
    } else {
        String::new()
    };
    format!(
        "--out {}: the directory holds files no jopcal run wrote ({}{more}), which a run would replace: name a new or empty directory (or an earlier run's, whose files are moved to previous/)",
        dir.display(),
        shown.join(", ")
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn earlier_run_is_archived_not_overwritten() {
        let _serial = crate::interrupt::test_serial();
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("run");
        let first = OutDir::prepare(&out, "20260101-000000").unwrap();
        assert!(first.archived.is_none());
        fs::write(first.join("measurements.csv"), "first").unwrap();

        let second = OutDir::prepare(&out, "20260101-000100").unwrap();
        let kept = second.archived.unwrap();
        assert_eq!(kept, out.join("previous").join("20260101-000000"));
        assert_eq!(fs::read_to_string(kept.join("measurements.csv")).unwrap(), "first");
        assert!(!out.join("measurements.csv").exists());

        // Same stamp again (two runs in one second) gets a distinct folder.
        OutDir::prepare(&out, "20260101-000100").unwrap();
        let third = OutDir::prepare(&out, "x").unwrap();
        assert_eq!(third.archived.unwrap(), out.join("previous").join("20260101-000100-2"));
        crate::interrupt::run_finished();
    }

    #[test]
    fn a_directory_of_the_users_is_refused_and_left_as_it_was() {
        let _serial = crate::interrupt::test_serial();
        let dir = tempfile::tempdir().unwrap();
        fs::write(dir.path().join("accuracy.md"), "mine").unwrap();
        let e = OutDir::prepare(dir.path(), "20260101-000000").unwrap_err();
        assert!(
            e.to_string().contains("holds files no jopcal run wrote (accuracy.md)"),
            "{e}"
        );
        assert_eq!(fs::read_to_string(dir.path().join("accuracy.md")).unwrap(), "mine");
        assert!(!dir.path().join(STAMP_FILE).exists());
        // Empty, or missing: fine.
        let empty = dir.path().join("empty");
        fs::create_dir(&empty).unwrap();
        assert!(foreign_files(&empty).is_none() && foreign_files(&dir.path().join("none")).is_none());
        crate::interrupt::run_finished();
    }
}
