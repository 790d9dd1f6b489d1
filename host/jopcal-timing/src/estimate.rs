//! From a profile to estimated target cycles.
//!
//! Every executed bytecode is charged by the model. Invokes and returns are
//! charged per event of the profile's call/return stream, with the cache load
//! cost `b` of the method entered (invoke) or returned to (return) decided by
//! the cache mode: always hit, always miss, or the exact FIFO simulation
//! replaying the stream. The replay starts with the entry stack's methods
//! loaded, outermost first, and replays the calls tracked before the region
//! (the events before `region_start`) for their cache effect only, so the
//! cache is in the target's state when the counted part begins. Calls to `com.jopdesign.sys.Native` methods are JOP's own
//! bytecodes (`Native.rd` is `jopsys_rd`): they are charged as such, and the
//! host stand-in's code behind them is not. A method the model prices as a
//! whole (`[methods]`: library code JOP implements differently from the host
//! JDK) is charged that cost per call (`System.arraycopy`'s by the elements
//! the call copied), and its host bytecodes are not. Contexts the JVM entered on its
//! own (static initializers, class loading, exception constructors; invoke
//! opcode 0 in the profile) are not charged at all, nor anything below them:
//! JOP runs static initializers at boot and never loads classes, so that work
//! is the host JVM's and not the program's. Their bytecodes are reported as
//! `jvm_entered_bytecodes`.
//!
//! Printing: JOP sends each character a program prints through its UART and
//! waits while the transmitter is busy, so on a line slower than the
//! processor a print takes the line's time. Where the model has that time
//! (`serial_char`, the cycles of one character's frame, known from the
//! target's UART), the host's printing code (a `java.io.PrintStream` call
//! and everything below it) is not charged, and each character the host's
//! serial line stand-in saw (`jopcal_profile::routed::SERIAL_LINE_CLASS`)
//! costs `serial_char`. The stand-in's own code is never charged.

use crate::cache::{words_of, CacheMode, MethodCache};
use crate::model::TimingModel;
use jopcal_classfile::opcode::{is_invoke, is_return};
use jopcal_profile::routed::{is_serial_write, SERIAL_LINE_CLASS};
use jopcal_profile::{Event, Profile};
use std::collections::BTreeMap;

/// The class whose methods are JOP's own bytecodes.
pub const JOP_NATIVE_CLASS: &str = "com/jopdesign/sys/Native";

/// An estimate of one benchmark under one model and cache mode.
#[derive(Debug, Clone, PartialEq)]
pub struct Estimate {
    pub benchmark: String,
    pub model: String,
    pub cache: CacheMode,
    pub cycles: f64,
    /// Bytecodes charged.
    pub bytecodes: u64,
    /// Cycles of the dispatch into bytecodes JOP implements in Java.
    pub java_dispatch_cycles: f64,
    /// Cycles of those routines' own cost parameters (0 until calibrated).
    pub java_routine_cycles: f64,
    /// Cycles of invokes and returns (cache load costs included).
    pub invoke_return_cycles: f64,
    /// The part of those that cache misses add: each missing invoke or
    /// return's cost less its cost as a hit (JopSim's "method cache load cycles").
    pub cache_load_cycles: f64,
    pub cache_hits: u64,
    pub cache_misses: u64,
    /// Per opcode mnemonic: (executions, cycles).
    pub per_opcode: BTreeMap<String, (u64, f64)>,
    /// Exclusive cycles per CCT node (index = node id).
    pub per_node: Vec<f64>,
    /// Bytecodes in contexts the host JVM entered on its own (not charged).
    pub jvm_entered_bytecodes: u64,
    /// Per mnemonic: executions of a bytecode JOP implements in Java whose
    /// routine the profile ran (`jopcal_profile::routed`), priced by the
    /// routine's own bytecodes rather than by the model's routine parameter.
    pub routine_entries: BTreeMap<String, u64>,
    /// Whether the profile was complete.
    pub complete: bool,
    /// JOP's collector in the region (none where the profile has no
    /// allocations or the target reported no heap; `crate::collector`).
    pub collections: crate::collector::Collections,
    /// Its cycles (in `cycles`; 0 with a model without `gc_collection`).
    pub collector_cycles: f64,
    /// The method cache's loads (misses) in the region, by the profile's
    /// method index: the program's methods, and JOP's runtime routines
    /// where the table names them (`[routines]`).
    pub loads_by_method: Vec<u64>,
}

/// The parameter a frame left by an exception costs (JOP's `athrow` routine
/// walks each frame's handlers), where the model has it.
pub const IMPL_UNWIND: &str = "impl_unwind";
/// The parameters of `System.arraycopy`'s cost on JOP (a call, an element
/// copied), where a model prices it (`[methods]`, fitted with the routines).
pub const IMPL_ARRAYCOPY: [&str; 2] = ["impl_arraycopy", "impl_arraycopy_element"];
/// The estimate's entry of the frames left by exceptions.
pub const UNWIND_KEY: &str = "frames left by an exception";
/// The parameters of JOP's search of a frame's exception table, where the
/// model has them: each entry read, and beyond the runtime's instanceof
/// routine (priced as an `instanceof` that walks the same way) each test of
/// an entry that covers the pc and names a class.
pub const IMPL_HANDLER_ENTRY: &str = "impl_handler_entry";
pub const IMPL_HANDLER_TEST: &str = "impl_handler_test";
/// The estimate's entry of the exception tables' searches.
pub const HANDLER_SEARCH_KEY: &str = "exception table searches";

/// What JOP's athrow routine reads of the exception tables in `profile`'s
/// region, per node: `(entries read, class tests by their instanceof
/// operand)` (`jopcal_profile::search_table` on each recorded arrival).
pub fn handler_searches(profile: &Profile) -> BTreeMap<usize, (u64, BTreeMap<u8, u64>)> {
    let x = &profile.exceptions;
    let mut by_node: BTreeMap<usize, (u64, BTreeMap<u8, u64>)> = BTreeMap::new();
    for (a, &count) in &x.arrivals {
        let Some(node) = profile.nodes.get(a.node as usize) else {
            continue;
        };
        let table = x.tables.get(&node.method).map_or(&[][..], Vec::as_slice);
        let ancestry = x.thrown.get(a.thrown as usize).map_or(&[][..], Vec::as_slice);
        let search = jopcal_profile::search_table(table, a.pc, ancestry);
        let entry = by_node.entry(a.node as usize).or_default();
        entry.0 += u64::from(search.entries) * count;
        for k in search.tests {
            *entry.1.entry(k).or_default() += count;
        }
    }
    by_node
}

/// The cycles of `entries` table entries read and `tests` class tests
/// (by operand), where `model` prices the search (else 0).
fn handler_search_cost(model: &TimingModel, entries: u64, tests: &BTreeMap<u8, u64>) -> f64 {
    let Some(per_entry) = model.params().get(IMPL_HANDLER_ENTRY).copied() else {
        return 0.0;
    };
    let per_test = model.params().get(IMPL_HANDLER_TEST).copied().unwrap_or(0.0);
    entries as f64 * per_entry
        + tests
            .iter()
            .map(|(&k, &n)| n as f64 * (operand_priced(model, INSTANCEOF, k) + per_test))
            .sum::<f64>()
}

const INSTANCEOF: u8 = 0xc1;
/// The athrow routine's return (`f_athrow` returns the exception).
const ARETURN: u8 = 0xb0;

/// What the athrow routine's return into the frame that catches an
/// exception adds when that frame's method (`(words, hit)`) missed the
/// method cache: a hit is part of the routine's fitted cost.
fn unwind_miss(model: &TimingModel, to: Option<(u32, bool)>) -> f64 {
    match to {
        Some((words, false)) => routine_miss_cost(model, ARETURN, words, false),
        _ => 0.0,
    }
}
/// The estimate's entry of the method cache's misses of JOP's runtime
/// routines (`[routines]`): their count and what they add to hits.
pub const ROUTINE_MISSES_KEY: &str = "method cache misses of JOP's runtime routines";

/// What a miss of a method of `words` words adds to a hit when `op` enters
/// or returns to it (`routine`: the dispatch of a bytecode JOP runs in Java).
fn routine_miss_cost(model: &TimingModel, op: u8, words: u32, routine: bool) -> f64 {
    entry_cost(model, op, routine, model.load_cost(false, words), words)
        - entry_cost(model, op, routine, model.load_cost(true, words), words)
}

/// The collector's work in `profile`'s region, where the target reported
/// the heap it began with and `model` prices collections.
fn collector_work(profile: &Profile, model: &TimingModel) -> crate::collector::Collections {
    match &profile.heap_start {
        Some(h) if model.params().contains_key(crate::collector::GC_COLLECTION) => {
            crate::collector::collections(&profile.allocations, h)
        }
        _ => Default::default(),
    }
}

/// The cycles of `c` under `model`'s parameters.
fn collector_cycles(c: &crate::collector::Collections, model: &TimingModel) -> f64 {
    let p = |name: &str| model.params().get(name).copied().unwrap_or(0.0);
    c.count * p(crate::collector::GC_COLLECTION) + c.handles_swept * p(crate::collector::GC_HANDLE)
}

enum CacheState {
    Hit,
    Miss,
    Fifo(MethodCache),
}

impl CacheState {
    /// Accesses `method` (id, words): true on a hit.
    fn access(&mut self, id: u32, words: u32) -> bool {
        match self {
            CacheState::Hit => true,
            CacheState::Miss => false,
            CacheState::Fifo(c) => c.access(id, words),
        }
    }
}

/// The whole-call cost `model` gives method `m`: one of JOP's own bytecodes
/// (`Native.rd` is `jopsys_rd`) or a `[methods]` entry; `None` when its
/// bytecodes are charged one by one.
fn whole_cost(model: &TimingModel, m: &jopcal_profile::MethodInfo) -> Option<f64> {
    whole_cost_at(model, m, 0.0)
}

/// [`whole_cost`] of a call that worked on `n` elements (`n` in the
/// `[methods]` formula: `System.arraycopy`'s elements copied, see
/// [`jopcal_profile::routed::copied_elements`]; 0 for every other method).
fn whole_cost_at(model: &TimingModel, m: &jopcal_profile::MethodInfo, n: f64) -> Option<f64> {
    if is_serial_write(m) {
        return Some(serial_char(model).unwrap_or(0.0));
    }
    (m.class == JOP_NATIVE_CLASS)
        .then(|| model.native_cost(&crate::jop::native_method_bytecode(&m.name)))
        .flatten()
        .or_else(|| model.method_cost_at(&m.qualified(), n))
}

/// Per node, the elements one of its calls worked on, on average over its
/// calls (priced by a `[methods]` formula linear in them, the sum is
/// exact); 0 where the profile counts none. Made once, before a replay
/// charges the calls one by one.
fn elements_per_call_by_node(profile: &Profile) -> Vec<f64> {
    profile
        .nodes
        .iter()
        .map(
            |node| match (jopcal_profile::routed::copied_elements(profile, node), node.calls) {
                (0, _) | (_, 0) => 0.0,
                (copied, calls) => copied as f64 / calls as f64,
            },
        )
        .collect()
}

/// The cycles one printed character takes on the target's serial line,
/// where the model knows them (`serial_char` above 0).
pub fn serial_char(model: &TimingModel) -> Option<f64> {
    model.params().get("serial_char").copied().filter(|c| *c > 0.0)
}

/// The host's printing machinery, not charged (see the module doc): with
/// the line's time known, a `java.io.PrintStream` context and everything
/// below it; always, the serial line stand-in's own code. Its per-character
/// `write(int)` is not in it (priced as a whole).
fn host_printing(profile: &Profile, priced_by_line: bool) -> Vec<bool> {
    let in_print = if priced_by_line {
        in_print_stream(profile)
    } else {
        vec![false; profile.nodes.len()]
    };
    profile
        .nodes
        .iter()
        .zip(in_print)
        .map(|(n, in_print)| {
            let m = &profile.methods[n.method as usize];
            !is_serial_write(m) && (in_print || m.class == SERIAL_LINE_CLASS)
        })
        .collect()
}

/// Per node: a `java.io.PrintStream` context or one below it (the host's
/// printing, which a model that knows the serial line prices by its characters).
pub fn in_print_stream(profile: &Profile) -> Vec<bool> {
    const PRINT_STREAM: &str = "java/io/PrintStream";
    let mut in_print = vec![false; profile.nodes.len()];
    for (i, n) in profile.nodes.iter().enumerate() {
        let m = &profile.methods[n.method as usize];
        in_print[i] = m.class == PRINT_STREAM || n.parent.is_some_and(|p| in_print[p as usize]);
    }
    in_print
}

/// What a replay needs to know of a profile under a model's *structure*
/// (which methods it prices as a whole, whether it prices printing by the
/// line), not its parameter values: method sizes, and which contexts are
/// not charged.
struct Layout {
    /// The characters the UART holds without the program waiting (its FIFO
    /// and the one it sends: the table's `serial_free`; 0, unknown), which
    /// [`SerialLine`] waits by.
    serial_free: u64,
    /// Method sizes in words, by method index.
    words: Vec<u32>,
    /// Methods priced as a whole, by method index.
    whole: Vec<bool>,
    /// Contexts not charged, by node: inside a whole-priced call (the host
    /// stand-in's code) or entered by the JVM on its own (the host JVM's work).
    skipped: Vec<bool>,
    /// Bytecodes in contexts the host JVM entered on its own.
    jvm_entered_bytecodes: u64,
    /// Executions of JOP's runtime routines (`jopcal_profile::routed`) that
    /// the model times as one bytecode (its microcode implements it): the
    /// caller's node, the bytecode, the executions. The routine's context is
    /// skipped.
    collapsed: Vec<(usize, u8, u64)>,
    /// Opcodes the model prices by the operand the profile recorded (`[operands]`).
    by_operand: [bool; 256],
    /// Normal returns of each node inside the region, from the event stream
    /// (a profile's return opcode counts can miss the return that follows a
    /// call the host JVM stepped over); empty unless `synchronized_methods`.
    returns: Vec<u64>,
    /// The target's linker replaces `iinc` (see [`linked_opcodes`]).
    replace_iinc: bool,
    /// The target's linker types field accesses by their field.
    typed_fields: bool,
    /// The target's linker puts monitors into synchronized methods.
    synchronized_methods: bool,
    /// Per node, the runtime routines its bytecodes ran in the region
    /// (`[routines]`): empty where the table names none or the profile's
    /// method table lacks them (no image gave their sizes).
    routine_uses: Vec<Vec<RoutineUse>>,
    /// Per node, the times its method runs again in the region: its
    /// entries, the returns into it and the region's start. A node's
    /// routines are spread evenly over them ([`replay_routines`]).
    segments: Vec<u64>,
    /// Per node, JOP's search of the exception tables ([`handler_searches`]),
    /// where the model prices it (`impl_handler_entry`).
    searches: BTreeMap<usize, (u64, BTreeMap<u8, u64>)>,
}

/// The executions of one bytecode JOP implements in Java, in one context,
/// with the runtime methods they run.
#[derive(Debug, Clone)]
struct RoutineUse {
    /// The bytecode (its dispatch enters the routine).
    op: u8,
    /// Indices in the profile's method table: the routine, then its callees.
    methods: Vec<u32>,
    /// Executions in the region.
    count: u64,
    /// Of them, those the replay runs where they happen (a `new` at the
    /// invoke of its constructor, an `athrow` at the unwind of its frame,
    /// [`Anchors`]); the rest are spread over the context's segments.
    anchored: u64,
}

/// Where the event stream shows a routine's execution itself: a `new` just
/// before the invoke of the constructor of its object (an `invokespecial`
/// of an `<init>`, but for the first a constructor makes: its superclass's
/// or its own other constructor), an `athrow` at the unwind of the frame
/// that threw (every unwind of a frame that has `athrow`s, up to their
/// number: the replay cannot tell a frame an exception passes through from
/// one that caught and threw again).
struct Anchors {
    /// Per open frame: whether its method is a constructor that has made
    /// its first constructor call.
    first_init: Vec<bool>,
}

const NEW: u8 = 0xbb;
const ATHROW: u8 = 0xbf;
const INVOKESPECIAL: u8 = 0xb7;

impl Anchors {
    /// The state when the stream begins with `open` frames, each taken to
    /// be past its first constructor call.
    fn open(open: usize) -> Anchors {
        Anchors {
            first_init: vec![true; open],
        }
    }

    /// A frame of `node` opens; true where its entry is the constructor
    /// call of a `new` of the frame below (`parent`).
    fn enter(&mut self, profile: &Profile, parent: Option<u32>, node: u32) -> bool {
        let n = &profile.nodes[node as usize];
        let is_init = |m: u32| profile.methods[m as usize].name == "<init>";
        let constructs = n.invoke_opcode == INVOKESPECIAL
            && is_init(n.method)
            && parent.is_some_and(|p| {
                let top = self.first_init.last_mut();
                match top {
                    // A constructor's first constructor call is its super().
                    Some(done) if is_init(profile.nodes[p as usize].method) && !*done => {
                        *done = true;
                        false
                    }
                    _ => true,
                }
            });
        self.first_init.push(false);
        constructs
    }

    fn leave(&mut self) {
        self.first_init.pop();
    }
}

/// What [`Layout::stream_points`] finds per node.
struct StreamPoints {
    segments: Vec<u64>,
    news: Vec<u64>,
    unwinds: Vec<u64>,
}

/// JOP's linker's replacement of `iinc local, c` (the original tree's
/// ReplaceIinc): load the local, push the constant (`iconst` for -1..5,
/// `bipush` up to 126, else `sipush`), `iadd`, store the local; the short
/// load and store forms for locals 0 to 3.
pub fn iinc_replacement(local: u16, inc: i16) -> [u8; 4] {
    const ILOAD: u8 = 0x15;
    const ILOAD_0: u8 = 0x1a;
    const ISTORE: u8 = 0x36;
    const ISTORE_0: u8 = 0x3b;
    const ICONST_0: u8 = 0x03;
    const BIPUSH: u8 = 0x10;
    const SIPUSH: u8 = 0x11;
    const IADD: u8 = 0x60;
    let (load, store) = match u8::try_from(local) {
        Ok(l @ 0..=3) => (ILOAD_0 + l, ISTORE_0 + l),
        _ => (ILOAD, ISTORE),
    };
    let push = match inc {
        // iconst_m1 .. iconst_5 are consecutive opcodes.
        -1..=5 => (i16::from(ICONST_0) + inc) as u8,
        -128..=126 => BIPUSH,
        _ => SIPUSH,
    };
    [load, push, IADD, store]
}

/// A node's executed opcodes as the target runs them: with the linker's
/// `iinc` replacement, each recorded `iinc` form counts as its replacement
/// (an `iinc` the profile has no operands for stays, priced by its entry);
/// with its typed field accesses, each access the profile recorded the
/// field kind of counts as JOP's typed opcode (`putfield_ref`, ...); in a
/// `synchronized` method (`monitors: Some(returns)`), each call adds
/// `aload_0; monitorenter` and each of its `returns` (normal returns; an
/// exception leaves without the linker's monitorexit) `aload_0; monitorexit`.
fn linked_opcodes(
    n: &jopcal_profile::Node,
    replace_iinc: bool,
    typed_fields: bool,
    monitors: Option<u64>,
) -> Vec<(u8, u64)> {
    const IINC: u8 = 0x84;
    const WIDE: u8 = 0xc4;
    const ALOAD_0: u8 = 0x2a;
    const MONITORENTER: u8 = 0xc2;
    const MONITOREXIT: u8 = 0xc3;
    let replace_iinc = replace_iinc && !n.iinc.is_empty();
    let typed_fields = typed_fields && !n.fields.is_empty();
    if !replace_iinc && !typed_fields && monitors.is_none() {
        return n.opcodes.iter().map(|(&op, &c)| (op, c)).collect();
    }
    let mut ops = n.opcodes.clone();
    if let Some(returns) = monitors {
        *ops.entry(ALOAD_0).or_default() += n.calls + returns;
        *ops.entry(MONITORENTER).or_default() += n.calls;
        *ops.entry(MONITOREXIT).or_default() += returns;
    }
    // Moves `c` executions of `from` to the opcodes the linker writes instead.
    let mut rewrite = |from: u8, to: &[u8], c: u64| {
        let e = ops.entry(from).or_default();
        *e = e.saturating_sub(c);
        for op in to {
            *ops.entry(*op).or_default() += c;
        }
    };
    if typed_fields {
        for (&(op, kind), &c) in &n.fields {
            if let Some(typed) = crate::jop::typed_field(op, kind) {
                rewrite(op, &[typed], c);
            }
        }
    }
    if replace_iinc {
        for (&(local, inc), &c) in &n.iinc {
            let narrow = local <= 255 && i8::try_from(inc).is_ok();
            rewrite(if narrow { IINC } else { WIDE }, &iinc_replacement(local, inc), c);
        }
    }
    ops.into_iter().filter(|(_, c)| *c > 0).collect()
}

impl Layout {
    fn new(
        profile: &Profile,
        model: &TimingModel,
        size_of: &dyn Fn(&jopcal_profile::MethodInfo) -> Option<u32>,
    ) -> Layout {
        let words = profile
            .methods
            .iter()
            .map(|m| size_of(m).unwrap_or_else(|| words_of(m.bytecode_len)))
            .collect();
        let whole: Vec<bool> = profile.methods.iter().map(|m| whole_cost(model, m).is_some()).collect();
        let jvm_work = profile.jvm_work();
        let printing = host_printing(profile, serial_char(model).is_some());
        // Below a whole-priced call: parents come before their children.
        let mut below_whole = vec![false; profile.nodes.len()];
        let mut skipped = vec![false; profile.nodes.len()];
        let mut jvm_entered_bytecodes = 0;
        let mut collapsed = Vec::new();
        for (i, n) in profile.nodes.iter().enumerate() {
            let parent_whole = |p: u32| whole[profile.nodes[p as usize].method as usize];
            below_whole[i] = n.parent.is_some_and(|p| below_whole[p as usize] || parent_whole(p));
            let routine_as_bytecode = is_routine(n) && !model.is_java(n.invoke_opcode);
            if routine_as_bytecode && !below_whole[i] && !jvm_work[i] {
                collapsed.push((n.parent.unwrap_or(0) as usize, n.invoke_opcode, n.calls));
            }
            // A routine the model times as one bytecode: nothing below it runs on JOP.
            below_whole[i] |= routine_as_bytecode;
            skipped[i] = below_whole[i] || jvm_work[i] || printing[i];
            if jvm_work[i] && !below_whole[i] {
                jvm_entered_bytecodes += n.bytecodes();
            }
        }
        let mut layout = Layout {
            serial_free: serial_char(model)
                .and(model.params().get("serial_free").copied())
                .map_or(0, |n| n.max(0.0) as u64),
            words,
            whole,
            skipped,
            jvm_entered_bytecodes,
            collapsed,
            by_operand: std::array::from_fn(|op| model.prices_by_operand(op as u8)),
            // (Only a linker that puts monitors into synchronized methods asks.)
            returns: if model.linker().synchronized_methods {
                normal_returns(profile)
            } else {
                Vec::new()
            },
            replace_iinc: model.linker().replace_iinc,
            typed_fields: model.linker().typed_fields,
            synchronized_methods: model.linker().synchronized_methods,
            routine_uses: Vec::new(),
            segments: Vec::new(),
            searches: if model.params().contains_key(IMPL_HANDLER_ENTRY) {
                handler_searches(profile)
            } else {
                BTreeMap::new()
            },
        };
        layout.place_routines(profile, model);
        layout
    }

    /// Finds, per node, the runtime routines its bytecodes run
    /// ([`Layout::routine_uses`]) and the points they are spread over
    /// ([`Layout::segments`]).
    fn place_routines(&mut self, profile: &Profile, model: &TimingModel) {
        if !model.has_routines() {
            return;
        }
        let index: std::collections::HashMap<String, u32> = profile
            .methods
            .iter()
            .enumerate()
            .map(|(i, m)| (m.qualified(), i as u32))
            .collect();
        let methods_of = |op: u8| -> Option<Vec<u32>> {
            let names = model.routine_methods(op);
            if names.is_empty() || !model.is_java(op) {
                return None;
            }
            names.iter().map(|n| index.get(n).copied()).collect()
        };
        let mut resolved: BTreeMap<u8, Option<Vec<u32>>> = BTreeMap::new();
        let mut uses: Vec<Vec<RoutineUse>> = vec![Vec::new(); profile.nodes.len()];
        let runs = self
            .plain(profile)
            .chain(self.by_operand(profile).map(|(i, op, _, c)| (i, op, c)))
            .collect::<Vec<_>>();
        // The instanceof routine the athrow routine calls for each class test
        // of its search of an exception table.
        let tests = self
            .searches
            .iter()
            .map(|(&i, (_, tests))| (i, INSTANCEOF, tests.values().sum::<u64>()));
        for (i, op, count) in runs.into_iter().chain(tests) {
            let Some(methods) = resolved.entry(op).or_insert_with(|| methods_of(op)).clone() else {
                continue;
            };
            match uses[i].iter_mut().find(|u| u.op == op) {
                Some(u) => u.count += count,
                None => uses[i].push(RoutineUse {
                    op,
                    methods,
                    count,
                    anchored: 0,
                }),
            }
        }
        if uses.iter().all(Vec::is_empty) {
            return;
        }
        let points = self.stream_points(profile);
        for (i, node_uses) in uses.iter_mut().enumerate() {
            for u in node_uses {
                u.anchored = match u.op {
                    NEW => u.count.min(points.news[i]),
                    ATHROW => u.count.min(points.unwinds[i]),
                    _ => 0,
                };
            }
        }
        self.routine_uses = uses;
        self.segments = points.segments;
    }

    /// Per node, from one pass over the stream as [`replay`] meets it: the
    /// points of the region where its method runs again (the region's start
    /// for its innermost context, each charged entry, each return into it
    /// from a charged callee), and where its routines show ([`Anchors`]):
    /// the constructor calls of its `new`s and its unwinds.
    fn stream_points(&self, profile: &Profile) -> StreamPoints {
        let n = profile.nodes.len();
        let mut p = StreamPoints {
            segments: vec![0; n],
            news: vec![0; n],
            unwinds: vec![0; n],
        };
        let mut stack: Vec<u32> = if profile.entry_stack.is_empty() {
            vec![0]
        } else {
            profile.entry_stack.clone()
        };
        let mut anchors = Anchors::open(stack.len());
        let region_start = profile.region_start as usize;
        let charged = |n: u32| !self.skipped[n as usize] && !self.whole[profile.nodes[n as usize].method as usize];
        // (One step past the last event: a region that starts there.)
        for k in 0..=profile.events.len() {
            if k == region_start.min(profile.events.len()) {
                if let Some(&top) = stack.last() {
                    p.segments[top as usize] += 1;
                }
            }
            let Some(ev) = profile.events.get(k) else { break };
            let counted = k >= region_start;
            match *ev {
                Event::Invoke(n) => {
                    let parent = stack.last().copied();
                    if anchors.enter(profile, parent, n) && counted {
                        if let Some(q) = parent.filter(|q| !self.skipped[*q as usize]) {
                            p.news[q as usize] += 1;
                        }
                    }
                    stack.push(n);
                    if counted && charged(n) {
                        p.segments[n as usize] += 1;
                    }
                }
                Event::Return | Event::Unwind => {
                    let Some(done) = stack.pop() else { continue };
                    anchors.leave();
                    if counted && matches!(ev, Event::Unwind) && !self.skipped[done as usize] {
                        p.unwinds[done as usize] += 1;
                    }
                    if let (true, true, Some(&top)) = (counted, charged(done), stack.last()) {
                        p.segments[top as usize] += 1;
                    }
                }
            }
        }
        p
    }

    /// Nodes whose bytecodes are charged one by one.
    fn charged<'p>(&'p self, profile: &'p Profile) -> impl Iterator<Item = (usize, &'p jopcal_profile::Node)> + 'p {
        profile
            .nodes
            .iter()
            .enumerate()
            .filter(|(i, n)| !self.skipped[*i] && !self.whole[n.method as usize])
    }

    /// Charged executions of every bytecode but invokes and returns, less
    /// those priced by their operand ([`Layout::by_operand`]):
    /// `(node, opcode, count)`.
    fn plain<'p>(&'p self, profile: &'p Profile) -> impl Iterator<Item = (usize, u8, u64)> + 'p {
        self.charged(profile)
            .flat_map(move |(i, n)| {
                let monitors = (self.synchronized_methods && profile.methods[n.method as usize].synchronized)
                    .then(|| self.returns[i]);
                linked_opcodes(n, self.replace_iinc, self.typed_fields, monitors)
                    .into_iter()
                    .map(move |(op, count)| {
                        let by_operand = if self.by_operand[op as usize] {
                            self.linked_operands(n)
                                .filter(|((o, _), _)| *o == op)
                                .map(|(_, c)| c)
                                .sum()
                        } else {
                            0
                        };
                        (i, op, count.saturating_sub(by_operand))
                    })
            })
            .filter(|(_, op, count)| !is_invoke(*op) && !is_return(*op) && *count > 0)
            .chain(self.collapsed.iter().copied())
    }

    /// Charged executions priced by their operand: `(node, opcode, operand, count)`.
    fn by_operand<'p>(&'p self, profile: &'p Profile) -> impl Iterator<Item = (usize, u8, u8, u64)> + 'p {
        self.charged(profile).flat_map(move |(i, n)| {
            self.linked_operands(n)
                .filter(|((op, _), _)| self.by_operand[*op as usize])
                .map(move |((op, v), c)| (i, op, v, c))
        })
    }

    /// A node's recorded operands as the linked program has them: those of a
    /// store of a reference (`putfield`, `putstatic`) are JOP's typed
    /// opcode's where the target's linker types field accesses.
    fn linked_operands<'n>(&self, n: &'n jopcal_profile::Node) -> impl Iterator<Item = ((u8, u8), u64)> + 'n {
        let typed = self.typed_fields;
        n.operands.iter().map(move |(&(op, v), &c)| {
            let linked = match op {
                _ if typed && jopcal_profile::routed::REF_STORES.contains(&op) => {
                    crate::jop::typed_field(op, jopcal_profile::FieldKind::Reference).unwrap_or(op)
                }
                _ => op,
            };
            ((linked, v), c)
        })
    }
}

/// Each node's normal returns inside the region (the event stream's
/// returns out of it; an unwind is an exception leaving it).
fn normal_returns(profile: &Profile) -> Vec<u64> {
    let mut returns = vec![0u64; profile.nodes.len()];
    let mut stack: Vec<u32> = profile.entry_stack.clone();
    for (k, ev) in profile.events.iter().enumerate() {
        match ev {
            Event::Invoke(n) => stack.push(*n),
            Event::Unwind => {
                stack.pop();
            }
            Event::Return => {
                if let Some(n) = stack.pop() {
                    if k as u64 >= profile.region_start {
                        if let Some(r) = returns.get_mut(n as usize) {
                            *r += 1;
                        }
                    }
                }
            }
        }
    }
    returns
}

/// True when `n` is a routine of JOP's runtime entered by the bytecode it
/// implements (`jopcal_profile::routed`), not by an invoke: its dispatch is
/// the bytecode's, and its own cost is its context's bytecodes, not the
/// model's routine parameter.
fn is_routine(n: &jopcal_profile::Node) -> bool {
    n.parent.is_some() && n.invoke_opcode != 0 && !is_invoke(n.invoke_opcode)
}

/// What entering a method by `op` costs when the method loads in `b` cycles
/// and has `words` words: for a `routine` (see [`is_routine`]), the
/// bytecode's dispatch alone.
fn entry_cost(model: &TimingModel, op: u8, routine: bool, b: f64, words: u32) -> f64 {
    if routine {
        model.cost_parts(op, b, words).0
    } else {
        model.cost(op, b, words)
    }
}

/// One execution of `op` whose recorded operand is `value`: its `[operands]`
/// cost, else its formula.
fn operand_priced(model: &TimingModel, op: u8, value: u8) -> f64 {
    model
        .operand_cost(op, value)
        .unwrap_or_else(|| model.cost(op, model.load_cost(true, 0), 0))
}

/// JOP's serial line as a program that prints sees it: a UART that takes
/// `free` characters (its transmit FIFO and the one it sends) without the
/// program waiting, and sends them one after the other, a frame each.
struct SerialLine {
    free: usize,
    /// When each character written and not yet sent is sent, in order.
    sent_at: std::collections::VecDeque<f64>,
}

impl SerialLine {
    fn new(free: u64) -> SerialLine {
        SerialLine {
            free: free as usize,
            sent_at: std::collections::VecDeque::new(),
        }
    }

    /// The cycles a character written at `now` waits, with frames of
    /// `frame` cycles: a whole frame each where the line's FIFO is unknown
    /// (`free` 0), else until the line has room for it.
    fn write(&mut self, now: f64, frame: f64) -> f64 {
        if self.free == 0 {
            return frame;
        }
        while self.sent_at.front().is_some_and(|&t| t <= now) {
            self.sent_at.pop_front();
        }
        let waits_until = match self.sent_at.len().checked_sub(self.free) {
            // The line has room when the one `free` places ahead has gone.
            Some(k) => self.sent_at[k],
            None => now,
        };
        let begins = self.sent_at.back().map_or(waits_until, |&t| t.max(waits_until));
        self.sent_at.push_back(begins + frame);
        waits_until - now
    }
}

/// One charged event of the timed region, as the call/return replay decides it.
#[derive(Debug, Clone, Copy)]
enum Charge {
    /// An invoke entering `node`, whose method hit or missed the cache.
    Invoke { node: usize, hit: bool },
    /// A return (or, with `unwind`, an exception unwinding) out of `node` to
    /// the context `to` with its cache outcome; `None` when it returns past
    /// the region's entry (the caller is unknown: assumed cached, size 0).
    /// An unwind accesses the cache but costs no return bytecode.
    Return {
        node: usize,
        to: Option<(u32, bool)>,
        unwind: bool,
    },
    /// A call of `node`'s method, priced as a whole.
    Whole { node: usize },
    /// A method of JOP's runtime that a bytecode of `node` ran (see
    /// [`replay_routines`]) missed the cache: entered by `op` (the
    /// bytecode's dispatch where `routine`), a method of `words` words
    /// loads. Priced as what the miss adds to the hit.
    RoutineLoad {
        node: usize,
        op: u8,
        words: u32,
        routine: bool,
    },
}

/// The invoke bytecode a routine calls the runtime's methods with.
const INVOKESTATIC: u8 = 0xb8;

/// At a point where `node`'s method runs again (an entry, a return into
/// it, the region's start), replays through `cache` the runtime routines
/// its bytecodes ran: the region's executions of each that the stream does
/// not place ([`Anchors`], [`run_anchored`]) are spread evenly over the
/// node's [`Layout::segments`], and each point that has one or
/// more enters the routine (its dispatch), calls and returns from each of
/// its callees, and returns to the node's method; more than one at a point
/// hit (FIFO: nothing else ran between them), except with every access a
/// miss. Misses are charged as [`Charge::RoutineLoad`].
#[allow(clippy::too_many_arguments)]
fn replay_routines(
    profile: &Profile,
    layout: &Layout,
    node: usize,
    seen: &mut [u64],
    cache: &mut CacheState,
    counted: bool,
    tell: &mut dyn FnMut(bool, bool, u32),
    charge: &mut dyn FnMut(Charge),
) {
    let Some(uses) = layout.routine_uses.get(node).filter(|u| !u.is_empty() && counted) else {
        return;
    };
    let segments = u128::from(layout.segments[node].max(1));
    let i = u128::from(seen[node]);
    seen[node] += 1;
    if i >= segments {
        return;
    }
    for u in uses {
        let count = u128::from(u.count - u.anchored);
        let due = (i + 1) * count / segments - i * count / segments;
        let times = if matches!(cache, CacheState::Miss) {
            due
        } else {
            due.min(1)
        };
        for _ in 0..times {
            run_routine(profile, layout, node, u, true, cache, tell, charge);
        }
    }
}

/// One execution of `node`'s routine `u` through `cache`: the routine (the
/// bytecode's dispatch enters it), each callee and the return from it, and
/// the return to the context's method where `back` (an `athrow`'s routine
/// returns into the frame that catches instead). Misses are charged as
/// [`Charge::RoutineLoad`].
#[allow(clippy::too_many_arguments)]
fn run_routine(
    profile: &Profile,
    layout: &Layout,
    node: usize,
    u: &RoutineUse,
    back: bool,
    cache: &mut CacheState,
    tell: &mut dyn FnMut(bool, bool, u32),
    charge: &mut dyn FnMut(Charge),
) {
    let Some((&routine, callees)) = u.methods.split_first() else {
        return;
    };
    let mut access = |method: u32, op: u8, routine: bool, cache: &mut CacheState| {
        let w = layout.words[method as usize];
        let hit = cache.access(method, w);
        tell(true, hit, method);
        if !hit {
            charge(Charge::RoutineLoad {
                node,
                op,
                words: w,
                routine,
            });
        }
    };
    let return_of = |m: u32| profile.methods[m as usize].return_opcode();
    access(routine, u.op, true, cache);
    for &c in callees {
        access(c, INVOKESTATIC, false, cache);
        access(routine, return_of(c), false, cache);
    }
    if back {
        access(profile.nodes[node].method, return_of(routine), false, cache);
    }
}

/// One execution of `node`'s routine for `op` where the stream shows it
/// ([`Anchors`]), while the context has anchored executions left: the
/// routine, its callees, and (but for `athrow`, whose routine returns into
/// the frame that catches) the return to the context's method.
#[allow(clippy::too_many_arguments)]
fn run_anchored(
    profile: &Profile,
    layout: &Layout,
    node: usize,
    op: u8,
    left: &mut [Vec<u64>],
    cache: &mut CacheState,
    tell: &mut dyn FnMut(bool, bool, u32),
    charge: &mut dyn FnMut(Charge),
) {
    let Some(k) = layout
        .routine_uses
        .get(node)
        .and_then(|uses| uses.iter().position(|u| u.op == op))
    else {
        return;
    };
    if left[node][k] == 0 {
        return;
    }
    left[node][k] -= 1;
    let u = &layout.routine_uses[node][k];
    run_routine(profile, layout, node, u, op != ATHROW, cache, tell, charge);
}

/// Replays the profile's call/return stream through the method cache of
/// `mode`, calling `charge` for every event of the timed region. The cache
/// starts with the entry stack's methods loaded, outermost first; the events
/// before `region_start` change its state only. Returns the region's cache
/// `(hits, misses)`.
/// What a replay saw of the method cache in the region: its hits and
/// misses, and the misses (loads) by the profile's method index.
struct Replayed {
    hits: u64,
    misses: u64,
    loads: Vec<u64>,
}

fn replay(profile: &Profile, layout: &Layout, mode: CacheMode, mut charge: impl FnMut(Charge)) -> Replayed {
    let mut cache = match mode {
        CacheMode::Hit => CacheState::Hit,
        CacheMode::Miss => CacheState::Miss,
        CacheMode::Fifo(cfg) => CacheState::Fifo(MethodCache::new(cfg)),
    };
    let words = &layout.words;
    let mut stack: Vec<u32> = if profile.entry_stack.is_empty() {
        vec![0]
    } else {
        profile.entry_stack.clone()
    };
    for id in &stack {
        let m = profile.nodes[*id as usize].method;
        cache.access(m, words[m as usize]);
    }
    let region_start = profile.region_start as usize;
    let (mut hits, mut misses) = (0u64, 0u64);
    let mut loads = vec![0u64; profile.methods.len()];
    let mut tell = |counted: bool, hit: bool, method: u32| {
        if counted {
            *(if hit { &mut hits } else { &mut misses }) += 1;
            if !hit {
                if let Some(l) = loads.get_mut(method as usize) {
                    *l += 1;
                }
            }
        }
    };
    let mut seen = vec![0u64; profile.nodes.len()];
    let mut left: Vec<Vec<u64>> = layout
        .routine_uses
        .iter()
        .map(|uses| uses.iter().map(|u| u.anchored).collect())
        .collect();
    let mut anchors = Anchors::open(stack.len());
    macro_rules! anchored {
        ($node:expr, $op:expr) => {
            run_anchored(
                profile,
                layout,
                $node,
                $op,
                &mut left,
                &mut cache,
                &mut tell,
                &mut charge,
            )
        };
    }
    // A point where `node`'s method runs again: its share of the routines.
    macro_rules! routines_at {
        ($node:expr, $counted:expr) => {
            replay_routines(
                profile,
                layout,
                $node,
                &mut seen,
                &mut cache,
                $counted,
                &mut tell,
                &mut charge,
            )
        };
    }
    // (One step past the last event: a region that starts there.)
    for k in 0..=profile.events.len() {
        if k == region_start.min(profile.events.len()) {
            // The region's start is a point where its innermost context runs.
            if let Some(&top) = stack.last() {
                routines_at!(top as usize, true);
            }
        }
        let Some(ev) = profile.events.get(k) else { break };
        let counted = k >= region_start;
        match *ev {
            Event::Invoke(n) => {
                let node = n as usize;
                let parent = stack.last().copied();
                if anchors.enter(profile, parent, n) && counted {
                    if let Some(p) = parent.filter(|p| !layout.skipped[*p as usize]) {
                        anchored!(p as usize, NEW);
                    }
                }
                stack.push(n);
                if layout.skipped[node] {
                    continue;
                }
                let m = profile.nodes[node].method;
                if layout.whole[m as usize] {
                    if counted {
                        charge(Charge::Whole { node });
                    }
                    continue;
                }
                let hit = cache.access(m, words[m as usize]);
                tell(counted, hit, m);
                if counted {
                    charge(Charge::Invoke { node, hit });
                }
                routines_at!(node, counted);
            }
            Event::Return | Event::Unwind => {
                let Some(done) = stack.pop() else { continue };
                anchors.leave();
                let node = done as usize;
                if counted && matches!(ev, Event::Unwind) && !layout.skipped[node] {
                    anchored!(node, ATHROW);
                }
                if layout.skipped[node] || layout.whole[profile.nodes[node].method as usize] {
                    continue;
                }
                // An exception leaves frames without returning into them:
                // JOP's athrow routine returns into the frame that catches
                // it only (the one below the last frame left).
                let passed = matches!(ev, Event::Unwind) && matches!(profile.events.get(k + 1), Some(Event::Unwind));
                let to = stack.last().map(|&top| {
                    if passed {
                        return (top, true);
                    }
                    let m = profile.nodes[top as usize].method;
                    let hit = cache.access(m, words[m as usize]);
                    tell(counted, hit, m);
                    (top, hit)
                });
                if counted {
                    charge(Charge::Return {
                        node,
                        to,
                        unwind: matches!(ev, Event::Unwind),
                    });
                }
                if let Some((top, _)) = to {
                    routines_at!(top as usize, counted);
                }
            }
        }
    }
    Replayed { hits, misses, loads }
}

/// Estimates `profile` with `model` under `mode`.
pub fn estimate(profile: &Profile, model: &TimingModel, mode: CacheMode) -> Estimate {
    estimate_sized(profile, model, mode, &|_| None)
}

/// Like [`estimate`], with method sizes in words from `size_of` where it
/// knows them (e.g. as JOP's image holds them) instead of the host class files'.
pub fn estimate_sized(
    profile: &Profile,
    model: &TimingModel,
    mode: CacheMode,
    size_of: &dyn Fn(&jopcal_profile::MethodInfo) -> Option<u32>,
) -> Estimate {
    let layout = Layout::new(profile, model, size_of);
    let collections = collector_work(profile, model);
    let mut e = Estimate {
        benchmark: profile.benchmark.clone(),
        model: model.name.clone(),
        cache: mode,
        cycles: 0.0,
        bytecodes: 0,
        java_dispatch_cycles: 0.0,
        java_routine_cycles: 0.0,
        invoke_return_cycles: 0.0,
        cache_load_cycles: 0.0,
        cache_hits: 0,
        cache_misses: 0,
        per_opcode: BTreeMap::new(),
        per_node: vec![0.0; profile.nodes.len()],
        jvm_entered_bytecodes: layout.jvm_entered_bytecodes,
        routine_entries: BTreeMap::new(),
        complete: profile.complete,
        collections,
        collector_cycles: collector_cycles(&collections, model),
        loads_by_method: Vec::new(),
    };
    let words = &layout.words;
    let whole_costs: Vec<f64> = profile
        .methods
        .iter()
        .map(|m| whole_cost(model, m).unwrap_or(0.0))
        .collect();
    let elements = elements_per_call_by_node(profile);
    let b_hit = model.load_cost(true, 0);
    // Accumulators indexed by opcode byte; JOP's own bytecodes are kept by name.
    let mut op_count = [0u64; 256];
    let mut op_cycles = [0f64; 256];
    let mut jop_ops: BTreeMap<String, (u64, f64)> = BTreeMap::new();
    // 1. Everything but invokes and returns: a fixed cost per execution.
    for (i, op, count) in layout.plain(profile) {
        let (fixed, routine) = model.cost_parts(op, b_hit, 0);
        if model.is_java(op) {
            e.java_dispatch_cycles += fixed * count as f64;
            e.java_routine_cycles += routine * count as f64;
        }
        let c = (fixed + routine) * count as f64;
        op_count[op as usize] += count;
        op_cycles[op as usize] += c;
        e.per_node[i] += c;
    }
    // 1b. Executions priced by the operand that decides their microcode's path.
    for (i, op, v, count) in layout.by_operand(profile) {
        let c = operand_priced(model, op, v) * count as f64;
        op_count[op as usize] += count;
        op_cycles[op as usize] += c;
        e.per_node[i] += c;
    }
    // 1c. JOP's athrow routine reads each frame's exception table.
    for (&i, (entries, tests)) in &layout.searches {
        let c = handler_search_cost(model, *entries, tests);
        let entry = jop_ops.entry(HANDLER_SEARCH_KEY.to_string()).or_insert((0, 0.0));
        entry.0 += entries;
        entry.1 += c;
        e.per_node[i] += c;
    }
    // 2. Invokes and returns, event by event. Costs depend only on the node and
    // on hit or miss, so they are resolved once per node: [miss, hit].
    let mut invoke_cost = vec![[0.0f64; 2]; profile.nodes.len()];
    let mut return_cost = vec![[0.0f64; 2]; profile.nodes.len()];
    for (k, node) in profile.nodes.iter().enumerate().skip(1) {
        let m = node.method as usize;
        for hit in [false, true] {
            let b = model.load_cost(hit, words[m]);
            invoke_cost[k][usize::from(hit)] = entry_cost(model, node.invoke_opcode, is_routine(node), b, words[m]);
            if let Some(p) = node.parent {
                let caller = profile.nodes[p as usize].method as usize;
                let b = model.load_cost(hit, words[caller]);
                return_cost[k][usize::from(hit)] = model.cost(profile.methods[m].return_opcode(), b, words[caller]);
            }
        }
    }
    // The serial line's wait for each printed character, on a clock that
    // runs through the region event by event (each context's own bytecodes
    // counted at its entry, an average per call): what the UART sends
    // while the program computes is not waited for.
    let own_per_call: Vec<f64> = e
        .per_node
        .iter()
        .zip(&profile.nodes)
        .map(|(c, n)| c / n.calls.max(1) as f64)
        .collect();
    let mut clock = 0.0f64;
    let mut line = SerialLine::new(layout.serial_free);
    let replayed = replay(profile, &layout, mode, |ch| match ch {
        Charge::Invoke { node, hit } => {
            let n = &profile.nodes[node];
            let c = invoke_cost[node][usize::from(hit)];
            clock += c + own_per_call[node];
            if !hit {
                e.cache_load_cycles += c - invoke_cost[node][1];
            }
            op_count[n.invoke_opcode as usize] += 1;
            op_cycles[n.invoke_opcode as usize] += c;
            if is_routine(n) {
                e.java_dispatch_cycles += c;
                let name = crate::jop::any_opcode_name(n.invoke_opcode).to_string();
                *e.routine_entries.entry(name).or_default() += 1;
            }
            e.per_node[n.parent.unwrap_or(0) as usize] += c;
        }
        Charge::Whole { node } => {
            let n = &profile.nodes[node];
            let mi = &profile.methods[n.method as usize];
            let name = if mi.class == JOP_NATIVE_CLASS {
                crate::jop::native_method_bytecode(&mi.name)
            } else {
                format!("method {}", mi.qualified())
            };
            let c = match (is_serial_write(mi), serial_char(model)) {
                (true, Some(frame)) => line.write(clock, frame),
                _ if elements[node] > 0.0 => whole_cost_at(model, mi, elements[node]).unwrap_or(0.0),
                _ => whole_costs[n.method as usize],
            };
            clock += c;
            let entry = jop_ops.entry(name).or_insert((0, 0.0));
            entry.0 += 1;
            entry.1 += c;
            e.per_node[n.parent.unwrap_or(0) as usize] += c;
        }
        Charge::RoutineLoad {
            node,
            op,
            words,
            routine,
        } => {
            let c = routine_miss_cost(model, op, words, routine);
            clock += c;
            e.cache_load_cycles += c;
            let entry = jop_ops.entry(ROUTINE_MISSES_KEY.to_string()).or_insert((0, 0.0));
            entry.0 += 1;
            entry.1 += c;
            e.per_node[node] += c;
        }
        Charge::Return { node, to, unwind } => {
            let n = &profile.nodes[node];
            let op = profile.methods[n.method as usize].return_opcode();
            let (c, as_hit) = match to {
                Some((top, hit)) => {
                    // The stack top is the caller context; when the stream
                    // and the tree disagree, cost the return by the method.
                    if n.parent == Some(top) {
                        (return_cost[node][usize::from(hit)], return_cost[node][1])
                    } else {
                        let w = words[profile.nodes[top as usize].method as usize];
                        (
                            model.cost(op, model.load_cost(hit, w), w),
                            model.cost(op, model.load_cost(true, w), w),
                        )
                    }
                }
                None => (model.cost(op, b_hit, 0), model.cost(op, b_hit, 0)),
            };
            if !unwind {
                clock += c;
                e.cache_load_cycles += c - as_hit;
                op_count[op as usize] += 1;
                op_cycles[op as usize] += c;
                e.per_node[node] += c;
            } else if let Some(per_frame) = model.params().get(IMPL_UNWIND).copied() {
                // JOP's athrow routine walks the frame, searches its handlers
                // and leaves it: a cost of its own per frame left; its return
                // into the frame that catches may miss the method cache.
                let miss = unwind_miss(
                    model,
                    to.map(|(top, hit)| (words[profile.nodes[top as usize].method as usize], hit)),
                );
                clock += per_frame + miss;
                e.cache_load_cycles += miss;
                let entry = jop_ops.entry(UNWIND_KEY.to_string()).or_insert((0, 0.0));
                entry.0 += 1;
                entry.1 += per_frame + miss;
                e.per_node[node] += per_frame + miss;
            }
        }
    });
    e.cache_hits = replayed.hits;
    e.cache_misses = replayed.misses;
    e.loads_by_method = replayed.loads;
    for op in 0..=255u8 {
        let i = op as usize;
        if op_count[i] > 0 || op_cycles[i] != 0.0 {
            e.per_opcode
                .insert(crate::jop::any_opcode_name(op).to_string(), (op_count[i], op_cycles[i]));
            if is_invoke(op) || is_return(op) {
                e.invoke_return_cycles += op_cycles[i];
            }
        }
    }
    for (name, v) in jop_ops {
        e.per_opcode.insert(name, v);
    }
    // (A routine's cache miss is no bytecode of its own.)
    e.bytecodes = e
        .per_opcode
        .iter()
        .filter(|(k, _)| k.as_str() != ROUTINE_MISSES_KEY)
        .map(|(_, v)| v.0)
        .sum();
    e.cycles = e.per_opcode.values().map(|v| v.1).sum::<f64>() + e.collector_cycles;
    e
}

/// A profile replayed once through one cache mode, reduced to counts that
/// any *values* of the model's parameters price: every charged bytecode
/// falls in a bucket (opcode, words of the method it enters or returns to,
/// cache hit) whose cost is `cost(op, load_cost(hit, words), words)`
/// (bytecodes other than invokes and returns as a hit of size 0), and every
/// whole-priced call is counted by method. A calibration replays each
/// profile once per candidate cache instead of once per trial of the
/// parameters; [`Tally::price`] equals [`estimate_sized`]'s cycles for any
/// model with the same structure (the same opcodes implemented in Java, the
/// same whole-priced methods, printing priced by the line or not) as the one
/// the tally was made with.
#[derive(Debug, Clone)]
pub struct Tally {
    pub benchmark: String,
    pub cache: CacheMode,
    /// `((opcode, words, hit, routine), executions)`; `routine`: the entry
    /// of a runtime routine by its bytecode (priced by its dispatch alone).
    buckets: Vec<((u8, u32, bool, bool), u64)>,
    /// `(method, calls, elements)` of the whole-priced methods (elements:
    /// what their calls worked on, `n` of their formula; see [`whole_cost_at`]).
    wholes: Vec<(jopcal_profile::MethodInfo, u64, f64)>,
    /// `((opcode, operand), executions)` priced by their operand.
    operands: Vec<((u8, u8), u64)>,
    /// The printed characters' waits on the serial line, in frames
    /// (`serial_char`), as the estimate with the tally's model has them.
    serial_frames: f64,
    /// Charged executions per opcode.
    op_counts: [u64; 256],
    /// The collector's work, priced by the model's parameters.
    collections: crate::collector::Collections,
    /// Frames left by an exception (priced by `impl_unwind` where the model has it).
    unwinds: u64,
    /// The exception tables' entries read and class tests by operand
    /// ([`handler_searches`]).
    handler_entries: u64,
    handler_tests: BTreeMap<u8, u64>,
    /// `((op, words, routine), misses)` of JOP's runtime routines in the
    /// method cache, each priced as what it adds to a hit.
    routine_misses: Vec<((u8, u32, bool), u64)>,
    pub cache_hits: u64,
    pub cache_misses: u64,
}

impl Tally {
    /// Replays `profile` under `mode` with the structure of `model` and the
    /// method sizes of `size_of` (as [`estimate_sized`]).
    pub fn new(
        profile: &Profile,
        model: &TimingModel,
        mode: CacheMode,
        size_of: &dyn Fn(&jopcal_profile::MethodInfo) -> Option<u32>,
    ) -> Tally {
        let layout = Layout::new(profile, model, size_of);
        let words = &layout.words;
        // Printing by the line: what the characters wait depends on when
        // they are written, so it is the estimate's with `model`, in frames.
        let line = serial_char(model);
        let by_line = line.is_some();
        let serial_frames = match (line, profile.methods.iter().find(|m| is_serial_write(m))) {
            (Some(frame), Some(write)) => {
                let e = estimate_sized(profile, model, mode, size_of);
                // The estimate's entry of a whole-priced method.
                let key = format!("method {}", write.qualified());
                e.per_opcode.get(&key).map_or(0.0, |(_, c)| c / frame)
            }
            _ => 0.0,
        };
        let mut buckets: std::collections::HashMap<(u8, u32, bool, bool), u64> = std::collections::HashMap::new();
        let mut wholes: BTreeMap<u32, (u64, f64)> = BTreeMap::new();
        let elements = elements_per_call_by_node(profile);
        for (_, op, count) in layout.plain(profile) {
            *buckets.entry((op, 0, true, false)).or_default() += count;
        }
        let mut operands: BTreeMap<(u8, u8), u64> = BTreeMap::new();
        for (_, op, v, count) in layout.by_operand(profile) {
            *operands.entry((op, v)).or_default() += count;
        }
        let mut unwinds = 0u64;
        let prices_unwinds = model.params().contains_key(IMPL_UNWIND);
        let (mut handler_entries, mut handler_tests) = (0u64, BTreeMap::<u8, u64>::new());
        for (entries, tests) in layout.searches.values() {
            handler_entries += entries;
            for (k, n) in tests {
                *handler_tests.entry(*k).or_default() += n;
            }
        }
        let mut routine_misses: BTreeMap<(u8, u32, bool), u64> = BTreeMap::new();
        let Replayed { hits, misses, .. } = replay(profile, &layout, mode, |ch| match ch {
            Charge::RoutineLoad { op, words, routine, .. } => {
                *routine_misses.entry((op, words, routine)).or_default() += 1
            }
            Charge::Invoke { node, hit } => {
                let n = &profile.nodes[node];
                *buckets
                    .entry((n.invoke_opcode, words[n.method as usize], hit, is_routine(n)))
                    .or_default() += 1;
            }
            Charge::Whole { node } => {
                let n = &profile.nodes[node];
                if !(by_line && is_serial_write(&profile.methods[n.method as usize])) {
                    let w = wholes.entry(n.method).or_default();
                    w.0 += 1;
                    w.1 += elements[node];
                }
            }
            Charge::Return { node, to, unwind } => {
                let key = match to {
                    Some((top, hit)) => (words[profile.nodes[top as usize].method as usize], hit),
                    None => (0, true),
                };
                if !unwind {
                    let op = profile.methods[profile.nodes[node].method as usize].return_opcode();
                    *buckets.entry((op, key.0, key.1, false)).or_default() += 1;
                } else {
                    unwinds += 1;
                    if !key.1 && prices_unwinds {
                        *routine_misses.entry((ARETURN, key.0, false)).or_default() += 1;
                    }
                }
            }
        });
        let mut op_counts = [0u64; 256];
        // A routine's entries are not executions its routine parameter prices.
        for (&(op, _, _, routine), &n) in &buckets {
            if !routine {
                op_counts[op as usize] += n;
            }
        }
        let mut buckets: Vec<_> = buckets.into_iter().collect();
        buckets.sort_unstable_by_key(|b| b.0);
        Tally {
            benchmark: profile.benchmark.clone(),
            cache: mode,
            buckets,
            wholes: wholes
                .into_iter()
                .map(|(m, (n, k))| (profile.methods[m as usize].clone(), n, k))
                .collect(),
            operands: operands.into_iter().collect(),
            serial_frames,
            op_counts,
            collections: collector_work(profile, model),
            unwinds,
            handler_entries,
            handler_tests,
            routine_misses: routine_misses.into_iter().collect(),
            cache_hits: hits,
            cache_misses: misses,
        }
    }

    /// The estimated cycles under `model`'s parameter values.
    pub fn price(&self, model: &TimingModel) -> f64 {
        let buckets: f64 = self
            .buckets
            .iter()
            .map(|&((op, words, hit, routine), n)| {
                n as f64 * entry_cost(model, op, routine, model.load_cost(hit, words), words)
            })
            .sum();
        let wholes: f64 = self
            .wholes
            .iter()
            .map(|(m, n, k)| *n as f64 * whole_cost_at(model, m, k / *n as f64).unwrap_or(0.0))
            .sum();
        let operands: f64 = self
            .operands
            .iter()
            .map(|&((op, v), n)| n as f64 * operand_priced(model, op, v))
            .sum();
        let routine_misses: f64 = self
            .routine_misses
            .iter()
            .map(|&((op, words, routine), n)| n as f64 * routine_miss_cost(model, op, words, routine))
            .sum();
        buckets
            + wholes
            + operands
            + routine_misses
            + self.serial_frames * serial_char(model).unwrap_or(0.0)
            + collector_cycles(&self.collections, model)
            + self.unwinds as f64 * model.params().get(IMPL_UNWIND).copied().unwrap_or(0.0)
            + handler_search_cost(model, self.handler_entries, &self.handler_tests)
    }

    /// Whether `model` still prices as a whole every call this tally counted
    /// that way. A model that prices some of them by their host code again
    /// (a whole-call parameter nothing could fit) needs a tally of its own.
    pub fn fits(&self, model: &TimingModel) -> bool {
        self.wholes.iter().all(|(m, _, _)| whole_cost(model, m).is_some())
    }

    /// Charged executions of `op` (invokes and returns included) that its
    /// routine parameter prices: not the entries of a profiled routine.
    pub fn executions(&self, op: u8) -> u64 {
        self.op_counts[op as usize]
    }

    /// Number of distinct buckets (a measure of pricing work).
    pub fn buckets(&self) -> usize {
        self.buckets.len() + self.wholes.len() + self.operands.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cache::CacheConfig;
    use jopcal_profile::{MethodInfo, Node};
    use std::path::Path;

    fn two_calls() -> Profile {
        jopcal_profile::examples::two_calls()
    }

    fn jop(r: &str) -> TimingModel {
        let mut m =
            TimingModel::load(&Path::new(env!("CARGO_MANIFEST_DIR")).join("../../calibration/jop-wcet.toml")).unwrap();
        m.apply_overrides(&[r.to_string(), "w=2".into()]).unwrap();
        m
    }

    #[test]
    fn the_linkers_typed_field_accesses_are_priced_as_jops_own_opcodes() {
        let devel = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../calibration/jop-devel.toml");
        let mut m = TimingModel::load(&devel).unwrap();
        m.set_param("impl_putfield_ref", 130.0).unwrap();
        let mut p = two_calls();
        p.nodes[1].opcodes.insert(0xb5, 5); // putfield x5: 3 of a reference, 1 of a long
        p.nodes[1].opcodes.insert(0xb4, 2); // getfield x2: both of a reference
        p.nodes[1]
            .fields
            .insert((0xb5, jopcal_profile::FieldKind::Reference), 3);
        p.nodes[1].fields.insert((0xb5, jopcal_profile::FieldKind::Wide), 1);
        p.nodes[1]
            .fields
            .insert((0xb4, jopcal_profile::FieldKind::Reference), 2);
        let e = estimate(&p, &m, CacheMode::Hit);
        let b = m.load_cost(true, 0);
        let dispatch = m.native_cost_at("putfield_ref", b, 0).unwrap();
        assert_eq!(e.per_opcode["putfield_ref"], (3, 3.0 * (dispatch + 130.0)));
        assert_eq!(e.per_opcode["putfield_long"].0, 1);
        assert_eq!(e.per_opcode["putfield_long"].1, m.native_cost("putfield_long").unwrap());
        assert_eq!(e.per_opcode["putfield"], (1, m.cost(0xb5, b, 0)));
        assert_eq!(e.per_opcode["getfield_ref"].0, 2);
        assert!(!e.per_opcode.contains_key("getfield"));
        assert_eq!(e.java_routine_cycles, 3.0 * 130.0);
        // Without the linker's typing, every access is a JVM field access.
        let mut plain = m.clone();
        plain.linker.typed_fields = false;
        let e = estimate(&p, &plain, CacheMode::Hit);
        assert_eq!(e.per_opcode["putfield"].0, 5);
        assert!(!e.per_opcode.contains_key("putfield_ref"));
    }

    #[test]
    fn hand_computed_cycles_in_every_cache_mode() {
        let p = two_calls();
        let m = jop("r=1");
        // hit: iadd 1 + 2 x iload_0 1 + 2 x invokestatic 74 + 2 x ireturn 23
        assert_eq!(estimate(&p, &m, CacheMode::Hit).cycles, 197.0);
        // miss: invoke b = 6 + 34*2 = 74 -> 74 + 37 = 111; return to run b = 6 + 6*2 = 18 -> 23 + 8 = 31
        assert_eq!(
            estimate(&p, &m, CacheMode::Miss).cycles,
            1.0 + 2.0 + 2.0 * 111.0 + 2.0 * 31.0
        );
        // 1 KB / 16 blocks: f misses once, then everything hits.
        let big = estimate(
            &p,
            &m,
            CacheMode::Fifo(CacheConfig {
                bytes: 1024,
                blocks: 16,
            }),
        );
        assert_eq!(big.cycles, 1.0 + 2.0 + 111.0 + 23.0 + 74.0 + 23.0);
        assert_eq!((big.cache_hits, big.cache_misses), (3, 1));
        // The miss adds 111 - 74 cycles; what misses add is what hits would not cost.
        assert_eq!(big.cache_load_cycles, 37.0);
        assert_eq!(estimate(&p, &m, CacheMode::Hit).cache_load_cycles, 0.0);
        let miss = estimate(&p, &m, CacheMode::Miss);
        assert_eq!(miss.cache_load_cycles, miss.cycles - 197.0);
        // 128 B / 2 blocks: f (33 words) takes both blocks and evicts run, every access misses.
        let small = estimate(&p, &m, CacheMode::Fifo(CacheConfig { bytes: 128, blocks: 2 }));
        assert_eq!(small.cycles, 1.0 + 2.0 + 2.0 * 111.0 + 2.0 * 31.0);
        assert_eq!(small.per_opcode["invokestatic"], (2, 222.0));
        assert_eq!(small.per_node, vec![1.0 + 222.0, 2.0 + 62.0]);
    }

    #[test]
    fn contexts_the_jvm_entered_are_not_charged() {
        // A static initializer (entered by the JVM) under run(), which calls f once more.
        let mut p = two_calls();
        p.methods.push(MethodInfo {
            class: "t/T".into(),
            name: "<clinit>".into(),
            descriptor: "()V".into(),
            bytecode_len: 40,
            native: false,
            synchronized: false,
        });
        let mut clinit = Node {
            parent: Some(0),
            method: 2,
            callsite: 0,
            invoke_opcode: 0,
            calls: 1,
            ..Node::default()
        };
        clinit.opcodes.insert(0x03, 5); // iconst_0 x5
        clinit.opcodes.insert(0xb8, 1);
        clinit.opcodes.insert(0xb1, 1);
        let mut f_below = p.nodes[1].clone();
        f_below.parent = Some(2);
        f_below.calls = 1;
        f_below.opcodes = [(0x1a, 1), (0xac, 1)].into();
        p.nodes.push(clinit);
        p.nodes.push(f_below);
        p.events
            .splice(0..0, [Event::Invoke(2), Event::Invoke(3), Event::Return, Event::Return]);
        p.validate().unwrap();
        let m = jop("r=1");
        for mode in [CacheMode::Hit, CacheMode::Miss] {
            let e = estimate(&p, &m, mode);
            assert_eq!(e.cycles, estimate(&two_calls(), &m, mode).cycles);
            assert_eq!(e.jvm_entered_bytecodes, 7 + 2);
        }
    }

    /// A table over jop-wcet.toml with `params` and `methods` (TOML lines).
    fn over_wcet(params: &str, methods: &str) -> TimingModel {
        let dir = tempfile::tempdir().unwrap();
        let base = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../calibration/jop-wcet.toml");
        let file = dir.path().join("m.toml");
        std::fs::write(
            &file,
            format!(
                "[model]\nname = \"m\"\nbase = \"{}\"\n[params]\n{params}\n[methods]\n{methods}\n",
                base.display()
            ),
        )
        .unwrap();
        TimingModel::load(&file).unwrap()
    }

    #[test]
    fn methods_priced_as_a_whole_replace_their_host_code() {
        let m = over_wcet("f_cost = 500", "\"t.T.f(I)I\" = \"f_cost + r\"");
        let p = two_calls();
        let e = estimate(&p, &m, CacheMode::Hit);
        // run's iadd (1) plus two calls of f at 501 each: no invoke, return or body costs.
        assert_eq!(e.cycles, 1.0 + 2.0 * 501.0);
        assert_eq!(e.per_opcode["method t.T.f(I)I"], (2, 1002.0));
    }

    /// two_calls with f as jopcal's stand-in of System.arraycopy, whose 2
    /// calls copied 10 elements (its `iinc`s): each call is priced by the
    /// elements it copied, the sum exact for a formula linear in them.
    #[test]
    fn an_arraycopy_is_priced_by_the_elements_it_copied() {
        let (class, name, descriptor) = jopcal_profile::routed::ARRAYCOPY;
        let m = over_wcet(
            "impl_arraycopy = 300\nimpl_arraycopy_element = 9",
            &format!("\"java.lang.System.arraycopy{descriptor}\" = \"impl_arraycopy + impl_arraycopy_element * n\""),
        );
        let mut p = two_calls();
        p.methods[1].class = class.into();
        p.methods[1].name = name.into();
        p.methods[1].descriptor = descriptor.into();
        p.nodes[1].opcodes.insert(0x84, 10);
        for mode in [CacheMode::Hit, CacheMode::Miss] {
            let e = estimate(&p, &m, mode);
            // run's iadd (1) plus two calls at 300 and 10 elements at 9.
            assert_eq!(e.cycles, 1.0 + 2.0 * 300.0 + 10.0 * 9.0, "{mode:?}");
            let tally = Tally::new(&p, &m, mode, &|_| None);
            assert_eq!(tally.price(&m), e.cycles, "{mode:?}");
        }
        // The JDK's native (no stand-in's iinc): the calls alone.
        p.nodes[1].opcodes.remove(&0x84);
        assert_eq!(estimate(&p, &m, CacheMode::Hit).cycles, 1.0 + 2.0 * 300.0);
    }

    #[test]
    fn sizes_from_elsewhere_replace_the_class_files() {
        let m = jop("r=1");
        let mut p = two_calls();
        // f as JOP's image holds it: 10 words instead of 33.
        let sized = estimate_sized(&p, &m, CacheMode::Miss, &|mi| (mi.name == "f").then_some(10));
        p.methods[1].bytecode_len = 40;
        assert_eq!(sized.cycles, estimate(&p, &m, CacheMode::Miss).cycles);
        assert_ne!(sized.cycles, estimate(&two_calls(), &m, CacheMode::Miss).cycles);
    }

    #[test]
    fn java_implemented_cycles_are_reported_apart() {
        let mut p = two_calls();
        p.nodes[1].opcodes.insert(0x6c, 3); // idiv x3
        let mut m = jop("r=1");
        m.set_param("impl_idiv", 40.0).unwrap();
        let e = estimate(&p, &m, CacheMode::Hit);
        assert_eq!(e.java_dispatch_cycles, 3.0 * 82.0);
        assert_eq!(e.java_routine_cycles, 3.0 * 40.0);
        assert_eq!(e.cycles, 197.0 + 3.0 * 122.0);
    }

    /// two_calls with f as idiv's routine: the caller's two invokes of f are
    /// the two idivs whose routine the host profile ran (`jopcal_profile::routed`).
    fn routed_idiv() -> Profile {
        let mut p = two_calls();
        p.nodes[0].opcodes.remove(&0xb8);
        p.nodes[1].invoke_opcode = 0x6c;
        p.validate().unwrap();
        p
    }

    #[test]
    fn a_profiled_routine_costs_its_dispatch_and_its_own_bytecodes() {
        let mut m = jop("r=1");
        m.set_param("impl_idiv", 40.0).unwrap();
        for mode in [CacheMode::Hit, CacheMode::Miss] {
            let invoked = estimate(&two_calls(), &m, mode);
            let routed = estimate(&routed_idiv(), &m, mode);
            let b = m.load_cost(mode == CacheMode::Hit, words_of(130));
            let (dispatch, routine) = m.cost_parts(0x6c, b, words_of(130));
            assert_eq!(routine, 40.0);
            // Each entry costs idiv's dispatch instead of invokestatic; the
            // routine parameter is not charged: the routine's bytecodes are.
            let invoke = m.cost(0xb8, b, words_of(130));
            assert_eq!(
                routed.cycles,
                invoked.cycles - 2.0 * invoke + 2.0 * dispatch,
                "{mode:?}"
            );
            assert_eq!(routed.java_routine_cycles, 0.0);
            assert_eq!(routed.java_dispatch_cycles, 2.0 * dispatch);
            assert_eq!(routed.per_opcode["idiv"], (2, 2.0 * dispatch));
            assert_eq!(routed.routine_entries["idiv"], 2);
            let tally = Tally::new(&routed_idiv(), &m, mode, &|_| None);
            assert_eq!(tally.price(&m), routed.cycles);
            assert_eq!(tally.executions(0x6c), 0, "no execution for impl_idiv to price");
        }
    }

    /// JOP's published table with `sections` of a model deriving from it.
    fn wcet_with(tag: &str, sections: &str) -> TimingModel {
        let dir = std::env::temp_dir().join(format!("jopcal-{tag}-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let base = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../calibration/jop-wcet.toml");
        let file = dir.join("m.toml");
        let text = format!("[model]\nname = \"m\"\nbase = \"{}\"\n{sections}", base.display());
        std::fs::write(&file, text).unwrap();
        let m = TimingModel::load(&file).unwrap();
        let _ = std::fs::remove_dir_all(&dir);
        m
    }

    #[test]
    fn a_routine_the_model_runs_in_microcode_costs_the_bytecode_alone() {
        let micro = wcet_with("routine", "[opcodes]\nidiv = \"35\"\n");
        let e = estimate(&routed_idiv(), &micro, CacheMode::Hit);
        // run's iadd and two idivs at 35; f's body, entry and return are not JOP's.
        assert_eq!(e.cycles, micro.cost(0x60, 0.0, 0) + 2.0 * 35.0);
        assert_eq!(e.per_opcode["idiv"], (2, 70.0));
        assert_eq!(
            Tally::new(&routed_idiv(), &micro, CacheMode::Miss, &|_| None).price(&micro),
            e.cycles
        );
    }

    /// two_calls whose root runs `new` twice, with `t.T.g(I)I` (words
    /// `g_words`) in the method table for a routine: no context runs it.
    fn allocating(g_words: u32) -> Profile {
        let mut p = two_calls();
        p.nodes[0].opcodes.insert(0xbb, 2);
        p.methods.push(MethodInfo {
            class: "t/T".into(),
            name: "g".into(),
            descriptor: "(I)I".into(),
            bytecode_len: g_words * 4,
            native: false,
            synchronized: false,
        });
        p.validate().unwrap();
        p
    }

    #[test]
    fn a_routines_methods_take_the_method_cache_where_the_table_names_them() {
        let m = wcet_with("routines", "[routines]\nnew = [\"t.T.g(I)I\", \"t.T.f(I)I\"]\n");
        let plain = jop("r=1");
        assert_eq!(m.routine_methods(0xbb), ["t.T.g(I)I", "t.T.f(I)I"]);
        // The root's two `new`s spread over its three points (the region's
        // start, the returns from f): the first and the last point run one.
        let p = allocating(60);
        let layout = Layout::new(&p, &m, &|_| None);
        assert_eq!(layout.segments[0], 3);
        assert_eq!(layout.segments[1], 2);
        // Every access a miss: each `new` enters g (new's dispatch), calls f
        // and returns to g, returns to run.
        let e = estimate(&p, &m, CacheMode::Miss);
        let w = |n: usize| words_of(p.methods[n].bytecode_len);
        let per_new = routine_miss_cost(&m, 0xbb, w(2), true)
            + routine_miss_cost(&m, INVOKESTATIC, w(1), false)
            + routine_miss_cost(&m, 0xac, w(2), false)
            + routine_miss_cost(&m, 0xac, w(0), false);
        assert!(per_new > 0.0);
        let without = estimate(&p, &plain, CacheMode::Miss);
        assert!(
            (e.cycles - without.cycles - 2.0 * per_new).abs() < 1e-9,
            "{} {}",
            e.cycles,
            without.cycles
        );
        assert_eq!(e.per_opcode[ROUTINE_MISSES_KEY].0, 8);
        assert_eq!(e.bytecodes, without.bytecodes, "a miss is no bytecode");
        assert_eq!(e.cache_misses, without.cache_misses + 8);
        // Always hit: nothing to load.
        assert_eq!(
            estimate(&p, &m, CacheMode::Hit).cycles,
            estimate(&p, &plain, CacheMode::Hit).cycles
        );
        // A cache that holds run and f but not g as well: g loads at each `new`.
        let small = CacheMode::Fifo(CacheConfig { bytes: 256, blocks: 2 });
        let fifo = estimate(&p, &m, small);
        assert!(fifo.cache_misses > estimate(&p, &plain, small).cache_misses);
        for mode in [CacheMode::Miss, small] {
            let tally = Tally::new(&p, &m, mode, &|_| None);
            assert!(
                (tally.price(&m) - estimate(&p, &m, mode).cycles).abs() < 1e-9,
                "{mode:?}"
            );
        }
        // Without the routine's method in the profile (no image), nothing moves.
        let mut bare = allocating(60);
        bare.methods.pop();
        assert_eq!(estimate(&bare, &m, CacheMode::Miss).cycles, without.cycles);
    }

    #[test]
    fn a_new_runs_its_routine_at_its_constructors_invoke_and_an_athrow_at_its_unwind() {
        let m = wcet_with(
            "anchored",
            "[routines]\nnew = [\"t.T.g(I)I\"]\nathrow = [\"t.T.g(I)I\"]\n",
        );
        // run() makes two objects (f as their constructor, entered by
        // invokespecial), and f throws once, leaving its frame.
        let mut p = allocating(60);
        p.methods[1].name = "<init>".into();
        p.nodes[1].invoke_opcode = INVOKESPECIAL;
        p.nodes[1].opcodes.insert(ATHROW, 1);
        *p.events.last_mut().unwrap() = Event::Unwind;
        p.validate().unwrap();
        let layout = Layout::new(&p, &m, &|_| None);
        let anchored = |node: usize, op: u8| {
            layout.routine_uses[node]
                .iter()
                .find(|u| u.op == op)
                .map(|u| (u.count, u.anchored))
        };
        assert_eq!(anchored(0, NEW), Some((2, 2)));
        assert_eq!(anchored(1, ATHROW), Some((1, 1)));
        // A constructor's first constructor call is its super(): no `new`.
        // f, entered once, calls a constructor (node 2, method g) twice.
        let mut within = allocating(60);
        within.methods[1].name = "<init>".into();
        within.methods.push(MethodInfo {
            name: "<init>".into(),
            descriptor: "()V".into(),
            ..within.methods[1].clone()
        });
        within.nodes[0].opcodes.remove(&NEW);
        within.nodes[1].calls = 1;
        within.nodes[1].opcodes.insert(NEW, 1);
        within.nodes.push(jopcal_profile::Node {
            parent: Some(1),
            method: 3,
            callsite: 5,
            invoke_opcode: INVOKESPECIAL,
            calls: 2,
            ..jopcal_profile::Node::default()
        });
        within.events = vec![
            Event::Invoke(1),
            Event::Invoke(2),
            Event::Return,
            Event::Invoke(2),
            Event::Return,
            Event::Return,
        ];
        within.validate().unwrap();
        let l = Layout::new(&within, &m, &|_| None);
        assert_eq!((l.routine_uses[1][0].count, l.routine_uses[1][0].anchored), (1, 1));
        // Each anchored run loads g where the cache holds run and f alone.
        let small = CacheMode::Fifo(CacheConfig { bytes: 256, blocks: 2 });
        let e = estimate(&p, &m, small);
        assert_eq!(e.loads_by_method[2], 3, "{:?}", e.loads_by_method);
        let tally = Tally::new(&p, &m, small, &|_| None);
        assert!((tally.price(&m) - e.cycles).abs() < 1e-9);
    }

    #[test]
    fn a_recorded_operand_prices_its_execution_by_its_path() {
        let m = wcet_with(
            "operands",
            "[operands.lshl]\n\"0\" = \"7\"\n\"1-31\" = \"28\"\n\"32-63\" = \"22\"\n",
        );
        let mut p = two_calls();
        p.nodes[1].opcodes.insert(0x79, 3); // lshl x3: counts 0 and 40 recorded, one not
        p.nodes[1].operands.insert((0x79, 0), 1);
        p.nodes[1].operands.insert((0x79, 40), 1);
        p.validate().unwrap();
        let formula = m.cost(0x79, 0.0, 0);
        let without = estimate(&two_calls(), &m, CacheMode::Hit).cycles;
        let e = estimate(&p, &m, CacheMode::Hit);
        assert_eq!(e.cycles, without + 7.0 + 22.0 + formula);
        assert_eq!(e.per_opcode["lshl"], (3, 7.0 + 22.0 + formula));
        assert_eq!(
            Tally::new(&p, &m, CacheMode::Miss, &|_| None).price(&m),
            estimate(&p, &m, CacheMode::Miss).cycles
        );
        // A table without [operands] (JopSim's) prices every execution by the formula.
        let plain = jop("r=1");
        assert_eq!(
            estimate(&p, &plain, CacheMode::Hit).cycles,
            estimate(&two_calls(), &plain, CacheMode::Hit).cycles + 3.0 * plain.cost(0x79, 0.0, 0)
        );
    }

    #[test]
    fn a_synchronized_method_exits_its_monitor_on_each_normal_return() {
        let mut m = jop("r=1");
        m.linker.synchronized_methods = true;
        let mut p = two_calls();
        p.methods[1].synchronized = true;
        // The host stepped over one of f's two ireturns (as after a recursive
        // call): the events still return twice, and JOP exits the monitor twice.
        p.nodes[1].opcodes.insert(0xac, 1);
        let e = estimate(&p, &m, CacheMode::Hit);
        assert_eq!(e.per_opcode["monitorenter"].0, 2);
        assert_eq!(e.per_opcode["monitorexit"].0, 2);
        // A call an exception leaves runs no monitorexit (the linker puts it
        // before the returns only).
        p.events[3] = Event::Unwind;
        let e = estimate(&p, &m, CacheMode::Hit);
        assert_eq!(e.per_opcode["monitorexit"].0, 1);
        assert_eq!(e.per_opcode["aload_0"].0, 3);
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(3000))]
        /// Whatever decodes as a profile can be estimated without a panic.
        #[test]
        fn decoded_profiles_never_panic_the_estimator(pos in 0usize..300, byte in proptest::prelude::any::<u8>()) {
            let mut b = jopcal_profile::encode(&two_calls());
            let p = pos % b.len();
            b[p] = byte;
            if let Ok(p) = jopcal_profile::decode(&b) {
                static MODEL: std::sync::OnceLock<TimingModel> = std::sync::OnceLock::new();
                let m = MODEL.get_or_init(|| jop("r=1"));
                for mode in [CacheMode::Hit, CacheMode::Miss, CacheMode::Fifo(CacheConfig { bytes: 64, blocks: 2 })] {
                    let _ = estimate(&p, m, mode);
                }
            }
        }
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(200))]
        /// A tally made once prices every parameter setting as a full estimate does.
        #[test]
        fn a_tally_prices_like_the_estimate(r in 0u32..6, w in 0u32..6, idiv in 0u32..500, mode in 0usize..4) {
            let mut p = two_calls();
            p.nodes[1].opcodes.insert(0x6c, 3); // idiv, Java-implemented
            p.events.push(Event::Invoke(1));
            p.events.push(Event::Unwind);
            let modes = [CacheMode::Hit, CacheMode::Miss, CacheMode::Fifo(CacheConfig { bytes: 128, blocks: 2 }), CacheMode::Fifo(CacheConfig { bytes: 1024, blocks: 16 })];
            let start = jop("r=1");
            let sized = |mi: &jopcal_profile::MethodInfo| (mi.name == "f").then_some(20);
            let tally = Tally::new(&p, &start, modes[mode], &sized);
            let mut m = start.clone();
            m.set_param("r", f64::from(r)).unwrap();
            m.set_param("w", f64::from(w)).unwrap();
            m.set_param("impl_idiv", f64::from(idiv)).unwrap();
            let e = estimate_sized(&p, &m, modes[mode], &sized);
            proptest::prop_assert!((tally.price(&m) - e.cycles).abs() <= 1e-9 * e.cycles.abs().max(1.0));
            proptest::prop_assert_eq!((tally.cache_hits, tally.cache_misses), (e.cache_hits, e.cache_misses));
            proptest::prop_assert_eq!(tally.executions(0x6c), 3);
        }
    }

    #[test]
    fn a_search_of_exception_tables_is_priced_by_entries_read_and_classes_tested() {
        let base = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../calibration/jop-wcet.toml");
        let text = format!(
            "[model]\nname = \"t\"\nbase = \"{}\"\n[params]\nimpl_handler_entry = 10\nimpl_handler_test = 100\n\
             impl_type_fail = 50\nimpl_type_step = 3\n[operands.instanceof]\n\"0-127\" = \"7 + impl_type_step * n\"\n\
             \"128-254\" = \"impl_type_fail + impl_type_step * (n - 128)\"\n",
            base.canonicalize().unwrap().display()
        );
        let m = TimingModel::parse(&text, Path::new("/tmp/t.toml")).unwrap();
        let mut p = two_calls();
        let plain = estimate(&p, &m, CacheMode::Hit).cycles;
        let x = &mut p.exceptions;
        let t = x.thrown_index(&["t/E", "java/lang/Throwable", "java/lang/Object"].map(String::from));
        let entry = |handler, catch: Option<&str>| jopcal_profile::HandlerEntry {
            start: 0,
            end: 10,
            handler,
            catch: catch.map(String::from),
        };
        // In f: a failed test (3 classes walked), then a match one step up.
        x.tables.insert(
            p.nodes[1].method,
            vec![entry(20, Some("t/Other")), entry(30, Some("java/lang/Throwable"))],
        );
        x.arrivals.insert(
            jopcal_profile::Arrival {
                node: 1,
                pc: 5,
                thrown: t,
                handler: Some(30),
            },
            2,
        );
        let e = estimate(&p, &m, CacheMode::Hit);
        let per_search = 2.0 * 10.0 + (50.0 + 3.0 * 3.0 + 100.0) + (7.0 + 3.0 + 100.0);
        assert_eq!(e.per_opcode[HANDLER_SEARCH_KEY], (4, 2.0 * per_search));
        assert!((e.cycles - plain - 2.0 * per_search).abs() < 1e-9);
        let tally = Tally::new(&p, &m, CacheMode::Hit, &|_| None);
        assert!((tally.price(&m) - e.cycles).abs() < 1e-9);
        // A table without the parameters prices no search.
        assert_eq!(
            estimate(&p, &jop("r=1"), CacheMode::Hit)
                .per_opcode
                .get(HANDLER_SEARCH_KEY),
            None
        );
    }

    #[test]
    fn frames_left_by_exceptions_and_the_collector_are_priced_where_the_model_has_them() {
        let base = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../calibration/jop-wcet.toml");
        let text = format!(
            "[model]\nname = \"t\"\nbase = \"{}\"\n[params]\nimpl_unwind = 40\ngc_collection = 1000\ngc_handle = 2\n",
            base.canonicalize().unwrap().display()
        );
        let m = TimingModel::parse(&text, Path::new("/tmp/t.toml")).unwrap();
        let mut p = two_calls();
        let plain = estimate(&p, &m, CacheMode::Hit).cycles;
        p.events.push(Event::Invoke(1));
        p.events.push(Event::Unwind);
        let returned = {
            let mut q = p.clone();
            *q.events.last_mut().unwrap() = Event::Return;
            estimate(&q, &m, CacheMode::Hit).cycles
        };
        let e = estimate(&p, &m, CacheMode::Hit);
        assert_eq!(e.per_opcode[UNWIND_KEY], (1, 40.0));
        // The unwound call costs its invoke and the frame's 40, not a return.
        let ireturn = returned - plain - (e.cycles - plain - 40.0);
        assert!(ireturn > 0.0, "{returned} {plain} {}", e.cycles);
        // 120 words in 10 objects from 100 free, then 1000 after each
        // collection: 1 collection, with 5 + 10 * 0.83 handles in use.
        p.allocations.insert(12, 10);
        p.heap_start = Some(jopcal_profile::HeapStart {
            free_words: 100,
            free_handles: 50,
            refill_words: 1000,
            refill_handles: 50,
            semi_words: 1000,
            handles: 55,
        });
        let with_gc = estimate(&p, &m, CacheMode::Hit);
        assert_eq!(with_gc.collections.count, 1.0);
        let expected = 1000.0 + 2.0 * (5.0 + 10.0 * 100.0 / 120.0);
        assert!(
            (with_gc.collector_cycles - expected).abs() < 1e-9,
            "{:?}",
            with_gc.collections
        );
        assert!((with_gc.cycles - e.cycles - expected).abs() < 1e-9);
        // A tally prices both as the estimate does.
        let tally = Tally::new(&p, &m, CacheMode::Hit, &|_| None);
        assert!((tally.price(&m) - with_gc.cycles).abs() < 1e-9);
        let mut cheaper = m.clone();
        cheaper.set_param("impl_unwind", 10.0).unwrap();
        cheaper.set_param("gc_collection", 500.0).unwrap();
        let e2 = estimate(&p, &cheaper, CacheMode::Hit);
        assert!((tally.price(&cheaper) - e2.cycles).abs() < 1e-9);
        assert!((with_gc.cycles - e2.cycles - 530.0).abs() < 1e-9);
    }

    #[test]
    fn the_linkers_iinc_replacement_is_priced_per_form() {
        assert_eq!(iinc_replacement(3, 1), [0x1d, 0x04, 0x60, 0x3e]); // iload_3 iconst_1 iadd istore_3
        assert_eq!(iinc_replacement(5, -1), [0x15, 0x02, 0x60, 0x36]); // iload iconst_m1 iadd istore
        assert_eq!(iinc_replacement(0, 126), [0x1a, 0x10, 0x60, 0x3b]); // bipush
        assert_eq!(iinc_replacement(0, 127), [0x1a, 0x11, 0x60, 0x3b]); // sipush (the linker's bound)
        let mut p = two_calls();
        p.nodes[1].opcodes.insert(0x84, 10);
        p.nodes[1].iinc.insert((1, 1), 6); // 4 cycles each as iload_1 iconst_1 iadd istore_1
        p.nodes[1].iinc.insert((7, 100), 3); // iload 2 + bipush 2 + iadd 1 + istore 2 = 7
                                             // One iinc without operands keeps its table entry.
        p.validate().unwrap();
        let mut m = jop("r=1");
        let plain = estimate(&p, &m, CacheMode::Hit);
        assert_eq!(
            plain.cycles,
            197.0 + 10.0 * 8.0,
            "without [linker], iinc costs its entry"
        );
        m.linker.replace_iinc = true;
        let linked = estimate(&p, &m, CacheMode::Hit);
        assert_eq!(linked.cycles, 197.0 + 6.0 * 4.0 + 3.0 * 7.0 + 8.0);
        assert_eq!(linked.per_opcode["iinc"], (1, 8.0));
        assert_eq!(linked.per_opcode["bipush"], (3, 6.0));
        let tally = Tally::new(&p, &m, CacheMode::Hit, &|_| None);
        assert_eq!(tally.price(&m), linked.cycles);
    }

    /// `run` prints 5 characters: PrintStream.print (the host's code), the
    /// serial line's array write, 5 character writes, each with the host's
    /// file write below it.
    fn printing() -> Profile {
        let mut p = two_calls();
        let m = |class: &str, name: &str, descriptor: &str| MethodInfo {
            class: class.into(),
            name: name.into(),
            descriptor: descriptor.into(),
            bytecode_len: 40,
            native: false,
            synchronized: false,
        };
        p.methods
            .push(m("java/io/PrintStream", "print", "(Ljava/lang/String;)V"));
        p.methods.push(m(SERIAL_LINE_CLASS, "write", "([BII)V"));
        p.methods.push(m(SERIAL_LINE_CLASS, "write", "(I)V"));
        p.methods.push(m("java/io/FileOutputStream", "write", "(I)V"));
        for (method, parent, calls) in [(2, 0, 1), (3, 2, 1), (4, 3, 5), (5, 4, 5)] {
            let mut n = Node {
                parent: Some(parent),
                method,
                callsite: 1,
                invoke_opcode: 0xb6,
                calls,
                ..Node::default()
            };
            n.opcodes.insert(0x2a, 10 * calls); // aload_0: host code
            n.opcodes.insert(0xb1, calls);
            p.nodes.push(n);
        }
        p.nodes[0].opcodes.insert(0xb6, 1);
        p.events.extend([Event::Invoke(2), Event::Invoke(3)]);
        for _ in 0..5 {
            p.events
                .extend([Event::Invoke(4), Event::Invoke(5), Event::Return, Event::Return]);
        }
        p.events.extend([Event::Return, Event::Return]);
        p
    }

    #[test]
    fn a_printed_character_costs_the_lines_frame_where_the_model_knows_it() {
        let devel = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../calibration/jop-devel.toml");
        let mut m = TimingModel::load(&devel).unwrap();
        let p = printing();
        let without = estimate(&two_calls(), &m, CacheMode::Hit).cycles;
        // By the line: 5 frames; the host's printing code and the stand-in's are not charged.
        m.set_param("serial_char", 7568.0).unwrap();
        let e = estimate(&p, &m, CacheMode::Hit);
        assert_eq!(e.cycles, without + 5.0 * 7568.0);
        assert_eq!(
            e.per_opcode["method jopcal.host.SerialLine.write(I)V"],
            (5, 5.0 * 7568.0)
        );
        // A calibration's tally prices it the same.
        let t = Tally::new(&p, &m, CacheMode::Hit, &|_| None);
        assert_eq!(t.price(&m), e.cycles);
        // The UART's FIFO takes the first 3 of the region without a wait.
        m.set_param("serial_free", 3.0).unwrap();
        let e = estimate(&p, &m, CacheMode::Hit);
        assert_eq!(e.cycles, without + 2.0 * 7568.0);
        assert_eq!(
            e.per_opcode["method jopcal.host.SerialLine.write(I)V"],
            (5, 2.0 * 7568.0)
        );
        assert_eq!(Tally::new(&p, &m, CacheMode::Hit, &|_| None).price(&m), e.cycles);
        m.set_param("serial_free", 0.0).unwrap();
        // Unknown line: the host's printing code as any library code, the
        // stand-in's still not (it is not the program's).
        m.set_param("serial_char", 0.0).unwrap();
        let e = estimate(&p, &m, CacheMode::Hit);
        let b = m.load_cost(true, 0);
        let print = 10.0 * m.cost(0x2a, b, 0) + m.cost(0xb6, b, 0) + m.cost(0xb1, b, 0);
        assert_eq!(e.cycles, without + print);
    }

    #[test]
    fn the_serial_line_waits_only_while_its_fifo_is_full() {
        // A burst of 5 into a line that takes 3: the 4th and the 5th wait a frame each.
        let mut line = SerialLine::new(3);
        let mut now = 0.0;
        let mut waits = Vec::new();
        for _ in 0..5 {
            let w = line.write(now, 100.0);
            now += w;
            waits.push(w);
        }
        assert_eq!(waits, [0.0, 0.0, 0.0, 100.0, 100.0]);
        // Work between the characters longer than a frame: no wait at all.
        let mut line = SerialLine::new(3);
        assert!((0..10).all(|k| line.write(250.0 * k as f64, 100.0) == 0.0));
        // A line whose FIFO is unknown waits a whole frame for each.
        let mut line = SerialLine::new(0);
        assert_eq!(line.write(0.0, 100.0), 100.0);
        assert_eq!(line.write(1e6, 100.0), 100.0);
    }

    #[test]
    fn native_rd_is_charged_as_jopsys_rd() {
        let mut p = two_calls();
        p.methods.push(MethodInfo {
            class: JOP_NATIVE_CLASS.into(),
            name: "rd".into(),
            descriptor: "(I)I".into(),
            bytecode_len: 30,
            native: false,
            synchronized: false,
        });
        let mut rd = Node {
            parent: Some(0),
            method: 2,
            callsite: 9,
            invoke_opcode: 0xb8,
            calls: 1,
            ..Node::default()
        };
        rd.opcodes.insert(0x1a, 7); // the host stand-in's own code: not charged
        rd.opcodes.insert(0xac, 1);
        p.nodes.push(rd);
        p.nodes[0].opcodes.insert(0xb8, 3);
        p.events.push(Event::Invoke(2));
        p.events.push(Event::Return);
        let e = estimate(&p, &jop("r=1"), CacheMode::Hit);
        assert_eq!(e.cycles, 197.0 + 5.0);
        assert_eq!(e.per_opcode["jopsys_rd"], (1, 5.0));
    }
}
