//! Fetching bytecodes and their operands from the running method's code.

use super::*;

impl<'c> Machine<'c> {
    // ---- code ----

    #[inline(always)]
    pub(super) fn byte(&mut self) -> Result<u8, EmuError> {
        let pc = self.pc as u32 as usize;
        if pc >= self.code_len {
            return Err(self.code_fault());
        }
        self.pc += 1;
        Ok(self.code[self.code_at + pc])
    }

    #[cold]
    #[inline(never)]
    pub(super) fn code_fault(&self) -> EmuError {
        self.fault(
            self.pc,
            format!("ran past the end of the method's {} code bytes", self.code_len),
        )
    }

    #[inline(always)]
    pub(super) fn opd16u(&mut self) -> Result<i32, EmuError> {
        let hi = self.byte()?;
        let lo = self.byte()?;
        Ok(i32::from(u16::from_be_bytes([hi, lo])))
    }

    #[inline(always)]
    pub(super) fn opd16s(&mut self) -> Result<i32, EmuError> {
        Ok(i32::from(self.opd16u()? as u16 as i16))
    }
}
