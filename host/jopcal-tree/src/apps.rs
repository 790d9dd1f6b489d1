//! The tree's applications outside JemBench (`--suite apps`): every class
//! with a `main` under `java/target/src/bench` that is not JemBench's
//! (`jembench/`) or a fixed-count harness (`fixed/`, `jbe/`), each either
//! timed by a generated wrapper or left out with the reason.
//!
//! An application is timed when jopcal can tell its work from its setup and
//! its output, in one of three shapes read from its sources:
//!
//! | shape | read from | the timed work |
//! |---|---|---|
//! | periodic tasks | `main` builds an object whose class creates tasks `new T(new Handler(...), ...)`, `T` a thread class of the tree (`extends RtThread`) whose constructor takes the handler (`Runnable`) and a period | `N` hyperperiods of a cyclic executive on one CPU: at each tick (the periods' greatest common divisor) every handler whose period divides the tick runs once, higher priority first |
//! | a period loop | `main` builds `T v = new T()` and calls `v.m()` in a loop | `N` calls of `v.m()` |
//! | a forever loop | `main`'s setup, then `for (;;) { work }` (or `while (true)`) with no `break` or `return` in it | `N` passes of `work`, in a renamed copy of main's class |
//!
//! For periodic tasks the wrapper is a copy of the class that creates them,
//! renamed, whose task creations record the handler, priority and period
//! instead of creating threads (so nothing is scheduled by the tree's timer,
//! and no scoped memory is entered: the handlers allocate on the heap); `main`
//! runs the application's own setup statements and then the cyclic
//! executive where it started the mission. Both shapes need every class the
//! application imports to be in the tree's build (the JDK directories of
//! the Makefile's `TARGET_SOURCE`); an application that needs more is left
//! out naming the import.

use std::collections::{BTreeSet, VecDeque};
use std::path::{Path, PathBuf};

/// How a loop that never ends by its condition is written.
const FOREVER: [&str; 4] = ["for (;;)", "for(;;)", "while (true)", "while(true)"];

/// Hyperperiods of a periodic-task application, calls of a period loop.
pub const TASK_HYPERPERIODS: u32 = 1;
pub const LOOP_CALLS: u32 = 10;

/// One application's `main`, found under the tree's benchmark root.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AppMain {
    /// Fully qualified class with the `main`.
    pub class: String,
    /// Its source file.
    pub file: PathBuf,
}

impl AppMain {
    /// The bench name: the class's simple name, or for a class named `Main`
    /// its package (`scd_micro`, `cruiser-control`).
    pub fn name(&self) -> String {
        let (package, simple) = self.class.rsplit_once('.').unwrap_or(("", &self.class));
        if simple == "Main" && !package.is_empty() {
            package.replace('.', "-")
        } else {
            simple.to_string()
        }
    }

    pub fn package(&self) -> &str {
        self.class.rsplit_once('.').map_or("", |(p, _)| p)
    }
}

/// A generated wrapper: its class (fully qualified), its path under `src/`,
/// its source, and what it times in words.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Wrapper {
    pub main: String,
    pub path: String,
    pub source: String,
    pub kind: String,
}

/// Directories under the benchmark root that are other suites' sources.
const OTHER_SUITES: [&str; 3] = ["jembench", "fixed", "jbe"];

/// The applications' mains under `root` (the tree's `java/target/src/bench`),
/// sorted by class.
pub fn discover(root: &Path) -> std::io::Result<Vec<AppMain>> {
    let mut out = Vec::new();
    for e in walkdir::WalkDir::new(root).sort_by_file_name() {
        let e = e.map_err(std::io::Error::other)?;
        let p = e.path();
        if !e.file_type().is_file() || p.extension().is_none_or(|x| x != "java") {
            continue;
        }
        let rel = p.strip_prefix(root).unwrap_or(p);
        if rel
            .components()
            .any(|c| OTHER_SUITES.iter().any(|s| c.as_os_str() == *s))
        {
            continue;
        }
        let text = String::from_utf8_lossy(&std::fs::read(p)?).into_owned();
        let clean = crate::harness::blank_comments(&text);
        if main_body(&clean).is_none() {
            continue;
        }
        let stem = p
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_default();
        let class = match crate::java_text::package_of(&clean) {
            Some(pk) => format!("{pk}.{stem}"),
            None => stem,
        };
        out.push(AppMain {
            class,
            file: p.to_path_buf(),
        });
    }
    out.sort_by(|a, b| a.class.cmp(&b.class));
    Ok(out)
}

/// Byte range of the body (inside the braces) of `static void main(`.
pub(crate) fn main_body(clean: &str) -> Option<std::ops::Range<usize>> {
    let k = clean.find("static void main(")?;
    let open = k + clean[k..].find('{')?;
    let close = matching(clean, open)?;
    Some(open + 1..close)
}

/// The index of the bracket closing the one at `open` (`{`, `(` or `[`).
fn matching(text: &str, open: usize) -> Option<usize> {
    let bytes = text.as_bytes();
    let (o, c) = match bytes.get(open)? {
        b'{' => (b'{', b'}'),
        b'(' => (b'(', b')'),
        b'[' => (b'[', b']'),
        _ => return None,
    };
    let mut depth = 0usize;
    let mut in_str: Option<u8> = None;
    let mut i = open;
    while i < bytes.len() {
        let b = bytes[i];
        if let Some(q) = in_str {
            if b == b'\\' {
                i += 1;
            } else if b == q {
                in_str = None;
            }
        } else if b == b'"' || b == b'\'' {
            in_str = Some(b);
        } else if b == o {
            depth += 1;
        } else if b == c {
            depth -= 1;
            if depth == 0 {
                return Some(i);
            }
        }
        i += 1;
    }
    None
}

pub(crate) fn is_ident(c: char) -> bool {
    c.is_alphanumeric() || c == '_' || c == '$'
}

/// Byte offsets where `word` occurs as a whole identifier.
fn word_at(text: &str, word: &str) -> Vec<usize> {
    text.match_indices(word)
        .map(|(k, _)| k)
        .filter(|&k| {
            let before = text[..k].chars().next_back();
            let after = text[k + word.len()..].chars().next();
            !before.is_some_and(|c| is_ident(c) || c == '.') && !after.is_some_and(is_ident)
        })
        .collect()
}

/// `text` with every whole identifier `from` (not after a `.`) replaced by `to`.
fn replace_word(text: &str, from: &str, to: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut last = 0;
    for k in word_at(text, from) {
        out.push_str(&text[last..k]);
        out.push_str(to);
        last = k + from.len();
    }
    out.push_str(&text[last..]);
    out
}

/// 1-based line of byte `at`.
fn line_of(text: &str, at: usize) -> usize {
    text[..at.min(text.len())].matches('\n').count() + 1
}

/// The statements of a block body at its top level (ended by `;` or by a
/// nested block's `}`), with their byte ranges.
fn statements(body: &str) -> Vec<std::ops::Range<usize>> {
    let bytes = body.as_bytes();
    let mut out = Vec::new();
    let mut start = 0;
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'(' | b'{' | b'[' | b'"' | b'\'' => {
                let end = if matches!(bytes[i], b'"' | b'\'') {
                    let q = bytes[i];
                    let mut j = i + 1;
                    while j < bytes.len() && bytes[j] != q {
                        j += if bytes[j] == b'\\' { 2 } else { 1 };
                    }
                    j
                } else {
                    matching(body, i).unwrap_or(bytes.len() - 1)
                };
                let block = bytes[i] == b'{';
                i = end + 1;
                // A control statement's or a bare block ends the statement; an
                // array initializer's does not.
                let head = body[start..i].trim_start();
                let word: String = head.chars().take_while(|&c| is_ident(c)).collect();
                let control = [
                    "for",
                    "while",
                    "if",
                    "else",
                    "do",
                    "try",
                    "catch",
                    "finally",
                    "switch",
                    "synchronized",
                ];
                if block && (head.starts_with('{') || control.contains(&word.as_str())) {
                    out.push(start..i);
                    start = i;
                }
                continue;
            }
            b';' => {
                out.push(start..i + 1);
                start = i + 1;
            }
            _ => {}
        }
        i += 1;
    }
    out.retain(|r| !body[r.clone()].trim().is_empty());
    out
}

/// A source's imports: (imported name, line).
type Imports = Vec<(String, usize)>;

/// The imports of a source.
fn imports(clean: &str) -> Imports {
    clean
        .lines()
        .enumerate()
        .filter_map(|(n, l)| {
            let rest = l.trim().strip_prefix("import ")?;
            let rest = rest.strip_prefix("static ").unwrap_or(rest);
            Some((rest.trim_end_matches(';').trim().to_string(), n + 1))
        })
        .collect()
}

/// The source of class `simple` as seen from a file of `package` with
/// `imports`, under `root`: an import naming it, the same package, then the
/// wildcard imports.
fn resolve(root: &Path, package: &str, imports: &Imports, simple: &str) -> Option<PathBuf> {
    let file = |class: &str| crate::jembench::source_file(root, class);
    if simple.contains('.') {
        return Some(file(simple)).filter(|f| f.is_file());
    }
    let explicit = imports
        .iter()
        .find(|(i, _)| i.rsplit('.').next() == Some(simple) && !i.ends_with(".*"));
    if let Some((i, _)) = explicit {
        return Some(file(i)).filter(|f| f.is_file());
    }
    let same = if package.is_empty() {
        simple.to_string()
    } else {
        format!("{package}.{simple}")
    };
    if file(&same).is_file() {
        return Some(file(&same));
    }
    imports
        .iter()
        .filter_map(|(i, _)| i.strip_suffix(".*"))
        .map(|p| file(&format!("{p}.{simple}")))
        .find(|f| f.is_file())
}

/// The classes a source constructs (`new X(`), in order, each once.
fn constructed(clean: &str) -> Vec<(String, usize)> {
    let mut out: Vec<(String, usize)> = Vec::new();
    for k in word_at(clean, "new") {
        let rest = clean[k + 3..].trim_start();
        let name: String = rest.chars().take_while(|&c| is_ident(c) || c == '.').collect();
        let after = rest[name.len()..].trim_start();
        if !name.is_empty() && after.starts_with('(') && !out.iter().any(|(n, _)| *n == name) {
            out.push((name, k));
        }
    }
    out
}

/// A read source: its text with comments blanked, and where it is.
struct Source {
    path: PathBuf,
    clean: String,
}

impl Source {
    fn read(path: &Path, decode: &dyn Fn(&Path) -> std::io::Result<String>) -> Result<Source, String> {
        let text = decode(path).map_err(|e| format!("{}: {e}", path.display()))?;
        Ok(Source {
            path: path.to_path_buf(),
            clean: crate::harness::blank_comments(&text),
        })
    }

    fn package(&self) -> String {
        crate::java_text::package_of(&self.clean).unwrap_or_default()
    }

    fn imports(&self) -> Imports {
        imports(&self.clean)
    }

    fn at(&self, k: usize) -> String {
        format!("{}:{}", self.path.display(), line_of(&self.clean, k))
    }
}

/// A constructor's parameters: (type, name).
fn constructor_params(clean: &str, simple: &str) -> Vec<Vec<(String, String)>> {
    let mut out = Vec::new();
    for k in word_at(clean, simple) {
        let rest = &clean[k + simple.len()..];
        let trimmed = rest.trim_start();
        if !trimmed.starts_with('(') {
            continue;
        }
        // A declaration: preceded by a modifier or `}`/`;`/`{`, not by `new`.
        let before = clean[..k].trim_end();
        if before.ends_with("new")
            || !(before.ends_with("public")
                || before.ends_with("protected")
                || before.ends_with("private")
                || before.ends_with(['}', ';', '{']))
        {
            continue;
        }
        let open = k + simple.len() + (rest.len() - trimmed.len());
        let Some(close) = matching(clean, open) else { continue };
        if !clean[close + 1..].trim_start().starts_with('{') {
            continue;
        }
        let params = clean[open + 1..close]
            .split(',')
            .filter(|p| !p.trim().is_empty())
            .map(|p| {
                let words: Vec<&str> = p.split_whitespace().filter(|w| *w != "final").collect();
                let name = words.last().copied().unwrap_or("").to_string();
                let ty = words[..words.len().saturating_sub(1)].join(" ");
                (ty, name)
            })
            .collect();
        out.push(params);
    }
    out
}

/// The JDK directories the tree's build compiles against, and those the
/// Makefile's other branches would (`JDK16=true`, `CLDC11=true`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct BuildJdk {
    /// The default branch's: what the tree's image builds compile against.
    pub dirs: Vec<PathBuf>,
    /// Every other branch: the make variable that selects it (`JDK16=true`)
    /// and its directories.
    pub switches: Vec<(String, Vec<PathBuf>)>,
}

impl BuildJdk {
    /// The directories of the tree at `home`: each `TARGET_SOURCE=` of its
    /// Makefile (the last is the default branch; an earlier one is selected by
    /// the `ifeq ($(NAME),VALUE)` above it), minus the application's own path.
    pub fn of_tree(home: &Path) -> BuildJdk {
        let src = home.join("java/target/src");
        let text = std::fs::read_to_string(home.join("Makefile")).unwrap_or_default();
        let dirs_of = |line: &str| -> Vec<PathBuf> {
            line.split("$(TARGET_SRC_PATH)/")
                .skip(1)
                .map(|s| s.split(['$', ' ', '\t']).next().unwrap_or("").trim())
                .filter(|s| !s.is_empty())
                .map(|s| src.join(s))
                .collect()
        };
        let mut branches: Vec<(Option<String>, Vec<PathBuf>)> = Vec::new();
        let mut condition: Option<String> = None;
        for line in text.lines().map(str::trim) {
            if let Some(rest) = line.strip_prefix("ifeq") {
                condition = make_switch(rest);
            } else if line.starts_with("else") || line.starts_with("endif") {
                condition = None;
            } else if line.starts_with("TARGET_SOURCE") {
                let dirs = dirs_of(line);
                if !dirs.is_empty() {
                    branches.push((condition.clone(), dirs));
                }
            }
        }
        let Some((_, dirs)) = branches.pop() else {
            return BuildJdk {
                dirs: ["common", "jdk_base", "jdk11", "rtapi"]
                    .iter()
                    .map(|d| src.join(d))
                    .collect(),
                switches: Vec::new(),
            };
        };
        let switches = branches.into_iter().filter_map(|(c, d)| Some((c?, d))).collect();
        BuildJdk { dirs, switches }
    }
}

/// `NAME=VALUE` of a Makefile's `ifeq ($(NAME),VALUE)`.
fn make_switch(rest: &str) -> Option<String> {
    let inner = rest.trim().strip_prefix('(')?.strip_suffix(')')?;
    let (left, right) = inner.split_once(',')?;
    let name = left.trim().strip_prefix("$(")?.strip_suffix(')')?;
    Some(format!("{name}={}", right.trim()))
}

/// The sources an application reaches from `start` by imports and packages
/// under `root`; the first `java.`/`javax.` import that none of `jdk`'s
/// directories holds is the reason it cannot build (naming the Makefile
/// switch whose build has it, if one does).
/// Whether `word` occurs in `text` as a whole identifier.
fn names_word(text: &str, word: &str) -> bool {
    text.match_indices(word).any(|(at, _)| {
        let before = text[..at].chars().next_back();
        let after = text[at + word.len()..].chars().next();
        !before.is_some_and(is_ident) && !after.is_some_and(is_ident)
    })
}

pub(crate) fn missing_import(
    root: &Path,
    jdk: &BuildJdk,
    start: &[PathBuf],
    decode: &dyn Fn(&Path) -> std::io::Result<String>,
) -> Option<String> {
    let mut seen: BTreeSet<PathBuf> = BTreeSet::new();
    let mut queue: VecDeque<PathBuf> = start.iter().cloned().collect();
    let java_files = |dir: &Path| -> Vec<PathBuf> {
        let mut v: Vec<PathBuf> = std::fs::read_dir(dir)
            .into_iter()
            .flatten()
            .flatten()
            .map(|e| e.path())
            .filter(|p| p.extension().is_some_and(|x| x == "java"))
            .collect();
        v.sort();
        v
    };
    while let Some(f) = queue.pop_front() {
        if !seen.insert(f.clone()) {
            continue;
        }
        let Ok(s) = Source::read(&f, decode) else { continue };
        // The same package needs no import: its classes the source names
        // (a class in another file of the package is named by its file's).
        if let Some(dir) = f.parent() {
            queue.extend(java_files(dir).into_iter().filter(|g| {
                g.file_stem()
                    .and_then(|n| n.to_str())
                    .is_some_and(|name| names_word(&s.clean, name))
            }));
        }
        for (i, line) in s.imports() {
            let class_path = i.trim_end_matches(".*").replace('.', "/");
            if i.starts_with("java.") || i.starts_with("javax.") {
                let holds = |d: &PathBuf| {
                    if i.ends_with(".*") {
                        d.join(&class_path).is_dir()
                    } else {
                        d.join(format!("{class_path}.java")).is_file()
                    }
                };
                if !jdk.dirs.iter().any(holds) {
                    let names: Vec<String> = jdk
                        .dirs
                        .iter()
                        .map(|d| {
                            d.file_name()
                                .map(|n| n.to_string_lossy().into_owned())
                                .unwrap_or_default()
                        })
                        .collect();
                    let elsewhere = jdk
                        .switches
                        .iter()
                        .find_map(|(switch, dirs)| {
                            let d = dirs.iter().find(|d| holds(d))?;
                            let name = d.file_name()?.to_string_lossy().into_owned();
                            Some(format!("; {name} has it, in the build with the Makefile's {switch}"))
                        })
                        .unwrap_or_default();
                    return Some(format!(
                        "{}:{line} imports {i}, which the tree's build does not have (its TARGET_SOURCE: {}){elsewhere}",
                        f.display(),
                        names.join(", ")
                    ));
                }
            } else if i.ends_with(".*") {
                queue.extend(java_files(&root.join(&class_path)));
            } else {
                let file = root.join(format!("{class_path}.java"));
                if file.is_file() {
                    queue.push_back(file);
                }
            }
        }
    }
    None
}

/// The wrapper that times `app`, or why it cannot be timed.
pub fn plan(
    root: &Path,
    jdk: &BuildJdk,
    app: &AppMain,
    decode: &dyn Fn(&Path) -> std::io::Result<String>,
) -> Result<Wrapper, String> {
    let main = Source::read(&app.file, decode)?;
    let body = main_body(&main.clean).ok_or_else(|| format!("{}: no main body", app.file.display()))?;
    // What it needs first: a class the tree's build lacks is the plainest
    // reason. The walk starts at main and at the classes it makes (which a
    // wrapper may copy), wherever they are.
    let mut start = vec![app.file.clone()];
    let (package, imports) = (main.package(), main.imports());
    start.extend(
        constructed(&main.clean[body.clone()])
            .into_iter()
            .filter_map(|(class, _)| resolve(root, &package, &imports, &class)),
    );
    if let Some(why) = missing_import(root, jdk, &start, decode) {
        return Err(why);
    }
    match periodic_tasks(root, app, &main, body.clone(), decode)? {
        Some(w) => Ok(w),
        None => period_loop(app, &main, body.clone())
            .or_else(|| forever_loop(app, &main))
            .ok_or_else(|| why_not(root, &main, body, decode)),
    }
}

/// Why an application whose `main` has neither shape is left out.
fn why_not(
    root: &Path,
    main: &Source,
    body: std::ops::Range<usize>,
    decode: &dyn Fn(&Path) -> std::io::Result<String>,
) -> String {
    let text = &main.clean[body.clone()];
    // Threads of the tree's real-time API, made in main itself.
    if let Some(k) = text.find("new RtThread(") {
        let mut why = format!(
            "{}: its work runs in RtThread periodic threads made in main",
            main.at(body.start + k)
        );
        // What those threads run: a handler whose run() never returns.
        let (package, imports) = (main.package(), main.imports());
        for (class, _) in constructed(text) {
            let Some(f) = resolve(root, &package, &imports, &class) else {
                continue;
            };
            let Ok(s) = Source::read(&f, decode) else { continue };
            if let Some(k) = s.clean.find("waitForNextPeriod") {
                why.push_str(&format!(
                    ", and {class}.run() waits for its next period in a loop ({}): there is no end to its work to time",
                    s.at(k)
                ));
                return why;
            }
        }
        return why + ": no fixed amount of work to time";
    }
    // The classes main makes, and their bases, as far as the tree has them.
    let mut made: Vec<Source> = Vec::new();
    let mut queue: Vec<(String, String, Imports)> = constructed(text)
        .into_iter()
        .map(|(c, _)| (c, main.package(), main.imports()))
        .collect();
    while let Some((class, package, imports)) = queue.pop() {
        let Some(f) = resolve(root, &package, &imports, &class) else {
            continue;
        };
        if made.len() > 16 || made.iter().any(|s| s.path == f) {
            continue;
        }
        let Ok(s) = Source::read(&f, decode) else { continue };
        let simple = class.rsplit('.').next().unwrap_or(&class);
        if let Some(base) = crate::jembench::extends(&s.clean, simple) {
            queue.push((base, s.package(), s.imports()));
        }
        made.push(s);
    }
    for s in &made {
        if let Some(&k) = word_at(&s.clean, "Thread")
            .iter()
            .find(|&&k| s.clean[..k].trim_end().ends_with("extends"))
        {
            return format!(
                "{}: its work runs in threads (extends Thread) that main starts: there is no end to its work to time",
                s.at(k)
            );
        }
    }
    for pat in FOREVER {
        if let Some(k) = text.find(pat) {
            return format!(
                "{}: its main runs forever ({pat}): no fixed amount of work to time",
                main.at(body.start + k)
            );
        }
    }
    // Output inside the work: the file prints outside main, or a class main makes prints.
    let outside = main
        .clean
        .match_indices("System.out")
        .map(|(k, _)| k)
        .find(|k| !body.contains(k))
        .map(|k| main.at(k));
    let inside = made.iter().find_map(|s| s.clean.find("System.out").map(|k| s.at(k)));
    if let Some(at) = outside.or(inside) {
        return format!(
            "{at}: it prints inside its work (System.out): the output's UART waits cannot be separated from the work"
        );
    }
    if let Some(k) = text.find("System.out") {
        return format!(
            "{}: its main's work is neither periodic tasks nor a loop of one method's calls, and it prints between its steps: its work cannot be separated from its output",
            main.at(body.start + k)
        );
    }
    format!(
        "{}: its main's work is neither periodic tasks (RtThread handlers) nor a loop of one method's calls",
        main.at(body.start)
    )
}

/// `T v = new T(); ... loop { v.m(); }` in main.
fn period_loop(app: &AppMain, main: &Source, body: std::ops::Range<usize>) -> Option<Wrapper> {
    let text = &main.clean[body.clone()];
    for r in statements(text) {
        let st = text[r.clone()].trim();
        // `T v = new T();`
        let Some((decl, init)) = st.trim_end_matches(';').split_once('=') else {
            continue;
        };
        let words: Vec<&str> = decl.split_whitespace().collect();
        let [ty, var] = words[..] else { continue };
        let init = init.trim();
        if init != format!("new {ty}()") {
            continue;
        }
        // A loop after it calling `v.m()`.
        let rest = &text[r.end..];
        for (k, _) in rest.match_indices(&format!("{var}.")) {
            let before = rest[..k].chars().next_back();
            if before.is_some_and(is_ident) {
                continue;
            }
            let call: String = rest[k + var.len() + 1..].chars().take_while(|&c| is_ident(c)).collect();
            let after = &rest[k + var.len() + 1 + call.len()..];
            if call.is_empty() || !after.trim_start().starts_with("()") {
                continue;
            }
            let in_loop = ["for", "while"].iter().any(|w| !word_at(&rest[..k], w).is_empty());
            if !in_loop {
                continue;
            }
            let name = app.name();
            let class = wrapper_class(&name);
            let package = app.package();
            let n = LOOP_CALLS;
            let line = line_of(&main.clean, body.start + r.end + k);
            let mut source = format!(
                "// Generated by jopcal from {file}: {n} calls of {var}.{call}() as its main makes them\n// (line {line}), on one CPU between the cycle-counter reads of jopcal's harness.\n",
                file = app.file.display()
            );
            if !package.is_empty() {
                source.push_str(&format!("package {package};\n\n"));
            }
            for (i, _) in main.imports() {
                source.push_str(&format!("import {i};\n"));
            }
            source.push_str(&format!(
                "\npublic final class {class} {{\n    public static void main(String[] args) {{\n        {ty} {var} = new {ty}();\n        jopcal.harness.Harness.start();\n        for (int i = 0; i < {n}; ++i) {{\n            {var}.{call}();\n        }}\n        jopcal.harness.Harness.stop();\n        jopcal.harness.Harness.report(\"{name}\", {n});\n    }}\n}}\n"
            ));
            return Some(Wrapper {
                main: qualified(package, &class),
                path: src_path(package, &class),
                source,
                kind: format!(
                    "apps: {} ({}), {n} calls of {ty}.{call}()",
                    app.class,
                    app.file.display()
                ),
            });
        }
    }
    None
}

/// `setup; for (;;) { work }` in main: the loop's body is a period of the
/// application's work (`cache.CallKfl`: `bk.test(4); bu.test(4); ...`).
///
/// The wrapper is main's whole class, renamed, whose forever loop becomes
/// `LOOP_CALLS` passes between the harness's counter reads; the setup before
/// it runs as main runs it. A body that leaves the loop (`break`, `return`)
/// has no fixed amount of work per pass, and stays out.
fn forever_loop(app: &AppMain, main: &Source) -> Option<Wrapper> {
    let simple = app.class.rsplit('.').next().unwrap_or(&app.class);
    let name = app.name();
    let class = wrapper_class(&name);
    let copy = replace_word(&main.clean, simple, &class);
    let body = main_body(&copy)?;
    let text = &copy[body.clone()];
    let (loop_at, work) = statements(text).into_iter().find_map(|r| {
        let st = text[r.clone()].trim_start();
        let head = FOREVER.into_iter().find(|h| st.starts_with(h))?;
        let rest = st[head.len()..].trim();
        let work = match rest.strip_prefix('{') {
            Some(inner) => inner.strip_suffix('}')?,
            None => rest,
        };
        Some((r, work.to_string()))
    })?;
    if ["break", "return"].iter().any(|w| !word_at(&work, w).is_empty()) {
        return None;
    }
    let n = LOOP_CALLS;
    let st = &text[loop_at.clone()];
    let line = line_of(&copy, body.start + loop_at.start + (st.len() - st.trim_start().len()));
    let timed = format!(
        "\n        jopcal.harness.Harness.start();\n        for (int jopcalPass = 0; jopcalPass < {n}; ++jopcalPass) {{{work}}}\n        jopcal.harness.Harness.stop();\n        jopcal.harness.Harness.report(\"{name}\", {n});\n"
    );
    let at = body.start + loop_at.start;
    let source = format!(
        "// Generated by jopcal from {file}: {simple} renamed, its main's setup, then {n} passes of its\n// forever loop (line {line}) on one CPU between the cycle-counter reads of jopcal's harness.\n{before}{timed}{after}",
        file = app.file.display(),
        before = &copy[..at],
        after = &copy[body.start + loop_at.end..],
    );
    let package = app.package();
    Some(Wrapper {
        main: qualified(package, &class),
        path: src_path(package, &class),
        source,
        kind: format!(
            "apps: {} ({}), its main's setup, then {n} passes of its forever loop (line {line})",
            app.class,
            app.file.display()
        ),
    })
}

fn qualified(package: &str, class: &str) -> String {
    if package.is_empty() {
        class.to_string()
    } else {
        format!("{package}.{class}")
    }
}

fn src_path(package: &str, class: &str) -> String {
    if package.is_empty() {
        format!("{class}.java")
    } else {
        format!("{}/{class}.java", package.replace('.', "/"))
    }
}

/// The generated wrapper's simple class name.
pub fn wrapper_class(name: &str) -> String {
    format!("JopcalApp{}", identifier(name))
}

/// `name` with every character a Java identifier cannot hold made `_`.
pub(crate) fn identifier(name: &str) -> String {
    name.chars().map(|c| if is_ident(c) { c } else { '_' }).collect()
}

/// The thread class a task creation makes: `new T(new Handler(...), ...)`
/// where `T`'s source says `extends RtThread`.
struct TaskClass {
    simple: String,
    source: Source,
    /// Its constructors that take a handler and a period.
    constructors: Vec<TaskConstructor>,
}

/// A task class's constructor that takes a handler: its parameters (type,
/// name) and which of them is the handler, the period and the priority.
struct TaskConstructor {
    params: Vec<(String, String)>,
    handler: usize,
    period: usize,
    priority: Option<usize>,
}

fn task_class(
    root: &Path,
    owner: &Source,
    simple: &str,
    decode: &dyn Fn(&Path) -> std::io::Result<String>,
) -> Option<TaskClass> {
    let f = resolve(root, &owner.package(), &owner.imports(), simple)?;
    let source = Source::read(&f, decode).ok()?;
    let short = simple.rsplit('.').next().unwrap_or(simple);
    let extends_thread = crate::jembench::extends(&source.clean, short).is_some_and(|b| b == "RtThread");
    if !extends_thread {
        return None;
    }
    let constructors = constructor_params(&source.clean, short)
        .into_iter()
        .filter_map(|ps| {
            let handler = ps.iter().position(|(t, _)| t == "Runnable")?;
            let period = ps
                .iter()
                .position(|(t, n)| t == "int" && n.to_ascii_lowercase().contains("period"))?;
            let prio = ps
                .iter()
                .position(|(t, n)| t == "int" && n.to_ascii_lowercase().starts_with("prio"));
            Some(TaskConstructor {
                params: ps,
                handler,
                period,
                priority: prio,
            })
        })
        .collect();
    Some(TaskClass {
        simple: short.to_string(),
        source,
        constructors,
    })
}

/// The periodic-task shape (see the module doc).
fn periodic_tasks(
    root: &Path,
    app: &AppMain,
    main: &Source,
    body: std::ops::Range<usize>,
    decode: &dyn Fn(&Path) -> std::io::Result<String>,
) -> Result<Option<Wrapper>, String> {
    let text = &main.clean[body.clone()];
    let (package, imports) = (main.package(), main.imports());
    for (class, _) in constructed(text) {
        let Some(file) = resolve(root, &package, &imports, &class) else {
            continue;
        };
        let Ok(owner) = Source::read(&file, decode) else {
            continue;
        };
        // Its task creations: `new T(new ...`.
        let mut task: Option<TaskClass> = None;
        for (t, k) in constructed(&owner.clean) {
            let args = owner.clean[k..].split_once('(').map_or("", |(_, a)| a).trim_start();
            if word_at(args, "new").first() != Some(&0) {
                continue;
            }
            if let Some(tc) = task_class(root, &owner, &t, decode) {
                task = Some(tc);
                break;
            }
        }
        let Some(task) = task else { continue };
        if task.constructors.is_empty() {
            return Err(format!(
                "{}: the task class {} has no constructor taking a Runnable handler and an int period: jopcal cannot tell its tasks' periods",
                task.source.path.display(),
                task.simple
            ));
        }
        return tasks_wrapper(app, main, body, &class, &owner, &task).map(Some);
    }
    Ok(None)
}

fn tasks_wrapper(
    app: &AppMain,
    main: &Source,
    body: std::ops::Range<usize>,
    owner_class: &str,
    owner: &Source,
    task: &TaskClass,
) -> Result<Wrapper, String> {
    let owner_simple = owner_class.rsplit('.').next().unwrap_or(owner_class);
    let name = app.name();
    let class = wrapper_class(&name);
    let n = TASK_HYPERPERIODS;
    // Where the application starts its mission: a method of the owner.
    let k = owner.clean.find("startMission").ok_or_else(|| {
        format!(
            "{}: {owner_simple} creates {} tasks but never starts them (no RtThread.startMission)",
            owner.path.display(),
            task.simple
        )
    })?;
    let start_method: String = owner.clean[..k]
        .rfind("void ")
        .map(|v| {
            owner.clean[v + 5..]
                .trim_start()
                .chars()
                .take_while(|&c| is_ident(c))
                .collect()
        })
        .unwrap_or_default();
    let text = &main.clean[body.clone()];
    let stmts = statements(text);
    let start_at = stmts
        .iter()
        .position(|r| text[r.clone()].contains(&format!(".{start_method}(")))
        .ok_or_else(|| {
            format!(
                "{}: main never calls {owner_simple}.{start_method}(), which starts the mission",
                main.path.display()
            )
        })?;
    // The owner, renamed, its tasks recorded instead of made.
    let mut copy = replace_word(&owner.clean, owner_simple, &class);
    copy = replace_word(&copy, &task.simple, "JopcalTask");
    copy = copy.replace("new JopcalTask(", "jopcalTask(");
    copy = copy.replace("RtThread.startMission();", ";");
    copy = copy.replace("@Override", "");
    if let Some(&k) = word_at(&copy, "RtThread").first() {
        return Err(format!(
            "{}:{}: {owner_simple} uses RtThread beyond creating its tasks: its threads cannot be replaced by jopcal's cyclic executive",
            owner.path.display(),
            line_of(&copy, k)
        ));
    }
    let close = copy
        .rfind('}')
        .ok_or_else(|| format!("{}: no class body", owner.path.display()))?;
    let dropped = |i: &str| {
        i.starts_with("joprt.") || i.starts_with("com.jopdesign.") || i.rsplit('.').next() == Some(task.simple.as_str())
    };
    let mut import_lines: Vec<String> = Vec::new();
    for (i, _) in owner.imports().into_iter().chain(main.imports()) {
        let line = format!("import {i};");
        if !dropped(&i) && !import_lines.contains(&line) {
            import_lines.push(line);
        }
    }
    let main_package = main.package();
    if main_package != owner.package() && !main_package.is_empty() {
        import_lines.push(format!("import {main_package}.*;"));
    }
    let class_text: String = copy[..close]
        .lines()
        .filter(|l| {
            let t = l.trim_start();
            !t.starts_with("package ") && !t.starts_with("import ")
        })
        .collect::<Vec<_>>()
        .join("\n");
    // Stand-ins for what the owner calls on its tasks (void, plain parameters).
    let mut stand_ins = String::new();
    let plain = [
        "int", "long", "short", "byte", "char", "boolean", "float", "double", "String",
    ];
    for (k, _) in task.source.clean.match_indices("public void ") {
        let rest = &task.source.clean[k + "public void ".len()..];
        let m: String = rest.chars().take_while(|&c| is_ident(c)).collect();
        let Some(open) = rest.find('(') else { continue };
        let Some(close) = matching(rest, open) else { continue };
        let params = &rest[open + 1..close];
        let ok = m != "run"
            && params
                .split(',')
                .filter(|p| !p.trim().is_empty())
                .all(|p| p.split_whitespace().next().is_some_and(|t| plain.contains(&t)));
        if ok && !m.is_empty() {
            stand_ins.push_str(&format!("        public void {m}({params}) {{\n        }}\n"));
        }
    }
    let mut factories = String::new();
    for c in &task.constructors {
        let ps = &c.params;
        let decl: Vec<String> = ps.iter().map(|(t, n)| format!("{t} {n}")).collect();
        let prio = c.priority.map_or("0".to_string(), |i| ps[i].1.clone());
        factories.push_str(&format!(
            "    static JopcalTask jopcalTask({}) {{\n        return jopcalAdd({}, {prio}, {});\n    }}\n\n",
            decl.join(", "),
            ps[c.handler].1,
            ps[c.period].1
        ));
    }
    let setup: String = stmts[..start_at]
        .iter()
        .map(|r| {
            format!(
                "        {}\n",
                replace_word(text[r.clone()].trim(), owner_simple, &class)
            )
        })
        .collect();
    let package = owner.package();
    let mut source = format!(
        "// Generated by jopcal from {main_file}: {owner_simple}'s periodic tasks ({task} in\n// {owner_file}) run as a cyclic executive on one CPU, {n} hyperperiods between the\n// cycle-counter reads of jopcal's harness. The class below is {owner_simple}, renamed,\n// whose task creations record their handlers instead of making threads.\n",
        main_file = app.file.display(),
        task = task.simple,
        owner_file = owner.path.display(),
    );
    if !package.is_empty() {
        source.push_str(&format!("package {package};\n\n"));
    }
    for l in &import_lines {
        source.push_str(l);
        source.push('\n');
    }
    source.push_str(class_text.trim_start_matches('\n'));
    source.push_str(&format!(
        r#"

    /** A task as jopcal's executive runs it: its handler, priority and period. */
    static final class JopcalTask {{
        final Runnable handler;
        final int priority;
        final int period;

        JopcalTask(Runnable handler, int priority, int period) {{
            this.handler = handler;
            this.priority = priority;
            this.period = period > 0 ? period : 1;
        }}

{stand_ins}    }}

    private static JopcalTask[] jopcalTasks = new JopcalTask[0];

    private static JopcalTask jopcalAdd(Runnable handler, int priority, int period) {{
        JopcalTask t = new JopcalTask(handler, priority, period);
        JopcalTask[] more = new JopcalTask[jopcalTasks.length + 1];
        for (int i = 0; i < jopcalTasks.length; ++i) {{
            more[i] = jopcalTasks[i];
        }}
        more[jopcalTasks.length] = t;
        jopcalTasks = more;
        return t;
    }}

{factories}    private static int jopcalGcd(int a, int b) {{
        while (b != 0) {{
            int t = a % b;
            a = b;
            b = t;
        }}
        return a;
    }}

    /** One hyperperiod's handler runs: at each tick every task whose period divides it, higher priority first. */
    private static Runnable[] jopcalHyperperiod() {{
        int n = jopcalTasks.length;
        int tick = 0;
        int hyper = 1;
        int[] order = new int[n];
        for (int i = 0; i < n; ++i) {{
            int p = jopcalTasks[i].period;
            tick = jopcalGcd(tick, p);
            hyper = hyper / jopcalGcd(hyper, p) * p;
            int j = i;
            while (j > 0 && jopcalTasks[order[j - 1]].priority < jopcalTasks[i].priority) {{
                order[j] = order[j - 1];
                --j;
            }}
            order[j] = i;
        }}
        int count = 0;
        for (int i = 0; i < n; ++i) {{
            count += hyper / jopcalTasks[i].period;
        }}
        Runnable[] out = new Runnable[count];
        int k = 0;
        for (int t = 0; t < hyper; t += tick) {{
            for (int j = 0; j < n; ++j) {{
                JopcalTask task = jopcalTasks[order[j]];
                if (t % task.period == 0) {{
                    out[k++] = task.handler;
                }}
            }}
        }}
        return out;
    }}

    public static void main(String[] args) {{
{setup}        Runnable[] jopcalWork = jopcalHyperperiod();
        jopcal.harness.Harness.start();
        for (int i = 0; i < {n}; ++i) {{
            for (int j = 0; j < jopcalWork.length; ++j) {{
                jopcalWork[j].run();
            }}
        }}
        jopcal.harness.Harness.stop();
        jopcal.harness.Harness.report("{name}", {n});
    }}
}}
"#
    ));
    Ok(Wrapper {
        main: qualified(&package, &class),
        path: src_path(&package, &class),
        source,
        kind: format!(
            "apps: {} ({}), the tasks {owner_simple} creates ({}) as a cyclic executive, {n} hyperperiods",
            app.class,
            app.file.display(),
            task.simple
        ),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A tree's benchmark root in a temporary directory, and its JDK.
    struct Fixture {
        dir: tempfile::TempDir,
    }

    impl Fixture {
        fn new() -> Fixture {
            let f = Fixture {
                dir: tempfile::tempdir().unwrap(),
            };
            f.put("jdk/java/util/Vector.java", "package java.util; public class Vector {}");
            f
        }

        fn root(&self) -> PathBuf {
            self.dir.path().join("bench")
        }

        fn put(&self, rel: &str, text: &str) {
            let p = self.dir.path().join(rel);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(p, text).unwrap();
        }

        fn plan(&self, class: &str) -> Result<Wrapper, String> {
            let apps = discover(&self.root()).unwrap();
            let app = apps.iter().find(|a| a.class == class).expect("discovered");
            let read = |p: &Path| std::fs::read_to_string(p);
            let jdk = BuildJdk {
                dirs: vec![self.dir.path().join("jdk")],
                switches: vec![("JDK16=true".into(), vec![self.dir.path().join("jdk16")])],
            };
            plan(&self.root(), &jdk, app, &read)
        }
    }

    #[test]
    fn build_jdk_reads_every_branch_of_the_makefile() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join("Makefile"),
            "CLDC11=false\nJDK16=false\nifeq ($(CLDC11),true)\n\tTARGET_SOURCE=$(TARGET_SRC_PATH)/common$(S)$(TARGET_SRC_PATH)/cldc11/cldc_orig$(S)$(TARGET_APP_SOURCE_PATH)\nelse\nifeq ($(JDK16),true)\n\tTARGET_SOURCE=$(TARGET_SRC_PATH)/common$(S)$(TARGET_SRC_PATH)/jdk16$(S)$(TARGET_APP_SOURCE_PATH)\nelse\n\tTARGET_SOURCE=$(TARGET_SRC_PATH)/common$(S)$(TARGET_SRC_PATH)/jdk11$(S)$(TARGET_APP_SOURCE_PATH)\nendif\nendif\n",
        )
        .unwrap();
        let src = dir.path().join("java/target/src");
        let jdk = BuildJdk::of_tree(dir.path());
        assert_eq!(jdk.dirs, vec![src.join("common"), src.join("jdk11")]);
        assert_eq!(
            jdk.switches,
            vec![
                (
                    "CLDC11=true".to_string(),
                    vec![src.join("common"), src.join("cldc11/cldc_orig")]
                ),
                ("JDK16=true".to_string(), vec![src.join("common"), src.join("jdk16")]),
            ]
        );
        // No Makefile: the tree's usual default.
        let none = BuildJdk::of_tree(&dir.path().join("nowhere"));
        assert_eq!(none.dirs.len(), 4);
        assert!(none.switches.is_empty());
    }

    const TASK: &str = "package fly.rt;\nimport joprt.RtThread;\npublic class Periodic extends RtThread {\n    private Runnable h;\n    public Periodic(Runnable handler, int priority, int periodMs, String name) {\n        super(priority, periodMs * 1000);\n        h = handler;\n    }\n    public void setScope(int words) { }\n    public void run() { for (;;) { h.run(); waitForNextPeriod(); } }\n}\n";

    fn periodic_app(f: &Fixture) {
        f.put("bench/fly/rt/Periodic.java", TASK);
        f.put(
            "bench/fly/App.java",
            "package fly;\nimport fly.rt.Periodic;\nimport joprt.RtThread;\nimport java.util.Vector;\npublic class App implements Plane {\n    private Periodic[] tasks;\n    public void init() {\n        tasks = new Periodic[2];\n        tasks[0] = new Periodic(new Steer(this), 5, 25, \"steer\");\n        tasks[0].setScope(128);\n        tasks[1] = new Periodic(new Log(), 3, 50, \"log\");\n    }\n    @Override\n    public void start() {\n        RtThread.startMission();\n    }\n}\n",
        );
        f.put(
            "bench/fly/Plane.java",
            "package fly;\npublic interface Plane { void init(); void start(); }\n",
        );
        f.put(
            "bench/fly/Main.java",
            "package fly;\npublic class Main {\n    public static void main(String[] args) {\n        // the plane\n        Plane p = new App();\n        p.init();\n        p.start();\n    }\n}\n",
        );
    }

    #[test]
    fn other_suites_are_not_applications() {
        let f = Fixture::new();
        periodic_app(&f);
        f.put(
            "bench/jembench/Main.java",
            "package jembench; public class Main { public static void main(String[] a) {} }",
        );
        f.put(
            "bench/fixed/LoopKfl.java",
            "public class LoopKfl { public static void main(String[] a) {} }",
        );
        f.put(
            "bench/Bubble.java",
            "public class Bubble {\n  public static void main(String[] a) { }\n}\n",
        );
        let apps = discover(&f.root()).unwrap();
        let names: Vec<(String, String)> = apps.iter().map(|a| (a.class.clone(), a.name())).collect();
        assert_eq!(
            names,
            vec![("Bubble".into(), "Bubble".into()), ("fly.Main".into(), "fly".into())]
        );
    }

    #[test]
    fn periodic_tasks_become_a_cyclic_executive() {
        let f = Fixture::new();
        periodic_app(&f);
        let w = f.plan("fly.Main").unwrap();
        assert_eq!(w.main, "fly.JopcalAppfly");
        assert_eq!(w.path, "fly/JopcalAppfly.java");
        let s = &w.source;
        // The owner renamed, its tasks recorded, its mission not started.
        assert!(s.contains("public class JopcalAppfly implements Plane {"), "{s}");
        assert!(
            s.contains("tasks[0] = jopcalTask(new Steer(this), 5, 25, \"steer\");"),
            "{s}"
        );
        assert!(s.contains("private JopcalTask[] tasks;"), "{s}");
        assert!(
            !s.contains("RtThread") && !s.contains("import fly.rt.Periodic;") && !s.contains("@Override"),
            "{s}"
        );
        assert!(s.contains("import java.util.Vector;"), "{s}");
        // The task class's constructor, its handler, priority and period.
        assert!(
            s.contains("static JopcalTask jopcalTask(Runnable handler, int priority, int periodMs, String name) {\n        return jopcalAdd(handler, priority, periodMs);"),
            "{s}"
        );
        // What the owner calls on its tasks, as stand-ins.
        assert!(s.contains("public void setScope(int words) {"), "{s}");
        // main: the setup before the start, then the timed executive.
        assert!(
            s.contains("        Plane p = new JopcalAppfly();\n        p.init();\n        Runnable[] jopcalWork = jopcalHyperperiod();\n        jopcal.harness.Harness.start();"),
            "{s}"
        );
        assert!(s.contains("jopcal.harness.Harness.report(\"fly\", 1);"), "{s}");
        assert!(w.kind.contains("cyclic executive"), "{}", w.kind);
    }

    #[test]
    fn a_period_loop_is_timed_call_by_call() {
        let f = Fixture::new();
        f.put(
            "bench/cd/Main.java",
            "package cd;\npublic class Main {\n  public static void main(String[] argv) {\n    Main m = new Main();\n    for (int i = 0; i < 100; i++) {\n      m.run();\n      System.out.print(\"done\");\n    }\n  }\n  public void run() { }\n}\n",
        );
        let w = f.plan("cd.Main").unwrap();
        assert_eq!(w.main, "cd.JopcalAppcd");
        assert!(
            w.source.contains("        Main m = new Main();\n        jopcal.harness.Harness.start();\n        for (int i = 0; i < 10; ++i) {\n            m.run();\n        }"),
            "{}",
            w.source
        );
    }

    #[test]
    fn a_forever_loop_is_timed_pass_by_pass() {
        let f = Fixture::new();
        f.put(
            "bench/cache/CallBoth.java",
            "package cache;\nimport jbe.BenchKfl;\npublic class CallBoth {\n  public static void main(String[] args) {\n    BenchKfl bk = new BenchKfl();\n    for (;;) {\n      bk.test(4);\n      helper(CallBoth.K);\n    }\n  }\n  static final int K = 3;\n  static void helper(int k) { for (;;) { } }\n}\n",
        );
        let w = f.plan("cache.CallBoth").unwrap();
        assert_eq!(w.main, "cache.JopcalAppCallBoth");
        assert_eq!(w.path, "cache/JopcalAppCallBoth.java");
        let s = &w.source;
        // The class renamed with its own references; the setup as main runs it.
        assert!(s.contains("public class JopcalAppCallBoth {"), "{s}");
        assert!(s.contains("import jbe.BenchKfl;"), "{s}");
        assert!(
            s.contains("    BenchKfl bk = new BenchKfl();\n        jopcal.harness.Harness.start();\n        for (int jopcalPass = 0; jopcalPass < 10; ++jopcalPass) {\n      bk.test(4);\n      helper(JopcalAppCallBoth.K);\n    }\n        jopcal.harness.Harness.stop();\n        jopcal.harness.Harness.report(\"CallBoth\", 10);\n"),
            "{s}"
        );
        // Only main's loop is replaced; another method's is the class's own.
        assert!(s.contains("static void helper(int k) { for (;;) { } }"), "{s}");
        assert!(w.kind.ends_with("10 passes of its forever loop (line 6)"), "{}", w.kind);
        // `while (true)` and a body of one statement.
        f.put(
            "bench/spin/Main.java",
            "package spin;\npublic class Main {\n  public static void main(String[] a) {\n    while (true) Work.step();\n  }\n}\n",
        );
        let w = f.plan("spin.Main").unwrap();
        assert!(
            w.source.contains("public class JopcalAppspin {") && w.source.contains("++jopcalPass) {Work.step();}"),
            "{}",
            w.source
        );
    }

    #[test]
    fn applications_that_cannot_be_timed_say_why() {
        let f = Fixture::new();
        periodic_app(&f);
        // A class the tree's JDK lacks, reached through an import.
        f.put(
            "bench/fly/Log.java",
            "package fly;\nimport java.util.HashMap;\npublic class Log implements Runnable { public void run() {} }\n",
        );
        let e = f.plan("fly.Main").unwrap_err();
        assert!(e.ends_with("fly/Log.java:2 imports java.util.HashMap, which the tree's build does not have (its TARGET_SOURCE: jdk)"), "{e}");
        // A class another branch of the Makefile has is named with its switch.
        f.put(
            "jdk16/java/util/HashMap.java",
            "package java.util; public class HashMap {}",
        );
        let e = f.plan("fly.Main").unwrap_err();
        assert!(
            e.ends_with("imports java.util.HashMap, which the tree's build does not have (its TARGET_SOURCE: jdk); jdk16 has it, in the build with the Makefile's JDK16=true"),
            "{e}"
        );
        // A forever loop that can leave has no fixed work per pass.
        f.put(
            "bench/loop/Main.java",
            "package loop;\npublic class Main {\n  public static void main(String[] a) {\n    int x = 0;\n    for (;;) { if (++x > 9) break; }\n  }\n}\n",
        );
        let e = f.plan("loop.Main").unwrap_err();
        assert!(
            e.ends_with("loop/Main.java:5: its main runs forever (for (;;)): no fixed amount of work to time"),
            "{e}"
        );
        f.put(
            "bench/talk/Main.java",
            "package talk;\npublic class Main {\n  public static void main(String[] a) {\n    Bench b = new Bench();\n    b.execute();\n  }\n}\n",
        );
        f.put(
            "bench/talk/Bench.java",
            "package talk;\npublic class Bench extends Base { }\n",
        );
        f.put(
            "bench/talk/Base.java",
            "package talk;\npublic class Base {\n  public void execute() {\n    System.out.println(1);\n  }\n}\n",
        );
        let e = f.plan("talk.Main").unwrap_err();
        assert!(e.ends_with("talk/Base.java:4: it prints inside its work (System.out): the output's UART waits cannot be separated from the work"), "{e}");
        f.put(
            "bench/rt/Main.java",
            "package rt;\nimport joprt.RtThread;\npublic class Main {\n  public static void main(String[] a) {\n    Worker w = new Worker();\n    new RtThread(w, 5, 1000);\n    RtThread.startMission();\n  }\n}\n",
        );
        f.put("bench/rt/Worker.java", "package rt;\npublic class Worker implements Runnable {\n  public void run() {\n    for (;;) { RtThread.currentRtThread().waitForNextPeriod(); }\n  }\n}\n");
        let e = f.plan("rt.Main").unwrap_err();
        assert!(e.contains("rt/Main.java:6: its work runs in RtThread periodic threads made in main, and Worker.run() waits for its next period in a loop (") && e.contains("rt/Worker.java:4)"), "{e}");
    }

    #[test]
    fn statements_split_at_the_top_level() {
        let body = " int[] a = new int[] {1, 2};\n for (int i = 0; i < 2; ++i) { f(i); }\n if (x) { y(); } else { z(); }\n g(\"; {\");\n";
        let parts: Vec<&str> = statements(body).into_iter().map(|r| body[r].trim()).collect();
        assert_eq!(
            parts,
            vec![
                "int[] a = new int[] {1, 2};",
                "for (int i = 0; i < 2; ++i) { f(i); }",
                "if (x) { y(); }",
                "else { z(); }",
                "g(\"; {\");"
            ]
        );
    }
}
