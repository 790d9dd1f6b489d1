//! The method cache of JOP as the tree's simulator models it: a variable
//! block cache. A method occupies `floor(bytes / block) + 1` consecutive
//! blocks from the FIFO pointer (a method of exactly one block's bytes takes
//! two); only its first block carries its tag (its code's start address),
//! the others are cleared, so a lookup hits only on a method's first block.
//! Invokes and returns look up the same way: a return can miss and reload
//! the caller.
//!
//! This differs from the estimator's [`jopcal_timing::MethodCache`] in the
//! block count of a method whose size is a whole number of blocks; the
//! virtual board running images follows the tree, cycle for cycle.

use jopcal_timing::CacheConfig;

/// The cache's state: one tag per block and the FIFO pointer.
#[derive(Debug, Clone)]
pub struct VarBlockCache {
    tags: Vec<i32>,
    next: usize,
    block_bytes: u32,
}

impl VarBlockCache {
    pub fn new(cfg: CacheConfig) -> VarBlockCache {
        VarBlockCache {
            tags: vec![0; cfg.blocks as usize],
            next: 0,
            block_bytes: cfg.bytes / cfg.blocks,
        }
    }

    /// Looks up the method whose code starts at word `start` and is `words`
    /// long, loading it on a miss; true on a hit.
    pub fn access(&mut self, start: i32, words: u32) -> bool {
        if self.tags.contains(&start) {
            return true;
        }
        let first = self.next;
        let blocks = (words * 4 / self.block_bytes + 1) as usize;
        for _ in 0..blocks.min(self.tags.len()) {
            self.tags[self.next] = 0;
            self.next = (self.next + 1) % self.tags.len();
        }
        self.tags[first] = start;
        false
    }

    /// Empties the cache (the simulator's flush register).
    pub fn flush(&mut self) {
        self.tags.iter_mut().for_each(|t| *t = 0);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cache() -> VarBlockCache {
        VarBlockCache::new(CacheConfig {
            bytes: 4096,
            blocks: 16,
        })
    }

    #[test]
    fn a_method_hits_after_its_load_until_fifo_reuses_its_block() {
        let mut c = cache();
        assert!(!c.access(100, 10));
        assert!(c.access(100, 10));
        // 15 more one-block methods fill the rest; the 16th evicts the first.
        for k in 0..15 {
            assert!(!c.access(200 + k, 10));
        }
        assert!(c.access(100, 10));
        assert!(!c.access(300, 10));
        assert!(!c.access(100, 10));
    }

    #[test]
    fn a_method_of_exactly_one_block_takes_two() {
        let mut c = cache();
        assert!(!c.access(100, 64)); // 256 bytes: blocks 0 and 1
        assert!(!c.access(200, 1)); // block 2
        for k in 0..13 {
            assert!(!c.access(300 + k, 1)); // blocks 3..=15
        }
        assert!(c.access(100, 64));
        assert!(!c.access(400, 1)); // block 0 again: the 64-word method is gone
        assert!(!c.access(100, 64));
    }

    #[test]
    fn only_the_first_block_of_a_method_hits() {
        let mut c = cache();
        assert!(!c.access(100, 100)); // blocks 0 and 1
        assert!(!c.access(0x7fff, 1)); // block 2
                                       // a method whose tag would match block 1's cleared tag (0) never exists: start 0 is word 0
        assert_eq!(c.tags[1], 0);
        assert_eq!(c.tags[0], 100);
    }

    #[test]
    fn flushing_empties_every_block() {
        let mut c = cache();
        c.access(100, 1);
        c.flush();
        assert!(!c.access(100, 1));
    }
}
