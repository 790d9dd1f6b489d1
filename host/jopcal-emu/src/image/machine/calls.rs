//! Calls and returns: frames, the method cache, the Java routines of
//! bytecodes JOP implements in Java, exceptions the hardware raises.

use super::*;

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
        let w0 = self.rd(self.mp)?;
        let start = ((w0 as u32) >> 10) as i32;
        let words = (w0 & 0x3ff) as u32;
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
        let model = &self.cfg.model;
        let b = model.load_cost(false, words);
        let dispatch = if op >= 202 {
            model.native_cost_at(super::super::timing::opcode_name(op), b, words)
        } else {
            Some(model.cost_parts(op, b, words).0)
        };
        let (Some(total), fixed) = (dispatch, self.fixed[op as usize]) else {
            return;
        };
        let extra = (total.round() as u64).saturating_sub(u64::from(fixed));
        self.cache_cycles += extra;
        self.cycles += extra;
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
