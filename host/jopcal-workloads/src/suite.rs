//! The suite manifest: `suite.toml` in the firmware directory lists every
//! workload with its bench name, its main class and what it stresses.

use crate::error::{SuiteError, WriteError};
use serde::Deserialize;
use std::path::{Path, PathBuf};

/// One workload of a suite.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct WorkloadSpec {
    /// The bench name its result lines carry.
    pub name: String,
    /// Fully qualified main class that runs this workload alone.
    pub main: String,
    /// What the workload stresses (documentation only).
    #[serde(default)]
    pub kind: String,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Manifest {
    /// Further source roots javac may take classes from (a JOP tree's
    /// benchmark sources, for a generated suite); relative to the manifest.
    #[serde(default)]
    sourcepath: Vec<PathBuf>,
    /// The sources' character encoding (default UTF-8; a JOP tree's are ISO-8859-1).
    #[serde(default)]
    encoding: Option<String>,
    /// The compiler and its flags, when not the host JDK's javac (see [`Suite::compiler`]).
    #[serde(default)]
    compiler: Vec<String>,
    workload: Vec<WorkloadSpec>,
}

/// A suite: its source directory and its workloads in manifest order.
#[derive(Debug, Clone)]
pub struct Suite {
    /// The firmware directory holding `suite.toml`, `src/` and `host-stubs/`.
    pub root: PathBuf,
    /// Source roots beyond `src/` and `host-stubs/`, absolute.
    pub sourcepath: Vec<PathBuf>,
    /// The character encoding of every source javac reads for this suite.
    pub encoding: crate::SourceEncoding,
    /// The compiler of the host's class files and its flags (javac's
    /// options follow: `-encoding`, `-d`, `-sourcepath`, the sources); empty
    /// for the host JDK's `javac --release 8`. A JOP tree's suite names the
    /// compiler the tree's build uses, so that the host profiles the very
    /// bytecode JOP links (compilers lay out the same loop differently).
    pub compiler: Vec<String>,
    pub workloads: Vec<WorkloadSpec>,
}

/// The manifest's file name.
pub const MANIFEST: &str = "suite.toml";

impl Suite {
    /// Loads `root/suite.toml`.
    pub fn load(root: &Path) -> Result<Suite, SuiteError> {
        let path = root.join(MANIFEST);
        let text = std::fs::read_to_string(&path).map_err(|source| SuiteError::Io {
            path: path.clone(),
            source,
        })?;
        let manifest: Manifest = toml::from_str(&text).map_err(|e| SuiteError::Invalid {
            path: path.clone(),
            message: location(&text, e.span()).map_or_else(
                || e.message().to_string(),
                |(l, c)| format!("line {l}, column {c}: {}", e.message()),
            ),
        })?;
        let mut seen = std::collections::HashSet::new();
        for w in &manifest.workload {
            if !seen.insert(w.name.as_str()) {
                return Err(SuiteError::Invalid {
                    path,
                    message: format!("workload '{}' is listed twice", w.name),
                });
            }
        }
        let encoding = match &manifest.encoding {
            None => crate::SourceEncoding::default(),
            Some(name) => name.parse().map_err(|source| SuiteError::Encoding {
                path: path.clone(),
                source,
            })?,
        };
        Ok(Suite {
            root: root.to_owned(),
            sourcepath: manifest.sourcepath.iter().map(|p| root.join(p)).collect(),
            encoding,
            compiler: manifest.compiler,
            workloads: manifest.workload,
        })
    }

    /// The workloads named in `names` (all of them when `names` is empty).
    pub fn select(&self, names: &[String]) -> Result<Vec<WorkloadSpec>, SuiteError> {
        if names.is_empty() {
            return Ok(self.workloads.clone());
        }
        names
            .iter()
            .map(|n| {
                self.workloads
                    .iter()
                    .find(|w| w.name.eq_ignore_ascii_case(n))
                    .cloned()
                    .ok_or_else(|| SuiteError::UnknownBench {
                        name: n.clone(),
                        known: self
                            .workloads
                            .iter()
                            .map(|w| w.name.as_str())
                            .collect::<Vec<_>>()
                            .join(", "),
                    })
            })
            .collect()
    }
}

/// How a generated suite compiles: further source roots, the sources'
/// encoding, and the compiler (empty: the host JDK's javac).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CompileWith {
    pub sourcepath: Vec<PathBuf>,
    pub encoding: crate::SourceEncoding,
    pub compiler: Vec<String>,
}

/// Writes a generated workload directory: `suite.toml` (with `header` as its
/// leading comment, how it compiles and `workloads`), the given sources under
/// `src/` (`(path relative to src, text)`, written in the encoding), and a copy of `firmware`'s
/// harness and host stand-ins, so the directory builds and runs like the
/// built-in suite.
pub fn write_generated(
    dir: &Path,
    firmware: &Path,
    header: &str,
    compile: &CompileWith,
    workloads: &[WorkloadSpec],
    sources: &[(String, String)],
) -> Result<(), WriteError> {
    let CompileWith {
        sourcepath,
        encoding,
        compiler,
    } = compile;
    let encoding = *encoding;
    let io = |p: &Path, source: std::io::Error| WriteError {
        path: p.to_path_buf(),
        source,
    };
    let quote = |s: &str| toml::Value::String(s.to_string()).to_string();
    let mut manifest = String::new();
    for l in header.lines() {
        manifest.push_str(&format!("# {l}\n"));
    }
    if !sourcepath.is_empty() {
        let list: Vec<String> = sourcepath.iter().map(|p| quote(&p.to_string_lossy())).collect();
        manifest.push_str(&format!("sourcepath = [{}]\n", list.join(", ")));
    }
    if encoding != crate::SourceEncoding::default() {
        manifest.push_str(&format!("encoding = {}\n", quote(encoding.javac_name())));
    }
    if !compiler.is_empty() {
        let list: Vec<String> = compiler.iter().map(|a| quote(a)).collect();
        manifest.push_str(&format!("compiler = [{}]\n", list.join(", ")));
    }
    for w in workloads {
        manifest.push_str(&format!(
            "\n[[workload]]\nname = {}\nmain = {}\nkind = {}\n",
            quote(&w.name),
            quote(&w.main),
            quote(&w.kind)
        ));
    }
    for (rel, text) in sources {
        let path = dir.join("src").join(rel);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).map_err(|e| io(parent, e))?;
        }
        std::fs::write(&path, encoding.encode(text)).map_err(|e| io(&path, e))?;
    }
    for sub in ["src/jopcal/harness", "host-stubs/com/jopdesign/sys"] {
        let from = firmware.join(sub);
        let to = dir.join(sub);
        std::fs::create_dir_all(&to).map_err(|e| io(&to, e))?;
        for e in std::fs::read_dir(&from).map_err(|e| io(&from, e))? {
            let p = e.map_err(|e| io(&from, e))?.path();
            if p.extension().is_some_and(|x| x == "java") {
                let target = to.join(p.file_name().expect("a file"));
                std::fs::copy(&p, &target).map_err(|e| io(&target, e))?;
            }
        }
    }
    // The manifest last: a directory with one is complete.
    let m = dir.join(MANIFEST);
    std::fs::write(&m, manifest).map_err(|e| io(&m, e))
}

/// 1-based line and column (in bytes) of a byte span's start.
fn location(text: &str, span: Option<std::ops::Range<usize>>) -> Option<(usize, usize)> {
    Some(line_col::LineColLookup::new(text).get(span?.start.min(text.len())))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bad_manifest_names_line() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join(MANIFEST), "[[workload]]\nname = \"A\"\nmain = 3\n").unwrap();
        let e = Suite::load(dir.path()).unwrap_err().to_string();
        assert!(e.contains("suite.toml: line 3, column 8"), "{e}");
    }

    #[test]
    fn select_by_name_and_unknown() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join(MANIFEST),
            "[[workload]]\nname = \"Sieve\"\nmain = \"a.Sieve\"\n[[workload]]\nname = \"Fib\"\nmain = \"a.Fib\"\n",
        )
        .unwrap();
        let s = Suite::load(dir.path()).unwrap();
        assert_eq!(s.select(&["fib".into()]).unwrap()[0].name, "Fib");
        let e = s.select(&["Nope".into()]).unwrap_err().to_string();
        assert_eq!(e, "unknown benchmark 'Nope' (the suite has: Sieve, Fib)");
    }
}
