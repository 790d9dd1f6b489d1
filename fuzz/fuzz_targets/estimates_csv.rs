//! `estimates.csv` as `reconcile --estimates` and `report --from` read it (any
//! file a user names): no bytes may panic the reader; every error names a line.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let path = std::path::Path::new("estimates.csv");
    match jopcal_report::estimates::parse_estimates(data, path) {
        Ok(rows) => assert!(rows.iter().all(|r| r.cycles.is_finite() && r.cycles > 0.0)),
        Err(e) => assert!(e.to_string().starts_with("estimates.csv: "), "{e}"),
    }
});
