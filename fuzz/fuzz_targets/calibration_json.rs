//! `calibration.json` as `jopcal report --from` reads it back: no bytes may
//! panic the reader, and what it accepts writes back to the same report.
#![no_main]
use jopcal_calibrate::report::CalibrationReport;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let path = std::path::Path::new("calibration.json");
    if let Ok(r) = CalibrationReport::parse(data, path) {
        let again = CalibrationReport::parse(r.to_json().as_bytes(), path).expect("its own output reads back");
        // NaN never comes out of JSON, so equality holds.
        assert_eq!(again, r);
    }
});
