//! A traced run's accounting, the same as the Verilator bench's from its
//! trace taps (hdl-sim/CONTRACT.md): every bytecode's cycles, from its start
//! to the next bytecode's, go to the method it belongs to (an invoke's, with
//! the cache load of the method it calls, to the caller; a return's, with
//! the reload of the caller, to the method returning); a method entered by
//! a call counts a call, one the cache loads counts a load. Optionally each
//! bytecode is also handed on as a [`BytecodeEvent`] (`jopcal diff`).

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

/// Receives every bytecode of a traced run as it completes.
pub type EventSink<'s> = Box<dyn FnMut(BytecodeEvent) + 's>;

/// The tracer's state: the tallies and the bytecode running.
pub(super) struct Tracer<'s> {
    pub(super) tally: BTreeMap<u32, MethodTally>,
    running: Option<(BytecodeEvent, u64)>,
    /// The cache's answer for the method entered since the last bytecode.
    entered: u8,
    sink: Option<EventSink<'s>>,
}

impl<'s> Tracer<'s> {
    pub(super) fn new(sink: Option<EventSink<'s>>) -> Self {
        Tracer {
            tally: BTreeMap::new(),
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
