//! The target's heap when each timed region began, beside its measurements:
//! the virtual board writes the collector's state at every read of the cycle
//! counter (`clocks/<benchmark>.heap.txt` beside `measurements.csv`), and
//! the read the region's count starts from is the region's start. The
//! estimate takes from it when JOP's collector runs in the region
//! (`jopcal_timing::collector`).
//!
//! A target that reports no heap (the RTL bench, a board, JopSim) can be
//! given the virtual board's: `heap-starts.csv` beside its
//! `measurements.csv` holds the heap each region began with when the same
//! images ran on the virtual board. What a program allocates before its
//! region does not depend on the processor's timing, so neither does the
//! heap the region begins with (unless the program reads the clock to
//! decide what to allocate).

use anyhow::{anyhow, Result};
use jopcal_emu::board::parse_heap_reads;
use jopcal_emu::image::{heap_at_region_start, HeapRead};
use jopcal_measure::measurements;
use jopcal_profile::{HeapStart, Profile};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// The file beside a `measurements.csv` that gives its regions' heaps
/// where the target reported none (see the module's doc).
pub const HEAP_STARTS_FILE: &str = "heap-starts.csv";

/// One row of [`HEAP_STARTS_FILE`]: a benchmark's [`HeapStart`].
#[derive(Debug, serde::Serialize, serde::Deserialize)]
struct HeapStartRow {
    benchmark: String,
    free_words: u32,
    free_handles: u32,
    refill_words: u32,
    refill_handles: u32,
    semi_words: u32,
    handles: u32,
}

/// Per benchmark of `measured_csv`, the heap its region began with, where
/// the target wrote its heap reads and one pair of them spans the region;
/// else as [`HEAP_STARTS_FILE`] beside it gives it.
pub fn heap_starts(measured_csv: &Path) -> Result<BTreeMap<String, HeapStart>> {
    let dir = measured_csv.parent().unwrap_or(Path::new("."));
    let mut out = read_heap_starts(&dir.join(HEAP_STARTS_FILE))?;
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

/// The rows of a [`HEAP_STARTS_FILE`] (none where there is no file); an
/// error names the file and the line.
fn read_heap_starts(path: &Path) -> Result<BTreeMap<String, HeapStart>> {
    let mut out = BTreeMap::new();
    let Ok(file) = std::fs::File::open(path) else {
        return Ok(out);
    };
    for (i, row) in csv::Reader::from_reader(file).deserialize::<HeapStartRow>().enumerate() {
        // Line 1 is the header.
        let r = row.map_err(|e| anyhow!("{}:{}: {e}", path.display(), i + 2))?;
        out.insert(
            r.benchmark,
            HeapStart {
                free_words: r.free_words,
                free_handles: r.free_handles,
                refill_words: r.refill_words,
                refill_handles: r.refill_handles,
                semi_words: r.semi_words,
                handles: r.handles,
            },
        );
    }
    Ok(out)
}

/// Writes `starts` as the [`HEAP_STARTS_FILE`] beside `measured_csv`
/// (through a temporary file: an earlier one stays whole until then).
pub fn write_heap_starts(measured_csv: &Path, starts: &BTreeMap<String, HeapStart>) -> Result<PathBuf> {
    let path = measured_csv.parent().unwrap_or(Path::new(".")).join(HEAP_STARTS_FILE);
    let mut w = csv::Writer::from_writer(Vec::new());
    for (benchmark, h) in starts {
        w.serialize(HeapStartRow {
            benchmark: benchmark.clone(),
            free_words: h.free_words,
            free_handles: h.free_handles,
            refill_words: h.refill_words,
            refill_handles: h.refill_handles,
            semi_words: h.semi_words,
            handles: h.handles,
        })?;
    }
    let bytes = w.into_inner().map_err(|e| anyhow!("{}: {e}", path.display()))?;
    jopcal_measure::atomic::write_atomic(&path, &bytes).map_err(|e| anyhow!("writing {}: {e}", path.display()))?;
    Ok(path)
}

/// Lends the target measured in `target_csv` the heaps the virtual board
/// reported for the same workloads (`board_csv`), those `keep` names: the
/// [`HEAP_STARTS_FILE`] it writes, or `None` where there is nothing to lend
/// (the target has heaps of its own, or the board reported none).
pub fn lend_heap_starts(board_csv: &Path, target_csv: &Path, keep: impl Fn(&str) -> bool) -> Result<Option<PathBuf>> {
    if !heap_starts(target_csv)?.is_empty() {
        return Ok(None);
    }
    let mut starts = heap_starts(board_csv)?;
    starts.retain(|bench, _| keep(bench));
    if starts.is_empty() {
        return Ok(None);
    }
    write_heap_starts(target_csv, &starts).map(Some)
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

    /// A directory with a `measurements.csv` of no rows (and no heap reads).
    fn no_measurements() -> (tempfile::TempDir, std::path::PathBuf) {
        let dir = tempfile::tempdir().unwrap();
        let csv = dir.path().join("measurements.csv");
        std::fs::write(
            &csv,
            "target,target_config,benchmark,iterations,cycles,value,unit,run,timestamp,tool_version,suite_hash,log\n",
        )
        .unwrap();
        (dir, csv)
    }

    #[test]
    fn a_target_without_heap_reads_takes_the_heaps_written_beside_its_measurements() {
        let (dir, csv) = no_measurements();
        assert!(heap_starts(&csv).unwrap().is_empty(), "no reads, no file: no heaps");
        let h = HeapStart {
            free_words: 700,
            free_handles: 60,
            refill_words: 990,
            refill_handles: 98,
            semi_words: 1000,
            handles: 100,
        };
        let starts = BTreeMap::from([("Garbage".to_string(), h)]);
        let path = write_heap_starts(&csv, &starts).unwrap();
        assert_eq!(path, dir.path().join(HEAP_STARTS_FILE));
        assert_eq!(heap_starts(&csv).unwrap(), starts);
    }

    #[test]
    fn the_boards_heaps_are_lent_only_to_a_target_without_its_own() {
        let (_board_dir, board) = no_measurements();
        let (target_dir, target) = no_measurements();
        let h = |free_words| HeapStart {
            free_words,
            free_handles: 60,
            refill_words: 990,
            refill_handles: 98,
            semi_words: 1000,
            handles: 100,
        };
        assert_eq!(
            lend_heap_starts(&board, &target, |_| true).unwrap(),
            None,
            "the board has none"
        );
        write_heap_starts(&board, &BTreeMap::from([("A".into(), h(1)), ("B".into(), h(2))])).unwrap();
        let lent = lend_heap_starts(&board, &target, |b| b == "B").unwrap();
        assert_eq!(lent, Some(target_dir.path().join(HEAP_STARTS_FILE)));
        assert_eq!(heap_starts(&target).unwrap(), BTreeMap::from([("B".into(), h(2))]));
        assert_eq!(
            lend_heap_starts(&board, &target, |_| true).unwrap(),
            None,
            "it has its own now"
        );
        assert_eq!(heap_starts(&target).unwrap().len(), 1);
    }

    #[test]
    fn a_damaged_heaps_file_is_an_error_naming_its_line() {
        let (dir, csv) = no_measurements();
        std::fs::write(
            dir.path().join(HEAP_STARTS_FILE),
            "benchmark,free_words,free_handles,refill_words,refill_handles,semi_words,handles\nA,1,2,3,4,5,6\nB,1,x,3,4,5,6\n",
        )
        .unwrap();
        let e = heap_starts(&csv).unwrap_err().to_string();
        assert!(
            e.contains(&format!("{}:3:", dir.path().join(HEAP_STARTS_FILE).display())),
            "{e}"
        );
    }
}
