//! The class-file crate's errors, one place to find them: a class file that
//! does not parse (with the byte) and a code array that does not decode (with
//! the bytecode index). Each lives beside the parser it describes.

pub use crate::class::ClassFileError;
pub use crate::decode::DecodeError;
