//! Memory and I/O: word reads and writes, the scratchpad, the I/O devices
//! at JOP's addresses and the UART's output.
//!
//! As JopSim: memory wraps at its size with a little slack past the end
//! (the runtime's memory probe relies on it), a 256-word scratchpad, and
//! I/O devices that are always ready. As the processor (`vhdl/core/jopcpu.vhd`
//! and the top's memory controller): the address bus's 23 bits decide,
//! bits 22..21 being 11 for the I/O devices (bits 5..4 the device, 3..0 its
//! register), 10 for the scratchpad, and otherwise, with bits 20..19 00,
//! the SRAM at the low address bits (higher addresses mirror it); the flash
//! and NAND behind 01 and 1x are not simulated. The UART's transmitter is
//! the processor's ([`super::uart`]), the counters count from reset.

use super::*;

/// The address bus's width, and the regions its top bits select.
const BUS_MASK: i32 = (1 << 23) - 1;
const IO_REGION: i32 = 3 << 21;
const SCRATCHPAD_REGION: i32 = 2 << 21;
const REGION_MASK: i32 = 3 << 21;

/// Where a processor address goes.
enum Place {
    Memory(usize),
    Scratchpad(Option<usize>),
    Io(i32),
}

/// Address `a` as a read sees it while the collector copies an object
/// from `src` (the copy unit's translation of the `pos` words copied so
/// far; it matters only during a collection).
#[inline(always)]
pub(super) fn copy_translated(a: i32, src: i32, pos: i32) -> i32 {
    if a >= src && a < src.wrapping_add(pos) {
        a - src + pos
    } else {
        a
    }
}

impl<'c> Machine<'c> {
    // ---- memory and I/O ----

    #[inline(always)]
    pub(super) fn rd(&mut self, addr: i32) -> Result<i32, EmuError> {
        let a = copy_translated(addr, self.copy_src, self.copy_pos);
        if (0..self.mem_words).contains(&a) {
            return Ok(self.mem[a as usize]);
        }
        self.rd_elsewhere(a)
    }

    /// The memory's word at `addr` as [`Machine::rd`] reads it, where it
    /// lies in the memory (not a scratchpad or an I/O device, whose reads
    /// may act): `None` elsewhere.
    #[inline(always)]
    pub(super) fn memory_read(&self, addr: i32) -> Option<i32> {
        let external = super::fast::External {
            words: self.mem_words,
            copy_src: self.copy_src,
            copy_pos: self.copy_pos,
        };
        external.read(&self.mem, addr)
    }

    #[inline(never)]
    fn rd_elsewhere(&mut self, a: i32) -> Result<i32, EmuError> {
        if self.processor.is_some() {
            return Ok(match self.decode(a)? {
                Place::Memory(i) => self.mem[i],
                Place::Scratchpad(i) => i.map_or(0, |i| self.scratch[i]),
                Place::Io(r) => self.io_read(r),
            });
        }
        if (SCRATCHPAD..=SCRATCHPAD + PROBE_SLACK).contains(&a) {
            return Ok(self.scratch[(a % SCRATCHPAD_WORDS) as usize]);
        }
        if !(io::LOWEST..=MEMORY_WORDS + PROBE_SLACK).contains(&a) {
            return Err(self.fault(self.pc, format!("read of address {a} outside memory and I/O")));
        }
        if a < 0 {
            return Ok(self.io_read(a));
        }
        Ok(self.mem[(a % MEMORY_WORDS) as usize])
    }

    pub(super) fn wr(&mut self, a: i32, v: i32) -> Result<(), EmuError> {
        if (0..self.mem_words).contains(&a) {
            self.mem[a as usize] = v;
            return Ok(());
        }
        if self.processor.is_some() {
            match self.decode(a)? {
                Place::Memory(i) => self.mem[i] = v,
                Place::Scratchpad(i) => {
                    if let Some(i) = i {
                        self.scratch[i] = v;
                    }
                }
                Place::Io(r) => return self.io_write(r, v),
            }
            return Ok(());
        }
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

    /// The processor's decoding of address `a`.
    fn decode(&self, a: i32) -> Result<Place, EmuError> {
        let bus = a & BUS_MASK;
        match bus & REGION_MASK {
            IO_REGION => Ok(Place::Io(io::LOWEST + (bus & 0x3f))),
            SCRATCHPAD_REGION => Ok(Place::Scratchpad(
                (!self.scratch.is_empty()).then(|| (bus as usize) & (self.scratch.len() - 1)),
            )),
            _ if bus & (3 << 19) == 0 => Ok(Place::Memory((bus as usize) & (self.mem_words as usize - 1))),
            _ => Err(self.fault(
                self.pc,
                format!("access of address {a:#x}: the flash and NAND behind the memory controller are not simulated"),
            )),
        }
    }

    /// Whether address `a` reaches an on-chip device that answers at once
    /// (an I/O device, the scratchpad) rather than the external memory.
    pub(super) fn is_io(&self, a: i32) -> bool {
        if self.processor.is_some() {
            let region = (a & BUS_MASK) & REGION_MASK;
            region == IO_REGION || region == SCRATCHPAD_REGION
        } else {
            (io::LOWEST..0).contains(&a)
        }
    }

    /// The cycle counter as the device sees it when the running bytecode
    /// reads (or, `write`, writes) it: the processor's counts from reset,
    /// and its devices see an access a fixed number of cycles after the
    /// bytecode's fetch; JopSim's is the cycles with the bytecode's own.
    fn io_clock(&self, write: bool) -> u64 {
        match self.processor {
            Some(p) => self.fetched_at + p.start_cycle + if write { p.io_write_at } else { p.io_read_at },
            None => self.cycles,
        }
    }

    pub(super) fn io_read(&mut self, a: i32) -> i32 {
        match a {
            io::CNT => {
                let value = self.io_clock(false) as u32;
                if let Some(t) = self.trace.as_mut() {
                    t.counter_read(value);
                }
                if let Some(w) = self
                    .heap_watch
                    .filter(|_| self.heap_reads.len() < super::HEAP_READS_KEPT)
                {
                    if let Some(h) = self.heap_now(w, value) {
                        self.heap_reads.push(h);
                    }
                }
                value as i32
            }
            // Simulated time, not the host's clock: the board is deterministic.
            io::US_CNT => {
                let us = match self.processor {
                    Some(p) => (self.io_clock(false) / p.us_divider.max(1)) as u32 as i32,
                    None => (self.cycles as f64 / self.cfg.clock_mhz) as u64 as u32 as i32,
                };
                if self.clock_reads.len() < super::CLOCK_READS_KEPT {
                    self.clock_reads.push(((self.code_at / 4) as u32, us));
                }
                us
            }
            io::STATUS => {
                let clock = self.io_clock(false);
                match self.tx.as_mut() {
                    // Transmit FIFO not full (bit 0); nothing received.
                    Some(tx) => i32::from(tx.room(clock)),
                    None => 1,
                }
            }
            io::EXCPT => self.exception_reason,
            io::CPUCNT => 1,
            io::USB_STATUS if self.processor.is_none() => 1,
            io::UART => i32::from(b'_'),
            io::SIM_CACHE_COST if self.processor.is_none() => self.cache_cycles as i32,
            io::CPU_ID => 0,
            _ => 0,
        }
    }

    pub(super) fn io_write(&mut self, a: i32, v: i32) -> Result<(), EmuError> {
        match a {
            io::UART => {
                let clock = self.io_clock(true);
                // A byte written to a full transmit FIFO is lost, as on the processor.
                if self.tx.as_mut().is_none_or(|tx| tx.write(clock)) {
                    self.uart_byte(v as u8)
                }
            }
            io::EXCPT => self.raise(v),
            // Counting starts after the bytecode that writes, as in the tree's simulator.
            io::PERFCNT => self.executed_before_reset = self.executed,
            io::SIM_CACHE_FLUSH if self.processor.is_none() => self.cache.flush(),
            io::SIM_CACHE_COST if self.processor.is_none() => self.cache_cycles = v as u32 as u64,
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

    pub(super) fn uart_byte(&mut self, b: u8) {
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

    pub(super) fn flush_line(&mut self) {
        if !self.line.is_empty() {
            (self.uart)(&self.line);
            self.line.clear();
        }
    }
}
