//! Every path the microcode can take from a bytecode's entry to the
//! instruction that fetches the next bytecode (`nxt`), with its cycles.
//!
//! Each microinstruction takes one cycle. Branches and the jump take effect
//! after two delay slots. A memory access runs from the instruction that
//! starts it to the microcode's second `wait` after it; the instructions in
//! between hide part of its cycles (the access timing says how many of them
//! belong to the access itself). The walk follows the values the microcode
//! loads as constants, so a loop with a constant trip count (`imul`'s) is
//! walked as often as it runs, a branch on a constant goes one way, and a
//! write to an I/O address is told from a memory write. A branch on a value
//! the walk cannot know goes both ways; a path that writes the exception
//! register raises an exception and does not count as the bytecode's cost.

use super::access::{AccessKind, AccessTiming, AddressFrom};
use super::formula::{Formula, Linear};
use super::isa::{self, Flow, Operand, Stack, DELAY_SLOTS};
use super::source::Program;

/// The walk gives up on a path longer than this: a loop whose trip count
/// the microcode does not fix (it depends on the bytecode's data).
const MAX_STEPS: usize = 4096;
/// And on an entry with more paths than this.
const MAX_PATHS: usize = 4096;

/// The paths of one entry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Paths {
    /// The cycles of each normal path.
    pub normal: Vec<Formula>,
    /// How many paths raise an exception.
    pub exceptional: usize,
    /// The values the stack pointer takes on the normal paths.
    pub sp: SpRange,
}

/// The values the processor's stack pointer takes while a bytecode runs,
/// relative to its value at the start (`S`): every microinstruction moves
/// it by one at most, so they fill a range, except where the microcode
/// writes it (`stsp`: an invoke sets up the new frame, a return goes back
/// to the caller's), after which the values are given relative to the
/// pointer at the bytecode's end. The processor's overflow check compares
/// the pointer with one value, so a bytecode overflows the stack exactly
/// when that value lies in one of the ranges.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct SpRange {
    /// Lowest and highest value before any `stsp`, relative to `S`.
    pub before: (i64, i64),
    /// After the (last) `stsp`, relative to the value at the end; `None`
    /// when no path writes the stack pointer.
    pub after: Option<(i64, i64)>,
}

impl SpRange {
    fn merge(&mut self, o: SpRange) {
        self.before = (self.before.0.min(o.before.0), self.before.1.max(o.before.1));
        self.after = match (self.after, o.after) {
            (Some(a), Some(b)) => Some((a.0.min(b.0), a.1.max(b.1))),
            (a, b) => a.or(b),
        };
    }
}

/// The stack pointer along one walk.
#[derive(Debug, Clone, Copy, Default)]
struct SpTrack {
    /// Relative to the start, until an `stsp`.
    at: i64,
    before: (i64, i64),
    /// After an `stsp`: relative to the value it wrote, and its range.
    after: Option<(i64, (i64, i64))>,
}

impl SpTrack {
    fn moved(&mut self, d: i64) {
        match &mut self.after {
            None => {
                self.at += d;
                self.before = (self.before.0.min(self.at), self.before.1.max(self.at));
            }
            Some((at, range)) => {
                *at += d;
                *range = (range.0.min(*at), range.1.max(*at));
            }
        }
    }

    fn written(&mut self) {
        self.after = Some((0, (0, 0)));
    }

    fn range(&self) -> SpRange {
        SpRange {
            before: self.before,
            after: self.after.map(|(end, (lo, hi))| (lo - end, hi - end)),
        }
    }
}

#[derive(Debug, Clone)]
struct Pending {
    kind: String,
    start: i64,
    waited_once: bool,
    io: bool,
    at: usize,
}

#[derive(Debug, Clone)]
struct Walk {
    pc: usize,
    stack: Vec<Option<i64>>,
    /// A branch or jump under way: (its target if taken, delay slots left).
    jump: Option<(Option<usize>, usize)>,
    count: i64,
    access: Option<Pending>,
    write_address: Option<i64>,
    formula: Formula,
    steps: usize,
    /// Branches this walk went both ways at: meeting one again is a loop
    /// whose trip count depends on the bytecode's data.
    undecided: Vec<usize>,
    sp: SpTrack,
}

enum End {
    Normal(Formula, SpRange),
    Exception,
}

/// The paths from instruction `entry`; `Err` says why they cannot be timed.
pub fn walk(program: &Program, timing: &AccessTiming, entry: usize) -> Result<Paths, String> {
    let exception_register = program.constants.get(&timing.exception_register).copied();
    let mut todo = vec![Walk {
        pc: entry,
        stack: Vec::new(),
        jump: None,
        count: 0,
        access: None,
        write_address: None,
        formula: Formula::default(),
        steps: 0,
        undecided: Vec::new(),
        sp: SpTrack::default(),
    }];
    let mut paths = Paths {
        normal: Vec::new(),
        exceptional: 0,
        sp: SpRange::default(),
    };
    while let Some(w) = todo.pop() {
        match run(program, timing, exception_register, w, &mut todo)? {
            End::Normal(f, sp) => {
                if paths.normal.is_empty() {
                    paths.sp = sp;
                } else {
                    paths.sp.merge(sp);
                }
                paths.normal.push(f)
            }
            End::Exception => paths.exceptional += 1,
        }
        if paths.normal.len() + paths.exceptional + todo.len() > MAX_PATHS {
            return Err(format!("more than {MAX_PATHS} paths"));
        }
    }
    if paths.normal.is_empty() {
        return Err("every path raises an exception".to_string());
    }
    Ok(paths)
}

/// Runs one walk to its end, queueing the other side of each branch it
/// cannot decide.
fn run(
    program: &Program,
    timing: &AccessTiming,
    exception_register: Option<i64>,
    mut w: Walk,
    todo: &mut Vec<Walk>,
) -> Result<End, String> {
    loop {
        let Some(ins) = program.instructions.get(w.pc) else {
            return Err("runs past the end of the microcode without nxt".to_string());
        };
        let at = &ins.at;
        w.steps += 1;
        if w.steps > MAX_STEPS {
            return Err(format!("a loop the microcode's constants do not bound (at {at})"));
        }
        let info = isa::lookup(&ins.mnemonic).ok_or_else(|| format!("{at}: unknown microinstruction"))?;
        let tos = w.stack.last().copied().flatten();

        // Memory timing.
        if ins.mnemonic == "wait" {
            if let Some(p) = &mut w.access {
                if p.waited_once {
                    let p = w.access.take().expect("checked");
                    finish_access(timing, &p, w.count, &mut w.formula, program)?;
                } else {
                    p.waited_once = true;
                }
            }
        } else if ins.mnemonic == "stmwa" {
            w.write_address = tos;
        } else if let Some(kind) = timing.kinds.get(&ins.mnemonic) {
            if let Some(p) = &w.access {
                return Err(format!(
                    "{at}: {} starts before the access at {} was waited for",
                    ins.mnemonic, program.instructions[p.at].at
                ));
            }
            let address = match kind {
                AccessKind::Unsupported(why) => return Err(format!("{at}: {}: {why}", ins.mnemonic)),
                AccessKind::Timed {
                    address: AddressFrom::Read,
                    ..
                } => tos,
                AccessKind::Timed {
                    address: AddressFrom::Write,
                    ..
                } => w.write_address,
                AccessKind::Timed {
                    address: AddressFrom::Other,
                    ..
                } => None,
            };
            let io = address.is_some_and(|a| a < 0);
            if io
                && matches!(
                    kind,
                    AccessKind::Timed {
                        address: AddressFrom::Write,
                        ..
                    }
                )
                && address == exception_register
            {
                return Ok(End::Exception);
            }
            w.access = Some(Pending {
                kind: ins.mnemonic.clone(),
                start: w.count,
                waited_once: false,
                io,
                at: w.pc,
            });
        }

        // The stack pointer: one step a microinstruction at most, or written.
        if ins.mnemonic == "stsp" {
            w.sp.written();
        } else {
            w.sp.moved(match info.stack {
                Stack::Keep => 0,
                Stack::PushUnknown | Stack::PushValue | Stack::Dup => 1,
                Stack::Pop | Stack::Binary(_) => -1,
            });
        }

        // The stack.
        let mut condition = None;
        match info.stack {
            Stack::Keep => {}
            Stack::PushUnknown => w.stack.push(None),
            Stack::PushValue => {
                let operand = ins.operand.as_deref().unwrap_or("");
                let v = program
                    .value(operand)
                    .ok_or_else(|| format!("{at}: '{operand}' is not a number or constant"))?;
                w.stack.push(Some(v));
            }
            Stack::Dup => w.stack.push(tos),
            Stack::Pop => condition = Some(w.stack.pop().flatten()),
            Stack::Binary(op) => {
                let a = w.stack.pop().flatten();
                let b = w.stack.pop().flatten();
                w.stack.push(match (b, a) {
                    (Some(b), Some(a)) => op.apply(b, a),
                    _ => None,
                });
            }
        }
        if info.operand == Operand::Variable && ins.operand.as_deref().is_some_and(|v| !program.variables.contains(v)) {
            return Err(format!(
                "{at}: '{}' is not a variable",
                ins.operand.as_deref().unwrap_or("")
            ));
        }
        w.count += 1;

        if ins.nxt {
            if w.jump.is_some() {
                return Err(format!("{at}: nxt in a branch's delay slot"));
            }
            let mut f = w.formula;
            f.fixed = f.fixed.plus(Linear::constant(w.count));
            return Ok(End::Normal(f, w.sp.range()));
        }

        // Control flow: a jump under way counts down its delay slots first.
        let mut next = w.pc + 1;
        let in_delay_slot = w.jump.is_some();
        if let Some((target, left)) = w.jump.take() {
            if left > 1 {
                w.jump = Some((target, left - 1));
            } else if let Some(t) = target {
                next = t;
            }
        }
        if info.flow != Flow::Next {
            if in_delay_slot {
                return Err(format!("{at}: a branch in another branch's delay slot"));
            }
            let label = ins.operand.as_deref().unwrap_or("");
            let target = *program
                .labels
                .get(label)
                .ok_or_else(|| format!("{at}: no label '{label}'"))?;
            let taken = match (info.flow, condition.flatten()) {
                (Flow::Jump, _) => Some(true),
                (Flow::BranchZero, Some(v)) => Some(v == 0),
                (Flow::BranchNotZero, Some(v)) => Some(v != 0),
                _ => None,
            };
            match taken {
                Some(t) => w.jump = Some((t.then_some(target), DELAY_SLOTS)),
                None => {
                    if w.undecided.contains(&w.pc) {
                        return Err(format!(
                            "a loop whose trip count depends on the bytecode's data (the branch at {at})"
                        ));
                    }
                    w.undecided.push(w.pc);
                    let mut other = w.clone();
                    other.jump = Some((Some(target), DELAY_SLOTS));
                    other.pc = next;
                    todo.push(other);
                    w.jump = Some((None, DELAY_SLOTS));
                }
            }
        }
        w.pc = next;
    }
}

/// Adds a completed access to the path's formula.
fn finish_access(
    timing: &AccessTiming,
    p: &Pending,
    count: i64,
    f: &mut Formula,
    program: &Program,
) -> Result<(), String> {
    let Some(AccessKind::Timed { cycles, overlap, .. }) = timing.kinds.get(&p.kind) else {
        return Ok(());
    };
    let (cycles, overlap) = if p.io {
        (timing.io_cycles, timing.io_overlap)
    } else {
        (*cycles, *overlap)
    };
    let passed = count - p.start;
    let hidden = passed - overlap;
    if hidden < 0 {
        return Err(format!(
            "{}: {} is waited for after {passed} instructions, fewer than the {overlap} it takes",
            program.instructions[p.at].at, p.kind
        ));
    }
    f.add_access(cycles, hidden);
    Ok(())
}
