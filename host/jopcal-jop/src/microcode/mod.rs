//! A timing table derived from the tree's microcode (`asm/src/jvm.asm`), so
//! that a changed microcode changes the table: [`source`] reads the microcode
//! as the tree's build preprocesses it, [`paths`] walks every path from each
//! bytecode's entry to its `nxt` and times it (one cycle per
//! microinstruction, memory accesses by [`access`], the memory interface's
//! timing read from data), [`formula`] writes the cycles as the timing
//! model's formulas in `r`, `w` and `b`, and [`table`] makes a timing model
//! of them that derives from a base model and says where the two differ.

pub mod access;
pub mod exec;
pub mod formula;
pub mod isa;
pub mod paths;
pub mod ram;
pub mod source;
pub mod stackram;
pub mod table;
#[cfg(test)]
mod tests;

pub use access::AccessTiming;
pub use formula::{Formula, Linear};
pub use paths::{PathKey, Paths, SpRange, Untimed};
pub use source::{Location, Program};

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// The microcode's entry for bytecodes it does not implement: the jump
/// table sends them to the runtime's Java routine through it.
pub const NOT_IMPLEMENTED: &str = "sys_noim";

/// A microcode file that cannot be read or timed, in one line naming the file
/// (and line).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum MicrocodeError {
    #[error("{}: {message}", path.display())]
    Read { path: PathBuf, message: String },
    #[error("{at}: {message}")]
    Syntax { at: Location, message: String },
    #[error("{}: {message}", path.display())]
    Timing { path: PathBuf, message: String },
}

impl MicrocodeError {
    pub(crate) fn syntax(at: &Location, message: impl Into<String>) -> MicrocodeError {
        MicrocodeError::Syntax {
            at: at.clone(),
            message: message.into(),
        }
    }
}

/// One bytecode's microcode: where it starts and its paths.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    pub at: Location,
    pub paths: Paths,
}

impl Entry {
    /// The entry's cycles as a model formula (the worst path where there are several).
    pub fn formula(&self) -> String {
        formula::worst_case(&self.paths.normal)
    }

    /// Whether it loads bytecode into the method cache: an invoke, a return,
    /// or a bytecode the microcode hands to a Java routine.
    pub fn loads_bytecode(&self) -> bool {
        self.paths.normal.iter().any(Formula::loads_bytecode)
    }

    /// The cheapest and dearest path at the given wait states and cache load.
    pub fn range(&self, r: f64, w: f64, b: f64) -> (f64, f64) {
        let values = self.paths.normal.iter().map(|f| f.eval(r, w, b));
        let lo = values.clone().fold(f64::INFINITY, f64::min);
        let hi = values.fold(f64::NEG_INFINITY, f64::max);
        (lo, hi)
    }
}

/// The microcode's timing of each named entry it has a label for: `Ok` with
/// its paths, or `Err` saying why it cannot be timed (a loop on the
/// bytecode's data, an access of unknown timing).
#[derive(Debug, Clone)]
pub struct Derivation {
    pub source: PathBuf,
    pub entries: BTreeMap<String, Result<Entry, Untimed>>,
}

impl Derivation {
    /// Times the entries called `names` in `program` (read from `source`).
    pub fn new<'a>(
        source: &Path,
        program: &Program,
        timing: &AccessTiming,
        names: impl IntoIterator<Item = &'a str>,
    ) -> Derivation {
        let mut entries = BTreeMap::new();
        for name in names {
            if let Some(&start) = program.labels.get(name) {
                let entry = paths::walk(program, timing, start).map(|paths| Entry {
                    at: program.instructions[start].at.clone(),
                    paths,
                });
                entries.insert(name.to_string(), entry);
            }
        }
        Derivation {
            source: source.to_path_buf(),
            entries,
        }
    }

    /// The entry a bytecode runs: its own label's, else the not-implemented one.
    pub fn entry_for(&self, name: &str) -> Option<(&Result<Entry, Untimed>, bool)> {
        match self.entries.get(name) {
            Some(e) => Some((e, true)),
            None => self.entries.get(NOT_IMPLEMENTED).map(|e| (e, false)),
        }
    }
}
