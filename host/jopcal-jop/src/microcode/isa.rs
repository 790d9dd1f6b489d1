//! JOP's microinstruction set as the path analysis needs it: each
//! instruction's effect on the stack (every microinstruction pops one word,
//! pushes one word, or leaves the depth alone; a binary operation is a pop
//! that combines the two top words), its operand and its control flow. Facts
//! from JOP's documentation of its microcode; the memory timing of the
//! instructions that start memory accesses is data
//! (`calibration/jop-microcode.toml`), not here.

/// What an instruction's operand is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Operand {
    None,
    /// A constant or literal (`ldi`).
    Value,
    /// A variable of the on-chip memory (`ldm`, `stm`).
    Variable,
    /// A microcode label (`bz`, `bnz`, `jmp`).
    Label,
}

/// The instruction's effect on the stack and the values on it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stack {
    /// Leaves the stack alone.
    Keep,
    /// Pushes a value the analysis cannot know (a load).
    PushUnknown,
    /// Pushes its operand's value (`ldi`).
    PushValue,
    /// Pushes a copy of the top (`dup`).
    Dup,
    /// Pops the top (a store, a memory access start, a branch's condition).
    Pop,
    /// Pops two and pushes the result (`add`, `and`, ...).
    Binary(BinaryOp),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BinaryOp {
    Add,
    Sub,
    And,
    Or,
    Xor,
    /// Shifts: their result is not tracked.
    Shift,
}

impl BinaryOp {
    /// `nos op tos`, or `None` where the analysis does not follow the value.
    pub fn apply(self, nos: i64, tos: i64) -> Option<i64> {
        let (a, b) = (nos as i32, tos as i32);
        Some(i64::from(match self {
            BinaryOp::Add => a.wrapping_add(b),
            BinaryOp::Sub => a.wrapping_sub(b),
            BinaryOp::And => a & b,
            BinaryOp::Or => a | b,
            BinaryOp::Xor => a ^ b,
            BinaryOp::Shift => return None,
        }))
    }
}

/// Control flow: branches and the jump take effect after two delay slots.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Flow {
    Next,
    /// Taken when the popped condition is zero.
    BranchZero,
    /// Taken when the popped condition is not zero.
    BranchNotZero,
    Jump,
}

/// The instructions executed after a branch or jump before it takes effect.
pub const DELAY_SLOTS: usize = 2;

#[derive(Debug, Clone, Copy)]
pub struct Info {
    pub operand: Operand,
    pub stack: Stack,
    pub flow: Flow,
}

/// The instruction called `mnemonic`, if JOP has one.
pub fn lookup(mnemonic: &str) -> Option<Info> {
    use Stack::*;
    let info = |operand, stack, flow| Some(Info { operand, stack, flow });
    let plain = |stack| info(Operand::None, stack, Flow::Next);
    match mnemonic {
        "pop" | "st0" | "st1" | "st2" | "st3" | "st" | "stmi" | "stvp" | "stjpc" | "star" | "stsp" | "stmul"
        | "stmwa" | "stmra" | "stmwd" | "stald" | "stast" | "stgf" | "stpf" | "stcp" | "stbcrd" | "stidx" | "stps"
        | "stmrac" | "stmraf" | "stmwdf" | "stpfr" | "stpsr" | "stastr" => plain(Pop),
        "and" => plain(Binary(BinaryOp::And)),
        "or" => plain(Binary(BinaryOp::Or)),
        "xor" => plain(Binary(BinaryOp::Xor)),
        "add" => plain(Binary(BinaryOp::Add)),
        "sub" => plain(Binary(BinaryOp::Sub)),
        "ushr" | "shl" | "shr" => plain(Binary(BinaryOp::Shift)),
        "stm" => info(Operand::Variable, Pop, Flow::Next),
        "ldm" => info(Operand::Variable, PushUnknown, Flow::Next),
        "ldi" => info(Operand::Value, PushValue, Flow::Next),
        "ldmrd" | "ldmul" | "ldbcstart" | "ld0" | "ld1" | "ld2" | "ld3" | "ld" | "ldmi" | "ldsp" | "ldvp" | "ldjpc"
        | "ld_opd_8u" | "ld_opd_8s" | "ld_opd_16u" | "ld_opd_16s" => plain(PushUnknown),
        "dup" => plain(Dup),
        "nop" | "wait" | "jbr" | "stgs" | "cinval" | "atmstart" | "atmend" => plain(Keep),
        "bz" => info(Operand::Label, Pop, Flow::BranchZero),
        "bnz" => info(Operand::Label, Pop, Flow::BranchNotZero),
        "jmp" => info(Operand::Label, Keep, Flow::Jump),
        _ => None,
    }
}
