//! `jopcal diff`: one image on two targets (`jopcal_pipeline::diff`).

use anyhow::{bail, Result};
use jopcal_pipeline::diff::DiffRequest;
use jopcal_pipeline::Session;

pub fn diff(s: Session, a: &DiffRequest) -> Result<()> {
    let report = jopcal_pipeline::diff::diff_request(s, a)?;
    for l in &report.lines {
        println!("{l}");
    }
    if !report.equal() {
        bail!("{}: the two runs differ", a.image.display());
    }
    Ok(())
}
