//! `jopcal profile`: run workloads on the host JVM under the profiler agent
//! and write one `.jopprof` per benchmark (and optionally a JSON view).

use crate::cli::{ProfileArgs, ProfileFormat, RegionArg};
use crate::commands::run::prepare_host;
use crate::context;
use crate::progress::Progress;
use anyhow::{bail, Context, Result};
use jopcal_jop::tree::TreeSuite;
use jopcal_measure::{atomic, clock, OutDir};
use jopcal_profile::{Profile, EXTENSION};
use jopcal_targets::host::HostSetup;
use jopcal_workloads::profile::{profile_program, ProfileRegion, ProfileRequest};
use jopcal_workloads::Jdk;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// What a profiling pass produced.
pub struct ProfiledSet {
    pub dir: PathBuf,
    pub profiles: Vec<Profile>,
    /// `(bench, one-line reason)` per program that could not be profiled completely.
    pub failures: Vec<(String, String)>,
}

/// One program to profile.
struct Job {
    bench: String,
    request: ProfileRequest,
}

pub fn profile(firmware: Option<&Path>, jop_home: Option<&Path>, a: &ProfileArgs) -> Result<()> {
    let stamp = clock::now_stamp();
    let out = context::out_dir(a.out.as_deref(), "profile", &stamp)?;
    let timeout = Duration::from_secs(a.timeout);
    let set = match (&a.cp, &a.main) {
        (Some(cp), Some(main)) => {
            let jdk = Jdk::detect()?;
            let classpath: Vec<PathBuf> = std::env::split_paths(cp).collect();
            let bench = a
                .benches
                .first()
                .cloned()
                .unwrap_or_else(|| main.rsplit(['.', '/']).next().unwrap_or(main).to_string());
            let region = match a.region.unwrap_or(RegionArg::Main) {
                RegionArg::Main => ProfileRegion::Main,
                RegionArg::Harness => ProfileRegion::Harness,
                RegionArg::Method => {
                    ProfileRegion::Method(a.method.clone().context("--region method needs --method CLASS.NAME")?)
                }
            };
            let out = prepare(&out, &stamp)?;
            let job = Job {
                request: ProfileRequest {
                    classpath,
                    main: main.clone(),
                    region,
                    bench: bench.clone(),
                    out: out.join(format!("{bench}.{EXTENSION}")),
                    timeout,
                    jvm_args: a.jvm_args.clone(),
                    log: out.join("logs").join(format!("{bench}.log")),
                },
                bench,
            };
            run_jobs(&jdk, vec![job], &out, a.format)?
        }
        _ if a.suite.as_deref().and_then(TreeSuite::from_name).is_some()
            && matches!(a.region, Some(RegionArg::Main | RegionArg::Method)) =>
        {
            let suite = a.suite.as_deref().and_then(TreeSuite::from_name).expect("checked");
            let home = context::jop_home(jop_home)?;
            let out = prepare(&out, &stamp)?;
            original_harness_jobs(&home, suite, a, &out, timeout)?
        }
        _ => {
            let suite = a.suite.as_deref().unwrap_or("builtin");
            let root = context::suite_dir(firmware, jop_home, suite)?;
            if a.region == Some(RegionArg::Method) {
                bail!("--region method applies to a --cp/--main program, not to the suite");
            }
            if a.region == Some(RegionArg::Main) {
                eprintln!("     note: --region main counts the whole of each workload's main, harness included");
            }
            let setup = prepare_host(&root, &a.benches)?;
            profile_suite(&setup, &out, &stamp, a.region, a.format, timeout, &a.jvm_args)?
        }
    };
    println!("{}", set.dir.display());
    crate::commands::run::fail_on_failures(&set.failures, &set.dir)
}

/// Profiles a JOP tree's fixed-count harnesses themselves (not jopcal's
/// wrappers of them): compiled here with the host JDK (javac --release 8, the
/// tree's sources as the source path), each profiled over its whole `main`
/// (`--region main`) or over the harness's method NAME (`--region method
/// --method NAME`).
fn original_harness_jobs(
    home: &Path,
    suite: TreeSuite,
    a: &ProfileArgs,
    out: &Path,
    timeout: Duration,
) -> Result<ProfiledSet> {
    let tree = jopcal_jop::tree::JopTree::open(home).map_err(|e| anyhow::anyhow!(e))?;
    let selected = tree.select(suite, &a.benches).map_err(|e| anyhow::anyhow!(e))?;
    let jdk = Jdk::detect()?;
    let classes = out.join("classes");
    std::fs::create_dir_all(&classes)?;
    let mut roots: Vec<PathBuf> = selected.iter().map(|w| w.source_root.clone()).collect();
    roots.sort();
    roots.dedup();
    // The tree's encoding and, when jopcal.toml names one, the tree's compiler,
    // as for the generated suites.
    let config = crate::context::jop_config()?;
    let encoding = match config.as_ref().and_then(|c| c.encoding) {
        Some(e) => e,
        None => tree.source_encoding().map_err(|e| anyhow::anyhow!(e))?.0,
    };
    let host_javac = config.map(|c| c.host_javac).unwrap_or_default();
    let compiler = jopcal_workloads::build::Compiler::of(&host_javac, &jdk, encoding)?.argv;
    let o = std::process::Command::new(&compiler[0])
        .args(&compiler[1..])
        .arg("-d")
        .arg(&classes)
        .arg("-sourcepath")
        .arg(std::env::join_paths(&roots)?)
        .args(selected.iter().map(|w| &w.file))
        .output()
        .context("running javac")?;
    if !o.status.success() {
        let text = String::from_utf8_lossy(&o.stderr);
        let first = text
            .lines()
            .find(|l| l.contains("error:") || l.contains(". ERROR in "))
            .unwrap_or("javac failed")
            .trim();
        bail!(
            "compiling the JOP tree's harnesses with `{}`: {first}",
            compiler.join(" ")
        );
    }
    let jobs = selected
        .iter()
        .map(|w| {
            let region = match (a.region, &a.method) {
                (Some(RegionArg::Method), Some(m)) if m.contains('.') => Ok(ProfileRegion::Method(m.clone())),
                (Some(RegionArg::Method), Some(m)) => Ok(ProfileRegion::Method(format!("{}.{m}", w.main))),
                (Some(RegionArg::Method), None) => Err(anyhow::anyhow!("--region method needs --method NAME")),
                // (Only main and method come here: the harness region is the wrappers'.)
                _ => Ok(ProfileRegion::Main),
            }?;
            Ok(Job {
                bench: w.name.clone(),
                request: ProfileRequest {
                    classpath: vec![classes.clone()],
                    main: w.main.clone(),
                    region,
                    bench: w.name.clone(),
                    out: out.join(format!("{}.{EXTENSION}", w.name)),
                    timeout,
                    jvm_args: a.jvm_args.clone(),
                    log: out.join("logs").join(format!("{}.log", w.name)),
                },
            })
        })
        .collect::<Result<Vec<_>>>()?;
    run_jobs(&jdk, jobs, out, a.format)
}

fn prepare(out: &Path, stamp: &str) -> Result<PathBuf> {
    let dir = OutDir::prepare(out, stamp).with_context(|| format!("preparing {}", out.display()))?;
    if let Some(old) = &dir.archived {
        eprintln!(
            "     note: the earlier run in {} was moved to {}",
            dir.path.display(),
            old.display()
        );
    }
    Ok(dir.path)
}

/// Profiles the selected workloads of the built suite into `out`.
pub fn profile_suite(
    setup: &HostSetup,
    out: &Path,
    stamp: &str,
    region: Option<RegionArg>,
    format: ProfileFormat,
    timeout: Duration,
    jvm_args: &[String],
) -> Result<ProfiledSet> {
    let out = prepare(out, stamp)?;
    let jobs = setup
        .selected
        .iter()
        .map(|w| Job {
            bench: w.name.clone(),
            request: ProfileRequest {
                classpath: vec![setup.built.classes.clone()],
                main: w.main.clone(),
                region: match region {
                    Some(RegionArg::Main) => ProfileRegion::Main,
                    _ => ProfileRegion::Harness,
                },
                // (--region method applies to --cp/--main programs.)
                bench: w.name.clone(),
                out: out.join(format!("{}.{EXTENSION}", w.name)),
                timeout,
                jvm_args: jvm_args.to_vec(),
                log: out.join("logs").join(format!("{}.log", w.name)),
            },
        })
        .collect();
    let mut set = run_jobs(&setup.jdk, jobs, &out, format)?;
    set.failures.splice(0..0, setup.left_out.iter().cloned());
    Ok(set)
}

fn run_jobs(jdk: &Jdk, jobs: Vec<Job>, out: &Path, format: ProfileFormat) -> Result<ProfiledSet> {
    let agent = context::agent_path()?;
    let progress = Progress::new("profile", jobs.len() as u64);
    let mut set = ProfiledSet {
        dir: out.to_path_buf(),
        profiles: Vec::new(),
        failures: Vec::new(),
    };
    for job in jobs {
        progress.working_on(&job.bench);
        match profile_program(jdk, &agent, &job.request) {
            Ok(p) => {
                if format == ProfileFormat::Json {
                    let json = job.request.out.with_extension("json");
                    let text = serde_json::to_string_pretty(&jopcal_profile::to_json(&p.profile))?;
                    atomic::write_atomic(&json, text.as_bytes())
                        .with_context(|| format!("writing {}", json.display()))?;
                }
                progress.finished(&format!(
                    "{}: {} bytecodes, {} contexts, {} calls/returns",
                    job.bench,
                    p.profile.bytecodes(),
                    p.profile.nodes.len(),
                    p.profile.events.len()
                ));
                set.profiles.push(p.profile);
            }
            Err(e) => {
                progress.finished(&format!("{}: FAILED: {e}", job.bench));
                set.failures.push((job.bench.clone(), e.to_string()));
            }
        }
    }
    progress.done();
    Ok(set)
}
