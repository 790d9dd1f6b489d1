//! Big-endian number readers shared by the class-file and code parsers:
//! nom's parsers with the error type fixed, so call sites stay short.

use nom::number::complete::{be_i16, be_i32, be_u16, be_u32, be_u8};
use nom::{IResult, Parser};

pub(crate) type R<'a, T> = IResult<&'a [u8], T>;

pub(crate) fn u8_(i: &[u8]) -> R<'_, u8> {
    be_u8.parse(i)
}
pub(crate) fn u16_(i: &[u8]) -> R<'_, u16> {
    be_u16.parse(i)
}
pub(crate) fn u32_(i: &[u8]) -> R<'_, u32> {
    be_u32.parse(i)
}
pub(crate) fn i16_(i: &[u8]) -> R<'_, i16> {
    be_i16.parse(i)
}
pub(crate) fn i32_(i: &[u8]) -> R<'_, i32> {
    be_i32.parse(i)
}
