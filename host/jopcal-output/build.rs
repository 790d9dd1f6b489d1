//! Records the commit jopcal is built from (and whether the checkout had
//! changes) for `--version` and every result's provenance. Outside a git
//! checkout (a source tarball) the version is the crate's alone.

use std::path::Path;
use std::process::Command;

fn git(root: &Path, args: &[&str]) -> Option<String> {
    let o = Command::new("git").arg("-C").arg(root).args(args).output().ok()?;
    o.status
        .success()
        .then(|| String::from_utf8_lossy(&o.stdout).trim().to_string())
}

fn main() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    // A commit or a change staged re-runs this; an edit to a crate rebuilds
    // that crate only, so "dirty" is as of this crate's last build.
    for f in [".git/HEAD", ".git/index", ".git/refs/heads"] {
        println!("cargo:rerun-if-changed={}", root.join(f).display());
    }
    let version = env!("CARGO_PKG_VERSION");
    let full = match git(&root, &["rev-parse", "--short=12", "HEAD"]) {
        Some(commit) if !commit.is_empty() => {
            let dirty = git(&root, &["status", "--porcelain", "--untracked-files=no"]).is_some_and(|s| !s.is_empty());
            format!("{version}+{commit}{}", if dirty { ".dirty" } else { "" })
        }
        _ => version.to_string(),
    };
    println!("cargo:rustc-env=JOPCAL_VERSION={full}");
}
