//! `jopcal table`: a timing model's resolved per-opcode cycle table on
//! stdout; with `--microcode`, the table derived from a JOP microcode source
//! beside the model's, and the derived model written with `--out` (the work
//! is `jopcal_pipeline::table`'s).

use crate::cli::{TableArgs, TableFormat};
use anyhow::Result;
use jopcal_pipeline::{microcode, table};
use jopcal_timing::table::Format;
use std::path::Path;

pub fn table(firmware: Option<&Path>, a: &TableArgs) -> Result<()> {
    let format = match a.format {
        TableFormat::Csv => Format::Csv,
        TableFormat::Md => Format::Markdown,
        TableFormat::Tex => Format::Latex,
    };
    let Some(source) = &a.microcode else {
        print!(
            "{}",
            table::model_table(firmware, a.model.as_deref(), &a.params, format)?
        );
        return Ok(());
    };
    let request = microcode::Request {
        source,
        defines: &a.defines,
        model: a.model.as_deref(),
        params: &a.params,
        target_params: &[],
        access: a.access.as_deref(),
        access_remedy: "pass --access FILE",
        made_by: "`jopcal table --microcode`",
    };
    let c = table::compare(firmware, &request, a.out.as_deref(), format)?;
    print!("{}", c.text);
    eprintln!("{}", c.summary);
    if let Some(out) = &a.out {
        microcode::write(&c.table.derived, out)?;
        eprintln!("wrote {}", out.display());
    }
    Ok(())
}
