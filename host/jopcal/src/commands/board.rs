//! `jopcal upload`: download one image to a board and say how it went
//! (measuring on a board is `jopcal_targets::board`).

use crate::cli::UploadArgs;
use anyhow::{anyhow, Result};
use jopcal_link::session::drain_stale;
use jopcal_link::{download, DownloadOptions, JopImage, Pace};
use std::time::Duration;

pub fn upload(a: &UploadArgs) -> Result<()> {
    let pace = Pace::parse(&a.pace, a.baud).map_err(|e| anyhow!("--pace: {e}"))?;
    let image = JopImage::load_checked(&a.image, None).map_err(|e| anyhow!(e))?;
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
    let mut opts = DownloadOptions::new(a.protocol);
    opts.pace = pace;
    let report = download(link.as_mut(), &image, &opts)
        .map_err(|e| anyhow!("{}: {e} ({})", link.describe(), e.what_to_check(pace, Some(a.baud))))?;
    for n in &report.notes {
        eprintln!("    upload note: {n}");
    }
    let secs = report.elapsed.as_secs_f64().max(1e-9);
    let rate = report.bytes as f64 / secs;
    let paced = match (a.protocol, report.pace) {
        (jopcal_link::Protocol::Handshake, _) | (_, None) => String::new(),
        (_, Some(p)) => format!(", {p}"),
    };
    eprintln!(
        "    upload {} words ({} bytes) over {} with the {} protocol in {secs:.3} s ({rate:.0} bytes/s, {:.1}% of {} baud's {:.0}{paced}); the board accepted it",
        image.words.len(),
        report.bytes,
        link.describe(),
        a.protocol,
        100.0 * rate / (f64::from(a.baud) / 10.0),
        a.baud,
        f64::from(a.baud) / 10.0
    );
    Ok(())
}
