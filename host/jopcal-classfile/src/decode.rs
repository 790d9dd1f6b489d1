//! Decoding a method's code array into instructions, every form included:
//! `wide` prefixes, `tableswitch`/`lookupswitch` with their 0-3 padding bytes
//! (aligned to the start of the code array), and the operand bytes of
//! `invokeinterface` and `invokedynamic`.

use crate::num::{i16_, i32_, u16_, u8_};
use crate::opcode::{layout, mnemonic, Layout, Opcode};
use nom::number::complete::{be_i16, be_i32, be_i8, be_u16, be_u8};
use nom::Parser;

/// One decoded instruction.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Instruction {
    /// Byte index of the opcode (of the `wide` prefix for wide forms).
    pub pc: u32,
    pub opcode: Opcode,
    /// True for the `wide` form; `opcode` is then the modified opcode.
    pub wide: bool,
    /// Length in bytes, prefix, padding and operands included.
    pub len: u32,
    pub operands: Operands,
}

/// Decoded operands; branch targets are absolute byte indices.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Operands {
    None,
    Local(u16),
    Const(i32),
    Cp(u16),
    Branch(u32),
    Iinc {
        index: u16,
        delta: i16,
    },
    NewArray(u8),
    MultiANewArray {
        cp: u16,
        dims: u8,
    },
    InvokeInterface {
        cp: u16,
        count: u8,
    },
    InvokeDynamic {
        cp: u16,
    },
    TableSwitch {
        default: u32,
        low: i32,
        high: i32,
        targets: Vec<u32>,
    },
    LookupSwitch {
        default: u32,
        pairs: Vec<(i32, u32)>,
    },
}

impl Instruction {
    /// The mnemonic of this exact form (`iload_0`, `aload`, `ldc_w`, ...).
    pub fn mnemonic(&self) -> &'static str {
        mnemonic(self.opcode).unwrap_or("?")
    }

    /// Every branch target of this instruction (switch defaults included).
    pub fn targets(&self) -> Vec<u32> {
        match &self.operands {
            Operands::Branch(t) => vec![*t],
            Operands::TableSwitch { default, targets, .. } => {
                std::iter::once(*default).chain(targets.iter().copied()).collect()
            }
            Operands::LookupSwitch { default, pairs } => {
                std::iter::once(*default).chain(pairs.iter().map(|p| p.1)).collect()
            }
            _ => vec![],
        }
    }
}

/// A code array that does not decode; `pc` is the offending instruction's index.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("bytecode index {pc}: {message}")]
pub struct DecodeError {
    pub pc: u32,
    pub message: String,
}

/// Decodes a whole code array.
pub fn decode(code: &[u8]) -> Result<Vec<Instruction>, DecodeError> {
    let mut out = Vec::new();
    let mut pc = 0usize;
    while pc < code.len() {
        let ins = decode_one(code, pc)?;
        pc += ins.len as usize;
        out.push(ins);
    }
    Ok(out)
}

/// Decodes the instruction at byte index `pc`.
pub fn decode_one(code: &[u8], pc: usize) -> Result<Instruction, DecodeError> {
    let fail = |message: String| DecodeError { pc: pc as u32, message };
    let truncated = |_| fail("truncated instruction".into());
    let target = |offset: i64| -> Result<u32, DecodeError> {
        let t = pc as i64 + offset;
        if t < 0 || t >= code.len() as i64 {
            Err(fail(format!(
                "branch target {t} outside the code (length {})",
                code.len()
            )))
        } else {
            Ok(t as u32)
        }
    };
    let op = code[pc];
    let rest = &code[pc + 1..];
    let (after, wide, opcode, operands) = match layout(op) {
        Layout::None => (rest, false, op, Operands::None),
        Layout::Local => {
            let (r, v) = u8_(rest).map_err(truncated)?;
            (r, false, op, Operands::Local(u16::from(v)))
        }
        Layout::Byte => {
            let (r, v) = be_i8::<_, nom::error::Error<&[u8]>>.parse(rest).map_err(truncated)?;
            (r, false, op, Operands::Const(i32::from(v)))
        }
        Layout::Short => {
            let (r, v) = i16_(rest).map_err(truncated)?;
            (r, false, op, Operands::Const(i32::from(v)))
        }
        Layout::Cp1 => {
            let (r, v) = u8_(rest).map_err(truncated)?;
            (r, false, op, Operands::Cp(u16::from(v)))
        }
        Layout::Cp2 => {
            let (r, v) = u16_(rest).map_err(truncated)?;
            (r, false, op, Operands::Cp(v))
        }
        Layout::Branch2 => {
            let (r, v) = i16_(rest).map_err(truncated)?;
            (r, false, op, Operands::Branch(target(i64::from(v))?))
        }
        Layout::Branch4 => {
            let (r, v) = i32_(rest).map_err(truncated)?;
            (r, false, op, Operands::Branch(target(i64::from(v))?))
        }
        Layout::Iinc => {
            let (r, (index, delta)) = (be_u8, be_i8).parse(rest).map_err(truncated)?;
            (
                r,
                false,
                op,
                Operands::Iinc {
                    index: u16::from(index),
                    delta: i16::from(delta),
                },
            )
        }
        Layout::NewArray => {
            let (r, t) = u8_(rest).map_err(truncated)?;
            if !(4..=11).contains(&t) {
                return Err(fail(format!("newarray with invalid array type {t}")));
            }
            (r, false, op, Operands::NewArray(t))
        }
        Layout::MultiANewArray => {
            let (r, (cp, dims)) = (be_u16, be_u8).parse(rest).map_err(truncated)?;
            if dims == 0 {
                return Err(fail("multianewarray with zero dimensions".into()));
            }
            (r, false, op, Operands::MultiANewArray { cp, dims })
        }
        Layout::InvokeInterface => {
            let (r, (cp, count, _zero)) = (be_u16, be_u8, be_u8).parse(rest).map_err(truncated)?;
            (r, false, op, Operands::InvokeInterface { cp, count })
        }
        Layout::InvokeDynamic => {
            let (r, (cp, _zero)) = (be_u16, be_u16).parse(rest).map_err(truncated)?;
            (r, false, op, Operands::InvokeDynamic { cp })
        }
        Layout::TableSwitch | Layout::LookupSwitch => {
            // Padding aligns the first operand to a multiple of 4 from the code start.
            let pad = (4 - (pc + 1) % 4) % 4;
            if rest.len() < pad {
                return Err(fail("truncated switch padding".into()));
            }
            let r = &rest[pad..];
            let (r, default) = i32_(r).map_err(truncated)?;
            let default = target(i64::from(default))?;
            if layout(op) == Layout::TableSwitch {
                let (r, (low, high)) = (be_i32, be_i32).parse(r).map_err(truncated)?;
                if high < low {
                    return Err(fail(format!("tableswitch with high {high} below low {low}")));
                }
                let n = (i64::from(high) - i64::from(low) + 1) as usize;
                if n > r.len() / 4 {
                    return Err(fail(format!("tableswitch with {n} entries runs past the code")));
                }
                let mut targets = Vec::with_capacity(n);
                let mut r = r;
                for _ in 0..n {
                    let (r2, off) = i32_(r).map_err(truncated)?;
                    targets.push(target(i64::from(off))?);
                    r = r2;
                }
                (
                    r,
                    false,
                    op,
                    Operands::TableSwitch {
                        default,
                        low,
                        high,
                        targets,
                    },
                )
            } else {
                let (r, npairs) = i32_(r).map_err(truncated)?;
                if npairs < 0 || npairs as usize > r.len() / 8 {
                    return Err(fail(format!("lookupswitch with {npairs} pairs does not fit the code")));
                }
                let mut pairs = Vec::with_capacity(npairs as usize);
                let mut r = r;
                for _ in 0..npairs {
                    let (r2, (key, off)) = (be_i32, be_i32).parse(r).map_err(truncated)?;
                    if pairs.last().is_some_and(|(k, _)| *k >= key) {
                        return Err(fail("lookupswitch keys are not sorted".into()));
                    }
                    pairs.push((key, target(i64::from(off))?));
                    r = r2;
                }
                (r, false, op, Operands::LookupSwitch { default, pairs })
            }
        }
        Layout::Wide => {
            let (r, modified) = u8_(rest).map_err(truncated)?;
            match layout(modified) {
                Layout::Local => {
                    let (r, v) = u16_(r).map_err(truncated)?;
                    (r, true, modified, Operands::Local(v))
                }
                Layout::Iinc => {
                    let (r, (index, delta)) = (be_u16, be_i16).parse(r).map_err(truncated)?;
                    (r, true, modified, Operands::Iinc { index, delta })
                }
                _ => {
                    return Err(fail(format!(
                        "wide cannot modify {}",
                        mnemonic(modified).map_or_else(|| format!("opcode {modified}"), str::to_string)
                    )))
                }
            }
        }
        Layout::Invalid => return Err(fail(format!("invalid opcode {op} (0x{op:02x})"))),
    };
    let len = (code.len() - pc - after.len()) as u32;
    Ok(Instruction {
        pc: pc as u32,
        opcode,
        wide,
        len,
        operands,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn decodes_every_special_form() {
        // 0: iload_0, 1: wide iinc 300 -2, 7: tableswitch at pc 7 (pad 0), then returns
        let mut code = vec![0x1a, 0xc4, 0x84, 0x01, 0x2c, 0xff, 0xfe];
        code.push(0xaa); // pc 7; operands start at 8: no padding
        code.extend_from_slice(&20i32.to_be_bytes()); // default -> 27
        code.extend_from_slice(&1i32.to_be_bytes());
        code.extend_from_slice(&2i32.to_be_bytes());
        code.extend_from_slice(&20i32.to_be_bytes());
        code.extend_from_slice(&21i32.to_be_bytes()); // -> 28
        code.push(0xb1); // 28? no: 7+1+20 = 28 bytes so far, this is pc 28
        let ins = decode(&code).unwrap();
        assert_eq!(ins[0].mnemonic(), "iload_0");
        assert_eq!(ins[1].operands, Operands::Iinc { index: 300, delta: -2 });
        assert!(ins[1].wide);
        assert_eq!(ins[1].len, 6);
        assert_eq!(
            ins[2].operands,
            Operands::TableSwitch {
                default: 27,
                low: 1,
                high: 2,
                targets: vec![27, 28]
            }
        );
        assert_eq!(ins[2].len, 21);
        assert_eq!(ins[3].pc, 28);
    }

    #[test]
    fn lookupswitch_padding_depends_on_position() {
        // nop at 0, lookupswitch at 1: padding 2 bytes, operands from 4.
        let mut code = vec![0x00, 0xab, 0, 0];
        code.extend_from_slice(&19i32.to_be_bytes()); // default -> 20
        code.extend_from_slice(&1i32.to_be_bytes());
        code.extend_from_slice(&5i32.to_be_bytes());
        code.extend_from_slice(&19i32.to_be_bytes());
        code.push(0xb1); // pc 20
        let ins = decode(&code).unwrap();
        assert_eq!(ins[1].len, 19);
        assert_eq!(
            ins[1].operands,
            Operands::LookupSwitch {
                default: 20,
                pairs: vec![(5, 20)]
            }
        );
    }

    #[test]
    fn invokeinterface_and_invokedynamic_operands() {
        let ins = decode(&[0xb9, 0x00, 0x07, 0x02, 0x00, 0xba, 0x00, 0x09, 0x00, 0x00]).unwrap();
        assert_eq!(ins[0].operands, Operands::InvokeInterface { cp: 7, count: 2 });
        assert_eq!(ins[0].len, 5);
        assert_eq!(ins[1].operands, Operands::InvokeDynamic { cp: 9 });
    }

    #[test]
    fn errors_name_the_bytecode_index() {
        assert_eq!(
            decode(&[0x00, 0xca]).unwrap_err().to_string(),
            "bytecode index 1: invalid opcode 202 (0xca)"
        );
        assert_eq!(
            decode(&[0x00, 0x11, 0x01]).unwrap_err().to_string(),
            "bytecode index 1: truncated instruction"
        );
        assert_eq!(
            decode(&[0xa7, 0x00, 0x10]).unwrap_err().to_string(),
            "bytecode index 0: branch target 16 outside the code (length 3)"
        );
        assert_eq!(
            decode(&[0xc4, 0x60]).unwrap_err().to_string(),
            "bytecode index 0: wide cannot modify iadd"
        );
    }

    proptest! {
        #[test]
        fn arbitrary_bytes_never_panic(code in proptest::collection::vec(any::<u8>(), 0..300)) {
            if let Ok(ins) = decode(&code) {
                let total: u32 = ins.iter().map(|i| i.len).sum();
                prop_assert_eq!(total as usize, code.len());
                for w in ins.windows(2) {
                    prop_assert_eq!(w[0].pc + w[0].len, w[1].pc);
                }
            }
        }
    }
}
