//! Bytecode event streams come from a bench or a file a user names
//! (`jopcal diff --keep`): no bytes may panic the reader, and every record
//! it accepts writes back to the same bytes.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(mut reader) = jopcal_measure::events::EventReader::new(data) else {
        return;
    };
    while let Ok(Some(event)) = reader.next_event() {
        let bytes = event.to_bytes();
        let back = jopcal_measure::events::Event::from_bytes(&bytes);
        assert_eq!(back.ok(), Some(event));
    }
});
