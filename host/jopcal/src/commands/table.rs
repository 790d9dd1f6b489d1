//! `jopcal table`: a timing model's resolved per-opcode cycle table on
//! stdout; with `--microcode`, the table derived from a JOP microcode source
//! beside the model's, and the derived model written with `--out`.

use crate::cli::{TableArgs, TableFormat};
use anyhow::Result;
use jopcal_jop::microcode::table::Row;
use jopcal_pipeline::locate as context;
use jopcal_timing::table::{number, render, Format};
use jopcal_timing::TimingModel;
use std::path::Path;

pub fn table(firmware: Option<&Path>, a: &TableArgs) -> Result<()> {
    let format = match a.format {
        TableFormat::Csv => Format::Csv,
        TableFormat::Md => Format::Markdown,
        TableFormat::Tex => Format::Latex,
    };
    if let Some(source) = &a.microcode {
        if format == Format::Latex {
            anyhow::bail!("--microcode compares the tables as csv or md; --format tex prints a model's table");
        }
        return microcode(firmware, a, source, format);
    }
    let path = context::model_path(a.model.as_deref(), firmware)?;
    let mut model = TimingModel::load(&path)?;
    model.apply_overrides(&a.params)?;
    print!("{}", render(&model, format));
    Ok(())
}

fn microcode(firmware: Option<&Path>, a: &TableArgs, source: &Path, format: Format) -> Result<()> {
    let t = jopcal_pipeline::microcode::derive(
        firmware,
        &jopcal_pipeline::microcode::Request {
            source,
            defines: &a.defines,
            model: a.model.as_deref(),
            params: &a.params,
            access: a.access.as_deref(),
            access_remedy: "pass --access FILE",
            made_by: "`jopcal table --microcode`",
        },
    )?;
    print!("{}", render_rows(&t.derived.rows, &t.base, format));
    summarize(&t.derived.rows, &t.base);
    if let Some(out) = &a.out {
        jopcal_pipeline::microcode::write(&t.derived, out)?;
        eprintln!("wrote {}", out.display());
    }
    Ok(())
}

fn summarize(rows: &[Row], base: &TimingModel) {
    let derived = rows.iter().filter(|r| r.derived.is_some()).count();
    let differ: Vec<&str> = rows.iter().filter(|r| r.differs()).map(|r| r.name.as_str()).collect();
    let refused: Vec<&str> = rows
        .iter()
        .filter(|r| r.microcode.is_err())
        .map(|r| r.name.as_str())
        .collect();
    let p = |n: &str| base.params().get(n).copied().unwrap_or(0.0);
    eprintln!(
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
    );
}

fn cell(v: Option<(f64, f64)>, miss: bool) -> String {
    v.map_or_else(String::new, |(h, m)| number(if miss { m } else { h }))
}

fn render_rows(rows: &[Row], base: &TimingModel, format: Format) -> String {
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
