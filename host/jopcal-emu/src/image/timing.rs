//! Every opcode's cycles for an image run, resolved once from a timing
//! model: JVM bytecodes from its `[opcodes]` (a bytecode JOP implements in
//! Java costs its dispatch; the routine's own bytecodes are charged as they
//! run), JOP's own bytecodes from its `[native]` table by name, and invokes
//! and returns by the method cache's load cost of the method they enter or
//! return to.

use crate::error::EmuError;
use crate::vm::link::integral;
use jopcal_classfile::opcode::{is_return, mnemonic};
use jopcal_timing::TimingModel;

/// The longest method JOP's method structure can describe, in words.
const MAX_METHOD_WORDS: usize = 1024;

pub use jopcal_timing::jop::{opcode_name as jop_opcode_name, INVOKESUPER};

/// Whether JOP (and the tree's simulator) runs bytecode `op` as a Java
/// routine through the runtime's jump table: floating point, `lmul`,
/// `ldiv`, `lrem`, most conversions, switches, `jsr`/`ret`, `athrow`,
/// `multianewarray`, `aastore`, the allocation and type checks, and every
/// opcode JOP does not implement.
pub fn runs_in_java(op: u8) -> bool {
    matches!(
        op,
        12 | 13 | 15
            | 83
            | 98 | 99 | 102 | 103 | 105..=107 | 109..=111 | 113..=115 | 118 | 119
            | 134 | 135 | 137..=145 | 147
            | 149..=152
            | 168..=171
            | 186..=189 | 191..=193
            | 196 | 197
            | 200..=203 | 205 | 208 | 225 | 227 | 235 | 237
            | 242..=255
    )
}

/// Whether `op` carries operand bytes in the code (a constant-pool index,
/// a local, a branch offset, ...), as the linked image has it: JVM opcodes
/// by their layout, JOP's own field accesses by the index they carry.
pub fn has_inline_operands(op: u8) -> bool {
    if op < 202 {
        !matches!(
            jopcal_classfile::opcode::layout(op),
            jopcal_classfile::opcode::Layout::None | jopcal_classfile::opcode::Layout::Invalid
        )
    } else {
        matches!(op, 224..=231)
    }
}

/// The name of any opcode in an image, for messages.
pub use jopcal_timing::jop::any_opcode_name as opcode_name;

/// Cycles of every opcode, resolved from a model.
#[derive(Debug, Clone)]
pub struct CycleTable {
    /// Cycles of each opcode when it starts (for invokes and returns: on a
    /// cache hit).
    pub fixed: [u32; 256],
    /// Per invoke opcode (182..=185, then invokesuper): cycles by
    /// `[hit as usize][words]` of the method invoked.
    invoke: Vec<[Vec<u32>; 2]>,
    /// Per return opcode (172..=177): cycles by `[hit][words]` of the method returned to.
    ret: Vec<[Vec<u32>; 2]>,
}

impl CycleTable {
    pub fn new(model: &TimingModel) -> Result<CycleTable, EmuError> {
        let b_hit = model.load_cost(true, 0);
        let mut fixed = [0u32; 256];
        for op in 0..=255u8 {
            if (182..=185).contains(&op) || is_return(op) || op == INVOKESUPER {
                continue;
            }
            let cycles = if runs_in_java(op) && !model.is_java(op) {
                // The model prices it as microcode (`wide`, `goto_w`), but
                // JOP sends it to its Java routine: the dispatch.
                native(model, 254, b_hit, 0)?
            } else if op < 202 && mnemonic(op).is_some() {
                // A bytecode JOP runs in Java costs its dispatch here.
                model.cost_parts(op, b_hit, 0).0
            } else {
                native(model, op, b_hit, 0)?
            };
            fixed[op as usize] = integral(cycles, opcode_name(op))?;
        }
        // The load cost by (hit, size), once for every opcode's row; each
        // formula closed once (its parameters put in), as every method
        // size evaluates it.
        let loads: [Vec<f64>; 2] = std::array::from_fn(|hit| {
            let load = model.load_cost_fn(hit == 1);
            (0..MAX_METHOD_WORDS as u32).map(load).collect()
        });
        let by_size = |cost: &dyn Fn(f64, u32) -> f64, what: &str| {
            let mut out: [Vec<u32>; 2] = [Vec::new(), Vec::new()];
            for (row, loads) in out.iter_mut().zip(&loads) {
                for (words, &b) in (0u32..).zip(loads) {
                    row.push(integral(cost(b, words), what)?);
                }
            }
            Ok::<_, EmuError>(out)
        };
        let mut invoke = Vec::new();
        for op in 182u8..=185 {
            invoke.push(by_size(&model.cost_at(op), opcode_name(op))?);
        }
        let Some(invokesuper) = model.native_cost_fn(jop_opcode_name(INVOKESUPER)) else {
            return Err(no_native(model, INVOKESUPER));
        };
        invoke.push(by_size(&invokesuper, "invokesuper")?);
        let mut ret = Vec::new();
        for op in 172u8..=177 {
            ret.push(by_size(&model.cost_at(op), opcode_name(op))?);
        }
        let mut table = CycleTable { fixed, invoke, ret };
        // Invokes and returns are charged their hit cost when they start and
        // what a miss adds when the cache has been looked up.
        for op in (182u8..=185).chain([INVOKESUPER]) {
            table.fixed[op as usize] = table.invoke(op, true, 0);
        }
        for op in 172u8..=177 {
            table.fixed[op as usize] = table.ret(op, true, 0);
        }
        Ok(table)
    }

    /// Cycles of invoke `op` (182..=185 or invokesuper) entering a method of `words` words.
    pub fn invoke(&self, op: u8, hit: bool, words: u32) -> u32 {
        let k = if op == INVOKESUPER { 4 } else { usize::from(op - 182) };
        self.invoke[k][usize::from(hit)][(words as usize).min(MAX_METHOD_WORDS - 1)]
    }

    /// Cycles of return `op` (172..=177) into a method of `words` words.
    pub fn ret(&self, op: u8, hit: bool, words: u32) -> u32 {
        self.ret[usize::from(op - 172)][usize::from(hit)][(words as usize).min(MAX_METHOD_WORDS - 1)]
    }
}

/// JOP opcode `op`'s cost from the model's `[native]` table.
fn native(model: &TimingModel, op: u8, b: f64, n: u32) -> Result<f64, EmuError> {
    model
        .native_cost_at(jop_opcode_name(op), b, n)
        .ok_or_else(|| no_native(model, op))
}

/// The error for a table without JOP opcode `op` in its `[native]` table.
fn no_native(model: &TimingModel, op: u8) -> EmuError {
    let name = jop_opcode_name(op);
    EmuError::Load(format!(
        "{}: the timing table has no cost for JOP's bytecode {name} (opcode {op}): add it to [native] (calibration/jop-devel.toml has them all)",
        model.path.display()
    ))
}
