//! A timing table derived from a JOP microcode source (`jopcal_jop::microcode`)
//! with the calibration files it needs (the base table, the memory
//! interface's access timing), found as every calibration file is: shared by
//! `jopcal table --microcode` and `validate`.

use crate::locate;
use anyhow::{Context, Result};
use jopcal_jop::microcode::table::{from_source, Derived};
use jopcal_jop::microcode::AccessTiming;
use jopcal_measure::atomic;
use jopcal_timing::TimingModel;
use std::path::Path;

/// What to derive from, and with what.
pub struct Request<'a> {
    /// The microcode source (a tree's `asm/src/jvm.asm`).
    pub source: &'a Path,
    /// Preprocessor names the tree's build defines.
    pub defines: &'a [String],
    /// The base table (default: `calibration/jop-devel.toml`).
    pub model: Option<&'a Path>,
    /// `NAME=VALUE` overrides of the base table's parameters.
    pub params: &'a [String],
    /// `NAME=VALUE` facts of the target (its serial line's `serial_char`)
    /// that the table takes where its base declares the parameter.
    pub target_params: &'a [String],
    /// The access timing (default: `calibration/jop-microcode.toml`).
    pub access: Option<&'a Path>,
    /// What to do when the access timing is missing.
    pub access_remedy: &'a str,
    /// What derives it, for the table's header (e.g. "`jopcal table --microcode`").
    pub made_by: &'a str,
}

/// The derived table and the base it derives from.
pub struct Table {
    pub derived: Derived,
    pub base: TimingModel,
}

/// Derives the table of `r` (calibration files beside `firmware`).
pub fn derive(firmware: Option<&Path>, r: &Request) -> Result<Table> {
    let base_path = locate::calibration_path(
        r.model,
        firmware,
        "jop-devel.toml",
        "the JOP tree's timing table",
        "pass --model FILE",
    )?;
    let mut base = TimingModel::load(&base_path)?;
    let declared = |p: &&String| {
        p.split_once('=')
            .is_some_and(|(n, _)| base.params().contains_key(n.trim()))
    };
    let params: Vec<String> = r
        .params
        .iter()
        .cloned()
        .chain(r.target_params.iter().filter(declared).cloned())
        .collect();
    base.apply_overrides(&params)?;
    let access_path = locate::calibration_path(
        r.access,
        firmware,
        "jop-microcode.toml",
        "the memory interface's access timing",
        r.access_remedy,
    )?;
    let access = AccessTiming::load(&access_path)?;
    let base_abs = std::fs::canonicalize(&base_path).unwrap_or(base_path);
    let header = vec![
        format!("Derived by {} from {}", r.made_by, r.source.display()),
        format!(
            "(defines: {}), with the memory access timing of {}.",
            if r.defines.is_empty() {
                "none".to_string()
            } else {
                r.defines.join(", ")
            },
            access_path.display()
        ),
        "Each bytecode costs its microcode path's cycles (the worst path where".into(),
        "there are several; paths that raise an exception do not count); what".into(),
        "the microcode cannot time keeps the base model's entry.".into(),
    ];
    let mut derived = from_source(r.source, r.defines, &access, &base, &base_abs, &header)?;
    // The parameters it was derived at (a target's wait states) are the
    // table's own: its formulas in r and w are priced at them wherever it is
    // loaded, not at the base's.
    if !params.is_empty() {
        derived
            .toml
            .push_str("\n# The parameters this table was derived at.\n[params]\n");
        for p in &params {
            if let Some((name, value)) = p.split_once('=') {
                derived.toml.push_str(&format!("{} = {}\n", name.trim(), value.trim()));
            }
        }
    }
    Ok(Table { derived, base })
}

/// Writes the derived model to `path`, after checking that it loads there.
pub fn write(derived: &Derived, path: &Path) -> Result<()> {
    TimingModel::parse(&derived.toml, path)
        .context("the table derived from the microcode does not load (a jopcal bug)")?;
    atomic::write_atomic(path, derived.toml.as_bytes()).with_context(|| format!("{}: cannot write", path.display()))
}
