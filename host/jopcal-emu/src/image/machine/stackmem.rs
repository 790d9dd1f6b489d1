//! The processor's stack memory where a program can see it differ from the
//! stack's values. JOP keeps the top two words of the stack in registers
//! and the rest in an on-chip memory that nothing clears: above the stack it
//! holds what earlier, deeper stacks and the microcode's temporaries left
//! there. A program sees those words in a new frame's locals past its
//! arguments (the compiler writes them before it reads them, but the
//! garbage collector scans the whole stack for references with
//! `Native.rdIntMem`) and where the runtime moves the pointer itself
//! (`Native.setSP`, when an exception unwinds frames).
//!
//! The board keeps its stack array as the stack's values, as ever, and the
//! memory's words above the stack in `ram`: a word that leaves the stack
//! (a pop) goes there with its value, the microcode's writes above the
//! stack go there with theirs (`jopcal_jop::microcode::stackram` lists them
//! per bytecode), and a word that joins the stack without being pushed (a
//! new frame's locals, `setSP` upwards) comes back from there.

use super::*;
use crate::config::{
    FixedPlan, FixedValue, FramePlan, FrameValue, NearValue, RamScripts, StackStep, FIXED_WRITES, FRAME_WRITES,
    NEAR_WORDS as NEAR, SET_SP,
};
use jopcal_jop::microcode::stackram::{At, Register, Value};

/// The machine as a bytecode that moves the frame found it, for its
/// [`FramePlan`].
pub(super) struct FrameEntry {
    entry: Entry,
    /// The frame's first two locals.
    frame0: [i32; 2],
}

/// The machine as a bytecode found it, for its stack-memory bookkeeping.
struct Entry {
    /// The stack's top when it started, and the words near it.
    s0: i32,
    near: [i32; NEAR],
    regs: Registers,
    /// Its first operand byte.
    operand: i32,
}

/// The registers a bytecode's stack-memory writes can store.
#[derive(Clone, Copy)]
pub(super) struct Registers {
    mp: i32,
    cp: i32,
    vp: i32,
    heap: i32,
    jjp: i32,
    jjhp: i32,
    locks: i32,
}

impl Registers {
    #[inline(always)]
    pub(super) fn get(&self, r: Register) -> i32 {
        match r {
            Register::Mp => self.mp,
            Register::Cp => self.cp,
            Register::Vp => self.vp,
            Register::Heap => self.heap,
            Register::Jjp => self.jjp,
            Register::Jjhp => self.jjhp,
            Register::LockCount => self.locks,
        }
    }
}

impl Entry {
    /// The stack's word at `a` when the bytecode started (far from the top,
    /// where nothing was kept, as the stack is now).
    #[inline(always)]
    fn at(&self, a: i32, stack: &[i32]) -> i32 {
        let k = self.s0 - a;
        if (0..NEAR as i32).contains(&k) {
            self.near[k as usize]
        } else {
            stack.get(a as u32 as usize).copied().unwrap_or(0)
        }
    }

    /// The memory's word at `a` before the bytecode's writes: below the
    /// top two words the stack's, above them `ram`'s.
    #[inline(always)]
    fn memory(&self, a: i32, stack: &[i32], ram: &[i32]) -> i32 {
        if a <= self.s0 - 2 {
            self.at(a, stack)
        } else {
            ram.get(a as u32 as usize).copied().unwrap_or(0)
        }
    }
}

impl<'c> Machine<'c> {
    /// The stack's words from `s0` down, the top first.
    #[inline(always)]
    fn near_words(&self, s0: i32) -> [i32; NEAR] {
        let mut near = [0i32; NEAR];
        match self
            .stack
            .get((s0 + 1 - NEAR as i32) as u32 as usize..=s0 as u32 as usize)
        {
            Some(words) => {
                for (k, e) in near.iter_mut().enumerate() {
                    *e = words[NEAR - 1 - k];
                }
            }
            None => {
                for (k, e) in near.iter_mut().enumerate() {
                    *e = self.stack.get((s0 - k as i32) as u32 as usize).copied().unwrap_or(0);
                }
            }
        }
        near
    }

    /// The first operand byte of the bytecode fetched at `at`.
    #[inline(always)]
    fn operand_at(&self, at: i32) -> i32 {
        self.code
            .get(self.code_at + at as usize + 1)
            .copied()
            .map_or(0, i32::from)
    }

    /// The microcode's registers, as they are now.
    #[inline(always)]
    pub(super) fn registers(&self) -> Registers {
        Registers {
            mp: self.mp,
            cp: self.cp,
            vp: self.vp,
            heap: self.heap,
            jjp: self.jjp,
            jjhp: self.jjhp,
            locks: self.moncnt,
        }
    }

    /// What the bookkeeping of `op` (fetched at `at`, the stack's top at
    /// `s0`) needs from before it runs.
    #[inline(always)]
    fn entry(&self, at: i32, s0: i32) -> Entry {
        Entry {
            s0,
            near: self.near_words(s0),
            regs: self.registers(),
            operand: self.operand_at(at),
        }
    }

    /// Executes `op` (fetched at `at`, the stack's top at `s0`) and keeps
    /// the stack memory above the stack as the processor's, interpreting
    /// its script.
    #[inline(never)]
    pub(super) fn execute_with_stack_memory(&mut self, op: u8, at: i32, s0: i32) -> Result<(), EmuError> {
        let Some(p) = self.processor else {
            return self.execute_op(op, at, false);
        };
        let scripts = &p.microcode.ram[op as usize];
        let entry = self.entry(at, s0);
        // A return's value lands on the callee's first locals: what they
        // held goes to the memory (only a bytecode that writes the stack
        // pointer, a return or an invoke, moves the frame).
        let frame0 = scripts.net.is_none().then(|| {
            [
                self.st(entry.regs.vp).unwrap_or(0),
                self.st(entry.regs.vp + 1).unwrap_or(0),
            ]
        });
        self.path = None;
        self.fresh_locals = (1, 0);
        self.execute_op(op, at, true)?;
        self.settle_stack_memory(op, at, &entry, frame0, scripts, p);
        Ok(())
    }

    /// Executes `op`, which pops `-net` words in all and writes nothing
    /// above the stack, as [`Machine::execute_with_stack_memory`] would: the
    /// words that leave the stack keep their values in the memory.
    #[inline(always)]
    pub(super) fn execute_pop(&mut self, op: u8, at: i32, s0: i32, net: i32) -> Result<(), EmuError> {
        let Some(snap) = self.snapshot(s0, 0) else {
            return self.execute_pop_anywhere(op, at, s0, net);
        };
        self.execute_op(op, at, false)?;
        if self.sp != s0 + net {
            // It stopped short (an exception raised): popped more, pushed nothing.
            return self.keep_popped(s0, net, &snap, s0 + 1 - NEAR as i32);
        }
        // The words from `S + net - 1` to `S - 2` (within the snapshot).
        if let Some(ram) = self.ram.as_deref_mut() {
            let (from, to) = ((s0 + net - 1) as usize, (s0 - 1) as usize);
            let k = NEAR - 1 - (s0 as usize - from);
            copy_few(&mut ram[from..to], &snap[k..k + (to - from)]);
        }
        Ok(())
    }

    /// The stack's words from `S - NEAR + 1` to `S` (`S` last) as they are
    /// now, where they and `S + reach` lie inside the stack.
    #[inline(always)]
    fn snapshot(&self, s0: i32, reach: i32) -> Option<[i32; NEAR]> {
        if s0 < NEAR as i32 - 1 || s0 + reach >= self.stack.len() as i32 || self.ram.is_none() {
            return None;
        }
        let base = (s0 + 1 - NEAR as i32) as usize;
        let mut snap = [0i32; NEAR];
        snap.copy_from_slice(&self.stack[base..base + NEAR]);
        Some(snap)
    }

    /// The words a pop of `-net` words (started with its top at `s0`) took
    /// off the stack keep their values: at and above `S + net - 1`, its own
    /// pops, from `words` as it found them (`words[k]` the word at
    /// `first + k`), and from the stack below, where a pop that stopped
    /// short (an exception raised: it popped more and pushed nothing) left
    /// the words as it found them.
    #[cold]
    #[inline(never)]
    fn keep_popped(&mut self, s0: i32, net: i32, words: &[i32; NEAR], first: i32) -> Result<(), EmuError> {
        let end = self.sp.min(s0 + net);
        let lowest = s0 + net - 1;
        let Some(ram) = self.ram.as_deref_mut() else {
            return Ok(());
        };
        let stack = &self.stack;
        keep_leaving(ram, end, s0, |a| {
            if a >= lowest {
                words[(a - first) as usize]
            } else {
                stack.get(a as u32 as usize).copied().unwrap_or(0)
            }
        });
        Ok(())
    }

    /// [`Machine::execute_pop`] near the stack's ends.
    #[inline(never)]
    fn execute_pop_anywhere(&mut self, op: u8, at: i32, s0: i32, net: i32) -> Result<(), EmuError> {
        // The words from `S + net - 1` to `S - 2` (at most `NEAR - 2`).
        let mut leaving = [0i32; NEAR];
        let lowest = s0 + net - 1;
        for (j, w) in leaving.iter_mut().enumerate().take((1 - net) as usize) {
            *w = self
                .stack
                .get((lowest + j as i32) as u32 as usize)
                .copied()
                .unwrap_or(0);
        }
        self.execute_op(op, at, false)?;
        self.keep_popped(s0, net, &leaving, lowest)
    }

    /// Executes `op`, whose bookkeeping is compiled (a [`FixedPlan`]), as
    /// [`Machine::execute_with_stack_memory`] would: the words that keep the
    /// stack's values are copied from a snapshot of the words near the top
    /// taken before it runs, the other values read from the machine then.
    #[inline(always)]
    pub(super) fn execute_fixed(&mut self, op: u8, at: i32, s0: i32) -> Result<(), EmuError> {
        let Some(plan) = self.processor.and_then(|p| p.microcode.fixed[op as usize].as_ref()) else {
            return self.execute_fixed_anywhere(op, at, s0);
        };
        let Some(snap) = self.snapshot(s0, plan.reach) else {
            return self.execute_fixed_anywhere(op, at, s0);
        };
        let mut values = [0i32; FIXED_WRITES];
        for (slot, &(_, v)) in values.iter_mut().zip(&plan.others[..plan.others_len]) {
            *slot = self.fixed_value(v, s0, at, &snap);
        }
        self.execute_op(op, at, false)?;
        if self.sp != s0 + plan.net {
            // It stopped short (an exception raised): the general case's.
            self.settle_from(op, at, s0, std::array::from_fn(|k| snap[NEAR - 1 - k]));
            return Ok(());
        }
        let FixedPlan { copy: (lo, hi), .. } = *plan;
        if let Some(ram) = self.ram.as_deref_mut() {
            if lo <= hi {
                let (from, k) = ((s0 + lo) as usize, (NEAR as i32 - 1 + lo) as usize);
                let n = (hi - lo + 1) as usize;
                copy_few(&mut ram[from..from + n], &snap[k..k + n]);
            }
            for (&(k, _), v) in plan.others[..plan.others_len].iter().zip(values) {
                ram[(s0 + k) as usize] = v;
            }
        }
        Ok(())
    }

    /// The value a [`FixedPlan`]'s write stores, from the machine before
    /// the bytecode (fetched at `at`, its top at `s0`, `snap` the words near
    /// it) runs.
    #[inline(always)]
    fn fixed_value(&self, v: FixedValue, s0: i32, at: i32, snap: &[i32; NEAR]) -> i32 {
        let words = PlanWords {
            s0,
            stack: &self.stack,
            ram: self.ram.as_deref(),
        };
        words.value(v, &self.registers(), self.operand_at(at), |e| {
            snap[(NEAR as i32 - 1 + e) as usize]
        })
    }

    /// [`Machine::execute_fixed`] near the stack's ends, or for a plan that
    /// did not compile.
    #[inline(never)]
    fn execute_fixed_anywhere(&mut self, op: u8, at: i32, s0: i32) -> Result<(), EmuError> {
        let Some(&StackStep::Fixed { net, ref writes }) = self.processor.map(|p| &p.microcode.plans[op as usize])
        else {
            return self.execute_with_stack_memory(op, at, s0);
        };
        let near = self.near_words(s0);
        // The words near the top in a snapshot's order (`S` last).
        let snap: [i32; NEAR] = std::array::from_fn(|i| near[NEAR - 1 - i]);
        let mut values = [(0i32, 0i32); FIXED_WRITES];
        for (slot, &(k, v)) in values.iter_mut().zip(writes) {
            *slot = (s0 + k, self.fixed_value(v, s0, at, &snap));
        }
        self.execute_op(op, at, false)?;
        let end = self.sp;
        if end != s0 + net {
            // It stopped short (an exception raised): the words it did not
            // pop or push are the general case's to sort out. It raised
            // before it wrote anything (its pops leave the stack array as it
            // was and no register moved), so the entry is as it found it.
            self.settle_from(op, at, s0, near);
            return Ok(());
        }
        let Some(ram) = self.ram.as_deref_mut() else {
            return Ok(());
        };
        keep_leaving(ram, end, s0, |a| near[(s0 - a) as usize]);
        store(ram, &values[..writes.len()]);
        Ok(())
    }

    /// Executes `op`, whose paths' bookkeeping is compiled
    /// ([`StackStep::ByPath`]), as [`Machine::execute_with_stack_memory`]
    /// would: the writes of the path the microcode took, from the words near
    /// the top as the bytecode found them.
    #[inline(never)]
    pub(super) fn execute_by_path(&mut self, op: u8, at: i32, s0: i32) -> Result<(), EmuError> {
        let Some(p) = self.processor else {
            return self.execute_op(op, at, false);
        };
        let StackStep::ByPath { net, ref paths } = p.microcode.plans[op as usize] else {
            return self.execute_with_stack_memory(op, at, s0);
        };
        let near = self.near_words(s0);
        self.path = None;
        self.execute_op(op, at, false)?;
        let end = self.sp;
        let taken = self.path.and_then(|k| paths.iter().find(|(key, _)| *key == k));
        let (Some((_, writes)), true) = (taken, end == s0 + net) else {
            // It stopped short (an exception raised before it wrote
            // anything), or its path is not one of the plan's: the general
            // case's, from the state it found (no register moved).
            self.settle_from(op, at, s0, near);
            return Ok(());
        };
        let Some(ram) = self.ram.as_deref_mut() else {
            return Ok(());
        };
        let mut values = [(0i32, 0i32); FIXED_WRITES];
        for (slot, &(k, v)) in values.iter_mut().zip(writes) {
            let value = match v {
                NearValue::Entry(e) => near[(-e) as usize],
                NearValue::Constant(c) => c,
                NearValue::Address(a) => s0 + a,
            };
            *slot = (s0 + k, value);
        }
        keep_leaving(ram, end, s0, |a| near[(s0 - a) as usize]);
        store(ram, &values[..writes.len()]);
        Ok(())
    }

    /// Executes `op`, which moves the frame and whose script is compiled
    /// ([`FramePlan`]), as [`Machine::execute_with_stack_memory`] would,
    /// without interpreting the script.
    #[inline(never)]
    pub(super) fn execute_frame(&mut self, op: u8, at: i32, s0: i32) -> Result<(), EmuError> {
        let Some(plan) = self.processor.and_then(|p| p.microcode.frames[op as usize].as_ref()) else {
            return self.execute_with_stack_memory(op, at, s0);
        };
        let before = self.frame_entry(s0);
        self.execute_op(op, at, true)?;
        self.settle_frame(plan, &before);
        Ok(())
    }

    /// What a [`FramePlan`]'s bookkeeping needs from before the bytecode
    /// (its top at `s0`) runs; readies the machine for it.
    #[inline(always)]
    pub(super) fn frame_entry(&mut self, s0: i32) -> FrameEntry {
        let entry = Entry {
            s0,
            near: self.near_words(s0),
            regs: self.registers(),
            // Read only for a local the operand names, which a frame plan
            // never stores.
            operand: 0,
        };
        // A return's value lands on the callee's first locals: what they
        // held goes to the memory.
        let vp0 = entry.regs.vp;
        let frame0 = [self.st(vp0).unwrap_or(0), self.st(vp0 + 1).unwrap_or(0)];
        self.path = None;
        self.fresh_locals = (1, 0);
        FrameEntry { entry, frame0 }
    }

    /// [`frame_writes`] for the fast path, which knows where the bytecode
    /// ends (`end`, `fresh` the new frame's locals past its arguments)
    /// before it runs it: each value read from the machine as it is, before
    /// the bytecode changes anything.
    #[inline(always)]
    pub(super) fn frame_writes_before<'p>(
        &self,
        values: &mut [(i32, i32); FRAME_WRITES],
        writes: impl Iterator<Item = &'p (At, FrameValue)>,
        s0: i32,
        end: i32,
        fresh: (i32, i32),
    ) -> usize {
        let entry = |k: i32| self.stack.get((s0 + k) as u32 as usize).copied().unwrap_or(0);
        frame_writes(values, writes, entry, &self.registers(), s0, end, fresh)
    }

    /// Stores `writes` (from [`frame_writes`]) into the stack memory after
    /// the bytecode ran, then brings the new frame's fresh locals from it.
    #[inline(always)]
    pub(super) fn store_frame_writes(&mut self, writes: &[(i32, i32)], fresh: (i32, i32)) {
        if let Some(ram) = self.ram.as_deref_mut() {
            store_and_bring_fresh(ram, &mut self.stack, writes, fresh);
        }
    }

    /// The words a return pops (`lo ..= hi`) keep in the stack memory the
    /// values they have before it runs.
    #[inline(always)]
    pub(super) fn keep_returning_frame(&mut self, lo: i32, hi: i32) {
        if let Some(ram) = self.ram.as_deref_mut() {
            let words = lo.max(0) as usize..=hi as usize;
            if let (Some(to), Some(from)) = (ram.get_mut(words.clone()), self.stack.get(words)) {
                to.copy_from_slice(from);
            }
        }
    }

    /// The stack memory after a bytecode that moved the frame ran from
    /// `before`, kept by its [`FramePlan`]: the plan's writes, in order,
    /// where they land above the new top or in the new frame's fresh
    /// locals (as the interpreted script's), the words that left the stack,
    /// and the fresh locals from the memory.
    #[inline(always)]
    pub(super) fn settle_frame(&mut self, plan: &FramePlan, before: &FrameEntry) {
        let FrameEntry { entry, frame0 } = before;
        let (s0, end) = (entry.s0, self.sp);
        let Some(mut ram) = self.ram.take() else {
            return;
        };
        let fresh = self.fresh_locals;
        let mut values = [(0i32, 0i32); FRAME_WRITES];
        let near = |k: i32| entry.near[(-k) as usize];
        let n = frame_writes(
            &mut values,
            plan.writes[..plan.len].iter(),
            near,
            &entry.regs,
            s0,
            end,
            fresh,
        );
        keep_leaving_frame(&mut ram, &self.stack, end, entry, Some(*frame0));
        store_and_bring_fresh(&mut ram, &mut self.stack, &values[..n], fresh);
        self.ram = Some(ram);
    }

    /// The general case's bookkeeping of a compiled bytecode that did not
    /// end as its plan (it raised before it wrote anything, or took a path
    /// the plan lacks): its entry is the state it found, `near` the words
    /// near the top then (its pops left the stack array as it was, and no
    /// register moved).
    #[cold]
    fn settle_from(&mut self, op: u8, at: i32, s0: i32, near: [i32; NEAR]) {
        if let Some(p) = self.processor {
            let entry = Entry {
                near,
                ..self.entry(at, s0)
            };
            self.fresh_locals = (1, 0);
            self.settle_stack_memory(op, at, &entry, None, &p.microcode.ram[op as usize], p);
        }
    }

    /// The stack memory after `op` ran from `entry` (with `frame0` the
    /// callee's first two locals, for a bytecode that moves the frame).
    fn settle_stack_memory(
        &mut self,
        op: u8,
        at: i32,
        entry: &Entry,
        frame0: Option<[i32; 2]>,
        scripts: &RamScripts,
        p: &Processor,
    ) {
        let (s0, vp0) = (entry.s0, entry.regs.vp);
        let end = self.sp;
        let Some(mut ram) = self.ram.take() else {
            return;
        };

        // The microcode's writes above the stack, each value as the memory
        // and the registers were when the bytecode started.
        let script = scripts.path(self.path, || {
            let e = scripts.entry?;
            let near = &entry.near;
            let top = [near[3], near[2], near[1], near[0]];
            let vars = p.microcode.lock_var(entry.regs.locks);
            p.microcode.exec.run(e, &top, vars.as_slice()).map(|(_, k)| k)
        });
        let (first, last) = self.fresh_locals;
        let mut pending = std::mem::take(&mut self.ram_pending);
        pending.clear();
        for (place, value) in &script.writes {
            let addr = match *place {
                At::Start(k) => s0 + k,
                At::End(k) => end + k,
            };
            // Below the top two at the end the memory is the stack.
            if addr <= end - 2 && !(first..=last).contains(&addr) {
                continue;
            }
            let memory = |a: i32| entry.memory(a, &self.stack, &ram);
            let v = match *value {
                Value::Unchanged => continue,
                Value::Entry(k) => entry.at(s0 + k, &self.stack),
                Value::Memory(At::Start(k)) => memory(s0 + k),
                Value::Memory(At::End(k)) => memory(end + k),
                Value::Local(n) => memory(vp0 + n),
                Value::LocalOperand => memory(vp0 + entry.operand),
                Value::Register(r) => entry.regs.get(r),
                Value::Constant(c) => c,
                Value::Address(At::Start(k)) => s0 + k,
                Value::Address(At::End(k)) => end + k,
                // What the microcode computes itself is not followed.
                Value::Unknown => 0,
            };
            pending.push((addr, v));
        }

        // A return's value overwrote the callee's first locals: those are
        // the values that left the stack there.
        keep_leaving_frame(&mut ram, &self.stack, end, entry, frame0);
        store(&mut ram, &pending);
        self.ram_pending = pending;

        // Words that joined the stack unpushed come from the memory: a new
        // frame's locals past its arguments; after setSP, every word up to
        // the new top (the processor reloads its two registers from there).
        let joined = if op == SET_SP {
            (s0 - 1).max(0)..=end
        } else {
            first..=last
        };
        for a in joined {
            if let (Some(v), Some(slot)) = (ram.get(a as u32 as usize), self.stack.get_mut(a as u32 as usize)) {
                *slot = *v;
            }
        }
        if vp0 + 4 > s0 {
            let increment = self
                .code
                .get(self.code_at + at as usize + 2)
                .map_or(0, |b| i32::from(*b as i8));
            self.locals_above_stack(LocalAccess::of(op, entry.operand, increment), vp0, s0, &mut ram);
        }
        self.ram = Some(ram);
    }

    /// A local the bytecode loaded or stored when its frame lay above the
    /// stack (an exception handler's `setSP` unwound it): the processor reads
    /// and writes the memory, whose words there are not the stack array's.
    #[cold]
    fn locals_above_stack(&mut self, access: Option<LocalAccess>, vp0: i32, s0: i32, ram: &mut [i32]) {
        let Some(access) = access else {
            return;
        };
        let end = self.sp;
        for j in 0..access.words {
            let a = vp0 + access.index + j;
            let Some(word) = ram.get_mut(a as u32 as usize) else {
                continue;
            };
            match access.kind {
                // The registers hold the words at s0 and s0 - 1, not the memory.
                LocalKind::Load if a >= s0 - 1 => {
                    if let Some(slot) = self.stack.get_mut((end - access.words + 1 + j) as u32 as usize) {
                        *slot = *word;
                    }
                }
                LocalKind::Store if a > end => *word = self.stack.get(a as u32 as usize).copied().unwrap_or(0),
                LocalKind::Increment(d) if a > s0 => *word = word.wrapping_add(d),
                _ => {}
            }
        }
    }
}

/// The words a bytecode popped (from `end - 1` up to `s0 - 2`, its top's
/// address at the end and at the start) keep in the memory the values
/// `value` gives them: the processor's pops leave them there.
#[inline(always)]
fn keep_leaving(ram: &mut [i32], end: i32, s0: i32, value: impl Fn(i32) -> i32) {
    for a in (end - 1).max(0)..=s0 - 2 {
        if let Some(w) = ram.get_mut(a as u32 as usize) {
            *w = value(a);
        }
    }
}

/// [`keep_leaving`] for the general case: the words a bytecode popped keep
/// the values they had when it started (`entry`), where a return's value
/// overwrote the callee's first locals their values before (`frame0`). A
/// return pops its whole frame: the words far below the top, which the
/// bytecode did not change, are copied from the stack at once.
fn keep_leaving_frame(ram: &mut [i32], stack: &[i32], end: i32, entry: &Entry, frame0: Option<[i32; 2]>) {
    let s0 = entry.s0;
    let (lo, hi) = ((end - 1).max(0), s0 - 2);
    if lo > hi {
        return;
    }
    // Below `near_from` the entry kept no words: the stack's are as it found them.
    let near_from = (s0 - NEAR as i32 + 1).clamp(lo, hi + 1);
    let far = lo as usize..near_from as usize;
    match (ram.get_mut(far.clone()), stack.get(far)) {
        (Some(to), Some(from)) => to.copy_from_slice(from),
        _ => {
            for a in lo..near_from {
                if let Some(w) = ram.get_mut(a as u32 as usize) {
                    *w = entry.at(a, stack);
                }
            }
        }
    }
    for a in near_from..=hi {
        if let Some(w) = ram.get_mut(a as u32 as usize) {
            *w = entry.at(a, stack);
        }
    }
    if let Some([local0, local1]) = frame0 {
        let vp0 = entry.regs.vp;
        for (a, v) in [(vp0, local0), (vp0 + 1, local1)] {
            if (lo..=hi).contains(&a) {
                if let Some(w) = ram.get_mut(a as u32 as usize) {
                    *w = v;
                }
            }
        }
    }
}

/// The writes of a [`FramePlan`] (`writes`: all of them, or those that can
/// outlast an invoke) that outlast a bytecode, where they land, into
/// `values` (how many is returned): its top at `s0` when it starts, at
/// `end` when it ends, `first ..= last` the new frame's locals past its
/// arguments. Each value as the bytecode found it: `entry(k)` the stack's
/// word at `s0 + k`, `regs` the registers.
#[inline(always)]
fn frame_writes<'p>(
    values: &mut [(i32, i32); FRAME_WRITES],
    writes: impl Iterator<Item = &'p (At, FrameValue)>,
    entry: impl Fn(i32) -> i32,
    regs: &Registers,
    s0: i32,
    end: i32,
    (first, last): (i32, i32),
) -> usize {
    let place = |a: At| match a {
        At::Start(k) => s0 + k,
        At::End(k) => end + k,
    };
    let mut n = 0;
    for &(at, value) in writes {
        let addr = place(at);
        // Below the top two at the end the memory is the stack.
        if addr <= end - 2 && !(first..=last).contains(&addr) {
            continue;
        }
        let v = match value {
            FrameValue::Entry(k) => entry(k),
            FrameValue::Register(r) => regs.get(r),
            FrameValue::Constant(c) => c,
            FrameValue::Address(a) => place(a),
        };
        values[n] = (addr, v);
        n += 1;
    }
    n
}

/// Stores `writes` into the stack memory `ram`, then brings the new
/// frame's locals past its arguments (`first ..= last`) from it into the
/// stack: the processor does not clear them.
#[inline(always)]
fn store_and_bring_fresh(ram: &mut [i32], stack: &mut [i32], writes: &[(i32, i32)], (first, last): (i32, i32)) {
    store(ram, writes);
    if first > last {
        return;
    }
    let fresh = first as u32 as usize..=last as u32 as usize;
    match (ram.get(fresh.clone()), stack.get_mut(fresh)) {
        (Some(from), Some(to)) => to.copy_from_slice(from),
        _ => {
            for a in first..=last {
                if let (Some(v), Some(slot)) = (ram.get(a as u32 as usize), stack.get_mut(a as u32 as usize)) {
                    *slot = *v;
                }
            }
        }
    }
}

/// Copies the few words of `src` into `dst` (as long): moves of known
/// sizes for the lengths a bytecode keeps, where `copy_from_slice` of a
/// length known only when it runs calls `memcpy`, which costs more than
/// the rest of the bytecode's bookkeeping.
#[inline(always)]
fn copy_few(dst: &mut [i32], src: &[i32]) {
    match src.len() {
        0 => {}
        1 => dst[..1].copy_from_slice(&src[..1]),
        2 => dst[..2].copy_from_slice(&src[..2]),
        3 => dst[..3].copy_from_slice(&src[..3]),
        4 => dst[..4].copy_from_slice(&src[..4]),
        _ => dst.copy_from_slice(src),
    }
}

/// The microcode's writes, `(address, value)` in order, into the memory.
#[inline(always)]
fn store(ram: &mut [i32], writes: &[(i32, i32)]) {
    for &(addr, v) in writes {
        if let Some(w) = ram.get_mut(addr as u32 as usize) {
            *w = v;
        }
    }
}

impl<'c> Machine<'c> {
    /// Word `i` of the stack memory as `Native.rdIntMem` reads it, with the
    /// words up to `live` the stack's.
    pub(super) fn memory_word(&self, i: i32, live: i32) -> Result<i32, EmuError> {
        match &self.ram {
            Some(ram) if i > live => ram.get(i as u32 as usize).copied().ok_or_else(|| self.stack_fault(i)),
            _ => self.st(i),
        }
    }

    /// Writes word `i` of the stack memory (`Native.ext2int`).
    pub(super) fn set_memory_word(&mut self, i: i32, v: i32) -> Result<(), EmuError> {
        if let Some(w) = self.ram.as_mut().and_then(|r| r.get_mut(i as u32 as usize)) {
            *w = v;
        }
        self.set_st(i, v)
    }
}

/// What a compiled plan's values are read from, before the bytecode runs.
pub(super) struct PlanWords<'a> {
    /// The stack's top.
    pub s0: i32,
    pub stack: &'a [i32],
    /// The stack memory above the stack (none: JopSim's timing).
    pub ram: Option<&'a [i32]>,
}

impl PlanWords<'_> {
    /// The value a [`FixedPlan`]'s write stores, with `regs` the registers,
    /// `operand` the bytecode's first operand byte and `entry(k)` the
    /// stack's word at `s0 + k` (`k <= 0`).
    #[inline(always)]
    pub(super) fn value(&self, v: FixedValue, regs: &Registers, operand: i32, entry: impl Fn(i32) -> i32) -> i32 {
        // The memory's word at `a`: below the top two the stack's.
        let memory = |a: i32| {
            let words = match self.ram {
                Some(ram) if a > self.s0 - 2 => ram,
                _ => self.stack,
            };
            words.get(a as u32 as usize).copied().unwrap_or(0)
        };
        match v {
            FixedValue::Entry(e) => entry(e),
            FixedValue::Memory(m) => memory(self.s0 + m),
            FixedValue::Local(n) => memory(regs.vp + n),
            FixedValue::LocalOperand => memory(regs.vp + operand),
            FixedValue::Register(r) => regs.get(r),
            FixedValue::Constant(c) => c,
            FixedValue::Address(a) => self.s0 + a,
        }
    }
}

/// A bytecode's access to its frame's locals.
struct LocalAccess {
    kind: LocalKind,
    index: i32,
    words: i32,
}

enum LocalKind {
    Load,
    Store,
    Increment(i32),
}

impl LocalAccess {
    /// The locals `op` accesses (`operand`: its first operand byte;
    /// `increment`: its second, signed, for `iinc`).
    fn of(op: u8, operand: i32, increment: i32) -> Option<LocalAccess> {
        let (kind, index, words) = match op {
            21 | 23 | 25 => (LocalKind::Load, operand, 1),
            22 | 24 => (LocalKind::Load, operand, 2),
            26..=29 | 34..=37 | 42..=45 => (LocalKind::Load, i32::from((op - 26) % 4), 1),
            30..=33 | 38..=41 => (LocalKind::Load, i32::from((op - 30) % 4), 2),
            54 | 56 | 58 => (LocalKind::Store, operand, 1),
            55 | 57 => (LocalKind::Store, operand, 2),
            59..=62 | 67..=70 | 75..=78 => (LocalKind::Store, i32::from((op - 59) % 4), 1),
            63..=66 | 71..=74 => (LocalKind::Store, i32::from((op - 63) % 4), 2),
            132 => (LocalKind::Increment(increment), operand, 1),
            _ => return None,
        };
        Some(LocalAccess { kind, index, words })
    }
}
