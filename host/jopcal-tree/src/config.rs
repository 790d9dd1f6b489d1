//! `jopcal.toml`, the project's configuration of the user's JOP tree. The
//! form that works with the original JOP tree (jop-devel/jop) is [`EXAMPLE`]
//! (`docs/notes/jop-tree.md` says how to set that tree up).
//!
//! Commands are templates run with `sh -c` in the tree's directory.
//! Placeholders: `{home}`, `{main}` (the main class, dotted: for the
//! `jembench`/`jbe` suites jopcal's generated wrapper, e.g.
//! `fixed.JopcalLoopKfl`), `{class}` (its simple name), `{package_dir}` (its
//! package as a path), `{name}` (the benchmark), `{gen}` (the source root of
//! the workload directory: the wrappers and jopcal's harness, which the JOP
//! build must compile along with the tree's sources), `{sources}` (`{gen}`
//! and the tree's benchmark source roots, ':'-separated, for a `-sourcepath`),
//! `{out}` (jopcal's output directory), `{image}` (the image path, for
//! `jopsim`); paths are absolute. JOP's linker reads class files of version 50
//! or older only, so the build template must compile with a compiler that
//! emits them (the tree's Makefile with Debian's ecj as its `javac`); jopcal
//! never hands it class files of its own. `encoding` names the tree's source
//! encoding when its Makefile does not (it says `-encoding Latin1`).

/// A `jopcal.toml` for the original JOP tree, as `docs/notes/jop-tree.md` sets it up:
/// ecj behind a `javac` wrapper first on PATH for the target build, and
/// JopSim run by its class name (the tools jar has no main class).
pub const EXAMPLE: &str = r#"[jop]
home = "../jop"                 # the JOP tree, relative to this file
build = "PATH=/opt/jop-tools/bin:$PATH make -C {home} java_app TARGET_APP_PATH={gen} MAIN_CLASS={package_dir}/{class} P3={class}"
image = "{home}/java/target/dist/bin/{class}.jop"
jopsim = "java -Dlog=false -cp /opt/jop-tools/jopsim-fix:{home}/java/tools/dist/lib/jop-tools.jar com.jopdesign.tools.JopSim {image}"
timeout = 900                   # seconds a workload may take (JopSim runs 6-9 M cycles/s)
host_javac = "ecj -source 1.5 -target 1.5 -nowarn"   # the host profiles what the build compiles
host_library = "java.util.Random java.lang.Math"   # the host runs the tree's own, as JOP does (the default)
"#;

use jopcal_workloads::error::UnknownEncoding;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// The `[jop]` table.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct JopConfig {
    pub home: Option<PathBuf>,
    pub build: Option<String>,
    pub image: Option<String>,
    pub jopsim: Option<String>,
    /// The encoding of the tree's Java sources (default: what its Makefile uses).
    pub encoding: Option<jopcal_workloads::SourceEncoding>,
    /// Seconds one workload may take on the tree's targets (JopSim, a board,
    /// the Verilator bench) when `--timeout` is not given: JopSim runs 6-9 M
    /// cycles/s, so a benchmark of 860 M cycles needs minutes.
    pub timeout: Option<u64>,
    /// The compiler of the host's class files for the tree's suites, as a
    /// command line that takes javac's options (e.g. `ecj -source 1.5
    /// -target 1.5 -nowarn`): the compiler the `build` template uses, so that
    /// the host profiles the bytecode JOP links. Default: the host JDK's javac.
    pub host_javac: Vec<String>,
    /// JDK classes JOP implements itself (dotted names, e.g.
    /// `java.util.Random`): the host profiles the tree's versions of them
    /// instead of its own JDK's. `None` when the file does not say: then
    /// [`DEFAULT_HOST_LIBRARY`], where the tree has them.
    pub host_library: Option<Vec<String>>,
    /// A shell command that brings a board back to its loader (e.g. an
    /// `openFPGALoader` call or a relay): run before a retry, and before the
    /// next image when one failed, on `--target board`.
    pub reset: Option<String>,
    /// The file it came from.
    pub file: PathBuf,
}

/// The JDK classes the host runs the tree's versions of when jopcal.toml
/// does not name them (`host_library`): the ones whose JDK versions the
/// tree's programs run most differently (the JDK's `Random` takes a lock per
/// number; its `Math.sin` is a machine instruction where JOP runs `Cordic`;
/// its `System.currentTimeMillis` reads the host's clock, the tree's reads
/// JOP's microsecond counter, which a profiled run reads as the target's).
/// Of `System` the host runs the clock alone.
pub const DEFAULT_HOST_LIBRARY: [&str; 3] = ["java.util.Random", "java.lang.Math", "java.lang.System"];

pub(crate) const KEYS: [&str; 9] = [
    "home",
    "build",
    "image",
    "jopsim",
    "encoding",
    "timeout",
    "host_javac",
    "host_library",
    "reset",
];
/// Placeholders a template may use.
pub const PLACEHOLDERS: [&str; 9] = [
    "home",
    "main",
    "class",
    "package_dir",
    "name",
    "sources",
    "gen",
    "out",
    "image",
];

/// Why `jopcal.toml` could not be read; every message starts with the file
/// (and, where known, `:line:column`).
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    /// The file could not be read.
    #[error("{file}: {source}")]
    Io {
        /// The file.
        file: PathBuf,
        /// What the system said.
        #[source]
        source: std::io::Error,
    },
    /// The text is not TOML (the parser's message), at a known place.
    #[error("{file}:{line}:{column}: {message}")]
    Syntax {
        file: PathBuf,
        line: usize,
        column: usize,
        /// The TOML parser's message.
        message: String,
    },
    /// The text is not TOML, at no known place.
    #[error("{file}: {message}")]
    SyntaxNowhere {
        file: PathBuf,
        /// The TOML parser's message.
        message: String,
    },
    /// `jop` is not a table.
    #[error("{file}: [jop] must be a table")]
    JopNotTable { file: PathBuf },
    /// A key of `[jop]` jopcal does not know.
    #[error("{file}:{line}:{column}: unknown key `{key}` in [jop] (known: {})", KEYS.join(", "))]
    UnknownKey {
        file: PathBuf,
        line: usize,
        column: usize,
        key: String,
    },
    /// `timeout` is not a positive integer.
    #[error("{file}:{line}:{column}: `timeout` must be a whole number of seconds, at least 1")]
    BadTimeout { file: PathBuf, line: usize, column: usize },
    /// A key whose value must be a string is not one.
    #[error("{file}:{line}:{column}: `{key}` must be a string")]
    NotAString {
        file: PathBuf,
        line: usize,
        column: usize,
        key: String,
    },
    /// `host_javac` names no compiler.
    #[error("{file}:{line}:{column}: `host_javac` is empty: name a compiler (e.g. \"ecj -source 1.5 -target 1.5 -nowarn\") or remove the key")]
    EmptyHostJavac { file: PathBuf, line: usize, column: usize },
    /// `encoding` names an encoding jopcal does not read.
    #[error("{file}:{line}:{column}: {source}")]
    Encoding {
        file: PathBuf,
        line: usize,
        column: usize,
        #[source]
        source: UnknownEncoding,
    },
    /// A template uses a placeholder jopcal does not fill.
    #[error(
        "{file}:{line}:{column}: unknown placeholder {{{placeholder}}} in `{key}` (known: {})",
        PLACEHOLDERS.join(", ")
    )]
    UnknownPlaceholder {
        file: PathBuf,
        line: usize,
        column: usize,
        /// The placeholder, without braces.
        placeholder: String,
        /// The template's key.
        key: String,
    },
}

/// Line and column (1-based; the column in bytes) of byte offset `at` in `text`.
fn line_col(text: &str, at: usize) -> (usize, usize) {
    line_col::LineColLookup::new(text).get(at.min(text.len()))
}

impl JopConfig {
    /// Parses `jopcal.toml`; errors read `file:line:column: message`.
    pub fn parse(text: &str, file: &Path) -> Result<JopConfig, ConfigError> {
        let file_buf = || file.to_path_buf();
        let at = |offset: usize| line_col(text, offset);
        let doc: toml::Spanned<toml::Table> = toml::from_str(text).map_err(|e: toml::de::Error| match e.span() {
            Some(s) => {
                let (line, column) = at(s.start);
                ConfigError::Syntax {
                    file: file_buf(),
                    line,
                    column,
                    message: e.message().trim().to_string(),
                }
            }
            None => ConfigError::SyntaxNowhere {
                file: file_buf(),
                message: e.message().trim().to_string(),
            },
        })?;
        let dir = file.parent().unwrap_or(Path::new("."));
        let mut cfg = JopConfig {
            file: file.to_path_buf(),
            ..JopConfig::default()
        };
        let Some(jop) = doc.get_ref().get("jop") else {
            return Ok(cfg);
        };
        let table = jop
            .as_table()
            .ok_or_else(|| ConfigError::JopNotTable { file: file_buf() })?;
        for (k, v) in table {
            if !KEYS.contains(&k.as_str()) {
                let off = text
                    .find(&format!("{k} "))
                    .or_else(|| text.find(&format!("{k}=")))
                    .unwrap_or(0);
                let (line, column) = at(off);
                return Err(ConfigError::UnknownKey {
                    file: file_buf(),
                    line,
                    column,
                    key: k.clone(),
                });
            }
            if k == "timeout" {
                let secs = v.as_integer().filter(|n| *n > 0).ok_or_else(|| {
                    let (line, column) = at(text.find("timeout").unwrap_or(0));
                    ConfigError::BadTimeout {
                        file: file_buf(),
                        line,
                        column,
                    }
                })?;
                cfg.timeout = Some(secs as u64);
                continue;
            }
            let s = v
                .as_str()
                .ok_or_else(|| {
                    let (line, column) = at(text.find(k.as_str()).unwrap_or(0));
                    ConfigError::NotAString {
                        file: file_buf(),
                        line,
                        column,
                        key: k.clone(),
                    }
                })?
                .to_string();
            if k == "host_javac" {
                cfg.host_javac = s.split_whitespace().map(str::to_string).collect();
                if cfg.host_javac.is_empty() {
                    let (line, column) = at(text.find("host_javac").unwrap_or(0));
                    return Err(ConfigError::EmptyHostJavac {
                        file: file_buf(),
                        line,
                        column,
                    });
                }
                continue;
            }
            if k == "host_library" {
                cfg.host_library = Some(s.split_whitespace().map(str::to_string).collect());
                continue;
            }
            if k == "reset" {
                cfg.reset = Some(s);
                continue;
            }
            if k == "encoding" {
                cfg.encoding = Some(s.parse().map_err(|source| {
                    let (line, column) = at(text.find("encoding").unwrap_or(0));
                    ConfigError::Encoding {
                        file: file_buf(),
                        line,
                        column,
                        source,
                    }
                })?);
                continue;
            }
            if k != "home" {
                if let Some(bad) = unknown_placeholder(&s) {
                    let (line, column) = at(text.find(&format!("{{{bad}}}")).unwrap_or(0));
                    return Err(ConfigError::UnknownPlaceholder {
                        file: file_buf(),
                        line,
                        column,
                        placeholder: bad,
                        key: k.clone(),
                    });
                }
            }
            match k.as_str() {
                "home" => cfg.home = Some(dir.join(s)),
                "build" => cfg.build = Some(s),
                "image" => cfg.image = Some(s),
                _ => cfg.jopsim = Some(s),
            }
        }
        Ok(cfg)
    }

    /// `jopcal.toml` in `start` or the nearest directory above it, if any.
    pub fn find(start: &Path) -> Result<Option<JopConfig>, ConfigError> {
        for dir in start.ancestors() {
            let f = dir.join("jopcal.toml");
            if f.is_file() {
                let text = std::fs::read_to_string(&f).map_err(|source| ConfigError::Io {
                    file: f.clone(),
                    source,
                })?;
                return JopConfig::parse(&text, &f).map(Some);
            }
        }
        Ok(None)
    }
}

fn unknown_placeholder(t: &str) -> Option<String> {
    let mut rest = t;
    while let Some(open) = rest.find('{') {
        let after = &rest[open + 1..];
        let close = after.find('}')?;
        let name = &after[..close];
        if !PLACEHOLDERS.contains(&name) {
            return Some(name.to_string());
        }
        rest = &after[close + 1..];
    }
    None
}

/// Fills a template's placeholders from `values`.
pub fn expand(template: &str, values: &BTreeMap<&str, String>) -> String {
    let mut s = template.to_string();
    for (k, v) in values {
        s = s.replace(&format!("{{{k}}}"), v);
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    proptest::proptest! {
        /// The CI stand-in for the `jop_config` fuzz target: any text is a
        /// configuration or an error naming the file, never a panic.
        #[test]
        fn any_text_parses_or_is_named(text in "(\\[jop\\]\n)?([a-z]{1,8} ?= ?(\"[^\"\n]{0,12}\"|[0-9-]{1,4}|\\[\\])\n){0,4}") {
            if let Err(e) = JopConfig::parse(&text, Path::new("/p/jopcal.toml")) {
                proptest::prop_assert!(e.to_string().starts_with("/p/jopcal.toml"), "{}", e);
            }
        }
    }

    #[test]
    fn the_example_parses_and_runs_jopsim_by_class_name() {
        let c = JopConfig::parse(EXAMPLE, Path::new("/lab/jopcal.toml")).unwrap();
        assert_eq!(c.home, Some(PathBuf::from("/lab/../jop")));
        let jopsim = c.jopsim.unwrap();
        // `java -jar jop-tools.jar` fails: the jar names no main class.
        assert!(!jopsim.contains("-jar"), "{jopsim}");
        assert!(jopsim.contains("com.jopdesign.tools.JopSim {image}"), "{jopsim}");
        assert!(c.build.unwrap().contains("TARGET_APP_PATH={gen}"));
        assert_eq!(
            c.host_library,
            Some(vec!["java.util.Random".to_string(), "java.lang.Math".to_string()])
        );
        assert_eq!(
            JopConfig::parse("[jop]\nencoding = \"Latin1\"\n", Path::new("/p/jopcal.toml"))
                .unwrap()
                .encoding,
            Some(jopcal_workloads::SourceEncoding::Latin1)
        );
        assert_eq!(
            JopConfig::parse("[jop]\ntimeout = 900\n", Path::new("/p/jopcal.toml"))
                .unwrap()
                .timeout,
            Some(900)
        );
        assert!(
            JopConfig::parse("[jop]\ntimeout = \"long\"\n", Path::new("/p/jopcal.toml"))
                .unwrap_err()
                .to_string()
                .ends_with("`timeout` must be a whole number of seconds, at least 1")
        );
        assert_eq!(
            JopConfig::parse("[jop]\nencoding = \"EBCDIC\"\n", Path::new("/p/jopcal.toml")).unwrap_err().to_string(),
            "/p/jopcal.toml:2:1: unknown source encoding `EBCDIC` (jopcal reads UTF-8 and ISO-8859-1, also called Latin1)"
        );
    }

    #[test]
    fn parses_and_names_mistakes() {
        let f = Path::new("/p/jopcal.toml");
        let c = JopConfig::parse("[jop]\nhome = \"../jop\"\njopsim = \"sim {image}\"\n", f).unwrap();
        assert_eq!(c.home, Some(PathBuf::from("/p/../jop")));
        assert_eq!(c.jopsim.as_deref(), Some("sim {image}"));
        assert_eq!(
            JopConfig::parse("[jop]\nbuild = \"make {target}\"\n", f).unwrap_err().to_string(),
            "/p/jopcal.toml:2:15: unknown placeholder {target} in `build` (known: home, main, class, package_dir, name, sources, gen, out, image)"
        );
        assert_eq!(
            JopConfig::parse("[jop]\nhom = \"x\"\n", f).unwrap_err().to_string(),
            "/p/jopcal.toml:2:1: unknown key `hom` in [jop] (known: home, build, image, jopsim, encoding, timeout, host_javac, host_library, reset)"
        );
        let c = JopConfig::parse("[jop]\nhost_javac = \" ecj -source 1.5  -target 1.5 \"\n", f).unwrap();
        assert_eq!(c.host_javac, ["ecj", "-source", "1.5", "-target", "1.5"]);
        assert!(JopConfig::parse("[jop]\nhost_javac = \"  \"\n", f)
            .unwrap_err()
            .to_string()
            .starts_with("/p/jopcal.toml:2:1: `host_javac` is empty"));
        assert!(JopConfig::parse("[jop\n", f)
            .unwrap_err()
            .to_string()
            .starts_with("/p/jopcal.toml:1:"));
        let v = BTreeMap::from([("class", "LoopKfl".to_string()), ("home", "/j".to_string())]);
        assert_eq!(expand("{home}/bin/{class}.jop", &v), "/j/bin/LoopKfl.jop");
    }
}
