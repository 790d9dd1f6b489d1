//! `measurements.csv`: one row per measured run of one workload.
//!
//! Columns, in order: `target, target_config, benchmark, iterations, cycles,
//! value, unit, run, timestamp, tool_version, suite_hash, log`. `value` is
//! the measurement in `unit`: `cycles` for JOP targets, `ns` for the host
//! JVM, `ms` for a JOP tree's own harness. The `cycles` column holds JOP
//! clock cycles only and is empty on a target that measures time, so host
//! timings are never taken for JOP cycles. The provenance columns say when, with which tool version and
//! which workload sources a row was measured, and where its raw log is.
//!
//! Rows are appended durably as they arrive ([`MeasurementWriter`]): a failure
//! later in a run never loses the rows already measured.

use serde::{Deserialize, Serialize};
use std::fs;
use std::io::{self, Write};
use std::path::{Path, PathBuf};

/// The file name inside an output directory.
pub const FILE_NAME: &str = "measurements.csv";

/// What the `value` column counts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Unit {
    /// JOP clock cycles, read from the target's cycle counter.
    Cycles,
    /// Nanoseconds of host wall time (the host JVM target).
    Ns,
    /// Milliseconds of the target's own millisecond clock, as a JOP tree's
    /// harness prints them (see `tree_output`); not cycles.
    Ms,
}

impl std::fmt::Display for Unit {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Unit::Cycles => "cycles",
            Unit::Ns => "ns",
            Unit::Ms => "ms",
        })
    }
}

/// One row of `measurements.csv`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(into = "Row", try_from = "Row")]
pub struct Measurement {
    pub target: String,
    pub target_config: String,
    pub benchmark: String,
    pub iterations: u64,
    /// The measured value, in `unit`.
    pub value: u64,
    pub unit: Unit,
    pub run: u32,
    pub timestamp: String,
    pub tool_version: String,
    pub suite_hash: String,
    pub log: String,
}

/// The row as the file holds it: `cycles` only for cycles, `value` always.
/// Files written before `value` existed carry the measurement in `cycles`
/// whatever the unit; they still read.
#[derive(Serialize, Deserialize)]
struct Row {
    target: String,
    target_config: String,
    benchmark: String,
    iterations: u64,
    cycles: Option<u64>,
    #[serde(default)]
    value: Option<u64>,
    unit: Unit,
    run: u32,
    timestamp: String,
    tool_version: String,
    suite_hash: String,
    log: String,
}

impl From<Measurement> for Row {
    fn from(m: Measurement) -> Row {
        Row {
            cycles: (m.unit == Unit::Cycles).then_some(m.value),
            value: Some(m.value),
            target: m.target,
            target_config: m.target_config,
            benchmark: m.benchmark,
            iterations: m.iterations,
            unit: m.unit,
            run: m.run,
            timestamp: m.timestamp,
            tool_version: m.tool_version,
            suite_hash: m.suite_hash,
            log: m.log,
        }
    }
}

impl TryFrom<Row> for Measurement {
    type Error = RowError;

    fn try_from(r: Row) -> Result<Measurement, RowError> {
        let value = match (r.cycles, r.value) {
            (Some(c), Some(v)) if r.unit == Unit::Cycles && c != v => {
                return Err(RowError::Disagree { cycles: c, value: v })
            }
            (Some(c), Some(_)) if r.unit != Unit::Cycles => {
                return Err(RowError::CyclesNotCycles {
                    cycles: c,
                    unit: r.unit,
                })
            }
            (_, Some(v)) | (Some(v), None) => v,
            (None, None) => return Err(RowError::NoMeasurement),
        };
        Ok(Measurement {
            target: r.target,
            target_config: r.target_config,
            benchmark: r.benchmark,
            iterations: r.iterations,
            value,
            unit: r.unit,
            run: r.run,
            timestamp: r.timestamp,
            tool_version: r.tool_version,
            suite_hash: r.suite_hash,
            log: r.log,
        })
    }
}

impl Measurement {
    /// The JOP clock cycles measured; `None` when the target measures time.
    pub fn cycles(&self) -> Option<u64> {
        (self.unit == Unit::Cycles).then_some(self.value)
    }

    /// A row of run 1 stamped now with this tool's version, for `target`; the
    /// caller fills in what was measured (`Measurement { benchmark, .., ..stamped }`).
    pub fn stamped(target: &str, target_config: &str, suite_hash: &str, log: &str) -> Measurement {
        Measurement {
            target: target.into(),
            target_config: target_config.into(),
            benchmark: String::new(),
            iterations: 0,
            value: 0,
            unit: Unit::Cycles,
            run: 1,
            timestamp: crate::clock::now_rfc3339(),
            tool_version: crate::provenance::VERSION.into(),
            suite_hash: suite_hash.into(),
            log: log.into(),
        }
    }
}

/// Why a row of a measurements file does not hold one consistent measurement.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RowError {
    /// A cycles row whose `cycles` and `value` columns differ.
    #[error("columns `cycles` ({cycles}) and `value` ({value}) disagree: fix one of them")]
    Disagree {
        /// The `cycles` column.
        cycles: u64,
        /// The `value` column.
        value: u64,
    },
    /// A row measuring time that fills in `cycles`.
    #[error(
        "column `cycles` holds {cycles} but the unit is {unit}: leave `cycles` empty for a target that measures time"
    )]
    CyclesNotCycles {
        /// The `cycles` column.
        cycles: u64,
        /// The row's unit.
        unit: Unit,
    },
    /// Both `cycles` and `value` are empty.
    #[error("neither `cycles` nor `value` holds the measurement")]
    NoMeasurement,
}

/// Errors reading a measurements file, naming file and line.
#[derive(Debug, thiserror::Error)]
pub enum MeasurementsError {
    #[error("{path}: {source}")]
    Io { path: PathBuf, source: io::Error },
    #[error("{path}:{line}: {message}")]
    Parse { path: PathBuf, line: u64, message: String },
}

/// Appends rows durably to `measurements.csv.partial`; [`finish`](Self::finish)
/// renames it to `measurements.csv`. Dropped unfinished, the partial file stays.
pub struct MeasurementWriter {
    /// The first line: what produced the file ([`crate::provenance::comment_line`]).
    provenance: String,
    partial: PathBuf,
    target: PathBuf,
    file: fs::File,
    rows: usize,
}

impl MeasurementWriter {
    /// Starts a new measurements file in `dir` (created if missing).
    pub fn create(dir: &Path) -> io::Result<Self> {
        fs::create_dir_all(dir)?;
        let target = dir.join(FILE_NAME);
        let partial = dir.join(format!("{FILE_NAME}.partial"));
        let mut file = fs::File::create(&partial)?;
        // What produced it, as a comment line the readers skip.
        let provenance = crate::provenance::comment_line();
        file.write_all(provenance.as_bytes())?;
        let mut header = csv::Writer::from_writer(Vec::new());
        header
            .write_record(HEADER)
            .and_then(|_| header.flush().map_err(csv::Error::from))
            .map_err(io::Error::other)?;
        file.write_all(&header.into_inner().map_err(|e| io::Error::other(e.to_string()))?)?;
        file.sync_data()?;
        Ok(Self {
            provenance,
            partial,
            target,
            file,
            rows: 0,
        })
    }

    /// Appends one row and forces it to disk before returning.
    pub fn append(&mut self, m: &Measurement) -> io::Result<()> {
        let mut w = csv::WriterBuilder::new().has_headers(false).from_writer(Vec::new());
        w.serialize(m).map_err(io::Error::other)?;
        let bytes = w.into_inner().map_err(|e| io::Error::other(e.to_string()))?;
        self.file.write_all(&bytes)?;
        self.file.sync_data()?;
        self.rows += 1;
        Ok(())
    }

    /// Rows appended so far.
    pub fn rows(&self) -> usize {
        self.rows
    }

    /// Path of the file being appended to.
    pub fn partial_path(&self) -> &Path {
        &self.partial
    }

    /// Publishes `rows` (the rows appended, put in order) as
    /// `measurements.csv`: what jobs run in parallel appended as each
    /// finished, published in the order one job at a time would have given.
    pub fn finish_in_order(self, rows: &[Measurement]) -> io::Result<PathBuf> {
        if rows.len() != self.rows {
            return Err(io::Error::other(format!(
                "{}: {} rows appended, {} to publish",
                self.partial.display(),
                self.rows,
                rows.len()
            )));
        }
        let mut w = csv::WriterBuilder::new().has_headers(false).from_writer(Vec::new());
        w.write_record(HEADER).map_err(io::Error::other)?;
        for m in rows {
            w.serialize(m).map_err(io::Error::other)?;
        }
        let rows_text = w.into_inner().map_err(|e| io::Error::other(e.to_string()))?;
        let mut bytes = self.provenance.clone().into_bytes();
        bytes.extend_from_slice(&rows_text);
        crate::atomic::write_atomic(&self.target, &bytes)?;
        drop(self.file);
        fs::remove_file(&self.partial)?;
        Ok(self.target)
    }

    /// Publishes the file as `measurements.csv` (atomic rename).
    pub fn finish(self) -> io::Result<PathBuf> {
        self.file.sync_all()?;
        fs::rename(&self.partial, &self.target)?;
        Ok(self.target)
    }
}

/// The comment line that records a workload that failed (`# failed
/// BENCH: REASON`): after the rows of `measurements.csv`, one per failure,
/// so that the file tells what was measured and what was not. [`read`]
/// skips comment lines.
pub const FAILED_PREFIX: &str = "# failed ";

/// Appends a [`FAILED_PREFIX`] line for each `(benchmark, reason)` of
/// `failures` to the published measurements file `csv` (rewritten whole,
/// atomically); nothing when there are none.
pub fn record_failures(csv: &Path, failures: &[(String, String)]) -> io::Result<()> {
    if failures.is_empty() {
        return Ok(());
    }
    let mut bytes = fs::read(csv)?;
    for (bench, why) in failures {
        let one_line = |t: &str| t.replace(['\r', '\n'], " ");
        bytes.extend_from_slice(format!("{FAILED_PREFIX}{}: {}\n", one_line(bench), one_line(why)).as_bytes());
    }
    crate::atomic::write_atomic(csv, &bytes)
}

/// The failures [`record_failures`] recorded in `csv`: `(benchmark, reason)`.
pub fn recorded_failures(csv: &Path) -> io::Result<Vec<(String, String)>> {
    Ok(fs::read_to_string(csv)?
        .lines()
        .filter_map(|l| l.strip_prefix(FAILED_PREFIX))
        .filter_map(|l| l.split_once(": "))
        .map(|(b, why)| (b.to_string(), why.to_string()))
        .collect())
}

const HEADER: [&str; 12] = [
    "target",
    "target_config",
    "benchmark",
    "iterations",
    "cycles",
    "value",
    "unit",
    "run",
    "timestamp",
    "tool_version",
    "suite_hash",
    "log",
];

/// Reads a measurements file, rejecting rows that are malformed or measured zero.
pub fn read(path: &Path) -> Result<Vec<Measurement>, MeasurementsError> {
    let data = fs::read(path).map_err(|source| MeasurementsError::Io {
        path: path.to_owned(),
        source,
    })?;
    let mut reader = csv::ReaderBuilder::new().comment(Some(b'#')).from_reader(&data[..]);
    let parse_error = |line: u64, message: String| MeasurementsError::Parse {
        path: path.to_owned(),
        line,
        message,
    };
    let headers = reader.headers().map_err(|e| parse_error(1, e.to_string()))?.clone();
    let mut out = Vec::new();
    for record in reader.records() {
        let record = record.map_err(|e| parse_error(e.position().map_or(0, |p| p.line()), e.to_string()))?;
        let line = record.position().map_or(0, |p| p.line());
        let m: Measurement = record.deserialize(Some(&headers)).map_err(|e| {
            // Name the column and the value, not csv's field number.
            let message = match e.kind() {
                csv::ErrorKind::Deserialize { err, .. } => match err.field() {
                    Some(i) => format!(
                        "column `{}`: `{}`: {}",
                        headers.get(i as usize).unwrap_or("?"),
                        record.get(i as usize).unwrap_or(""),
                        err.kind()
                    ),
                    None => err.to_string(),
                },
                _ => e.to_string(),
            };
            parse_error(line, message)
        })?;
        if m.value == 0 {
            return Err(parse_error(
                line,
                format!("benchmark '{}' measured 0 {}", m.benchmark, m.unit),
            ));
        }
        out.push(m);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn failures_are_recorded_after_the_rows_and_read_back_apart() {
        let dir = tempfile::tempdir().unwrap();
        let mut w = MeasurementWriter::create(dir.path()).unwrap();
        w.append(&sample("Kfl", 100)).unwrap();
        let csv = w.finish().unwrap();
        let failures = vec![
            (
                "Lift".to_string(),
                "the download failed at word 366\nbyte 1".to_string(),
            ),
            ("UdpIp".to_string(), "no result line".to_string()),
        ];
        record_failures(&csv, &failures).unwrap();
        let rows = read(&csv).unwrap();
        assert_eq!(rows, vec![sample("Kfl", 100)]);
        assert_eq!(
            recorded_failures(&csv).unwrap(),
            vec![
                ("Lift".to_string(), "the download failed at word 366 byte 1".to_string()),
                ("UdpIp".to_string(), "no result line".to_string()),
            ]
        );
        let text = std::fs::read_to_string(&csv).unwrap();
        assert!(text.ends_with("# failed UdpIp: no result line\n"), "{text}");
        // None: the file is left as it was.
        let before = std::fs::read(&csv).unwrap();
        record_failures(&csv, &[]).unwrap();
        assert_eq!(std::fs::read(&csv).unwrap(), before);
    }

    fn sample(bench: &str, value: u64) -> Measurement {
        Measurement {
            target: "host".into(),
            target_config: "java 17".into(),
            benchmark: bench.into(),
            iterations: 3,
            value,
            unit: Unit::Ns,
            run: 1,
            timestamp: "2026-11-22T00:00:00Z".into(),
            tool_version: "0.1.0".into(),
            suite_hash: "abc".into(),
            log: "logs/x.log".into(),
        }
    }

    #[test]
    fn rows_survive_an_unfinished_writer_and_finish_publishes() {
        let dir = tempfile::tempdir().unwrap();
        let mut w = MeasurementWriter::create(dir.path()).unwrap();
        w.append(&sample("A", 10)).unwrap();
        let partial = w.partial_path().to_owned();
        drop(w);
        assert_eq!(read(&partial).unwrap(), vec![sample("A", 10)]);

        let mut w = MeasurementWriter::create(dir.path()).unwrap();
        w.append(&sample("A", 10)).unwrap();
        w.append(&sample("B, with comma", 20)).unwrap();
        let path = w.finish().unwrap();
        assert_eq!(read(&path).unwrap(), vec![sample("A", 10), sample("B, with comma", 20)]);
        assert!(!partial.exists());
    }

    #[test]
    fn rows_published_in_order_keep_the_first_line() {
        let dir = tempfile::tempdir().unwrap();
        let mut w = MeasurementWriter::create(dir.path()).unwrap();
        let (a, b) = (sample("A", 1), sample("B", 2));
        w.append(&b).unwrap();
        w.append(&a).unwrap();
        let text = fs::read_to_string(w.finish_in_order(&[a, b]).unwrap()).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        assert!(lines[0].starts_with("# jopcal "), "{text}");
        assert!(
            lines[1].starts_with("target,") && lines[2].contains(",A,") && lines[3].contains(",B,"),
            "{text}"
        );
    }

    #[test]
    fn the_cycles_column_holds_cycles_only() {
        let dir = tempfile::tempdir().unwrap();
        let mut w = MeasurementWriter::create(dir.path()).unwrap();
        w.append(&sample("Host", 1234)).unwrap();
        w.append(&Measurement {
            unit: Unit::Cycles,
            ..sample("Jop", 5678)
        })
        .unwrap();
        let path = w.finish().unwrap();
        let text = fs::read_to_string(&path).unwrap();
        // First what produced it, a comment line the readers skip.
        assert!(text.starts_with(&format!("# jopcal {}; command: ", crate::provenance::VERSION)));
        let lines: Vec<&str> = text.lines().skip(1).collect();
        assert!(lines[0].starts_with("target,target_config,benchmark,iterations,cycles,value,unit,"));
        assert!(lines[1].contains(",3,,1234,ns,"), "{}", lines[1]);
        assert!(lines[2].contains(",3,5678,5678,cycles,"), "{}", lines[2]);
        let rows = read(&path).unwrap();
        assert_eq!((rows[0].cycles(), rows[0].value), (None, 1234));
        assert_eq!((rows[1].cycles(), rows[1].value), (Some(5678), 5678));
    }

    #[test]
    fn files_from_before_the_value_column_still_read() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("m.csv");
        fs::write(
            &p,
            "target,target_config,benchmark,iterations,cycles,unit,run,timestamp,tool_version,suite_hash,log\n\
             host,j,A,1,5,ns,1,t,v,h,l\n\
             emu,j,B,1,7,cycles,1,t,v,h,l\n",
        )
        .unwrap();
        let rows = read(&p).unwrap();
        assert_eq!((rows[0].value, rows[0].unit, rows[0].cycles()), (5, Unit::Ns, None));
        assert_eq!(rows[1].cycles(), Some(7));
    }

    #[test]
    fn cycles_and_value_that_disagree_are_named() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("m.csv");
        let head =
            "target,target_config,benchmark,iterations,cycles,value,unit,run,timestamp,tool_version,suite_hash,log\n";
        fs::write(&p, format!("{head}emu,j,B,1,7,8,cycles,1,t,v,h,l\n")).unwrap();
        let e = read(&p).unwrap_err().to_string();
        assert!(
            e.contains(":2: ") && e.contains("`cycles` (7) and `value` (8) disagree"),
            "{e}"
        );
        fs::write(&p, format!("{head}host,j,B,1,7,7,ns,1,t,v,h,l\n")).unwrap();
        let e = read(&p).unwrap_err().to_string();
        assert!(e.contains("leave `cycles` empty"), "{e}");
    }

    #[test]
    fn errors_name_file_and_line() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("m.csv");
        fs::write(
            &p,
            "target,target_config,benchmark,iterations,cycles,unit,run,timestamp,tool_version,suite_hash,log\n\
             host,j,A,1,5,ns,1,t,v,h,l\n\
             host,j,B,1,-5,ns,1,t,v,h,l\n",
        )
        .unwrap();
        let e = read(&p).unwrap_err().to_string();
        assert!(
            e.starts_with(&format!("{}:3: column `cycles`: `-5`: ", p.display())),
            "{e}"
        );

        fs::write(
            &p,
            "target,target_config,benchmark,iterations,cycles,unit,run,timestamp,tool_version,suite_hash,log\n\
             host,j,A,1,0,cycles,1,t,v,h,l\n",
        )
        .unwrap();
        let e = read(&p).unwrap_err().to_string();
        assert!(e.ends_with(":2: benchmark 'A' measured 0 cycles"), "{e}");

        fs::write(&p, "target\nx\n").unwrap();
        assert!(read(&p).unwrap_err().to_string().contains(":2: "));
    }
}
