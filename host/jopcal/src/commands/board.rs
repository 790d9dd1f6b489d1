//! `jopcal upload`: download one image to a board and say how it went
//! (measuring on a board is `jopcal_targets::board`).

use crate::cli::UploadArgs;
use anyhow::{anyhow, Result};
use jopcal_link::session::drain_stale;
use jopcal_link::{download, DownloadOptions, JopImage};
use std::time::Duration;

pub fn upload(a: &UploadArgs) -> Result<()> {
    let image = JopImage::load(&a.image, None).map_err(|e| anyhow!(e))?;
    let mut link = jopcal_link::open(&a.port, a.baud, a.dtr_rts).map_err(|e| anyhow!(e))?;
    let stale = drain_stale(
        link.as_mut(),
        a.protocol,
        Duration::from_millis(300),
        Duration::from_secs(10),
    )
    .map_err(|e| anyhow!("{}: {e}", link.describe()))?;
    if !stale.is_empty() {
        eprintln!(
            "    upload note: read away {} bytes of earlier output before the download",
            stale.len()
        );
    }
    let report = download(link.as_mut(), &image, &DownloadOptions::new(a.protocol))
        .map_err(|e| anyhow!("{}: {e}", link.describe()))?;
    for n in &report.notes {
        eprintln!("    upload note: {n}");
    }
    let secs = report.elapsed.as_secs_f64().max(1e-9);
    eprintln!(
        "    upload {} words ({} bytes) over {} with the {} protocol in {secs:.3} s ({:.0} bytes/s); the board accepted it",
        image.words.len(),
        report.bytes,
        link.describe(),
        a.protocol,
        report.bytes as f64 / secs
    );
    Ok(())
}
