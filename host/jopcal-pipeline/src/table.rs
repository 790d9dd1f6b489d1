//! Timing tables as `jopcal table` shows them: a model's resolved
//! per-opcode cycles (csv, Markdown or LaTeX), and the table derived from a
//! microcode source ([`crate::microcode`]) beside its base model's, with a
//! one-line summary of where the two differ.

use crate::{locate, microcode};
use anyhow::{bail, Result};
use jopcal_jop::microcode::table::Row;
use jopcal_timing::table::{number, render, Format};
use jopcal_timing::TimingModel;
use std::path::{Path, PathBuf};

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

/// `jopcal table`'s formats.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum TableFormat {
    Csv,
    Md,
    Tex,
}

/// What `jopcal table` shows (the verb's arguments as they are).
#[derive(Debug, Clone, clap::Args)]
pub struct TableRequest {
    /// Timing model file (default: calibration/jop-wcet.toml of this checkout;
    /// with --microcode, the base of the derived table: calibration/jop-devel.toml).
    #[arg(long, value_name = "FILE")]
    pub model: Option<PathBuf>,
    /// Derive each bytecode's cycles from a JOP microcode source (the tree's
    /// asm/src/jvm.asm) and compare them with the model's.
    #[arg(long, value_name = "FILE")]
    pub microcode: Option<PathBuf>,
    /// With --microcode: a preprocessor name the tree's build defines (its
    /// JVM_TYPE, e.g. SERIAL; repeatable).
    #[arg(long = "define", value_name = "NAME", requires = "microcode")]
    pub defines: Vec<String>,
    /// With --microcode: the memory interface's access timing (default:
    /// calibration/jop-microcode.toml).
    #[arg(long, value_name = "FILE", requires = "microcode")]
    pub access: Option<PathBuf>,
    /// With --microcode: write the derived timing model (a model deriving
    /// from --model) to FILE, for --model of estimate, validate and calibrate.
    #[arg(long, value_name = "FILE", requires = "microcode")]
    pub out: Option<PathBuf>,
    /// Override a model parameter, e.g. --param r=3 --param w=5 (repeatable).
    #[arg(long = "param", value_name = "NAME=VALUE")]
    pub params: Vec<String>,
    /// Output format.
    #[arg(long, value_enum, default_value_t = TableFormat::Csv)]
    pub format: TableFormat,
}

/// What `jopcal table` prints: the table, and notes for the terminal.
pub struct TableShown {
    pub text: String,
    pub notes: Vec<String>,
}

/// The model's table, or with `microcode` the derived one beside it (and
/// the derived model written to `out`).
pub fn show(firmware: Option<&Path>, a: &TableRequest) -> Result<TableShown> {
    let format = match a.format {
        TableFormat::Csv => Format::Csv,
        TableFormat::Md => Format::Markdown,
        TableFormat::Tex => Format::Latex,
    };
    let Some(source) = &a.microcode else {
        let text = model_table(firmware, a.model.as_deref(), &a.params, format)?;
        return Ok(TableShown {
            text,
            notes: Vec::new(),
        });
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
    let c = compare(firmware, &request, a.out.as_deref(), format)?;
    let mut notes = vec![c.summary];
    if let Some(out) = &a.out {
        microcode::write(&c.table.derived, out)?;
        notes.push(format!("wrote {}", out.display()));
    }
    Ok(TableShown { text: c.text, notes })
}
