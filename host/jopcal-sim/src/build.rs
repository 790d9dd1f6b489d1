//! Building the bench around a DUT with Verilator, and starting it.

use crate::error::BenchError;
use crate::ports::{check_contract, parse_ports, Contract, UartStyle};
use jopcal_output::children::{GroupChild, InGroup};
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

/// A built bench: its executable and what the DUT offers.
#[derive(Debug, Clone)]
pub struct BuiltBench {
    pub binary: PathBuf,
    pub contract: Contract,
}

/// The last `%Error` line of Verilator's output (or its last line).
fn verilator_error(out: &[u8]) -> String {
    let text = String::from_utf8_lossy(out);
    text.lines()
        .filter(|l| l.starts_with("%Error"))
        .find(|l| !l.contains("Exiting due to"))
        .or_else(|| text.lines().rev().find(|l| !l.trim().is_empty()))
        .unwrap_or("")
        .trim()
        .to_string()
}

fn verilator() -> Result<PathBuf, BenchError> {
    let v = PathBuf::from("verilator");
    match Command::new(&v).arg("--version").output() {
        Ok(o) if o.status.success() => Ok(v),
        _ => Err(BenchError::VerilatorNotFound),
    }
}

/// The C++ compiler the model is built with: `$JOPCAL_SIM_CXX` if set,
/// else `clang++` where it runs, else Verilator's own choice (`g++`). The
/// tree's JOP verilated with clang 14 ran 2 M cycles in 1.35-1.43 s against
/// g++ 12's 1.89-1.94 s, with the same cycle counts
/// (docs/notes/jop-tree.md, section 12): the model is one long function of
/// bit operations, which clang compiles better.
fn cxx() -> Option<String> {
    if let Some(c) = std::env::var_os("JOPCAL_SIM_CXX").filter(|c| !c.is_empty()) {
        return Some(c.to_string_lossy().into_owned());
    }
    let clang = "clang++";
    Command::new(clang)
        .arg("--version")
        .output()
        .ok()
        .filter(|o| o.status.success())
        .map(|_| clang.to_string())
}

/// Verilates `rtl` with top `top` and the bench from `bench_dir` into `out`.
pub fn build(rtl: &[PathBuf], top: &str, out: &Path, bench_dir: &Path, trace: bool) -> Result<BuiltBench, BenchError> {
    for f in rtl {
        if !f.is_file() {
            return Err(BenchError::NoRtlFile(f.clone()));
        }
    }
    let bench = bench_dir.join("bench.cpp");
    if !bench.is_file() {
        return Err(BenchError::NoBenchSource(bench));
    }
    let v = verilator()?;
    std::fs::create_dir_all(out).map_err(|e| BenchError::Io {
        path: out.to_path_buf(),
        source: e,
    })?;
    let xml = out.join("ports.xml");
    let o = Command::new(&v)
        .args(["--xml-only", "--xml-output"])
        .arg(&xml)
        .args(["--top-module", top, "-Wno-fatal", "-Mdir"])
        .arg(out.join("xml"))
        .args(rtl)
        .output()
        .map_err(BenchError::CannotRunVerilator)?;
    if !o.status.success() {
        return Err(BenchError::RtlRejected(verilator_error(&[o.stdout, o.stderr].concat())));
    }
    let text = std::fs::read_to_string(&xml).map_err(|e| BenchError::Io {
        path: xml.clone(),
        source: e,
    })?;
    let contract = check_contract(&parse_ports(&text)?, top)?;
    let mut cfg = format!("#define TOP_CLASS V{top}\n#define TOP_HEADER \"V{top}.h\"\n");
    if let Some(w) = contract.memory {
        match contract.memory_style {
            crate::ports::MemoryStyle::Port => cfg.push_str(&format!("#define HAS_MEM 1\n#define MEM_ADDR_W {w}\n")),
            crate::ports::MemoryStyle::Sram { byte_enables } => {
                cfg.push_str(&format!("#define HAS_SRAM 1\n#define MEM_ADDR_W {w}\n"));
                if byte_enables {
                    cfg.push_str("#define HAS_SRAM_NBE 1\n");
                }
            }
        }
    }
    cfg.push_str(match contract.uart {
        UartStyle::Char => "#define HAS_UART_CHAR 1\n",
        UartStyle::Serial => "#define HAS_UART_SERIAL 1\n",
    });
    if contract.cycle_count {
        cfg.push_str("#define HAS_CYCLE_COUNT 1\n");
    }
    if contract.halt {
        cfg.push_str("#define HAS_HALT 1\n");
    }
    if let Some(t) = contract.trace {
        cfg.push_str(&format!(
            "#define HAS_TRACE_TAPS 1\n#define TRACE_PC_W {}\n#define TRACE_START_W {}\n",
            t.pc, t.start
        ));
    }
    if contract.stack_overflow {
        cfg.push_str("#define HAS_STACK_OVERFLOW 1\n");
    }
    if trace {
        cfg.push_str("#define BENCH_TRACE 1\n");
    }
    std::fs::write(out.join("bench_config.h"), cfg).map_err(|e| BenchError::Io {
        path: out.to_path_buf(),
        source: e,
    })?;
    let obj = out.join("obj");
    let out_abs = out.canonicalize().unwrap_or_else(|_| out.to_path_buf());
    let mut cmd = Command::new(&v);
    cmd.args([
        "--cc",
        "--exe",
        "--build",
        "-O3",
        "-j",
        "2",
        "-Wno-fatal",
        "--top-module",
        top,
    ])
    .arg("-Mdir")
    .arg(&obj)
    .args(["-o", "bench"])
    .arg("-CFLAGS")
    .arg(format!("-O2 -I{}", out_abs.display()));
    if let Some(c) = cxx() {
        if c.contains("clang") {
            cmd.args(["--compiler", "clang"]);
        }
        cmd.arg("-MAKEFLAGS").arg(format!("CXX={c} LINK={c}"));
    }
    if trace {
        cmd.arg("--trace");
    }
    let o = cmd
        .arg(bench.canonicalize().unwrap_or(bench))
        .args(rtl)
        .output_in_group()
        .map_err(BenchError::CannotRunVerilator)?;
    if !o.status.success() {
        return Err(BenchError::BuildFailed(verilator_error(&[o.stdout, o.stderr].concat())));
    }
    let binary = obj.join("bench");
    if !binary.is_file() {
        return Err(BenchError::MissingBinary(binary));
    }
    Ok(BuiltBench { binary, contract })
}

/// A bench running with its UART on a pseudo-terminal.
pub struct RunningBench {
    pub child: GroupChild,
    /// The pseudo-terminal's path (the bench's first line).
    pub port: String,
    stderr: Option<std::thread::JoinHandle<String>>,
    /// Stops the bench if jopcal is interrupted (it would simulate on alone).
    _on_interrupt: jopcal_output::interrupt::StopGuard,
}

/// While the guard lives, an interrupt of jopcal (SIGINT, a scheduler's
/// SIGTERM to jopcal alone) also stops the bench process `pid`: a bench
/// keeps its pseudo-terminal open and would simulate on, unseen.
pub fn stop_on_interrupt(pid: u32) -> jopcal_output::interrupt::StopGuard {
    jopcal_output::interrupt::on_interrupt_stop(Box::new(move || {
        // SAFETY: signalling a process this one started.
        unsafe { libc::kill(pid as libc::pid_t, libc::SIGTERM) };
        format!("stopped the bench (process {pid})")
    }))
}

impl RunningBench {
    /// Stops the bench (SIGTERM, so it reports; SIGKILL after 2 s) and returns what it printed on stderr.
    pub fn stop(mut self) -> String {
        use wait_timeout::ChildExt;
        // SAFETY: signalling our own child process.
        unsafe { libc::kill(self.child.id() as libc::pid_t, libc::SIGTERM) };
        if !matches!(self.child.wait_timeout(Duration::from_secs(2)), Ok(Some(_))) {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
        self.stderr.take().and_then(|h| h.join().ok()).unwrap_or_default()
    }
}

/// Starts `binary --pty <args>` and waits (at most `wait`) for the path it prints first.
pub fn start(binary: &Path, args: &[String], wait: Duration) -> Result<RunningBench, BenchError> {
    let mut child = Command::new(binary)
        .arg("--pty")
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn_in_group()
        .map_err(|e| BenchError::CannotStart {
            binary: binary.to_path_buf(),
            source: e,
        })?;
    let stdout = child.stdout.take().expect("piped");
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let mut line = String::new();
        let _ = BufReader::new(stdout).read_line(&mut line);
        let _ = tx.send(line);
    });
    let mut err = child.stderr.take().expect("piped");
    let stderr = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = std::io::Read::read_to_string(&mut err, &mut s);
        s
    });
    match rx.recv_timeout(wait) {
        Ok(line) if line.starts_with('/') => Ok(RunningBench {
            _on_interrupt: stop_on_interrupt(child.id()),
            child,
            port: line.trim().to_string(),
            stderr: Some(stderr),
        }),
        _ => {
            let _ = child.kill();
            let _ = child.wait();
            let e = stderr.join().unwrap_or_default();
            Err(BenchError::NoPseudoTerminal(
                e.lines().last().unwrap_or("no output").to_string(),
            ))
        }
    }
}

/// Makes a named pipe at `path`: the bench writes its event stream there
/// (`--events`) while the host reads it as it comes.
pub fn make_fifo(path: &Path) -> std::io::Result<()> {
    use std::os::unix::ffi::OsStrExt;
    let c = std::ffi::CString::new(path.as_os_str().as_bytes())
        .map_err(|_| std::io::Error::new(std::io::ErrorKind::InvalidInput, "a path with a NUL byte"))?;
    // SAFETY: `c` is a valid NUL-terminated path for the call's duration.
    if unsafe { libc::mkfifo(c.as_ptr(), 0o600) } != 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(())
}

/// Opens the FIFO at `path` for writing, without blocking, and closes it
/// again: a reader still waiting to open it (the bench never did) gets its
/// end of input instead of waiting for ever.
pub fn release_fifo(path: &Path) {
    use std::os::unix::fs::OpenOptionsExt;
    let _ = std::fs::OpenOptions::new()
        .write(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(path);
}
