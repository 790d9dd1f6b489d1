//! `jopcal.toml` is the user's: no text may panic its parser, and an error
//! always names the file.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(text) = std::str::from_utf8(data) {
        let file = std::path::Path::new("/p/jopcal.toml");
        if let Err(e) = jopcal_tree::config::JopConfig::parse(text, file) {
            assert!(e.to_string().starts_with("/p/jopcal.toml"), "{e}");
        }
    }
});
