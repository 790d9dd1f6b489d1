//! The instrumenting profiler's raw counts file is written by Java code in
//! the profiled JVM and read back by jopcal: no byte sequence may panic the
//! reader (it names the byte where the file went wrong instead).
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let _ = jopcal_profiler::instrumented::read_raw(data);
});
