//! The payload the tool downloads into the virtual board: a *class bundle*,
//! carried in the 32-bit words of a `.jop`-style image so that both download
//! protocols move it unchanged.
//!
//! ```text
//! word 0        total length in words (as in every .jop image)
//! word 1        magic 0x4A43_4231 ("JCB1")
//! word 2        byte length of the main class name, then the name (UTF-8),
//!               packed 4 bytes per word, big-endian, zero-padded
//! next word     number of class files; then per class file its byte length
//!               and its bytes, packed the same way
//! ```
//! Nothing may follow the last class file.

use crate::error::BundleError;
use jopcal_link::JopImage;

pub const MAGIC: u32 = jopcal_link::image::BUNDLE_MAGIC;

/// Class files and the class whose `main` runs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Bundle {
    /// Internal name, e.g. `jopcal/suite/Sieve`.
    pub main_class: String,
    pub classes: Vec<Vec<u8>>,
}

fn push_bytes(words: &mut Vec<u32>, bytes: &[u8]) {
    words.push(bytes.len() as u32);
    for chunk in bytes.chunks(4) {
        let mut w = [0u8; 4];
        w[..chunk.len()].copy_from_slice(chunk);
        words.push(u32::from_be_bytes(w));
    }
}

fn take_bytes(words: &[u32], at: &mut usize, what: &str) -> Result<Vec<u8>, BundleError> {
    let len_at = *at;
    let len = *words.get(*at).ok_or_else(|| BundleError::Truncated {
        at: len_at,
        what: format!("the length of {what}"),
    })? as usize;
    *at += 1;
    let n = len.div_ceil(4);
    if words.len() - *at < n {
        return Err(BundleError::TooLong {
            at: len_at,
            what: what.to_string(),
            len,
        });
    }
    let mut out = Vec::with_capacity(n * 4);
    for w in &words[*at..*at + n] {
        out.extend_from_slice(&w.to_be_bytes());
    }
    out.truncate(len);
    *at += n;
    Ok(out)
}

impl Bundle {
    pub fn to_image(&self) -> JopImage {
        let mut payload = vec![MAGIC];
        push_bytes(&mut payload, self.main_class.as_bytes());
        payload.push(self.classes.len() as u32);
        for c in &self.classes {
            push_bytes(&mut payload, c);
        }
        JopImage::from_payload(&payload)
    }

    /// Whether `image` is a class bundle (else: a JOP tree's linked image).
    pub fn is_bundle(image: &JopImage) -> bool {
        image.words.get(1) == Some(&MAGIC)
    }

    /// Reads a bundle; errors name the word where it went wrong.
    pub fn from_image(image: &JopImage) -> Result<Bundle, BundleError> {
        let w = &image.words;
        if !Self::is_bundle(image) {
            return Err(BundleError::NotABundle);
        }
        let mut at = 2;
        let name = take_bytes(w, &mut at, "the main class name")?;
        let main_class = String::from_utf8(name).map_err(|_| BundleError::MainClassNotUtf8)?;
        let count = *w.get(at).ok_or_else(|| BundleError::Truncated {
            at,
            what: "the class count".into(),
        })? as usize;
        at += 1;
        let mut classes = Vec::new();
        for k in 0..count {
            classes.push(take_bytes(w, &mut at, &format!("class file {k}"))?);
        }
        if at != w.len() {
            return Err(BundleError::Trailing {
                at,
                extra: w.len() - at,
            });
        }
        Ok(Bundle { main_class, classes })
    }

    /// The `.class` files under `dir` that `main_class` (dots or slashes) can
    /// reach through class references, sorted by class name.
    pub fn from_dir(dir: &std::path::Path, main_class: &str) -> Result<Bundle, BundleError> {
        let read = |path: &std::path::Path, why: &dyn std::fmt::Display| BundleError::Read {
            path: path.to_path_buf(),
            why: why.to_string(),
        };
        let mut files = Vec::new();
        for e in walkdir::WalkDir::new(dir) {
            let e = e.map_err(|e| read(dir, &e))?;
            if e.file_type().is_file() && e.path().extension().is_some_and(|x| x == "class") {
                files.push(e.into_path());
            }
        }
        files.sort();
        let main_class = main_class.replace('.', "/");
        let mut by_name = std::collections::BTreeMap::new();
        for p in &files {
            let bytes = std::fs::read(p).map_err(|e| read(p, &e))?;
            let cf = jopcal_classfile::parse_class(&bytes).map_err(|e| read(p, &e))?;
            by_name.insert(cf.this_class.clone(), (bytes, cf));
        }
        if !by_name.contains_key(&main_class) {
            return Err(BundleError::NoMainClass {
                dir: dir.to_path_buf(),
                main: main_class.replace('/', "."),
            });
        }
        // Only the classes the main class can reach through its constant pools.
        let mut keep = std::collections::BTreeSet::new();
        let mut todo = vec![main_class.clone()];
        while let Some(c) = todo.pop() {
            let Some((_, cf)) = by_name.get(&c) else { continue };
            if !keep.insert(c) {
                continue;
            }
            for k in &cf.constant_pool {
                if let jopcal_classfile::Constant::Class(n) = k {
                    if let Some(name) = jopcal_classfile::class::pool_utf8(&cf.constant_pool, *n) {
                        todo.push(
                            name.trim_start_matches('[')
                                .trim_start_matches('L')
                                .trim_end_matches(';')
                                .to_string(),
                        );
                    }
                }
            }
        }
        let classes = keep.iter().map(|c| by_name[c].0.clone()).collect();
        Ok(Bundle { main_class, classes })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #[test]
        fn round_trips(name in "[a-z/]{1,30}", classes in proptest::collection::vec(proptest::collection::vec(any::<u8>(), 0..50), 0..5)) {
            let b = Bundle { main_class: name, classes };
            prop_assert_eq!(Bundle::from_image(&b.to_image()).unwrap(), b);
        }

        #[test]
        fn never_panics(words in proptest::collection::vec(any::<u32>(), 0..40)) {
            let _ = Bundle::from_image(&JopImage { words });
        }
    }

    #[test]
    fn rejects_jop_images_and_truncation() {
        let img = JopImage::from_payload(&[7, 8]);
        let e = Bundle::from_image(&img).unwrap_err();
        assert_eq!(e, BundleError::NotABundle);
        assert!(e.to_string().starts_with("word 1: not a class bundle"));
        let mut b = Bundle {
            main_class: "a/B".into(),
            classes: vec![vec![1, 2, 3, 4, 5]],
        }
        .to_image();
        b.words.pop();
        b.words[0] -= 1;
        assert_eq!(
            Bundle::from_image(&b).unwrap_err().to_string(),
            "word 5: class file 0 has 5 bytes, more than the bundle holds"
        );
    }
}
