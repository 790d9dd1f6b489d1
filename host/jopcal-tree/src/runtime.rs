//! The tree's runtime as its source has it: the Java routines JOP runs
//! for bytecodes its microcode does not implement (`f_<bytecode>` methods of
//! `com.jopdesign.sys.JVM`), read from `JVM.java` so that a host profile can
//! run them (`jopcal_host::routines`), and the clock of its
//! `java.lang.System` ([`clock_methods`]).

use jopcal_profile::routed::{Routable, CLOCK_METHODS, ROUTABLE};

/// One routine found in the tree's `JVM.java`: the bytecode and the
/// method's text, made public.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Routine {
    pub bytecode: &'static Routable,
    pub source: String,
}

/// The routines of `jvm_java` (the tree's `JVM.java`) for the routable
/// bytecodes: each `static <type> f_<mnemonic>(<params>) { ... }` whose
/// parameter and result types are the bytecode's operands as JOP holds
/// them, and whose body does more than report the bytecode unimplemented.
pub fn find_routines(jvm_java: &str) -> Vec<Routine> {
    let code = blank_comments(jvm_java);
    ROUTABLE
        .iter()
        .filter_map(|r| {
            let name = format!("f_{}(", r.mnemonic);
            let at = find_word(&code, &name)?;
            let header_start = code[..at].rfind(['\n', ';', '}']).map_or(0, |i| i + 1);
            let open = at + code[at..].find('{')?;
            let close = matching_brace(&code, open)?;
            let header = code[header_start..at].trim();
            let words: Vec<&str> = header.split_whitespace().collect();
            if !words.contains(&"static") {
                return None;
            }
            let params = &code[at + name.len()..at + code[at..].find(')')?];
            let descriptor = format!(
                "({}){}",
                params
                    .split(',')
                    .map(str::trim)
                    .filter(|p| !p.is_empty())
                    .map(|p| type_code(p.split_whitespace().next()?))
                    .collect::<Option<String>>()?,
                type_code(words.last()?)?
            );
            let body: String = code[open + 1..close].split_whitespace().collect();
            if descriptor != r.jop || body.is_empty() || body == "JVMHelp.noim();" {
                return None;
            }
            let rest: Vec<&str> = words
                .iter()
                .copied()
                .filter(|w| !["private", "protected", "public"].contains(w))
                .collect();
            Some(Routine {
                bytecode: r,
                source: format!(
                    "    public {} {}{}\n",
                    rest.join(" "),
                    &jvm_java[at..open],
                    &jvm_java[open..=close]
                ),
            })
        })
        .collect()
}

/// The tree's `System` clock methods ([`CLOCK_METHODS`]) as a class of their
/// own named `class`, from `system_java` (the tree's `System.java`): its package, its
/// imports of the runtime package (what the methods use: `Native`,
/// `Const`), and the methods as the tree writes them. The host cannot run
/// the tree's whole `System` (its streams are JOP's devices); these two it
/// can, reading the counter through the host's `Native`.
pub fn clock_methods(system_java: &str, class: &str) -> Result<String, ClockMethodsError> {
    clock_class(system_java, class).map_err(ClockMethodsError)
}

/// Why the clock methods could not be taken from a tree's `System.java`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct ClockMethodsError(pub String);

fn clock_class(system_java: &str, class: &str) -> Result<String, String> {
    let code = blank_comments(system_java);
    let mut out = String::from("package java.lang;\n\n");
    for line in system_java.lines() {
        let l = line.trim();
        if l.starts_with("import com.jopdesign.sys.") {
            out.push_str(l);
            out.push('\n');
        }
    }
    out.push_str(&format!("\nfinal class {class} {{\n"));
    for m in CLOCK_METHODS {
        let name = format!("{m}(");
        let at = find_word(&code, &name).ok_or_else(|| format!("no method {m}()"))?;
        let header_start = code[..at].rfind(['\n', ';', '}', '{']).map_or(0, |i| i + 1);
        let header = code[header_start..at].trim();
        let words: Vec<&str> = header.split_whitespace().collect();
        if !words.contains(&"static") || words.last() != Some(&"long") {
            return Err(format!("{m}() is not a static method returning long ({header})"));
        }
        let open = at + code[at..].find('{').ok_or_else(|| format!("{m}() has no body"))?;
        let close = matching_brace(&code, open).ok_or_else(|| format!("{m}()'s body does not end"))?;
        out.push_str(&format!(
            "    public static long {}{}\n",
            &system_java[at..open],
            &system_java[open..=close]
        ));
    }
    out.push_str("}\n");
    Ok(out)
}

/// The index of `name` in `code` where it starts a word.
fn find_word(code: &str, name: &str) -> Option<usize> {
    let mut from = 0;
    while let Some(i) = code[from..].find(name).map(|i| i + from) {
        let before = code[..i].chars().next_back();
        if !before.is_some_and(|c| c.is_alphanumeric() || c == '_' || c == '.') {
            return Some(i);
        }
        from = i + name.len();
    }
    None
}

/// `text` with comments, string and character literals blanked by spaces
/// (same length and line breaks), so braces inside them do not count.
fn blank_comments(text: &str) -> String {
    let b = text.as_bytes();
    let mut out = b.to_vec();
    let mut i = 0;
    while i < b.len() {
        let blank_to = |out: &mut Vec<u8>, from: usize, to: usize| {
            for c in out.iter_mut().take(to.min(b.len())).skip(from) {
                if *c != b'\n' {
                    *c = b' ';
                }
            }
        };
        match (b[i], b.get(i + 1)) {
            (b'/', Some(b'/')) => {
                let end = b[i..].iter().position(|&c| c == b'\n').map_or(b.len(), |e| i + e);
                blank_to(&mut out, i, end);
                i = end;
            }
            (b'/', Some(b'*')) => {
                let end = b[i + 2..]
                    .windows(2)
                    .position(|w| w == b"*/")
                    .map_or(b.len(), |e| i + 2 + e + 2);
                blank_to(&mut out, i, end);
                i = end;
            }
            (q @ (b'"' | b'\''), _) => {
                let mut j = i + 1;
                while j < b.len() && b[j] != q {
                    j += if b[j] == b'\\' { 2 } else { 1 };
                }
                blank_to(&mut out, i + 1, j);
                i = j + 1;
            }
            _ => i += 1,
        }
    }
    // Each blanked range starts and ends at an ASCII byte: whole characters, still UTF-8.
    String::from_utf8(out).unwrap_or_default()
}

/// The index of the `}` that closes the `{` at `open`.
fn matching_brace(code: &str, open: usize) -> Option<usize> {
    let mut depth = 0usize;
    for (i, c) in code[open..].char_indices() {
        match c {
            '{' => depth += 1,
            '}' => {
                depth -= 1;
                if depth == 0 {
                    return Some(open + i);
                }
            }
            _ => {}
        }
    }
    None
}

fn type_code(java: &str) -> Option<&'static str> {
    Some(match java {
        "int" => "I",
        "long" => "J",
        "float" => "F",
        "double" => "D",
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const RUNTIME: &str = r#"package com.jopdesign.sys;
class JVM {
	private static void f_iadd() { JVMHelp.noim(); /* jvm.asm */ }
	private static int f_fadd(int a, int b) {
		if (Const.SUPPORT_FLOAT) { return SoftFloat32.float_add(a, b); } // { unbalanced in a comment
		else { JVMHelp.noim(); return 0; }
	}
	private static void f_fmul() { JVMHelp.noim(); }
	private static long f_lmul(long a, long b) {
		String s = "}";
		return a * b;
	}
	static int f_idiv(int a, int b) {
		return a / b;
	}
	private static int f_irem(long a, int b) { return 0; }
}
"#;

    #[test]
    fn routines_are_found_with_their_bodies_and_the_stubs_left_out() {
        let found = find_routines(RUNTIME);
        let names: Vec<&str> = found.iter().map(|r| r.bytecode.mnemonic).collect();
        // fmul is the stub; irem's parameters are not its operands.
        assert_eq!(names, ["fadd", "lmul", "idiv"]);
        assert!(found[0]
            .source
            .starts_with("    public static int f_fadd(int a, int b) {"));
        assert!(found[0].source.trim_end().ends_with("return 0; }\n\t}"));
        assert!(found[1].source.contains("String s = \"}\";"));
        assert!(found[2]
            .source
            .starts_with("    public static int f_idiv(int a, int b) {"));
    }

    #[test]
    fn the_clock_methods_are_taken_with_the_runtime_imports() {
        let system = "package java.lang;\n\nimport java.io.JOPPrintStream;\nimport com.jopdesign.sys.*;\n\npublic class System {\n\tpublic static PrintStream out = new JOPPrintStream();\n\t// { a brace in a comment\n\tpublic static long currentTimeMillis() {\n\t\treturn (long) (Native.rd(Const.IO_US_CNT)/1000);\n\t}\n\tpublic static long nanoTime() {\n\t\treturn (long)Native.rd(Const.IO_US_CNT)*1000;\n\t}\n\tpublic static void gc() { }\n}\n";
        let class = clock_methods(system, "Clock").unwrap();
        assert_eq!(
            class,
            "package java.lang;\n\nimport com.jopdesign.sys.*;\n\nfinal class Clock {\n    public static long currentTimeMillis() {\n\t\treturn (long) (Native.rd(Const.IO_US_CNT)/1000);\n\t}\n    public static long nanoTime() {\n\t\treturn (long)Native.rd(Const.IO_US_CNT)*1000;\n\t}\n}\n"
        );
        let e = clock_methods(
            "public class System { public static long nanoTime() { return 0; } }",
            "C",
        )
        .unwrap_err();
        assert_eq!(e.to_string(), "no method currentTimeMillis()");
        let e = clock_methods("class System { long currentTimeMillis() { return 0; } }", "C").unwrap_err();
        assert!(e.0.starts_with("currentTimeMillis() is not a static method"), "{e}");
    }

    proptest::proptest! {
        /// Whatever text a tree's JVM.java holds, reading its routines never panics.
        #[test]
        fn any_runtime_source_reads_without_a_panic(text in "(\\PC|[{}/*\"'\\\\\n]){0,400}") {
            let _ = find_routines(&text);
            let _ = find_routines(&format!("{text} static int f_idiv(int a, int b) {{ {text}"));
            let _ = clock_methods(&text, "C");
            let _ = clock_methods(&format!("{text} static long nanoTime() {{ {text} static long currentTimeMillis() {text}"), "C");
        }
    }
}
