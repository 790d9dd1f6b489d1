//! The JOP tree's own versions of JDK classes on the host: JOP runs its own
//! library (its `java.util.Random`, `Vector`, ...), whose code differs from
//! the host JDK's, so a profile of the host's version counts work the target
//! never does. `host_library` in `jopcal.toml` names such classes; they are
//! compiled from the tree's sources for the host JVM and the profiled JVM
//! runs them in place of its own (`--patch-module java.base=...`), so the
//! host profile counts the bytecodes of the library JOP runs. A JDK class of
//! static methods (`java.lang.Math`) keeps the JDK's methods beside the
//! tree's, which the program's calls reach through the bytecode router.

use crate::java;
use anyhow::{anyhow, bail, Context, Result};
use jopcal_output::atomic;
use jopcal_output::cached::{build_once, content_hash};
use jopcal_output::children::InGroup;
use jopcal_profile::routed::TREE_METHOD_PREFIX;
use sha2::{Digest, Sha256};
use std::path::{Path, PathBuf};

/// The tree's source roots of its JDK classes, in the order its Makefile's
/// default `TARGET_SOURCE` lists them (the first that has a class wins).
const JDK_ROOTS: [&str; 3] = [
    "java/target/src/common",
    "java/target/src/jdk_base",
    "java/target/src/jdk11",
];

/// The classes of [`jopcal_tree::config::DEFAULT_HOST_LIBRARY`] the tree at
/// `home` has a source of.
pub fn default_classes(home: &Path) -> Vec<String> {
    jopcal_tree::config::DEFAULT_HOST_LIBRARY
        .iter()
        .filter(|c| {
            let rel = format!("{}.java", c.replace('.', "/"));
            JDK_ROOTS.iter().any(|r| home.join(r).join(&rel).is_file())
        })
        .map(|c| c.to_string())
        .collect()
}

/// What of the tree's library the host runs in place of the JDK's.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TreeLibrary {
    /// Whole classes (dotted names; of `java.lang.System` only its clock).
    pub classes: Vec<String>,
    /// Methods run inside the JDK's own classes: `Throwable`'s constructors
    /// and `fillInStackTrace`, exception classes' constructors (qualified,
    /// `java.lang.ArrayIndexOutOfBoundsException.<init>(I)V`;
    /// `shadow::TREE_METHODS_LIST`).
    pub merged: Vec<String>,
}

impl TreeLibrary {
    pub fn is_empty(&self) -> bool {
        self.classes.is_empty() && self.merged.is_empty()
    }
}

/// Whether the host ran the tree's version of `m`: a method of one of the
/// library's classes, or one of its methods merged into the JDK's classes.
pub fn runs_trees(m: &jopcal_profile::MethodInfo, tree_library: &TreeLibrary) -> bool {
    use jopcal_profile::routed::{is_clock, CLOCK_CLASS};
    let of_a_class = tree_library.classes.iter().any(|c| c.replace('.', "/") == m.class)
        && (m.class != CLOCK_CLASS || is_clock(&m.class, &m.name));
    of_a_class || tree_library.merged.contains(&m.qualified())
}

/// The options that run the profiled JVM with the library in `dir` (from
/// [`library_dir`]) in `java.base`: where the library brought the tree's
/// runtime package along (its `Math` calls `Cordic`), the suite's classes
/// reach that package in `java.base`, not their own copy.
pub fn jvm_args(dir: &Path) -> Result<Vec<String>> {
    let mut args = java::patch(&[dir])?;
    if dir.join(RUNTIME_PACKAGE).is_dir() {
        args.extend([
            "--add-exports".to_string(),
            "java.base/com.jopdesign.sys=ALL-UNNAMED".to_string(),
        ]);
    }
    Ok(args)
}

/// The runtime package's path, in the tree's sources and in a class directory.
const RUNTIME_PACKAGE: &str = "com/jopdesign/sys";
/// The JDK class of which the host runs only some of the tree's methods:
/// `System`'s clock ([`jopcal_tree::runtime::clock_methods`]), compiled as a
/// class of its own ([`CLOCK_CLASS`]) and merged into the JDK's `System`.
const SYSTEM: &str = "java.lang.System";
const CLOCK_CLASS: &str = "JopcalTreeClock";
/// jopcal's merger of a class of static methods (its own Java, compiled here against ASM).
const MERGER_SOURCE: &str = include_str!("../java/MergeStatics.java");

/// How the tree's JDK classes are compiled for the host.
pub struct How<'a> {
    /// The suite's host stand-ins of JOP's runtime package: its Native, and
    /// a Const where the tree has none.
    pub stubs: &'a Path,
    /// The tree's compiler (`host_javac`), so that the host runs the
    /// bytecodes JOP links; `None`: the host JDK's javac, which compiles a
    /// `java.base` class only as part of that module.
    pub compiler: Option<&'a jopcal_workloads::build::Compiler>,
    pub encoding: jopcal_workloads::SourceEncoding,
    /// jopcal's cache: the library is built once into a directory of it.
    pub cache: &'a Path,
}

/// The directory of the tree's versions of `classes` (dotted names of
/// `java.base` classes) compiled for the host JVM to run in place of its
/// own ([`jvm_args`]), compiled here as `how` says and cached by a hash of
/// the sources, the compiler and the stand-ins; `None` without classes.
///
/// Each class is compiled alone as part of `java.base` (the rest of the
/// module is the host JDK's), with what it uses of the tree's runtime
/// package (`java.lang.Math` calls `Cordic` and the software float). A
/// class the JDK keeps instance state in (`java.util.Random`) replaces the
/// JDK's whole; into a JDK class of static methods (`java.lang.Math`,
/// which the JDK's own code calls for methods the tree's lacks) the tree's
/// methods are merged under [`TREE_METHOD_PREFIX`], listed in
/// [`java::MERGED_LIST`] for the bytecode router to point the program's calls at.
pub fn library_dir(home: &Path, classes: &[String], how: &How, say: &dyn Fn(&str)) -> Result<Option<PathBuf>> {
    let How {
        stubs,
        compiler,
        encoding,
        cache,
    } = *how;
    if classes.is_empty() {
        return Ok(None);
    }
    let jdk = jopcal_workloads::Jdk::detect()?;
    let mut sources: Vec<(String, String, PathBuf)> = Vec::new();
    for class in classes {
        if !class.starts_with("java.") || class.contains('/') || class.ends_with('.') {
            bail!("host_library {class}: name a class of the host JDK's java.base by its dotted name (e.g. java.util.Random)");
        }
        let rel = format!("{}.java", class.replace('.', "/"));
        let Some(root) = JDK_ROOTS.iter().map(|r| home.join(r)).find(|r| r.join(&rel).is_file()) else {
            bail!(
                "host_library {class}: the tree has no {rel} under {}",
                JDK_ROOTS.join(", ")
            );
        };
        let file = root.join(&rel);
        let rel = match class.as_str() {
            SYSTEM => format!("java/lang/{CLOCK_CLASS}.java"),
            _ => rel,
        };
        sources.push((class.clone(), rel, file));
    }
    let Some(asm) = java::asm_jar() else {
        bail!(
            "host_library {}: jopcal compiles the tree's JDK classes with ASM (JOPCAL_ASM_JAR, else {}: scripts/setup installs Debian's libasm-java)",
            classes.join(" "),
            java::DEBIAN_ASM
        );
    };
    let runtime = home.join(java::RUNTIME_DIR);
    let mut h = Sha256::new();
    h.update(jdk.version.as_bytes());
    h.update(encoding.javac_name().as_bytes());
    if let Some(c) = compiler {
        h.update(c.identity.as_bytes());
        h.update(c.argv.join(" ").as_bytes());
    }
    h.update(TREE_METHOD_PREFIX.as_bytes());
    h.update(MERGER_SOURCE.as_bytes());
    h.update(ARRAYCOPY_STAND_IN.as_bytes());
    if stubs.is_dir() {
        h.update(content_hash(stubs)?.as_bytes());
    }
    if runtime.is_dir() {
        h.update(content_hash(&runtime)?.as_bytes());
    }
    for (class, _, file) in &sources {
        let bytes = std::fs::read(file).with_context(|| format!("reading {}", file.display()))?;
        h.update(class.as_bytes());
        h.update((bytes.len() as u64).to_le_bytes());
        h.update(&bytes);
    }
    let key: String = h.finalize().iter().take(8).map(|b| format!("{b:02x}")).collect();
    let dir = cache.join("host-library").join(key);
    build_once(&dir, |tmp| build(tmp, &jdk, &asm, &sources, &runtime, how))?;
    let merged = std::fs::read_to_string(dir.join(java::MERGED_LIST)).unwrap_or_default();
    let (class, name, descriptor) = jopcal_profile::routed::ARRAYCOPY;
    let stand_in = format!("{class} {name} {descriptor}");
    let described: Vec<String> = classes
        .iter()
        .map(|c| {
            let owner = format!("{} ", c.replace('.', "/"));
            match merged
                .lines()
                .filter(|l| l.starts_with(&owner) && *l != stand_in)
                .count()
            {
                0 => c.clone(),
                n => format!("{c} (its {n} methods beside the JDK's, where the program calls them)"),
            }
        })
        .collect();
    say(&format!(
        "  profile host library: the tree's {} on the host JVM instead of its own{} ({})",
        described.join(", "),
        if merged.lines().any(|l| l == stand_in) {
            ", and jopcal's stand-in of System.arraycopy, which counts the elements it copies"
        } else {
            ""
        },
        dir.display()
    ));
    Ok(Some(dir))
}

/// Compiles `sources` (class, path in the source root, file) into `tmp`
/// and merges the classes of static methods ([`library_dir`]).
fn build(
    tmp: &Path,
    jdk: &jopcal_workloads::Jdk,
    asm: &Path,
    sources: &[(String, String, PathBuf)],
    runtime: &Path,
    how: &How,
) -> Result<()> {
    let How {
        stubs,
        compiler,
        encoding,
        ..
    } = *how;
    let src = tmp.join("src");
    let tool = tmp.join("tool");
    for d in [tmp, &src, &tool] {
        std::fs::create_dir_all(d)?;
    }
    // The module's sources are the classes alone (the tree's other JDK
    // classes must not take the place of the host's while they compile)
    // and the runtime package.
    let mut files = Vec::new();
    for (class, rel, file) in sources {
        let to = src.join(rel);
        std::fs::create_dir_all(to.parent().expect("a package"))?;
        if class == SYSTEM {
            // Its clock alone, under a name of its own: the tree's whole
            // System would take the JDK's place for everything compiled here.
            let text = std::fs::read_to_string(file).with_context(|| format!("reading {}", file.display()))?;
            let clock = jopcal_tree::runtime::clock_methods(&text, CLOCK_CLASS)
                .map_err(|e| anyhow!("host_library {SYSTEM}: {}: {e}", file.display()))?;
            let clock = with_arraycopy(&clock);
            atomic::write_atomic(&to, clock.as_bytes())?;
        } else {
            std::fs::copy(file, &to).with_context(|| format!("copying {}", file.display()))?;
        }
        files.push(to);
    }
    if runtime.is_dir() {
        let package = src.join(RUNTIME_PACKAGE);
        std::fs::create_dir_all(&package)?;
        use java::{copy_sources, NOT_FROM_THE_TREE};
        copy_sources(runtime, &package, |name| !NOT_FROM_THE_TREE.contains(&name))?;
        // The suite's Native always; its other stand-ins where the tree has no such class.
        let tree_has = |name: &str| runtime.join(name).is_file();
        copy_sources(stubs, &package, |name| name == "Native.java" || !tree_has(name))?;
    }
    let mut command = match compiler {
        Some(c) => {
            let mut command = std::process::Command::new(&c.argv[0]);
            command.args(&c.argv[1..]).arg("-sourcepath").arg(&src);
            command
        }
        None => {
            let mut command = std::process::Command::new(&jdk.javac);
            command
                .args(["-nowarn", "-encoding", encoding.javac_name(), "--patch-module"])
                .arg(format!("java.base={}", src.display()));
            command
        }
    };
    let program = command.get_program().to_string_lossy().into_owned();
    let o = command
        .arg("-d")
        .arg(tmp)
        .args(&files)
        .output_in_group()
        .with_context(|| format!("running {program}"))?;
    if !o.status.success() {
        let text = String::from_utf8_lossy(&o.stderr) + String::from_utf8_lossy(&o.stdout);
        let first = text
            .lines()
            .find(|l| l.contains("error:") || l.contains("ERROR"))
            .unwrap_or("the compiler failed")
            .trim();
        let class = sources
            .iter()
            .find(|(_, rel, _)| first.contains(rel.as_str()))
            .map_or_else(
                || sources.iter().map(|s| s.0.as_str()).collect::<Vec<_>>().join(" "),
                |s| s.0.clone(),
            );
        bail!("host_library {class}: the tree's source does not compile for the host JDK: {first}");
    }
    let _ = std::fs::remove_dir_all(&src);
    let javac = [
        jdk.javac.to_string_lossy().into_owned(),
        "-nowarn".into(),
        "-cp".into(),
        asm.to_string_lossy().into_owned(),
    ];
    java::compile(&javac, &tool, [write_merger(&tool)?])
        .with_context(|| format!("compiling jopcal's MergeStatics against {}", asm.display()))?;
    let mut args: Vec<std::ffi::OsString> = vec![TREE_METHOD_PREFIX.into()];
    args.extend(sources.iter().map(|(class, rel, _)| {
        let mut arg = tmp.join(rel.replace(".java", ".class")).into_os_string();
        if class == SYSTEM {
            arg.push(format!("={}", SYSTEM.replace('.', "/")));
        }
        arg
    }));
    let cp = std::env::join_paths([asm, &tool])?;
    let merged = java::run_tool(jdk, &cp, "jopcal.tools.MergeStatics", &args)?
        .map_err(|line| anyhow!("host_library {}", line.as_deref().unwrap_or("merging failed")))?;
    let _ = std::fs::remove_dir_all(&tool);
    atomic::write_atomic(&tmp.join(java::MERGED_LIST), &merged)?;
    Ok(())
}

/// JOP copies an array in a Java loop of the tree's `System.arraycopy`
/// (`Native.rdMem`/`wrMem` over the handles), which the host cannot run.
/// jopcal's stand-in, merged beside the clock: the JDK's copy, then one
/// `iinc` per element, which the profile reads as the elements copied
/// (`jopcal_profile::routed::copied_elements`); the timing model prices the
/// call by them, never by the stand-in's bytecodes.
const ARRAYCOPY_STAND_IN: &str = "
    public static void arraycopy(Object src, int srcOffset, Object dst, int dstOffset, int length) {
        System.arraycopy(src, srcOffset, dst, dstOffset, length);
        for (int i = 0; i < length; i++) {
        }
    }
";

/// `clock` (the class of the tree's clock methods) with
/// [`ARRAYCOPY_STAND_IN`] added.
fn with_arraycopy(clock: &str) -> String {
    match clock.rfind('}') {
        Some(end) => format!("{}{ARRAYCOPY_STAND_IN}{}", &clock[..end], &clock[end..]),
        None => clock.to_string(),
    }
}

/// Writes the merger's source into `dir`; its path.
fn write_merger(dir: &Path) -> Result<PathBuf> {
    let p = dir.join("MergeStatics.java");
    std::fs::write(&p, MERGER_SOURCE)?;
    Ok(p)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn method(class: &str, name: &str, descriptor: &str) -> jopcal_profile::MethodInfo {
        jopcal_profile::MethodInfo {
            class: class.into(),
            name: name.into(),
            descriptor: descriptor.into(),
            bytecode_len: 10,
            native: false,
            synchronized: false,
        }
    }

    #[test]
    fn a_class_runs_all_its_methods_as_the_trees_and_a_named_method_only_itself() {
        let library = TreeLibrary {
            classes: vec!["java.util.Vector".to_string(), "java.lang.System".to_string()],
            merged: vec!["java.lang.ArrayIndexOutOfBoundsException.<init>(I)V".to_string()],
        };
        assert!(runs_trees(&method("java/util/Vector", "size", "()I"), &library));
        assert!(runs_trees(
            &method("java/lang/System", "currentTimeMillis", "()J"),
            &library
        ));
        assert!(!runs_trees(&method("java/lang/System", "arraycopy", "()V"), &library));
        let aioobe = "java/lang/ArrayIndexOutOfBoundsException";
        assert!(runs_trees(&method(aioobe, "<init>", "(I)V"), &library));
        assert!(!runs_trees(
            &method(aioobe, "<init>", "(Ljava/lang/String;)V"),
            &library
        ));
        assert!(!runs_trees(&method("java/util/Hashtable", "size", "()I"), &library));
    }
}
