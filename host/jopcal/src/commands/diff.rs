//! `jopcal diff`: one image on two targets (`jopcal_pipeline::diff`).

use crate::cli::{DiffArgs, DiffTarget};
use anyhow::{anyhow, bail, Result};
use jopcal_pipeline::diff::{DiffOptions, Side};
use jopcal_pipeline::Session;

pub fn diff(s: Session, a: &DiffArgs) -> Result<()> {
    let targets = match a.targets.as_slice() {
        [] => vec![DiffTarget::Emu, DiffTarget::Verilator],
        [x, y] => vec![*x, *y],
        _ => bail!("--target: give two targets, or none for emu against verilator"),
    };
    let mut sides = Vec::new();
    for t in targets {
        sides.push(match t {
            DiffTarget::Emu => {
                let (cfg, label) = emu_side(s, a)?;
                Side::Emu {
                    cfg: Box::new(cfg),
                    label,
                }
            }
            DiffTarget::Verilator => Side::Verilator {
                sim: a.sim.clone().ok_or_else(|| {
                    anyhow!("--target verilator needs --sim DIR (a bench from `jopcal sim build --preload`)")
                })?,
                args: a.sim_args.clone(),
            },
        });
    }
    let opts = DiffOptions {
        image: a.image.clone(),
        link_map: a.link_map.clone(),
        sides: sides.try_into().map_err(|_| anyhow!("two sides"))?,
        timeout: std::time::Duration::from_secs(a.timeout),
        keep: a.keep.clone(),
    };
    let report = jopcal_pipeline::diff::diff(s, &opts)?;
    for l in &report.lines {
        println!("{l}");
    }
    if !report.equal() {
        bail!("{}: the two runs differ", a.image.display());
    }
    Ok(())
}

/// The virtual board: the bench's processor (or the tree's default top),
/// JopSim's timing when asked, or the table given.
fn emu_side(s: Session, a: &DiffArgs) -> Result<(jopcal_emu::BoardConfig, String)> {
    use jopcal_pipeline::processor::{image_board, EmuTiming, ImageBoard};
    let (cfg, _) = image_board(
        s,
        &ImageBoard {
            timing: a.emu_timing,
            config: a.emu_config.as_deref(),
            top: None,
            generics: &[],
            sim: a.sim.as_deref(),
            params: &a.emu_params,
        },
    )?;
    let label = match (a.emu_config.as_deref(), a.emu_timing) {
        (Some(p), _) => format!("emu ({})", p.file_name().unwrap_or_default().to_string_lossy()),
        (None, EmuTiming::Jopsim) => "emu (jopsim)".into(),
        (None, EmuTiming::Processor) => "emu (processor)".into(),
    };
    Ok((cfg, label))
}
