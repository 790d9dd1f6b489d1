//! A target's output is outside input: no text may panic the decoder of
//! JOP's uncaught-exception dump or its "not implemented" report, nor naming
//! their frames from a link map.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let map = jopcal_jop::linkmap::LinkMap::parse(&text).ok();
    if let Some(u) = jopcal_jop::uncaught::parse(&text) {
        let _ = u.describe(map.as_ref());
    }
    if let Some(n) = jopcal_jop::uncaught::parse_not_implemented(&text) {
        let _ = n.describe(map.as_ref());
    }
});
