//! The virtual board running a linked `.jop` image as JOP does: the image
//! that a JOP tree's linker made, with JOP's own runtime (boot, class
//! initialisation, its library, the bytecodes it implements in Java),
//! laid out in memory as on a board. Timing comes from a timing model (the
//! tree's table, `calibration/jop-devel.toml`), the method cache is the
//! tree's variable-block cache, and the cycle counter, microsecond counter
//! and UART sit at JOP's I/O addresses.
//!
//! [`cache`] is the method cache, [`timing`] resolves every opcode's cycles
//! from the model, [`machine`] is memory, stack, I/O and the interpreter.

pub mod assemble;
pub mod cache;
pub mod machine;
#[cfg(test)]
mod tests;
pub mod timing;

pub use machine::{
    heap_at_region_start, region_by_opcode, CounterRead, EventSink, HeapRead, HeapWatch, ImageRun, MethodTally,
    OpTallies, OpTally, COUNTER_READS_KEPT, HEAP_READS_KEPT,
};
pub use timing::CycleTable;

use crate::config::BoardConfig;
use crate::error::EmuError;
use jopcal_link::JopImage;

/// The configuration an image runs with: the board's (model, method cache,
/// clock, cycle limit).
pub type ImageConfig = BoardConfig;

/// Runs `image` to its `JVM exit!`; `uart` gets its output a line at a
/// time; with `trace`, the run counts cycles, bytecodes, calls and cache
/// loads per method, and hands each bytecode to `events` if given.
pub fn run_image(
    image: &JopImage,
    cfg: &ImageConfig,
    trace: bool,
    events: Option<EventSink<'_>>,
    uart: &mut dyn FnMut(&[u8]),
) -> Result<ImageRun, EmuError> {
    run_image_watching(image, cfg, trace, events, None, uart)
}

/// Like [`run_image`], reading the collector's state where `heap` locates
/// it at each read of the cycle counter ([`ImageRun::heap_reads`]).
pub fn run_image_watching(
    image: &JopImage,
    cfg: &ImageConfig,
    trace: bool,
    events: Option<EventSink<'_>>,
    heap: Option<HeapWatch>,
    uart: &mut dyn FnMut(&[u8]),
) -> Result<ImageRun, EmuError> {
    let table = CycleTable::new(&cfg.model)?;
    let machine = machine::Machine::load(&image.words, cfg, &table, uart)?.watching_heap(heap);
    if trace || events.is_some() {
        machine.traced(events).run()
    } else {
        machine.run()
    }
}

/// Names for the code addresses of a trace, from the image's link map
/// (its `bytecode <method> <address>` entries); an address the map lacks
/// is named `code at word N`.
pub fn method_names(link_map: Option<&jopcal_jop::linkmap::LinkMap>) -> impl Fn(u32) -> String {
    let names: std::collections::HashMap<u32, String> = link_map
        .map(|m| m.methods.iter().map(|(name, addr)| (*addr, name.clone())).collect())
        .unwrap_or_default();
    move |addr| {
        names
            .get(&addr)
            .cloned()
            .unwrap_or_else(|| format!("code at word {addr}"))
    }
}
