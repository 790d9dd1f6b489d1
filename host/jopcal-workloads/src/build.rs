//! Compiling a suite with `javac --release 8` (or the compiler its manifest
//! names), cached by content: the class files live in
//! `<cache>/classes/<hash>/`, where the hash covers every source file (path
//! and bytes), the compiler, its version and the flags. An unchanged suite
//! is never recompiled; a half-built cache entry is never used (it is built in
//! a temporary directory and renamed into place).

pub use crate::error::BuildError;
use crate::jdk::Jdk;
use jopcal_measure::children::InGroup;
use sha2::{Digest, Sha256};
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

/// Source folders of a firmware tree, relative to its root.
pub const SOURCE_DIRS: [&str; 2] = ["src", "host-stubs"];
/// The javac flags for sources in `encoding`: Java 8 class files (version 52), as the suite targets.
pub fn javac_flags(encoding: crate::SourceEncoding) -> [&'static str; 4] {
    ["--release", "8", "-encoding", encoding.javac_name()]
}
const COMPLETE: &str = ".complete";

/// Class files of a built suite.
#[derive(Debug, Clone)]
pub struct BuiltSuite {
    pub classes: PathBuf,
    /// Hex SHA-256 of sources + compiler (first 16 digits name the cache entry).
    pub hash: String,
    /// True when the class files came from the cache.
    pub cached: bool,
    /// The compiler that made them (its command and version line).
    pub compiler: String,
}

/// The compiler a suite is built with: its command line up to `-d` (the
/// flags and `-encoding`), and what identifies it in the hash (its version line).
pub struct Compiler {
    pub argv: Vec<String>,
    pub identity: String,
}

impl Compiler {
    /// The suite's own compiler when it names one (a `host_javac`), else the
    /// JDK's `javac --release 8`; either with `-encoding` for `encoding`.
    pub fn of(suite_compiler: &[String], jdk: &Jdk, encoding: crate::SourceEncoding) -> Result<Compiler, BuildError> {
        let Some(program) = suite_compiler.first() else {
            let mut argv = vec![jdk.javac.to_string_lossy().into_owned()];
            argv.extend(javac_flags(encoding).iter().map(|f| f.to_string()));
            return Ok(Compiler {
                argv,
                identity: jdk.version.clone(),
            });
        };
        let failed = |message: String| BuildError::Compiler {
            program: program.clone(),
            message,
        };
        let out = Command::new(program)
            .arg("-version")
            .output()
            .map_err(|e| failed(e.to_string()))?;
        let text = String::from_utf8_lossy(if out.stdout.is_empty() {
            &out.stderr
        } else {
            &out.stdout
        })
        .into_owned();
        let version = text.lines().next().unwrap_or("").trim().to_string();
        if !out.status.success() || version.is_empty() {
            return Err(failed(format!("`{program} -version` printed `{}`", text.trim())));
        }
        let mut argv = suite_compiler.to_vec();
        argv.extend(["-encoding".to_string(), encoding.javac_name().to_string()]);
        Ok(Compiler {
            identity: format!("{} | {version}", suite_compiler.join(" ")),
            argv,
        })
    }
}

fn io(path: &Path) -> impl FnOnce(std::io::Error) -> BuildError + '_ {
    move |source| BuildError::Io {
        path: path.to_owned(),
        source,
    }
}

/// Appends every `.java` file below `dir` as (path relative to `root`, absolute).
fn walk(dir: &Path, root: &Path, out: &mut Vec<(String, PathBuf)>) -> Result<(), BuildError> {
    for entry in walkdir::WalkDir::new(dir) {
        let entry = entry.map_err(|e| io(dir)(e.into()))?;
        let path = entry.into_path();
        if path.is_file() && path.extension().is_some_and(|e| e == "java") {
            let rel = path
                .strip_prefix(root)
                .unwrap_or(&path)
                .to_string_lossy()
                .replace('\\', "/");
            out.push((rel, path));
        }
    }
    Ok(())
}

/// All `.java` files below `root`'s source folders, sorted, as (relative, absolute).
pub fn java_sources(root: &Path) -> Result<Vec<(String, PathBuf)>, BuildError> {
    let mut out = Vec::new();
    for d in SOURCE_DIRS {
        let dir = root.join(d);
        if dir.is_dir() {
            walk(&dir, root, &mut out)?;
        }
    }
    if out.is_empty() {
        return Err(BuildError::NoSources(root.to_owned()));
    }
    out.sort();
    Ok(out)
}

/// The content hash of a suite as a given javac would compile it.
pub fn suite_hash(
    sources: &[(String, PathBuf)],
    javac_version: &str,
    encoding: crate::SourceEncoding,
) -> Result<String, BuildError> {
    let mut h = Sha256::new();
    h.update(javac_version.as_bytes());
    h.update([0]);
    h.update(javac_flags(encoding).join(" ").as_bytes());
    h.update([0]);
    for (rel, abs) in sources {
        let bytes = fs::read(abs).map_err(io(abs))?;
        h.update(rel.as_bytes());
        h.update([0]);
        h.update((bytes.len() as u64).to_le_bytes());
        h.update(&bytes);
    }
    Ok(h.finalize().iter().map(|b| format!("{b:02x}")).collect())
}

/// Compiles the suite under `root` (or reuses the cache under `cache_root`).
pub fn build_suite(root: &Path, jdk: &Jdk, cache_root: &Path) -> Result<BuiltSuite, BuildError> {
    build_suite_without(root, jdk, cache_root, &[])
}

/// The source file of main class `main`, relative to a suite's root.
fn main_source(main: &str) -> String {
    format!("src/{}.java", main.replace('.', "/"))
}

/// A suite built with some workloads left out because they do not compile.
#[derive(Debug, Clone)]
pub struct LenientBuild {
    pub built: BuiltSuite,
    /// `(workload, javac's first error)` of each workload left out.
    pub left_out: Vec<(String, String)>,
}

/// Compiles the suite; when javac fails and the suite has more than one
/// workload, finds the workloads whose main class does not compile with the
/// suite's shared sources (each tried alone) and builds the rest. A suite in
/// which every workload fails, or whose shared sources fail, is an error.
pub fn build_suite_lenient(root: &Path, jdk: &Jdk, cache_root: &Path) -> Result<LenientBuild, BuildError> {
    let first = match build_suite(root, jdk, cache_root) {
        Ok(built) => {
            return Ok(LenientBuild {
                built,
                left_out: Vec::new(),
            })
        }
        Err(e @ BuildError::Javac { .. }) => e,
        Err(e) => return Err(e),
    };
    let Ok(suite) = crate::suite::Suite::load(root) else {
        return Err(first);
    };
    let mains: Vec<&str> = suite.workloads.iter().map(|w| w.main.as_str()).collect();
    if mains.len() < 2 {
        return Err(first);
    }
    let mut left_out = Vec::new();
    for w in &suite.workloads {
        let others: Vec<&str> = mains.iter().copied().filter(|m| *m != w.main).collect();
        if let Err(e @ BuildError::Javac { .. }) = build_suite_without(root, jdk, cache_root, &others) {
            left_out.push((w.name.clone(), w.main.clone(), e.to_string()));
        }
    }
    if left_out.is_empty() || left_out.len() == mains.len() {
        return Err(first);
    }
    let excluded: Vec<&str> = left_out.iter().map(|(_, m, _)| m.as_str()).collect();
    let built = build_suite_without(root, jdk, cache_root, &excluded)?;
    Ok(LenientBuild {
        built,
        left_out: left_out.into_iter().map(|(n, _, e)| (n, e)).collect(),
    })
}

/// Compiles the suite under `root` without the source files of the main
/// classes in `excluded` (or reuses the cache under `cache_root`).
pub fn build_suite_without(
    root: &Path,
    jdk: &Jdk,
    cache_root: &Path,
    excluded: &[&str],
) -> Result<BuiltSuite, BuildError> {
    let skip: Vec<String> = excluded.iter().map(|m| main_source(m)).collect();
    let sources: Vec<(String, PathBuf)> = java_sources(root)?
        .into_iter()
        .filter(|(rel, _)| !skip.contains(rel))
        .collect();
    // A generated suite (a JOP tree's benchmarks) compiles its own sources and
    // takes the rest from the manifest's source path; those files count in the hash.
    let (sourcepath, encoding, suite_compiler) = crate::suite::Suite::load(root)
        .map(|s| (s.sourcepath, s.encoding, s.compiler))
        .unwrap_or_default();
    let compiler = Compiler::of(&suite_compiler, jdk, encoding)?;
    let mut hashed = sources.clone();
    for (i, dir) in sourcepath.iter().enumerate() {
        let mut found = Vec::new();
        walk(dir, dir, &mut found)?;
        found.sort();
        hashed.extend(
            found
                .into_iter()
                .map(|(rel, abs)| (format!("sourcepath{i}:{rel}"), abs)),
        );
    }
    let hash = suite_hash(&hashed, &compiler.identity, encoding)?;
    let classes_root = cache_root.join("classes");
    let dest = classes_root.join(&hash[..16]);
    if dest.join(COMPLETE).is_file() {
        return Ok(BuiltSuite {
            classes: dest,
            hash,
            cached: true,
            compiler: compiler.identity,
        });
    }
    fs::create_dir_all(&classes_root).map_err(io(&classes_root))?;
    let tmp = classes_root.join(format!(".building-{}-{}", std::process::id(), &hash[..16]));
    if tmp.exists() {
        fs::remove_dir_all(&tmp).map_err(io(&tmp))?;
    }
    fs::create_dir_all(&tmp).map_err(io(&tmp))?;
    let mut javac = Command::new(&compiler.argv[0]);
    javac.args(&compiler.argv[1..]).arg("-d").arg(&tmp);
    if !sourcepath.is_empty() {
        let roots = SOURCE_DIRS
            .iter()
            .map(|d| root.join(d))
            .chain(sourcepath.iter().cloned());
        javac
            .arg("-sourcepath")
            .arg(std::env::join_paths(roots).map_err(|e| BuildError::Io {
                path: root.to_owned(),
                source: std::io::Error::new(std::io::ErrorKind::InvalidInput, e),
            })?);
    }
    let out = javac
        .args(sources.iter().map(|(_, abs)| abs))
        .output_in_group()
        .map_err(|e| BuildError::Compiler {
            program: compiler.argv[0].clone(),
            message: e.to_string(),
        })?;
    if !out.status.success() {
        let _ = fs::remove_dir_all(&tmp);
        let text = String::from_utf8_lossy(&out.stderr);
        return Err(javac_error(&text));
    }
    fs::write(tmp.join(COMPLETE), &hash).map_err(io(&tmp))?;
    if dest.exists() {
        // A stale, incomplete entry (a crash mid-build before this scheme) or a
        // concurrent build that won the race: keep a complete one, replace otherwise.
        if dest.join(COMPLETE).is_file() {
            let _ = fs::remove_dir_all(&tmp);
            return Ok(BuiltSuite {
                classes: dest,
                hash,
                cached: true,
                compiler: compiler.identity,
            });
        }
        fs::remove_dir_all(&dest).map_err(io(&dest))?;
    }
    fs::rename(&tmp, &dest).map_err(io(&dest))?;
    Ok(BuiltSuite {
        classes: dest,
        hash,
        cached: false,
        compiler: compiler.identity,
    })
}

/// ecj's `N. ERROR in FILE (at line L)` blocks of `text`, each read as
/// `FILE:L: error: message` (javac's form).
pub fn ecj_errors(text: &str) -> Vec<String> {
    let lines: Vec<&str> = text.lines().collect();
    lines
        .iter()
        .enumerate()
        .filter_map(|(i, l)| {
            let (_, rest) = l.split_once(". ERROR in ")?;
            let (file, at) = rest.rsplit_once(" (at line ")?;
            let line = at.trim_end_matches(')');
            // The source line and the caret line are indented; the message follows.
            let message = lines[i + 1..]
                .iter()
                .find(|m| !m.starts_with('\t') && !m.trim().is_empty())
                .map_or("", |m| m.trim());
            Some(format!("{file}:{line}: error: {message}"))
        })
        .collect()
}

/// Condenses javac's diagnostics to one line: the first `file:line: error: ...`
/// (ecj's blocks read as javac's, [`ecj_errors`]).
fn javac_error(stderr: &str) -> BuildError {
    let lines: Vec<&str> = stderr.lines().collect();
    let ecj = ecj_errors(stderr);
    let errors = lines.iter().filter(|l| l.contains(": error:")).count() + ecj.len();
    let first = ecj
        .first()
        .map(String::as_str)
        .or_else(|| lines.iter().copied().find(|l| l.contains(": error:")))
        .or_else(|| lines.iter().copied().find(|l| !l.trim().is_empty()))
        .unwrap_or("javac printed nothing")
        .trim()
        .to_string();
    BuildError::Javac {
        errors: errors.max(1),
        first,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hash_changes_with_content_and_compiler() {
        let dir = tempfile::tempdir().unwrap();
        let src = dir.path().join("src");
        fs::create_dir_all(&src).unwrap();
        fs::write(src.join("A.java"), "class A {}").unwrap();
        let s = java_sources(dir.path()).unwrap();
        assert_eq!(s[0].0, "src/A.java");
        let utf8 = crate::SourceEncoding::Utf8;
        let h1 = suite_hash(&s, "javac 17", utf8).unwrap();
        assert_eq!(h1, suite_hash(&s, "javac 17", utf8).unwrap());
        assert_ne!(h1, suite_hash(&s, "javac 21", utf8).unwrap());
        assert_ne!(h1, suite_hash(&s, "javac 17", crate::SourceEncoding::Latin1).unwrap());
        fs::write(src.join("A.java"), "class A { }").unwrap();
        assert_ne!(h1, suite_hash(&s, "javac 17", utf8).unwrap());
    }

    #[test]
    fn ecj_output_condenses_to_first_error() {
        let e = javac_error(
            "----------\n1. ERROR in /s/src/A.java (at line 3)\n\tint x\n\t    ^\nSyntax error, insert \";\" to complete\n----------\n2. ERROR in /s/src/B.java (at line 1)\n\tx\n\t^\nx cannot be resolved\n----------\n2 problems (2 errors)\n",
        );
        assert_eq!(
            e.to_string(),
            "javac failed (2 error(s)); first: /s/src/A.java:3: error: Syntax error, insert \";\" to complete"
        );
    }

    /// A suite whose manifest names a compiler is built with it: ecj with
    /// `-target 1.5` writes class files of version 49, javac --release 8 of 52.
    #[test]
    fn a_suite_names_its_compiler() {
        let Ok(jdk) = Jdk::detect() else {
            eprintln!("skipped: no JDK (scripts/setup installs one)");
            return;
        };
        let dir = tempfile::tempdir().unwrap();
        let src = dir.path().join("src/p");
        fs::create_dir_all(&src).unwrap();
        fs::write(
            src.join("A.java"),
            "package p; public class A { public static void main(String[] a) {} }",
        )
        .unwrap();
        let manifest = |compiler: &str| format!("{compiler}\n[[workload]]\nname = \"A\"\nmain = \"p.A\"\n");
        let major = |b: &BuiltSuite| {
            let bytes = fs::read(b.classes.join("p/A.class")).unwrap();
            u16::from_be_bytes([bytes[6], bytes[7]])
        };
        let cache = dir.path().join("cache");
        fs::write(dir.path().join("suite.toml"), manifest("")).unwrap();
        let javac = build_suite(dir.path(), &jdk, &cache).unwrap();
        assert_eq!(major(&javac), 52);
        fs::write(
            dir.path().join("suite.toml"),
            manifest(r#"compiler = ["ecj", "-source", "1.5", "-target", "1.5", "-nowarn"]"#),
        )
        .unwrap();
        match build_suite(dir.path(), &jdk, &cache) {
            Ok(ecj) => {
                assert_eq!(major(&ecj), 49);
                assert_ne!(ecj.hash, javac.hash, "the compiler is part of the hash");
            }
            Err(BuildError::Compiler { program, .. }) if which("ecj").is_none() => {
                assert_eq!(program, "ecj");
                eprintln!("skipped the ecj half: ecj is not installed (scripts/setup installs it)");
            }
            Err(e) => panic!("{e}"),
        }
        fs::write(
            dir.path().join("suite.toml"),
            manifest(r#"compiler = ["/nonexistent/ecj"]"#),
        )
        .unwrap();
        let e = build_suite(dir.path(), &jdk, &cache).unwrap_err().to_string();
        assert!(
            e.contains("`/nonexistent/ecj` does not run") && e.contains("host_javac"),
            "{e}"
        );
    }

    fn which(name: &str) -> Option<PathBuf> {
        std::env::split_paths(&std::env::var_os("PATH")?)
            .map(|d| d.join(name))
            .find(|p| p.is_file())
    }

    #[test]
    fn javac_output_condenses_to_first_error() {
        let e = javac_error("src/A.java:3: error: ';' expected\n  int x\n       ^\nsrc/B.java:1: error: x\n2 errors\n");
        assert_eq!(
            e.to_string(),
            "javac failed (2 error(s)); first: src/A.java:3: error: ';' expected"
        );
    }

    /// A suite of two workloads, `Good` and `Bad`; `bad_compiles` decides whether Bad does.
    fn two_workloads(dir: &Path, bad_compiles: bool, good_compiles: bool) {
        fs::create_dir_all(dir.join("src/a")).unwrap();
        fs::write(
            dir.join("suite.toml"),
            "[[workload]]\nname = \"Good\"\nmain = \"a.Good\"\nkind = \"k\"\n\n[[workload]]\nname = \"Bad\"\nmain = \"a.Bad\"\nkind = \"k\"\n",
        )
        .unwrap();
        let body = |ok: bool| if ok { "int x = 1;" } else { "int x = ;" };
        fs::write(
            dir.join("src/a/Shared.java"),
            "package a; class Shared { static int one() { return 1; } }",
        )
        .unwrap();
        fs::write(
            dir.join("src/a/Good.java"),
            format!(
                "package a; public class Good {{ public static void main(String[] s) {{ {} Shared.one(); }} }}",
                body(good_compiles)
            ),
        )
        .unwrap();
        fs::write(
            dir.join("src/a/Bad.java"),
            format!(
                "package a; public class Bad {{ public static void main(String[] s) {{ {} }} }}",
                body(bad_compiles)
            ),
        )
        .unwrap();
    }

    #[test]
    fn a_workload_that_does_not_compile_is_left_out_not_the_suite() {
        let Ok(jdk) = Jdk::detect() else {
            panic!("a JDK is needed (scripts/setup installs one)");
        };
        let dir = tempfile::tempdir().unwrap();
        let (root, cache) = (dir.path().join("suite"), dir.path().join("cache"));
        two_workloads(&root, false, true);
        let b = build_suite_lenient(&root, &jdk, &cache).unwrap();
        assert_eq!(b.left_out.len(), 1);
        assert_eq!(b.left_out[0].0, "Bad");
        assert!(b.left_out[0].1.contains("Bad.java:1: error:"), "{:?}", b.left_out);
        assert!(b.built.classes.join("a/Good.class").is_file());
        assert!(!b.built.classes.join("a/Bad.class").exists());
        // Every workload failing is the suite's failure.
        let root2 = dir.path().join("suite2");
        two_workloads(&root2, false, false);
        assert!(matches!(
            build_suite_lenient(&root2, &jdk, &cache),
            Err(BuildError::Javac { .. })
        ));
    }

    #[test]
    fn empty_tree_is_an_error() {
        let dir = tempfile::tempdir().unwrap();
        assert!(matches!(java_sources(dir.path()), Err(BuildError::NoSources(_))));
    }
}
