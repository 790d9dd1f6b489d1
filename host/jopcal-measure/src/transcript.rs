//! Reading a whole run's output: which results it reported, whether it
//! finished, and the first malformed `@jopcal` line (with its line number).
//! Shared by every target: host JVM, serial boards, the virtual board.

use crate::result_line::{parse_line, LineError, ResultLine};

/// JOP's own end-of-program line, accepted as the end of a run.
pub const JVM_EXIT: &str = "JVM exit!";

/// How a run's output ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Ending {
    /// `@jopcal done` (with its status, if any).
    Done { status: Option<String> },
    /// JOP's `JVM exit!` without a done line.
    JvmExit,
    /// Neither: the output stopped early.
    Missing,
}

/// What a run's output says, in order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Transcript {
    /// `(line number, result)` for each result line.
    pub results: Vec<(usize, ResultLine)>,
    /// `(line number, error)` for each `@jopcal error` line.
    pub errors: Vec<(usize, ResultLine)>,
    pub ending: Ending,
}

/// A malformed `@jopcal` line: 1-based line number and the column error.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("line {line}, {error}")]
pub struct TranscriptError {
    pub line: usize,
    pub error: LineError,
}

/// Scans complete output text. Lines after the ending are ignored.
pub fn scan(text: &str) -> Result<Transcript, TranscriptError> {
    let mut t = Transcript {
        results: Vec::new(),
        errors: Vec::new(),
        ending: Ending::Missing,
    };
    for (i, line) in text.lines().enumerate() {
        let n = i + 1;
        match parse_line(line).map_err(|error| TranscriptError { line: n, error })? {
            Some(r @ ResultLine::Result { .. }) => t.results.push((n, r)),
            Some(e @ ResultLine::Error { .. }) => t.errors.push((n, e)),
            Some(ResultLine::Done { status }) => {
                t.ending = Ending::Done { status };
                break;
            }
            None if line.trim_end() == JVM_EXIT => {
                t.ending = Ending::JvmExit;
                break;
            }
            None => {}
        }
    }
    Ok(t)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn collects_results_and_ending() {
        let t = scan("boot\n@jopcal result bench=A iter=1 cycles=5\nnoise\n@jopcal done\n@jopcal result bench=B iter=1 cycles=9\n")
            .unwrap();
        assert_eq!(t.results.len(), 1);
        assert_eq!(t.results[0].0, 2);
        assert_eq!(t.ending, Ending::Done { status: None });
    }

    #[test]
    fn jvm_exit_ends_and_missing_is_reported() {
        assert_eq!(scan("x\nJVM exit!\r\n").unwrap().ending, Ending::JvmExit);
        assert_eq!(
            scan("@jopcal result bench=A iter=1 cycles=5\n").unwrap().ending,
            Ending::Missing
        );
    }

    #[test]
    fn malformed_line_names_line_and_column() {
        let e = scan("ok\n@jopcal result bench=A iter=x cycles=1\n").unwrap_err();
        assert_eq!(e.line, 2);
        assert_eq!(
            e.to_string(),
            "line 2, column 29: 'iter' must be a non-negative integer, found 'x'"
        );
    }
}
