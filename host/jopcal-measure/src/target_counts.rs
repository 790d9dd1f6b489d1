//! Counts a target prints besides the cycles: JopSim's statistics.
//!
//! At the end of a run JopSim (the JOP tree's simulator) prints, per CPU,
//! the bytecodes it executed, the cycles they cost without the method
//! cache's load cycles, its memory loads and stores by kind, and the load
//! cycles of the method cache it simulates:
//!
//! ```text
//! 114238254 instructions, 866256146 cycles (no M$ cycles)
//!     MTAB    &    1146357 & 46.7\% &          0 &  0.0\% \\
//! total method cache load cycles: 2613232
//! Variable block cache 4 KB & 16 & 0.05 & 0.001 &  \\
//! ```
//!
//! These counts cover the whole of `main()` (JopSim resets them just before
//! it), not only the measured region; `jopcal explain` sets them beside the
//! estimate's. Several CPUs' statistics are summed.

use std::collections::BTreeMap;

/// What JopSim counted over a run.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
pub struct TargetCounts {
    /// Bytecodes executed, including those of the routines JOP implements in Java.
    pub instructions: u64,
    /// Their cycles, without the method cache's load cycles.
    pub cycles_without_cache: u64,
    /// Cycles the method cache's loads added.
    pub cache_load_cycles: u64,
    /// Memory words read, by JopSim's kind (`MTAB`, `CONST`, `HANDLE`, ...).
    pub loads: BTreeMap<String, u64>,
    /// Memory words written, by kind.
    pub stores: BTreeMap<String, u64>,
    /// How many CPUs' statistics were summed.
    pub cpus: u32,
}

/// A statistics line that cannot be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("line {line}: {message}")]
pub struct CountsError {
    pub line: usize,
    pub message: String,
}

/// A count in JopSim's statistics that is not a decimal number.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("`{0}` is not a count (expected decimal digits)")]
pub struct NotACount(pub String);

/// JopSim's statistics in `stdout`, or `None` when it printed none (another
/// target, or a run that ended before them).
pub fn parse_jopsim(stdout: &str) -> Result<Option<TargetCounts>, CountsError> {
    let mut c = TargetCounts::default();
    let mut seen = false;
    for (i, raw) in stdout.lines().enumerate() {
        let line = raw.trim();
        let err = |message: String| CountsError { line: i + 1, message };
        if let Some(rest) = line.strip_suffix("cycles (no M$ cycles)") {
            let (n, rest) = rest
                .split_once("instructions,")
                .ok_or_else(|| err(format!("`{line}`: expected `N instructions, M cycles (no M$ cycles)`")))?;
            c.instructions += number(n).map_err(|e| err(e.to_string()))?;
            c.cycles_without_cache += number(rest).map_err(|e| err(e.to_string()))?;
            c.cpus += 1;
            seen = true;
        } else if let Some(rest) = line.strip_prefix("total method cache load cycles:") {
            c.cache_load_cycles += number(rest).map_err(|e| err(e.to_string()))?;
            seen = true;
        } else if let Some((kind, load, store)) = memory_row(line).map_err(|e| err(e.to_string()))? {
            *c.loads.entry(kind.to_string()).or_default() += load;
            *c.stores.entry(kind.to_string()).or_default() += store;
        }
    }
    Ok(seen.then_some(c))
}

/// A decimal count, blanks around allowed.
fn number(s: &str) -> Result<u64, NotACount> {
    let t = s.trim();
    t.parse().map_err(|_| NotACount(t.to_string()))
}

/// A row of the memory table, `KIND & loads & pct & stores & pct \\`, where
/// KIND is an upper-case word (the `Sum` row and the header are not rows).
fn memory_row(line: &str) -> Result<Option<(&str, u64, u64)>, NotACount> {
    let mut cells = line.split('&').map(str::trim);
    let kind = cells.next().unwrap_or("");
    if kind.is_empty() || !kind.bytes().all(|b| b.is_ascii_uppercase()) {
        return Ok(None);
    }
    let rest: Vec<&str> = cells.collect();
    if rest.len() < 3 {
        return Ok(None);
    }
    Ok(Some((kind, number(rest[0])?, number(rest[2])?)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// The end of JopSim's output for Raytrace (jop-devel/jop), abridged.
    const RAYTRACE: &str =
        "JVM exit!\n\nCPU 0:\n\n114238254 instructions, 866256146 cycles (no M$ cycles)\nCPI: 7.58289\n\
\tType \t&       Load &        &      Store &        \\\\\n\
\tMTAB\t&    1146357 & 46.7\\% &          0 &  0.0\\% \\\\\n\
\tARRAY\t&      55949 &  2.2\\% &      17442 &  0.7\\% \\\\\n\
\t\\midrule\n\tSum\t&    2422564 &        &      27914 &        \\\\\n\
total method cache load cycles: 2613232\n\nVariable block cache 4 KB & 16 & 0.05 & 0.001 &  \\\\\n";

    #[test]
    fn reads_jopsims_statistics() {
        let c = parse_jopsim(RAYTRACE).unwrap().unwrap();
        assert_eq!(c.instructions, 114_238_254);
        assert_eq!(c.cycles_without_cache, 866_256_146);
        assert_eq!(c.cache_load_cycles, 2_613_232);
        assert_eq!(c.loads["MTAB"], 1_146_357);
        assert_eq!(c.stores["ARRAY"], 17_442);
        assert_eq!(c.loads.len(), 2, "{:?}", c.loads);
        assert_eq!(c.cpus, 1);
    }

    #[test]
    fn sums_cpus_and_is_none_without_statistics() {
        let two = format!("{RAYTRACE}{RAYTRACE}");
        let c = parse_jopsim(&two).unwrap().unwrap();
        assert_eq!((c.cpus, c.instructions), (2, 2 * 114_238_254));
        assert_eq!(parse_jopsim("@jopcal done\nJVM exit!\n").unwrap(), None);
    }

    #[test]
    fn a_garbled_count_names_its_line() {
        let e = parse_jopsim("x\n12x instructions, 5 cycles (no M$ cycles)\n").unwrap_err();
        assert_eq!(e.line, 2);
        assert!(e.to_string().contains("`12x` is not a count"), "{e}");
    }

    proptest! {
        #[test]
        fn never_panics(s in "\\PC{0,200}") {
            let _ = parse_jopsim(&s);
        }

        #[test]
        fn counts_round_trip(i in 0u64..u64::MAX / 4, y in 0u64..u64::MAX / 4, m in 0u64..1_000_000_000) {
            let text = format!("{i} instructions, {y} cycles (no M$ cycles)\ntotal method cache load cycles: {m}\n");
            let c = parse_jopsim(&text).unwrap().unwrap();
            prop_assert_eq!((c.instructions, c.cycles_without_cache, c.cache_load_cycles), (i, y, m));
        }
    }
}
