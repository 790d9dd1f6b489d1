//! Linking: each method's decoded bytecode becomes [`Ins`]tructions with
//! resolved operands and fixed costs from the timing model. A reference the
//! board cannot resolve becomes a trap that fails only if it runs.

use super::{Catch, Handler, Ins, MethodId, Vm};
use crate::error::EmuError;
use crate::vm::ops::*;
use jopcal_classfile::class::pool_utf8;
use jopcal_classfile::opcode::{is_invoke, is_return, mnemonic};
use jopcal_classfile::{pool_member_ref, Constant, Instruction, Operands};
use std::collections::HashMap;
use std::rc::Rc;

/// Instruction index of each bytecode offset of one method.
type OffsetIndex = HashMap<u32, u32>;

impl Vm {
    /// Records `msg` as a trap and returns the operation that raises it.
    pub(super) fn trap(&mut self, msg: String) -> Op {
        self.traps.push(msg);
        Op::Trap {
            message: self.traps.len() as u32 - 1,
        }
    }

    /// Prices every opcode and every method's invokes and returns, then
    /// links every method with code.
    pub(super) fn link_all(&mut self) -> Result<(), EmuError> {
        let fixed = self.fixed_costs()?;
        self.call_costs()?;
        for m in 0..self.methods.len() as MethodId {
            if !self.methods[m as usize].raw.is_empty() {
                self.link_method(m, &fixed);
            }
        }
        Ok(())
    }

    /// Cycles of each opcode that costs the same wherever it runs (all but
    /// invokes and returns, which depend on the method cache).
    fn fixed_costs(&self) -> Result<[u32; 256], EmuError> {
        let model = &self.cfg.model;
        let mut fixed = [0u32; 256];
        let b_hit = model.load_cost(true, 0);
        for op in 0..=255u8 {
            if mnemonic(op).is_some() && !is_invoke(op) && !is_return(op) {
                fixed[op as usize] = integral(model.cost(op, b_hit, 0), &format!("opcode {op}"))?;
            }
        }
        Ok(fixed)
    }

    /// Each method's cost of being invoked, and of being returned to, on a
    /// cache miss and a hit: they depend on its length.
    fn call_costs(&mut self) -> Result<(), EmuError> {
        let model = self.cfg.model.clone();
        for meth in &mut self.methods {
            let words = meth.words;
            for hit in [false, true] {
                let b = model.load_cost(hit, words);
                for (k, op) in (182u8..=186).enumerate() {
                    meth.invoke_cost[k][usize::from(hit)] = integral(model.cost(op, b, words), "invoke cost")?;
                }
                for (k, op) in (172u8..=177).enumerate() {
                    meth.return_cost[k][usize::from(hit)] = integral(model.cost(op, b, words), "return cost")?;
                }
            }
        }
        Ok(())
    }

    /// Links method `m`'s decoded code and exception handlers.
    fn link_method(&mut self, m: MethodId, fixed: &[u32; 256]) {
        let raw = std::mem::take(&mut self.methods[m as usize].raw);
        let index: OffsetIndex = raw.iter().enumerate().map(|(i, ins)| (ins.pc, i as u32)).collect();
        let mut code = Vec::with_capacity(raw.len());
        let mut bci = Vec::with_capacity(raw.len());
        for ins in &raw {
            let op = self.link(m, ins, &index);
            let cost = if is_invoke(ins.opcode) || is_return(ins.opcode) {
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
        let handlers = self.link_handlers(m, &index, raw.len() as u32);
        let meth = &mut self.methods[m as usize];
        meth.code = Rc::from(code);
        meth.bci = bci;
        meth.handlers = handlers;
    }

    /// Method `m`'s exception table with instruction indices (`end` for an
    /// offset past the code).
    fn link_handlers(&self, m: MethodId, index: &OffsetIndex, end: u32) -> Vec<Handler> {
        let class = self.methods[m as usize].class as usize;
        let pool = &self.classes[class].pool;
        self.methods[m as usize]
            .raw_handlers
            .iter()
            .map(|&(s, e, h, t)| {
                let catch = if t == 0 {
                    Catch::Any
                } else {
                    let name = match pool.get(t as usize) {
                        Some(Constant::Class(n)) => pool_utf8(pool, *n),
                        _ => None,
                    };
                    // An unknown catch type catches nothing the board can throw.
                    name.and_then(|n| self.class_id(n)).map_or(Catch::Nothing, Catch::Class)
                };
                Handler {
                    start: index.get(&u32::from(s)).copied().unwrap_or(end),
                    end: index.get(&u32::from(e)).copied().unwrap_or(end),
                    target: index.get(&u32::from(h)).copied().unwrap_or(0),
                    catch,
                }
            })
            .collect()
    }

    /// Links one instruction; locals outside the frame (a malformed class
    /// file) become a trap.
    fn link(&mut self, m: MethodId, ins: &Instruction, index: &OffsetIndex) -> Op {
        let op = self.link_op(m, ins, index);
        let meth = &self.methods[m as usize];
        let frame = meth.max_locals.max(meth.arg_slots) as u32;
        let (slot, width) = match op {
            Op::Load { local } | Op::Store { local } | Op::IInc { local, .. } => (u32::from(local), 1),
            Op::LLoad { local } | Op::LStore { local } => (u32::from(local), 2),
            _ => return op,
        };
        if slot + width > frame {
            let at = self.at_bci(m, ins.pc);
            return self.trap(format!(
                "{at}: local variable {slot} is outside the frame of {frame} slots"
            ));
        }
        op
    }

    /// A trap for a bytecode the board does not execute.
    fn unsupported(&mut self, m: MethodId, ins: &Instruction, why: &str) -> Op {
        let name = mnemonic(ins.opcode).unwrap_or("?");
        let at = self.at_bci(m, ins.pc);
        self.trap(format!(
            "{at}: bytecode {name} is not supported by the virtual board ({why})"
        ))
    }

    /// The opcode dispatch of linking: one [`Op`] per JVM bytecode.
    fn link_op(&mut self, m: MethodId, ins: &Instruction, index: &OffsetIndex) -> Op {
        const NO_FLOAT: &str = "no floating point";
        let target = |t: u32| index.get(&t).copied().unwrap_or(u32::MAX);
        let branch = || match ins.operands {
            Operands::Branch(t) => target(t),
            _ => target(0),
        };
        let local = match ins.operands {
            Operands::Local(l) => l,
            _ => 0,
        };
        let op = ins.opcode;
        match op {
            0x00 => Op::Nop,
            0x01 => Op::IConst(0),
            0x02..=0x08 => Op::IConst(i32::from(op) - 3),
            0x09 | 0x0a => Op::LConst(i64::from(op) - 9),
            0x10 | 0x11 => match ins.operands {
                Operands::Const(v) => Op::IConst(v),
                _ => Op::IConst(0),
            },
            0x12..=0x14 => self.link_ldc(m, ins),
            0x15 | 0x19 => Op::Load { local },
            0x16 => Op::LLoad { local },
            0x1a..=0x1d => Op::Load {
                local: u16::from(op - 0x1a),
            },
            0x1e..=0x21 => Op::LLoad {
                local: u16::from(op - 0x1e),
            },
            0x2a..=0x2d => Op::Load {
                local: u16::from(op - 0x2a),
            },
            0x2e | 0x32..=0x35 => Op::ArrLoad,
            0x2f => Op::LArrLoad,
            0x36 | 0x3a => Op::Store { local },
            0x37 => Op::LStore { local },
            0x3b..=0x3e => Op::Store {
                local: u16::from(op - 0x3b),
            },
            0x3f..=0x42 => Op::LStore {
                local: u16::from(op - 0x3f),
            },
            0x4b..=0x4e => Op::Store {
                local: u16::from(op - 0x4b),
            },
            0x4f => Op::ArrStore(ArrKind::Int),
            0x50 => Op::LArrStore,
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
            0x74 => Op::INeg,
            0x75 => Op::LNeg,
            0x84 => match ins.operands {
                Operands::Iinc { index, delta } => Op::IInc {
                    local: index,
                    delta: i32::from(delta),
                },
                _ => Op::Nop,
            },
            0x85 => Op::I2L,
            0x88 => Op::L2I,
            0x91 => Op::I2B,
            0x92 => Op::I2C,
            0x93 => Op::I2S,
            0x94 => Op::LCmp,
            0x99..=0x9e => Op::If {
                cond: Cond::of_offset(op - 0x99),
                target: branch(),
            },
            0x9f..=0xa4 => Op::IfCmp {
                cond: Cond::of_offset(op - 0x9f),
                target: branch(),
            },
            0xa5 | 0xa6 => Op::IfCmp {
                cond: if op == 0xa5 { Cond::Eq } else { Cond::Ne },
                target: branch(),
            },
            0xa7 | 0xc8 => Op::Goto { target: branch() },
            0xa8 | 0xa9 | 0xc9 => self.unsupported(m, ins, "jsr/ret (class files before Java 6)"),
            0xaa | 0xab => self.link_switch(ins, target),
            0xac..=0xb1 => Op::Return(ReturnKind::of_opcode(op)),
            0xb2..=0xb5 => self.link_field(m, ins),
            0xb6..=0xb9 => self.link_invoke(m, ins),
            0xba => self.unsupported(m, ins, "invokedynamic: compile with --release 8 or older"),
            0xbb => match self.pool_class(m, ins).and_then(|name| self.class_id(&name)) {
                Some(class) => Op::New { class },
                None => {
                    let name = self.pool_class(m, ins).unwrap_or_default();
                    let at = self.at_bci(m, ins.pc);
                    self.trap(format!("{at}: class {name} is not supported by the virtual board"))
                }
            },
            0xbc => match ins.operands {
                Operands::NewArray(11) => Op::NewLongArray,
                Operands::NewArray(t) => match ArrKind::of_newarray_type(t) {
                    Some(kind) => Op::NewArray(kind),
                    None => self.unsupported(m, ins, NO_FLOAT),
                },
                _ => self.unsupported(m, ins, NO_FLOAT),
            },
            0xbd => Op::NewArray(ArrKind::Ref),
            0xbe => Op::ArrayLength,
            0xbf => Op::AThrow,
            0xc0 | 0xc1 => {
                let name = self.pool_class(m, ins).unwrap_or_default();
                let cast = if name.starts_with('[') {
                    CastTarget::AnyArray
                } else {
                    self.class_id(&name).map_or(CastTarget::Unknown, CastTarget::Class)
                };
                if op == 0xc0 {
                    Op::CheckCast(cast)
                } else {
                    Op::InstanceOf(cast)
                }
            }
            0xc2 => Op::MonitorEnter,
            0xc3 => Op::MonitorExit,
            0xc5 => self.link_multianewarray(m, ins),
            0xc6 => Op::If {
                cond: Cond::Eq,
                target: branch(),
            },
            0xc7 => Op::If {
                cond: Cond::Ne,
                target: branch(),
            },
            _ => {
                if let Some(op) = IntOp::of_opcode(op) {
                    Op::IBin(op)
                } else if let Some(op) = LongOp::of_opcode(op) {
                    Op::LBin(op)
                } else if let Some(op) = ShiftOp::of_opcode(op) {
                    Op::LShift(op)
                } else if is_float_op(op) {
                    self.unsupported(m, ins, NO_FLOAT)
                } else {
                    self.unsupported(m, ins, "not a JVM bytecode")
                }
            }
        }
    }

    /// The constant-pool index an instruction names (0 if none).
    fn cp_index(ins: &Instruction) -> u16 {
        match ins.operands {
            Operands::Cp(c) | Operands::InvokeInterface { cp: c, .. } | Operands::MultiANewArray { cp: c, .. } => c,
            _ => 0,
        }
    }

    /// The class name a `new`, `checkcast`, `instanceof` or `multianewarray` names.
    fn pool_class(&self, m: MethodId, ins: &Instruction) -> Option<String> {
        let pool = &self.classes[self.methods[m as usize].class as usize].pool;
        match pool.get(Self::cp_index(ins) as usize) {
            Some(Constant::Class(n)) => pool_utf8(pool, *n).map(str::to_string),
            _ => None,
        }
    }

    /// (class, name, descriptor) of the field or method an instruction names.
    fn pool_member(&self, m: MethodId, ins: &Instruction) -> Option<(String, String, String)> {
        let pool = &self.classes[self.methods[m as usize].class as usize].pool;
        pool_member_ref(pool, Self::cp_index(ins)).map(|(a, b, c)| (a.to_string(), b.to_string(), c.to_string()))
    }

    /// `ldc`, `ldc_w`, `ldc2_w`: ints and longs as constants, strings and
    /// classes as their (interned) objects.
    fn link_ldc(&mut self, m: MethodId, ins: &Instruction) -> Op {
        let class = self.methods[m as usize].class as usize;
        let pool = &self.classes[class].pool;
        let object = match pool.get(Self::cp_index(ins) as usize).cloned() {
            Some(Constant::Integer(v)) => return Op::IConst(v),
            Some(Constant::Long(v)) => return Op::LConst(v),
            Some(Constant::String(s)) => {
                let text = pool_utf8(pool, s).unwrap_or("").to_string();
                self.intern(&text)
            }
            Some(Constant::Class(n)) => {
                let name = pool_utf8(pool, n).unwrap_or("").to_string();
                self.class_object(&name)
            }
            _ => return self.unsupported(m, ins, "float and double constants are not supported"),
        };
        match object {
            Ok(r) => Op::IConst(r),
            Err(e) => self.trap(e.to_string()),
        }
    }

    /// `tableswitch` and `lookupswitch`, their targets as instruction indices.
    fn link_switch(&mut self, ins: &Instruction, target: impl Fn(u32) -> u32) -> Op {
        let table = match &ins.operands {
            Operands::TableSwitch {
                default, low, targets, ..
            } => SwitchTable::Dense {
                low: *low,
                targets: targets.iter().map(|t| target(*t)).collect(),
                default: target(*default),
            },
            Operands::LookupSwitch { default, pairs } => SwitchTable::Sparse {
                pairs: pairs.iter().map(|(k, t)| (*k, target(*t))).collect(),
                default: target(*default),
            },
            _ => SwitchTable::Sparse {
                pairs: Vec::new(),
                default: 0,
            },
        };
        self.switches.push(table);
        Op::Switch {
            table: self.switches.len() as u32 - 1,
        }
    }

    /// `getstatic`, `putstatic`, `getfield`, `putfield`: the field's slot.
    fn link_field(&mut self, m: MethodId, ins: &Instruction) -> Op {
        let op = ins.opcode;
        let at = self.at_bci(m, ins.pc);
        let Some((cname, name, desc)) = self.pool_member(m, ins) else {
            return self.trap(format!("{at}: bad field reference"));
        };
        if name == "out" && cname == "java/lang/System" {
            return if op == 0xb2 {
                Op::GetSystemOut
            } else {
                self.unsupported(m, ins, "System.out cannot be assigned")
            };
        }
        let Some(cid) = self.class_id(&cname) else {
            return self.trap(format!("{at}: field {cname}.{name} of a class the board does not have"));
        };
        let Some((owner, field)) = self.find_field(cid, &name, &desc) else {
            return self.trap(format!("{at}: no field {cname}.{name} {desc}"));
        };
        let stat = StaticSlot {
            class: owner,
            field: field.at,
        };
        match (op, field.is_static) {
            (0xb2, true) => Op::GetStatic(stat),
            (0xb3, true) => Op::PutStatic(stat),
            (0xb4, false) => Op::GetField(field.at),
            (0xb5, false) => Op::PutField(field.at),
            _ => self.trap(format!("{at}: static/instance mismatch for field {cname}.{name}")),
        }
    }

    /// The four invokes: static and special calls resolved to their method,
    /// virtual and interface calls to a selector the receiver's class picks by.
    fn link_invoke(&mut self, m: MethodId, ins: &Instruction) -> Op {
        let op = ins.opcode;
        let at = self.at_bci(m, ins.pc);
        let Some((cname, name, desc)) = self.pool_member(m, ins) else {
            return self.trap(format!("{at}: bad method reference"));
        };
        let shown = cname.replace('/', ".");
        let (args, _) = slots_of(&desc);
        let Some(cid) = self.class_id(&cname) else {
            return self.trap(format!(
                "{at}: library method {shown}.{name}{desc} is not supported by the virtual board"
            ));
        };
        let Some(resolved) = self.find_method(cid, &name, &desc) else {
            return self.trap(format!(
                "{at}: method {shown}.{name}{desc} is not supported by the virtual board"
            ));
        };
        let (callee, arg_slots) = match op {
            0xb6 => (Callee::Virtual(self.nd(&name, &desc)), args + 1),
            0xb9 => (Callee::Interface(self.nd(&name, &desc)), args + 1),
            0xb8 => (Callee::Static(resolved), args),
            _ => (Callee::Special(resolved), args + 1),
        };
        Op::Invoke { callee, arg_slots }
    }

    /// `multianewarray`: the dimensions it makes and what the innermost arrays hold.
    fn link_multianewarray(&mut self, m: MethodId, ins: &Instruction) -> Op {
        let Operands::MultiANewArray { dims, .. } = ins.operands else {
            return Op::MultiNewArray {
                dims: 1,
                leaf: ArrayLeaf::Ints(ArrKind::Int),
            };
        };
        let name = self.pool_class(m, ins).unwrap_or_default();
        let elem = name.trim_start_matches('[');
        let depth = name.len() - elem.len();
        let leaf = if depth > dims as usize {
            ArrayLeaf::Ints(ArrKind::Ref)
        } else {
            match elem.as_bytes().first() {
                Some(b'I') => ArrayLeaf::Ints(ArrKind::Int),
                Some(b'B') => ArrayLeaf::Ints(ArrKind::Byte),
                Some(b'Z') => ArrayLeaf::Ints(ArrKind::Bool),
                Some(b'C') => ArrayLeaf::Ints(ArrKind::Char),
                Some(b'S') => ArrayLeaf::Ints(ArrKind::Short),
                Some(b'L') => ArrayLeaf::Ints(ArrKind::Ref),
                Some(b'J') => ArrayLeaf::Longs,
                _ => return self.unsupported(m, ins, "no floating point"),
            }
        };
        Op::MultiNewArray { dims, leaf }
    }
}

/// The bytecodes that load, store, convert or compute floats and doubles.
fn is_float_op(op: u8) -> bool {
    matches!(
        op,
        0x0b..=0x0f
            | 0x17
            | 0x18
            | 0x22..=0x29
            | 0x30
            | 0x31
            | 0x38
            | 0x39
            | 0x43..=0x4a
            | 0x51
            | 0x52
            | 0x62
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
            | 0x95..=0x98
    )
}

/// The argument slots of method descriptor `desc` (without the receiver)
/// and the opcode of the return its result needs.
pub(super) fn slots_of(desc: &str) -> (u16, u8) {
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

/// A model cost as whole cycles: the board counts cycles, so fractions are a configuration error.
pub(crate) fn integral(v: f64, what: &str) -> Result<u32, EmuError> {
    if v < 0.0 || v.fract() != 0.0 || v > f64::from(u32::MAX) {
        return Err(EmuError::Load(format!(
            "the board's timing gives {what} {v} cycles: costs must be whole non-negative numbers"
        )));
    }
    Ok(v as u32)
}
