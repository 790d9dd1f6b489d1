//! JopSim's statistics as `jopcal explain` reads them from a log: no bytes
//! may panic the reader.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let _ = jopcal_measure::target_counts::parse_jopsim(&String::from_utf8_lossy(data));
});
