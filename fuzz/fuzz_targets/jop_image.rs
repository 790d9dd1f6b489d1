//! .jop images come from the user's JOP tree: no text may panic the parser.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(text) = std::str::from_utf8(data) {
        let _ = jopcal_link::JopImage::parse(text, Some(1 << 20));
    }
});
