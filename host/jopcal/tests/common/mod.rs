//! Helpers shared by the integration tests: the binary under test, the
//! checkout, and a process's output as text.
#![allow(dead_code)]

pub mod programs;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// The `jopcal` binary cargo built for these tests.
/// The binary, without the real-tree tests' `JOPCAL_JOP_HOME` (a test names
/// its tree with `--jop-home` or a `jopcal.toml`, which that variable would override).
pub fn jopcal() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_jopcal"));
    c.env_remove("JOPCAL_JOP_HOME");
    c
}

/// The root of this checkout.
pub fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .canonicalize()
        .unwrap()
}

/// Copies the directory `from` to `to`, recursively.
pub fn copy_tree(from: &Path, to: &Path) {
    for e in walkdir::WalkDir::new(from) {
        let e = e.unwrap();
        let dest = to.join(e.path().strip_prefix(from).unwrap());
        if e.file_type().is_dir() {
            std::fs::create_dir_all(&dest).unwrap();
        } else {
            std::fs::copy(e.path(), &dest).unwrap();
        }
    }
}

/// What a process printed on stderr.
pub fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// What a process printed on stdout and stderr.
pub fn text(o: &Output) -> (String, String) {
    (String::from_utf8_lossy(&o.stdout).into_owned(), stderr(o))
}

/// The cycles the board's counter sees of jopcal's harness around a region,
/// under timing table `m`, for the Harness class in `classes`: the rest of
/// start() after the first counter read, and stop() up to the second.
pub fn harness_cycles(m: &jopcal_timing::TimingModel, classes: &Path) -> f64 {
    let harness = std::fs::read(classes.join("jopcal/harness/Harness.class")).unwrap();
    let cf = jopcal_classfile::parse_class(&harness).unwrap();
    let stop_len = cf.method("stop", "()V").unwrap().code.as_ref().unwrap().bytecode.len();
    let stop_words = jopcal_timing::cache::words_of(stop_len as u32);
    let b_hit = m.load_cost(true, 0);
    m.native_cost("jopsys_rd").unwrap() // the first read itself
        + m.cost(0xb3, b_hit, 0) // putstatic startCount
        + m.cost(0xb1, b_hit, 0) // return to the caller, still cached
        + m.cost(0xb8, m.load_cost(false, stop_words), stop_words) // invokestatic stop(), first call: a miss
        + m.cost(0x10, b_hit, 0) // bipush IO_CNT
}

/// `jopcal emu --pty ARGS...` running in the background; killed when dropped.
pub struct VirtualBoard {
    pub child: std::process::Child,
    /// The pseudo-terminal it serves.
    pub port: String,
}

impl VirtualBoard {
    pub fn start(args: &[&std::ffi::OsStr]) -> VirtualBoard {
        use std::io::BufRead;
        let mut child = jopcal()
            .current_dir(repo())
            .args(["emu", "--pty"])
            .args(args)
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        let mut first = String::new();
        std::io::BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut first)
            .unwrap();
        let port = first.trim().to_string();
        assert!(port.starts_with("/dev/pts/"), "{first}");
        VirtualBoard { child, port }
    }
}

impl Drop for VirtualBoard {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// `jopcal estimate` of the profiles in `profiles` under the virtual board's
/// own table and cache, written to `out`: `(benchmark, cycles)` per profile.
pub fn estimate_with_board_table(profiles: &Path, out: &Path) -> Vec<(String, f64)> {
    let o = jopcal()
        .current_dir(repo())
        .args(["estimate", "--profiles"])
        .arg(profiles)
        .arg("--model")
        .arg(repo().join("calibration/emu-board.toml"))
        .args(["--cache", "fifo:2048:16", "--out"])
        .arg(out)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    csv::Reader::from_path(out)
        .unwrap()
        .records()
        .map(|r| {
            let r = r.unwrap();
            (r[0].to_string(), r[3].parse().unwrap())
        })
        .collect()
}

/// The JOP tree of the real-tree tests, `$JOPCAL_JOP_HOME`. Those tests are
/// ignored without one (`scripts/test` includes them when it is set); run
/// by hand without it, they fail saying so rather than pass having checked
/// nothing.
pub fn tree() -> PathBuf {
    std::env::var_os("JOPCAL_JOP_HOME")
        .map(PathBuf::from)
        .expect("needs a JOP tree: set JOPCAL_JOP_HOME (docs/notes/jop-tree.md)")
}

/// `$JOPCAL_TREE_CONFIG`: a directory with a jopcal.toml for the tree.
pub fn tree_config() -> PathBuf {
    std::env::var_os("JOPCAL_TREE_CONFIG")
        .map(PathBuf::from)
        .expect("JOPCAL_TREE_CONFIG: a directory with a jopcal.toml for the tree (docs/notes/jop-tree.md)")
}

/// `jopcal --jop-home TREE ARGS` in `dir`, with the firmware it finds
/// itself: (success, stdout, stderr).
pub fn jopcal_in(dir: &Path, tree: &Path, args: &[&str]) -> (bool, String, String) {
    let o = jopcal()
        .current_dir(dir)
        .env_remove("JOPCAL_FIRMWARE")
        .arg("--jop-home")
        .arg(tree)
        .args(args)
        .output()
        .unwrap();
    let (out, err) = text(&o);
    (o.status.success(), out, err)
}
