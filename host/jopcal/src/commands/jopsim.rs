//! `jopcal run --target jopsim`: every workload is built into a .jop image by
//! the JOP tree's own toolchain (the `build` template of jopcal.toml), then
//! run by the tree's simulator (the `jopsim` template) as a subprocess; its
//! output is read for `@jopcal` result lines like a board's and kept as the
//! raw log. JopSim is not cycle exact; its rows say so in `target`.

use crate::commands::run::Measured;
use crate::context;
use crate::progress::Progress;
use anyhow::{anyhow, bail, Context, Result};
use jopcal_jop::config::{expand, JopConfig};
use jopcal_measure::{atomic, clock, Measurement, MeasurementWriter, OutDir, Unit};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;
use wait_timeout::ChildExt;

struct Job {
    name: String,
    main: String,
    sources: PathBuf,
}

/// Runs `sh -c cmd` in `dir` with a timeout; Ok((stdout, stderr)) on exit 0.
fn shell(cmd: &str, dir: &Path, timeout: Duration) -> std::result::Result<(String, String), String> {
    let mut child = Command::new("sh")
        .args(["-c", cmd])
        .current_dir(dir)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("cannot run `{cmd}`: {e}"))?;
    let mut out = child.stdout.take().expect("piped");
    let mut err = child.stderr.take().expect("piped");
    let o = std::thread::spawn(move || {
        let mut s = Vec::new();
        let _ = std::io::Read::read_to_end(&mut out, &mut s);
        String::from_utf8_lossy(&s).into_owned()
    });
    let e = std::thread::spawn(move || {
        let mut s = Vec::new();
        let _ = std::io::Read::read_to_end(&mut err, &mut s);
        String::from_utf8_lossy(&s).into_owned()
    });
    let status = match child.wait_timeout(timeout).map_err(|e| e.to_string())? {
        Some(s) => s,
        None => {
            let _ = child.kill();
            let _ = child.wait();
            return Err(format!(
                "`{cmd}` did not finish within {} s (killed)",
                timeout.as_secs()
            ));
        }
    };
    let (stdout, stderr) = (o.join().unwrap_or_default(), e.join().unwrap_or_default());
    if !status.success() {
        let last = stderr
            .lines()
            .chain(stdout.lines())
            .rev()
            .find(|l| !l.trim().is_empty())
            .unwrap_or("")
            .trim()
            .to_string();
        return Err(format!("`{cmd}` failed ({status}): {last}"));
    }
    Ok((stdout, stderr))
}

#[allow(clippy::too_many_arguments)]
pub fn measure_jopsim(
    firmware: Option<&Path>,
    jop_home: Option<&Path>,
    suite: &str,
    benches: &[String],
    out: &Path,
    stamp: &str,
    timeout: u64,
) -> Result<Measured> {
    let cfg: JopConfig = context::jop_config()?.context(
        "--target jopsim needs a jopcal.toml with a [jop] table giving `build`, `image` and `jopsim` templates (see docs/formats.md)",
    )?;
    let need = |v: &Option<String>, key: &str| {
        v.clone().ok_or_else(|| {
            anyhow!(
                "{}: [jop] has no `{key}` template (--target jopsim needs build, image and jopsim)",
                cfg.file.display()
            )
        })
    };
    let (build, image_t, jopsim) = (
        need(&cfg.build, "build")?,
        need(&cfg.image, "image")?,
        need(&cfg.jopsim, "jopsim")?,
    );
    let home = context::jop_home(jop_home)?;
    let jobs: Vec<Job> = match suite {
        "builtin" => {
            let root = context::firmware_dir(firmware)?;
            let s = jopcal_workloads::Suite::load(&root)?;
            s.select(benches)?
                .into_iter()
                .map(|w| Job {
                    name: w.name,
                    main: w.main,
                    sources: root.join("src"),
                })
                .collect()
        }
        "jembench" => {
            let tree = jopcal_jop::tree::JopTree::open(&home).map_err(|e| anyhow!(e))?;
            tree.workloads
                .into_iter()
                .filter(|w| benches.is_empty() || benches.iter().any(|b| b.eq_ignore_ascii_case(&w.name)))
                .map(|w| Job {
                    name: w.name,
                    main: w.main,
                    sources: w.source_root,
                })
                .collect()
        }
        other => bail!("unknown suite `{other}`: the suites are: builtin, jembench"),
    };
    let dir = OutDir::prepare(out, stamp).with_context(|| format!("preparing {}", out.display()))?;
    let mut writer = MeasurementWriter::create(&dir.path)?;
    let progress = Progress::new("measure", jobs.len() as u64);
    let (mut rows, mut failures) = (Vec::new(), Vec::new());
    let limit = Duration::from_secs(timeout);
    for job in &jobs {
        progress.working_on(&job.name);
        let class = job.main.rsplit('.').next().unwrap_or(&job.main).to_string();
        let package_dir = job
            .main
            .rsplit_once('.')
            .map_or(String::new(), |(p, _)| p.replace('.', "/"));
        let mut v: BTreeMap<&str, String> = BTreeMap::from([
            ("home", home.display().to_string()),
            ("main", job.main.clone()),
            ("class", class),
            ("package_dir", package_dir),
            ("name", job.name.clone()),
            ("sources", job.sources.display().to_string()),
            ("out", dir.path.display().to_string()),
        ]);
        let log_rel = format!("logs/{}-jopsim.log", job.name);
        let outcome = (|| -> std::result::Result<Vec<Measurement>, String> {
            let cmd = expand(&build, &v);
            shell(&cmd, &home, limit).map_err(|e| format!("building the image: {e}"))?;
            let image = PathBuf::from(expand(&image_t, &v));
            let image = if image.is_absolute() { image } else { home.join(image) };
            jopcal_link::JopImage::load(&image, None)?;
            v.insert("image", image.display().to_string());
            let cmd = expand(&jopsim, &v);
            let (stdout, stderr) = shell(&cmd, &home, limit)?;
            let text = format!("# command: {cmd}\n# ---- stdout ----\n{stdout}# ---- stderr ----\n{stderr}");
            atomic::write_atomic(&dir.join(&log_rel), text.as_bytes()).map_err(|e| e.to_string())?;
            let t =
                jopcal_measure::transcript::scan(&stdout).map_err(|e| format!("malformed result line: stdout {e}"))?;
            let found: Vec<Measurement> = t
                .results
                .iter()
                .filter_map(|(_, r)| match r {
                    jopcal_measure::ResultLine::Result {
                        bench,
                        iterations,
                        cycles,
                        ..
                    } => Some(Measurement {
                        target: "jopsim".into(),
                        target_config: format!("JopSim via jopcal.toml ({}; not cycle exact)", cfg.file.display()),
                        benchmark: bench.clone(),
                        iterations: *iterations,
                        cycles: *cycles,
                        unit: Unit::Cycles,
                        run: 1,
                        timestamp: clock::now_rfc3339(),
                        tool_version: env!("CARGO_PKG_VERSION").into(),
                        suite_hash: String::new(),
                        log: log_rel.clone(),
                    }),
                    _ => None,
                })
                .collect();
            if found.is_empty() {
                return Err(
                    "the simulator printed no @jopcal result line (JemBench's own harnesses print their own format)"
                        .into(),
                );
            }
            Ok(found)
        })();
        match outcome {
            Ok(found) => {
                for m in found {
                    writer.append(&m)?;
                    progress.finished(&format!("{}: {} cycles (JopSim)", m.benchmark, m.cycles));
                    rows.push(m);
                }
            }
            Err(why) => {
                progress.finished(&format!("{}: FAILED: {why}", job.name));
                failures.push((job.name.clone(), why));
            }
        }
    }
    progress.done();
    let csv = writer.finish()?;
    Ok(Measured {
        out: dir,
        csv,
        rows,
        failures,
    })
}
