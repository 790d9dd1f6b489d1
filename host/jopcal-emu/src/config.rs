//! The virtual board's configuration: a timing model in the format of
//! `calibration/jop-wcet.toml` (usually `calibration/emu-board.toml`, which
//! derives from it with its own parameters) plus the board parameters it
//! carries as model parameters: `method_cache_bytes`, `method_cache_blocks`
//! and `clock_mhz`.

use crate::error::ConfigError;
use jopcal_jop::microcode::exec::EntryId;
use jopcal_jop::microcode::stackram::RamScript;
use jopcal_jop::microcode::PathKey;
use jopcal_timing::cache::CacheConfig;
use jopcal_timing::TimingModel;
use std::path::Path;

/// Everything that decides the board's timing.
#[derive(Debug, Clone)]
pub struct BoardConfig {
    pub model: TimingModel,
    pub cache: CacheConfig,
    /// Clock of the cycle counter, for the microsecond counter.
    pub clock_mhz: f64,
    /// A run that reaches this many cycles is stopped (an infinite loop).
    pub cycle_limit: u64,
    /// A JOP tree's images run on this processor: the board counts what the
    /// processor's RTL counts. `None`: it times as the tree's JopSim does.
    pub processor: Option<std::sync::Arc<Processor>>,
}

/// The processor of a JOP top as its RTL is (`jopcal_sim::jop::describe`
/// reads it from the tree's VHDL): what makes the virtual board count the
/// processor's cycles where the tree's JopSim does not.
#[derive(Debug, Clone)]
pub struct Processor {
    /// The on-chip stack's words, and the stack pointer at which the
    /// processor raises its stack-overflow exception, in the board's terms
    /// (the processor's pointer plus the words it keeps in registers).
    pub stack_words: usize,
    pub overflow_at: i32,
    /// The board's stack pointer when the processor starts: the on-chip
    /// memory's address of the top of the stack (the microcode's
    /// `stack_init` plus the two words the processor keeps in registers),
    /// so that every stack address a program sees is the processor's.
    pub initial_sp: i32,
    /// The stack's words when the processor starts (the microcode
    /// assembler's image: its variables, constants and version).
    pub stack_init: Vec<i32>,
    /// Words of the external SRAM (its word addresses wrap at this).
    pub memory_words: i32,
    /// Words of the scratchpad memory; 0: none (reads give 0, writes vanish).
    pub scratchpad_words: i32,
    /// Cycles of one tick of the UART's 16x clock (`clk16_cnt + 1`) and the
    /// depth of its transmit FIFO.
    pub uart_tick: u64,
    pub uart_tx_depth: usize,
    /// Clock cycles per tick of the microsecond counter (`clk_freq / 10^6`).
    pub us_divider: u64,
    /// The cycle counter's value when the first bytecode is fetched (the
    /// microcode's start-up before it).
    pub start_cycle: u64,
    /// Cycles from the fetch of `Native.rd` (`Native.wr`) to the cycle in
    /// which the I/O device sees the read (the write).
    pub io_read_at: u64,
    pub io_write_at: u64,
    /// The costs the timing table cannot hold: bytecodes whose cycles
    /// depend on their data, and accesses that reach the I/O devices.
    pub microcode: MicrocodeCosts,
}

/// What the virtual board takes from the tree's microcode itself.
#[derive(Debug, Clone)]
pub struct MicrocodeCosts {
    pub exec: jopcal_jop::microcode::exec::Exec,
    /// The microcode entry of each opcode whose path depends on its operands.
    pub by_data: Vec<Option<EntryId>>,
    /// The microcode's lock counter (`monitorexit` branches on it).
    pub lock_count: Option<jopcal_jop::microcode::exec::VarId>,
    /// Cycles of an opcode when its data access reaches an I/O device.
    pub io: Vec<Option<u32>>,
    /// Opcodes the virtual board would run itself (as JopSim does) that
    /// the processor's microcode sends to their Java routine (`sys_noim`).
    pub in_java: Vec<bool>,
    /// The values the stack pointer takes while each opcode runs (see
    /// `jopcal_jop::microcode::SpRange`), for the overflow check.
    pub sp: Vec<Option<jopcal_jop::microcode::SpRange>>,
    /// What each opcode's microcode writes into the stack memory, per path.
    pub ram: Vec<RamScripts>,
    /// The microcode entry of each opcode that has microcode of its own:
    /// followed again when its memory access raises an exception.
    pub entries: Vec<Option<EntryId>>,
    /// The same compiled per opcode for the common cases (see
    /// [`MicrocodeCosts::new`]), and the board's one look-up per bytecode
    /// into them.
    pub plans: Box<[StackStep; 256]>,
    pub steps: Box<[Step; 256]>,
    /// Each [`StackStep::Fixed`] plan as the board runs it.
    pub fixed: Box<[Option<FixedPlan>; 256]>,
    /// Each [`Step::Frame`]'s plan.
    pub frames: Box<[Option<FramePlan>; 256]>,
}

/// `Native.setSP`'s bytecode.
pub const SET_SP: u8 = 216;

impl MicrocodeCosts {
    /// The microcode's variables a run is given: its lock counter at
    /// `count`, where the microcode has one.
    pub fn lock_var(&self, count: i32) -> Option<(jopcal_jop::microcode::exec::VarId, i32)> {
        self.lock_count.map(|v| (v, count))
    }

    /// The costs, with each opcode's stack-memory scripts compiled into a
    /// [`StackStep`] (an opcode the microcode sends to its Java routine
    /// invokes it: the general bookkeeping).
    pub fn new(
        exec: jopcal_jop::microcode::exec::Exec,
        by_data: Vec<Option<EntryId>>,
        io: Vec<Option<u32>>,
        in_java: Vec<bool>,
        sp: Vec<Option<jopcal_jop::microcode::SpRange>>,
        ram: Vec<RamScripts>,
        entries: Vec<Option<EntryId>>,
    ) -> MicrocodeCosts {
        let plans: Box<[StackStep; 256]> = Box::new(std::array::from_fn(|op| match ram.get(op) {
            Some(r) if !in_java.get(op).copied().unwrap_or(false) => StackStep::of(r),
            _ => StackStep::General,
        }));
        let mut steps: Box<[Step; 256]> = Box::new(std::array::from_fn(|op| match &plans[op] {
            StackStep::Quiet => Step::Quiet,
            StackStep::Pop { net } => Step::Pop(*net as i8),
            StackStep::Fixed { .. } => Step::Fixed,
            StackStep::ByPath { .. } => Step::ByPath,
            StackStep::General => Step::General,
        }));
        let fixed = Box::new(std::array::from_fn(|op| match &plans[op] {
            StackStep::Fixed { net, writes } => FixedPlan::of(*net, writes),
            _ => None,
        }));
        let frames: Box<[Option<FramePlan>; 256]> = Box::new(std::array::from_fn(|op| match &plans[op] {
            // `Native.setSP` moves the pointer itself: the general case's.
            StackStep::General if op != usize::from(SET_SP) => ram.get(op).and_then(FramePlan::of),
            _ => None,
        }));
        for (step, frame) in steps.iter_mut().zip(frames.iter()) {
            if frame.is_some() {
                *step = Step::Frame;
            }
        }
        MicrocodeCosts {
            fixed,
            frames,
            lock_count: exec.var("lockcnt"),
            exec,
            by_data,
            io,
            in_java,
            sp,
            ram,
            entries,
            plans,
            steps,
        }
    }
}

/// Words below the top of the stack whose values a bytecode's bookkeeping
/// keeps from before it runs (a long comparison pops 4).
pub const NEAR_WORDS: usize = 8;
/// Most writes above the stack a [`StackStep::Fixed`] makes.
pub const FIXED_WRITES: usize = 8;

/// An opcode's stack-memory bookkeeping, compiled from its scripts: most
/// bytecodes take one path with a fixed push or pop and write only near the
/// top, and the board runs those without interpreting the script.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StackStep {
    /// Nothing above the stack changes: no write there, no word leaves.
    Quiet,
    /// One path that pops `-net` words in all and writes nothing above the
    /// stack: the words that leave it keep their values in the memory.
    Pop { net: i32 },
    /// One path, `net` words pushed (negative: popped), and the writes that
    /// outlast it above the stack, each at `S + k` (`S`: the top's address
    /// when the bytecode starts) with a value known before it runs.
    Fixed { net: i32, writes: Vec<(i32, FixedValue)> },
    /// Several paths with the same push or pop (a long shift's, by its
    /// count), each writing only values the words near the top give: the
    /// board stores the writes of the path the microcode took, which it
    /// learns as it prices the bytecode by its operands.
    ByPath {
        net: i32,
        paths: Vec<(PathKey, Vec<(i32, NearValue)>)>,
    },
    /// Several paths that differ otherwise, a written stack pointer, or a
    /// value from deep in the stack: the script is interpreted.
    General,
}

/// A [`StackStep`] in two bytes: what the board looks up per bytecode
/// (a pop's words: at most [`NEAR_WORDS`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Step {
    Quiet,
    Pop(i8),
    /// The words pushed and the writes are the plan's.
    Fixed,
    /// The plan's writes of the path taken.
    ByPath,
    /// A bytecode that moves the frame (an invoke, a return, a dispatch to
    /// a Java routine) whose script compiles to a [`FramePlan`].
    Frame,
    General,
}

/// Most writes a [`FramePlan`] makes (the processors met make eight).
pub const FRAME_WRITES: usize = 12;

/// The stack-memory bookkeeping of a bytecode that moves the frame (its
/// one path writes the stack pointer: an invoke, a return, a dispatch to a
/// Java routine), compiled from its script: its writes that can store
/// something, in order, each value known from the bytecode's start and the
/// top it ends at. Where a write lands (whether it outlasts the bytecode)
/// depends on the frame, so the board decides that as it runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FramePlan {
    /// The writes, the first `len`.
    pub writes: [(jopcal_jop::microcode::stackram::At, FrameValue); FRAME_WRITES],
    pub len: usize,
    /// The writes that can outlast an invoke (by their index in `writes`,
    /// in order, the first `invoke_len`): an invoke ends `locals + 5`
    /// words above its start with its fresh locals just above it, so a
    /// write at `S + k` outlasts it only for `k >= 1`, and one at `F + k`
    /// only above the top two (`k >= -1`) or in the fresh locals
    /// (`k <= -5`).
    pub invoke_writes: [u8; FRAME_WRITES],
    pub invoke_len: usize,
}

/// What a [`FramePlan`]'s write stores.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FrameValue {
    /// The stack's word at `S + k` when the bytecode starts (`-k` below
    /// [`NEAR_WORDS`]).
    Entry(i32),
    Register(jopcal_jop::microcode::stackram::Register),
    Constant(i32),
    /// The address the write's place names (`S + k`, or `F + k` with `F`
    /// the top at the end).
    Address(jopcal_jop::microcode::stackram::At),
}

impl FramePlan {
    /// The plan of `scripts`, where they have one path that writes the
    /// stack pointer and every value a write stores is known without
    /// reading the memory; else `None` (the script is interpreted).
    pub fn of(scripts: &RamScripts) -> Option<FramePlan> {
        use jopcal_jop::microcode::stackram::Value;
        let [(_, script)] = scripts.paths.as_slice() else {
            return None;
        };
        if scripts.net.is_some() {
            return None;
        }
        let mut plan = FramePlan {
            writes: [(jopcal_jop::microcode::stackram::At::Start(0), FrameValue::Constant(0)); FRAME_WRITES],
            len: 0,
            invoke_writes: [0; FRAME_WRITES],
            invoke_len: 0,
        };
        for &(at, value) in &script.writes {
            let v = match value {
                // A reload put back stores nothing.
                Value::Unchanged => continue,
                Value::Entry(e) if (0..NEAR_WORDS as i32).contains(&-e) => FrameValue::Entry(e),
                Value::Register(r) => FrameValue::Register(r),
                Value::Constant(c) => FrameValue::Constant(c),
                // What the microcode computes itself is not followed (as
                // the interpreted script stores it).
                Value::Unknown => FrameValue::Constant(0),
                Value::Address(a) => FrameValue::Address(a),
                _ => return None,
            };
            *plan.writes.get_mut(plan.len)? = (at, v);
            let on_invoke = match at {
                jopcal_jop::microcode::stackram::At::Start(k) => k >= 1,
                jopcal_jop::microcode::stackram::At::End(k) => k >= -1 || k <= -5,
            };
            if on_invoke {
                plan.invoke_writes[plan.invoke_len] = plan.len as u8;
                plan.invoke_len += 1;
            }
            plan.len += 1;
        }
        Some(plan)
    }
}

/// A [`StackStep::Fixed`] plan as the board runs it: what the memory holds
/// after the bytecode, address by address (the last write to each wins, and
/// every value is known before the bytecode runs, so their order does not
/// matter), split into one range of words that keep the stack's values from
/// before it ran (the words it pops, and writes of a word's own value),
/// copied at once, and the other writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FixedPlan {
    pub net: i32,
    /// `S + lo ..= S + hi` take the stack's words there as the bytecode
    /// found them (none when `lo > hi`).
    pub copy: (i32, i32),
    /// The other writes, at `S + k`, the first `others_len`.
    pub others: [(i32, FixedValue); FIXED_WRITES],
    pub others_len: usize,
    /// The highest `k` written.
    pub reach: i32,
}

impl FixedPlan {
    /// The plan of a bytecode that pushes `net` words (negative: pops) and
    /// then makes `writes`; `None` where its writes do not fit.
    pub fn of(net: i32, writes: &[(i32, FixedValue)]) -> Option<FixedPlan> {
        let mut last = std::collections::BTreeMap::new();
        // The popped words, from `S + net - 1` to `S - 2`, keep their values.
        for k in net - 1..=-2 {
            last.insert(k, FixedValue::Entry(k));
        }
        for &(k, v) in writes {
            last.insert(k, v);
        }
        let own = |k: i32| last.get(&k) == Some(&FixedValue::Entry(k));
        // The longest run of words that keep their own values.
        let mut copy = (1, 0);
        for &k in last.keys() {
            if own(k) {
                let mut hi = k;
                while own(hi + 1) {
                    hi += 1;
                }
                if hi - k > copy.1 - copy.0 {
                    copy = (k, hi);
                }
            }
        }
        let rest: Vec<(i32, FixedValue)> = last
            .iter()
            .filter(|(k, _)| !(copy.0..=copy.1).contains(*k))
            .map(|(k, v)| (*k, *v))
            .collect();
        if rest.len() > FIXED_WRITES || last.keys().any(|k| -k >= NEAR_WORDS as i32) {
            return None;
        }
        let mut others = [(0, FixedValue::Constant(0)); FIXED_WRITES];
        others[..rest.len()].copy_from_slice(&rest);
        Some(FixedPlan {
            net,
            copy,
            others,
            others_len: rest.len(),
            reach: last.keys().copied().max().unwrap_or(0).max(0),
        })
    }
}

/// A value a [`StackStep::ByPath`] write stores: known from the words near
/// the top when the bytecode starts, whichever path it takes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NearValue {
    /// The stack's word at `S + k` (`-k` below [`NEAR_WORDS`]).
    Entry(i32),
    Constant(i32),
    /// `S + k` as a value.
    Address(i32),
}

/// A value a [`StackStep::Fixed`] write stores.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FixedValue {
    /// The stack's word at `S + k` when the bytecode starts (`-k` below
    /// [`NEAR_WORDS`]).
    Entry(i32),
    /// The memory's word at `S + k` (the stack's below its top two).
    Memory(i32),
    /// The memory's word at `vp + n`, or at `vp` plus the first operand byte.
    Local(i32),
    LocalOperand,
    /// A register as it is when the bytecode starts.
    Register(jopcal_jop::microcode::stackram::Register),
    /// A constant, or `S + k` as a value.
    Constant(i32),
    Address(i32),
}

impl StackStep {
    /// Compiles `scripts`.
    pub fn of(scripts: &RamScripts) -> StackStep {
        if scripts.is_quiet() {
            return StackStep::Quiet;
        }
        let Some(net) = scripts.net else {
            return StackStep::General;
        };
        // The words that leave the stack must lie in the kept window.
        if 1 - net >= NEAR_WORDS as i32 || net > NEAR_WORDS as i32 {
            return StackStep::General;
        }
        match scripts.paths.as_slice() {
            [(_, script)] => match fixed_writes(script, net) {
                Some(writes) if writes.is_empty() => StackStep::Pop { net },
                Some(writes) => StackStep::Fixed { net, writes },
                None => StackStep::General,
            },
            [] => StackStep::General,
            several => {
                let near_only = |(key, script): &(PathKey, RamScript)| {
                    let writes = fixed_writes(script, net)?
                        .into_iter()
                        .map(|(k, v)| match v {
                            FixedValue::Entry(e) => Some((k, NearValue::Entry(e))),
                            FixedValue::Constant(c) => Some((k, NearValue::Constant(c))),
                            FixedValue::Address(a) => Some((k, NearValue::Address(a))),
                            _ => None,
                        })
                        .collect::<Option<Vec<_>>>()?;
                    Some((*key, writes))
                };
                // The path is learnt as the bytecode is priced by its data;
                // one the board does not learn takes the general case.
                match several.iter().map(near_only).collect::<Option<Vec<_>>>() {
                    Some(paths) => StackStep::ByPath { net, paths },
                    None => StackStep::General,
                }
            }
        }
    }
}

/// The writes of `script` (a path pushing `net` words in all) that outlast
/// it above the stack, each at `S + k` with a value known before it runs;
/// `None` when a value is not (or there are more than [`FIXED_WRITES`]).
fn fixed_writes(script: &RamScript, net: i32) -> Option<Vec<(i32, FixedValue)>> {
    use jopcal_jop::microcode::stackram::{At, Value};
    let start = |at: At| match at {
        At::Start(k) => k,
        At::End(k) => net + k,
    };
    let mut writes = Vec::new();
    for (at, value) in &script.writes {
        let k = start(*at);
        // Below the top two at the end the memory is the stack.
        if k <= net - 2 {
            continue;
        }
        let v = match *value {
            Value::Unchanged => continue,
            Value::Entry(e) if (0..NEAR_WORDS as i32).contains(&-e) => FixedValue::Entry(e),
            Value::Memory(m) => FixedValue::Memory(start(m)),
            Value::Local(n) => FixedValue::Local(n),
            Value::LocalOperand => FixedValue::LocalOperand,
            Value::Register(r) => FixedValue::Register(r),
            Value::Constant(c) => FixedValue::Constant(c),
            Value::Unknown => FixedValue::Constant(0),
            Value::Address(a) => FixedValue::Address(start(a)),
            _ => return None,
        };
        writes.push((k, v));
    }
    (writes.len() <= FIXED_WRITES).then_some(writes)
}

/// An opcode's writes into the stack memory above the stack (see
/// `jopcal_jop::microcode::stackram`), for each path its microcode can take.
#[derive(Debug, Clone, Default)]
pub struct RamScripts {
    pub paths: Vec<(PathKey, RamScript)>,
    /// With more than one path: the microcode entry to run on the operands
    /// to learn which.
    pub entry: Option<EntryId>,
    /// The words every path pushes in all (negative: pops), or `None` when
    /// they differ or a path writes the stack pointer.
    pub net: Option<i32>,
}

impl RamScripts {
    pub fn new(paths: Vec<(PathKey, RamScript)>, entry: Option<EntryId>) -> RamScripts {
        let net = paths.first().and_then(|(_, s)| s.net);
        let net = net.filter(|n| paths.iter().all(|(_, s)| s.net == Some(*n)));
        let entry = if paths.len() > 1 { entry } else { None };
        RamScripts { paths, entry, net }
    }

    /// Whether the opcode leaves the memory above the stack alone: it writes
    /// nothing there and no word leaves the stack.
    #[inline(always)]
    pub fn is_quiet(&self) -> bool {
        self.net.is_some_and(|n| n >= 0) && self.paths.iter().all(|(_, s)| s.writes.is_empty())
    }

    /// The path the bytecode took: `known`, else what `find` says, else the first.
    pub fn path(&self, known: Option<PathKey>, find: impl FnOnce() -> Option<PathKey>) -> &RamScript {
        static NONE: RamScript = RamScript {
            writes: Vec::new(),
            net: Some(0),
        };
        match self.paths.len() {
            0 => &NONE,
            1 => &self.paths[0].1,
            _ => {
                let key = known.or_else(find);
                key.and_then(|k| self.paths.iter().find(|(pk, _)| *pk == k))
                    .map_or(&self.paths[0].1, |(_, s)| s)
            }
        }
    }
}

/// The default cycle limit: 2^40 cycles (3 hours of a 100 MHz board).
pub const DEFAULT_CYCLE_LIMIT: u64 = 1 << 40;

impl BoardConfig {
    pub fn load(path: &Path, overrides: &[String]) -> Result<BoardConfig, ConfigError> {
        let mut model = TimingModel::load(path)?;
        model.apply_overrides(overrides)?;
        Self::from_model(model)
    }

    pub fn from_model(model: TimingModel) -> Result<BoardConfig, ConfigError> {
        let p = model.params();
        let need = |name: &'static str| -> Result<f64, ConfigError> {
            p.get(name).copied().ok_or_else(|| ConfigError::MissingParameter {
                model: model.path.clone(),
                name,
            })
        };
        let cache = CacheConfig {
            bytes: need("method_cache_bytes")? as u32,
            blocks: need("method_cache_blocks")? as u32,
        };
        cache.validate().map_err(|why| ConfigError::Cache {
            model: model.path.clone(),
            why,
        })?;
        let clock_mhz = need("clock_mhz")?;
        Ok(BoardConfig {
            model,
            cache,
            clock_mhz,
            cycle_limit: DEFAULT_CYCLE_LIMIT,
            processor: None,
        })
    }
}

#[cfg(test)]
mod tests {

    #[test]
    fn a_fixed_plan_copies_the_words_that_keep_their_values_at_once() {
        // A long store's: pops two, writes back the top four it found and vp above.
        let writes = [
            (-1, FixedValue::Entry(-1)),
            (0, FixedValue::Entry(0)),
            (1, FixedValue::Register(Register::Vp)),
            (-3, FixedValue::Entry(-3)),
        ];
        let plan = FixedPlan::of(-2, &writes).expect("fits");
        assert_eq!(plan.copy, (-3, 0));
        assert_eq!(
            &plan.others[..plan.others_len],
            &[(1, FixedValue::Register(Register::Vp))]
        );
        assert_eq!(plan.reach, 1);
        // A write over a popped word wins over its keeping; the run is split.
        let plan = FixedPlan::of(-3, &[(-3, FixedValue::Constant(7))]).expect("fits");
        assert_eq!(plan.copy, (-4, -4));
        assert_eq!(
            &plan.others[..plan.others_len],
            &[(-3, FixedValue::Constant(7)), (-2, FixedValue::Entry(-2))]
        );
        // A push that writes above: nothing kept.
        let plan = FixedPlan::of(2, &[(1, FixedValue::Local(0))]).expect("fits");
        assert!(plan.copy.0 > plan.copy.1);
        assert_eq!(plan.others_len, 1);
    }
    use super::*;
    use jopcal_jop::microcode::stackram::{At, Register, Value};

    fn one_path(net: Option<i32>, writes: Vec<(At, Value)>) -> RamScripts {
        RamScripts::new(vec![(PathKey::default(), RamScript { writes, net })], None)
    }

    #[test]
    fn a_frames_script_compiles_to_its_writes_that_store_something() {
        // An invoke's: the writes in order, a reload put back dropped, what
        // the microcode computes itself stored as 0 (as interpreted).
        let invoke = one_path(
            None,
            vec![
                (At::Start(-1), Value::Entry(-1)),
                (At::Start(1), Value::Address(At::Start(0))),
                (At::End(-6), Value::Unchanged),
                (At::End(-4), Value::Unknown),
                (At::End(-2), Value::Register(Register::Vp)),
            ],
        );
        let plan = FramePlan::of(&invoke).expect("compiles");
        // On an invoke only the write into the first fresh local can last.
        assert_eq!(&plan.invoke_writes[..plan.invoke_len], &[1]);
        assert_eq!(
            &plan.writes[..plan.len],
            &[
                (At::Start(-1), FrameValue::Entry(-1)),
                (At::Start(1), FrameValue::Address(At::Start(0))),
                (At::End(-4), FrameValue::Constant(0)),
                (At::End(-2), FrameValue::Register(Register::Vp)),
            ]
        );
        // Not a frame's: a fixed push or pop, several paths, a value read
        // from the memory or from deep in the stack, too many writes.
        assert_eq!(FramePlan::of(&one_path(Some(-1), vec![])), None);
        let two = RamScripts::new(
            vec![
                (
                    PathKey::default(),
                    RamScript {
                        writes: vec![],
                        net: None,
                    },
                ),
                (
                    PathKey::default(),
                    RamScript {
                        writes: vec![],
                        net: None,
                    },
                ),
            ],
            None,
        );
        assert_eq!(FramePlan::of(&two), None);
        let memory = one_path(None, vec![(At::End(1), Value::Memory(At::Start(0)))]);
        assert_eq!(FramePlan::of(&memory), None);
        let deep = one_path(None, vec![(At::End(1), Value::Entry(-(NEAR_WORDS as i32)))]);
        assert_eq!(FramePlan::of(&deep), None);
        let many = one_path(None, vec![(At::End(1), Value::Constant(1)); FRAME_WRITES + 1]);
        assert_eq!(FramePlan::of(&many), None);
    }

    #[test]
    fn a_push_or_pop_with_no_writes_is_quiet_or_a_pop() {
        assert_eq!(StackStep::of(&one_path(Some(1), vec![])), StackStep::Quiet);
        assert_eq!(StackStep::of(&one_path(Some(0), vec![])), StackStep::Quiet);
        assert_eq!(StackStep::of(&one_path(Some(-2), vec![])), StackStep::Pop { net: -2 });
    }

    #[test]
    fn fixed_writes_are_start_relative_and_drop_what_lies_in_the_stack_at_the_end() {
        let s = one_path(
            Some(-2),
            vec![
                (At::Start(-1), Value::Entry(-1)),
                // S - 4 is below the top two at the end (S - 2, S - 3): the stack's.
                (At::Start(-4), Value::Entry(-4)),
                (At::Start(0), Value::Unchanged),
                (At::End(2), Value::Register(Register::Vp)),
                (At::Start(1), Value::Memory(At::End(1))),
                (At::Start(2), Value::Unknown),
            ],
        );
        assert_eq!(
            StackStep::of(&s),
            StackStep::Fixed {
                net: -2,
                writes: vec![
                    (-1, FixedValue::Entry(-1)),
                    (0, FixedValue::Register(Register::Vp)),
                    (1, FixedValue::Memory(-1)),
                    // What the microcode computes itself is not followed, as in the general case.
                    (2, FixedValue::Constant(0)),
                ]
            }
        );
    }

    fn two_paths(second: Vec<(At, Value)>, second_net: i32) -> RamScripts {
        RamScripts::new(
            vec![
                (
                    PathKey::default(),
                    RamScript {
                        writes: vec![(At::Start(-1), Value::Entry(-1))],
                        net: Some(-1),
                    },
                ),
                (
                    PathKey::default().then(true),
                    RamScript {
                        writes: second,
                        net: Some(second_net),
                    },
                ),
            ],
            None,
        )
    }

    #[test]
    fn paths_that_write_what_the_top_words_give_are_compiled_per_path() {
        // A long shift's: by its count, one of two paths with the same pop.
        let shift = two_paths(
            vec![
                (At::Start(0), Value::Unknown),
                (At::Start(-2), Value::Constant(0)),
                (At::Start(-1), Value::Entry(-2)),
                (At::End(2), Value::Address(At::Start(0))),
            ],
            -1,
        );
        assert_eq!(
            StackStep::of(&shift),
            StackStep::ByPath {
                net: -1,
                paths: vec![
                    (PathKey::default(), vec![(-1, NearValue::Entry(-1))]),
                    (
                        PathKey::default().then(true),
                        vec![
                            (0, NearValue::Constant(0)),
                            (-2, NearValue::Constant(0)),
                            (-1, NearValue::Entry(-2)),
                            (1, NearValue::Address(0)),
                        ]
                    ),
                ]
            }
        );
    }

    #[test]
    fn frames_several_paths_deep_words_and_long_pops_stay_general() {
        let frame = one_path(None, vec![(At::End(-2), Value::Register(Register::Vp))]);
        assert_eq!(StackStep::of(&frame), StackStep::General);
        // Paths that differ in their push, or one that writes a register's value.
        assert_eq!(StackStep::of(&two_paths(vec![], -2)), StackStep::General);
        let register = two_paths(vec![(At::Start(0), Value::Register(Register::Vp))], -1);
        assert_eq!(StackStep::of(&register), StackStep::General);
        let deep = one_path(Some(0), vec![(At::Start(0), Value::Entry(-9))]);
        assert_eq!(StackStep::of(&deep), StackStep::General);
        assert_eq!(StackStep::of(&one_path(Some(-7), vec![])), StackStep::General);
    }
}
