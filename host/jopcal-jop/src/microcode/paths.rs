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
use super::source::{Location, Program};

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
    /// Each normal path's microinstructions (their indices in the program),
    /// in the order they run, with its [`path key`](PathKey).
    pub seqs: Vec<(PathKey, Vec<usize>)>,
}

/// A path's identity: the outcome of every conditional branch along it, in
/// order, folded into one number. A run of the microcode on known data
/// (`super::exec`) computes the same key for the path it takes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, PartialOrd, Ord)]
pub struct PathKey(pub u64);

impl PathKey {
    /// The key after one more branch `taken` or not.
    pub fn then(self, taken: bool) -> PathKey {
        PathKey(
            (self.0 ^ u64::from(taken) ^ 0x9e37_79b9)
                .wrapping_mul(0x0000_0100_0000_01b3)
                .rotate_left(7),
        )
    }
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
    /// The access takes its `negative` cycles (the popped word was negative).
    negative: bool,
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
    /// The microinstructions so far, and the branch outcomes' key.
    seq: Vec<usize>,
    key: PathKey,
}

enum End {
    Normal(Formula, SpRange, PathKey, Vec<usize>),
    Exception,
}

/// Why an entry's paths cannot be timed; each message names the microcode
/// line where there is one.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Untimed {
    /// The entry has more paths than the walk follows.
    #[error("more than {} paths", MAX_PATHS)]
    TooManyPaths,
    /// No path reaches `nxt` without raising an exception.
    #[error("every path raises an exception")]
    AlwaysThrows,
    /// A path runs off the end of the program.
    #[error("runs past the end of the microcode without nxt")]
    PastTheEnd,
    /// A path longer than the walk follows: a loop no constant bounds.
    #[error("a loop the microcode's constants do not bound (at {at})")]
    Unbounded { at: Location },
    /// A mnemonic the instruction set does not have.
    #[error("{at}: unknown microinstruction")]
    UnknownInstruction { at: Location },
    /// A memory access starts while another is still under way.
    #[error("{at}: {mnemonic} starts before the access at {pending} was waited for")]
    AccessNotWaitedFor {
        at: Location,
        mnemonic: String,
        /// Where the access under way started.
        pending: Location,
    },
    /// An access the access timing says it cannot time.
    #[error("{at}: {mnemonic}: {why}")]
    Unsupported {
        at: Location,
        mnemonic: String,
        why: String,
    },
    /// An operand that is neither a number nor a constant.
    #[error("{at}: '{operand}' is not a number or constant")]
    NotAValue { at: Location, operand: String },
    /// An operand that is not a variable.
    #[error("{at}: '{operand}' is not a variable")]
    NotAVariable { at: Location, operand: String },
    /// `nxt` in a branch's delay slot.
    #[error("{at}: nxt in a branch's delay slot")]
    NxtInDelaySlot { at: Location },
    /// A branch in another branch's delay slot.
    #[error("{at}: a branch in another branch's delay slot")]
    BranchInDelaySlot { at: Location },
    /// A branch to a label the program does not have.
    #[error("{at}: no label '{label}'")]
    NoLabel { at: Location, label: String },
    /// A branch met again on one path: a loop on the bytecode's data.
    #[error("a loop whose trip count depends on the bytecode's data (the branch at {at})")]
    DataDependentLoop { at: Location },
    /// An access waited for before its own cycles have passed.
    #[error("{at}: {access} is waited for after {passed} instructions, fewer than the {overlap} it takes")]
    WaitedTooSoon {
        /// Where the access started.
        at: Location,
        /// The access's microinstruction.
        access: String,
        passed: i64,
        overlap: i64,
    },
}

/// The paths from instruction `entry`; `Err` says why they cannot be timed.
pub fn walk(program: &Program, timing: &AccessTiming, entry: usize) -> Result<Paths, Untimed> {
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
        seq: Vec::new(),
        key: PathKey::default(),
    }];
    let mut paths = Paths {
        normal: Vec::new(),
        exceptional: 0,
        sp: SpRange::default(),
        seqs: Vec::new(),
    };
    while let Some(w) = todo.pop() {
        match run(program, timing, exception_register, w, &mut todo)? {
            End::Normal(f, sp, key, seq) => {
                if paths.normal.is_empty() {
                    paths.sp = sp;
                } else {
                    paths.sp.merge(sp);
                }
                paths.normal.push(f);
                paths.seqs.push((key, seq));
            }
            End::Exception => paths.exceptional += 1,
        }
        if paths.normal.len() + paths.exceptional + todo.len() > MAX_PATHS {
            return Err(Untimed::TooManyPaths);
        }
    }
    if paths.normal.is_empty() {
        return Err(Untimed::AlwaysThrows);
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
) -> Result<End, Untimed> {
    loop {
        let Some(ins) = program.instructions.get(w.pc) else {
            return Err(Untimed::PastTheEnd);
        };
        let at = &ins.at;
        w.steps += 1;
        if w.steps > MAX_STEPS {
            return Err(Untimed::Unbounded { at: at.clone() });
        }
        let info = isa::lookup(&ins.mnemonic).ok_or_else(|| Untimed::UnknownInstruction { at: at.clone() })?;
        if matches!(
            timing.kinds.get(&ins.mnemonic),
            Some(AccessKind::Timed { negative: Some(_), .. })
        ) && w.stack.last().copied().flatten().is_none()
        {
            // An access timed by the sign of the word it pops, not known
            // here: a path each way (the word goes, only its sign matters).
            let known = |mut w: Walk, v: i64| {
                match w.stack.last_mut() {
                    Some(top) => *top = Some(v),
                    None => w.stack.push(Some(v)),
                }
                w
            };
            todo.push(known(w.clone(), -1));
            w = known(w, 0);
        }
        let tos = w.stack.last().copied().flatten();
        w.seq.push(w.pc);

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
                return Err(Untimed::AccessNotWaitedFor {
                    at: at.clone(),
                    mnemonic: ins.mnemonic.clone(),
                    pending: program.instructions[p.at].at.clone(),
                });
            }
            let address = match kind {
                AccessKind::Unsupported(why) => {
                    return Err(Untimed::Unsupported {
                        at: at.clone(),
                        mnemonic: ins.mnemonic.clone(),
                        why: why.clone(),
                    })
                }
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
            let pending = Pending {
                kind: ins.mnemonic.clone(),
                start: w.count,
                waited_once: false,
                io,
                negative: false,
                at: w.pc,
            };
            // An access timed by the sign of the popped word (made known above).
            let negative = matches!(kind, AccessKind::Timed { negative: Some(_), .. }) && !io;
            if negative {
                let v = tos.unwrap_or(0);
                w.key = w.key.then(v < 0);
            }
            w.access = Some(Pending {
                negative: negative && tos.is_some_and(|v| v < 0),
                ..pending
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
                let v = program.value(operand).ok_or_else(|| Untimed::NotAValue {
                    at: at.clone(),
                    operand: operand.to_string(),
                })?;
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
            return Err(Untimed::NotAVariable {
                at: at.clone(),
                operand: ins.operand.clone().unwrap_or_default(),
            });
        }
        w.count += 1;

        if ins.nxt {
            if w.jump.is_some() {
                return Err(Untimed::NxtInDelaySlot { at: at.clone() });
            }
            let mut f = w.formula;
            f.fixed = f.fixed.plus(Linear::constant(w.count));
            return Ok(End::Normal(f, w.sp.range(), w.key, w.seq));
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
                return Err(Untimed::BranchInDelaySlot { at: at.clone() });
            }
            let label = ins.operand.as_deref().unwrap_or("");
            let target = *program.labels.get(label).ok_or_else(|| Untimed::NoLabel {
                at: at.clone(),
                label: label.to_string(),
            })?;
            let taken = match (info.flow, condition.flatten()) {
                (Flow::Jump, _) => Some(true),
                (Flow::BranchZero, Some(v)) => Some(v == 0),
                (Flow::BranchNotZero, Some(v)) => Some(v != 0),
                _ => None,
            };
            let conditional = info.flow != Flow::Jump;
            match taken {
                Some(t) => {
                    if conditional {
                        w.key = w.key.then(t);
                    }
                    w.jump = Some((t.then_some(target), DELAY_SLOTS))
                }
                None => {
                    if w.undecided.contains(&w.pc) {
                        return Err(Untimed::DataDependentLoop { at: at.clone() });
                    }
                    w.undecided.push(w.pc);
                    let mut other = w.clone();
                    other.jump = Some((Some(target), DELAY_SLOTS));
                    other.key = other.key.then(true);
                    other.pc = next;
                    todo.push(other);
                    w.key = w.key.then(false);
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
) -> Result<(), Untimed> {
    let Some(AccessKind::Timed {
        cycles,
        overlap,
        negative,
        ..
    }) = timing.kinds.get(&p.kind)
    else {
        return Ok(());
    };
    let (cycles, overlap) = match (p.io, negative) {
        (true, _) => (timing.io_cycles, timing.io_overlap),
        (false, Some(n)) if p.negative => (*n, *overlap),
        _ => (*cycles, *overlap),
    };
    let passed = count - p.start;
    let hidden = passed - overlap;
    if hidden < 0 {
        return Err(Untimed::WaitedTooSoon {
            at: program.instructions[p.at].at.clone(),
            access: p.kind.clone(),
            passed,
            overlap,
        });
    }
    f.add_access(cycles, hidden);
    Ok(())
}
