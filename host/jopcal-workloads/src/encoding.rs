//! The character encoding of a suite's Java sources. The built-in suite is
//! UTF-8; a JOP tree's sources are ISO-8859-1 (its Makefile compiles with
//! `-encoding Latin1`), and they must be read, copied and compiled as such.

use crate::error::UnknownEncoding;
use std::fmt;
use std::str::FromStr;

/// An encoding jopcal can read, write and hand to javac.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum SourceEncoding {
    #[default]
    Utf8,
    /// ISO-8859-1: every byte is the character of the same number.
    Latin1,
}

impl SourceEncoding {
    /// The name javac's `-encoding` takes.
    pub fn javac_name(self) -> &'static str {
        match self {
            SourceEncoding::Utf8 => "UTF-8",
            SourceEncoding::Latin1 => "ISO-8859-1",
        }
    }

    /// `bytes` as text; UTF-8 that is not valid keeps its bad bytes as U+FFFD.
    pub fn decode(self, bytes: &[u8]) -> String {
        match self {
            SourceEncoding::Utf8 => String::from_utf8_lossy(bytes).into_owned(),
            SourceEncoding::Latin1 => bytes.iter().map(|&b| char::from(b)).collect(),
        }
    }

    /// `text` as bytes; in Latin-1 a character above U+00FF becomes `?`.
    pub fn encode(self, text: &str) -> Vec<u8> {
        match self {
            SourceEncoding::Utf8 => text.as_bytes().to_vec(),
            SourceEncoding::Latin1 => text
                .chars()
                .map(|c| u8::try_from(u32::from(c)).unwrap_or(b'?'))
                .collect(),
        }
    }
}

impl FromStr for SourceEncoding {
    type Err = UnknownEncoding;

    /// Java's names and aliases of the two encodings, in any case.
    fn from_str(s: &str) -> Result<Self, UnknownEncoding> {
        let key = s.trim().to_ascii_lowercase().replace(['-', '_'], "");
        match key.as_str() {
            "utf8" => Ok(SourceEncoding::Utf8),
            "iso88591" | "latin1" | "l1" | "iso8859" | "cp819" | "iso885911987" => Ok(SourceEncoding::Latin1),
            _ => Err(UnknownEncoding(s.to_string())),
        }
    }
}

impl fmt::Display for SourceEncoding {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.javac_name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn names_and_aliases() {
        for n in ["UTF-8", "utf8", "UTF_8"] {
            assert_eq!(n.parse(), Ok(SourceEncoding::Utf8));
        }
        for n in ["ISO-8859-1", "Latin1", "latin-1", "ISO8859_1"] {
            assert_eq!(n.parse(), Ok(SourceEncoding::Latin1));
        }
        assert!("Cp1252"
            .parse::<SourceEncoding>()
            .unwrap_err()
            .to_string()
            .contains("`Cp1252`"));
    }

    #[test]
    fn latin1_reads_every_byte() {
        // 0xF6 is ö in ISO-8859-1 and not UTF-8 on its own.
        assert_eq!(SourceEncoding::Latin1.decode(b"K\xf6rper"), "Körper");
        assert_eq!(SourceEncoding::Latin1.encode("Körper"), b"K\xf6rper");
    }

    proptest! {
        #[test]
        fn latin1_round_trips_any_bytes(bytes in proptest::collection::vec(any::<u8>(), 0..200)) {
            let e = SourceEncoding::Latin1;
            prop_assert_eq!(e.encode(&e.decode(&bytes)), bytes);
        }
    }
}
