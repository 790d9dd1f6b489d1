//! The `.jop` image: 32-bit words written as decimal numbers separated by
//! commas and white space, with `//` line comments and `/* */` comments
//! anywhere. Word 0 is the image's length in words; word 1 the address of the
//! special-pointer block. Parsed with `nom`; errors name line and column.

use nom::branch::alt;
use nom::bytes::complete::{take_until, take_while, take_while1};
use nom::character::complete::char;
use nom::combinator::{opt, recognize};
use nom::{IResult, Parser};
use std::path::Path;

/// A parsed, length-checked image.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JopImage {
    pub words: Vec<u32>,
}

/// Why an image was rejected; line and column are 1-based.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{line}:{column}: {message}")]
pub struct ImageError {
    pub line: usize,
    pub column: usize,
    pub message: String,
}

/// Word 1 of a class bundle of jopcal's (which the virtual board runs
/// instead of a JOP linker's image): no special pointers to check.
pub const BUNDLE_MAGIC: u32 = 0x4A43_4231;

/// Why the words of an image are not a JOP image a processor can boot.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("word {word}: {message}")]
pub struct LayoutError {
    pub word: usize,
    pub message: String,
}

/// Skips white space, commas and comments. Fails on an unterminated `/*`.
fn separators(mut i: &str) -> Result<&str, &str> {
    loop {
        let (rest, _) = take_while::<_, _, nom::error::Error<&str>>(|c: char| c.is_whitespace() || c == ',')
            .parse(i)
            .expect("take_while cannot fail");
        i = rest;
        if let Some(after) = i.strip_prefix("//") {
            i = after.find('\n').map_or("", |n| &after[n..]);
        } else if i.starts_with("/*") {
            let r: IResult<&str, &str> = take_until("*/").parse(&i[2..]);
            match r {
                Ok((rest, _)) => i = &rest[2..],
                Err(_) => return Err(i),
            }
        } else {
            return Ok(i);
        }
    }
}

fn number(i: &str) -> IResult<&str, &str> {
    recognize((
        opt(alt((char('-'), char('+')))),
        take_while1(|c: char| c.is_ascii_digit()),
    ))
    .parse(i)
}

/// Line and column (1-based; the column in bytes) of byte offset `at` in `text`.
fn position(text: &str, at: usize) -> (usize, usize) {
    line_col::LineColLookup::new(text).get(at.min(text.len()))
}

impl JopImage {
    /// Parses image text. `max_words` rejects an image larger than the target's memory.
    pub fn parse(text: &str, max_words: Option<usize>) -> Result<JopImage, ImageError> {
        let err = |rest: &str, message: String| {
            let (line, column) = position(text, text.len() - rest.len());
            ImageError { line, column, message }
        };
        let mut words = Vec::new();
        let mut first_at = text;
        let mut i = text;
        loop {
            i = separators(i).map_err(|at| err(at, "unterminated /* comment".into()))?;
            if i.is_empty() {
                break;
            }
            let (rest, digits) = number(i).map_err(|_| {
                err(
                    i,
                    format!(
                        "expected a number, found '{}'",
                        i.chars()
                            .next()
                            .map(|c| c.escape_default().to_string())
                            .unwrap_or_default()
                    ),
                )
            })?;
            if rest.starts_with(|c: char| !(c.is_whitespace() || c == ',' || c == '/')) {
                return Err(err(
                    rest,
                    format!("unexpected '{}' after a number", rest.chars().next().unwrap_or(' ')),
                ));
            }
            let value: i64 = digits
                .parse()
                .map_err(|_| err(i, format!("{digits} does not fit in 32 bits")))?;
            if !(i64::from(i32::MIN)..=i64::from(u32::MAX)).contains(&value) {
                return Err(err(i, format!("{digits} does not fit in 32 bits")));
            }
            if words.is_empty() {
                first_at = i;
            }
            words.push(value as u32);
            i = rest;
        }
        let Some(&length) = words.first() else {
            return Err(err(i, "the image holds no words".into()));
        };
        if length as usize != words.len() {
            return Err(err(
                first_at,
                format!("word 0 says the image has {length} words, but it has {}", words.len()),
            ));
        }
        if let Some(max) = max_words.filter(|m| words.len() > *m) {
            return Err(err(
                first_at,
                format!("the image has {} words, more than the target's {max}", words.len()),
            ));
        }
        Ok(JopImage { words })
    }

    /// Reads and parses a file; errors read `path:line:column: message`.
    pub fn load(path: &Path, max_words: Option<usize>) -> Result<JopImage, crate::LoadError> {
        use crate::LoadError;
        let text = std::fs::read(path).map_err(|source| LoadError::Read {
            path: path.to_path_buf(),
            source,
        })?;
        let text = String::from_utf8(text).map_err(|e| LoadError::NotText {
            path: path.to_path_buf(),
            byte: e.utf8_error().valid_up_to(),
        })?;
        JopImage::parse(&text, max_words).map_err(|source| LoadError::Parse {
            path: path.to_path_buf(),
            source,
        })
    }

    /// Checks what the processor reads before it runs anything: the special
    /// pointers (word 1) inside the image, the boot and main methods'
    /// structures and code inside it, the runtime's jump table and helper
    /// pointers inside it. A class bundle passes unchecked.
    pub fn check_layout(&self) -> Result<(), LayoutError> {
        let w = &self.words;
        let len = w.len();
        if w.get(1) == Some(&BUNDLE_MAGIC) {
            return Ok(());
        }
        let bad = |word: usize, message: String| Err(LayoutError { word, message });
        let Some(&special) = w.get(1) else {
            return bad(
                0,
                "the image holds no special pointers (a JOP image has at least 8 words)".into(),
            );
        };
        let special = special as usize;
        if special < 2 || special + 6 > len {
            return bad(
                1,
                format!("the special pointers at word {special} lie outside the image of {len} words"),
            );
        }
        for (k, what) in [(1, "the runtime's jump table"), (2, "the runtime's helper")] {
            let at = w[special + k] as usize;
            if at >= len {
                return bad(
                    special + k,
                    format!("{what} at word {at} lies outside the image of {len} words"),
                );
            }
        }
        for (k, what) in [(0, "boot"), (3, "main")] {
            let s = w[special + k] as usize;
            if s < 2 || s + 2 > len {
                return bad(
                    special + k,
                    format!("the {what} method's structure at word {s} lies outside the image of {len} words"),
                );
            }
            let (start, words) = ((w[s] >> 10) as usize, (w[s] & 0x3ff) as usize);
            if start < 2 || words == 0 || start + words > len {
                return bad(
                    s,
                    format!(
                        "the {what} method's code at words {start}..{} is not inside the image of {len} words",
                        start + words
                    ),
                );
            }
        }
        Ok(())
    }

    /// [`JopImage::load`], then [`JopImage::check_layout`]: for what goes to
    /// a processor.
    pub fn load_checked(path: &Path, max_words: Option<usize>) -> Result<JopImage, crate::LoadError> {
        let image = JopImage::load(path, max_words)?;
        image.check_layout().map_err(|source| crate::LoadError::Layout {
            path: path.to_path_buf(),
            source,
        })?;
        Ok(image)
    }

    /// The image as written: one word per line, word 0 first.
    pub fn to_text(&self) -> String {
        let mut s = String::new();
        for w in &self.words {
            s.push_str(&w.to_string());
            s.push_str(",\n");
        }
        s
    }

    /// XOR of all words, word 0 included (the handshake protocol's checksum).
    pub fn xor(&self) -> u32 {
        self.words.iter().fold(0, |a, w| a ^ w)
    }

    /// Builds an image from payload words, putting the length in front.
    pub fn from_payload(payload: &[u32]) -> JopImage {
        let mut words = Vec::with_capacity(payload.len() + 1);
        words.push(payload.len() as u32 + 1);
        words.extend_from_slice(payload);
        JopImage { words }
    }

    /// An image laid out as a JOP linker lays one out, around `payload`
    /// (board stand-ins and tests, whose programs read the payload): the
    /// payload from word 2, then a one-word method's structure and the
    /// special pointers, so that [`JopImage::check_layout`] passes.
    pub fn bootable(payload: &[u32]) -> JopImage {
        let mut words = vec![0, 0];
        words.extend_from_slice(payload);
        let code = 2u32;
        let structure = words.len() as u32;
        words.extend([code << 10 | 1, 0]);
        let special = words.len() as u32;
        words[1] = special;
        // boot, jump table, helper, main, statics, one CPU
        words.extend([structure, code, code, structure, code, 1]);
        words[0] = words.len() as u32;
        JopImage { words }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// A minimal bootable layout: code at word 2, the structure at 3,
    /// special pointers at 5.
    fn bootable() -> Vec<u32> {
        let mut w = vec![0, 5, 0xdead_beef, 2 << 10 | 1, 0, 3, 2, 2, 3, 0, 1];
        w[0] = w.len() as u32;
        w
    }

    #[test]
    fn layout_names_the_word_that_points_outside() {
        let check = |w: Vec<u32>| JopImage { words: w }.check_layout().map_err(|e| e.to_string());
        assert_eq!(check(bootable()), Ok(()));
        assert_eq!(check(JopImage::bootable(&[]).words), Ok(()));
        assert_eq!(check(JopImage::bootable(&[5; 300]).words), Ok(()));
        assert_eq!(
            check(vec![1]),
            Err("word 0: the image holds no special pointers (a JOP image has at least 8 words)".into())
        );
        let mut w = bootable();
        w[1] = 9;
        assert_eq!(
            check(w),
            Err("word 1: the special pointers at word 9 lie outside the image of 11 words".into())
        );
        let mut w = bootable();
        w[8] = 40;
        assert_eq!(
            check(w),
            Err("word 8: the main method's structure at word 40 lies outside the image of 11 words".into())
        );
        let mut w = bootable();
        w[3] = 9 << 10 | 4;
        assert_eq!(
            check(w),
            Err("word 3: the boot method's code at words 9..13 is not inside the image of 11 words".into())
        );
        let mut w = bootable();
        w[6] = 11;
        assert!(check(w).unwrap_err().starts_with("word 6: the runtime's jump table"));
        assert_eq!(check(vec![3, BUNDLE_MAGIC, 7]), Ok(()));
    }

    proptest! {
        #[test]
        fn layout_check_never_panics(words in proptest::collection::vec(any::<u32>(), 0..40)) {
            let _ = JopImage { words }.check_layout();
        }
    }

    #[test]
    fn parses_comments_and_separators() {
        let text = "// jop image\n5, 3, /* special */ 7,\n//12: Main.main()V\n-1 , 4294967295\n";
        let img = JopImage::parse(text, None).unwrap();
        assert_eq!(img.words, vec![5, 3, 7, u32::MAX, u32::MAX]);
        assert_eq!(img.xor(), 5 ^ 3 ^ 7);
        assert_eq!(JopImage::parse(&img.to_text(), None).unwrap(), img);
    }

    #[test]
    fn errors_name_line_and_column() {
        let e = |t: &str| JopImage::parse(t, None).unwrap_err().to_string();
        assert_eq!(e("3, 1,\n  2x"), "2:4: unexpected 'x' after a number");
        assert_eq!(e("2,\n 7,\n 9"), "1:1: word 0 says the image has 2 words, but it has 3");
        assert_eq!(e("2, 1 /* open"), "1:6: unterminated /* comment");
        assert_eq!(e("// nothing\n"), "2:1: the image holds no words");
        assert_eq!(e("2, 99999999999"), "1:4: 99999999999 does not fit in 32 bits");
        assert_eq!(e("2, ;"), "1:4: expected a number, found ';'");
        assert_eq!(
            JopImage::parse("3,1,2", Some(2)).unwrap_err().to_string(),
            "1:1: the image has 3 words, more than the target's 2"
        );
    }

    proptest! {
        #[test]
        fn never_panics(text in "\\PC{0,200}") {
            let _ = JopImage::parse(&text, None);
        }

        #[test]
        fn round_trips(payload in proptest::collection::vec(any::<u32>(), 0..200)) {
            let img = JopImage::from_payload(&payload);
            prop_assert_eq!(JopImage::parse(&img.to_text(), None).unwrap(), img);
        }
    }
}
