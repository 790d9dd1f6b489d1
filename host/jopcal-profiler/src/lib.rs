//! What jopcal's two host profilers share, and the faster of them.
//!
//! Owns: the calling-context tree both grow ([`tree`]; the single-step
//! JVMTI agent, crate `jopcal-agent`, grows it one bytecode at a time and
//! is the oracle); and the instrumenting profiler: its Java half
//! ([`JAVA_SOURCES`], a `-javaagent` that rewrites every class with ASM as
//! it loads) and the reading of what it writes into the same profile
//! ([`instrumented`]). Profiles are `jopcal_profile::Profile` in the
//! versioned `.jopprof` format.

pub mod instrumented;
pub mod tree;

/// The instrumenting profiler's Java sources (path under the source root,
/// text): the run-time the rewritten classes call (`Rt`, `TS`, `Node`, on
/// the boot class path) and the agent that rewrites them (`Agent`,
/// `ClassBytes`, compiled against ASM).
pub const JAVA_SOURCES: [(&str, &str); 5] = [
    ("jopcal/prof/Rt.java", include_str!("../java/jopcal/prof/Rt.java")),
    ("jopcal/prof/TS.java", include_str!("../java/jopcal/prof/TS.java")),
    ("jopcal/prof/Node.java", include_str!("../java/jopcal/prof/Node.java")),
    ("jopcal/prof/Agent.java", include_str!("../java/jopcal/prof/Agent.java")),
    (
        "jopcal/prof/ClassBytes.java",
        include_str!("../java/jopcal/prof/ClassBytes.java"),
    ),
];

/// How many of [`JAVA_SOURCES`] (the first ones) are the run-time, which the
/// rewritten classes reach on the boot class path.
pub const JAVA_RUNTIME_SOURCES: usize = 3;
