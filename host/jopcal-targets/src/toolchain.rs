//! The JOP tree's toolchain as `jopcal.toml` configures it: the `build`
//! template makes one workload's `.jop` image, `image` says where it lands,
//! `jopsim` runs an image in the tree's simulator. Every command runs in the
//! tree, with a time limit, its output kept; a failure is told by the line
//! of output that says why, with the fix where jopcal knows one.

use crate::error::{ShellError, ToolError};
use crate::resident_ecj::{NotResident, ResidentEcj};
use crate::{Progress, TargetError};
use jopcal_measure::children::InGroup;
use jopcal_tree::config::{expand, JopConfig};
use jopcal_tree::copies::{self, TreeCopies};
use jopcal_workloads::{Suite, WorkloadSpec};
use sha2::{Digest, Sha256};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::{Mutex, OnceLock};
use std::time::Duration;
use wait_timeout::ChildExt;

/// Runs `sh -c cmd` in `dir` with a timeout; Ok((stdout, stderr)) on exit 0.
pub fn shell(cmd: &str, dir: &Path, timeout: Duration) -> Result<(String, String), ShellError> {
    shell_with(cmd, dir, timeout, &[])
}

/// [`shell`] with `env` added to the command's environment.
pub fn shell_with(
    cmd: &str,
    dir: &Path,
    timeout: Duration,
    env: &[(&str, &str)],
) -> Result<(String, String), ShellError> {
    let mut child = Command::new("sh")
        .args(["-c", cmd])
        .envs(env.iter().copied())
        .current_dir(dir)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn_in_group()
        .map_err(|source| ShellError::Start {
            cmd: cmd.to_string(),
            source,
        })?;
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
    let status = match child.wait_timeout(timeout).map_err(ShellError::Wait)? {
        Some(s) => s,
        None => {
            let _ = child.kill();
            let _ = child.wait();
            return Err(ShellError::Timeout {
                cmd: cmd.to_string(),
                seconds: timeout.as_secs(),
            });
        }
    };
    let (stdout, stderr) = (o.join().unwrap_or_default(), e.join().unwrap_or_default());
    if !status.success() {
        return Err(ShellError::Failed {
            cmd: cmd.to_string(),
            status,
            telling_line: telling_line(&stdout, &stderr),
        });
    }
    Ok((stdout, stderr))
}

/// The options the JVMs of an image build (the tree's compiler, linker and
/// tools, each a short run) start with: the JIT's first tier alone, one
/// compiler thread, no performance-counter file. A build of a
/// micro-benchmark's image took 4.9 s of CPU in 3.2 s without them and 2.6 s
/// in 2.0 s with them, and two builds run side by side. The images are the
/// same byte for byte (docs/notes/jop-tree.md, section 14); a different
/// collector is not: the tree's linker then orders some of its tables
/// otherwise, so none is named here.
pub const BUILD_JVM_OPTIONS: &str = "-XX:TieredStopAtLevel=1 -XX:CICompilerCount=1 -XX:-UsePerfData";

/// Where the options of an image build's JVMs come from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum JvmOptions {
    /// [`BUILD_JVM_OPTIONS`], given as `JAVA_TOOL_OPTIONS`.
    Ours(&'static str),
    /// The user's own `JAVA_TOOL_OPTIONS`, which the build inherits untouched.
    Users(&'static str),
}

impl JvmOptions {
    /// The options themselves.
    pub fn text(self) -> &'static str {
        match self {
            JvmOptions::Ours(o) | JvmOptions::Users(o) => o,
        }
    }
}

/// The options the image builds' JVMs run with: the user's
/// `JAVA_TOOL_OPTIONS` where it is set (it is part of the image's cache key,
/// as a different collector can link a different image), else ours.
pub fn build_jvm_options() -> JvmOptions {
    static USERS: std::sync::OnceLock<Option<String>> = std::sync::OnceLock::new();
    match USERS.get_or_init(|| std::env::var("JAVA_TOOL_OPTIONS").ok()).as_deref() {
        Some(o) => JvmOptions::Users(o),
        None => JvmOptions::Ours(BUILD_JVM_OPTIONS),
    }
}

/// The line of a failed command's output that says why: the first compiler
/// error (ecj's block read as one line, `jopcal_workloads::build::ecj_errors`)
/// or Java exception (a make run ends with make's own `Error 1`, which says
/// nothing), else the last line.
pub fn telling_line(stdout: &str, stderr: &str) -> String {
    // ecj (a tree's compiler) says where on one line and what on a later
    // one: read as javac's `FILE:LINE: error: message`.
    if let Some(first) = jopcal_workloads::build::ecj_errors(stderr)
        .into_iter()
        .chain(jopcal_workloads::build::ecj_errors(stdout))
        .next()
    {
        return first;
    }
    let lines = || {
        stderr
            .lines()
            .chain(stdout.lines())
            .map(str::trim)
            // Each JVM's echo of the build's options (`build_jvm_options`) says nothing.
            .filter(|l| !l.is_empty() && !l.starts_with("Picked up JAVA_TOOL_OPTIONS"))
    };
    let telling = |l: &&str| {
        (l.contains("error:")
            || l.contains("ERROR")
            || l.contains("Exception")
            || l.contains("Error:")
            || l.contains("Error "))
            && !l.starts_with("make")
            // make's own words say why only when the template names a target the tree lacks.
            || l.contains("No rule to make target")
    };
    lines()
        .find(telling)
        .or_else(|| lines().next_back())
        .unwrap_or("")
        .to_string()
}

/// A fix for a toolchain or simulator failure `why`, where jopcal knows one
/// (`docs/notes/jop-tree.md` explains each).
pub fn known_fix(why: &str) -> Option<&'static str> {
    let fixes: [(&[&str], &str); 6] = [
        (
            &["major version", "Unsupported class file", "wrong version", "ClassFormatException"],
            "the compiler writes class files newer than JOP's linker reads (version 50): put a `javac` that runs Debian's ecj first on PATH in the build template (docs/notes/jop-tree.md, step 3)",
        ),
        (
            &["StringBuilder"],
            "ecj wrote no java/lang/StringBuilder.class: compile the tree's StringBuilder.java with the application (docs/notes/jop-tree.md, step 3)",
        ),
        (
            &["-source 1.5", "Source option 5", "release version 5"],
            "JDK 17's javac cannot compile for Java 1.5 as the tree's Makefile asks: use ecj as `javac` in the build template (docs/notes/jop-tree.md, step 3)",
        ),
        (
            &["no main manifest attribute"],
            "run JopSim by class name: `java -cp .../jop-tools.jar com.jopdesign.tools.JopSim {image}` (docs/notes/jop-tree.md, step 5)",
        ),
        (
            &["could not find or load main class com.jopdesign", "unable to access jarfile"],
            "build the tree's tools first: `make tools` with JDK 17 flags (docs/notes/jop-tree.md, step 2)",
        ),
        (
            &["ArrayIndexOutOfBoundsException"],
            "this JopSim invokes the tree's stub monitor routines: put a JopSim with the monitor fix first on its class path (docs/notes/jop-tree.md, step 4)",
        ),
    ];
    let low = why.to_lowercase();
    fixes
        .iter()
        .find(|(needles, _)| needles.iter().any(|n| low.contains(&n.to_lowercase())))
        .map(|(_, fix)| *fix)
}

/// The JOP tree's toolchain as `jopcal.toml` configures it: the `build`
/// template makes one workload's image, `image` says where it lands.
///
/// With a cache ([`Toolchain::with_cache`]) each build runs in a private
/// copy of the tree (see [`jopcal_tree::copies`]), so that builds of one
/// run and of two runs never collide, and each image is kept in the cache
/// under a hash of its inputs (the templates, the workload, the generated
/// suite's files, the tree's fingerprint): an unchanged workload is not
/// built again.
pub struct Toolchain {
    /// The `[jop]` table it comes from.
    pub cfg: JopConfig,
    /// The JOP tree (every command runs there, or in a private copy of it).
    pub home: PathBuf,
    build: String,
    image: String,
    /// jopcal's cache directory, and the tree's copies in it.
    cache: Option<(PathBuf, TreeCopies)>,
    /// Hashes of the builds' inputs (the tree's fingerprint, each suite's
    /// files), each taken once: every image of a run shares them.
    input_hashes: Mutex<BTreeMap<(&'static str, PathBuf), String>>,
    /// The jopcal executable a resident ecj's script runs, if the builds
    /// may have one ([`Toolchain::with_resident_ecj`]).
    ecj_client: Option<PathBuf>,
    /// The resident ecj, started at the first build that runs.
    resident: OnceLock<Result<ResidentEcj, NotResident>>,
    /// Whether [`Toolchain::tell_resident_ecj`] has said it.
    resident_told: std::sync::atomic::AtomicBool,
}

/// Where a built image came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Provenance {
    /// The tree's toolchain built it now.
    Built,
    /// The image cache had it: its inputs have not changed.
    Cached,
}

impl Toolchain {
    /// The toolchain `cfg` configures for the tree in `home`; `why` says
    /// what needs it (for the error when a template is missing).
    pub fn new(cfg: JopConfig, home: PathBuf, why: &str) -> Result<Toolchain, TargetError> {
        let need = |v: &Option<String>, key: &'static str| {
            v.clone().ok_or_else(|| TargetError::MissingTemplate {
                file: cfg.file.clone(),
                key,
                why: format!("{why} needs it"),
            })
        };
        let (build, image) = (need(&cfg.build, "build")?, need(&cfg.image, "image")?);
        Ok(Toolchain {
            cfg,
            home,
            build,
            image,
            cache: None,
            input_hashes: Mutex::default(),
            ecj_client: None,
            resident: OnceLock::new(),
            resident_told: std::sync::atomic::AtomicBool::new(false),
        })
    }

    /// Builds in private copies of the tree kept in `cache`, and keeps
    /// every image there by the hash of its inputs.
    pub fn with_cache(mut self, cache: &Path) -> Result<Toolchain, TargetError> {
        let copies = TreeCopies::new(&self.home, cache).map_err(|e| TargetError::io(&self.home, e))?;
        self.cache = Some((cache.to_path_buf(), copies));
        Ok(self)
    }

    /// Lets the builds' `ecj` be one resident JVM
    /// ([`crate::resident_ecj`]), its script running `client` (the jopcal
    /// executable) with `__ecj-client`.
    pub fn with_resident_ecj(mut self, client: PathBuf) -> Toolchain {
        self.ecj_client = Some(client);
        self
    }

    /// The resident ecj, started at the first call, if it runs.
    fn resident_ecj(&self) -> Option<&ResidentEcj> {
        let client = self.ecj_client.as_ref()?;
        self.resident
            .get_or_init(|| ResidentEcj::start(self.cache.as_ref().map(|(c, _)| c.as_path()), client))
            .as_ref()
            .ok()
    }

    /// Says once, after the first build that ran, whether the builds' ecj
    /// is the resident one (or why not, where it should have been).
    pub fn tell_resident_ecj(&self, progress: &dyn Progress) {
        let Some(state) = self.resident.get() else {
            return;
        };
        if self.resident_told.swap(true, std::sync::atomic::Ordering::Relaxed) {
            return;
        }
        match state {
            Ok(r) => progress.note(&format!(
                "build: the builds' ecj compiled in one resident JVM ({}; JOPCAL_RESIDENT_ECJ=0 runs a fresh ecj each time)",
                r.jar.display()
            )),
            Err(NotResident::Failed(why)) => {
                progress.note(&format!("build: a fresh ecj for each compile: the resident one did not start: {why}"))
            }
            Err(NotResident::NotHere(_)) => {}
        }
    }

    /// Whether a build can run in a copy of the tree: the templates say
    /// where the tree is only through `{home}` (or a path relative to it).
    fn builds_in_a_copy(&self) -> bool {
        let home = self.home.to_string_lossy();
        !names_path(&self.build, &home) && !names_path(&self.image, &home)
    }

    /// The placeholder values for one workload of the suite in `root`, the tree at `home`.
    fn values(
        &self,
        home: &Path,
        suite: &Suite,
        job: &WorkloadSpec,
        out: &Path,
    ) -> std::io::Result<BTreeMap<&'static str, String>> {
        let class = job.main.rsplit('.').next().unwrap_or(&job.main).to_string();
        let package_dir = job
            .main
            .rsplit_once('.')
            .map_or(String::new(), |(p, _)| p.replace('.', "/"));
        // The commands run in the tree: every path they get is absolute.
        let gen = std::path::absolute(suite.root.join("src"))?;
        let roots = suite
            .sourcepath
            .iter()
            .map(|r| {
                // The tree's own sources are read from the copy the build runs in.
                let r = std::path::absolute(r)?;
                Ok(match r.strip_prefix(&self.home) {
                    Ok(rel) => home.join(rel),
                    Err(_) => r,
                })
            })
            .collect::<std::io::Result<Vec<_>>>()?;
        let sources = std::env::join_paths(std::iter::once(gen.clone()).chain(roots))
            .map_err(|e| std::io::Error::new(std::io::ErrorKind::InvalidInput, e))?;
        Ok(BTreeMap::from([
            ("home", home.display().to_string()),
            ("main", job.main.clone()),
            ("class", class),
            ("package_dir", package_dir),
            ("name", job.name.clone()),
            ("sources", sources.to_string_lossy().into_owned()),
            ("gen", gen.display().to_string()),
            ("out", std::path::absolute(out)?.display().to_string()),
        ]))
    }

    /// The hash of everything `job`'s image is made from: the templates,
    /// the workload, the generated suite's files, the tree (and source
    /// roots outside it) by their fingerprints.
    fn image_key(&self, suite: &Suite, job: &WorkloadSpec) -> Result<String, ToolError> {
        let mut h = Sha256::new();
        for part in [
            "jopcal image v1",
            build_jvm_options().text(),
            &self.build,
            &self.image,
            &job.main,
            &job.name,
            &self.input_hash("reading the tree", &self.home, copies::fingerprint)?,
            &self.input_hash("reading the suite", &suite.root, copies::content_hash)?,
        ] {
            h.update(part.as_bytes());
            h.update([0]);
        }
        for root in suite.sourcepath.iter().filter(|r| !r.starts_with(&self.home)) {
            h.update(
                self.input_hash("reading the sources", root, copies::fingerprint)?
                    .as_bytes(),
            );
        }
        Ok(format!("{:x}", h.finalize())[..32].to_string())
    }

    /// `hash` of `dir`, taken at its first use by this toolchain.
    fn input_hash(
        &self,
        what: &'static str,
        dir: &Path,
        hash: fn(&Path) -> std::io::Result<String>,
    ) -> Result<String, ToolError> {
        let key = (what, dir.to_path_buf());
        if let Some(h) = self.input_hashes.lock().unwrap_or_else(|e| e.into_inner()).get(&key) {
            return Ok(h.clone());
        }
        let h = hash(dir).map_err(workspace_error(what, dir))?;
        self.input_hashes
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(key, h.clone());
        Ok(h)
    }

    /// Builds `job`'s image with the tree's toolchain (or takes it from the
    /// image cache), checks it, and copies it to `keep` (the next build may
    /// overwrite the toolchain's output); says where it came from.
    pub fn build_image(
        &self,
        suite: &Suite,
        job: &WorkloadSpec,
        out: &Path,
        keep: &Path,
        limit: Duration,
    ) -> Result<(PathBuf, Provenance), ToolError> {
        if let Some(parent) = keep.parent() {
            std::fs::create_dir_all(parent).map_err(|source| ToolError::Dir {
                path: parent.to_path_buf(),
                source,
            })?;
        }
        let Some((cache, copies)) = &self.cache else {
            let image = self.build_in(&self.home, suite, job, out, limit)?;
            copy_image(&image, keep)?;
            return Ok((keep.to_path_buf(), Provenance::Built));
        };
        let key = self.image_key(suite, job)?;
        let stored = cache.join("images").join(&key);
        let stored_image = stored.join("image.jop");
        if stored_image.is_file() && jopcal_link::JopImage::load(&stored_image, None).is_ok() {
            copy_image(&stored_image, keep)?;
            return Ok((keep.to_path_buf(), Provenance::Cached));
        }
        let lease = if self.builds_in_a_copy() {
            copies.lease()
        } else {
            // The templates name the tree itself: one build at a time in it.
            copies.lock_tree()
        }
        .map_err(workspace_error("preparing a tree to build in from", copies.tree()))?;
        let image = self.build_in(&lease.dir, suite, job, out, limit)?;
        // Copied while the lease is held: the next build there overwrites it.
        copy_image(&image, keep)?;
        drop(lease);
        let image = keep.to_path_buf();
        // Stored aside, then renamed into place: a concurrent run stores the same bytes.
        let aside = cache.join("images").join(format!(
            ".{key}.{}.{:?}",
            std::process::id(),
            std::thread::current().id()
        ));
        let _ = std::fs::remove_dir_all(&aside);
        std::fs::create_dir_all(&aside).map_err(workspace_error("storing the image in", &aside))?;
        copy_image(&image, &aside.join("image.jop"))?;
        if std::fs::rename(&aside, &stored).is_err() {
            // Another build stored it first.
            let _ = std::fs::remove_dir_all(&aside);
        }
        Ok((image, Provenance::Built))
    }

    /// Runs the build template for `job` in the tree at `home`; the image it made.
    fn build_in(
        &self,
        home: &Path,
        suite: &Suite,
        job: &WorkloadSpec,
        out: &Path,
        limit: Duration,
    ) -> Result<PathBuf, ToolError> {
        let v = self.values(home, suite, job, out).map_err(ToolError::Paths)?;
        let cmd = expand(&self.build, &v);
        let mut env: Vec<(String, String)> = match build_jvm_options() {
            JvmOptions::Ours(o) => vec![("JAVA_TOOL_OPTIONS".into(), o.into())],
            JvmOptions::Users(_) => vec![],
        };
        if let Some(r) = self.resident_ecj() {
            env.extend(r.env());
        }
        let env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
        shell_with(&cmd, home, limit, &env).map_err(ToolError::Build)?;
        let image = PathBuf::from(expand(&self.image, &v));
        let image = if image.is_absolute() { image } else { home.join(image) };
        jopcal_link::JopImage::load(&image, None)?;
        Ok(image)
    }

    /// The `jopsim` template filled for `job`'s `image`.
    pub fn jopsim_command(
        &self,
        template: &str,
        suite: &Suite,
        job: &WorkloadSpec,
        out: &Path,
        image: &Path,
    ) -> Result<String, ToolError> {
        let mut v = self.values(&self.home, suite, job, out).map_err(ToolError::Paths)?;
        let image = std::path::absolute(image).map_err(|source| ToolError::Dir {
            path: image.to_path_buf(),
            source,
        })?;
        v.insert("image", image.display().to_string());
        Ok(expand(template, &v))
    }

    /// Builds the image of every workload of `jobs` into `dir`
    /// (`<name>.jop`), `parallel` at a time, with progress; the first
    /// failure (in the order of `jobs`) ends it.
    pub fn build_all(
        &self,
        suite: &Suite,
        jobs: &[WorkloadSpec],
        dir: &Path,
        limit: Duration,
        parallel: usize,
        progress: &dyn Progress,
    ) -> Result<Vec<PathBuf>, TargetError> {
        progress.begin("build", jobs.len() as u64);
        let results = crate::parallel::map_in_order(jobs, parallel, Result::is_err, |job| {
            progress.working_on(&job.name);
            let keep = dir.join(format!("{}.jop", job.name));
            let r = self.build_image(suite, job, dir, &keep, limit);
            if let Ok((p, how)) = &r {
                let cached = match how {
                    Provenance::Cached => " (cached: its inputs are unchanged)",
                    Provenance::Built => "",
                };
                progress.finished(&format!("{}: {}{cached}", job.name, p.display()));
            }
            r.map(|(p, _)| p)
        });
        self.tell_resident_ecj(progress);
        progress.end();
        let mut images = Vec::new();
        // The first failure in the order of `jobs`; the builds not started after it are `None`.
        for (job, r) in jobs.iter().zip(results).filter_map(|(j, r)| r.map(|r| (j, r))) {
            images.push(r.map_err(|source| TargetError::Image {
                workload: job.name.clone(),
                source,
            })?);
        }
        Ok(images)
    }
}

/// A failure to prepare the tree or the image cache, naming what was done to `path`.
fn workspace_error(what: &'static str, path: &Path) -> impl FnOnce(std::io::Error) -> ToolError {
    let path = path.to_path_buf();
    move |source| ToolError::Workspace { what, path, source }
}

/// Whether `template` names the directory `path` (or a file in it) literally:
/// `/work/jop` in `make -C /work/jop`, not in `/work/jopwrap`.
fn names_path(template: &str, path: &str) -> bool {
    let path = path.trim_end_matches('/');
    !path.is_empty()
        && template.match_indices(path).any(|(at, _)| {
            template[at + path.len()..]
                .chars()
                .next()
                .is_none_or(|c| !(c.is_alphanumeric() || matches!(c, '_' | '-' | '.')))
        })
}

/// Copies an image and, where there is one, JOP's link map beside it.
fn copy_image(image: &Path, to: &Path) -> Result<(), ToolError> {
    let copy = |from: &Path, to: &Path| {
        std::fs::copy(from, to).map_err(|source| ToolError::Copy {
            from: from.to_path_buf(),
            to: to.to_path_buf(),
            source,
        })
    };
    copy(image, to)?;
    // JOP's linker writes its map beside the image: keep it for the method sizes.
    let map = jopcal_jop::linkmap::beside(image);
    if map.is_file() {
        copy(&map, &jopcal_jop::linkmap::beside(to))?;
    }
    Ok(())
}

/// Runs `image` (of `job`) in the tree's JopSim; its stdout and stderr.
pub fn run_jopsim(
    tools: &Toolchain,
    suite: &Suite,
    job: &WorkloadSpec,
    out: &Path,
    image: &Path,
    limit: Duration,
) -> Result<(String, String), ToolError> {
    let template = tools.cfg.jopsim.as_deref().ok_or(ToolError::NoJopsimTemplate)?;
    let cmd = tools.jopsim_command(template, suite, job, out, image)?;
    Ok(shell(&cmd, &tools.home, limit)?)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_template_names_the_tree_only_by_its_whole_path() {
        assert!(names_path("make -C /work/jop java_app", "/work/jop"));
        assert!(names_path("/work/jop/java/target/dist/bin/{class}.jop", "/work/jop/"));
        assert!(names_path("cd '/work/jop' && make", "/work/jop"));
        assert!(!names_path(
            "PATH=/work/jopwrap:$PATH make -C {home} java_app",
            "/work/jop"
        ));
        assert!(!names_path("make -C /work/jop-2 x", "/work/jop"));
        assert!(!names_path("{home}/java/target/dist/bin/{class}.jop", "/work/jop"));
    }

    #[test]
    fn failures_of_the_trees_toolchain_get_their_fix() {
        let fix = |why: &str| known_fix(why).unwrap_or("none");
        // What the tools print in each case (seen with jop-devel/jop).
        assert!(fix("javac: error: Source option 5 is no longer supported. Use 7 or later.").contains("use ecj"));
        assert!(
            fix("org.apache.bcel.classfile.ClassFormatException: Unsupported major version 61").contains("version 50")
        );
        assert!(fix("com.jopdesign.build.MissingClassError: java.lang.StringBuilder").contains("StringBuilder.java"));
        assert!(fix("no main manifest attribute, in /j/java/tools/dist/lib/jop-tools.jar").contains("by class name"));
        assert!(
            fix("`java -cp /j/jop-tools.jar com.jopdesign.tools.JopSim x.jop` failed: java.lang.ArrayIndexOutOfBoundsException: Index 256")
                .contains("monitor fix")
        );
        assert!(fix("Error: Could not find or load main class com.jopdesign.tools.JopSim").contains("make tools"));
        assert_eq!(known_fix("make: *** [Makefile:437: java_app] Error 1"), None);
        assert_eq!(
            telling_line(
                "",
                "ecj: warn\nLoopKfl.java:3: error: ';' expected\nmake: *** Error 1\n"
            ),
            "LoopKfl.java:3: error: ';' expected"
        );
        assert_eq!(telling_line("last words\n", ""), "last words");
        // ecj's block: where, then the source and a caret, then what.
        assert_eq!(
            telling_line(
                "----------\n1. ERROR in /s/T.java (at line 27)\n\tif (Character.isLetter(c))\n\t              ^^^^^^^^\nThe method isLetter(char) is undefined for the type Character\n----------\n",
                "make: *** [Makefile:437: java_app] Error 2\n"
            ),
            "/s/T.java:27: error: The method isLetter(char) is undefined for the type Character"
        );
        assert_eq!(
            telling_line(
                "make: Entering directory '/j'\nmake: Leaving directory '/j'\n",
                "make: *** No rule to make target 'jav_app'.  Stop.\n"
            ),
            "make: *** No rule to make target 'jav_app'.  Stop."
        );
        // Each JVM's echo of the build's options is never what a failure says.
        assert_eq!(
            telling_line("", "Picked up JAVA_TOOL_OPTIONS: -XX:TieredStopAtLevel=1\n"),
            ""
        );
    }

    #[test]
    fn the_build_gets_its_jvm_options_in_its_environment() {
        let dir = tempfile::tempdir().unwrap();
        let (out, _) = shell_with(
            "echo \"$JAVA_TOOL_OPTIONS\"",
            dir.path(),
            Duration::from_secs(10),
            &[("JAVA_TOOL_OPTIONS", BUILD_JVM_OPTIONS)],
        )
        .unwrap();
        assert_eq!(out.trim(), BUILD_JVM_OPTIONS);
        // Never a collector: it would link another image (docs/notes/jop-tree.md, section 14).
        assert!(!BUILD_JVM_OPTIONS.contains("GC"), "{BUILD_JVM_OPTIONS}");
    }
}
