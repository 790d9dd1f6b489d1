//! The user's own programs, in the shape they wrote them (`--main CLASS`,
//! `--cp DIR`): a class whose `main` does its work and returns. The timed
//! region is the whole of `main`: a generated wrapper reads the cycle counter,
//! calls the program's `main`, reads the counter again and prints jopcal's
//! result line. What the program prints inside `main` is part of its work
//! (the target's UART prices it).
//!
//! Where the sources come from: `--cp DIR` names the root of the program's
//! source tree (its packages below it), anywhere; its `.java` files are
//! copied into the generated suite, so that the tree's build, which compiles
//! only what is on its own source path, compiles them too. Without `--cp` the
//! class is looked for where the tree's build finds applications
//! (`java/target/src/bench` and `java/target/src/app`). `--cp DIR` without
//! `--main` takes every class with a `main` under DIR.

use crate::apps::BuildJdk;
use jopcal_workloads::{SourceEncoding, WorkloadSpec};
use std::path::{Path, PathBuf};

/// Where the tree's build looks for application sources, below `java/target/src`.
pub const TREE_APP_DIRS: [&str; 2] = ["bench", "app"];

/// The package of the generated wrappers.
pub const WRAPPER_PACKAGE: &str = "jopcal.program";

/// The programs a run asks for.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ProgramRequest {
    /// Fully qualified main classes (empty with `cp`: every main under it).
    pub mains: Vec<String>,
    /// The root of the programs' sources, outside the tree or in it.
    pub cp: Option<PathBuf>,
}

impl ProgramRequest {
    /// Whether the run asks for programs at all.
    pub fn is_requested(&self) -> bool {
        !self.mains.is_empty() || self.cp.is_some()
    }
}

/// Why the programs asked for cannot be wrapped.
#[derive(Debug, thiserror::Error)]
pub enum ProgramError {
    #[error("--cp {0}: no such directory (the root of your program's sources, its packages below it)")]
    NoSuchDirectory(PathBuf),
    #[error("--cp {0}: no class with a `static void main(` under it")]
    NoMains(PathBuf),
    #[error("--main {class}: no {file} under {searched} (pass --cp DIR, the root of its sources)")]
    NotFound {
        class: String,
        file: String,
        searched: String,
    },
    #[error("--main {class}: `{class}` is not a class name (expected e.g. my.pkg.App)")]
    BadName { class: String },
    #[error("{file}: {class} has no `static void main(` (a program's work is its main)")]
    NoMain { class: String, file: PathBuf },
    #[error("{0}")]
    Missing(String),
    #[error(transparent)]
    Write(#[from] jopcal_workloads::error::WriteError),
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
}

/// One program found: its main class, its source file and the source root
/// its package hangs from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Program {
    pub class: String,
    pub file: PathBuf,
    pub root: PathBuf,
    /// Whether the root lies outside the tree's build (its sources are copied).
    pub outside: bool,
}

impl Program {
    /// The bench name: the simple class name.
    pub fn name(&self) -> String {
        self.class.rsplit('.').next().unwrap_or(&self.class).to_string()
    }
}

fn is_class_name(s: &str) -> bool {
    !s.is_empty()
        && s.split('.').all(|p| {
            let mut cs = p.chars();
            cs.next().is_some_and(|c| !c.is_numeric() && crate::apps::is_ident(c)) && cs.all(crate::apps::is_ident)
        })
}

/// The programs of `request` in the tree at `home`.
pub fn find(home: &Path, request: &ProgramRequest) -> Result<Vec<Program>, ProgramError> {
    let src = home.join("java/target/src");
    let roots: Vec<(PathBuf, bool)> = match &request.cp {
        Some(cp) => {
            if !cp.is_dir() {
                return Err(ProgramError::NoSuchDirectory(cp.clone()));
            }
            let cp = cp.canonicalize().unwrap_or_else(|_| cp.clone());
            // A root inside the tree's application directories is built in place.
            let inside = TREE_APP_DIRS
                .iter()
                .any(|d| src.join(d).canonicalize().is_ok_and(|d| cp == d));
            vec![(cp, !inside)]
        }
        None => TREE_APP_DIRS.iter().map(|d| (src.join(d), false)).collect(),
    };
    if request.mains.is_empty() {
        let (root, outside) = roots.into_iter().next().expect("--cp given");
        let found = crate::apps::discover(&root).map_err(|source| ProgramError::Io {
            path: root.clone(),
            source,
        })?;
        if found.is_empty() {
            return Err(ProgramError::NoMains(root));
        }
        return Ok(found
            .into_iter()
            .map(|a| Program {
                class: a.class,
                file: a.file,
                root: root.clone(),
                outside,
            })
            .collect());
    }
    let mut out = Vec::new();
    for class in &request.mains {
        if !is_class_name(class) {
            return Err(ProgramError::BadName { class: class.clone() });
        }
        let rel = format!("{}.java", class.replace('.', "/"));
        let Some((root, outside)) = roots.iter().find(|(r, _)| r.join(&rel).is_file()) else {
            return Err(ProgramError::NotFound {
                class: class.clone(),
                file: rel,
                searched: roots
                    .iter()
                    .map(|(r, _)| r.display().to_string())
                    .collect::<Vec<_>>()
                    .join(" or "),
            });
        };
        out.push(Program {
            class: class.clone(),
            file: root.join(&rel),
            root: root.clone(),
            outside: *outside,
        });
    }
    Ok(out)
}

/// Whether the program's `main` declares checked exceptions (the wrapper then catches them).
fn main_throws(clean: &str) -> bool {
    let Some(k) = clean.find("static void main(") else {
        return false;
    };
    let head = &clean[k..];
    let Some(open) = head.find('{') else { return false };
    head[..open].contains("throws")
}

/// The wrapper's simple class name for a bench name.
pub fn wrapper_class(name: &str) -> String {
    format!("JopcalMain{}", crate::apps::identifier(name))
}

/// The wrapper's source: the whole of `main` between the harness's counter reads.
pub fn wrapper_source(program: &Program, name: &str, throws: bool) -> String {
    let class = wrapper_class(name);
    let call = if throws {
        format!(
            "        try {{\n            {main}.main(args);\n        }} catch (Exception e) {{\n            jopcal.harness.Harness.stop();\n            throw new RuntimeException(\"{main}.main threw a checked exception\");\n        }}\n",
            main = program.class
        )
    } else {
        format!("        {}.main(args);\n", program.class)
    };
    format!(
        "// Generated by jopcal from {file}: the whole of {main}.main between the\n// cycle-counter reads of jopcal's harness.\npackage {WRAPPER_PACKAGE};\n\npublic final class {class} {{\n    public static void main(String[] args) {{\n        jopcal.harness.Harness.start();\n{call}        jopcal.harness.Harness.stop();\n        jopcal.harness.Harness.report(\"{name}\", 1);\n    }}\n}}\n",
        file = program.file.display(),
        main = program.class,
    )
}

/// The `.java` files below `root`, as (path relative to `root`, text).
fn sources_below(
    root: &Path,
    decode: &dyn Fn(&Path) -> std::io::Result<String>,
) -> Result<Vec<(String, String)>, ProgramError> {
    let mut out = Vec::new();
    for e in walkdir::WalkDir::new(root).sort_by_file_name() {
        let e = e.map_err(|e| ProgramError::Io {
            path: root.to_path_buf(),
            source: std::io::Error::other(e),
        })?;
        let p = e.path();
        if !e.file_type().is_file() || p.extension().is_none_or(|x| x != "java") {
            continue;
        }
        let rel = p.strip_prefix(root).unwrap_or(p).to_string_lossy().replace('\\', "/");
        let text = decode(p).map_err(|source| ProgramError::Io {
            path: p.to_path_buf(),
            source,
        })?;
        out.push((rel, text));
    }
    Ok(out)
}

/// What a program suite is made of: its workloads, the sources to write
/// (wrappers and copied programs) and the tree roots to compile against.
#[derive(Debug, Default)]
pub struct Plan {
    pub specs: Vec<WorkloadSpec>,
    pub sources: Vec<(String, String)>,
    pub sourcepath: Vec<PathBuf>,
    /// Programs found under `--cp` (not named by `--main`) left out, each
    /// with why (an import the tree's build lacks).
    pub left_out: Vec<String>,
}

/// Plans the suite of `programs` in the tree at `home`.
///
/// A program found under `--cp` (`named` false: not named by `--main`)
/// that needs a class the tree's build lacks is left out with its reason,
/// so that one such file does not stop the others; a named one is an error,
/// and so is leaving out every program.
pub fn plan(home: &Path, programs: &[Program], encoding: SourceEncoding, named: bool) -> Result<Plan, ProgramError> {
    let jdk = BuildJdk::of_tree(home);
    let mut plan = Plan::default();
    let mut copied: Vec<PathBuf> = Vec::new();
    let tree_decode = |p: &Path| std::fs::read(p).map(|b| encoding.decode(&b));
    // Sources outside the tree are the user's: UTF-8, as javac's default reads them.
    let user_decode = |p: &Path| std::fs::read(p).map(|b| String::from_utf8_lossy(&b).into_owned());
    for p in programs {
        let decode: &dyn Fn(&Path) -> std::io::Result<String> = if p.outside { &user_decode } else { &tree_decode };
        let text = decode(&p.file).map_err(|source| ProgramError::Io {
            path: p.file.clone(),
            source,
        })?;
        let clean = crate::harness::blank_comments(&text);
        if crate::apps::main_body(&clean).is_none() {
            return Err(ProgramError::NoMain {
                class: p.class.clone(),
                file: p.file.clone(),
            });
        }
        if let Some(why) = crate::apps::missing_import(&p.root, &jdk, std::slice::from_ref(&p.file), decode) {
            if named {
                return Err(ProgramError::Missing(why));
            }
            plan.left_out.push(format!("{}: {why}", p.class));
            continue;
        }
        // Two programs of one simple name: the second is named by its whole class.
        let mut name = p.name();
        if plan.specs.iter().any(|s| s.name == name) {
            name = p.class.replace('.', "-");
        }
        let class = wrapper_class(&name);
        plan.sources.push((
            format!("{}/{class}.java", WRAPPER_PACKAGE.replace('.', "/")),
            wrapper_source(p, &name, main_throws(&clean)),
        ));
        plan.specs.push(WorkloadSpec {
            name,
            main: format!("{WRAPPER_PACKAGE}.{class}"),
            kind: format!("program: the whole of {}.main ({})", p.class, p.file.display()),
        });
        if p.outside {
            if !copied.contains(&p.root) {
                plan.sources.extend(sources_below(&p.root, decode)?);
                copied.push(p.root.clone());
            }
        } else if !plan.sourcepath.contains(&p.root) {
            plan.sourcepath.push(p.root.clone());
        }
    }
    if plan.specs.is_empty() {
        if let Some(first) = plan.left_out.first() {
            return Err(ProgramError::Missing(first.clone()));
        }
    }
    Ok(plan)
}

/// Writes the suite of `request`'s programs in the tree at `home` as a
/// jopcal workload directory at `dir` (see [`crate::tree::generate_suite`]).
pub fn generate(
    home: &Path,
    request: &ProgramRequest,
    encoding: SourceEncoding,
    compiler: &[String],
    firmware: &Path,
    dir: &Path,
) -> Result<crate::tree::GeneratedSuite, ProgramError> {
    let programs = find(home, request)?;
    let plan = plan(home, &programs, encoding, !request.mains.is_empty())?;
    let header = "Your programs, generated by jopcal: one wrapper per main class, timing the\nwhole of its main with jopcal's harness. Regenerated on every run.";
    let compile = jopcal_workloads::suite::CompileWith {
        sourcepath: plan.sourcepath,
        encoding,
        compiler: compiler.to_vec(),
    };
    jopcal_workloads::suite::write_generated(dir, firmware, header, &compile, &plan.specs, &plan.sources)?;
    Ok(crate::tree::GeneratedSuite {
        dir: dir.to_path_buf(),
        names: plan.specs.into_iter().map(|s| s.name).collect(),
        skipped: plan.left_out,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tree_with(files: &[(&str, &str)]) -> tempfile::TempDir {
        let t = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(t.path().join("java/target/src/bench")).unwrap();
        for (rel, text) in files {
            let p = t.path().join(rel);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(p, text).unwrap();
        }
        t
    }

    const APP: &str = "package my.app;\npublic class Counter {\n    public static void main(String[] args) {\n        int s = 0;\n        for (int i = 0; i < 10; i++) s += i;\n        System.out.println(s);\n    }\n}\n";

    #[test]
    fn a_program_in_the_tree_is_found_and_wrapped_whole() {
        let t = tree_with(&[("java/target/src/bench/my/app/Counter.java", APP)]);
        let req = ProgramRequest {
            mains: vec!["my.app.Counter".into()],
            cp: None,
        };
        let ps = find(t.path(), &req).unwrap();
        assert_eq!(ps.len(), 1);
        assert!(!ps[0].outside);
        let plan = plan(t.path(), &ps, SourceEncoding::Latin1, true).unwrap();
        assert_eq!(plan.specs[0].name, "Counter");
        assert_eq!(plan.specs[0].main, "jopcal.program.JopcalMainCounter");
        assert_eq!(plan.sources.len(), 1, "the wrapper only: the tree builds the program");
        let w = &plan.sources[0].1;
        let (start, call, stop) = (
            w.find("Harness.start()").unwrap(),
            w.find("my.app.Counter.main(args);").unwrap(),
            w.find("Harness.stop()").unwrap(),
        );
        assert!(start < call && call < stop, "{w}");
        assert!(!w.contains("catch"), "{w}");
        assert_eq!(plan.sourcepath, [t.path().join("java/target/src/bench")]);
    }

    #[test]
    fn a_program_outside_the_tree_is_copied_and_every_main_taken() {
        let t = tree_with(&[]);
        let user = tempfile::tempdir().unwrap();
        let thrower = "package my.app;\npublic class Loader {\n    public static void main(String[] a) throws Exception {\n        Helper.go();\n    }\n}\nclass Helper { static void go() {} }\n";
        for (rel, text) in [("my/app/Counter.java", APP), ("my/app/Loader.java", thrower)] {
            let p = user.path().join(rel);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(p, text).unwrap();
        }
        let req = ProgramRequest {
            mains: vec![],
            cp: Some(user.path().to_path_buf()),
        };
        let ps = find(t.path(), &req).unwrap();
        let names: Vec<String> = ps.iter().map(Program::name).collect();
        assert_eq!(names, ["Counter", "Loader"]);
        let plan = plan(t.path(), &ps, SourceEncoding::Latin1, false).unwrap();
        let rels: Vec<&str> = plan.sources.iter().map(|(r, _)| r.as_str()).collect();
        assert_eq!(
            rels,
            [
                "jopcal/program/JopcalMainCounter.java",
                "my/app/Counter.java",
                "my/app/Loader.java",
                "jopcal/program/JopcalMainLoader.java"
            ]
        );
        assert!(plan.sources[3].1.contains("catch (Exception e)"), "main throws");
        assert!(plan.sourcepath.is_empty());
    }

    #[test]
    fn under_cp_a_program_the_tree_cannot_build_is_left_out_not_the_others() {
        let t = tree_with(&[]);
        let src = tempfile::tempdir().unwrap();
        let write = |rel: &str, text: &str| {
            let p = src.path().join(rel);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(p, text).unwrap();
        };
        write(
            "my/app/Lister.java",
            "package my.app;\nimport java.util.ArrayList;\npublic class Lister {\n    public static void main(String[] a) { new ArrayList(); }\n}\n",
        );
        write("my/app/Counter.java", APP);
        let req = ProgramRequest {
            mains: Vec::new(),
            cp: Some(src.path().to_path_buf()),
        };
        let ps = find(t.path(), &req).unwrap();
        assert_eq!(ps.len(), 2);
        let p = plan(t.path(), &ps, SourceEncoding::Latin1, false).unwrap();
        let names: Vec<&str> = p.specs.iter().map(|s| s.name.as_str()).collect();
        assert_eq!(names, ["Counter"]);
        assert_eq!(p.left_out.len(), 1);
        assert!(
            p.left_out[0].starts_with("my.app.Lister: ") && p.left_out[0].contains("imports java.util.ArrayList"),
            "{:?}",
            p.left_out
        );
        // Named by --main, it is an error.
        assert!(plan(t.path(), &ps, SourceEncoding::Latin1, true).is_err());
    }

    #[test]
    fn what_cannot_be_wrapped_is_named() {
        let t = tree_with(&[(
            "java/target/src/bench/my/app/Lister.java",
            "package my.app;\nimport java.util.ArrayList;\npublic class Lister {\n    public static void main(String[] a) { new ArrayList(); }\n}\n",
        )]);
        let err = |mains: &[&str], cp: Option<PathBuf>| -> String {
            let req = ProgramRequest {
                mains: mains.iter().map(|s| s.to_string()).collect(),
                cp,
            };
            match find(t.path(), &req) {
                Err(e) => e.to_string(),
                Ok(ps) => plan(t.path(), &ps, SourceEncoding::Latin1, !mains.is_empty())
                    .unwrap_err()
                    .to_string(),
            }
        };
        let e = err(&["my.app.Gone"], None);
        assert!(e.starts_with("--main my.app.Gone: no my/app/Gone.java under "), "{e}");
        assert!(e.ends_with("(pass --cp DIR, the root of its sources)"), "{e}");
        assert_eq!(
            err(&["my..app"], None),
            "--main my..app: `my..app` is not a class name (expected e.g. my.pkg.App)"
        );
        let e = err(&["my.app.Lister"], None);
        assert!(
            e.contains("Lister.java:2 imports java.util.ArrayList, which the tree's build does not have"),
            "{e}"
        );
        let e = err(&[], Some(t.path().join("nowhere")));
        assert!(
            e.ends_with("no such directory (the root of your program's sources, its packages below it)"),
            "{e}"
        );
        let empty = tempfile::tempdir().unwrap();
        let e = err(&[], Some(empty.path().to_path_buf()));
        assert!(e.ends_with("no class with a `static void main(` under it"), "{e}");
    }
}
