//! The whole JemBench as JemBench's own `Main` runs it (`--suite
//! jembench-all`): the benchmarks are the `execute(new ...())` calls of the
//! tree's `jembench/Main.java`, in its order, each timed by a generated
//! wrapper that runs a fixed amount of its work between the cycle-counter
//! reads of jopcal's harness. How the work is run follows what the
//! benchmark extends, as JemBench's own `measure()` of that base class runs
//! it, on one CPU as the tree's fixed harnesses do (the workers called
//! directly, not through JemBench's executor threads):
//!
//! | extends | the timed work |
//! |---|---|
//! | `SerialBenchmark` | `bench.perform(N)` |
//! | `ParallelBenchmark` | `N` times `bench.getWorker().run()` |
//! | `EnumeratedParallelBenchmark` | `N` times every unit: `bench.executeUnit(j)` |
//! | `StreamBenchmark` | `bench.reset(N)`, then its workers until `bench.isFinished()` |
//!
//! `N` depends on the group (the benchmark's package: micro, kernel,
//! application, parallel, stream) so that each runs some millions of cycles
//! on JOP: long against the harness's few hundred, short for the RTL.

use std::path::{Path, PathBuf};

/// How a JemBench benchmark's work is run (its base class).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Serial,
    Parallel,
    Enumerated,
    Stream,
}

impl Kind {
    fn from_base(name: &str) -> Option<Kind> {
        match name {
            "SerialBenchmark" => Some(Kind::Serial),
            "ParallelBenchmark" => Some(Kind::Parallel),
            "EnumeratedParallelBenchmark" => Some(Kind::Enumerated),
            "StreamBenchmark" => Some(Kind::Stream),
            _ => None,
        }
    }

    /// The base class's name.
    pub fn base(self) -> &'static str {
        match self {
            Kind::Serial => "SerialBenchmark",
            Kind::Parallel => "ParallelBenchmark",
            Kind::Enumerated => "EnumeratedParallelBenchmark",
            Kind::Stream => "StreamBenchmark",
        }
    }
}

/// One benchmark `Main` runs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Listed {
    /// Fully qualified class, e.g. `jembench.micro.Add`.
    pub class: String,
    /// `Main.java`'s line that runs it.
    pub line: usize,
}

impl Listed {
    /// The bench name: the class's simple name.
    pub fn name(&self) -> &str {
        self.class.rsplit('.').next().unwrap_or(&self.class)
    }

    /// The group: the package segment after `jembench` (`micro`, `kernel`, ...).
    pub fn group(&self) -> &str {
        let parts: Vec<&str> = self.class.split('.').collect();
        if parts.len() > 2 {
            parts[1]
        } else {
            ""
        }
    }
}

/// The `execute(new X())` calls of JemBench's `Main.java`, in order; lines
/// commented out (`//`, `/* */`) do not count.
pub fn listed(main_source: &str) -> Vec<Listed> {
    let mut out = Vec::new();
    // Comments blanked, lines kept: a call commented out is not there.
    for (n, line) in crate::harness::blank_comments(main_source).lines().enumerate() {
        let mut at = line;
        while let Some(k) = at.find("execute(") {
            let after = at[k + "execute(".len()..].trim_start();
            if let Some(new) = after.strip_prefix("new ") {
                let class: String = new
                    .trim_start()
                    .chars()
                    .take_while(|c| c.is_alphanumeric() || *c == '.' || *c == '_')
                    .collect();
                if !class.is_empty() {
                    out.push(Listed { class, line: n + 1 });
                }
            }
            at = &at[k + 1..];
        }
    }
    out
}

/// The class `name` extends in `source` (its simple name), if any.
pub fn extends(source: &str, simple: &str) -> Option<String> {
    let decl = format!("class {simple}");
    // The declaration, not a longer name that starts with it.
    let k = source.match_indices(&decl).map(|(k, _)| k).find(|&k| {
        source[k + decl.len()..]
            .chars()
            .next()
            .is_some_and(|c| c.is_whitespace() || c == '{' || c == '<')
    })?;
    let rest = &source[k + decl.len()..];
    let head = &rest[..rest.find('{')?];
    let mut words = head.split_whitespace();
    while let Some(w) = words.next() {
        if w == "extends" {
            let base = words.next()?;
            return Some(base.rsplit('.').next().unwrap_or(base).to_string());
        }
    }
    None
}

/// How `class` runs: its base class, followed through the tree's sources
/// under `root` (the directory `jembench/` is in); `Err` says why not.
pub fn kind_of(root: &Path, class: &str, read: &dyn Fn(&Path) -> std::io::Result<String>) -> Result<Kind, KindError> {
    kind_through_bases(root, class, read).map_err(KindError)
}

/// Why a JemBench class's kind could not be told: the file and what it lacks.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct KindError(pub String);

fn kind_through_bases(
    root: &Path,
    class: &str,
    read: &dyn Fn(&Path) -> std::io::Result<String>,
) -> Result<Kind, String> {
    // JemBench's Main also runs a base class itself (its own dummy work).
    if let Some(kind) = Kind::from_base(class.rsplit('.').next().unwrap_or(class)) {
        return Ok(kind);
    }
    let mut current = class.to_string();
    for _ in 0..8 {
        let file = source_file(root, &current);
        let text = read(&file).map_err(|e| format!("{}: {e}", file.display()))?;
        let simple = current.rsplit('.').next().unwrap_or(&current).to_string();
        let Some(base) = extends(&text, &simple) else {
            return Err(format!(
                "{}: {simple} extends none of JemBench's benchmark classes (SerialBenchmark, ParallelBenchmark, EnumeratedParallelBenchmark, StreamBenchmark)",
                file.display()
            ));
        };
        if let Some(kind) = Kind::from_base(&base) {
            return Ok(kind);
        }
        // The base in the same package, else in jembench.
        let package = current.rsplit_once('.').map_or("", |(p, _)| p).to_string();
        let same = format!("{package}.{base}");
        current = if source_file(root, &same).is_file() {
            same
        } else {
            format!("jembench.{base}")
        };
    }
    Err(format!("{class}: its base classes go deeper than 8"))
}

/// `root/a/b/C.java` of class `a.b.C`.
pub fn source_file(root: &Path, class: &str) -> PathBuf {
    root.join(format!("{}.java", class.replace('.', "/")))
}

/// The work's amount `N` for a benchmark of `group` and `kind` (see the module doc).
pub fn iterations(group: &str, kind: Kind) -> u32 {
    match (kind, group) {
        (Kind::Serial, "micro") => 10_000,
        (Kind::Serial, "kernel") => 100,
        (Kind::Serial, "application") => 1_000,
        (Kind::Serial, _) => 100,
        (Kind::Parallel, _) => 5,
        (Kind::Enumerated, _) => 10,
        (Kind::Stream, _) => 2,
    }
}

/// The generated wrapper's simple class name (in package `jembench`, whose
/// package-private members the base classes' work needs).
pub fn wrapper_class(bench: &str) -> String {
    format!("JopcalAll{bench}")
}

/// Java source of the wrapper that times `n` of `class`'s work as `kind`
/// says, reported as bench `bench`.
pub fn wrapper_source(l: &Listed, kind: Kind, n: u32) -> String {
    let (bench, class) = (l.name(), &l.class);
    let work = match kind {
        Kind::Serial => format!("        bench.perform({n});\n"),
        Kind::Parallel => format!("        for (int i = 0; i < {n}; ++i) {{\n            bench.getWorker().run();\n        }}\n"),
        Kind::Enumerated => format!(
            "        int units = bench.getNrOfUnits();\n        for (int i = 0; i < {n}; ++i) {{\n            for (int j = 0; j < units; ++j) {{\n                bench.executeUnit(j);\n            }}\n        }}\n"
        ),
        Kind::Stream => format!(
            "        Runnable[] r = bench.getWorkers();\n        bench.reset({n});\n        while (!bench.isFinished()) {{\n            for (int j = 0; j < r.length; ++j) {{\n                r[j].run();\n            }}\n        }}\n"
        ),
    };
    format!(
        "// Generated by jopcal from jembench/Main.java line {line}: {class}, a {base},\n// its work run {n} times on one CPU between the cycle-counter reads of jopcal's harness.\npackage jembench;\n\npublic final class {wrapper} {{\n    public static void main(String[] args) {{\n        {class} bench = new {class}();\n        jopcal.harness.Harness.start();\n{work}        jopcal.harness.Harness.stop();\n        jopcal.harness.Harness.report(\"{bench}\", {n});\n    }}\n}}\n",
        line = l.line,
        base = kind.base(),
        wrapper = wrapper_class(bench),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    const MAIN: &str = "package jembench;\npublic final class Main {\n  private static void runMicroBenchmarks() {\n    execute(new jembench.micro.Add());\n    if (USE_FLOAT)\n      execute(new jembench.micro.Fadd());\n    // execute(new jembench.micro.Old());\n    /* execute(new jembench.micro.Gone());\n       execute(new jembench.micro.Gone2()); */ execute(new jembench.kernel.Sieve());\n    execute(new jembench.parallel.raytrace.Raytrace());\n  }\n}\n";

    #[test]
    fn mains_benchmarks_in_order_without_the_commented_ones() {
        let l = listed(MAIN);
        let names: Vec<(&str, &str, usize)> = l.iter().map(|x| (x.name(), x.group(), x.line)).collect();
        assert_eq!(
            names,
            vec![
                ("Add", "micro", 4),
                ("Fadd", "micro", 6),
                ("Sieve", "kernel", 9),
                ("Raytrace", "parallel", 10)
            ]
        );
    }

    #[test]
    fn the_kind_follows_the_base_classes() {
        let dir = tempfile::tempdir().unwrap();
        let put = |class: &str, text: &str| {
            let f = source_file(dir.path(), class);
            std::fs::create_dir_all(f.parent().unwrap()).unwrap();
            std::fs::write(f, text).unwrap();
        };
        put(
            "jembench.micro.Add",
            "package jembench.micro;\npublic class Add extends SerialBenchmark {\n}",
        );
        put(
            "jembench.parallel.Grid",
            "package jembench.parallel;\npublic class Grid extends Base implements Runnable {}",
        );
        put(
            "jembench.parallel.Base",
            "public abstract class Base extends jembench.ParallelBenchmark {}",
        );
        put("jembench.micro.Odd", "public class Odd extends Object {}");
        let read = |p: &Path| std::fs::read_to_string(p);
        assert_eq!(kind_of(dir.path(), "jembench.micro.Add", &read), Ok(Kind::Serial));
        assert_eq!(kind_of(dir.path(), "jembench.parallel.Grid", &read), Ok(Kind::Parallel));
        assert_eq!(
            kind_of(dir.path(), "jembench.EnumeratedParallelBenchmark", &read),
            Ok(Kind::Enumerated)
        );
        let e = kind_of(dir.path(), "jembench.micro.Odd", &read).unwrap_err();
        assert!(e.0.contains("Object.java"), "{e}");
        let e = kind_of(dir.path(), "jembench.micro.Missing", &read).unwrap_err();
        assert!(e.0.contains("Missing.java"), "{e}");
    }

    #[test]
    fn wrappers_time_the_work_as_the_base_class_runs_it() {
        let l = Listed {
            class: "jembench.stream.AES".into(),
            line: 154,
        };
        let w = wrapper_source(&l, Kind::Stream, 2);
        assert!(
            w.contains("package jembench;\n\npublic final class JopcalAllAES {"),
            "{w}"
        );
        assert!(
            w.contains("jembench.stream.AES bench = new jembench.stream.AES();\n        jopcal.harness.Harness.start();\n        Runnable[] r = bench.getWorkers();\n        bench.reset(2);\n"),
            "{w}"
        );
        assert!(w.contains("jopcal.harness.Harness.report(\"AES\", 2);"), "{w}");
        let s = wrapper_source(
            &Listed {
                class: "jembench.micro.Add".into(),
                line: 4,
            },
            Kind::Serial,
            10_000,
        );
        assert!(
            s.contains("        bench.perform(10000);\n        jopcal.harness.Harness.stop();"),
            "{s}"
        );
    }
}
