//! `jopcal table`: a timing model's resolved per-opcode cycle table on
//! stdout; with `--microcode`, the table derived from a JOP microcode source
//! beside the model's (the work is `jopcal_pipeline::table`'s).

use anyhow::Result;
use jopcal_pipeline::table::{show, TableRequest};
use std::path::Path;

pub fn table(firmware: Option<&Path>, a: &TableRequest) -> Result<()> {
    let shown = show(firmware, a)?;
    print!("{}", shown.text);
    for n in &shown.notes {
        eprintln!("{n}");
    }
    Ok(())
}
