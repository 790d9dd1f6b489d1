//! A timing model from a microcode [`Derivation`]: every bytecode the
//! microcode times gets its derived formula, in a model that derives from a
//! base model (which keeps its cache, parameters, Java routines and whatever
//! the microcode cannot time), and a comparison of the two, bytecode by
//! bytecode, at the base's wait states.

use super::{Derivation, Entry};
use jopcal_classfile::opcode;
use jopcal_timing::table::MISS_WORDS;
use jopcal_timing::{Cost, TimingModel};
use std::fmt::Write as _;
use std::path::Path;

/// One bytecode in both tables; cycles on a method-cache hit and on a miss
/// of a `MISS_WORDS`-word method (for the bytecodes that load one).
#[derive(Debug, Clone, PartialEq)]
pub struct Row {
    pub name: String,
    /// The derived formula, or why there is none.
    pub microcode: Result<String, String>,
    pub derived: Option<(f64, f64)>,
    /// Cheapest and dearest path on a hit, where they differ.
    pub paths: Option<(f64, f64)>,
    pub base: Option<(f64, f64)>,
    /// What the derived table does with it, where that is not plain.
    pub note: Option<String>,
}

impl Row {
    /// Whether the two tables give different cycles.
    pub fn differs(&self) -> bool {
        match (self.derived, self.base) {
            (Some(d), Some(b)) => (d.0 - b.0).abs() > 1e-9 || (d.1 - b.1).abs() > 1e-9,
            _ => false,
        }
    }
}

/// The derived model's text and the comparison rows.
pub struct Derived {
    pub toml: String,
    pub rows: Vec<Row>,
}

/// Reads the microcode at `source` (with `defines`), times it with `access`
/// and builds the model deriving from `base` (loaded from `base_path`): the
/// whole of `jopcal table --microcode`, shared with `validate --microcode`.
pub fn from_source(
    source: &Path,
    defines: &[String],
    access: &super::AccessTiming,
    base: &TimingModel,
    base_path: &Path,
    header: &[String],
) -> Result<Derived, super::MicrocodeError> {
    let program = super::Program::read(source, defines)?;
    let natives: Vec<String> = base.native_names().map(str::to_string).collect();
    let names = opcode::all()
        .map(|(_, n)| n)
        .chain(natives.iter().map(String::as_str))
        .chain([super::NOT_IMPLEMENTED]);
    let derivation = Derivation::new(source, &program, access, names);
    Ok(derive_model(&derivation, base, base_path, header))
}

/// Builds the model deriving from `base` (loaded from `base_path`).
pub fn derive_model(d: &Derivation, base: &TimingModel, base_path: &Path, header: &[String]) -> Derived {
    let r = base.params().get("r").copied().unwrap_or(0.0);
    let w = base.params().get("w").copied().unwrap_or(0.0);
    let b_hit = base.load_cost(true, MISS_WORDS);
    let b_miss = base.load_cost(false, MISS_WORDS);
    let mut opcodes = String::new();
    let mut native = String::new();
    let mut rows = Vec::new();

    for (op, name) in opcode::all() {
        if !(0..=201).contains(&op) {
            continue;
        }
        let base_cost = match base.opcode(op) {
            Some(Cost::Java { .. }) => {
                let (fixed_hit, _) = base.cost_parts(op, b_hit, MISS_WORDS);
                let (fixed_miss, _) = base.cost_parts(op, b_miss, MISS_WORDS);
                Some((fixed_hit, fixed_miss))
            }
            Some(Cost::Formula(_)) => Some((base.cost(op, b_hit, MISS_WORDS), base.cost(op, b_miss, MISS_WORDS))),
            None => None,
        };
        let Some((entry, own_label)) = d.entry_for(name) else {
            continue;
        };
        let mut row = Row {
            name: name.to_string(),
            microcode: entry.as_ref().map(Entry::formula).map_err(Clone::clone),
            derived: None,
            paths: None,
            base: base_cost,
            note: None,
        };
        let Ok(e) = entry else {
            row.note = Some("not derived; the base's entry is kept".into());
            rows.push(row);
            continue;
        };
        let formula = e.formula();
        row.derived = Some((e.range(r, w, b_hit).1, e.range(r, w, b_miss).1));
        let (lo, hi) = e.range(r, w, b_hit);
        if lo != hi {
            row.paths = Some((lo, hi));
        }
        let invoke_or_return = (172..=177).contains(&op) || (182..=186).contains(&op);
        let in_java = e.loads_bytecode() && !invoke_or_return;
        let place = if own_label {
            e.at.to_string()
        } else {
            format!("{} (not implemented: {})", e.at, super::NOT_IMPLEMENTED)
        };
        if name == "iinc" && base.linker().replace_iinc {
            row.note = Some("the linker replaces it; the base's pricing of the replacement is kept".into());
            row.derived = None;
        } else if in_java {
            match base.opcode(op) {
                Some(Cost::Java { routine, .. }) => {
                    let _ = writeln!(
                        opcodes,
                        "{name} = {{ java = \"{formula}\", routine = \"{routine}\" }}   # {place}"
                    );
                    row.note = Some(format!("Java routine {routine}: the dispatch is derived"));
                }
                _ => {
                    row.note = Some(
                        "the microcode hands it to a Java routine the base does not price; the base's entry is kept"
                            .into(),
                    );
                    row.derived = None;
                }
            }
        } else {
            let _ = writeln!(opcodes, "{name} = \"{formula}\"   # {place}");
            if matches!(base.opcode(op), Some(Cost::Java { .. })) {
                row.note = Some("microcode here; the base ran it in Java".into());
                row.base = base_cost.map(|_| (base.cost(op, b_hit, MISS_WORDS), base.cost(op, b_miss, MISS_WORDS)));
            }
        }
        rows.push(row);
    }

    for name in base.native_names() {
        let Some((entry, own_label)) = d.entry_for(name) else {
            continue;
        };
        let c = base.native_cost_at(name, b_hit, MISS_WORDS).unwrap_or(0.0);
        let cm = base.native_cost_at(name, b_miss, MISS_WORDS).unwrap_or(0.0);
        let mut row = Row {
            name: name.to_string(),
            microcode: entry.as_ref().map(Entry::formula).map_err(Clone::clone),
            derived: None,
            paths: None,
            base: Some((c, cm)),
            note: None,
        };
        match entry {
            Ok(e) => {
                let formula = e.formula();
                row.derived = Some((e.range(r, w, b_hit).1, e.range(r, w, b_miss).1));
                let (lo, hi) = e.range(r, w, b_hit);
                if lo != hi {
                    row.paths = Some((lo, hi));
                }
                let place = if own_label {
                    e.at.to_string()
                } else {
                    format!("{} (not implemented: {})", e.at, super::NOT_IMPLEMENTED)
                };
                match base.native_routine(name) {
                    Some(routine) => {
                        let _ = writeln!(
                            native,
                            "{name} = {{ java = \"{formula}\", routine = \"{routine}\" }}   # {place}"
                        );
                        row.note = Some(format!("Java routine {routine}: the dispatch is derived"));
                    }
                    None => {
                        let _ = writeln!(native, "{name} = \"{formula}\"   # {place}");
                    }
                }
            }
            Err(_) => row.note = Some("not derived; the base's entry is kept".into()),
        }
        rows.push(row);
    }

    let mut toml = String::new();
    for line in header {
        let _ = writeln!(toml, "# {line}");
    }
    let base_name = base.name.as_str();
    let _ = writeln!(toml, "\n[model]");
    let _ = writeln!(toml, "name = {}", quote(&format!("{base_name}+microcode")));
    let _ = writeln!(
        toml,
        "description = {}",
        quote(&format!(
            "{base_name} with each bytecode's cycles derived from {}",
            d.source.display()
        ))
    );
    let _ = writeln!(toml, "base = {}", quote(&base_path.display().to_string()));
    let _ = writeln!(toml, "\n[opcodes]\n{opcodes}");
    if !native.is_empty() {
        let _ = writeln!(toml, "[native]\n{native}");
    }
    Derived { toml, rows }
}

/// A TOML basic string.
fn quote(s: &str) -> String {
    let mut out = String::from("\"");
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            c if c.is_control() => {
                let _ = write!(out, "\\u{:04x}", c as u32);
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}
