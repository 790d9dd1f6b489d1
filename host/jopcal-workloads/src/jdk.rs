//! Finding the JDK: `$JAVA_HOME/bin` first, then `PATH`. A missing JDK is one
//! line that says what to install.

pub use crate::error::JdkError;
use std::path::{Path, PathBuf};
use std::process::Command;

/// A usable JDK: `java`, `javac` and javac's version line.
#[derive(Debug, Clone)]
pub struct Jdk {
    pub java: PathBuf,
    pub javac: PathBuf,
    /// e.g. `javac 17.0.15`.
    pub version: String,
}

/// The first file `name` in a directory of `PATH`.
pub fn on_path(name: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path).map(|d| d.join(name)).find(|p| p.is_file())
}

impl Jdk {
    /// Looks for a JDK in `$JAVA_HOME`, then on `PATH`.
    pub fn detect() -> Result<Jdk, JdkError> {
        let from_home = std::env::var_os("JAVA_HOME").map(|h| Path::new(&h).join("bin"));
        let (java, javac) = match from_home {
            Some(bin) if bin.join("javac").is_file() => (bin.join("java"), bin.join("javac")),
            _ => match (on_path("java"), on_path("javac")) {
                (Some(java), Some(javac)) => (java, javac),
                (None, _) => return Err(JdkError::Missing("java is not on PATH".into())),
                (_, None) => return Err(JdkError::Missing("javac is not on PATH".into())),
            },
        };
        let out = Command::new(&javac)
            .arg("-version")
            .output()
            .map_err(|e| JdkError::Broken {
                javac: javac.clone(),
                message: e.to_string(),
            })?;
        let text = String::from_utf8_lossy(if out.stdout.is_empty() {
            &out.stderr
        } else {
            &out.stdout
        });
        let version = text.lines().next().unwrap_or("").trim().to_string();
        let major: u32 = version
            .strip_prefix("javac ")
            .and_then(|v| v.split(['.', '-', '+']).next())
            .and_then(|v| v.parse().ok())
            .unwrap_or(0);
        if major == 0 {
            return Err(JdkError::Broken {
                javac,
                message: format!("unexpected version output '{version}'"),
            });
        }
        if major < 9 {
            return Err(JdkError::TooOld { version });
        }
        jopcal_measure::provenance::note("jdk", format!("{version} ({})", javac.display()));
        Ok(Jdk { java, javac, version })
    }
}
