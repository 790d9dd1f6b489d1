//! The JOP tree's toolchain as `jopcal.toml` configures it: the `build`
//! template makes one workload's `.jop` image, `image` says where it lands,
//! `jopsim` runs an image in the tree's simulator. Every command runs in the
//! tree, with a time limit, its output kept; a failure is told by the line
//! of output that says why, with the fix where jopcal knows one.

use crate::error::{ShellError, ToolError};
use crate::{Progress, TargetError};
use jopcal_tree::config::{expand, JopConfig};
use jopcal_workloads::{Suite, WorkloadSpec};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;
use wait_timeout::ChildExt;

/// Runs `sh -c cmd` in `dir` with a timeout; Ok((stdout, stderr)) on exit 0.
pub fn shell(cmd: &str, dir: &Path, timeout: Duration) -> Result<(String, String), ShellError> {
    let mut child = Command::new("sh")
        .args(["-c", cmd])
        .current_dir(dir)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
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

/// The line of a failed command's output that says why: the first compiler
/// error or Java exception (a make run ends with make's own `Error 1`, which
/// says nothing), else the last line.
pub fn telling_line(stdout: &str, stderr: &str) -> String {
    let lines = || {
        stderr
            .lines()
            .chain(stdout.lines())
            .map(str::trim)
            .filter(|l| !l.is_empty())
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
/// (`docs/jop-tree.md` explains each).
pub fn known_fix(why: &str) -> Option<&'static str> {
    let fixes: [(&[&str], &str); 6] = [
        (
            &["major version", "Unsupported class file", "wrong version", "ClassFormatException"],
            "the compiler writes class files newer than JOP's linker reads (version 50): put a `javac` that runs Debian's ecj first on PATH in the build template (docs/jop-tree.md, step 3)",
        ),
        (
            &["StringBuilder"],
            "ecj wrote no java/lang/StringBuilder.class: compile the tree's StringBuilder.java with the application (docs/jop-tree.md, step 3)",
        ),
        (
            &["-source 1.5", "Source option 5", "release version 5"],
            "JDK 17's javac cannot compile for Java 1.5 as the tree's Makefile asks: use ecj as `javac` in the build template (docs/jop-tree.md, step 3)",
        ),
        (
            &["no main manifest attribute"],
            "run JopSim by class name: `java -cp .../jop-tools.jar com.jopdesign.tools.JopSim {image}` (docs/jop-tree.md, step 5)",
        ),
        (
            &["could not find or load main class com.jopdesign", "unable to access jarfile"],
            "build the tree's tools first: `make tools` with JDK 17 flags (docs/jop-tree.md, step 2)",
        ),
        (
            &["ArrayIndexOutOfBoundsException"],
            "this JopSim invokes the tree's stub monitor routines: put a JopSim with the monitor fix first on its class path (docs/jop-tree.md, step 4)",
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
pub struct Toolchain {
    /// The `[jop]` table it comes from.
    pub cfg: JopConfig,
    /// The JOP tree (every command runs there).
    pub home: PathBuf,
    build: String,
    image: String,
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
        })
    }

    /// The placeholder values for one workload of the suite in `root`.
    fn values(&self, suite: &Suite, job: &WorkloadSpec, out: &Path) -> std::io::Result<BTreeMap<&'static str, String>> {
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
            .map(std::path::absolute)
            .collect::<std::io::Result<Vec<_>>>()?;
        let sources = std::env::join_paths(std::iter::once(gen.clone()).chain(roots))
            .map_err(|e| std::io::Error::new(std::io::ErrorKind::InvalidInput, e))?;
        Ok(BTreeMap::from([
            ("home", self.home.display().to_string()),
            ("main", job.main.clone()),
            ("class", class),
            ("package_dir", package_dir),
            ("name", job.name.clone()),
            ("sources", sources.to_string_lossy().into_owned()),
            ("gen", gen.display().to_string()),
            ("out", std::path::absolute(out)?.display().to_string()),
        ]))
    }

    /// Builds `job`'s image with the tree's toolchain, checks it, and copies it
    /// to `keep` (the next build may overwrite the toolchain's output).
    pub fn build_image(
        &self,
        suite: &Suite,
        job: &WorkloadSpec,
        out: &Path,
        keep: &Path,
        limit: Duration,
    ) -> Result<PathBuf, ToolError> {
        let v = self.values(suite, job, out).map_err(ToolError::Paths)?;
        let cmd = expand(&self.build, &v);
        shell(&cmd, &self.home, limit).map_err(ToolError::Build)?;
        let image = PathBuf::from(expand(&self.image, &v));
        let image = if image.is_absolute() {
            image
        } else {
            self.home.join(image)
        };
        jopcal_link::JopImage::load(&image, None)?;
        if let Some(parent) = keep.parent() {
            std::fs::create_dir_all(parent).map_err(|source| ToolError::Dir {
                path: parent.to_path_buf(),
                source,
            })?;
        }
        let copy = |from: &Path, to: &Path| {
            std::fs::copy(from, to).map_err(|source| ToolError::Copy {
                from: from.to_path_buf(),
                to: to.to_path_buf(),
                source,
            })
        };
        copy(&image, keep)?;
        // JOP's linker writes its map beside the image: keep it for the method sizes.
        let map = PathBuf::from(format!("{}.link.txt", image.display()));
        if map.is_file() {
            let to = PathBuf::from(format!("{}.link.txt", keep.display()));
            copy(&map, &to)?;
        }
        Ok(keep.to_path_buf())
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
        let mut v = self.values(suite, job, out).map_err(ToolError::Paths)?;
        let image = std::path::absolute(image).map_err(|source| ToolError::Dir {
            path: image.to_path_buf(),
            source,
        })?;
        v.insert("image", image.display().to_string());
        Ok(expand(template, &v))
    }

    /// Builds the image of every workload of `jobs` into `dir`
    /// (`<name>.jop`), with progress; the first failure ends it.
    pub fn build_all(
        &self,
        suite: &Suite,
        jobs: &[WorkloadSpec],
        dir: &Path,
        limit: Duration,
        progress: &dyn Progress,
    ) -> Result<Vec<PathBuf>, TargetError> {
        progress.begin("build", jobs.len() as u64);
        let mut images = Vec::new();
        for job in jobs {
            progress.working_on(&job.name);
            let keep = dir.join(format!("{}.jop", job.name));
            match self.build_image(suite, job, dir, &keep, limit) {
                Ok(p) => {
                    progress.finished(&format!("{}: {}", job.name, p.display()));
                    images.push(p);
                }
                Err(source) => {
                    progress.end();
                    return Err(TargetError::Image {
                        workload: job.name.clone(),
                        source,
                    });
                }
            }
        }
        progress.end();
        Ok(images)
    }
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
        assert_eq!(
            telling_line(
                "make: Entering directory '/j'\nmake: Leaving directory '/j'\n",
                "make: *** No rule to make target 'jav_app'.  Stop.\n"
            ),
            "make: *** No rule to make target 'jav_app'.  Stop."
        );
    }
}
