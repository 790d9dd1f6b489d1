//! Class files, read the way the timing model needs them.
//!
//! Owns parsing of `.class` files with `nom` ([`parse_class`]): the constant
//! pool, fields, methods and their `Code` attributes; decoding of every
//! bytecode form ([`decode`]), including `wide`, the padding of
//! `tableswitch`/`lookupswitch` and the operands of `invokeinterface` and
//! `invokedynamic`; the opcode table with JVM-specification mnemonics
//! ([`opcode`]); and basic-block analysis in two variants ([`blocks`]).
//! Any byte sequence is either parsed or rejected with the byte offset of
//! the problem: it never panics.
#![forbid(unsafe_code)]

pub mod blocks;
pub mod class;
pub mod decode;
pub mod error;
mod num;
pub mod opcode;

pub use blocks::{basic_blocks, BasicBlock, BlockMode};
pub use class::{
    parse_class, parse_constant_pool, pool_class_name, pool_member_ref, ClassFile, ClassFileError, Code, Constant,
    Method,
};
pub use decode::{decode, DecodeError, Instruction, Operands};
pub use opcode::{mnemonic, Opcode};
