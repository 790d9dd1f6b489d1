//! Explaining: why each benchmark's estimate and measurement part, from the
//! files a validate run wrote (profiles, measurements, the target's logs);
//! `validate` writes the same as `explain.md` and `explain.json`.

use crate::{locate, Session};
use anyhow::{anyhow, bail, Context, Result};
use jopcal_measure::measurements::{self, Measurement};
use jopcal_measure::target_counts::{parse_jopsim, TargetCounts};
use jopcal_measure::{atomic, Unit};
use jopcal_profile::Profile;
use jopcal_report::explain::{explain as take_apart, Explanation};
use jopcal_timing::cache::CacheMode;
use jopcal_timing::TimingModel;
use std::path::{Path, PathBuf};

/// What `jopcal explain` takes apart, and how (the verb's arguments as they are).
#[derive(Debug, Clone, Default, clap::Args)]
pub struct ExplainOptions {
    /// A directory `jopcal validate` wrote (measurements.csv, profiles/, logs/).
    #[arg(value_name = "DIR")]
    pub dir: PathBuf,
    /// Only these benchmarks (repeatable; default: all).
    #[arg(long = "bench", value_name = "NAME")]
    pub benches: Vec<String>,
    /// Timing model (default: the one the run's estimates.json names, else calibration/jop-wcet.toml).
    #[arg(long, value_name = "FILE")]
    pub model: Option<PathBuf>,
    /// Override a model parameter, e.g. --param r=3 (repeatable).
    #[arg(long = "param", value_name = "NAME=VALUE")]
    pub params: Vec<String>,
    /// Method-cache mode (default: the cache the target reported, else fifo:1024:16).
    #[arg(long, value_name = "MODE")]
    pub cache: Option<String>,
    /// Also write the explanation to FILE.md and FILE.json beside it (both must be new files).
    #[arg(long, value_name = "FILE.md")]
    pub out: Option<PathBuf>,
}

/// The explanation of `a.dir` as Markdown (also written to `a.out` with its
/// JSON, when given).
pub fn explain(s: Session, a: &ExplainOptions) -> Result<String> {
    let dir = &a.dir;
    let csv = dir.join("measurements.csv");
    if !csv.is_file() {
        bail!(
            "{}: no measurements.csv (explain reads a directory `jopcal validate` wrote)",
            dir.display()
        );
    }
    let rows = measurements::read(&csv).map_err(|e| anyhow!("{}: {e}", csv.display()))?;
    let mut profiles = jopcal_profile::read_dir(&dir.join("profiles")).map_err(|e| anyhow!(e))?;
    crate::heap::attach(&mut profiles, &crate::heap::heap_starts(&csv)?);
    let model_path = match &a.model {
        Some(m) => locate::named_table(m, s.firmware)?,
        None => recorded_model(dir).map_or_else(|| locate::model_path(None, s.firmware), Ok)?,
    };
    let mut model = TimingModel::load(&model_path)?;
    model.apply_overrides(&a.params)?;
    let mode = match &a.cache {
        Some(c) => c.parse::<CacheMode>().map_err(|e| anyhow!("--cache {c}: {e}"))?,
        None => reported_cache(dir, &rows)?.unwrap_or_else(|| "fifo:1024:16".parse().expect("a valid mode")),
    };
    let chosen: Vec<&Profile> = profiles
        .iter()
        .filter(|p| a.benches.is_empty() || a.benches.contains(&p.benchmark))
        .collect();
    if let Some(missing) = a.benches.iter().find(|b| !profiles.iter().any(|p| &p.benchmark == *b)) {
        bail!(
            "--bench {missing}: no profile of it in {}",
            dir.join("profiles").display()
        );
    }
    if let Some(out) = &a.out {
        jopcal_measure::new_file::ensure_new("--out", out, &[out.with_extension("json")])?;
    }
    let xs = explanations(&chosen, &model, mode, &rows, dir)?;
    let md = markdown(&xs, &model_path);
    if let Some(out) = &a.out {
        write(&xs, &md, out)?;
        s.say(&format!("   explain wrote {} and its .json", out.display()));
    }
    Ok(md)
}

/// The model file `estimates.json` names, if the run wrote one that still exists.
fn recorded_model(dir: &Path) -> Option<PathBuf> {
    let file = jopcal_report::breakdown::EstimatesFile::read(&dir.join("estimates.json")).ok()?;
    let p = PathBuf::from(file.model_file);
    p.is_file().then_some(p)
}

/// The method cache the target reported: in `target.json`, else in its log
/// (JopSim's statistics), if anywhere.
fn reported_cache(dir: &Path, rows: &[Measurement]) -> Result<Option<CacheMode>> {
    let recorded = crate::measure::read_target_facts(dir)?.and_then(|f| f.method_cache);
    if let Some(c) = recorded {
        return c.parse().map(Some).map_err(|e: jopcal_timing::CacheModeError| {
            anyhow!("{}: method cache {c}: {e}", dir.join("target.json").display())
        });
    }
    for r in rows {
        let Ok(text) = std::fs::read_to_string(dir.join(&r.log)) else {
            continue;
        };
        if let Some(c) = jopcal_targets::jopsim::reported_cache(&text) {
            return c
                .parse()
                .map(Some)
                .map_err(|e: jopcal_timing::CacheModeError| anyhow!("{}: method cache {c}: {e}", r.log));
        }
    }
    Ok(None)
}

/// One explanation per profile: its estimate under `model` and `mode`
/// against the mean of its measurements in cycles and the counts its
/// target's log holds.
pub fn explanations(
    profiles: &[&Profile],
    model: &TimingModel,
    mode: CacheMode,
    rows: &[Measurement],
    dir: &Path,
) -> Result<Vec<Explanation>> {
    // The run's fitted table, where it made one: what it changed names causes.
    let fitted = dir.join("calibrated.toml");
    let fitted = if fitted.is_file() {
        TimingModel::load(&fitted).ok()
    } else {
        None
    };
    let mut xs = Vec::new();
    for p in profiles {
        let mine: Vec<&Measurement> = rows
            .iter()
            .filter(|r| r.benchmark == p.benchmark && r.unit == Unit::Cycles)
            .collect();
        let measured = mean(&mine.iter().map(|r| r.value as f64).collect::<Vec<_>>());
        let counts = match mine.first() {
            Some(r) => counts_in(dir, &r.log)?,
            None => None,
        };
        let e = jopcal_timing::estimate::estimate(p, model, mode);
        let mut x = take_apart(&e, p, model, measured, counts.as_ref());
        x.findings.extend(clock_finding(dir, p)?.map(|(_, what)| what));
        if let (Some(f), Some(m)) = (&fitted, measured) {
            x.findings.extend(fitted_causes(p, model, mode, f, e.cycles, m));
        }
        let trace = dir.join("traces").join(format!("{}.methods.csv", p.benchmark));
        if trace.is_file() {
            x.compare_methods(&e, p, &read_trace(&trace)?);
        }
        xs.push(x);
    }
    Ok(xs)
}

/// The parameters the run's fitted table `fitted` set otherwise than
/// `model` (wait states, the Java routines' own costs, ...), each priced
/// alone: the estimate of `p` with that one parameter at its fitted value,
/// against `estimate`, as a share of the gap to `measured`; the largest
/// three, where each moves the estimate by at least 1% of the gap. The
/// cause in the processor's terms: "memory reads take 3 wait states where
/// the table says 1".
fn fitted_causes(
    p: &Profile,
    model: &TimingModel,
    mode: CacheMode,
    fitted: &TimingModel,
    estimate: f64,
    measured: f64,
) -> Vec<String> {
    let gap = measured - estimate;
    if gap.abs() < 0.0005 * measured {
        return Vec::new();
    }
    let mut moved: Vec<(f64, String)> = fitted
        .params()
        .iter()
        .filter_map(|(name, &v)| {
            let was = *model.params().get(name)?;
            if (v - was).abs() < 1e-9 {
                return None;
            }
            let mut alone = model.clone();
            alone.apply_overrides(&[format!("{name}={v}")]).ok()?;
            let d = jopcal_timing::estimate::estimate(p, &alone, mode).cycles - estimate;
            (d.abs() >= 0.01 * gap.abs()).then(|| {
                let meaning = match name.as_str() {
                    "r" => " (the memory's read wait states)",
                    "w" => " (the memory's write wait states)",
                    n if n.starts_with("impl_") => " (the own cost of a bytecode JOP runs in Java)",
                    _ => "",
                };
                (
                    d,
                    format!(
                        "the fitted table (calibrated.toml) sets {name}{meaning} to {} where this table has {}: that alone moves the estimate by {}{} cycles, {:.0}% of the gap",
                        jopcal_timing::file::number(v),
                        jopcal_timing::file::number(was),
                        if d >= 0.0 { "+" } else { "\u{2212}" },
                        jopcal_report::number::thousands(d.abs()),
                        100.0 * d / gap
                    ),
                )
            })
        })
        .collect();
    moved.sort_by(|a, b| b.0.abs().total_cmp(&a.0.abs()));
    moved.into_iter().take(3).map(|(_, t)| t).collect()
}

/// What `p`'s reads of the clock were in the run in `dir`, in words
/// ([`jopcal_report::explain::clock_reads`]), and whether its host profile
/// read the target's values (kept in the run, [`crate::clocks::target_clock`]);
/// `None` when its region reads no clock.
pub(crate) fn clock_finding(dir: &Path, p: &Profile) -> Result<Option<(bool, String)>> {
    let replayed = crate::clocks::target_clock(dir, &p.benchmark)?.map(|v| v.len());
    Ok(jopcal_report::explain::clock_reads(p, replayed).map(|what| (replayed.is_some(), what)))
}

/// A virtual board's per-method trace (`<bench>.methods.csv`): method,
/// calls, exclusive cycles.
fn read_trace(path: &Path) -> Result<Vec<jopcal_report::explain::TracedMethod>> {
    let mut rd = csv::Reader::from_path(path).with_context(|| format!("{}: cannot read", path.display()))?;
    let mut rows = Vec::new();
    for (i, rec) in rd.records().enumerate() {
        let rec = rec.map_err(|e| anyhow!("{}: {e}", path.display()))?;
        let field = |k: usize| rec.get(k).unwrap_or("");
        let bad = |what: &str| anyhow!("{}:{}: {what} is not a whole number", path.display(), i + 2);
        let calls = field(1).parse().map_err(|_| bad("calls"))?;
        let cycles = field(2).parse().map_err(|_| bad("exclusive_cycles"))?;
        // (Empty where the target does not see its method cache.)
        let loads = match field(5) {
            "" => None,
            l => Some(l.parse().map_err(|_| bad("cache_loads"))?),
        };
        rows.push(jopcal_report::explain::TracedMethod {
            name: field(0).to_string(),
            calls,
            cycles,
            loads,
        });
    }
    Ok(rows)
}

/// The mean, as the accuracy table takes it.
fn mean(v: &[f64]) -> Option<f64> {
    (!v.is_empty()).then(|| v.iter().sum::<f64>() / v.len() as f64)
}

/// JopSim's statistics in a run's log (`log` relative to `dir`), if it has them.
fn counts_in(dir: &Path, log: &str) -> Result<Option<TargetCounts>> {
    if log.is_empty() {
        return Ok(None);
    }
    let path = dir.join(log);
    let Ok(text) = std::fs::read_to_string(&path) else {
        return Ok(None);
    };
    // The whole log: the command and stderr around JopSim's stdout match none of its statistics.
    parse_jopsim(&text).map_err(|e| anyhow!("{}:{}: {}", path.display(), e.line, e.message))
}

/// Every explanation as one Markdown document.
pub fn markdown(xs: &[Explanation], model_path: &Path) -> String {
    let mut s = format!(
        "# Why the estimates and the measurements part\n\nTiming model {}. `jopcal explain DIR` writes this again, with another `--model` or `--cache` if asked.\n\n",
        model_path.display()
    );
    for x in xs {
        s.push_str(&x.to_markdown());
    }
    s
}

/// `md` as `out` and the explanations as JSON beside it, each atomically.
pub fn write(xs: &[Explanation], md: &str, out: &Path) -> Result<()> {
    atomic::write_atomic(out, md.as_bytes()).with_context(|| format!("writing {}", out.display()))?;
    let json = out.with_extension("json");
    let text = serde_json::to_string_pretty(xs)? + "\n";
    atomic::write_atomic(&json, text.as_bytes()).with_context(|| format!("writing {}", json.display()))
}
