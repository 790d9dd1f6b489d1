//! JOP's garbage collector inside a timed region: how often it runs and
//! what it works on, from the region's allocations (the host profile's, by
//! their size in JOP's heap) and the heap the region began with (the
//! target's). jop-devel/jop's collector is a stop-the-world copying one: an
//! allocation that finds too few words left in the semi-space, or no handle
//! left, runs a whole collection first (flip, copy what is live, sweep the
//! handles in use, clear the other semi-space). The model prices each
//! collection by `gc_collection` and each handle in use when it runs by
//! `gc_handle` (both fitted: calibration's Collect micro-benchmarks).

use jopcal_profile::HeapStart;
use std::collections::BTreeMap;

/// The parameter a collection costs, whatever it works on.
pub const GC_COLLECTION: &str = "gc_collection";
/// The parameter each handle in use when a collection runs costs (its sweep).
pub const GC_HANDLE: &str = "gc_handle";

/// What the collector does in a region.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Collections {
    /// Collections run.
    pub count: f64,
    /// Handles in use, summed over the collections (each sweeps them).
    pub handles_swept: f64,
}

/// The collections `allocations` ((words, count) by size) make from
/// `heap`. The allocations' order is not known: they are taken as a
/// steady mix, each collection coming when the mix has used up the words
/// or the handles left, whichever first. After a collection what the heap
/// held when the run began (the runtime's own objects) is taken as what
/// survives; the region's own data that is still live then is not known.
pub fn collections(allocations: &BTreeMap<u32, u64>, heap: &HeapStart) -> Collections {
    let (handles, words) = jopcal_profile::allocation_totals(allocations);
    let (handles, words) = (handles as f64, words as f64);
    if handles == 0.0 {
        return Collections::default();
    }
    // The share of the region's allocations that `free_words` and
    // `free_handles` hold.
    let share = |free_words: u32, free_handles: u32| -> f64 {
        let by_words = if words > 0.0 {
            f64::from(free_words) / words
        } else {
            f64::INFINITY
        };
        by_words.min(f64::from(free_handles) / handles)
    };
    let first = share(heap.free_words, heap.free_handles);
    if first >= 1.0 {
        return Collections::default();
    }
    let refill = share(heap.refill_words, heap.refill_handles);
    // Handles in use when a collection runs: what survived, and the mix's
    // allocations since the heap was last fresh.
    let in_use = |free_handles: u32, used_share: f64| {
        f64::from(heap.handles.saturating_sub(free_handles)) + handles * used_share
    };
    let mut c = Collections {
        count: 1.0,
        handles_swept: in_use(heap.free_handles, first),
    };
    if refill <= 0.0 {
        // Nothing is freed: the processor runs out of memory (not estimated further).
        return c;
    }
    let more = ((1.0 - first) / refill).floor();
    c.count += more;
    c.handles_swept += more * in_use(heap.refill_handles, refill);
    c
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn heap(free_words: u32, free_handles: u32) -> HeapStart {
        HeapStart {
            free_words,
            free_handles,
            refill_words: 1000,
            refill_handles: 100,
            semi_words: 1010,
            handles: 105,
        }
    }

    #[test]
    fn no_collection_while_the_words_and_handles_left_hold_the_allocations() {
        let a = BTreeMap::from([(10, 50)]); // 500 words, 50 handles
        assert_eq!(collections(&a, &heap(600, 60)).count, 0.0);
        assert_eq!(collections(&BTreeMap::new(), &heap(0, 0)).count, 0.0);
    }

    #[test]
    fn collections_come_as_the_words_run_out_then_at_each_refill() {
        // 2500 words in 50 handles; 600 left, then 1000 after each collection:
        // the first at 24% of the mix, then one each 40% more: 2 in all.
        let a = BTreeMap::from([(50, 50)]);
        let c = collections(&a, &heap(600, 60));
        assert_eq!(c.count, 2.0);
        // In use at the first: 45 that were, 12 of the mix; at the second, 5 and 20.
        assert!((c.handles_swept - (45.0 + 12.0 + 5.0 + 20.0)).abs() < 1e-9, "{c:?}");
    }

    #[test]
    fn small_objects_run_out_of_handles_first() {
        // Objects without fields: only handles (0 words).
        let a = BTreeMap::from([(0, 250)]);
        let c = collections(&a, &heap(600, 60));
        // 60 of 250 first (24%), then 100 at a time (40%): 1 + floor(0.76 / 0.4) = 2.
        assert_eq!(c.count, 2.0);
    }

    proptest! {
        #[test]
        fn more_allocation_never_means_fewer_collections(size in 0u32..200, n in 1u64..5000, extra in 0u64..5000) {
            let h = heap(700, 80);
            let a = collections(&BTreeMap::from([(size, n)]), &h);
            let b = collections(&BTreeMap::from([(size, n + extra)]), &h);
            prop_assert!(b.count >= a.count);
            prop_assert!(a.count >= 0.0 && a.handles_swept >= 0.0);
        }
    }
}
