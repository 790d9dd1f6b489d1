//! Working with the user's JOP tree's output: the linker's map
//! (`<name>.jop.link.txt`, [`linkmap`]), the method sizes JOP's image holds
//! ([`sizes`]: each method's length in words from its method-table entry, so
//! the estimator can use the sizes JOP's method cache sees instead of the host
//! class files'), and the comparison of a host profile with the image ([`compare`]:
//! which executed methods the image does not have, the library differences that
//! are the main error source of cross-profiling). It also reads the tree itself:
//! its fixed-count benchmark harnesses ([`tree`], [`harness`]) and jopcal's
//! project file ([`config`]).
#![forbid(unsafe_code)]

pub mod compare;
pub mod config;
pub mod harness;
pub mod linkmap;
pub mod sizes;
pub mod tree;
