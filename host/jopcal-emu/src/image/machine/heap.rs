//! The runtime's heap as its collector sees it, read at each read of the
//! cycle counter: the free words and handles left, and the sizes a
//! collection works on. The estimate of a timed region takes from the read
//! at the region's start when and how often JOP's collector runs in it
//! (the collector's trigger depends on the heap the boot and the program's
//! earlier work left, which the host cannot see).

use super::*;

/// Where the collector's state lives: the word addresses of `GC`'s statics
/// in an image (from its link map).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HeapWatch {
    pub copy_ptr: i32,
    pub alloc_ptr: i32,
    pub free_list: i32,
    pub semi_size: i32,
    pub handle_cnt: i32,
}

impl HeapWatch {
    /// The statics of `com.jopdesign.sys.GC` (jop-devel/jop's copying
    /// collector) in a link map's `static` entries; `None` when one is missing.
    pub fn from_statics(statics: &[(String, u32)]) -> Option<HeapWatch> {
        let at = |field: &str| -> Option<i32> {
            let name = format!("com.jopdesign.sys.GC.{field}I");
            statics
                .iter()
                .find(|(n, _)| *n == name)
                .and_then(|(_, a)| i32::try_from(*a).ok())
        };
        Some(HeapWatch {
            copy_ptr: at("copyPtr")?,
            alloc_ptr: at("allocPtr")?,
            free_list: at("freeList")?,
            semi_size: at("semi_size")?,
            handle_cnt: at("handle_cnt")?,
        })
    }
}

/// The heap at one read of the cycle counter.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HeapRead {
    /// The value the program read.
    pub counter: u32,
    /// Words an allocation can take before the collector runs (`allocPtr - copyPtr`).
    pub free_words: u32,
    /// Handles on the free list.
    pub free_handles: u32,
    /// Words of one semi-space.
    pub semi_words: u32,
    /// Handles in all.
    pub handles: u32,
}

/// Reads of the heap a run keeps.
pub const HEAP_READS_KEPT: usize = 256;

/// Where a handle's link to the next free one is (`GC.OFF_NEXT`).
const OFF_NEXT: i32 = 4;

impl<'c> Machine<'c> {
    /// The heap now, as `w` locates it; `None` where a static lies outside
    /// the memory (an image whose link map does not match it).
    pub(super) fn heap_now(&self, w: HeapWatch, counter: u32) -> Option<HeapRead> {
        let word = |a: i32| self.memory_read(a);
        let (copy, alloc) = (word(w.copy_ptr)?, word(w.alloc_ptr)?);
        let handles = u32::try_from(word(w.handle_cnt)?).ok()?;
        // The free list, walked no further than there are handles.
        let mut free = 0u32;
        let mut at = word(w.free_list)?;
        while at != 0 && free <= handles {
            free += 1;
            at = word(at.wrapping_add(OFF_NEXT))?;
        }
        Some(HeapRead {
            counter,
            free_words: u32::try_from(alloc.wrapping_sub(copy)).unwrap_or(0),
            free_handles: free,
            semi_words: u32::try_from(word(w.semi_size)?).ok()?,
            handles,
        })
    }
}

/// The heap at the start of the timed region that `measured` cycles long:
/// the first of two reads whose counter values differ by it (the latest such
/// pair, as [`super::region_by_opcode`] takes it).
pub fn heap_at_region_start(reads: &[HeapRead], measured: u64) -> Option<HeapRead> {
    let values: Vec<u32> = reads.iter().map(|r| r.counter).collect();
    super::trace::region_reads(&values, measured).map(|(i, _)| reads[i])
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// A read of `free_words` at `counter` (the other fields fixed).
    pub(crate) fn read(counter: u32, free_words: u32) -> HeapRead {
        HeapRead {
            counter,
            free_words,
            free_handles: 10,
            semi_words: 100,
            handles: 20,
        }
    }

    #[test]
    fn the_region_starts_at_the_read_its_count_is_measured_from() {
        let reads = [read(100, 90), read(150, 80), read(1150, 40), read(1200, 30)];
        assert_eq!(heap_at_region_start(&reads, 1000), Some(reads[1]));
        assert_eq!(heap_at_region_start(&reads, 50), Some(reads[2]), "the latest pair");
        assert_eq!(heap_at_region_start(&reads, 7), None);
    }

    #[test]
    fn the_collector_statics_are_found_by_name() {
        let statics: Vec<(String, u32)> = ["copyPtr", "allocPtr", "freeList", "semi_size", "handle_cnt"]
            .iter()
            .enumerate()
            .map(|(k, f)| (format!("com.jopdesign.sys.GC.{f}I"), 70 + k as u32))
            .collect();
        let w = HeapWatch::from_statics(&statics).unwrap();
        assert_eq!((w.copy_ptr, w.handle_cnt), (70, 74));
        assert_eq!(HeapWatch::from_statics(&statics[1..]), None);
    }
}
