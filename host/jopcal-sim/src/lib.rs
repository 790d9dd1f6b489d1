//! The Verilator test bench (`hdl-sim/`) from the host's side: reading a top
//! module's ports from Verilator's XML output and checking them against the
//! DUT contract (`hdl-sim/CONTRACT.md`), building the bench with
//! `verilator --cc --exe --build`, and starting it so that its UART's
//! pseudo-terminal can be driven like a board; and (`jop`) converting a JOP
//! tree's VHDL into a top that honours the contract.

pub mod build;
pub mod error;
pub mod jop;
pub mod ports;

pub use build::{build, make_fifo, release_fifo, start, stop_on_interrupt, BuiltBench, RunningBench};
pub use error::{BenchError, ContractError};
pub use ports::{check_contract, parse_ports, Contract, MemoryStyle, Port, TraceTaps, UartStyle};
