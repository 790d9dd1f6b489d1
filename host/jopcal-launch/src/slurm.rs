//! The Slurm launcher (`--launcher slurm`): each task, one jopcal command
//! (`jopcal run` of one workload), becomes a task of a Slurm job array
//! submitted with `sbatch`, run by `jopcal task DIR` on whichever node
//! Slurm picks, in a directory the nodes share with this machine.
//!
//! The shared directory holds one directory per task, named by a hash of
//! its command: `tasks/<2 hex>/<hash>/` with `task.json` (the command),
//! `out/` (what it wrote), `stdout.log`, `stderr.log` and, once it ends,
//! `result.json`. A task whose `result.json` says it succeeded is never run
//! again: the same command run again (after a Ctrl-C, a node that died, a
//! failed task) submits only what is missing or failed. Arrays are split at
//! the cluster's `MaxArraySize`; each array's Slurm logs go in a directory
//! of their own (`logs/<submission>/<index>.out`). Progress comes as each
//! task's `result.json` appears; a task Slurm no longer lists that left no
//! result failed, and its Slurm log says why. Ctrl-C cancels the arrays
//! (`scancel`); what finished is kept.
//!
//! Scheduling is Slurm's: jopcal submits, watches and collects, nothing more.

use crate::Progress;
use anyhow::{anyhow, bail, Context, Result};
use jopcal_measure::children::InGroup;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// Where the measurements of `run`, `validate` and `sweep` run.
#[derive(Debug, Clone, Default)]
pub enum Launcher {
    /// On this machine, `--jobs` at a time.
    #[default]
    Local,
    /// As tasks of Slurm job arrays.
    Slurm(SlurmOptions),
}

/// How to submit to Slurm.
#[derive(Debug, Clone, Default)]
pub struct SlurmOptions {
    /// Options passed to `sbatch` as they are (`--partition=fpga`, `--time=30`).
    pub sbatch_args: Vec<String>,
    /// The directory shared with the nodes (default `./jopcal-slurm`).
    pub dir: Option<PathBuf>,
}

/// One task: a jopcal command line (without `--out`, which the launcher
/// gives: the task's own directory) and the seconds it may take.
#[derive(Debug, Clone)]
pub struct Task {
    /// The workload (or point and workload) it measures, for progress and errors.
    pub name: String,
    /// jopcal's arguments, the verb first (global options before it).
    pub args: Vec<String>,
    /// Seconds the task may take, set-up included.
    pub limit_secs: u64,
}

/// The command a task runs, as `task.json` holds it.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct TaskSpec {
    pub name: String,
    /// jopcal's arguments, `--out DIR/out` included.
    pub args: Vec<String>,
    /// The directory it runs in (jopcal.toml is found from there).
    pub cwd: PathBuf,
    pub limit_secs: u64,
}

/// How a task ended, as `result.json` holds it.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct TaskResult {
    pub ok: bool,
    /// Its exit status (none when it was killed).
    pub exit_code: Option<i32>,
    /// Why it failed: jopcal's one-line error, or the limit it passed.
    pub why: Option<String>,
    /// The node it ran on.
    pub host: String,
    pub seconds: f64,
}

/// A task after the arrays ended: its directory, and its failure if it failed.
#[derive(Debug, Clone)]
pub struct TaskRun {
    /// `tasks/<2 hex>/<hash>/`; the command's output is in `out/`.
    pub dir: PathBuf,
    pub failure: Option<String>,
}

impl TaskRun {
    /// The task's output directory.
    pub fn out(&self) -> PathBuf {
        self.dir.join("out")
    }
}

/// Seconds between looks at the tasks' results.
const POLL: Duration = Duration::from_millis(500);
/// Seconds between asking Slurm which tasks it still has.
const ASK_SLURM: Duration = Duration::from_secs(3);
/// A task Slurm no longer lists may still be writing its result to a
/// shared file system whose attributes are cached: it gets this long.
const GRACE: Duration = Duration::from_secs(15);
/// Slurm unanswered this long ends the watch (the tasks may still run).
const SLURM_SILENCE: Duration = Duration::from_secs(60);

/// Runs `tasks` as Slurm job arrays and waits for them: each task's
/// directory and failure, in the order of `tasks`. Tasks done by an earlier
/// run of the same command are kept, not run again.
pub fn run_tasks(progress: &Progress, opts: &SlurmOptions, what: &str, tasks: &[Task]) -> Result<Vec<TaskRun>> {
    if let Some(a) = opts.sbatch_args.iter().find(|a| sets_own_option(a)) {
        bail!("--slurm-arg {a}: jopcal sets --array, --output, --chdir and --job-name of its job arrays itself");
    }
    let shared = shared_dir(opts)?;
    let exe = std::env::current_exe().context("finding jopcal's own executable for the tasks")?;
    let cwd = std::env::current_dir()?;
    let mut runs = Vec::with_capacity(tasks.len());
    let mut todo: Vec<usize> = Vec::new();
    for (i, t) in tasks.iter().enumerate() {
        let dir = task_dir(&shared, t);
        match read_result(&dir) {
            Some(r) if r.ok => {}
            _ => {
                prepare_task(&dir, t, &cwd)?;
                todo.push(i);
            }
        }
        runs.push(TaskRun { dir, failure: None });
    }
    let kept = tasks.len() - todo.len();
    if kept > 0 {
        progress.say(&format!(
            "     slurm: {kept} of {} tasks done by an earlier run of this command: kept ({})",
            tasks.len(),
            shared.display()
        ));
    }
    if todo.is_empty() {
        return Ok(runs);
    }
    let max = max_array_size();
    let script = write_script(&shared)?;
    let submission = jopcal_measure::clock::now_stamp();
    let mut arrays: Vec<Array> = Vec::new();
    for (n, chunk) in todo.chunks(max).enumerate() {
        let logs = shared.join("logs").join(format!("{submission}-{n}"));
        std::fs::create_dir_all(&logs).with_context(|| format!("creating {}", logs.display()))?;
        let list = logs.join("tasks.list");
        let lines: String = chunk.iter().map(|&i| format!("{}\n", runs[i].dir.display())).collect();
        jopcal_measure::atomic::write_atomic(&list, lines.as_bytes())?;
        let limit = chunk.iter().map(|&i| tasks[i].limit_secs).max().unwrap_or(60);
        let job = submit(opts, what, &script, &list, &logs, &exe, &cwd, chunk.len(), limit).map_err(|e| {
            // What was submitted before keeps running without a watcher: stop it.
            let cancelled = cancel(&arrays);
            anyhow!("{e:#}{cancelled}")
        })?;
        progress.say(&format!(
            "     slurm: submitted job array {job} ({} task{} of `jopcal {what}`), logs in {}",
            chunk.len(),
            if chunk.len() == 1 { "" } else { "s" },
            logs.display()
        ));
        arrays.push(Array {
            job,
            logs,
            tasks: chunk.to_vec(),
        });
    }
    let ids: Vec<String> = arrays.iter().map(|a| a.job.clone()).collect();
    let shared_for_stop = shared.clone();
    let _stop = jopcal_measure::interrupt::on_interrupt_stop(Box::new(move || {
        let _ = Command::new("scancel").args(&ids).status();
        format!(
            "cancelled Slurm job array {} (its finished tasks are kept in {}: run the same command again to go on)",
            ids.join(", "),
            shared_for_stop.display()
        )
    }));
    watch(progress, tasks, &mut runs, &arrays)?;
    Ok(runs)
}

/// One submitted job array: its Slurm job id, its logs, the tasks at its indices.
struct Array {
    job: String,
    logs: PathBuf,
    tasks: Vec<usize>,
}

/// The shared directory, made and made absolute (the nodes run elsewhere).
fn shared_dir(opts: &SlurmOptions) -> Result<PathBuf> {
    let dir = opts.dir.clone().unwrap_or_else(|| PathBuf::from("jopcal-slurm"));
    std::fs::create_dir_all(&dir).with_context(|| format!("--slurm-dir {}: cannot create it", dir.display()))?;
    Ok(std::path::absolute(&dir)?)
}

/// `tasks/<2 hex>/<hash>`: at most 256 directories a level, however many tasks.
fn task_dir(shared: &Path, t: &Task) -> PathBuf {
    let mut h = Sha256::new();
    for a in &t.args {
        h.update(a.as_bytes());
        h.update([0]);
    }
    let hash = format!("{:x}", h.finalize());
    shared.join("tasks").join(&hash[..2]).join(&hash[..24])
}

fn read_result(dir: &Path) -> Option<TaskResult> {
    let text = std::fs::read_to_string(dir.join("result.json")).ok()?;
    serde_json::from_str(&text).ok()
}

/// A fresh directory for a task to run (again): its command, nothing else.
fn prepare_task(dir: &Path, t: &Task, cwd: &Path) -> Result<()> {
    if dir.exists() {
        std::fs::remove_dir_all(dir).with_context(|| format!("clearing {}", dir.display()))?;
    }
    std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    let mut args = t.args.clone();
    args.push("--out".into());
    args.push(dir.join("out").display().to_string());
    let spec = TaskSpec {
        name: t.name.clone(),
        args,
        cwd: cwd.to_path_buf(),
        limit_secs: t.limit_secs,
    };
    jopcal_measure::atomic::write_atomic(&dir.join("task.json"), serde_json::to_string_pretty(&spec)?.as_bytes())?;
    Ok(())
}

/// The batch script every array runs: line `SLURM_ARRAY_TASK_ID + 1` of
/// its list names the task's directory.
fn write_script(shared: &Path) -> Result<PathBuf> {
    let script = shared.join("task.sh");
    let text = "#!/bin/sh\n\
        # One task of a jopcal job array (written by jopcal): line\n\
        # SLURM_ARRAY_TASK_ID + 1 of the list \"$1\" names the task's directory;\n\
        # \"$2\" is jopcal, which runs the command in it.\n\
        dir=$(sed -n \"$((SLURM_ARRAY_TASK_ID + 1))p\" \"$1\")\n\
        [ -n \"$dir\" ] || { echo \"jopcal task: no line $((SLURM_ARRAY_TASK_ID + 1)) in $1\" >&2; exit 1; }\n\
        exec \"$2\" task \"$dir\"\n";
    jopcal_measure::atomic::write_atomic(&script, text.as_bytes())?;
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755))?;
    Ok(script)
}

/// The cluster's largest array (`MaxArraySize` less one is its last
/// index); Slurm's default 1001 where it cannot be read.
fn max_array_size() -> usize {
    let out = Command::new("scontrol").args(["show", "config"]).output();
    out.ok()
        .and_then(|o| parse_max_array_size(&String::from_utf8_lossy(&o.stdout)))
        .unwrap_or(1001)
        .saturating_sub(1)
        .max(1)
}

/// `MaxArraySize = 1001` of `scontrol show config`.
fn parse_max_array_size(config: &str) -> Option<usize> {
    config.lines().find_map(|l| {
        let (k, v) = l.split_once('=')?;
        (k.trim() == "MaxArraySize").then(|| v.trim().parse().ok())?
    })
}

/// Minutes of `--time` for a task limited to `secs` (a minute more: the task
/// ends itself first and says why).
fn time_minutes(secs: u64) -> u64 {
    secs.div_ceil(60) + 1
}

/// An sbatch option jopcal gives its arrays itself.
fn sets_own_option(a: &str) -> bool {
    ["--array", "--output", "--chdir", "--job-name", "-a", "-o", "-D", "-J"]
        .iter()
        .any(|o| a == *o || a.starts_with(&format!("{o}=")) || (o.len() == 2 && a.starts_with(o) && a.len() > 2))
}

/// Whether the user's sbatch options set the time limit themselves.
fn sets_time(args: &[String]) -> bool {
    args.iter()
        .any(|a| a == "-t" || a.starts_with("--time") || (a.starts_with("-t") && a.len() > 2))
}

#[allow(clippy::too_many_arguments)]
fn submit(
    opts: &SlurmOptions,
    what: &str,
    script: &Path,
    list: &Path,
    logs: &Path,
    exe: &Path,
    cwd: &Path,
    n: usize,
    limit_secs: u64,
) -> Result<String> {
    let mut cmd = Command::new("sbatch");
    cmd.arg("--parsable")
        .arg(format!("--array=0-{}", n - 1))
        .arg(format!("--job-name=jopcal-{what}"))
        .arg(format!("--output={}/%a.out", logs.display()))
        .arg(format!("--chdir={}", cwd.display()));
    if !sets_time(&opts.sbatch_args) {
        cmd.arg(format!("--time={}", time_minutes(limit_secs)));
    }
    cmd.args(&opts.sbatch_args).arg(script).arg(list).arg(exe);
    cmd.stdin(Stdio::null());
    let out = cmd.output().map_err(|e| {
        if e.kind() == std::io::ErrorKind::NotFound {
            anyhow!("--launcher slurm: `sbatch` is not on PATH: run jopcal where Slurm's clients are installed (Debian: slurm-client), or use --launcher local")
        } else {
            anyhow!("--launcher slurm: running sbatch: {e}")
        }
    })?;
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    if !out.status.success() {
        bail!(
            "--launcher slurm: sbatch refused the job array: {} (check --slurm-arg and that slurmctld answers: `sinfo`)",
            last_line(&stderr).unwrap_or("no reason given")
        );
    }
    // `--parsable`: `JOBID` or `JOBID;CLUSTER`.
    let id = stdout.trim().split(';').next().unwrap_or("").to_string();
    if id.is_empty() || !id.chars().all(|c| c.is_ascii_digit()) {
        bail!("--launcher slurm: sbatch answered `{}`, not a job id", stdout.trim());
    }
    Ok(id)
}

/// `scancel` of every array; a clause for an error line.
fn cancel(arrays: &[Array]) -> String {
    if arrays.is_empty() {
        return String::new();
    }
    let ids: Vec<&str> = arrays.iter().map(|a| a.job.as_str()).collect();
    let _ = Command::new("scancel").args(&ids).status();
    format!(" (cancelled the arrays submitted before: {})", ids.join(", "))
}

/// Waits until every task of `arrays` has a result or is known dead.
fn watch(progress: &Progress, tasks: &[Task], runs: &mut [TaskRun], arrays: &[Array]) -> Result<()> {
    // (job id, index) -> the task.
    let mut pending: BTreeMap<(String, usize), usize> = BTreeMap::new();
    for a in arrays {
        for (index, &t) in a.tasks.iter().enumerate() {
            pending.insert((a.job.clone(), index), t);
        }
    }
    let logs: BTreeMap<&str, &Path> = arrays.iter().map(|a| (a.job.as_str(), a.logs.as_path())).collect();
    progress.begin("slurm", pending.len() as u64);
    let mut gone_since: BTreeMap<(String, usize), Instant> = BTreeMap::new();
    let mut last_ask: Option<Instant> = None;
    let mut silent_since: Option<(Instant, String)> = None;
    while !pending.is_empty() {
        std::thread::sleep(POLL);
        // Results first: a task that wrote one is done, whatever Slurm says.
        let finished: Vec<(String, usize)> = pending
            .iter()
            .filter(|(_, &t)| runs[t].dir.join("result.json").exists())
            .map(|(k, _)| k.clone())
            .collect();
        for key in finished {
            let t = pending.remove(&key).expect("pending");
            gone_since.remove(&key);
            let r = read_result(&runs[t].dir);
            let line = match r {
                Some(r) if r.ok => format!("{}: done on {} in {:.1} s", tasks[t].name, r.host, r.seconds),
                Some(r) => {
                    let why = r.why.unwrap_or_else(|| "failed".into());
                    runs[t].failure = Some(format!("{why} (Slurm task {}_{} on {})", key.0, key.1, r.host));
                    format!("{}: FAILED: {why}", tasks[t].name)
                }
                None => {
                    runs[t].failure = Some(format!(
                        "its result.json cannot be read (Slurm task {}_{})",
                        key.0, key.1
                    ));
                    format!("{}: FAILED: unreadable result", tasks[t].name)
                }
            };
            progress.finished(&line);
        }
        if pending.is_empty() || last_ask.is_some_and(|t| t.elapsed() < ASK_SLURM) {
            continue;
        }
        last_ask = Some(Instant::now());
        let jobs: BTreeSet<&str> = pending.keys().map(|(j, _)| j.as_str()).collect();
        let listed = match queued(&jobs) {
            Ok(l) => {
                silent_since = None;
                l
            }
            Err(e) => {
                let since = silent_since.get_or_insert_with(|| (Instant::now(), String::new()));
                since.1 = e;
                if since.0.elapsed() >= SLURM_SILENCE {
                    progress.end();
                    bail!(
                        "--launcher slurm: Slurm does not answer ({}) for {} s; {} tasks of job array {} had not finished: they may still run, and running the same command again collects them",
                        since.1,
                        SLURM_SILENCE.as_secs(),
                        pending.len(),
                        jobs.into_iter().collect::<Vec<_>>().join(", ")
                    );
                }
                continue;
            }
        };
        let now = Instant::now();
        let dead: Vec<(String, usize)> = pending
            .keys()
            .filter(|k| !listed.contains(*k))
            .filter(|k| now.duration_since(*gone_since.entry((*k).clone()).or_insert(now)) >= GRACE)
            .cloned()
            .collect();
        for key in dead {
            let t = pending.remove(&key).expect("pending");
            let why = died(&runs[t].dir, logs[key.0.as_str()], &key);
            progress.finished(&format!("{}: FAILED: {why}", tasks[t].name));
            runs[t].failure = Some(why);
        }
        // Listed again (requeued): not gone.
        gone_since.retain(|k, _| !listed.contains(k));
    }
    progress.end();
    Ok(())
}

/// The `(job, index)` of every task Slurm still has (pending, running,
/// completing) of `jobs`; an `Err` is Slurm not answering.
fn queued(jobs: &BTreeSet<&str>) -> Result<BTreeSet<(String, usize)>, String> {
    let ids: Vec<&str> = jobs.iter().copied().collect();
    let out = Command::new("squeue")
        .args(["-h", "-r", "-o", "%F %K %T", "-j", &ids.join(",")])
        .stdin(Stdio::null())
        .output()
        .map_err(|e| format!("squeue: {e}"))?;
    let stderr = String::from_utf8_lossy(&out.stderr);
    if !out.status.success() {
        // Jobs purged after they ended: nothing of them is queued.
        if stderr.contains("Invalid job id") {
            return Ok(BTreeSet::new());
        }
        return Err(format!("squeue: {}", last_line(&stderr).unwrap_or("failed")));
    }
    Ok(parse_queue(&String::from_utf8_lossy(&out.stdout)))
}

/// `JOBID INDEX STATE` lines of `squeue -r -o "%F %K %T"`.
fn parse_queue(text: &str) -> BTreeSet<(String, usize)> {
    text.lines()
        .filter_map(|l| {
            let mut f = l.split_whitespace();
            let job = f.next()?;
            let index = f.next()?.parse().ok()?;
            Some((job.to_string(), index))
        })
        .collect()
}

/// Why a task that Slurm no longer lists left no result: its Slurm log's
/// last words, or where to look when it left none.
fn died(dir: &Path, logs: &Path, key: &(String, usize)) -> String {
    let log = logs.join(format!("{}.out", key.1));
    let task = format!("Slurm task {}_{}", key.0, key.1);
    match std::fs::read_to_string(&log) {
        Ok(text) => format!(
            "{task} ended without a result: {} (its Slurm log: {}; the task's own output: {})",
            last_line(&text).unwrap_or("its log is empty"),
            log.display(),
            dir.display()
        ),
        Err(_) => format!(
            "{task} ended without a result and left no Slurm log in {}: do the nodes see that directory? (--slurm-dir must be on a file system every node mounts at the same path; `sacct -j {}` may say more)",
            logs.display(),
            key.0
        ),
    }
}

fn last_line(text: &str) -> Option<&str> {
    text.lines().rev().map(str::trim).find(|l| !l.is_empty())
}

/// `jopcal task DIR`: runs the task in DIR (its `task.json`) as a child
/// jopcal, its output in `stdout.log`/`stderr.log`, killed past its limit,
/// and writes `result.json`. Returns whether it succeeded.
pub fn run_task(dir: &Path) -> Result<bool> {
    use wait_timeout::ChildExt;
    let spec_path = dir.join("task.json");
    let text = std::fs::read_to_string(&spec_path).with_context(|| format!("reading {}", spec_path.display()))?;
    let spec: TaskSpec = serde_json::from_str(&text).with_context(|| format!("{}", spec_path.display()))?;
    let exe = std::env::current_exe()?;
    let started = Instant::now();
    let file = |name: &str| {
        std::fs::File::create(dir.join(name)).with_context(|| format!("creating {}", dir.join(name).display()))
    };
    let mut child = Command::new(exe)
        .args(&spec.args)
        .current_dir(&spec.cwd)
        .stdin(Stdio::null())
        .stdout(file("stdout.log")?)
        .stderr(file("stderr.log")?)
        .spawn_in_group()
        .context("starting jopcal for the task")?;
    let status = child.wait_timeout(Duration::from_secs(spec.limit_secs))?;
    let (exit_code, why) = match status {
        Some(st) if st.success() => (Some(0), None),
        Some(st) => {
            let err = std::fs::read_to_string(dir.join("stderr.log")).unwrap_or_default();
            let why = last_line(&err)
                .map(|l| l.trim_start_matches("jopcal: error: ").to_string())
                .unwrap_or_else(|| format!("jopcal exited with {st} and said nothing"));
            (st.code(), Some(why))
        }
        None => {
            let _ = child.kill();
            let _ = child.wait();
            (
                None,
                Some(format!(
                    "the task passed its limit of {} s and was stopped (its output: {})",
                    spec.limit_secs,
                    dir.display()
                )),
            )
        }
    };
    let result = TaskResult {
        ok: why.is_none(),
        exit_code,
        why,
        host: hostname(),
        seconds: started.elapsed().as_secs_f64(),
    };
    jopcal_measure::atomic::write_atomic(
        &dir.join("result.json"),
        serde_json::to_string_pretty(&result)?.as_bytes(),
    )?;
    Ok(result.ok)
}

fn hostname() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .map(|h| h.trim().to_string())
        .unwrap_or_else(|_| "unknown".into())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slurms_answers_are_read() {
        let config =
            "Configuration data as of 2026-11-26T18:00:00\nMaxArraySize            = 1001\nMaxJobCount = 10000\n";
        assert_eq!(parse_max_array_size(config), Some(1001));
        assert_eq!(parse_max_array_size("MaxJobCount = 5"), None);
        let q = parse_queue("12 0 RUNNING\n12 3 PENDING\n13 N/A PENDING\n\n");
        assert_eq!(
            q.into_iter().collect::<Vec<_>>(),
            vec![("12".to_string(), 0), ("12".to_string(), 3)]
        );
        assert_eq!(time_minutes(120), 3);
        assert_eq!(time_minutes(121), 4);
        assert!(sets_time(&["--time=30".into()]));
        assert!(sets_time(&["-t".into(), "30".into()]));
        assert!(sets_time(&["-t30".into()]));
        assert!(!sets_time(&["--partition=fpga".into()]));
        assert!(sets_own_option("--array=0-3") && sets_own_option("-a0-3") && sets_own_option("-o"));
        assert!(!sets_own_option("--account=lab") && !sets_own_option("--open-mode=append"));
    }

    #[test]
    fn a_task_has_one_directory_per_command() {
        let shared = Path::new("/shared");
        let t = |bench: &str| Task {
            name: bench.into(),
            args: vec!["run".into(), "--bench".into(), bench.into()],
            limit_secs: 60,
        };
        assert_eq!(task_dir(shared, &t("Sieve")), task_dir(shared, &t("Sieve")));
        assert_ne!(task_dir(shared, &t("Sieve")), task_dir(shared, &t("Queens")));
        let d = task_dir(shared, &t("Sieve"));
        let rel: Vec<_> = d.strip_prefix(shared).unwrap().components().collect();
        assert_eq!(rel.len(), 3, "{d:?}");
    }

    #[test]
    fn a_task_runs_and_says_how_it_ended() {
        // The test binary stands in for jopcal: `--help`-like success and a failure.
        let dir = tempfile::tempdir().unwrap();
        let spec = TaskSpec {
            name: "t".into(),
            args: vec!["--list".into()],
            cwd: dir.path().to_path_buf(),
            limit_secs: 60,
        };
        std::fs::write(dir.path().join("task.json"), serde_json::to_string(&spec).unwrap()).unwrap();
        assert!(run_task(dir.path()).unwrap());
        let r = read_result(dir.path()).unwrap();
        assert!(r.ok && r.exit_code == Some(0), "{r:?}");
        let bad = TaskSpec {
            args: vec!["--no-such-option".into()],
            ..spec
        };
        std::fs::write(dir.path().join("task.json"), serde_json::to_string(&bad).unwrap()).unwrap();
        assert!(!run_task(dir.path()).unwrap());
        let r = read_result(dir.path()).unwrap();
        assert!(!r.ok && r.why.is_some(), "{r:?}");
    }
}
