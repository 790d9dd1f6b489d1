//! Why a result line, transcript, measurements file or JopSim statistic
//! could not be read. Each error lives beside the code that raises it and
//! is gathered here.

pub use crate::measurements::{MeasurementsError, RowError};
pub use crate::result_line::LineError;
pub use crate::target_counts::{CountsError, NotACount};
pub use crate::transcript::TranscriptError;
