//! Host profile against the JOP image: the methods that executed in the
//! region on the host but are not in the image (the host JDK's library code
//! JOP's library does not have, or has under other names), and those whose
//! size differs — the main error sources of cross-profiling.

use crate::sizes::MethodSizes;
use jopcal_profile::Profile;
use jopcal_timing::cache::words_of;

/// One method's disagreement.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Disagreement {
    /// Executed on the host, absent from the image: `(method, bytecodes it ran)`.
    NotInImage(String, u64),
    /// In both, with different sizes: `(method, host words, image words)`.
    Size(String, u32, u32),
}

/// Compares the methods `profile` executed inside its region with `sizes`.
pub fn compare(profile: &Profile, sizes: &MethodSizes) -> Vec<Disagreement> {
    let mut ran = vec![0u64; profile.methods.len()];
    let mut entered = vec![false; profile.methods.len()];
    for n in &profile.nodes {
        ran[n.method as usize] += n.bytecodes();
        entered[n.method as usize] |= n.calls > 0;
    }
    let mut out = Vec::new();
    for (i, m) in profile.methods.iter().enumerate() {
        if !entered[i] && ran[i] == 0 {
            continue;
        }
        let q = m.qualified();
        match sizes.get(&q) {
            None => out.push(Disagreement::NotInImage(q, ran[i])),
            Some(&w) if w != words_of(m.bytecode_len) && !m.native => {
                out.push(Disagreement::Size(q, words_of(m.bytecode_len), w))
            }
            Some(_) => {}
        }
    }
    out.sort_by(|a, b| match (a, b) {
        (Disagreement::NotInImage(_, x), Disagreement::NotInImage(_, y)) => y.cmp(x),
        (Disagreement::NotInImage(..), _) => std::cmp::Ordering::Less,
        (_, Disagreement::NotInImage(..)) => std::cmp::Ordering::Greater,
        _ => std::cmp::Ordering::Equal,
    });
    out
}
