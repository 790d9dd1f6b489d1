//! Helpers shared by the integration tests: the binary under test, the
//! checkout, and a process's output as text.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// The `jopcal` binary cargo built for these tests.
pub fn jopcal() -> Command {
    Command::new(env!("CARGO_BIN_EXE_jopcal"))
}

/// The root of this checkout.
pub fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .canonicalize()
        .unwrap()
}

/// What a process printed on stderr.
pub fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// What a process printed on stdout and stderr.
pub fn text(o: &Output) -> (String, String) {
    (String::from_utf8_lossy(&o.stdout).into_owned(), stderr(o))
}
