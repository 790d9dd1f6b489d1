//! The JOP runtime's own Java routines on the host: JOP runs `idiv`, `lmul`
//! and the floating point as Java methods of its runtime
//! (`com.jopdesign.sys.JVM.f_idiv`, `SoftFloat32`, ...), whose time depends
//! on the operands. For a tree's suite, the host profile runs those
//! routines on the program's real operands instead of the host JVM's
//! instructions (`jopcal_profile::routed` says how the profile then reads):
//!
//! 1. the routines are read from the tree's `JVM.java` (each `f_<mnemonic>`
//!    whose parameters are the bytecode's operands as JOP holds them and
//!    whose body is not the "not implemented" stub) and compiled for the
//!    host with what they use of the tree (`SoftFloat32`, `SoftFloat64`, the
//!    constants of `Const`);
//! 2. jopcal's bridge (generated: one static method per bytecode, passing
//!    a float as its bits) calls them;
//! 3. every such bytecode in the suite's host classes, and in the routines
//!    themselves (the float routines multiply longs), becomes a call of the
//!    bridge, rewritten by jopcal's `RouteBytecodes` with ASM (Debian's
//!    `libasm-java`); so do the long shifts and `lcmp`, whose bridge methods
//!    run them as the host does and only let the profiler read the operands
//!    that decide their microcode's path (`jopcal_profile::routed::OBSERVED`).
//!
//! Everything is cached by the hash of its inputs. Without ASM, or with a
//! tree whose routines do not compile for the host, the profile runs the
//! host's instructions and the table prices them by constants, as before;
//! a note says why.

use crate::java::{
    asm_jar, compile, copy_sources, copy_tree, patch, run_tool, DEBIAN_ASM, MERGED_LIST, NOT_FROM_THE_TREE, RUNTIME_DIR,
};
use anyhow::{Context, Result};
use jopcal_output::atomic;
use jopcal_output::cached::{build_once, content_hash};
use jopcal_profile::routed::{Observed, Operand, BRIDGE_CLASS, OBSERVED, REF_OLD_HELD, REF_OLD_NULL};
use jopcal_tree::runtime::{find_routines, Routine};
use sha2::{Digest, Sha256};
use std::path::{Path, PathBuf};

/// Where a suite keeps its host stand-in of Native.
const NATIVE_STAND_IN: &str = "host-stubs/com/jopdesign/sys/Native.java";
/// Compiled for the routines and dropped: the suite's class of each is the
/// one that runs (the tree's `Const` is compiled only for the constants the
/// compiler folds into the routines).
const DROPPED: [&str; 2] = ["Const.class", "Native.class"];
/// jopcal's rewriter (its own Java, compiled here against ASM).
const ROUTER_SOURCE: &str = include_str!("../java/RouteBytecodes.java");
/// jopcal's host stand-in for JOP's serial line and the launcher that puts
/// it under `System.out` (compiled with the routines, in the bridge's package).
const SERIAL_LINE_SOURCE: &str = include_str!("../java/SerialLine.java");
const SERIAL_MAIN_SOURCE: &str = include_str!("../java/SerialMain.java");
/// The launcher's class, dotted: a routed host run starts it with the
/// program's main class as its first argument.
pub const SERIAL_MAIN: &str = "jopcal.host.SerialMain";
/// The bridge's package, dotted.
const BRIDGE_PACKAGE: &str = "jopcal.host";

/// The class path and JVM options that run the suite's classes with their
/// routed bytecodes, through [`SERIAL_MAIN`].
#[derive(Debug, Clone)]
pub struct Routed {
    pub classpath: Vec<PathBuf>,
    pub jvm_args: Vec<String>,
}

/// JVM options of every routed run: a line ends as JOP's `println` ends it,
/// with a carriage return and a line feed (two characters on the serial line).
const LINE_SEPARATOR: &str = "-Dline.separator=\r\n";

/// The suite whose host classes are routed.
pub struct Suite<'a> {
    /// Its directory (with its host stand-ins in `host-stubs/`).
    pub root: &'a Path,
    /// Its host class files.
    pub classes: &'a Path,
    /// Class files that take the place of some of `classes`: the program
    /// compiled against the tree's library (the `shadow` module).
    pub program: Option<&'a Path>,
    /// The tree's JDK classes the host runs in `java.base` (`host_library`),
    /// routed as well: then the routines, the bridge and the suite's
    /// stand-ins go into `java.base` with them, where both those classes
    /// and the suite's can call them.
    pub library: Option<&'a Path>,
    /// What compiled the suite (and compiles the routines, so that they
    /// are the bytecodes the tree's own build makes).
    pub compiler: &'a jopcal_workloads::build::Compiler,
    pub encoding: jopcal_workloads::SourceEncoding,
    /// jopcal's cache: the routed classes are built once into a directory of it.
    pub cache: &'a Path,
}

fn java_type(code: char) -> &'static str {
    match code {
        'J' => "long",
        'F' => "float",
        'D' => "double",
        _ => "int",
    }
}

/// Types of a descriptor's parameters and its result, as letters.
fn signature(descriptor: &str) -> (Vec<char>, char) {
    let (params, result) = descriptor.trim_start_matches('(').split_once(')').unwrap_or(("", "I"));
    (params.chars().collect(), result.chars().next().unwrap_or('I'))
}

/// jopcal's bridge: per routine, a static method named by the bytecode
/// that takes its operands as the host types them and calls the routine
/// with them as JOP holds them. A division by zero stays the host's (JOP's
/// routine raises it through an I/O register the host does not have).
pub fn bridge_source(routines: &[Routine]) -> String {
    let (package, class) = BRIDGE_CLASS.rsplit_once('/').expect("a package");
    let mut s = format!(
        "package {};\n\n/** jopcal's generated bridge to the JOP runtime's routines (see jopcal_profile::routed). */\npublic final class {class} {{\n    private {class}() {{\n    }}\n",
        package.replace('/', ".")
    );
    for r in routines {
        let b = r.bytecode;
        let (host_params, host_result) = signature(b.host);
        let (jop_params, jop_result) = signature(b.jop);
        let names = ["a", "b"];
        let params: Vec<String> = host_params
            .iter()
            .zip(names)
            .map(|(t, n)| format!("{} {n}", java_type(*t)))
            .collect();
        let args: Vec<String> = host_params
            .iter()
            .zip(&jop_params)
            .zip(names)
            .map(|((h, j), n)| match (h, j) {
                ('F', 'I') => format!("Float.floatToRawIntBits({n})"),
                ('D', 'J') => format!("Double.doubleToRawLongBits({n})"),
                _ => n.to_string(),
            })
            .collect();
        let call = format!("com.jopdesign.sys.JVM.f_{}({})", b.mnemonic, args.join(", "));
        let result = match (host_result, jop_result) {
            ('F', 'I') => format!("Float.intBitsToFloat({call})"),
            ('D', 'J') => format!("Double.longBitsToDouble({call})"),
            _ => call,
        };
        let zero_check = match b.mnemonic {
            "idiv" | "ldiv" => "        if (b == 0) {\n            return a / b;\n        }\n",
            "irem" | "lrem" => "        if (b == 0) {\n            return a % b;\n        }\n",
            _ => "",
        };
        s.push_str(&format!(
            "\n    public static {} {}({}) {{\n{zero_check}        return {result};\n    }}\n",
            java_type(host_result),
            b.mnemonic,
            params.join(", ")
        ));
    }
    // The long shifts, lcmp and aastore run as the host runs them: the call
    // only shows the profiler the operands (jopcal_profile::routed::OBSERVED).
    for o in OBSERVED {
        s.push_str(&observed_method(&o));
    }
    s.push_str("}\n");
    s
}

/// The bridge method of an observed bytecode: it runs the bytecode as the
/// host does, in the arm of a switch on the operand the profile
/// records (`Observed::operand`), one arm per value, each with code of its
/// own. The single-step agent reads the operand from the arm it steps into
/// (`MethodCode::switch_case`): reading the bridge's locals instead
/// (JVMTI's `GetLocal*`) is a VM operation at a safepoint in HotSpot 17, and
/// made a JemBench profile take minutes. The instrumenting profiler reads
/// the parameters at the method's entry and does not run this body.
fn observed_method(o: &Observed) -> String {
    let (result, params, operand) = match o.operand {
        Operand::Count { mask, .. } => ("long", "long a, int b", format!("b & {mask}")),
        // `routed::long_compare_class`: the signs, then the order.
        Operand::LongCompare => (
            "int",
            "long a, long b",
            "(a < 0L ? 6 : 0) + (b < 0L ? 3 : 0) + (a < b ? 0 : a == b ? 1 : 2)".to_string(),
        ),
        // Where the store will fail the host raises it, with no operand.
        Operand::OldElement => (
            "void",
            "Object[] a, int i, Object v",
            format!("a == null || i < 0 || i >= a.length ? -1 : a[i] == null ? {REF_OLD_NULL} : {REF_OLD_HELD}"),
        ),
    };
    let mut m = format!(
        "\n    public static {result} {}({params}) {{\n        switch ({operand}) {{\n",
        o.mnemonic
    );
    for k in 0..=o.max() {
        m.push_str(&format!(
            "        case {k}:\n            {}\n",
            observed_arm(o, Some(k))
        ));
    }
    m.push_str(&format!(
        "        default:\n            {}\n        }}\n    }}\n",
        observed_arm(o, None)
    ));
    m
}

/// The code of one arm of an observed bridge method's switch (`None`: its
/// default): the bytecode as the host runs it, each arm's code its own.
fn observed_arm(o: &Observed, case: Option<u8>) -> String {
    match (o.operand, case) {
        (Operand::Count { .. }, Some(k)) => {
            let shift = match o.mnemonic {
                "lshl" => "<<",
                "lshr" => ">>",
                _ => ">>>",
            };
            format!("return a {shift} {k};")
        }
        (Operand::Count { .. }, None) => "return a;".to_string(),
        // The class's order is its remainder by 3: less, equal, greater.
        (Operand::LongCompare, Some(k)) => format!("return {};", i32::from(k % 3) - 1),
        (Operand::LongCompare, None) => "return 0;".to_string(),
        (Operand::OldElement, Some(k)) => format!("a[i] = v; // {k}\n            return;"),
        (Operand::OldElement, None) => "a[i] = v;\n            return;".to_string(),
    }
}

/// The tree's runtime class for the host: its routines only, public.
fn runtime_source(routines: &[Routine]) -> String {
    let mut s = String::from(
        "package com.jopdesign.sys;\n\n/** The JOP tree's runtime routines, read from its JVM.java by jopcal for the host. */\npublic final class JVM {\n",
    );
    for r in routines {
        s.push_str(&r.source);
    }
    s.push_str("}\n");
    s
}

/// A stand-in for the runtime's "not implemented" report, which a routine
/// calls only where the tree's configuration leaves the bytecode out, and
/// for its character output, through which the tree's `System.out` prints
/// where the host runs the tree's library (the `shadow` module): each
/// character goes to jopcal's serial line, priced as the UART's.
const JVMHELP_SOURCE: &str = "package com.jopdesign.sys;\n\n/** jopcal's host stand-in. */\npublic final class JVMHelp {\n    private JVMHelp() {\n    }\n\n    public static void noim() {\n        throw new Error(\"the JOP tree's runtime does not implement this bytecode\");\n    }\n\n    public static void wr(int c) {\n        jopcal.host.SerialLine.put(c);\n    }\n}\n";

/// The Java sources jopcal writes for `routines`, by path: the runtime
/// class, JVMHelp, the bridge and, last, the router.
fn generated_sources(routines: &[Routine]) -> Vec<(String, String)> {
    vec![
        ("com/jopdesign/sys/JVM.java".into(), runtime_source(routines)),
        ("com/jopdesign/sys/JVMHelp.java".into(), JVMHELP_SOURCE.into()),
        (format!("{BRIDGE_CLASS}.java"), bridge_source(routines)),
        ("jopcal/host/SerialLine.java".into(), SERIAL_LINE_SOURCE.into()),
        ("jopcal/host/SerialMain.java".into(), SERIAL_MAIN_SOURCE.into()),
        ("jopcal/tools/RouteBytecodes.java".into(), ROUTER_SOURCE.into()),
    ]
}

/// Routes the host classes of `suite` through the tree's routines (see the
/// module doc): how to run them, or `None` (with a note through `say`)
/// when the tree or the machine cannot.
pub fn route(home: &Path, suite: &Suite, say: &dyn Fn(&str)) -> Result<Option<Routed>> {
    let Suite {
        root: suite_root,
        classes,
        program,
        library,
        compiler,
        encoding,
        cache,
    } = *suite;
    let runtime = home.join(RUNTIME_DIR);
    let Ok(jvm_java) = std::fs::read(runtime.join("JVM.java")) else {
        say(&format!(
            "  note: {} has no JVM.java: the bytecodes JOP runs as Java routines are priced by constants",
            runtime.display()
        ));
        return Ok(None);
    };
    let routines = find_routines(&encoding.decode(&jvm_java));
    if routines.is_empty() {
        return Ok(None);
    }
    let Some(asm) = asm_jar() else {
        say(&format!("  note: no ASM (JOPCAL_ASM_JAR, else {DEBIAN_ASM}: scripts/setup installs Debian's libasm-java): idiv, lmul and the floating point are priced by constants, not by the tree's routines on their operands"));
        return Ok(None);
    };
    let jdk = jopcal_workloads::Jdk::detect()?;
    let generated = generated_sources(&routines);
    // The key: everything the routed classes are made of. (The runtime
    // package holds JVM.java.)
    let mut h = Sha256::new();
    for part in [
        jdk.version.as_str(),
        &compiler.identity,
        &compiler.argv.join(" "),
        &asm.to_string_lossy(),
    ] {
        h.update(part.as_bytes());
        h.update([0]);
    }
    h.update(std::fs::read(suite_root.join(NATIVE_STAND_IN)).unwrap_or_default());
    for (path, text) in &generated {
        h.update(path.as_bytes());
        h.update(text.as_bytes());
    }
    for dir in [runtime.as_path(), classes].into_iter().chain(program).chain(library) {
        h.update(dir.to_string_lossy().as_bytes());
        h.update(content_hash(dir)?.as_bytes());
    }
    let key: String = h.finalize().iter().take(8).map(|b| format!("{b:02x}")).collect();
    let dir = cache.join("host-routines").join(key);
    let mnemonics: Vec<&'static str> = routines.iter().map(|r| r.bytecode.mnemonic).collect();
    let routed = match library {
        None => Routed {
            classpath: vec![dir.join("classes"), dir.join("routines")],
            jvm_args: vec![LINE_SEPARATOR.to_string()],
        },
        Some(_) => {
            // The routines first: their runtime package (compiled as the
            // tree's build compiles it, with the suite's stand-ins) is the
            // one that runs; the library adds what only it uses (`Cordic`).
            let mut jvm_args = patch(&[&dir.join("routines"), &dir.join("library")])?;
            for package in ["com.jopdesign.sys", BRIDGE_PACKAGE] {
                jvm_args.extend(["--add-exports".to_string(), format!("java.base/{package}=ALL-UNNAMED")]);
            }
            jvm_args.push(LINE_SEPARATOR.to_string());
            Routed {
                classpath: vec![dir.join("classes")],
                jvm_args,
            }
        }
    };
    let sources = Sources {
        runtime: &runtime,
        native: &suite_root.join(NATIVE_STAND_IN),
        generated: &generated,
        compiler,
        encoding,
    };
    // A build that fails is a note (the routines priced by constants), not an error.
    let mut failed = None;
    let built: Result<()> = build_once(&dir, |tmp| {
        let summary = build(
            tmp,
            &jdk,
            &asm,
            &sources,
            &[Some(classes), program].into_iter().flatten().collect::<Vec<_>>(),
            library,
            &routines,
        )
        .map_err(|e| failed.insert(e).to_string())
        .map_err(anyhow::Error::msg)?;
        atomic::write_atomic(&tmp.join("routed.txt"), summary.as_bytes())?;
        Ok(())
    });
    if let Some(e) = failed {
        say(&format!(
            "  note: the tree's runtime routines do not run on the host ({e:#}): they are priced by constants"
        ));
        return Ok(None);
    }
    built?;
    let summary = std::fs::read_to_string(dir.join("routed.txt")).unwrap_or_default();
    say(&routed_line(&mnemonics, &summary));
    Ok(Some(routed))
}

fn routed_line(mnemonics: &[&str], summary: &str) -> String {
    format!(
        "  profile routines: {} run as the tree's own routines on their operands, and the operands of {} are recorded ({})",
        mnemonics.join(", "),
        OBSERVED.iter().map(|o| o.mnemonic).collect::<Vec<_>>().join(", "),
        summary.trim()
    )
}

/// Where the routines' sources come from and what compiles them.
struct Sources<'a> {
    /// The tree's runtime package.
    runtime: &'a Path,
    /// The suite's host stand-in of Native.
    native: &'a Path,
    /// jopcal's own ([`generated_sources`]).
    generated: &'a [(String, String)],
    compiler: &'a jopcal_workloads::build::Compiler,
    encoding: jopcal_workloads::SourceEncoding,
}

/// Compiles the routines and the bridge into `tmp/routines`, copies
/// `classes` to `tmp/classes` (and `library` to `tmp/library`, with the
/// suite's stand-ins beside the routines) and routes them all; the
/// router's summary line.
fn build(
    tmp: &Path,
    jdk: &jopcal_workloads::Jdk,
    asm: &Path,
    sources: &Sources,
    classes: &[&Path],
    library: Option<&Path>,
    routines: &[Routine],
) -> Result<String> {
    let Sources {
        runtime,
        native,
        generated,
        compiler,
        encoding,
    } = *sources;
    let src = tmp.join("src");
    let out = tmp.join("routines");
    let tool = tmp.join("tool");
    for d in [&src, &out, &tool] {
        std::fs::create_dir_all(d)?;
    }
    let mut files = Vec::new();
    for (rel, text) in generated {
        let p = src.join(rel);
        std::fs::create_dir_all(p.parent().expect("a directory"))?;
        std::fs::write(&p, encoding.encode(text))?;
        files.push(p);
    }
    let router = files.pop().expect("the router");
    // What the routines use of the tree's runtime package (the software
    // float), with the suite's stand-in of Native, as a source path of its own.
    let tree_src = tmp.join("tree");
    let package = tree_src.join("com/jopdesign/sys");
    std::fs::create_dir_all(&package)?;
    copy_sources(runtime, &package, |name| !NOT_FROM_THE_TREE.contains(&name))?;
    std::fs::copy(native, package.join("Native.java")).with_context(|| format!("copying {}", native.display()))?;
    let mut argv = compiler.argv.clone();
    argv.extend(["-sourcepath".into(), tree_src.to_string_lossy().into_owned()]);
    compile(&argv, &out, files.iter().cloned())?;
    for class in DROPPED {
        let _ = std::fs::remove_file(out.join("com/jopdesign/sys").join(class));
    }
    let _ = std::fs::remove_dir_all(&tree_src);
    let javac = vec![
        jdk.javac.to_string_lossy().into_owned(),
        "-nowarn".into(),
        "-encoding".into(),
        encoding.javac_name().into(),
        "-cp".into(),
        asm.to_string_lossy().into_owned(),
    ];
    compile(&javac, &tool, [router])?;
    // The later directories' classes take the place of the earlier's.
    for dir in classes {
        copy_tree(dir, &tmp.join("classes"))?;
    }
    let mut routed = vec![tmp.join("classes"), out.clone()];
    if let Some(lib) = library {
        copy_tree(lib, &tmp.join("library"))?;
        routed.push(tmp.join("library"));
        // In java.base, the suite's package com.jopdesign.sys is the
        // routines' one: the suite's stand-ins (Native, Const) go there too.
        let package = "com/jopdesign/sys";
        for dir in classes {
            if dir.join(package).is_dir() {
                copy_tree(&dir.join(package), &out.join(package))?;
            }
        }
    }
    let routes: Vec<String> = routines
        .iter()
        .map(|r| (r.bytecode.opcode, r.bytecode.mnemonic, r.bytecode.host))
        .chain(OBSERVED.iter().map(|o| (o.opcode, o.mnemonic, o.host)))
        .map(|(op, name, desc)| format!("{op}={name}:{desc}"))
        .collect();
    let cp = std::env::join_paths([asm, &tool])?;
    // The program's calls of the JDK methods the library merged the tree's
    // versions of go to those versions.
    let merged = library.map(|l| l.join(MERGED_LIST));
    let methods: Vec<std::ffi::OsString> = match merged.filter(|m| std::fs::metadata(m).is_ok_and(|m| m.len() > 0)) {
        Some(list) => vec![
            "--methods".into(),
            list.into_os_string(),
            jopcal_profile::routed::TREE_METHOD_PREFIX.into(),
        ],
        None => Vec::new(),
    };
    let mut args: Vec<std::ffi::OsString> = vec![BRIDGE_CLASS.into(), routes.join(",").into()];
    args.extend(methods);
    args.extend(routed.iter().map(|d| d.clone().into_os_string()));
    let out = run_tool(jdk, &cp, "jopcal.tools.RouteBytecodes", &args)?
        .map_err(|line| anyhow::anyhow!("routing the bytecodes: {}", line.as_deref().unwrap_or("failed")))?;
    let _ = std::fs::remove_dir_all(&tool);
    Ok(String::from_utf8_lossy(&out).trim().to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Routines as [`find_routines`] gives them (the bridge reads only the bytecodes).
    fn routines(mnemonics: &[&str]) -> Vec<Routine> {
        mnemonics
            .iter()
            .map(|m| Routine {
                bytecode: jopcal_profile::routed::routable_named(m).unwrap(),
                source: String::new(),
            })
            .collect()
    }

    #[test]
    fn the_bridge_package_is_the_bridge_class_one() {
        assert_eq!(
            BRIDGE_CLASS.rsplit_once('/').unwrap().0,
            BRIDGE_PACKAGE.replace('.', "/")
        );
    }

    #[test]
    fn the_bridge_passes_floats_as_bits_and_leaves_zero_divisors_to_the_host() {
        let src = bridge_source(&routines(&["fadd", "lmul", "idiv"]));
        assert!(src.starts_with("package jopcal.host;"));
        assert!(src.contains("public static float fadd(float a, float b) {\n        return Float.intBitsToFloat(com.jopdesign.sys.JVM.f_fadd(Float.floatToRawIntBits(a), Float.floatToRawIntBits(b)));"), "{src}");
        assert!(
            src.contains("public static int idiv(int a, int b) {\n        if (b == 0) {\n            return a / b;"),
            "{src}"
        );
        assert!(
            src.contains(
                "public static long lmul(long a, long b) {\n        return com.jopdesign.sys.JVM.f_lmul(a, b);"
            ),
            "{src}"
        );
        assert!(
            src.contains("public static long lushr(long a, int b) {\n        switch (b & 63) {"),
            "{src}"
        );
    }

    /// The observed bridge methods, compiled with the JDK's javac and run:
    /// each gives what the host's own bytecode gives (and raises what it
    /// raises), and each arm of its tableswitch has code of its own, so the
    /// single-step agent can tell the operands apart by where it jumped.
    #[test]
    fn the_observed_bridge_methods_run_as_the_host_and_switch_on_their_operand() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("jopcal/host");
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("JopBytecodes.java"), bridge_source(&[])).unwrap();
        std::fs::write(dir.join("Check.java"), BRIDGE_CHECK).unwrap();
        let javac = std::process::Command::new("javac")
            .args(["--release", "8", "-nowarn", "-d"])
            .arg(tmp.path())
            .arg(dir.join("JopBytecodes.java"))
            .arg(dir.join("Check.java"))
            .output()
            .expect("javac (a JDK, as scripts/setup installs)");
        assert!(javac.status.success(), "{}", String::from_utf8_lossy(&javac.stderr));
        let run = std::process::Command::new("java")
            .arg("-cp")
            .arg(tmp.path())
            .arg("jopcal.host.Check")
            .output()
            .unwrap();
        let out = String::from_utf8_lossy(&run.stdout);
        assert!(
            run.status.success() && out.trim_end().ends_with("ok"),
            "{out}{}",
            String::from_utf8_lossy(&run.stderr)
        );
        // One arm per value, with targets of their own.
        let class = std::fs::read(tmp.path().join("jopcal/host/JopBytecodes.class")).unwrap();
        let parsed = jopcal_classfile::parse_class(&class).unwrap();
        for o in OBSERVED {
            let m = parsed.methods.iter().find(|m| m.name == o.mnemonic).unwrap();
            let code = &m.code.as_ref().unwrap().bytecode;
            // (javac makes a switch of few cases a lookupswitch.)
            use jopcal_classfile::Operands;
            let cases: Vec<(i32, u32)> = jopcal_classfile::decode(code)
                .unwrap()
                .into_iter()
                .find_map(|i| match i.operands {
                    Operands::TableSwitch { low, targets, .. } => Some((low..).zip(targets).collect()),
                    Operands::LookupSwitch { pairs, .. } => Some(pairs),
                    _ => None,
                })
                .unwrap();
            let values: Vec<i32> = cases.iter().map(|c| c.0).collect();
            assert_eq!(values, (0..=i32::from(o.max())).collect::<Vec<_>>(), "{}", o.mnemonic);
            let targets: std::collections::BTreeSet<u32> = cases.iter().map(|c| c.1).collect();
            assert_eq!(
                targets.len(),
                cases.len(),
                "{}: an arm of its own per value",
                o.mnemonic
            );
        }
    }

    const BRIDGE_CHECK: &str = r#"package jopcal.host;

public final class Check {
    static void same(long got, long want, String what) {
        if (got != want) {
            throw new AssertionError(what + ": " + got + " against " + want);
        }
    }

    static void raises(Runnable r, Class<?> want) {
        try {
            r.run();
        } catch (RuntimeException e) {
            if (e.getClass() == want) {
                return;
            }
            throw e;
        }
        throw new AssertionError("no " + want.getName());
    }

    public static void main(String[] args) {
        long[] ls = {0L, 1L, -1L, 5L, -5L, 0x123456789abcdefL, Long.MIN_VALUE, Long.MAX_VALUE};
        int[] counts = {0, 1, 31, 32, 63, 64, 65, 100, -1, -64, Integer.MIN_VALUE};
        for (long a : ls) {
            for (int b : counts) {
                same(JopBytecodes.lshl(a, b), a << b, "lshl");
                same(JopBytecodes.lshr(a, b), a >> b, "lshr");
                same(JopBytecodes.lushr(a, b), a >>> b, "lushr");
            }
            for (long b : ls) {
                same(JopBytecodes.lcmp(a, b), a < b ? -1 : a == b ? 0 : 1, "lcmp");
            }
        }
        final Object[] held = {"x", null};
        JopBytecodes.aastore(held, 1, "y");
        JopBytecodes.aastore(held, 0, null);
        same(held[0] == null && "y".equals(held[1]) ? 1 : 0, 1, "aastore");
        raises(() -> JopBytecodes.aastore(held, 2, "z"), ArrayIndexOutOfBoundsException.class);
        raises(() -> JopBytecodes.aastore(held, -1, "z"), ArrayIndexOutOfBoundsException.class);
        raises(() -> JopBytecodes.aastore(null, 0, "z"), NullPointerException.class);
        raises(() -> JopBytecodes.aastore(new String[1], 0, Integer.valueOf(1)), ArrayStoreException.class);
        System.out.println("ok");
    }
}
"#;
}
