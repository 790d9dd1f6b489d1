//! The virtual board's configuration: a timing model in the format of
//! `calibration/jop-wcet.toml` (usually `calibration/emu-board.toml`, which
//! derives from it with its own parameters) plus the board parameters it
//! carries as model parameters: `method_cache_bytes`, `method_cache_blocks`
//! and `clock_mhz`.

use crate::error::ConfigError;
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
        })
    }
}
