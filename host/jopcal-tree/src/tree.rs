//! A user's JOP source tree: finding the benchmark sources in it. The fixed-
//! count harnesses are `Loop*.java` files under `java/target/src`: those in a
//! `fixed` directory run JemBench benchmarks (LoopKfl, LoopLift, LoopUdpIp,
//! LoopMatrix, LoopQueens, LoopAes, ...) and are the `jembench` suite; those
//! directly in a `jbe` directory run its predecessor JavaBenchEmbedded
//! (LoopKfl, LoopLift, LoopUdpIp) and are the `jbe` suite. Bench name = the
//! class name without `Loop`, main class from the file's package.

use jopcal_workloads::error::{UnknownEncoding, WriteError};
use jopcal_workloads::SourceEncoding;
use std::path::{Path, PathBuf};

/// The benchmark suites a JOP tree holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum TreeSuite {
    /// JemBench's fixed-count harnesses (`.../fixed/Loop*.java`).
    JemBench,
    /// JavaBenchEmbedded's fixed-count harnesses (`.../jbe/Loop*.java`).
    Jbe,
    /// Every benchmark JemBench's own `Main` runs (`.../jembench/Main.java`),
    /// each with a generated wrapper ([`crate::jembench`]).
    JemBenchAll,
    /// The tree's applications outside JemBench (`java/target/src/bench`),
    /// each with a generated wrapper ([`crate::apps`]) or left out with the reason.
    Apps,
}

impl TreeSuite {
    pub const ALL: [TreeSuite; 4] = [
        TreeSuite::JemBench,
        TreeSuite::Jbe,
        TreeSuite::JemBenchAll,
        TreeSuite::Apps,
    ];

    /// The suite's name on the command line.
    pub fn name(self) -> &'static str {
        match self {
            TreeSuite::JemBench => "jembench",
            TreeSuite::Jbe => "jbe",
            TreeSuite::JemBenchAll => "jembench-all",
            TreeSuite::Apps => "apps",
        }
    }

    /// The directory its harnesses (or JemBench's `Main`) sit in.
    pub fn directory(self) -> &'static str {
        match self {
            TreeSuite::JemBench => "fixed",
            TreeSuite::Jbe => "jbe",
            TreeSuite::JemBenchAll => "jembench",
            TreeSuite::Apps => "bench",
        }
    }

    pub fn from_name(name: &str) -> Option<TreeSuite> {
        TreeSuite::ALL.into_iter().find(|s| s.name() == name)
    }
}

/// Why a JOP tree could not be opened or searched, or a tree suite not generated.
#[derive(Debug, thiserror::Error)]
pub enum TreeError {
    /// The tree's directory does not exist.
    #[error("{0}: no such directory (--jop-home, JOPCAL_JOP_HOME or [jop] home in jopcal.toml)")]
    NoSuchDirectory(PathBuf),
    /// The directory has no `java/target/src`.
    #[error("{0}: not a JOP tree (no java/target/src; pass the root of a JOP checkout as --jop-home)")]
    NotATree(PathBuf),
    /// Walking the tree's sources failed.
    #[error("{dir}: {source}")]
    Walk {
        /// The directory walked.
        dir: PathBuf,
        #[source]
        source: walkdir::Error,
    },
    /// A file could not be read.
    #[error("{path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// What the system said.
        #[source]
        source: std::io::Error,
    },
    /// The tree holds no fixed-count harness at all.
    #[error("{0}: no fixed-count harnesses (Loop*.java in a `fixed` or `jbe` directory under java/target/src)")]
    NoHarnesses(PathBuf),
    /// The Makefile's `-encoding` names an encoding jopcal does not read.
    #[error("{makefile}:{line}: {source}")]
    MakefileEncoding {
        /// The tree's Makefile.
        makefile: PathBuf,
        /// The 1-based line of its `-encoding`.
        line: usize,
        #[source]
        source: UnknownEncoding,
    },
    /// The tree holds no harness of a suite.
    #[error(
        "{home}: no {} harnesses (Loop*.java in a `{}` directory under java/target/src)",
        .suite.name(),
        .suite.directory()
    )]
    NoSuiteHarnesses {
        /// The tree.
        home: PathBuf,
        suite: TreeSuite,
    },
    /// A benchmark name the suite does not have.
    #[error("no {} benchmark {name} in {home} (it has: {})", .suite.name(), .known.join(", "))]
    UnknownBench {
        suite: TreeSuite,
        /// The name asked for.
        name: String,
        /// The tree.
        home: PathBuf,
        /// The suite's benchmarks.
        known: Vec<String>,
    },
    /// Every selected harness was left out; `first` says why the first was.
    #[error("no {} harness jopcal can wrap; first: {first}", .suite.name())]
    NothingToWrap { suite: TreeSuite, first: String },
    /// No harness was selected.
    #[error("no {} harnesses selected", .0.name())]
    NoneSelected(TreeSuite),
    /// The generated workload directory could not be written.
    #[error(transparent)]
    Write(#[from] WriteError),
}

/// One discovered benchmark harness.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TreeWorkload {
    pub name: String,
    pub suite: TreeSuite,
    /// Fully qualified main class.
    pub main: String,
    pub file: PathBuf,
    /// The source root its package hangs from (for javac -sourcepath).
    pub source_root: PathBuf,
    /// For `jembench-all`: the benchmark class and the line of `Main.java` that runs it.
    pub listed: Option<crate::jembench::Listed>,
    /// For `apps`: the application's `main`.
    pub app: Option<crate::apps::AppMain>,
}

/// An opened JOP tree.
#[derive(Debug, Clone)]
pub struct JopTree {
    pub home: PathBuf,
    pub workloads: Vec<TreeWorkload>,
}

impl JopTree {
    /// Opens `home`; it must hold `java/target/src` (the JOP tree's target Java sources).
    pub fn open(home: &Path) -> Result<JopTree, TreeError> {
        if !home.exists() {
            return Err(TreeError::NoSuchDirectory(home.to_path_buf()));
        }
        // Absolute, so the paths found here stay right from any directory.
        let home = &home.canonicalize().unwrap_or_else(|_| home.to_path_buf());
        let src = home.join("java/target/src");
        if !src.is_dir() {
            return Err(TreeError::NotATree(home.to_path_buf()));
        }
        let mut workloads = Vec::new();
        let mut mains: Vec<PathBuf> = Vec::new();
        for e in walkdir::WalkDir::new(&src) {
            let e = e.map_err(|source| TreeError::Walk {
                dir: src.clone(),
                source,
            })?;
            if e.file_type().is_dir() {
                continue;
            }
            let p = e.into_path();
            let dir_name = p
                .parent()
                .and_then(|x| x.file_name())
                .map(|n| n.to_string_lossy().into_owned());
            let suite = TreeSuite::ALL
                .into_iter()
                .find(|s| dir_name.as_deref() == Some(s.directory()));
            let stem = p
                .file_stem()
                .map(|s| s.to_string_lossy().into_owned())
                .unwrap_or_default();
            if suite == Some(TreeSuite::JemBenchAll) {
                // JemBench's own Main names that suite's benchmarks.
                if stem == "Main" && p.extension().is_some_and(|x| x == "java") {
                    mains.push(p);
                }
                continue;
            }
            let Some(suite) = suite.filter(|s| *s != TreeSuite::Apps) else {
                continue;
            };
            if !stem.starts_with("Loop") || stem == "Loop" || p.extension().is_none_or(|x| x != "java") {
                continue;
            }
            // Only the package line is read here: any encoding will do.
            let bytes = std::fs::read(&p).map_err(|source| TreeError::Io {
                path: p.clone(),
                source,
            })?;
            let package = crate::java_text::package_of(&String::from_utf8_lossy(&bytes));
            let main = match &package {
                Some(pk) => format!("{pk}.{stem}"),
                None => stem.clone(),
            };
            // The root is the file's directory minus the package's directories.
            let mut root = p.parent().unwrap_or(&src).to_path_buf();
            for _ in package.iter().flat_map(|pk| pk.split('.')) {
                root = root.parent().unwrap_or(&src).to_path_buf();
            }
            workloads.push(TreeWorkload {
                name: stem["Loop".len()..].to_string(),
                suite,
                main,
                file: p,
                source_root: root,
                listed: None,
                app: None,
            });
        }
        workloads.sort_by(|a, b| (a.suite, &a.name).cmp(&(b.suite, &b.name)));
        // JemBench's own benchmarks in the order its Main runs them.
        for main in mains {
            workloads.extend(jembench_workloads(&main)?);
        }
        // The applications outside JemBench.
        let bench = src.join(TreeSuite::Apps.directory());
        if bench.is_dir() {
            let apps = crate::apps::discover(&bench).map_err(|source| TreeError::Io {
                path: bench.clone(),
                source,
            })?;
            for app in apps {
                workloads.push(TreeWorkload {
                    name: app.name(),
                    suite: TreeSuite::Apps,
                    main: app.class.clone(),
                    file: app.file.clone(),
                    source_root: bench.clone(),
                    listed: None,
                    app: Some(app),
                });
            }
        }
        if workloads.is_empty() {
            return Err(TreeError::NoHarnesses(home.to_path_buf()));
        }
        Ok(JopTree {
            home: home.to_path_buf(),
            workloads,
        })
    }

    /// The encoding the tree's own build compiles its Java sources with, and
    /// where that came from: the `-encoding` of its Makefile's
    /// `TARGET_JFLAGS`, else ISO-8859-1 (the original JOP tree's sources are Latin-1).
    pub fn source_encoding(&self) -> Result<(SourceEncoding, &'static str), TreeError> {
        const DEFAULT: (SourceEncoding, &str) = (SourceEncoding::Latin1, "JOP's default: no -encoding in a Makefile");
        let makefile = self.home.join("Makefile");
        let Ok(text) = std::fs::read(&makefile) else {
            return Ok(DEFAULT);
        };
        let text = String::from_utf8_lossy(&text);
        for (n, line) in text.lines().enumerate() {
            if !line.trim_start().starts_with("TARGET_JFLAGS") {
                continue;
            }
            let mut words = line
                .split(|c: char| c.is_whitespace() || c == '=')
                .filter(|w| !w.is_empty());
            while let Some(w) = words.next() {
                if w == "-encoding" {
                    if let Some(name) = words.next() {
                        return name.parse().map(|e| (e, "the tree's Makefile")).map_err(|source| {
                            TreeError::MakefileEncoding {
                                makefile: makefile.clone(),
                                line: n + 1,
                                source,
                            }
                        });
                    }
                }
            }
        }
        Ok(DEFAULT)
    }

    /// The harnesses of one suite, or those of `names` (case-insensitive) among them.
    pub fn select(&self, suite: TreeSuite, names: &[String]) -> Result<Vec<TreeWorkload>, TreeError> {
        let all: Vec<&TreeWorkload> = self.workloads.iter().filter(|w| w.suite == suite).collect();
        if all.is_empty() {
            return Err(TreeError::NoSuiteHarnesses {
                home: self.home.clone(),
                suite,
            });
        }
        if names.is_empty() {
            return Ok(all.into_iter().cloned().collect());
        }
        names
            .iter()
            .map(|n| {
                all.iter()
                    .find(|w| w.name.eq_ignore_ascii_case(n))
                    .map(|w| (*w).clone())
                    .ok_or_else(|| TreeError::UnknownBench {
                        suite,
                        name: n.clone(),
                        home: self.home.clone(),
                        known: all.iter().map(|w| w.name.clone()).collect(),
                    })
            })
            .collect()
    }
}

/// The benchmarks JemBench's `Main.java` at `main` runs (when its package
/// is `jembench`), as workloads of `jembench-all`.
fn jembench_workloads(main: &Path) -> Result<Vec<TreeWorkload>, TreeError> {
    let bytes = std::fs::read(main).map_err(|source| TreeError::Io {
        path: main.to_path_buf(),
        source,
    })?;
    let text = String::from_utf8_lossy(&bytes);
    if crate::java_text::package_of(&text).as_deref() != Some("jembench") {
        return Ok(Vec::new());
    }
    // The root the `jembench` package hangs from.
    let root = main.parent().and_then(Path::parent).unwrap_or(main).to_path_buf();
    let mut out: Vec<TreeWorkload> = Vec::new();
    for l in crate::jembench::listed(&text) {
        if out.iter().any(|w| w.name == l.name()) {
            continue;
        }
        out.push(TreeWorkload {
            name: l.name().to_string(),
            suite: TreeSuite::JemBenchAll,
            main: format!("jembench.{}", crate::jembench::wrapper_class(l.name())),
            file: crate::jembench::source_file(&root, &l.class),
            source_root: root.clone(),
            listed: Some(l),
            app: None,
        });
    }
    Ok(out)
}

/// A tree suite written as a jopcal workload directory.
#[derive(Debug, Clone)]
pub struct GeneratedSuite {
    pub dir: PathBuf,
    /// The benchmarks in it.
    pub names: Vec<String>,
    /// `file:line:column: why` for each harness jopcal could not read (left out).
    pub skipped: Vec<String>,
}

/// Writes `workloads` (harnesses of one tree suite) as a jopcal workload
/// directory at `dir`: one generated wrapper per harness (see
/// [`crate::harness`]) in the harness's package, jopcal's harness and host
/// stand-ins copied from `firmware`, and a manifest whose source path is the
/// tree's benchmark sources. The directory then builds, profiles and runs on
/// every target like the built-in suite.
pub fn generate_suite(
    suite: TreeSuite,
    workloads: &[TreeWorkload],
    encoding: SourceEncoding,
    compiler: &[String],
    firmware: &Path,
    dir: &Path,
) -> Result<GeneratedSuite, TreeError> {
    let mut specs = Vec::new();
    let mut sources = Vec::new();
    let mut roots: Vec<PathBuf> = Vec::new();
    let mut skipped = Vec::new();
    // The tree's sources as its build reads them.
    let read = |p: &Path| std::fs::read(p).map(|b| encoding.decode(&b));
    // The JDK the tree's build compiles applications against (read once).
    let mut app_jdk: Option<crate::apps::BuildJdk> = None;
    for w in workloads {
        if let Some(first) = workloads.iter().find(|o| o.name == w.name && o.file != w.file) {
            if specs.iter().any(|s: &jopcal_workloads::WorkloadSpec| s.name == w.name) {
                skipped.push(format!(
                    "{}: a harness named {} is already in the suite ({})",
                    w.file.display(),
                    w.name,
                    first.file.display()
                ));
                continue;
            }
        }
        if let Some(l) = &w.listed {
            match crate::jembench::kind_of(&w.source_root, &l.class, &read) {
                Ok(kind) => {
                    let n = crate::jembench::iterations(l.group(), kind);
                    let class = crate::jembench::wrapper_class(&w.name);
                    sources.push((
                        format!("jembench/{class}.java"),
                        crate::jembench::wrapper_source(l, kind, n),
                    ));
                    specs.push(jopcal_workloads::WorkloadSpec {
                        name: w.name.clone(),
                        main: w.main.clone(),
                        kind: format!(
                            "jembench-all: {} (Main.java line {}), a {}, its work {n} times",
                            l.class,
                            l.line,
                            kind.base()
                        ),
                    });
                    if !roots.contains(&w.source_root) {
                        roots.push(w.source_root.clone());
                    }
                }
                Err(why) => skipped.push(format!("{} (Main.java line {}): {why}", l.class, l.line)),
            }
            continue;
        }
        if let Some(app) = &w.app {
            // The tree's home: java/target/src/bench is four levels below it.
            let jdk = app_jdk.get_or_insert_with(|| {
                crate::apps::BuildJdk::of_tree(w.source_root.ancestors().nth(4).unwrap_or(&w.source_root))
            });
            match crate::apps::plan(&w.source_root, jdk, app, &read) {
                Ok(wrapper) => {
                    sources.push((wrapper.path, wrapper.source));
                    specs.push(jopcal_workloads::WorkloadSpec {
                        name: w.name.clone(),
                        main: wrapper.main,
                        kind: wrapper.kind,
                    });
                    if !roots.contains(&w.source_root) {
                        roots.push(w.source_root.clone());
                    }
                }
                Err(why) => skipped.push(format!("{} ({}): {why}", app.class, w.name)),
            }
            continue;
        }
        let bytes = std::fs::read(&w.file).map_err(|source| TreeError::Io {
            path: w.file.clone(),
            source,
        })?;
        let text = encoding.decode(&bytes);
        let h = match crate::harness::parse_fixed_harness(&text) {
            Ok(h) => h,
            Err(e) => {
                skipped.push(format!("{}:{e}", w.file.display()));
                continue;
            }
        };
        let file_name = w
            .file
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let package_dir = h
            .package
            .as_deref()
            .map(|p| p.replace('.', "/") + "/")
            .unwrap_or_default();
        sources.push((
            format!("{package_dir}{}.java", h.wrapper_class()),
            h.wrapper_source(&w.name, &file_name),
        ));
        specs.push(jopcal_workloads::WorkloadSpec {
            name: w.name.clone(),
            main: h.wrapper_main(),
            kind: format!(
                "{} {file_name}: its statements timed from line {}, {} iterations",
                suite.name(),
                h.region_line,
                h.iterations
            ),
        });
        if !roots.contains(&w.source_root) {
            roots.push(w.source_root.clone());
        }
    }
    if specs.is_empty() {
        return Err(match skipped.first() {
            Some(first) => TreeError::NothingToWrap {
                suite,
                first: first.clone(),
            },
            None => TreeError::NoneSelected(suite),
        });
    }
    let header = format!(
        "The {} suite of a JOP tree, generated by jopcal: one wrapper per fixed-count\nharness, timing its benchmark call with jopcal's harness. Regenerated on every run.",
        suite.name()
    );
    let compile = jopcal_workloads::suite::CompileWith {
        sourcepath: roots,
        encoding,
        compiler: compiler.to_vec(),
    };
    jopcal_workloads::suite::write_generated(dir, firmware, &header, &compile, &specs, &sources)?;
    Ok(GeneratedSuite {
        dir: dir.to_path_buf(),
        names: specs.into_iter().map(|s| s.name).collect(),
        skipped,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_source_encoding_is_the_makefiles() {
        let t = tempfile::tempdir().unwrap();
        let bench = t.path().join("java/target/src/bench/fixed");
        std::fs::create_dir_all(&bench).unwrap();
        // A harness in Latin-1: 0xF6 is not UTF-8 on its own.
        std::fs::write(
            bench.join("LoopKfl.java"),
            b"package fixed; // K\xf6rper\npublic class LoopKfl {}\n",
        )
        .unwrap();
        let tree = JopTree::open(t.path()).unwrap();
        assert_eq!(tree.workloads.len(), 1);
        assert_eq!(
            tree.source_encoding().unwrap().0,
            SourceEncoding::Latin1,
            "no Makefile: JOP's default"
        );
        let makefile = t.path().join("Makefile");
        std::fs::write(&makefile, "P1=x\nTARGET_JFLAGS=-d dist -source 1.5 -encoding UTF8\n").unwrap();
        assert_eq!(
            tree.source_encoding().unwrap(),
            (SourceEncoding::Utf8, "the tree's Makefile")
        );
        std::fs::write(&makefile, "TARGET_JFLAGS=-encoding Cp1252\n").unwrap();
        let e = tree.source_encoding().unwrap_err().to_string();
        assert!(e.contains("Makefile:1: unknown source encoding `Cp1252`"), "{e}");
    }

    #[test]
    fn finds_fixed_harnesses_and_rejects_other_directories() {
        let scratch = tempfile::tempdir().unwrap();
        let t = scratch.path().to_path_buf();
        let bench = t.join("java/target/src/bench");
        std::fs::create_dir_all(bench.join("fixed")).unwrap();
        std::fs::create_dir_all(bench.join("jbe/micro")).unwrap();
        std::fs::write(
            bench.join("fixed/LoopKfl.java"),
            "package fixed;\npublic class LoopKfl {}\n",
        )
        .unwrap();
        std::fs::write(bench.join("fixed/Helper.java"), "package fixed;\nclass Helper {}\n").unwrap();
        std::fs::write(
            bench.join("jbe/LoopLift.java"),
            "package jbe;\npublic class LoopLift {}\n",
        )
        .unwrap();
        std::fs::write(
            bench.join("jbe/micro/LoopNot.java"),
            "package jbe.micro;\nclass LoopNot {}\n",
        )
        .unwrap();
        let tree = JopTree::open(&t).unwrap();
        assert_eq!(tree.workloads.len(), 2);
        let w = &tree.workloads[0];
        assert_eq!(
            (w.name.as_str(), w.main.as_str(), w.suite),
            ("Kfl", "fixed.LoopKfl", TreeSuite::JemBench)
        );
        assert_eq!(w.source_root, bench);
        let jbe = tree.select(TreeSuite::Jbe, &[]).unwrap();
        assert_eq!((jbe[0].name.as_str(), jbe[0].main.as_str()), ("Lift", "jbe.LoopLift"));
        let e = tree.select(TreeSuite::Jbe, &["kfl".into()]).unwrap_err().to_string();
        // Two harnesses of one name, and one jopcal cannot read: left out, named.
        let other = t.join("java/target/src/test/fixed");
        std::fs::create_dir_all(&other).unwrap();
        let harness = "package fixed;\npublic class LoopKfl {\n  public static void main(String[] a) {\n    long t = System.currentTimeMillis();\n    Work.run(3);\n    t = System.currentTimeMillis() - t;\n  }\n}\n";
        std::fs::write(other.join("LoopKfl.java"), harness).unwrap();
        std::fs::write(
            bench.join("fixed/LoopBad.java"),
            "package fixed;\npublic class LoopBad {}\n",
        )
        .unwrap();
        let tree = JopTree::open(&t).unwrap();
        let firmware = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../jop-firmware");
        let all = tree.select(TreeSuite::JemBench, &[]).unwrap();
        assert_eq!(all.len(), 3);
        let dir = t.join("gen");
        let none = generate_suite(
            TreeSuite::JemBench,
            &all[..1],
            SourceEncoding::Utf8,
            &[],
            &firmware,
            &dir,
        )
        .unwrap_err()
        .to_string();
        assert!(
            none.starts_with("no jembench harness jopcal can wrap; first: "),
            "{none}"
        );
        assert!(
            none.ends_with("LoopBad.java:2:8: LoopBad has no `void main(...)`"),
            "{none}"
        );
        std::fs::write(bench.join("fixed/LoopKfl.java"), harness).unwrap();
        let g = generate_suite(TreeSuite::JemBench, &all, SourceEncoding::Utf8, &[], &firmware, &dir).unwrap();
        assert_eq!(g.names, ["Kfl"]);
        assert_eq!(g.skipped.len(), 2, "{:?}", g.skipped);
        assert!(
            g.skipped
                .iter()
                .any(|s| s.contains("a harness named Kfl is already in the suite")),
            "{:?}",
            g.skipped
        );
        let suite = jopcal_workloads::Suite::load(&dir).unwrap();
        assert_eq!(suite.workloads[0].main, "fixed.JopcalLoopKfl");
        assert_eq!(suite.sourcepath.len(), 1, "the kept harness's source root");
        assert!(dir.join("src/fixed/JopcalLoopKfl.java").is_file());
        assert!(dir.join("src/jopcal/harness/Harness.java").is_file());
        assert!(e.starts_with("no jbe benchmark kfl in "), "{e}");
        assert!(e.ends_with("(it has: Lift)"), "{e}");
        let e = JopTree::open(&t.join("java")).unwrap_err().to_string();
        assert!(
            e.ends_with("not a JOP tree (no java/target/src; pass the root of a JOP checkout as --jop-home)"),
            "{e}"
        );
        let _ = std::fs::remove_dir_all(&t);
    }
}
