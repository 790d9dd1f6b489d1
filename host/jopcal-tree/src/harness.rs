//! A JOP tree's fixed-count harness (`LoopKfl.java` and its kin), read so
//! that jopcal can time the same work with the cycle counter.
//!
//! Those harnesses set a benchmark up in `main`, read
//! `System.currentTimeMillis()`, run the work a fixed number of times (one
//! call such as `bench.perform(10000)`, or a loop over `executeUnit` or a
//! worker's `run()`), read the clock again and print milliseconds. A
//! millisecond clock is coarse and, in JopSim, is the host's wall clock. So
//! jopcal reads `main` (a `nom` tokenizer over the source with comments
//! blanked, so positions stay the file's) and generates a wrapper in the same
//! package that makes the same set-up statements (printing left out) and the
//! same timed statements, verbatim, with jopcal's `Harness.start()`/`stop()`
//! in place of the two clock reads. The host profiler counts between the same
//! markers, so both sides see the same dynamic extent. The wrapper extends the
//! harness class where it can, so the harness's static members stay in scope.

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
    /// Whether a wrapper may extend the class (not final, no constructor of its own).
    pub extendable: bool,
    /// `main`'s parameter list as written (`String[] args`).
    pub params: String,
    /// `main`'s statements before the first clock read, printing left out (comments removed).
    pub setup: Vec<String>,
    /// The statements between the two clock reads (comments removed).
    pub region: String,
    /// The iteration count: the literal of a single `x.m(N);` call, else the
    /// largest integer literal of the timed statements (a loop bound), else 1.
    pub iterations: u32,
    /// 1-based line of the first timed statement.
    pub region_line: usize,
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
pub(crate) fn blank_comments(text: &str) -> String {
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

/// Line and column (1-based; the column in bytes) of byte offset `at` in `text`.
fn line_col(text: &str, at: usize) -> (usize, usize) {
    line_col::LineColLookup::new(text).get(at.min(text.len()))
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

fn end_of(t: &Token) -> usize {
    t.at + t.text.len()
}

/// Index of the token closing the bracket opened at `open`.
fn closing(toks: &[Token], open: usize) -> Option<usize> {
    let (o, c) = match toks[open].text {
        "(" => ("(", ")"),
        "{" => ("{", "}"),
        _ => return None,
    };
    let mut depth = 0usize;
    for (i, t) in toks.iter().enumerate().skip(open) {
        if t.text == o {
            depth += 1;
        } else if t.text == c {
            depth -= 1;
            if depth == 0 {
                return Some(i);
            }
        }
    }
    None
}

/// Reads a fixed-count harness.
pub fn parse_fixed_harness(text: &str) -> Result<FixedHarness, HarnessError> {
    let clean = blank_comments(text);
    let toks = tokens(&clean);
    let err = |at: usize, message: String| {
        let (line, column) = line_col(text, at);
        HarnessError { line, column, message }
    };
    let (package, imports, class_at) = header(&toks);
    let class_at = class_at.ok_or_else(|| err(0, "no class declaration".into()))?;
    let class = toks[class_at + 1].text.to_string();
    let is_final = toks[..class_at]
        .iter()
        .rev()
        .take_while(|t| !matches!(t.text, ";" | "}" | "{"))
        .any(|t| t.text == "final");
    let has_constructor = toks
        .windows(3)
        .any(|w| w[1].text == class && w[2].text == "(" && !matches!(w[0].text, "new" | "."));
    // `void main(PARAMS) [throws ...] { BODY }`
    let main = (1..toks.len())
        .find(|&i| toks[i].text == "main" && is(&toks, i + 1, "(") && toks[i - 1].text == "void")
        .ok_or_else(|| err(toks[class_at].at, format!("{class} has no `void main(...)`")))?;
    let params_close = closing(&toks, main + 1).ok_or_else(|| err(toks[main].at, "main's `(` is not closed".into()))?;
    let params = clean[end_of(&toks[main + 1])..toks[params_close].at].trim().to_string();
    let body_open = (params_close..toks.len())
        .find(|&i| toks[i].text == "{" || toks[i].text == ";")
        .filter(|&i| toks[i].text == "{")
        .ok_or_else(|| err(toks[main].at, "main has no body".into()))?;
    let body_close =
        closing(&toks, body_open).ok_or_else(|| err(toks[body_open].at, "main's body is not closed".into()))?;
    let nesting = Nesting::of(&toks, body_open, body_close);
    let depth = &nesting.depth;
    let clocks: Vec<usize> = (body_open..body_close)
        .filter(|&i| toks[i].text == "currentTimeMillis")
        .collect();
    let (first, second) = match clocks[..] {
        [a, b, ..] => (a, b),
        _ => {
            return Err(err(
                toks[main].at,
                format!(
                    "{class}.main has {} currentTimeMillis() call(s), not a timed region between two",
                    clocks.len()
                ),
            ))
        }
    };
    for &c in &[first, second] {
        if depth[c] != 1 {
            return Err(err(
                toks[c].at,
                "the clock read is not a statement of main's own body (inside a block)".into(),
            ));
        }
    }
    // The statements holding the clock reads: from after the previous `;`, `{`
    // or `}` to the next `;`.
    let statement_start = |i: usize| {
        (body_open..i)
            .rev()
            .find(|&k| matches!(toks[k].text, ";" | "{" | "}"))
            .map_or(i, |k| k + 1)
    };
    let statement_end = |i: usize| (i..body_close).find(|&k| toks[k].text == ";");
    let first_end = statement_end(first).ok_or_else(|| err(toks[first].at, "the clock read has no `;`".into()))?;
    let second_start = statement_start(second);
    if second_start <= first_end + 1 {
        return Err(err(
            toks[first].at,
            "nothing is timed between the two clock reads".into(),
        ));
    }
    let region_toks = &toks[first_end + 1..second_start];
    let region = clean[region_toks[0].at..end_of(&region_toks[region_toks.len() - 1])]
        .trim()
        .to_string();
    let setup = setup_statements(&clean, &toks, &nesting, body_open + 1, statement_start(first));
    Ok(FixedHarness {
        package,
        imports,
        class,
        extendable: !is_final && !has_constructor,
        params,
        setup,
        region,
        iterations: iterations_of(region_toks),
        region_line: line_col(text, region_toks[0].at).0,
    })
}

/// The package, the imports (`static a.b.C` for static ones) and the
/// position of the first `class` keyword of a source's tokens.
fn header(toks: &[Token]) -> (Option<String>, Vec<String>, Option<usize>) {
    let mut package = None;
    let mut imports = Vec::new();
    let mut class_at = None;
    for (i, t) in toks.iter().enumerate() {
        match t.text {
            "package" if package.is_none() && class_at.is_none() => {
                package = qualified(toks, i + 1).map(|(n, _)| n);
            }
            "import" if class_at.is_none() => {
                let (start, prefix) = if is(toks, i + 1, "static") {
                    (i + 2, "static ")
                } else {
                    (i + 1, "")
                };
                if let Some((n, _)) = qualified(toks, start) {
                    imports.push(format!("{prefix}{n}"));
                }
            }
            "class" if class_at.is_none() && toks.get(i + 1).is_some_and(|t| t.kind == Kind::Ident) => {
                class_at = Some(i);
            }
            _ => {}
        }
    }
    (package, imports, class_at)
}

/// Brace depth of each token of a method body (its own statements at 1),
/// and whether it sits inside parentheses (a `for` header's `;`).
struct Nesting {
    depth: Vec<usize>,
    in_parens: Vec<bool>,
}

impl Nesting {
    fn of(toks: &[Token], body_open: usize, body_close: usize) -> Nesting {
        let mut depth = vec![0usize; toks.len()];
        let mut in_parens = vec![false; toks.len()];
        let (mut d, mut p) = (0usize, 0usize);
        for i in body_open..=body_close {
            match toks[i].text {
                "}" => d = d.saturating_sub(1),
                ")" => p = p.saturating_sub(1),
                _ => {}
            }
            depth[i] = d;
            in_parens[i] = p > 0;
            match toks[i].text {
                "{" => d += 1,
                "(" => p += 1,
                _ => {}
            }
        }
        Nesting { depth, in_parens }
    }
}

/// The set-up: main's own statements from token `from` up to `setup_end`
/// (where the first clock read's statement starts), minus printing.
fn setup_statements(clean: &str, toks: &[Token], nesting: &Nesting, from: usize, setup_end: usize) -> Vec<String> {
    let (depth, in_parens) = (&nesting.depth, &nesting.in_parens);
    let mut setup = Vec::new();
    let mut k = from;
    while k < setup_end {
        let start = k;
        // A statement ends at a `;` of main's own body, or at the `}` that
        // closes a block statement (not an initializer or anonymous class).
        let ends = |k: usize| match toks[k].text {
            ";" => depth[k] == 1 && !in_parens[k],
            "}" => {
                depth[k] == 1
                    && !in_parens[k]
                    && !toks.get(k + 1).is_some_and(|n| matches!(n.text, ";" | ")" | "," | "."))
            }
            _ => false,
        };
        while k < setup_end && !ends(k) {
            k += 1;
        }
        let end = k.min(setup_end - 1);
        k += 1;
        let printing = is(toks, start, "System")
            && is(toks, start + 1, ".")
            && (is(toks, start + 2, "out") || is(toks, start + 2, "err"));
        if !printing && start <= end {
            setup.push(clean[toks[start].at..end_of(&toks[end])].trim().to_string());
        }
    }
    setup
}

/// The iteration count of a timed region: the argument of a single call
/// `x.f(N);`, else its largest integer literal (1 without one).
fn iterations_of(region_toks: &[Token]) -> u32 {
    let single_call = region_toks.len() == 7
        && region_toks[0].kind == Kind::Ident
        && region_toks[1].text == "."
        && region_toks[3].text == "("
        && region_toks[4].kind == Kind::Number
        && region_toks[5].text == ")";
    let literals = region_toks
        .iter()
        .filter(|t| t.kind == Kind::Number)
        .filter_map(|t| t.text.parse::<u32>().ok());
    if single_call {
        region_toks[4].text.parse().unwrap_or(1)
    } else {
        literals.max().unwrap_or(1)
    }
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

    /// Java source of the wrapper: the harness's set-up and timed statements,
    /// measured by jopcal's harness and reported as bench `bench`.
    pub fn wrapper_source(&self, bench: &str, origin: &str) -> String {
        let mut s = format!(
            "// Generated by jopcal from {origin}: its timed statements (line {}), between the\n// cycle-counter reads of jopcal's harness instead of currentTimeMillis().\n",
            self.region_line
        );
        if let Some(p) = &self.package {
            s.push_str(&format!("package {p};\n"));
        }
        s.push('\n');
        for i in &self.imports {
            s.push_str(&format!("import {i};\n"));
        }
        let extends = if self.extendable {
            format!(" extends {}", self.class)
        } else {
            String::new()
        };
        s.push_str(&format!(
            "\npublic final class {}{extends} {{\n    public static void main({}) {{\n",
            self.wrapper_class(),
            self.params
        ));
        for st in &self.setup {
            s.push_str(&format!("        {st}\n"));
        }
        s.push_str(&format!(
            "        jopcal.harness.Harness.start();\n        {}\n        jopcal.harness.Harness.stop();\n        jopcal.harness.Harness.report(\"{bench}\", {});\n    }}\n}}\n",
            self.region, self.iterations
        ));
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const JEMBENCH_STYLE: &str = "/* header */\npackage fixed;\n\nimport jembench.*;\n\npublic class LoopToy {\n    public static final int FREQ = 60000000;\n    public static void main(String[] args) {\n        // SerialBenchmark old = new Old();\n        SerialBenchmark bench = new jembench.app.Toy(); /* the one */\n        System.out.println(bench);\n        int t1 = (int) System.currentTimeMillis();\n        bench.perform(10000);\n        int t2 = (int) System.currentTimeMillis();\n        System.out.print(t2-t1);\n        System.out.println(\" ms // not a comment\");\n    }\n}\n";

    #[test]
    fn reads_the_setup_and_the_timed_call() {
        let h = parse_fixed_harness(JEMBENCH_STYLE).unwrap();
        assert_eq!(h.package.as_deref(), Some("fixed"));
        assert_eq!(h.imports, vec!["jembench.*"]);
        assert_eq!((h.class.as_str(), h.extendable), ("LoopToy", true));
        assert_eq!(h.params, "String[] args");
        assert_eq!(h.setup, vec!["SerialBenchmark bench = new jembench.app.Toy();"]);
        assert_eq!(
            (h.region.as_str(), h.iterations, h.region_line),
            ("bench.perform(10000);", 10000, 13)
        );
        assert_eq!(h.wrapper_main(), "fixed.JopcalLoopToy");
        let w = h.wrapper_source("Toy", "LoopToy.java");
        assert!(w.contains("package fixed;\n\nimport jembench.*;\n"), "{w}");
        assert!(
            w.contains("public final class JopcalLoopToy extends LoopToy {\n    public static void main(String[] args) {\n        SerialBenchmark bench = new jembench.app.Toy();\n        jopcal.harness.Harness.start();\n        bench.perform(10000);\n        jopcal.harness.Harness.stop();\n        jopcal.harness.Harness.report(\"Toy\", 10000);\n"),
            "{w}"
        );
    }

    #[test]
    fn a_timed_loop_is_copied_whole_with_its_bound_as_the_count() {
        // The shape of harnesses that time a loop over work units or workers.
        let src = "package fixed;\nimport jembench.*;\npublic final class LoopGrid {\n  public static void main(String[] a) throws Exception {\n    GridBenchmark bench = new GridBenchmark();\n    int[] sizes = {4, 8};\n    for (int i = 0; i < 2; i++) { bench.prepare(sizes[i]); }\n    System.out.println(bench);\n    int t1 = (int) System.currentTimeMillis();\n    int units = bench.units();\n    for (int i=0; i<100; ++i) {\n      for (int j=0; j<units; ++j) { bench.unit(j); }\n    }\n    int t2 = (int) System.currentTimeMillis();\n    System.out.print(t2 - t1);\n  }\n}\n";
        let h = parse_fixed_harness(src).unwrap();
        assert!(!h.extendable, "final");
        assert_eq!(h.params, "String[] a");
        assert_eq!(
            h.setup,
            vec![
                "GridBenchmark bench = new GridBenchmark();",
                "int[] sizes = {4, 8};",
                "for (int i = 0; i < 2; i++) { bench.prepare(sizes[i]); }",
            ]
        );
        assert!(
            h.region
                .starts_with("int units = bench.units();\n    for (int i=0; i<100; ++i) {"),
            "{}",
            h.region
        );
        assert!(h.region.ends_with("}\n    }"), "{}", h.region);
        assert_eq!((h.iterations, h.region_line), (100, 10));
        assert!(h
            .wrapper_source("Grid", "LoopGrid.java")
            .contains("public final class JopcalLoopGrid {\n"));
    }

    #[test]
    fn jbe_style_and_a_harness_with_its_own_constructor() {
        let src = "package jbe;\npublic class LoopK {\n  LoopK() {}\n  public static void main(String[] a) {\n    BenchMark bench = new BenchK();\n    int t1 = (int) System.currentTimeMillis();\n    bench.test(500);\n    int t2 = (int) System.currentTimeMillis();\n  }\n}\n";
        let h = parse_fixed_harness(src).unwrap();
        assert_eq!(h.setup, vec!["BenchMark bench = new BenchK();"]);
        assert_eq!(
            (h.region.as_str(), h.iterations, h.extendable),
            ("bench.test(500);", 500, false)
        );
    }

    #[test]
    fn says_what_is_missing_and_where() {
        let e = parse_fixed_harness(
            "package x;\nclass A {\n static void main(String[] s) { long t = System.currentTimeMillis(); }\n}\n",
        )
        .unwrap_err();
        assert_eq!(
            e.to_string(),
            "3:14: A.main has 1 currentTimeMillis() call(s), not a timed region between two"
        );
        let e = parse_fixed_harness(
            "class A {\n static void main(String[] s) {\n  long t = System.currentTimeMillis();\n  t = System.currentTimeMillis();\n }\n}\n",
        )
        .unwrap_err();
        assert_eq!(e.to_string(), "3:19: nothing is timed between the two clock reads");
        let e = parse_fixed_harness(
            "class A {\n static void main(String[] s) {\n  if (s == null) { long t = System.currentTimeMillis(); }\n  run();\n  long u = System.currentTimeMillis();\n }\n}\n",
        )
        .unwrap_err();
        assert_eq!(
            e.to_string(),
            "3:36: the clock read is not a statement of main's own body (inside a block)"
        );
        assert_eq!(
            parse_fixed_harness("class A { int x; }").unwrap_err().to_string(),
            "1:1: A has no `void main(...)`"
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
            if let Ok(h) = parse_fixed_harness(&s) {
                let w = h.wrapper_source("T", "T.java");
                proptest::prop_assert!(w.contains(&h.region));
            }
        }
    }
}
