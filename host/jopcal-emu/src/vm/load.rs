//! Loading a bundle: classes, their field layouts and methods, the board's
//! library first; then linking (in `link`) and running static initialisers
//! and `main`.

use super::library::{self, Intrinsic};
use super::link::{integral, slots_of};
use super::ops::FieldSlot;
use super::{Class, ClassId, Exit, Field, Init, Method, MethodId, Vm};
use crate::config::BoardConfig;
use crate::error::EmuError;
use crate::vm::heap::Obj;
use crate::vm::ops::ArrKind;
use jopcal_classfile::{decode, parse_class, ClassFile, Constant};
use jopcal_timing::cache::{words_of, MethodCache};
use std::collections::HashMap;
use std::rc::Rc;

/// Whether a field of type `desc` takes two slots.
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
    pub(super) fn layout(
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
        let at = FieldSlot { slot, wide };
        c.fields
            .insert((name.to_string(), desc.to_string()), Field { is_static, at });
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
        self.call(main)
    }

    pub(super) fn initialize(&mut self, c: ClassId) -> Result<Option<Exit>, EmuError> {
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
            match self.call(m)? {
                Exit::Returned => {}
                other => return Ok(Some(other)),
            }
        }
        self.classes[c as usize].init = Init::Done;
        Ok(None)
    }
}
