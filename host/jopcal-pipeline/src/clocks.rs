//! What the program's reads of the clock gave on the virtual board, kept in
//! its run for the host profile to read the same values: written by the
//! measurement (`measure`, `processor`), read by the profile (`profile`).

use anyhow::Result;
use std::path::Path;

/// Where a run on the virtual board keeps what each program's clock reads
/// gave (`<bench>.txt`, written by `jopcal_emu::board::write_clock_reads`).
pub const CLOCKS_DIR: &str = "clocks";

/// The most clock values a profiled run is given (on its command line).
const CLOCK_VALUES_KEPT: usize = 4096;

/// The values the target's microsecond counter gave `bench`'s reads of the
/// clock (`System.currentTimeMillis` and `nanoTime`, JOP's readers of it),
/// in order, from the run in `dir` (its [`CLOCKS_DIR`]); `None` when that run
/// kept none (a target other than the virtual board, or no clock read).
pub fn target_clock(dir: &Path, bench: &str) -> Result<Option<Vec<i32>>> {
    let path = dir.join(CLOCKS_DIR).join(format!("{bench}.txt"));
    let text = match std::fs::read_to_string(&path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(anyhow::anyhow!("{}: {e}", path.display())),
    };
    let mut values = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let (value, method) = line.split_once(' ').unwrap_or((line, ""));
        let value: i32 = value.parse().map_err(|_| {
            anyhow::anyhow!(
                "{}:{}: {line:?} is not a value and the method that read it",
                path.display(),
                i + 1
            )
        })?;
        if jopcal_profile::routed::is_clock_named(method) {
            values.push(value);
        }
    }
    values.truncate(CLOCK_VALUES_KEPT);
    Ok((!values.is_empty()).then_some(values))
}
