//! The microcode paths of the bytecodes the processor prices by their
//! operands (a long shift by its count, `lcmp` by its words, `monitorexit`
//! by the lock count), remembered: following the microcode costs hundreds
//! of nanoseconds, and loops meet the same operands again and again.
//!
//! Two direct-mapped tables, each slot holding its whole key, so that a
//! slot another key took over is a miss, never a wrong answer: one keyed by
//! the top word alone, for paths the microcode proves depend on nothing
//! else, and one keyed by all the words a run is given.

use jopcal_jop::microcode::PathKey;

/// A path's cycles and its key.
pub(super) type Path = (u32, PathKey);

/// Slots per table (a power of two).
const SLOTS: usize = 1024;

#[derive(Clone, Copy)]
struct Slot<K> {
    key: K,
    path: Path,
}

/// A direct-mapped table from `K` to the path.
struct Table<K> {
    slots: Box<[Option<Slot<K>>]>,
}

impl<K: Copy + PartialEq> Table<K> {
    fn new() -> Self {
        Table {
            slots: vec![None; SLOTS].into_boxed_slice(),
        }
    }

    #[inline(always)]
    fn get(&self, index: usize, key: K) -> Option<Path> {
        match self.slots[index & (SLOTS - 1)] {
            Some(s) if s.key == key => Some(s.path),
            _ => None,
        }
    }

    #[inline(always)]
    fn put(&mut self, index: usize, key: K, path: Path) {
        self.slots[index & (SLOTS - 1)] = Some(Slot { key, path });
    }
}

/// The board's remembered paths.
pub(super) struct PathMemo {
    /// By (opcode, top word, lock count).
    by_top: Table<(u8, i32, i32)>,
    /// By (opcode, the four top words, lock count).
    by_words: Table<(u8, [i32; 4], i32)>,
}

/// Multiply-rotate mixing (as rustc's FxHasher), the slot from the high bits.
#[inline(always)]
fn mix(h: u64, v: u64) -> u64 {
    (h.rotate_left(5) ^ v).wrapping_mul(0x51_7c_c1_b7_27_22_0a_95)
}

#[inline(always)]
fn slot_of(h: u64) -> usize {
    (h >> 40) as usize
}

impl PathMemo {
    pub(super) fn new() -> Self {
        PathMemo {
            by_top: Table::new(),
            by_words: Table::new(),
        }
    }

    #[inline(always)]
    fn top_index(op: u8, top: i32, lock: i32) -> usize {
        slot_of(mix(mix(u64::from(op), u64::from(top as u32)), u64::from(lock as u32)))
    }

    #[inline(always)]
    fn words_index(op: u8, words: [i32; 4], lock: i32) -> usize {
        let h = words.iter().fold(mix(u64::from(op), u64::from(lock as u32)), |h, w| {
            mix(h, u64::from(*w as u32))
        });
        slot_of(h)
    }

    /// The path `op` takes with `top` on top whatever the other words.
    #[inline(always)]
    pub(super) fn by_top(&self, op: u8, top: i32, lock: i32) -> Option<Path> {
        self.by_top.get(Self::top_index(op, top, lock), (op, top, lock))
    }

    pub(super) fn put_by_top(&mut self, op: u8, top: i32, lock: i32, path: Path) {
        self.by_top.put(Self::top_index(op, top, lock), (op, top, lock), path);
    }

    /// The path `op` takes with `words` on top.
    #[inline(always)]
    pub(super) fn by_words(&self, op: u8, words: [i32; 4], lock: i32) -> Option<Path> {
        self.by_words.get(Self::words_index(op, words, lock), (op, words, lock))
    }

    pub(super) fn put_by_words(&mut self, op: u8, words: [i32; 4], lock: i32, path: Path) {
        self.by_words
            .put(Self::words_index(op, words, lock), (op, words, lock), path);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_slot_taken_over_by_another_key_is_a_miss() {
        let mut memo = PathMemo::new();
        let a = (7, PathKey(1));
        memo.put_by_top(121, 5, 0, a);
        assert_eq!(memo.by_top(121, 5, 0), Some(a));
        assert_eq!(memo.by_top(121, 5, 1), None);
        assert_eq!(memo.by_top(125, 5, 0), None);
        // Fill every slot with other keys: the first is gone, never wrong.
        for t in 0..(4 * SLOTS as i32) {
            memo.put_by_top(121, 1000 + t, 0, (9, PathKey(2)));
        }
        assert!(memo.by_top(121, 5, 0).is_none_or(|p| p == a));
        let w = [1, 2, 3, 4];
        memo.put_by_words(148, w, 0, a);
        assert_eq!(memo.by_words(148, w, 0), Some(a));
        assert_eq!(memo.by_words(148, [1, 2, 3, 5], 0), None);
        assert_eq!(memo.by_words(148, w, 2), None);
    }
}
