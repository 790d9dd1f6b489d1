//! Output files are never changed in place: they are written to a temporary
//! file in the same directory and renamed over the target, so an interrupted
//! or failed run leaves the previous file intact.

use std::fs;
use std::io::{self, Write};
use std::path::Path;

/// Writes `contents` to `path` atomically (temp file + fsync + rename).
pub fn write_atomic(path: &Path, contents: &[u8]) -> io::Result<()> {
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    fs::create_dir_all(dir)?;
    let tmp = temp_sibling(path);
    let result = (|| {
        let mut f = fs::File::create(&tmp)?;
        f.write_all(contents)?;
        f.sync_all()?;
        fs::rename(&tmp, path)
    })();
    if result.is_err() {
        let _ = fs::remove_file(&tmp);
    }
    result
}

/// The name of the temporary file used while `path` is being written.
pub fn temp_sibling(path: &Path) -> std::path::PathBuf {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "output".to_string());
    path.with_file_name(format!(".{name}.tmp-{}", std::process::id()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn replaces_content_and_leaves_no_temp_file() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("a.csv");
        write_atomic(&p, b"one").unwrap();
        write_atomic(&p, b"two").unwrap();
        assert_eq!(fs::read(&p).unwrap(), b"two");
        let names: Vec<_> = fs::read_dir(dir.path()).unwrap().collect();
        assert_eq!(names.len(), 1);
    }

    #[test]
    fn failed_write_keeps_previous_file() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("keep.csv");
        fs::write(&p, b"earlier").unwrap();
        // A directory where the temp file should go makes the write fail.
        fs::create_dir(temp_sibling(&p)).unwrap();
        assert!(write_atomic(&p, b"later").is_err());
        assert_eq!(fs::read(&p).unwrap(), b"earlier");
    }
}
