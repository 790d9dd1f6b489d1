//! The profile data model.

use crate::error::InvalidProfile;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// The `iinc` and `wide` opcodes (an `iinc` with a wide index executes as `wide`).
const IINC: u8 = 0x84;
const WIDE: u8 = 0xc4;

/// What a field access's field holds, where JOP's linker treats it apart:
/// a reference (`L...;` or an array) or a two-word value (`long`, `double`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum FieldKind {
    Reference,
    Wide,
}

impl FieldKind {
    /// The kind of a field of `descriptor`; `None` for one-word primitives.
    pub fn of_descriptor(descriptor: &str) -> Option<FieldKind> {
        match descriptor.as_bytes().first() {
            Some(b'L' | b'[') => Some(FieldKind::Reference),
            Some(b'J' | b'D') => Some(FieldKind::Wide),
            _ => None,
        }
    }
}

/// The field access opcodes: getstatic, putstatic, getfield, putfield.
pub const FIELD_OPCODES: std::ops::RangeInclusive<u8> = 0xb2..=0xb5;

/// A method as the profiled JVM loaded it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct MethodInfo {
    /// Internal class name, e.g. `jopcal/suite/Sieve`.
    pub class: String,
    pub name: String,
    pub descriptor: String,
    /// Length of the method's bytecode in bytes (0 for native and abstract methods).
    pub bytecode_len: u32,
    pub native: bool,
    /// Declared `synchronized` (JOP's linker turns it into monitorenter and
    /// monitorexit around the body; the host JVM locks without bytecodes).
    #[serde(default)]
    pub synchronized: bool,
}

impl MethodInfo {
    /// `class.name descriptor`, as in JOP's link maps.
    pub fn qualified(&self) -> String {
        format!("{}.{}{}", self.class.replace('/', "."), self.name, self.descriptor)
    }

    /// The parts of a method named as [`MethodInfo::qualified`] names it
    /// (`java.lang.System.currentTimeMillis()J`): the class's internal name
    /// (`java/lang/System`), the method's name and its descriptor.
    pub fn split_qualified(method: &str) -> Option<(String, &str, &str)> {
        let (head, descriptor) = method.split_at(method.find('(')?);
        let (class, name) = head.rsplit_once('.')?;
        Some((class.replace('.', "/"), name, descriptor))
    }

    /// The return opcode this method's normal returns execute (by its descriptor).
    pub fn return_opcode(&self) -> u8 {
        match self.descriptor.rsplit(')').next().and_then(|r| r.chars().next()) {
            Some('V') => 177,
            Some('J') => 173,
            Some('F') => 174,
            Some('D') => 175,
            Some('L' | '[') => 176,
            _ => 172,
        }
    }
}

/// One calling context.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct Node {
    /// Parent node (none for the root).
    pub parent: Option<u32>,
    /// Index into [`Profile::methods`].
    pub method: u32,
    /// Bytecode index of the invoke in the caller (-1 at the root).
    pub callsite: i32,
    /// Opcode of that invoke; 0 at the root and for contexts the JVM entered
    /// on its own (static initializers, class loading, exception constructors,
    /// upcalls from native code), which no invoke bytecode of the caller ran.
    pub invoke_opcode: u8,
    /// Invocations of this context inside the region.
    pub calls: u64,
    /// Executed bytecodes by exact opcode (index = opcode byte), inside the region.
    pub opcodes: BTreeMap<u8, u64>,
    /// Executions per basic block, keyed by the block's first bytecode index.
    pub blocks: BTreeMap<u32, u64>,
    /// Executions of `iinc` by (local variable index, increment), inside the
    /// region: JOP's linker replaces each `iinc` by a sequence whose cost
    /// depends on both (profiles before format 3 have none). Not in the
    /// serde view (JSON keys are strings); the binary format carries it.
    #[serde(skip)]
    pub iinc: BTreeMap<(u16, i16), u64>,
    /// Executions of field accesses (opcode 0xb2..=0xb5) by the kind of their
    /// field, for the fields whose kind JOP's linker treats apart (the rest of
    /// each opcode's count are one-word primitives). Profiles before format 4
    /// have none. Not in the serde view; the binary format carries it.
    #[serde(skip)]
    pub fields: BTreeMap<(u8, FieldKind), u64>,
    /// Executions of a bytecode whose microcode takes a path by an operand
    /// (`crate::routed_ops::OBSERVED`: a long shift's count, 0 to 63), by
    /// (opcode, that operand), inside the region. Profiles before format 5
    /// have none. Not in the serde view; the binary format carries it.
    #[serde(skip)]
    pub operands: BTreeMap<(u8, u8), u64>,
}

impl Node {
    /// True when the JVM entered this context on its own, not an invoke bytecode.
    pub fn entered_by_jvm(&self) -> bool {
        self.parent.is_some() && self.invoke_opcode == 0
    }

    /// Bytecodes executed in this context.
    pub fn bytecodes(&self) -> u64 {
        self.opcodes.values().sum()
    }
}

/// One entry of the call/return stream.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Event {
    /// The context (node) entered by an invoke.
    Invoke(u32),
    /// A normal return to the caller's context.
    Return,
    /// A frame left by an exception (no return bytecode ran).
    Unwind,
}

/// A complete profile of one benchmark.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Profile {
    pub benchmark: String,
    /// `harness` (between Harness.start() and stop()) or `main` (the dynamic extent of main).
    pub region: String,
    /// False when the program ended abnormally inside the region: the counts are
    /// what was profiled up to that point.
    pub complete: bool,
    pub methods: Vec<MethodInfo>,
    /// Node 0 is the root: the context where the region began.
    pub nodes: Vec<Node>,
    /// Node ids from the outermost frame to the root's context when the region
    /// began, so returns past the root can be replayed (may be empty).
    pub entry_stack: Vec<u32>,
    /// Index of the first event inside the region. The events before it
    /// were tracked from the program's start so that a method-cache replay
    /// starts in the state the target is in when the region begins; they
    /// are not counted.
    pub region_start: u64,
    pub events: Vec<Event>,
    /// Wall time of the region under the profiler, in nanoseconds (0: not
    /// recorded; format 6 on): what profiling the region cost, beside the
    /// same region's time on the plain JVM.
    pub region_nanos: u64,
    /// The region's allocations by their size on JOP: (words the object or
    /// array takes in JOP's heap, allocations of that size). JOP's collector
    /// runs when they fill its heap (format 7 on; empty before, and from a
    /// profiler that does not record them).
    pub allocations: std::collections::BTreeMap<u32, u64>,
    /// The target's heap when the region began, where the target reported
    /// it (the virtual board does): not part of the profile's file, set by
    /// whoever estimates the profile for that target.
    pub heap_start: Option<HeapStart>,
    /// The region's exceptions as JOP's athrow routine searches for their
    /// handlers (format 10 on; empty before).
    pub exceptions: Exceptions,
}

/// One frame an exception arrived in: JOP's athrow routine searches the
/// frame's exception table, entry by entry, for one that covers `pc` and
/// whose class the exception is an instance of (a typed entry costs a
/// call of the runtime's instanceof routine).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Arrival {
    /// The frame's context.
    pub node: u32,
    /// Where in the frame the exception arose: the `athrow`, or the invoke
    /// whose callee it left.
    pub pc: u32,
    /// The exception's class: an index into [`Exceptions::thrown`].
    pub thrown: u32,
    /// The handler the JVM entered in this frame; none when the exception
    /// left it.
    pub handler: Option<u32>,
}

/// One entry of a method's exception table.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct HandlerEntry {
    /// The covered pcs, `start..end`.
    pub start: u32,
    pub end: u32,
    pub handler: u32,
    /// The class caught (internal name); none for every exception (`finally`).
    pub catch: Option<String>,
}

/// What an estimate needs of the region's exceptions: where each arrived,
/// the classes thrown, and the exception tables searched.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Exceptions {
    /// Per class thrown: its internal name and its superclasses', up to
    /// `java/lang/Object` (the walk of JOP's instanceof routine).
    pub thrown: Vec<Vec<String>>,
    /// Arrivals in the region's frames and how often each happened.
    pub arrivals: std::collections::BTreeMap<Arrival, u64>,
    /// The exception tables of the methods the arrivals name, by method.
    pub tables: std::collections::BTreeMap<u32, Vec<HandlerEntry>>,
}

impl Exceptions {
    pub fn is_empty(&self) -> bool {
        self.arrivals.is_empty()
    }

    /// The index of the class whose ancestry is `names` (added if new).
    pub fn thrown_index(&mut self, names: &[String]) -> u32 {
        match self.thrown.iter().position(|t| t.as_slice() == names) {
            Some(i) => i as u32,
            None => {
                self.thrown.push(names.to_vec());
                (self.thrown.len() - 1) as u32
            }
        }
    }
}

/// How JOP's athrow routine searches one frame's table for an exception
/// that arrived at `pc`: the entries it reads, the class tests it makes
/// (each entry that covers `pc` and names a class, by the operand of an
/// `instanceof` that walks the same way, `routed::type_check_operand`),
/// and the handler it finds (none: it leaves the frame).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct FrameSearch {
    pub entries: u32,
    pub tests: Vec<u8>,
    pub handler: Option<u32>,
}

/// JOP's search of `table` for an exception of `ancestry` (its class first)
/// arriving at `pc`: the entries in order, the first that covers `pc` and is
/// untyped or names one of the ancestry's classes is the handler.
pub fn search_table(table: &[HandlerEntry], pc: u32, ancestry: &[String]) -> FrameSearch {
    let mut s = FrameSearch::default();
    for e in table {
        s.entries += 1;
        if pc < e.start || pc >= e.end {
            continue;
        }
        match &e.catch {
            None => {
                s.handler = Some(e.handler);
                return s;
            }
            Some(class) => {
                let op = crate::routed_ops::type_check_operand(ancestry.iter().map(String::as_str), class, false);
                let found = op.is_some_and(|o| o < 128);
                s.tests.extend(op);
                if found {
                    s.handler = Some(e.handler);
                    return s;
                }
            }
        }
    }
    s
}

/// The objects and arrays of an allocation table ((words, count), as
/// [`Profile::allocations`]) and the words they take: `(objects, words)`.
pub fn allocation_totals(allocations: &std::collections::BTreeMap<u32, u64>) -> (u64, u64) {
    allocations
        .iter()
        .fold((0, 0), |(n, w), (words, c)| (n + c, w + u64::from(*words) * c))
}

/// JOP's heap when a timed region begins, as its collector keeps it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HeapStart {
    /// Words allocations can take before the collector runs.
    pub free_words: u32,
    /// Handles left (each object or array takes one).
    pub free_handles: u32,
    /// Words and handles free after a collection: what the heap held when
    /// the run began (the runtime's own objects) survives it.
    pub refill_words: u32,
    pub refill_handles: u32,
    /// Words of a semi-space.
    pub semi_words: u32,
    /// Handles in all.
    pub handles: u32,
}

impl Profile {
    /// Total bytecodes executed in the region.
    pub fn bytecodes(&self) -> u64 {
        self.nodes.iter().map(Node::bytecodes).sum()
    }

    /// Children of each node (indices), built once.
    pub fn children(&self) -> Vec<Vec<u32>> {
        let mut c = vec![Vec::new(); self.nodes.len()];
        for (i, n) in self.nodes.iter().enumerate() {
            if let Some(p) = n.parent {
                c[p as usize].push(i as u32);
            }
        }
        c
    }

    /// Checks internal consistency: indices in range, a tree rooted at 0.
    /// True when the program's own code in the region runs `synchronized`
    /// code: a `monitorenter` or a call of a synchronized method (which JOP's
    /// linker turns into one). Contexts the JVM entered on its own (class
    /// loading, static initializers) and everything below them are the host
    /// JVM's work, not the program's, and do not count.
    pub fn runs_synchronized_code(&self) -> bool {
        const MONITORENTER: u8 = 0xc2;
        let jvm_work = self.jvm_work();
        self.nodes.iter().zip(jvm_work).any(|(n, jvm)| {
            let locks = n.opcodes.get(&MONITORENTER).is_some_and(|c| *c > 0);
            let synchronized = n.calls > 0 && self.methods.get(n.method as usize).is_some_and(|m| m.synchronized);
            !jvm && (locks || synchronized)
        })
    }

    /// Per node: a context the JVM entered on its own (class loading, a
    /// static initializer) or one below it, i.e. the host JVM's work, not the
    /// program's. Parents come before their children, so one pass decides.
    pub fn jvm_work(&self) -> Vec<bool> {
        let mut jvm = vec![false; self.nodes.len()];
        for (i, n) in self.nodes.iter().enumerate() {
            jvm[i] = n.entered_by_jvm() || n.parent.is_some_and(|p| jvm.get(p as usize) == Some(&true));
        }
        jvm
    }

    pub fn validate(&self) -> Result<(), InvalidProfile> {
        if self.nodes.is_empty() {
            return Err(InvalidProfile::NoNodes);
        }
        for (i, n) in self.nodes.iter().enumerate() {
            if n.method as usize >= self.methods.len() {
                return Err(InvalidProfile::UnknownMethod {
                    node: i,
                    method: n.method,
                    methods: self.methods.len(),
                });
            }
            match (i, n.parent) {
                (0, None) => {}
                (0, Some(_)) => return Err(InvalidProfile::RootHasParent),
                (_, None) => return Err(InvalidProfile::NoParent(i)),
                (_, Some(p)) if p as usize >= i => return Err(InvalidProfile::LaterParent { node: i, parent: p }),
                _ => {}
            }
            if i == 0 && n.invoke_opcode != 0 {
                return Err(InvalidProfile::RootInvoke(n.invoke_opcode));
            }
            // A routine of JOP's runtime is entered by the bytecode it implements
            // (`crate::routed_ops`).
            let routed = crate::routed_ops::routable(n.invoke_opcode).is_some();
            if i > 0 && n.invoke_opcode != 0 && !(182..=186).contains(&n.invoke_opcode) && !routed {
                return Err(InvalidProfile::NotAnInvoke {
                    node: i,
                    opcode: n.invoke_opcode,
                });
            }
            if let Some(op) = n
                .opcodes
                .keys()
                .find(|op| jopcal_classfile::opcode::mnemonic(**op).is_none())
            {
                return Err(InvalidProfile::UnknownOpcode { node: i, opcode: *op });
            }
            let forms: u64 = n.iinc.values().fold(0u64, |a, c| a.saturating_add(*c));
            let iincs = n.opcodes.get(&IINC).copied().unwrap_or(0);
            let wides = n.opcodes.get(&WIDE).copied().unwrap_or(0);
            if forms > iincs.saturating_add(wides) {
                return Err(InvalidProfile::IincCounts {
                    node: i,
                    forms,
                    iincs,
                    wides,
                });
            }
            for op in FIELD_OPCODES {
                let typed: u64 = n
                    .fields
                    .range((op, FieldKind::Reference)..=(op, FieldKind::Wide))
                    .fold(0u64, |a, (_, c)| a.saturating_add(*c));
                let executed = n.opcodes.get(&op).copied().unwrap_or(0);
                if typed > executed {
                    return Err(InvalidProfile::FieldCounts {
                        node: i,
                        opcode: op,
                        typed,
                        executed,
                    });
                }
            }
            // A synchronized method's monitorexit is the linker's, one per call at most.
            let monitors = self.methods[n.method as usize].synchronized;
            let executed_of = |op: u8| {
                let own = n.opcodes.get(&op).copied().unwrap_or(0);
                if op == crate::routed_ops::MONITOREXIT && monitors {
                    own.saturating_add(n.calls)
                } else {
                    own
                }
            };
            for op in n
                .operands
                .keys()
                .map(|(op, _)| *op)
                .collect::<std::collections::BTreeSet<u8>>()
            {
                let observed: u64 = n
                    .operands
                    .range((op, 0)..=(op, u8::MAX))
                    .fold(0u64, |a, (_, c)| a.saturating_add(*c));
                if observed > executed_of(op) {
                    return Err(InvalidProfile::OperandCounts {
                        node: i,
                        opcode: op,
                        observed,
                        executed: executed_of(op),
                    });
                }
            }
            if let Some(&(op, value)) = n
                .operands
                .keys()
                .find(|(op, value)| crate::routed_ops::operand_max(*op).is_none_or(|max| *value > max))
            {
                return Err(InvalidProfile::OperandCounts {
                    node: i,
                    opcode: op,
                    observed: u64::from(value),
                    executed: 0,
                });
            }
            if let Some(&(op, _)) = n.fields.keys().find(|(op, _)| !FIELD_OPCODES.contains(op)) {
                return Err(InvalidProfile::FieldCounts {
                    node: i,
                    opcode: op,
                    typed: 1,
                    executed: 0,
                });
            }
        }
        for e in &self.events {
            if let Event::Invoke(id) = e {
                if *id as usize >= self.nodes.len() || *id == 0 {
                    return Err(InvalidProfile::EventNode(*id));
                }
            }
        }
        if self.region_start > self.events.len() as u64 {
            return Err(InvalidProfile::RegionStart {
                start: self.region_start,
                events: self.events.len(),
            });
        }
        for id in &self.entry_stack {
            if *id as usize >= self.nodes.len() {
                return Err(InvalidProfile::EntryStackNode(*id));
            }
        }
        for a in self.exceptions.arrivals.keys() {
            if a.node as usize >= self.nodes.len() {
                return Err(InvalidProfile::ArrivalNode(a.node));
            }
        }
        for m in self.exceptions.tables.keys() {
            if *m as usize >= self.methods.len() {
                return Err(InvalidProfile::TableMethod(*m));
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_qualified_name_splits_back_into_its_parts() {
        let m = MethodInfo {
            class: "a/b/C".into(),
            name: "<init>".into(),
            descriptor: "(Ljava/lang/String;)V".into(),
            bytecode_len: 1,
            native: false,
            synchronized: false,
        };
        let q = m.qualified();
        assert_eq!(
            MethodInfo::split_qualified(&q),
            Some(("a/b/C".to_string(), "<init>", "(Ljava/lang/String;)V"))
        );
        assert_eq!(MethodInfo::split_qualified("code at word 3602"), None);
        assert_eq!(MethodInfo::split_qualified("f()V"), None, "no class");
    }

    #[test]
    fn return_opcode_from_descriptor() {
        let m = |d: &str| MethodInfo {
            class: "a/B".into(),
            name: "m".into(),
            descriptor: d.into(),
            bytecode_len: 1,
            native: false,
            synchronized: false,
        };
        assert_eq!(m("()V").return_opcode(), 177);
        assert_eq!(m("(I)I").return_opcode(), 172);
        assert_eq!(m("(I)Z").return_opcode(), 172);
        assert_eq!(m("()J").return_opcode(), 173);
        assert_eq!(m("()[I").return_opcode(), 176);
        assert_eq!(m("(Ljava/lang/String;)Ljava/lang/Object;").return_opcode(), 176);
        assert_eq!(m("()D").return_opcode(), 175);
        assert_eq!(m("()V").qualified(), "a.B.m()V");
    }

    fn entry(start: u32, end: u32, handler: u32, catch: Option<&str>) -> HandlerEntry {
        HandlerEntry {
            start,
            end,
            handler,
            catch: catch.map(String::from),
        }
    }

    #[test]
    fn a_table_is_searched_entry_by_entry_as_jops_athrow_does() {
        let ancestry: Vec<String> = [
            "t/Range",
            "t/App",
            "java/lang/Exception",
            "java/lang/Throwable",
            "java/lang/Object",
        ]
        .map(String::from)
        .to_vec();
        let table = vec![
            entry(0, 4, 40, Some("t/Other")),  // does not cover pc 10
            entry(8, 20, 50, Some("t/Parse")), // covers it, a class not among the ancestry's
            entry(8, 20, 60, Some("t/App")),   // covers it: one superclass step
            entry(0, 30, 70, None),            // never read
        ];
        let s = search_table(&table, 10, &ancestry);
        assert_eq!(s.entries, 3);
        assert_eq!(s.tests, vec![crate::routed_ops::TYPE_FAILED + 5, 1]);
        assert_eq!(s.handler, Some(60));
        // A pc only the untyped entry covers: every entry read, no test.
        let s = search_table(&table, 25, &ancestry);
        assert_eq!((s.entries, s.tests.len(), s.handler), (4, 0, Some(70)));
        // No entry covers it: the routine leaves the frame after reading all.
        let s = search_table(&table[..3], 30, &ancestry);
        assert_eq!((s.entries, s.tests.len(), s.handler), (3, 0, None));
        assert_eq!(search_table(&[], 3, &ancestry), FrameSearch::default());
    }
}
