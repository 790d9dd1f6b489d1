//! The 256-word stack: its words, pushes and pops, longs in two words.

use super::*;

impl<'c> Machine<'c> {
    // ---- the stack ----

    // The accessors below run for nearly every bytecode: their errors are
    // made out of line, so that the accessors inline into the interpreter.

    #[inline(always)]
    pub(super) fn st(&self, i: i32) -> Result<i32, EmuError> {
        match self.stack.get(i as u32 as usize) {
            Some(v) => Ok(*v),
            None => Err(self.stack_fault(i)),
        }
    }

    #[inline(always)]
    pub(super) fn set_st(&mut self, i: i32, v: i32) -> Result<(), EmuError> {
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
    pub(super) fn stack_fault(&self, i: i32) -> EmuError {
        let what = match self.processor {
            // The processor's pointer wraps: it overwrites its own stack
            // (the microcode's variables at its bottom) and runs on.
            Some(p) if i >= 0 => format!(
                "the processor's stack pointer ran past the end of its {}-word stack without taking its overflow mark {} (an invoke's frame jumped the pointer over it): the processor overwrites the bottom of its stack from here and runs on corrupted, which the virtual board does not model",
                self.stack.len(),
                p.overflow_at
            ),
            _ => format!(
                "stack word {i} outside JOP's {}-word stack (a stack overflow?)",
                self.stack.len()
            ),
        };
        self.fault(self.pc, what)
    }

    #[inline(always)]
    pub(super) fn push(&mut self, v: i32) -> Result<(), EmuError> {
        self.sp += 1;
        self.set_st(self.sp, v)
    }

    #[inline(always)]
    pub(super) fn pop(&mut self) -> Result<i32, EmuError> {
        let v = self.st(self.sp)?;
        self.sp -= 1;
        Ok(v)
    }

    /// The long whose high word is at `hi` and low word at `hi + 1`.
    pub(super) fn long_at(&self, hi: i32) -> Result<i64, EmuError> {
        Ok((i64::from(self.st(hi)?) << 32) | i64::from(self.st(hi + 1)? as u32))
    }

    pub(super) fn set_long_at(&mut self, hi: i32, v: i64) -> Result<(), EmuError> {
        self.set_st(hi, (v >> 32) as i32)?;
        self.set_st(hi + 1, v as i32)
    }
}
