//! The `@jopcal` result-line grammar (target → host).
//!
//! ```text
//! line    = [program-output] "@jopcal" (SP kind) *(SP pair) *SP
//! kind    = 1*LOWER                      ; result | error | done
//! pair    = key "=" value
//! key     = 1*(ALNUM / "_")
//! value   = 1*(any character but white space)
//! ```
//!
//! A line without the `@jopcal` marker is program output and parses to `None`.
//! Text before the marker (a program that printed without a newline) is program
//! output too. `result` needs `bench`, `iter` and `cycles`; `error` needs `bench`;
//! `done` takes an optional `status`. Errors carry the 1-based column.
//!
//! A line may end with `chk=N`: the sum of the line's bytes from the `@` of the
//! marker up to the space before `chk`, modulo 65536 ([`line_check`]). Any
//! single dropped, duplicated, inserted or bit-flipped byte changes the sum, so
//! a line corrupted on a serial line is rejected rather than read as a wrong
//! cycle count. jop-firmware's harness prints it on every result and error line.

use nom::bytes::complete::{tag, take_while, take_while1};
use nom::character::complete::char;
use nom::{IResult, Parser};
use std::fmt;

/// The marker that starts every line meant for the host.
pub const MARKER: &str = "@jopcal";

/// A syntactically valid `@jopcal` line before its keys are interpreted.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Record<'a> {
    pub kind: &'a str,
    /// Key/value pairs with the 1-based column of each value.
    pub pairs: Vec<(&'a str, &'a str, usize)>,
}

/// A typed result line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ResultLine {
    /// `@jopcal result bench=NAME iter=N cycles=C`: one measurement.
    Result {
        bench: String,
        iterations: u64,
        cycles: u64,
        /// Any further pairs, kept in order.
        extra: Vec<(String, String)>,
    },
    /// `@jopcal error bench=NAME ...`: the workload detected a failure.
    Error {
        bench: String,
        fields: Vec<(String, String)>,
    },
    /// `@jopcal done [status=...]`: the run is over.
    Done { status: Option<String> },
}

/// Why a `@jopcal` line was rejected; `column` is 1-based, in characters.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("column {column}: {message}")]
pub struct LineError {
    pub column: usize,
    pub message: String,
}

impl ResultLine {
    /// True for the line that ends a run.
    pub fn is_done(&self) -> bool {
        matches!(self, ResultLine::Done { .. })
    }
}

impl fmt::Display for ResultLine {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ResultLine::Result {
                bench,
                iterations,
                cycles,
                extra,
            } => {
                write!(f, "{MARKER} result bench={bench} iter={iterations} cycles={cycles}")?;
                for (k, v) in extra {
                    write!(f, " {k}={v}")?;
                }
                Ok(())
            }
            ResultLine::Error { bench, fields } => {
                write!(f, "{MARKER} error bench={bench}")?;
                for (k, v) in fields {
                    write!(f, " {k}={v}")?;
                }
                Ok(())
            }
            ResultLine::Done { status: None } => write!(f, "{MARKER} done"),
            ResultLine::Done { status: Some(s) } => write!(f, "{MARKER} done status={s}"),
        }
    }
}

/// Byte offset of the marker in `line`, if the line carries one. The marker
/// must be followed by white space or the end of the line (`@jopcalx` is not it).
pub fn find_marker(line: &str) -> Option<usize> {
    let mut from = 0;
    while let Some(pos) = line[from..].find(MARKER) {
        let at = from + pos;
        let after = &line[at + MARKER.len()..];
        if after.is_empty() || after.starts_with(char::is_whitespace) {
            return Some(at);
        }
        from = at + MARKER.len();
    }
    None
}

fn kind(i: &str) -> IResult<&str, &str> {
    take_while1(|c: char| c.is_ascii_lowercase()).parse(i)
}

fn key(i: &str) -> IResult<&str, &str> {
    take_while1(|c: char| c.is_ascii_alphanumeric() || c == '_').parse(i)
}

fn value(i: &str) -> IResult<&str, &str> {
    take_while(|c: char| !c.is_whitespace()).parse(i)
}

fn blanks(i: &str) -> IResult<&str, &str> {
    take_while(|c: char| c == ' ' || c == '\t').parse(i)
}

/// Parses the syntax of a line. `Ok(None)` for program output.
pub fn parse_record(line: &str) -> Result<Option<Record<'_>>, LineError> {
    let line = line.trim_end_matches(['\r', '\n']);
    let Some(start) = find_marker(line) else {
        return Ok(None);
    };
    let column = |rest: &str| line[..line.len() - rest.len()].chars().count() + 1;
    let err = |rest: &str, message: String| LineError {
        column: column(rest),
        message,
    };
    let (rest, _) = tag::<_, _, nom::error::Error<&str>>(MARKER)
        .parse(&line[start..])
        .map_err(|_| err(&line[start..], "expected @jopcal".into()))?;
    let (rest, _) = blanks(rest).expect("take_while cannot fail");
    let (mut rest, kind) = kind(rest).map_err(|_| {
        err(
            rest,
            "expected a record kind (result, error, done) after @jopcal".into(),
        )
    })?;
    let mut pairs = Vec::new();
    loop {
        let (after_blanks, gap) = blanks(rest).expect("take_while cannot fail");
        if after_blanks.is_empty() {
            break;
        }
        if gap.is_empty() {
            return Err(err(
                after_blanks,
                "expected a space before the next key=value pair".into(),
            ));
        }
        rest = after_blanks;
        let (after_key, k) = key(rest).map_err(|_| {
            err(
                rest,
                format!("expected key=value, found '{}'", rest.chars().next().unwrap_or(' ')),
            )
        })?;
        let (after_eq, _) = char::<_, nom::error::Error<&str>>('=')
            .parse(after_key)
            .map_err(|_| err(after_key, format!("expected '=' after key '{k}'")))?;
        let (after_value, v) = value(after_eq).expect("take_while cannot fail");
        if v.is_empty() {
            return Err(err(after_eq, format!("empty value for key '{k}'")));
        }
        if pairs.iter().any(|(seen, _, _)| *seen == k) {
            return Err(err(rest, format!("duplicate key '{k}'")));
        }
        pairs.push((k, v, column(after_eq)));
        rest = after_value;
    }
    Ok(Some(Record { kind, pairs }))
}

/// The check value of the text of a line before ` chk=`.
pub fn line_check(text: &str) -> u16 {
    text.bytes().fold(0u16, |sum, b| sum.wrapping_add(u16::from(b)))
}

/// Verifies a `chk` pair: it must be the last pair and match [`line_check`].
fn verify_check(line: &str, rec: &Record<'_>) -> Result<(), LineError> {
    let Some(pos) = rec.pairs.iter().position(|(k, _, _)| *k == "chk") else {
        return Ok(());
    };
    let (_, v, col) = rec.pairs[pos];
    if pos + 1 != rec.pairs.len() {
        return Err(LineError {
            column: col,
            message: "'chk' must be the last pair of the line".into(),
        });
    }
    let want: u16 = v.parse().map_err(|_| LineError {
        column: col,
        message: format!("'chk' must be a number 0..65535, found '{v}'"),
    })?;
    let start = find_marker(line).unwrap_or(0);
    // `col` is the 1-based character column of the value; the text checked ends before " chk=".
    let value_at = line.char_indices().nth(col - 1).map_or(line.len(), |(b, _)| b);
    let end = value_at.saturating_sub(" chk=".len()).max(start);
    let got = line_check(&line[start..end]);
    if got != want {
        return Err(LineError {
            column: col,
            message: format!("checksum mismatch: the line sums to {got}, chk says {want} (corrupted in transit)"),
        });
    }
    Ok(())
}

fn is_bench_name(s: &str) -> bool {
    s.chars()
        .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '-' | '$'))
}

/// Parses one line of target output. `Ok(None)` means program output.
pub fn parse_line(line: &str) -> Result<Option<ResultLine>, LineError> {
    let Some(rec) = parse_record(line)? else {
        return Ok(None);
    };
    let line = line.trim_end_matches(['\r', '\n']);
    verify_check(line, &rec)?;
    let end_column = line.chars().count() + 1;
    let find = |k: &str| rec.pairs.iter().find(|(key, _, _)| *key == k);
    let need = |k: &str| {
        find(k).ok_or_else(|| LineError {
            column: end_column,
            message: format!("'{}' line lacks required key '{k}'", rec.kind),
        })
    };
    let bench = |required: bool| -> Result<Option<String>, LineError> {
        let found = if required { Some(need("bench")?) } else { find("bench") };
        match found {
            None => Ok(None),
            Some((_, v, col)) if !is_bench_name(v) => Err(LineError {
                column: *col,
                message: format!("bench name '{v}' has characters other than letters, digits, _ . - $"),
            }),
            Some((_, v, _)) => Ok(Some(v.to_string())),
        }
    };
    let number = |k: &str| -> Result<u64, LineError> {
        let (_, v, col) = need(k)?;
        v.parse::<u64>().map_err(|_| LineError {
            column: *col,
            message: format!("'{k}' must be a non-negative integer, found '{v}'"),
        })
    };
    let rest_of = |skip: &[&str]| -> Vec<(String, String)> {
        rec.pairs
            .iter()
            .filter(|(k, _, _)| !skip.contains(k))
            .map(|(k, v, _)| (k.to_string(), v.to_string()))
            .collect()
    };
    match rec.kind {
        "result" => Ok(Some(ResultLine::Result {
            bench: bench(true)?.expect("required"),
            iterations: number("iter")?,
            cycles: number("cycles")?,
            extra: rest_of(&["bench", "iter", "cycles", "chk"]),
        })),
        "error" => Ok(Some(ResultLine::Error {
            bench: bench(true)?.expect("required"),
            fields: rest_of(&["bench", "chk"]),
        })),
        "done" => Ok(Some(ResultLine::Done {
            status: find("status").map(|(_, v, _)| v.to_string()),
        })),
        other => {
            let col = line.find(other).map(|b| line[..b].chars().count() + 1).unwrap_or(1);
            Err(LineError {
                column: col,
                message: format!("unknown record kind '{other}' (expected result, error or done)"),
            })
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn err(line: &str) -> LineError {
        parse_line(line).expect_err(line)
    }

    #[test]
    fn check_values_catch_every_single_byte_fault() {
        let body = "@jopcal result bench=Sieve iter=8 cycles=123456";
        let line = format!("{body} chk={}", line_check(body));
        let parsed = parse_line(&format!("out> {line}")).unwrap().unwrap();
        assert_eq!(
            parsed,
            ResultLine::Result {
                bench: "Sieve".into(),
                iterations: 8,
                cycles: 123456,
                extra: vec![],
            }
        );
        let bytes = line.as_bytes();
        for i in 0..bytes.len() {
            let mut variants: Vec<Vec<u8>> = Vec::new();
            let mut dropped = bytes.to_vec();
            dropped.remove(i);
            variants.push(dropped);
            let mut dup = bytes.to_vec();
            dup.insert(i, bytes[i]);
            variants.push(dup);
            for bit in 0..7 {
                let mut flipped = bytes.to_vec();
                flipped[i] ^= 1 << bit;
                variants.push(flipped);
            }
            for v in variants {
                let text = String::from_utf8_lossy(&v).into_owned();
                if let Ok(Some(ResultLine::Result {
                    cycles,
                    iterations,
                    bench,
                    ..
                })) = parse_line(&text)
                {
                    // A fault outside the values (e.g. a doubled '@' before the
                    // marker) may leave the line readable, but never with other values.
                    assert_eq!(
                        (bench.as_str(), iterations, cycles),
                        ("Sieve", 8, 123456),
                        "corrupted line accepted: {text:?}"
                    );
                }
            }
        }
        assert_eq!(
            err(&format!("{body} chk=1")).message,
            format!(
                "checksum mismatch: the line sums to {}, chk says 1 (corrupted in transit)",
                line_check(body)
            )
        );
        assert_eq!(
            err("@jopcal done chk=1 status=x").message,
            "'chk' must be the last pair of the line"
        );
    }

    #[test]
    fn parses_a_result_line() {
        let r = parse_line("@jopcal result bench=Sieve iter=100 cycles=123456\r\n").unwrap();
        assert_eq!(
            r,
            Some(ResultLine::Result {
                bench: "Sieve".into(),
                iterations: 100,
                cycles: 123456,
                extra: vec![]
            })
        );
    }

    #[test]
    fn keeps_extra_pairs_and_output_before_the_marker() {
        let r = parse_line("hello@jopcal result cycles=5 iter=1 bench=A unit=ns")
            .unwrap()
            .unwrap();
        match r {
            ResultLine::Result { bench, extra, .. } => {
                assert_eq!(bench, "A");
                assert_eq!(extra, vec![("unit".to_string(), "ns".to_string())]);
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn program_output_is_not_a_record() {
        assert_eq!(parse_line("JVM exit!").unwrap(), None);
        assert_eq!(parse_line("mail@jopcalendar.org").unwrap(), None);
        assert_eq!(parse_line("").unwrap(), None);
    }

    #[test]
    fn done_with_and_without_status() {
        assert_eq!(
            parse_line("@jopcal done").unwrap(),
            Some(ResultLine::Done { status: None })
        );
        assert_eq!(
            parse_line("@jopcal done status=failed").unwrap(),
            Some(ResultLine::Done {
                status: Some("failed".into())
            })
        );
    }

    #[test]
    fn error_messages_name_the_column() {
        let e = err("@jopcal result bench=Sieve iter=10 cycles=-5");
        assert_eq!(e.column, 43);
        assert_eq!(e.message, "'cycles' must be a non-negative integer, found '-5'");
        assert_eq!(
            e.to_string(),
            "column 43: 'cycles' must be a non-negative integer, found '-5'"
        );

        let e = err("@jopcal result bench=Sieve iter=10");
        assert_eq!(
            (e.column, e.message.as_str()),
            (35, "'result' line lacks required key 'cycles'")
        );

        let e = err("@jopcal result bench=Sieve iter10 cycles=1");
        assert_eq!((e.column, e.message.as_str()), (34, "expected '=' after key 'iter10'"));

        let e = err("@jopcal result bench= iter=1 cycles=1");
        assert_eq!((e.column, e.message.as_str()), (22, "empty value for key 'bench'"));

        let e = err("@jopcal result bench=A bench=B iter=1 cycles=1");
        assert_eq!((e.column, e.message.as_str()), (24, "duplicate key 'bench'"));

        let e = err("@jopcal resalt bench=A");
        assert_eq!(e.column, 9);
        assert!(e.message.starts_with("unknown record kind 'resalt'"));

        let e = err("@jopcal");
        assert_eq!(
            (e.column, e.message.as_str()),
            (8, "expected a record kind (result, error, done) after @jopcal")
        );

        let e = err("@jopcal result bench=A iter=1 cycles=1 =x");
        assert_eq!((e.column, e.message.as_str()), (40, "expected key=value, found '='"));

        let e = err("@jopcal result bench=A/B iter=1 cycles=1");
        assert_eq!(e.column, 22);

        let e = err("@jopcal result bench=A iter=99999999999999999999 cycles=1");
        assert_eq!(e.column, 29);
    }

    #[test]
    fn display_round_trips() {
        let lines = [
            "@jopcal result bench=Sieve iter=100 cycles=123456",
            "@jopcal result bench=A iter=1 cycles=2 unit=ns",
            "@jopcal error bench=Lift reason=checksum expected=1 got=2",
            "@jopcal done",
            "@jopcal done status=failed",
        ];
        for l in lines {
            assert_eq!(parse_line(l).unwrap().unwrap().to_string(), l);
        }
    }

    proptest! {
        #[test]
        fn never_panics(s in "\\PC*") {
            let _ = parse_line(&s);
        }

        #[test]
        fn never_panics_after_marker(s in "\\PC{0,60}") {
            let _ = parse_line(&format!("@jopcal {s}"));
            let _ = parse_line(&format!("@jopcal result {s}"));
        }

        #[test]
        fn result_lines_round_trip(bench in "[A-Za-z0-9_.$-]{1,20}", it in any::<u64>(), cy in any::<u64>()) {
            let line = ResultLine::Result { bench, iterations: it, cycles: cy, extra: vec![] };
            prop_assert_eq!(parse_line(&line.to_string()).unwrap(), Some(line));
        }

        #[test]
        fn error_columns_lie_within_the_line(s in "[a-z =0-9-]{0,40}") {
            let line = format!("@jopcal {s}");
            if let Err(e) = parse_line(&line) {
                prop_assert!(e.column >= 1 && e.column <= line.chars().count() + 1);
            }
        }
    }
}
