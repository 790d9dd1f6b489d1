//! What a bytecode's microcode writes into the processor's on-chip stack
//! memory. JOP keeps the top two words of its stack in registers (A, B)
//! and the rest in the memory; a push writes B into the memory above the
//! pointer, a pop reloads B from it. So the memory holds every word below
//! the top two, and above them whatever was last pushed out there: the
//! spilled words of earlier, deeper stacks and the microcode's own
//! temporaries. A program can see that memory where a new frame's locals
//! start out (they are not cleared) and where the runtime reads it directly
//! (`Native.rdIntMem`: the garbage collector scans the whole stack for
//! references). A model of the processor that keeps only the stack's values
//! needs, per bytecode, the writes its microcode makes: this follows one path
//! of the microcode symbolically and lists them.
//!
//! Addresses are relative to the address of the top of the stack (the
//! pointer plus 2) when the bytecode starts (`S`), or, after the microcode
//! writes the pointer itself (`stsp`: an invoke or a return sets up a frame),
//! relative to the top's address when it ends (`F`); locals are relative to
//! `vp`.

use super::isa::{self, BinaryOp, Stack};
use super::source::Program;
use std::collections::BTreeMap;

/// An address in the stack memory.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum At {
    /// `S + k`.
    Start(i32),
    /// `F + k`.
    End(i32),
}

/// What a write stores.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Value {
    /// The stack's word at `S + k` when the bytecode starts (for `k` of 0
    /// and -1, the two registers).
    Entry(i32),
    /// The memory's word at the address written, as it is when the write is
    /// made (a reload put back).
    Unchanged,
    /// The memory's word at `S + k` (or, after the pointer is written, `F + k`) before the write.
    Memory(At),
    /// Local `n` (or the operand's) as the memory holds it.
    Local(i32),
    LocalOperand,
    /// One of the microcode's variables that a model keeps as a register
    /// (`mp`, `cp`, `vp`, ...), as it is when the bytecode starts.
    Register(Register),
    Constant(i32),
    /// An address in the stack (the value of the pointer the microcode
    /// loads, plus what it adds).
    Address(At),
    /// A value the microcode computes or reads from memory: not followed.
    Unknown,
}

/// The microcode variables a model of the processor keeps itself.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Register {
    Mp,
    Cp,
    Vp,
    Heap,
    Jjp,
    Jjhp,
    LockCount,
}

fn register(name: &str) -> Option<Register> {
    Some(match name {
        "mp" => Register::Mp,
        "cp" => Register::Cp,
        "heap" => Register::Heap,
        "jjp" => Register::Jjp,
        "jjhp" => Register::Jjhp,
        "lockcnt" => Register::LockCount,
        _ => return None,
    })
}

/// The writes of one path that can outlast it above the stack: the last to
/// each address, in the order the microcode makes them, with the values
/// they store. Below the top two words at the end the memory is the stack
/// itself, which a model keeps anyway; so a path that leaves the pointer
/// where its net push or pop puts it lists only the writes above that, and
/// one that writes the pointer (an invoke, a return) lists all of them for
/// the model to sort out with the pointer it ends with (a new frame's locals
/// past its arguments, below the top, keep what the microcode left there).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RamScript {
    pub writes: Vec<(At, Value)>,
    /// The words the path pushes (negative: pops) in all, or `None` when it
    /// writes the stack pointer.
    pub net: Option<i32>,
}

/// The symbolic state: where the registers' and memory's words come from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Sym {
    Entry(i32),
    Mem(i64, bool),
    /// The pointer-relative address `k` (as `Mem`'s) as a value.
    Sp(i64, bool),
    Local(i32),
    LocalOperand,
    Register(Register),
    Constant(i32),
    Unknown,
}

struct State {
    a: Sym,
    b: Sym,
    /// The pointer, relative to `S - 2` (before `stsp`) or to the value
    /// `stsp` wrote (after it).
    sp: i64,
    after_stsp: bool,
    memory: BTreeMap<(bool, i64), Sym>,
    vars: BTreeMap<String, Sym>,
    writes: Vec<((bool, i64), Sym)>,
}

impl State {
    /// The memory's word at pointer-relative address `addr`.
    fn read(&self, addr: i64) -> Sym {
        let key = (self.after_stsp, addr);
        if let Some(s) = self.memory.get(&key) {
            return *s;
        }
        if !self.after_stsp && addr <= 0 {
            // Below the top two words at the start: the stack's words.
            Sym::Entry((addr - 2) as i32)
        } else {
            Sym::Mem(addr, self.after_stsp)
        }
    }

    fn write(&mut self, addr: i64, v: Sym) {
        let key = (self.after_stsp, addr);
        self.memory.insert(key, v);
        self.writes.push((key, v));
    }

    fn push(&mut self, v: Sym) {
        let b = self.b;
        self.write(self.sp + 1, b);
        self.b = self.a;
        self.a = v;
        self.sp += 1;
    }

    fn pop(&mut self) {
        self.a = self.b;
        self.b = self.read(self.sp);
        self.sp -= 1;
    }
}

/// The writes of the microcode path `seq` (instruction indices, in order)
/// of `program`.
pub fn script(program: &Program, seq: &[usize]) -> RamScript {
    let mut s = State {
        a: Sym::Entry(0),
        b: Sym::Entry(-1),
        sp: 0,
        after_stsp: false,
        memory: BTreeMap::new(),
        vars: BTreeMap::new(),
        writes: Vec::new(),
    };
    for &i in seq {
        let ins = &program.instructions[i];
        let Some(info) = isa::lookup(&ins.mnemonic) else {
            continue;
        };
        let operand = ins.operand.as_deref().unwrap_or("");
        match info.stack {
            Stack::Keep => {}
            Stack::PushValue => s.push(Sym::Constant(program.value(operand).unwrap_or(0) as i32)),
            Stack::Dup => s.push(s.a),
            Stack::PushUnknown => {
                let v = match ins.mnemonic.as_str() {
                    "ldm" => s
                        .vars
                        .get(operand)
                        .copied()
                        .or_else(|| register(operand).map(Sym::Register))
                        .unwrap_or(Sym::Unknown),
                    "ld0" | "ld1" | "ld2" | "ld3" => {
                        let n = i32::from(ins.mnemonic.as_bytes()[2] - b'0');
                        Sym::Local(n)
                    }
                    "ld" => Sym::LocalOperand,
                    "ldvp" => Sym::Register(Register::Vp),
                    // The stack's read address: one above the pointer.
                    "ldsp" => Sym::Sp(s.sp + 1, s.after_stsp),
                    _ => Sym::Unknown,
                };
                s.push(v);
            }
            Stack::Pop => {
                // A store into a local writes a word of the stack: not listed.
                if ins.mnemonic == "stm" {
                    s.vars.insert(operand.to_string(), s.a);
                }
                if ins.mnemonic == "stsp" {
                    // The pointer becomes A: from here on addresses are relative to it.
                    s.after_stsp = true;
                    s.sp = 0;
                    // The pop below still happens (A from B, B from the memory).
                }
                s.pop();
            }
            Stack::Binary(op) => {
                s.a = match (s.b, s.a, op) {
                    (Sym::Constant(x), Sym::Constant(y), _) => op
                        .apply(i64::from(x), i64::from(y))
                        .map_or(Sym::Unknown, |v| Sym::Constant(v as i32)),
                    (Sym::Sp(k, after), Sym::Constant(c), BinaryOp::Add)
                    | (Sym::Constant(c), Sym::Sp(k, after), BinaryOp::Add) => Sym::Sp(k + i64::from(c), after),
                    (Sym::Sp(k, after), Sym::Constant(c), BinaryOp::Sub) => Sym::Sp(k - i64::from(c), after),
                    _ => Sym::Unknown,
                };
                s.b = s.read(s.sp);
                s.sp -= 1;
            }
        }
    }
    // The top of the stack at the end, for addresses relative to it.
    let end_top = s.sp + 2;
    let net = (!s.after_stsp).then_some(s.sp as i32);
    // Only the last write to an address stays; writes before the pointer
    // is written all come before those after it, so keeping each space's
    // last writes in order keeps the order where the two spaces meet.
    let mut last: Vec<((bool, i64), Sym)> = Vec::new();
    for (key, v) in s.writes.iter().rev() {
        if !last.iter().any(|(k, _)| k == key) {
            last.push((*key, *v));
        }
    }
    last.reverse();
    let mut writes = Vec::new();
    for ((after, addr), v) in &last {
        let at = if *after {
            At::End((addr - end_top) as i32)
        } else {
            At::Start((addr - 2) as i32)
        };
        // Below the top two at the end: the stack's own word.
        if matches!((at, net), (At::Start(k), Some(n)) if k <= n - 2) {
            continue;
        }
        writes.push((at, value_of(*v, *after, addr, end_top)));
    }
    RamScript { writes, net }
}

fn value_of(v: Sym, after: bool, addr: &i64, end_top: i64) -> Value {
    match v {
        Sym::Entry(k) => Value::Entry(k),
        Sym::Mem(a, post) => {
            if post == after && a == *addr {
                Value::Unchanged
            } else if post {
                Value::Memory(At::End((a - end_top) as i32))
            } else {
                Value::Memory(At::Start((a - 2) as i32))
            }
        }
        Sym::Local(n) => Value::Local(n),
        Sym::LocalOperand => Value::LocalOperand,
        Sym::Register(r) => Value::Register(r),
        Sym::Constant(c) => Value::Constant(c),
        Sym::Sp(k, post) => Value::Address(if post {
            At::End((k - end_top) as i32)
        } else {
            At::Start((k - 2) as i32)
        }),
        Sym::Unknown => Value::Unknown,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    fn program(text: &str) -> Program {
        Program::parse(text, Path::new("t.asm"), &[]).unwrap()
    }

    fn seq(p: &Program, label: &str) -> Vec<usize> {
        let start = p.labels[label];
        let mut v = Vec::new();
        for (i, ins) in p.instructions.iter().enumerate().skip(start) {
            v.push(i);
            if ins.nxt {
                break;
            }
        }
        v
    }

    const TEXT: &str = "
mp ?
a ?
iload_0:
 ld0 nxt
iadd:
 add nxt
istore_1:
 st1 nxt
tmp:
 ldi 5
 ldm mp
 pop
 pop nxt
";

    #[test]
    fn a_bytecode_that_only_pushes_or_pops_leaves_nothing_above_the_stack() {
        let p = program(TEXT);
        // iload_0 spills B into S - 1, below the new top two: the stack's word.
        for (label, net) in [("iload_0", 1), ("iadd", -1), ("istore_1", -1)] {
            let s = script(&p, &seq(&p, label));
            assert_eq!((s.writes.as_slice(), s.net), (&[][..], Some(net)), "{label}");
        }
    }

    #[test]
    fn temporaries_pushed_and_popped_leave_their_spills_above_the_stack() {
        let p = program(TEXT);
        let s = script(&p, &seq(&p, "tmp"));
        // ldi 5: B (the word at S - 1) to S - 1; ldm mp: the old A to S.
        // Both are the top two at the end (in the registers), so the memory
        // keeps the words as they were spilled.
        assert_eq!(
            s.writes,
            vec![(At::Start(-1), Value::Entry(-1)), (At::Start(0), Value::Entry(0))]
        );
        assert_eq!(s.net, Some(0));
    }

    #[test]
    fn a_frame_set_up_lists_every_write_and_follows_the_pointer_as_a_value() {
        let p = program(
            "
mp ?
frame:
 ldsp
 ldi 1
 add
 dup
 ldi 3
 add
 nop
 stsp
 pop
 pop
 ldm mp nxt
",
        );
        let s = script(&p, &seq(&p, "frame"));
        assert_eq!(s.net, None);
        assert_eq!(
            s.writes,
            vec![
                (At::Start(-1), Value::Entry(-1)),
                (At::Start(0), Value::Entry(0)),
                // The pointer plus 1 ("the real sp"), dup'ed and spilled: S.
                (At::Start(1), Value::Address(At::Start(0))),
                // After stsp: the word the pops reloaded, put back.
                (At::End(-2), Value::Unchanged),
            ]
        );
    }
}
