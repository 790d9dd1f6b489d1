//! The virtual board's configuration: a timing model in the format of
//! `calibration/jop-wcet.toml` (usually `calibration/emu-board.toml`, which
//! derives from it with its own parameters) plus the board parameters it
//! carries as model parameters: `method_cache_bytes`, `method_cache_blocks`
//! and `clock_mhz`.

use crate::error::ConfigError;
use jopcal_jop::microcode::exec::EntryId;
use jopcal_jop::microcode::stackram::RamScript;
use jopcal_jop::microcode::PathKey;
use jopcal_timing::cache::CacheConfig;
use jopcal_timing::TimingModel;
use std::path::Path;

/// Everything that decides the board's timing.
#[derive(Debug, Clone)]
pub struct BoardConfig {
    pub model: TimingModel,
    pub cache: CacheConfig,
    /// Clock of the cycle counter, for the microsecond counter.
    pub clock_mhz: f64,
    /// A run that reaches this many cycles is stopped (an infinite loop).
    pub cycle_limit: u64,
    /// A JOP tree's images run on this processor: the board counts what the
    /// processor's RTL counts. `None`: it times as the tree's JopSim does.
    pub processor: Option<std::sync::Arc<Processor>>,
}

/// The processor of a JOP top as its RTL is (`jopcal_sim::jop::describe`
/// reads it from the tree's VHDL): what makes the virtual board count the
/// processor's cycles where the tree's JopSim does not.
#[derive(Debug, Clone)]
pub struct Processor {
    /// The on-chip stack's words, and the stack pointer at which the
    /// processor raises its stack-overflow exception, in the board's terms
    /// (the processor's pointer plus the words it keeps in registers).
    pub stack_words: usize,
    pub overflow_at: i32,
    /// The board's stack pointer when the processor starts: the on-chip
    /// memory's address of the top of the stack (the microcode's
    /// `stack_init` plus the two words the processor keeps in registers),
    /// so that every stack address a program sees is the processor's.
    pub initial_sp: i32,
    /// The stack's words when the processor starts (the microcode
    /// assembler's image: its variables, constants and version).
    pub stack_init: Vec<i32>,
    /// Words of the external SRAM (its word addresses wrap at this).
    pub memory_words: i32,
    /// Words of the scratchpad memory; 0: none (reads give 0, writes vanish).
    pub scratchpad_words: i32,
    /// Cycles of one tick of the UART's 16x clock (`clk16_cnt + 1`) and the
    /// depth of its transmit FIFO.
    pub uart_tick: u64,
    pub uart_tx_depth: usize,
    /// Clock cycles per tick of the microsecond counter (`clk_freq / 10^6`).
    pub us_divider: u64,
    /// The cycle counter's value when the first bytecode is fetched (the
    /// microcode's start-up before it).
    pub start_cycle: u64,
    /// Cycles from the fetch of `Native.rd` (`Native.wr`) to the cycle in
    /// which the I/O device sees the read (the write).
    pub io_read_at: u64,
    pub io_write_at: u64,
    /// The costs the timing table cannot hold: bytecodes whose cycles
    /// depend on their data, and accesses that reach the I/O devices.
    pub microcode: MicrocodeCosts,
}

/// What the virtual board takes from the tree's microcode itself.
#[derive(Debug, Clone)]
pub struct MicrocodeCosts {
    pub exec: jopcal_jop::microcode::exec::Exec,
    /// The microcode entry of each opcode whose path depends on its operands.
    pub by_data: Vec<Option<EntryId>>,
    /// The microcode's lock counter (`monitorexit` branches on it).
    pub lock_count: Option<jopcal_jop::microcode::exec::VarId>,
    /// Cycles of an opcode when its data access reaches an I/O device.
    pub io: Vec<Option<u32>>,
    /// Opcodes the virtual board would run itself (as JopSim does) that
    /// the processor's microcode sends to their Java routine (`sys_noim`).
    pub in_java: Vec<bool>,
    /// The values the stack pointer takes while each opcode runs (see
    /// `jopcal_jop::microcode::SpRange`), for the overflow check.
    pub sp: Vec<Option<jopcal_jop::microcode::SpRange>>,
    /// What each opcode's microcode writes into the stack memory, per path.
    pub ram: Vec<RamScripts>,
}

/// An opcode's writes into the stack memory above the stack (see
/// `jopcal_jop::microcode::stackram`), for each path its microcode can take.
#[derive(Debug, Clone, Default)]
pub struct RamScripts {
    pub paths: Vec<(PathKey, RamScript)>,
    /// With more than one path: the microcode entry to run on the operands
    /// to learn which.
    pub entry: Option<EntryId>,
    /// The words every path pushes in all (negative: pops), or `None` when
    /// they differ or a path writes the stack pointer.
    pub net: Option<i32>,
}

impl RamScripts {
    pub fn new(paths: Vec<(PathKey, RamScript)>, entry: Option<EntryId>) -> RamScripts {
        let net = paths.first().and_then(|(_, s)| s.net);
        let net = net.filter(|n| paths.iter().all(|(_, s)| s.net == Some(*n)));
        let entry = if paths.len() > 1 { entry } else { None };
        RamScripts { paths, entry, net }
    }

    /// Whether the opcode leaves the memory above the stack alone: it writes
    /// nothing there and no word leaves the stack.
    #[inline(always)]
    pub fn is_quiet(&self) -> bool {
        self.net.is_some_and(|n| n >= 0) && self.paths.iter().all(|(_, s)| s.writes.is_empty())
    }

    /// The path the bytecode took: `known`, else what `find` says, else the first.
    pub fn path(&self, known: Option<PathKey>, find: impl FnOnce() -> Option<PathKey>) -> &RamScript {
        static NONE: RamScript = RamScript {
            writes: Vec::new(),
            net: Some(0),
        };
        match self.paths.len() {
            0 => &NONE,
            1 => &self.paths[0].1,
            _ => {
                let key = known.or_else(find);
                key.and_then(|k| self.paths.iter().find(|(pk, _)| *pk == k))
                    .map_or(&self.paths[0].1, |(_, s)| s)
            }
        }
    }
}

/// The default cycle limit: 2^40 cycles (3 hours of a 100 MHz board).
pub const DEFAULT_CYCLE_LIMIT: u64 = 1 << 40;

impl BoardConfig {
    pub fn load(path: &Path, overrides: &[String]) -> Result<BoardConfig, ConfigError> {
        let mut model = TimingModel::load(path)?;
        model.apply_overrides(overrides)?;
        Self::from_model(model)
    }

    pub fn from_model(model: TimingModel) -> Result<BoardConfig, ConfigError> {
        let p = model.params();
        let need = |name: &'static str| -> Result<f64, ConfigError> {
            p.get(name).copied().ok_or_else(|| ConfigError::MissingParameter {
                model: model.path.clone(),
                name,
            })
        };
        let cache = CacheConfig {
            bytes: need("method_cache_bytes")? as u32,
            blocks: need("method_cache_blocks")? as u32,
        };
        cache.validate().map_err(|why| ConfigError::Cache {
            model: model.path.clone(),
            why,
        })?;
        let clock_mhz = need("clock_mhz")?;
        Ok(BoardConfig {
            model,
            cache,
            clock_mhz,
            cycle_limit: DEFAULT_CYCLE_LIMIT,
            processor: None,
        })
    }
}
