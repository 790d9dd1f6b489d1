//! Reading `estimates.csv` (as `jopcal estimate` writes it).

use std::path::Path;

/// One row: a benchmark under one model and cache mode.
#[derive(Debug, Clone, PartialEq)]
pub struct EstimateRow {
    pub benchmark: String,
    pub model: String,
    pub cache_mode: String,
    pub cycles: f64,
    pub bytecodes: u64,
}

impl EstimateRow {
    /// The estimator variant, e.g. `jop-wcet fifo:1024:16`.
    pub fn variant(&self) -> String {
        format!("{} {}", self.model, self.cache_mode)
    }
}

/// Reads estimates.csv; errors name the file and line.
pub fn read_estimates(path: &Path) -> Result<Vec<EstimateRow>, String> {
    let mut rdr = csv::Reader::from_path(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let headers = rdr.headers().map_err(|e| format!("{}: {e}", path.display()))?.clone();
    let col = |name: &str| {
        headers.iter().position(|h| h == name).ok_or_else(|| {
            format!(
                "{}: line 1: no column '{name}' (is this an estimates.csv?)",
                path.display()
            )
        })
    };
    let (b, m, c, y, n) = (
        col("benchmark")?,
        col("model")?,
        col("cache_mode")?,
        col("cycles")?,
        col("bytecodes")?,
    );
    let mut rows = Vec::new();
    for (i, rec) in rdr.records().enumerate() {
        let line = i + 2;
        let rec = rec.map_err(|e| format!("{}: line {line}: {e}", path.display()))?;
        let get = |k: usize| rec.get(k).unwrap_or("");
        let cycles: f64 = get(y)
            .parse()
            .map_err(|_| format!("{}: line {line}: cycles '{}' is not a number", path.display(), get(y)))?;
        if !(cycles.is_finite() && cycles > 0.0) {
            return Err(format!(
                "{}: line {line}: cycles must be positive, found {cycles}",
                path.display()
            ));
        }
        let bytecodes: u64 = get(n)
            .parse()
            .map_err(|_| format!("{}: line {line}: bytecodes '{}' is not a count", path.display(), get(n)))?;
        rows.push(EstimateRow {
            benchmark: get(b).to_string(),
            model: get(m).to_string(),
            cache_mode: get(c).to_string(),
            cycles,
            bytecodes,
        });
    }
    if rows.is_empty() {
        return Err(format!("{}: no estimates", path.display()));
    }
    Ok(rows)
}
