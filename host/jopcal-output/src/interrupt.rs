//! What an interrupted run (SIGINT, SIGTERM) leaves: its output directory
//! registers here when it is made ([`crate::OutDir::prepare`]), and the run
//! registers a writer for its incomplete summary, the stage it has reached
//! and its scratch directories as it goes; the signal
//! handler (the CLI installs it) calls [`finish`], which writes the summary,
//! removes the scratch directories and half-written temporary files, and
//! returns the one line to print. Nothing here runs unless a signal comes.

use std::path::{Path, PathBuf};
use std::sync::Mutex;

/// Writes the run's summary into its directory, marked incomplete at the
/// stage under way (after the stages done); returns the file written.
pub type SummaryWriter = Box<dyn Fn(&Path, &str, &[String]) -> std::io::Result<PathBuf> + Send>;

#[derive(Default)]
struct Registry {
    /// The run's output directory, once this run has made it.
    dir: Option<PathBuf>,
    summary: Option<SummaryWriter>,
    /// Stages entered, in order; the last is the one under way.
    stages: Vec<String>,
    scratch: Vec<PathBuf>,
    /// Work started elsewhere to stop (a scheduler's jobs), by guard id.
    stops: Vec<(u64, StopAction)>,
    next_stop: u64,
}

/// Stops work this run started outside this process (a Slurm job array)
/// and says in a few words what it did.
pub type StopAction = Box<dyn Fn() -> String + Send>;

static REGISTRY: Mutex<Option<Registry>> = Mutex::new(None);

fn with<R>(f: impl FnOnce(&mut Registry) -> R) -> R {
    let mut guard = REGISTRY.lock().unwrap_or_else(|p| p.into_inner());
    f(guard.get_or_insert_with(Registry::default))
}

/// This run has made its output directory `dir` (the first it makes: the
/// others go inside it).
pub fn run_directory(dir: &Path) {
    with(|r| {
        r.dir.get_or_insert_with(|| dir.to_path_buf());
    });
}

/// If the run is interrupted after making its directory, `summary` writes
/// its incomplete summary there.
pub fn on_interrupt_write(summary: SummaryWriter) {
    with(|r| r.summary = Some(summary));
}

/// The run has reached `stage`.
pub fn stage(name: &str) {
    with(|r| r.stages.push(name.to_string()));
}

/// The run is over: an interrupt from now on leaves its results as they are.
pub fn run_finished() {
    with(|r| {
        r.dir = None;
        r.summary = None;
        r.stages.clear();
    });
}

/// If the run is interrupted while the guard lives, `stop` is called (and
/// its words told): for work this process started elsewhere, such as a
/// scheduler's job array, that would otherwise go on without it.
#[must_use = "the action is forgotten when the guard drops"]
pub struct StopGuard(u64);

/// Registers `stop` until the returned guard drops.
pub fn on_interrupt_stop(stop: StopAction) -> StopGuard {
    with(|r| {
        r.next_stop += 1;
        r.stops.push((r.next_stop, stop));
        StopGuard(r.next_stop)
    })
}

impl Drop for StopGuard {
    fn drop(&mut self) {
        with(|r| r.stops.retain(|(id, _)| *id != self.0));
    }
}

/// A scratch directory, removed when the guard drops or the run is
/// interrupted, with the parents it had to make when they are left empty.
#[must_use = "the directory is removed when the guard drops"]
pub struct Scratch {
    dir: PathBuf,
    /// The outermost parent made for it, if any.
    made: Option<PathBuf>,
}

impl Scratch {
    /// Makes `dir` and the parents it lacks.
    pub fn create(dir: &Path) -> std::io::Result<Scratch> {
        let made = dir
            .ancestors()
            .skip(1)
            .take_while(|a| !a.as_os_str().is_empty() && !a.exists())
            .last()
            .map(Path::to_path_buf);
        std::fs::create_dir_all(dir)?;
        with(|r| r.scratch.push(dir.to_path_buf()));
        Ok(Scratch {
            dir: dir.to_path_buf(),
            made,
        })
    }

    pub fn path(&self) -> &Path {
        &self.dir
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
        if let Some(top) = &self.made {
            // Only the empty ones: a run's output may be in them by now.
            for a in self.dir.ancestors().skip(1) {
                if std::fs::remove_dir(a).is_err() || a == top {
                    break;
                }
            }
        }
        with(|r| r.scratch.retain(|d| d != &self.dir));
    }
}

/// Set when [`finish`] starts: from then on the run's own failures
/// (its scratch removed under it) are the signal's doing, not its own.
static FINISHING: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Whether a signal's [`finish`] has begun. A run's error seen after it is
/// not reported: the signal's own line and exit status are the run's end.
pub fn finishing() -> bool {
    FINISHING.load(std::sync::atomic::Ordering::SeqCst)
}

/// After a signal: writes the incomplete summary, removes the scratch
/// directories and this process's half-written files in the run's
/// directory, and says in one line what is kept.
pub fn finish(signal: &str) -> String {
    FINISHING.store(true, std::sync::atomic::Ordering::SeqCst);
    // The children first: they would go on writing into the scratch.
    let children = crate::children::end_all(std::time::Duration::from_millis(300));
    let stopped: Vec<String> = with(|r| std::mem::take(&mut r.stops))
        .into_iter()
        .map(|(_, stop)| stop())
        .collect();
    let mut line = finish_run(signal);
    if children > 0 {
        line.push_str(&format!("; ended {children} program(s) it had started"));
    }
    if stopped.is_empty() {
        line
    } else {
        format!("{line}; {}", stopped.join("; "))
    }
}

fn finish_run(signal: &str) -> String {
    with(|r| {
        for d in r.scratch.drain(..) {
            let _ = std::fs::remove_dir_all(d);
        }
        let stage = r.stages.last().cloned().unwrap_or_else(|| "start".to_string());
        let Some(dir) = r.dir.take() else {
            return format!("{signal}: stopped before any result was written; nothing kept");
        };
        remove_temporaries(&dir);
        match r.summary.take() {
            None => format!("{signal} during {stage}: kept what was done in {}", dir.display()),
            Some(write) => {
                let done = &r.stages[..r.stages.len().saturating_sub(1)];
                match write(&dir, &stage, done) {
                    Ok(summary) => format!(
                        "{signal} during {stage}: kept what was done in {} ({} says complete: false)",
                        dir.display(),
                        summary.display()
                    ),
                    Err(e) => format!(
                        "{signal} during {stage}: kept what was done in {} (its summary could not be written: {e})",
                        dir.display()
                    ),
                }
            }
        }
    })
}

/// Removes the temporary files this process was writing under `dir`
/// (see [`crate::atomic::temp_sibling`]).
fn remove_temporaries(dir: &Path) {
    let suffix = format!(".tmp-{}", std::process::id());
    let walk = |d: &Path, next: &mut Vec<PathBuf>| {
        for e in std::fs::read_dir(d).into_iter().flatten().flatten() {
            let p = e.path();
            if e.file_type().is_ok_and(|t| t.is_dir()) {
                next.push(p);
            } else if e.file_name().to_string_lossy().ends_with(&suffix) {
                let _ = std::fs::remove_file(p);
            }
        }
    };
    let mut todo = vec![dir.to_path_buf()];
    while let Some(d) = todo.pop() {
        walk(&d, &mut todo);
    }
}

/// The registry is one per process and tests run on threads: a test that
/// registers a directory (through [`crate::OutDir::prepare`] too), or starts
/// a child group that [`finish`] would end, holds this while it runs and
/// leaves the registry empty.
#[cfg(test)]
pub(crate) fn test_serial() -> std::sync::MutexGuard<'static, ()> {
    let guard = crate::children::test_serial();
    run_finished();
    guard
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_interrupt_writes_the_summary_and_removes_scratch() {
        let _serial = test_serial();
        let dir = tempfile::tempdir().unwrap();
        let scratch_dir = dir.path().join(".scratch");
        let scratch = Scratch::create(&scratch_dir).unwrap();
        assert!(finish("SIGINT").contains("nothing kept"));
        assert!(!scratch_dir.exists());
        // From then on the run's own errors are the removal's doing.
        assert!(finishing());
        drop(scratch);
        // Parents made for it go with it when they are empty.
        let deep = dir.path().join("a/b/.scratch");
        drop(Scratch::create(&deep).unwrap());
        assert!(!dir.path().join("a").exists());
        let kept = Scratch::create(&deep).unwrap();
        std::fs::write(dir.path().join("a/result"), "").unwrap();
        drop(kept);
        assert!(dir.path().join("a/result").exists() && !dir.path().join("a/b").exists());

        let out = dir.path().join("run");
        std::fs::create_dir(&out).unwrap();
        let half = crate::atomic::temp_sibling(&out.join("estimates.csv"));
        std::fs::write(&half, "half").unwrap();
        let target = out.join("summary.json");
        let t = target.clone();
        run_directory(&out);
        on_interrupt_write(Box::new(move |_, stage, done| {
            std::fs::write(&t, format!("{stage} after {}", done.join(",")))?;
            Ok(t.clone())
        }));
        stage("build");
        stage("measure");
        let line = finish("SIGTERM");
        assert!(
            line.starts_with("SIGTERM during measure: kept what was done in"),
            "{line}"
        );
        assert_eq!(std::fs::read_to_string(&target).unwrap(), "measure after build");
        assert!(!half.exists());
        run_finished();
        assert!(finish("SIGINT").contains("nothing kept"));

        // Work started elsewhere is stopped, and said so, while its guard lives.
        let guard = on_interrupt_stop(Box::new(|| "cancelled Slurm job 7".to_string()));
        assert!(finish("SIGINT").ends_with("; cancelled Slurm job 7"));
        drop(guard);
        let guard = on_interrupt_stop(Box::new(|| "cancelled Slurm job 8".to_string()));
        drop(guard);
        assert!(!finish("SIGINT").contains("cancelled"));
    }
}
