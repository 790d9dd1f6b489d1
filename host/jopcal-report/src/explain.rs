//! Why an estimate and a measurement part: one benchmark's estimate taken
//! apart by opcode group, bytecodes JOP implements in Java, host library
//! methods and the method cache, set beside the counts the target printed
//! (JopSim's bytecodes, cycles without and with method-cache loads, memory
//! words by kind) where it printed them.
//!
//! [`explain`] is pure: it reads an estimate, the profile it came from, the
//! model that priced it and what was measured. [`Explanation::to_markdown`]
//! renders it for `jopcal explain` and `validate`'s `explain.md`.

use crate::number::thousands;
use jopcal_classfile::opcode::by_mnemonic;
use jopcal_measure::target_counts::TargetCounts;
use jopcal_profile::Profile;
use jopcal_timing::estimate::Estimate;
use jopcal_timing::model::Cost;
use jopcal_timing::TimingModel;
use std::collections::BTreeMap;
use std::fmt::Write as _;

/// One share of an estimate: how many executions (bytecodes or calls) and their cycles.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Part {
    pub name: String,
    pub count: u64,
    pub cycles: f64,
}

/// One quantity the estimate and the target both give.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Compared {
    pub what: String,
    pub estimate: f64,
    pub target: f64,
}

/// One method of a target's trace: its calls, its exclusive cycles, and its
/// method-cache loads where the target sees them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TracedMethod {
    /// As `pkg.Class.name(descriptor)`.
    pub name: String,
    pub calls: u64,
    pub cycles: u64,
    pub loads: Option<u64>,
}

/// One method in the estimate and in the target's trace (the virtual board's
/// per-method exclusive cycles of the whole run).
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct MethodCompared {
    pub method: String,
    pub calls_estimate: u64,
    pub calls_target: u64,
    pub cycles_estimate: f64,
    pub cycles_target: f64,
    /// Method-cache loads of the method: the estimate's replay (the region)
    /// and the target's (the whole run), where its trace has them.
    pub loads_estimate: u64,
    pub loads_target: Option<u64>,
}

/// One benchmark's estimate, taken apart.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Explanation {
    pub benchmark: String,
    pub model: String,
    pub cache: String,
    pub estimate: f64,
    /// The measurement in cycles, when there is one.
    pub measured: Option<f64>,
    /// By opcode group, largest first.
    pub groups: Vec<Part>,
    /// Bytecodes JOP implements in Java: executions and cycles as priced
    /// (dispatch plus the routine's parameter), largest first.
    pub java: Vec<Part>,
    /// Java-implemented bytecodes whose routine parameter is 0: only the
    /// dispatch is priced (the routine's own cycles are missing until calibrated).
    pub unpriced_routines: Vec<String>,
    /// Host library methods entered from the workload's own code: calls and
    /// cycles with everything they call, largest first. JOP runs its own
    /// library, whose code differs.
    pub library: Vec<Part>,
    pub cache_hits: u64,
    pub cache_misses: u64,
    /// Cycles the estimate's cache misses add.
    pub cache_load_cycles: f64,
    /// Estimate against the target's own counts (JopSim), when it printed them.
    pub against_target: Vec<Compared>,
    /// What the decomposition points at, in words, largest first.
    pub findings: Vec<String>,
    /// Per method against the target's trace, when it left one: largest
    /// difference first.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub methods: Vec<MethodCompared>,
}

/// The groups opcodes are reported in, by mnemonic (JOP's own bytecodes
/// and whole-priced methods, which the estimate names `jopsys_*` and
/// `method ...`, form a group of their own).
/// The estimate's entry of the characters printed on the serial line
/// (`jopcal_timing::estimate`: each at the model's `serial_char`).
fn serial_write_key() -> String {
    format!(
        "method {}.write(I)V",
        jopcal_profile::routed::SERIAL_LINE_CLASS.replace('/', ".")
    )
}

pub fn group(mnemonic: &str) -> &'static str {
    const BRANCH: &[&str] = &["goto", "goto_w", "jsr", "jsr_w", "ret", "tableswitch", "lookupswitch"];
    const OBJECT: &[&str] = &[
        "new",
        "newarray",
        "anewarray",
        "multianewarray",
        "checkcast",
        "instanceof",
        "athrow",
        "monitorenter",
        "monitorexit",
    ];
    const STACK: &[&str] = &[
        "pop", "pop2", "dup", "dup_x1", "dup_x2", "dup2", "dup2_x1", "dup2_x2", "swap", "nop",
    ];
    let m = mnemonic;
    if m == serial_write_key() {
        "printing: characters on the serial line"
    } else if m == jopcal_timing::estimate::ROUTINE_MISSES_KEY {
        "the method cache: JOP's runtime routines"
    } else if m.starts_with("jopsys_") || m.starts_with("method ") {
        "JOP's own bytecodes and whole-priced methods"
    } else if m.starts_with("invoke") || m.ends_with("return") {
        "invoke and return"
    } else if m.starts_with("if") || BRANCH.contains(&m) {
        "branches and switches"
    } else if OBJECT.contains(&m)
        || m == jopcal_timing::estimate::UNWIND_KEY
        || m == jopcal_timing::estimate::HANDLER_SEARCH_KEY
    {
        "objects, allocation and monitors"
    } else if matches!(m, "getfield" | "putfield" | "getstatic" | "putstatic") {
        "fields and statics"
    } else if m == "arraylength" || m.ends_with("aload") && m.len() == 6 || m.ends_with("astore") && m.len() == 7 {
        "array elements"
    } else if STACK.contains(&m) {
        "stack"
    } else if m.contains("load")
        || m.contains("store")
        || m.contains("const")
        || m.starts_with("ldc")
        || m == "bipush"
        || m == "sipush"
    {
        "locals and constants"
    } else if m.starts_with('f') || m.starts_with('d') || m.contains("2f") || m.contains("2d") {
        "float and double"
    } else if m.starts_with('l') || m == "i2l" {
        "long"
    } else {
        "int arithmetic"
    }
}

/// Memory words JopSim counts for one execution of a bytecode JOP runs in
/// microcode: (kind, loads, stores). Bytecodes implemented in Java count
/// through their routines, which the profile does not hold; long and double
/// fields read two words where this counts one (the profile has no field types).
fn memory_words(m: &str) -> &'static [(&'static str, u64, u64)] {
    match m {
        "invokestatic" | "invokespecial" => &[("CONST", 1, 0), ("MTAB", 2, 0)],
        "invokevirtual" => &[("CONST", 1, 0), ("MVB", 1, 0), ("MTAB", 2, 0)],
        "invokeinterface" => &[
            ("CONST", 1, 0),
            ("MVB", 1, 0),
            ("CLINFO", 1, 0),
            ("IFTAB", 1, 0),
            ("MTAB", 2, 0),
        ],
        "ireturn" | "lreturn" | "freturn" | "dreturn" | "areturn" | "return" => &[("MTAB", 1, 0)],
        "getfield" => &[("HANDLE", 1, 0), ("FIELD", 1, 0)],
        "putfield" => &[("HANDLE", 1, 0), ("FIELD", 0, 1)],
        "getstatic" => &[("STATIC", 1, 0)],
        "putstatic" => &[("STATIC", 0, 1)],
        "ldc" | "ldc_w" => &[("CONST", 1, 0)],
        "ldc2_w" => &[("CONST", 2, 0)],
        "iaload" | "baload" | "caload" | "saload" | "faload" | "aaload" => {
            &[("ALEN", 1, 0), ("HANDLE", 1, 0), ("ARRAY", 1, 0)]
        }
        "laload" | "daload" => &[("ALEN", 1, 0), ("HANDLE", 1, 0), ("ARRAY", 2, 0)],
        "iastore" | "bastore" | "castore" | "sastore" | "fastore" | "aastore" => {
            &[("ALEN", 1, 0), ("HANDLE", 1, 0), ("ARRAY", 0, 1)]
        }
        "lastore" | "dastore" => &[("ALEN", 1, 0), ("HANDLE", 1, 0), ("ARRAY", 0, 2)],
        "arraylength" => &[("ALEN", 1, 0)],
        _ => &[],
    }
}

/// The host library: classes the JVM brings, which JOP replaces with its own.
fn is_library(class: &str) -> bool {
    ["java/", "javax/", "jdk/", "sun/", "com/sun/"]
        .iter()
        .any(|p| class.starts_with(p))
}

/// Takes `e` (an estimate of `p` under `model`) apart, against `measured`
/// cycles and the target's `counts` where there are any.
pub fn explain(
    e: &Estimate,
    p: &Profile,
    model: &TimingModel,
    measured: Option<f64>,
    counts: Option<&TargetCounts>,
) -> Explanation {
    let mut groups: BTreeMap<&str, Part> = BTreeMap::new();
    let mut java = Vec::new();
    let mut unpriced = Vec::new();
    for (name, &(count, cycles)) in &e.per_opcode {
        let g = groups.entry(group(name)).or_insert_with(|| Part {
            name: group(name).to_string(),
            count: 0,
            cycles: 0.0,
        });
        g.count += count;
        g.cycles += cycles;
        if let Some(Cost::Java { routine, .. }) = by_mnemonic(name).and_then(|op| model.opcode(op)) {
            java.push(Part {
                name: name.clone(),
                count,
                cycles,
            });
            // Executions whose routine the profile ran are priced by its bytecodes.
            let by_routine = e.routine_entries.get(name).copied().unwrap_or(0);
            if model.params().get(routine).copied().unwrap_or(0.0) == 0.0 && count > by_routine {
                unpriced.push(name.clone());
            }
        }
    }
    let mut groups: Vec<Part> = groups.into_values().collect();
    if e.collections.count > 0.0 {
        groups.push(Part {
            name: "the garbage collector".into(),
            count: e.collections.count as u64,
            cycles: e.collector_cycles,
        });
    }
    largest_first(&mut groups);
    largest_first(&mut java);
    let library = library_entries(e, p);
    let against_target = counts.map(|c| compare(e, c, model)).unwrap_or_default();
    let mut x = Explanation {
        benchmark: e.benchmark.clone(),
        model: e.model.clone(),
        cache: e.cache.to_string(),
        estimate: e.cycles,
        measured,
        groups,
        java,
        unpriced_routines: unpriced,
        library,
        cache_hits: e.cache_hits,
        cache_misses: e.cache_misses,
        cache_load_cycles: e.cache_load_cycles,
        against_target,
        findings: Vec::new(),
        methods: Vec::new(),
    };
    x.findings = findings(&x, e, counts);
    x.findings.extend(collector_finding(e, p, model));
    x.findings.extend(exceptions_finding(e));
    x
}

/// What the region's exceptions cost: the athrow routine's entries, and
/// where the table prices them, the frames it left and the exception-table
/// entries it read (with its class tests).
fn exceptions_finding(e: &Estimate) -> Option<String> {
    use jopcal_timing::estimate::{HANDLER_SEARCH_KEY, UNWIND_KEY};
    let (throws, thrown) = e.per_opcode.get("athrow").copied()?;
    let mut parts = vec![format!("the athrow routine {}", thousands(thrown))];
    let mut all = thrown;
    if let Some((left, c)) = e.per_opcode.get(UNWIND_KEY) {
        parts.push(format!("{} frames left {}", thousands(*left as f64), thousands(*c)));
        all += c;
    }
    if let Some((entries, c)) = e.per_opcode.get(HANDLER_SEARCH_KEY) {
        parts.push(format!(
            "{} exception-table entries read with their class tests {} (`{HANDLER_SEARCH_KEY}`)",
            thousands(*entries as f64),
            thousands(*c)
        ));
        all += c;
    }
    Some(format!(
        "{} throws cost {} cycles ({:.1}% of the estimate): {}",
        thousands(throws as f64),
        thousands(all),
        100.0 * all / e.cycles.max(1.0),
        parts.join(", ")
    ))
}

/// What the region's allocations make JOP's collector do, in words: the
/// collections the estimate has, or why it has none where it might.
fn collector_finding(e: &Estimate, p: &Profile, model: &TimingModel) -> Option<String> {
    let (objects, words) = jopcal_profile::allocation_totals(&p.allocations);
    if objects == 0 {
        return None;
    }
    let made = format!(
        "the region allocates {} objects and arrays of {} words in JOP's heap",
        thousands(objects as f64),
        thousands(words as f64)
    );
    let Some(h) = &p.heap_start else {
        return Some(format!(
            "{made}: the target reported no heap for the region's start (the virtual board does), so whether JOP's collector runs in it is not estimated"
        ));
    };
    let free = format!(
        "the {} words and {} handles free when it began",
        thousands(f64::from(h.free_words)),
        thousands(f64::from(h.free_handles))
    );
    let runs = e.collections.count;
    Some(if runs > 0.0 && e.collector_cycles == 0.0 {
        format!("{made}: from {free}, JOP's collector runs {runs} times in it, which this table prices at 0 (gc_collection, gc_handle: calibrate, or a calibrated table)")
    } else if runs > 0.0 {
        format!(
            "{made}: from {free}, JOP's collector runs {runs} times in it, {} cycles ({:.1}% of the estimate; gc_collection each, gc_handle for each of the {} handles in use then)",
            thousands(e.collector_cycles),
            100.0 * e.collector_cycles / e.cycles.max(1.0),
            thousands(e.collections.handles_swept)
        )
    } else if model.params().contains_key(jopcal_timing::collector::GC_COLLECTION) {
        format!("{made}: {free} hold them: JOP's collector does not run in it")
    } else {
        format!("{made}: this table has no price for JOP's collector (gc_collection)")
    })
}

fn largest_first(parts: &mut [Part]) {
    parts.sort_by(|a, b| b.cycles.total_cmp(&a.cycles).then_with(|| a.name.cmp(&b.name)));
}

/// Library methods entered from non-library code, with the cycles of
/// everything under them, summed by method.
fn library_entries(e: &Estimate, p: &Profile) -> Vec<Part> {
    let n = p.nodes.len().min(e.per_node.len());
    // Inclusive cycles: a context's children come after it in the profile.
    let mut inclusive: Vec<f64> = e.per_node[..n].to_vec();
    for i in (1..n).rev() {
        if let Some(parent) = p.nodes[i].parent.map(|q| q as usize).filter(|&q| q < i) {
            inclusive[parent] += inclusive[i];
        }
    }
    let lib = |i: usize| {
        p.methods
            .get(p.nodes[i].method as usize)
            .is_some_and(|m| is_library(&m.class))
    };
    let mut by_method: BTreeMap<String, Part> = BTreeMap::new();
    for (i, &cycles) in inclusive.iter().enumerate() {
        let parent_is_lib = p.nodes[i].parent.is_some_and(|q| (q as usize) < n && lib(q as usize));
        if lib(i) && !parent_is_lib && cycles > 0.0 {
            let m = &p.methods[p.nodes[i].method as usize];
            let name = format!("{}.{}", m.class.replace('/', "."), m.name);
            let part = by_method.entry(name.clone()).or_insert(Part {
                name,
                count: 0,
                cycles: 0.0,
            });
            part.count += p.nodes[i].calls;
            part.cycles += cycles;
        }
    }
    let mut v: Vec<Part> = by_method.into_values().collect();
    largest_first(&mut v);
    v
}

/// The estimate's bytecodes, cycles and memory words beside JopSim's.
fn compare(e: &Estimate, c: &TargetCounts, model: &TimingModel) -> Vec<Compared> {
    let mut rows = vec![
        Compared {
            what: "bytecodes executed".into(),
            estimate: e.bytecodes as f64,
            target: c.instructions as f64,
        },
        Compared {
            what: "cycles without method-cache loads".into(),
            estimate: e.cycles - e.cache_load_cycles,
            target: c.cycles_without_cache as f64,
        },
        Compared {
            what: "method-cache load cycles".into(),
            estimate: e.cache_load_cycles,
            target: c.cache_load_cycles as f64,
        },
    ];
    let mut loads: BTreeMap<&str, f64> = BTreeMap::new();
    let mut stores: BTreeMap<&str, f64> = BTreeMap::new();
    for (name, &(count, _)) in &e.per_opcode {
        let java = by_mnemonic(name).is_some_and(|op| model.is_java(op));
        if java {
            continue;
        }
        for &(kind, l, s) in memory_words(name) {
            *loads.entry(kind).or_default() += (l * count) as f64;
            *stores.entry(kind).or_default() += (s * count) as f64;
        }
    }
    for (side, est, target) in [("read", &loads, &c.loads), ("written", &stores, &c.stores)] {
        for (kind, &n) in target {
            let mine = est.get(kind.as_str()).copied().unwrap_or(0.0);
            if n > 0 || mine > 0.0 {
                rows.push(Compared {
                    what: format!("memory words {side}: {kind}"),
                    estimate: mine,
                    target: n as f64,
                });
            }
        }
    }
    rows
}

/// What the parts say about the difference, in words.
fn findings(x: &Explanation, e: &Estimate, counts: Option<&TargetCounts>) -> Vec<String> {
    let mut f = Vec::new();
    if let Some(m) = x.measured {
        f.push(format!(
            "the estimate is {} cycles ({}) {} the measurement",
            thousands((x.estimate - m).abs()),
            percent(x.estimate, m),
            if x.estimate > m { "above" } else { "below" }
        ));
    }
    if let Some(c) = counts {
        let extra = c.instructions as f64 - e.bytecodes as f64;
        if c.instructions > 0 && extra.abs() > 0.001 * c.instructions as f64 {
            let cpi = c.cycles_without_cache as f64 / c.instructions as f64;
            f.push(format!(
                "the target executed {} {} bytecodes than the estimate prices ({} against {}); at the target's {:.2} cycles per bytecode that is about {} cycles. Its counts cover all of main(), the estimate the measured region; bytecodes of routines JOP implements in Java and of JOP's runtime are counted by the target alone",
                thousands(extra.abs()),
                if extra > 0.0 { "more" } else { "fewer" },
                thousands(c.instructions as f64),
                thousands(e.bytecodes as f64),
                cpi,
                thousands(extra.abs() * cpi)
            ));
        }
        let d = e.cache_load_cycles - c.cache_load_cycles as f64;
        if d.abs() > 0.001 * x.estimate.max(1.0) {
            f.push(format!(
                "method-cache loads: the estimate has {} cycles, the target {} ({} hits, {} misses in the estimate's {} cache)",
                thousands(e.cache_load_cycles),
                thousands(c.cache_load_cycles as f64),
                thousands(e.cache_hits as f64),
                thousands(e.cache_misses as f64),
                x.cache
            ));
        }
    }
    if let Some(&(chars, cycles)) = e.per_opcode.get(&serial_write_key()).filter(|(_, c)| *c > 0.0) {
        f.push(format!(
            "{} characters printed in the timed region take {} cycles ({:.1}% of the estimate) on the serial line, {} each on average (the table's serial_char, the first ones of the region free: the UART's FIFO takes them): JOP waits for its UART",
            thousands(chars as f64),
            thousands(cycles),
            100.0 * cycles / x.estimate.max(1.0),
            thousands(cycles / chars.max(1) as f64)
        ));
    }
    if !x.unpriced_routines.is_empty() {
        let n: u64 = x
            .java
            .iter()
            .filter(|j| x.unpriced_routines.contains(&j.name))
            .map(|j| j.count - e.routine_entries.get(&j.name).copied().unwrap_or(0).min(j.count))
            .sum();
        f.push(format!(
            "{} executions of {} are priced at their dispatch alone: JOP runs a Java routine for each, whose cycles this model does not have (calibrate, or price them with a model that does)",
            thousands(n as f64),
            x.unpriced_routines.join(", ")
        ));
    }
    let lib: f64 = x.library.iter().map(|l| l.cycles).sum();
    if lib > 0.01 * x.estimate {
        let top: Vec<String> = x
            .library
            .iter()
            .take(3)
            .map(|l| format!("{} {}", l.name, thousands(l.cycles)))
            .collect();
        f.push(format!(
            "{} cycles ({:.1}% of the estimate) are JDK classes' code the host ran ({}): the tree's own where `host_library` ran the tree's version of the class (the `profile host library` line of the run names those), else the JDK's, where JOP runs its own library",
            thousands(lib),
            100.0 * lib / x.estimate.max(1.0),
            top.join(", ")
        ));
    }
    f
}

/// The clock read inside the region (`System.currentTimeMillis`,
/// `nanoTime`), by the methods that read it, in words: what follows from
/// such a read (a `new Random()`'s seed) is the target's time on the target.
/// With `replayed` values of the target's counter the host read the same;
/// without, it read its own time, so the two runs can do different work,
/// and each new profile differs from the last. `None` when the region reads
/// no clock.
pub fn clock_reads(p: &Profile, replayed: Option<usize>) -> Option<String> {
    const JVM_MACHINERY: [&str; 6] = [
        "java/lang/ref/",
        "java/lang/invoke/",
        "java/util/concurrent/",
        "jdk/",
        "sun/",
        "com/sun/",
    ];
    let mut by_caller: BTreeMap<String, u64> = BTreeMap::new();
    let mut total = 0;
    for node in &p.nodes {
        let Some(m) = p.methods.get(node.method as usize) else {
            continue;
        };
        if !jopcal_profile::routed::is_clock(&m.class, &m.name) {
            continue;
        }
        if node.calls == 0 {
            continue;
        }
        let caller = node
            .parent
            .and_then(|q| p.nodes.get(q as usize))
            .and_then(|q| p.methods.get(q.method as usize));
        // The host JVM's own machinery (reference queues, locks) reads the
        // clock too; JOP's library has none of it, so those reads say
        // nothing about the program's work. Nor do the host's stand-in
        // Native's: it is the counter itself, reading the host's time where
        // it has no more of the target's.
        let host_side = |c: &jopcal_profile::MethodInfo| {
            JVM_MACHINERY.iter().any(|m| c.class.starts_with(m))
                || c.class.starts_with(jopcal_timing::estimate::JOP_NATIVE_CLASS)
        };
        if caller.is_some_and(host_side) {
            continue;
        }
        let caller = caller.map_or_else(
            || "the region's start".to_string(),
            |c| format!("{}.{}", c.class.replace('/', "."), c.name),
        );
        *by_caller.entry(format!("System.{} from {caller}", m.name)).or_default() += node.calls;
        total += node.calls;
    }
    if total == 0 {
        return None;
    }
    let reads: Vec<String> = by_caller
        .iter()
        .map(|(w, n)| format!("{} x {w}", thousands(*n as f64)))
        .collect();
    let head = format!(
        "its work reads the clock {} times ({})",
        thousands(total as f64),
        reads.join(", ")
    );
    Some(match replayed {
        None => format!(
            "{head}: the host's run read the host's time where the target reads its own, so what it computes from them (a Random's seed, and the values drawn) differs, the routines priced by their operands run on other operands, and a new profile gives another estimate"
        ),
        Some(n) => format!(
            "{head}: the host's run read the {} values the target's microsecond counter gave the whole run, in order{}",
            thousands(n as f64),
            if n < total as usize {
                ", and its own time after them: it read more often than the target"
            } else {
                ""
            }
        ),
    })
}

fn percent(est: f64, measured: f64) -> String {
    if measured == 0.0 {
        return "n/a".into();
    }
    format!("{:+.3}%", 100.0 * (est - measured) / measured)
}

impl Explanation {
    /// The explanation as a Markdown section.
    /// Adds the per-method comparison with a trace of the target.
    pub fn compare_methods(&mut self, e: &Estimate, p: &Profile, trace: &[TracedMethod]) {
        let mut by: BTreeMap<String, MethodCompared> = BTreeMap::new();
        let blank = |m: &str| MethodCompared {
            method: m.to_string(),
            calls_estimate: 0,
            calls_target: 0,
            cycles_estimate: 0.0,
            cycles_target: 0.0,
            loads_estimate: 0,
            loads_target: None,
        };
        for (k, loads) in e.loads_by_method.iter().enumerate().filter(|(_, l)| **l > 0) {
            if let Some(m) = p.methods.get(k) {
                let name = m.qualified();
                by.entry(name.clone()).or_insert_with(|| blank(&name)).loads_estimate += loads;
            }
        }
        for (i, n) in p.nodes.iter().enumerate() {
            let Some(m) = p.methods.get(n.method as usize) else {
                continue;
            };
            let name = m.qualified();
            let row = by.entry(name.clone()).or_insert_with(|| blank(&name));
            row.calls_estimate += n.calls;
            row.cycles_estimate += e.per_node.get(i).copied().unwrap_or(0.0);
        }
        for t in trace {
            let row = by.entry(t.name.clone()).or_insert_with(|| blank(&t.name));
            row.calls_target += t.calls;
            row.cycles_target += t.cycles as f64;
            if let Some(l) = t.loads {
                *row.loads_target.get_or_insert(0) += l;
            }
        }
        let mut rows: Vec<MethodCompared> = by
            .into_values()
            .filter(|r| r.cycles_estimate != 0.0 || r.cycles_target != 0.0 || r.loads_estimate != 0)
            .collect();
        rows.sort_by(|a, b| {
            (b.cycles_estimate - b.cycles_target)
                .abs()
                .total_cmp(&(a.cycles_estimate - a.cycles_target).abs())
        });
        self.methods = rows;
    }

    pub fn to_markdown(&self) -> String {
        let mut s = String::new();
        let _ = writeln!(s, "## {}\n", self.benchmark);
        match self.measured {
            Some(m) => {
                let _ = writeln!(
                    s,
                    "Measured {} cycles; estimated {} ({}, {}): {} ({}).\n",
                    thousands(m),
                    thousands(self.estimate),
                    self.model,
                    self.cache,
                    thousands(self.estimate - m),
                    percent(self.estimate, m)
                );
            }
            None => {
                let _ = writeln!(
                    s,
                    "Estimated {} cycles ({}, {}); no measurement in cycles.\n",
                    thousands(self.estimate),
                    self.model,
                    self.cache
                );
            }
        }
        for f in &self.findings {
            let _ = writeln!(s, "- {f}");
        }
        if !self.findings.is_empty() {
            s.push('\n');
        }
        if !self.against_target.is_empty() {
            s.push_str("| against the target's own counts | estimate | target | difference |\n|---|---:|---:|---:|\n");
            for r in &self.against_target {
                let _ = writeln!(
                    s,
                    "| {} | {} | {} | {} |",
                    r.what,
                    thousands(r.estimate),
                    thousands(r.target),
                    thousands(r.estimate - r.target)
                );
            }
            s.push('\n');
        }
        table(
            &mut s,
            "the estimate by opcode group",
            "bytecodes",
            &self.groups,
            self.estimate,
            usize::MAX,
        );
        let _ = writeln!(
            s,
            "Method cache ({}): {} hits, {} misses, {} load cycles.\n",
            self.cache,
            thousands(self.cache_hits as f64),
            thousands(self.cache_misses as f64),
            thousands(self.cache_load_cycles)
        );
        if !self.java.is_empty() {
            table(
                &mut s,
                "bytecodes JOP implements in Java",
                "executions",
                &self.java,
                self.estimate,
                12,
            );
        }
        if !self.library.is_empty() {
            table(
                &mut s,
                "host library methods (with their callees)",
                "calls",
                &self.library,
                self.estimate,
                12,
            );
        }
        if !self.methods.is_empty() {
            s.push_str("| per method, against the target's trace (whole run) | calls | target calls | cycles | target cycles | difference | cache loads | target cache loads |\n|---|---:|---:|---:|---:|---:|---:|---:|\n");
            for m in self.methods.iter().take(15) {
                let _ = writeln!(
                    s,
                    "| {} | {} | {} | {} | {} | {} | {} | {} |",
                    m.method,
                    thousands(m.calls_estimate as f64),
                    thousands(m.calls_target as f64),
                    thousands(m.cycles_estimate),
                    thousands(m.cycles_target),
                    thousands(m.cycles_estimate - m.cycles_target),
                    thousands(m.loads_estimate as f64),
                    m.loads_target.map_or_else(|| "-".to_string(), |l| thousands(l as f64)),
                );
            }
            let only_target = self
                .methods
                .iter()
                .filter(|m| m.calls_estimate == 0 && m.cycles_estimate == 0.0)
                .count();
            let only_host = self
                .methods
                .iter()
                .filter(|m| m.calls_target == 0 && m.cycles_target == 0.0)
                .count();
            let _ = writeln!(
                s,
                "\n{} methods in all; {only_target} only on the target (its own library, boot, code outside the timed region), {only_host} only in the host profile.\n",
                self.methods.len()
            );
        }
        s
    }
}

fn table(s: &mut String, title: &str, count: &str, parts: &[Part], total: f64, limit: usize) {
    let _ = writeln!(s, "| {title} | {count} | cycles | share |\n|---|---:|---:|---:|");
    for p in parts.iter().take(limit) {
        let _ = writeln!(
            s,
            "| {} | {} | {} | {:.2}% |",
            p.name,
            thousands(p.count as f64),
            thousands(p.cycles),
            100.0 * p.cycles / total.max(1.0)
        );
    }
    if parts.len() > limit {
        let rest: f64 = parts[limit..].iter().map(|p| p.cycles).sum();
        let _ = writeln!(s, "| {} more | | {} | |", parts.len() - limit, thousands(rest));
    }
    s.push('\n');
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn opcodes_fall_in_their_groups() {
        for (m, g) in [
            ("iadd", "int arithmetic"),
            ("iinc", "int arithmetic"),
            ("iaload", "array elements"),
            ("lastore", "array elements"),
            ("istore_1", "locals and constants"),
            ("aload", "locals and constants"),
            ("ldc2_w", "locals and constants"),
            ("invokevirtual", "invoke and return"),
            ("areturn", "invoke and return"),
            ("if_icmplt", "branches and switches"),
            ("tableswitch", "branches and switches"),
            ("getfield", "fields and statics"),
            ("new", "objects, allocation and monitors"),
            ("ladd", "long"),
            ("i2l", "long"),
            ("fadd", "float and double"),
            ("i2d", "float and double"),
            ("dcmpl", "float and double"),
            ("dup_x1", "stack"),
            ("jopsys_rd", "JOP's own bytecodes and whole-priced methods"),
            (
                jopcal_timing::estimate::HANDLER_SEARCH_KEY,
                "objects, allocation and monitors",
            ),
            (jopcal_timing::estimate::UNWIND_KEY, "objects, allocation and monitors"),
        ] {
            assert_eq!(group(m), g, "{m}");
        }
    }

    #[test]
    fn a_region_that_throws_says_what_its_throws_cost() {
        let mut p = jopcal_profile::examples::two_calls();
        assert_eq!(
            exceptions_finding(&jopcal_timing::estimate::estimate(
                &p,
                &jop_wcet(),
                jopcal_timing::cache::CacheMode::Hit
            )),
            None
        );
        p.nodes[1].opcodes.insert(0xbf, 1); // athrow
        *p.events.last_mut().unwrap() = jopcal_profile::Event::Unwind;
        let e = jopcal_timing::estimate::estimate(&p, &jop_wcet(), jopcal_timing::cache::CacheMode::Hit);
        let f = exceptions_finding(&e).unwrap();
        assert!(f.starts_with("1 throws cost "), "{f}");
        // A table that does not price the frames left does not name them.
        assert!(!f.contains("frames left"), "{f}");
        let mut priced = e.clone();
        priced
            .per_opcode
            .insert(jopcal_timing::estimate::UNWIND_KEY.into(), (1, 40.0));
        assert!(exceptions_finding(&priced).unwrap().contains(", 1 frames left 40"));
    }

    fn jop_wcet() -> TimingModel {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../calibration/jop-wcet.toml");
        let mut m = TimingModel::load(&path).unwrap();
        m.apply_overrides(&["r=1".into(), "w=2".into()]).unwrap();
        m
    }

    /// The two-call example with `f` in the host library and three `idiv`s in `run`.
    fn library_and_idiv() -> Profile {
        let mut p = jopcal_profile::examples::two_calls();
        p.methods[1].class = "java/util/Random".into();
        p.nodes[0].opcodes.insert(0x6c, 3);
        p
    }

    #[test]
    fn parts_add_up_and_name_what_the_model_lacks() {
        let p = library_and_idiv();
        let m = jop_wcet();
        let mode = "fifo:1024:16".parse().unwrap();
        let e = jopcal_timing::estimate::estimate(&p, &m, mode);
        let counts = TargetCounts {
            instructions: e.bytecodes + 1000,
            cycles_without_cache: 4000,
            cache_load_cycles: 0,
            loads: [("MTAB".to_string(), 6), ("ARRAY".to_string(), 5)].into(),
            stores: BTreeMap::new(),
            cpus: 1,
        };
        let x = explain(&e, &p, &m, Some(e.cycles + 100.0), Some(&counts));
        let sum: f64 = x.groups.iter().map(|g| g.cycles).sum();
        assert_eq!(sum, e.cycles);
        assert_eq!(x.groups.iter().map(|g| g.count).sum::<u64>(), e.bytecodes);
        let calls = x.groups.iter().find(|g| g.name == "invoke and return").unwrap();
        assert_eq!(calls.count, 4);
        // f (in java/util) is library code entered twice from run.
        assert_eq!(x.library.len(), 1);
        assert_eq!(
            (x.library[0].name.as_str(), x.library[0].count),
            ("java.util.Random.f", 2)
        );
        assert_eq!(x.library[0].cycles, e.per_node[1]);
        // idiv is implemented in Java and jop-wcet leaves its routine at 0.
        assert_eq!(x.java.len(), 1);
        assert_eq!(x.unpriced_routines, vec!["idiv".to_string()]);
        // Two invokestatic and two ireturn: 2 x 2 + 2 method-table words, 2 constants.
        let mtab = x
            .against_target
            .iter()
            .find(|r| r.what == "memory words read: MTAB")
            .unwrap();
        assert_eq!((mtab.estimate, mtab.target), (6.0, 6.0));
        let array = x
            .against_target
            .iter()
            .find(|r| r.what == "memory words read: ARRAY")
            .unwrap();
        assert_eq!((array.estimate, array.target), (0.0, 5.0));
        let text = x.findings.join("\n");
        assert!(text.contains("1,000 more bytecodes"), "{text}");
        assert!(
            text.contains("3 executions of idiv are priced at their dispatch alone"),
            "{text}"
        );
        assert!(text.contains("the estimate is 100 cycles"), "{text}");
        let md = x.to_markdown();
        assert!(md.starts_with("## T\n"), "{md}");
        assert!(md.contains("| java.util.Random.f | 2 |"), "{md}");
    }

    #[test]
    fn characters_on_the_serial_line_are_a_group_and_a_finding() {
        // run calls the serial line's character write twice (f renamed).
        let mut p = jopcal_profile::examples::two_calls();
        p.methods[1] = jopcal_profile::MethodInfo {
            class: jopcal_profile::routed::SERIAL_LINE_CLASS.into(),
            name: "write".into(),
            descriptor: "(I)V".into(),
            ..p.methods[1].clone()
        };
        let devel = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../calibration/jop-devel.toml");
        let mut m = TimingModel::load(&devel).unwrap();
        m.set_param("serial_char", 7568.0).unwrap();
        let e = jopcal_timing::estimate::estimate(&p, &m, jopcal_timing::cache::CacheMode::Hit);
        let x = explain(&e, &p, &m, None, None);
        let line = x
            .groups
            .iter()
            .find(|g| g.name == "printing: characters on the serial line")
            .unwrap();
        assert_eq!((line.count, line.cycles), (2, 2.0 * 7568.0));
        let text = x.findings.join("\n");
        assert!(
            text.contains("2 characters printed in the timed region take 15,136 cycles"),
            "{text}"
        );
        assert!(text.contains("7,568 each"), "{text}");
    }

    #[test]
    fn reads_of_the_hosts_clock_are_a_finding() {
        let p = jopcal_profile::examples::two_calls();
        assert_eq!(clock_reads(&p, None), None);
        // f is the clock, read twice from run.
        let mut p = p;
        p.methods[1] = jopcal_profile::MethodInfo {
            class: "java/lang/System".into(),
            name: "currentTimeMillis".into(),
            descriptor: "()J".into(),
            ..p.methods[1].clone()
        };
        let caller = p.methods[p.nodes[0].method as usize].name.clone();
        let text = clock_reads(&p, None).unwrap();
        assert!(
            text.starts_with(&format!(
                "its work reads the clock 2 times (2 x System.currentTimeMillis from {}.{caller}): the host's run read the host's time",
                p.methods[0].class.replace('/', ".")
            )),
            "{text}"
        );
        // The target's values replayed: all of them, or too few.
        let all = clock_reads(&p, Some(5)).unwrap();
        assert!(
            all.ends_with("read the 5 values the target's microsecond counter gave the whole run, in order"),
            "{all}"
        );
        let few = clock_reads(&p, Some(1)).unwrap();
        assert!(
            few.ends_with("its own time after them: it read more often than the target"),
            "{few}"
        );
        // The same reads by the host JVM's reference handling, or by the
        // host's Native falling back on its own time, are not the program's.
        let mut jvm = p.clone();
        jvm.methods[0].class = "java/lang/ref/ReferenceQueue".into();
        assert_eq!(clock_reads(&jvm, None), None);
        jvm.methods[0].class = "com/jopdesign/sys/Native$TargetClock".into();
        assert_eq!(clock_reads(&jvm, None), None);
    }

    #[test]
    fn without_target_counts_there_is_no_comparison() {
        let p = jopcal_profile::examples::two_calls();
        let m = jop_wcet();
        let e = jopcal_timing::estimate::estimate(&p, &m, jopcal_timing::cache::CacheMode::Miss);
        let x = explain(&e, &p, &m, None, None);
        assert!(x.against_target.is_empty());
        assert!(x.library.is_empty());
        assert_eq!(x.cache_load_cycles, e.cache_load_cycles);
        assert!(x.to_markdown().contains("no measurement in cycles"));
    }
}
