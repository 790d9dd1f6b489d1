//! Target output is outside input: no byte sequence may panic the parser.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    for line in text.lines() {
        if let Err(e) = jopcal_measure::parse_line(line) {
            assert!(e.column >= 1);
        }
    }
    let _ = jopcal_measure::scan(&text);
});
