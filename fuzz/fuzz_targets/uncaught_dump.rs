//! A target's output is outside input: no text may panic the decoder of
//! JOP's uncaught-exception dump, nor naming its frames from a link map.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    if let Some(u) = jopcal_jop::uncaught::parse(&text) {
        let map = jopcal_jop::linkmap::LinkMap::parse(&text).ok();
        let _ = u.describe(map.as_ref());
    }
});
