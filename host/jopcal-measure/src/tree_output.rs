//! What a JOP tree's own fixed-count harness prints (`LoopKfl` and its kin),
//! for targets that ran the tree's harness instead of jopcal's wrapper of it:
//!
//! ```text
//! Kfl                 <- the benchmark's toString(), any text
//! 812 ms              <- currentTimeMillis() difference around the call
//! 48720000 cycles     <- JemBench's harnesses only: ms times a frequency constant
//! ```
//!
//! Only the `ms` figure is read. The `cycles` line is that figure times a
//! constant compiled into the harness (which need not be the board's clock),
//! so it carries no information of its own; jopcal does not call it cycles.
//! A millisecond clock limits resolution to one part in the figure, and in
//! JopSim it is the host's wall clock.

use nom::bytes::complete::tag;
use nom::character::complete::{digit1, space0, space1};
use nom::combinator::{all_consuming, opt};
use nom::{IResult, Parser};

/// One timed run the harness reported.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HarnessReport {
    /// The non-empty line printed before the time, if any (the benchmark's name).
    pub label: Option<String>,
    /// Milliseconds between the two clock reads.
    pub ms: u64,
    /// 1-based line of the `ms` figure.
    pub line: usize,
}

/// A line that reads as a time but cannot be one.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("line {line}: {message}")]
pub struct TreeOutputError {
    pub line: usize,
    pub message: String,
}

/// `[-]N ms` (a whole line, blanks around allowed): the signed figure.
fn ms_line(i: &str) -> IResult<&str, (bool, &str)> {
    let (i, _) = space0(i)?;
    let (i, minus) = opt(tag("-")).parse(i)?;
    let (i, digits) = digit1(i)?;
    let (i, _) = all_consuming((space1, tag("ms"), space0)).parse(i)?;
    Ok((i, (minus.is_some(), digits)))
}

/// Every `N ms` report in a target's output, with the line before it as label.
/// A negative or absurd figure (a clock that wrapped) is an error naming the line.
pub fn scan(text: &str) -> Result<Vec<HarnessReport>, TreeOutputError> {
    let mut out = Vec::new();
    let mut previous: Option<&str> = None;
    for (n, raw) in text.lines().enumerate() {
        let line = raw.trim_end_matches('\r');
        if let Ok((_, (negative, digits))) = ms_line(line) {
            let err = |message: String| TreeOutputError { line: n + 1, message };
            if negative {
                return Err(err(format!(
                    "negative time `{}` (the millisecond clock wrapped?)",
                    line.trim()
                )));
            }
            let ms: u64 = digits
                .parse()
                .map_err(|_| err(format!("time `{}` is out of range", line.trim())))?;
            out.push(HarnessReport {
                label: previous.map(|p| p.trim().to_string()),
                ms,
                line: n + 1,
            });
            previous = None;
        } else if !line.trim().is_empty() {
            previous = Some(line);
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_both_harness_shapes() {
        let jembench = "Kfl\n812 ms\n48720000 cycles\nJVM exit!\n";
        assert_eq!(
            scan(jembench).unwrap(),
            vec![HarnessReport {
                label: Some("Kfl".into()),
                ms: 812,
                line: 2
            }]
        );
        let jbe = "Program: x.jop\r\nLift\r\n  17 ms \r\n";
        let r = scan(jbe).unwrap();
        assert_eq!((r[0].label.as_deref(), r[0].ms, r[0].line), (Some("Lift"), 17, 3));
        assert!(scan("12 msec\nms 12\n1.5 ms\n").unwrap().is_empty());
        assert_eq!(
            scan("-3 ms\n").unwrap_err().to_string(),
            "line 1: negative time `-3 ms` (the millisecond clock wrapped?)"
        );
        assert_eq!(
            scan("x\n99999999999999999999999 ms\n").unwrap_err().to_string(),
            "line 2: time `99999999999999999999999 ms` is out of range"
        );
    }

    proptest::proptest! {
        #[test]
        fn never_panics(s in "\\PC{0,200}") {
            let _ = scan(&s);
        }

        #[test]
        fn any_figure_reads_back(label in "[A-Za-z][A-Za-z0-9 ]{0,20}", ms in 0u64..u64::MAX) {
            let r = scan(&format!("{label}\n{ms} ms\n")).unwrap();
            proptest::prop_assert_eq!(r[0].ms, ms);
            proptest::prop_assert_eq!(r[0].label.as_deref(), Some(label.trim()));
        }
    }
}
