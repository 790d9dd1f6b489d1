//! A traced run's accounting, the same as the Verilator bench's from its
//! trace taps (hdl-sim/CONTRACT.md): every bytecode's cycles, from its start
//! to the next bytecode's, go to the method it belongs to (an invoke's, with
//! the cache load of the method it calls, to the caller; a return's, with
//! the reload of the caller, to the method returning); a method entered by
//! a call counts a call, one the cache loads counts a load. Every opcode's
//! executions and cycles are counted too, and that count is taken at each
//! read of the cycle counter ([`CounterRead`]), so that the cycles between two
//! reads (a timed region) can be taken apart by opcode (`jopcal regress`).
//! Optionally each bytecode is also handed on as a [`BytecodeEvent`]
//! (`jopcal diff`).

use super::*;
use jopcal_measure::events::{BytecodeEvent, HIT, MISS};
use std::collections::BTreeMap;

/// One method's share of a traced run.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct MethodTally {
    pub calls: u64,
    pub bytecodes: u64,
    pub cycles: u64,
    pub cache_loads: u64,
}

/// One opcode's executions and their cycles (each from its fetch to the next
/// bytecode's).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct OpTally {
    pub count: u64,
    pub cycles: u64,
}

/// Every opcode's tally, indexed by opcode.
pub type OpTallies = [OpTally; 256];

/// A read of the cycle counter in a traced run: the value read, and every
/// opcode's tally over the bytecodes fetched before the reading one. The
/// value is the reading bytecode's fetch cycle plus a constant, so between
/// two reads the difference of the values is exactly the cycles of the
/// difference of the tallies.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CounterRead {
    pub value: u32,
    pub by_op: Box<OpTallies>,
}

/// The counter reads a traced run keeps (a busy wait could read it in a loop).
pub const COUNTER_READS_KEPT: usize = 256;

/// The opcodes' tallies between two of `reads` whose values differ by
/// `measured` (a timed region's count, as the program printed it): the
/// latest such pair. `None` when no two reads are that far apart.
pub fn region_by_opcode(reads: &[CounterRead], measured: u64) -> Option<Box<OpTallies>> {
    let values: Vec<u32> = reads.iter().map(|r| r.value).collect();
    let (i, j) = region_reads(&values, measured)?;
    let mut out = Box::new([OpTally::default(); 256]);
    for (k, o) in out.iter_mut().enumerate() {
        o.count = reads[j].by_op[k].count - reads[i].by_op[k].count;
        o.cycles = reads[j].by_op[k].cycles - reads[i].by_op[k].cycles;
    }
    Some(out)
}

/// The two of the counter's `values` (in the order read) that a timed
/// region of `measured` cycles lies between: the latest pair whose values
/// differ by it (the counter wraps at 32 bits).
pub fn region_reads(values: &[u32], measured: u64) -> Option<(usize, usize)> {
    let target = measured as u32;
    (0..values.len()).rev().find_map(|j| {
        (0..j)
            .rev()
            .find(|&i| values[j].wrapping_sub(values[i]) == target)
            .map(|i| (i, j))
    })
}

/// Receives every bytecode of a traced run as it completes.
pub type EventSink<'s> = Box<dyn FnMut(BytecodeEvent) + 's>;

/// The tracer's state: the tallies and the bytecode running.
pub(super) struct Tracer<'s> {
    pub(super) tally: BTreeMap<u32, MethodTally>,
    pub(super) by_op: Box<OpTallies>,
    pub(super) counter_reads: Vec<CounterRead>,
    running: Option<(BytecodeEvent, u64)>,
    /// The cache's answer for the method entered since the last bytecode.
    entered: u8,
    sink: Option<EventSink<'s>>,
}

impl<'s> Tracer<'s> {
    pub(super) fn new(sink: Option<EventSink<'s>>) -> Self {
        Tracer {
            tally: BTreeMap::new(),
            by_op: Box::new([OpTally::default(); 256]),
            counter_reads: Vec::new(),
            running: None,
            entered: 0,
            sink,
        }
    }

    /// The bytecode running is done at `cycles`, leaving `tos` on top of the stack.
    pub(super) fn close(&mut self, cycles: u64, tos: i32) {
        if let Some((mut ev, since)) = self.running.take() {
            let d = cycles - since;
            self.tally.entry(ev.method).or_default().cycles += d;
            let o = &mut self.by_op[usize::from(ev.op)];
            o.count += 1;
            o.cycles += d;
            ev.cycles = d as u32;
            ev.tos = tos;
            if let Some(sink) = self.sink.as_mut() {
                sink(ev);
            }
        }
    }

    /// Bytecode `op` of the method whose code is at word `method` starts at
    /// byte `pc` and cycle `cycles`.
    pub(super) fn fetch(&mut self, cycles: u64, method: u32, pc: i32, op: u8, tos: i32) {
        self.close(cycles, tos);
        self.tally.entry(method).or_default().bytecodes += 1;
        let ev = BytecodeEvent {
            method,
            pc: pc as u16,
            op,
            flags: std::mem::take(&mut self.entered),
            cycles: 0,
            tos: 0,
        };
        self.running = Some((ev, cycles));
    }

    /// The running bytecode read `value` from the cycle counter.
    pub(super) fn counter_read(&mut self, value: u32) {
        if self.counter_reads.len() < COUNTER_READS_KEPT {
            self.counter_reads.push(CounterRead {
                value,
                by_op: self.by_op.clone(),
            });
        }
    }

    /// The method whose code is at word `method` is entered (by a call, or
    /// a return when not `call`); the cache hit or loaded it.
    pub(super) fn enter(&mut self, method: u32, call: bool, hit: bool) {
        let t = self.tally.entry(method).or_default();
        t.calls += u64::from(call);
        t.cache_loads += u64::from(!hit);
        self.entered = if hit { HIT } else { MISS };
    }
}

impl<'c> Machine<'c> {
    /// Records the start of bytecode `op` at `at` in the running method.
    #[inline(never)]
    pub(super) fn trace_fetch(&mut self, op: u8, at: i32) {
        let method = (self.code_at / 4) as u32;
        let tos = self.top();
        if let Some(t) = self.trace.as_mut() {
            t.fetch(self.cycles, method, at, op, tos);
        }
    }

    /// The top of the stack, for a trace (0 where there is none).
    pub(super) fn top(&self) -> i32 {
        self.stack.get(self.sp as u32 as usize).copied().unwrap_or(0)
    }

    /// Records a method entered through the cache.
    pub(super) fn trace_enter(&mut self, start: u32, call: bool, hit: bool) {
        if let Some(t) = self.trace.as_mut() {
            t.enter(start, call, hit);
        }
    }
}
