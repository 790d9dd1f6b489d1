//! `estimates.csv`: one row per benchmark, timing model and cache mode, as
//! `jopcal estimate` and `jopcal validate` write it and `reconcile` and
//! `report` read it. [`EstimateRow`] is the one type for both directions.

use crate::error::EstimatesError;
use jopcal_measure::atomic;
use serde::{Deserialize, Serialize, Serializer};
use std::path::Path;

/// One row: a benchmark under one model and cache mode.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EstimateRow {
    /// The benchmark.
    pub benchmark: String,
    /// The timing model's name.
    pub model: String,
    /// `hit`, `miss` or `fifo:<bytes>:<blocks>`.
    pub cache_mode: String,
    /// Estimated cycles of the measured region.
    #[serde(serialize_with = "as_number")]
    pub cycles: f64,
    /// Bytecodes the region executed.
    pub bytecodes: u64,
    /// Of `cycles`: dispatching bytecodes JOP implements in Java.
    #[serde(default, serialize_with = "as_number")]
    pub java_dispatch_cycles: f64,
    /// Of `cycles`: those routines' own cost.
    #[serde(default, serialize_with = "as_number")]
    pub java_routine_cycles: f64,
    /// Of `cycles`: invokes and returns (with the method cache's load cost).
    #[serde(default, serialize_with = "as_number")]
    pub invoke_return_cycles: f64,
    /// Method-cache hits.
    #[serde(default)]
    pub cache_hits: u64,
    /// Method-cache misses.
    #[serde(default)]
    pub cache_misses: u64,
    /// False when the profile lost events (the estimate is a lower bound).
    #[serde(default = "complete")]
    pub profile_complete: bool,
}

fn complete() -> bool {
    true
}

/// Integral values as integers, others with two decimals (as `jopcal table` prints costs).
fn as_number<S: Serializer>(v: &f64, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(&jopcal_timing::table::number(*v))
}

impl From<&jopcal_timing::estimate::Estimate> for EstimateRow {
    fn from(e: &jopcal_timing::estimate::Estimate) -> EstimateRow {
        EstimateRow {
            benchmark: e.benchmark.clone(),
            model: e.model.clone(),
            cache_mode: e.cache.to_string(),
            cycles: e.cycles,
            bytecodes: e.bytecodes,
            java_dispatch_cycles: e.java_dispatch_cycles,
            java_routine_cycles: e.java_routine_cycles,
            invoke_return_cycles: e.invoke_return_cycles,
            cache_hits: e.cache_hits,
            cache_misses: e.cache_misses,
            profile_complete: e.complete,
        }
    }
}

impl EstimateRow {
    /// The estimator variant, e.g. `jop-wcet fifo:1024:16`.
    pub fn variant(&self) -> String {
        format!("{} {}", self.model, self.cache_mode)
    }
}

/// Writes `rows` to `path` (aside, then renamed).
pub fn write_estimates(path: &Path, rows: &[EstimateRow]) -> std::io::Result<()> {
    let mut w = csv::Writer::from_writer(Vec::new());
    for r in rows {
        w.serialize(r)?;
    }
    let bytes = w.into_inner().map_err(|e| e.into_error())?;
    atomic::write_atomic(path, &bytes)
}

/// Reads estimates.csv; errors name the file, the line and the column.
pub fn read_estimates(path: &Path) -> Result<Vec<EstimateRow>, EstimatesError> {
    let text = std::fs::read(path).map_err(|source| EstimatesError::Io {
        path: path.to_path_buf(),
        source,
    })?;
    parse_estimates(&text, path)
}

/// Parses the text of an estimates.csv read from `path` (named in errors).
pub fn parse_estimates(text: &[u8], path: &Path) -> Result<Vec<EstimateRow>, EstimatesError> {
    let mut rdr = csv::Reader::from_reader(text);
    let headers = rdr
        .headers()
        .map_err(|source| EstimatesError::Header {
            path: path.to_path_buf(),
            source,
        })?
        .clone();
    for name in ["benchmark", "model", "cache_mode", "cycles", "bytecodes"] {
        if !headers.iter().any(|h| h == name) {
            return Err(EstimatesError::MissingColumn {
                path: path.to_path_buf(),
                column: name,
            });
        }
    }
    let mut rows = Vec::new();
    for (i, row) in rdr.deserialize::<EstimateRow>().enumerate() {
        let line = i + 2;
        let row = row.map_err(|e| {
            let at = e.position().map_or(line as u64, |p| p.line());
            if let csv::ErrorKind::Deserialize { err, .. } = e.kind() {
                let column = err.field().and_then(|f| headers.get(f as usize)).unwrap_or("?");
                return EstimatesError::BadValue {
                    path: path.to_path_buf(),
                    line: at,
                    column: column.to_string(),
                    source: err.clone(),
                };
            }
            EstimatesError::Row {
                path: path.to_path_buf(),
                line: at,
                source: e,
            }
        })?;
        if !(row.cycles.is_finite() && row.cycles > 0.0) {
            return Err(EstimatesError::NotPositive {
                path: path.to_path_buf(),
                line,
                cycles: row.cycles,
            });
        }
        rows.push(row);
    }
    if rows.is_empty() {
        return Err(EstimatesError::Empty(path.to_path_buf()));
    }
    Ok(rows)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(b: &str, cycles: f64) -> EstimateRow {
        EstimateRow {
            benchmark: b.into(),
            model: "jop-wcet".into(),
            cache_mode: "fifo:1024:16".into(),
            cycles,
            bytecodes: 10,
            java_dispatch_cycles: 82.0,
            java_routine_cycles: 0.5,
            invoke_return_cycles: 0.0,
            cache_hits: 3,
            cache_misses: 1,
            profile_complete: true,
        }
    }

    #[test]
    fn written_rows_read_back_and_numbers_print_as_before() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("estimates.csv");
        let rows = [row("A", 1234.0), row("B", 99.126)];
        write_estimates(&p, &rows).unwrap();
        let text = std::fs::read_to_string(&p).unwrap();
        assert_eq!(
            text.lines().next().unwrap(),
            "benchmark,model,cache_mode,cycles,bytecodes,java_dispatch_cycles,java_routine_cycles,invoke_return_cycles,cache_hits,cache_misses,profile_complete"
        );
        assert_eq!(
            text.lines().nth(1).unwrap(),
            "A,jop-wcet,fifo:1024:16,1234,10,82,0.50,0,3,1,true"
        );
        let back = read_estimates(&p).unwrap();
        assert_eq!(back[0], rows[0]);
        assert_eq!(back[1].cycles, 99.13, "two decimals, as written");
    }

    #[test]
    fn the_first_five_columns_are_enough_and_faults_name_line_and_column() {
        let p = Path::new("e.csv");
        let min = b"benchmark,model,cache_mode,cycles,bytecodes\nA,m,hit,10,2\n";
        let rows = parse_estimates(min, p).unwrap();
        assert!(rows[0].profile_complete);
        assert_eq!(rows[0].cache_hits, 0);
        let bad = b"benchmark,model,cache_mode,cycles,bytecodes\nA,m,hit,10,2\nB,m,hit,ten,2\n";
        let e = parse_estimates(bad, p).unwrap_err().to_string();
        assert!(e.starts_with("e.csv: line 3: column 'cycles': "), "{e}");
        let e = parse_estimates(b"benchmark,cycles\nA,1\n", p).unwrap_err().to_string();
        assert_eq!(e, "e.csv: line 1: no column 'model' (is this an estimates.csv?)");
        let e = parse_estimates(b"benchmark,model,cache_mode,cycles,bytecodes\nA,m,hit,-5,2\n", p)
            .unwrap_err()
            .to_string();
        assert_eq!(e, "e.csv: line 2: cycles must be positive, found -5");
        let e = parse_estimates(b"benchmark,model,cache_mode,cycles,bytecodes\n", p)
            .unwrap_err()
            .to_string();
        assert_eq!(e, "e.csv: no estimates");
    }
}
