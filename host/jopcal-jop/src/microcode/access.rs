//! How JOP's memory interface times the memory accesses the microcode
//! starts, read from data (`calibration/jop-microcode.toml`): per starting
//! instruction, the access's cycles in `r`, `w` (and `b` for the method
//! cache's load) and how many of the instructions up to the microcode's second
//! `wait` after it are part of the access rather than hiding it.

use super::formula::Linear;
use super::MicrocodeError;
use jopcal_timing::expr::Expr;
use serde::Deserialize;
use std::collections::BTreeMap;
use std::path::Path;

/// Where an access's address comes from, for telling I/O from memory.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum AddressFrom {
    /// The instruction pops it (`stmra`).
    Read,
    /// The last `stmwa` set it (`stmwd`).
    Write,
    /// The access is to memory the hardware addresses itself.
    #[default]
    Other,
}

/// Why the memory interface raises an exception instead of completing an
/// access (`mem_sc.vhd`'s `npexc`, `abexc`): each takes its own states.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Raise {
    /// A null reference.
    Null,
    /// A negative array index (found before the length is read).
    IndexNegative,
    /// An array index past the end (found after the length is read).
    IndexHigh,
}

/// What the memory interface meets on a bytecode's access that the
/// access's normal cycles do not cover.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AccessCase {
    /// It raises an exception instead of completing the access.
    Raises(Raise),
    /// The object is a hardware object (`JVMHelp.makeHWObject`): its
    /// handle points at an I/O device, whose registers are its fields, and
    /// the field is read there (`mem_sc.vhd`'s `was_a_hwo`), not in the
    /// memory.
    HardwareObject,
}

/// An access's cycles when it raises, per reason, where that is known.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct RaisedCycles {
    pub null: Option<Linear>,
    pub negative: Option<Linear>,
    pub high: Option<Linear>,
    /// The least `r` at which an index past the end takes `high`: below
    /// it the access completes as a normal one (none: at every `r`).
    pub high_from_r: Option<f64>,
}

impl RaisedCycles {
    /// The cycles when the access raises `why` with read wait states `r`.
    pub fn get(&self, why: Raise, r: f64) -> Option<Linear> {
        match why {
            Raise::Null => self.null,
            Raise::IndexNegative => self.negative,
            Raise::IndexHigh => self.high.filter(|_| self.high_from_r.is_none_or(|least| r >= least)),
        }
    }
}

// One per microinstruction that starts an access, read once: its size
// does not matter.
#[allow(clippy::large_enum_variant)]
#[derive(Debug, Clone, PartialEq)]
pub enum AccessKind {
    Timed {
        cycles: Linear,
        overlap: i64,
        address: AddressFrom,
        /// The access's cycles when the word the instruction pops is
        /// negative (the copy unit's stop bit), where that differs.
        negative: Option<Linear>,
        /// Its cycles when the memory interface raises an exception.
        raised: RaisedCycles,
        /// Its cycles on a hardware object, where that differs.
        hardware_object: Option<Linear>,
    },
    /// An access whose timing is not known: paths through it are not derived.
    Unsupported(String),
}

/// The access timing of a memory interface.
#[derive(Debug, Clone, PartialEq)]
pub struct AccessTiming {
    pub kinds: BTreeMap<String, AccessKind>,
    /// An access to an I/O device (a negative address).
    pub io_cycles: Linear,
    pub io_overlap: i64,
    /// Cycles from the fetch of the bytecode that reads (writes) an I/O
    /// device with its first microinstruction (`Native.rd`, `Native.wr`) to
    /// the cycle in which the device sees the access.
    pub io_read_at: u64,
    pub io_write_at: u64,
    /// The constant naming the exception register: a path that writes it
    /// raises an exception and is not the bytecode's normal path.
    pub exception_register: String,
    /// The wait states `r` and `w` each memory controller (by its file's
    /// name) gives for the top's `ram_cnt`.
    pub controllers: BTreeMap<String, WaitStates>,
    /// The operand stack's depth at a bytecode's start minus the processor's
    /// stack pointer there (the words the pointer does not count).
    pub stack_offset: i32,
}

/// A memory controller's wait states as formulas in the top's `ram_cnt`.
#[derive(Debug, Clone, PartialEq)]
pub struct WaitStates {
    pub r: Expr,
    pub w: Expr,
}

impl WaitStates {
    /// `(r, w)` for `ram_cnt`.
    pub fn at(&self, ram_cnt: u32) -> (f64, f64) {
        let v = |e: &Expr| e.eval(&|_| f64::from(ram_cnt));
        (v(&self.r), v(&self.w))
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawFile {
    io: RawIo,
    access: BTreeMap<String, RawAccess>,
    #[serde(default)]
    controllers: BTreeMap<String, RawController>,
    #[serde(default)]
    stack: RawStack,
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct RawStack {
    #[serde(default)]
    offset: i32,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawController {
    r: String,
    w: String,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawIo {
    cycles: String,
    overlap: i64,
    exception_register: String,
    #[serde(default)]
    read_at: u64,
    #[serde(default)]
    write_at: u64,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawAccess {
    cycles: Option<String>,
    overlap: Option<i64>,
    #[serde(default)]
    address: AddressFrom,
    negative: Option<String>,
    unsupported: Option<String>,
    /// The cycles when the access raises (see [`Raise`]).
    raises_null: Option<String>,
    raises_negative_index: Option<String>,
    raises_high_index: Option<String>,
    raises_high_index_from_r: Option<f64>,
    /// The cycles on a hardware object (see [`AccessCase::HardwareObject`]).
    hardware_object: Option<String>,
}

impl AccessTiming {
    pub fn load(path: &Path) -> Result<AccessTiming, MicrocodeError> {
        let text = std::fs::read_to_string(path).map_err(|e| MicrocodeError::Read {
            path: path.to_path_buf(),
            message: e.to_string(),
        })?;
        AccessTiming::parse(&text, path)
    }

    pub fn parse(text: &str, path: &Path) -> Result<AccessTiming, MicrocodeError> {
        let bad = |message: String| MicrocodeError::Timing {
            path: path.to_path_buf(),
            message,
        };
        let raw: RawFile = toml::from_str(text).map_err(|e| bad(e.message().to_string()))?;
        let io_cycles = linear(&raw.io.cycles).map_err(|m| bad(format!("[io] cycles: {m}")))?;
        let mut kinds = BTreeMap::new();
        for (name, a) in raw.access {
            if super::isa::lookup(&name).is_none() {
                return Err(bad(format!("[access] {name}: no such microinstruction")));
            }
            let negative = match &a.negative {
                Some(c) => Some(linear(c).map_err(|m| bad(format!("[access] {name}.negative: {m}")))?),
                None => None,
            };
            let optional = |key: &str, text: &Option<String>| -> Result<Option<Linear>, MicrocodeError> {
                text.as_deref()
                    .map(|t| linear(t).map_err(|m| bad(format!("[access] {name}.{key}: {m}"))))
                    .transpose()
            };
            let raised = RaisedCycles {
                null: optional("raises_null", &a.raises_null)?,
                negative: optional("raises_negative_index", &a.raises_negative_index)?,
                high: optional("raises_high_index", &a.raises_high_index)?,
                high_from_r: a.raises_high_index_from_r,
            };
            let hardware_object = optional("hardware_object", &a.hardware_object)?;
            let kind = match (a.unsupported, a.cycles, a.overlap) {
                (Some(why), None, None) if negative.is_none() => AccessKind::Unsupported(why),
                (None, Some(c), Some(overlap)) if overlap >= 0 => AccessKind::Timed {
                    cycles: linear(&c).map_err(|m| bad(format!("[access] {name}: {m}")))?,
                    overlap,
                    address: a.address,
                    negative,
                    raised,
                    hardware_object,
                },
                _ => {
                    return Err(bad(format!(
                        "[access] {name}: give cycles and overlap (0 or more), or unsupported"
                    )))
                }
            };
            kinds.insert(name, kind);
        }
        let mut controllers = BTreeMap::new();
        for (name, c) in raw.controllers {
            let formula = |what: &str, text: &str| -> Result<Expr, MicrocodeError> {
                let e = Expr::parse(text).map_err(|e| bad(format!("[controllers] {name}.{what}: '{text}': {e}")))?;
                if let Some(n) = e.names().into_iter().find(|n| *n != "ram_cnt") {
                    return Err(bad(format!(
                        "[controllers] {name}.{what}: unknown name '{n}' (only ram_cnt)"
                    )));
                }
                Ok(e)
            };
            let ws = WaitStates {
                r: formula("r", &c.r)?,
                w: formula("w", &c.w)?,
            };
            controllers.insert(name, ws);
        }
        Ok(AccessTiming {
            kinds,
            io_cycles,
            io_overlap: raw.io.overlap,
            io_read_at: raw.io.read_at,
            io_write_at: raw.io.write_at,
            exception_register: raw.io.exception_register,
            controllers,
            stack_offset: raw.stack.offset,
        })
    }
}

/// A formula in `r`, `w` and `b` as a linear form; refused when it is not linear.
fn linear(text: &str) -> Result<Linear, String> {
    let e = Expr::parse(text).map_err(|e| format!("'{text}': {e}"))?;
    for n in e.names() {
        if !matches!(n, "r" | "w" | "b") {
            return Err(format!("'{text}': unknown name '{n}' (only r, w and b)"));
        }
    }
    let at = |r: f64, w: f64, b: f64| {
        e.eval(&|n| match n {
            "r" => r,
            "w" => w,
            _ => b,
        })
    };
    let c = at(0.0, 0.0, 0.0);
    let l = Linear {
        c: c as i64,
        r: (at(1.0, 0.0, 0.0) - c) as i64,
        w: (at(0.0, 1.0, 0.0) - c) as i64,
        b: (at(0.0, 0.0, 1.0) - c) as i64,
    };
    for (r, w, b) in [(2.0, 3.0, 5.0), (7.0, 1.0, 40.0), (0.5, 0.0, 0.0)] {
        if (l.eval(r, w, b) - at(r, w, b)).abs() > 1e-9 {
            return Err(format!("'{text}' is not a whole-cycle linear formula in r, w and b"));
        }
    }
    Ok(l)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_linear_formulas_and_refuses_others() {
        assert_eq!(linear("4 + 2 * r + w").unwrap(), Linear { c: 4, r: 2, w: 1, b: 0 });
        assert_eq!(
            linear("b").unwrap(),
            Linear {
                b: 1,
                ..Linear::default()
            }
        );
        assert!(linear("max(0, r - 3)")
            .unwrap_err()
            .contains("not a whole-cycle linear"));
        assert!(linear("n + 1").unwrap_err().contains("unknown name 'n'"));
    }

    #[test]
    fn controllers_give_wait_states_from_ram_cnt() {
        let text = "[io]\ncycles = \"1\"\noverlap = 2\nexception_register = \"io_exc\"\n[access]\n[controllers]\nsc_x = { r = \"max(1, ram_cnt - 1)\", w = \"ram_cnt\" }\n";
        let t = AccessTiming::parse(text, Path::new("t.toml")).unwrap();
        assert_eq!(t.controllers["sc_x"].at(2), (1.0, 2.0));
        assert_eq!(t.controllers["sc_x"].at(4), (3.0, 4.0));
        let bad = text.replace("w = \"ram_cnt\"", "w = \"clk\"");
        assert!(AccessTiming::parse(&bad, Path::new("t.toml"))
            .unwrap_err()
            .to_string()
            .contains("sc_x.w: unknown name 'clk'"));
    }

    #[test]
    fn a_bad_entry_is_named() {
        let text = "[io]\ncycles = \"0\"\noverlap = 2\nexception_register = \"io_exc\"\n[access]\nstmra = { cycles = \"r\" }\n";
        let e = AccessTiming::parse(text, Path::new("t.toml")).unwrap_err().to_string();
        assert_eq!(
            e,
            "t.toml: [access] stmra: give cycles and overlap (0 or more), or unsupported"
        );
    }
}
