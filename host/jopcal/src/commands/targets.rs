//! `jopcal targets`: which targets exist and whether each can run here.

use crate::cli::Target;
use anyhow::Result;
use clap::ValueEnum;
use std::path::Path;

pub fn targets(_firmware: Option<&Path>) -> Result<()> {
    println!("{:<10} {:<8} {:<44} description", "target", "default", "status");
    for t in Target::value_variants() {
        let status = match t {
            Target::Host => match jopcal_workloads::Jdk::detect() {
                Ok(jdk) => format!("available ({})", jdk.version),
                Err(e) => format!("unavailable: {}", first_clause(&e.to_string())),
            },
            Target::Emu => "available (built in)".to_string(),
            Target::Board => "needs --port DEV or tcp://HOST:PORT and --image".to_string(),
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
            Target::Jopsim => match crate::context::jop_config() {
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
    Ok(())
}

fn first_clause(s: &str) -> &str {
    s.split(':').next().unwrap_or(s)
}
