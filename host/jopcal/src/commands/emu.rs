//! `jopcal emu`: serve the virtual board on a pseudo-terminal, run a bundle,
//! write a bundle (measuring on it is `jopcal_targets::emu`).

use crate::cli::EmuArgs;
use anyhow::{anyhow, bail, Context, Result};
use jopcal_emu::board::write_trace;
use jopcal_emu::{run_bundle, BoardConfig, Bundle, EmuProgram};
use jopcal_link::board::LoaderOptions;
use jopcal_link::fault::FaultPlan;
use jopcal_link::peer::{serve, BoardLog};
use jopcal_link::{JopImage, PseudoTerminal};
use jopcal_measure::atomic;
use jopcal_pipeline::locate as context;
use jopcal_pipeline::processor::{EmuTiming, ImageBoard};
use jopcal_pipeline::Session;
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;
use std::sync::{Arc, Mutex};

fn load_config(
    firmware: Option<&Path>,
    explicit: Option<&Path>,
    params: &[String],
    limit: Option<u64>,
    for_images: bool,
) -> Result<BoardConfig> {
    let path = if for_images {
        context::image_config_path(explicit, firmware)?
    } else {
        context::emu_config_path(explicit, firmware)?
    };
    let mut cfg = BoardConfig::load(&path, params).map_err(|e| anyhow!(e))?;
    if let Some(l) = limit {
        cfg.cycle_limit = l;
    }
    Ok(cfg)
}

pub fn emu(s: Session, a: &EmuArgs) -> Result<()> {
    let firmware = s.firmware;
    if let Some(dir) = &a.classes {
        let main = a.main.as_deref().expect("clap requires --main");
        let out = a.out.as_deref().expect("clap requires --out");
        let bundle = Bundle::from_dir(dir, main).map_err(|e| anyhow!(e))?;
        if bundle.classes.is_empty() {
            bail!("{}: no .class files", dir.display());
        }
        atomic::write_atomic(out, bundle.to_image().to_text().as_bytes())
            .with_context(|| format!("writing {}", out.display()))?;
        eprintln!("       emu bundle of {} class files, main {main}", bundle.classes.len());
        println!("{}", out.display());
        return Ok(());
    }
    if let Some(image) = &a.run {
        let img = JopImage::load(image, None).map_err(|e| anyhow!(e))?;
        if !Bundle::is_bundle(&img) {
            let mut cfg = image_board(s, a)?;
            if let Some(l) = a.cycle_limit {
                cfg.cycle_limit = l;
            }
            return run_jop_image(image, &img, &cfg, a.trace.as_deref());
        }
        let cfg = load_config(firmware, a.config.as_deref(), &a.params, a.cycle_limit, false)?;
        let bundle = Bundle::from_image(&img).map_err(|e| anyhow!("{}: {e}", image.display()))?;
        let mut stdout = std::io::stdout();
        let trace = a.trace.clone();
        let report = run_bundle(
            &bundle,
            &cfg,
            a.trace.is_some(),
            &mut |b| {
                use std::io::Write;
                stdout.write_all(b)?;
                stdout.flush()
            },
            &mut |r| match &trace {
                Some(dir) => {
                    std::fs::create_dir_all(dir)?;
                    write_trace(r, &dir.join("run1"))
                }
                None => Ok(()),
            },
        )?;
        eprintln!(
            "       emu {} cycles in {:.3} s ({:.0} M cycles/s)",
            report.cycles,
            report.wall.as_secs_f64(),
            report.cycles as f64 / report.wall.as_secs_f64().max(1e-9) / 1e6
        );
        return report.exit.map(|_| ()).map_err(|e| anyhow!(e));
    }
    let cfg = load_config(firmware, a.config.as_deref(), &a.params, a.cycle_limit, false)?;
    if !a.pty {
        bail!("say what to do: --pty (serve downloads), --run FILE.jop, or --classes DIR --main CLASS --out FILE.jop");
    }
    let plan: FaultPlan = a
        .fault
        .as_deref()
        .unwrap_or("")
        .parse()
        .map_err(|e: jopcal_link::SettingError| anyhow!(e))?;
    let pty = PseudoTerminal::open().map_err(|e| anyhow!(e))?;
    println!("{}", pty.path);
    use std::io::Write;
    std::io::stdout().flush()?;
    // Without --config, a JOP tree's image runs on the tree's processor
    // (where there is a tree), else with the tree's JopSim table.
    let image_cfg = match a.config {
        Some(_) => None,
        None => Some(match image_board(s, a) {
            Ok(mut cfg) => {
                if let Some(l) = a.cycle_limit {
                    cfg.cycle_limit = l;
                }
                cfg
            }
            Err(_) if a.timing == EmuTiming::Processor && a.sim.is_none() => {
                load_config(firmware, None, &a.params, a.cycle_limit, true)?
            }
            Err(e) => return Err(e),
        }),
    };
    let mut program = EmuProgram {
        cfg,
        image_cfg,
        known: Default::default(),
        trace_dir: a.trace.clone(),
        names: Vec::new(),
        reports: Vec::new(),
    };
    let log = Arc::new(Mutex::new(BoardLog::default()));
    serve(
        pty.board,
        LoaderOptions::new(a.protocol),
        &mut program,
        plan,
        a.seed,
        Arc::new(AtomicBool::new(false)),
        log.clone(),
    );
    let l = log.lock().map_err(|_| anyhow!("board log poisoned"))?;
    bail!("the line ended: {}", l.ended.clone().unwrap_or_default())
}

/// Runs a JOP tree's linked image on the virtual board, its output to
/// stdout; with `--trace DIR`, per-method cycles named from the link map
/// beside the image (`<image>.link.txt`).
fn run_jop_image(path: &Path, image: &JopImage, cfg: &BoardConfig, trace: Option<&Path>) -> Result<()> {
    use std::io::Write;
    let map_path = PathBuf::from(format!("{}.link.txt", path.display()));
    let link_map = match std::fs::read_to_string(&map_path) {
        Ok(text) => {
            Some(jopcal_jop::linkmap::LinkMap::parse(&text).map_err(|e| anyhow!("{}:{e}", map_path.display()))?)
        }
        Err(_) => None,
    };
    let mut stdout = std::io::stdout();
    let report = jopcal_emu::run_jop_image(
        image,
        cfg,
        trace.is_some(),
        link_map.as_ref(),
        &mut |b| {
            stdout.write_all(b)?;
            stdout.flush()
        },
        &mut |r| match trace {
            Some(dir) => {
                std::fs::create_dir_all(dir)?;
                write_trace(r, &dir.join("run1"))
            }
            None => Ok(()),
        },
    )?;
    let wall = report.wall.as_secs_f64().max(1e-9);
    let Some((bytecodes, cache)) = report.image_counts else {
        return report.exit.map(|_| ()).map_err(|e| anyhow!("{}: {e}", path.display()));
    };
    eprintln!(
        "       emu {} cycles in {wall:.3} s ({:.0} M cycles/s); since the statistics reset: {bytecodes} bytecodes; method cache loads {cache} cycles",
        report.cycles,
        report.cycles as f64 / wall / 1e6
    );
    report.exit.map(|_| ()).map_err(|e| anyhow!("{}: {e}", path.display()))
}

/// The board for a tree's images: the processor (or JopSim's timing, or `--config`).
fn image_board(s: Session, a: &EmuArgs) -> Result<BoardConfig> {
    let (cfg, _) = jopcal_pipeline::processor::image_board(
        s,
        &ImageBoard {
            timing: a.timing,
            config: a.config.as_deref(),
            top: a.top.as_deref(),
            sim: a.sim.as_deref(),
            params: &a.params,
        },
    )?;
    Ok(cfg)
}
