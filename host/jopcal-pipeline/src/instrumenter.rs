//! The instrumenting profiler, made ready to run: its Java (in crate
//! `jopcal-agent`) compiled with the JDK against Debian's ASM into jopcal's
//! cache, once per content: the run-time classes and the agent's classes
//! (directories for the boot class path, beside ASM's jars: the program's
//! class loaders never see them) and the agent's jar, which holds only the
//! manifest that names the agent's class.

use crate::share::{hex16, publish};
use anyhow::{bail, Context, Result};
use jopcal_measure::children::InGroup;
use jopcal_profiler::{JAVA_RUNTIME_SOURCES, JAVA_SOURCES};
use jopcal_workloads::profile::Profiler;
use jopcal_workloads::Jdk;
use sha2::{Digest, Sha256};
use std::path::{Path, PathBuf};

/// Which profiler a session's profiles come from (`--profiler`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Default, clap::ValueEnum)]
pub enum ProfilerKind {
    /// Per workload, whichever of the two is faster for its length: they
    /// give the same profile in everything an estimate reads (checked on
    /// every suite). The single-step agent starts faster, for a workload
    /// the target ran in fewer than 20 M cycles; the instrumenting profiler
    /// counts hundreds of times faster, for a longer one or one not measured.
    #[default]
    Auto,
    /// The single-step JVMTI agent: the oracle.
    Step,
    /// Classes rewritten as they load: about the JVM's speed.
    Instrument,
    /// Only the region's wall time: the baseline of what profiling costs
    /// (its profile counts only the main and harness classes' own code).
    Clock,
}

impl ProfilerKind {
    /// The name `--profiler` takes.
    pub fn name(self) -> &'static str {
        match self {
            ProfilerKind::Auto => "auto",
            ProfilerKind::Step => "step",
            ProfilerKind::Instrument => "instrument",
            ProfilerKind::Clock => "clock",
        }
    }

    /// The profiler that runs a workload the target ran in `cycles` (`None`:
    /// not measured): under [`ProfilerKind::Auto`] one of the two by the
    /// workload's length, else `self`.
    pub fn for_workload(self, cycles: Option<u64>) -> ProfilerKind {
        match (self, cycles) {
            (ProfilerKind::Auto, Some(c)) if c < AUTO_STEP_BELOW_CYCLES => ProfilerKind::Step,
            (ProfilerKind::Auto, _) => ProfilerKind::Instrument,
            (kind, _) => kind,
        }
    }
}

/// Under `--profiler auto`, a workload the target ran in fewer cycles than
/// this is profiled by the single-step agent. Where the two cost the same
/// (docs/notes/profilers.md): the instrumenting profiler's JVM starts about
/// a second later (it rewrites the JDK's classes first), and the agent steps
/// a few million bytecodes a second, a bytecode being 4 to 6 of JOP's
/// cycles on the tree's suites.
pub const AUTO_STEP_BELOW_CYCLES: u64 = 20_000_000;

/// The profiler of `kind`, ready to hand to the JVM (`auto` as for a
/// workload not measured).
pub fn profiler(kind: ProfilerKind, jdk: &Jdk) -> Result<Profiler> {
    match kind.for_workload(None) {
        ProfilerKind::Step => Ok(Profiler::Step {
            agent: crate::locate::agent_path()?,
        }),
        ProfilerKind::Instrument | ProfilerKind::Auto => instrumenting(jdk, false),
        ProfilerKind::Clock => instrumenting(jdk, true),
    }
}

/// Whether the instrumenting profiler can be made here (ASM is installed).
pub fn instrumenting_available() -> bool {
    asm_jars().is_ok()
}

/// ASM's jars the agent needs: the core and the tree API.
fn asm_jars() -> Result<[PathBuf; 2]> {
    let Some(asm) = jopcal_host::java::asm_jar() else {
        bail!(
            "the instrumenting profiler rewrites classes with ASM: install Debian's libasm-java (scripts/setup does) or set JOPCAL_ASM_JAR"
        );
    };
    let tree = asm.with_file_name("asm-tree.jar");
    if !tree.is_file() {
        bail!(
            "the instrumenting profiler needs ASM's tree API beside {} ({} is missing): install Debian's libasm-java",
            asm.display(),
            tree.display()
        );
    }
    Ok([asm, tree])
}

/// Compiles the instrumenting profiler into the cache (once per content).
fn instrumenting(jdk: &Jdk, clock_only: bool) -> Result<Profiler> {
    let jars = asm_jars()?;
    let mut h = Sha256::new();
    for (path, text) in JAVA_SOURCES {
        h.update(path.as_bytes());
        h.update([0]);
        h.update(text.as_bytes());
    }
    for j in &jars {
        h.update(j.to_string_lossy().as_bytes());
        h.update([0]);
    }
    h.update(jdk.version.as_bytes());
    let dir = crate::locate::cache_root()?.join("instrumenter").join(hex16(h));
    publish(&dir, |tmp| build(jdk, &jars, tmp))?;
    Ok(Profiler::Instrument {
        agent_jar: dir.join("agent.jar"),
        boot: vec![dir.join("runtime"), dir.join("agent"), jars[0].clone(), jars[1].clone()],
        clock_only,
    })
}

fn build(jdk: &Jdk, jars: &[PathBuf; 2], tmp: &Path) -> Result<()> {
    let src = tmp.join("src");
    for (path, text) in JAVA_SOURCES {
        let f = src.join(path);
        std::fs::create_dir_all(f.parent().expect("a package"))?;
        std::fs::write(&f, text).with_context(|| format!("writing {}", f.display()))?;
    }
    let files =
        |range: std::ops::Range<usize>| JAVA_SOURCES[range].iter().map(|(p, _)| src.join(p)).collect::<Vec<_>>();
    let runtime = tmp.join("runtime");
    let agent = tmp.join("agent");
    let javac = |cp: Option<std::ffi::OsString>| {
        let mut argv = vec![jdk.javac.to_string_lossy().into_owned(), "-nowarn".into()];
        if let Some(cp) = cp {
            argv.extend(["-cp".into(), cp.to_string_lossy().into_owned()]);
        }
        argv
    };
    jopcal_host::java::compile(&javac(None), &runtime, files(0..JAVA_RUNTIME_SOURCES))
        .context("compiling the instrumenting profiler's run-time")?;
    let cp = std::env::join_paths(jars.iter().map(PathBuf::as_path).chain([runtime.as_path()]))?;
    jopcal_host::java::compile(
        &javac(Some(cp)),
        &agent,
        files(JAVA_RUNTIME_SOURCES..JAVA_SOURCES.len()),
    )
    .context("compiling the instrumenting profiler's agent against ASM")?;
    // Every class is on the boot class path; the jar only names the agent.
    let manifest = tmp.join("manifest.txt");
    std::fs::write(
        &manifest,
        "Premain-Class: jopcal.prof.Agent\nCan-Retransform-Classes: true\nCan-Redefine-Classes: true\n",
    )?;
    let empty = tmp.join("empty");
    std::fs::create_dir_all(&empty)?;
    let jar_tool = jdk.javac.with_file_name("jar");
    let o = std::process::Command::new(&jar_tool)
        .arg("cfm")
        .arg(tmp.join("agent.jar"))
        .arg(&manifest)
        .arg("-C")
        .arg(&empty)
        .arg(".")
        .output_in_group()
        .with_context(|| format!("running {}", jar_tool.display()))?;
    if !o.status.success() {
        bail!("{}: {}", jar_tool.display(), String::from_utf8_lossy(&o.stderr).trim());
    }
    std::fs::remove_dir_all(&src)?;
    std::fs::remove_dir_all(&empty)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn auto_takes_the_single_step_agent_for_short_runs_alone() {
        let auto = ProfilerKind::Auto;
        assert_eq!(auto.for_workload(Some(1_000_000)), ProfilerKind::Step);
        assert_eq!(
            auto.for_workload(Some(AUTO_STEP_BELOW_CYCLES)),
            ProfilerKind::Instrument
        );
        assert_eq!(auto.for_workload(None), ProfilerKind::Instrument);
        // A profiler the user named is taken whatever the length.
        assert_eq!(ProfilerKind::Step.for_workload(None), ProfilerKind::Step);
        assert_eq!(ProfilerKind::Instrument.for_workload(Some(1)), ProfilerKind::Instrument);
        assert_eq!(ProfilerKind::Clock.for_workload(Some(1)), ProfilerKind::Clock);
    }
}
