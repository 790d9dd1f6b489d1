//! The JOP tree's whole class library on the host, under names of its own.
//!
//! JOP runs the tree's `String`, `StringBuffer`, `Integer`, `Character`,
//! `Vector`, `Hashtable`, ...: Java code that differs from the host JDK's,
//! so a profile of the JDK's versions counts work the target never does
//! (a program that formats numbers was estimated 63% low). The host JVM
//! cannot run those classes in place of its own: the JVM and the JDK's code
//! depend on theirs. So the program is compiled as the tree's build
//! compiles it, against the tree's library (`-bootclasspath ""`, the tree's
//! source roots), and jopcal's `ShadowLibrary` (its own Java, run with
//! Debian's ASM) renames every tree class the JDK does not have to keep
//! (`java/lang/String` becomes `java/lang/jopcal$tree$String`, in
//! `java.base`) and every reference to it; where the program hands a JDK
//! class (an exception, `PrintStream`) a string, a conversion of jopcal's
//! turns one into the other. The profile drops the conversions and the
//! prefix (`jopcal_profile::routed::splice`): it reads as the tree's classes
//! JOP runs. Kept as the JDK's: `Object`, `Class`, the exceptions, threads,
//! and `System`, `Math` and `Random`, whose tree versions the host library
//! (the `library` module) brings; `System.out` is the tree's, read from
//! a shadow of the tree's `System`, and prints through jopcal's serial line.
//!
//! Everything is cached by the hash of its inputs. A program or tree the
//! shadow cannot carry runs with the JDK's library, with a note saying why.

use crate::java;
use anyhow::{anyhow, bail, Context, Result};
use jopcal_output::cached::{build_once, content_hash};
use jopcal_tree::copies::CONFIG_SOURCE;
use sha2::{Digest, Sha256};
use std::path::{Path, PathBuf};

/// The tree's source roots, in its Makefile's `TARGET_SOURCE` order (the
/// program's own come first here: a generated suite names its classes so
/// that none is the tree's).
const TREE_ROOTS: [&str; 4] = [
    "java/target/src/common",
    "java/target/src/jdk_base",
    "java/target/src/jdk11",
    "java/target/src/rtapi",
];
/// A class only string concatenation reaches: ecj writes no class file
/// for it unless it is named (see docs/notes/jop-tree.md, the `javac` wrapper).
const CONCATENATION: &str = "java/target/src/jdk_base/java/lang/StringBuilder.java";
/// jopcal's renamer (its own Java, compiled here against ASM).
const SHADOW_SOURCE: &str = include_str!("../java/ShadowLibrary.java");
/// In the library directory: the tree classes that run under their shadow names.
pub const SHADOWED_LIST: &str = "shadowed.txt";
/// In the library directory: the tree's methods that run in place of the
/// JDK's in the JDK's own classes (`Throwable`'s constructors and
/// `fillInStackTrace`, exception classes' constructors; qualified names).
pub const TREE_METHODS_LIST: &str = "tree-methods.txt";
/// In the program directory: the classes JOP initializes before `main`.
pub const INIT_LIST: &str = "init.txt";

/// A suite's classes with the tree's library under shadow names.
#[derive(Debug, Clone)]
pub struct Shadowed {
    /// The program's classes (their references renamed), to put before the
    /// suite's host classes (whose host stand-ins of the runtime stay).
    pub program: PathBuf,
    /// The shadow classes and jopcal's conversions, with the host library's
    /// classes: what goes into `java.base`.
    pub library: PathBuf,
    /// The tree classes that run shadowed (dotted tree names).
    pub classes: Vec<String>,
    /// The tree's methods that run in the JDK's classes
    /// (`java.lang.ArrayIndexOutOfBoundsException.<init>(I)V`).
    pub merged: Vec<String>,
}

impl Shadowed {
    /// The JVM option that initializes the classes as JOP does, before `main`.
    pub fn init_option(&self) -> String {
        format!("-Djopcal.init={}", self.program.join(INIT_LIST).display())
    }
}

/// ASM's commons (the remapper), beside ASM's core jar as Debian installs them.
fn commons_jar(asm: &Path) -> Option<PathBuf> {
    let jar = asm.with_file_name("asm-commons.jar");
    jar.is_file().then_some(jar)
}

/// The suite in `root` compiled against the tree at `home` and shadowed
/// (see the module doc), with the host library's classes in `library`;
/// cached. `Err` says why the shadow cannot be made.
pub fn shadow(
    home: &Path,
    root: &Path,
    compiler: &jopcal_workloads::build::Compiler,
    library: Option<&Path>,
    cache: &Path,
    say: &dyn Fn(&str),
) -> Result<Shadowed> {
    let Some(asm) = java::asm_jar() else {
        bail!("no ASM (JOPCAL_ASM_JAR, else {})", java::DEBIAN_ASM);
    };
    let Some(commons) = commons_jar(&asm) else {
        bail!(
            "no asm-commons.jar beside {} (Debian's libasm-java has both)",
            asm.display()
        );
    };
    let jdk = jopcal_workloads::Jdk::detect()?;
    let manifest = jopcal_workloads::suite::Suite::load(root).map_err(|e| anyhow!("{e}"))?;
    let src = root.join("src");
    let mut roots: Vec<PathBuf> = std::iter::once(src.clone())
        .chain(manifest.sourcepath.iter().cloned())
        .chain(TREE_ROOTS.iter().map(|r| home.join(r)).filter(|r| r.is_dir()))
        .collect();
    let config = tree_config(home, cache)?;
    roots.extend(config.clone());
    // The workloads' main classes, and what they reach through the source
    // path, as the tree's build compiles one image (a file of the user's
    // that no workload reaches does not stop the others).
    let mut sources: Vec<PathBuf> = manifest
        .workloads
        .iter()
        .filter_map(|w| {
            let rel = format!("{}.java", w.main.replace('.', "/"));
            roots.iter().map(|r| r.join(&rel)).find(|f| f.is_file())
        })
        .collect();
    sources.sort();
    sources.dedup();
    if sources.is_empty() {
        bail!("no source of the suite's main classes under {}", src.display());
    }
    let mut h = Sha256::new();
    h.update(jdk.version.as_bytes());
    h.update(compiler.identity.as_bytes());
    h.update(compiler.argv.join(" ").as_bytes());
    h.update(SHADOW_SOURCE.as_bytes());
    h.update(asm.to_string_lossy().as_bytes());
    for r in &roots {
        h.update(r.to_string_lossy().as_bytes());
        h.update(content_hash(r)?.as_bytes());
    }
    if let Some(l) = library {
        h.update(content_hash(l)?.as_bytes());
    }
    let key: String = h.finalize().iter().take(8).map(|b| format!("{b:02x}")).collect();
    let dir = cache.join("host-shadow").join(key);
    build_once(&dir, |tmp| {
        build(
            tmp,
            &Build {
                jdk: &jdk,
                asm: &asm,
                commons: &commons,
                compiler,
                roots: &roots,
                sources: &sources,
                concatenation: Some(home.join(CONCATENATION)).filter(|p| p.is_file()),
                library,
            },
        )
    })?;
    let library = dir.join("library");
    let classes = read_list(&library.join(SHADOWED_LIST))?;
    let merged = read_list(&library.join(TREE_METHODS_LIST))?;
    say(&format!(
        "  profile host library: the program compiled against the tree's library; {} of its classes run on the host as the tree's ({}){}",
        classes.len(),
        summary(&classes),
        if merged.is_empty() {
            String::new()
        } else {
            format!(", and the tree's {} in the JDK's classes", merged.join(", "))
        }
    ));
    Ok(Shadowed {
        program: dir.join("program"),
        library,
        classes,
        merged,
    })
}

/// The names `ShadowLibrary` listed in `path`, one a line.
fn read_list(path: &Path) -> Result<Vec<String>> {
    Ok(std::fs::read_to_string(path)
        .with_context(|| format!("reading {}", path.display()))?
        .lines()
        .filter(|l| !l.is_empty())
        .map(str::to_string)
        .collect())
}

/// [`CONFIG_SOURCE`] below its source root.
const CONFIG_IN_ROOT: &str = "com/jopdesign/sys/Config.java";

/// A source root holding the tree's `Config.java` when the tree has none of
/// its own, else `None`. The Makefile's `jop_config` target writes it into
/// the tree's sources as the first step of every image build; jopcal builds
/// images in private copies of the tree, so a tree nobody built an image in
/// by hand has none, and the tree's library does not compile without it.
/// It is made here as the Makefile makes it (`make jop_config`, its output
/// sent to `cache` by `TARGET`), once per Makefile.
fn tree_config(home: &Path, cache: &Path) -> Result<Option<PathBuf>> {
    let makefile = home.join("Makefile");
    if home.join(CONFIG_SOURCE).is_file() || !makefile.is_file() || !home.join(TREE_ROOTS[0]).is_dir() {
        return Ok(None);
    }
    let mut h = Sha256::new();
    h.update(std::fs::read(&makefile).with_context(|| format!("reading {}", makefile.display()))?);
    let key: String = h.finalize().iter().take(8).map(|b| format!("{b:02x}")).collect();
    let dir = cache.join("tree-config").join(key);
    build_once(&dir, |tmp| {
        let made = tmp.join("src/common").join(CONFIG_IN_ROOT);
        std::fs::create_dir_all(made.parent().unwrap_or(tmp))?;
        let o = std::process::Command::new("make")
            .arg("-s")
            .arg("-C")
            .arg(home)
            .arg(format!("TARGET={}", tmp.display()))
            .arg("jop_config")
            .output()
            .context("running make jop_config in the tree")?;
        if !(o.status.success() && std::fs::metadata(&made).is_ok_and(|m| m.len() > 0)) {
            let text = String::from_utf8_lossy(&o.stderr);
            let line = text
                .lines()
                .find(|l| !l.trim().is_empty())
                .unwrap_or("no Config.java written");
            bail!(
                "the tree has no {CONFIG_SOURCE} and `make -C {} jop_config` did not make one: {line}",
                home.display()
            );
        }
        Ok(())
    })?;
    Ok(Some(dir.join("src/common")))
}

/// The outer classes of `classes`, for a log line.
fn summary(classes: &[String]) -> String {
    let outer: Vec<&str> = classes
        .iter()
        .filter(|c| !c.contains('$'))
        .map(String::as_str)
        .collect();
    outer.join(", ")
}

struct Build<'a> {
    jdk: &'a jopcal_workloads::Jdk,
    asm: &'a Path,
    commons: &'a Path,
    compiler: &'a jopcal_workloads::build::Compiler,
    roots: &'a [PathBuf],
    sources: &'a [PathBuf],
    concatenation: Option<PathBuf>,
    library: Option<&'a Path>,
}

/// Compiles the program against the tree's library into `tmp/compiled`,
/// shadows it into `tmp/program` and `tmp/library` and puts the host
/// library's classes beside the shadows.
fn build(tmp: &Path, b: &Build) -> Result<()> {
    let compiled = tmp.join("compiled");
    let tool = tmp.join("tool");
    for d in [&compiled, &tool] {
        std::fs::create_dir_all(d)?;
    }
    // As the tree's Makefile compiles the program: nothing of the host JDK.
    let mut argv = Vec::new();
    let mut given = b.compiler.argv.iter();
    while let Some(a) = given.next() {
        // --release cannot go with a boot class path of the tree's.
        if a == "--release" {
            let v = given.next().cloned().unwrap_or_default();
            argv.extend(["-source".into(), v.clone(), "-target".into(), v]);
        } else {
            argv.push(a.clone());
        }
    }
    argv.extend(["-bootclasspath", "", "-extdirs", "", "-classpath", ""].map(String::from));
    argv.push("-sourcepath".into());
    argv.push(
        std::env::join_paths(b.roots)
            .map_err(|e| anyhow!("the source path cannot name {:?}: {e}", b.roots))?
            .to_string_lossy()
            .into_owned(),
    );
    let files = b.sources.iter().cloned().chain(b.concatenation.clone());
    java::compile(&argv, &compiled, files).context("compiling the program against the tree's library")?;
    let source = tool.join("ShadowLibrary.java");
    std::fs::write(&source, SHADOW_SOURCE)?;
    let cp = std::env::join_paths([b.asm, b.commons])?;
    let javac = [
        b.jdk.javac.to_string_lossy().into_owned(),
        "-nowarn".into(),
        "-cp".into(),
        cp.to_string_lossy().into_owned(),
    ];
    java::compile(&javac, &tool, [source])
        .with_context(|| format!("compiling jopcal's ShadowLibrary against {}", b.asm.display()))?;
    let program = tmp.join("program");
    let library = tmp.join("library");
    let cp = std::env::join_paths([b.asm, b.commons, &tool])?;
    let args = [&compiled, &program, &library].map(|p| p.clone().into_os_string());
    java::run_tool(b.jdk, &cp, "jopcal.tools.ShadowLibrary", &args)?
        .map_err(|line| anyhow!("{}", line.as_deref().unwrap_or("ShadowLibrary failed")))?;
    if let Some(l) = b.library {
        java::copy_tree(l, &library)?;
        let _ = std::fs::remove_file(library.join(".complete"));
    }
    let _ = std::fs::remove_dir_all(&compiled);
    let _ = std::fs::remove_dir_all(&tool);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A tree whose Makefile's `jop_config` writes a `Config` into `$(TARGET)`, as JOP's does.
    fn tree(dir: &Path, recipe: &str) -> PathBuf {
        let home = dir.join("tree");
        std::fs::create_dir_all(home.join(TREE_ROOTS[0])).unwrap();
        std::fs::write(
            home.join("Makefile"),
            format!("TARGET=java/target\njop_config:\n\t{recipe}\n"),
        )
        .unwrap();
        home
    }

    #[test]
    fn a_tree_without_its_config_gets_one_made_by_its_makefile_and_a_tree_with_one_keeps_its_own() {
        let dir = tempfile::tempdir().unwrap();
        let home = tree(
            dir.path(),
            "echo 'package com.jopdesign.sys; public class Config { public static final boolean USE_SCOPES=false; }' > $(TARGET)/src/common/com/jopdesign/sys/Config.java",
        );
        let cache = dir.path().join("cache");
        let root = tree_config(&home, &cache)
            .unwrap()
            .expect("a root with the made Config");
        let made = std::fs::read_to_string(root.join(CONFIG_IN_ROOT)).unwrap();
        assert!(made.contains("USE_SCOPES=false"), "{made}");
        assert!(
            root.starts_with(&cache),
            "made in the cache, not in the tree: {}",
            root.display()
        );
        assert!(!home.join(CONFIG_SOURCE).exists(), "the tree is left as it was");
        assert_eq!(tree_config(&home, &cache).unwrap(), Some(root), "made once");
        std::fs::create_dir_all(home.join(CONFIG_SOURCE).parent().unwrap()).unwrap();
        std::fs::write(home.join(CONFIG_SOURCE), "package com.jopdesign.sys; class Config {}").unwrap();
        assert_eq!(tree_config(&home, &cache).unwrap(), None, "the tree's own is used");
    }

    #[test]
    fn a_makefile_that_makes_no_config_is_an_error_that_names_the_file_and_the_target() {
        let dir = tempfile::tempdir().unwrap();
        let home = tree(dir.path(), "@echo 'no such tool' >&2; exit 2");
        let e = tree_config(&home, &dir.path().join("cache")).unwrap_err().to_string();
        assert!(
            e.contains("Config.java") && e.contains("jop_config") && e.contains("no such tool"),
            "{e}"
        );
        let left = std::fs::read_dir(dir.path().join("cache/tree-config")).map_or(0, |d| d.count());
        assert_eq!(left, 0, "nothing half-made is left in the cache");
    }
}
