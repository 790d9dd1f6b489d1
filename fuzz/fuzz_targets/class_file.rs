//! Class files come from users' trees: no byte sequence may panic the reader.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(class) = jopcal_classfile::parse_class(data) {
        for m in &class.methods {
            if let Some(code) = &m.code {
                if let Ok(ins) = jopcal_classfile::decode(&code.bytecode) {
                    let handlers: Vec<u32> = code.exception_table.iter().map(|e| u32::from(e.2)).collect();
                    let _ = jopcal_classfile::basic_blocks(&ins, &handlers, jopcal_classfile::BlockMode::Precise);
                }
            }
        }
    }
    let _ = jopcal_classfile::decode(data);
});
