//! The virtual JOP board: the default target when there is no board and no RTL.
//!
//! Owns: the class bundle the tool downloads into it ([`bundle`]), the
//! board's configuration ([`config`]), the interpreter that executes the
//! bundle's class files with JOP timing — per-bytecode costs from a timing
//! model, an exact method-cache simulation, a cycle counter at `IO_CNT`
//! ([`vm`]) — its small runtime library ([`library`]), and the board program
//! that plugs the interpreter into jopcal-link's board side, so the virtual
//! board is driven over a pseudo-terminal exactly like a real one ([`board`]),
//! and its errors ([`error`]), and per-method traces in one format for every
//! target that sees methods ([`trace`]). With a JOP tree it runs the tree's linked
//! `.jop` images instead, JOP's own runtime and all ([`image`]).
#![forbid(unsafe_code)]

pub mod board;
pub mod bundle;
pub mod config;
pub mod error;
pub mod image;
pub mod trace;
pub mod vm;

pub use board::{run_bundle, run_jop_image, EmuProgram, RunReport};
pub use bundle::Bundle;
pub use config::BoardConfig;
/// Cycles of one character's frame on the UART of a processor whose 16x
/// clock ticks every `tick` cycles (`BoardConfig`'s `uart_tick`).
pub fn uart_frame_cycles(tick: u64) -> u64 {
    image::machine::uart::frame_cycles(tick)
}
pub use error::{BundleError, ConfigError, EmuError};
pub use vm::{library, Exit, Vm};
