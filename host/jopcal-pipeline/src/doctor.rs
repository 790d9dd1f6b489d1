//! `jopcal doctor`: checks the user's JOP tree and its `jopcal.toml` the way
//! the verbs will use them (the host JDK, the tree's harnesses and encoding,
//! each suite compiling on the host, one image from the tree's toolchain and
//! one JopSim run; with `--link`, every workload's image), and names each
//! problem with its fix, one line each.

use crate::{locate, Session};
use anyhow::{bail, Result};
use jopcal_targets::toolchain::{known_fix, run_jopsim};
use jopcal_targets::ToolError;
use jopcal_tree::tree::{JopTree, TreeSuite};
use jopcal_workloads::{Jdk, Suite};
use std::path::Path;
use std::time::Duration;

/// What one check found.
enum Finding {
    Ok(String),
    Problem { what: String, fix: String },
    Skipped(String),
}

/// The checks so far: each said as it is made, the problems counted.
struct Checks<'a> {
    s: Session<'a>,
    problems: usize,
}

impl Checks<'_> {
    fn check(&mut self, name: &str, f: Finding) {
        self.s.say(&match &f {
            Finding::Ok(s) => format!("  ok       {name}: {s}"),
            Finding::Problem { what, fix } => format!("  PROBLEM  {name}: {what}; fix: {fix}"),
            Finding::Skipped(s) => format!("  skipped  {name}: {s}"),
        });
        if matches!(f, Finding::Problem { .. }) {
            self.problems += 1;
        }
    }

    /// The verdict: an error when any check found a problem.
    fn finish(&self) -> Result<()> {
        if self.problems > 0 {
            bail!("{} problem(s); see above", self.problems);
        }
        self.s.say("  all checks passed");
        Ok(())
    }
}

fn problem(what: impl Into<String>, fix: impl Into<String>) -> Finding {
    Finding::Problem {
        what: what.into(),
        fix: fix.into(),
    }
}

/// An image build's failure, with its fix.
fn build_problem(why: &ToolError) -> Finding {
    let why = why.to_string();
    let fix = fix_for(&why);
    problem(why, fix)
}

/// The fix for a toolchain failure, or a pointer to the set-up notes.
fn fix_for(why: &str) -> String {
    known_fix(why)
        .unwrap_or("run the command by hand in the tree to see all of its output (docs/notes/jop-tree.md)")
        .to_string()
}

/// Checks the JOP tree the session names (its harnesses, encoding, host
/// build, one image, one JopSim run), saying each finding; an error when
/// any found a problem. `timeout`: seconds for the image build and JopSim;
/// `link`: every workload of every suite built into an image.
pub fn doctor(s: Session, timeout: u64, link: bool) -> Result<()> {
    let mut c = Checks { s, problems: 0 };
    c.check(
        "host JDK",
        match Jdk::detect() {
            Ok(j) => Finding::Ok(j.version.clone()),
            Err(e) => problem(e.to_string(), "install a JDK 9 or newer (scripts/setup installs one)"),
        },
    );
    let home = match locate::jop_home(s.jop_home) {
        Ok(h) => h,
        Err(e) => {
            c.check("JOP tree", problem(e.to_string(), "name the tree with --jop-home DIR"));
            return c.finish();
        }
    };
    let tree = match JopTree::open(&home) {
        Ok(t) => t,
        Err(e) => {
            c.check(
                "JOP tree",
                problem(
                    e.to_string(),
                    "pass the root of a JOP checkout (it holds java/target/src)",
                ),
            );
            return c.finish();
        }
    };
    for suite in TreeSuite::ALL {
        let names: Vec<&str> = tree
            .workloads
            .iter()
            .filter(|w| w.suite == suite)
            .map(|w| w.name.as_str())
            .collect();
        c.check(
            &format!("{} harnesses", suite.name()),
            harnesses_finding(suite, &names, &home),
        );
    }
    let config = locate::jop_config()?;
    let encoding = match config.as_ref().and_then(|c| c.encoding) {
        Some(e) => Ok((e, "jopcal.toml")),
        None => tree.source_encoding(),
    };
    c.check(
        "source encoding",
        match &encoding {
            Ok((e, from)) => Finding::Ok(format!("{e} (from {from})")),
            Err(e) => problem(e.to_string(), "set `encoding` in the [jop] table of jopcal.toml"),
        },
    );
    // Each suite must compile on the host: the profiles and the virtual board need it.
    let mut generated = None;
    let mut roots = Vec::new();
    for suite in TreeSuite::ALL {
        let name = format!("{} on the host", suite.name());
        let f = locate::suite_dir(s.firmware, Some(&home), suite.name(), s.progress).and_then(|root| {
            crate::profile::prepare_host(s, &root, &[])?;
            Ok(root)
        });
        if let (Ok(root), None) = (&f, &generated) {
            generated = Some(root.clone());
        }
        if let Ok(root) = &f {
            roots.push((suite.name(), root.clone()));
        }
        let compiler = config
            .as_ref()
            .and_then(|c| c.host_javac.first())
            .map_or("the host JDK's javac".to_string(), |j| format!("{j} (host_javac)"));
        c.check(&name, compile_finding(f.map(|_| ()), &compiler));
    }
    if let Some(root) = &generated {
        c.check("runtime routines on the host", routines_finding(s, &home, root));
    }
    let Some(cfg) = config else {
        c.check(
            "jopcal.toml",
            Finding::Skipped(
                "none found from the current directory upwards: only the host and the virtual board can run the tree (docs/notes/jop-tree.md, step 5)"
                    .into(),
            ),
        );
        return c.finish();
    };
    c.check("jopcal.toml", Finding::Ok(cfg.file.display().to_string()));
    match generated {
        Some(root) => image_checks(&mut c, &home, &root, timeout)?,
        None => {
            // Only the toolchain's own configuration can be checked.
            let _ = toolchain_or_problem(&mut c, &home);
        }
    }
    if link {
        link_checks(&mut c, &home, &roots, timeout)?;
    }
    c.finish()
}

/// Whether a host profile of the suite in `root` runs the tree's own
/// routines for the bytecodes JOP implements in Java (docs/notes/jop-tree.md
/// section 17); the reason it cannot is in the note printed above.
fn routines_finding(s: Session, home: &Path, root: &Path) -> Finding {
    if !home.join(jopcal_host::java::RUNTIME_DIR).join("JVM.java").is_file() {
        return Finding::Skipped("the tree has no runtime JVM.java: those bytecodes are priced by constants".into());
    }
    let routed = crate::profile::prepare_host(s, root, &[])
        .and_then(|setup| crate::profile::tree_host_run(s, root, &setup, true).map(|run| (setup, run)));
    match routed {
        Ok((setup, run)) if run.classpath.first() != Some(&setup.built.classes) => Finding::Ok(format!(
            "idiv, lmul and the software float run as the tree's own routines on their operands{}; printing goes through jopcal's serial line (docs/notes/jop-tree.md section 18)",
            if run.tree_library.is_empty() {
                String::new()
            } else {
                let outer: Vec<&str> = run.tree_library.classes.iter().filter(|c| !c.contains('$')).map(String::as_str).collect();
                let merged = &run.tree_library.merged;
                let inside = if merged.is_empty() {
                    String::new()
                } else {
                    format!(" (and its methods {} inside the JDK's classes)", merged.join(", "))
                };
                format!(", and the tree's {} in place of the JDK's{inside}", outer.join(", "))
            }
        )),
        Ok(_) => problem(
            "the bytecodes JOP runs as Java routines are priced by constants (the note above says why)",
            "install Debian's libasm-java (scripts/setup does) or set JOPCAL_ASM_JAR",
        ),
        Err(e) => problem(format!("{e:#}"), "see docs/notes/jop-tree.md section 17"),
    }
}

/// Every workload of the generated suites `roots` built into an image by
/// the tree's toolchain, one finding a workload.
fn link_checks(c: &mut Checks, home: &Path, roots: &[(&str, std::path::PathBuf)], timeout: u64) -> Result<()> {
    let Some(tools) = toolchain_or_problem(c, home) else {
        return Ok(());
    };
    let scratch = tempfile::tempdir()?;
    let limit = Duration::from_secs(timeout);
    for (suite_name, root) in roots {
        let suite = Suite::load(root)?;
        // A directory of its own for each suite, as each run has: a build
        // may keep what it compiled there for the suite's other workloads.
        let out = scratch.path().join(suite_name);
        for job in &suite.workloads {
            let image = out.join(format!("{}.jop", job.name));
            let name = format!("{suite_name} {} links", job.name);
            let finding = match tools.build_image(&suite, job, &out, &image, limit) {
                Ok((p, _)) => Finding::Ok(format!(
                    "{} words",
                    jopcal_link::JopImage::load(&p, None).map_or(0, |i| i.words.len())
                )),
                Err(why) => build_problem(&why),
            };
            c.check(&name, finding);
        }
    }
    Ok(())
}

/// The toolchain jopcal.toml configures, or a problem said about it.
fn toolchain_or_problem(c: &mut Checks, home: &Path) -> Option<jopcal_targets::toolchain::Toolchain> {
    match locate::toolchain(Some(home), "building images") {
        Ok(t) => Some(t),
        Err(e) => {
            c.check(
                "toolchain",
                problem(
                    format!("{e:#}"),
                    "give `build` and `image` templates (docs/notes/jop-tree.md, step 5)",
                ),
            );
            None
        }
    }
}

/// One image of the generated suite `root` built by the tree's toolchain,
/// and run in JopSim when jopcal.toml configures it.
fn image_checks(c: &mut Checks, home: &Path, root: &Path, timeout: u64) -> Result<()> {
    let Some(tools) = toolchain_or_problem(c, home) else {
        return Ok(());
    };
    let suite = Suite::load(root)?;
    let Some(job) = suite
        .workloads
        .iter()
        .find(|w| w.name == "Kfl")
        .or(suite.workloads.first())
        .cloned()
    else {
        return Ok(());
    };
    let scratch = tempfile::tempdir()?;
    let image = scratch.path().join(format!("{}.jop", job.name));
    let limit = Duration::from_secs(timeout);
    let built = tools.build_image(&suite, &job, scratch.path(), &image, limit);
    c.check(
        &format!("image of {}", job.name),
        match &built {
            Ok((p, how)) => Finding::Ok(format!(
                "the tree's toolchain built it ({} words{})",
                jopcal_link::JopImage::load(p, None).map_or(0, |i| i.words.len()),
                match how {
                    jopcal_targets::toolchain::Provenance::Cached =>
                        ", from the image cache: built earlier from the same inputs",
                    jopcal_targets::toolchain::Provenance::Built => "",
                }
            )),
            Err(why) => build_problem(why),
        },
    );
    if built.is_err() {
        return Ok(());
    }
    let board = board_result(root, &image);
    c.check(
        &format!("virtual board on {}", job.name),
        match &board {
            Ok(line) => Finding::Ok(line.clone()),
            Err(why) => problem(why.clone(), "see the error; docs/notes/jop-tree.md, section 9"),
        },
    );
    if tools.cfg.jopsim.is_none() {
        c.check("JopSim", Finding::Skipped("no `jopsim` template in jopcal.toml".into()));
        return Ok(());
    }
    let ran = run_jopsim(&tools, &suite, &job, scratch.path(), &image, limit);
    if let (Ok(board_line), Ok((stdout, _))) = (&board, &ran) {
        let agree = stdout.lines().any(|l| l.trim() == board_line);
        c.check(
            "virtual board against JopSim",
            if agree {
                Finding::Ok("the same result line, to the cycle".into())
            } else {
                problem(
                    "the virtual board and JopSim print different result lines",
                    "compare `jopcal emu --run IMAGE --trace DIR` with JopSim's log; please report it",
                )
            },
        );
    }
    c.check(&format!("JopSim on {}", job.name), jopsim_finding(ran));
    Ok(())
}

/// The result line the virtual board prints running `image` as its board
/// program runs a download: a JOP image with the tree's table, a class
/// bundle with the board's own (calibration files beside the suite `root`).
fn board_result(root: &Path, image: &Path) -> std::result::Result<String, String> {
    use jopcal_link::peer::BoardProgram;
    let load = |path: std::result::Result<std::path::PathBuf, anyhow::Error>| {
        let path = path.map_err(|e| format!("{e:#}"))?;
        jopcal_emu::BoardConfig::load(&path, &[]).map_err(|e| e.to_string())
    };
    let mut program = jopcal_emu::EmuProgram {
        cfg: load(locate::emu_config_path(None, Some(root)))?,
        image_cfg: Some(load(locate::image_config_path(None, Some(root)))?),
        trace_dir: None,
        clock_dir: None,
        names: Vec::new(),
        reports: Vec::new(),
        known: Default::default(),
    };
    let img = jopcal_link::JopImage::load(image, None).map_err(|e| e.to_string())?;
    let mut out = Vec::new();
    program
        .run(&img, &mut |b| {
            out.extend_from_slice(b);
            Ok(())
        })
        .map_err(|e| e.to_string())?;
    if let Some(report) = program.reports.pop() {
        report.exit.map_err(|e| e.to_string())?;
    }
    let text = String::from_utf8_lossy(&out).into_owned();
    text.lines()
        .find(|l| l.starts_with("@jopcal result"))
        .map(|l| l.trim().to_string())
        .ok_or_else(|| format!("the image printed no result line; last output: {}", text.trim_end()))
}

/// The finding on a suite's harnesses in the tree.
fn harnesses_finding(suite: TreeSuite, names: &[&str], home: &Path) -> Finding {
    if names.is_empty() {
        return problem(
            format!("none in {}", home.display()),
            format!(
                "a {} suite needs Loop*.java files in a `{}` directory",
                suite.name(),
                suite.directory()
            ),
        );
    }
    Finding::Ok(format!("{} ({})", names.len(), names.join(", ")))
}

/// The finding on compiling a suite with `compiler`.
fn compile_finding(compiled: Result<()>, compiler: &str) -> Finding {
    let Err(e) = compiled else {
        return Finding::Ok(format!("compiles with {compiler}"));
    };
    let why = format!("{e:#}");
    let fix = if why.contains("unmappable character") {
        "set `encoding` in the [jop] table of jopcal.toml to the tree's source encoding"
    } else {
        "see the javac error above; a harness that cannot compile can be left out with --bench"
    };
    problem(why, fix)
}

/// The finding on one image run in JopSim: its result line, or why not.
fn jopsim_finding(ran: std::result::Result<(String, String), ToolError>) -> Finding {
    match ran {
        Ok((stdout, _)) if stdout.contains("@jopcal result") => {
            let line = stdout.lines().find(|l| l.contains("@jopcal result")).unwrap_or("");
            Finding::Ok(line.trim().to_string())
        }
        Ok((stdout, stderr)) => {
            let why = format!(
                "JopSim printed no result line; last output: {}",
                stdout
                    .lines()
                    .chain(stderr.lines())
                    .rev()
                    .find(|l| !l.trim().is_empty())
                    .unwrap_or("nothing")
            );
            problem(why, fix_for(&format!("{stdout}{stderr}")))
        }
        Err(why) => {
            let why = why.to_string();
            let fix = fix_for(&why);
            problem(why, fix)
        }
    }
}
