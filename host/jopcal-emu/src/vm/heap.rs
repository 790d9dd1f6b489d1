//! The board's heap: objects, arrays and interned strings, addressed by
//! references that are 1-based indices (0 is `null`).

use super::{ClassId, Vm};
use crate::error::EmuError;
use crate::vm::ops::{ArrKind, ArrayLeaf};
use std::rc::Rc;

/// What a reference refers to.
#[derive(Debug)]
pub enum Obj {
    Inst { class: ClassId, fields: Box<[i32]> },
    Arr { kind: ArrKind, data: Vec<i32> },
    LongArr(Vec<i64>),
    Str(Rc<[u16]>),
}

impl Vm {
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

    pub(super) fn obj_mut(&mut self, r: i32) -> Option<&mut Obj> {
        if r <= 0 {
            return None;
        }
        self.heap.get_mut(r as usize - 1)
    }

    pub(super) fn class_of(&self, r: i32) -> Option<ClassId> {
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

    /// Makes a new exception object of library class `name` (e.g. `java/lang/ArithmeticException`).
    pub(super) fn new_exception(&mut self, name: &str) -> Result<i32, EmuError> {
        let class = self.class_id(name).expect("library exception class");
        let slots = self.classes[class as usize].instance_slots as usize;
        self.alloc(Obj::Inst {
            class,
            fields: vec![0; slots].into_boxed_slice(),
        })
    }

    /// A `multianewarray` of `counts` (outermost first, none negative).
    pub(super) fn multi_array(&mut self, counts: &[i32], leaf: ArrayLeaf) -> Result<i32, EmuError> {
        if counts.len() == 1 {
            let n = counts[0] as usize;
            return match leaf {
                ArrayLeaf::Longs => self.alloc(Obj::LongArr(vec![0; n])),
                ArrayLeaf::Ints(kind) => self.alloc(Obj::Arr { kind, data: vec![0; n] }),
            };
        }
        let mut data = Vec::with_capacity(counts[0] as usize);
        for _ in 0..counts[0] {
            data.push(self.multi_array(&counts[1..], leaf)?);
        }
        self.alloc(Obj::Arr {
            kind: ArrKind::Ref,
            data,
        })
    }
}
