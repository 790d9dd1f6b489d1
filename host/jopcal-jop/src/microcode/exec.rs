//! Running one bytecode's microcode on the data it is given, for the cycles
//! of the path that data takes. A few bytecodes' microcode branches on its
//! operands (a long shift on its count, `lcmp` on the signs and the
//! difference, `monitorexit` on the lock count): the timing table can only
//! give their worst path, the processor takes one path each time. A model of
//! the processor that knows the operands runs the microcode here, with the
//! same rules as the path analysis ([`super::paths`]): one cycle per
//! microinstruction, branches after their two delay slots, memory accesses
//! timed by the access timing at given wait states. Values are followed
//! through the stack and the microcode's variables; a path that depends on a
//! value not given (a memory read) is not decided and gives no answer.

use super::access::{AccessCase, AccessKind, AccessTiming, AddressFrom, Raise};
use super::isa::{self, BinaryOp, Flow, Stack, DELAY_SLOTS};
use super::source::Program;
use smallvec::SmallVec;
use std::collections::BTreeMap;

/// Longest run before giving up (a loop on data the run does not have).
const MAX_STEPS: usize = 10_000;

#[derive(Debug, Clone, Copy)]
enum Op {
    Ldi(i32),
    Ldm(usize),
    Stm(usize),
    PushUnknown,
    Pop,
    Dup,
    Keep,
    Bin(BinaryOp, Shift),
}

/// Shifts are followed here (the path analysis leaves them unknown).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Shift {
    None,
    Left,
    Right,
    Unsigned,
}

/// An access an instruction starts: its cycles at the run's wait states
/// (`None`: it needs the method cache's load, which a run here has not got),
/// the instructions that belong to it, where its address comes from.
#[derive(Debug, Clone, Copy)]
struct Access {
    cycles: Option<i64>,
    overlap: i64,
    address: AddressFrom,
    /// The cycles when the popped word is negative, where they differ.
    negative: Option<Option<i64>>,
    /// Its cycles when the memory interface raises, per [`Raise`].
    raised: [Option<i64>; 3],
    /// Its cycles on a hardware object, where they differ.
    hardware_object: Option<i64>,
}

/// Where a [`Raise`] is kept in [`Access::raised`].
fn raise_slot(why: Raise) -> usize {
    match why {
        Raise::Null => 0,
        Raise::IndexNegative => 1,
        Raise::IndexHigh => 2,
    }
}

#[derive(Debug, Clone, Copy)]
struct Micro {
    op: Op,
    flow: Flow,
    target: usize,
    access: Option<Access>,
    /// Starts an access whose timing is not known.
    unsupported: bool,
    wait: bool,
    stmwa: bool,
    nxt: bool,
    /// Reads the next operand byte of the bytecode (`opd`): the bytecode's
    /// pc moves on by one.
    opd: bool,
}

/// The microcode ready to run, at fixed wait states.
#[derive(Debug, Clone)]
pub struct Exec {
    code: Vec<Micro>,
    labels: BTreeMap<String, usize>,
    vars: BTreeMap<String, usize>,
    io_cycles: i64,
    io_overlap: i64,
    exception_register: Option<i32>,
}

/// A bytecode's microcode entry in an [`Exec`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EntryId(usize);

/// One of the microcode's variables in an [`Exec`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct VarId(usize);

impl Exec {
    /// Compiles `program` with `timing` at read and write wait states `r`, `w`.
    pub fn new(program: &Program, timing: &AccessTiming, r: f64, w: f64) -> Exec {
        let vars: BTreeMap<String, usize> = program
            .variable_order
            .iter()
            .enumerate()
            .map(|(i, v)| (v.clone(), i))
            .collect();
        let eval = |l: &super::Linear| -> Option<i64> { (l.b == 0).then(|| l.eval(r, w, 0.0).round() as i64) };
        let code = program
            .instructions
            .iter()
            .map(|ins| {
                let info = isa::lookup(&ins.mnemonic);
                let operand = ins.operand.as_deref().unwrap_or("");
                let var = || vars.get(operand).copied().unwrap_or(usize::MAX);
                let op = match info.map(|i| i.stack) {
                    Some(Stack::PushValue) => Op::Ldi(program.value(operand).unwrap_or(0) as i32),
                    Some(Stack::PushUnknown) if ins.mnemonic == "ldm" => Op::Ldm(var()),
                    Some(Stack::Pop) if ins.mnemonic == "stm" => Op::Stm(var()),
                    Some(Stack::PushUnknown) => Op::PushUnknown,
                    Some(Stack::Pop) => Op::Pop,
                    Some(Stack::Dup) => Op::Dup,
                    Some(Stack::Binary(b)) => Op::Bin(
                        b,
                        match ins.mnemonic.as_str() {
                            "shl" => Shift::Left,
                            "shr" => Shift::Right,
                            "ushr" => Shift::Unsigned,
                            _ => Shift::None,
                        },
                    ),
                    Some(Stack::Keep) | None => Op::Keep,
                };
                let (access, unsupported) = match timing.kinds.get(&ins.mnemonic) {
                    Some(AccessKind::Timed {
                        cycles,
                        overlap,
                        address,
                        negative,
                        raised,
                        hardware_object,
                    }) => (
                        Some(Access {
                            cycles: eval(cycles),
                            overlap: *overlap,
                            address: *address,
                            negative: negative.as_ref().map(eval),
                            raised: [Raise::Null, Raise::IndexNegative, Raise::IndexHigh]
                                .map(|why| raised.get(why, r).as_ref().and_then(eval)),
                            hardware_object: hardware_object.as_ref().and_then(eval),
                        }),
                        false,
                    ),
                    Some(AccessKind::Unsupported(_)) => (None, true),
                    None => (None, false),
                };
                Micro {
                    op,
                    flow: info.map_or(Flow::Next, |i| i.flow),
                    target: program.labels.get(operand).copied().unwrap_or(usize::MAX),
                    access,
                    unsupported,
                    wait: ins.mnemonic == "wait",
                    stmwa: ins.mnemonic == "stmwa",
                    nxt: ins.nxt,
                    opd: ins.opd,
                }
            })
            .collect();
        Exec {
            code,
            labels: program.labels.clone(),
            vars,
            io_cycles: eval(&timing.io_cycles).unwrap_or(0),
            io_overlap: timing.io_overlap,
            exception_register: program.constants.get(&timing.exception_register).map(|v| *v as i32),
        }
    }

    /// The entry at label `name`.
    pub fn entry(&self, name: &str) -> Option<EntryId> {
        self.labels.get(name).map(|i| EntryId(*i))
    }

    /// The variable called `name`.
    pub fn var(&self, name: &str) -> Option<VarId> {
        self.vars.get(name).map(|i| VarId(*i))
    }

    /// The cycles of the path the microcode at `entry` takes with `stack`
    /// (the operand stack's top words, the top last) and the variables
    /// `vars` known; `None` when the path depends on something not given or
    /// raises an exception.
    pub fn cycles(&self, entry: EntryId, stack: &[i32], vars: &[(VarId, i32)]) -> Option<u32> {
        self.run(entry, stack, vars).map(|(c, _)| c)
    }

    /// [`Exec::cycles`], with the path's key (see [`super::PathKey`]).
    pub fn run(&self, entry: EntryId, stack: &[i32], vars: &[(VarId, i32)]) -> Option<(u32, super::PathKey)> {
        self.follow_given(entry, stack, vars, None)
    }

    /// The cycles of the bytecode at `entry` with `stack` on top when its
    /// field access is to a hardware object: the first access that has
    /// cycles for that case takes them. `None` where no access has.
    pub fn run_on_hardware_object(&self, entry: EntryId, stack: &[i32], vars: &[(VarId, i32)]) -> Option<u32> {
        self.follow_given(entry, stack, vars, Some(AccessCase::HardwareObject))
            .map(|(c, _)| c)
    }

    /// The cycles of the bytecode at `entry` with `stack` on top when its
    /// memory access raises the exception `why`: the first access the
    /// memory interface can raise takes its raised cycles, and a path that
    /// writes the exception register itself (the long bytecodes' null and
    /// bounds checks) is followed. `None` where that is not known.
    pub fn run_raising(&self, entry: EntryId, stack: &[i32], vars: &[(VarId, i32)], why: Raise) -> Option<u32> {
        self.follow_given(entry, stack, vars, Some(AccessCase::Raises(why)))
            .map(|(c, _)| c)
    }

    /// [`Exec::run_raising`], with what the path leaves: see [`Left`].
    pub fn run_raising_stack(
        &self,
        entry: EntryId,
        stack: &[i32],
        vars: &[(VarId, i32)],
        why: Raise,
    ) -> Option<(u32, Left)> {
        let known: SmallVec<[Option<i32>; 8]> = stack.iter().map(|v| Some(*v)).collect();
        let mut left = Left::default();
        let (cycles, _) = self.follow_leaving(entry, &known, vars, false, Some(AccessCase::Raises(why)), &mut left)?;
        Some((cycles, left))
    }

    /// [`Exec::follow`] with every word of `stack` known, in `case`.
    fn follow_given(
        &self,
        entry: EntryId,
        stack: &[i32],
        vars: &[(VarId, i32)],
        case: Option<AccessCase>,
    ) -> Option<(u32, super::PathKey)> {
        let known: SmallVec<[Option<i32>; 8]> = stack.iter().map(|v| Some(*v)).collect();
        self.follow(entry, &known, vars, false, case)
    }

    fn follow(
        &self,
        entry: EntryId,
        stack: &[Option<i32>],
        vars: &[(VarId, i32)],
        strict: bool,
        case: Option<AccessCase>,
    ) -> Option<(u32, super::PathKey)> {
        self.follow_leaving(entry, stack, vars, strict, case, &mut Left::default())
    }

    /// [`Exec::run`] with only some of the stack's words known (`None`: not
    /// given): `Some` only when the path and its cycles depend on the known
    /// words alone (an access whose address is not known is not followed), so
    /// that the answer holds for every value of the others.
    pub fn run_known(
        &self,
        entry: EntryId,
        stack: &[Option<i32>],
        vars: &[(VarId, i32)],
    ) -> Option<(u32, super::PathKey)> {
        self.follow(entry, stack, vars, true, None)
    }

    /// Follows the microcode at `entry`; where the answer is found, `left`
    /// gets what its path leaves.
    fn follow_leaving(
        &self,
        entry: EntryId,
        stack: &[Option<i32>],
        vars: &[(VarId, i32)],
        strict: bool,
        case: Option<AccessCase>,
        left: &mut Left,
    ) -> Option<(u32, super::PathKey)> {
        let raise = match case {
            Some(AccessCase::Raises(why)) => Some(why),
            _ => None,
        };
        // On the stack frame, not the heap: the virtual board follows the
        // microcode of some bytecodes on every execution.
        let mut var: SmallVec<[Option<i32>; 32]> = SmallVec::from_elem(None, self.vars.len());
        for (VarId(i), v) in vars {
            var[*i] = Some(*v);
        }
        let first = Walk {
            pc: entry.0,
            count: 0,
            extra: 0,
            jump: None,
            pending: None,
            write_address: None,
            key: super::PathKey::default(),
            st: stack.iter().copied().collect(),
            below: false,
            operand_bytes: 0,
            copy_on_top: false,
            var,
            raise,
            raised: false,
            hardware_object: case == Some(AccessCase::HardwareObject),
        };
        // Raising, a branch on a word the microcode read (an array's
        // length, an object reference from the stack memory) is followed
        // both ways: the path that raises is the answer.
        let mut todo: SmallVec<[Walk; 2]> = SmallVec::new();
        todo.push(first);
        let mut walks = 0;
        while let Some(mut w) = todo.pop() {
            walks += 1;
            if walks > MAX_WALKS {
                return None;
            }
            if let Some(found) = self.walk(&mut w, strict, raise.is_some(), &mut todo) {
                *left = Left {
                    words: if w.below { None } else { w.st.iter().copied().collect() },
                    operand_bytes: w.operand_bytes,
                };
                return Some(found);
            }
        }
        None
    }

    /// Follows `w` to the bytecode's end: its cycles and path key, or
    /// `None` where the path cannot be followed (or, `raising`, does not
    /// raise); undecided branches, raising, go onto `todo`.
    fn walk(
        &self,
        w: &mut Walk,
        strict: bool,
        raising: bool,
        todo: &mut SmallVec<[Walk; 2]>,
    ) -> Option<(u32, super::PathKey)> {
        while w.count < MAX_STEPS as i64 {
            let count = w.count;
            let m = *self.code.get(w.pc)?;
            let tos = w.st.last().copied().flatten();
            if m.wait {
                if let Some(p) = w.pending.as_mut() {
                    if p.1 {
                        let (start, _, cycles, overlap) = w.pending.take().expect("checked");
                        w.extra += (cycles - (count - start - overlap)).max(0);
                    } else {
                        p.1 = true;
                    }
                }
            } else if m.stmwa {
                w.write_address = tos;
            } else if m.unsupported {
                return None;
            } else if let Some(a) = m.access {
                if w.pending.is_some() {
                    return None;
                }
                let address = match a.address {
                    AddressFrom::Read => tos,
                    AddressFrom::Write => w.write_address,
                    AddressFrom::Other => None,
                };
                if strict && address.is_none() && a.address != AddressFrom::Other {
                    return None;
                }
                let io = address.is_some_and(|x| x < 0);
                let raises = if io && a.address == AddressFrom::Write && address == self.exception_register {
                    // The microcode raises the exception itself: the
                    // bytecode's normal cost is another path's.
                    w.raise?;
                    w.raised = true;
                    None
                } else {
                    // The first access that can raise, raises.
                    w.raise.and_then(|why| a.raised[raise_slot(why)])
                };
                if raises.is_some() {
                    w.raise = None;
                    w.raised = true;
                }
                let hardware_object = a.hardware_object.filter(|_| w.hardware_object && !io);
                if hardware_object.is_some() {
                    w.hardware_object = false;
                }
                let (cycles, overlap) = match a.negative {
                    _ if io => (self.io_cycles, self.io_overlap),
                    _ if raises.is_some() => (raises.expect("checked"), a.overlap),
                    _ if hardware_object.is_some() => (hardware_object.expect("checked"), a.overlap),
                    Some(n) => {
                        let v = tos?;
                        w.key = w.key.then(v < 0);
                        if v < 0 {
                            (n?, a.overlap)
                        } else {
                            (a.cycles?, a.overlap)
                        }
                    }
                    None => (a.cycles?, a.overlap),
                };
                w.pending = Some((count, false, cycles, overlap));
            }
            if m.opd {
                w.operand_bytes += 1;
            }
            let mut condition = None;
            // The condition popped was a copy of the word now on top (`dup`
            // before the branch, as a null check does).
            let mut condition_copied = false;
            let copy_on_top = std::mem::take(&mut w.copy_on_top);
            match m.op {
                Op::Ldi(v) => w.st.push(Some(v)),
                Op::Ldm(i) => w.st.push(w.var.get(i).copied().flatten()),
                Op::Stm(i) => {
                    let v = w.pop();
                    if let Some(slot) = w.var.get_mut(i) {
                        *slot = v;
                    }
                }
                Op::PushUnknown => w.st.push(None),
                Op::Pop => {
                    condition_copied = copy_on_top;
                    condition = Some(w.pop());
                }
                Op::Dup => {
                    w.st.push(tos);
                    w.copy_on_top = true;
                }
                Op::Keep => w.copy_on_top = copy_on_top,
                Op::Bin(op, shift) => {
                    let a = w.pop();
                    let b = w.pop();
                    w.st.push(match (b, a) {
                        (Some(b), Some(a)) => match shift {
                            Shift::None => op.apply(i64::from(b), i64::from(a)).map(|v| v as i32),
                            Shift::Left => Some(b.wrapping_shl(a as u32 & 31)),
                            Shift::Right => Some(b.wrapping_shr(a as u32 & 31)),
                            Shift::Unsigned => Some((b as u32).wrapping_shr(a as u32 & 31) as i32),
                        },
                        _ => None,
                    });
                }
            }
            if m.nxt {
                // On a hardware object, only a path whose access took its cycles.
                return (w.jump.is_none() && w.pending.is_none() && w.raised == raising && !w.hardware_object)
                    .then(|| ((count + 1 + w.extra) as u32, w.key));
            }
            let mut next = w.pc + 1;
            let in_delay_slot = w.jump.is_some();
            if let Some((target, left)) = w.jump.take() {
                if left > 1 {
                    w.jump = Some((target, left - 1));
                } else if let Some(t) = target {
                    next = t;
                }
            }
            if m.flow != Flow::Next {
                if in_delay_slot || m.target == usize::MAX {
                    return None;
                }
                let taken = match (m.flow, condition.flatten()) {
                    (Flow::Jump, _) => true,
                    (Flow::BranchZero, Some(v)) => v == 0,
                    (Flow::BranchNotZero, Some(v)) => v != 0,
                    (Flow::BranchZero | Flow::BranchNotZero, None) if raising => {
                        // Both ways: the other one later.
                        let mut other = w.clone();
                        other.key = other.key.then(true);
                        other.jump = Some((Some(m.target), DELAY_SLOTS));
                        other.pc = next;
                        other.count += 1;
                        // Where the word tested was a copy of the top, the
                        // way on which it is 0 knows the top.
                        if condition_copied {
                            let zero = if m.flow == Flow::BranchZero {
                                &mut other
                            } else {
                                &mut *w
                            };
                            if let Some(top) = zero.st.last_mut() {
                                *top = Some(0);
                            }
                        }
                        todo.push(other);
                        false
                    }
                    _ => return None,
                };
                if m.flow != Flow::Jump {
                    w.key = w.key.then(taken);
                }
                w.jump = Some((taken.then_some(m.target), DELAY_SLOTS));
            }
            w.pc = next;
            w.count += 1;
        }
        None
    }
}

/// What the path of a bytecode leaves ([`Exec::run_raising_stack`]).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Left {
    /// The operand stack's top words (the top last; the words given were
    /// where it started), or `None` where the path read below them or
    /// leaves a word it does not know (one it read from memory).
    pub words: Option<Vec<i32>>,
    /// The bytecode's operand bytes it read (`opd`): its pc is the
    /// bytecode's plus one plus these when the next one is fetched.
    pub operand_bytes: u32,
}

/// Most paths [`Exec`] follows for one answer (each branch on an unknown
/// word, raising, makes two).
const MAX_WALKS: usize = 64;

/// A path under way through the microcode.
#[derive(Debug, Clone)]
struct Walk {
    pc: usize,
    /// Microinstructions executed before this one.
    count: i64,
    /// Cycles the memory accesses add beyond their instructions.
    extra: i64,
    /// A branch or jump under way: (its target if taken, delay slots left).
    jump: Option<(Option<usize>, usize)>,
    /// The access under way: (start, waited once, cycles, overlap).
    pending: Option<(i64, bool, i64, i64)>,
    write_address: Option<i32>,
    key: super::PathKey,
    st: SmallVec<[Option<i32>; 16]>,
    /// It took a word from below the stack's words it was given.
    below: bool,
    /// The bytecode's operand bytes it read (its `opd` instructions).
    operand_bytes: u32,
    /// The top word is a copy of the one below it (pushed by `dup`).
    copy_on_top: bool,
    var: SmallVec<[Option<i32>; 32]>,
    /// The exception the bytecode raises, until an access raises it.
    raise: Option<Raise>,
    raised: bool,
    /// Following a field access to a hardware object: not yet met.
    hardware_object: bool,
}

#[cfg(test)]
impl Exec {
    /// The path from `entry` with `stack` given, not raising, and what it leaves.
    fn follow_given_leaving(&self, entry: EntryId, stack: &[i32]) -> (Option<u32>, Left) {
        let known: SmallVec<[Option<i32>; 8]> = stack.iter().map(|v| Some(*v)).collect();
        let mut left = Left::default();
        let found = self.follow_leaving(entry, &known, &[], false, None, &mut left);
        (found.map(|(c, _)| c), left)
    }
}

impl Walk {
    /// The operand stack's top word, taken off (`None`: not known).
    fn pop(&mut self) -> Option<i32> {
        match self.st.pop() {
            Some(v) => v,
            None => {
                self.below = true;
                None
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::microcode::{Derivation, Program};
    use std::path::Path;

    fn timing() -> AccessTiming {
        let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../calibration/jop-microcode.toml");
        AccessTiming::load(&path).expect("shipped access timing")
    }

    // Microcode written for these tests: a shift whose path depends on its
    // count, a compare on two variables, an I/O write and a memory read.
    const TEXT: &str = "
io_exc = -124
io_dev = -123
a ?
b ?
cnt ?
shift:
 ldi 31
 and
 dup
 bnz shift_some
 nop
 nop
 pop nxt
shift_some:
 stm cnt
 shl
 ldm cnt
 ldi 1
 sub
 pop nxt
cmp:
 stm a
 stm b
 ldm a
 ldm b
 sub
 nop
 bz cmp_eq
 nop
 nop
 ldi 1 nxt
cmp_eq:
 nop
 ldi 0 nxt
devwr:
 ldi io_dev
 stmwa
 stmwd
 wait
 wait
 nop nxt
memrd:
 stmra
 wait
 wait
 ldmrd nxt
lenchk:
 stmra
 wait
 wait
 ldmrd
 sub
 nop
 bz lenchk_bound
 nop
 nop
 nop nxt
lenchk_bound:
 ldi io_exc
 stmwa
 ldi 3
 stmwd
 wait
 wait
 nop nxt
gf:
 stgf
 nop
 wait
 wait
 ldmrd nxt
ald:
 stald
 pop
 wait
 wait
 ldmrd nxt
nullchk:
 stmra
 wait
 wait
 ldmrd
 dup
 nop
 bnz nullchk_ok
 nop
 nop
 ldi 1
 ldi io_exc
 stmwa
 ldi 2
 stmwd
 wait
 wait
 nop nxt
nullchk_ok:
 pop
 nop opd
 nop opd nxt
";

    fn setup() -> (Program, Exec) {
        let p = Program::parse(TEXT, Path::new("t.asm"), &[]).unwrap();
        let e = Exec::new(&p, &timing(), 1.0, 2.0);
        (p, e)
    }

    #[test]
    fn the_path_follows_the_data() {
        let (_, e) = setup();
        let shift = e.entry("shift").unwrap();
        assert_eq!(e.cycles(shift, &[7, 0], &[]), Some(7));
        assert_eq!(e.cycles(shift, &[7, 3], &[]), Some(12));
        // 35 & 31 = 3: the same path as 3.
        assert_eq!(e.cycles(shift, &[7, 35], &[]), Some(12));
        let cmp = e.entry("cmp").unwrap();
        assert_eq!(e.cycles(cmp, &[4, 4], &[]), Some(11));
        assert_eq!(e.cycles(cmp, &[4, 5], &[]), Some(10));
        // Not given: not decided.
        assert_eq!(e.cycles(cmp, &[4], &[]), None);
    }

    #[test]
    fn runs_agree_with_the_path_analysis_where_there_is_one_path() {
        let (p, e) = setup();
        let d = Derivation::new(Path::new("t.asm"), &p, &timing(), ["devwr", "memrd"]);
        for name in ["devwr", "memrd"] {
            let entry = d.entries[name].as_ref().unwrap();
            assert_eq!(entry.paths.normal.len(), 1);
            let want = entry.paths.normal[0].eval(1.0, 2.0, 0.0) as u32;
            assert_eq!(e.cycles(e.entry(name).unwrap(), &[100, 5], &[]), Some(want), "{name}");
        }
        // A read of an I/O address is the I/O device's timing.
        let memrd = e.entry("memrd").unwrap();
        assert_eq!(e.cycles(memrd, &[-128], &[]), e.cycles(memrd, &[100], &[]));
    }

    #[test]
    fn a_path_is_known_from_the_words_it_depends_on() {
        let (_, e) = setup();
        let shift = e.entry("shift").unwrap();
        // The shift's path depends on its count alone: the same for every value.
        for count in [0, 3, 35] {
            let full = e.run(shift, &[7, count], &[]);
            assert_eq!(e.run_known(shift, &[None, Some(count)], &[]), full, "{count}");
        }
        // A compare needs both words; an access needs its address.
        let cmp = e.entry("cmp").unwrap();
        assert_eq!(e.run_known(cmp, &[None, Some(4)], &[]), None);
        assert!(e.run_known(cmp, &[Some(4), Some(4)], &[]).is_some());
        let memrd = e.entry("memrd").unwrap();
        assert!(e.run(memrd, &[100], &[]).is_some());
        assert_eq!(e.run_known(memrd, &[None], &[]), None);
    }

    #[test]
    fn a_raising_access_takes_its_raised_cycles_and_a_raising_path_is_found() {
        let (_, e) = setup();
        // The memory interface raises getfield's access sooner (stgf's
        // raises_null): one cycle less with r 1, w 2.
        let gf = e.entry("gf").unwrap();
        let normal = e.cycles(gf, &[0], &[]).unwrap();
        assert_eq!(e.run_raising(gf, &[0], &[], Raise::Null), Some(normal - 1));
        // A bounds check on a length read from memory: not decided normally;
        // raising, the path that writes the exception register is the answer.
        let lenchk = e.entry("lenchk").unwrap();
        assert_eq!(e.cycles(lenchk, &[5, 100], &[]), None);
        // 16 instructions, the read's r = 1 cycle and the I/O write's 1.
        assert_eq!(e.run_raising(lenchk, &[5, 100], &[], Raise::IndexHigh), Some(18));
        // A bytecode that cannot raise has no raised cost.
        let memrd = e.entry("memrd").unwrap();
        assert_eq!(e.run_raising(memrd, &[100], &[], Raise::Null), None);
    }

    #[test]
    fn a_raising_path_leaves_the_words_it_knows_and_the_operand_bytes_it_read() {
        let (_, e) = setup();
        // A null check of a reference read from memory, tested as a copy:
        // where the copy is 0, the reference under it is 0 as well.
        let nullchk = e.entry("nullchk").unwrap();
        let (_, left) = e.run_raising_stack(nullchk, &[9, 100], &[], Raise::Null).unwrap();
        assert_eq!(
            left,
            Left {
                words: Some(vec![9, 0, 1]),
                operand_bytes: 0
            }
        );
        // The way that does not raise reads its two operand bytes.
        let ok = e.entry("nullchk_ok").unwrap();
        let (_, left) = e.follow_given_leaving(ok, &[9, 5]);
        assert_eq!(left.operand_bytes, 2);
        assert_eq!(left.words, Some(vec![9]));
        // A path that takes words from below those given leaves none known;
        // one that leaves a word read from memory neither.
        let lenchk = e.entry("lenchk").unwrap();
        let (_, left) = e.run_raising_stack(lenchk, &[100], &[], Raise::IndexHigh).unwrap();
        assert_eq!(left.words, None);
        let gf = e.entry("gf").unwrap();
        let (_, left) = e.run_raising_stack(gf, &[0], &[], Raise::Null).unwrap();
        assert_eq!(left.words, None);
    }

    #[test]
    fn a_field_of_a_hardware_object_takes_that_cases_cycles() {
        let p = Program::parse(TEXT, Path::new("t.asm"), &[]).unwrap();
        // With r 1, w 2 the device's read takes what the memory's does; with
        // slower memory it is sooner (stgf's hardware_object).
        for (r, w, less) in [(1.0, 2.0, 0), (2.0, 3.0, 1), (4.0, 5.0, 3)] {
            let e = Exec::new(&p, &timing(), r, w);
            let gf = e.entry("gf").unwrap();
            let normal = e.cycles(gf, &[100], &[]).unwrap();
            assert_eq!(e.run_on_hardware_object(gf, &[100], &[]), Some(normal - less), "r {r}");
            // An access without that case: not priced for it.
            let memrd = e.entry("memrd").unwrap();
            assert_eq!(e.run_on_hardware_object(memrd, &[100], &[]), None);
        }
    }

    #[test]
    fn a_load_past_the_end_is_held_only_with_slower_memory() {
        let p = Program::parse(TEXT, Path::new("t.asm"), &[]).unwrap();
        // r 1: the load completes as a normal one (no raised cycles); r 2 and
        // up: the interface holds the processor until it raises.
        let e = Exec::new(&p, &timing(), 1.0, 2.0);
        let ald = e.entry("ald").unwrap();
        assert_eq!(e.run_raising(ald, &[100, 9], &[], Raise::IndexHigh), None);
        let e = Exec::new(&p, &timing(), 2.0, 3.0);
        let normal = e.cycles(ald, &[100, 9], &[]).unwrap();
        assert_eq!(e.run_raising(ald, &[100, 9], &[], Raise::IndexHigh), Some(normal + 3));
    }

    #[test]
    fn a_known_variable_decides_a_branch() {
        let (_, e) = setup();
        let cnt = e.var("cnt").unwrap();
        assert_eq!(e.var("nosuch"), None);
        let shift = e.entry("shift").unwrap();
        // The variable is overwritten before it is read: the given value does not matter.
        assert_eq!(e.cycles(shift, &[1, 2], &[(cnt, 9)]), Some(12));
    }
}
