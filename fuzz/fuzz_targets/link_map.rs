//! JOP link maps come from the user's tree: no text may panic the parser,
//! nor the size lookup against any image.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(text) = std::str::from_utf8(data) {
        if let Ok(map) = jopcal_jop::linkmap::LinkMap::parse(text) {
            let words: Vec<u32> = data.chunks(4).map(|c| c.iter().fold(0u32, |a, b| a << 8 | u32::from(*b))).collect();
            let _ = jopcal_jop::sizes::method_sizes(&jopcal_link::JopImage { words }, &map);
        }
    }
});
