//! `jopcal sweep`: a suite measured at every point of a cross product of
//! the tree top's generics (the method cache's `jpc_width` and
//! `block_bits`, the memory's `ram_cnt`, ...), on the tree's RTL (one bench
//! built per point, kept in the cache by its inputs) or on the virtual
//! board (the same processor, configured from the same generics), beside
//! the estimator's prediction at each point from one host profile (the
//! processor's table at that point's wait states and method cache).
//! Writes `sweep.csv`, `sweep.md` and a plot; a point that fails is named
//! and the others' results are kept.

use crate::measure::{collect_tasks, measure_on, slurm_tasks, Measure, TargetOptions};
use crate::processor::{processor_table, ProcessorSpec};
use crate::profile::prepare_host;
use crate::{locate, Session};
use anyhow::{anyhow, bail, Result};
use jopcal_launch::slurm::Launcher;
use jopcal_measure::{atomic, clock, Unit};
use jopcal_targets::TargetKind;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// What to sweep.
#[derive(Debug, Clone)]
pub struct SweepOptions {
    /// `verilator` or `emu`.
    pub target: TargetKind,
    /// A tree suite (`jembench`, `jbe`).
    pub suite: String,
    /// Only these benchmarks.
    pub benches: Vec<String>,
    /// Each generic with the values it takes, in the order given.
    pub generics: Vec<(String, Vec<i64>)>,
    /// The tree's Quartus project (default: the one `sim build` uses).
    pub top: Option<String>,
    /// The table the estimator starts from (default: the tree's).
    pub model: Option<PathBuf>,
    /// Seconds one workload may take.
    pub timeout: Option<u64>,
    /// Clock cycles per UART bit of the benches built.
    pub bit_cycles: u32,
    /// Jobs and the rest of the target's options.
    pub on: TargetOptions,
    /// Output directory (default `out/sweep-<time>/`).
    pub out: Option<PathBuf>,
    /// Say what would run (every point, the suite, the table) and stop.
    pub dry_run: bool,
}

/// One point of the sweep: a value for every generic.
pub type Point = Vec<(String, i64)>;

/// Every point of the cross product of `generics`, the last generic varying fastest.
pub fn points(generics: &[(String, Vec<i64>)]) -> Vec<Point> {
    let mut all: Vec<Point> = vec![Vec::new()];
    for (name, values) in generics {
        all = all
            .into_iter()
            .flat_map(|p| {
                values.iter().map(move |v| {
                    let mut q = p.clone();
                    q.push((name.clone(), *v));
                    q
                })
            })
            .collect();
    }
    all
}

/// `jpc_width=10 block_bits=2`: a point in words.
pub fn label(point: &[(String, i64)]) -> String {
    point
        .iter()
        .map(|(n, v)| format!("{n}={v}"))
        .collect::<Vec<_>>()
        .join(" ")
}

/// `jpc_width-10_block_bits-2`: a point as a directory name.
fn dir_name(point: &[(String, i64)]) -> String {
    point
        .iter()
        .map(|(n, v)| format!("{n}-{v}"))
        .collect::<Vec<_>>()
        .join("_")
}

/// One row of `sweep.csv`.
#[derive(Debug, Clone, PartialEq)]
pub struct SweepRow {
    /// The point's generics.
    pub point: Point,
    pub benchmark: String,
    pub measured: u64,
    pub estimated: f64,
}

impl SweepRow {
    pub fn error_pct(&self) -> f64 {
        100.0 * (self.estimated - self.measured as f64) / self.measured as f64
    }
}

/// What a sweep wrote.
#[derive(Debug)]
pub struct Swept {
    /// Its directory.
    pub dir: PathBuf,
    /// `sweep.csv`.
    pub csv: PathBuf,
    pub rows: Vec<SweepRow>,
    /// `(point or benchmark, one-line reason)` of what failed.
    pub failures: Vec<(String, String)>,
    /// A dry run's plan in words (nothing was run or written).
    pub plan: Option<String>,
}

/// Parses `NAME=V1,V2,...` of `--generic`.
pub fn parse_generic_values(s: &str) -> Result<(String, Vec<i64>)> {
    let (name, values) = s
        .split_once('=')
        .ok_or_else(|| anyhow!("--generic {s}: expected NAME=V1,V2,..., e.g. jpc_width=10,11,12"))?;
    let values = values
        .split(',')
        .map(|v| {
            v.trim()
                .parse::<i64>()
                .map_err(|_| anyhow!("--generic {s}: `{v}` is not an integer"))
        })
        .collect::<Result<Vec<_>>>()?;
    if name.trim().is_empty() {
        bail!("--generic {s}: no generic named");
    }
    Ok((name.trim().to_string(), values))
}

/// Runs the sweep `a`.
pub fn sweep(s: Session, a: &SweepOptions) -> Result<Swept> {
    if !matches!(a.target, TargetKind::Emu | TargetKind::Verilator) {
        bail!(
            "sweep runs on --target verilator (the tree's RTL, built per point) or --target emu (the virtual board as that processor), not {}",
            a.target.name()
        );
    }
    if a.generics.is_empty() {
        bail!("sweep needs at least one --generic NAME=V1,V2,... (e.g. --generic jpc_width=10,11,12)");
    }
    for (k, (n, _)) in a.generics.iter().enumerate() {
        if a.generics[..k].iter().any(|(m, _)| m.eq_ignore_ascii_case(n)) {
            bail!("--generic {n} is given twice: give its values once, comma-separated");
        }
    }
    if a.on.sim.is_some() {
        bail!("sweep builds a bench per point itself: no --sim");
    }
    let home = locate::jop_home(s.jop_home)?;
    let top = a
        .top
        .clone()
        .unwrap_or_else(|| jopcal_sim::jop::DEFAULT_TOP.to_string());
    let all = points(&a.generics);
    // Every point's generics are checked against the top before any work.
    for p in &all {
        jopcal_sim::jop::describe::describe(&home, &top, p).map_err(|e| anyhow!("point {}: {e}", label(p)))?;
    }
    let root = locate::suite_dir(s.firmware, s.jop_home, &a.suite, s.progress)?;
    let stamp = clock::now_stamp();
    let out = locate::out_dir(a.out.as_deref(), "sweep", &stamp)?;
    if a.dry_run {
        let workloads: Vec<String> = jopcal_workloads::Suite::load(&root)?
            .select(&a.benches)?
            .into_iter()
            .map(|w| w.name)
            .collect();
        let lines = vec![
            "sweep plan".to_string(),
            format!("  tree       {} (quartus/{top})", home.display()),
            format!(
                "  suite      {} ({}): {}",
                a.suite,
                root.display(),
                workloads.join(", ")
            ),
            format!("  target     {}", a.target.name()),
            format!(
                "  points     {}: {}",
                all.len(),
                all.iter().map(|p| label(p)).collect::<Vec<_>>().join("; ")
            ),
            format!(
                "  table      {}",
                a.model.as_ref().map_or(
                    "fitted first by validate on the virtual board as the top".to_string(),
                    |m| m.display().to_string()
                )
            ),
            format!("  output     {}", out.display()),
        ];
        let mut steps = vec!["profile the suite once on the host JVM".to_string()];
        if a.target == TargetKind::Verilator {
            steps.push("build (or keep from the cache) a bench per point".to_string());
        }
        steps.push(
            "measure every point, estimate it with the table at the point's configuration; write sweep.csv, sweep.md and a plot"
                .to_string(),
        );
        return Ok(Swept {
            dir: out,
            csv: PathBuf::new(),
            rows: Vec::new(),
            failures: Vec::new(),
            plan: Some(crate::plan::with_steps(lines, &steps)),
        });
    }
    jopcal_measure::OutDir::prepare(&out, &stamp).map_err(|e| anyhow!("preparing {}: {e}", out.display()))?;
    let timeout = locate::workload_timeout(a.timeout, a.target)?;
    let started = Instant::now();
    let model = match &a.model {
        Some(m) => Some(m.clone()),
        None => calibrate_on_the_virtual_board(s, a, &top, &out)?,
    };
    let s = s.with_firmware(&root);

    // One host profile for every point.
    let setup = prepare_host(s, &root, &a.benches)?;
    let run = crate::profile::tree_host_run(s, &root, &setup, true)?;
    let mut profiled = crate::profile::profile_suite(
        s,
        &setup,
        &run,
        None,
        &out.join("profiles"),
        &stamp,
        None,
        crate::profile::ProfileFormat::Binary,
        Duration::from_secs(locate::profile_timeout(a.timeout, timeout)),
        a.on.jobs,
    )?;
    let mut failures: Vec<(String, String)> = profiled.failures.clone();
    // Each point's target: on the RTL, its bench (built, or kept from the cache).
    let mut planned: Vec<(Point, TargetOptions)> = Vec::new();
    for p in &all {
        let mut on = a.on.clone();
        on.emu.top = Some(top.clone());
        on.emu.generics = p.clone();
        if a.target == TargetKind::Verilator {
            match kept_bench(s, &home, &top, p, a.bit_cycles) {
                Ok(bench) => on.sim = Some(bench),
                Err(e) => {
                    let why = format!("building its bench: {e:#}");
                    s.say(&format!("     sweep point {}: FAILED {why}", label(p)));
                    failures.push((label(p), why));
                    continue;
                }
            }
        }
        planned.push((p.clone(), on));
    }
    let how = |on| Measure {
        target: a.target,
        benches: &a.benches,
        runs: 1,
        timeout,
        jvm_args: &[],
        on,
        tree_suite: true,
    };
    let point_dir = |p: &[(String, i64)]| out.join("points").join(dir_name(p));
    // Every point measured: here one after another, or all of them as one Slurm submission.
    let measured: Vec<(Point, Result<jopcal_targets::Measured>)> = match &a.on.launcher {
        Launcher::Local => planned
            .iter()
            .enumerate()
            .map(|(k, (p, on))| {
                s.say(&format!(
                    "     sweep point {}/{}: {} ({:.0} s so far)",
                    k + 1,
                    planned.len(),
                    label(p),
                    started.elapsed().as_secs_f64()
                ));
                (p.clone(), measure_on(s, &root, &how(on), &point_dir(p), &stamp))
            })
            .collect(),
        Launcher::Slurm(opts) => {
            let tasks = planned
                .iter()
                .map(|(p, on)| slurm_tasks(s, &root, &how(on), &format!("{} ", label(p))))
                .collect::<Result<Vec<_>>>()?;
            let all_tasks: Vec<_> = tasks.iter().flat_map(|t| t.tasks.iter().cloned()).collect();
            let runs = jopcal_launch::slurm::run_tasks(s.progress, opts, "sweep", &all_tasks)?;
            let mut at = 0;
            planned
                .iter()
                .zip(&tasks)
                .map(|((p, _), t)| {
                    let mine = &runs[at..at + t.tasks.len()];
                    at += t.tasks.len();
                    (p.clone(), collect_tasks(t, mine, &point_dir(p), &stamp, s.progress))
                })
                .collect()
        }
    };
    let mut sized = false;
    let mut rows = Vec::new();
    for (p, m) in measured {
        let m = match m {
            Ok(m) => m,
            Err(e) => {
                failures.push((label(&p), format!("{e:#}")));
                continue;
            }
        };
        failures.extend(
            m.failures
                .iter()
                .map(|(b, why)| (format!("{} {b}", label(&p)), why.clone())),
        );
        if !sized {
            // The images do not depend on the point: their method sizes once.
            crate::validate::use_image_sizes(s, &m.out.path, &mut profiled, &run.tree_library)?;
            sized = true;
        }
        let spec = ProcessorSpec {
            top: Some(top.clone()),
            generics: p.clone(),
            ..ProcessorSpec::default()
        };
        let table = processor_table(s, &home, &spec, model.as_deref())?;
        let estimates = crate::estimate::estimate_all(s, &profiled.profiles, &table.model, &[table.cache_mode()]);
        for r in m.rows.iter().filter(|r| r.unit == Unit::Cycles) {
            match estimates.iter().find(|e| e.benchmark == r.benchmark) {
                Some(e) => rows.push(SweepRow {
                    point: p.clone(),
                    benchmark: r.benchmark.clone(),
                    measured: r.value,
                    estimated: e.cycles,
                }),
                None => failures.push((
                    format!("{} {}", label(&p), r.benchmark),
                    "measured, but its host profile failed: no estimate".into(),
                )),
            }
        }
    }
    let csv = out.join("sweep.csv");
    atomic::write_atomic(&csv, to_csv(&a.generics, &rows)?.as_bytes())?;
    let took = started.elapsed().as_secs_f64();
    let md = to_markdown(&a.generics, &rows, &failures, a, model.as_deref(), took);
    atomic::write_atomic(&out.join("sweep.md"), md.as_bytes())?;
    if !rows.is_empty() {
        plot(&rows, &out.join("plots").join("sweep-measured-vs-predicted"))?;
    }
    if let Some(worst) = rows
        .iter()
        .max_by(|x, y| x.error_pct().abs().total_cmp(&y.error_pct().abs()))
    {
        s.say(&format!(
            "     sweep {} rows at {} points in {took:.0} s; worst error {:+.2}% ({} at {})",
            rows.len(),
            all.len(),
            worst.error_pct(),
            worst.benchmark,
            label(&worst.point)
        ));
    }
    Ok(Swept {
        dir: out,
        csv,
        rows,
        failures,
        plan: None,
    })
}

/// The estimator's table when none is given: the tree's processor table
/// with what the microcode does not time (the own cost of each bytecode
/// JOP runs in Java, the library routines) fitted by `validate` on the
/// virtual board, which is the processor, at the top's own configuration
/// (kept in `calibration/`). The sweep's other points then differ from it in
/// their method cache and memory, which the table prices itself.
fn calibrate_on_the_virtual_board(s: Session, a: &SweepOptions, top: &str, out: &Path) -> Result<Option<PathBuf>> {
    s.say(&format!(
        "     sweep: fitting the estimator's table on the virtual board as quartus/{top} (validate into {})",
        out.join("calibration").display()
    ));
    let opts = crate::validate::ValidateOptions {
        target: TargetKind::Emu,
        suite: a.suite.clone(),
        programs: Default::default(),
        out: Some(out.join("calibration")),
        benches: a.benches.clone(),
        timeout: a.timeout,
        references: None,
        model: None,
        on: TargetOptions {
            jobs: a.on.jobs,
            emu: crate::measure::EmuOptions {
                top: Some(top.to_string()),
                ..Default::default()
            },
            ..Default::default()
        },
        no_float_micro: false,
        microcode: None,
    };
    let plan = crate::validate::plan(s, &opts, &jopcal_measure::clock::now_stamp())?;
    let v = crate::validate::validate(s, &opts, &plan)?;
    let table = v.dir.join("calibrated.toml");
    if table.is_file() {
        Ok(Some(std::path::absolute(table)?))
    } else {
        s.say(&format!(
            "     sweep: the fit wrote no table ({}): the estimator is the processor's table as the microcode times it",
            v.summary.display()
        ));
        Ok(None)
    }
}

/// The bench of the tree's processor `top` with generics `p` (a sweep's
/// point; none for the top as it is), built (or kept: the cache holds one
/// per tree, top and point) with simulation microcode, so that each image
/// is preloaded rather than downloaded.
pub(crate) fn kept_bench(s: Session, home: &Path, top: &str, p: &[(String, i64)], bit_cycles: u32) -> Result<PathBuf> {
    use sha2::{Digest, Sha256};
    let key = format!("{}|{top}|{}|{bit_cycles}", home.display(), label(p));
    let hash = format!("{:x}", Sha256::digest(key.as_bytes()));
    let dir = locate::cache_root()?
        .join("benches")
        .join(format!("{top}-{}-{}", dir_name(p), &hash[..12]));
    crate::sim::build_for_tree(
        s,
        &crate::sim::TreeBench {
            top: Some(top),
            out: &dir,
            preload: true,
            bit_cycles,
            trace: false,
            taps: true,
            generics: p,
            stand_ins: true,
        },
    )?;
    Ok(dir)
}

/// `sweep.csv`: one column per generic, then benchmark, measured_cycles,
/// estimated_cycles, error_pct.
pub fn to_csv(generics: &[(String, Vec<i64>)], rows: &[SweepRow]) -> Result<String> {
    let mut w = csv::Writer::from_writer(Vec::new());
    let mut header: Vec<String> = generics.iter().map(|(n, _)| n.clone()).collect();
    header.extend(["benchmark", "measured_cycles", "estimated_cycles", "error_pct"].map(String::from));
    w.write_record(&header)?;
    for r in rows {
        let mut rec: Vec<String> = r.point.iter().map(|(_, v)| v.to_string()).collect();
        rec.push(r.benchmark.clone());
        rec.push(r.measured.to_string());
        rec.push(format!("{:.0}", r.estimated));
        rec.push(format!("{:.4}", r.error_pct()));
        w.write_record(&rec)?;
    }
    Ok(String::from_utf8(w.into_inner().map_err(|e| anyhow!(e.to_string()))?)?)
}

fn to_markdown(
    generics: &[(String, Vec<i64>)],
    rows: &[SweepRow],
    failures: &[(String, String)],
    a: &SweepOptions,
    model: Option<&Path>,
    seconds: f64,
) -> String {
    let mut md = String::new();
    let _ = writeln!(
        md,
        "# Sweep: suite {} on {}\n\nThe estimator: the processor's table derived from the tree's microcode{}, at each point's wait states and method cache, from one host profile. {} rows in {:.0} s.\n",
        a.suite,
        a.target.name(),
        match (&a.model, model) {
            (Some(m), _) => format!(" (on {})", m.display()),
            (None, Some(m)) => format!(
                " on the table `validate` fitted on the virtual board at the top's own configuration ({})",
                m.display()
            ),
            (None, None) => String::new(),
        },
        rows.len(),
        seconds
    );
    let mut header: Vec<String> = generics.iter().map(|(n, _)| n.clone()).collect();
    header.extend(["benchmark", "measured cycles", "estimated cycles", "error"].map(String::from));
    let _ = writeln!(md, "| {} |", header.join(" | "));
    let _ = writeln!(
        md,
        "|{}",
        header
            .iter()
            .enumerate()
            .map(|(i, _)| if i < generics.len() + 1 { "---|" } else { "---:|" })
            .collect::<String>()
    );
    for r in rows {
        let mut cells: Vec<String> = r.point.iter().map(|(_, v)| v.to_string()).collect();
        cells.push(r.benchmark.clone());
        cells.push(jopcal_report::number::thousands(r.measured as f64));
        cells.push(jopcal_report::number::thousands(r.estimated.round()));
        cells.push(format!("{:+.2}%", r.error_pct()));
        let _ = writeln!(md, "| {} |", cells.join(" | "));
    }
    if let Some(worst) = rows.iter().map(|r| r.error_pct().abs()).max_by(f64::total_cmp) {
        let _ = writeln!(md, "\nWorst |error|: {worst:.2}%.");
    }
    if !failures.is_empty() {
        let _ = writeln!(md, "\n## Failed\n");
        for (what, why) in failures {
            let _ = writeln!(md, "- {what}: {why}");
        }
    }
    md
}

/// Measured and predicted cycles, one group per benchmark and point.
fn plot(rows: &[SweepRow], stem: &Path) -> Result<()> {
    let a = jopcal_report::accuracy::Accuracy {
        benchmarks: rows
            .iter()
            .map(|r| {
                format!(
                    "{} {}",
                    r.benchmark,
                    r.point.iter().map(|(_, v)| v.to_string()).collect::<Vec<_>>().join("/")
                )
            })
            .collect(),
        measured: rows.iter().map(|r| r.measured as f64).collect(),
        variants: vec!["predicted".into()],
        estimates: vec![rows.iter().map(|r| r.estimated).collect()],
        naive_cost: 0.0,
        warnings: Vec::new(),
    };
    if let Some(parent) = stem.parent() {
        std::fs::create_dir_all(parent)?;
    }
    jopcal_report::plots::measured_vs_estimated(&a, stem)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_points_are_the_cross_product_in_the_order_given() {
        let g = vec![
            ("jpc_width".to_string(), vec![10, 11]),
            ("block_bits".to_string(), vec![2, 3, 4]),
        ];
        let p = points(&g);
        assert_eq!(p.len(), 6);
        assert_eq!(label(&p[0]), "jpc_width=10 block_bits=2");
        assert_eq!(label(&p[1]), "jpc_width=10 block_bits=3");
        assert_eq!(label(&p[5]), "jpc_width=11 block_bits=4");
        assert_eq!(dir_name(&p[5]), "jpc_width-11_block_bits-4");
        assert_eq!(points(&[]), vec![Vec::new()]);
    }

    #[test]
    fn generic_values_parse_or_say_why() {
        assert_eq!(
            parse_generic_values("jpc_width=10,11, 12").unwrap(),
            ("jpc_width".to_string(), vec![10, 11, 12])
        );
        assert!(parse_generic_values("jpc_width")
            .unwrap_err()
            .to_string()
            .contains("expected NAME=V1,V2"));
        assert!(parse_generic_values("jpc_width=10,x")
            .unwrap_err()
            .to_string()
            .contains("`x` is not an integer"));
    }

    #[test]
    fn the_csv_has_a_column_per_generic() {
        let g = vec![("ram_cnt".to_string(), vec![2])];
        let rows = vec![SweepRow {
            point: vec![("ram_cnt".into(), 2)],
            benchmark: "Kfl".into(),
            measured: 1000,
            estimated: 1010.0,
        }];
        assert_eq!(
            to_csv(&g, &rows).unwrap(),
            "ram_cnt,benchmark,measured_cycles,estimated_cycles,error_pct\n2,Kfl,1000,1010,1.0000\n"
        );
    }
}
