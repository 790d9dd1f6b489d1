//! `jopcal targets`: which targets exist and whether each can run here, and
//! which workload suites are at hand.

use crate::cli::Target;
use anyhow::Result;
use clap::ValueEnum;
use std::path::Path;

pub fn targets(firmware: Option<&Path>, jop_home: Option<&Path>) -> Result<()> {
    println!("{:<10} {:<8} {:<44} description", "target", "default", "status");
    for t in Target::value_variants() {
        let status = match t {
            Target::Host => match jopcal_workloads::Jdk::detect() {
                Ok(jdk) => format!("available ({})", jdk.version),
                Err(e) => format!("unavailable: {}", first_clause(&e.to_string())),
            },
            Target::Emu => "available (built in)".to_string(),
            Target::Board => "needs --port DEV|tcp://HOST:PORT; --image, or jopcal.toml build".to_string(),
            Target::Verilator => match std::process::Command::new("verilator").arg("--version").output() {
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
            Target::Jopsim => match jopcal_pipeline::locate::jop_config() {
                Ok(Some(c)) if c.build.is_some() && c.image.is_some() && c.jopsim.is_some() => {
                    format!("configured ({})", c.file.display())
                }
                Ok(Some(c)) => format!("{}: [jop] needs build, image and jopsim", c.file.display()),
                _ => "needs a jopcal.toml with [jop] build, image and jopsim templates".to_string(),
            },
        };
        let about = t
            .to_possible_value()
            .and_then(|v| v.get_help().map(ToString::to_string))
            .unwrap_or_default();
        let default = if *t == Target::DEFAULT { "yes" } else { "" };
        println!("{:<10} {:<8} {:<44} {about}", t.name(), default, status);
    }
    println!();
    println!("{:<10} status", "suite");
    let builtin = match jopcal_pipeline::locate::firmware_dir(firmware)
        .map_err(|e| e.to_string())
        .and_then(|d| jopcal_workloads::Suite::load(&d).map_err(|e| e.to_string()))
    {
        Ok(s) => format!("{} workloads in {}", s.workloads.len(), s.root.display()),
        Err(e) => format!("unavailable: {e}"),
    };
    println!("{:<10} {builtin}", "builtin");
    let tree = jopcal_pipeline::locate::jop_home(jop_home)
        .map_err(|_| "needs the JOP tree (--jop-home DIR, $JOPCAL_JOP_HOME or [jop] home)".to_string())
        .and_then(|h| jopcal_tree::tree::JopTree::open(&h).map_err(|e| e.to_string()));
    for suite in jopcal_tree::tree::TreeSuite::ALL {
        let status = match &tree {
            Ok(t) => match t.select(suite, &[]) {
                Ok(ws) => format!(
                    "{} harnesses in {} ({})",
                    ws.len(),
                    t.home.display(),
                    ws.iter().map(|w| w.name.as_str()).collect::<Vec<_>>().join(", ")
                ),
                Err(e) => e.to_string(),
            },
            Err(e) => e.clone(),
        };
        println!("{:<10} {status}", suite.name());
    }
    Ok(())
}

fn first_clause(s: &str) -> &str {
    s.split(':').next().unwrap_or(s)
}
