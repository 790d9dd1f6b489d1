//! `--launcher slurm` against a real Slurm: Debian's `slurm-wlm` and `munge`,
//! started here as a one-node cluster in a temporary directory (as root, as
//! `scripts/setup` installs them). Skipped, saying so, where they are missing.

mod common;

use common::{copy_tree, jopcal, repo, stderr};
use jopcal_measure::measurements::{read, Measurement};
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// A one-node Slurm cluster of this machine, stopped when dropped.
struct Cluster {
    dir: tempfile::TempDir,
    conf: PathBuf,
}

impl Cluster {
    /// Starts munged, slurmctld and slurmd; `None` (with the reason printed)
    /// where Slurm is not installed or this is not root.
    fn start() -> Option<Cluster> {
        for tool in ["munged", "slurmctld", "slurmd", "sbatch", "squeue", "scancel"] {
            let found = ["/usr/sbin", "/usr/bin", "/sbin", "/bin"]
                .iter()
                .any(|d| Path::new(d).join(tool).exists());
            if !found {
                eprintln!("skipped: `{tool}` is not installed (scripts/setup installs slurm-wlm and munge)");
                return None;
            }
        }
        let uid = Command::new("id").arg("-u").output().ok()?;
        if String::from_utf8_lossy(&uid.stdout).trim() != "0" {
            eprintln!("skipped: a one-node Slurm is started as root here, and this is not root");
            return None;
        }
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        for sub in ["state", "spool", "log", "munge"] {
            std::fs::create_dir_all(d.join(sub)).unwrap();
        }
        let key: Vec<u8> = (0..1024u32)
            .map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8)
            .collect();
        std::fs::write(d.join("munge/key"), key).unwrap();
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(d.join("munge/key"), std::fs::Permissions::from_mode(0o600)).unwrap();
        let sock = d.join("munge/sock");
        let st = Command::new("munged")
            .arg(format!("--key-file={}", d.join("munge/key").display()))
            .arg(format!("--socket={}", sock.display()))
            .arg(format!("--pid-file={}", d.join("munge/pid").display()))
            .arg(format!("--log-file={}", d.join("munge/log").display()))
            .arg(format!("--seed-file={}", d.join("munge/seed").display()))
            .arg("--force")
            .status()
            .unwrap();
        assert!(st.success(), "munged did not start");
        let port = |_| TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
        let (ctld, slurmd) = (port(0), port(1));
        let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
        let p = |s: &str| d.join(s).display().to_string();
        let conf = d.join("slurm.conf");
        std::fs::write(
            &conf,
            format!(
                "ClusterName=jopcaltest\nSlurmctldHost=localhost(127.0.0.1)\nSlurmctldPort={ctld}\nSlurmdPort={slurmd}\n\
                 AuthType=auth/munge\nAuthInfo=socket={}\nCredType=cred/munge\nSlurmUser=root\nSlurmdUser=root\n\
                 ProctrackType=proctrack/linuxproc\nTaskPlugin=task/none\nSelectType=select/cons_tres\n\
                 SelectTypeParameters=CR_Core\nStateSaveLocation={}\nSlurmdSpoolDir={}\nSlurmctldPidFile={}\n\
                 SlurmdPidFile={}\nSlurmctldLogFile={}\nSlurmdLogFile={}\nMpiDefault=none\nReturnToService=2\n\
                 JobCompType=jobcomp/none\nAccountingStorageType=accounting_storage/none\n\
                 NodeName=localhost NodeAddr=127.0.0.1 CPUs={cpus} State=UNKNOWN\n\
                 PartitionName=debug Nodes=localhost Default=YES MaxTime=INFINITE State=UP\n",
                sock.display(),
                p("state"),
                p("spool"),
                p("slurmctld.pid"),
                p("slurmd.pid"),
                p("log/slurmctld.log"),
                p("log/slurmd.log"),
            ),
        )
        .unwrap();
        let cluster = Cluster { dir, conf };
        assert!(cluster
            .cmd("slurmctld")
            .arg("-f")
            .arg(&cluster.conf)
            .status()
            .unwrap()
            .success());
        assert!(cluster
            .cmd("slurmd")
            .args(["-N", "localhost", "-f"])
            .arg(&cluster.conf)
            .status()
            .unwrap()
            .success());
        let since = Instant::now();
        loop {
            let o = cluster.cmd("sinfo").args(["-h", "-o", "%T"]).output().unwrap();
            if String::from_utf8_lossy(&o.stdout).trim() == "idle" {
                break;
            }
            assert!(
                since.elapsed() < Duration::from_secs(60),
                "the one-node Slurm did not come up: {}",
                std::fs::read_to_string(cluster.dir.path().join("log/slurmctld.log")).unwrap_or_default()
            );
            std::thread::sleep(Duration::from_millis(300));
        }
        Some(cluster)
    }

    /// A Slurm command that talks to this cluster.
    fn cmd(&self, program: &str) -> Command {
        let mut c = Command::new(program);
        c.env("SLURM_CONF", &self.conf);
        c
    }

    /// jopcal, talking to this cluster, in `cwd`, on the checkout's suite.
    fn jopcal(&self, cwd: &Path) -> Command {
        let mut c = jopcal();
        c.env("SLURM_CONF", &self.conf).current_dir(cwd);
        c.arg("--firmware").arg(repo().join("jop-firmware"));
        c
    }

    /// `run` of the four workloads and Fir on the Slurm launcher, its array
    /// held (`sbatch --hold`) so that it waits in the queue: the process,
    /// once its task is pending, and the array's job id.
    // The child is returned to the caller, which waits for it.
    #[allow(clippy::zombie_processes)]
    fn held_run(&self, cwd: &Path, out: &str) -> (std::process::Child, String) {
        let mut child = self
            .jopcal(cwd)
            .arg("run")
            .args(bench_args())
            .args([
                "--bench",
                "Fir",
                "--launcher",
                "slurm",
                "--slurm-dir",
                "shared",
                "--slurm-arg=--hold",
            ])
            .args(["--out", out])
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let since = Instant::now();
        loop {
            let q = self.queued();
            if let Some(id) = q.split_whitespace().next().filter(|_| q.contains("PENDING")) {
                return (child, id.split('_').next().unwrap().to_string());
            }
            if since.elapsed() >= Duration::from_secs(60) {
                let _ = child.kill();
                let _ = child.wait();
                panic!("the held task never appeared");
            }
            std::thread::sleep(Duration::from_millis(200));
        }
    }

    /// The tasks Slurm still lists.
    fn queued(&self) -> String {
        let o = self.cmd("squeue").args(["-h", "-r", "-o", "%i %T"]).output().unwrap();
        String::from_utf8_lossy(&o.stdout).trim().to_string()
    }
}

impl Drop for Cluster {
    fn drop(&mut self) {
        for pid in ["slurmd.pid", "slurmctld.pid", "munge/pid"] {
            if let Ok(p) = std::fs::read_to_string(self.dir.path().join(pid)) {
                let _ = Command::new("kill").arg(p.trim()).status();
            }
        }
    }
}

/// What a row measured, without where and when.
fn counts(rows: &[Measurement]) -> Vec<(String, u64, u64, u32)> {
    rows.iter()
        .map(|m| (m.benchmark.clone(), m.iterations, m.value, m.run))
        .collect()
}

const BENCHES: [&str; 4] = ["Sieve", "Sort", "Fib", "Crc32"];

fn bench_args() -> Vec<String> {
    BENCHES
        .iter()
        .flat_map(|b| ["--bench".to_string(), b.to_string()])
        .collect()
}

#[test]
fn a_slurm_run_measures_what_a_local_run_does_resumes_and_cancels() {
    let Some(cluster) = Cluster::start() else { return };
    let work = tempfile::tempdir().unwrap();
    let w = work.path();
    let local = cluster
        .jopcal(w)
        .arg("run")
        .args(bench_args())
        .args(["--jobs", "1", "--out", "local"])
        .output()
        .unwrap();
    assert!(local.status.success(), "{}", stderr(&local));

    // The same measurements from a job array.
    let on_slurm = |out: &str| {
        cluster
            .jopcal(w)
            .arg("run")
            .args(bench_args())
            .args(["--launcher", "slurm", "--slurm-dir", "shared", "--out", out])
            .output()
            .unwrap()
    };
    let slurm = on_slurm("slurm");
    let err = stderr(&slurm);
    assert!(slurm.status.success(), "{err}");
    assert!(
        err.contains("submitted job array") && err.contains("(4 tasks of `jopcal run`)"),
        "{err}"
    );
    let want = counts(&read(&w.join("local/measurements.csv")).unwrap());
    let got = read(&w.join("slurm/measurements.csv")).unwrap();
    assert_eq!(counts(&got), want);
    for m in &got {
        // Each row's raw log is in the run's own directory, as a local run's.
        assert!(w.join("slurm").join(&m.log).is_file(), "{}", m.log);
    }
    assert!(w.join("slurm/target.json").is_file());

    // The same command again: nothing is submitted, the rows are the same.
    let again = on_slurm("slurm2");
    let err = stderr(&again);
    assert!(again.status.success(), "{err}");
    assert!(
        err.contains("4 of 4 tasks done by an earlier run") && !err.contains("submitted"),
        "{err}"
    );
    assert_eq!(counts(&read(&w.join("slurm2/measurements.csv")).unwrap()), want);

    // One more workload: only it runs. Held, it waits; Ctrl-C cancels it.
    let (held, _) = cluster.held_run(w, "held");
    let _ = Command::new("kill").args(["-INT", &held.id().to_string()]).status();
    let out = held.wait_with_output().unwrap();
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(130), "{err}");
    assert!(err.contains("4 of 5 tasks done by an earlier run"), "{err}");
    assert!(err.contains("(1 task of `jopcal run`)"), "{err}");
    assert!(err.contains("cancelled Slurm job array"), "{err}");
    let since = Instant::now();
    while !cluster.queued().is_empty() {
        assert!(
            since.elapsed() < Duration::from_secs(30),
            "still queued: {}",
            cluster.queued()
        );
        std::thread::sleep(Duration::from_millis(200));
    }

    // A task that dies without a result (cancelled behind jopcal's back) is a
    // failure naming the Slurm task; the others' rows are kept.
    let (dying, job) = cluster.held_run(w, "died");
    assert!(cluster.cmd("scancel").arg(&job).status().unwrap().success());
    let out = dying.wait_with_output().unwrap();
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(
        err.contains(&format!("Slurm task {job}_0 ended without a result")) && err.contains("Fir"),
        "{err}"
    );
    assert_eq!(read(&w.join("died/measurements.csv")).unwrap().len(), BENCHES.len());
}

#[test]
fn a_failed_task_is_named_the_others_kept_and_only_it_runs_again() {
    let Some(cluster) = Cluster::start() else { return };
    let work = tempfile::tempdir().unwrap();
    let w = work.path();
    // A suite of our own whose Sieve fails its self-check.
    let fw = w.join("fw");
    copy_tree(&repo().join("jop-firmware"), &fw);
    let sieve = fw.join("src/jopcal/suite/Sieve.java");
    let good = std::fs::read_to_string(&sieve).unwrap();
    std::fs::write(&sieve, good.replace("PRIMES = 303", "PRIMES = 304")).unwrap();
    let run = |out: &str| {
        let mut c = jopcal();
        c.env("SLURM_CONF", &cluster.conf)
            .current_dir(w)
            .arg("--firmware")
            .arg(&fw)
            .arg("run")
            .args(bench_args())
            .args(["--launcher", "slurm", "--slurm-dir", "shared", "--out", out]);
        c.output().unwrap()
    };
    let first = run("first");
    let err = stderr(&first);
    assert!(!first.status.success(), "{err}");
    assert!(
        err.contains("workload Sieve: output line 1 rejected: the workload reported an error")
            && err.contains("Slurm task"),
        "{err}"
    );
    let rows = read(&w.join("first/measurements.csv")).unwrap();
    assert_eq!(
        rows.iter().map(|m| m.benchmark.as_str()).collect::<Vec<_>>(),
        ["Sort", "Fib", "Crc32"]
    );
    // The workload mended, the same command runs only the failed task.
    std::fs::write(&sieve, good).unwrap();
    let second = run("second");
    let err = stderr(&second);
    assert!(second.status.success(), "{err}");
    assert!(
        err.contains("3 of 4 tasks done by an earlier run") && err.contains("(1 task of `jopcal run`)"),
        "{err}"
    );
    let rows = read(&w.join("second/measurements.csv")).unwrap();
    assert_eq!(
        rows.iter().map(|m| m.benchmark.as_str()).collect::<Vec<_>>(),
        ["Sieve", "Sort", "Fib", "Crc32"]
    );
}

#[test]
fn slurm_options_are_checked_before_anything_is_submitted() {
    // No cluster needed: each of these is refused before sbatch runs.
    let work = tempfile::tempdir().unwrap();
    let w = work.path();
    let fw = repo().join("jop-firmware");
    let refused = |args: &[&str], path: Option<&Path>| {
        let mut c = jopcal();
        c.current_dir(w).arg("--firmware").arg(&fw).args(args);
        if let Some(p) = path {
            c.env("PATH", p);
        }
        let o = c.output().unwrap();
        assert!(!o.status.success());
        let err = stderr(&o);
        assert_eq!(err.trim().lines().count(), 1, "{err}");
        err
    };
    let err = refused(&["run", "--slurm-arg=--partition=x", "--out", "a"], None);
    assert!(err.contains("apply to --launcher slurm only"), "{err}");
    let err = refused(
        &[
            "run",
            "--launcher",
            "slurm",
            "--target",
            "board",
            "--port",
            "/dev/null",
            "--out",
            "b",
        ],
        None,
    );
    assert!(err.contains("cannot run --target board"), "{err}");
    let err = refused(
        &["run", "--launcher", "slurm", "--emu-param", "nosuch=1", "--out", "c"],
        None,
    );
    assert!(err.contains("nosuch"), "{err}");
    let err = refused(
        &["run", "--launcher", "slurm", "--slurm-arg=--array=0-1", "--out", "e"],
        None,
    );
    assert!(err.contains("sets --array"), "{err}");
    let empty = w.join("empty-path");
    std::fs::create_dir(&empty).unwrap();
    let err = refused(
        &["run", "--launcher", "slurm", "--bench", "Sieve", "--out", "d"],
        Some(&empty),
    );
    assert!(err.contains("`sbatch` is not on PATH"), "{err}");
    if Path::new("/usr/bin/sbatch").exists() {
        // A Slurm that does not answer: sbatch's own reason, in one line.
        std::fs::write(
            w.join("dead.conf"),
            "ClusterName=dead\nSlurmctldHost=localhost(127.0.0.1)\nSlurmctldPort=9\nNodeName=localhost CPUs=1\nPartitionName=p Nodes=localhost Default=YES\n",
        )
        .unwrap();
        let o = jopcal()
            .current_dir(w)
            .env("SLURM_CONF", w.join("dead.conf"))
            .arg("--firmware")
            .arg(&fw)
            .args(["run", "--launcher", "slurm", "--bench", "Sieve", "--out", "f"])
            .output()
            .unwrap();
        let err = stderr(&o);
        assert!(!o.status.success() && err.trim().lines().count() == 1, "{err}");
        assert!(err.contains("sbatch refused the job array"), "{err}");
        assert!(!w.join("f").exists());
    }
    // Nothing of a refused run is left behind but the shared directory.
    for out in ["a", "b", "c", "d", "e"] {
        assert!(!w.join(out).exists(), "{out} was created");
    }
}
