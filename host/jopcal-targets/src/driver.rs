//! The one measurement loop every target shares.

use crate::{Job, Prepared, Progress, Reported, Target, TargetError};
use jopcal_link::StoreError;
use jopcal_measure::{Measurement, MeasurementWriter, OutDir, Unit};
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

/// What a measurement pass produced.
#[derive(Debug)]
pub struct Measured {
    /// The output directory (and where an earlier run in it went).
    pub out: OutDir,
    /// The published `measurements.csv`.
    pub csv: PathBuf,
    /// Its rows.
    pub rows: Vec<Measurement>,
    /// `(bench, one-line reason)` for every workload that failed or was left out.
    pub failures: Vec<(String, String)>,
    /// The method cache the target reported it ran with (`fifo:<bytes>:<blocks>`).
    pub method_cache: Option<String>,
    /// It times monitors as JopSim does (see [`crate::Target::times_monitors_as_jopsim`]).
    pub times_monitors_as_jopsim: bool,
    /// It ran a JOP tree's images (see [`crate::Target::runs_tree_images`]).
    pub runs_tree_images: bool,
    /// The memory's read and write wait states, where the target knows them
    /// (see [`crate::Target::wait_states`]).
    pub wait_states: Option<(f64, f64)>,
    /// Cycles of one character on its serial line, where the target knows
    /// them (see [`crate::Target::serial_char`]).
    pub serial_char: Option<f64>,
    /// The characters it prints without waiting on an idle line, where the
    /// target knows them (see [`crate::Target::serial_free`]).
    pub serial_free: Option<f64>,
}

/// Measures every job of `target` `runs` times into `out/measurements.csv`.
///
/// Each accepted result is appended durably as it arrives; a job that fails
/// is recorded in [`Measured::failures`] and the next one runs. A retry
/// that reports a benchmark again is ignored (the first result counts). A
/// job that ends without a result line but prints the JOP tree's own
/// harness lines (`N ms`) gives rows in milliseconds; one that prints
/// neither is a failure naming its last line of output.
pub fn measure(
    target: &mut dyn Target,
    out: &Path,
    stamp: &str,
    runs: u32,
    progress: &dyn Progress,
) -> Result<Measured, TargetError> {
    let staging = staging_dir(out, 0)?;
    let result = measure_prepared(target, out, stamp, runs, staging.path(), progress);
    let finished = target.finish(result.as_ref().ok().map(|m| m.out.path.as_path()));
    drop(staging);
    let m = result?;
    finished?;
    Ok(m)
}

fn measure_prepared(
    target: &mut dyn Target,
    out: &Path,
    stamp: &str,
    runs: u32,
    staging: &Path,
    progress: &dyn Progress,
) -> Result<Measured, TargetError> {
    let prepared = target.prepare(staging, progress)?;
    let (dir, ctx) = JobContext::open(target, out, stamp, runs, progress)?;
    let queue = Queue::new(ctx, &prepared.jobs);
    progress.begin("measure", queue.work.len() as u64);
    queue.drain(target, progress)?;
    progress.end();
    queue.publish(dir, &prepared, target)
}

/// Measures every job `runs` times as [`measure`] does, on `targets`
/// (equal targets: each a board, bench or JVM of its own) at once: each
/// target takes the next job as it finishes one. `measurements.csv` holds
/// the rows in the order one target would have given, and the failures
/// are in that order too. The first target is prepared first (it builds
/// the images; the others find them in the image cache).
pub fn measure_parallel(
    targets: &mut [Box<dyn Target + Send + '_>],
    out: &Path,
    stamp: &str,
    runs: u32,
    progress: &dyn Progress,
) -> Result<Measured, TargetError> {
    if let [only] = targets {
        return measure(only.as_mut(), out, stamp, runs, progress);
    }
    let staging: Vec<_> = (0..targets.len())
        .map(|k| staging_dir(out, k))
        .collect::<Result<_, _>>()?;
    let result = measure_all_prepared(targets, out, stamp, runs, &staging, progress);
    // Every target is finished; the first error is the one told.
    let mut finished = Ok(());
    for t in targets.iter_mut() {
        finished = finished.and(t.finish(result.as_ref().ok().map(|m| m.out.path.as_path())));
    }
    drop(staging);
    let m = result?;
    finished?;
    Ok(m)
}

fn measure_all_prepared(
    targets: &mut [Box<dyn Target + Send + '_>],
    out: &Path,
    stamp: &str,
    runs: u32,
    staging: &[jopcal_measure::interrupt::Scratch],
    progress: &dyn Progress,
) -> Result<Measured, TargetError> {
    let (first, rest) = targets.split_first_mut().expect("at least two targets");
    let prepared = first.prepare(staging[0].path(), progress)?;
    // The others prepare what the first did, quietly, at once.
    let others: Vec<Result<Prepared, TargetError>> = std::thread::scope(|scope| {
        let handles: Vec<_> = rest
            .iter_mut()
            .zip(&staging[1..])
            .map(|(t, st)| scope.spawn(move || t.prepare(st.path(), &crate::NoProgress)))
            .collect();
        handles
            .into_iter()
            .map(|h| {
                h.join()
                    .unwrap_or_else(|_| Err(TargetError::Usage("a target panicked while preparing".into())))
            })
            .collect()
    });
    for (k, other) in others.into_iter().enumerate() {
        if other?.jobs != prepared.jobs {
            return Err(TargetError::Usage(format!(
                "target {} of {} prepared other jobs than the first (images that differ between two builds?): run with --jobs 1",
                k + 2,
                rest.len() + 1
            )));
        }
    }
    let (dir, ctx) = JobContext::open(first.as_ref(), out, stamp, runs, progress)?;
    let queue = Queue::new(ctx, &prepared.jobs);
    progress.begin("measure", queue.work.len() as u64);
    let stopped: Result<(), TargetError> = std::thread::scope(|scope| {
        let workers: Vec<_> = std::iter::once(first)
            .chain(rest.iter_mut())
            .map(|t| {
                let queue = &queue;
                scope.spawn(move || queue.drain(t.as_mut(), progress))
            })
            .collect();
        workers.into_iter().try_for_each(|w| {
            w.join()
                .unwrap_or_else(|_| Err(TargetError::Usage("a target panicked while measuring".into())))
        })
    });
    progress.end();
    stopped?;
    queue.publish(dir, &prepared, targets[0].as_ref())
}

/// The jobs of one measurement, each run `ctx.runs` times, taken in turn by
/// whichever target is free (one target takes them all in order).
struct Queue<'a> {
    ctx: JobContext,
    jobs: &'a [Job],
    /// `(run, job)` in the order one target runs them.
    work: Vec<(u32, usize)>,
    next: std::sync::atomic::AtomicUsize,
    failed: std::sync::Mutex<Vec<((u32, usize), String)>>,
}

impl<'a> Queue<'a> {
    fn new(ctx: JobContext, jobs: &'a [Job]) -> Queue<'a> {
        let work = (1..=ctx.runs)
            .flat_map(|run| (0..jobs.len()).map(move |i| (run, i)))
            .collect();
        Queue {
            ctx,
            jobs,
            work,
            next: std::sync::atomic::AtomicUsize::new(0),
            failed: std::sync::Mutex::new(Vec::new()),
        }
    }

    /// Runs the next job on `target` until none is left.
    fn drain(&self, target: &mut dyn Target, progress: &dyn Progress) -> Result<(), TargetError> {
        loop {
            let n = self.next.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            let Some(&key) = self.work.get(n) else { return Ok(()) };
            if let Some(why) = self.ctx.run_job(target, &self.jobs[key.1], key, progress)? {
                self.failed.lock().unwrap_or_else(|e| e.into_inner()).push((key, why));
            }
        }
    }

    /// `measurements.csv` published; the failures after what `prepared` left out, in the order of the work.
    fn publish(self, dir: OutDir, prepared: &Prepared, target: &dyn Target) -> Result<Measured, TargetError> {
        let mut failed = self.failed.into_inner().unwrap_or_else(|e| e.into_inner());
        failed.sort_by_key(|(key, _)| *key);
        let mut failures = prepared.left_out.clone();
        failures.extend(failed.into_iter().map(|((_, i), why)| (self.jobs[i].name.clone(), why)));
        self.ctx.publish(dir, failures, target)
    }
}

/// A measurement's output directory `out`, prepared (an earlier run in it
/// moved aside, and said so).
pub fn prepare_out(out: &Path, stamp: &str, progress: &dyn Progress) -> Result<OutDir, TargetError> {
    let dir = OutDir::prepare(out, stamp).map_err(|e| TargetError::io(out, e))?;
    if let Some(old) = &dir.archived {
        progress.note(&format!(
            "note: the earlier run in {} was moved to {}",
            dir.path.display(),
            old.display()
        ));
    }
    Ok(dir)
}

/// The rows of a measurement as they arrive: each appended durably at
/// once, kept with its place in the order of one job at a time
/// `(run, job, arrival)`.
struct Recorder {
    inner: std::sync::Mutex<(MeasurementWriter, Vec<OrderedRow>)>,
}

/// A row with its place `(run, job, arrival)`.
type OrderedRow = ((u32, usize, usize), Measurement);

impl Recorder {
    fn new(writer: MeasurementWriter) -> Recorder {
        Recorder {
            inner: std::sync::Mutex::new((writer, Vec::new())),
        }
    }

    fn append(&self, key: (u32, usize), m: Measurement) -> Result<(), StoreError> {
        let mut g = self.inner.lock().unwrap_or_else(|e| e.into_inner());
        let (writer, rows) = &mut *g;
        writer.append(&m).map_err(|source| StoreError {
            path: writer.partial_path().to_path_buf(),
            source,
        })?;
        let arrival = rows.len();
        rows.push(((key.0, key.1, arrival), m));
        Ok(())
    }

    /// `measurements.csv` published, its rows in order.
    fn publish(self, dir: &Path) -> Result<(PathBuf, Vec<Measurement>), TargetError> {
        let (writer, mut rows) = self.inner.into_inner().unwrap_or_else(|e| e.into_inner());
        let in_order = rows.windows(2).all(|w| w[0].0 <= w[1].0);
        rows.sort_by_key(|(key, _)| *key);
        let rows: Vec<Measurement> = rows.into_iter().map(|(_, m)| m).collect();
        let csv = if in_order {
            writer.finish()
        } else {
            writer.finish_in_order(&rows)
        }
        .map_err(|e| TargetError::io(dir.join("measurements.csv"), e))?;
        Ok((csv, rows))
    }
}

/// What every job of one measurement shares.
struct JobContext {
    /// The target's name (the `target` column).
    name: &'static str,
    config: String,
    runs: u32,
    /// The output directory.
    dir: PathBuf,
    recorder: Recorder,
}

impl JobContext {
    /// The output directory, prepared (an earlier run in it moved aside),
    /// and the context of `target`'s jobs writing into it.
    fn open(
        target: &dyn Target,
        out: &Path,
        stamp: &str,
        runs: u32,
        progress: &dyn Progress,
    ) -> Result<(OutDir, JobContext), TargetError> {
        let dir = prepare_out(out, stamp, progress)?;
        // What ran the jobs, for every result's record (measurements.csv's first line).
        jopcal_measure::provenance::note("target", format!("{} ({})", target.kind().name(), target.config()));
        let writer = MeasurementWriter::create(&dir.path).map_err(|e| TargetError::io(&dir.path, e))?;
        let ctx = JobContext {
            name: target.kind().name(),
            config: target.config(),
            runs: runs.max(1),
            dir: dir.path.clone(),
            recorder: Recorder::new(writer),
        };
        Ok((dir, ctx))
    }

    /// `measurements.csv` published, with what `target` says of itself.
    fn publish(
        self,
        dir: OutDir,
        failures: Vec<(String, String)>,
        target: &dyn Target,
    ) -> Result<Measured, TargetError> {
        let (csv, rows) = self.recorder.publish(&dir.path)?;
        jopcal_measure::measurements::record_failures(&csv, &failures).map_err(|e| TargetError::io(&csv, e))?;
        Ok(Measured {
            out: dir,
            csv,
            rows,
            failures,
            method_cache: target.method_cache(),
            times_monitors_as_jopsim: target.times_monitors_as_jopsim(),
            runs_tree_images: target.runs_tree_images(),
            wait_states: target.wait_states(),
            serial_char: target.serial_char(),
            serial_free: target.serial_free(),
        })
    }

    /// Runs `job` (run `key.0`, the `key.1`th job) on `target`, its results
    /// recorded as they arrive; `Some(why)` when it failed.
    fn run_job(
        &self,
        target: &mut dyn Target,
        job: &Job,
        key: (u32, usize),
        progress: &dyn Progress,
    ) -> Result<Option<String>, TargetError> {
        let (run, runs) = (key.0, self.runs);
        progress.working_on(&job.name);
        let stamped = |r: &Reported, config: &str| Measurement {
            benchmark: r.bench.clone(),
            iterations: r.iterations,
            value: r.value,
            unit: r.unit,
            run,
            ..Measurement::stamped(self.name, config, &job.hash, &r.log)
        };
        let mut seen: BTreeSet<String> = BTreeSet::new();
        let mut sink = |r: Reported| -> Result<(), StoreError> {
            // A retry may report a result again: keep the first.
            if !seen.insert(r.bench.clone()) {
                return Ok(());
            }
            let m = stamped(&r, &self.config);
            let line = format!("{}{}: {} {}", r.bench, run_label(runs, run), m.value, m.unit);
            self.recorder.append(key, m)?;
            progress.finished(&line);
            Ok(())
        };
        let outcome = target.run(job, run, &self.dir, &mut sink, progress);
        let accepted = !seen.is_empty();
        let failure = match outcome {
            Err(why) => Some(why.to_string()),
            Ok(_) if accepted => None,
            Ok(end) => match jopcal_measure::tree_output::scan(&end.output) {
                // The JOP tree's own harness: it prints milliseconds, not cycles.
                Ok(reports) if !reports.is_empty() => {
                    let config = format!("{}; the tree's own harness: milliseconds, not cycles", self.config);
                    for r in reports {
                        let reported = Reported {
                            bench: job.name.clone(),
                            iterations: 0,
                            value: r.ms,
                            unit: Unit::Ms,
                            log: end.log.clone(),
                        };
                        self.recorder
                            .append(key, stamped(&reported, &config))
                            .map_err(|e| TargetError::io(&e.path, e.source))?;
                        progress.finished(&format!(
                            "{}: {} ms (the tree's own harness: not cycles)",
                            job.name, r.ms
                        ));
                    }
                    None
                }
                Err(e) => Some(format!("output {e} (raw output: {})", end.log)),
                Ok(_) => Some(match &end.stop {
                    Some(stop) => format!("{stop} (raw output: {})", end.log),
                    None => format!(
                        "the run printed no result line; last output: {} (raw output: {})",
                        last_words(&end.output),
                        end.log
                    ),
                }),
            },
        };
        if let Some(why) = &failure {
            progress.finished(&format!("{}{}: FAILED: {why}", job.name, run_label(runs, run)));
        }
        Ok(failure)
    }
}

/// ` run N` when the jobs run more than once.
fn run_label(runs: u32, run: u32) -> String {
    if runs > 1 {
        format!(" run {run}")
    } else {
        String::new()
    }
}

/// The last line a program printed that says something (not JOP's
/// `JVM exit!` nor the harness's closing line).
fn last_words(output: &str) -> &str {
    output
        .lines()
        .rev()
        .map(str::trim)
        .find(|l| !l.is_empty() && *l != "JVM exit!" && !l.starts_with("@jopcal done"))
        .unwrap_or("nothing")
}

/// A scratch directory beside `out` for images made before `out` is
/// prepared (an early failure leaves no output directory behind).
fn staging_dir(out: &Path, k: usize) -> Result<jopcal_measure::interrupt::Scratch, TargetError> {
    let base = match out.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    let dir = match k {
        0 => base.join(format!(".jopcal-images-{}", std::process::id())),
        k => base.join(format!(".jopcal-images-{}-{k}", std::process::id())),
    };
    jopcal_measure::interrupt::Scratch::create(&dir).map_err(|e| TargetError::io(&dir, e))
}

/// Moves `images` (and the JOP linker's maps beside them) into `dir`.
pub fn keep_images(images: &[PathBuf], dir: &Path) -> Result<(), TargetError> {
    std::fs::create_dir_all(dir).map_err(|e| TargetError::io(dir, e))?;
    let maps: Vec<PathBuf> = images
        .iter()
        .map(|p| jopcal_jop::linkmap::beside(p))
        .filter(|p| p.is_file())
        .collect();
    for p in images.iter().chain(&maps) {
        if let Some(name) = p.file_name() {
            let to = dir.join(name);
            std::fs::rename(p, &to)
                .or_else(|_| std::fs::copy(p, &to).map(|_| ()))
                .map_err(|e| TargetError::io(p, e))?;
        }
    }
    Ok(())
}

/// One line for a list of `(bench, reason)` failures: the first in full,
/// and how many; the files they name are in `out`. `None` when there are none.
pub fn failures_message(failures: &[(String, String)], out: &Path) -> Option<String> {
    match failures {
        [] => None,
        [(bench, why)] => Some(format!("workload {bench}: {why} (in {})", out.display())),
        many => Some(format!(
            "{} workload runs failed ({}); first: {}: {} (in {})",
            many.len(),
            many.iter().map(|(b, _)| b.as_str()).collect::<Vec<_>>().join(", "),
            many[0].0,
            many[0].1,
            out.display()
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Job, JobEnd, JobError, NoProgress, Prepared, Sink, TargetKind};

    /// A job's script: its name, the cycles it reports (or why it fails), what it prints.
    type Script = (&'static str, Result<Vec<u64>, &'static str>, &'static str);

    /// A target whose jobs print what the test says, through the real driver.
    struct Scripted {
        outputs: Vec<Script>,
        finished: Option<bool>,
    }

    impl Target for Scripted {
        fn kind(&self) -> TargetKind {
            TargetKind::Board
        }
        fn prepare(&mut self, _: &Path, _: &dyn Progress) -> Result<Prepared, TargetError> {
            Ok(Prepared {
                jobs: self
                    .outputs
                    .iter()
                    .map(|(n, _, _)| Job {
                        name: n.to_string(),
                        hash: "h".into(),
                    })
                    .collect(),
                left_out: vec![("Gone".into(), "does not compile".into())],
            })
        }
        fn config(&self) -> String {
            "scripted".into()
        }
        fn method_cache(&self) -> Option<String> {
            Some("fifo:2048:8".into())
        }
        fn run(
            &mut self,
            job: &Job,
            _: u32,
            _: &Path,
            sink: &mut Sink<'_>,
            _: &dyn Progress,
        ) -> Result<JobEnd, JobError> {
            let (_, results, output) = self.outputs.iter().find(|(n, _, _)| *n == job.name).unwrap();
            if job.name == "A" {
                // The first job is the slowest: side by side, the others' results arrive first.
                std::thread::sleep(std::time::Duration::from_millis(50));
            }
            let log = format!("logs/{}.log", job.name);
            for &c in results.as_ref().map_err(|why| JobError::Session {
                why: why.to_string(),
                log: log.clone(),
            })? {
                // Reported twice, as a retry would: the first counts.
                for _ in 0..2 {
                    sink(Reported {
                        bench: job.name.clone(),
                        iterations: 1,
                        value: c,
                        unit: Unit::Cycles,
                        log: format!("logs/{}.log", job.name),
                    })?;
                }
            }
            Ok(JobEnd {
                output: output.to_string(),
                log: format!("logs/{}.log", job.name),
                stop: None,
            })
        }
        fn finish(&mut self, out: Option<&Path>) -> Result<(), TargetError> {
            self.finished = Some(out.is_some());
            Ok(())
        }
    }

    #[test]
    fn the_driver_keeps_results_falls_back_to_milliseconds_and_names_failures() {
        let tmp = tempfile::tempdir().unwrap();
        let out = tmp.path().join("run");
        let mut t = Scripted {
            outputs: vec![
                ("A", Ok(vec![100]), ""),
                ("B", Err("download failed"), ""),
                ("C", Ok(vec![]), "Kfl\n1234 ms\nJVM exit!\n"),
                ("D", Ok(vec![]), "starting\nException in main\nJVM exit!\n"),
            ],
            finished: None,
        };
        let m = measure(&mut t, &out, "20261123T000000Z", 1, &NoProgress).unwrap();
        assert_eq!(t.finished, Some(true));
        assert_eq!(m.method_cache.as_deref(), Some("fifo:2048:8"), "the target's own cache");
        let got: Vec<(String, u64, Unit)> = m.rows.iter().map(|r| (r.benchmark.clone(), r.value, r.unit)).collect();
        assert_eq!(got, [("A".into(), 100, Unit::Cycles), ("C".into(), 1234, Unit::Ms)]);
        assert_eq!(jopcal_measure::measurements::read(&m.csv).unwrap(), m.rows);
        let names: Vec<&str> = m.failures.iter().map(|(n, _)| n.as_str()).collect();
        assert_eq!(names, ["Gone", "B", "D"]);
        assert_eq!(
            m.failures[2].1,
            "the run printed no result line; last output: Exception in main (raw output: logs/D.log)"
        );
        assert!(m.rows[1].target_config.contains("milliseconds"));
        let msg = failures_message(&m.failures, &m.out.path).unwrap();
        assert!(
            msg.starts_with("3 workload runs failed (Gone, B, D); first: Gone: does not compile"),
            "{msg}"
        );
        // No scratch directory is left beside the output.
        let left: Vec<_> = std::fs::read_dir(tmp.path())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(left, ["run"]);
    }

    #[test]
    fn targets_side_by_side_give_the_rows_and_failures_of_one() {
        let script = || -> Vec<Script> {
            vec![
                ("A", Ok(vec![100]), ""),
                ("B", Err("download failed"), ""),
                ("C", Ok(vec![300]), ""),
                ("D", Ok(vec![]), "starting\nException in main\nJVM exit!\n"),
                ("E", Ok(vec![500]), ""),
            ]
        };
        let tmp = tempfile::tempdir().unwrap();
        let mut one = Scripted {
            outputs: script(),
            finished: None,
        };
        let alone = measure(&mut one, &tmp.path().join("one"), "s", 2, &NoProgress).unwrap();
        let mut targets: Vec<Box<dyn Target + Send>> = (0..3)
            .map(|_| {
                Box::new(Scripted {
                    outputs: script(),
                    finished: None,
                }) as Box<dyn Target + Send>
            })
            .collect();
        let side = measure_parallel(&mut targets, &tmp.path().join("three"), "s", 2, &NoProgress).unwrap();
        let key = |m: &Measured| -> Vec<(String, u64, u32)> {
            m.rows.iter().map(|r| (r.benchmark.clone(), r.value, r.run)).collect()
        };
        assert_eq!(key(&side), key(&alone));
        assert_eq!(
            key(&side),
            [
                ("A".into(), 100, 1),
                ("C".into(), 300, 1),
                ("E".into(), 500, 1),
                ("A".into(), 100, 2),
                ("C".into(), 300, 2),
                ("E".into(), 500, 2)
            ]
        );
        assert_eq!(side.failures, alone.failures);
        // The published file holds them in that order.
        assert_eq!(jopcal_measure::measurements::read(&side.csv).unwrap(), side.rows);
        assert!(!side.out.path.join("measurements.csv.partial").exists());
        // Only the output directories are left: no scratch directory of any target.
        assert_eq!(std::fs::read_dir(tmp.path()).unwrap().count(), 2);
    }

    #[test]
    fn a_target_that_cannot_prepare_leaves_no_output_directory_and_is_still_finished() {
        struct Broken(Option<bool>);
        impl Target for Broken {
            fn kind(&self) -> TargetKind {
                TargetKind::Board
            }
            fn prepare(&mut self, _: &Path, _: &dyn Progress) -> Result<Prepared, TargetError> {
                Err(TargetError::Usage("--target board needs --port".into()))
            }
            fn config(&self) -> String {
                String::new()
            }
            fn run(
                &mut self,
                _: &Job,
                _: u32,
                _: &Path,
                _: &mut Sink<'_>,
                _: &dyn Progress,
            ) -> Result<JobEnd, JobError> {
                unreachable!("never prepared")
            }
            fn finish(&mut self, out: Option<&Path>) -> Result<(), TargetError> {
                self.0 = Some(out.is_some());
                Ok(())
            }
        }
        let tmp = tempfile::tempdir().unwrap();
        let mut t = Broken(None);
        let e = measure(&mut t, &tmp.path().join("run"), "s", 1, &NoProgress).unwrap_err();
        assert_eq!(e.to_string(), "--target board needs --port");
        assert_eq!(t.0, Some(false));
        assert_eq!(std::fs::read_dir(tmp.path()).unwrap().count(), 0);
    }
}
