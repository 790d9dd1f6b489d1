//! `jopcal table`: a timing model's resolved per-opcode cycle table on stdout.

use crate::cli::{TableArgs, TableFormat};
use anyhow::Result;
use jopcal_pipeline::locate as context;
use jopcal_timing::table::{render, Format};
use jopcal_timing::TimingModel;
use std::path::Path;

pub fn table(firmware: Option<&Path>, a: &TableArgs) -> Result<()> {
    let path = context::model_path(a.model.as_deref(), firmware)?;
    let mut model = TimingModel::load(&path)?;
    model.apply_overrides(&a.params)?;
    let format = match a.format {
        TableFormat::Csv => Format::Csv,
        TableFormat::Md => Format::Markdown,
        TableFormat::Tex => Format::Latex,
    };
    print!("{}", render(&model, format));
    Ok(())
}
