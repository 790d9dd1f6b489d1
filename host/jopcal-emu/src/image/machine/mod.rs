//! The machine an image runs on: JOP's word-addressed memory (the image
//! loaded from word 0, wrapping at its size as the tree's simulator's does,
//! which the runtime's memory probe relies on), the 256-word stack with the
//! registers `sp`, `vp`, `cp`, `mp` and a method-relative `pc`, the method
//! cache, the I/O devices at JOP's addresses, and the interpreter of every
//! bytecode JOP executes in hardware. Bytecodes JOP implements in Java are
//! invoked through the runtime's jump table (`jjp + 2 * opcode`), exceptions
//! through its helper (`jjhp + 6`), exactly as the tree's simulator does, so
//! that the runtime's own Java code (allocation, switches, athrow) runs and
//! is timed like any other.
//!
//! Facts: `docs/jop-image.md` (the image, the frames, the I/O map, the
//! simulator's behaviour, each with the tree file it comes from).

mod calls;
mod code;
mod fast;
pub(crate) mod heap;
mod interp;
mod memo;
mod memory;
mod stack;
mod stackmem;
mod trace;
pub(crate) mod uart;

pub use heap::{heap_at_region_start, HeapRead, HeapWatch, HEAP_READS_KEPT};
use trace::Tracer;
pub use trace::{region_by_opcode, CounterRead, EventSink, MethodTally, OpTallies, OpTally, COUNTER_READS_KEPT};

use super::cache::VarBlockCache;
use super::timing::{CycleTable, INVOKESUPER};
use super::ImageConfig;
use crate::config::Processor;
use crate::error::EmuError;
use jopcal_jop::microcode::access::{AccessCase, Raise};
use uart::TxUart;

/// Main memory: 1 MB of words, as the tree's simulator has.
pub const MEMORY_WORDS: i32 = 1024 * 1024 / 4;
/// The stack's size in words (`Const.STACK_SIZE`) and where it starts (`Const.STACK_OFF`).
const STACK_WORDS: usize = 256;
const STACK_OFF: i32 = 64;
/// Words past the end of memory (and of the scratchpad) the runtime's probe may touch.
const PROBE_SLACK: i32 = 256;
const SCRATCHPAD: i32 = 0x40_0000;
const SCRATCHPAD_WORDS: i32 = 256;

/// I/O addresses (`Const.IO_*`, base 0xffffff80).
mod io {
    pub const LOWEST: i32 = -128;
    pub const CNT: i32 = -128;
    pub const US_CNT: i32 = -127;
    pub const EXCPT: i32 = -124;
    pub const CPU_ID: i32 = -122;
    pub const INTMASK: i32 = -120;
    pub const CPUCNT: i32 = -117;
    pub const PERFCNT: i32 = -116;
    pub const STATUS: i32 = -112;
    pub const UART: i32 = -111;
    pub const USB_STATUS: i32 = -96;
    pub const SIM_CACHE_FLUSH: i32 = -51;
    pub const SIM_CACHE_COST: i32 = -52;
}

/// Exception reasons the hardware raises (`Const.EXC_*`).
const EXC_NP: i32 = 2;
const EXC_AB: i32 = 3;
const EXC_DIVZ: i32 = 8;

const SYS_EXC: u8 = 241;

/// What a finished run did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ImageRun {
    /// The cycle counter when the program ended.
    pub cycles: u64,
    /// Bytecodes executed since the runtime reset the statistics (just before `main`).
    pub bytecodes: u64,
    /// Bytecodes executed in all.
    pub all_bytecodes: u64,
    /// Cycles the method cache added (loads not hidden behind an invoke or return).
    pub cache_cycles: u64,
    /// Per method, by the word address of its code, when the run was
    /// traced (see [`MethodTally`]).
    pub by_method: Option<std::collections::BTreeMap<u32, MethodTally>>,
    /// Every read of the microsecond counter, in order: the word address of
    /// the reading method's code and the value read (the first
    /// [`CLOCK_READS_KEPT`]). A host run of the same program can read the
    /// same clock from it.
    pub clock_reads: Vec<(u32, i32)>,
    /// Every read of the cycle counter with the opcodes' tallies before it,
    /// when the run was traced (the first [`COUNTER_READS_KEPT`]).
    pub counter_reads: Vec<CounterRead>,
    /// The heap at each read of the cycle counter, where the run watched it
    /// (the first [`HEAP_READS_KEPT`]).
    pub heap_reads: Vec<HeapRead>,
}

/// The microsecond counter's reads a run keeps (a busy wait reads it in a loop).
pub const CLOCK_READS_KEPT: usize = 1 << 16;

/// The machine's whole state.
pub struct Machine<'c> {
    mem: Vec<i32>,
    scratch: Vec<i32>,
    /// The external memory's words (addresses wrap at it).
    mem_words: i32,
    /// The image's words as bytes, big-endian: where bytecodes are fetched from.
    code: Vec<u8>,
    stack: Box<[i32]>,
    sp: i32,
    vp: i32,
    cp: i32,
    mp: i32,
    /// Bytecode offset in the current method.
    pc: i32,
    /// Byte address of the current method's code in `code`, and its length in bytes.
    code_at: usize,
    code_len: usize,
    jjp: i32,
    jjhp: i32,
    moncnt: i32,
    global_lock: bool,
    /// An exception raised: the next bytecode fetched becomes the helper's invoke.
    pending_exception: bool,
    /// The loop's one check per bytecode: it stops to look when the cycles
    /// reach this (the cycle limit plus one, or 0 once the program exited
    /// or raised an exception).
    attention_at: u64,
    exception_reason: i32,
    /// The simulator's `heap` register (the words loaded), for `jopsys_rdint 2`.
    heap: i32,
    /// The simulator's address translation during a copy (`jopsys_memcpy`).
    copy_src: i32,
    copy_pos: i32,
    cache: VarBlockCache,
    table: &'c CycleTable,
    /// The table's cycles per opcode as it starts (`table.fixed`), kept in
    /// the machine: every bytecode reads its own.
    fixed: [u32; 256],
    cfg: &'c ImageConfig,
    /// The cycle counter (what the program reads at `IO_CNT`, in 64 bits).
    cycles: u64,
    /// The cycles when the running bytecode was fetched.
    fetched_at: u64,
    /// The stack pointer below which no bytecode can reach the processor's
    /// overflow mark (never, as JopSim).
    sp_watch: i32,
    /// Bytecodes executed, and how many of them before the statistics reset.
    executed: u64,
    executed_before_reset: u64,
    cache_cycles: u64,
    /// The last nine characters written to the UART (`JVM exit!` ends the run).
    tail: [u8; 9],
    exited: bool,
    uart: &'c mut dyn FnMut(&[u8]),
    line: Vec<u8>,
    trace: Option<Tracer<'c>>,
    /// The processor the board is, or `None` for JopSim's timing.
    processor: Option<&'c Processor>,
    /// The processor's stack-memory steps per opcode (its
    /// `microcode.steps`, kept at hand: a pop's handler reads its words).
    steps: Option<&'c [crate::config::Step; 256]>,
    /// Each opcode's handler, for the way the processor keeps its stack
    /// memory for it (see `interp::handlers`).
    handlers: [interp::Handler; 256],
    /// What a dispatch to a Java routine that misses the cache adds, by
    /// opcode and routine size, as computed (see `charge_dispatch_load`).
    dispatch_loads: std::collections::HashMap<(u8, u32), u64>,
    /// The error a handler stopped the machine with (see `interp::Handler`).
    stopped: Option<EmuError>,
    /// What the fast path may do with each opcode (see `fast`).
    fast: [fast::FastStep; 256],
    /// The fast path's bytecodes, decoded per code byte address as first
    /// fetched (see `fast::Decoded`).
    decoded: Vec<fast::Decoded>,
    /// Its UART's transmitter (the processor only: JopSim's is always ready).
    tx: Option<TxUart>,
    /// The processor's stack memory above the stack (see `stackmem`); the
    /// processor only.
    ram: Option<Box<[i32]>>,
    /// The microcode path the running bytecode took, where its operands decided.
    path: Option<jopcal_jop::microcode::PathKey>,
    /// The paths of bytecodes priced by their operands, as met (see
    /// `interp::price_by_data`).
    paths: memo::PathMemo,
    /// Per opcode: times the top word alone did not decide the path (tried
    /// no more after a few).
    by_top_misses: [u8; 256],
    /// The stack memory's writes of the running bytecode (kept for its allocation).
    ram_pending: Vec<(i32, i32)>,
    /// What the memory interface met on the bytecode under way that its
    /// normal cycles do not cover (it raised, a hardware object), for its
    /// processor's cycles.
    access_case: Option<AccessCase>,
    /// The memory interface's index register (`index` in `mem_sc.vhd`): an
    /// array access's index, a field access's offset, or what `stidx` (the
    /// runtime's `Native.getField` and kin) wrote.
    mem_index: i32,
    /// The processor's memory interface still holds a `stidx` (its
    /// `was_a_stidx`): the access after it ended in an exception, which
    /// does not clear the marker, so the next static access takes its
    /// address from the index register and the next field access its
    /// offset, instead of from the bytecode's operand. Never set when the
    /// board times as JopSim.
    index_from_stidx: bool,
    /// An exception the processor takes after the next bytecode.
    deferred_exception: Option<i32>,
    /// The locals past the arguments of the frame the running bytecode made
    /// (first, last; empty when it made none).
    fresh_locals: (i32, i32),
    /// The last bytecode's final push reached the overflow mark: the RTL
    /// raises it in the next bytecode (the callee's first, after an invoke).
    overflow_next: bool,
    /// The microsecond counter's reads so far (see [`ImageRun::clock_reads`]).
    clock_reads: Vec<(u32, i32)>,
    /// Where the collector's state is, to read at each cycle-counter read.
    heap_watch: Option<HeapWatch>,
    /// The heap at each cycle-counter read so far (see [`ImageRun::heap_reads`]).
    heap_reads: Vec<HeapRead>,
}

impl<'c> Machine<'c> {
    /// Loads `words` (a whole image) into memory.
    pub fn load(
        words: &[u32],
        cfg: &'c ImageConfig,
        table: &'c CycleTable,
        uart: &'c mut dyn FnMut(&[u8]),
    ) -> Result<Machine<'c>, EmuError> {
        if words.len() < 8 {
            return Err(EmuError::Load(format!(
                "word 0: an image of {} words is too short to be a JOP image",
                words.len()
            )));
        }
        let special = words[1] as usize;
        if special < 2 || special + 6 > words.len() {
            return Err(EmuError::Load(format!(
                "word 1: the special pointers at word {special} lie outside the image of {} words: not a JOP image (a class bundle of jopcal's?)",
                words.len()
            )));
        }
        let processor = cfg.processor.as_deref();
        let mem_words = processor.map_or(MEMORY_WORDS, |p| p.memory_words);
        if words.len() > mem_words as usize {
            return Err(EmuError::Load(format!(
                "word 0: the image has {} words, more than the processor's {mem_words} words of memory",
                words.len()
            )));
        }
        let mut mem = vec![0i32; mem_words as usize];
        for (m, w) in mem.iter_mut().zip(words) {
            *m = *w as i32;
        }
        let code: Vec<u8> = words.iter().flat_map(|w| w.to_be_bytes()).collect();
        let stack: Box<[i32]> = match processor {
            Some(p) => p.stack_init.clone().into_boxed_slice(),
            None => vec![0; STACK_WORDS].into_boxed_slice(),
        };
        let scratch = vec![0; processor.map_or(SCRATCHPAD_WORDS, |p| p.scratchpad_words) as usize];
        Ok(Machine {
            mem,
            scratch,
            mem_words,
            code,
            stack,
            sp: processor.map_or(STACK_OFF, |p| p.initial_sp),
            vp: 0,
            cp: 0,
            mp: 0,
            pc: 0,
            code_at: 0,
            code_len: 0,
            jjp: words[special + 1] as i32,
            jjhp: words[special + 2] as i32,
            moncnt: 0,
            global_lock: false,
            pending_exception: false,
            attention_at: cfg.cycle_limit.saturating_add(1),
            exception_reason: 0,
            heap: words.len() as i32,
            copy_src: 0,
            copy_pos: 0,
            cache: VarBlockCache::new(cfg.cache),
            table,
            fixed: table.fixed,
            cfg,
            cycles: 0,
            fetched_at: 0,
            // No bytecode moves the pointer more than 8 words past its ends.
            sp_watch: processor.map_or(i32::MAX, |p| p.overflow_at - 8),
            executed: 0,
            executed_before_reset: 0,
            cache_cycles: 0,
            tail: [0; 9],
            exited: false,
            uart,
            line: Vec::new(),
            trace: None,
            processor,
            steps: processor.map(|p| &*p.microcode.steps),
            handlers: interp::handlers(processor.map(|p| &*p.microcode.steps)),
            stopped: None,
            fast: fast::fast_steps(processor),
            decoded: vec![fast::Decoded::UNDECODED; words.len() * 4],
            tx: processor.map(|p| TxUart::new(p.uart_tick, p.uart_tx_depth)),
            ram: processor.map(|p| p.stack_init.clone().into_boxed_slice()),
            path: None,
            paths: memo::PathMemo::new(),
            by_top_misses: [0; 256],
            ram_pending: Vec::new(),
            dispatch_loads: std::collections::HashMap::new(),
            access_case: None,
            mem_index: 0,
            index_from_stidx: false,
            deferred_exception: None,
            fresh_locals: (1, 0),
            overflow_next: false,
            clock_reads: Vec::new(),
            heap_watch: None,
            heap_reads: Vec::new(),
        })
    }

    /// Counts cycles, bytecodes, calls and cache loads per method (see
    /// [`ImageRun::by_method`]), and hands each bytecode to `events`.
    /// Reads the collector's state at each read of the cycle counter.
    pub fn watching_heap(mut self, watch: Option<HeapWatch>) -> Self {
        self.heap_watch = watch;
        self
    }

    pub fn traced(mut self, events: Option<EventSink<'c>>) -> Self {
        self.trace = Some(Tracer::new(events));
        self
    }

    /// Where the attention check stops next when nothing is pending: never
    /// before the cycle limit, or at every bytecode while tracing.
    fn quiet_attention(&self) -> u64 {
        if self.trace.is_some() {
            0
        } else {
            self.cfg.cycle_limit.saturating_add(1)
        }
    }

    /// Boots the image (`Startup.boot`, whose method structure the special
    /// pointers name first) and runs until it prints `JVM exit!`.
    pub fn run(mut self) -> Result<ImageRun, EmuError> {
        let special = self.mem[1];
        let boot = self.rd(special)?;
        if self.processor.is_some() {
            // The processor's start-up leaves the special pointers' address
            // in mp: the boot frame saves it as the caller's.
            self.mp = special;
        }
        // The first invoke loads boot into the cache uncharged, as on JOP.
        self.invoke(boot)?;
        self.attention_at = self.quiet_attention();
        let result = loop {
            if self.cycles >= self.attention_at {
                if self.exited {
                    break Ok(());
                }
                if self.cycles > self.cfg.cycle_limit {
                    break Err(EmuError::CycleLimit {
                        limit: self.cfg.cycle_limit,
                        at: self.place(self.pc),
                    });
                }
                let at = self.pc;
                if std::mem::take(&mut self.pending_exception) {
                    self.attention_at = self.quiet_attention();
                    // The fetched bytecode does not run: the helper is
                    // invoked with the return pc at it (the handler search
                    // looks one before).
                    if let Err(e) = self.fetch_and_execute(at, Some(SYS_EXC)) {
                        break Err(e);
                    }
                    continue;
                }
                if let Some(reason) = self.deferred_exception.take() {
                    // The bytecode after the one that raised runs first.
                    if let Err(e) = self.fetch_and_execute(at, None) {
                        break Err(e);
                    }
                    self.raise(reason);
                    continue;
                }
                if self.trace.is_some() {
                    if let Err(e) = self.fetch_and_execute(at, None) {
                        break Err(e);
                    }
                    continue;
                }
            } else if self.run_fast() {
                continue;
            }
            let at = self.pc;
            if let Err(e) = self.byte().and_then(|op| self.execute(op, at)) {
                break Err(e);
            }
        };
        self.flush_line();
        result?;
        let tos = self.top();
        if let Some(t) = self.trace.as_mut() {
            t.close(self.cycles, tos);
        }
        Ok(ImageRun {
            cycles: self.cycles,
            bytecodes: self.executed - self.executed_before_reset,
            all_bytecodes: self.executed,
            cache_cycles: self.cache_cycles,
            counter_reads: self
                .trace
                .as_mut()
                .map(|t| std::mem::take(&mut t.counter_reads))
                .unwrap_or_default(),
            by_method: self.trace.map(|t| t.tally),
            clock_reads: self.clock_reads,
            heap_reads: self.heap_reads,
        })
    }

    /// Fetches the bytecode at `at` and executes it, or `instead` in its
    /// place (the exception helper), recording the fetch when traced: the
    /// run's steps that need attention (the plain step is inlined in `run`).
    fn fetch_and_execute(&mut self, at: i32, instead: Option<u8>) -> Result<(), EmuError> {
        let fetched = self.byte()?;
        let op = instead.unwrap_or(fetched);
        self.trace_fetch(op, at);
        self.execute(op, at)
    }

    /// Where the machine is, for messages: the method (its structure's and
    /// its code's word address) and the bytecode index.
    fn place(&self, pc: i32) -> String {
        format!(
            "method at word {} (code at word {}) bytecode index {pc}",
            self.mp,
            self.code_at / 4
        )
    }

    #[cold]
    fn fault(&self, at_pc: i32, what: String) -> EmuError {
        EmuError::Fault {
            at: self.place(at_pc),
            what,
        }
    }
}
