//! The linked operations the interpreter dispatches on, and the pure
//! semantics of the arithmetic ones. Linking turns every bytecode into one
//! [`Op`] whose operands are already resolved (slots, classes, methods), so
//! executing one never looks anything up by name.

use super::{ClassId, MethodId};

/// The element type of an `int`-sized array (longs live in their own arrays).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ArrKind {
    Bool,
    Byte,
    Char,
    Short,
    Int,
    Ref,
}

impl ArrKind {
    /// The value an `xastore` of this kind stores: narrowed as the JVM narrows it.
    pub fn narrow(self, v: i32) -> i32 {
        match self {
            ArrKind::Byte | ArrKind::Bool => i32::from(v as i8),
            ArrKind::Char => i32::from(v as u16),
            ArrKind::Short => i32::from(v as i16),
            ArrKind::Int | ArrKind::Ref => v,
        }
    }

    /// The kind of `newarray`'s type operand (`T_BOOLEAN` = 4 ... `T_INT` = 10);
    /// `None` for floating point and for `T_LONG`, which has its own operation.
    pub fn of_newarray_type(t: u8) -> Option<ArrKind> {
        match t {
            4 => Some(ArrKind::Bool),
            5 => Some(ArrKind::Char),
            8 => Some(ArrKind::Byte),
            9 => Some(ArrKind::Short),
            10 => Some(ArrKind::Int),
            _ => None,
        }
    }
}

/// What the innermost arrays of a `multianewarray` hold.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ArrayLeaf {
    Ints(ArrKind),
    Longs,
}

/// The comparison of a conditional branch.
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
    pub fn test(self, a: i32, b: i32) -> bool {
        match self {
            Cond::Eq => a == b,
            Cond::Ne => a != b,
            Cond::Lt => a < b,
            Cond::Ge => a >= b,
            Cond::Gt => a > b,
            Cond::Le => a <= b,
        }
    }

    /// The condition of `ifeq`..`ifle` (0..=5 from `ifeq`) and of `if_icmpeq`..`if_icmple`.
    pub fn of_offset(k: u8) -> Cond {
        match k {
            0 => Cond::Eq,
            1 => Cond::Ne,
            2 => Cond::Lt,
            3 => Cond::Ge,
            4 => Cond::Gt,
            _ => Cond::Le,
        }
    }
}

/// A binary `int` operation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IntOp {
    Add,
    Sub,
    Mul,
    Div,
    Rem,
    Shl,
    Shr,
    Ushr,
    And,
    Or,
    Xor,
}

/// A binary `long` operation on two longs (shifts take an int: [`ShiftOp`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LongOp {
    Add,
    Sub,
    Mul,
    Div,
    Rem,
    And,
    Or,
    Xor,
}

/// A `long` shift by an `int` distance.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ShiftOp {
    Shl,
    Shr,
    Ushr,
}

/// Division by zero: the caller throws `ArithmeticException`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DivideByZero;

impl IntOp {
    /// The operation of opcode `op` (`iadd` ... `ixor`), if it is one.
    pub fn of_opcode(op: u8) -> Option<IntOp> {
        Some(match op {
            0x60 => IntOp::Add,
            0x64 => IntOp::Sub,
            0x68 => IntOp::Mul,
            0x6c => IntOp::Div,
            0x70 => IntOp::Rem,
            0x78 => IntOp::Shl,
            0x7a => IntOp::Shr,
            0x7c => IntOp::Ushr,
            0x7e => IntOp::And,
            0x80 => IntOp::Or,
            0x82 => IntOp::Xor,
            _ => return None,
        })
    }

    /// `a op b` with the JVM's wrapping and shift-distance masking.
    pub fn apply(self, a: i32, b: i32) -> Result<i32, DivideByZero> {
        Ok(match self {
            IntOp::Add => a.wrapping_add(b),
            IntOp::Sub => a.wrapping_sub(b),
            IntOp::Mul => a.wrapping_mul(b),
            IntOp::Div if b == 0 => return Err(DivideByZero),
            IntOp::Div => a.wrapping_div(b),
            IntOp::Rem if b == 0 => return Err(DivideByZero),
            IntOp::Rem => a.wrapping_rem(b),
            IntOp::Shl => a.wrapping_shl(b as u32 & 31),
            IntOp::Shr => a.wrapping_shr(b as u32 & 31),
            IntOp::Ushr => ((a as u32) >> (b as u32 & 31)) as i32,
            IntOp::And => a & b,
            IntOp::Or => a | b,
            IntOp::Xor => a ^ b,
        })
    }
}

impl LongOp {
    /// The operation of opcode `op` (`ladd` ... `lxor`, shifts excluded), if it is one.
    pub fn of_opcode(op: u8) -> Option<LongOp> {
        Some(match op {
            0x61 => LongOp::Add,
            0x65 => LongOp::Sub,
            0x69 => LongOp::Mul,
            0x6d => LongOp::Div,
            0x71 => LongOp::Rem,
            0x7f => LongOp::And,
            0x81 => LongOp::Or,
            0x83 => LongOp::Xor,
            _ => return None,
        })
    }

    pub fn apply(self, a: i64, b: i64) -> Result<i64, DivideByZero> {
        Ok(match self {
            LongOp::Add => a.wrapping_add(b),
            LongOp::Sub => a.wrapping_sub(b),
            LongOp::Mul => a.wrapping_mul(b),
            LongOp::Div if b == 0 => return Err(DivideByZero),
            LongOp::Div => a.wrapping_div(b),
            LongOp::Rem if b == 0 => return Err(DivideByZero),
            LongOp::Rem => a.wrapping_rem(b),
            LongOp::And => a & b,
            LongOp::Or => a | b,
            LongOp::Xor => a ^ b,
        })
    }
}

impl ShiftOp {
    pub fn of_opcode(op: u8) -> Option<ShiftOp> {
        Some(match op {
            0x79 => ShiftOp::Shl,
            0x7b => ShiftOp::Shr,
            0x7d => ShiftOp::Ushr,
            _ => return None,
        })
    }

    /// `a` shifted by the low six bits of `distance`.
    pub fn apply(self, a: i64, distance: i32) -> i64 {
        let s = distance as u32 & 63;
        match self {
            ShiftOp::Shl => a.wrapping_shl(s),
            ShiftOp::Shr => a.wrapping_shr(s),
            ShiftOp::Ushr => ((a as u64) >> s) as i64,
        }
    }
}

/// What a return bytecode hands back to the caller.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReturnKind {
    /// `return`
    Void,
    /// `ireturn`, `freturn`, `areturn`
    Single,
    /// `lreturn`, `dreturn`
    Double,
}

impl ReturnKind {
    /// The kind of return opcode `op` (172..=177).
    pub fn of_opcode(op: u8) -> ReturnKind {
        match op {
            0xb1 => ReturnKind::Void,
            0xad | 0xaf => ReturnKind::Double,
            _ => ReturnKind::Single,
        }
    }

    /// Stack slots the value takes.
    pub fn slots(self) -> usize {
        match self {
            ReturnKind::Void => 0,
            ReturnKind::Single => 1,
            ReturnKind::Double => 2,
        }
    }
}

/// A field as linked: where its value lives and whether it takes two slots.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FieldSlot {
    pub slot: u32,
    pub wide: bool,
}

/// A static field as linked: its class's static area and the slot in it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StaticSlot {
    pub class: ClassId,
    pub field: FieldSlot,
}

/// Index of a (name, descriptor) pair: what virtual and interface calls
/// select a method by in the receiver's class.
pub type Selector = u32;

/// Whom an invoke calls.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Callee {
    /// `invokestatic`: a known method.
    Static(MethodId),
    /// `invokespecial`: a known method, with a receiver that must not be null.
    Special(MethodId),
    /// `invokevirtual`: chosen by the receiver's class.
    Virtual(Selector),
    /// `invokeinterface`: chosen by the receiver's class.
    Interface(Selector),
}

/// The class a `checkcast` or `instanceof` tests against.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CastTarget {
    Class(ClassId),
    /// An array type: only being an array is checked.
    AnyArray,
    /// A class the board does not have: no object is one.
    Unknown,
}

/// A linked instruction.
#[derive(Debug, Clone, Copy)]
pub enum Op {
    Nop,
    IConst(i32),
    LConst(i64),
    Load {
        local: u16,
    },
    LLoad {
        local: u16,
    },
    Store {
        local: u16,
    },
    LStore {
        local: u16,
    },
    ArrLoad,
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
    IBin(IntOp),
    LBin(LongOp),
    LShift(ShiftOp),
    INeg,
    LNeg,
    IInc {
        local: u16,
        delta: i32,
    },
    I2L,
    L2I,
    I2B,
    I2C,
    I2S,
    LCmp,
    If {
        cond: Cond,
        target: u32,
    },
    IfCmp {
        cond: Cond,
        target: u32,
    },
    Goto {
        target: u32,
    },
    /// `tableswitch` and `lookupswitch`: index into the VM's switch tables.
    Switch {
        table: u32,
    },
    Return(ReturnKind),
    /// `getstatic System.out`: the board's one print stream.
    GetSystemOut,
    GetStatic(StaticSlot),
    PutStatic(StaticSlot),
    GetField(FieldSlot),
    PutField(FieldSlot),
    Invoke {
        callee: Callee,
        arg_slots: u16,
    },
    New {
        class: ClassId,
    },
    NewArray(ArrKind),
    NewLongArray,
    MultiNewArray {
        dims: u8,
        leaf: ArrayLeaf,
    },
    ArrayLength,
    AThrow,
    CheckCast(CastTarget),
    InstanceOf(CastTarget),
    MonitorEnter,
    MonitorExit,
    /// Executing this is an error (unsupported bytecode, unresolvable
    /// reference): index into the VM's trap messages.
    Trap {
        message: u32,
    },
}

/// A `tableswitch` (`Dense`) or `lookupswitch` (`Sparse`) with its targets as instruction indices.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SwitchTable {
    Dense { low: i32, targets: Vec<u32>, default: u32 },
    Sparse { pairs: Vec<(i32, u32)>, default: u32 },
}

impl SwitchTable {
    /// The instruction index `key` jumps to.
    pub fn target(&self, key: i32) -> u32 {
        match self {
            SwitchTable::Dense { low, targets, default } => {
                let i = i64::from(key) - i64::from(*low);
                usize::try_from(i)
                    .ok()
                    .and_then(|i| targets.get(i))
                    .copied()
                    .unwrap_or(*default)
            }
            SwitchTable::Sparse { pairs, default } => {
                pairs.iter().find(|(v, _)| *v == key).map_or(*default, |(_, t)| *t)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn every_int_opcode_maps_to_its_operation_and_no_other_does() {
        let ops: Vec<u8> = (0..=255u8).filter(|op| IntOp::of_opcode(*op).is_some()).collect();
        assert_eq!(ops, [0x60, 0x64, 0x68, 0x6c, 0x70, 0x78, 0x7a, 0x7c, 0x7e, 0x80, 0x82]);
        let longs: Vec<u8> = (0..=255u8).filter(|op| LongOp::of_opcode(*op).is_some()).collect();
        assert_eq!(longs, [0x61, 0x65, 0x69, 0x6d, 0x71, 0x7f, 0x81, 0x83]);
        let shifts: Vec<u8> = (0..=255u8).filter(|op| ShiftOp::of_opcode(*op).is_some()).collect();
        assert_eq!(shifts, [0x79, 0x7b, 0x7d]);
    }

    #[test]
    fn int_operations_wrap_and_mask_as_the_jvm_does() {
        assert_eq!(IntOp::Add.apply(i32::MAX, 1), Ok(i32::MIN));
        assert_eq!(IntOp::Div.apply(i32::MIN, -1), Ok(i32::MIN));
        assert_eq!(IntOp::Rem.apply(i32::MIN, -1), Ok(0));
        assert_eq!(IntOp::Rem.apply(-7, 2), Ok(-1));
        assert_eq!(IntOp::Div.apply(1, 0), Err(DivideByZero));
        assert_eq!(IntOp::Rem.apply(1, 0), Err(DivideByZero));
        assert_eq!(IntOp::Shl.apply(1, 33), Ok(2));
        assert_eq!(IntOp::Shr.apply(-8, 1), Ok(-4));
        assert_eq!(IntOp::Ushr.apply(-8, 28), Ok(15));
        assert_eq!(IntOp::Xor.apply(0b1100, 0b1010), Ok(0b0110));
        assert_eq!(LongOp::Div.apply(i64::MIN, -1), Ok(i64::MIN));
        assert_eq!(LongOp::Rem.apply(5, 0), Err(DivideByZero));
        assert_eq!(ShiftOp::Shl.apply(1, 65), 2);
        assert_eq!(ShiftOp::Ushr.apply(-1, 60), 15);
    }

    #[test]
    fn narrowing_follows_the_array_kind() {
        assert_eq!(ArrKind::Byte.narrow(0x1ff), -1);
        assert_eq!(ArrKind::Bool.narrow(0x100), 0);
        assert_eq!(ArrKind::Char.narrow(-1), 0xffff);
        assert_eq!(ArrKind::Short.narrow(0x18000), -0x8000);
        assert_eq!(ArrKind::Int.narrow(-5), -5);
    }

    #[test]
    fn returns_hand_back_their_slots() {
        let slots: Vec<usize> = (0xac..=0xb1).map(|op| ReturnKind::of_opcode(op).slots()).collect();
        assert_eq!(slots, [1, 2, 1, 2, 1, 0]);
    }

    proptest! {
        #[test]
        fn switches_pick_the_matching_target_or_the_default(key in any::<i32>(), low in -5i32..5, n in 0usize..8) {
            let dense = SwitchTable::Dense { low, targets: (0..n as u32).map(|t| t + 100).collect(), default: 7 };
            let expected = if i64::from(key) >= i64::from(low) && i64::from(key) < i64::from(low) + n as i64 {
                (i64::from(key) - i64::from(low)) as u32 + 100
            } else {
                7
            };
            prop_assert_eq!(dense.target(key), expected);
            let sparse = SwitchTable::Sparse { pairs: vec![(low, 1), (low + 10, 2)], default: 3 };
            let want = if key == low { 1 } else if key == low + 10 { 2 } else { 3 };
            prop_assert_eq!(sparse.target(key), want);
        }

        #[test]
        fn conditions_agree_with_rust_comparisons(a in any::<i32>(), b in any::<i32>()) {
            let expect = [a == b, a != b, a < b, a >= b, a > b, a <= b];
            for (k, want) in expect.iter().enumerate() {
                prop_assert_eq!(Cond::of_offset(k as u8).test(a, b), *want);
            }
        }
    }
}
