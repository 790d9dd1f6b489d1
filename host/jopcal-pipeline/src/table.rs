//! Timing tables as `jopcal table` shows them: a model's resolved
//! per-opcode cycles (csv, Markdown or LaTeX), and the table derived from a
//! microcode source ([`crate::microcode`]) beside its base model's, with a
//! one-line summary of where the two differ.

use crate::{locate, microcode};
use anyhow::{bail, Result};
use jopcal_jop::microcode::table::Row;
use jopcal_timing::table::{number, render, Format};
use jopcal_timing::TimingModel;
use std::path::Path;

/// The resolved table of the model at `model` (default: the checkout's
/// `jop-wcet.toml`) with `params` applied.
pub fn model_table(firmware: Option<&Path>, model: Option<&Path>, params: &[String], format: Format) -> Result<String> {
    let path = locate::model_path(model, firmware)?;
    let mut model = TimingModel::load(&path)?;
    model.apply_overrides(params)?;
    Ok(render(&model, format))
}

/// A derived table beside its base: the rendered comparison, its summary
/// line, and the tables themselves (to write the derived model).
pub struct Comparison {
    pub text: String,
    pub summary: String,
    pub table: microcode::Table,
}

/// Derives the table `r` asks for and compares it with its base; `out`, where
/// the derived model is to be written, must not exist yet. LaTeX is for a
/// model's own table only.
pub fn compare(
    firmware: Option<&Path>,
    r: &microcode::Request,
    out: Option<&Path>,
    format: Format,
) -> Result<Comparison> {
    if format == Format::Latex {
        bail!("--microcode compares the tables as csv or md; --format tex prints a model's table");
    }
    let table = microcode::derive(firmware, r)?;
    if let Some(out) = out {
        jopcal_measure::new_file::ensure_new("--out", out, &[])?;
    }
    Ok(Comparison {
        text: render_rows(&table.derived.rows, &table.base, format),
        summary: summary(&table.derived.rows, &table.base),
        table,
    })
}

/// How many bytecodes were derived, which differ from the base and which
/// could not be derived, in one line.
pub fn summary(rows: &[Row], base: &TimingModel) -> String {
    let derived = rows.iter().filter(|r| r.derived.is_some()).count();
    let differ: Vec<&str> = rows.iter().filter(|r| r.differs()).map(|r| r.name.as_str()).collect();
    let refused: Vec<&str> = rows
        .iter()
        .filter(|r| r.microcode.is_err())
        .map(|r| r.name.as_str())
        .collect();
    let p = |n: &str| base.params().get(n).copied().unwrap_or(0.0);
    format!(
        "{derived} bytecodes derived from the microcode; {} differ from {} at r={}, w={}{}; {} not derived{}",
        differ.len(),
        base.name,
        number(p("r")),
        number(p("w")),
        if differ.is_empty() {
            String::new()
        } else {
            format!(" ({})", differ.join(", "))
        },
        refused.len(),
        if refused.is_empty() {
            String::new()
        } else {
            format!(" ({})", refused.join(", "))
        },
    )
}

fn cell(v: Option<(f64, f64)>, miss: bool) -> String {
    v.map_or_else(String::new, |(h, m)| number(if miss { m } else { h }))
}

/// The comparison rows as csv or a Markdown table.
pub fn render_rows(rows: &[Row], base: &TimingModel, format: Format) -> String {
    let head = [
        "bytecode".to_string(),
        "microcode".to_string(),
        "derived hit".to_string(),
        "derived miss".to_string(),
        format!("{} hit", base.name),
        format!("{} miss", base.name),
        "paths (hit)".to_string(),
        "note".to_string(),
    ];
    let body: Vec<[String; 8]> = rows
        .iter()
        .map(|r| {
            [
                r.name.clone(),
                match &r.microcode {
                    Ok(f) => f.clone(),
                    Err(why) => format!("not derived: {why}"),
                },
                cell(r.derived, false),
                cell(r.derived, true),
                cell(r.base, false),
                cell(r.base, true),
                r.paths
                    .map_or_else(String::new, |(lo, hi)| format!("{}..{}", number(lo), number(hi))),
                r.note.clone().unwrap_or_default(),
            ]
        })
        .collect();
    let mut out = String::new();
    match format {
        Format::Csv => {
            let mut w = csv::Writer::from_writer(Vec::new());
            let _ = w.write_record(&head);
            for r in &body {
                let _ = w.write_record(r);
            }
            out = String::from_utf8(w.into_inner().unwrap_or_default()).unwrap_or_default();
        }
        Format::Markdown | Format::Latex => {
            out.push_str(&format!("| {} |\n", head.join(" | ")));
            out.push_str(&format!("|{}\n", "---|".repeat(head.len())));
            for r in &body {
                let cells: Vec<String> = r.iter().map(|c| c.replace('|', "\\|")).collect();
                out.push_str(&format!("| {} |\n", cells.join(" | ")));
            }
        }
    }
    out
}
