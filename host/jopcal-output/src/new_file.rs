//! The rule for `--out FILE`: jopcal never replaces a file it did not just
//! write. A verb that writes named files checks all of them (the file and
//! what goes beside it) before it starts, and refuses with one line that
//! names the first one found.

use std::fmt;
use std::path::{Path, PathBuf};

/// A file `--out` would have replaced.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Exists {
    /// The option that named the file (`--out`, `--junit`).
    pub option: &'static str,
    /// The path given to it.
    pub out: PathBuf,
    /// The existing file (`out` itself or one written beside it).
    pub existing: PathBuf,
}

impl fmt::Display for Exists {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.existing == self.out {
            write!(
                f,
                "{} {}: the file exists already; name a new file",
                self.option,
                self.out.display()
            )
        } else {
            write!(
                f,
                "{} {}: {} (written beside it) exists already; name a new file or move it",
                self.option,
                self.out.display(),
                self.existing.display()
            )
        }
    }
}

impl std::error::Error for Exists {}

/// `Ok` when neither `out` (named by `option`) nor any of `beside` exists.
pub fn ensure_new(option: &'static str, out: &Path, beside: &[PathBuf]) -> Result<(), Exists> {
    std::iter::once(out)
        .chain(beside.iter().map(PathBuf::as_path))
        .find(|p| p.symlink_metadata().is_ok())
        .map_or(Ok(()), |p| {
            Err(Exists {
                option,
                out: out.to_path_buf(),
                existing: p.to_path_buf(),
            })
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_the_first_existing_file() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("good.toml");
        let json = dir.path().join("calibration.json");
        assert_eq!(ensure_new("--out", &out, std::slice::from_ref(&json)), Ok(()));
        std::fs::write(&json, "{}").unwrap();
        let e = ensure_new("--out", &out, std::slice::from_ref(&json)).unwrap_err();
        assert_eq!(e.existing, json);
        assert!(e
            .to_string()
            .contains("calibration.json (written beside it) exists already"));
        std::fs::write(&out, "").unwrap();
        let e = ensure_new("--out", &out, &[json]).unwrap_err();
        assert!(e
            .to_string()
            .ends_with("good.toml: the file exists already; name a new file"));
    }
}
