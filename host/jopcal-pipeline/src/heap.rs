//! The target's heap when each timed region began, beside its measurements:
//! the virtual board writes the collector's state at every read of the cycle
//! counter (`clocks/<benchmark>.heap.txt` beside `measurements.csv`), and
//! the read the region's count starts from is the region's start. The
//! estimate takes from it when JOP's collector runs in the region
//! (`jopcal_timing::collector`).

use anyhow::{anyhow, Result};
use jopcal_emu::board::parse_heap_reads;
use jopcal_emu::image::{heap_at_region_start, HeapRead};
use jopcal_measure::measurements;
use jopcal_profile::{HeapStart, Profile};
use std::collections::BTreeMap;
use std::path::Path;

/// Per benchmark of `measured_csv`, the heap its region began with, where
/// the target wrote its heap reads and one pair of them spans the region.
pub fn heap_starts(measured_csv: &Path) -> Result<BTreeMap<String, HeapStart>> {
    let dir = measured_csv.parent().unwrap_or(Path::new("."));
    let mut out = BTreeMap::new();
    for row in measurements::read(measured_csv).map_err(|e| anyhow!(e))? {
        let path = dir
            .join(crate::clocks::CLOCKS_DIR)
            .join(format!("{}.heap.txt", row.benchmark));
        let Ok(text) = std::fs::read_to_string(&path) else {
            continue;
        };
        let reads = parse_heap_reads(&text).map_err(|e| anyhow!("{}:{e}", path.display()))?;
        if let Some(start) = region_heap(&reads, row.value) {
            out.insert(row.benchmark, start);
        }
    }
    Ok(out)
}

/// The heap at the start of the region `measured` cycles long, with what a
/// collection leaves free: what the heap held at the run's first read
/// (the runtime's own objects, the program's static data) survives.
fn region_heap(reads: &[HeapRead], measured: u64) -> Option<HeapStart> {
    let start = heap_at_region_start(reads, measured)?;
    let first = reads.first()?;
    Some(HeapStart {
        free_words: start.free_words,
        free_handles: start.free_handles,
        refill_words: first.free_words,
        refill_handles: first.free_handles,
        semi_words: start.semi_words,
        handles: start.handles,
    })
}

/// Sets each profile's heap start from `starts` (by benchmark).
pub fn attach<'p>(profiles: impl IntoIterator<Item = &'p mut Profile>, starts: &BTreeMap<String, HeapStart>) {
    for p in profiles {
        if let Some(h) = starts.get(&p.benchmark) {
            p.heap_start = Some(*h);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_region_begins_with_the_heap_of_its_first_read_and_refills_as_the_run_began() {
        let read = |counter, free_words, free_handles| HeapRead {
            counter,
            free_words,
            free_handles,
            semi_words: 1000,
            handles: 100,
        };
        let reads = [read(10, 990, 98), read(500, 700, 60), read(2500, 300, 20)];
        let h = region_heap(&reads, 2000).unwrap();
        assert_eq!((h.free_words, h.free_handles), (700, 60));
        assert_eq!((h.refill_words, h.refill_handles), (990, 98));
        assert_eq!(region_heap(&reads, 7), None, "no read starts a region that long");
    }
}
