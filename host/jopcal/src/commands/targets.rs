//! `jopcal targets`: which targets exist and whether each can run here, and
//! which workload suites are at hand (the report is
//! `jopcal_pipeline::targets`'s).

use crate::cli::Target;
use anyhow::Result;
use clap::ValueEnum;
use jopcal_pipeline::targets::{report, Offered};
use std::path::Path;

pub fn targets(firmware: Option<&Path>, jop_home: Option<&Path>) -> Result<()> {
    let offered: Vec<Offered> = Target::value_variants()
        .iter()
        .map(|t| Offered {
            kind: t.kind(),
            about: t
                .to_possible_value()
                .and_then(|v| v.get_help().map(ToString::to_string))
                .unwrap_or_default(),
            default: *t == Target::DEFAULT,
        })
        .collect();
    print!("{}", report(firmware, jop_home, &offered));
    Ok(())
}
