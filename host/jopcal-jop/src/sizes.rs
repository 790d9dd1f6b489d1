//! Method sizes as JOP's image holds them. Each class's method table has two
//! words per method: A = `codeStart << 10 | lengthInWords`, B = `cpAddress <<
//! 10 | locals << 5 | args`. A method's length is read from the entry whose A
//! names the method's address (from the link map) and whose B names its
//! class's constant pool: the method cache loads exactly that many words.

use crate::linkmap::LinkMap;
use jopcal_link::JopImage;
use std::collections::{BTreeMap, HashMap};

/// Method (`pkg.Class.name(desc)`) to its length in words on JOP.
pub type MethodSizes = BTreeMap<String, u32>;

/// The sizes of every linked method found in `image`, and the methods whose
/// entry could not be found (named in the result's second part).
pub fn method_sizes(image: &JopImage, map: &LinkMap) -> (MethodSizes, Vec<String>) {
    // Constant-pool address of each class, by class name.
    let cp_of: HashMap<&str, u32> = map.classes.iter().map(|(c, _, cp)| (c.as_str(), *cp)).collect();
    // Candidate entries: A words by code address.
    let mut entries: HashMap<u32, Vec<(u32, u32)>> = HashMap::new();
    let w = &image.words;
    for k in 0..w.len().saturating_sub(1) {
        let (a, b) = (w[k], w[k + 1]);
        let len = a & 0x3ff;
        if len > 0 && len <= 512 {
            entries.entry(a >> 10).or_default().push((len, b >> 10));
        }
    }
    let mut sizes = MethodSizes::new();
    let mut missing = Vec::new();
    for (method, addr) in &map.methods {
        let class = method
            .split('(')
            .next()
            .and_then(|s| s.rsplit_once('.'))
            .map(|(c, _)| c);
        let cp = class.and_then(|c| cp_of.get(c)).copied();
        let found = entries.get(addr).and_then(|cands| {
            cands
                .iter()
                .find(|(_, b_cp)| cp.is_none_or(|cp| cp == *b_cp))
                .map(|(len, _)| *len)
        });
        match found {
            Some(len) => {
                sizes.insert(method.clone(), len);
            }
            None => missing.push(method.clone()),
        }
    }
    (sizes, missing)
}

/// Makes `profile` carry JOP's method sizes: every method `sizes` knows gets
/// a bytecode length of exactly its words (the cache model counts words), so
/// every later estimate and fit sees the sizes JOP's method cache loads,
/// and JOP's runtime methods join its table ([`add_runtime_methods`]).
/// Returns how many of the profile's methods changed.
pub fn apply(profile: &mut jopcal_profile::Profile, sizes: &MethodSizes) -> usize {
    let mut changed = 0;
    for m in profile.methods.iter_mut().filter(|m| !m.native) {
        if let Some(&w) = sizes.get(&m.qualified()) {
            if jopcal_timing::cache::words_of(m.bytecode_len) != w {
                changed += 1;
            }
            m.bytecode_len = w * 4;
        }
    }
    add_runtime_methods(profile, sizes);
    changed
}

/// The package of JOP's runtime: the Java routines of the bytecodes JOP
/// implements in Java, and what they call.
pub const RUNTIME_PACKAGE: &str = "com.jopdesign.sys.";

/// Adds to `profile`'s method table every method of JOP's runtime
/// ([`RUNTIME_PACKAGE`]) that `sizes` knows and the profile lacks, at its
/// size in the image: the host never runs them, but a timing table's
/// `[routines]` name them, and the estimate replays them through the method
/// cache by those sizes. No context refers to them. Returns how many were added.
pub fn add_runtime_methods(profile: &mut jopcal_profile::Profile, sizes: &MethodSizes) -> usize {
    let known: std::collections::HashSet<String> = profile.methods.iter().map(|m| m.qualified()).collect();
    let mut added = 0;
    for (method, &words) in sizes.range(RUNTIME_PACKAGE.to_string()..) {
        if !method.starts_with(RUNTIME_PACKAGE) {
            break;
        }
        if known.contains(method) {
            continue;
        }
        let Some((class, name, descriptor)) = jopcal_profile::MethodInfo::split_qualified(method) else {
            continue;
        };
        profile.methods.push(jopcal_profile::MethodInfo {
            class,
            name: name.to_string(),
            descriptor: descriptor.to_string(),
            bytecode_len: words * 4,
            native: false,
            synchronized: false,
        });
        added += 1;
    }
    added
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_lengths_in_method_tables() {
        // Words: [len, special, code of m1 at 2..5, code of m2 at 5..7, mtab at 7: (A,B) x2]
        let mut words = vec![0u32; 11];
        words[7] = (2 << 10) | 3; // m1 at 2, 3 words
        words[8] = 40 << 10 | 1; // cp 40
        words[9] = (5 << 10) | 2; // m2 at 5, 2 words
        words[10] = 40 << 10 | 1;
        words[0] = words.len() as u32;
        let image = JopImage { words };
        let map =
            LinkMap::parse("class a.B 7 40\nbytecode a.B.m1()V 2\nbytecode a.B.m2(I)I 5\nbytecode a.B.gone()V 99\n")
                .unwrap();
        let (sizes, missing) = method_sizes(&image, &map);
        assert_eq!(sizes["a.B.m1()V"], 3);
        assert_eq!(sizes["a.B.m2(I)I"], 2);
        assert_eq!(missing, vec!["a.B.gone()V"]);
    }

    #[test]
    fn applied_sizes_replace_the_hosts() {
        let method = |name: &str, len: u32| jopcal_profile::MethodInfo {
            class: "a/B".into(),
            name: name.into(),
            descriptor: "()V".into(),
            bytecode_len: len,
            native: false,
            synchronized: false,
        };
        let mut p = jopcal_profile::Profile {
            methods: vec![method("m1", 9), method("m2", 8), method("other", 5)],
            ..Default::default()
        };
        let sizes = MethodSizes::from([("a.B.m1()V".to_string(), 5), ("a.B.m2()V".to_string(), 2)]);
        assert_eq!(apply(&mut p, &sizes), 1, "m1: 3 words on the host, 5 on JOP; m2 agrees");
        let lens: Vec<u32> = p.methods.iter().map(|m| m.bytecode_len).collect();
        assert_eq!(lens, [20, 8, 5]);
    }

    #[test]
    fn the_runtimes_methods_join_the_table_once() {
        let mut p = jopcal_profile::Profile::default();
        let sizes = MethodSizes::from([
            ("a.B.m()V".to_string(), 5),
            ("com.jopdesign.sys.GC.newObject(I)I".to_string(), 23),
            ("com.jopdesign.sys.JVM.f_new(I)I".to_string(), 4),
            ("java.lang.Object.<init>()V".to_string(), 1),
        ]);
        assert_eq!(add_runtime_methods(&mut p, &sizes), 2, "only the runtime's");
        let names: Vec<String> = p.methods.iter().map(|m| m.qualified()).collect();
        assert_eq!(
            names,
            ["com.jopdesign.sys.GC.newObject(I)I", "com.jopdesign.sys.JVM.f_new(I)I"]
        );
        assert_eq!(p.methods[1].class, "com/jopdesign/sys/JVM");
        assert_eq!(p.methods[0].bytecode_len, 23 * 4);
        assert_eq!(add_runtime_methods(&mut p, &sizes), 0, "already there");
    }
}
