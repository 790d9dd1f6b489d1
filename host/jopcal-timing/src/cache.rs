//! JOP's method cache, simulated exactly: whole methods in a fixed number of
//! equal blocks over a fixed size; a method occupies as many consecutive
//! blocks as its length needs; a miss loads it at the FIFO pointer (wrapping
//! around), evicting every method it overlaps, and advances the pointer. Only
//! invokes and returns access the cache: an invoke needs the callee, a return
//! the caller it returns to.

use crate::error::{CacheConfigError, CacheModeError};
use std::fmt;

/// Size and block count of a method cache.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CacheConfig {
    pub bytes: u32,
    pub blocks: u32,
}

/// How an estimate treats the method cache.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CacheMode {
    /// Every access hits (the JP2 paper's optimistic regime).
    Hit,
    /// Every access misses (the pessimistic regime).
    Miss,
    /// Simulate this cache.
    Fifo(CacheConfig),
}

impl fmt::Display for CacheMode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CacheMode::Hit => f.write_str("hit"),
            CacheMode::Miss => f.write_str("miss"),
            CacheMode::Fifo(c) => write!(f, "fifo:{}:{}", c.bytes, c.blocks),
        }
    }
}

impl std::str::FromStr for CacheMode {
    type Err = CacheModeError;

    /// `hit`, `miss` or `fifo:<bytes>:<blocks>`.
    fn from_str(s: &str) -> Result<CacheMode, CacheModeError> {
        match s {
            "hit" => return Ok(CacheMode::Hit),
            "miss" => return Ok(CacheMode::Miss),
            _ => {}
        }
        let bad = || CacheModeError::Syntax(s.to_string());
        let rest = s.strip_prefix("fifo:").ok_or_else(bad)?;
        let (bytes, blocks) = rest.split_once(':').ok_or_else(bad)?;
        let cfg = CacheConfig {
            bytes: bytes.parse().map_err(|_| bad())?,
            blocks: blocks.parse().map_err(|_| bad())?,
        };
        cfg.validate().map_err(|why| CacheModeError::Geometry {
            mode: s.to_string(),
            why,
        })?;
        Ok(CacheMode::Fifo(cfg))
    }
}

impl CacheConfig {
    /// Checks that the blocks divide the cache into whole words.
    pub fn validate(&self) -> Result<(), CacheConfigError> {
        if self.blocks == 0 || self.bytes == 0 {
            return Err(CacheConfigError::Empty);
        }
        if !self.bytes.is_multiple_of(4 * self.blocks) {
            return Err(CacheConfigError::Uneven {
                bytes: self.bytes,
                blocks: self.blocks,
            });
        }
        Ok(())
    }

    /// Words per block.
    pub fn block_words(&self) -> u32 {
        self.bytes / 4 / self.blocks
    }

    /// Blocks a method of `words` words occupies (at least one, at most all).
    pub fn blocks_for(&self, words: u32) -> u32 {
        words.div_ceil(self.block_words()).clamp(1, self.blocks)
    }
}

/// Method length in 32-bit words from its bytecode length in bytes.
pub fn words_of(bytecode_len: u32) -> u32 {
    bytecode_len.div_ceil(4)
}

/// The cache state. Methods are identified by dense ids (`0..`).
#[derive(Debug, Clone)]
pub struct MethodCache {
    cfg: CacheConfig,
    /// Per block: the method whose copy covers it, if any.
    owner: Vec<Option<u32>>,
    /// Per method id: `(first block, block count)` while resident.
    resident: Vec<Option<(u32, u32)>>,
    next: u32,
    pub hits: u64,
    pub misses: u64,
}

impl MethodCache {
    pub fn new(cfg: CacheConfig) -> MethodCache {
        MethodCache {
            cfg,
            owner: vec![None; cfg.blocks as usize],
            resident: Vec::new(),
            next: 0,
            hits: 0,
            misses: 0,
        }
    }

    pub fn config(&self) -> CacheConfig {
        self.cfg
    }

    /// Accesses method `id` of `words` words; returns true on a hit. On a miss
    /// the method is loaded and everything it overlaps is evicted.
    pub fn access(&mut self, id: u32, words: u32) -> bool {
        let idx = id as usize;
        if idx >= self.resident.len() {
            self.resident.resize(idx + 1, None);
        }
        if self.resident[idx].is_some() {
            self.hits += 1;
            return true;
        }
        self.misses += 1;
        let k = self.cfg.blocks_for(words);
        let n = self.cfg.blocks;
        for i in 0..k {
            let blk = ((self.next + i) % n) as usize;
            if let Some(victim) = self.owner[blk] {
                if let Some((start, len)) = self.resident[victim as usize].take() {
                    for j in 0..len {
                        self.owner[((start + j) % n) as usize] = None;
                    }
                }
            }
        }
        for i in 0..k {
            self.owner[((self.next + i) % n) as usize] = Some(id);
        }
        self.resident[idx] = Some((self.next, k));
        self.next = (self.next + k) % n;
        false
    }

    /// True when method `id` is in the cache (no state change).
    pub fn contains(&self, id: u32) -> bool {
        self.resident.get(id as usize).is_some_and(Option::is_some)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// A deliberately different model: a load-ordered list of block ranges.
    struct Reference {
        cfg: CacheConfig,
        loaded: Vec<(u32, u32, u32)>, // (id, start, len)
        next: u32,
    }

    impl Reference {
        fn access(&mut self, id: u32, words: u32) -> bool {
            if self.loaded.iter().any(|e| e.0 == id) {
                return true;
            }
            let n = self.cfg.blocks;
            let k = self.cfg.blocks_for(words);
            let new: Vec<u32> = (0..k).map(|i| (self.next + i) % n).collect();
            self.loaded
                .retain(|&(_, s, l)| (0..l).all(|j| !new.contains(&((s + j) % n))));
            self.loaded.push((id, self.next, k));
            self.next = (self.next + k) % n;
            false
        }
    }

    #[test]
    fn fifo_order_and_wraparound() {
        let cfg = CacheConfig { bytes: 64, blocks: 4 }; // 4 words per block
        let mut c = MethodCache::new(cfg);
        assert!(!c.access(0, 4)); // block 0
        assert!(!c.access(1, 8)); // blocks 1-2
        assert!(c.access(0, 4));
        assert!(!c.access(2, 8)); // blocks 3,0: evicts 0
        assert!(!c.contains(0));
        assert!(c.contains(1));
        assert!(!c.access(0, 1)); // block 1: evicts 1
        assert!(!c.contains(1));
        assert!(c.contains(2));
        assert_eq!((c.hits, c.misses), (1, 4));
    }

    #[test]
    fn modes_parse() {
        assert_eq!("hit".parse::<CacheMode>().unwrap(), CacheMode::Hit);
        assert_eq!(
            "fifo:1024:16".parse::<CacheMode>().unwrap(),
            CacheMode::Fifo(CacheConfig {
                bytes: 1024,
                blocks: 16
            })
        );
        assert_eq!("fifo:1024:16".parse::<CacheMode>().unwrap().to_string(), "fifo:1024:16");
        assert!("fifo:1000:16"
            .parse::<CacheMode>()
            .unwrap_err()
            .to_string()
            .contains("whole 32-bit words"));
        assert!("lru".parse::<CacheMode>().is_err());
        assert_eq!(words_of(129), 33);
    }

    proptest! {
        #[test]
        fn matches_the_reference_model(
            blocks in 1u32..=16,
            words_per_block in 1u32..=8,
            sizes in proptest::collection::vec(1u32..=80, 1..12),
            seq in proptest::collection::vec(0usize..12, 0..400),
        ) {
            let cfg = CacheConfig { bytes: blocks * words_per_block * 4, blocks };
            let mut fast = MethodCache::new(cfg);
            let mut slow = Reference { cfg, loaded: vec![], next: 0 };
            for s in seq {
                let id = (s % sizes.len()) as u32;
                let w = sizes[id as usize];
                prop_assert_eq!(fast.access(id, w), slow.access(id, w));
            }
        }
    }
}
