//! The fast path: the common bytecodes (constants, locals, integer
//! arithmetic, branches, fields, statics and array elements) run in one loop
//! with the machine's registers in locals, until a bytecode needs anything
//! else. Each code address is decoded once, on its first fetch, into a
//! [`Decoded`]: the operation (`iload_2` is a load of local 2), its
//! operands, its cycles and how it keeps the stack memory; the loop then
//! dispatches once per bytecode on that. (The board fetches from the image
//! as loaded, never from what the program writes, so a decoded address
//! stays right.) Every bytecode it runs does what its handler
//! ([`Machine::execute`]) does on its usual way, with the processor's stack
//! memory kept as its step says; a bytecode off that way (an invoke or
//! return, I/O, a null reference or an index out of bounds, a hardware
//! object, the stack near its ends or its overflow mark, a `stidx` still
//! marked, an opcode whose stack memory is not a plain copy) is left,
//! before it changes anything, to its handler. A traced run never enters it
//! (its attention check stops at every bytecode), so a traced and an
//! untraced run compare the two ways.

use super::stackmem::{PlanWords, Registers};
use super::*;
use crate::config::{FixedValue, Step};
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
}

/// The registers a [`Keep::One`] write may store, by its index.
const REGISTERS: [Register; 7] = [
    Register::Mp,
    Register::Cp,
    Register::Vp,
    Register::Heap,
    Register::Jjp,
    Register::Jjhp,
    Register::LockCount,
];

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
    /// The words `lo ..= hi`.
    Words,
    /// The words, and one other write of a register's value or a
    /// constant (kept in the loop: the long arithmetic and the long
    /// stores make one).
    One,
    /// The words, and the other writes of the opcode's compiled plan.
    Plan,
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
        if m.in_java[op] || m.by_data[op].is_some() {
            return FastStep::HANDLER;
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
                    step
                }
                _ => FastStep::HANDLER,
            },
            _ => FastStep::HANDLER,
        }
    })
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
    Const2,
    Ldc,
    Ldc2,
    Load,
    Load2,
    Store,
    Store2,
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
}

impl Form {
    /// How many words it moves the stack's top (`None`: not one the loop
    /// runs).
    fn net(self) -> Option<i32> {
        use Form::*;
        Some(match self {
            Undecoded | Handler => return None,
            Nop | Iinc | Ineg | Goto | GetField | ArrayLength | NativeRd => 0,
            Const | Ldc | Load | Dup | I2l | GetStatic => 1,
            Const2 | Ldc2 | Load2 => 2,
            Store | Pop | L2i | PutStatic | ArrayLoad => -1,
            Iadd | Isub | Imul | Ishl | Ishr | Iushr | Iand | Ior | Ixor => -1,
            IfEq | IfNe | IfLt | IfGe | IfGt | IfLe => -1,
            Store2 | Pop2 | Ladd | Lsub | Land | Lor | Lxor | PutField | NativeWr => -2,
            IfCmpEq | IfCmpNe | IfCmpLt | IfCmpGe | IfCmpGt | IfCmpLe => -2,
            ArrayStore => -3,
        })
    }
}

/// A bytecode decoded for the fast path: what it does, its operands, its
/// cycles and how it keeps the stack memory. Decoded once per code
/// address (the code never changes: the board fetches from the image as
/// loaded), on its first fetch.
#[derive(Debug, Clone, Copy)]
pub(super) struct Decoded {
    form: Form,
    op: u8,
    /// Its length in bytes.
    len: u8,
    keep: Keep,
    /// The words it keeps: how many, from `S + lo` ([`FastStep`]'s).
    lo: i8,
    words: u8,
    /// Its first operand byte (the next byte: a plan's `LocalOperand`).
    byte1: u8,
    /// `iinc`'s constant.
    imm: i8,
    /// A [`Keep::One`]'s write: at `S + one_at`, of register
    /// `REGISTERS[one_register - 1]`'s value, or (`one_register` 0) of `one_value`.
    one_at: i8,
    one_register: u8,
    one_value: i32,
    cycles: u32,
    /// The decoded operand: a local's index, a constant, an index into the
    /// constant pool, a field's offset, a static's address, a branch offset.
    opd: i32,
}

impl Decoded {
    pub(super) const UNDECODED: Decoded = Decoded {
        form: Form::Undecoded,
        op: 0,
        len: 1,
        keep: Keep::Handler,
        lo: 1,
        words: 0,
        byte1: 0,
        imm: 0,
        one_at: 0,
        one_register: 0,
        one_value: 0,
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
        16 => (Form::Const, 2, i32::from(bytes[1] as i8)),
        17 => (Form::Const, 3, s16),
        18 => (Form::Ldc, 2, u8_),
        19 => (Form::Ldc, 3, u16_),
        20 => (Form::Ldc2, 3, u16_),
        21 | 23 | 25 => (Form::Load, 2, u8_),
        26..=29 => (Form::Load, 1, i32::from(op - 26)),
        34..=37 => (Form::Load, 1, i32::from(op - 34)),
        42..=45 => (Form::Load, 1, i32::from(op - 42)),
        22 | 24 => (Form::Load2, 2, u8_),
        30..=33 => (Form::Load2, 1, i32::from(op - 30)),
        38..=41 => (Form::Load2, 1, i32::from(op - 38)),
        54 | 56 | 58 => (Form::Store, 2, u8_),
        59..=62 => (Form::Store, 1, i32::from(op - 59)),
        67..=70 => (Form::Store, 1, i32::from(op - 67)),
        75..=78 => (Form::Store, 1, i32::from(op - 75)),
        55 | 57 => (Form::Store2, 2, u8_),
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
    // A plan of one write of a constant or a register's value is kept in
    // the loop.
    let (mut keep, mut one_at, mut one_register, mut one_value) = (step.keep, 0, 0, 0);
    if let (Keep::Plan, [(k, v)]) = (keep, &step.others[..usize::from(step.others_len)]) {
        match *v {
            FixedValue::Constant(c) => (keep, one_at, one_value) = (Keep::One, *k, c),
            FixedValue::Register(r) => {
                if let Some(i) = REGISTERS.iter().position(|&x| x == r) {
                    (keep, one_at, one_register) = (Keep::One, *k, i as u8 + 1);
                }
            }
            _ => {}
        }
    }
    Decoded {
        form,
        op: bytes[0],
        len,
        keep,
        one_at,
        one_register,
        one_value,
        lo: step.lo,
        words: step.words(),
        byte1: bytes[1],
        imm: bytes[2] as i8,
        cycles,
        opd,
    }
}

impl<'c> Machine<'c> {
    /// Runs bytecodes on the fast path from `pc` until one needs its
    /// handler (left unfetched at `pc`) or attention (true).
    pub(super) fn run_fast(&mut self) -> bool {
        if self.overflow_next || self.index_from_stidx {
            return false;
        }
        // The loop is made for the stack's size (a power of two, as the
        // processor's address bits make it) so that its indices, kept in
        // range by the loop's checks, need no bounds checks; and for
        // whether it keeps the processor's stack memory (JopSim's timing
        // keeps none).
        match (self.ram.is_some(), self.stack.len()) {
            (false, 256) => self.run_fast_in::<256, false>(),
            (true, 128) => self.run_fast_in::<128, true>(),
            (true, 256) => self.run_fast_in::<256, true>(),
            (true, 512) => self.run_fast_in::<512, true>(),
            (true, 1024) => self.run_fast_in::<1024, true>(),
            // Another stack runs on the handlers alone.
            _ => false,
        }
    }

    /// [`Machine::run_fast`] on a stack of `N` words, keeping the stack
    /// memory if `KEEP`.
    #[inline(never)]
    fn run_fast_in<const N: usize, const KEEP: bool>(&mut self) -> bool {
        let regs = self.registers();
        let register_values = REGISTERS.map(|r| regs.get(r));
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
            ..
        } = self;
        let (attention_at, mem_words) = (*attention_at, *mem_words);
        let (copy_src, copy_pos) = (*copy_src, *copy_pos);
        let processor = processor.is_some();
        let code = &code[*code_at..*code_at + *code_len];
        let decoded = &mut decoded[*code_at..*code_at + *code_len];
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

        // The last pc whose three bytes lie in the method.
        let last_pc = code.len() as i32 - 3;
        // The unsigned compares below need both ranges not empty.
        if low > high || last_pc < 0 {
            return false;
        }
        let (mut pc, mut sp, mut cycles, mut executed) = (*pc_reg, *sp_reg, *cycles_reg, *executed_reg);
        let mut index = *mem_index;
        // A read as `rd` reads the external memory (the copy unit's
        // translation included); `None` where it goes elsewhere.
        let rd = |mem: &[i32], addr: i32| -> Option<i32> {
            let a = memory::copy_translated(addr, copy_src, copy_pos);
            (0..mem_words).contains(&a).then(|| mem[a as usize])
        };
        // An address in the external memory, which the processor's
        // decoding sends there as well (not to an I/O device).
        let in_memory = |a: i32| (0..mem_words.min(1 << 21)).contains(&a);
        let attention = loop {
            if cycles >= attention_at {
                break true;
            }
            let at = pc;
            // One unsigned compare each: a pc below 0 and a top below
            // `low` wrap to above.
            if at as u32 > last_pc as u32 || (sp - low) as u32 > (high - low) as u32 {
                break false;
            }
            let d = &decoded[at as usize];
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
            macro_rules! commit {
                () => {{
                    // Nothing to keep is an empty range of words (and
                    // JopSim's timing, with no stack memory, keeps nothing).
                    if let (true, Some(ram)) = (KEEP, ram.as_deref_mut()) {
                        // One compare on the common way (words alone).
                        if d.keep <= Keep::Words {
                            keep(ram, stack, sp + i32::from(d.lo), d.words);
                        } else if d.keep == Keep::One {
                            keep(ram, stack, sp + i32::from(d.lo), d.words);
                            ram[w((sp + i32::from(d.one_at)) as usize)] = match d.one_register {
                                0 => d.one_value,
                                r => register_values[usize::from(r - 1) % REGISTERS.len()],
                            };
                        } else {
                            keep_plan(ram, stack, sp, &fast[d.op as usize], &regs, d.byte1);
                        }
                    }
                    executed += 1;
                    cycles += u64::from(d.cycles);
                }};
            }
            macro_rules! branch {
                ($taken:expr, $pops:expr) => {{
                    let taken = $taken;
                    commit!();
                    pc = if taken { at + d.opd } else { at + 3 };
                    sp -= $pops;
                }};
            }
            macro_rules! int_op {
                (|$a:ident, $b:ident| $v:expr) => {{
                    let ($a, $b) = (stack[w(s - 1)], stack[w(s)]);
                    commit!();
                    stack[w(s - 1)] = $v;
                    sp -= 1;
                    pc = at + 1;
                }};
            }
            macro_rules! long_op {
                (|$a:ident, $b:ident| $v:expr) => {{
                    let long = |hi: usize| (i64::from(stack[w(hi)]) << 32) | i64::from(stack[w(hi + 1)] as u32);
                    let ($a, $b) = (long(s - 3), long(s - 1));
                    commit!();
                    let v: i64 = $v;
                    stack[w(s - 3)] = (v >> 32) as i32;
                    stack[w(s - 2)] = v as i32;
                    sp -= 2;
                    pc = at + 1;
                }};
            }
            match d.form {
                Form::Undecoded => {
                    let bytes: [u8; 3] = code[at as usize..at as usize + 3].try_into().expect("three bytes");
                    decoded[at as usize] = decode(bytes, fast[bytes[0] as usize], fixed[bytes[0] as usize]);
                }
                Form::Handler => break false,
                Form::Nop => {
                    commit!();
                    pc = at + 1;
                }
                Form::Const => {
                    commit!();
                    stack[w(s + 1)] = d.opd;
                    sp += 1;
                    pc = at + i32::from(d.len);
                }
                Form::Const2 => {
                    commit!();
                    stack[w(s + 1)] = 0;
                    stack[w(s + 2)] = d.opd;
                    sp += 2;
                    pc = at + 1;
                }
                Form::Ldc => {
                    let Some(v) = rd(mem, cp + d.opd) else { break false };
                    commit!();
                    stack[w(s + 1)] = v;
                    sp += 1;
                    pc = at + i32::from(d.len);
                }
                Form::Ldc2 => {
                    let (Some(h), Some(l)) = (rd(mem, cp + d.opd), rd(mem, cp + d.opd + 1)) else {
                        break false;
                    };
                    commit!();
                    stack[w(s + 1)] = h;
                    stack[w(s + 2)] = l;
                    sp += 2;
                    pc = at + 3;
                }
                Form::Load => {
                    if local(d.opd) >= N {
                        break false;
                    }
                    let v = stack[w(local(d.opd))];
                    commit!();
                    stack[w(s + 1)] = v;
                    sp += 1;
                    pc = at + i32::from(d.len);
                }
                Form::Load2 => {
                    if local(d.opd) >= N || local(d.opd + 1) >= N {
                        break false;
                    }
                    let (h, l) = (stack[w(local(d.opd))], stack[w(local(d.opd + 1))]);
                    commit!();
                    stack[w(s + 1)] = h;
                    stack[w(s + 2)] = l;
                    sp += 2;
                    pc = at + i32::from(d.len);
                }
                Form::Store => {
                    if local(d.opd) >= N {
                        break false;
                    }
                    commit!();
                    stack[w(local(d.opd))] = stack[w(s)];
                    sp -= 1;
                    pc = at + i32::from(d.len);
                }
                Form::Store2 => {
                    if local(d.opd + 1) >= N || local(d.opd) >= N {
                        break false;
                    }
                    commit!();
                    let (h, l) = (stack[w(s - 1)], stack[w(s)]);
                    stack[w(local(d.opd + 1))] = l;
                    stack[w(local(d.opd))] = h;
                    sp -= 2;
                    pc = at + i32::from(d.len);
                }
                Form::Iinc => {
                    let n = local(d.opd);
                    if n >= N {
                        break false;
                    }
                    commit!();
                    stack[w(n)] = stack[w(n)].wrapping_add(i32::from(d.imm));
                    pc = at + 3;
                }
                Form::Pop | Form::Pop2 => {
                    commit!();
                    sp -= if d.form == Form::Pop { 1 } else { 2 };
                    pc = at + 1;
                }
                Form::Dup => {
                    commit!();
                    stack[w(s + 1)] = stack[w(s)];
                    sp += 1;
                    pc = at + 1;
                }
                Form::Iadd => int_op!(|a, b| a.wrapping_add(b)),
                Form::Isub => int_op!(|a, b| a.wrapping_sub(b)),
                Form::Imul => int_op!(|a, b| a.wrapping_mul(b)),
                Form::Ishl => int_op!(|a, b| a.wrapping_shl(b as u32)),
                Form::Ishr => int_op!(|a, b| a.wrapping_shr(b as u32)),
                Form::Iushr => int_op!(|a, b| (a as u32).wrapping_shr(b as u32) as i32),
                Form::Iand => int_op!(|a, b| a & b),
                Form::Ior => int_op!(|a, b| a | b),
                Form::Ixor => int_op!(|a, b| a ^ b),
                Form::Ladd => long_op!(|a, b| a.wrapping_add(b)),
                Form::Lsub => long_op!(|a, b| a.wrapping_sub(b)),
                Form::Land => long_op!(|a, b| a & b),
                Form::Lor => long_op!(|a, b| a | b),
                Form::Lxor => long_op!(|a, b| a ^ b),
                Form::Ineg => {
                    commit!();
                    stack[w(s)] = stack[w(s)].wrapping_neg();
                    pc = at + 1;
                }
                Form::I2l => {
                    commit!();
                    let v = stack[w(s)];
                    stack[w(s)] = v >> 31;
                    stack[w(s + 1)] = v;
                    sp += 1;
                    pc = at + 1;
                }
                Form::L2i => {
                    commit!();
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
                Form::Goto => branch!(true, 0),
                Form::GetStatic => {
                    let Some(v) = rd(mem, d.opd) else { break false };
                    commit!();
                    stack[w(s + 1)] = v;
                    sp += 1;
                    pc = at + 3;
                }
                Form::PutStatic => {
                    if !in_memory(d.opd) {
                        break false;
                    }
                    commit!();
                    mem[d.opd as usize] = stack[w(s)];
                    sp -= 1;
                    pc = at + 3;
                }
                Form::GetField => {
                    let r = stack[w(s)];
                    if r == 0 {
                        break false;
                    }
                    let Some(data) = rd(mem, r) else { break false };
                    // A hardware object's field is an I/O access.
                    if data < 0 {
                        break false;
                    }
                    let Some(v) = rd(mem, data.wrapping_add(d.opd)) else {
                        break false;
                    };
                    commit!();
                    index = d.opd;
                    stack[w(s)] = v;
                    pc = at + 3;
                }
                Form::PutField => {
                    let r = stack[w(s - 1)];
                    if r == 0 {
                        break false;
                    }
                    let Some(data) = rd(mem, r) else { break false };
                    let a = data.wrapping_add(d.opd);
                    if data < 0 || !in_memory(a) {
                        break false;
                    }
                    commit!();
                    index = d.opd;
                    mem[a as usize] = stack[w(s)];
                    sp -= 2;
                    pc = at + 3;
                }
                Form::ArrayLoad => {
                    let (r, i) = (stack[w(s - 1)], stack[w(s)]);
                    let Some(a) = element(mem, &rd, r, i) else { break false };
                    let Some(v) = rd(mem, a) else { break false };
                    commit!();
                    index = i;
                    stack[w(s - 1)] = v;
                    sp -= 1;
                    pc = at + 1;
                }
                Form::ArrayStore => {
                    let (r, i, v) = (stack[w(s - 2)], stack[w(s - 1)], stack[w(s)]);
                    let Some(a) = element(mem, &rd, r, i) else { break false };
                    if !in_memory(a) {
                        break false;
                    }
                    commit!();
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
                    let Some(n) = rd(mem, r.wrapping_add(1)) else {
                        break false;
                    };
                    commit!();
                    stack[w(s)] = n;
                    pc = at + 1;
                }
                // `Native.rd` and kin on the memory (not an I/O device).
                Form::NativeRd => {
                    let a = stack[w(s)];
                    if !in_memory(a) {
                        break false;
                    }
                    let Some(v) = rd(mem, a) else { break false };
                    commit!();
                    stack[w(s)] = v;
                    pc = at + 1;
                }
                Form::NativeWr => {
                    let a = stack[w(s)];
                    if !in_memory(a) {
                        break false;
                    }
                    commit!();
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

/// The stack memory keeps the `words` words from `from` at the stack's
/// values: the counts bytecodes keep most (none, one or two popped words)
/// copied word by word without a loop's counting, and a loop for the rest.
#[inline(always)]
fn keep<const N: usize>(ram: &mut [i32; N], stack: &[i32; N], from: i32, words: u8) {
    let mut copy = |k: i32| {
        let a = (from + k) as usize & (N - 1);
        ram[a] = stack[a];
    };
    // Compares, not a `match`: its jump table would cost an indirect jump.
    if words > 0 {
        copy(0);
        if words > 1 {
            copy(1);
            if words > 2 {
                (2..i32::from(words)).for_each(copy);
            }
        }
    }
}

/// The stack memory as a [`Keep::Plan`] step keeps it: the plan's other
/// writes' values are read before its words are kept, then stored over
/// them. Out of the loop: few bytecodes have such a plan.
#[inline(never)]
fn keep_plan<const N: usize>(
    ram: &mut [i32; N],
    stack: &[i32; N],
    sp: i32,
    step: &FastStep,
    regs: &Registers,
    operand: u8,
) {
    let others = &step.others[..usize::from(step.others_len)];
    let mut values = [0i32; PLAN_WRITES];
    let words = PlanWords {
        s0: sp,
        stack,
        ram: Some(ram),
    };
    for (slot, &(_, v)) in values.iter_mut().zip(others) {
        *slot = words.value(v, regs, i32::from(operand), |e| stack[(sp + e) as usize & (N - 1)]);
    }
    keep(ram, stack, sp + i32::from(step.lo), step.words());
    for (&(k, _), v) in others.iter().zip(values) {
        ram[(sp + i32::from(k)) as usize & (N - 1)] = v;
    }
}

/// The address of element `i` of array `r` as the handler finds it
/// ([`Machine::element`]), or `None` where the handler raises or reads
/// beyond the external memory.
#[inline(always)]
fn element(mem: &[i32], rd: &impl Fn(&[i32], i32) -> Option<i32>, r: i32, i: i32) -> Option<i32> {
    if r == 0 {
        return None;
    }
    let len = rd(mem, r.wrapping_add(1))?;
    if i < 0 || i >= len {
        return None;
    }
    Some(rd(mem, r)?.wrapping_add(i))
}
