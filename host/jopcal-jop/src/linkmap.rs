//! JOP's link map, `<name>.jop.link.txt`: one entry per line,
//! `bytecode <method> <address>`, `class <name> <method-table address> <constant-pool address>`,
//! `static <field> <address>`. Parsed with `nom`; lines of other kinds are
//! kept as unknown (later JOP versions add some) and reported, not fatal;
//! a malformed line of a known kind is an error naming line and column.

use nom::bytes::complete::{take_while, take_while1};
use nom::character::complete::{digit1, space1};
use nom::{IResult, Parser};

/// A parsed link map.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LinkMap {
    /// `(method, address of its bytecode)`, method as `pkg.Class.name(desc)`.
    pub methods: Vec<(String, u32)>,
    /// `(class, method-table address, constant-pool address)`.
    pub classes: Vec<(String, u32, u32)>,
    pub statics: Vec<(String, u32)>,
    /// `(method, address of its method structure)` from the `-mtab` lines:
    /// what JOP's stack dumps print as `mp`.
    pub method_structs: Vec<(String, u32)>,
    /// Line numbers of lines of kinds this reader does not know.
    pub unknown: Vec<usize>,
}

/// A malformed line; line and column are 1-based.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{line}:{column}: {message}")]
pub struct LinkMapError {
    pub line: usize,
    pub column: usize,
    pub message: String,
}

fn token(i: &str) -> IResult<&str, &str> {
    take_while1(|c: char| !c.is_whitespace()).parse(i)
}

fn number(i: &str) -> IResult<&str, u32> {
    let (r, d) = digit1(i)?;
    match d.parse::<u32>() {
        Ok(v) => Ok((r, v)),
        Err(_) => Err(nom::Err::Error(nom::error::Error::new(i, nom::error::ErrorKind::Digit))),
    }
}

/// Where JOP's linker writes the map of `image`: beside it, `<image>.link.txt`.
pub fn beside(image: &std::path::Path) -> std::path::PathBuf {
    let mut p = image.as_os_str().to_owned();
    p.push(".link.txt");
    p.into()
}

/// `pkg/Class.name(desc)` and `pkg.Class.name(desc)` both become the dotted form.
pub fn normalize(method: &str) -> String {
    match method.find('(') {
        Some(p) => format!("{}{}", method[..p].replace('/', "."), &method[p..]),
        None => method.replace('/', "."),
    }
}

impl LinkMap {
    /// The method whose structure is at `mp` (JOP's stack dumps name methods so).
    pub fn method_at_struct(&self, mp: u32) -> Option<&str> {
        self.method_structs
            .iter()
            .find(|(_, a)| *a == mp)
            .map(|(m, _)| m.as_str())
    }

    pub fn parse(text: &str) -> Result<LinkMap, LinkMapError> {
        let mut map = LinkMap::default();
        for (n, raw) in text.lines().enumerate() {
            let line_no = n + 1;
            let line = raw.trim_end();
            let col = |rest: &str| line.len() - rest.len() + 1;
            let err = |rest: &str, message: &str| LinkMapError {
                line: line_no,
                column: col(rest),
                message: message.to_string(),
            };
            let (rest, _) = take_while::<_, _, nom::error::Error<&str>>(char::is_whitespace)
                .parse(line)
                .expect("take_while cannot fail");
            if rest.is_empty() || rest.starts_with("//") || rest.starts_with('#') {
                continue;
            }
            let (after_kind, kind) = token(rest).map_err(|_| err(rest, "expected an entry kind"))?;
            let field = |i: &'_ str, what: &str| -> Result<(String, String), LinkMapError> {
                let (i, _) =
                    space1::<_, nom::error::Error<&str>>(i).map_err(|_| err(i, &format!("expected {what}")))?;
                let (i, t) = token(i).map_err(|_| err(i, &format!("expected {what}")))?;
                Ok((i.to_string(), t.to_string()))
            };
            let addr = |i: &'_ str, what: &str| -> Result<(String, u32), LinkMapError> {
                let (i, _) =
                    space1::<_, nom::error::Error<&str>>(i).map_err(|_| err(i, &format!("expected {what}")))?;
                let (i, v) = number(i).map_err(|_| err(i, &format!("expected {what} (a decimal address)")))?;
                Ok((i.to_string(), v))
            };
            let end = |i: &str| -> Result<(), LinkMapError> {
                if i.trim().is_empty() {
                    Ok(())
                } else {
                    Err(err(i.trim_start(), "unexpected text after the entry"))
                }
            };
            match kind {
                "bytecode" => {
                    let (r, m) = field(after_kind, "a method")?;
                    let (r, a) = addr(&line[line.len() - r.len()..], "the method's address")?;
                    end(&line[line.len() - r.len()..])?;
                    map.methods.push((normalize(&m), a));
                }
                "class" => {
                    let (r, c) = field(after_kind, "a class")?;
                    let (r, mtab) = addr(&line[line.len() - r.len()..], "the method-table address")?;
                    let (r, cp) = addr(&line[line.len() - r.len()..], "the constant-pool address")?;
                    end(&line[line.len() - r.len()..])?;
                    map.classes.push((c.replace('/', "."), mtab, cp));
                }
                "static" => {
                    let (r, f) = field(after_kind, "a field")?;
                    let (r, a) = addr(&line[line.len() - r.len()..], "the field's address")?;
                    end(&line[line.len() - r.len()..])?;
                    map.statics.push((f, a));
                }
                "-mtab" => {
                    let (r, m) = field(after_kind, "a method")?;
                    let (r, a) = addr(&line[line.len() - r.len()..], "the method structure's address")?;
                    end(&line[line.len() - r.len()..])?;
                    map.method_structs.push((normalize(&m), a));
                }
                _ => map.unknown.push(line_no),
            }
        }
        Ok(map)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn parses_entries_and_names_bad_lines() {
        let m = LinkMap::parse(
            "// link map\nclass jbe/kfl/Mast 1200 1300\nbytecode jbe/kfl/Mast.loop()V 512\nstatic jbe.kfl.Mast.x 90\nfuture 1 2 3\n",
        )
        .unwrap();
        assert_eq!(m.classes, vec![("jbe.kfl.Mast".into(), 1200, 1300)]);
        assert_eq!(m.methods, vec![("jbe.kfl.Mast.loop()V".into(), 512)]);
        assert_eq!(m.statics, vec![("jbe.kfl.Mast.x".into(), 90)]);
        assert_eq!(m.unknown, vec![5]);
        let e = |t: &str| LinkMap::parse(t).unwrap_err().to_string();
        assert_eq!(
            e("bytecode a.B.m()V x12"),
            "1:19: expected the method's address (a decimal address)"
        );
        assert_eq!(e("class a.B 12"), "1:13: expected the constant-pool address");
        assert_eq!(e("static a.B.f 12 junk"), "1:17: unexpected text after the entry");
    }

    proptest! {
        #[test]
        fn never_panics(text in "\\PC{0,120}") {
            let _ = LinkMap::parse(&text);
        }
    }
}
