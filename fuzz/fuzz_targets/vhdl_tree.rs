//! A JOP tree's VHDL and GHDL's output for it come from outside: no text may
//! panic the entity reader or the GHDL work-arounds of `sim build --jop-home`.
#![no_main]
use jopcal_sim::jop::{fixes, vhdl};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    let t = vhdl::strip_comments(text);
    let _ = vhdl::entity(&t, "jop");
    let _ = vhdl::instances(&t, "jopcpu");
    let _ = fixes::reset_record_fields(text);
    let _ = fixes::hoist_generic_conversions(text);
    let _ = fixes::rename_reserved(text);
    let _ = fixes::separate_instance_nets(text);
    let _ = fixes::case_defaults(text, text);
    let _ = fixes::vhdl_value_to_verilog(text);
});
