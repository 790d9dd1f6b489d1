//! The class-bundle interpreter: the virtual board running the built-in
//! suite's class files with JOP timing. Every executed bytecode is charged
//! from the timing model; invokes and returns by the method cache as it
//! actually behaves (exact FIFO simulation, same rules as the estimator's
//! replay); calls of `com.jopdesign.sys.Native` are JOP's own bytecodes
//! (`Native.rd` reads the cycle counter and costs `jopsys_rd`).
//!
//! By concern: [`load`] (classes, layouts, boot), [`link`] (bytecode to
//! [`ops::Op`]), [`ops`] (the operations and their pure semantics),
//! [`resolve`] (the class hierarchy), [`heap`], [`interp`] (the execution
//! loop), [`unwind`] (exceptions and faults) and [`library`] (the board's
//! runtime library: its classes and intrinsics).

mod heap;
mod interp;
pub mod library;
pub(crate) mod link;
mod load;
pub mod ops;
mod resolve;
#[cfg(test)]
mod tests;
mod unwind;

use crate::config::BoardConfig;
pub use crate::error::EmuError;
pub use heap::Obj;
use jopcal_classfile::{Constant, Instruction};
use jopcal_timing::cache::MethodCache;
use library::Intrinsic;
use ops::{FieldSlot, Op, SwitchTable};
use std::collections::HashMap;
use std::rc::Rc;

pub type ClassId = u32;
pub type MethodId = u32;

/// The I/O address of the cycle counter (`Const.IO_CNT`) and the microsecond counter.
pub const IO_CNT: i32 = 0xffff_ff80_u32 as i32;
pub const IO_US: i32 = 0xffff_ff81_u32 as i32;

/// Where UART output goes.
pub type UartSink = Box<dyn FnMut(&[u8]) + Send>;

/// A linked instruction with its fixed cost.
#[derive(Debug, Clone, Copy)]
pub struct Ins {
    pub op: Op,
    /// The original opcode (for costs and traces).
    pub opcode: u8,
    /// Fixed cycles of this instruction (0 for invokes and returns, costed when they run).
    pub cost: u32,
}

/// An exception handler, with instruction indices for byte offsets.
#[derive(Debug)]
struct Handler {
    start: u32,
    end: u32,
    target: u32,
    catch: Catch,
}

/// What a handler catches.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Catch {
    /// `finally` and `catch (Throwable)` compiled without a type.
    Any,
    Class(ClassId),
    /// A class the board does not have: nothing it throws is one.
    Nothing,
}

/// A method as linked.
#[derive(Debug)]
pub struct Method {
    pub class: ClassId,
    pub name: String,
    pub desc: String,
    pub is_static: bool,
    pub code: Rc<[Ins]>,
    raw: Vec<Instruction>,
    bci: Vec<u32>,
    max_locals: u16,
    pub arg_slots: u16,
    handlers: Vec<Handler>,
    raw_handlers: Vec<(u16, u16, u16, u16)>,
    pub words: u32,
    pub intrinsic: Option<Intrinsic>,
    pub is_abstract: bool,
    /// Cycles of invoking this method by opcode 182..=186, on a cache miss and hit.
    invoke_cost: [[u32; 2]; 5],
    /// Cycles of returning *to* this method by opcode 172..=177, miss and hit.
    return_cost: [[u32; 2]; 6],
}

/// A field a class declares.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Field {
    is_static: bool,
    at: FieldSlot,
}

/// Where a class is in its static initialisation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Init {
    No,
    Running,
    Done,
}

#[derive(Debug)]
pub struct Class {
    pub name: String,
    pub super_id: Option<ClassId>,
    pub interfaces: Vec<ClassId>,
    pub instance_slots: u32,
    /// Own fields by (name, descriptor).
    fields: HashMap<(String, String), Field>,
    statics: Vec<i32>,
    pub methods: HashMap<(String, String), MethodId>,
    pool: Vec<Constant>,
    init: Init,
}

/// What a run produced.
#[derive(Debug, Default, Clone)]
pub struct Trace {
    /// Exclusive cycles per method (index = method id).
    pub cycles_by_method: Vec<u64>,
    /// Invocations per method.
    pub calls_by_method: Vec<u64>,
    /// The call/return stream: `+id` entering method id, `-` returning.
    pub events: Vec<(bool, MethodId)>,
}

/// An activation: its locals start at `base` in the one operand stack.
struct Frame {
    method: MethodId,
    pc: u32,
    base: u32,
}

/// Outcome of running a program.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Exit {
    /// main returned.
    Returned,
    /// System.exit(status).
    Exit(i32),
    /// An exception no handler caught.
    Uncaught(String),
}

/// The interpreter's whole state: the loaded program, its heap and stacks,
/// the cycle count and the method cache.
pub struct Vm {
    pub classes: Vec<Class>,
    class_by_name: HashMap<String, ClassId>,
    pub methods: Vec<Method>,
    heap: Vec<Obj>,
    strings: HashMap<String, i32>,
    /// The `java.lang.Class` object of each class named by an `ldc` (for
    /// `synchronized (X.class)`), one per class.
    class_objects: HashMap<String, i32>,
    switches: Vec<SwitchTable>,
    traps: Vec<String>,
    stack: Vec<i32>,
    frames: Vec<Frame>,
    pub cycles: u64,
    cache: MethodCache,
    cfg: BoardConfig,
    pub out: Vec<u8>,
    /// Receives UART output a line at a time as the program prints it.
    pub sink: Option<UartSink>,
    vcache: HashMap<(ClassId, ops::Selector), Option<MethodId>>,
    name_descs: HashMap<(String, String), u32>,
    nd_list: Vec<(String, String)>,
    pub trace: Option<Trace>,
    native_rd: u32,
    native_wr: u32,
    system_out: i32,
    exit: Option<Exit>,
}

impl Vm {
    pub fn class_id(&self, name: &str) -> Option<ClassId> {
        self.class_by_name.get(name).copied()
    }

    /// `Class.method(desc)` of a method, for messages.
    pub fn method_name(&self, m: MethodId) -> String {
        let m = &self.methods[m as usize];
        format!(
            "{}.{}{}",
            self.classes[m.class as usize].name.replace('/', "."),
            m.name,
            m.desc
        )
    }

    fn at(&self, m: MethodId, pc: u32) -> String {
        let bci = self.methods[m as usize].bci.get(pc as usize).copied().unwrap_or(0);
        format!("{} bytecode index {bci}", self.method_name(m))
    }

    /// The selector of (name, descriptor) for virtual and interface calls.
    fn nd(&mut self, name: &str, desc: &str) -> ops::Selector {
        let key = (name.to_string(), desc.to_string());
        if let Some(&i) = self.name_descs.get(&key) {
            return i;
        }
        let i = self.nd_list.len() as u32;
        self.nd_list.push(key.clone());
        self.name_descs.insert(key, i);
        i
    }

    fn at_bci(&self, m: MethodId, bci: u32) -> String {
        format!("{} bytecode index {bci}", self.method_name(m))
    }

    pub(crate) fn print_bytes(&mut self, bytes: &[u8]) {
        self.out.extend_from_slice(bytes);
        if bytes.contains(&b'\n') {
            self.flush();
        }
    }

    /// Hands buffered UART output to the sink (if any).
    pub fn flush(&mut self) {
        if let Some(sink) = &mut self.sink {
            if !self.out.is_empty() {
                sink(&self.out);
                self.out.clear();
            }
        }
    }

    pub(crate) fn set_exit(&mut self, e: Exit) {
        self.exit = Some(e);
    }

    /// The counter values `Native.rd` returns.
    pub(crate) fn io_read(&self, addr: i32) -> i32 {
        match addr {
            IO_CNT => self.cycles as u32 as i32,
            IO_US => (self.cycles as f64 / self.cfg.clock_mhz) as u64 as u32 as i32,
            _ => 0,
        }
    }

    pub(crate) fn native_costs(&self) -> (u32, u32) {
        (self.native_rd, self.native_wr)
    }

    pub(crate) fn pop_arg(&mut self) -> i32 {
        self.stack.pop().unwrap_or(0)
    }

    pub(crate) fn push(&mut self, v: i32) {
        self.stack.push(v);
    }

    pub(crate) fn push_long(&mut self, v: i64) {
        self.stack.push(v as i32);
        self.stack.push((v >> 32) as i32);
    }

    pub(crate) fn location(&self, m: MethodId, pc: u32) -> String {
        self.at(m, pc)
    }

    pub fn exit_state(&self) -> Option<&Exit> {
        self.exit.as_ref()
    }

    /// The board's configuration.
    pub fn config(&self) -> &BoardConfig {
        &self.cfg
    }
}
