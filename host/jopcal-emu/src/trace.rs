//! Per-method traces as a run's `<name>.methods.csv` and `<name>.calls.txt`:
//! the virtual board writes them for class bundles and for a JOP tree's
//! images, and the Verilator target for the RTL (from its bench's trace
//! taps), so `explain` and `diff` read one format from any of them.

use std::io;
use std::path::Path;

/// One method's row.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MethodRow {
    pub name: String,
    pub calls: u64,
    /// Cycles of the bytecodes the method executed (its invokes with the
    /// cache loads they wait for, its returns with the caller's reload).
    pub cycles: u64,
    /// Bytecodes executed, and method-cache loads of the method, where the
    /// target sees them (a JOP image's run; not a class bundle's).
    pub bytecodes: Option<u64>,
    pub cache_loads: Option<u64>,
}

/// A traced run: its methods, and (for class bundles) the call stream as
/// indices into `rows` (`true` entering, `false` returning).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct MethodTrace {
    pub rows: Vec<MethodRow>,
    pub calls: Vec<(bool, usize)>,
}

impl MethodTrace {
    /// The trace of an image run from its tallies by code address, each
    /// named by `name`.
    pub fn from_tallies(
        tallies: &std::collections::BTreeMap<u32, crate::image::MethodTally>,
        name: impl Fn(u32) -> String,
    ) -> MethodTrace {
        MethodTrace {
            rows: tallies
                .iter()
                .filter(|(addr, _)| **addr != 0)
                .map(|(addr, t)| MethodRow {
                    name: name(*addr),
                    calls: t.calls,
                    cycles: t.cycles,
                    bytecodes: Some(t.bytecodes),
                    cache_loads: Some(t.cache_loads),
                })
                .collect(),
            calls: Vec::new(),
        }
    }

    /// All cycles the trace accounts for.
    pub fn total_cycles(&self) -> u64 {
        self.rows.iter().map(|r| r.cycles).sum()
    }
}

/// The first line of `<name>.methods.csv`.
pub const HEADER: &str = "method,calls,exclusive_cycles,share_pct,bytecodes,cache_loads";

/// Writes `<prefix>.methods.csv` (one row per method, largest first) and
/// `<prefix>.calls.txt` (one line per call `> method` and return `<`,
/// indented by depth), each to a temporary name and renamed.
pub fn write_trace(trace: &MethodTrace, prefix: &Path) -> io::Result<()> {
    let total = trace.total_cycles();
    let mut rows: Vec<&MethodRow> = trace.rows.iter().filter(|r| r.calls > 0 || r.cycles > 0).collect();
    rows.sort_by(|a, b| b.cycles.cmp(&a.cycles).then_with(|| a.name.cmp(&b.name)));
    let mut csv = format!("{HEADER}\n");
    let opt = |v: Option<u64>| v.map(|v| v.to_string()).unwrap_or_default();
    for r in rows {
        let share = if total > 0 {
            100.0 * r.cycles as f64 / total as f64
        } else {
            0.0
        };
        csv.push_str(&format!(
            "\"{}\",{},{},{share:.3},{},{}\n",
            r.name.replace('"', "\"\""),
            r.calls,
            r.cycles,
            opt(r.bytecodes),
            opt(r.cache_loads)
        ));
    }
    let mut calls = String::new();
    let mut depth = 0usize;
    for (enter, m) in &trace.calls {
        if *enter {
            calls.push_str(&format!("{}> {}\n", "  ".repeat(depth), trace.rows[*m].name));
            depth += 1;
        } else {
            depth = depth.saturating_sub(1);
            calls.push_str(&format!("{}<\n", "  ".repeat(depth)));
        }
    }
    let write = |ext: &str, text: &str| {
        let path = prefix.with_extension(ext);
        let tmp = prefix.with_extension(format!("{ext}.partial"));
        std::fs::write(&tmp, text)?;
        std::fs::rename(&tmp, path)
    };
    write("methods.csv", &csv)?;
    write("calls.txt", &calls)
}
