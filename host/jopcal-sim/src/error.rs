//! Why the DUT does not fit the bench contract, or the bench could not be built or started.

use std::path::PathBuf;

/// Why a top module's ports could not be read or do not meet `hdl-sim/CONTRACT.md`.
#[derive(Debug, thiserror::Error)]
pub enum ContractError {
    /// Verilator's XML output marks no module as the top one.
    #[error("Verilator's XML names no top module")]
    NoTopModule,
    /// The top module lacks a port the contract requires.
    #[error(
        "top module {top} lacks port `{port}` ({} {}; see hdl-sim/CONTRACT.md)",
        direction(*.input),
        width_text(*.width)
    )]
    MissingPort {
        /// The top module.
        top: String,
        /// The port's name.
        port: String,
        /// Whether the port must be an input.
        input: bool,
        /// The width it must have (`None`: any).
        width: Option<u32>,
    },
    /// A port points the wrong way.
    #[error("port `{port}` of {top} must be an {}", direction(*.input))]
    WrongDirection {
        /// The top module.
        top: String,
        /// The port's name.
        port: String,
        /// Whether the port must be an input.
        input: bool,
    },
    /// A port has the wrong width.
    #[error("port `{port}` of {top} must be {expected} bit(s) wide, not {actual}")]
    WrongWidth {
        /// The top module.
        top: String,
        /// The port's name.
        port: String,
        /// The width the contract requires.
        expected: u32,
        /// The port's width.
        actual: u32,
    },
    /// The address is wider than the bench's memory can be (32 bits for `mem_addr`, 28 for `sram_addr`).
    #[error("the memory address of {top} is {width} bits wide; at most 32 (mem_addr) or 28 (sram_addr)")]
    AddressTooWide {
        /// The top module.
        top: String,
        /// `mem_addr`'s width.
        width: u32,
    },
    /// Both memory styles at once.
    #[error("top module {top} has both mem_* and sram_* ports; the contract allows one memory style")]
    TwoMemories {
        /// The top module.
        top: String,
    },
}

fn direction(input: bool) -> &'static str {
    if input {
        "input"
    } else {
        "output"
    }
}

fn width_text(width: Option<u32>) -> String {
    width.map_or("of any width".to_string(), |w| {
        format!("{w} bit{}", if w == 1 { "" } else { "s" })
    })
}

/// Why the bench could not be built or started.
#[derive(Debug, thiserror::Error)]
pub enum BenchError {
    /// Verilator is not installed (or does not run).
    #[error("verilator not found: install it with `apt-get install verilator g++ make` (or run scripts/setup)")]
    VerilatorNotFound,
    /// An RTL file does not exist.
    #[error("{}: no such RTL file", .0.display())]
    NoRtlFile(PathBuf),
    /// `bench.cpp` is missing from the bench directory.
    #[error("{}: the bench source is missing", .0.display())]
    NoBenchSource(PathBuf),
    /// A file or directory could not be read or written.
    #[error("{}: {source}", .path.display())]
    Io {
        /// The file or directory.
        path: PathBuf,
        /// What the system said.
        #[source]
        source: std::io::Error,
    },
    /// Verilator could not be run.
    #[error("cannot run verilator: {0}")]
    CannotRunVerilator(#[source] std::io::Error),
    /// Verilator rejects the RTL (its last `%Error` line).
    #[error("verilator rejects the RTL: {0}")]
    RtlRejected(String),
    /// The DUT's ports do not meet the contract.
    #[error(transparent)]
    Contract(#[from] ContractError),
    /// Verilating and compiling the bench failed (Verilator's last `%Error` line).
    #[error("building the bench failed: {0}")]
    BuildFailed(String),
    /// Verilator succeeded but produced no executable.
    #[error("verilator reported success but {} is missing", .0.display())]
    MissingBinary(PathBuf),
    /// The bench executable could not be started.
    #[error("cannot start {}: {source}", .binary.display())]
    CannotStart {
        /// The bench executable.
        binary: PathBuf,
        /// What the system said.
        #[source]
        source: std::io::Error,
    },
    /// The bench did not print its pseudo-terminal's path in time.
    #[error("the bench did not open its pseudo-terminal: {0}")]
    NoPseudoTerminal(String),
}
