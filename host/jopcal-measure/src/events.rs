//! Bytecode event streams: one record per bytecode a JOP executed, in order,
//! with the cycles it took. The Verilator bench writes them from its trace
//! taps (`--events FILE`, hdl-sim/CONTRACT.md), the virtual board from its
//! interpreter; `jopcal diff` compares two of them record by record.
//!
//! The format: the 8 bytes `JOPEVT2\n`, then 16-byte little-endian records
//! `u32 method, u16 pc, u8 op, u8 flags, u32 cycles, u32 tos`:
//!
//! - a bytecode: `method` is the word address of its method's code, `pc` its
//!   byte index in the method, `op` its opcode (241, JOP's `sys_exc`, when an
//!   exception was taken instead of the fetched bytecode), `cycles` the
//!   cycles from its fetch to the next fetch, `tos` the top of the operand
//!   stack when it is done (what it computed, where it pushed a value); flag
//!   [`HIT`] or [`MISS`] when it is the first bytecode of a method entered
//!   or returned to (the method cache's answer);
//! - flag [`START`]: the first record; `cycles` is the absolute cycle (low 32
//!   bits) of the first fetch;
//! - flag [`END`]: the last record, with the reason in bits 4..6 ([`EndReason`]);
//!   for a stack overflow, `method`, `pc` and `op` name the bytecode it
//!   happened in and `cycles` how long that bytecode had run.

use std::io::{self, Read, Write};

/// The stream's first 8 bytes.
pub const MAGIC: &[u8; 8] = b"JOPEVT2\n";
/// A record's bytes.
pub const RECORD: usize = 16;
/// The method cache hit the method this bytecode runs in.
pub const HIT: u8 = 1;
/// The method cache loaded the method this bytecode runs in.
pub const MISS: u8 = 2;
pub const START: u8 = 0x40;
pub const END: u8 = 0x80;
/// JOP's `sys_exc`: the exception entry that runs instead of a fetched bytecode.
pub const SYS_EXC: u8 = 241;

/// One executed bytecode.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BytecodeEvent {
    pub method: u32,
    pub pc: u16,
    pub op: u8,
    /// [`HIT`], [`MISS`] or 0.
    pub flags: u8,
    pub cycles: u32,
    /// The top of the operand stack after it.
    pub tos: i32,
}

/// Why a stream ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EndReason {
    /// The program wrote `JVM exit!`: the stream ends at the next fetch.
    Exit,
    /// The processor's stack overflowed in the bytecode named.
    StackOverflow { at: BytecodeEvent },
    /// The run was stopped (cycle limit, time-out, the host) or failed.
    Stopped,
}

/// A record of the stream.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Event {
    /// The absolute cycle (low 32 bits) of the first fetch.
    Start {
        cycle: u32,
    },
    Bytecode(BytecodeEvent),
    End(EndReason),
}

/// Why a stream could not be read: the byte offset and what is wrong.
#[derive(Debug, thiserror::Error)]
pub enum EventsError {
    #[error("byte {offset}: {what}")]
    Bad { offset: u64, what: String },
    #[error(transparent)]
    Io(#[from] io::Error),
}

/// Why a record is not one of a stream's.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum BadRecord {
    #[error("end record with unknown reason {0}")]
    EndReason(u8),
    #[error("flags {0:#04x} are not a bytecode's")]
    Flags(u8),
}

fn encode(method: u32, pc: u16, op: u8, flags: u8, cycles: u32, tos: i32) -> [u8; RECORD] {
    let mut r = [0u8; RECORD];
    r[..4].copy_from_slice(&method.to_le_bytes());
    r[4..6].copy_from_slice(&pc.to_le_bytes());
    r[6] = op;
    r[7] = flags;
    r[8..12].copy_from_slice(&cycles.to_le_bytes());
    r[12..].copy_from_slice(&tos.to_le_bytes());
    r
}

impl Event {
    /// The record's bytes.
    pub fn to_bytes(&self) -> [u8; RECORD] {
        match *self {
            Event::Start { cycle } => encode(0, 0, 0, START, cycle, 0),
            Event::Bytecode(e) => encode(e.method, e.pc, e.op, e.flags & (HIT | MISS), e.cycles, e.tos),
            Event::End(r) => match r {
                EndReason::Exit => encode(0, 0, 0, END | (1 << 4), 0, 0),
                EndReason::StackOverflow { at } => encode(at.method, at.pc, at.op, END | (2 << 4), at.cycles, at.tos),
                EndReason::Stopped => encode(0, 0, 0, END | (3 << 4), 0, 0),
            },
        }
    }

    /// The record in `r`, or what is wrong with it.
    pub fn from_bytes(r: &[u8; RECORD]) -> Result<Event, BadRecord> {
        let method = u32::from_le_bytes([r[0], r[1], r[2], r[3]]);
        let pc = u16::from_le_bytes([r[4], r[5]]);
        let (op, flags) = (r[6], r[7]);
        let cycles = u32::from_le_bytes([r[8], r[9], r[10], r[11]]);
        let tos = i32::from_le_bytes([r[12], r[13], r[14], r[15]]);
        let ev = BytecodeEvent {
            method,
            pc,
            op,
            flags: 0,
            cycles,
            tos,
        };
        if flags & END != 0 {
            return match (flags >> 4) & 7 {
                1 => Ok(Event::End(EndReason::Exit)),
                2 => Ok(Event::End(EndReason::StackOverflow { at: ev })),
                3 => Ok(Event::End(EndReason::Stopped)),
                n => Err(BadRecord::EndReason(n)),
            };
        }
        if flags == START {
            return Ok(Event::Start { cycle: cycles });
        }
        if flags & !(HIT | MISS) != 0 || flags == HIT | MISS {
            return Err(BadRecord::Flags(flags));
        }
        Ok(Event::Bytecode(BytecodeEvent { flags, ..ev }))
    }
}

/// Reads a stream record by record.
pub struct EventReader<R: Read> {
    inner: R,
    offset: u64,
    ended: bool,
}

impl<R: Read> EventReader<R> {
    /// Checks the magic; the records follow.
    pub fn new(mut inner: R) -> Result<Self, EventsError> {
        let mut m = [0u8; 8];
        let n = read_full(&mut inner, &mut m)?;
        if n < 8 || &m != MAGIC {
            return Err(EventsError::Bad {
                offset: 0,
                what: "not a bytecode event stream of this version (it does not start with JOPEVT2; a bench an older jopcal built writes another: rebuild it with `jopcal sim build`)".into(),
            });
        }
        Ok(EventReader {
            inner,
            offset: 8,
            ended: false,
        })
    }

    /// The next record; `None` at the end of the input. A record after the
    /// end record, or a record cut short, is an error.
    pub fn next_event(&mut self) -> Result<Option<Event>, EventsError> {
        let mut r = [0u8; RECORD];
        let n = read_full(&mut self.inner, &mut r)?;
        if n == 0 {
            return Ok(None);
        }
        let at = self.offset;
        if n < RECORD {
            return Err(EventsError::Bad {
                offset: at,
                what: format!("the last record is cut short ({n} of {RECORD} bytes)"),
            });
        }
        if self.ended {
            return Err(EventsError::Bad {
                offset: at,
                what: "a record after the end record".into(),
            });
        }
        self.offset += RECORD as u64;
        let ev = Event::from_bytes(&r).map_err(|e| EventsError::Bad {
            offset: at,
            what: e.to_string(),
        })?;
        self.ended = matches!(ev, Event::End(_));
        Ok(Some(ev))
    }

    /// The byte offset of the next record.
    pub fn offset(&self) -> u64 {
        self.offset
    }
}

/// Reads until `buf` is full or the input ends; the bytes read.
fn read_full(r: &mut impl Read, buf: &mut [u8]) -> io::Result<usize> {
    let mut n = 0;
    while n < buf.len() {
        match r.read(&mut buf[n..]) {
            Ok(0) => break,
            Ok(k) => n += k,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(n)
}

/// Writes a stream: the magic, then each record.
pub struct EventWriter<W: Write> {
    inner: W,
}

impl<W: Write> EventWriter<W> {
    pub fn new(mut inner: W) -> io::Result<Self> {
        inner.write_all(MAGIC)?;
        Ok(EventWriter { inner })
    }

    pub fn write(&mut self, ev: &Event) -> io::Result<()> {
        self.inner.write_all(&ev.to_bytes())
    }

    pub fn into_inner(self) -> W {
        self.inner
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn bc(method: u32, pc: u16, op: u8, flags: u8, cycles: u32) -> Event {
        Event::Bytecode(BytecodeEvent {
            method,
            pc,
            op,
            flags,
            cycles,
            tos: cycles as i32 - 7,
        })
    }

    #[test]
    fn a_stream_reads_back_as_written() {
        let evs = [
            Event::Start { cycle: 1234 },
            bc(100, 0, 42, MISS, 6),
            bc(100, 1, 182, 0, 100),
            bc(200, 0, 177, HIT, 21),
            Event::End(EndReason::StackOverflow {
                at: BytecodeEvent {
                    method: 200,
                    pc: 3,
                    op: 184,
                    flags: 0,
                    cycles: 9,
                    tos: 0,
                },
            }),
        ];
        let mut w = EventWriter::new(Vec::new()).unwrap();
        for e in &evs {
            w.write(e).unwrap();
        }
        let bytes = w.into_inner();
        assert_eq!(bytes.len(), 8 + RECORD * evs.len());
        let mut r = EventReader::new(&bytes[..]).unwrap();
        for e in &evs {
            assert_eq!(r.next_event().unwrap().as_ref(), Some(e));
        }
        assert!(r.next_event().unwrap().is_none());
    }

    #[test]
    fn bad_streams_are_named_by_byte() {
        assert!(EventReader::new(&b"JOPEVT1\n"[..])
            .err()
            .unwrap()
            .to_string()
            .contains("byte 0: not a bytecode event stream"));
        let mut bytes = MAGIC.to_vec();
        bytes.extend(Event::End(EndReason::Exit).to_bytes());
        bytes.extend(bc(1, 2, 3, 0, 4).to_bytes());
        let mut r = EventReader::new(&bytes[..]).unwrap();
        r.next_event().unwrap();
        assert_eq!(
            r.next_event().unwrap_err().to_string(),
            "byte 24: a record after the end record"
        );
        let mut short = MAGIC.to_vec();
        short.extend([1, 2, 3]);
        let mut r = EventReader::new(&short[..]).unwrap();
        assert_eq!(
            r.next_event().unwrap_err().to_string(),
            "byte 8: the last record is cut short (3 of 16 bytes)"
        );
        let mut odd = MAGIC.to_vec();
        odd.extend(encode(0, 0, 0, 0x13, 0, 0));
        let mut r = EventReader::new(&odd[..]).unwrap();
        assert!(r.next_event().unwrap_err().to_string().contains("flags 0x13"));
    }

    proptest! {
        #[test]
        fn any_bytes_read_without_panic(bytes in proptest::collection::vec(any::<u8>(), 0..200)) {
            let mut input = MAGIC.to_vec();
            input.extend(bytes);
            let mut r = EventReader::new(&input[..]).unwrap();
            while let Ok(Some(_)) = r.next_event() {}
        }

        #[test]
        fn every_record_round_trips(method: u32, pc: u16, op: u8, miss: bool, cycles: u32) {
            let e = bc(method, pc, op, if miss { MISS } else { HIT }, cycles);
            prop_assert_eq!(Event::from_bytes(&e.to_bytes()).unwrap(), e);
        }
    }
}
