//! The interpreter: every bytecode JOP executes in hardware, and the field
//! and array accesses they share.

use super::*;
use crate::config::Step;

/// `goto`: checked for a jump to itself before it runs.
const GOTO: u8 = 167;

impl<'c> Machine<'c> {
    // ---- the interpreter ----

    /// Executes bytecode `op` fetched at `at`, through its own handler.
    #[inline(always)]
    pub(super) fn execute(&mut self, op: u8, at: i32) -> Result<(), EmuError> {
        if op == GOTO && self.jumps_to_itself(at) {
            return Err(EmuError::Hang {
                at: self.place(at),
                cycles: self.cycles,
            });
        }
        if (self.handlers[op as usize])(self, at) {
            Ok(())
        } else {
            Err(self.stopped_by())
        }
    }

    /// Whether the `goto` at `at` jumps to itself: no interrupt is
    /// simulated, so nothing can ever leave it.
    #[cold]
    fn jumps_to_itself(&self, at: i32) -> bool {
        let base = self.code_at + at as u32 as usize;
        let pc = at as u32 as usize;
        pc + 2 < self.code_len && self.code[base + 1] == 0 && self.code[base + 2] == 0
    }

    /// The error a handler stopped with (see [`Handler`]).
    #[cold]
    #[inline(never)]
    fn stopped_by(&mut self) -> EmuError {
        self.stopped
            .take()
            .unwrap_or_else(|| self.fault(self.pc, "a bytecode's handler stopped without saying why".into()))
    }

    /// Executes bytecode `OP` fetched at `at`, its stack memory kept as
    /// `KIND` says (see [`handlers`]); on the processor, checks the stack
    /// pointer against its overflow mark when it is near. One copy per
    /// opcode and kind, and the machine's table holds the one its processor
    /// needs: the host runs only the code of that kind, and no branch on
    /// the kind, per bytecode.
    #[inline(always)]
    fn execute_const<const OP: u8, const KIND: u8>(&mut self, at: i32) -> Result<(), EmuError> {
        let (s0, method) = (self.sp, self.code_at);
        if self.overflow_next {
            return Err(self.overflow(OP, at, method));
        }
        if KIND == kind::JOPSIM {
            self.execute_op(OP, at, false)?;
        } else if self.vp + 4 > s0 {
            // Below a frame's saved registers only after `setSP` unwound
            // it: its locals are then above the stack.
            self.execute_with_stack_memory(OP, at, s0)?;
        } else {
            match KIND {
                kind::QUIET => self.execute_op(OP, at, false)?,
                kind::POP => {
                    let net = match self.steps.map(|s| s[OP as usize]) {
                        Some(Step::Pop(net)) => i32::from(net),
                        _ => unreachable!("a pop's handler for a bytecode whose step is not a pop"),
                    };
                    self.execute_pop(OP, at, s0, net)?
                }
                kind::FIXED => self.execute_fixed(OP, at, s0)?,
                kind::BY_PATH => self.execute_by_path(OP, at, s0)?,
                kind::FRAME => self.execute_frame(OP, at, s0)?,
                _ => self.execute_with_stack_memory(OP, at, s0)?,
            }
        }
        if s0.max(self.sp) >= self.sp_watch {
            self.check_overflow(OP, at, s0, method)?;
        }
        if self.access_case.is_some() {
            self.price_access_case(OP, at, s0);
        }
        Ok(())
    }

    /// On the processor, the cycles of `op` (started with its top at `s0`)
    /// whose memory access raised an exception or met a hardware object:
    /// its microcode followed again with the access's cycles for that case,
    /// or along the path that raises the exception itself (the long
    /// bytecodes' checks), where that is known.
    #[cold]
    #[inline(never)]
    fn price_access_case(&mut self, op: u8, at: i32, s0: i32) {
        let Some(case) = self.access_case.take() else {
            return;
        };
        let Some(p) = self.processor else {
            return;
        };
        let Some(entry) = p.microcode.entries.get(op as usize).copied().flatten() else {
            return;
        };
        // The words it found: a bytecode that raised wrote none of them.
        let top = self.top_words(s0);
        let vars = p.microcode.lock_var(self.moncnt);
        let exec = &p.microcode.exec;
        let (cycles, left) = match case {
            AccessCase::Raises(why) => match exec.run_raising_stack(entry, &top, vars.as_slice(), why) {
                Some((c, left)) => (Some(c), Some(left)),
                None => (None, None),
            },
            AccessCase::HardwareObject => (exec.run_on_hardware_object(entry, &top, vars.as_slice()), None),
        };
        // The raising path's microcode leaves the stack and the pc as it
        // leaves them: words it knows (a long array's bounds check leaves
        // its operands and constants), and the pc past the operand bytes it
        // read (a long field's null check raises before it reads them).
        if let Some(left) = left {
            if let Some(words) = left.words {
                let base = s0 - top.len() as i32;
                for (k, v) in words.iter().enumerate() {
                    let _ = self.set_st(base + 1 + k as i32, *v);
                }
                self.sp = base + words.len() as i32;
            }
            self.pc = at + 1 + left.operand_bytes as i32;
        }
        if let Some(c) = cycles {
            if case == AccessCase::Raises(Raise::IndexHigh) {
                // A load past the end that takes raised cycles is one whose
                // memory interface holds the processor until it raises
                // (`raises_high_index_from_r`: slower memory, measured at
                // ram_cnt 3 and 5): it is not gone on from, and the
                // exception is taken at the next bytecode, not after it.
                if let Some(reason) = self.deferred_exception.take() {
                    self.raise(reason);
                }
            }
            self.reprice(op, c);
        }
    }

    /// Whether the processor's stack pointer, at `s0` when `op` (fetched at
    /// `at` in the method whose code is at byte `method`) started and at
    /// `self.sp` now, took its overflow mark on the way.
    #[cold]
    #[inline(never)]
    fn check_overflow(&mut self, op: u8, at: i32, s0: i32, method: usize) -> Result<(), EmuError> {
        let Some(p) = self.processor else {
            return Ok(());
        };
        let Some(r) = p.microcode.sp.get(op as usize).copied().flatten() else {
            return Ok(());
        };
        let mark = i64::from(p.overflow_at);
        let (s0, end) = (i64::from(s0), i64::from(self.sp));
        let before = (s0 + r.before.0..=s0 + r.before.1).contains(&mark);
        let after = r.after.is_some_and(|(lo, hi)| (end + lo..=end + hi).contains(&mark));
        // Reached only by the last value the bytecode leaves (its final
        // push): the RTL's `sp_ov` rises as the next bytecode starts, and
        // the processor stops there (measured: a recursion's invoke whose
        // frame ends at the mark stops in the callee's first bytecode).
        let only_last = !before
            && r.after
                .is_some_and(|(lo, hi)| end + hi == mark && !(end + lo..end + hi).contains(&mark));
        if only_last {
            self.overflow_next = true;
            return Ok(());
        }
        if !(before || after) {
            return Ok(());
        }
        Err(self.overflow(op, at, method))
    }

    /// The processor's stack overflow in `op` (fetched at `at` in the
    /// method whose code is at byte `method`).
    #[cold]
    fn overflow(&self, op: u8, at: i32, method: usize) -> EmuError {
        let p = self.processor.expect("only a processor overflows");
        EmuError::StackOverflow {
            at: format!("the method whose code is at word {} bytecode index {at}", method / 4),
            mark: p.overflow_at,
            words: p.stack_words,
            method: (method / 4) as u32,
            pc: at as u16,
            op,
        }
    }

    /// Executes bytecode `op` fetched at `at`; `routines`: on the processor,
    /// `op` may be one its microcode hands to a Java routine (a constant at
    /// every call: the compiled steps know it is not).
    #[inline(always)]
    pub(super) fn execute_op(&mut self, op: u8, at: i32, routines: bool) -> Result<(), EmuError> {
        self.executed += 1;
        self.fetched_at = self.cycles;
        self.charge(self.fixed[op as usize]);
        if let (true, Some(p)) = (routines, self.processor) {
            // The processor's microcode hands it to its Java routine (JopSim runs it).
            if p.microcode.in_java[op as usize] {
                return self.java(op);
            }
        }
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
                self.mem_index = i;
                if let Some(data) = self.element(r, i, 1)? {
                    let v = self.rd(data)?;
                    push!(v)
                } else if self.processor.is_some() {
                    // The processor's microcode goes on and loads what the
                    // memory interface read before it raised.
                    let v = match self.access_case {
                        Some(AccessCase::Raises(Raise::IndexHigh)) => self.load_past_the_end(r, i)?,
                        // A null array or an index below 0: its handle's word.
                        _ => self.rd(r)?,
                    };
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
                self.mem_index = i;
                if let Some(data) = self.element(r, i, 1)? {
                    // A store that completes ends the interface's access.
                    self.index_from_stidx = false;
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
            121 | 123 | 125 | 148 if self.processor.is_some() => {
                // The microcode's path depends on the operands.
                self.price_by_data(op)?;
                match op {
                    121 => long_shift!(|a: i64, s: u32| a.wrapping_shl(s)),
                    123 => long_shift!(|a: i64, s: u32| a.wrapping_shr(s)),
                    125 => long_shift!(|a: i64, s: u32| (a as u64).wrapping_shr(s) as i64),
                    _ => {
                        let b = self.long_at(self.sp - 1)?;
                        let a = self.long_at(self.sp - 3)?;
                        self.sp -= 4;
                        push!(a.cmp(&b) as i32)
                    }
                }
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
            153..=158 | 198 | 199 => {
                let v = pop!();
                branch!(branches(op, v, 0))
            }
            159..=166 => {
                let b = pop!();
                let a = pop!();
                branch!(branches(op, a, b))
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
                let a = self.static_address()?;
                let v = self.rd(a)?;
                push!(v)
            }
            179 => {
                let a = self.static_address()?;
                let v = pop!();
                self.wr(a, v)?;
            }
            180 | 226 => {
                let off = self.field_index()?;
                self.get_field(off)?;
            }
            181 => {
                let off = self.field_index()?;
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
                // The processor's `invokesuper` keeps a copy of cp on the
                // stack while it reads the object reference, and its address
                // (`ldsp + 1 - args`) does not count the copy: it tests the
                // word one above the reference, the first argument, or with
                // no argument the copy of cp (never 0). So a super call whose
                // first argument is 0 raises a NullPointerException there,
                // and one on a null reference does not (measured on the
                // cycmin RTL with `jopcal diff`).
                let tested = match (op, self.processor.is_some()) {
                    (INVOKESUPER, true) if args == 0 => self.cp,
                    (INVOKESUPER, true) => self.st(self.sp + 1 - args)?,
                    _ => r,
                };
                if self.null_check(tested) {
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
                } else if op == INVOKESUPER && self.processor.is_some() {
                    // Its way to the exception leaves the copy of cp on top.
                    let cp = self.cp;
                    push!(cp);
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
            190 if self.processor.is_some() => {
                // The processor's microcode reads the word after the handle
                // without a null check (`stmraf` of address 1 is not null):
                // a null array's length is memory word 1 (measured on the
                // cycmin RTL).
                let r = pop!();
                let n = self.rd(r.wrapping_add(1))?;
                push!(n)
            }
            190 => {
                let r = pop!();
                if self.null_check(r) {
                    let n = self.rd(r + 1)?;
                    push!(n)
                }
            }
            194 if self.processor.is_some() => {
                // One processor: the lock device always grants; the
                // microcode counts the nesting.
                self.moncnt += 1;
                self.sp -= 1;
            }
            195 if self.processor.is_some() => {
                self.price_by_data(op)?;
                self.sp -= 1;
                self.moncnt -= 1;
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
                self.price_io(op, a);
                let v = self.rd(a)?;
                push!(v)
            }
            210 | 212 => {
                let a = pop!();
                self.price_io(op, a);
                let v = pop!();
                self.wr(a, v)?;
            }
            213 => {
                let live = self.sp - 2;
                let i = pop!();
                let v = match i {
                    0 => self.mp,
                    1 => self.cp,
                    2 => self.heap,
                    3 => self.jjp,
                    4 => self.jjhp,
                    5 => self.moncnt,
                    _ => self.memory_word(i, live)?,
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
                    _ => self.set_memory_word(i, v)?,
                }
            }
            215 => push!(self.sp),
            216 => self.sp = pop!(),
            217 => push!(self.vp),
            218 => self.vp = pop!(),
            219 => {
                let live = self.sp - 2;
                let mut n = pop!();
                let ext = pop!();
                let data = self.rd(ext)?;
                let int = pop!();
                while n >= 0 {
                    let v = self.memory_word(int + n, live)?;
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
                    self.set_memory_word(int + n, v)?;
                    n -= 1;
                }
            }
            222 => {
                let target = pop!();
                let (hit, words) = self.invoke(target)?;
                if !hit && self.processor.is_some() {
                    self.charge_dispatch_load(op, words);
                }
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
                // The copy unit's stop takes fewer cycles than a copy.
                self.price_by_data(op)?;
                let pos = pop!();
                let src = pop!();
                let dest = pop!();
                if pos >= 0 {
                    // A copy step ends the interface's access (its stop does not).
                    self.index_from_stidx = false;
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
                self.stidx(off);
                self.get_field(off)?;
            }
            234 => {
                let v = pop!();
                let off = pop!();
                self.stidx(off);
                self.put_field(off, v)?;
            }
            238 => {
                // stidx, then a static access: it ends the marker.
                let a = self.st(self.sp)?;
                self.mem_index = a;
                self.index_from_stidx = false;
                let v = self.rd(a)?;
                self.set_st(self.sp, v)?;
            }
            239 => {
                let a = self.st(self.sp)?;
                self.mem_index = a;
                self.index_from_stidx = false;
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

    /// The runtime's `stidx`: `off` into the memory interface's index
    /// register, marked as written by it (on the processor).
    fn stidx(&mut self, off: i32) {
        self.mem_index = off;
        self.index_from_stidx = self.processor.is_some();
    }

    /// The address of a `getstatic` or `putstatic`: its operand, or the
    /// index register where a `stidx` is still marked (see
    /// [`Machine::index_from_stidx`]); the access ends the marker.
    #[inline(always)]
    fn static_address(&mut self) -> Result<i32, EmuError> {
        let a = self.opd16u()?;
        Ok(if std::mem::take(&mut self.index_from_stidx) {
            self.mem_index
        } else {
            a
        })
    }

    /// The offset of a `getfield` or `putfield`: its operand, which the
    /// memory interface takes into its index register unless a `stidx` is
    /// still marked there (then the register's value is the offset).
    fn field_index(&mut self) -> Result<i32, EmuError> {
        let off = self.opd16u()?;
        if !self.index_from_stidx {
            self.mem_index = off;
        }
        Ok(self.mem_index)
    }

    /// `getfield` at offset `off`: the object on top of the stack becomes its
    /// field (through its handle); a null object raises the exception, which
    /// leaves a `stidx` marked.
    pub(super) fn get_field(&mut self, off: i32) -> Result<(), EmuError> {
        let r = self.st(self.sp)?;
        if self.null_check(r) {
            self.index_from_stidx = false;
            let data = self.rd(r)?;
            self.note_hardware_object(data);
            let v = self.rd(data + off)?;
            self.set_st(self.sp, v)?;
        } else if self.processor.is_some() {
            // The processor's microcode goes on: it loads what the memory
            // interface read before it raised, the handle's word (word 0).
            let v = self.rd(r)?;
            self.set_st(self.sp, v)?;
        }
        Ok(())
    }

    /// `putfield` of `v` at offset `off` into the object it pops.
    pub(super) fn put_field(&mut self, off: i32, v: i32) -> Result<(), EmuError> {
        let r = self.pop()?;
        if self.null_check(r) {
            self.index_from_stidx = false;
            let data = self.rd(r)?;
            self.note_hardware_object(data);
            self.wr(data + off, v)?;
        }
        Ok(())
    }

    /// On the processor, a field access whose object's handle points at an
    /// I/O device (a hardware object) takes that case's cycles.
    fn note_hardware_object(&mut self, data: i32) {
        if data < 0 && self.processor.is_some() {
            self.access_case = Some(AccessCase::HardwareObject);
        }
    }

    /// The address of element `i` (of `words` words) of array `r`, or `None`
    /// after raising the exception a null or out-of-bounds access raises.
    pub(super) fn element(&mut self, r: i32, i: i32, words: i32) -> Result<Option<i32>, EmuError> {
        if !self.null_check(r) {
            return Ok(None);
        }
        let len = self.rd(r + 1)?;
        if i < 0 || i >= len {
            self.raise(EXC_AB);
            self.access_case = Some(AccessCase::Raises(if i < 0 {
                Raise::IndexNegative
            } else {
                Raise::IndexHigh
            }));
            return Ok(None);
        }
        let data = self.rd(r)?;
        Ok(Some(data + i * words))
    }

    /// The processor's load of element `i` past the end of array `r`: its
    /// memory interface finds the index too high only after the processor
    /// has gone on (it is free again once the length is read, `ialrb` in
    /// `mem_sc.vhd`), so the load pushes the word it read there and the
    /// next bytecode runs before the exception is taken (measured on the
    /// cycmin RTL at ram_cnt 1 and 2; an index below 0 or a null array is
    /// found at once, and so is this one where the interface holds the
    /// processor until it raises: [`Machine::price_access_case`]).
    fn load_past_the_end(&mut self, r: i32, i: i32) -> Result<i32, EmuError> {
        self.pending_exception = false;
        self.deferred_exception = Some(self.exception_reason);
        let data = self.rd(r)?;
        self.rd(data.wrapping_add(i))
    }

    /// Charges `actual` cycles for `op` instead of the table's (already charged).
    fn reprice(&mut self, op: u8, actual: u32) {
        self.cycles = self.cycles - u64::from(self.fixed[op as usize]) + u64::from(actual);
    }

    /// The stack's four words up to `s` (the top last), as the microcode's
    /// runs take them (0 past the stack's ends).
    fn top_words(&self, s: i32) -> [i32; 4] {
        std::array::from_fn(|k| self.stack.get((s - 3 + k as i32) as u32 as usize).copied().unwrap_or(0))
    }

    /// For the processor: the cycles of `op`'s microcode path with the
    /// operands on the stack now (and the lock count), where they decide it.
    fn price_by_data(&mut self, op: u8) -> Result<(), EmuError> {
        let Some(p) = self.processor else {
            return Ok(());
        };
        let m = &p.microcode;
        let Some(entry) = m.by_data.get(op as usize).copied().flatten() else {
            return Ok(());
        };
        let top = self.top_words(self.sp);
        let lock = m.lock_var(self.moncnt);
        let vars = lock.as_slice();
        // Most such paths depend on the top word alone (a long shift's
        // count): followed once per (opcode, word, lock count) for every other value,
        // where the microcode says so; the others once per operands met.
        const GIVE_UP: u8 = 16;
        let by_top = if self.by_top_misses[op as usize] < GIVE_UP {
            match self.paths.by_top(op, top[3], self.moncnt) {
                Some(hit) => Some(hit),
                None => {
                    let known = [None, None, None, Some(top[3])];
                    let found = m.exec.run_known(entry, &known, vars);
                    match found {
                        Some(r) => self.paths.put_by_top(op, top[3], self.moncnt, r),
                        None => self.by_top_misses[op as usize] += 1,
                    }
                    found
                }
            }
        } else {
            None
        };
        let by_words = || match self.paths.by_words(op, top, self.moncnt) {
            Some(hit) => Some(hit),
            None => {
                let found = m.exec.run(entry, &top, vars);
                if let Some(r) = found {
                    self.paths.put_by_words(op, top, self.moncnt, r);
                }
                found
            }
        };
        match by_top.or_else(by_words) {
            Some((c, key)) => {
                self.path = Some(key);
                self.reprice(op, c);
                Ok(())
            }
            None => Err(self.fault(
                self.pc,
                format!(
                    "the microcode of {} could not be followed with its operands",
                    super::super::timing::opcode_name(op)
                ),
            )),
        }
    }

    /// For the processor: an access that reaches an I/O device costs the
    /// device's cycles, not the memory's.
    fn price_io(&mut self, op: u8, address: i32) {
        if let Some(p) = self.processor {
            if let Some(c) = p.microcode.io.get(op as usize).copied().flatten() {
                if self.is_io(address) {
                    self.reprice(op, c);
                }
            }
        }
    }
}

/// Whether conditional branch `op` is taken: `if<cond>` (153..=158) and
/// `ifnull`/`ifnonnull` (198, 199) compare `a` with `b` = 0, `if_icmp<cond>`
/// and `if_acmp<cond>` (159..=166) `a` with `b`.
#[inline(always)]
pub(super) fn branches(op: u8, a: i32, b: i32) -> bool {
    match op {
        153 | 159 | 165 | 198 => a == b,
        154 | 160 | 166 | 199 => a != b,
        155 | 161 => a < b,
        156 | 162 => a >= b,
        157 | 163 => a > b,
        _ => a <= b,
    }
}

/// A bytecode's handler: [`Machine::execute_const`] for its opcode and
/// kind. It answers whether the machine goes on, and keeps the error that
/// stopped it in the machine: a `bool` comes back in a register, where the
/// error's `Result` (many words) would go through memory on every bytecode.
pub(super) type Handler = for<'m, 'c> fn(&'m mut Machine<'c>, i32) -> bool;

/// How a handler keeps the processor's stack memory: JopSim's timing keeps
/// none, the processor's each opcode's [`Step`].
mod kind {
    pub const JOPSIM: u8 = 0;
    pub const QUIET: u8 = 1;
    pub const POP: u8 = 2;
    pub const FIXED: u8 = 3;
    pub const BY_PATH: u8 = 4;
    pub const GENERAL: u8 = 5;
    pub const FRAME: u8 = 6;
}

fn handler<const OP: u8, const KIND: u8>(m: &mut Machine<'_>, at: i32) -> bool {
    match m.execute_const::<OP, KIND>(at) {
        Ok(()) => true,
        Err(e) => {
            m.stopped = Some(e);
            false
        }
    }
}

macro_rules! handlers {
    ($kind:expr; $($op:literal)*) => {
        [$(handler::<$op, { $kind }> as Handler),*]
    };
}

macro_rules! by_opcode {
    ($kind:expr) => {
        handlers!($kind;
            0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15
            16 17 18 19 20 21 22 23 24 25 26 27 28 29 30 31
            32 33 34 35 36 37 38 39 40 41 42 43 44 45 46 47
            48 49 50 51 52 53 54 55 56 57 58 59 60 61 62 63
            64 65 66 67 68 69 70 71 72 73 74 75 76 77 78 79
            80 81 82 83 84 85 86 87 88 89 90 91 92 93 94 95
            96 97 98 99 100 101 102 103 104 105 106 107 108 109 110 111
            112 113 114 115 116 117 118 119 120 121 122 123 124 125 126 127
            128 129 130 131 132 133 134 135 136 137 138 139 140 141 142 143
            144 145 146 147 148 149 150 151 152 153 154 155 156 157 158 159
            160 161 162 163 164 165 166 167 168 169 170 171 172 173 174 175
            176 177 178 179 180 181 182 183 184 185 186 187 188 189 190 191
            192 193 194 195 196 197 198 199 200 201 202 203 204 205 206 207
            208 209 210 211 212 213 214 215 216 217 218 219 220 221 222 223
            224 225 226 227 228 229 230 231 232 233 234 235 236 237 238 239
            240 241 242 243 244 245 246 247 248 249 250 251 252 253 254 255
        )
    };
}

/// Every opcode's handler, by kind and opcode.
static HANDLERS: [[Handler; 256]; 7] = [
    by_opcode!(kind::JOPSIM),
    by_opcode!(kind::QUIET),
    by_opcode!(kind::POP),
    by_opcode!(kind::FIXED),
    by_opcode!(kind::BY_PATH),
    by_opcode!(kind::GENERAL),
    by_opcode!(kind::FRAME),
];

/// The handlers of a machine whose processor keeps its stack memory in
/// `steps` (`None`: JopSim's timing), by opcode.
pub(super) fn handlers(steps: Option<&[Step; 256]>) -> [Handler; 256] {
    std::array::from_fn(|op| {
        let k = match steps.map(|s| s[op]) {
            None => kind::JOPSIM,
            Some(Step::Quiet) => kind::QUIET,
            Some(Step::Pop(_)) => kind::POP,
            Some(Step::Fixed) => kind::FIXED,
            Some(Step::ByPath) => kind::BY_PATH,
            Some(Step::General) => kind::GENERAL,
            Some(Step::Frame) => kind::FRAME,
        };
        HANDLERS[k as usize][op]
    })
}
