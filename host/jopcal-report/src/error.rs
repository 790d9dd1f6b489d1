//! Why a report input (estimates, summary, published table) could not be read, sets not reconciled or compared, or a plot not written.

pub use crate::breakdown::BreakdownError;
use jopcal_measure::Unit;
use std::path::PathBuf;

/// Why `estimates.csv` could not be read; every message starts with the file.
#[derive(Debug, thiserror::Error)]
pub enum EstimatesError {
    /// The file could not be read.
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// The header line is not CSV.
    #[error("{path}: {source}")]
    Header {
        path: PathBuf,
        #[source]
        source: csv::Error,
    },
    /// A column every estimates.csv has is missing.
    #[error("{path}: line 1: no column '{column}' (is this an estimates.csv?)")]
    MissingColumn { path: PathBuf, column: &'static str },
    /// A value is not of its column's type.
    #[error("{path}: line {line}: column '{column}': {} (a number was expected)", .source.kind())]
    BadValue {
        path: PathBuf,
        line: u64,
        /// The column's name (`?` when unknown).
        column: String,
        #[source]
        source: csv::DeserializeError,
    },
    /// A row is not CSV.
    #[error("{path}: line {line}: {source}")]
    Row {
        path: PathBuf,
        line: u64,
        #[source]
        source: csv::Error,
    },
    /// A row's cycles are not a positive number.
    #[error("{path}: line {line}: cycles must be positive, found {cycles}")]
    NotPositive { path: PathBuf, line: usize, cycles: f64 },
    /// The file holds no row.
    #[error("{0}: no estimates")]
    Empty(PathBuf),
}

/// Why measurements and estimates could not be reconciled.
#[derive(Debug, thiserror::Error)]
pub enum ReconcileError {
    /// A benchmark measured in time, not cycles.
    #[error("benchmark {benchmark} was measured in {unit}, not cycles: reconcile compares cycles (use a JOP target)")]
    NotCycles { benchmark: String, unit: Unit },
    /// No benchmark has both a measurement and an estimate.
    #[error("the measurements and the estimates have no benchmark in common")]
    NothingInCommon,
    /// A variant lacks an estimate for a benchmark the others have.
    #[error("variant '{variant}' has no estimate for {benchmark}")]
    MissingEstimate { variant: String, benchmark: String },
}

/// Why an `accuracy.csv` could not be read back: the line and what is wrong there.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("line {line}: {message}")]
pub struct AccuracyCsvError {
    pub line: usize,
    pub message: String,
}

/// Why two measurement sets could not be compared.
#[derive(Debug, thiserror::Error)]
pub enum RegressError {
    /// A row measured zero.
    #[error("benchmark {benchmark} measured 0 {unit}: not a measurement")]
    ZeroMeasurement { benchmark: String, unit: Unit },
    /// The sets (or rows of one) measure in different units.
    #[error("the two sets measure in different units ({})", .0.join(", "))]
    MixedUnits(Vec<String>),
}

/// Why `summary.json` could not be read.
#[derive(Debug, thiserror::Error)]
pub enum SummaryError {
    /// The file could not be read.
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// The file is not a summary's JSON.
    #[error("{path}:{line}:{column}: {source} (is this a summary.json?)")]
    Json {
        path: PathBuf,
        line: usize,
        column: usize,
        #[source]
        source: serde_json::Error,
    },
}

/// Why the published cross-profilers' tables could not be read.
#[derive(Debug, thiserror::Error)]
pub enum PublishedError {
    /// A table could not be read.
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// A record (1-based, comments left out) is not CSV.
    #[error("{path}: record {record}: {source}")]
    Record {
        path: PathBuf,
        record: usize,
        #[source]
        source: csv::Error,
    },
    /// A cell that must hold a number does not.
    #[error("{path}: `{value}` in column {column} is not a number")]
    NotANumber {
        path: PathBuf,
        /// The cell's text.
        value: String,
        /// The 1-based column.
        column: usize,
    },
}

/// Why an SVG could not be rasterised.
#[derive(Debug, thiserror::Error)]
pub enum RasterError {
    /// resvg does not read the SVG.
    #[error(transparent)]
    Svg(#[from] resvg::usvg::Error),
    /// The picture is empty.
    #[error("the plot has no area")]
    NoArea,
    /// The PNG encoder failed.
    #[error("{0}")]
    Png(#[source] Box<dyn std::error::Error + Send + Sync>),
    /// The PDF conversion (svg2pdf) failed.
    #[error("PDF: {0}")]
    Pdf(String),
}

/// Why a plot could not be drawn or written.
#[derive(Debug, thiserror::Error)]
pub enum PlotError {
    /// A file or directory could not be written.
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// Plotters could not draw the SVG.
    #[error("{path}: {source}")]
    Draw {
        /// The SVG file.
        path: PathBuf,
        #[source]
        source: Box<dyn std::error::Error + Send + Sync>,
    },
    /// The SVG could not be rasterised.
    #[error("{path}: {source}")]
    Raster {
        /// The PNG file.
        path: PathBuf,
        #[source]
        source: RasterError,
    },
}

/// A `--fail-on` value that is not one of the three.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("`{0}`: expected slower, faster or any")]
pub struct UnknownFailOn(pub String);

/// Why a benchmark's change was not taken apart by bytecode (a side's
/// virtual board could not be set up, or could not find the timed region):
/// the reason as `regress.md` shows it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct NotTakenApart(pub String);
