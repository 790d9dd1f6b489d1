//! The board target: `jopcal upload`, and `jopcal run --target board`, which
//! downloads each image, captures its result lines (each stored durably as
//! it arrives) and keeps the raw bytes of every attempt in `logs/`.

use crate::cli::{BoardArgs, UploadArgs};
use crate::commands::run::Measured;
use crate::progress::Progress;
use anyhow::{anyhow, bail, Context, Result};
use jopcal_link::capture::CaptureOptions;
use jopcal_link::session::{drain_stale, run_image, SessionOptions};
use jopcal_link::{download, DownloadOptions, JopImage};
use jopcal_measure::result_line::ResultLine;
use jopcal_measure::{atomic, Measurement, MeasurementWriter, OutDir, Unit};
use sha2::{Digest, Sha256};
use std::cell::Cell;
use std::collections::BTreeSet;
use std::path::Path;
use std::time::Duration;

pub fn upload(a: &UploadArgs) -> Result<()> {
    let image = JopImage::load(&a.image, None).map_err(|e| anyhow!(e))?;
    let mut link = jopcal_link::open(&a.port, a.baud, a.dtr_rts).map_err(|e| anyhow!(e))?;
    let stale = drain_stale(
        link.as_mut(),
        a.protocol,
        Duration::from_millis(300),
        Duration::from_secs(10),
    )
    .map_err(|e| anyhow!("{}: {e}", link.describe()))?;
    if !stale.is_empty() {
        eprintln!(
            "    upload note: read away {} bytes of earlier output before the download",
            stale.len()
        );
    }
    let report = download(link.as_mut(), &image, &DownloadOptions::new(a.protocol))
        .map_err(|e| anyhow!("{}: {e}", link.describe()))?;
    for n in &report.notes {
        eprintln!("    upload note: {n}");
    }
    let secs = report.elapsed.as_secs_f64().max(1e-9);
    eprintln!(
        "    upload {} words ({} bytes) over {} with the {} protocol in {secs:.3} s ({:.0} bytes/s); the board accepted it",
        image.words.len(),
        report.bytes,
        link.describe(),
        a.protocol,
        report.bytes as f64 / secs
    );
    Ok(())
}

/// How a target's line behaves between two runs.
#[derive(Debug, Clone, Copy)]
pub struct LineHabits {
    /// Silence the line must show before a download (stale output of a board still printing).
    pub quiet: Duration,
    /// How long after `@jopcal done` JOP's trailing `JVM exit!` is awaited.
    pub exit_wait: Duration,
}

/// A real board: it may still print from an earlier run, and JOP prints
/// `JVM exit!` right after `main` returns.
pub const REAL_BOARD: LineHabits = LineHabits {
    quiet: Duration::from_millis(300),
    exit_wait: Duration::from_secs(1),
};

/// The session settings for `a`.
fn session(a: &BoardArgs, total: Duration, habits: LineHabits) -> SessionOptions {
    let line_timeout = Duration::from_secs(a.line_timeout);
    SessionOptions {
        download: DownloadOptions::new(a.protocol),
        capture: CaptureOptions {
            line_timeout,
            total_timeout: total,
            require_check: true,
            exit_wait: habits.exit_wait.min(line_timeout),
        },
        retries: a.retries,
        configure: a.configure.clone(),
        quiet: habits.quiet,
        quiet_limit: Duration::from_secs(10),
    }
}

/// Runs every image of `a` on the board into `out`.
pub fn measure_board(
    a: &BoardArgs,
    out: &Path,
    stamp: &str,
    timeout: u64,
    target: &str,
    config_note: Option<&str>,
    habits: LineHabits,
) -> Result<Measured> {
    let port = a
        .port
        .as_deref()
        .context("--target board needs --port DEV or --port tcp://HOST:PORT")?;
    if a.images.is_empty() {
        bail!("--target board needs at least one --image FILE.jop");
    }
    let images: Vec<(String, JopImage, String)> = a
        .images
        .iter()
        .map(|p| {
            let img = JopImage::load(p, None).map_err(|e| anyhow!(e))?;
            let text = std::fs::read(p).with_context(|| format!("reading {}", p.display()))?;
            let hash = format!("{:x}", Sha256::digest(&text));
            let stem = p
                .file_stem()
                .map_or("image".into(), |s| s.to_string_lossy().into_owned());
            Ok((stem, img, hash[..16].to_string()))
        })
        .collect::<Result<_>>()?;
    let out = OutDir::prepare(out, stamp).with_context(|| format!("preparing {}", out.display()))?;
    if let Some(old) = &out.archived {
        eprintln!(
            "     note: the earlier run in {} was moved to {}",
            out.path.display(),
            old.display()
        );
    }
    let mut link = jopcal_link::open(port, a.baud, a.dtr_rts).map_err(|e| anyhow!(e))?;
    let mut writer = MeasurementWriter::create(&out.path)
        .with_context(|| format!("creating measurements in {}", out.path.display()))?;
    let target_config = match config_note {
        Some(note) => format!("{note} over {} ({})", link.describe(), a.protocol),
        None => format!("{} {}", link.describe(), a.protocol),
    };
    let opts = session(a, Duration::from_secs(timeout), habits);
    let progress = Progress::new("measure", images.len() as u64);
    let mut rows: Vec<Measurement> = Vec::new();
    let mut failures = Vec::new();
    for (stem, image, hash) in &images {
        progress.working_on(stem);
        let mut seen: BTreeSet<String> = BTreeSet::new();
        // Attempts finished so far; results arrive during attempt `done + 1`.
        let done = Cell::new(0u32);
        let log_rel = |k: u32| format!("logs/{stem}-attempt{k}.log");
        let mut on_result = |r: &ResultLine| -> Result<(), String> {
            let ResultLine::Result {
                bench,
                iterations,
                cycles,
                ..
            } = r
            else {
                return Ok(());
            };
            // A retry may report a result again: keep the first.
            if !seen.insert(bench.clone()) {
                return Ok(());
            }
            let m = Measurement {
                benchmark: bench.clone(),
                iterations: *iterations,
                cycles: *cycles,
                unit: Unit::Cycles,
                ..Measurement::stamped(target, &target_config, hash, &log_rel(done.get() + 1))
            };
            writer
                .append(&m)
                .map_err(|e| format!("appending to {}: {e}", writer.partial_path().display()))?;
            progress.finished(&format!("{bench}: {} cycles", m.cycles));
            rows.push(m);
            Ok(())
        };
        let header = format!("image {stem} on {port}, {} protocol", a.protocol);
        let mut log_err: Option<String> = None;
        let mut on_attempt = |att: &jopcal_link::session::Attempt| {
            done.set(att.number);
            let path = out.join(log_rel(att.number));
            if let Err(e) = atomic::write_atomic(&path, &att.log_bytes(&header)) {
                log_err = Some(format!("cannot write {}: {e}", path.display()));
            }
            if let Some(v) = &att.verdict {
                eprintln!("     {stem} attempt {}: {v}", att.number);
            }
        };
        let outcome = run_image(link.as_mut(), image, &opts, &mut on_result, &mut on_attempt);
        if let Some(e) = log_err {
            bail!(e);
        }
        match outcome {
            Err((attempts, why)) => {
                let log = log_rel(attempts.last().map_or(1, |a| a.number));
                failures.push((stem.clone(), format!("{why} (raw output: {log})")));
            }
            Ok(attempts) if seen.is_empty() => {
                let last = attempts.last();
                let text = last
                    .and_then(|a| a.captured.as_ref())
                    .map(|c| String::from_utf8_lossy(&c.raw).into_owned())
                    .unwrap_or_default();
                let log = log_rel(last.map_or(1, |a| a.number));
                // The JOP tree's own harness: it prints milliseconds, not cycles.
                match jopcal_measure::tree_output::scan(&text) {
                    Ok(reports) if !reports.is_empty() => {
                        for r in reports {
                            let m = Measurement {
                                benchmark: stem.clone(),
                                cycles: r.ms,
                                unit: Unit::Ms,
                                ..Measurement::stamped(target, &target_config, hash, &log)
                            };
                            writer.append(&m)?;
                            progress.finished(&format!("{stem}: {} ms (the tree's own harness: not cycles)", r.ms));
                            rows.push(m);
                        }
                        continue;
                    }
                    Err(e) => {
                        failures.push((stem.clone(), format!("{log} {e}")));
                        continue;
                    }
                    Ok(_) => {}
                }
                // The run ended by itself but measured nothing: say what it printed last.
                let line = text
                    .lines()
                    .rev()
                    .map(str::trim)
                    .find(|l| !l.is_empty() && *l != "JVM exit!" && !l.starts_with("@jopcal done"))
                    .unwrap_or("nothing");
                let log = log_rel(last.map_or(1, |a| a.number));
                failures.push((
                    stem.clone(),
                    format!("the run printed no result line; last output: {line} (raw output: {log})"),
                ));
            }
            Ok(_) => {}
        }
    }
    progress.done();
    let csv = writer.finish().context("publishing measurements.csv")?;
    Ok(Measured {
        out,
        csv,
        rows,
        failures,
    })
}
