//! What the host JVM runs when it profiles a JOP tree's programs, in place
//! of what it would run on its own, so that the profile counts the
//! bytecodes JOP runs:
//!
//! - [`library`]: the tree's versions of the JDK classes `host_library`
//!   names (`Random`, `Math`, `System`), patched into `java.base`;
//! - [`routines`]: the bytecodes JOP runs as Java routines (`idiv`, `lmul`,
//!   the software float, long shifts) routed through the tree's routines on
//!   their real operands;
//! - [`shadow`]: the tree's whole class library (`String`, `StringBuffer`,
//!   `Vector`, ...) under names of its own beside the JDK's.
//!
//! Each is built from the tree's sources with jopcal's own Java tools (run
//! with Debian's ASM, [`java`]) into a cache directory named by the hash of
//! its inputs, built once ([`jopcal_output::cached`]). The pipeline's
//! profile stage decides which apply and passes their class paths and JVM
//! options to the profiled JVM; the profile's reader
//! (`jopcal_profile::routed`) reads the result as the tree's classes.
#![forbid(unsafe_code)]

pub mod java;
pub mod library;
pub mod routines;
pub mod shadow;
