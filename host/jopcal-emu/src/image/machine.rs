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

use super::cache::VarBlockCache;
use super::timing::{CycleTable, INVOKESUPER};
use super::ImageConfig;
use crate::error::EmuError;

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
    /// Per method, by the word address of its code: `(calls, exclusive
    /// cycles)`, when the run was traced.
    pub by_method: Option<std::collections::BTreeMap<u32, (u64, u64)>>,
}

/// Per-method accounting of a traced run: cycles go to the method that runs
/// when they are charged (an invoke's own cycles to its caller, the cache
/// load that a miss adds to the method loaded), counted when the running
/// method changes, so the interpreter's loop is the same traced or not.
#[derive(Debug, Default)]
struct MethodTrace {
    /// The running method's code address, and the cycles when it started running.
    current: u32,
    since: u64,
    tally: std::collections::BTreeMap<u32, (u64, u64)>,
}

/// The machine's whole state.
pub struct Machine<'c> {
    mem: Vec<i32>,
    scratch: [i32; SCRATCHPAD_WORDS as usize],
    /// The image's words as bytes, big-endian: where bytecodes are fetched from.
    code: Vec<u8>,
    stack: [i32; STACK_WORDS],
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
    cfg: &'c ImageConfig,
    /// The cycle counter (what the program reads at `IO_CNT`, in 64 bits).
    cycles: u64,
    /// Bytecodes executed, and how many of them before the statistics reset.
    executed: u64,
    executed_before_reset: u64,
    cache_cycles: u64,
    /// The last nine characters written to the UART (`JVM exit!` ends the run).
    tail: [u8; 9],
    exited: bool,
    uart: &'c mut dyn FnMut(&[u8]),
    line: Vec<u8>,
    trace: Option<MethodTrace>,
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
        if words.len() > MEMORY_WORDS as usize {
            return Err(EmuError::Load(format!(
                "word 0: the image has {} words, more than the board's {MEMORY_WORDS}",
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
        let mut mem = vec![0i32; MEMORY_WORDS as usize];
        for (m, w) in mem.iter_mut().zip(words) {
            *m = *w as i32;
        }
        let code = words.iter().flat_map(|w| w.to_be_bytes()).collect();
        Ok(Machine {
            mem,
            scratch: [0; SCRATCHPAD_WORDS as usize],
            code,
            stack: [0; STACK_WORDS],
            sp: STACK_OFF,
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
            cfg,
            cycles: 0,
            executed: 0,
            executed_before_reset: 0,
            cache_cycles: 0,
            tail: [0; 9],
            exited: false,
            uart,
            line: Vec::new(),
            trace: None,
        })
    }

    /// Counts cycles and calls per method (see [`ImageRun::by_method`]).
    pub fn traced(mut self) -> Self {
        self.trace = Some(MethodTrace::default());
        self
    }

    /// Method `start` runs from now on.
    fn switch_method(&mut self, start: u32, call: bool) {
        if let Some(t) = &mut self.trace {
            let e = t.tally.entry(t.current).or_default();
            e.1 += self.cycles - t.since;
            t.current = start;
            t.since = self.cycles;
            if call {
                t.tally.entry(start).or_default().0 += 1;
            }
        }
    }

    /// Boots the image (`Startup.boot`, whose method structure the special
    /// pointers name first) and runs until it prints `JVM exit!`.
    pub fn run(mut self) -> Result<ImageRun, EmuError> {
        let special = self.mem[1];
        let boot = self.rd(special)?;
        // The first invoke loads boot into the cache uncharged, as on JOP.
        self.invoke(boot)?;
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
                if std::mem::take(&mut self.pending_exception) {
                    self.attention_at = self.cfg.cycle_limit.saturating_add(1);
                    // The fetched bytecode does not run: the helper is
                    // invoked with the return pc at it (the handler search
                    // looks one before).
                    if let Err(e) = self.byte().and_then(|_| self.execute(SYS_EXC, self.pc - 1)) {
                        break Err(e);
                    }
                    continue;
                }
            }
            let at = self.pc;
            if let Err(e) = self.byte().and_then(|op| self.execute(op, at)) {
                break Err(e);
            }
        };
        self.flush_line();
        result?;
        self.switch_method(0, false);
        Ok(ImageRun {
            cycles: self.cycles,
            bytecodes: self.executed - self.executed_before_reset,
            all_bytecodes: self.executed,
            cache_cycles: self.cache_cycles,
            by_method: self.trace.map(|mut t| {
                t.tally.remove(&0);
                t.tally
            }),
        })
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

    // ---- memory and I/O ----

    #[inline(always)]
    fn rd(&mut self, addr: i32) -> Result<i32, EmuError> {
        let mut a = addr;
        // The simulator's translation while the collector copies an object
        // (it adds the copy position where the destination seems meant; it
        // matters only during a collection).
        if a >= self.copy_src && a < self.copy_src.wrapping_add(self.copy_pos) {
            a = a - self.copy_src + self.copy_pos;
        }
        if (SCRATCHPAD..=SCRATCHPAD + PROBE_SLACK).contains(&a) {
            return Ok(self.scratch[(a % SCRATCHPAD_WORDS) as usize]);
        }
        if a == io::EXCPT {
            return Ok(self.exception_reason);
        }
        if !(io::LOWEST..=MEMORY_WORDS + PROBE_SLACK).contains(&a) {
            return Err(self.fault(self.pc, format!("read of address {a} outside memory and I/O")));
        }
        if a < 0 {
            return Ok(self.io_read(a));
        }
        Ok(self.mem[(a % MEMORY_WORDS) as usize])
    }

    fn wr(&mut self, a: i32, v: i32) -> Result<(), EmuError> {
        if (SCRATCHPAD..=SCRATCHPAD + PROBE_SLACK).contains(&a) {
            self.scratch[(a % SCRATCHPAD_WORDS) as usize] = v;
            return Ok(());
        }
        if !(io::LOWEST..=MEMORY_WORDS + PROBE_SLACK).contains(&a) {
            return Err(self.fault(self.pc, format!("write of address {a} outside memory and I/O")));
        }
        if a < 0 {
            return self.io_write(a, v);
        }
        self.mem[(a % MEMORY_WORDS) as usize] = v;
        Ok(())
    }

    fn io_read(&self, a: i32) -> i32 {
        match a {
            io::CNT => self.cycles as u32 as i32,
            // Simulated time, not the host's clock: the board is deterministic.
            io::US_CNT => (self.cycles as f64 / self.cfg.clock_mhz) as u64 as u32 as i32,
            io::CPUCNT => 1,
            io::STATUS | io::USB_STATUS => 1, // transmitter empty, nothing received
            io::UART => i32::from(b'_'),
            io::SIM_CACHE_COST => self.cache_cycles as i32,
            io::CPU_ID => 0,
            _ => 0,
        }
    }

    fn io_write(&mut self, a: i32, v: i32) -> Result<(), EmuError> {
        match a {
            io::UART => self.uart_byte(v as u8),
            io::EXCPT => self.raise(v),
            // Counting starts after the bytecode that writes, as in the tree's simulator.
            io::PERFCNT => self.executed_before_reset = self.executed,
            io::SIM_CACHE_FLUSH => self.cache.flush(),
            io::SIM_CACHE_COST => self.cache_cycles = v as u32 as u64,
            io::INTMASK if v != 0 => {
                return Err(self.fault(
                    self.pc,
                    format!("the program unmasks interrupts ({v:#x}): the virtual board does not simulate JOP's interrupts (RtThread) yet"),
                ))
            }
            _ => {}
        }
        Ok(())
    }

    fn uart_byte(&mut self, b: u8) {
        self.line.push(b);
        if b == b'\n' {
            self.flush_line();
        }
        self.tail.rotate_left(1);
        self.tail[8] = b;
        if &self.tail == b"JVM exit!" {
            self.exited = true;
            self.attention_at = 0;
        }
    }

    fn flush_line(&mut self) {
        if !self.line.is_empty() {
            (self.uart)(&self.line);
            self.line.clear();
        }
    }

    // ---- the stack ----

    // The accessors below run for nearly every bytecode: their errors are
    // made out of line, so that the accessors inline into the interpreter.

    #[inline(always)]
    fn st(&self, i: i32) -> Result<i32, EmuError> {
        match self.stack.get(i as u32 as usize) {
            Some(v) => Ok(*v),
            None => Err(self.stack_fault(i)),
        }
    }

    #[inline(always)]
    fn set_st(&mut self, i: i32, v: i32) -> Result<(), EmuError> {
        match self.stack.get_mut(i as u32 as usize) {
            Some(s) => {
                *s = v;
                Ok(())
            }
            None => Err(self.stack_fault(i)),
        }
    }

    #[cold]
    #[inline(never)]
    fn stack_fault(&self, i: i32) -> EmuError {
        self.fault(
            self.pc,
            format!("stack word {i} outside JOP's {STACK_WORDS}-word stack (a stack overflow?)"),
        )
    }

    #[inline(always)]
    fn push(&mut self, v: i32) -> Result<(), EmuError> {
        self.sp += 1;
        self.set_st(self.sp, v)
    }

    #[inline(always)]
    fn pop(&mut self) -> Result<i32, EmuError> {
        let v = self.st(self.sp)?;
        self.sp -= 1;
        Ok(v)
    }

    /// The long whose high word is at `hi` and low word at `hi + 1`.
    fn long_at(&self, hi: i32) -> Result<i64, EmuError> {
        Ok((i64::from(self.st(hi)?) << 32) | i64::from(self.st(hi + 1)? as u32))
    }

    fn set_long_at(&mut self, hi: i32, v: i64) -> Result<(), EmuError> {
        self.set_st(hi, (v >> 32) as i32)?;
        self.set_st(hi + 1, v as i32)
    }

    // ---- code ----

    #[inline(always)]
    fn byte(&mut self) -> Result<u8, EmuError> {
        let pc = self.pc as u32 as usize;
        if pc >= self.code_len {
            return Err(self.code_fault());
        }
        self.pc += 1;
        Ok(self.code[self.code_at + pc])
    }

    #[cold]
    #[inline(never)]
    fn code_fault(&self) -> EmuError {
        self.fault(
            self.pc,
            format!("ran past the end of the method's {} code bytes", self.code_len),
        )
    }

    #[inline(always)]
    fn opd16u(&mut self) -> Result<i32, EmuError> {
        let hi = self.byte()?;
        let lo = self.byte()?;
        Ok(i32::from(u16::from_be_bytes([hi, lo])))
    }

    #[inline(always)]
    fn opd16s(&mut self) -> Result<i32, EmuError> {
        Ok(i32::from(self.opd16u()? as u16 as i16))
    }

    // ---- calls ----

    /// Enters the method whose structure is at `new_mp`: its arguments on
    /// the stack become its first locals, the frame (old sp, return pc,
    /// vp, cp, mp) is pushed above its locals. Returns whether the method
    /// cache hit and the method's length in words.
    fn invoke(&mut self, new_mp: i32) -> Result<(bool, u32), EmuError> {
        let (old_vp, old_cp, old_mp) = (self.vp, self.cp, self.mp);
        let w0 = self.rd(new_mp)?;
        let w1 = self.rd(new_mp + 1)?;
        let start = ((w0 as u32) >> 10) as i32;
        let words = (w0 & 0x3ff) as u32;
        if start == 0 {
            return Err(self.fault(
                self.pc.saturating_sub(1),
                format!("invoke of the method structure at word {new_mp}, which has no code (an abstract or missing method)"),
            ));
        }
        self.mp = new_mp;
        self.cp = ((w1 as u32) >> 10) as i32;
        let locals = (w1 >> 5) & 0x1f;
        let args = w1 & 0x1f;
        let old_sp = self.sp - args;
        self.vp = old_sp + 1;
        self.sp += locals;
        let ret_pc = self.pc;
        for v in [old_sp, ret_pc, old_vp, old_cp, old_mp] {
            self.push(v)?;
        }
        self.enter_code(start, words)?;
        self.switch_method(start as u32, true);
        self.pc = 0;
        Ok((self.cache.access(start, words), words))
    }

    fn enter_code(&mut self, start: i32, words: u32) -> Result<(), EmuError> {
        let at = start as usize * 4;
        let len = words as usize * 4;
        if at + len > self.code.len() {
            return Err(self.fault(
                self.pc,
                format!(
                    "method code at words {start}..{} lies outside the image",
                    start as usize + words as usize
                ),
            ));
        }
        self.code_at = at;
        self.code_len = len;
        Ok(())
    }

    /// Returns to the caller the frame names; whether its code hit the
    /// cache, and its length in words.
    fn leave(&mut self) -> Result<(bool, u32), EmuError> {
        self.mp = self.pop()?;
        self.cp = self.pop()?;
        self.vp = self.pop()?;
        let pc = self.pop()?;
        self.sp = self.pop()?;
        if self.mp == 0 {
            return Err(self.fault(self.pc, "the outermost method (boot) returned".into()));
        }
        let w0 = self.rd(self.mp)?;
        let start = ((w0 as u32) >> 10) as i32;
        let words = (w0 & 0x3ff) as u32;
        self.enter_code(start, words)?;
        self.switch_method(start as u32, false);
        self.pc = pc;
        Ok((self.cache.access(start, words), words))
    }

    /// Invokes the Java routine of bytecode `op` from the runtime's jump
    /// table; the invoke's own cache load is not charged (the bytecode's
    /// dispatch cost covers it), its return is.
    fn java(&mut self, op: u8) -> Result<(), EmuError> {
        self.invoke(self.jjp + (i32::from(op) << 1)).map(|_| ())
    }

    fn charge(&mut self, cycles: u32) {
        self.cycles += u64::from(cycles);
    }

    /// What a cache miss adds to invoke or return `op` (its hit cost was
    /// charged when it started): the load not hidden behind it.
    fn charge_cache(&mut self, op: u8, hit: bool, words: u32, invoke: bool) {
        let total = if invoke {
            self.table.invoke(op, hit, words)
        } else {
            self.table.ret(op, hit, words)
        };
        let extra = total.saturating_sub(self.table.fixed[op as usize]);
        self.cache_cycles += u64::from(extra);
        self.charge(extra);
    }

    /// Raises JOP exception `reason` (null pointer, array bounds, division):
    /// the next instruction becomes the exception helper's invoke.
    fn raise(&mut self, reason: i32) {
        self.pending_exception = true;
        self.attention_at = 0;
        self.exception_reason = reason;
    }

    fn null_check(&mut self, r: i32) -> bool {
        if r == 0 {
            self.raise(EXC_NP);
            return false;
        }
        true
    }

    // ---- the interpreter ----

    /// Executes bytecode `op` fetched at `at`.
    #[inline(always)]
    fn execute(&mut self, op: u8, at: i32) -> Result<(), EmuError> {
        self.executed += 1;
        self.charge(self.table.fixed[op as usize]);
        macro_rules! pop {
            () => {
                self.pop()?
            };
        }
        macro_rules! push {
            ($v:expr) => {{
                let v = $v;
                self.push(v)?
            }};
        }
        macro_rules! binary {
            ($f:expr) => {{
                let b = pop!();
                let a = pop!();
                push!($f(a, b))
            }};
        }
        macro_rules! long_binary {
            ($f:expr) => {{
                let b = self.long_at(self.sp - 1)?;
                let a = self.long_at(self.sp - 3)?;
                self.set_long_at(self.sp - 3, $f(a, b))?;
                self.sp -= 2;
            }};
        }
        macro_rules! long_shift {
            ($f:expr) => {{
                let s = self.st(self.sp)? as u32;
                let a = self.long_at(self.sp - 2)?;
                self.set_long_at(self.sp - 2, $f(a, s))?;
                self.sp -= 1;
            }};
        }
        macro_rules! branch {
            ($taken:expr) => {{
                let target = at + self.opd16s()?;
                if $taken {
                    self.pc = target;
                }
            }};
        }
        match op {
            0 => {}
            1 => push!(0),
            2..=8 => push!(i32::from(op) - 3),
            9 | 10 => {
                push!(0);
                push!(i32::from(op) - 9);
            }
            11 => push!(0), // fconst_0: microcode
            14 => {
                push!(0);
                push!(0);
            }
            16 => {
                let v = self.byte()? as i8;
                push!(i32::from(v))
            }
            17 => {
                let v = self.opd16s()?;
                push!(v)
            }
            18 => {
                let i = i32::from(self.byte()?);
                let v = self.rd(self.cp + i)?;
                push!(v)
            }
            19 => {
                let i = self.opd16u()?;
                let v = self.rd(self.cp + i)?;
                push!(v)
            }
            20 => {
                let i = self.opd16u()?;
                let hi = self.rd(self.cp + i)?;
                let lo = self.rd(self.cp + i + 1)?;
                push!(hi);
                push!(lo);
            }
            21 | 23 | 25 => {
                let i = i32::from(self.byte()?);
                push!(self.st(self.vp + i)?)
            }
            22 | 24 => {
                let i = i32::from(self.byte()?);
                push!(self.st(self.vp + i)?);
                push!(self.st(self.vp + i + 1)?);
            }
            26..=29 => push!(self.st(self.vp + i32::from(op - 26))?),
            34..=37 => push!(self.st(self.vp + i32::from(op - 34))?),
            42..=45 => push!(self.st(self.vp + i32::from(op - 42))?),
            30..=33 | 38..=41 => {
                let i = i32::from(if op < 34 { op - 30 } else { op - 38 });
                push!(self.st(self.vp + i)?);
                push!(self.st(self.vp + i + 1)?);
            }
            46 | 48 | 50..=53 => {
                let i = pop!();
                let r = pop!();
                if let Some(data) = self.element(r, i, 1)? {
                    let v = self.rd(data)?;
                    push!(v)
                }
            }
            47 | 49 => {
                let i = pop!();
                let r = pop!();
                if let Some(data) = self.element(r, i, 2)? {
                    let hi = self.rd(data)?;
                    let lo = self.rd(data + 1)?;
                    push!(hi);
                    push!(lo);
                }
            }
            54 | 56 | 58 => {
                let i = i32::from(self.byte()?);
                let v = pop!();
                self.set_st(self.vp + i, v)?;
            }
            55 | 57 => {
                let i = i32::from(self.byte()?);
                let lo = pop!();
                let hi = pop!();
                self.set_st(self.vp + i + 1, lo)?;
                self.set_st(self.vp + i, hi)?;
            }
            59..=62 | 67..=70 | 75..=78 => {
                let i = i32::from(match op {
                    59..=62 => op - 59,
                    67..=70 => op - 67,
                    _ => op - 75,
                });
                let v = pop!();
                self.set_st(self.vp + i, v)?;
            }
            63..=66 | 71..=74 => {
                let i = i32::from(if op < 67 { op - 63 } else { op - 71 });
                let lo = pop!();
                let hi = pop!();
                self.set_st(self.vp + i + 1, lo)?;
                self.set_st(self.vp + i, hi)?;
            }
            79 | 81 | 84..=86 => {
                // No narrowing: JOP stores the word as it is (the compiler narrows before).
                let v = pop!();
                let i = pop!();
                let r = pop!();
                if let Some(data) = self.element(r, i, 1)? {
                    self.wr(data, v)?;
                }
            }
            80 | 82 => {
                let lo = pop!();
                let hi = pop!();
                let i = pop!();
                let r = pop!();
                if let Some(data) = self.element(r, i, 2)? {
                    self.wr(data, hi)?;
                    self.wr(data + 1, lo)?;
                }
            }
            87 => self.sp -= 1,
            88 => self.sp -= 2,
            89 => push!(self.st(self.sp)?),
            90 => {
                let a = pop!();
                let b = pop!();
                for v in [a, b, a] {
                    push!(v);
                }
            }
            91 => {
                let a = pop!();
                let b = pop!();
                let c = pop!();
                for v in [a, c, b, a] {
                    push!(v);
                }
            }
            92 => {
                let a = pop!();
                let b = pop!();
                for v in [b, a, b, a] {
                    push!(v);
                }
            }
            93 => {
                let a = pop!();
                let b = pop!();
                let c = pop!();
                for v in [b, a, c, b, a] {
                    push!(v);
                }
            }
            94 => {
                let a = pop!();
                let b = pop!();
                let c = pop!();
                let d = pop!();
                for v in [b, a, d, c, b, a] {
                    push!(v);
                }
            }
            95 => {
                let a = pop!();
                let b = pop!();
                push!(a);
                push!(b);
            }
            96 => binary!(|a: i32, b: i32| a.wrapping_add(b)),
            100 => binary!(|a: i32, b: i32| a.wrapping_sub(b)),
            104 => binary!(|a: i32, b: i32| a.wrapping_mul(b)),
            108 | 112 => {
                let b = pop!();
                let a = pop!();
                if b == 0 {
                    // The tree's simulator fails here; JOP's routine raises this.
                    self.raise(EXC_DIVZ);
                } else if op == 108 {
                    push!(a.wrapping_div(b))
                } else {
                    push!(a.wrapping_rem(b))
                }
            }
            116 => {
                let a = pop!();
                push!(a.wrapping_neg())
            }
            120 => binary!(|a: i32, b: i32| a.wrapping_shl(b as u32)),
            122 => binary!(|a: i32, b: i32| a.wrapping_shr(b as u32)),
            124 => binary!(|a: i32, b: i32| ((a as u32).wrapping_shr(b as u32)) as i32),
            126 => binary!(|a: i32, b: i32| a & b),
            128 => binary!(|a: i32, b: i32| a | b),
            130 => binary!(|a: i32, b: i32| a ^ b),
            97 => long_binary!(|a: i64, b: i64| a.wrapping_add(b)),
            101 => long_binary!(|a: i64, b: i64| a.wrapping_sub(b)),
            127 => long_binary!(|a: i64, b: i64| a & b),
            129 => long_binary!(|a: i64, b: i64| a | b),
            131 => long_binary!(|a: i64, b: i64| a ^ b),
            117 => {
                let a = self.long_at(self.sp - 1)?;
                self.set_long_at(self.sp - 1, a.wrapping_neg())?;
            }
            121 => long_shift!(|a: i64, s: u32| a.wrapping_shl(s)),
            123 => long_shift!(|a: i64, s: u32| a.wrapping_shr(s)),
            125 => long_shift!(|a: i64, s: u32| (a as u64).wrapping_shr(s) as i64),
            132 => {
                let i = i32::from(self.byte()?);
                let d = i32::from(self.byte()? as i8);
                let v = self.st(self.vp + i)?;
                self.set_st(self.vp + i, v.wrapping_add(d))?;
            }
            133 => {
                let v = pop!();
                push!(v >> 31);
                push!(v);
            }
            136 => {
                let lo = pop!();
                self.set_st(self.sp, lo)?;
            }
            146 => {
                let v = pop!();
                push!(v & 0xffff)
            }
            148 => {
                let b = self.long_at(self.sp - 1)?;
                let a = self.long_at(self.sp - 3)?;
                self.sp -= 4;
                push!(a.cmp(&b) as i32)
            }
            153 | 198 => {
                let v = pop!();
                branch!(v == 0)
            }
            154 | 199 => {
                let v = pop!();
                branch!(v != 0)
            }
            155 => {
                let v = pop!();
                branch!(v < 0)
            }
            156 => {
                let v = pop!();
                branch!(v >= 0)
            }
            157 => {
                let v = pop!();
                branch!(v > 0)
            }
            158 => {
                let v = pop!();
                branch!(v <= 0)
            }
            159..=166 => {
                let b = pop!();
                let a = pop!();
                branch!(match op {
                    159 | 165 => a == b,
                    160 | 166 => a != b,
                    161 => a < b,
                    162 => a >= b,
                    163 => a > b,
                    _ => a <= b,
                })
            }
            167 => branch!(true),
            172 | 174 | 176 => {
                let v = pop!();
                let (hit, words) = self.leave()?;
                push!(v);
                self.charge_cache(op, hit, words, false);
            }
            173 | 175 => {
                let lo = pop!();
                let hi = pop!();
                let (hit, words) = self.leave()?;
                push!(hi);
                push!(lo);
                self.charge_cache(op, hit, words, false);
            }
            177 => {
                let (hit, words) = self.leave()?;
                self.charge_cache(op, hit, words, false);
            }
            178 | 224 => {
                let a = self.opd16u()?;
                let v = self.rd(a)?;
                push!(v)
            }
            179 => {
                let a = self.opd16u()?;
                let v = pop!();
                self.wr(a, v)?;
            }
            180 | 226 => {
                let off = self.opd16u()?;
                self.get_field(off)?;
            }
            181 => {
                let off = self.opd16u()?;
                let v = pop!();
                self.put_field(off, v)?;
            }
            182 | 185 | INVOKESUPER => {
                let i = self.opd16u()?;
                if op == 185 {
                    self.opd16u()?; // the historical count and zero
                }
                let entry = self.rd(self.cp + i)?;
                let args = entry & 0xff;
                let off = ((entry as u32) >> 8) as i32;
                let r = self.st(self.sp - args)?;
                if self.null_check(r) {
                    let target = match op {
                        182 => self.rd(r + 1)? + off,
                        185 => {
                            let mtab = self.rd(r + 1)?;
                            let itab = self.rd(mtab - 1)?;
                            self.rd(itab + off)?
                        }
                        _ => {
                            let class = self.rd(self.cp - 1)?;
                            self.rd(class + 3)? + 5 + off
                        }
                    };
                    let (hit, words) = self.invoke(target)?;
                    self.charge_cache(op, hit, words, true);
                }
            }
            183 | 184 => {
                let i = self.opd16u()?;
                let target = self.rd(self.cp + i)?;
                let (hit, words) = self.invoke(target)?;
                self.charge_cache(op, hit, words, true);
            }
            187 | 189 | 192 | 193 => {
                // The constant (a class) for the runtime's routine.
                let i = self.opd16u()?;
                let v = self.rd(self.cp + i)?;
                push!(v);
                self.java(op)?;
            }
            188 => {
                let t = i32::from(self.byte()?);
                push!(t);
                self.java(op)?;
            }
            225 | 227 => {
                // The field's address or offset for the runtime's write barrier.
                let i = self.opd16u()?;
                push!(i);
                self.java(op)?;
            }
            190 => {
                let r = pop!();
                if self.null_check(r) {
                    let n = self.rd(r + 1)?;
                    push!(n)
                }
            }
            194 => {
                // The simulator's global lock: granted to the first enter
                // (or retried, the bytecode again), counted by nesting.
                let granted = if self.moncnt == 0 {
                    !std::mem::replace(&mut self.global_lock, true)
                } else {
                    true
                };
                if granted {
                    self.moncnt += 1;
                    self.sp -= 1;
                } else {
                    self.pc = at;
                }
            }
            195 => {
                self.sp -= 1;
                self.moncnt -= 1;
                if self.moncnt == 0 {
                    self.global_lock = false;
                }
            }
            204 | 206 | 207 | 221 => {}
            209 | 211 => {
                let a = pop!();
                let v = self.rd(a)?;
                push!(v)
            }
            210 | 212 => {
                let a = pop!();
                let v = pop!();
                self.wr(a, v)?;
            }
            213 => {
                let i = pop!();
                let v = match i {
                    0 => self.mp,
                    1 => self.cp,
                    2 => self.heap,
                    3 => self.jjp,
                    4 => self.jjhp,
                    5 => self.moncnt,
                    _ => self.st(i)?,
                };
                push!(v)
            }
            214 => {
                let i = pop!();
                let v = pop!();
                match i {
                    0 => self.mp = v,
                    1 => self.cp = v,
                    2 => self.heap = v,
                    3 => self.jjp = v,
                    4 => self.jjhp = v,
                    5 => self.moncnt = v,
                    _ => self.set_st(i, v)?,
                }
            }
            215 => push!(self.sp),
            216 => self.sp = pop!(),
            217 => push!(self.vp),
            218 => self.vp = pop!(),
            219 => {
                let mut n = pop!();
                let ext = pop!();
                let data = self.rd(ext)?;
                let int = pop!();
                while n >= 0 {
                    let v = self.st(int + n)?;
                    self.wr(data + n, v)?;
                    n -= 1;
                }
            }
            220 => {
                let mut n = pop!();
                let int = pop!();
                let ext = pop!();
                let data = self.rd(ext)?;
                while n >= 0 {
                    let v = self.rd(data + n)?;
                    self.set_st(int + n, v)?;
                    n -= 1;
                }
            }
            222 => {
                let target = pop!();
                self.invoke(target)?;
            }
            223 => {
                let cond = pop!();
                let b = pop!();
                let a = pop!();
                push!(if cond != 0 { a } else { b })
            }
            228 => {
                let a = self.opd16u()?;
                let hi = self.rd(a)?;
                let lo = self.rd(a + 1)?;
                push!(hi);
                push!(lo);
            }
            229 => {
                let a = self.opd16u()?;
                let lo = pop!();
                let hi = pop!();
                self.wr(a + 1, lo)?;
                self.wr(a, hi)?;
            }
            230 => {
                let off = self.opd16u()?;
                let r = self.st(self.sp)?;
                if self.null_check(r) {
                    let data = self.rd(r)?;
                    let hi = self.rd(data + off)?;
                    let lo = self.rd(data + off + 1)?;
                    self.set_st(self.sp, hi)?;
                    push!(lo);
                }
            }
            231 => {
                let off = self.opd16u()?;
                let lo = pop!();
                let hi = pop!();
                let r = pop!();
                if self.null_check(r) {
                    let data = self.rd(r)?;
                    self.wr(data + off, hi)?;
                    self.wr(data + off + 1, lo)?;
                }
            }
            232 => {
                let pos = pop!();
                let src = pop!();
                let dest = pop!();
                if pos >= 0 {
                    let v = self.rd(src + pos)?;
                    self.wr(dest + pos, v)?;
                    self.copy_pos = pos + 1;
                } else {
                    self.copy_pos = 0;
                }
                self.copy_src = src;
            }
            233 => {
                let off = pop!();
                self.get_field(off)?;
            }
            234 => {
                let v = pop!();
                let off = pop!();
                self.put_field(off, v)?;
            }
            238 => {
                let a = self.st(self.sp)?;
                let v = self.rd(a)?;
                self.set_st(self.sp, v)?;
            }
            239 => {
                let a = self.st(self.sp)?;
                let v = self.st(self.sp - 1)?;
                self.wr(a, v)?;
                self.sp -= 2;
            }
            SYS_EXC => {
                self.pc -= 1;
                self.invoke(self.jjhp + 6)?;
            }
            240 => {
                return Err(self.fault(at, "sys_int in the code: interrupts are not simulated".into()));
            }
            _ => {
                // Everything else JOP runs in Java, through the jump table:
                // floating point, lmul, ldiv, lrem, most conversions,
                // switches, athrow, multianewarray, aastore, and the opcodes
                // JOP does not implement (the runtime's noim reports them).
                self.java(op)?;
            }
        }
        Ok(())
    }

    /// `getfield` at offset `off`: the object on top of the stack becomes its
    /// field (through its handle); a null object raises the exception.
    fn get_field(&mut self, off: i32) -> Result<(), EmuError> {
        let r = self.st(self.sp)?;
        if self.null_check(r) {
            let data = self.rd(r)?;
            let v = self.rd(data + off)?;
            self.set_st(self.sp, v)?;
        }
        Ok(())
    }

    /// `putfield` of `v` at offset `off` into the object it pops.
    fn put_field(&mut self, off: i32, v: i32) -> Result<(), EmuError> {
        let r = self.pop()?;
        if self.null_check(r) {
            let data = self.rd(r)?;
            self.wr(data + off, v)?;
        }
        Ok(())
    }

    /// The address of element `i` (of `words` words) of array `r`, or `None`
    /// after raising the exception a null or out-of-bounds access raises.
    fn element(&mut self, r: i32, i: i32, words: i32) -> Result<Option<i32>, EmuError> {
        if !self.null_check(r) {
            return Ok(None);
        }
        let len = self.rd(r + 1)?;
        if i < 0 || i >= len {
            self.raise(EXC_AB);
            return Ok(None);
        }
        let data = self.rd(r)?;
        Ok(Some(data + i * words))
    }
}
