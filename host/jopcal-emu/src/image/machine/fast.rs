//! The fast path: the common bytecodes (constants, locals, integer
//! arithmetic, long shifts, branches, fields, statics and array elements)
//! run in one loop with the machine's registers in locals, until a bytecode
//! needs anything else. Each code address is decoded once, on its first fetch, into a
//! [`Decoded`]: the operation (`iload_2` is a load of local 2), its
//! operands, its cycles and how it keeps the stack memory; the loop then
//! dispatches once per bytecode on that. (The board fetches from the image
//! as loaded, never from what the program writes, so a decoded address
//! stays right.) Every bytecode it runs does what its handler
//! ([`Machine::execute`]) does on its usual way, with the processor's stack
//! memory kept as its step says; a bytecode off that way (an invoke or
//! return, I/O, a null reference or an index out of bounds, a hardware
//! object, the stack near its ends or its overflow mark, a `stidx` still
//! marked, an opcode whose stack memory is not a plain copy, a long shift
//! by a count whose microcode path the handler has not met) is left,
//! before it changes anything, to its handler. A traced run never enters it
//! (its attention check stops at every bytecode), so a traced and an
//! untraced run compare the two ways.

use super::stackmem::{PlanWords, Registers};
use super::*;
use crate::config::{FixedValue, NearValue, StackStep, Step};
use crate::vm::ops::IntOp;
use jopcal_jop::microcode::stackram::Register;

/// What the fast path may do with an opcode: nothing (its handler runs
/// it), or run it and keep the stack memory as the processor does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct FastStep {
    keep: Keep,
    /// The words `S + lo ..= S + hi` (`S` the stack's top when it starts)
    /// the memory keeps at their values then, for [`Keep::Words`] and
    /// [`Keep::Plan`].
    lo: i8,
    hi: i8,
    /// The other writes of a [`Keep::Plan`]'s plan (the first `others_len`).
    others: [(i8, FixedValue); PLAN_WRITES],
    others_len: u8,
    /// A [`Keep::Plan`]'s one other write where its value is read cheaply
    /// (the common plans: the long loads, stores and arithmetic), kept
    /// without the general case's reading.
    quick: Option<QuickWrite>,
}

/// A plan's one other write, where its value is read cheaply.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum QuickWrite {
    /// At `S + k`: a constant.
    Constant(i8, i32),
    /// At `S + k`: a register's value.
    Register(i8, Register),
    /// At `S + k`: the memory's word at local `n` (`vp + n`).
    Local(i8, i32),
}

/// The most other writes a plan the fast path keeps may make (the
/// processors met make one or two).
const PLAN_WRITES: usize = 2;

/// How the fast path keeps the stack memory for an opcode (in the order
/// of the work it takes).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Keep {
    /// It does not run the opcode: its handler does.
    Handler,
    /// Nothing to keep (or no stack memory: JopSim's timing).
    Nothing,
    /// In a [`Decoded`] only: the words it pops from the memory (from
    /// `S + net - 1` to `S - 2`, none where it pushes), as a plain pop keeps
    /// them: copied by its arm, whose move of the top the compiler knows.
    Popped,
    /// The words `lo ..= hi` (in a [`Decoded`]: other words than a plain
    /// pop's, kept out of the loop).
    Words,
    /// The words, and the other writes (one or two) of the opcode's
    /// compiled plan, kept out of the loop.
    Plan,
    /// A long shift priced by its count: the path the handler remembered
    /// for the count ([`super::memo::PathMemo`]) gives its cycles and its
    /// writes (the opcode's [`StackStep::ByPath`] plan), else its handler
    /// runs it.
    ByPath,
}

impl FastStep {
    const HANDLER: FastStep = FastStep::of(Keep::Handler);
    const NOTHING: FastStep = FastStep::of(Keep::Nothing);

    /// How many words it keeps (`lo ..= hi`).
    fn words(&self) -> u8 {
        (i32::from(self.hi) - i32::from(self.lo) + 1).max(0) as u8
    }

    const fn of(keep: Keep) -> FastStep {
        FastStep {
            keep,
            lo: 1,
            hi: 0,
            others: [(0, FixedValue::Constant(0)); PLAN_WRITES],
            others_len: 0,
            quick: None,
        }
    }
}

/// How many words bytecode `op` moves the stack's top, for the ones the
/// fast path runs (when their stack memory allows).
fn net(op: u8) -> Option<i32> {
    operation([op, 0, 0]).0.net()
}

/// Each opcode's [`FastStep`] on a machine whose processor keeps its stack
/// memory by its steps (`None`: JopSim's timing, no stack memory). Where
/// the processor's step for an opcode moves the top otherwise than the
/// fast path does, its handler runs it.
pub(super) fn fast_steps(processor: Option<&Processor>) -> [FastStep; 256] {
    std::array::from_fn(|op| {
        let op8 = op as u8;
        let Some(moves) = net(op8) else {
            return FastStep::HANDLER;
        };
        let Some(p) = processor else {
            return FastStep::NOTHING;
        };
        let m = &p.microcode;
        if m.in_java[op] {
            return FastStep::HANDLER;
        }
        if m.by_data[op].is_some() {
            return by_path_step(op8, moves, &m.plans[op]);
        }
        // The I/O bytecodes' own cycles are for an I/O device; the fast
        // path runs them on the memory only.
        if m.io[op].is_some() && !matches!(op8, 209..=212) {
            return FastStep::HANDLER;
        }
        let words = |keep: Keep, lo: i32, hi: i32| match (i8::try_from(lo), i8::try_from(hi)) {
            (Ok(lo), Ok(hi)) if lo > -MARGIN as i8 => FastStep {
                keep,
                lo,
                hi,
                ..FastStep::of(keep)
            },
            _ => FastStep::HANDLER,
        };
        match m.steps[op] {
            Step::Quiet => FastStep::NOTHING,
            Step::Pop(n) if i32::from(n) == moves => words(Keep::Words, i32::from(n) - 1, -2),
            Step::Fixed => match &m.fixed[op] {
                Some(plan) if plan.net == moves && plan.reach < MARGIN => {
                    if plan.others_len == 0 {
                        return words(Keep::Words, plan.copy.0, plan.copy.1);
                    }
                    let mut step = words(Keep::Plan, plan.copy.0, plan.copy.1);
                    for &(k, v) in &plan.others[..plan.others_len] {
                        match i8::try_from(k) {
                            Ok(k) if (step.others_len as usize) < PLAN_WRITES && k > -MARGIN as i8 => {
                                step.others[step.others_len as usize] = (k, v);
                                step.others_len += 1;
                            }
                            _ => return FastStep::HANDLER,
                        }
                    }
                    step.quick = match step.others[..usize::from(step.others_len)] {
                        [(k, FixedValue::Constant(c))] => Some(QuickWrite::Constant(k, c)),
                        [(k, FixedValue::Register(r))] => Some(QuickWrite::Register(k, r)),
                        [(k, FixedValue::Local(n))] => Some(QuickWrite::Local(k, n)),
                        _ => None,
                    };
                    step
                }
                _ => FastStep::HANDLER,
            },
            _ => FastStep::HANDLER,
        }
    })
}

/// The step of a long shift the processor prices by its count, where its
/// plan is one of paths the loop can keep: the same move of the top as the
/// loop's, every write and every word read near the top.
fn by_path_step(op: u8, moves: i32, plan: &StackStep) -> FastStep {
    let near = |k: i32| (-MARGIN + 1..MARGIN).contains(&k);
    match plan {
        StackStep::ByPath { net, paths }
            if matches!(op, 121 | 123 | 125)
                && *net == moves
                && paths.iter().all(|(_, w)| w.len() <= NEAR_WRITES)
                && paths.iter().flat_map(|(_, w)| w).all(|&(k, v)| {
                    near(k)
                        && match v {
                            NearValue::Entry(e) => near(e) && e <= 0,
                            NearValue::Constant(_) | NearValue::Address(_) => true,
                        }
                }) =>
        {
            FastStep::of(Keep::ByPath)
        }
        _ => FastStep::HANDLER,
    }
}

/// The words the fast path keeps clear of the stack's ends: no bytecode
/// it runs moves the top more than 3 words, nor keeps words further than
/// this from it.
const MARGIN: i32 = 8;

/// What the loop does for a decoded bytecode: its opcode's work with the
/// operands decoded (`iload_2` is a [`Form::Load`] of local 2), one form
/// per operation, so that the loop dispatches once per bytecode.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
enum Form {
    /// Not decoded yet (the decoder runs on the first fetch).
    Undecoded,
    /// Its handler runs it.
    Handler,
    Nop,
    Const,
    /// `bipush` (two bytes) and `sipush` (three): [`Form::Const`]s of their
    /// lengths. Each form has one length, which its arm adds to the pc as
    /// a constant: the next fetch's address then does not wait for this
    /// bytecode's decoded length to be read (that wait, once per
    /// bytecode, was the loop's longest chain).
    ConstB,
    ConstS,
    Const2,
    Ldc,
    LdcW,
    Ldc2,
    Load,
    /// The two-byte (indexed) forms of loads and stores.
    LoadW,
    Load2,
    Load2W,
    Store,
    StoreW,
    Store2,
    Store2W,
    Iinc,
    Pop,
    Pop2,
    Dup,
    Iadd,
    Isub,
    Imul,
    Ishl,
    Ishr,
    Iushr,
    Iand,
    Ior,
    Ixor,
    Ladd,
    Lsub,
    Land,
    Lor,
    Lxor,
    Ineg,
    I2l,
    L2i,
    Lshl,
    Lshr,
    Lushr,
    IfEq,
    IfNe,
    IfLt,
    IfGe,
    IfGt,
    IfLe,
    IfCmpEq,
    IfCmpNe,
    IfCmpLt,
    IfCmpGe,
    IfCmpGt,
    IfCmpLe,
    Goto,
    GetStatic,
    PutStatic,
    GetField,
    PutField,
    ArrayLoad,
    ArrayStore,
    ArrayLength,
    NativeRd,
    NativeWr,
    /// A constant ([`Form::Const`]) and the integer operation right after
    /// it, run as one where the loop would not stop between them (see
    /// [`fuse`]): the constant's cycles in `byte1`, the two's in `cycles`.
    ConstIadd,
    ConstIsub,
    ConstIshl,
    ConstIshr,
    ConstIushr,
    ConstIand,
    ConstIor,
    ConstIxor,
    /// The same after a `bipush` and a `sipush`: one form per constant's
    /// length (see [`Form::ConstB`]).
    BipushIadd,
    BipushIsub,
    BipushIshl,
    BipushIshr,
    BipushIushr,
    BipushIand,
    BipushIor,
    BipushIxor,
    SipushIadd,
    SipushIsub,
    SipushIshl,
    SipushIshr,
    SipushIushr,
    SipushIand,
    SipushIor,
    SipushIxor,
}

impl Form {
    /// How many words it moves the stack's top (`None`: not one the loop
    /// runs).
    fn net(self) -> Option<i32> {
        use Form::*;
        Some(match self {
            Undecoded | Handler => return None,
            Nop | Iinc | Ineg | Goto | GetField | ArrayLength | NativeRd => 0,
            Const | ConstB | ConstS | Ldc | LdcW | Load | LoadW | Dup | I2l | GetStatic => 1,
            Const2 | Ldc2 | Load2 | Load2W => 2,
            Store | StoreW | Pop | L2i | PutStatic | ArrayLoad | Lshl | Lshr | Lushr => -1,
            Iadd | Isub | Imul | Ishl | Ishr | Iushr | Iand | Ior | Ixor => -1,
            IfEq | IfNe | IfLt | IfGe | IfGt | IfLe => -1,
            Store2 | Store2W | Pop2 | Ladd | Lsub | Land | Lor | Lxor | PutField | NativeWr => -2,
            IfCmpEq | IfCmpNe | IfCmpLt | IfCmpGe | IfCmpGt | IfCmpLe => -2,
            ArrayStore => -3,
            // A constant's push and its operation's pop.
            ConstIadd | ConstIsub | ConstIshl | ConstIshr | ConstIushr | ConstIand | ConstIor | ConstIxor => 0,
            BipushIadd | BipushIsub | BipushIshl | BipushIshr | BipushIushr | BipushIand | BipushIor | BipushIxor => 0,
            SipushIadd | SipushIsub | SipushIshl | SipushIshr | SipushIushr | SipushIand | SipushIor | SipushIxor => 0,
        })
    }
}

/// A bytecode decoded for the fast path: what it does, its operands, its
/// cycles and how it keeps the stack memory. Decoded once per code
/// address (the code never changes: the board fetches from the image as
/// loaded), on its first fetch. 16 bytes, so that the loop finds it with a
/// shift.
#[derive(Debug, Clone, Copy)]
pub(super) struct Decoded {
    form: Form,
    op: u8,
    /// Its length in bytes (for the decoder: each form's arm adds its own
    /// length, see [`Form::ConstB`]).
    len: u8,
    /// [`Keep::Popped`]: kept by its arm in the loop; [`Keep::Words`] and
    /// [`Keep::Plan`]: by its opcode's [`FastStep`], out of the loop;
    /// [`Keep::ByPath`]: by the path its operand takes.
    keep: Keep,
    /// Its first operand byte (the next byte: a plan's `LocalOperand`); in
    /// a fused pair ([`fuse`]), the constant's cycles.
    byte1: u8,
    /// `iinc`'s constant; in a fused pair, 1 where the operation keeps its
    /// popped word.
    imm: i8,
    cycles: u32,
    /// The decoded operand: a local's index, a constant, an index into the
    /// constant pool, a field's offset, a static's address, a branch offset.
    opd: i32,
}

// The loop's index of a decoded bytecode is a shift.
const _: () = assert!(std::mem::size_of::<Decoded>() == 16);

impl Decoded {
    pub(super) const UNDECODED: Decoded = Decoded {
        form: Form::Undecoded,
        op: 0,
        len: 1,
        keep: Keep::Handler,
        byte1: 0,
        imm: 0,
        cycles: 0,
        opd: 0,
    };
}

/// The fast path's operation for the bytecode whose three bytes (the
/// opcode first) are `bytes`: its form, its length in bytes and its decoded
/// operand; [`Form::Handler`] for a bytecode the loop does not run. The
/// one list of the opcodes the fast path runs.
fn operation(bytes: [u8; 3]) -> (Form, u8, i32) {
    let op = bytes[0];
    let u8_ = i32::from(bytes[1]);
    let u16_ = i32::from(u16::from_be_bytes([bytes[1], bytes[2]]));
    let s16 = i32::from(i16::from_be_bytes([bytes[1], bytes[2]]));
    match op {
        0 | 204 | 221 => (Form::Nop, 1, 0),
        1 | 11 => (Form::Const, 1, 0),
        2..=8 => (Form::Const, 1, i32::from(op) - 3),
        9 | 10 | 14 => (Form::Const2, 1, i32::from(op == 10)),
        16 => (Form::ConstB, 2, i32::from(bytes[1] as i8)),
        17 => (Form::ConstS, 3, s16),
        18 => (Form::Ldc, 2, u8_),
        19 => (Form::LdcW, 3, u16_),
        20 => (Form::Ldc2, 3, u16_),
        21 | 23 | 25 => (Form::LoadW, 2, u8_),
        26..=29 => (Form::Load, 1, i32::from(op - 26)),
        34..=37 => (Form::Load, 1, i32::from(op - 34)),
        42..=45 => (Form::Load, 1, i32::from(op - 42)),
        22 | 24 => (Form::Load2W, 2, u8_),
        30..=33 => (Form::Load2, 1, i32::from(op - 30)),
        38..=41 => (Form::Load2, 1, i32::from(op - 38)),
        54 | 56 | 58 => (Form::StoreW, 2, u8_),
        59..=62 => (Form::Store, 1, i32::from(op - 59)),
        67..=70 => (Form::Store, 1, i32::from(op - 67)),
        75..=78 => (Form::Store, 1, i32::from(op - 75)),
        55 | 57 => (Form::Store2W, 2, u8_),
        63..=66 => (Form::Store2, 1, i32::from(op - 63)),
        71..=74 => (Form::Store2, 1, i32::from(op - 71)),
        132 => (Form::Iinc, 3, u8_),
        87 => (Form::Pop, 1, 0),
        88 => (Form::Pop2, 1, 0),
        89 => (Form::Dup, 1, 0),
        96 => (Form::Iadd, 1, 0),
        100 => (Form::Isub, 1, 0),
        104 => (Form::Imul, 1, 0),
        120 => (Form::Ishl, 1, 0),
        122 => (Form::Ishr, 1, 0),
        124 => (Form::Iushr, 1, 0),
        126 => (Form::Iand, 1, 0),
        128 => (Form::Ior, 1, 0),
        130 => (Form::Ixor, 1, 0),
        97 => (Form::Ladd, 1, 0),
        101 => (Form::Lsub, 1, 0),
        127 => (Form::Land, 1, 0),
        129 => (Form::Lor, 1, 0),
        131 => (Form::Lxor, 1, 0),
        116 => (Form::Ineg, 1, 0),
        133 => (Form::I2l, 1, 0),
        136 => (Form::L2i, 1, 0),
        121 => (Form::Lshl, 1, 0),
        123 => (Form::Lshr, 1, 0),
        125 => (Form::Lushr, 1, 0),
        153..=158 | 198 | 199 | 159..=166 => {
            // The condition as `interp::branches` has it, one form each.
            let form = match (
                (159..=166).contains(&op),
                interp::branches(op, 0, 0),
                interp::branches(op, 0, 1),
                interp::branches(op, 1, 0),
            ) {
                (false, true, false, false) => Form::IfEq,
                (false, false, true, true) => Form::IfNe,
                (false, false, true, false) => Form::IfLt,
                (false, true, false, true) => Form::IfGe,
                (false, false, false, true) => Form::IfGt,
                (false, true, true, false) => Form::IfLe,
                (true, true, false, false) => Form::IfCmpEq,
                (true, false, true, true) => Form::IfCmpNe,
                (true, false, true, false) => Form::IfCmpLt,
                (true, true, false, true) => Form::IfCmpGe,
                (true, false, false, true) => Form::IfCmpGt,
                (true, true, true, false) => Form::IfCmpLe,
                _ => Form::Handler,
            };
            (form, 3, s16)
        }
        167 => (Form::Goto, 3, s16),
        178 | 224 => (Form::GetStatic, 3, u16_),
        179 => (Form::PutStatic, 3, u16_),
        180 | 226 => (Form::GetField, 3, u16_),
        181 => (Form::PutField, 3, u16_),
        46 | 48 | 50..=53 => (Form::ArrayLoad, 1, 0),
        79 | 81 | 84..=86 => (Form::ArrayStore, 1, 0),
        190 => (Form::ArrayLength, 1, 0),
        209 | 211 => (Form::NativeRd, 1, 0),
        210 | 212 => (Form::NativeWr, 1, 0),
        _ => (Form::Handler, 1, 0),
    }
}

/// Decodes the bytecode whose three bytes (the opcode first) are `bytes`,
/// with its opcode's step and cycles.
fn decode(bytes: [u8; 3], step: FastStep, cycles: u32) -> Decoded {
    let (form, len, opd) = match step.keep {
        Keep::Handler => (Form::Handler, 1, 0),
        _ => operation(bytes),
    };
    // Most bytecodes keep just the words they pop (none where they push),
    // as a plain pop does: their arms copy those.
    let (net, words, lo) = (form.net().unwrap_or(0), i32::from(step.words()), i32::from(step.lo));
    let keep = match step.keep {
        Keep::Nothing | Keep::Words if words == (-net).max(0) && (words == 0 || lo == net - 1) => Keep::Popped,
        k => k,
    };
    Decoded {
        form,
        op: bytes[0],
        len,
        keep,
        byte1: bytes[1],
        imm: bytes[2] as i8,
        cycles,
        opd,
    }
}

/// `a op b` for the loop's `int` operations, none of which divides.
#[inline(always)]
fn int_result(op: IntOp, a: i32, b: i32) -> i32 {
    op.apply(a, b).unwrap_or_default()
}

/// A constant and the integer operation after it as one bytecode, where
/// both keep the stack memory as a plain pop does or keep nothing (the
/// constant nothing; the operation the word below the pair, marked by
/// `imm` = 1) and the constant's cycles fit `byte1`: the pair is common
/// (`x + 1`, `x << 1`, `x & 0xff`), and one dispatch is spared.
fn fuse(first: Decoded, second: Decoded) -> Option<Decoded> {
    let form = match (first.form, second.form) {
        (Form::Const, Form::Iadd) => Form::ConstIadd,
        (Form::Const, Form::Isub) => Form::ConstIsub,
        (Form::Const, Form::Ishl) => Form::ConstIshl,
        (Form::Const, Form::Ishr) => Form::ConstIshr,
        (Form::Const, Form::Iushr) => Form::ConstIushr,
        (Form::Const, Form::Iand) => Form::ConstIand,
        (Form::Const, Form::Ior) => Form::ConstIor,
        (Form::Const, Form::Ixor) => Form::ConstIxor,
        (Form::ConstB, Form::Iadd) => Form::BipushIadd,
        (Form::ConstB, Form::Isub) => Form::BipushIsub,
        (Form::ConstB, Form::Ishl) => Form::BipushIshl,
        (Form::ConstB, Form::Ishr) => Form::BipushIshr,
        (Form::ConstB, Form::Iushr) => Form::BipushIushr,
        (Form::ConstB, Form::Iand) => Form::BipushIand,
        (Form::ConstB, Form::Ior) => Form::BipushIor,
        (Form::ConstB, Form::Ixor) => Form::BipushIxor,
        (Form::ConstS, Form::Iadd) => Form::SipushIadd,
        (Form::ConstS, Form::Isub) => Form::SipushIsub,
        (Form::ConstS, Form::Ishl) => Form::SipushIshl,
        (Form::ConstS, Form::Ishr) => Form::SipushIshr,
        (Form::ConstS, Form::Iushr) => Form::SipushIushr,
        (Form::ConstS, Form::Iand) => Form::SipushIand,
        (Form::ConstS, Form::Ior) => Form::SipushIor,
        (Form::ConstS, Form::Ixor) => Form::SipushIxor,
        _ => return None,
    };
    let plain = |k: Keep| matches!(k, Keep::Popped | Keep::Nothing);
    if first.keep != Keep::Popped || !plain(second.keep) {
        return None;
    }
    Some(Decoded {
        form,
        byte1: u8::try_from(first.cycles).ok()?,
        imm: i8::from(second.keep == Keep::Popped),
        cycles: first.cycles.checked_add(second.cycles)?,
        ..first
    })
}

impl<'c> Machine<'c> {
    /// Runs bytecodes on the fast path from `pc` until one needs its
    /// handler (left unfetched at `pc`) or attention (true).
    pub(super) fn run_fast(&mut self) -> bool {
        loop {
            if self.overflow_next || self.index_from_stidx {
                return false;
            }
            // The loop is made for the stack's size (a power of two, as the
            // processor's address bits make it) so that its indices, kept in
            // range by the loop's checks, need no bounds checks; and for
            // whether it keeps the processor's stack memory (JopSim's timing
            // keeps none).
            let attention = match (self.ram.is_some(), self.stack.len()) {
                (false, 256) => self.run_fast_in::<256, false>(),
                (true, 128) => self.run_fast_in::<128, true>(),
                (true, 256) => self.run_fast_in::<256, true>(),
                (true, 512) => self.run_fast_in::<512, true>(),
                (true, 1024) => self.run_fast_in::<1024, true>(),
                // Another stack runs on the handlers alone.
                _ => false,
            };
            // The loop stops at an invoke or a return: where it can, the
            // frame's own way runs it and the loop goes on in the method
            // it enters.
            if attention || !self.run_frame() {
                return attention;
            }
        }
    }

    /// [`Machine::run_fast`] on a stack of `N` words, keeping the stack
    /// memory if `KEEP`.
    #[inline(never)]
    fn run_fast_in<const N: usize, const KEEP: bool>(&mut self) -> bool {
        let regs = self.registers();
        let lock_count = self.moncnt;
        let (vp, cp) = (self.vp, self.cp);
        let Machine {
            mem,
            mem_words,
            code,
            stack,
            sp: sp_reg,
            pc: pc_reg,
            code_at,
            code_len,
            attention_at,
            copy_src,
            copy_pos,
            fixed,
            cycles: cycles_reg,
            sp_watch,
            executed: executed_reg,
            ram,
            mem_index,
            processor,
            fast,
            decoded,
            paths,
            ..
        } = self;
        let (attention_at, mem_words) = (*attention_at, *mem_words);
        let (copy_src, copy_pos) = (*copy_src, *copy_pos);
        let plans = processor.map(|p| &p.microcode.plans);
        let processor = processor.is_some();
        let code = &code[*code_at..*code_at + *code_len];
        let Ok(stack) = <&mut [i32; N]>::try_from(&mut **stack) else {
            return false;
        };
        let mut ram: Option<&mut [i32; N]> = ram.as_deref_mut().and_then(|r| r.try_into().ok());
        if KEEP && ram.is_none() {
            return false;
        }
        // The tops a bytecode may start from: its frame's locals below
        // (`vp + 4`, as the handler's check), its pushes clear of the
        // overflow mark's check and of the stack's end.
        let low = MARGIN.max(vp.saturating_add(4));
        let high = (*sp_watch).min(N as i32 - MARGIN) - 3;

        // The unsigned compare below needs its range not empty; the
        // decoded bytecodes are those whose three bytes lie in the method,
        // so that finding one is the check of the pc.
        if low > high || code.len() < 3 {
            return false;
        }
        let decoded = &mut decoded[*code_at..*code_at + code.len() - 2];
        let (mut pc, mut sp, mut cycles, mut executed) = (*pc_reg, *sp_reg, *cycles_reg, *executed_reg);
        let mut index = *mem_index;
        let ext = External {
            words: mem_words,
            copy_src,
            copy_pos,
        };
        // An address in the external memory, which the processor's
        // decoding sends there as well (not to an I/O device).
        let in_memory = |a: i32| (0..mem_words.min(1 << 21)).contains(&a);
        // The loop's head does not check the top: it starts in range, and
        // each bytecode that moves it checks the top it leaves (`moves!`).
        // One unsigned compare: a top below `low` wraps to above.
        if (sp - low) as u32 > (high - low) as u32 {
            return cycles >= attention_at;
        }
        let attention = loop {
            if cycles >= attention_at {
                break true;
            }
            let at = pc;
            // A pc below 0 wraps to beyond the method.
            let Some(d) = decoded.get(at as usize) else {
                break false;
            };
            let s = sp as usize;
            // A word's index in the stack: the loop's checks keep every
            // index it makes in range, so the mask changes none of them
            // (and spares the bounds checks).
            let w = |i: usize| i & (N - 1);
            // A local's index in the stack (out of it: `N` or more).
            let local = |n: i32| (vp + n) as u32 as usize;
            // Only a bytecode that goes on: keeps the stack memory's words
            // as its step says (every value as the machine is before it
            // runs, which the fast path's bytecodes never read), is
            // counted and charged, then changes the machine.
            // `$net`: the arm's move of the top (`Form::net`), known to the
            // compiler, so that a plain pop's words are copied without tests.
            // A bytecode that moves the top by `$net` runs here only where
            // the next may start from the top it leaves (in `low ..=
            // high`, one compare as `$net` is known); else it leaves the
            // loop, before it changes anything, and its handler runs it.
            macro_rules! moves {
                ($net:expr) => {{
                    if ($net > 0 && sp > high - $net) || ($net < 0 && sp < low - $net) {
                        break false;
                    }
                }};
            }
            macro_rules! commit {
                ($net:expr) => {{
                    moves!($net);
                    // JopSim's timing, with no stack memory, keeps nothing.
                    if let (true, Some(ram)) = (KEEP, ram.as_deref_mut()) {
                        if d.keep == Keep::Popped {
                            keep_popped::<N, { $net }>(ram, stack, sp);
                        } else {
                            keep_other(ram, stack, sp, d, &fast[d.op as usize], &regs);
                        }
                    }
                    executed += 1;
                    cycles += u64::from(d.cycles);
                }};
            }
            macro_rules! branch {
                ($taken:expr, $pops:expr) => {{
                    let taken = $taken;
                    commit!(-$pops);
                    pc = if taken { at + d.opd } else { at + 3 };
                    sp -= $pops;
                }};
            }
            macro_rules! int_op {
                ($op:expr) => {{
                    let (a, b) = (stack[w(s - 1)], stack[w(s)]);
                    commit!(-1);
                    stack[w(s - 1)] = int_result($op, a, b);
                    sp -= 1;
                    pc = at + 1;
                }};
            }
            // A fused constant and operation: both, as the two would run;
            // only the constant where attention comes before the
            // operation, which then runs on its own. The constant's push
            // is the pair's highest top.
            macro_rules! const_op {
                ($op:expr, $len:expr) => {{
                    moves!(1);
                    let first = u64::from(d.byte1);
                    stack[w(s + 1)] = d.opd;
                    if cycles + first >= attention_at {
                        // The constant keeps no word of the stack memory.
                        executed += 1;
                        cycles += first;
                        sp += 1;
                        pc = at + $len;
                    } else {
                        // The operation's popped word, unless it keeps nothing.
                        if let (true, Some(ram), 1) = (KEEP, ram.as_deref_mut(), d.imm) {
                            keep_popped::<N, -1>(ram, stack, sp + 1);
                        }
                        executed += 2;
                        cycles += u64::from(d.cycles);
                        stack[w(s)] = int_result($op, stack[w(s)], d.opd);
                        pc = at + $len + 1;
                    }
                }};
            }
            macro_rules! long_op {
                (|$a:ident, $b:ident| $v:expr) => {{
                    let long = |hi: usize| (i64::from(stack[w(hi)]) << 32) | i64::from(stack[w(hi + 1)] as u32);
                    let ($a, $b) = (long(s - 3), long(s - 1));
                    commit!(-2);
                    let v: i64 = $v;
                    stack[w(s - 3)] = (v >> 32) as i32;
                    stack[w(s - 2)] = v as i32;
                    sp -= 2;
                    pc = at + 1;
                }};
            }
            macro_rules! long_shift {
                (|$a:ident, $n:ident| $v:expr) => {{
                    let $a = (i64::from(stack[w(s - 2)]) << 32) | i64::from(stack[w(s - 1)] as u32);
                    let $n = stack[w(s)] as u32;
                    if let (true, Keep::ByPath) = (KEEP, d.keep) {
                        // The path the handler followed for this count, with
                        // its cycles; a count not met yet is the handler's.
                        let (Some((path_cycles, key)), Some(ram), Some(plans)) = (
                            paths.by_top(d.op, $n as i32, lock_count),
                            ram.as_deref_mut(),
                            plans,
                        ) else {
                            break false;
                        };
                        let StackStep::ByPath { ref paths, .. } = plans[usize::from(d.op)] else {
                            break false;
                        };
                        let Some((_, writes)) = paths.iter().find(|(k, _)| *k == key) else {
                            break false;
                        };
                        moves!(-1);
                        keep_by_path(ram, stack, sp, -1, writes);
                        executed += 1;
                        cycles += u64::from(path_cycles);
                    } else {
                        commit!(-1);
                    }
                    let v: i64 = $v;
                    stack[w(s - 2)] = (v >> 32) as i32;
                    stack[w(s - 1)] = v as i32;
                    sp -= 1;
                    pc = at + 1;
                }};
            }
            // The arms of bytecodes that come in several lengths, one
            // form per length: the next pc is the arm's constant sum, not
            // a sum with a length read from the decoded bytecode, so that
            // the next fetch does not wait for this one's read.
            macro_rules! constant {
                ($len:expr) => {{
                    commit!(1);
                    stack[w(s + 1)] = d.opd;
                    sp += 1;
                    pc = at + $len;
                }};
            }
            macro_rules! ldc {
                ($len:expr) => {{
                    let Some(v) = ext.read(mem, cp + d.opd) else {
                        break false;
                    };
                    commit!(1);
                    stack[w(s + 1)] = v;
                    sp += 1;
                    pc = at + $len;
                }};
            }
            macro_rules! load {
                ($len:expr) => {{
                    if local(d.opd) >= N {
                        break false;
                    }
                    let v = stack[w(local(d.opd))];
                    commit!(1);
                    stack[w(s + 1)] = v;
                    sp += 1;
                    pc = at + $len;
                }};
            }
            macro_rules! load2 {
                ($len:expr) => {{
                    if local(d.opd) >= N || local(d.opd + 1) >= N {
                        break false;
                    }
                    let h = stack[w(local(d.opd))];
                    commit!(2);
                    // The high word's push comes first, as in the handler:
                    // a top at the frame's lowest (`vp + 4`) pushes onto the
                    // local the low word is then read from.
                    stack[w(s + 1)] = h;
                    stack[w(s + 2)] = stack[w(local(d.opd + 1))];
                    sp += 2;
                    pc = at + $len;
                }};
            }
            macro_rules! store {
                ($len:expr) => {{
                    if local(d.opd) >= N {
                        break false;
                    }
                    commit!(-1);
                    stack[w(local(d.opd))] = stack[w(s)];
                    sp -= 1;
                    pc = at + $len;
                }};
            }
            macro_rules! store2 {
                ($len:expr) => {{
                    if local(d.opd + 1) >= N || local(d.opd) >= N {
                        break false;
                    }
                    commit!(-2);
                    let (h, l) = (stack[w(s - 1)], stack[w(s)]);
                    stack[w(local(d.opd + 1))] = l;
                    stack[w(local(d.opd))] = h;
                    sp -= 2;
                    pc = at + $len;
                }};
            }
            match d.form {
                Form::Undecoded => {
                    let decode_at = |a: usize| {
                        let bytes: [u8; 3] = code[a..a + 3].try_into().expect("three bytes");
                        decode(bytes, fast[bytes[0] as usize], fixed[bytes[0] as usize])
                    };
                    let mut first = decode_at(at as usize);
                    // A constant takes the operation after it in, where
                    // that one's three bytes lie in the method too.
                    let next = at as usize + usize::from(first.len);
                    if matches!(first.form, Form::Const | Form::ConstB | Form::ConstS) && next < decoded.len() {
                        first = fuse(first, decode_at(next)).unwrap_or(first);
                    }
                    decoded[at as usize] = first;
                }
                Form::Handler => break false,
                Form::Nop => {
                    commit!(0);
                    pc = at + 1;
                }
                Form::Const => constant!(1),
                Form::ConstB => constant!(2),
                Form::ConstS => constant!(3),
                Form::Const2 => {
                    commit!(2);
                    stack[w(s + 1)] = 0;
                    stack[w(s + 2)] = d.opd;
                    sp += 2;
                    pc = at + 1;
                }
                Form::Ldc => ldc!(2),
                Form::LdcW => ldc!(3),
                Form::Ldc2 => {
                    let (Some(h), Some(l)) = (ext.read(mem, cp + d.opd), ext.read(mem, cp + d.opd + 1)) else {
                        break false;
                    };
                    commit!(2);
                    stack[w(s + 1)] = h;
                    stack[w(s + 2)] = l;
                    sp += 2;
                    pc = at + 3;
                }
                Form::Load => load!(1),
                Form::LoadW => load!(2),
                Form::Load2 => load2!(1),
                Form::Load2W => load2!(2),
                Form::Store => store!(1),
                Form::StoreW => store!(2),
                Form::Store2 => store2!(1),
                Form::Store2W => store2!(2),
                Form::Iinc => {
                    let n = local(d.opd);
                    if n >= N {
                        break false;
                    }
                    commit!(0);
                    stack[w(n)] = stack[w(n)].wrapping_add(i32::from(d.imm));
                    pc = at + 3;
                }
                Form::Pop => {
                    commit!(-1);
                    sp -= 1;
                    pc = at + 1;
                }
                Form::Pop2 => {
                    commit!(-2);
                    sp -= 2;
                    pc = at + 1;
                }
                Form::Dup => {
                    commit!(1);
                    stack[w(s + 1)] = stack[w(s)];
                    sp += 1;
                    pc = at + 1;
                }
                Form::Iadd => int_op!(IntOp::Add),
                Form::Isub => int_op!(IntOp::Sub),
                Form::Imul => int_op!(IntOp::Mul),
                Form::Ishl => int_op!(IntOp::Shl),
                Form::Ishr => int_op!(IntOp::Shr),
                Form::Iushr => int_op!(IntOp::Ushr),
                Form::Iand => int_op!(IntOp::And),
                Form::Ior => int_op!(IntOp::Or),
                Form::Ixor => int_op!(IntOp::Xor),
                Form::ConstIadd => const_op!(IntOp::Add, 1),
                Form::ConstIsub => const_op!(IntOp::Sub, 1),
                Form::ConstIshl => const_op!(IntOp::Shl, 1),
                Form::ConstIshr => const_op!(IntOp::Shr, 1),
                Form::ConstIushr => const_op!(IntOp::Ushr, 1),
                Form::ConstIand => const_op!(IntOp::And, 1),
                Form::ConstIor => const_op!(IntOp::Or, 1),
                Form::ConstIxor => const_op!(IntOp::Xor, 1),
                Form::BipushIadd => const_op!(IntOp::Add, 2),
                Form::BipushIsub => const_op!(IntOp::Sub, 2),
                Form::BipushIshl => const_op!(IntOp::Shl, 2),
                Form::BipushIshr => const_op!(IntOp::Shr, 2),
                Form::BipushIushr => const_op!(IntOp::Ushr, 2),
                Form::BipushIand => const_op!(IntOp::And, 2),
                Form::BipushIor => const_op!(IntOp::Or, 2),
                Form::BipushIxor => const_op!(IntOp::Xor, 2),
                Form::SipushIadd => const_op!(IntOp::Add, 3),
                Form::SipushIsub => const_op!(IntOp::Sub, 3),
                Form::SipushIshl => const_op!(IntOp::Shl, 3),
                Form::SipushIshr => const_op!(IntOp::Shr, 3),
                Form::SipushIushr => const_op!(IntOp::Ushr, 3),
                Form::SipushIand => const_op!(IntOp::And, 3),
                Form::SipushIor => const_op!(IntOp::Or, 3),
                Form::SipushIxor => const_op!(IntOp::Xor, 3),
                Form::Ladd => long_op!(|a, b| a.wrapping_add(b)),
                Form::Lsub => long_op!(|a, b| a.wrapping_sub(b)),
                Form::Land => long_op!(|a, b| a & b),
                Form::Lor => long_op!(|a, b| a | b),
                Form::Lxor => long_op!(|a, b| a ^ b),
                Form::Lshl => long_shift!(|a, n| a.wrapping_shl(n)),
                Form::Lshr => long_shift!(|a, n| a.wrapping_shr(n)),
                Form::Lushr => long_shift!(|a, n| (a as u64).wrapping_shr(n) as i64),
                Form::Ineg => {
                    commit!(0);
                    stack[w(s)] = stack[w(s)].wrapping_neg();
                    pc = at + 1;
                }
                Form::I2l => {
                    commit!(1);
                    let v = stack[w(s)];
                    stack[w(s)] = v >> 31;
                    stack[w(s + 1)] = v;
                    sp += 1;
                    pc = at + 1;
                }
                Form::L2i => {
                    commit!(-1);
                    stack[w(s - 1)] = stack[w(s)];
                    sp -= 1;
                    pc = at + 1;
                }
                Form::IfEq => branch!(interp::branches(153, stack[w(s)], 0), 1),
                Form::IfNe => branch!(interp::branches(154, stack[w(s)], 0), 1),
                Form::IfLt => branch!(interp::branches(155, stack[w(s)], 0), 1),
                Form::IfGe => branch!(interp::branches(156, stack[w(s)], 0), 1),
                Form::IfGt => branch!(interp::branches(157, stack[w(s)], 0), 1),
                Form::IfLe => branch!(interp::branches(158, stack[w(s)], 0), 1),
                Form::IfCmpEq => branch!(interp::branches(159, stack[w(s - 1)], stack[w(s)]), 2),
                Form::IfCmpNe => branch!(interp::branches(160, stack[w(s - 1)], stack[w(s)]), 2),
                Form::IfCmpLt => branch!(interp::branches(161, stack[w(s - 1)], stack[w(s)]), 2),
                Form::IfCmpGe => branch!(interp::branches(162, stack[w(s - 1)], stack[w(s)]), 2),
                Form::IfCmpGt => branch!(interp::branches(163, stack[w(s - 1)], stack[w(s)]), 2),
                Form::IfCmpLe => branch!(interp::branches(164, stack[w(s - 1)], stack[w(s)]), 2),
                // A jump to itself is the slow path's to report (a hang).
                Form::Goto if d.opd == 0 => break false,
                Form::Goto => branch!(true, 0),
                Form::GetStatic => {
                    let Some(v) = ext.read(mem, d.opd) else { break false };
                    commit!(1);
                    stack[w(s + 1)] = v;
                    sp += 1;
                    pc = at + 3;
                }
                Form::PutStatic => {
                    if !in_memory(d.opd) {
                        break false;
                    }
                    commit!(-1);
                    mem[d.opd as usize] = stack[w(s)];
                    sp -= 1;
                    pc = at + 3;
                }
                Form::GetField => {
                    let r = stack[w(s)];
                    if r == 0 {
                        break false;
                    }
                    let Some(data) = ext.read(mem, r) else { break false };
                    // A hardware object's field is an I/O access.
                    if data < 0 {
                        break false;
                    }
                    let Some(v) = ext.read(mem, data.wrapping_add(d.opd)) else {
                        break false;
                    };
                    commit!(0);
                    index = d.opd;
                    stack[w(s)] = v;
                    pc = at + 3;
                }
                Form::PutField => {
                    let r = stack[w(s - 1)];
                    if r == 0 {
                        break false;
                    }
                    let Some(data) = ext.read(mem, r) else { break false };
                    let a = data.wrapping_add(d.opd);
                    if data < 0 || !in_memory(a) {
                        break false;
                    }
                    commit!(-2);
                    index = d.opd;
                    mem[a as usize] = stack[w(s)];
                    sp -= 2;
                    pc = at + 3;
                }
                Form::ArrayLoad => {
                    let (r, i) = (stack[w(s - 1)], stack[w(s)]);
                    let Some(a) = element(mem, &ext, r, i) else { break false };
                    let Some(v) = ext.read(mem, a) else { break false };
                    commit!(-1);
                    index = i;
                    stack[w(s - 1)] = v;
                    sp -= 1;
                    pc = at + 1;
                }
                Form::ArrayStore => {
                    let (r, i, v) = (stack[w(s - 2)], stack[w(s - 1)], stack[w(s)]);
                    let Some(a) = element(mem, &ext, r, i) else { break false };
                    if !in_memory(a) {
                        break false;
                    }
                    commit!(-3);
                    index = i;
                    mem[a as usize] = v;
                    sp -= 3;
                    pc = at + 1;
                }
                Form::ArrayLength => {
                    let r = stack[w(s)];
                    // JopSim's raises on null; the processor reads word 1.
                    if r == 0 && !processor {
                        break false;
                    }
                    let Some(n) = ext.read(mem, r.wrapping_add(1)) else {
                        break false;
                    };
                    commit!(0);
                    stack[w(s)] = n;
                    pc = at + 1;
                }
                // `Native.rd` and kin on the memory (not an I/O device).
                Form::NativeRd => {
                    let a = stack[w(s)];
                    if !in_memory(a) {
                        break false;
                    }
                    let Some(v) = ext.read(mem, a) else { break false };
                    commit!(0);
                    stack[w(s)] = v;
                    pc = at + 1;
                }
                Form::NativeWr => {
                    let a = stack[w(s)];
                    if !in_memory(a) {
                        break false;
                    }
                    commit!(-2);
                    mem[a as usize] = stack[w(s - 1)];
                    sp -= 2;
                    pc = at + 1;
                }
            }
        };
        (*pc_reg, *sp_reg, *cycles_reg, *executed_reg, *mem_index) = (pc, sp, cycles, executed, index);
        attention
    }
}

/// The stack memory keeps the words a plain pop of `-NET` words (started
/// with its top at `sp`) takes from it: `sp + NET - 1 ..= sp - 2` (none
/// for a push), at the stack's values.
#[inline(always)]
fn keep_popped<const N: usize, const NET: i32>(ram: &mut [i32; N], stack: &[i32; N], sp: i32) {
    let mut k = NET - 1;
    while k <= -2 {
        let a = (sp + k) as usize & (N - 1);
        ram[a] = stack[a];
        k += 1;
    }
}

/// The stack memory as a bytecode whose keeping is not a plain pop's keeps
/// it: its step's words, or its plan.
#[inline(never)]
fn keep_other<const N: usize>(
    ram: &mut [i32; N],
    stack: &[i32; N],
    sp: i32,
    d: &Decoded,
    step: &FastStep,
    regs: &Registers,
) {
    match d.keep {
        Keep::Nothing | Keep::Popped | Keep::Handler | Keep::ByPath => {}
        Keep::Words => keep_words(ram, stack, sp, step),
        Keep::Plan => keep_plan(ram, stack, sp, step, regs, d.byte1),
    }
}

/// The stack memory as a [`Keep::ByPath`] bytecode's path keeps it
/// (`execute_by_path`'s): the words it pops (from `S + net - 1` to `S - 2`)
/// keep their values, then the path's writes, every value read from the
/// stack before it runs.
#[inline(never)]
fn keep_by_path<const N: usize>(ram: &mut [i32; N], stack: &[i32; N], sp: i32, net: i32, writes: &[(i32, NearValue)]) {
    let at = |k: i32| (sp + k) as usize & (N - 1);
    let mut values = [(0usize, 0i32); NEAR_WRITES];
    let n = writes.len().min(NEAR_WRITES);
    for (slot, &(k, v)) in values.iter_mut().zip(writes) {
        let value = match v {
            NearValue::Entry(e) => stack[at(e)],
            NearValue::Constant(c) => c,
            NearValue::Address(a) => sp + a,
        };
        *slot = (at(k), value);
    }
    for a in sp + net - 1..=sp - 2 {
        ram[a as usize & (N - 1)] = stack[a as usize & (N - 1)];
    }
    for &(a, v) in &values[..n] {
        ram[a] = v;
    }
}

/// The most writes a path the loop keeps may make.
const NEAR_WRITES: usize = crate::config::FIXED_WRITES;

/// The stack memory as a [`Keep::Plan`] step keeps it: the plan's other
/// writes' values are read before its words are kept, then stored over
/// them (in [`keep_other`], out of the loop: few bytecodes have such a
/// step).
#[inline(always)]
fn keep_plan<const N: usize>(
    ram: &mut [i32; N],
    stack: &[i32; N],
    sp: i32,
    step: &FastStep,
    regs: &Registers,
    operand: u8,
) {
    let at = |k: i8| (sp + i32::from(k)) as usize & (N - 1);
    // The common plans without the general case's reading (and its saved
    // registers): the value first (the words may overwrite what it reads).
    let (k, value) = match step.quick {
        Some(QuickWrite::Constant(k, c)) => (k, c),
        Some(QuickWrite::Register(k, r)) => (k, regs.get(r)),
        Some(QuickWrite::Local(k, n)) => {
            let words = PlanWords {
                s0: sp,
                stack,
                ram: Some(&ram[..]),
            };
            (k, words.value(FixedValue::Local(n), regs, 0, |_| 0))
        }
        None => return keep_any_plan(ram, stack, sp, step, regs, operand),
    };
    keep_words(ram, stack, sp, step);
    ram[at(k)] = value;
}

/// [`keep_plan`] for any plan.
#[inline(never)]
fn keep_any_plan<const N: usize>(
    ram: &mut [i32; N],
    stack: &[i32; N],
    sp: i32,
    step: &FastStep,
    regs: &Registers,
    operand: u8,
) {
    let at = |k: i8| (sp + i32::from(k)) as usize & (N - 1);
    let words = PlanWords {
        s0: sp,
        stack,
        ram: Some(&ram[..]),
    };
    let value = |v| words.value(v, regs, i32::from(operand), |e| stack[(sp + e) as usize & (N - 1)]);
    let [(k0, v0), (k1, v1)] = step.others;
    let (v0, v1) = match step.others_len {
        0 => (0, 0),
        1 => (value(v0), 0),
        _ => (value(v0), value(v1)),
    };
    keep_words(ram, stack, sp, step);
    if step.others_len > 0 {
        ram[at(k0)] = v0;
        if step.others_len > 1 {
            ram[at(k1)] = v1;
        }
    }
}

/// The stack memory keeps the words `step` keeps (from `sp + lo` to
/// `sp + hi`) at the stack's values.
#[inline(always)]
fn keep_words<const N: usize>(ram: &mut [i32; N], stack: &[i32; N], sp: i32, step: &FastStep) {
    for j in i32::from(step.lo)..=i32::from(step.hi) {
        let a = (sp + j) as usize & (N - 1);
        ram[a] = stack[a];
    }
}

/// The external memory as the loop reads it (and [`Machine::memory_read`],
/// for the invokes and returns the loop leaves to `run_frame`).
pub(super) struct External {
    /// Its size in words.
    pub(super) words: i32,
    /// The copy unit's translation ([`memory::copy_translated`]).
    pub(super) copy_src: i32,
    pub(super) copy_pos: i32,
}

impl External {
    /// A read as `rd` reads the external memory (the copy unit's
    /// translation included); `None` where it goes elsewhere. Inlined by
    /// force: the loop reads at a dozen places, and a call at each costs
    /// more than the read.
    #[inline(always)]
    pub(super) fn read(&self, mem: &[i32], addr: i32) -> Option<i32> {
        let a = memory::copy_translated(addr, self.copy_src, self.copy_pos);
        (0..self.words).contains(&a).then(|| mem[a as usize])
    }
}

/// The address of element `i` of array `r` as the handler finds it
/// ([`Machine::element`]), or `None` where the handler raises or reads
/// beyond the external memory.
#[inline(always)]
fn element(mem: &[i32], ext: &External, r: i32, i: i32) -> Option<i32> {
    if r == 0 {
        return None;
    }
    let len = ext.read(mem, r.wrapping_add(1))?;
    if i < 0 || i >= len {
        return None;
    }
    Some(ext.read(mem, r)?.wrapping_add(i))
}
