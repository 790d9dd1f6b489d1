//! A JOP tree's runtime (`JVM.java`) is the user's Java source: no text may
//! panic the reader of its routines, and a routine it finds is a public
//! static method of the bytecode's routine name.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(text) = std::str::from_utf8(data) {
        for r in jopcal_tree::runtime::find_routines(text) {
            assert!(r.source.trim_start().starts_with("public "));
            assert!(r.source.contains(&format!("f_{}(", r.bytecode.mnemonic)));
        }
    }
});
