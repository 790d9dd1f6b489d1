//! The virtual board: `jopcal emu` (serve on a pseudo-terminal, run a bundle,
//! write a bundle) and `jopcal run --target emu`, which starts the board on a
//! pseudo-terminal in this process and drives it exactly as a real board.

use crate::cli::{BoardArgs, EmuArgs, EmuBoardArgs};
use crate::commands::board::{measure_board, LineHabits};
use crate::commands::run::{keep_images, prepare_host, staging_dir, Measured};
use crate::context;
use anyhow::{anyhow, bail, Context, Result};
use jopcal_emu::board::write_trace;
use jopcal_emu::{run_bundle, BoardConfig, Bundle, EmuProgram};
use jopcal_link::board::LoaderOptions;
use jopcal_link::fault::FaultPlan;
use jopcal_link::peer::{serve, BoardLog};
use jopcal_link::{JopImage, PseudoTerminal};
use jopcal_measure::atomic;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

fn load_config(
    firmware: Option<&Path>,
    explicit: Option<&Path>,
    params: &[String],
    limit: Option<u64>,
) -> Result<BoardConfig> {
    let path = context::emu_config_path(explicit, firmware)?;
    let mut cfg = BoardConfig::load(&path, params).map_err(|e| anyhow!(e))?;
    if let Some(l) = limit {
        cfg.cycle_limit = l;
    }
    Ok(cfg)
}

pub fn emu(firmware: Option<&Path>, a: &EmuArgs) -> Result<()> {
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
    let cfg = load_config(firmware, a.config.as_deref(), &a.params, a.cycle_limit)?;
    if let Some(image) = &a.run {
        let img = JopImage::load(image, None).map_err(|e| anyhow!(e))?;
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
    if !a.pty {
        bail!("say what to do: --pty (serve downloads), --run FILE.jop, or --classes DIR --main CLASS --out FILE.jop");
    }
    let plan: FaultPlan = a
        .fault
        .as_deref()
        .unwrap_or("")
        .parse()
        .map_err(|e: String| anyhow!(e))?;
    let pty = PseudoTerminal::open().map_err(|e| anyhow!(e))?;
    println!("{}", pty.path);
    use std::io::Write;
    std::io::stdout().flush()?;
    let mut program = EmuProgram {
        cfg,
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

/// `jopcal run --target emu`: bundles each selected workload, starts the
/// virtual board on a pseudo-terminal, and measures through the board path.
#[allow(clippy::too_many_arguments)]
pub fn measure_emu(
    firmware: Option<&Path>,
    benches: &[String],
    board: &BoardArgs,
    emu: &EmuBoardArgs,
    out: &Path,
    stamp: &str,
    timeout: u64,
) -> Result<Measured> {
    let cfg_path = context::emu_config_path(emu.emu_config.as_deref(), firmware)?;
    let mut cfg = BoardConfig::load(&cfg_path, &emu.emu_params).map_err(|e| anyhow!(e))?;
    // An endless loop stops at the cycles a board at the configured clock runs in --timeout.
    cfg.cycle_limit = cfg.cycle_limit.min((timeout as f64 * cfg.clock_mhz * 1e6) as u64);
    let setup = prepare_host(firmware, benches)?;
    // The images go into the output directory: a record of exactly what ran.
    let staging = staging_dir(out)?;
    let mut images = Vec::new();
    for w in &setup.selected {
        let bundle = Bundle::from_dir(&setup.built.classes, &w.main).map_err(|e| anyhow!(e))?;
        let path = staging.join(format!("{}.jop", w.name));
        atomic::write_atomic(&path, bundle.to_image().to_text().as_bytes())?;
        images.push(path);
    }
    let pty = PseudoTerminal::open().map_err(|e| anyhow!(e))?;
    let port = pty.path.clone();
    let stop = Arc::new(AtomicBool::new(false));
    let log = Arc::new(Mutex::new(BoardLog::default()));
    let protocol = board.protocol;
    let trace_dir = emu.trace.then(|| out.join("traces"));
    let (s, l) = (stop.clone(), log.clone());
    let names: Vec<String> = setup.selected.iter().map(|w| w.name.clone()).collect();
    let thread = std::thread::spawn(move || {
        let mut program = EmuProgram {
            cfg,
            trace_dir,
            names,
            reports: Vec::new(),
        };
        serve(
            pty.board,
            LoaderOptions::new(protocol),
            &mut program,
            FaultPlan::default(),
            1,
            s,
            l,
        );
    });
    let mut args = board.clone();
    // The virtual board is deterministic and its line cannot drop a byte: a failed run fails again.
    args.retries = 0;
    args.port = Some(port);
    args.images = images;
    let config_note = format!(
        "virtual board {} {}",
        cfg_path.display(),
        if emu.emu_params.is_empty() {
            String::new()
        } else {
            emu.emu_params.join(" ")
        }
    );
    // The virtual board ends every run with `JVM exit!`, however late a busy
    // machine delivers it: the capture waits for it (up to the line timeout),
    // so nothing is left on the line when the next download starts.
    let habits = LineHabits {
        quiet: std::time::Duration::from_millis(20),
        exit_wait: std::time::Duration::MAX,
    };
    let result = measure_board(&args, out, stamp, timeout, "emu", Some(config_note.trim()), habits);
    stop.store(true, Ordering::Relaxed);
    let _ = thread.join();
    let mut m = result?;
    m.failures.splice(0..0, setup.left_out.iter().cloned());
    // Keep the bundles beside the results.
    keep_images(&args.images, &m.out.join("images"))?;
    let _ = std::fs::remove_dir_all(&staging);
    Ok(m)
}
