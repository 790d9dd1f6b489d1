//! Whatever arrives over the line is read as a class bundle by the virtual
//! board: no word sequence may panic the bundle reader, and the class files
//! inside are parsed by the board's loader, which may not panic either.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let words: Vec<u32> = data.chunks(4).map(|c| {
        let mut w = [0u8; 4];
        w[..c.len()].copy_from_slice(c);
        u32::from_be_bytes(w)
    }).collect();
    let image = jopcal_link::JopImage { words };
    if let Ok(b) = jopcal_emu::Bundle::from_image(&image) {
        for c in &b.classes {
            let _ = jopcal_classfile::parse_class(c);
        }
    }
});
