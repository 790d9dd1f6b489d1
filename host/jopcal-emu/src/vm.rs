//! The interpreter: class loading and linking, the heap, and the execution
//! loop with JOP timing. Every executed bytecode is charged from the timing
//! model; invokes and returns by the method cache as it actually behaves
//! (exact FIFO simulation, same rules as the estimator's replay); calls of
//! `com.jopdesign.sys.Native` are JOP's own bytecodes (`Native.rd` reads the
//! cycle counter and costs `jopsys_rd`).

use crate::config::BoardConfig;
use crate::library::{self, Intrinsic};
use jopcal_classfile::{decode, parse_class, pool_member_ref, ClassFile, Constant, Instruction, Operands};
use jopcal_timing::cache::{words_of, MethodCache};
use std::collections::HashMap;
use std::rc::Rc;

pub type ClassId = u32;
pub type MethodId = u32;

/// Why the board stopped with an error.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum EmuError {
    #[error("{0}")]
    Load(String),
    #[error("{at}: {what}")]
    Unsupported { at: String, what: String },
    #[error("cycle limit of {limit} cycles reached in {at} (an endless loop?)")]
    CycleLimit { limit: u64, at: String },
    #[error("{at}: {what}")]
    Fault { at: String, what: String },
}

/// The I/O address of the cycle counter (`Const.IO_CNT`) and the microsecond counter.
pub const IO_CNT: i32 = 0xffff_ff80_u32 as i32;
pub const IO_US: i32 = 0xffff_ff81_u32 as i32;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ArrKind {
    Bool,
    Byte,
    Char,
    Short,
    Int,
    Ref,
}

#[derive(Debug)]
pub enum Obj {
    Inst { class: ClassId, fields: Box<[i32]> },
    Arr { kind: ArrKind, data: Vec<i32> },
    LongArr(Vec<i64>),
    Str(Rc<[u16]>),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Cond {
    Eq,
    Ne,
    Lt,
    Ge,
    Gt,
    Le,
}

impl Cond {
    fn test(self, a: i32, b: i32) -> bool {
        match self {
            Cond::Eq => a == b,
            Cond::Ne => a != b,
            Cond::Lt => a < b,
            Cond::Ge => a >= b,
            Cond::Gt => a > b,
            Cond::Le => a <= b,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum InvokeKind {
    Static,
    Special,
    Virtual,
    Interface,
}

/// `(low, targets, default, pairs)` of a tableswitch (targets) or lookupswitch (pairs).
type SwitchTable = (i32, Vec<u32>, u32, Vec<(i32, u32)>);

/// Where UART output goes.
pub type UartSink = Box<dyn FnMut(&[u8]) + Send>;

/// A linked instruction.
#[derive(Debug, Clone, Copy)]
pub enum Op {
    Nop,
    IConst(i32),
    LConst(i64),
    Load(u16),
    LLoad(u16),
    Store(u16),
    LStore(u16),
    ArrLoad(ArrKind),
    LArrLoad,
    ArrStore(ArrKind),
    LArrStore,
    Pop,
    Pop2,
    Dup,
    DupX1,
    DupX2,
    Dup2,
    Dup2X1,
    Dup2X2,
    Swap,
    IBin(u8),
    LBin(u8),
    LShift(u8),
    INeg,
    LNeg,
    IInc(u16, i32),
    I2L,
    L2I,
    I2B,
    I2C,
    I2S,
    LCmp,
    If(Cond, u32),
    IfCmp(Cond, u32),
    Goto(u32),
    Switch(u32),
    Return(u8),
    GetStatic(ClassId, u32, bool),
    PutStatic(ClassId, u32, bool),
    GetField(u32, bool),
    PutField(u32, bool),
    Invoke(InvokeKind, u32, u16),
    New(ClassId),
    NewArray(ArrKind),
    NewLongArray,
    MultiNewArray(u8, ArrKind, bool),
    ArrayLength,
    AThrow,
    CheckCast(ClassId),
    InstanceOf(ClassId),
    MonitorEnter,
    MonitorExit,
    /// Executing this is an error (unsupported bytecode, unresolvable reference).
    Trap(u32),
}

#[derive(Debug, Clone, Copy)]
pub struct Ins {
    pub op: Op,
    /// The original opcode (for costs and traces).
    pub opcode: u8,
    /// Fixed cycles of this instruction (0 for invokes and returns, costed when they run).
    pub cost: u32,
}

#[derive(Debug)]
struct Handler {
    start: u32,
    end: u32,
    target: u32,
    catch: Option<ClassId>,
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
    /// Own fields: (name, descriptor) -> (static?, slot, two slots?).
    fields: HashMap<(String, String), (bool, u32, bool)>,
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
    vcache: HashMap<(ClassId, u32), Option<MethodId>>,
    name_descs: HashMap<(String, String), u32>,
    nd_list: Vec<(String, String)>,
    pub trace: Option<Trace>,
    native_rd: u32,
    native_wr: u32,
    system_out: i32,
    exit: Option<Exit>,
}

fn slots_of(desc: &str) -> (u16, u8) {
    // (argument slots, return opcode)
    let mut slots = 0u16;
    let b = desc.as_bytes();
    let mut i = 1;
    while i < b.len() && b[i] != b')' {
        match b[i] {
            b'J' | b'D' => {
                slots += 2;
                i += 1;
            }
            b'L' => {
                slots += 1;
                while i < b.len() && b[i] != b';' {
                    i += 1;
                }
                i += 1;
            }
            b'[' => {
                slots += 1;
                while i < b.len() && b[i] == b'[' {
                    i += 1;
                }
                if i < b.len() && b[i] == b'L' {
                    while i < b.len() && b[i] != b';' {
                        i += 1;
                    }
                }
                i += 1;
            }
            _ => {
                slots += 1;
                i += 1;
            }
        }
    }
    let ret = match b.get(i + 1) {
        Some(b'V') => 177,
        Some(b'J') => 173,
        Some(b'F') => 174,
        Some(b'D') => 175,
        Some(b'L' | b'[') => 176,
        _ => 172,
    };
    (slots, ret)
}

fn two_slots(desc: &str) -> bool {
    matches!(desc.as_bytes().first(), Some(b'J' | b'D'))
}

impl Vm {
    /// Loads and links `class_files` plus the board's runtime library.
    pub fn new(class_files: &[Vec<u8>], cfg: BoardConfig) -> Result<Vm, EmuError> {
        let mut vm = Vm {
            classes: Vec::new(),
            class_by_name: HashMap::new(),
            methods: Vec::new(),
            heap: Vec::new(),
            strings: HashMap::new(),
            class_objects: HashMap::new(),
            switches: Vec::new(),
            traps: Vec::new(),
            stack: Vec::with_capacity(1 << 16),
            frames: Vec::new(),
            cycles: 0,
            cache: MethodCache::new(cfg.cache),
            cfg,
            out: Vec::new(),
            sink: None,
            vcache: HashMap::new(),
            name_descs: HashMap::new(),
            nd_list: Vec::new(),
            trace: None,
            native_rd: 0,
            native_wr: 0,
            system_out: 0,
            exit: None,
        };
        let rd = vm.cfg.model.native_cost("jopsys_rd").unwrap_or(0.0);
        let wr = vm.cfg.model.native_cost("jopsys_wr").unwrap_or(0.0);
        vm.native_rd = integral(rd, "native jopsys_rd")?;
        vm.native_wr = integral(wr, "native jopsys_wr")?;
        library::install(&mut vm)?;
        let mut loaded = Vec::new();
        for (k, bytes) in class_files.iter().enumerate() {
            let cf = parse_class(bytes).map_err(|e| EmuError::Load(format!("class file {k} of the bundle: {e}")))?;
            if vm.class_by_name.contains_key(&cf.this_class) {
                if library::is_library(&cf.this_class) {
                    // A host stand-in (e.g. com/jopdesign/sys/Native): the board's own wins.
                    continue;
                }
                return Err(EmuError::Load(format!(
                    "class {} is in the bundle twice",
                    cf.this_class
                )));
            }
            let id = vm.add_class(&cf.this_class, None, Vec::new(), cf.constant_pool.clone());
            loaded.push((id, cf));
        }
        // Supers and layouts, in dependency order.
        for (id, cf) in &loaded {
            let sup = match &cf.super_class {
                Some(s) => Some(vm.class_id(s).ok_or_else(|| {
                    EmuError::Load(format!(
                        "class {}: superclass {s} is neither in the bundle nor in the board's library",
                        cf.this_class
                    ))
                })?),
                None => None,
            };
            vm.classes[*id as usize].super_id = sup;
            let mut ifaces = Vec::new();
            for i in &cf.interfaces {
                ifaces.push(vm.class_id(i).ok_or_else(|| {
                    EmuError::Load(format!(
                        "class {}: interface {i} is neither in the bundle nor in the board's library",
                        cf.this_class
                    ))
                })?);
            }
            vm.classes[*id as usize].interfaces = ifaces;
        }
        // Fields, superclasses first: a class's instance fields follow all of
        // its superclasses' (laid out before their fields are known, a
        // subclass's fields would share slots with its superclass's).
        let own: HashMap<ClassId, &ClassFile> = loaded.iter().map(|(id, cf)| (*id, cf)).collect();
        let mut laid = vec![false; vm.classes.len()];
        for i in 0..vm.classes.len() {
            vm.layout(i as ClassId, &own, &mut laid, 0)?;
        }
        for (id, cf) in &loaded {
            for m in &cf.methods {
                let (raw, raw_handlers, max_locals) = match &m.code {
                    Some(c) => (
                        decode(&c.bytecode).map_err(|e| {
                            EmuError::Load(format!("{}.{}{}: {e}", cf.this_class, m.name, m.descriptor))
                        })?,
                        c.exception_table.clone(),
                        c.max_locals,
                    ),
                    None => (Vec::new(), Vec::new(), 0),
                };
                let len = m.code.as_ref().map_or(0, |c| c.bytecode.len() as u32);
                let is_static = m.access & jopcal_classfile::class::ACC_STATIC != 0;
                let native = m.access & jopcal_classfile::class::ACC_NATIVE != 0;
                let mid = vm.add_method(*id, &m.name, &m.descriptor, is_static, len, max_locals);
                let meth = &mut vm.methods[mid as usize];
                meth.raw = raw;
                meth.raw_handlers = raw_handlers;
                meth.is_abstract = m.code.is_none() && !native;
                if native {
                    meth.intrinsic = Some(Intrinsic::UnsupportedNative);
                }
            }
        }
        vm.link_all()?;
        vm.system_out = vm.alloc(Obj::Inst {
            class: vm.class_id("java/io/PrintStream").expect("library"),
            fields: Box::new([]),
        })?;
        Ok(vm)
    }

    /// Lays out class `id` after its superclasses: its instance slots start
    /// where its superclass's end, then its own fields (from `own`, the
    /// bundle's class files) are added. Returns its instance slot count.
    fn layout(
        &mut self,
        id: ClassId,
        own: &HashMap<ClassId, &ClassFile>,
        laid: &mut Vec<bool>,
        depth: usize,
    ) -> Result<u32, EmuError> {
        if laid[id as usize] {
            return Ok(self.classes[id as usize].instance_slots);
        }
        if depth > 64 {
            return Err(EmuError::Load(format!(
                "class {}: circular superclasses",
                self.classes[id as usize].name
            )));
        }
        let base = match self.classes[id as usize].super_id {
            Some(s) => self.layout(s, own, laid, depth + 1)?,
            None => 0,
        };
        laid[id as usize] = true;
        if let Some(cf) = own.get(&id) {
            self.classes[id as usize].instance_slots = base;
            for f in &cf.fields {
                let is_static = f.access & jopcal_classfile::class::ACC_STATIC != 0;
                self.add_field(id, &f.name, &f.descriptor, is_static);
            }
        } else {
            // A library class: its own fields were added on top of its superclass's.
            self.classes[id as usize].instance_slots += base;
        }
        Ok(self.classes[id as usize].instance_slots)
    }

    pub(crate) fn add_class(
        &mut self,
        name: &str,
        super_id: Option<ClassId>,
        interfaces: Vec<ClassId>,
        pool: Vec<Constant>,
    ) -> ClassId {
        let id = self.classes.len() as ClassId;
        self.classes.push(Class {
            name: name.to_string(),
            super_id,
            interfaces,
            instance_slots: 0,
            fields: HashMap::new(),
            statics: Vec::new(),
            methods: HashMap::new(),
            pool,
            init: Init::No,
        });
        self.class_by_name.insert(name.to_string(), id);
        id
    }

    pub(crate) fn set_interfaces(&mut self, class: ClassId, interfaces: Vec<ClassId>) {
        self.classes[class as usize].interfaces = interfaces;
    }

    pub(crate) fn add_field(&mut self, class: ClassId, name: &str, desc: &str, is_static: bool) {
        let wide = two_slots(desc);
        let c = &mut self.classes[class as usize];
        let slot = if is_static {
            let s = c.statics.len() as u32;
            c.statics.resize(c.statics.len() + if wide { 2 } else { 1 }, 0);
            s
        } else {
            let s = c.instance_slots;
            c.instance_slots += if wide { 2 } else { 1 };
            s
        };
        c.fields
            .insert((name.to_string(), desc.to_string()), (is_static, slot, wide));
    }

    pub(crate) fn add_method(
        &mut self,
        class: ClassId,
        name: &str,
        desc: &str,
        is_static: bool,
        len: u32,
        max_locals: u16,
    ) -> MethodId {
        let id = self.methods.len() as MethodId;
        let (args, _) = slots_of(desc);
        self.methods.push(Method {
            class,
            name: name.to_string(),
            desc: desc.to_string(),
            is_static,
            code: Rc::from(Vec::new()),
            raw: Vec::new(),
            bci: Vec::new(),
            max_locals,
            arg_slots: args + u16::from(!is_static),
            handlers: Vec::new(),
            raw_handlers: Vec::new(),
            words: words_of(len),
            intrinsic: None,
            is_abstract: false,
            invoke_cost: [[0; 2]; 5],
            return_cost: [[0; 2]; 6],
        });
        self.classes[class as usize]
            .methods
            .insert((name.to_string(), desc.to_string()), id);
        id
    }

    /// Gives a synthetic method bytecode (linked with the rest).
    pub(crate) fn set_raw_code(&mut self, m: MethodId, code: &[u8]) -> Result<(), EmuError> {
        let raw = decode(code).map_err(|e| EmuError::Load(e.to_string()))?;
        self.methods[m as usize].raw = raw;
        Ok(())
    }

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

    fn nd(&mut self, name: &str, desc: &str) -> u32 {
        let key = (name.to_string(), desc.to_string());
        if let Some(&i) = self.name_descs.get(&key) {
            return i;
        }
        let i = self.nd_list.len() as u32;
        self.nd_list.push(key.clone());
        self.name_descs.insert(key, i);
        i
    }

    fn is_subclass(&self, mut c: ClassId, target: ClassId) -> bool {
        loop {
            if c == target {
                return true;
            }
            if self.classes[c as usize]
                .interfaces
                .iter()
                .any(|i| self.is_subclass(*i, target))
            {
                return true;
            }
            match self.classes[c as usize].super_id {
                Some(s) => c = s,
                None => return false,
            }
        }
    }

    /// Finds a field in `class`, its supers and interfaces.
    fn find_field(&self, class: ClassId, name: &str, desc: &str) -> Option<(ClassId, bool, u32, bool)> {
        let c = &self.classes[class as usize];
        if let Some(&(s, slot, wide)) = c.fields.get(&(name.to_string(), desc.to_string())) {
            return Some((class, s, slot, wide));
        }
        for i in &c.interfaces {
            if let Some(f) = self.find_field(*i, name, desc) {
                return Some(f);
            }
        }
        c.super_id.and_then(|s| self.find_field(s, name, desc))
    }

    /// Finds a method by name and descriptor in `class` and its supers (then interfaces).
    fn find_method(&self, class: ClassId, name: &str, desc: &str) -> Option<MethodId> {
        let mut c = Some(class);
        while let Some(id) = c {
            let cl = &self.classes[id as usize];
            if let Some(&m) = cl.methods.get(&(name.to_string(), desc.to_string())) {
                if !self.methods[m as usize].is_abstract {
                    return Some(m);
                }
            }
            c = cl.super_id;
        }
        // Interface methods (abstract ones too, for invokeinterface resolution).
        let mut todo = vec![class];
        while let Some(id) = todo.pop() {
            let cl = &self.classes[id as usize];
            if let Some(&m) = cl.methods.get(&(name.to_string(), desc.to_string())) {
                return Some(m);
            }
            todo.extend(cl.interfaces.iter().copied());
            if let Some(s) = cl.super_id {
                todo.push(s);
            }
        }
        None
    }

    fn trap(&mut self, msg: String) -> Op {
        self.traps.push(msg);
        Op::Trap(self.traps.len() as u32 - 1)
    }

    fn link_all(&mut self) -> Result<(), EmuError> {
        // Costs of invokes and returns per method, and of fixed-cost opcodes.
        let model = self.cfg.model.clone();
        let mut fixed = [0u32; 256];
        let b_hit = model.load_cost(true, 0);
        for op in 0..=255u8 {
            if jopcal_classfile::opcode::mnemonic(op).is_some()
                && !jopcal_classfile::opcode::is_invoke(op)
                && !jopcal_classfile::opcode::is_return(op)
            {
                fixed[op as usize] = integral(model.cost(op, b_hit, 0), &format!("opcode {op}"))?;
            }
        }
        for m in 0..self.methods.len() {
            let words = self.methods[m].words;
            for hit in [false, true] {
                let b = model.load_cost(hit, words);
                for (k, op) in (182u8..=186).enumerate() {
                    self.methods[m].invoke_cost[k][usize::from(hit)] =
                        integral(model.cost(op, b, words), "invoke cost")?;
                }
                for (k, op) in (172u8..=177).enumerate() {
                    self.methods[m].return_cost[k][usize::from(hit)] =
                        integral(model.cost(op, b, words), "return cost")?;
                }
            }
        }
        for m in 0..self.methods.len() {
            if self.methods[m].raw.is_empty() {
                continue;
            }
            let raw = std::mem::take(&mut self.methods[m].raw);
            let index: HashMap<u32, u32> = raw.iter().enumerate().map(|(i, ins)| (ins.pc, i as u32)).collect();
            let mut code = Vec::with_capacity(raw.len());
            let mut bci = Vec::with_capacity(raw.len());
            for ins in &raw {
                let op = self.link(m as MethodId, ins, &index);
                let cost = if jopcal_classfile::opcode::is_invoke(ins.opcode)
                    || jopcal_classfile::opcode::is_return(ins.opcode)
                {
                    0
                } else {
                    fixed[ins.opcode as usize]
                };
                code.push(Ins {
                    op,
                    opcode: ins.opcode,
                    cost,
                });
                bci.push(ins.pc);
            }
            let end_index = raw.len() as u32;
            let handlers = self.methods[m]
                .raw_handlers
                .iter()
                .map(|&(s, e, h, t)| {
                    let class = self.methods[m].class as usize;
                    let catch = if t == 0 {
                        None
                    } else {
                        let name = match self.classes[class].pool.get(t as usize) {
                            Some(Constant::Class(n)) => {
                                jopcal_classfile::class::pool_utf8(&self.classes[class].pool, *n).map(str::to_string)
                            }
                            _ => None,
                        };
                        name.and_then(|n| self.class_id(&n))
                    };
                    Handler {
                        start: index.get(&u32::from(s)).copied().unwrap_or(end_index),
                        end: index.get(&u32::from(e)).copied().unwrap_or(end_index),
                        target: index.get(&u32::from(h)).copied().unwrap_or(0),
                        // An unknown catch type catches nothing the board can throw.
                        catch: if t == 0 { None } else { Some(catch.unwrap_or(u32::MAX)) },
                    }
                })
                .collect();
            let meth = &mut self.methods[m];
            meth.code = Rc::from(code);
            meth.bci = bci;
            meth.handlers = handlers;
        }
        Ok(())
    }

    fn link(&mut self, m: MethodId, ins: &Instruction, index: &HashMap<u32, u32>) -> Op {
        let op = self.link_unchecked(m, ins, index);
        // Locals outside the frame would be a malformed class file: refuse at run time.
        let meth = &self.methods[m as usize];
        let frame = meth.max_locals.max(meth.arg_slots) as u32;
        let (slot, width) = match op {
            Op::Load(l) | Op::Store(l) | Op::IInc(l, _) => (u32::from(l), 1),
            Op::LLoad(l) | Op::LStore(l) => (u32::from(l), 2),
            _ => return op,
        };
        if slot + width > frame {
            let at = format!("{} bytecode index {}", self.method_name(m), ins.pc);
            return self.trap(format!(
                "{at}: local variable {slot} is outside the frame of {frame} slots"
            ));
        }
        op
    }

    fn link_unchecked(&mut self, m: MethodId, ins: &Instruction, index: &HashMap<u32, u32>) -> Op {
        use jopcal_classfile::opcode::mnemonic;
        let class = self.methods[m as usize].class;
        let target = |t: u32| index.get(&t).copied().unwrap_or(u32::MAX);
        let local = match ins.operands {
            Operands::Local(l) => l,
            _ => 0,
        };
        let op = ins.opcode;
        let cp = match ins.operands {
            Operands::Cp(c) | Operands::InvokeInterface { cp: c, .. } | Operands::MultiANewArray { cp: c, .. } => c,
            _ => 0,
        };
        let unsupported = |vm: &mut Vm, why: &str| {
            let name = mnemonic(op).unwrap_or("?");
            let at = format!("{} bytecode index {}", vm.method_name(m), ins.pc);
            vm.trap(format!(
                "{at}: bytecode {name} is not supported by the virtual board ({why})"
            ))
        };
        match op {
            0x00 => Op::Nop,
            0x01 => Op::IConst(0),
            0x02..=0x08 => Op::IConst(i32::from(op) - 3),
            0x09 | 0x0a => Op::LConst(i64::from(op) - 9),
            0x0b..=0x0f => unsupported(self, "no floating point"),
            0x10 | 0x11 => match ins.operands {
                Operands::Const(v) => Op::IConst(v),
                _ => Op::IConst(0),
            },
            0x12..=0x14 => {
                let pool = &self.classes[class as usize].pool;
                match pool.get(cp as usize).cloned() {
                    Some(Constant::Integer(v)) => Op::IConst(v),
                    Some(Constant::Long(v)) => Op::LConst(v),
                    Some(Constant::String(s)) => {
                        let text = jopcal_classfile::class::pool_utf8(pool, s).unwrap_or("").to_string();
                        match self.intern(&text) {
                            Ok(r) => Op::IConst(r),
                            Err(e) => self.trap(e.to_string()),
                        }
                    }
                    Some(Constant::Class(n)) => {
                        let name = jopcal_classfile::class::pool_utf8(pool, n).unwrap_or("").to_string();
                        match self.class_object(&name) {
                            Ok(r) => Op::IConst(r),
                            Err(e) => self.trap(e.to_string()),
                        }
                    }
                    _ => unsupported(self, "float and double constants are not supported"),
                }
            }
            0x15 | 0x19 => Op::Load(local),
            0x16 => Op::LLoad(local),
            0x17 | 0x18 => unsupported(self, "no floating point"),
            0x1a..=0x1d => Op::Load(u16::from(op - 0x1a)),
            0x1e..=0x21 => Op::LLoad(u16::from(op - 0x1e)),
            0x22..=0x29 => unsupported(self, "no floating point"),
            0x2a..=0x2d => Op::Load(u16::from(op - 0x2a)),
            0x2e => Op::ArrLoad(ArrKind::Int),
            0x2f => Op::LArrLoad,
            0x30 | 0x31 => unsupported(self, "no floating point"),
            0x32 => Op::ArrLoad(ArrKind::Ref),
            0x33 => Op::ArrLoad(ArrKind::Byte),
            0x34 => Op::ArrLoad(ArrKind::Char),
            0x35 => Op::ArrLoad(ArrKind::Short),
            0x36 | 0x3a => Op::Store(local),
            0x37 => Op::LStore(local),
            0x38 | 0x39 => unsupported(self, "no floating point"),
            0x3b..=0x3e => Op::Store(u16::from(op - 0x3b)),
            0x3f..=0x42 => Op::LStore(u16::from(op - 0x3f)),
            0x43..=0x4a => unsupported(self, "no floating point"),
            0x4b..=0x4e => Op::Store(u16::from(op - 0x4b)),
            0x4f => Op::ArrStore(ArrKind::Int),
            0x50 => Op::LArrStore,
            0x51 | 0x52 => unsupported(self, "no floating point"),
            0x53 => Op::ArrStore(ArrKind::Ref),
            0x54 => Op::ArrStore(ArrKind::Byte),
            0x55 => Op::ArrStore(ArrKind::Char),
            0x56 => Op::ArrStore(ArrKind::Short),
            0x57 => Op::Pop,
            0x58 => Op::Pop2,
            0x59 => Op::Dup,
            0x5a => Op::DupX1,
            0x5b => Op::DupX2,
            0x5c => Op::Dup2,
            0x5d => Op::Dup2X1,
            0x5e => Op::Dup2X2,
            0x5f => Op::Swap,
            0x60 | 0x64 | 0x68 | 0x6c | 0x70 | 0x78 | 0x7a | 0x7c | 0x7e | 0x80 | 0x82 => Op::IBin(op),
            0x61 | 0x65 | 0x69 | 0x6d | 0x71 | 0x7f | 0x81 | 0x83 => Op::LBin(op),
            0x79 | 0x7b | 0x7d => Op::LShift(op),
            0x74 => Op::INeg,
            0x75 => Op::LNeg,
            0x84 => match ins.operands {
                Operands::Iinc { index, delta } => Op::IInc(index, i32::from(delta)),
                _ => Op::Nop,
            },
            0x85 => Op::I2L,
            0x88 => Op::L2I,
            0x91 => Op::I2B,
            0x92 => Op::I2C,
            0x93 => Op::I2S,
            0x94 => Op::LCmp,
            0x62
            | 0x63
            | 0x66
            | 0x67
            | 0x6a
            | 0x6b
            | 0x6e
            | 0x6f
            | 0x72
            | 0x73
            | 0x76
            | 0x77
            | 0x86
            | 0x87
            | 0x89..=0x90
            | 0x95..=0x98 => unsupported(self, "no floating point"),
            0x99..=0x9e => Op::If(cond(op - 0x99), target(branch(ins))),
            0x9f..=0xa4 => Op::IfCmp(cond(op - 0x9f), target(branch(ins))),
            0xa5 => Op::IfCmp(Cond::Eq, target(branch(ins))),
            0xa6 => Op::IfCmp(Cond::Ne, target(branch(ins))),
            0xa7 | 0xc8 => Op::Goto(target(branch(ins))),
            0xa8 | 0xa9 | 0xc9 => unsupported(self, "jsr/ret (class files before Java 6)"),
            0xaa | 0xab => {
                let (low, targets, default, pairs) = match &ins.operands {
                    Operands::TableSwitch {
                        default,
                        low,
                        targets: t,
                        ..
                    } => (
                        *low,
                        t.iter().map(|x| target(*x)).collect(),
                        target(*default),
                        Vec::new(),
                    ),
                    Operands::LookupSwitch { default, pairs } => (
                        0,
                        Vec::new(),
                        target(*default),
                        pairs.iter().map(|(k, t)| (*k, target(*t))).collect(),
                    ),
                    _ => (0, Vec::new(), 0, Vec::new()),
                };
                self.switches.push((low, targets, default, pairs));
                Op::Switch(self.switches.len() as u32 - 1)
            }
            0xac..=0xb1 => Op::Return(op),
            0xb2..=0xb5 => {
                let pool = &self.classes[class as usize].pool;
                let Some((cname, name, desc)) =
                    pool_member_ref(pool, cp).map(|(a, b, c)| (a.to_string(), b.to_string(), c.to_string()))
                else {
                    return self.trap(format!("{}: bad field reference", self.at_bci(m, ins.pc)));
                };
                if name == "out" && cname == "java/lang/System" {
                    return if op == 0xb2 {
                        Op::GetStatic(u32::MAX, 0, false)
                    } else {
                        unsupported(self, "System.out cannot be assigned")
                    };
                }
                let Some(cid) = self.class_id(&cname) else {
                    return self.trap(format!(
                        "{}: field {cname}.{name} of a class the board does not have",
                        self.at_bci(m, ins.pc)
                    ));
                };
                let Some((owner, is_static, slot, wide)) = self.find_field(cid, &name, &desc) else {
                    return self.trap(format!("{}: no field {cname}.{name} {desc}", self.at_bci(m, ins.pc)));
                };
                match (op, is_static) {
                    (0xb2, true) => Op::GetStatic(owner, slot, wide),
                    (0xb3, true) => Op::PutStatic(owner, slot, wide),
                    (0xb4, false) => Op::GetField(slot, wide),
                    (0xb5, false) => Op::PutField(slot, wide),
                    _ => self.trap(format!(
                        "{}: static/instance mismatch for field {cname}.{name}",
                        self.at_bci(m, ins.pc)
                    )),
                }
            }
            0xb6..=0xb9 => {
                let pool = &self.classes[class as usize].pool;
                let Some((cname, name, desc)) =
                    pool_member_ref(pool, cp).map(|(a, b, c)| (a.to_string(), b.to_string(), c.to_string()))
                else {
                    return self.trap(format!("{}: bad method reference", self.at_bci(m, ins.pc)));
                };
                let (args, _) = slots_of(&desc);
                let Some(cid) = self.class_id(&cname) else {
                    return self.trap(format!(
                        "{}: library method {}.{name}{desc} is not supported by the virtual board",
                        self.at_bci(m, ins.pc),
                        cname.replace('/', ".")
                    ));
                };
                match op {
                    0xb6 | 0xb9 => {
                        if self.find_method(cid, &name, &desc).is_none() {
                            return self.trap(format!(
                                "{}: method {}.{name}{desc} is not supported by the virtual board",
                                self.at_bci(m, ins.pc),
                                cname.replace('/', ".")
                            ));
                        }
                        let nd = self.nd(&name, &desc);
                        let kind = if op == 0xb6 {
                            InvokeKind::Virtual
                        } else {
                            InvokeKind::Interface
                        };
                        Op::Invoke(kind, nd, args + 1)
                    }
                    _ => match self.find_method(cid, &name, &desc) {
                        Some(t) => {
                            let kind = if op == 0xb8 {
                                InvokeKind::Static
                            } else {
                                InvokeKind::Special
                            };
                            Op::Invoke(kind, t, args + u16::from(op != 0xb8))
                        }
                        None => self.trap(format!(
                            "{}: method {}.{name}{desc} is not supported by the virtual board",
                            self.at_bci(m, ins.pc),
                            cname.replace('/', ".")
                        )),
                    },
                }
            }
            0xba => unsupported(self, "invokedynamic: compile with --release 8 or older"),
            0xbb => {
                let pool = &self.classes[class as usize].pool;
                let name = match pool.get(cp as usize) {
                    Some(Constant::Class(n)) => jopcal_classfile::class::pool_utf8(pool, *n).unwrap_or("").to_string(),
                    _ => String::new(),
                };
                match self.class_id(&name) {
                    Some(c) => Op::New(c),
                    None => self.trap(format!(
                        "{}: class {name} is not supported by the virtual board",
                        self.at_bci(m, ins.pc)
                    )),
                }
            }
            0xbc => match ins.operands {
                Operands::NewArray(4) => Op::NewArray(ArrKind::Bool),
                Operands::NewArray(5) => Op::NewArray(ArrKind::Char),
                Operands::NewArray(8) => Op::NewArray(ArrKind::Byte),
                Operands::NewArray(9) => Op::NewArray(ArrKind::Short),
                Operands::NewArray(10) => Op::NewArray(ArrKind::Int),
                Operands::NewArray(11) => Op::NewLongArray,
                _ => unsupported(self, "no floating point"),
            },
            0xbd => Op::NewArray(ArrKind::Ref),
            0xbe => Op::ArrayLength,
            0xbf => Op::AThrow,
            0xc0 | 0xc1 => {
                let pool = &self.classes[class as usize].pool;
                let name = match pool.get(cp as usize) {
                    Some(Constant::Class(n)) => jopcal_classfile::class::pool_utf8(pool, *n).unwrap_or("").to_string(),
                    _ => String::new(),
                };
                // Array types are only checked for being arrays.
                let id = if name.starts_with('[') {
                    u32::MAX
                } else {
                    self.class_id(&name).unwrap_or(u32::MAX - 1)
                };
                if op == 0xc0 {
                    Op::CheckCast(id)
                } else {
                    Op::InstanceOf(id)
                }
            }
            0xc2 => Op::MonitorEnter,
            0xc3 => Op::MonitorExit,
            0xc5 => {
                let (dims, leaf) = match ins.operands {
                    Operands::MultiANewArray { dims, .. } => {
                        let pool = &self.classes[class as usize].pool;
                        let name = match pool.get(cp as usize) {
                            Some(Constant::Class(n)) => {
                                jopcal_classfile::class::pool_utf8(pool, *n).unwrap_or("").to_string()
                            }
                            _ => String::new(),
                        };
                        let elem = name.trim_start_matches('[');
                        let depth = name.len() - elem.len();
                        let leaf = if depth > dims as usize {
                            Some(ArrKind::Ref)
                        } else {
                            match elem.as_bytes().first() {
                                Some(b'I') => Some(ArrKind::Int),
                                Some(b'B') => Some(ArrKind::Byte),
                                Some(b'Z') => Some(ArrKind::Bool),
                                Some(b'C') => Some(ArrKind::Char),
                                Some(b'S') => Some(ArrKind::Short),
                                Some(b'L') => Some(ArrKind::Ref),
                                Some(b'J') => None,
                                _ => return unsupported(self, "no floating point"),
                            }
                        };
                        (dims, leaf)
                    }
                    _ => (1, Some(ArrKind::Int)),
                };
                Op::MultiNewArray(dims, leaf.unwrap_or(ArrKind::Int), leaf.is_none())
            }
            0xc6 => Op::If(Cond::Eq, target(branch(ins))),
            0xc7 => Op::If(Cond::Ne, target(branch(ins))),
            _ => unsupported(self, "not a JVM bytecode"),
        }
    }

    fn at_bci(&self, m: MethodId, bci: u32) -> String {
        format!("{} bytecode index {bci}", self.method_name(m))
    }

    pub(crate) fn alloc(&mut self, o: Obj) -> Result<i32, EmuError> {
        if self.heap.len() >= (1 << 28) {
            return Err(EmuError::Fault {
                at: "heap".into(),
                what: "out of memory: 2^28 objects".into(),
            });
        }
        self.heap.push(o);
        Ok(self.heap.len() as i32)
    }

    pub(crate) fn intern(&mut self, s: &str) -> Result<i32, EmuError> {
        if let Some(&r) = self.strings.get(s) {
            return Ok(r);
        }
        let units: Vec<u16> = s.encode_utf16().collect();
        let r = self.alloc(Obj::Str(Rc::from(units)))?;
        self.strings.insert(s.to_string(), r);
        Ok(r)
    }

    /// The `java.lang.Class` object standing for class `name`.
    pub(crate) fn class_object(&mut self, name: &str) -> Result<i32, EmuError> {
        if let Some(&r) = self.class_objects.get(name) {
            return Ok(r);
        }
        let class = self.class_id("java/lang/Class").expect("library");
        let r = self.alloc(Obj::Inst {
            class,
            fields: Box::new([]),
        })?;
        self.class_objects.insert(name.to_string(), r);
        Ok(r)
    }

    pub(crate) fn obj(&self, r: i32) -> Option<&Obj> {
        if r <= 0 {
            return None;
        }
        self.heap.get(r as usize - 1)
    }

    fn obj_mut(&mut self, r: i32) -> Option<&mut Obj> {
        if r <= 0 {
            return None;
        }
        self.heap.get_mut(r as usize - 1)
    }

    fn class_of(&self, r: i32) -> Option<ClassId> {
        match self.obj(r)? {
            Obj::Inst { class, .. } => Some(*class),
            Obj::Str(_) => self.class_id("java/lang/String"),
            _ => self.class_id("java/lang/Object"),
        }
    }

    pub(crate) fn string_of(&self, r: i32) -> Option<String> {
        match self.obj(r)? {
            Obj::Str(u) => Some(String::from_utf16_lossy(u)),
            _ => None,
        }
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

    /// Makes a new exception object of library class `name` (e.g. `java/lang/ArithmeticException`).
    fn new_exception(&mut self, name: &str) -> Result<i32, EmuError> {
        let class = self.class_id(name).expect("library exception class");
        let slots = self.classes[class as usize].instance_slots as usize;
        self.alloc(Obj::Inst {
            class,
            fields: vec![0; slots].into_boxed_slice(),
        })
    }

    /// Runs static initializers (superclasses first), then main, with the
    /// method cache emptied before main. Returns how main ended.
    pub fn run_main(&mut self, main_class: &str) -> Result<Exit, EmuError> {
        let Some(cid) = self.class_id(main_class) else {
            return Err(EmuError::Load(format!(
                "main class {} is not in the bundle",
                main_class.replace('/', ".")
            )));
        };
        // JOP runs every static initializer at boot; so does the board, in bundle order.
        for c in 0..self.classes.len() as ClassId {
            if let Some(e) = self.initialize(c)? {
                return Ok(e);
            }
        }
        let Some(&main) = self.classes[cid as usize]
            .methods
            .get(&("main".to_string(), "([Ljava/lang/String;)V".to_string()))
        else {
            return Err(EmuError::Load(format!(
                "class {} has no main(String[])",
                main_class.replace('/', ".")
            )));
        };
        self.cache = MethodCache::new(self.cfg.cache);
        let args = self.alloc(Obj::Arr {
            kind: ArrKind::Ref,
            data: Vec::new(),
        })?;
        self.stack.clear();
        self.stack.push(args);
        self.call(main, 0)
    }

    fn initialize(&mut self, c: ClassId) -> Result<Option<Exit>, EmuError> {
        if self.classes[c as usize].init != Init::No {
            return Ok(None);
        }
        self.classes[c as usize].init = Init::Running;
        if let Some(s) = self.classes[c as usize].super_id {
            if let Some(e) = self.initialize(s)? {
                return Ok(Some(e));
            }
        }
        let clinit = self.classes[c as usize]
            .methods
            .get(&("<clinit>".to_string(), "()V".to_string()))
            .copied();
        if let Some(m) = clinit {
            self.stack.clear();
            match self.call(m, 0)? {
                Exit::Returned => {}
                other => return Ok(Some(other)),
            }
        }
        self.classes[c as usize].init = Init::Done;
        Ok(None)
    }

    /// Invokes `m` (arguments on the stack) as the outermost frame and runs to its return.
    fn call(&mut self, m: MethodId, invoke_op: u8) -> Result<Exit, EmuError> {
        let base_depth = self.frames.len();
        let meth = &self.methods[m as usize];
        let words = meth.words;
        if invoke_op != 0 {
            let hit = self.cache.access(m, words);
            self.cycles += u64::from(meth.invoke_cost[(invoke_op - 182) as usize][usize::from(hit)]);
        } else {
            self.cache.access(m, words);
        }
        self.push_frame(m)?;
        self.execute(base_depth)
    }

    fn push_frame(&mut self, m: MethodId) -> Result<(), EmuError> {
        let meth = &self.methods[m as usize];
        let base = self.stack.len() - meth.arg_slots as usize;
        let locals = (meth.max_locals as usize).max(meth.arg_slots as usize);
        if self.frames.len() >= 4096 {
            return Err(EmuError::Fault {
                at: self.method_name(m),
                what: "stack overflow (4096 frames)".into(),
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
                self.cycles += u64::from(ins.cost);
                if let Some(t) = &mut self.trace {
                    t.cycles_by_method[m as usize] += u64::from(ins.cost);
                }
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
                macro_rules! throw {
                    ($name:expr) => {{
                        let ex = self.new_exception($name)?;
                        self.frames.last_mut().expect("frame").pc = pc as u32;
                        match self.throw(ex, base_depth)? {
                            Some(exit) => return Ok(exit),
                            None => continue 'frames,
                        }
                    }};
                }
                match ins.op {
                    Op::MonitorEnter | Op::MonitorExit => {
                        pop!();
                    }
                    Op::IConst(v) => self.stack.push(v),
                    Op::LConst(v) => push_long!(v),
                    Op::Load(l) => {
                        let v = self.stack[base + l as usize];
                        self.stack.push(v);
                    }
                    Op::LLoad(l) => {
                        let a = self.stack[base + l as usize];
                        let b = self.stack[base + l as usize + 1];
                        self.stack.push(a);
                        self.stack.push(b);
                    }
                    Op::Store(l) => {
                        let v = pop!();
                        self.stack[base + l as usize] = v;
                    }
                    Op::LStore(l) => {
                        let hi = pop!();
                        let lo = pop!();
                        self.stack[base + l as usize] = lo;
                        self.stack[base + l as usize + 1] = hi;
                    }
                    Op::ArrLoad(_) => {
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
                    Op::ArrStore(k) => {
                        let v = pop!();
                        let i = pop!();
                        let r = pop!();
                        let v = match k {
                            ArrKind::Byte | ArrKind::Bool => i32::from(v as i8),
                            ArrKind::Char => i32::from(v as u16),
                            ArrKind::Short => i32::from(v as i16),
                            _ => v,
                        };
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
                        self.stack.push(v);
                        self.stack.push(v);
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
                        self.stack.push(a);
                        self.stack.push(b);
                    }
                    Op::IBin(op) => {
                        let b = pop!();
                        let a = pop!();
                        let v = match op {
                            0x60 => a.wrapping_add(b),
                            0x64 => a.wrapping_sub(b),
                            0x68 => a.wrapping_mul(b),
                            0x6c | 0x70 => {
                                if b == 0 {
                                    throw!("java/lang/ArithmeticException");
                                }
                                if op == 0x6c {
                                    a.wrapping_div(b)
                                } else {
                                    a.wrapping_rem(b)
                                }
                            }
                            0x78 => a.wrapping_shl(b as u32 & 31),
                            0x7a => a.wrapping_shr(b as u32 & 31),
                            0x7c => ((a as u32) >> (b as u32 & 31)) as i32,
                            0x7e => a & b,
                            0x80 => a | b,
                            _ => a ^ b,
                        };
                        self.stack.push(v);
                    }
                    Op::LBin(op) => {
                        let b = pop_long!();
                        let a = pop_long!();
                        let v = match op {
                            0x61 => a.wrapping_add(b),
                            0x65 => a.wrapping_sub(b),
                            0x69 => a.wrapping_mul(b),
                            0x6d | 0x71 => {
                                if b == 0 {
                                    throw!("java/lang/ArithmeticException");
                                }
                                if op == 0x6d {
                                    a.wrapping_div(b)
                                } else {
                                    a.wrapping_rem(b)
                                }
                            }
                            0x7f => a & b,
                            0x81 => a | b,
                            _ => a ^ b,
                        };
                        push_long!(v);
                    }
                    Op::LShift(op) => {
                        let s = pop!() as u32 & 63;
                        let a = pop_long!();
                        let v = match op {
                            0x79 => a.wrapping_shl(s),
                            0x7b => a.wrapping_shr(s),
                            _ => ((a as u64) >> s) as i64,
                        };
                        push_long!(v);
                    }
                    Op::INeg => {
                        let a = pop!();
                        self.stack.push(a.wrapping_neg());
                    }
                    Op::LNeg => {
                        let a = pop_long!();
                        push_long!(a.wrapping_neg());
                    }
                    Op::IInc(l, d) => {
                        let s = &mut self.stack[base + l as usize];
                        *s = s.wrapping_add(d);
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
                    Op::If(c, t) => {
                        let a = pop!();
                        if c.test(a, 0) {
                            pc = t as usize;
                            if self.cycles > limit {
                                return Err(self.limit_error(m, pc));
                            }
                        }
                    }
                    Op::IfCmp(c, t) => {
                        let b = pop!();
                        let a = pop!();
                        if c.test(a, b) {
                            pc = t as usize;
                            if self.cycles > limit {
                                return Err(self.limit_error(m, pc));
                            }
                        }
                    }
                    Op::Goto(t) => {
                        pc = t as usize;
                        if self.cycles > limit {
                            return Err(self.limit_error(m, pc));
                        }
                    }
                    Op::Switch(k) => {
                        let key = pop!();
                        let (low, targets, default, pairs) = &self.switches[k as usize];
                        pc = if targets.is_empty() {
                            pairs.iter().find(|(v, _)| *v == key).map_or(*default, |(_, t)| *t) as usize
                        } else {
                            let i = i64::from(key) - i64::from(*low);
                            if i >= 0 && (i as usize) < targets.len() {
                                targets[i as usize] as usize
                            } else {
                                *default as usize
                            }
                        };
                    }
                    Op::Return(op) => {
                        let n = match op {
                            0xb1 => 0,
                            0xad | 0xaf => 2,
                            _ => 1,
                        };
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
                            let c = u64::from(cmeth.return_cost[(op - 172) as usize][usize::from(hit)]);
                            self.cycles += c;
                            if let Some(t) = &mut self.trace {
                                t.cycles_by_method[m as usize] += c;
                            }
                        }
                        if self.frames.len() == base_depth {
                            return Ok(Exit::Returned);
                        }
                        continue 'frames;
                    }
                    Op::GetStatic(c, slot, wide) => {
                        if c == u32::MAX {
                            self.stack.push(self.system_out);
                        } else {
                            let s = &self.classes[c as usize].statics;
                            let (a, b) = (s[slot as usize], if wide { s[slot as usize + 1] } else { 0 });
                            self.stack.push(a);
                            if wide {
                                self.stack.push(b);
                            }
                        }
                    }
                    Op::PutStatic(c, slot, wide) => {
                        if wide {
                            let hi = pop!();
                            let lo = pop!();
                            let s = &mut self.classes[c as usize].statics;
                            s[slot as usize] = lo;
                            s[slot as usize + 1] = hi;
                        } else {
                            let v = pop!();
                            self.classes[c as usize].statics[slot as usize] = v;
                        }
                    }
                    Op::GetField(slot, wide) => {
                        let r = pop!();
                        let (a, b) = match self.obj(r) {
                            None => throw!("java/lang/NullPointerException"),
                            Some(Obj::Inst { fields, .. }) => match fields.get(slot as usize) {
                                Some(a) => (
                                    *a,
                                    if wide {
                                        fields.get(slot as usize + 1).copied().unwrap_or(0)
                                    } else {
                                        0
                                    },
                                ),
                                None => return Err(self.fault(m, pc, "field outside the object")),
                            },
                            Some(_) => return Err(self.fault(m, pc, "getfield on an array or string")),
                        };
                        self.stack.push(a);
                        if wide {
                            self.stack.push(b);
                        }
                    }
                    Op::PutField(slot, wide) => {
                        let (hi, v) = if wide {
                            let hi = pop!();
                            (hi, pop!())
                        } else {
                            (0, pop!())
                        };
                        let r = pop!();
                        match self.obj_mut(r) {
                            None => throw!("java/lang/NullPointerException"),
                            Some(Obj::Inst { fields, .. }) if (slot as usize + usize::from(wide)) < fields.len() => {
                                fields[slot as usize] = v;
                                if wide {
                                    fields[slot as usize + 1] = hi;
                                }
                            }
                            Some(_) => return Err(self.fault(m, pc, "putfield on something without that field")),
                        }
                    }
                    Op::Invoke(kind, t, args) => {
                        let len = self.stack.len();
                        if len < base + args as usize {
                            return Err(self.fault(m, pc, "operand stack underflow at invoke"));
                        }
                        let target = match kind {
                            InvokeKind::Static | InvokeKind::Special => {
                                if kind == InvokeKind::Special && self.stack[len - args as usize] == 0 {
                                    throw!("java/lang/NullPointerException");
                                }
                                t
                            }
                            InvokeKind::Virtual | InvokeKind::Interface => {
                                let recv = self.stack[len - args as usize];
                                let Some(rc) = self.class_of(recv) else {
                                    throw!("java/lang/NullPointerException")
                                };
                                match self.virtual_target(rc, t) {
                                    Some(x) => x,
                                    None => {
                                        let (n, d) = self.nd_list[t as usize].clone();
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
                        if let Some(intr) = self.methods[target as usize].intrinsic {
                            let at = pc as u32 - 1;
                            match library::call(self, intr, target, m, at)? {
                                library::Outcome::Done => {}
                                library::Outcome::Throw(name) => throw!(name),
                                library::Outcome::Exit(e) => return Ok(e),
                            }
                            continue;
                        }
                        if self.methods[target as usize].code.is_empty() {
                            return Err(EmuError::Unsupported {
                                at: self.at(m, pc as u32 - 1),
                                what: format!("{} has no code", self.method_name(target)),
                            });
                        }
                        let tm = &self.methods[target as usize];
                        let hit = self.cache.access(target, tm.words);
                        let c = u64::from(tm.invoke_cost[(ins.opcode - 182) as usize][usize::from(hit)]);
                        self.cycles += c;
                        if let Some(tr) = &mut self.trace {
                            tr.cycles_by_method[m as usize] += c;
                        }
                        self.push_frame(target)?;
                        if self.cycles > limit {
                            return Err(self.limit_error(target, 0));
                        }
                        continue 'frames;
                    }
                    Op::New(c) => {
                        if self.classes[c as usize].init == Init::No {
                            // Only classes outside the bundle's boot order get here.
                            self.classes[c as usize].init = Init::Done;
                        }
                        let slots = self.classes[c as usize].instance_slots as usize;
                        let r = self.alloc(Obj::Inst {
                            class: c,
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
                    Op::MultiNewArray(dims, leaf, long_leaf) => {
                        let mut counts = Vec::with_capacity(dims as usize);
                        for _ in 0..dims {
                            counts.push(pop!());
                        }
                        counts.reverse();
                        if counts.iter().any(|c| *c < 0) {
                            throw!("java/lang/NegativeArraySizeException");
                        }
                        let r = self.multi_array(&counts, leaf, long_leaf)?;
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
                        self.frames.last_mut().expect("frame").pc = pc as u32;
                        match self.throw(r, base_depth)? {
                            Some(exit) => return Ok(exit),
                            None => continue 'frames,
                        }
                    }
                    Op::CheckCast(c) | Op::InstanceOf(c) => {
                        let r = pop!();
                        let ok = r == 0
                            || match self.obj(r) {
                                Some(Obj::Arr { .. } | Obj::LongArr(_)) => {
                                    c == u32::MAX
                                        || self
                                            .classes
                                            .get(c as usize)
                                            .is_some_and(|k| k.name == "java/lang/Object")
                                }
                                _ => match self.class_of(r) {
                                    Some(rc) => (c as usize) < self.classes.len() && self.is_subclass(rc, c),
                                    None => false,
                                },
                            };
                        if let Op::CheckCast(_) = ins.op {
                            if !ok {
                                throw!("java/lang/ClassCastException");
                            }
                            self.stack.push(r);
                        } else {
                            self.stack.push(i32::from(ok && r != 0));
                        }
                    }
                    Op::Trap(k) => {
                        return Err(EmuError::Unsupported {
                            at: String::new(),
                            what: self.traps[k as usize].clone(),
                        }
                        .with_at_prefix());
                    }
                    Op::Nop => {}
                }
            }
        }
    }

    fn multi_array(&mut self, counts: &[i32], leaf: ArrKind, long_leaf: bool) -> Result<i32, EmuError> {
        if counts.len() == 1 {
            let n = counts[0] as usize;
            return if long_leaf {
                self.alloc(Obj::LongArr(vec![0; n]))
            } else {
                self.alloc(Obj::Arr {
                    kind: leaf,
                    data: vec![0; n],
                })
            };
        }
        let mut data = Vec::with_capacity(counts[0] as usize);
        for _ in 0..counts[0] {
            data.push(self.multi_array(&counts[1..], leaf, long_leaf)?);
        }
        self.alloc(Obj::Arr {
            kind: ArrKind::Ref,
            data,
        })
    }

    fn virtual_target(&mut self, class: ClassId, nd: u32) -> Option<MethodId> {
        if let Some(&t) = self.vcache.get(&(class, nd)) {
            return t;
        }
        let (n, d) = self.nd_list[nd as usize].clone();
        let t = self
            .find_method(class, &n, &d)
            .filter(|m| !self.methods[*m as usize].is_abstract);
        self.vcache.insert((class, nd), t);
        t
    }

    /// Unwinds to a handler of `ex`; `Some(exit)` when none catches it.
    fn throw(&mut self, ex: i32, base_depth: usize) -> Result<Option<Exit>, EmuError> {
        let ex_class = self.class_of(ex).unwrap_or(0);
        while let Some(f) = self.frames.last() {
            let m = f.method;
            let at = f.pc.saturating_sub(1);
            let handler = self.methods[m as usize]
                .handlers
                .iter()
                .find(|h| {
                    at >= h.start
                        && at < h.end
                        && h.catch.is_none_or(|c| c != u32::MAX && self.is_subclass(ex_class, c))
                })
                .map(|h| h.target);
            if let Some(t) = handler {
                let base = f.base as usize;
                let locals =
                    (self.methods[m as usize].max_locals as usize).max(self.methods[m as usize].arg_slots as usize);
                self.stack.truncate(base + locals);
                self.stack.push(ex);
                self.frames.last_mut().expect("frame").pc = t;
                return Ok(None);
            }
            // Leave the frame: the caller is reloaded into the cache, no return bytecode runs.
            let base = f.base as usize;
            self.stack.truncate(base);
            self.frames.pop();
            if let Some(t) = &mut self.trace {
                t.events.push((false, m));
            }
            if let Some(caller) = self.frames.last() {
                let cm = caller.method;
                self.cache.access(cm, self.methods[cm as usize].words);
            }
            if self.frames.len() <= base_depth {
                break;
            }
        }
        let name = self.classes[ex_class as usize].name.replace('/', ".");
        self.frames.truncate(base_depth);
        Ok(Some(Exit::Uncaught(name)))
    }

    fn fault(&self, m: MethodId, pc: usize, what: &str) -> EmuError {
        EmuError::Fault {
            at: self.at(m, pc as u32 - 1),
            what: what.to_string(),
        }
    }

    fn limit_error(&self, m: MethodId, pc: usize) -> EmuError {
        EmuError::CycleLimit {
            limit: self.cfg.cycle_limit,
            at: self.at(m, pc as u32),
        }
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

impl EmuError {
    fn with_at_prefix(self) -> EmuError {
        match self {
            EmuError::Unsupported { at, what } if at.is_empty() => {
                // The trap message already names the place: split it for the one-line form.
                match what.split_once(": ") {
                    Some((a, w)) => EmuError::Unsupported {
                        at: a.to_string(),
                        what: w.to_string(),
                    },
                    None => EmuError::Unsupported { at, what },
                }
            }
            e => e,
        }
    }
}

fn cond(k: u8) -> Cond {
    match k {
        0 => Cond::Eq,
        1 => Cond::Ne,
        2 => Cond::Lt,
        3 => Cond::Ge,
        4 => Cond::Gt,
        _ => Cond::Le,
    }
}

fn branch(ins: &Instruction) -> u32 {
    match ins.operands {
        Operands::Branch(t) => t,
        _ => 0,
    }
}

/// A model cost as whole cycles: the board counts cycles, so fractions are a configuration error.
fn integral(v: f64, what: &str) -> Result<u32, EmuError> {
    if v < 0.0 || v.fract() != 0.0 || v > f64::from(u32::MAX) {
        return Err(EmuError::Load(format!(
            "the board's timing gives {what} {v} cycles: costs must be whole non-negative numbers"
        )));
    }
    Ok(v as u32)
}
