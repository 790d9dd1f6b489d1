//! The resident ecj: one JVM that compiles for every `ecj` the image builds
//! run. A JOP tree's `make java_app` runs its compiler three times per image
//! (the runtime, the annotations, the application, each from the tree's
//! sources), and with Debian's ecj each run spends about 0.4 s of its 0.5 s
//! starting a JVM and loading and warming the compiler. While a toolchain
//! builds, jopcal keeps ecj's batch compiler loaded in one JVM
//! (`java/JopcalEcjServer.java`) and puts an `ecj` of its own first on the
//! builds' `PATH`: a script that runs `jopcal __ecj-client`, which hands the
//! working directory and the arguments to that JVM over a Unix socket and
//! gives back ecj's output and exit status. One compile runs at a time, and
//! each is ecj's compile of the same arguments (its paths made absolute), so
//! the class files are the ones a fresh ecj writes (docs/notes/jop-tree.md,
//! section 14, compares every image). Arguments it does not know, a socket
//! that does not answer, or `JOPCAL_RESIDENT_ECJ=0` leave the compile to a
//! fresh ecj, as without it.

use jopcal_workloads::jdk::on_path;
use sha2::{Digest, Sha256};
use std::io::{BufRead, Read, Write};
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::Mutex;
use std::time::Duration;

const SERVER_SOURCE: &str = include_str!("../java/JopcalEcjServer.java");

/// The environment variable naming the server's socket, for the client.
const SOCKET_VAR: &str = "JOPCAL_ECJ_SOCKET";
/// The environment variable naming the real ecj, for the client's fallback.
const REAL_VAR: &str = "JOPCAL_ECJ_REAL";

/// Why there is no resident ecj.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum NotResident {
    /// Nothing to serve, or turned off: not worth a word.
    NotHere(String),
    /// It should have started and did not: said once, the builds go on without it.
    Failed(String),
}

/// A running resident ecj; dropping it stops the JVM and removes its directory.
pub struct ResidentEcj {
    child: Mutex<Child>,
    dir: PathBuf,
    socket: PathBuf,
    real: PathBuf,
    /// ecj's jar, as the server loaded it.
    pub jar: PathBuf,
}

/// ecj's jar: `$JOPCAL_ECJ_JAR`, the class path Debian's `ecj` script
/// names (`JAVA_CLASSPATH=...`), or Debian's place for it.
fn ecj_jar(ecj: &Path) -> Option<PathBuf> {
    if let Some(j) = std::env::var_os("JOPCAL_ECJ_JAR") {
        return Some(PathBuf::from(j));
    }
    let script = std::fs::read(ecj).ok().filter(|b| b.len() < 64 * 1024)?;
    let named = String::from_utf8_lossy(&script).lines().find_map(|l| {
        l.trim()
            .strip_prefix("JAVA_CLASSPATH=")
            .map(|v| v.trim_matches(['"', '\'']).to_string())
    });
    named
        .map(PathBuf::from)
        .or_else(|| Some(PathBuf::from("/usr/share/java/eclipse-jdt-core.jar")))
        .filter(|p| p.is_file())
}

impl ResidentEcj {
    /// Starts the resident ecj, its server compiled into `cache` (or a
    /// scratch directory) the first time; `client` is the jopcal executable
    /// the builds' `ecj` script runs.
    pub fn start(cache: Option<&Path>, client: &Path) -> Result<ResidentEcj, NotResident> {
        if std::env::var("JOPCAL_RESIDENT_ECJ").is_ok_and(|v| v == "0") {
            return Err(NotResident::NotHere("turned off (JOPCAL_RESIDENT_ECJ=0)".into()));
        }
        let real = on_path("ecj").ok_or_else(|| NotResident::NotHere("no ecj on PATH".into()))?;
        let jar = ecj_jar(&real).ok_or_else(|| NotResident::NotHere("ecj's jar not found".into()))?;
        let jdk = jopcal_workloads::jdk::Jdk::detect().map_err(|e| NotResident::NotHere(e.to_string()))?;
        let failed = |what: &str, e: &dyn std::fmt::Display| NotResident::Failed(format!("{what}: {e}"));
        let classes = server_classes(cache, &jdk, &jar).map_err(|e| NotResident::Failed(e.to_string()))?;
        let dir = std::env::temp_dir().join(format!(
            "jopcal-ecj-{}-{}",
            std::process::id(),
            NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
        ));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(dir.join("bin")).map_err(|e| failed("its directory", &e))?;
        let socket = dir.join("socket");
        let script = dir.join("bin/ecj");
        let quoted = client.to_string_lossy().replace('\'', r"'\''");
        std::fs::write(
            &script,
            format!("#!/bin/sh\n# jopcal's resident ecj (host/jopcal-targets/src/resident_ecj.rs)\nexec '{quoted}' __ecj-client \"$@\"\n"),
        )
        .map_err(|e| failed("its ecj script", &e))?;
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755))
            .map_err(|e| failed("its ecj script", &e))?;
        let cp = std::env::join_paths([classes.as_path(), jar.as_path()]).map_err(|e| failed("its class path", &e))?;
        let mut child = Command::new(&jdk.java)
            .arg("-cp")
            .arg(cp)
            .arg("JopcalEcjServer")
            .arg(&socket)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .map_err(|e| failed("starting its JVM", &e))?;
        // Both pipes are read to their end, so the server never blocks on
        // one; the first line of its standard error says why it failed.
        let out = child.stdout.take().expect("piped");
        let err = child.stderr.take().expect("piped");
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let mut lines = std::io::BufReader::new(out).lines();
            let _ = tx.send(lines.next().and_then(Result::ok).unwrap_or_default());
            lines.for_each(drop);
        });
        let said = std::sync::Arc::new(Mutex::new(String::new()));
        let keep = said.clone();
        std::thread::spawn(move || {
            for l in std::io::BufReader::new(err).lines().map_while(Result::ok) {
                let mut k = keep.lock().unwrap_or_else(|e| e.into_inner());
                if k.is_empty() && !l.trim().is_empty() {
                    *k = l.trim().to_string();
                }
            }
        });
        let ready = rx.recv_timeout(Duration::from_secs(30)).unwrap_or_default();
        let started = ResidentEcj {
            child: Mutex::new(child),
            dir,
            socket,
            real,
            jar,
        };
        if ready.trim() != "ready" {
            if let Ok(mut c) = started.child.lock() {
                let _ = c.kill();
                let _ = c.wait();
            }
            // The reader sees the pipe close once the JVM is gone.
            std::thread::sleep(Duration::from_millis(100));
            let why = said.lock().map(|s| s.clone()).unwrap_or_default();
            let why = if why.is_empty() {
                "it did not say it was ready".to_string()
            } else {
                why
            };
            return Err(NotResident::Failed(format!("its JVM did not start: {why}")));
        }
        Ok(started)
    }

    /// What a build's environment needs for its `ecj` to be this one.
    pub fn env(&self) -> Vec<(String, String)> {
        let path = std::env::var_os("PATH").unwrap_or_default();
        let path = std::env::join_paths(std::iter::once(self.dir.join("bin")).chain(std::env::split_paths(&path)))
            .map(|p| p.to_string_lossy().into_owned())
            .unwrap_or_default();
        vec![
            ("PATH".into(), path),
            (SOCKET_VAR.into(), self.socket.display().to_string()),
            (REAL_VAR.into(), self.real.display().to_string()),
        ]
    }

    /// The server's socket (for a client in this process).
    pub fn socket(&self) -> &Path {
        &self.socket
    }
}

impl Drop for ResidentEcj {
    fn drop(&mut self) {
        if let Ok(c) = self.child.get_mut() {
            let _ = c.kill();
            let _ = c.wait();
        }
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

static NEXT: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);

/// The server's class, compiled once per server source, ecj jar and JDK
/// into `cache/resident-ecj/<hash>` (or a scratch directory).
fn server_classes(cache: Option<&Path>, jdk: &jopcal_workloads::jdk::Jdk, jar: &Path) -> std::io::Result<PathBuf> {
    let meta = std::fs::metadata(jar)?;
    let mut h = Sha256::new();
    h.update(SERVER_SOURCE.as_bytes());
    h.update(
        format!(
            "{}|{}|{:?}|{}",
            jar.display(),
            meta.len(),
            meta.modified().ok(),
            jdk.version
        )
        .as_bytes(),
    );
    let key = format!("{:x}", h.finalize())[..16].to_string();
    let root = match cache {
        Some(c) => c.join("resident-ecj"),
        None => std::env::temp_dir().join("jopcal-resident-ecj"),
    };
    let dir = root.join(&key);
    if dir.join("JopcalEcjServer.class").is_file() {
        return Ok(dir);
    }
    // Compiled aside, then renamed into place: two runs may race to it.
    let aside = root.join(format!(".{key}.{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&aside);
    std::fs::create_dir_all(&aside)?;
    let source = aside.join("JopcalEcjServer.java");
    std::fs::write(&source, SERVER_SOURCE)?;
    let o = Command::new(&jdk.javac)
        .arg("-nowarn")
        .arg("-cp")
        .arg(jar)
        .arg("-d")
        .arg(&aside)
        .arg(&source)
        .output()?;
    if !o.status.success() {
        let _ = std::fs::remove_dir_all(&aside);
        let text = String::from_utf8_lossy(&o.stderr);
        return Err(std::io::Error::other(format!(
            "compiling its server: {}",
            text.lines().next().unwrap_or("javac failed")
        )));
    }
    if std::fs::rename(&aside, &dir).is_err() {
        let _ = std::fs::remove_dir_all(&aside);
    }
    Ok(dir)
}

/// What the server answered for one compile.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Compiled {
    /// ecj's exit status (0, or 255 as ecj's own `System.exit(-1)`).
    pub status: i32,
    /// What ecj printed on its standard output.
    pub stdout: Vec<u8>,
    /// What ecj printed on its standard error (its messages).
    pub stderr: Vec<u8>,
}

/// Asks the server at `socket` to compile `args` as if run in `cwd`;
/// `Ok(None)` where it leaves the compile to a fresh ecj.
pub fn compile_via(socket: &Path, cwd: &Path, args: &[String]) -> std::io::Result<Option<Compiled>> {
    let mut s = UnixStream::connect(socket)?;
    let mut req = Vec::new();
    let words: Vec<String> = std::iter::once(cwd.to_string_lossy().into_owned())
        .chain(args.iter().cloned())
        .collect();
    req.extend((words.len() as u32).to_be_bytes());
    for w in &words {
        req.extend((w.len() as u32).to_be_bytes());
        req.extend(w.as_bytes());
    }
    s.write_all(&req)?;
    s.flush()?;
    let mut r = std::io::BufReader::new(s);
    let mut kind = [0u8; 1];
    r.read_exact(&mut kind)?;
    if kind[0] != 0 {
        return Ok(None);
    }
    let mut int = [0u8; 4];
    r.read_exact(&mut int)?;
    let status = i32::from_be_bytes(int);
    let mut bytes = || -> std::io::Result<Vec<u8>> {
        let mut n = [0u8; 4];
        r.read_exact(&mut n)?;
        let mut b = vec![0u8; u32::from_be_bytes(n) as usize];
        r.read_exact(&mut b)?;
        Ok(b)
    };
    let stdout = bytes()?;
    let stderr = bytes()?;
    Ok(Some(Compiled { status, stdout, stderr }))
}

/// `jopcal __ecj-client ARGS...`, which the builds' `ecj` script runs:
/// the compile done by the resident server, or by the real ecj where the
/// server does not do it. Returns the exit status.
pub fn client(args: &[std::ffi::OsString]) -> i32 {
    let Some(real) = std::env::var_os(REAL_VAR) else {
        eprintln!("jopcal: __ecj-client runs only in an image build ({REAL_VAR} is not set)");
        return 2;
    };
    let utf8: Option<Vec<String>> = args.iter().map(|a| a.to_str().map(str::to_string)).collect();
    let answer = match (std::env::var_os(SOCKET_VAR), utf8, std::env::current_dir()) {
        (Some(socket), Some(args), Ok(cwd)) => compile_via(Path::new(&socket), &cwd, &args).ok().flatten(),
        _ => None,
    };
    if let Some(c) = answer {
        let _ = std::io::stdout().write_all(&c.stdout);
        let _ = std::io::stderr().write_all(&c.stderr);
        return c.status;
    }
    use std::os::unix::process::CommandExt;
    let e = Command::new(&real).args(args).exec();
    eprintln!("jopcal: cannot run {}: {e}", Path::new(&real).display());
    127
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(dir: &Path, rel: &str, text: &str) {
        let p = dir.join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    }

    fn files(dir: &Path) -> Vec<(String, Vec<u8>)> {
        let mut out = Vec::new();
        let mut todo = vec![dir.to_path_buf()];
        while let Some(d) = todo.pop() {
            for e in std::fs::read_dir(&d).unwrap().flatten() {
                let p = e.path();
                if p.is_dir() {
                    todo.push(p);
                } else {
                    out.push((
                        p.strip_prefix(dir).unwrap().display().to_string(),
                        std::fs::read(&p).unwrap(),
                    ));
                }
            }
        }
        out.sort();
        out
    }

    /// The server compiles what a fresh ecj compiles, to the byte, its
    /// relative paths taken from the caller's directory; an error comes
    /// back as ecj's status and message; an option it does not know is
    /// left to a fresh ecj.
    #[test]
    fn the_resident_ecj_writes_what_a_fresh_ecj_writes() {
        let Some(ecj) = on_path("ecj") else {
            eprintln!("skipped: no ecj on PATH (scripts/setup installs it)");
            return;
        };
        let tmp = tempfile::tempdir().unwrap();
        let work = tmp.path().join("work");
        write(&work, "src/a/Main.java", "package a;\npublic class Main { public static void main(String[] s) { System.out.println(new b.Helper().twice(21)); } }\n");
        write(
            &work,
            "src/b/Helper.java",
            "package b;\npublic class Helper { public int twice(int x) { return x * 2 + \"x\".length(); } }\n",
        );
        let args = |out: &str, file: &str| -> Vec<String> {
            [
                "-nowarn",
                "-d",
                out,
                "-sourcepath",
                "src",
                "-source",
                "1.5",
                "-target",
                "1.5",
                "-encoding",
                "Latin1",
                file,
            ]
            .iter()
            .map(|s| s.to_string())
            .collect()
        };
        let fresh = Command::new(&ecj)
            .args(args("fresh", "src/a/Main.java"))
            .current_dir(&work)
            .output()
            .unwrap();
        assert!(fresh.status.success(), "{}", String::from_utf8_lossy(&fresh.stderr));
        // The client's path is not run here: the test talks to the socket itself.
        let resident = match ResidentEcj::start(Some(&tmp.path().join("cache")), Path::new("/bin/false")) {
            Ok(r) => r,
            Err(NotResident::NotHere(why)) => {
                eprintln!("skipped: {why}");
                return;
            }
            Err(NotResident::Failed(why)) => panic!("{why}"),
        };
        for round in 0..2 {
            let out = format!("warm{round}");
            let c = compile_via(resident.socket(), &work, &args(&out, "src/a/Main.java"))
                .unwrap()
                .expect("served");
            assert_eq!(c.status, 0, "{}", String::from_utf8_lossy(&c.stderr));
            assert_eq!(files(&work.join(&out)), files(&work.join("fresh")));
            assert_eq!(files(&work.join("fresh")).len(), 2);
        }
        write(
            &work,
            "src/c/Bad.java",
            "package c;\npublic class Bad { int f() { return undefined; } }\n",
        );
        let c = compile_via(resident.socket(), &work, &args("bad", "src/c/Bad.java"))
            .unwrap()
            .expect("served");
        let fresh = Command::new(&ecj)
            .args(args("bad2", "src/c/Bad.java"))
            .current_dir(&work)
            .output()
            .unwrap();
        assert_eq!((c.status, fresh.status.code()), (255, Some(255)));
        let said = String::from_utf8_lossy(&c.stderr);
        assert!(said.contains("undefined cannot be resolved"), "{said}");
        let mut unknown = args("x", "src/a/Main.java");
        unknown.insert(0, "-proc:none".into());
        assert_eq!(compile_via(resident.socket(), &work, &unknown).unwrap(), None);
        // The environment puts its script first on PATH.
        let env = resident.env();
        assert!(
            env[0].1.starts_with(&resident.dir.join("bin").display().to_string()),
            "{env:?}"
        );
        let dir = resident.dir.clone();
        drop(resident);
        assert!(!dir.exists());
    }
}
