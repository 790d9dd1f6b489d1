//! What `jopcal targets` reports: whether each target can run here, and
//! which workload suites are at hand.

use crate::locate;
use jopcal_targets::TargetKind;
use std::fmt::Write as _;
use std::path::Path;

/// A target as the command line offers it.
#[derive(Debug, Clone)]
pub struct Offered {
    pub kind: TargetKind,
    /// What it is, in a line.
    pub about: String,
    /// Whether it is used when none is named.
    pub default: bool,
}

/// Whether the target can run here, and what it needs.
pub fn status(kind: TargetKind) -> String {
    match kind {
        TargetKind::Host => match jopcal_workloads::Jdk::detect() {
            Ok(jdk) => format!("available ({})", jdk.version),
            Err(e) => format!("unavailable: {}", first_clause(&e.to_string())),
        },
        TargetKind::Emu => "available (built in)".to_string(),
        TargetKind::Board => "needs --port DEV|tcp://HOST:PORT; --image, or jopcal.toml build".to_string(),
        TargetKind::Verilator => match std::process::Command::new("verilator").arg("--version").output() {
            Ok(o) if o.status.success() => format!(
                "available ({}); needs --sim DIR",
                String::from_utf8_lossy(&o.stdout)
                    .split_whitespace()
                    .take(2)
                    .collect::<Vec<_>>()
                    .join(" ")
            ),
            _ => "unavailable: verilator not installed (scripts/setup installs it)".to_string(),
        },
        TargetKind::Jopsim => match locate::jop_config() {
            Ok(Some(c)) if c.build.is_some() && c.image.is_some() && c.jopsim.is_some() => {
                format!("configured ({})", c.file.display())
            }
            Ok(Some(c)) => format!("{}: [jop] needs build, image and jopsim", c.file.display()),
            _ => "needs a jopcal.toml with [jop] build, image and jopsim templates".to_string(),
        },
    }
}

fn first_clause(s: &str) -> &str {
    s.split(':').next().unwrap_or(s)
}

/// The report: a table of the `offered` targets with their status, then
/// the built-in suite and the JOP tree's suites with theirs.
pub fn report(firmware: Option<&Path>, jop_home: Option<&Path>, offered: &[Offered]) -> String {
    let rows: Vec<[String; 4]> = offered
        .iter()
        .map(|t| {
            let default = if t.default { "yes" } else { "" };
            [
                t.kind.name().to_string(),
                default.to_string(),
                t.about.clone(),
                status(t.kind),
            ]
        })
        .collect();
    let mut out = String::new();
    // The status, of any length, comes last: the columns before it line up.
    let width = |k: usize| rows.iter().map(|r| r[k].len()).max().unwrap_or(0).max(7);
    let (w0, w1, w2) = (width(0), width(1), width(2));
    let _ = writeln!(
        out,
        "{:<w0$}  {:<w1$}  {:<w2$}  status",
        "target", "default", "description"
    );
    for [name, default, about, status] in &rows {
        let _ = writeln!(out, "{name:<w0$}  {default:<w1$}  {about:<w2$}  {status}");
    }
    let _ = writeln!(out);
    let _ = writeln!(out, "{:<12} status", "suite");
    let builtin = match locate::firmware_dir(firmware)
        .map_err(|e| e.to_string())
        .and_then(|d| jopcal_workloads::Suite::load(&d).map_err(|e| e.to_string()))
    {
        Ok(s) => format!("{} workloads in {}", s.workloads.len(), s.root.display()),
        Err(e) => format!("unavailable: {e}"),
    };
    let _ = writeln!(out, "{:<12} {builtin}", "builtin");
    let tree = locate::jop_home(jop_home)
        .map_err(|_| "needs the JOP tree (--jop-home DIR, $JOPCAL_JOP_HOME or [jop] home)".to_string())
        .and_then(|h| jopcal_tree::tree::JopTree::open(&h).map_err(|e| e.to_string()));
    for suite in jopcal_tree::tree::TreeSuite::ALL {
        let status = match &tree {
            Ok(t) => match t.select(suite, &[]) {
                Ok(ws) => format!(
                    "{} {} in {} ({})",
                    ws.len(),
                    // An application is a main, timed or left out when the suite is made.
                    if suite == jopcal_tree::tree::TreeSuite::Apps {
                        "applications (each timed or left out with the reason when run)"
                    } else {
                        "harnesses"
                    },
                    t.home.display(),
                    ws.iter().map(|w| w.name.as_str()).collect::<Vec<_>>().join(", ")
                ),
                Err(e) => e.to_string(),
            },
            Err(e) => e.clone(),
        };
        let _ = writeln!(out, "{:<12} {status}", suite.name());
    }
    out
}
