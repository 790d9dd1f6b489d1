//! `jopcal regress --against REV` / `--candidate-home DIR`: two versions of
//! a JOP tree's processor, the suite run on each, and what the change did to
//! every benchmark and why.
//!
//! The baseline and the candidate are each a whole tree: with `--against`,
//! revision REV of the tree checked out in the cache
//! (`jopcal_tree::revision`) against the tree as it is; with
//! `--candidate-home`, the tree against a second one. Each side builds its
//! own images, and its target is its own: the virtual board made from its
//! microcode and its top's VHDL, its RTL in a bench built from its VHDL
//! (`--target verilator`), or its JopSim. Then, for each side, the timing
//! table its microcode gives and, on the virtual board as its processor,
//! every benchmark's timed region counted by bytecode; the report
//! (`jopcal_report::versions`) explains each change by bytecode.
//!
//! The virtual board follows the microcode and the Java runtime, not the
//! VHDL. When the VHDL differs and the target is the virtual board, one
//! benchmark of the candidate (its shortest) is run on the candidate's RTL
//! and on its virtual board, bytecode for bytecode (`crate::diff`); a
//! difference, or a check that could not run, fails the regression: it is
//! never reported as "no change".

use crate::measure::{measure_on, Measure, TargetOptions};
use crate::processor::{image_board, processor_table, ImageBoard, ProcessorSpec};
use crate::{locate, Session};
use anyhow::{anyhow, bail, Context, Result};
use jopcal_measure::{atomic, clock, Measurement};
use jopcal_report::regress::{compare, FailOn};
use jopcal_report::versions::{BenchChange, ModelCheck, OpRegion, TableChange, VersionsReport};
use jopcal_targets::TargetKind;
use jopcal_tree::programs::ProgramRequest;
use jopcal_tree::revision;
use std::path::{Path, PathBuf};

/// The version to compare the tree (`--jop-home`) with.
#[derive(Debug, Clone)]
pub enum OtherVersion {
    /// A git revision of the tree: the baseline; the tree as it is, the candidate.
    Revision(String),
    /// A second tree: the candidate; the tree, the baseline.
    Tree(PathBuf),
}

/// What to compare, and how.
pub struct VersionsOptions {
    pub other: OtherVersion,
    pub suite: String,
    pub programs: ProgramRequest,
    pub benches: Vec<String>,
    pub target: TargetKind,
    pub timeout: Option<u64>,
    pub on: TargetOptions,
    pub threshold: f64,
    pub fail_on: FailOn,
    pub out: Option<PathBuf>,
    /// Check on the candidate's RTL that the virtual board follows a VHDL change.
    pub check_model: bool,
    /// Resolve both versions and say what would run, nothing more.
    pub dry_run: bool,
}

/// What a comparison wrote, and why it failed, if it did; or, for a dry
/// run, its plan in words (and nothing written).
pub struct Compared {
    pub dir: PathBuf,
    pub md: PathBuf,
    pub failure: Option<String>,
    pub plan: Option<String>,
}

impl Compared {
    /// A dry run's answer: its plan, and where the report would have gone.
    fn dry(plan: String, dir: PathBuf) -> Compared {
        Compared {
            dir,
            md: PathBuf::new(),
            failure: None,
            plan: Some(plan),
        }
    }
}

/// One version: what it is called and where its tree is.
struct Version {
    label: String,
    home: PathBuf,
}

/// What was measured on one version.
struct Side {
    root: PathBuf,
    out: PathBuf,
    rows: Vec<Measurement>,
    failures: Vec<(String, String)>,
    /// The bench built from its VHDL (`--target verilator`).
    bench: Option<PathBuf>,
}

const NAMES: [&str; 2] = ["baseline", "candidate"];

/// Runs the comparison of `o` into one directory.
pub fn regress_versions(s: Session, o: &VersionsOptions) -> Result<Compared> {
    crate::report::check_threshold(o.threshold)?;
    if matches!(o.target, TargetKind::Host | TargetKind::Board) {
        bail!(
            "--target {}: comparing two versions of the processor needs a target each version makes: emu (default), verilator or jopsim",
            o.target.name()
        );
    }
    if matches!(o.on.launcher, jopcal_launch::Launcher::Slurm(_)) {
        // A Slurm task is known by its command, which names the tree, not
        // what the tree holds: a changed tree's old results would be reused.
        bail!("regress --against/--candidate-home runs on this machine (--launcher local): Slurm's tasks would reuse an earlier version's results");
    }
    let home = locate::jop_home(s.jop_home)?;
    let cache = locate::cache_root()?;
    // A directory that cannot take the report is refused before any work.
    let stamp = clock::now_stamp();
    let out = locate::out_dir(o.out.as_deref(), "regress", &stamp)?;
    let versions = match &o.other {
        OtherVersion::Revision(rev) if o.dry_run => {
            // Nothing checked out: what differs, from git.
            let commit = revision::resolve(&home, rev)?;
            let changed: Vec<String> = revision::changes_since(&home, &commit)?
                .iter()
                .map(|p| p.display().to_string())
                .collect();
            let hardware: Vec<&String> = changed.iter().filter(|p| revision::is_hardware(Path::new(p))).collect();
            let versions = [
                Version {
                    label: format!("{rev} (commit {})", revision::short(&commit)),
                    home: cache.join("revisions").join(&commit),
                },
                Version {
                    label: format!("{} as it is", home.display()),
                    home: home.clone(),
                },
            ];
            return Ok(Compared::dry(
                dry_run_plan(o, &versions, &changed, &hardware, &out),
                out,
            ));
        }
        OtherVersion::Revision(rev) => {
            let c = revision::checkout(&home, rev, &cache)?;
            s.say(&format!(
                "regress: baseline {rev} (commit {}) checked out in {}{}",
                revision::short(&c.commit),
                c.dir.display(),
                if c.untracked_copied > 0 {
                    format!(
                        ", with {} files git does not track copied from the tree (its built tools)",
                        c.untracked_copied
                    )
                } else {
                    String::new()
                }
            ));
            [
                Version {
                    label: format!("{rev} (commit {})", revision::short(&c.commit)),
                    home: c.dir,
                },
                Version {
                    label: format!("{} as it is", home.display()),
                    home: home.clone(),
                },
            ]
        }
        OtherVersion::Tree(dir) => {
            if !dir.join("asm/src/jvm.asm").is_file() {
                bail!(
                    "--candidate-home {}: not a JOP tree (no asm/src/jvm.asm)",
                    dir.display()
                );
            }
            [
                Version {
                    label: home.display().to_string(),
                    home: home.clone(),
                },
                Version {
                    label: dir.display().to_string(),
                    home: dir.clone(),
                },
            ]
        }
    };
    let changed: Vec<String> = revision::differences(&versions[0].home, &versions[1].home)
        .context("comparing the two trees' files")?
        .iter()
        .map(|p| p.display().to_string())
        .collect();
    let hardware: Vec<&String> = changed.iter().filter(|p| revision::is_hardware(Path::new(p))).collect();
    s.say(&format!(
        "regress: {} file{} differ{}{}",
        changed.len(),
        if changed.len() == 1 { "" } else { "s" },
        if changed.len() == 1 { "s" } else { "" },
        if hardware.is_empty() {
            String::new()
        } else {
            format!(", {} of them in the hardware description", hardware.len())
        }
    ));
    if o.dry_run {
        return Ok(Compared::dry(
            dry_run_plan(o, &versions, &changed, &hardware, &out),
            out,
        ));
    }
    let dir = jopcal_measure::outdir::OutDir::prepare(&out, &stamp)?.path;

    // Each version links its own images: without the tree's toolchain the
    // virtual board would run class bundles with its own library, alike on both.
    for (v, name) in versions.iter().zip(NAMES) {
        locate::toolchain(Some(&v.home), "regress --against/--candidate-home")
            .with_context(|| format!("the {name}, {}", v.label))?;
    }
    let mut sides = Vec::new();
    for (v, name) in versions.iter().zip(NAMES) {
        sides.push(measure_side(s, o, v, name, &dir, &stamp)?);
    }
    let (base_rows, cand_rows) = (&sides[0].rows, &sides[1].rows);
    let regression = compare(base_rows, cand_rows, o.threshold, o.fail_on).map_err(|e| anyhow!(e))?;

    // Each side's table, from its microcode, and the bytecodes whose cycles differ.
    let table_of = |i: usize| -> Result<jopcal_timing::TimingModel> {
        let side_s = side_session(s, &versions[i].home, &sides[i].root);
        Ok(
            processor_table(side_s, &versions[i].home, &ProcessorSpec::default(), None)
                .with_context(|| format!("the {}'s table, {}", NAMES[i], versions[i].label))?
                .model,
        )
    };
    let models = [table_of(0)?, table_of(1)?];
    let on_hit = |m: &jopcal_timing::TimingModel, op: u8| m.opcode(op).map(|_| m.cost(op, 0.0, 0));
    let tables: Vec<TableChange> = (0..=255u8)
        .filter_map(|op| match (on_hit(&models[0], op), on_hit(&models[1], op)) {
            (Some(a), Some(b)) if (a - b).abs() > 1e-9 => Some(TableChange {
                op,
                name: jopcal_timing::jop::any_opcode_name(op).to_string(),
                cycles: [a, b],
            }),
            _ => None,
        })
        .collect();
    for t in &tables {
        s.say(&format!(
            "regress: {} ({}) {} -> {} cycles in the tables ({:+})",
            t.name,
            t.op,
            t.cycles[0],
            t.cycles[1],
            t.change()
        ));
    }

    // Every benchmark's region by bytecode, on each side's virtual board.
    let boards = [0, 1].map(|i| {
        let side_s = side_session(s, &versions[i].home, &sides[i].root);
        image_board(
            side_s,
            &ImageBoard {
                sim: sides[i].bench.as_deref(),
                ..Default::default()
            },
        )
        .map(|(cfg, _)| cfg)
    });
    let mut benches = Vec::new();
    for d in &regression.deltas {
        let region = |i: usize| -> Result<Region, String> {
            let cfg = boards[i].as_ref().map_err(|e| format!("{e:#}"))?;
            // The target's count (its mean over runs, as the comparison has it).
            let measured = Some([d.baseline, d.candidate][i].round() as u64);
            region_of(&sides[i].out, &d.benchmark, cfg, measured)
        };
        s.say(&format!(
            "regress: taking {} apart by bytecode on both boards",
            d.benchmark
        ));
        let by_op = region(0).and_then(|a| {
            let b = region(1)?;
            let mut out = Box::new([OpRegion::default(); 256]);
            for (k, o) in out.iter_mut().enumerate() {
                o.count = [a[k].count, b[k].count];
                o.cycles = [a[k].cycles, b[k].cycles];
            }
            Ok(out)
        });
        benches.push(BenchChange {
            benchmark: d.benchmark.clone(),
            measured: [d.baseline, d.candidate],
            by_op: by_op.map_err(jopcal_report::error::NotTakenApart),
        });
    }

    let model = check_model(s, o, &versions[1], &sides[1], &changed, &hardware, &regression)?;
    s.say(&format!("regress: {}", model.sentence()));
    let report = VersionsReport {
        labels: [versions[0].label.clone(), versions[1].label.clone()],
        target: o.target.name().to_string(),
        suite: if o.programs.is_requested() {
            locate::PROGRAMS_SUITE.to_string()
        } else {
            o.suite.clone()
        },
        changed,
        tables,
        benches,
        model,
        regression,
        failed: failed_runs(&sides),
    };
    let name = |op: u8| jopcal_timing::jop::any_opcode_name(op).to_string();
    let md = dir.join("regress.md");
    atomic::write_atomic(&md, report.markdown(name).as_bytes())?;
    atomic::write_atomic(&dir.join("regress.csv"), report.csv().as_bytes())?;
    let table = |op: u8| {
        [
            on_hit(&models[0], op).unwrap_or(0.0),
            on_hit(&models[1], op).unwrap_or(0.0),
        ]
    };
    atomic::write_atomic(
        &dir.join("regress-bytecodes.csv"),
        report.bytecodes_csv(name, table).as_bytes(),
    )?;
    let cand_csv = sides[1].out.join("measurements.csv");
    atomic::write_atomic(&dir.join("regress.junit.xml"), report.junit(&cand_csv).as_bytes())?;
    plot(&dir, &report)?;

    let failure = report.failure();
    Ok(Compared {
        dir,
        md,
        failure,
        plan: None,
    })
}

/// What `regress --dry-run` prints: both versions, what differs, and the steps.
fn dry_run_plan(
    o: &VersionsOptions,
    versions: &[Version; 2],
    changed: &[String],
    hardware: &[&String],
    out: &Path,
) -> String {
    let mut lines = vec!["regress plan".to_string()];
    for (v, name) in versions.iter().zip(NAMES) {
        lines.push(format!("  {name:<10} {} ({})", v.label, v.home.display()));
    }
    let shown: Vec<&str> = changed.iter().take(12).map(|c| c.as_str()).collect();
    lines.push(format!(
        "  differ     {} file(s){}{}{}",
        changed.len(),
        if shown.is_empty() {
            String::new()
        } else {
            format!(": {}", shown.join(", "))
        },
        if changed.len() > shown.len() {
            format!(" and {} more", changed.len() - shown.len())
        } else {
            String::new()
        },
        if hardware.is_empty() {
            String::new()
        } else {
            format!(
                "; in the hardware description: {}",
                hardware.iter().map(|h| h.as_str()).collect::<Vec<_>>().join(", ")
            )
        }
    ));
    let suite = if o.programs.is_requested() {
        locate::PROGRAMS_SUITE
    } else {
        o.suite.as_str()
    };
    lines.push(format!(
        "  suite      {suite}{}",
        if o.benches.is_empty() {
            String::new()
        } else {
            format!(" ({})", o.benches.join(", "))
        }
    ));
    lines.push(format!("  target     {}", o.target.name()));
    lines.push(format!("  output     {}", out.display()));
    let mut steps = vec![
        format!(
            "build and measure the suite on the baseline's {} into {}",
            o.target.name(),
            out.join("baseline").display()
        ),
        format!(
            "build and measure it on the candidate's into {}",
            out.join("candidate").display()
        ),
        "derive each version's table from its microcode and compare them bytecode by bytecode".to_string(),
        "take every benchmark's timed region apart by bytecode on each version's virtual board".to_string(),
    ];
    if o.target == TargetKind::Emu && !hardware.is_empty() {
        steps.push(if o.check_model {
            "run the candidate's shortest benchmark on its RTL against its virtual board (the hardware differs)"
                .to_string()
        } else {
            "fail: the hardware differs and --no-model-check leaves the virtual board unchecked".to_string()
        });
    }
    steps.push(format!(
        "write regress.md, regress.csv, regress-bytecodes.csv, regress.junit.xml and plots/ into {}; fail when a benchmark {} by more than {}%",
        out.display(),
        o.fail_on.verb(),
        o.threshold
    ));
    crate::plan::with_steps(lines, &steps)
}

/// The session of one version: its tree, its suite.
fn side_session<'a>(s: Session<'a>, home: &'a Path, root: &'a Path) -> Session<'a> {
    Session {
        jop_home: Some(home),
        firmware: Some(root),
        ..s
    }
}

/// Builds one version's suite and target, and measures it into `dir/name`.
fn measure_side(s: Session, o: &VersionsOptions, v: &Version, name: &str, dir: &Path, stamp: &str) -> Result<Side> {
    s.say(&format!("regress: the {name}, {}", v.label));
    let root = locate::workload_dir(s.firmware, Some(&v.home), &o.suite, &o.programs, s.progress)
        .with_context(|| format!("the {name}'s suite, {}", v.label))?;
    let side_s = side_session(s, &v.home, &root);
    let mut on = o.on.clone();
    let bench = if o.target == TargetKind::Verilator {
        let b = rtl_bench(side_s, &v.home)?;
        on.sim = Some(b.clone());
        Some(b)
    } else {
        None
    };
    let how = Measure {
        target: o.target,
        benches: &o.benches,
        runs: 1,
        timeout: locate::workload_timeout(o.timeout, o.target)?,
        jvm_args: &[],
        on: &on,
        tree_suite: true,
    };
    let out = dir.join(name);
    let m =
        measure_on(side_s, &root, &how, &out, stamp).with_context(|| format!("measuring the {name}, {}", v.label))?;
    for (b, why) in &m.failures {
        s.say(&format!("regress: the {name}'s {b} failed: {why}"));
    }
    Ok(Side {
        root,
        out,
        rows: m.rows,
        failures: m.failures,
        bench,
    })
}

/// The preloading bench of the tree at `home`'s processor (its default
/// top, at the bench's 32 cycles a bit), built or kept in the cache.
fn rtl_bench(s: Session, home: &Path) -> Result<PathBuf> {
    crate::sweep::kept_bench(s, home, jopcal_sim::jop::DEFAULT_TOP, &[], 32)
        .with_context(|| format!("building the bench of {}'s RTL", home.display()))
}

/// Where a target keeps the image of `bench` that it ran, in its run directory `out`.
fn image_of(out: &Path, bench: &str) -> PathBuf {
    out.join("images").join(format!("{bench}.jop"))
}

/// `bench`'s timed region by opcode: its image (as the target ran it, in
/// `out/images/`) run traced on `cfg`, between the two counter reads that
/// are `measured` apart, else the two the board's own result line counts
/// (the board and the target disagree: the report shows both).
fn region_of(out: &Path, bench: &str, cfg: &jopcal_emu::BoardConfig, measured: Option<u64>) -> Result<Region, String> {
    let path = image_of(out, bench);
    if !path.is_file() {
        return Err(format!(
            "the target kept no image of it ({} is missing)",
            path.display()
        ));
    }
    let image = jopcal_link::JopImage::load_checked(&path, None).map_err(|e| format!("{}: {e}", path.display()))?;
    let mut printed = Vec::new();
    let run = jopcal_emu::image::run_image(&image, cfg, true, None, &mut |b| printed.extend_from_slice(b))
        .map_err(|e| format!("the virtual board stopped: {e}"))?;
    let reads = &run.counter_reads;
    if let Some(found) = measured.and_then(|m| jopcal_emu::image::region_by_opcode(reads, m)) {
        return Ok(found);
    }
    let own = String::from_utf8_lossy(&printed)
        .lines()
        .find_map(|l| match jopcal_measure::result_line::parse_line(l) {
            Ok(Some(jopcal_measure::result_line::ResultLine::Result { bench: b, cycles, .. })) if b == bench => {
                Some(cycles)
            }
            _ => None,
        })
        .ok_or_else(|| "the virtual board printed no result line for it".to_string())?;
    jopcal_emu::image::region_by_opcode(reads, own).ok_or_else(|| {
        format!(
            "none of the virtual board's {} reads of the cycle counter are its own count, {own}, apart",
            reads.len()
        )
    })
}

type Region = Box<jopcal_emu::image::OpTallies>;

/// Whether the virtual board follows the change (see the module's doc).
#[allow(clippy::too_many_arguments)]
fn check_model(
    s: Session,
    o: &VersionsOptions,
    cand: &Version,
    side: &Side,
    changed: &[String],
    hardware: &[&String],
    regression: &jopcal_report::regress::Regression,
) -> Result<ModelCheck> {
    match o.target {
        TargetKind::Verilator => return Ok(ModelCheck::NotNeeded("each version was measured on its own RTL".into())),
        TargetKind::Jopsim if !hardware.is_empty() => {
            return Ok(ModelCheck::Unchecked("JopSim does not simulate the VHDL".into()))
        }
        TargetKind::Jopsim if changed.iter().any(|f| f.starts_with("asm/")) => {
            return Ok(ModelCheck::Unchecked(
                "JopSim times bytecodes by its own table, not by the microcode, which changed".into(),
            ))
        }
        _ => {}
    }
    if hardware.is_empty() {
        return Ok(ModelCheck::SameHardware);
    }
    if !o.check_model {
        return Ok(ModelCheck::Unchecked("--no-model-check".into()));
    }
    // The candidate's shortest benchmark with an image.
    let Some(sample) = regression
        .deltas
        .iter()
        .filter(|d| image_of(&side.out, &d.benchmark).is_file())
        .min_by(|a, b| a.candidate.total_cmp(&b.candidate))
    else {
        return Ok(ModelCheck::Unchecked(
            "no benchmark of the candidate ran to a result".into(),
        ));
    };
    s.say(&format!(
        "regress: the hardware description differs ({}): {} on the candidate's RTL against its virtual board",
        hardware
            .iter()
            .take(3)
            .map(|h| h.as_str())
            .collect::<Vec<_>>()
            .join(", "),
        sample.benchmark
    ));
    let side_s = side_session(s, &cand.home, &side.root);
    let bench = match rtl_bench(side_s, &cand.home) {
        Ok(b) => b,
        Err(e) => return Ok(ModelCheck::Unchecked(format!("{e:#}"))),
    };
    let (cfg, _) = image_board(
        side_s,
        &ImageBoard {
            sim: Some(&bench),
            ..Default::default()
        },
    )?;
    let image = image_of(&side.out, &sample.benchmark);
    let report = crate::diff::diff(
        side_s,
        &crate::diff::DiffOptions {
            image: image.clone(),
            link_map: None,
            sides: [
                crate::diff::Side::Emu {
                    cfg: Box::new(cfg),
                    label: "the candidate's virtual board".into(),
                },
                crate::diff::Side::Verilator {
                    sim: bench,
                    args: vec![],
                },
            ],
            timeout: std::time::Duration::from_secs(
                locate::workload_timeout(o.timeout, TargetKind::Verilator)?.max(3600),
            ),
            keep: None,
        },
    )?;
    let what = report
        .lines
        .iter()
        .find(|l| l.contains("first") || l.contains("part"))
        .or(report.lines.last())
        .cloned()
        .unwrap_or_default();
    Ok(if report.comparison.compared == 0 {
        ModelCheck::Unchecked(format!(
            "{}: the two runs compared no bytecode ({})",
            sample.benchmark,
            what.trim()
        ))
    } else if report.equal() {
        ModelCheck::Agrees(format!(
            "{}, {} bytecodes, the same cycles (the other benchmarks were not run on the RTL)",
            sample.benchmark,
            jopcal_report::number::thousands(report.comparison.compared as f64)
        ))
    } else {
        ModelCheck::Differs(format!("{}: {}", sample.benchmark, what.trim()))
    })
}

/// The benchmarks that ran to no result on either side, with why on each.
fn failed_runs(sides: &[Side]) -> Vec<(String, [Option<String>; 2])> {
    let mut names: Vec<&String> = sides.iter().flat_map(|s| s.failures.iter().map(|(b, _)| b)).collect();
    names.sort();
    names.dedup();
    let why = |i: usize, b: &str| sides[i].failures.iter().find(|(f, _)| f == b).map(|(_, w)| w.clone());
    names.into_iter().map(|b| (b.clone(), [why(0, b), why(1, b)])).collect()
}

/// `plots/regress-change.{svg,png,pdf}`: each benchmark's change.
fn plot(dir: &Path, r: &VersionsReport) -> Result<()> {
    use jopcal_report::plots::{bar_chart, Series};
    if r.regression.deltas.is_empty() {
        return Ok(());
    }
    let cats: Vec<String> = r.regression.deltas.iter().map(|d| d.benchmark.clone()).collect();
    let values: Vec<f64> = r.regression.deltas.iter().map(|d| d.delta_pct).collect();
    let labels = values.iter().map(|v| format!("{v:+.2}%")).collect();
    bar_chart(
        &dir.join("plots/regress-change"),
        &format!("{} against {}", r.labels[1], r.labels[0]),
        "change of cycles (%)",
        &cats,
        &[Series {
            name: "candidate against baseline".into(),
            values,
            labels: Some(labels),
            color: 4,
        }],
    )
    .map_err(|e| anyhow!(e))?;
    Ok(())
}
