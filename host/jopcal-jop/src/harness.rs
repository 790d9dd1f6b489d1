//! A JOP tree's fixed-count harness (`LoopKfl.java` and its kin), read so
//! that jopcal can time the same benchmark call with the cycle counter.
//!
//! Those harnesses construct one benchmark object, read
//! `System.currentTimeMillis()`, make one call with a literal iteration count
//! (`bench.perform(10000)` in JemBench, `bench.test(10000)` in JBE), read the
//! clock again and print milliseconds. A millisecond clock is coarse and, in
//! JopSim, is the host's wall clock. So jopcal reads the declaration and the
//! timed call out of the harness (a `nom` tokenizer over the source with
//! comments blanked, so positions stay the file's) and generates a wrapper in
//! the same package that makes the same two statements, with jopcal's
//! `Harness.start()`/`stop()` around the call. The host profiler counts
//! between the same markers, so both sides see the same dynamic extent.

use nom::branch::alt;
use nom::bytes::complete::{is_not, take_while, take_while1};
use nom::character::complete::{anychar, char as ch, digit1};
use nom::combinator::{recognize, value};
use nom::multi::many0;
use nom::sequence::{delimited, pair};
use nom::{IResult, Parser};

/// What jopcal needs from a fixed-count harness.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FixedHarness {
    /// `package` of the file, if any.
    pub package: Option<String>,
    /// The imports as written, without `import` and `;` (e.g. `jembench.*`).
    pub imports: Vec<String>,
    /// The harness class (the file's first declared class).
    pub class: String,
    /// The statement declaring the benchmark object, as written (comments removed).
    pub declaration: String,
    /// The variable holding the benchmark object.
    pub var: String,
    /// The method the timed call invokes (`perform`, `test`).
    pub method: String,
    /// The call's literal iteration count.
    pub iterations: u32,
    /// 1-based line of the timed call.
    pub call_line: usize,
}

/// Why a file is not a harness jopcal can wrap; line and column are 1-based.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{line}:{column}: {message}")]
pub struct HarnessError {
    pub line: usize,
    pub column: usize,
    pub message: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Ident,
    Number,
    Text,
    Punct,
}

#[derive(Debug, Clone, Copy)]
struct Token<'a> {
    kind: Kind,
    text: &'a str,
    /// Byte offset in the file.
    at: usize,
}

/// Replaces comments by spaces (newlines kept), leaving string and character
/// literals alone, so that offsets and line numbers stay those of the file.
fn blank_comments(text: &str) -> String {
    let b = text.as_bytes();
    let mut out = b.to_vec();
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'"' | b'\'' => {
                let q = b[i];
                i += 1;
                while i < b.len() && b[i] != q && b[i] != b'\n' {
                    i += if b[i] == b'\\' { 2 } else { 1 };
                }
                i += 1;
            }
            b'/' if b.get(i + 1) == Some(&b'/') => {
                while i < b.len() && b[i] != b'\n' {
                    out[i] = b' ';
                    i += 1;
                }
            }
            b'/' if b.get(i + 1) == Some(&b'*') => {
                let end = text[i + 2..].find("*/").map_or(b.len(), |e| i + 2 + e + 2);
                for o in &mut out[i..end] {
                    if *o != b'\n' {
                        *o = b' ';
                    }
                }
                i = end;
            }
            _ => i += 1,
        }
    }
    // Only ASCII bytes outside literals were replaced, by ASCII spaces.
    String::from_utf8(out).unwrap_or_else(|_| text.to_string())
}

fn ident(i: &str) -> IResult<&str, &str> {
    recognize(pair(
        take_while1(|c: char| c.is_alphabetic() || c == '_' || c == '$'),
        take_while(|c: char| c.is_alphanumeric() || c == '_' || c == '$'),
    ))
    .parse(i)
}

fn literal(quote: char) -> impl FnMut(&str) -> IResult<&str, &str> {
    move |i| {
        recognize(delimited(
            ch(quote),
            many0(alt((
                value((), pair(ch('\\'), anychar)),
                value((), is_not(if quote == '"' { "\"\\\n" } else { "'\\\n" })),
            ))),
            ch(quote),
        ))
        .parse(i)
    }
}

fn token(i: &str) -> IResult<&str, (Kind, &str)> {
    alt((
        ident.map(|t| (Kind::Ident, t)),
        recognize(pair(digit1, take_while(|c: char| c.is_alphanumeric() || c == '_'))).map(|t| (Kind::Number, t)),
        literal('"').map(|t| (Kind::Text, t)),
        literal('\'').map(|t| (Kind::Text, t)),
        recognize(anychar).map(|t| (Kind::Punct, t)),
    ))
    .parse(i)
}

fn tokens(text: &str) -> Vec<Token<'_>> {
    let mut out = Vec::new();
    let mut rest = text;
    loop {
        let trimmed = rest.trim_start();
        if trimmed.is_empty() {
            return out;
        }
        let at = text.len() - trimmed.len();
        match token(trimmed) {
            Ok((r, (kind, t))) => {
                out.push(Token { kind, text: t, at });
                rest = r;
            }
            // An unterminated literal: the rest cannot hold a statement jopcal needs.
            Err(_) => return out,
        }
    }
}

fn line_col(text: &str, at: usize) -> (usize, usize) {
    let before = &text[..at.min(text.len())];
    (
        before.matches('\n').count() + 1,
        before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1,
    )
}

/// The dotted name starting at `toks[i]` and the index after it.
fn qualified(toks: &[Token], mut i: usize) -> Option<(String, usize)> {
    let mut name = String::new();
    loop {
        let t = toks.get(i)?;
        if t.kind == Kind::Ident || (t.text == "*" && name.ends_with('.')) {
            name.push_str(t.text);
            i += 1;
        } else {
            return None;
        }
        if toks.get(i).is_some_and(|t| t.text == ".") {
            name.push('.');
            i += 1;
        } else {
            return Some((name, i));
        }
    }
}

fn is(toks: &[Token], i: usize, text: &str) -> bool {
    toks.get(i).is_some_and(|t| t.text == text)
}

/// Reads a fixed-count harness.
pub fn parse_fixed_harness(text: &str) -> Result<FixedHarness, HarnessError> {
    let clean = blank_comments(text);
    let toks = tokens(&clean);
    let err = |at: usize, message: String| {
        let (line, column) = line_col(text, at);
        HarnessError { line, column, message }
    };
    let mut package = None;
    let mut imports = Vec::new();
    let mut class = None;
    for (i, t) in toks.iter().enumerate() {
        match t.text {
            "package" if package.is_none() && class.is_none() => {
                package = qualified(&toks, i + 1).map(|(n, _)| n);
            }
            "import" if class.is_none() => {
                let (start, prefix) = if is(&toks, i + 1, "static") {
                    (i + 2, "static ")
                } else {
                    (i + 1, "")
                };
                if let Some((n, _)) = qualified(&toks, start) {
                    imports.push(format!("{prefix}{n}"));
                }
            }
            "class" if class.is_none() => {
                class = toks
                    .get(i + 1)
                    .filter(|t| t.kind == Kind::Ident)
                    .map(|t| t.text.to_string());
            }
            _ => {}
        }
    }
    let class = class.ok_or_else(|| err(0, "no class declaration".into()))?;
    let clocks: Vec<usize> = toks
        .iter()
        .enumerate()
        .filter(|(_, t)| t.text == "currentTimeMillis")
        .map(|(i, _)| i)
        .collect();
    let (first, second) = match clocks[..] {
        [a, b, ..] => (a, b),
        _ => {
            return Err(err(
                toks.first().map_or(0, |t| t.at),
                format!(
                    "{class} has {} currentTimeMillis() call(s), not a timed region between two",
                    clocks.len()
                ),
            ))
        }
    };
    // The timed call: `var.method(N);` between the two clock reads.
    let call = (first..second).find_map(|i| {
        let ok = toks[i].kind == Kind::Ident
            && is(&toks, i + 1, ".")
            && toks.get(i + 2)?.kind == Kind::Ident
            && is(&toks, i + 3, "(")
            && toks.get(i + 4)?.kind == Kind::Number
            && is(&toks, i + 5, ")")
            && is(&toks, i + 6, ";")
            && i > 0
            && matches!(toks[i - 1].text, ";" | "{" | "}");
        ok.then_some(i)
    });
    let Some(c) = call else {
        return Err(err(
            toks[first].at,
            "no benchmark call `var.method(N);` with a literal count between the two currentTimeMillis() calls".into(),
        ));
    };
    let var = toks[c].text.to_string();
    let iterations: u32 = toks[c + 4].text.parse().map_err(|_| {
        err(
            toks[c + 4].at,
            format!("iteration count {} is not a number", toks[c + 4].text),
        )
    })?;
    // Its declaration: the last statement before the first clock read that
    // assigns `var = new ...`, with a type in front of the name.
    let decl = (0..first).rev().find(|&i| {
        toks[i].text == var
            && is(&toks, i + 1, "=")
            && is(&toks, i + 2, "new")
            && i > 0
            && matches!(toks[i - 1].kind, Kind::Ident | Kind::Punct)
            && !matches!(toks[i - 1].text, ";" | "{" | "}" | "(" | ",")
    });
    let Some(d) = decl else {
        return Err(err(
            toks[c].at,
            format!("no declaration `Type {var} = new ...;` before the timed region"),
        ));
    };
    let start = (0..d)
        .rev()
        .find(|&i| matches!(toks[i].text, ";" | "{" | "}"))
        .map_or(0, |i| i + 1);
    let end = (d..first)
        .find(|&i| toks[i].text == ";")
        .ok_or_else(|| err(toks[d].at, format!("the declaration of {var} has no `;`")))?;
    let declaration = clean[toks[start].at..toks[end].at + 1]
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ");
    Ok(FixedHarness {
        package,
        imports,
        class,
        declaration,
        var,
        method: toks[c + 2].text.to_string(),
        iterations,
        call_line: line_col(text, toks[c].at).0,
    })
}

impl FixedHarness {
    /// The generated wrapper's simple class name.
    pub fn wrapper_class(&self) -> String {
        format!("Jopcal{}", self.class)
    }

    /// The generated wrapper's fully qualified name.
    pub fn wrapper_main(&self) -> String {
        match &self.package {
            Some(p) => format!("{p}.{}", self.wrapper_class()),
            None => self.wrapper_class(),
        }
    }

    /// Java source of the wrapper: the harness's declaration and timed call,
    /// measured by jopcal's harness and reported as bench `bench`.
    pub fn wrapper_source(&self, bench: &str, origin: &str) -> String {
        let mut s = format!(
            "// Generated by jopcal from {origin}: its benchmark call, between the\n// cycle-counter reads of jopcal's harness instead of currentTimeMillis().\n"
        );
        if let Some(p) = &self.package {
            s.push_str(&format!("package {p};\n"));
        }
        s.push('\n');
        for i in &self.imports {
            s.push_str(&format!("import {i};\n"));
        }
        s.push_str(&format!(
            "\npublic final class {class} {{\n    public static void main(String[] args) {{\n        {decl}\n        jopcal.harness.Harness.start();\n        {var}.{method}({n});\n        jopcal.harness.Harness.stop();\n        jopcal.harness.Harness.report(\"{bench}\", {n});\n    }}\n}}\n",
            class = self.wrapper_class(),
            decl = self.declaration,
            var = self.var,
            method = self.method,
            n = self.iterations,
        ));
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const JEMBENCH_STYLE: &str = "/* header */\npackage fixed;\n\nimport jembench.*;\n\npublic class LoopToy {\n    public static final int FREQ = 60000000;\n    public static void main(String[] args) {\n        // SerialBenchmark old = new Old();\n        SerialBenchmark bench = new jembench.app.Toy(); /* the one */\n        System.out.println(bench);\n        int t1 = (int) System.currentTimeMillis();\n        bench.perform(10000);\n        int t2 = (int) System.currentTimeMillis();\n        System.out.print(t2-t1);\n        System.out.println(\" ms // not a comment\");\n    }\n}\n";

    #[test]
    fn reads_the_declaration_and_the_timed_call() {
        let h = parse_fixed_harness(JEMBENCH_STYLE).unwrap();
        assert_eq!(h.package.as_deref(), Some("fixed"));
        assert_eq!(h.imports, vec!["jembench.*"]);
        assert_eq!(h.class, "LoopToy");
        assert_eq!(h.declaration, "SerialBenchmark bench = new jembench.app.Toy();");
        assert_eq!(
            (h.var.as_str(), h.method.as_str(), h.iterations),
            ("bench", "perform", 10000)
        );
        assert_eq!(h.call_line, 13);
        assert_eq!(h.wrapper_main(), "fixed.JopcalLoopToy");
        let w = h.wrapper_source("Toy", "LoopToy.java");
        assert!(w.contains("package fixed;\n\nimport jembench.*;\n"), "{w}");
        assert!(
            w.contains("        SerialBenchmark bench = new jembench.app.Toy();\n        jopcal.harness.Harness.start();\n        bench.perform(10000);\n        jopcal.harness.Harness.stop();\n        jopcal.harness.Harness.report(\"Toy\", 10000);\n"),
            "{w}"
        );
    }

    #[test]
    fn jbe_style_without_package_prefix_in_new() {
        let src = "package jbe;\npublic class LoopK {\n  public static void main(String[] a) {\n    BenchMark bench = new BenchK();\n    int t1 = (int) System.currentTimeMillis();\n    bench.test(500);\n    int t2 = (int) System.currentTimeMillis();\n  }\n}\n";
        let h = parse_fixed_harness(src).unwrap();
        assert_eq!(h.declaration, "BenchMark bench = new BenchK();");
        assert_eq!((h.method.as_str(), h.iterations), ("test", 500));
    }

    #[test]
    fn says_what_is_missing_and_where() {
        let e = parse_fixed_harness("package x;\nclass A {\n void m() { long t = System.currentTimeMillis(); }\n}\n")
            .unwrap_err();
        assert_eq!(
            e.to_string(),
            "1:1: A has 1 currentTimeMillis() call(s), not a timed region between two"
        );
        let e = parse_fixed_harness(
            "class A {\n void m() {\n  long t = System.currentTimeMillis();\n  run(n);\n  t = System.currentTimeMillis();\n }\n}\n",
        )
        .unwrap_err();
        assert!(e.to_string().starts_with("3:19: no benchmark call"), "{e}");
        let e = parse_fixed_harness(
            "class A {\n void m() {\n  long t = System.currentTimeMillis();\n  b.run(3);\n  t = System.currentTimeMillis();\n }\n}\n",
        )
        .unwrap_err();
        assert_eq!(
            e.to_string(),
            "4:3: no declaration `Type b = new ...;` before the timed region"
        );
        assert!(parse_fixed_harness("")
            .unwrap_err()
            .to_string()
            .starts_with("1:1: no class"));
    }

    proptest::proptest! {
        #[test]
        fn never_panics_on_any_text(s in "\\PC{0,300}") {
            let _ = parse_fixed_harness(&s);
        }

        #[test]
        fn never_panics_on_harness_like_text(cut in 0usize..400, junk in "[a-z(){};=./\"'*0-9 \n]{0,40}") {
            let mut s = JEMBENCH_STYLE.to_string();
            let at = cut.min(s.len());
            let at = (0..=at).rev().find(|&i| s.is_char_boundary(i)).unwrap_or(0);
            s.insert_str(at, &junk);
            let _ = parse_fixed_harness(&s);
        }
    }
}
