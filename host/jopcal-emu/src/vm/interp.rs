//! The execution loop: one dispatch over the linked operations, charging
//! each instruction's cycles, invokes and returns through the method cache.

use super::library;
use super::{Exit, Frame, Init, MethodId, Vm};
use crate::error::EmuError;
use crate::vm::heap::Obj;
use crate::vm::ops::*;

/// The most frames the board's stack holds.
const MAX_FRAMES: usize = 4096;

/// What the loop does after an operation.
enum Next {
    /// Carry on in the current frame.
    Stay,
    /// The frames changed (an invoke, or an exception caught): run the top one.
    Reframe,
    /// Throw a new exception of this library class at the current instruction.
    Throw(&'static str),
    /// Unwind with this exception object.
    ThrowObject(i32),
    /// The program ended.
    Exit(Exit),
}

impl Vm {
    /// Invokes `m` (arguments on the stack) as the outermost frame and runs
    /// to its return. Nothing invokes it, so no invoke is charged; it is
    /// loaded into the method cache.
    pub(super) fn call(&mut self, m: MethodId) -> Result<Exit, EmuError> {
        let base_depth = self.frames.len();
        self.cache.access(m, self.methods[m as usize].words);
        self.push_frame(m)?;
        self.execute(base_depth)
    }

    fn push_frame(&mut self, m: MethodId) -> Result<(), EmuError> {
        let meth = &self.methods[m as usize];
        let base = self.stack.len() - meth.arg_slots as usize;
        let locals = (meth.max_locals as usize).max(meth.arg_slots as usize);
        if self.frames.len() >= MAX_FRAMES {
            return Err(EmuError::Fault {
                at: self.method_name(m),
                what: format!("stack overflow ({MAX_FRAMES} frames)"),
            });
        }
        self.stack.resize(base + locals, 0);
        self.frames.push(Frame {
            method: m,
            pc: 0,
            base: base as u32,
        });
        if let Some(t) = &mut self.trace {
            let i = m as usize;
            if t.calls_by_method.len() <= i {
                t.calls_by_method.resize(i + 1, 0);
                t.cycles_by_method.resize(i + 1, 0);
            }
            t.calls_by_method[i] += 1;
            t.events.push((true, m));
        }
        Ok(())
    }

    /// Adds `cycles` to the clock and, when tracing, to method `m`.
    fn charge(&mut self, m: MethodId, cycles: u32) {
        self.cycles += u64::from(cycles);
        if let Some(t) = &mut self.trace {
            t.cycles_by_method[m as usize] += u64::from(cycles);
        }
    }

    /// Runs the frames above `base_depth` until the bottom one returns.
    fn execute(&mut self, base_depth: usize) -> Result<Exit, EmuError> {
        let limit = self.cfg.cycle_limit;
        'frames: loop {
            let Some(f) = self.frames.last() else {
                return Ok(Exit::Returned);
            };
            let m = f.method;
            let code = self.methods[m as usize].code.clone();
            let mut pc = f.pc as usize;
            let base = f.base as usize;
            loop {
                let Some(&ins) = code.get(pc) else {
                    return Err(EmuError::Fault {
                        at: self.method_name(m),
                        what: "ran past the end of the code".into(),
                    });
                };
                pc += 1;
                self.charge(m, ins.cost);
                macro_rules! pop {
                    () => {
                        match self.stack.pop() {
                            Some(v) => v,
                            None => return Err(self.fault(m, pc, "operand stack underflow")),
                        }
                    };
                }
                macro_rules! pop_long {
                    () => {{
                        let hi = pop!() as u32 as u64;
                        let lo = pop!() as u32 as u64;
                        ((hi << 32) | lo) as i64
                    }};
                }
                macro_rules! push_long {
                    ($v:expr) => {{
                        let v: i64 = $v;
                        self.stack.push(v as i32);
                        self.stack.push((v >> 32) as i32);
                    }};
                }
                // A taken branch: the only place a loop can go on forever.
                macro_rules! jump {
                    ($t:expr) => {{
                        pc = $t as usize;
                        if self.cycles > limit {
                            return Err(self.limit_error(m, pc));
                        }
                    }};
                }
                let next = 'op: {
                    macro_rules! throw {
                        ($name:expr) => {
                            break 'op Next::Throw($name)
                        };
                    }
                    match ins.op {
                        Op::Nop => {}
                        Op::MonitorEnter | Op::MonitorExit => {
                            pop!();
                        }
                        Op::IConst(v) => self.stack.push(v),
                        Op::LConst(v) => push_long!(v),
                        Op::Load { local } => {
                            let v = self.stack[base + local as usize];
                            self.stack.push(v);
                        }
                        Op::LLoad { local } => {
                            let at = base + local as usize;
                            let (lo, hi) = (self.stack[at], self.stack[at + 1]);
                            self.stack.extend_from_slice(&[lo, hi]);
                        }
                        Op::Store { local } => {
                            let v = pop!();
                            self.stack[base + local as usize] = v;
                        }
                        Op::LStore { local } => {
                            let hi = pop!();
                            let lo = pop!();
                            self.stack[base + local as usize] = lo;
                            self.stack[base + local as usize + 1] = hi;
                        }
                        Op::ArrLoad => {
                            let i = pop!();
                            let r = pop!();
                            let v = match self.obj(r) {
                                None => throw!("java/lang/NullPointerException"),
                                Some(Obj::Arr { data, .. }) => match data.get(i as usize) {
                                    Some(v) if i >= 0 => *v,
                                    _ => throw!("java/lang/ArrayIndexOutOfBoundsException"),
                                },
                                Some(_) => return Err(self.fault(m, pc, "array load from a non-int array")),
                            };
                            self.stack.push(v);
                        }
                        Op::LArrLoad => {
                            let i = pop!();
                            let r = pop!();
                            let v = match self.obj(r) {
                                None => throw!("java/lang/NullPointerException"),
                                Some(Obj::LongArr(data)) => match data.get(i as usize) {
                                    Some(v) if i >= 0 => *v,
                                    _ => throw!("java/lang/ArrayIndexOutOfBoundsException"),
                                },
                                Some(_) => return Err(self.fault(m, pc, "laload from a non-long array")),
                            };
                            push_long!(v);
                        }
                        Op::ArrStore(kind) => {
                            let v = kind.narrow(pop!());
                            let i = pop!();
                            let r = pop!();
                            match self.obj_mut(r) {
                                None => throw!("java/lang/NullPointerException"),
                                Some(Obj::Arr { data, .. }) => match data.get_mut(i as usize) {
                                    Some(slot) if i >= 0 => *slot = v,
                                    _ => throw!("java/lang/ArrayIndexOutOfBoundsException"),
                                },
                                Some(_) => return Err(self.fault(m, pc, "array store into a non-int array")),
                            }
                        }
                        Op::LArrStore => {
                            let v = pop_long!();
                            let i = pop!();
                            let r = pop!();
                            match self.obj_mut(r) {
                                None => throw!("java/lang/NullPointerException"),
                                Some(Obj::LongArr(data)) => match data.get_mut(i as usize) {
                                    Some(slot) if i >= 0 => *slot = v,
                                    _ => throw!("java/lang/ArrayIndexOutOfBoundsException"),
                                },
                                Some(_) => return Err(self.fault(m, pc, "lastore into a non-long array")),
                            }
                        }
                        Op::Pop => {
                            pop!();
                        }
                        Op::Pop2 => {
                            pop!();
                            pop!();
                        }
                        Op::Dup => {
                            let v = pop!();
                            self.stack.extend_from_slice(&[v, v]);
                        }
                        Op::DupX1 => {
                            let a = pop!();
                            let b = pop!();
                            self.stack.extend_from_slice(&[a, b, a]);
                        }
                        Op::DupX2 => {
                            let a = pop!();
                            let b = pop!();
                            let c = pop!();
                            self.stack.extend_from_slice(&[a, c, b, a]);
                        }
                        Op::Dup2 => {
                            let a = pop!();
                            let b = pop!();
                            self.stack.extend_from_slice(&[b, a, b, a]);
                        }
                        Op::Dup2X1 => {
                            let a = pop!();
                            let b = pop!();
                            let c = pop!();
                            self.stack.extend_from_slice(&[b, a, c, b, a]);
                        }
                        Op::Dup2X2 => {
                            let a = pop!();
                            let b = pop!();
                            let c = pop!();
                            let d = pop!();
                            self.stack.extend_from_slice(&[b, a, d, c, b, a]);
                        }
                        Op::Swap => {
                            let a = pop!();
                            let b = pop!();
                            self.stack.extend_from_slice(&[a, b]);
                        }
                        Op::IBin(op) => {
                            let b = pop!();
                            let a = pop!();
                            match op.apply(a, b) {
                                Ok(v) => self.stack.push(v),
                                Err(DivideByZero) => throw!("java/lang/ArithmeticException"),
                            }
                        }
                        Op::LBin(op) => {
                            let b = pop_long!();
                            let a = pop_long!();
                            match op.apply(a, b) {
                                Ok(v) => push_long!(v),
                                Err(DivideByZero) => throw!("java/lang/ArithmeticException"),
                            }
                        }
                        Op::LShift(op) => {
                            let distance = pop!();
                            let a = pop_long!();
                            push_long!(op.apply(a, distance));
                        }
                        Op::INeg => {
                            let a = pop!();
                            self.stack.push(a.wrapping_neg());
                        }
                        Op::LNeg => {
                            let a = pop_long!();
                            push_long!(a.wrapping_neg());
                        }
                        Op::IInc { local, delta } => {
                            let s = &mut self.stack[base + local as usize];
                            *s = s.wrapping_add(delta);
                        }
                        Op::I2L => {
                            let a = pop!();
                            push_long!(i64::from(a));
                        }
                        Op::L2I => {
                            let a = pop_long!();
                            self.stack.push(a as i32);
                        }
                        Op::I2B => {
                            let a = pop!();
                            self.stack.push(i32::from(a as i8));
                        }
                        Op::I2C => {
                            let a = pop!();
                            self.stack.push(i32::from(a as u16));
                        }
                        Op::I2S => {
                            let a = pop!();
                            self.stack.push(i32::from(a as i16));
                        }
                        Op::LCmp => {
                            let b = pop_long!();
                            let a = pop_long!();
                            self.stack.push(a.cmp(&b) as i32);
                        }
                        Op::If { cond, target } => {
                            if cond.test(pop!(), 0) {
                                jump!(target);
                            }
                        }
                        Op::IfCmp { cond, target } => {
                            let b = pop!();
                            let a = pop!();
                            if cond.test(a, b) {
                                jump!(target);
                            }
                        }
                        Op::Goto { target } => jump!(target),
                        Op::Switch { table } => {
                            let key = pop!();
                            pc = self.switches[table as usize].target(key) as usize;
                        }
                        Op::Return(kind) => {
                            self.leave(m, pc, base, kind, ins.opcode)?;
                            if self.frames.len() == base_depth {
                                return Ok(Exit::Returned);
                            }
                            break 'op Next::Reframe;
                        }
                        Op::GetSystemOut => self.stack.push(self.system_out),
                        Op::GetStatic(StaticSlot { class, field }) => {
                            let s = &self.classes[class as usize].statics;
                            let v = s[field.slot as usize];
                            let hi = field.wide.then(|| s[field.slot as usize + 1]);
                            self.stack.push(v);
                            self.stack.extend(hi);
                        }
                        Op::PutStatic(StaticSlot { class, field }) => {
                            let hi = if field.wide { Some(pop!()) } else { None };
                            let v = pop!();
                            let s = &mut self.classes[class as usize].statics;
                            s[field.slot as usize] = v;
                            if let Some(hi) = hi {
                                s[field.slot as usize + 1] = hi;
                            }
                        }
                        Op::GetField(field) => {
                            let r = pop!();
                            let (v, hi) = match self.obj(r) {
                                None => throw!("java/lang/NullPointerException"),
                                Some(Obj::Inst { fields, .. }) => match fields.get(field.slot as usize) {
                                    Some(v) => (
                                        *v,
                                        field
                                            .wide
                                            .then(|| fields.get(field.slot as usize + 1).copied().unwrap_or(0)),
                                    ),
                                    None => return Err(self.fault(m, pc, "field outside the object")),
                                },
                                Some(_) => return Err(self.fault(m, pc, "getfield on an array or string")),
                            };
                            self.stack.push(v);
                            self.stack.extend(hi);
                        }
                        Op::PutField(field) => {
                            let hi = if field.wide { pop!() } else { 0 };
                            let v = pop!();
                            let r = pop!();
                            let end = field.slot as usize + usize::from(field.wide);
                            match self.obj_mut(r) {
                                None => throw!("java/lang/NullPointerException"),
                                Some(Obj::Inst { fields, .. }) if end < fields.len() => {
                                    fields[field.slot as usize] = v;
                                    if field.wide {
                                        fields[end] = hi;
                                    }
                                }
                                Some(_) => return Err(self.fault(m, pc, "putfield on something without that field")),
                            }
                        }
                        Op::Invoke { callee, arg_slots } => {
                            break 'op self.invoke(m, pc, base, callee, arg_slots, ins.opcode)?;
                        }
                        Op::New { class } => {
                            if self.classes[class as usize].init == Init::No {
                                // Only classes outside the bundle's boot order get here.
                                self.classes[class as usize].init = Init::Done;
                            }
                            let slots = self.classes[class as usize].instance_slots as usize;
                            let r = self.alloc(Obj::Inst {
                                class,
                                fields: vec![0; slots].into_boxed_slice(),
                            })?;
                            self.stack.push(r);
                        }
                        Op::NewArray(kind) => {
                            let n = pop!();
                            if n < 0 {
                                throw!("java/lang/NegativeArraySizeException");
                            }
                            let r = self.alloc(Obj::Arr {
                                kind,
                                data: vec![0; n as usize],
                            })?;
                            self.stack.push(r);
                        }
                        Op::NewLongArray => {
                            let n = pop!();
                            if n < 0 {
                                throw!("java/lang/NegativeArraySizeException");
                            }
                            let r = self.alloc(Obj::LongArr(vec![0; n as usize]))?;
                            self.stack.push(r);
                        }
                        Op::MultiNewArray { dims, leaf } => {
                            let mut counts = Vec::with_capacity(dims as usize);
                            for _ in 0..dims {
                                counts.push(pop!());
                            }
                            counts.reverse();
                            if counts.iter().any(|c| *c < 0) {
                                throw!("java/lang/NegativeArraySizeException");
                            }
                            let r = self.multi_array(&counts, leaf)?;
                            self.stack.push(r);
                        }
                        Op::ArrayLength => {
                            let r = pop!();
                            let n = match self.obj(r) {
                                None => throw!("java/lang/NullPointerException"),
                                Some(Obj::Arr { data, .. }) => data.len(),
                                Some(Obj::LongArr(d)) => d.len(),
                                Some(_) => return Err(self.fault(m, pc, "arraylength of a non-array")),
                            };
                            self.stack.push(n as i32);
                        }
                        Op::AThrow => {
                            let r = pop!();
                            if r == 0 {
                                throw!("java/lang/NullPointerException");
                            }
                            break 'op Next::ThrowObject(r);
                        }
                        Op::CheckCast(target) => {
                            let r = pop!();
                            if !self.is_instance(r, target) {
                                throw!("java/lang/ClassCastException");
                            }
                            self.stack.push(r);
                        }
                        Op::InstanceOf(target) => {
                            let r = pop!();
                            let yes = r != 0 && self.is_instance(r, target);
                            self.stack.push(i32::from(yes));
                        }
                        Op::Trap { message } => {
                            return Err(EmuError::Unsupported {
                                at: String::new(),
                                what: self.traps[message as usize].clone(),
                            }
                            .with_at_prefix());
                        }
                    }
                    Next::Stay
                };
                let ex = match next {
                    Next::Stay => continue,
                    Next::Reframe => continue 'frames,
                    Next::Exit(e) => return Ok(e),
                    Next::Throw(name) => self.new_exception(name)?,
                    Next::ThrowObject(r) => r,
                };
                self.frames.last_mut().expect("frame").pc = pc as u32;
                match self.throw(ex, base_depth)? {
                    Some(exit) => return Ok(exit),
                    None => continue 'frames,
                }
            }
        }
    }

    /// Returns from `m` (whose frame starts at `base`) to its caller: the
    /// value moves to the caller's stack and the caller is accessed in the
    /// method cache, charged as return opcode `opcode` into it.
    fn leave(&mut self, m: MethodId, pc: usize, base: usize, kind: ReturnKind, opcode: u8) -> Result<(), EmuError> {
        let n = kind.slots();
        let len = self.stack.len();
        if len < base + n {
            return Err(self.fault(m, pc, "operand stack underflow at return"));
        }
        let mut result = [0i32; 2];
        result[..n].copy_from_slice(&self.stack[len - n..]);
        self.stack.truncate(base);
        self.stack.extend_from_slice(&result[..n]);
        self.frames.pop();
        if let Some(t) = &mut self.trace {
            t.events.push((false, m));
        }
        if let Some(caller) = self.frames.last() {
            let cm = caller.method;
            let cmeth = &self.methods[cm as usize];
            let hit = self.cache.access(cm, cmeth.words);
            let cost = cmeth.return_cost[usize::from(opcode - 172)][usize::from(hit)];
            self.charge(m, cost);
        }
        Ok(())
    }

    /// An invoke at instruction `pc - 1` of `m`: a library intrinsic runs
    /// at once; a method with code gets a frame, charged through the cache.
    fn invoke(
        &mut self,
        m: MethodId,
        pc: usize,
        base: usize,
        callee: Callee,
        arg_slots: u16,
        opcode: u8,
    ) -> Result<Next, EmuError> {
        let len = self.stack.len();
        if len < base + arg_slots as usize {
            return Err(self.fault(m, pc, "operand stack underflow at invoke"));
        }
        // The receiver, under the arguments (static calls have none).
        let receiver = || self.stack[len - arg_slots as usize];
        let target = match callee {
            Callee::Static(t) => t,
            Callee::Special(t) => {
                if receiver() == 0 {
                    return Ok(Next::Throw("java/lang/NullPointerException"));
                }
                t
            }
            Callee::Virtual(selector) | Callee::Interface(selector) => {
                let Some(rc) = self.class_of(receiver()) else {
                    return Ok(Next::Throw("java/lang/NullPointerException"));
                };
                match self.virtual_target(rc, selector) {
                    Some(t) => t,
                    None => {
                        let (n, d) = &self.nd_list[selector as usize];
                        return Err(EmuError::Unsupported {
                            at: self.at(m, pc as u32 - 1),
                            what: format!(
                                "no method {n}{d} in {} (AbstractMethodError)",
                                self.classes[rc as usize].name
                            ),
                        });
                    }
                }
            }
        };
        self.frames.last_mut().expect("frame").pc = pc as u32;
        if let Some(intrinsic) = self.methods[target as usize].intrinsic {
            return Ok(match library::call(self, intrinsic, target, m, pc as u32 - 1)? {
                library::Outcome::Done => Next::Stay,
                library::Outcome::Throw(name) => Next::Throw(name),
                library::Outcome::Exit(e) => Next::Exit(e),
            });
        }
        if self.methods[target as usize].code.is_empty() {
            return Err(EmuError::Unsupported {
                at: self.at(m, pc as u32 - 1),
                what: format!("{} has no code", self.method_name(target)),
            });
        }
        let tm = &self.methods[target as usize];
        let hit = self.cache.access(target, tm.words);
        let cost = tm.invoke_cost[usize::from(opcode - 182)][usize::from(hit)];
        self.charge(m, cost);
        self.push_frame(target)?;
        if self.cycles > self.cfg.cycle_limit {
            return Err(self.limit_error(target, 0));
        }
        Ok(Next::Reframe)
    }

    /// Whether `r` passes a `checkcast` to `target` (null always does).
    fn is_instance(&self, r: i32, target: CastTarget) -> bool {
        if r == 0 {
            return true;
        }
        match (self.obj(r), target) {
            (Some(Obj::Arr { .. } | Obj::LongArr(_)), CastTarget::AnyArray) => true,
            (Some(Obj::Arr { .. } | Obj::LongArr(_)), CastTarget::Class(c)) => self
                .classes
                .get(c as usize)
                .is_some_and(|k| k.name == "java/lang/Object"),
            (_, CastTarget::Class(c)) => self.class_of(r).is_some_and(|rc| self.is_subclass(rc, c)),
            _ => false,
        }
    }
}
