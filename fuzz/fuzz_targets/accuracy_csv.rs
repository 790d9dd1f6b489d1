//! `accuracy.csv` as `report --from` reads it from a published directory
//! (any file a user keeps): no bytes may panic the reader; every error
//! names a line, and what it reads has one value per benchmark and variant.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    match jopcal_report::accuracy::read_csv(text) {
        Ok(a) => {
            assert_eq!(a.measured.len(), a.benchmarks.len());
            assert!(a.estimates.iter().all(|e| e.len() == a.benchmarks.len()));
        }
        Err(e) => assert!(e.line >= 1 && e.to_string().starts_with("line "), "{e}"),
    }
});
