//! Working with what the user's JOP toolchain produced: the linker's map
//! (`<name>.jop.link.txt`, [`linkmap`]), the method sizes JOP's image holds
//! ([`sizes`]: each method's length in words from its method-table entry, so
//! the estimator can use the sizes JOP's method cache sees instead of the host
//! class files'), and the comparison of a host profile with the image ([`compare`]:
//! which executed methods the image does not have, the library differences that
//! are the main error source of cross-profiling). The tree itself (its
//! harnesses, `jopcal.toml`) is `jopcal-tree`'s. [`microcode`] derives a timing
//! table from the tree's microcode source.
#![forbid(unsafe_code)]

pub mod compare;
pub mod error;
pub mod linkmap;
pub mod microcode;
pub mod sizes;
pub mod uncaught;
