//! JOP microcode sources come from the user's tree: no text may panic the
//! reader, nor the path walk over any label of what it reads.
#![no_main]
use jopcal_jop::microcode::{AccessTiming, Derivation, Program};
use libfuzzer_sys::fuzz_target;
use std::path::Path;

const ACCESS: &str = include_str!("../../calibration/jop-microcode.toml");

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    let name = Path::new("fuzz.asm");
    if let Ok(p) = Program::parse(text, name, &["SERIAL".to_string()]) {
        let timing = AccessTiming::parse(ACCESS, Path::new("jop-microcode.toml")).expect("shipped timing parses");
        let labels: Vec<String> = p.labels.keys().cloned().collect();
        let _ = Derivation::new(name, &p, &timing, labels.iter().map(String::as_str));
    }
});
