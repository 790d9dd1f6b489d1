//! Whatever arrives over the line that is not a class bundle runs on the
//! virtual board as a JOP image: no word sequence may panic the image
//! machine (a bounded number of cycles, then an error, at worst).
#![no_main]
use libfuzzer_sys::fuzz_target;
use std::sync::OnceLock;

fn config() -> &'static jopcal_emu::BoardConfig {
    static CFG: OnceLock<jopcal_emu::BoardConfig> = OnceLock::new();
    CFG.get_or_init(|| {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../calibration/jop-devel.toml");
        let mut cfg = jopcal_emu::BoardConfig::load(&path, &[]).expect("the tree's table");
        cfg.cycle_limit = 100_000;
        cfg
    })
}

fuzz_target!(|data: &[u8]| {
    let words: Vec<u32> = data
        .chunks(4)
        .map(|c| {
            let mut w = [0u8; 4];
            w[..c.len()].copy_from_slice(c);
            u32::from_be_bytes(w)
        })
        .collect();
    let image = jopcal_link::JopImage { words };
    let _ = jopcal_emu::image::run_image(&image, config(), false, None, &mut |_| {});
});
