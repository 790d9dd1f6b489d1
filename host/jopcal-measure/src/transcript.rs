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

/// What the program itself printed in a run's log: the output section
/// (after `# ---- raw output ----` of a target's log, or between `# ----
/// stdout ----` and `# ---- stderr ----` of the host JVM's), its lines up to
/// the first `@jopcal` line, without JOP's start-up banner (`JOP start V
/// ...`, `80 MHz, 1024 KB RAM, 1 CPUs`), the lines JOP's collector logs
/// (`GC allocation triggered`, `Run out of handles in new ...!`), and line ends.
pub fn program_lines(log: &str) -> Vec<&str> {
    let body = match (log.find("# ---- raw output ----\n"), log.find("# ---- stdout ----\n")) {
        (Some(k), _) => &log[k + "# ---- raw output ----\n".len()..],
        (None, Some(k)) => {
            let rest = &log[k + "# ---- stdout ----\n".len()..];
            rest.find("# ---- stderr ----").map_or(rest, |e| &rest[..e])
        }
        (None, None) => log,
    };
    body.lines()
        .map(|l| l.trim_end_matches('\r'))
        .take_while(|l| !l.starts_with("@jopcal"))
        .filter(|l| !is_banner(l) && !is_collector_log(l))
        .collect()
}

/// JOP's start-up lines: `JOP start V 20130708` and `80 MHz, 1024 KB RAM, 1 CPUs`.
fn is_banner(line: &str) -> bool {
    let l = line.trim();
    l.starts_with("JOP start V") || (l.contains(" MHz, ") && l.contains(" KB RAM, ") && l.ends_with("CPUs"))
}

/// What JOP's collector logs as it runs (jop-devel/jop's `GC.log`): the
/// runtime's lines, not the program's, which the host never prints.
fn is_collector_log(line: &str) -> bool {
    let l = line.trim();
    l == "GC allocation triggered" || (l.starts_with("Run out of handles in new ") && l.ends_with('!'))
}

/// The first line (1-based) where two runs' own output differs, with the two
/// lines (`None` where one run printed fewer lines).
pub fn first_difference<'a>(a: &[&'a str], b: &[&'a str]) -> Option<(usize, Option<&'a str>, Option<&'a str>)> {
    let n = a.len().max(b.len());
    (0..n)
        .find(|&i| a.get(i).map(|l| l.trim_end()) != b.get(i).map(|l| l.trim_end()))
        .map(|i| (i + 1, a.get(i).copied(), b.get(i).copied()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_programs_own_lines_are_read_from_a_targets_log_and_from_the_hosts_and_compared() {
        let target = "# image Faults on /dev/pts/1, classic protocol\n# attempt 1\n# ---- raw output ----\nJOP start V 20130708 \r\n80 MHz, 1024 KB RAM, 1 CPUs\r\nGC allocation triggered\r\nsum 2 oob 0\r\nRun out of handles in new array!\r\n@jopcal result bench=F iter=1 cycles=9 chk=1\r\n@jopcal done\r\nJVM exit!\r\n";
        let host = "# command: java x\n# exit status 0, 0.4 s\n# ---- stdout ----\nsum 2 oob 93\n@jopcal result bench=F iter=1 cycles=7 chk=1\n@jopcal done\n# ---- stderr ----\nwarning\n";
        let (t, h) = (program_lines(target), program_lines(host));
        assert_eq!(t, ["sum 2 oob 0"]);
        assert_eq!(h, ["sum 2 oob 93"]);
        assert_eq!(
            first_difference(&t, &h),
            Some((1, Some("sum 2 oob 0"), Some("sum 2 oob 93")))
        );
        assert_eq!(first_difference(&t, &t), None);
        assert_eq!(first_difference(&["a"], &["a", "b"]), Some((2, None, Some("b"))));
        // Trailing blanks (JOP's println) do not count.
        assert_eq!(first_difference(&["a "], &["a"]), None);
    }

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
