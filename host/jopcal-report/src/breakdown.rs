//! `estimates.json`: the breakdown of every estimate (per opcode, per calling
//! context) beside `estimates.csv`, and the timing model that priced them.
//! [`EstimatesFile`] is the one type `estimate`/`validate` write and
//! `explain` reads. Fields are in alphabetical order: the order the file has
//! always had.

use jopcal_profile::Profile;
use jopcal_timing::estimate::Estimate;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::Path;

/// The whole file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EstimatesFile {
    /// One breakdown per estimate, in the order of `estimates.csv`.
    pub estimates: Vec<Breakdown>,
    /// The timing model's name.
    pub model: String,
    /// The model file, as the run named it.
    pub model_file: String,
    /// The model's parameters as it priced the estimates.
    pub params: BTreeMap<String, f64>,
}

/// One estimate taken apart, largest parts first.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Breakdown {
    /// The benchmark.
    pub benchmark: String,
    /// `hit`, `miss` or `fifo:<bytes>:<blocks>`.
    pub cache_mode: String,
    /// Estimated cycles.
    pub cycles: f64,
    /// Of `cycles`: invokes and returns.
    pub invoke_return_cycles: f64,
    /// Of `cycles`: dispatching bytecodes JOP implements in Java.
    pub java_dispatch_cycles: f64,
    /// Of `cycles`: those routines' own cost.
    pub java_routine_cycles: f64,
    /// Bytecodes the JVM entered itself (not through an invoke).
    pub jvm_entered_bytecodes: u64,
    /// Cycles per calling context (`Main.main > A.run@33 > ...`).
    pub per_context: Vec<ContextCycles>,
    /// Count and cycles per opcode.
    pub per_opcode: Vec<OpcodeCycles>,
}

/// One calling context's cycles.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ContextCycles {
    /// The call path, outermost first, each call with its bytecode index.
    pub context: String,
    /// Its own cycles.
    pub cycles: f64,
}

/// One opcode's executions and cycles.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct OpcodeCycles {
    /// Executions.
    pub count: u64,
    /// Cycles.
    pub cycles: f64,
    /// The mnemonic.
    pub opcode: String,
}

impl Breakdown {
    /// The breakdown of `e`, an estimate of profile `p`.
    pub fn of(e: &Estimate, p: &Profile) -> Breakdown {
        let mut ops: Vec<(&String, &(u64, f64))> = e.per_opcode.iter().collect();
        ops.sort_by(|a, b| b.1 .1.total_cmp(&a.1 .1));
        let mut nodes: Vec<(usize, f64)> = e
            .per_node
            .iter()
            .copied()
            .enumerate()
            .filter(|(_, c)| *c > 0.0)
            .collect();
        nodes.sort_by(|a, b| b.1.total_cmp(&a.1));
        Breakdown {
            benchmark: e.benchmark.clone(),
            cache_mode: e.cache.to_string(),
            cycles: e.cycles,
            invoke_return_cycles: e.invoke_return_cycles,
            java_dispatch_cycles: e.java_dispatch_cycles,
            java_routine_cycles: e.java_routine_cycles,
            jvm_entered_bytecodes: e.jvm_entered_bytecodes,
            per_context: nodes
                .iter()
                .map(|&(i, cycles)| ContextCycles {
                    context: context_path(p, i),
                    cycles,
                })
                .collect(),
            per_opcode: ops
                .iter()
                .map(|(k, (n, c))| OpcodeCycles {
                    count: *n,
                    cycles: *c,
                    opcode: k.to_string(),
                })
                .collect(),
        }
    }
}

/// Node `i`'s call path, outermost first: `Class.method@callsite` with the
/// class's simple name.
fn context_path(p: &Profile, mut i: usize) -> String {
    let mut parts = Vec::new();
    loop {
        let n = &p.nodes[i];
        let m = &p.methods[n.method as usize];
        let class = m.class.rsplit('/').next().unwrap_or(&m.class);
        parts.push(if n.callsite >= 0 {
            format!("{class}.{}@{}", m.name, n.callsite)
        } else {
            format!("{class}.{}", m.name)
        });
        match n.parent {
            Some(q) => i = q as usize,
            None => break,
        }
    }
    parts.reverse();
    parts.join(" > ")
}

impl EstimatesFile {
    /// The file's text: pretty JSON, one trailing newline.
    pub fn to_json(&self) -> String {
        serde_json::to_string_pretty(self).expect("plain data serializes") + "\n"
    }

    /// Reads `path`; the error names the file, line and column.
    pub fn read(path: &Path) -> Result<EstimatesFile, BreakdownError> {
        let text = std::fs::read_to_string(path).map_err(|source| BreakdownError::Io {
            path: path.to_path_buf(),
            source,
        })?;
        serde_json::from_str(&text).map_err(|e| BreakdownError::Parse {
            path: path.to_path_buf(),
            line: e.line(),
            column: e.column(),
            message: e.to_string(),
        })
    }
}

/// Why `estimates.json` could not be read.
#[derive(Debug, thiserror::Error)]
pub enum BreakdownError {
    /// The file could not be read.
    #[error("{}: {source}", path.display())]
    Io {
        /// The file.
        path: std::path::PathBuf,
        /// What the system said.
        source: std::io::Error,
    },
    /// Not an `estimates.json`.
    #[error("{}:{line}:{column}: {message}", path.display())]
    Parse {
        /// The file.
        path: std::path::PathBuf,
        /// 1-based line.
        line: usize,
        /// 1-based column.
        column: usize,
        /// serde_json's complaint.
        message: String,
    },
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_breakdown_names_each_context_by_its_call_path_and_round_trips() {
        let method = |class: &str, name: &str| jopcal_profile::MethodInfo {
            class: class.into(),
            name: name.into(),
            descriptor: "()V".into(),
            bytecode_len: 4,
            native: false,
            synchronized: false,
        };
        let p = Profile {
            benchmark: "B".into(),
            methods: vec![method("a/Main", "main"), method("a/b/Work", "run")],
            nodes: vec![
                jopcal_profile::Node {
                    method: 0,
                    callsite: -1,
                    ..Default::default()
                },
                jopcal_profile::Node {
                    parent: Some(0),
                    method: 1,
                    callsite: 7,
                    ..Default::default()
                },
            ],
            ..Default::default()
        };
        assert_eq!(context_path(&p, 1), "Main.main > Work.run@7");
        let file = EstimatesFile {
            estimates: vec![Breakdown {
                benchmark: "B".into(),
                cache_mode: "hit".into(),
                cycles: 12.5,
                invoke_return_cycles: 3.0,
                java_dispatch_cycles: 0.0,
                java_routine_cycles: 0.0,
                jvm_entered_bytecodes: 2,
                per_context: vec![ContextCycles {
                    context: context_path(&p, 1),
                    cycles: 9.0,
                }],
                per_opcode: vec![OpcodeCycles {
                    count: 4,
                    cycles: 12.5,
                    opcode: "iadd".into(),
                }],
            }],
            model: "m".into(),
            model_file: "m.toml".into(),
            params: BTreeMap::from([("r".to_string(), 1.0)]),
        };
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("estimates.json");
        std::fs::write(&path, file.to_json()).unwrap();
        assert_eq!(EstimatesFile::read(&path).unwrap(), file);
        std::fs::write(&path, "{\n  \"model\": 3\n}").unwrap();
        let e = EstimatesFile::read(&path).unwrap_err().to_string();
        assert!(e.contains("estimates.json:2:"), "{e}");
    }
}
