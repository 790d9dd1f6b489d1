//! The fast path: the common bytecodes (constants, locals, integer
//! arithmetic, branches, fields, statics and array elements) run in one loop
//! with the machine's registers in locals and one `match` on the opcode,
//! until a bytecode needs anything else. Every bytecode it runs does what
//! its handler ([`Machine::execute`]) does on its usual way, with the
//! processor's stack memory kept as its step says; a bytecode off that way
//! (an invoke or return, I/O, a null reference or an index out of bounds,
//! a hardware object, the stack near its ends or its overflow mark, a
//! `stidx` still marked, an opcode whose stack memory is not a plain copy)
//! is left, before it changes anything, to its handler. A traced run never
//! enters it (its attention check stops at every bytecode), so a traced and
//! an untraced run compare the two ways.

use super::stackmem::{PlanWords, Registers};
use super::*;
use crate::config::{FixedPlan, Step};

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
}

/// How the fast path keeps the stack memory for an opcode.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Keep {
    /// It does not run the opcode: its handler does.
    Handler,
    /// Nothing to keep (or no stack memory: JopSim's timing).
    Nothing,
    /// The words `lo ..= hi`.
    Words,
    /// The words, and the other writes of the opcode's compiled plan.
    Plan,
}

impl FastStep {
    const HANDLER: FastStep = FastStep::of(Keep::Handler);
    const NOTHING: FastStep = FastStep::of(Keep::Nothing);

    const fn of(keep: Keep) -> FastStep {
        FastStep { keep, lo: 1, hi: 0 }
    }
}

/// How many words bytecode `op` moves the stack's top, for the ones the
/// fast path runs (when their stack memory allows).
fn net(op: u8) -> Option<i32> {
    Some(match op {
        0 | 116 | 132 | 167 | 180 | 190 | 204 | 209 | 211 | 221 | 226 => 0,
        1..=8 | 11 | 16..=19 | 21 | 23 | 25..=29 | 34..=37 | 42..=45 | 89 | 133 | 178 | 224 => 1,
        9 | 10 | 14 | 20 | 22 | 24 | 30..=33 | 38..=41 => 2,
        46 | 48 | 50..=54 | 56 | 58..=62 | 67..=70 | 75..=78 | 87 | 136 => -1,
        96 | 100 | 104 | 120 | 122 | 124 | 126 | 128 | 130 | 153..=158 | 179 | 198 | 199 => -1,
        55 | 57 | 63..=66 | 71..=74 | 88 | 97 | 101 | 127 | 129 | 131 | 159..=166 | 181 | 210 | 212 => -2,
        79 | 81 | 84..=86 => -3,
        _ => return None,
    })
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
            (Ok(lo), Ok(hi)) if lo > -MARGIN as i8 => FastStep { keep, lo, hi },
            _ => FastStep::HANDLER,
        };
        match m.steps[op] {
            Step::Quiet => FastStep::NOTHING,
            Step::Pop(n) if i32::from(n) == moves => words(Keep::Words, i32::from(n) - 1, -2),
            Step::Fixed => match &m.fixed[op] {
                Some(plan) if plan.net == moves && plan.reach < MARGIN => {
                    let keep = if plan.others_len > 0 { Keep::Plan } else { Keep::Words };
                    words(keep, plan.copy.0, plan.copy.1)
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

impl<'c> Machine<'c> {
    /// Runs bytecodes on the fast path from `pc` until one needs its
    /// handler (left unfetched at `pc`) or attention (true).
    #[inline(never)]
    pub(super) fn run_fast(&mut self) -> bool {
        if self.overflow_next || self.index_from_stidx {
            return false;
        }
        let regs = self.registers();
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
            ..
        } = self;
        let (attention_at, mem_words) = (*attention_at, *mem_words);
        let (copy_src, copy_pos) = (*copy_src, *copy_pos);
        let plans = processor.map(|p| &*p.microcode.fixed);
        let processor = processor.is_some();
        let code = &code[*code_at..*code_at + *code_len];
        let stack: &mut [i32] = stack;
        let mut ram: Option<&mut [i32]> = ram.as_deref_mut();
        // The tops a bytecode may start from: its frame's locals below
        // (`vp + 4`, as the handler's check), its pushes clear of the
        // overflow mark's check and of the stack's end.
        let low = MARGIN.max(vp.saturating_add(4));
        let high = (*sp_watch).min(stack.len() as i32 - MARGIN) - 3;

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
            let bytes: [u8; 3] = code[at as usize..at as usize + 3].try_into().expect("three bytes");
            let op = bytes[0];
            let step = fast[op as usize];
            if step.keep == Keep::Handler {
                break false;
            }
            let s = sp as usize;
            let opd8 = bytes[1];
            macro_rules! opd16u {
                () => {
                    i32::from(u16::from_be_bytes([bytes[1], bytes[2]]))
                };
            }
            macro_rules! opd16s {
                () => {
                    i32::from(i16::from_be_bytes([bytes[1], bytes[2]]))
                };
            }
            let local = |n: i32| (vp + n) as usize;
            // Only a bytecode that goes on: keeps the stack memory's words
            // as its step says (every value as the machine is before it
            // runs, which the fast path's bytecodes never read), is
            // counted and charged, then changes the machine.
            macro_rules! commit {
                () => {{
                    match (step.keep, ram.as_deref_mut()) {
                        (Keep::Words, Some(ram)) => keep(ram, stack, sp, step.lo, step.hi),
                        (Keep::Plan, Some(ram)) => {
                            if let Some(p) = plans.and_then(|f| f[op as usize].as_ref()) {
                                keep_plan(ram, stack, sp, step, p, &regs, opd8);
                            }
                        }
                        _ => {}
                    }
                    executed += 1;
                    cycles += u64::from(fixed[op as usize]);
                }};
            }
            macro_rules! branch {
                ($taken:expr) => {{
                    commit!();
                    pc = if $taken { at + opd16s!() } else { at + 3 };
                }};
            }
            match op {
                0 | 204 | 221 => {
                    commit!();
                    pc = at + 1;
                }
                1..=8 | 11 => {
                    commit!();
                    stack[s + 1] = if op == 1 || op == 11 { 0 } else { i32::from(op) - 3 };
                    sp += 1;
                    pc = at + 1;
                }
                9 | 10 | 14 => {
                    commit!();
                    stack[s + 1] = 0;
                    stack[s + 2] = i32::from(op == 10);
                    sp += 2;
                    pc = at + 1;
                }
                16 => {
                    commit!();
                    stack[s + 1] = i32::from(opd8 as i8);
                    sp += 1;
                    pc = at + 2;
                }
                17 => {
                    commit!();
                    stack[s + 1] = opd16s!();
                    sp += 1;
                    pc = at + 3;
                }
                18 | 19 => {
                    let i = if op == 18 { i32::from(opd8) } else { opd16u!() };
                    let Some(v) = rd(mem, cp + i) else { break false };
                    commit!();
                    stack[s + 1] = v;
                    sp += 1;
                    pc = at + if op == 18 { 2 } else { 3 };
                }
                20 => {
                    let (Some(h), Some(l)) = (rd(mem, cp + opd16u!()), rd(mem, cp + opd16u!() + 1)) else {
                        break false;
                    };
                    commit!();
                    stack[s + 1] = h;
                    stack[s + 2] = l;
                    sp += 2;
                    pc = at + 3;
                }
                21 | 23 | 25 | 26..=29 | 34..=37 | 42..=45 => {
                    let (n, len) = match op {
                        21 | 23 | 25 => (i32::from(opd8), 2),
                        26..=29 => (i32::from(op - 26), 1),
                        34..=37 => (i32::from(op - 34), 1),
                        _ => (i32::from(op - 42), 1),
                    };
                    let Some(&v) = stack.get(local(n)) else { break false };
                    commit!();
                    stack[s + 1] = v;
                    sp += 1;
                    pc = at + len;
                }
                22 | 24 | 30..=33 | 38..=41 => {
                    let (n, len) = match op {
                        22 | 24 => (i32::from(opd8), 2),
                        30..=33 => (i32::from(op - 30), 1),
                        _ => (i32::from(op - 38), 1),
                    };
                    let (Some(&h), Some(&l)) = (stack.get(local(n)), stack.get(local(n + 1))) else {
                        break false;
                    };
                    commit!();
                    stack[s + 1] = h;
                    stack[s + 2] = l;
                    sp += 2;
                    pc = at + len;
                }
                54 | 56 | 58 | 59..=62 | 67..=70 | 75..=78 => {
                    let (n, len) = match op {
                        54 | 56 | 58 => (i32::from(opd8), 2),
                        59..=62 => (i32::from(op - 59), 1),
                        67..=70 => (i32::from(op - 67), 1),
                        _ => (i32::from(op - 75), 1),
                    };
                    if local(n) >= stack.len() {
                        break false;
                    }
                    commit!();
                    stack[local(n)] = stack[s];
                    sp -= 1;
                    pc = at + len;
                }
                55 | 57 | 63..=66 | 71..=74 => {
                    let (n, len) = match op {
                        55 | 57 => (i32::from(opd8), 2),
                        63..=66 => (i32::from(op - 63), 1),
                        _ => (i32::from(op - 71), 1),
                    };
                    if local(n + 1) >= stack.len() || local(n) >= stack.len() {
                        break false;
                    }
                    commit!();
                    let (h, l) = (stack[s - 1], stack[s]);
                    stack[local(n + 1)] = l;
                    stack[local(n)] = h;
                    sp -= 2;
                    pc = at + len;
                }
                132 => {
                    let n = local(i32::from(opd8));
                    if n >= stack.len() {
                        break false;
                    }
                    commit!();
                    stack[n] = stack[n].wrapping_add(i32::from(bytes[2] as i8));
                    pc = at + 3;
                }
                87 | 88 => {
                    commit!();
                    sp -= if op == 87 { 1 } else { 2 };
                    pc = at + 1;
                }
                89 => {
                    commit!();
                    stack[s + 1] = stack[s];
                    sp += 1;
                    pc = at + 1;
                }
                96 | 100 | 104 | 120 | 122 | 124 | 126 | 128 | 130 => {
                    let (a, b) = (stack[s - 1], stack[s]);
                    commit!();
                    stack[s - 1] = match op {
                        96 => a.wrapping_add(b),
                        100 => a.wrapping_sub(b),
                        104 => a.wrapping_mul(b),
                        120 => a.wrapping_shl(b as u32),
                        122 => a.wrapping_shr(b as u32),
                        124 => (a as u32).wrapping_shr(b as u32) as i32,
                        126 => a & b,
                        128 => a | b,
                        _ => a ^ b,
                    };
                    sp -= 1;
                    pc = at + 1;
                }
                97 | 101 | 127 | 129 | 131 => {
                    let long = |hi: usize| (i64::from(stack[hi]) << 32) | i64::from(stack[hi + 1] as u32);
                    let (a, b) = (long(s - 3), long(s - 1));
                    commit!();
                    let v = match op {
                        97 => a.wrapping_add(b),
                        101 => a.wrapping_sub(b),
                        127 => a & b,
                        129 => a | b,
                        _ => a ^ b,
                    };
                    stack[s - 3] = (v >> 32) as i32;
                    stack[s - 2] = v as i32;
                    sp -= 2;
                    pc = at + 1;
                }
                116 => {
                    commit!();
                    stack[s] = stack[s].wrapping_neg();
                    pc = at + 1;
                }
                133 => {
                    commit!();
                    let v = stack[s];
                    stack[s] = v >> 31;
                    stack[s + 1] = v;
                    sp += 1;
                    pc = at + 1;
                }
                136 => {
                    commit!();
                    stack[s - 1] = stack[s];
                    sp -= 1;
                    pc = at + 1;
                }
                153..=158 | 198 | 199 => {
                    branch!(interp::branches(op, stack[s], 0));
                    sp -= 1;
                }
                159..=166 => {
                    branch!(interp::branches(op, stack[s - 1], stack[s]));
                    sp -= 2;
                }
                167 => branch!(true),
                178 | 224 => {
                    let Some(v) = rd(mem, opd16u!()) else { break false };
                    commit!();
                    stack[s + 1] = v;
                    sp += 1;
                    pc = at + 3;
                }
                179 => {
                    if !in_memory(opd16u!()) {
                        break false;
                    }
                    commit!();
                    mem[opd16u!() as usize] = stack[s];
                    sp -= 1;
                    pc = at + 3;
                }
                180 | 226 => {
                    let r = stack[s];
                    if r == 0 {
                        break false;
                    }
                    let Some(data) = rd(mem, r) else { break false };
                    // A hardware object's field is an I/O access.
                    if data < 0 {
                        break false;
                    }
                    let Some(v) = rd(mem, data.wrapping_add(opd16u!())) else {
                        break false;
                    };
                    commit!();
                    index = opd16u!();
                    stack[s] = v;
                    pc = at + 3;
                }
                181 => {
                    let r = stack[s - 1];
                    if r == 0 {
                        break false;
                    }
                    let Some(data) = rd(mem, r) else { break false };
                    let a = data.wrapping_add(opd16u!());
                    if data < 0 || !in_memory(a) {
                        break false;
                    }
                    commit!();
                    index = opd16u!();
                    mem[a as usize] = stack[s];
                    sp -= 2;
                    pc = at + 3;
                }
                46 | 48 | 50..=53 => {
                    let (r, i) = (stack[s - 1], stack[s]);
                    let Some(a) = element(mem, &rd, r, i) else { break false };
                    let Some(v) = rd(mem, a) else { break false };
                    commit!();
                    index = i;
                    stack[s - 1] = v;
                    sp -= 1;
                    pc = at + 1;
                }
                79 | 81 | 84..=86 => {
                    let (r, i, v) = (stack[s - 2], stack[s - 1], stack[s]);
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
                190 => {
                    let r = stack[s];
                    // JopSim's raises on null; the processor reads word 1.
                    if r == 0 && !processor {
                        break false;
                    }
                    let Some(n) = rd(mem, r.wrapping_add(1)) else {
                        break false;
                    };
                    commit!();
                    stack[s] = n;
                    pc = at + 1;
                }
                // `Native.rd` and kin on the memory (not an I/O device).
                209 | 211 => {
                    let a = stack[s];
                    if !in_memory(a) {
                        break false;
                    }
                    let Some(v) = rd(mem, a) else { break false };
                    commit!();
                    stack[s] = v;
                    pc = at + 1;
                }
                210 | 212 => {
                    let a = stack[s];
                    if !in_memory(a) {
                        break false;
                    }
                    commit!();
                    mem[a as usize] = stack[s - 1];
                    sp -= 2;
                    pc = at + 1;
                }
                _ => break false,
            }
        };
        (*pc_reg, *sp_reg, *cycles_reg, *executed_reg, *mem_index) = (pc, sp, cycles, executed, index);
        attention
    }
}

/// The stack memory keeps the words `S + lo ..= S + hi` (`S` = `sp`) at
/// the stack's values: a few words, copied one by one (a copy of a length
/// known only when it runs calls `memcpy`, which costs more).
#[inline(always)]
fn keep(ram: &mut [i32], stack: &[i32], sp: i32, lo: i8, hi: i8) {
    for a in sp + i32::from(lo)..=sp + i32::from(hi) {
        ram[a as usize] = stack[a as usize];
    }
}

/// The stack memory as a [`Keep::Plan`] step keeps it: the plan's other
/// writes' values are read before its words are kept, then stored over
/// them. Out of the loop: few bytecodes have such a plan.
#[inline(never)]
fn keep_plan(ram: &mut [i32], stack: &[i32], sp: i32, step: FastStep, p: &FixedPlan, regs: &Registers, operand: u8) {
    let mut values = [0i32; crate::config::FIXED_WRITES];
    let words = PlanWords {
        s0: sp,
        stack,
        ram: Some(ram),
    };
    for (slot, &(_, v)) in values.iter_mut().zip(&p.others[..p.others_len]) {
        *slot = words.value(v, regs, i32::from(operand), |e| stack[(sp + e) as usize]);
    }
    keep(ram, stack, sp, step.lo, step.hi);
    for (&(k, _), v) in p.others[..p.others_len].iter().zip(values) {
        ram[(sp + k) as usize] = v;
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
