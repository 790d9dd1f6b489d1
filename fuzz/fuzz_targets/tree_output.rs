//! A target's output when it ran a JOP tree's own harness: no bytes may panic
//! the reader of its `N ms` lines.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let _ = jopcal_measure::tree_output::scan(&String::from_utf8_lossy(data));
});
