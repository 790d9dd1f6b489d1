//! A timing model from a microcode [`Derivation`]: every bytecode the
//! microcode times gets its derived formula, in a model that derives from a
//! base model (which keeps its cache, parameters, Java routines and whatever
//! the microcode cannot time), and a comparison of the two, bytecode by
//! bytecode, at the base's wait states.

use super::{Derivation, Entry, Untimed};
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
    pub microcode: Result<String, Untimed>,
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
    let mut derived = derive_model(&derivation, base, base_path, header);
    let r = base.params().get("r").copied().unwrap_or(0.0);
    let w = base.params().get("w").copied().unwrap_or(0.0);
    derived.toml.push_str(&operand_section(&program, access, r, w));
    Ok(derived)
}

/// `[operands]` of the derived model: for each bytecode whose path its
/// operands decide and the host profile records
/// (`jopcal_profile::routed::OBSERVED`: a long shift's count, `lcmp`'s
/// class), the cycles the microcode takes with each recorded value, run
/// here ([`super::exec`]) on operands of that value, as ranges of equal
/// cycles. A bytecode whose cycles the wait states change, or that its
/// recorded value does not decide alone (two operands of one value taking
/// different paths), is left to its formula.
pub fn operand_section(program: &super::Program, access: &super::AccessTiming, r: f64, w: f64) -> String {
    let at = super::exec::Exec::new(program, access, r, w);
    let slower = super::exec::Exec::new(program, access, r + 1.0, w + 1.0);
    let mut out = String::new();
    let recorded = jopcal_profile::routed::OBSERVED
        .iter()
        .map(|o| (o.mnemonic, operand_samples(o)))
        .chain([("monitorexit", monitor_exit_samples(&at))]);
    for (mnemonic, samples) in recorded {
        let (Some(entry), Some(entry_slower)) = (at.entry(mnemonic), slower.entry(mnemonic)) else {
            continue;
        };
        let cycles_of = |stack: &[Option<i32>], vars: &[(super::exec::VarId, i32)]| -> Option<u32> {
            let here = at.run_known(entry, stack, vars).map(|(c, _)| c)?;
            let there = slower.run_known(entry_slower, stack, vars).map(|(c, _)| c)?;
            (here == there).then_some(here)
        };
        // Per value: the cycles all its samples agree on (None: they do not).
        let mut by_value: Vec<(u8, Option<u32>)> = Vec::new();
        for (value, stack, vars) in samples {
            let c = cycles_of(&stack, &vars);
            match by_value.iter_mut().find(|(v, _)| *v == value) {
                Some((_, seen)) => {
                    if *seen != c {
                        *seen = None;
                    }
                }
                None => by_value.push((value, c)),
            }
        }
        by_value.sort_by_key(|(v, _)| *v);
        let Some(cycles) = by_value
            .iter()
            .map(|(v, c)| c.map(|c| (*v, c)))
            .collect::<Option<Vec<(u8, u32)>>>()
        else {
            continue;
        };
        if cycles.iter().all(|(_, c)| *c == cycles[0].1) {
            continue;
        }
        let _ = writeln!(
            out,
            "[operands.{mnemonic}]   # the microcode's path by the operands' recorded value, run with each"
        );
        let mut start = 0usize;
        for k in 1..=cycles.len() {
            let run_ends = k == cycles.len() || cycles[k].1 != cycles[start].1 || cycles[k].0 != cycles[k - 1].0 + 1;
            if run_ends {
                let (first, last) = (cycles[start].0, cycles[k - 1].0);
                let key = if first == last {
                    first.to_string()
                } else {
                    format!("{first}-{last}")
                };
                let _ = writeln!(out, "\"{key}\" = \"{}\"", cycles[start].1);
                start = k;
            }
        }
        out.push('\n');
    }
    out
}

/// A run of the microcode: the value the profile records, the operand stack
/// (the top last; `None`: a word the path must not depend on) and the
/// microcode's variables known.
type Sample = (u8, Vec<Option<i32>>, Vec<(super::exec::VarId, i32)>);

/// `monitorexit` with the lock count it finds: 1 (it reaches 0: released),
/// 2 or 3 (nested); none where the microcode has no `lockcnt`.
fn monitor_exit_samples(exec: &super::exec::Exec) -> Vec<Sample> {
    use jopcal_profile::routed::{MONITOR_NESTED, MONITOR_RELEASED};
    let Some(count) = exec.var("lockcnt") else {
        return Vec::new();
    };
    [(MONITOR_RELEASED, 1), (MONITOR_NESTED, 2), (MONITOR_NESTED, 3)]
        .into_iter()
        .map(|(value, held)| (value, vec![None], vec![(count, held)]))
        .collect()
}

/// Runs for each value the profile records of `o`, with that value.
fn operand_samples(o: &jopcal_profile::routed::Observed) -> Vec<Sample> {
    use jopcal_profile::routed::{long_compare_class, Operand};
    match o.operand {
        // The count on top, the long below it unknown.
        Operand::Count { mask, .. } => (0..=mask)
            .map(|v| (v, vec![None, None, Some(i32::from(v))], Vec::new()))
            .collect(),
        // Pairs of longs across signs, magnitudes and word boundaries.
        Operand::LongCompare => {
            const LONGS: [i64; 14] = [
                0,
                1,
                2,
                7,
                0xffff_ffff,
                1 << 32,
                1 << 40,
                i64::MAX,
                -1,
                -2,
                -7,
                -(1 << 32),
                -(1 << 40),
                i64::MIN,
            ];
            let words = |x: i64| [Some((x >> 32) as i32), Some(x as i32)];
            LONGS
                .iter()
                .flat_map(|&a| LONGS.iter().map(move |&b| (a, b)))
                .map(|(a, b)| {
                    let [ah, al] = words(a);
                    let [bh, bl] = words(b);
                    (long_compare_class(a, b), vec![ah, al, bh, bl], Vec::new())
                })
                .collect()
        }
        // A Java routine's path (`aastore`'s write barrier), which its
        // micro-benchmarks time, not the microcode.
        Operand::OldElement => Vec::new(),
    }
}

/// The wait states and cache loads both tables are compared at.
struct At {
    r: f64,
    w: f64,
    b_hit: f64,
    b_miss: f64,
}

impl At {
    /// A row for bytecode `name`: the derived formula (or why there is none),
    /// its cycles and its range of paths.
    fn row(&self, name: &str, entry: &Result<Entry, Untimed>, base: Option<(f64, f64)>) -> Row {
        let mut row = Row {
            name: name.to_string(),
            microcode: entry.as_ref().map(Entry::formula).map_err(Clone::clone),
            derived: None,
            paths: None,
            base,
            note: None,
        };
        match entry {
            Ok(e) => {
                let (lo, hi) = e.range(self.r, self.w, self.b_hit);
                row.derived = Some((hi, e.range(self.r, self.w, self.b_miss).1));
                row.paths = (lo != hi).then_some((lo, hi));
            }
            Err(_) => row.note = Some("not derived; the base's entry is kept".into()),
        }
        row
    }
}

/// One entry of the derived model: a formula, or a Java routine's derived
/// dispatch with the base's routine parameter; commented with where the
/// microcode is.
fn entry_line(name: &str, e: &Entry, own_label: bool, routine: Option<&str>) -> String {
    let place = if own_label {
        e.at.to_string()
    } else {
        format!("{} (not implemented: {})", e.at, super::NOT_IMPLEMENTED)
    };
    let formula = e.formula();
    match routine {
        Some(routine) => format!("{name} = {{ java = \"{formula}\", routine = \"{routine}\" }}   # {place}\n"),
        None => format!("{name} = \"{formula}\"   # {place}\n"),
    }
}

/// Builds the model deriving from `base` (loaded from `base_path`).
pub fn derive_model(d: &Derivation, base: &TimingModel, base_path: &Path, header: &[String]) -> Derived {
    let at = At {
        r: base.params().get("r").copied().unwrap_or(0.0),
        w: base.params().get("w").copied().unwrap_or(0.0),
        b_hit: base.load_cost(true, MISS_WORDS),
        b_miss: base.load_cost(false, MISS_WORDS),
    };
    let mut opcodes = String::new();
    let mut native = String::new();
    let mut rows = Vec::new();

    for (op, name) in opcode::all() {
        let Some((entry, own_label)) = d.entry_for(name) else {
            continue;
        };
        // A Java routine's dispatch part, or the whole cost.
        let base_part = |b: f64| base.cost_parts(op, b, MISS_WORDS).0;
        let base_cost = base.opcode(op).map(|_| (base_part(at.b_hit), base_part(at.b_miss)));
        let mut row = at.row(name, entry, base_cost);
        let Ok(e) = entry else {
            rows.push(row);
            continue;
        };
        let invoke_or_return = (172..=177).contains(&op) || (182..=186).contains(&op);
        let routine = match base.opcode(op) {
            Some(Cost::Java { routine, .. }) => Some(routine.as_str()),
            _ => None,
        };
        if name == "iinc" && base.linker().replace_iinc {
            row.note = Some("the linker replaces it; the base's pricing of the replacement is kept".into());
            row.derived = None;
        } else if e.loads_bytecode() && !invoke_or_return {
            match routine {
                Some(routine) => {
                    opcodes.push_str(&entry_line(name, e, own_label, Some(routine)));
                    row.note = Some(format!("Java routine {routine}: the dispatch is derived"));
                }
                None => {
                    row.note = Some(
                        "the microcode hands it to a Java routine the base does not price; the base's entry is kept"
                            .into(),
                    );
                    row.derived = None;
                }
            }
        } else {
            opcodes.push_str(&entry_line(name, e, own_label, None));
            if routine.is_some() {
                row.note = Some("microcode here; the base ran it in Java".into());
                row.base = Some((
                    base.cost(op, at.b_hit, MISS_WORDS),
                    base.cost(op, at.b_miss, MISS_WORDS),
                ));
            }
        }
        rows.push(row);
    }

    for name in base.native_names() {
        let Some((entry, own_label)) = d.entry_for(name) else {
            continue;
        };
        let base_part = |b: f64| base.native_cost_at(name, b, MISS_WORDS).unwrap_or(0.0);
        let mut row = at.row(name, entry, Some((base_part(at.b_hit), base_part(at.b_miss))));
        if let Ok(e) = entry {
            let routine = base.native_routine(name);
            native.push_str(&entry_line(name, e, own_label, routine));
            if let Some(routine) = routine {
                row.note = Some(format!("Java routine {routine}: the dispatch is derived"));
            }
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
