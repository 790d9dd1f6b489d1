//! The transmit side of JOP's UART (`sc_uart` with its `fifo`), cycle by
//! cycle, for what a program sees of it: the status register's "transmit
//! FIFO not full" bit, and whether a byte it writes is taken or lost (a
//! write to a full FIFO vanishes). A program that prints polls that bit, so
//! the cycles it spends waiting are the UART's.
//!
//! The model, as the tree's VHDL is: a FIFO of `depth` one-byte elements.
//! A write goes into element 0 if it is empty. An element passes its byte
//! on to the next one at the end of a cycle in which it is full and the
//! next is empty, and empties one cycle later. The transmitter, idle, loads
//! the last element's byte at the end of a cycle in which it is full
//! (emptying it one cycle later) and then sends 11 bit times (start bit,
//! eight data bits, two stop bits), one per tick of its divided clock: a
//! tick is a cycle whose number since reset is a positive multiple of 16
//! times the 16x clock's period. "Not full" is element 0 being empty.

/// The transmit FIFO and the transmitter's state, during cycle `now`.
#[derive(Debug, Clone)]
pub struct TxUart {
    /// Cycles between bit ticks (16 x the 16x clock's period).
    bit: u64,
    /// Element i holds a byte.
    full: Vec<bool>,
    /// Element i passed its byte on last cycle: it empties now.
    passed: Vec<bool>,
    /// The transmitter took the last element's byte last cycle.
    taken: bool,
    /// Bit ticks left of the frame being sent (0: idle).
    sending: u32,
    /// The cycle the state is for.
    now: u64,
}

/// Ticks a frame takes: start bit, 8 data bits, 2 stop bits.
const FRAME_TICKS: u32 = 11;

/// Cycles the transmitter takes to send one character with its 16x clock
/// ticking every `tick` cycles: a frame of bits, each 16 ticks.
pub fn frame_cycles(tick: u64) -> u64 {
    u64::from(FRAME_TICKS) * 16 * tick.max(1)
}

impl TxUart {
    /// A UART whose 16x clock ticks every `tick` cycles, with a transmit
    /// FIFO of `depth` bytes, at cycle 0 (reset).
    pub fn new(tick: u64, depth: usize) -> TxUart {
        let depth = depth.max(1);
        TxUart {
            bit: frame_cycles(tick) / u64::from(FRAME_TICKS),
            full: vec![false; depth],
            passed: vec![false; depth],
            taken: false,
            sending: 0,
            now: 0,
        }
    }

    fn idle(&self) -> bool {
        self.sending == 0 && !self.taken && self.full.iter().all(|f| !f) && self.passed.iter().all(|p| !p)
    }

    /// Whether nothing but bit ticks can change the state next cycle.
    fn waiting_for_a_tick(&self) -> bool {
        let depth = self.full.len();
        // No element passes a byte on, none empties, the transmitter is busy.
        self.sending > 0
            && !self.taken
            && self.passed.iter().all(|p| !p)
            && (0..depth - 1).all(|i| !self.full[i] || self.full[i + 1])
    }

    /// One clock edge: the state during cycle `now + 1` from the state
    /// during `now`, with a write of the processor in cycle `now` if `write`.
    fn step(&mut self, write: bool) {
        let depth = self.full.len();
        let f = self.full.clone();
        let mut full = f.clone();
        let mut passed = vec![false; depth];
        for i in 0..depth {
            let incoming = if i == 0 { write && !f[0] } else { f[i - 1] && !f[i] };
            let leaves = self.passed[i] || (i == depth - 1 && self.taken);
            full[i] = if !f[i] && incoming {
                true
            } else if leaves {
                false
            } else {
                f[i]
            };
            passed[i] = i + 1 < depth && f[i] && !f[i + 1];
        }
        let mut taken = false;
        if self.sending == 0 {
            if f[depth - 1] {
                self.sending = FRAME_TICKS;
                taken = true;
            }
        } else if self.now > 0 && self.now.is_multiple_of(self.bit) {
            self.sending -= 1;
        }
        self.full = full;
        self.passed = passed;
        self.taken = taken;
        self.now += 1;
    }

    /// Brings the state to cycle `cycle` (no writes on the way).
    fn advance(&mut self, cycle: u64) {
        while self.now < cycle {
            if self.idle() {
                self.now = cycle;
                return;
            }
            if self.waiting_for_a_tick() {
                // Straight to the next tick cycle (this one, if it is one:
                // its tick is taken by the step below).
                let next_tick = self.now.div_ceil(self.bit) * self.bit;
                let to = next_tick.min(cycle);
                if to > self.now {
                    self.now = to;
                    if self.now == cycle {
                        return;
                    }
                }
            }
            self.step(false);
        }
    }

    /// The status register's bit 0 during `cycle`: the FIFO has room.
    pub fn room(&mut self, cycle: u64) -> bool {
        self.advance(cycle);
        !self.full[0]
    }

    /// The processor writes a byte in `cycle`: true if it was taken, false
    /// if the FIFO was full and it is lost.
    pub fn write(&mut self, cycle: u64) -> bool {
        self.advance(cycle);
        let taken = !self.full[0];
        self.step(true);
        taken
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_byte_into_an_idle_uart_fills_element_0_for_two_cycles() {
        let mut u = TxUart::new(2, 2);
        assert!(u.room(99));
        assert!(u.write(100));
        assert!(!u.room(101));
        assert!(!u.room(102));
        assert!(u.room(103));
    }

    #[test]
    fn back_to_back_bytes_wait_for_the_frames_ahead_of_them() {
        // 32 cycles a bit, 352 a frame.
        let mut u = TxUart::new(2, 2);
        assert!(u.write(1000)); // into the transmitter at the end of 1002
        assert!(u.write(1003)); // waits in element 1 from 1005
        assert!(!u.write(1005), "element 0 empties a cycle after it passes its byte on");
        assert!(u.write(1006)); // element 0: the FIFO is full
        assert!(!u.room(1007));
        assert!(!u.write(1010), "a write to a full FIFO is lost");
        // The first frame ends at its 11th tick; room comes 5 cycles later.
        let mut c = 1011;
        while !u.room(c) {
            c += 1;
        }
        let first_tick = 1024; // the first multiple of 32 after the load at 1003
        let eleventh = first_tick + 10 * 32;
        assert_eq!(c, eleventh + 5);
    }

    #[test]
    fn a_frame_ends_at_its_eleventh_tick_and_frees_a_waiting_byte_five_cycles_later() {
        // Ticks every 32 cycles; the transmitter idle. A byte written in
        // cycle 100 is loaded at the end of cycle 102 (ticks from 128: the
        // 11th at 448); one written at 110 waits in element 1 and is loaded
        // at 450; one written at 120 waits in element 0 until 453.
        let mut u = TxUart::new(2, 2);
        for w in [100, 110, 120] {
            assert!(u.write(w));
        }
        assert!(!u.room(452));
        assert!(u.room(453));
    }

    #[test]
    fn fast_forward_gives_the_same_state_as_stepping_every_cycle() {
        let mut a = TxUart::new(3, 3);
        let mut b = TxUart::new(3, 3);
        let writes = [10u64, 11, 13, 400, 401, 2000];
        let mut w = writes.iter().peekable();
        for c in 0..4000u64 {
            let write = w.peek() == Some(&&c);
            if write {
                w.next();
                a.write(c);
            }
            // b: stepped one cycle at a time, asked every cycle.
            if write {
                b.write(c);
            } else {
                let _ = b.room(c);
            }
            if c % 7 == 0 {
                assert_eq!(a.room(c + 1), b.clone().room(c + 1), "cycle {c}");
            }
        }
    }
}
