//! A JOP tree's fixed-count harnesses are the user's Java sources: no text may
//! panic the reader, and a harness it accepts must give a wrapper holding the
//! timed statements it read.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(text) = std::str::from_utf8(data) {
        if let Ok(h) = jopcal_tree::harness::parse_fixed_harness(text) {
            let w = h.wrapper_source("Fuzz", "Fuzz.java");
            assert!(w.contains(&h.region));
        }
    }
});
