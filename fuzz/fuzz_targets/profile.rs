//! Profiles are read back from disk: no byte sequence may panic the reader,
//! and a profile that decodes may not panic the estimator either.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let _ = jopcal_profile::decode(data);
    let mut framed = jopcal_profile::format::MAGIC.to_vec();
    framed.push(jopcal_profile::FORMAT_VERSION as u8);
    framed.extend_from_slice(data);
    if let Ok(p) = jopcal_profile::decode(&framed) {
        let _ = jopcal_profile::to_json(&p);
        let model = jopcal_timing::TimingModel::load(std::path::Path::new("../calibration/jop-wcet.toml")).unwrap();
        for mode in ["hit", "miss", "fifo:64:2"] {
            let _ = jopcal_timing::estimate::estimate(&p, &model, mode.parse().unwrap());
        }
    }
});
