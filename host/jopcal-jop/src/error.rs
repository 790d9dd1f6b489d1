//! The errors of reading what JOP's toolchain wrote: a link map line that
//! does not parse (with line and column). It lives beside the parser.

pub use crate::linkmap::LinkMapError;
