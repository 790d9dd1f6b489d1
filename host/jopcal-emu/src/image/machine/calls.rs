//! Calls and returns: frames, the method cache, the Java routines of
//! bytecodes JOP implements in Java, exceptions the hardware raises.

use super::*;
use crate::config::{FramePlan, FRAME_WRITES};

/// A method's code, as its structure's first word gives it: where it
/// starts (in words) and its length in words.
fn code_of(w0: i32) -> (i32, u32) {
    (((w0 as u32) >> 10) as i32, (w0 & 0x3ff) as u32)
}

impl<'c> Machine<'c> {
    // ---- calls ----

    /// Enters the method whose structure is at `new_mp`: its arguments on
    /// the stack become its first locals, the frame (old sp, return pc,
    /// vp, cp, mp) is pushed above its locals. Returns whether the method
    /// cache hit and the method's length in words.
    pub(super) fn invoke(&mut self, new_mp: i32) -> Result<(bool, u32), EmuError> {
        let (old_vp, old_cp, old_mp) = (self.vp, self.cp, self.mp);
        let w0 = self.rd(new_mp)?;
        let w1 = self.rd(new_mp + 1)?;
        let (start, words) = code_of(w0);
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
        // The processor does not clear the locals past the arguments: they
        // keep what its stack memory held (see `execute_with_stack_memory`).
        self.fresh_locals = (self.sp + 1, self.sp + locals);
        self.sp += locals;
        let ret_pc = self.pc;
        for v in [old_sp, ret_pc, old_vp, old_cp, old_mp] {
            self.push(v)?;
        }
        self.enter_code(start, words)?;
        self.pc = 0;
        let hit = self.cache.access(start, words);
        self.trace_enter(start as u32, true, hit);
        Ok((hit, words))
    }

    /// Runs the invoke or return at the pc (`invokevirtual`,
    /// `invokespecial`, `invokestatic`, the returns) as its handler would on
    /// its usual way, for the fast path: without the handler's dispatch,
    /// and with the stack memory kept by the opcode's [`FramePlan`]. False,
    /// with nothing changed, where it may not take that way (not such a
    /// bytecode, a null reference, the stack near its ends or its overflow
    /// mark, a method structure or code it cannot read, a traced run): its
    /// handler runs it then.
    pub(super) fn run_frame(&mut self) -> bool {
        let (at, s0) = (self.pc, self.sp);
        if at as u32 as usize >= self.code_len || self.trace.is_some() || self.overflow_next {
            return false;
        }
        let op = self.code[self.code_at + at as usize];
        if !matches!(op, 172..=177 | 182..=184) {
            return false;
        }
        let plan = match self.processor {
            Some(p) => {
                let m = &p.microcode;
                // Below a frame's saved registers the general case's.
                if m.in_java[op as usize] || self.vp + 4 > s0 {
                    return false;
                }
                // A script the plan cannot hold is interpreted.
                let Some(plan) = &m.frames[op as usize] else {
                    return false;
                };
                Some(plan)
            }
            None => None,
        };
        // Clear of the stack's ends (a frame's five words below a
        // return's values) and of the overflow mark, which the handler checks.
        if s0 < 8 || s0 >= self.sp_watch || s0 as usize >= self.stack.len() {
            return false;
        }
        if op >= 182 {
            self.fast_invoke(op, at, s0, plan)
        } else {
            self.fast_return(op, s0, plan)
        }
    }

    /// [`Machine::run_frame`] for an invoke.
    #[inline(always)]
    fn fast_invoke(&mut self, op: u8, at: i32, s0: i32, plan: Option<&FramePlan>) -> bool {
        let base = self.code_at + at as usize;
        if at as usize + 3 > self.code_len {
            return false;
        }
        let i = i32::from(u16::from_be_bytes([self.code[base + 1], self.code[base + 2]]));
        let Some(entry) = self.memory_read(self.cp + i) else {
            return false;
        };
        let target = if op == 182 {
            let (args, off) = (entry & 0xff, ((entry as u32) >> 8) as i32);
            let r = self.stack.get((s0 - args) as u32 as usize).copied().unwrap_or(0);
            // A null reference raises: the handler's.
            match (r != 0).then(|| self.memory_read(r + 1)).flatten() {
                Some(table) => table + off,
                None => return false,
            }
        } else {
            entry
        };
        let (Some(w0), Some(w1)) = (self.memory_read(target), self.memory_read(target + 1)) else {
            return false;
        };
        let (start, words) = code_of(w0);
        let locals = (w1 >> 5) & 0x1f;
        let args = w1 & 0x1f;
        let end = s0 + locals + 5;
        if start == 0
            || (start as usize + words as usize) * 4 > self.code.len()
            || s0 - args < 1
            || end >= self.sp_watch
            || end as usize >= self.stack.len()
        {
            return false;
        }
        // Every value the stack memory keeps is read before anything changes.
        let fresh = (s0 + 1, s0 + locals);
        let mut writes = [(0, 0); FRAME_WRITES];
        let n = match plan {
            Some(plan) => {
                let on_invoke = plan.invoke_writes[..plan.invoke_len].iter();
                self.frame_writes_before(
                    &mut writes,
                    on_invoke.map(|&k| &plan.writes[usize::from(k)]),
                    s0,
                    end,
                    fresh,
                )
            }
            None => 0,
        };
        self.path = None;
        self.executed += 1;
        self.fetched_at = self.cycles;
        self.charge(self.fixed[op as usize]);
        let (old_vp, old_cp, old_mp) = (self.vp, self.cp, self.mp);
        self.mp = target;
        self.cp = ((w1 as u32) >> 10) as i32;
        self.vp = s0 - args + 1;
        let frame = s0 as usize + locals as usize + 1;
        self.stack[frame..frame + 5].copy_from_slice(&[s0 - args, at + 3, old_vp, old_cp, old_mp]);
        self.sp = end;
        self.code_at = start as usize * 4;
        self.code_len = words as usize * 4;
        self.pc = 0;
        let hit = self.cache.access(start, words);
        self.charge_cache(op, hit, words, true);
        // The processor does not clear the locals past the arguments: they
        // keep what its stack memory held.
        self.store_frame_writes(&writes[..n], fresh);
        true
    }

    /// [`Machine::run_frame`] for a return.
    #[inline(always)]
    fn fast_return(&mut self, op: u8, s0: i32, plan: Option<&FramePlan>) -> bool {
        // The words it returns.
        let n = match op {
            177 => 0,
            173 | 175 => 2,
            _ => 1,
        };
        let f = (s0 - n) as usize;
        // Read one by one: an array gathered on the stack and read back
        // whole waits for its five stores.
        let Some(&[old_sp, pc, vp, cp, mp]) = self.stack.get(f - 4..=f) else {
            return false;
        };
        let Some(w0) = (mp != 0).then(|| self.memory_read(mp)).flatten() else {
            return false;
        };
        let (start, words) = code_of(w0);
        let end = old_sp + n;
        if (start as usize + words as usize) * 4 > self.code.len()
            || old_sp < 0
            || end >= self.sp_watch
            || end as usize >= self.stack.len()
        {
            return false;
        }
        let none = (1, 0);
        let mut writes = [(0, 0); FRAME_WRITES];
        let k = match plan {
            Some(plan) => self.frame_writes_before(&mut writes, plan.writes[..plan.len].iter(), s0, end, none),
            None => 0,
        };
        // The words it pops keep their values in the memory (the callee's
        // first locals theirs before the values returned land there).
        if plan.is_some() {
            self.keep_returning_frame(end - 1, s0 - 2);
        }
        self.path = None;
        self.executed += 1;
        self.fetched_at = self.cycles;
        self.charge(self.fixed[op as usize]);
        let (to, s) = (old_sp as usize + 1, s0 as usize);
        match n {
            0 => {}
            1 => self.stack[to] = self.stack[s],
            _ => (self.stack[to], self.stack[to + 1]) = (self.stack[s - 1], self.stack[s]),
        }
        (self.mp, self.cp, self.vp, self.sp) = (mp, cp, vp, end);
        self.code_at = start as usize * 4;
        self.code_len = words as usize * 4;
        self.pc = pc;
        let hit = self.cache.access(start, words);
        self.charge_cache(op, hit, words, false);
        self.store_frame_writes(&writes[..k], none);
        true
    }

    pub(super) fn enter_code(&mut self, start: i32, words: u32) -> Result<(), EmuError> {
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
    pub(super) fn leave(&mut self) -> Result<(bool, u32), EmuError> {
        self.mp = self.pop()?;
        self.cp = self.pop()?;
        self.vp = self.pop()?;
        let pc = self.pop()?;
        self.sp = self.pop()?;
        if self.mp == 0 {
            return Err(self.fault(self.pc, "the outermost method (boot) returned".into()));
        }
        let (start, words) = code_of(self.rd(self.mp)?);
        self.enter_code(start, words)?;
        self.pc = pc;
        let hit = self.cache.access(start, words);
        self.trace_enter(start as u32, false, hit);
        Ok((hit, words))
    }

    /// Invokes the Java routine of bytecode `op` from the runtime's jump
    /// table; the invoke's own cache load is not charged (the bytecode's
    /// dispatch cost covers it), its return is.
    pub(super) fn java(&mut self, op: u8) -> Result<(), EmuError> {
        let (hit, words) = self.invoke(self.jjp + (i32::from(op) << 1))?;
        // The processor's dispatch is an invoke: a routine not in the cache
        // is loaded, and what the dispatch does not hide of it is charged
        // (JopSim charges the dispatch alone).
        if !hit && self.processor.is_some() {
            self.charge_dispatch_load(op, words);
        }
        Ok(())
    }

    #[cold]
    pub(super) fn charge_dispatch_load(&mut self, op: u8, words: u32) {
        // The model's formulas are slow to evaluate: each opcode and size
        // once per run.
        let extra = match self.dispatch_loads.get(&(op, words)) {
            Some(&extra) => extra,
            None => {
                let extra = self.dispatch_load(op, words);
                self.dispatch_loads.insert((op, words), extra);
                extra
            }
        };
        self.cache_cycles += extra;
        self.cycles += extra;
    }

    /// The cycles a dispatch of `op` to its Java routine (`words` long)
    /// that misses the cache adds to the opcode's own: what it does not
    /// hide of the load.
    fn dispatch_load(&self, op: u8, words: u32) -> u64 {
        let model = &self.cfg.model;
        let b = model.load_cost(false, words);
        let dispatch = if op >= 202 {
            model.native_cost_at(super::super::timing::opcode_name(op), b, words)
        } else {
            Some(model.cost_parts(op, b, words).0)
        };
        match dispatch {
            Some(total) => (total.round() as u64).saturating_sub(u64::from(self.fixed[op as usize])),
            None => 0,
        }
    }

    pub(super) fn charge(&mut self, cycles: u32) {
        self.cycles += u64::from(cycles);
    }

    /// What a cache miss adds to invoke or return `op` (its hit cost was
    /// charged when it started): the load not hidden behind it.
    pub(super) fn charge_cache(&mut self, op: u8, hit: bool, words: u32, invoke: bool) {
        let total = if invoke {
            self.table.invoke(op, hit, words)
        } else {
            self.table.ret(op, hit, words)
        };
        let extra = total.saturating_sub(self.fixed[op as usize]);
        self.cache_cycles += u64::from(extra);
        self.charge(extra);
    }

    /// Raises JOP exception `reason` (null pointer, array bounds, division):
    /// the next instruction becomes the exception helper's invoke.
    pub(super) fn raise(&mut self, reason: i32) {
        self.pending_exception = true;
        self.attention_at = 0;
        self.exception_reason = reason;
    }

    pub(super) fn null_check(&mut self, r: i32) -> bool {
        if r == 0 {
            self.raise(EXC_NP);
            self.access_case = Some(AccessCase::Raises(Raise::Null));
            return false;
        }
        true
    }
}
