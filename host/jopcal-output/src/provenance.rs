//! What produced a result: jopcal's version and commit, the command line,
//! and the facts a run learns as it goes (the JDK, the JOP tree and its
//! commit, the target and its configuration). Every result that is kept
//! says them: `summary.json`, `target.json`, `measurements.csv`'s first
//! line.

use std::collections::BTreeMap;
use std::sync::Mutex;

/// jopcal's version: the crate's, `+<commit>` when built from a git
/// checkout, `.dirty` when that checkout had uncommitted changes.
pub const VERSION: &str = env!("JOPCAL_VERSION");

static FACTS: Mutex<BTreeMap<String, String>> = Mutex::new(BTreeMap::new());

/// Records `fact` (`jdk`, `tree`, `target`, ...) for this run; a later note
/// of the same fact replaces it.
pub fn note(fact: &str, value: impl Into<String>) {
    FACTS
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .insert(fact.to_string(), value.into());
}

/// Everything known now: `jopcal` and `command` first, then the run's facts.
pub fn facts() -> BTreeMap<String, String> {
    let mut all = FACTS.lock().unwrap_or_else(|p| p.into_inner()).clone();
    all.insert("jopcal".into(), VERSION.into());
    all.insert("command".into(), command_line());
    all
}

/// The command line as a shell would take it back (words with spaces or
/// quotes single-quoted).
pub fn command_line() -> String {
    std::env::args()
        .map(|a| {
            if !a.is_empty() && a.chars().all(|c| c.is_ascii_alphanumeric() || "-_./=:,+@%".contains(c)) {
                a
            } else {
                format!("'{}'", a.replace('\'', "'\\''"))
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// The facts as one comment line (`# jopcal 0.1.0+abc; command: ...; jdk: ...`)
/// for the head of a CSV file, whose readers skip `#` lines.
pub fn comment_line() -> String {
    let f = facts();
    let mut parts = vec![format!("jopcal {}", f["jopcal"])];
    parts.extend(
        f.iter()
            .filter(|(k, _)| k.as_str() != "jopcal")
            .map(|(k, v)| format!("{k}: {}", v.replace(['\n', '\r'], " "))),
    );
    format!("# {}\n", parts.join("; "))
}

/// The commit of the git checkout at `dir`, `.dirty` when it has
/// uncommitted changes; `None` where it is not one (an exported tree).
pub fn git_commit(dir: &std::path::Path) -> Option<String> {
    let git = |args: &[&str]| {
        let o = std::process::Command::new("git")
            .arg("-C")
            .arg(dir)
            .args(args)
            .stdin(std::process::Stdio::null())
            .output()
            .ok()?;
        o.status
            .success()
            .then(|| String::from_utf8_lossy(&o.stdout).trim().to_string())
    };
    // Only a checkout whose top is `dir` itself: not the repository it sits in.
    let top = git(&["rev-parse", "--show-toplevel"])?;
    if std::path::Path::new(&top).canonicalize().ok()? != dir.canonicalize().ok()? {
        return None;
    }
    let commit = git(&["rev-parse", "HEAD"])?;
    let dirty = git(&["status", "--porcelain", "--untracked-files=no"]).is_some_and(|s| !s.is_empty());
    Some(format!("{commit}{}", if dirty { ".dirty" } else { "" }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_facts_say_the_version_the_command_and_what_was_noted() {
        note("jdk", "javac 17");
        let f = facts();
        assert_eq!(f["jopcal"], VERSION);
        assert!(VERSION.starts_with(env!("CARGO_PKG_VERSION")));
        assert_eq!(f["jdk"], "javac 17");
        let line = comment_line();
        assert!(line.starts_with(&format!("# jopcal {VERSION}; command: ")), "{line}");
        assert!(line.ends_with("; jdk: javac 17\n"), "{line}");
        // A directory that is no checkout of its own has no commit.
        let d = tempfile::tempdir().unwrap();
        assert_eq!(git_commit(d.path()), None);
    }
}
