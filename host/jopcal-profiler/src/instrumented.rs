//! The instrumenting profiler's raw counts (`jopcal.prof.Rt`, written at
//! the region's end), read into the same [`Tree`] the single-step agent
//! grows, so that both profilers write one profile format.
//!
//! The raw file holds, per calling context, one counter per *segment* of
//! the method's original code (a straight run the rewriter cut: it starts
//! at a branch target, a handler, or after a branch, return, throw or
//! invoke), the pcs where an implicit exception left a segment early, and
//! the operands observed; the original class files; and the owner
//! thread's call/return stream. A bytecode ran as often as its segment
//! began, less the exits before it in the segment; from there the exact
//! opcodes, blocks, `iinc` and field operands follow from the class file
//! as the single-step agent reads them from the JVM.
//!
//! ```text
//! magic "JOPCALR\n", version i32 (3), complete u8, why, benchmark, region
//! (strings: i32 length, UTF-8), region_nanos i64
//! classes i32, each: name, bytes (i32 length, the class file as loaded)
//! methods i32, each: class index i32 (-1: none kept), class, name,
//!   descriptor, flags u8 (1 native, 2 synchronized), segments (i32 count,
//!   i32 start pc each; bit 31: starts at a handler), arms (i32 count, i32
//!   opcode << 8 | operand each: the counters after the segments)
//! nodes i32, each: parent i32 (-1: root), method i32, callsite i32,
//!   invoke opcode u8, calls i64, calls made holding no monitor i64,
//!   counters (i32 count, i64 each), exits (i32 count, (i32 pc, i64 count)
//!   each), operands (i32 count, (i32 opcode << 8 | operand, i64 count) each)
//! region_start i32, events (i32 count, i32 each: 0 return, 1 unwind,
//!   k + 2 invoke entering node k)
//! allocations i32, each: words in JOP's heap i32, count i64 (the region's
//!   `new`, `newarray` and `anewarray` in counted frames)
//! thrown i32, each: names i32 count, then strings (a class thrown, its
//!   superclasses up to java/lang/Object)
//! arrivals i32, each: node i32, pc i32, thrown i32, handler i32 (-1: the
//!   exception left the frame), count i64 (`jopcal_profile::Arrival`)
//! ```
//! All integers are big-endian (Java's `DataOutputStream`).

use crate::tree::{handler_entries, MethodCode, Tree};
use jopcal_classfile::{decode, parse_class};
use jopcal_profile::{routed, Event, MethodInfo, Profile};
use std::collections::{BTreeMap, HashMap};

/// The magic of a raw file.
pub const MAGIC: &[u8; 8] = b"JOPCALR\n";
/// Bit 31 of a segment's pc: the segment starts at an exception handler.
const HANDLER: u32 = 1 << 31;
const ACC_NATIVE: u16 = 0x0100;
const ACC_SYNCHRONIZED: u16 = 0x0020;

/// A raw file that cannot be read: the byte where it went wrong and why.
#[derive(Debug, thiserror::Error)]
#[error("byte {offset}: {message}")]
pub struct RawError {
    pub offset: usize,
    pub message: String,
}

struct Reader<'a> {
    b: &'a [u8],
    at: usize,
}

impl<'a> Reader<'a> {
    fn fail<T>(&self, message: impl Into<String>) -> Result<T, RawError> {
        Err(RawError {
            offset: self.at,
            message: message.into(),
        })
    }
    fn bytes(&mut self, n: usize) -> Result<&'a [u8], RawError> {
        if self.b.len() - self.at < n {
            return self.fail(format!("truncated: {n} more bytes expected"));
        }
        let s = &self.b[self.at..self.at + n];
        self.at += n;
        Ok(s)
    }
    fn u8(&mut self) -> Result<u8, RawError> {
        Ok(self.bytes(1)?[0])
    }
    fn i32(&mut self) -> Result<i32, RawError> {
        let b = self.bytes(4)?;
        Ok(i32::from_be_bytes([b[0], b[1], b[2], b[3]]))
    }
    fn i64(&mut self) -> Result<i64, RawError> {
        let b = self.bytes(8)?;
        Ok(i64::from_be_bytes(b.try_into().expect("8 bytes")))
    }
    fn count(&mut self) -> Result<usize, RawError> {
        let v = self.i32()?;
        if v < 0 || v as usize > self.b.len() - self.at {
            return self.fail(format!("count {v} is more than the bytes left"));
        }
        Ok(v as usize)
    }
    fn u64(&mut self) -> Result<u64, RawError> {
        let v = self.i64()?;
        u64::try_from(v).or_else(|_| self.fail(format!("negative count {v}")))
    }
    fn string(&mut self) -> Result<String, RawError> {
        let n = self.count()?;
        let at = self.at;
        String::from_utf8(self.bytes(n)?.to_vec()).map_err(|_| RawError {
            offset: at,
            message: "not UTF-8".into(),
        })
    }
}

struct RawMethod {
    class: Option<usize>,
    info: MethodInfo,
    segments: Vec<u32>,
    arms: Vec<(u8, u8)>,
}

struct RawNode {
    parent: Option<usize>,
    method: usize,
    callsite: i32,
    op: u8,
    calls: u64,
    held_free: u64,
    counters: Vec<u64>,
    exits: Vec<(u32, u64)>,
    operands: Vec<(u8, u8, u64)>,
}

/// What a raw file says beyond the profile.
#[derive(Debug, Clone, PartialEq)]
pub struct RawFacts {
    /// Wall time of the region under the profiler, in nanoseconds.
    pub region_nanos: u64,
    /// Why the profile is incomplete (empty when it is complete).
    pub why: String,
}

/// Reads a raw file into the profile the single-step agent would write for
/// the same run (spliced as `jopcal_profile::routed` says).
pub fn read_raw(bytes: &[u8]) -> Result<(Profile, RawFacts), RawError> {
    let mut r = Reader { b: bytes, at: 0 };
    if r.bytes(8)? != MAGIC {
        r.at = 0;
        return r.fail("not a raw profile of jopcal's instrumenting profiler");
    }
    let version = r.i32()?;
    if version != 3 {
        return r.fail(format!("version {version}; this jopcal reads version 3"));
    }
    let complete = r.u8()? != 0;
    let why = r.string()?;
    let benchmark = r.string()?;
    let region = r.string()?;
    let region_nanos = u64::try_from(r.i64()?).unwrap_or(0);
    let mut classes = Vec::new();
    for _ in 0..r.count()? {
        let name = r.string()?;
        let n = r.count()?;
        let at = r.at;
        let class = parse_class(r.bytes(n)?).map_err(|e| RawError {
            offset: at + e.offset,
            message: format!("class {name}: {}", e.message),
        })?;
        classes.push(class);
    }
    let mut methods = Vec::new();
    for _ in 0..r.count()? {
        let class = r.i32()?;
        let class = match usize::try_from(class) {
            Ok(c) if c < classes.len() => Some(c),
            Ok(_) => return r.fail(format!("class index {class} out of range")),
            Err(_) => None,
        };
        let (cls, name, descriptor) = (r.string()?, r.string()?, r.string()?);
        let flags = r.u8()?;
        let mut segments = Vec::new();
        for _ in 0..r.count()? {
            segments.push(r.i32()? as u32);
        }
        let mut arms = Vec::new();
        for _ in 0..r.count()? {
            let v = r.i32()?;
            arms.push(((v >> 8) as u8, v as u8));
        }
        methods.push(RawMethod {
            class,
            info: MethodInfo {
                class: cls,
                name,
                descriptor,
                bytecode_len: 0,
                native: flags & 1 != 0,
                synchronized: flags & 2 != 0,
            },
            segments,
            arms,
        });
    }
    let mut nodes: Vec<RawNode> = Vec::new();
    for i in 0..r.count()? {
        let parent = r.i32()?;
        let parent = match usize::try_from(parent) {
            Ok(p) if p < i => Some(p),
            Ok(_) => return r.fail(format!("node {i}'s parent {parent} is not an earlier node")),
            Err(_) if i == 0 => None,
            Err(_) => return r.fail(format!("node {i} has no parent")),
        };
        let method = r.count()?;
        if method >= methods.len() {
            return r.fail(format!("node {i} names method {method} of {}", methods.len()));
        }
        let (callsite, op, calls, held_free) = (r.i32()?, r.u8()?, r.u64()?, r.u64()?);
        let mut counters = Vec::new();
        for _ in 0..r.count()? {
            counters.push(r.u64()?);
        }
        let mut exits = Vec::new();
        for _ in 0..r.count()? {
            exits.push((r.i32()? as u32, r.u64()?));
        }
        let mut operands = Vec::new();
        for _ in 0..r.count()? {
            let k = r.i32()?;
            operands.push(((k >> 8) as u8, k as u8, r.u64()?));
        }
        nodes.push(RawNode {
            parent,
            method,
            callsite,
            op,
            calls,
            held_free,
            counters,
            exits,
            operands,
        });
    }
    let region_start = r.count()?;
    let mut events = Vec::new();
    for _ in 0..r.count()? {
        let e = r.i32()?;
        events.push(match e {
            0 => Event::Return,
            1 => Event::Unwind,
            k if k >= 2 && ((k - 2) as usize) < nodes.len() => Event::Invoke((k - 2) as u32),
            k => return r.fail(format!("event {k} names no node")),
        });
    }
    let mut allocations = Vec::new();
    for _ in 0..r.count()? {
        let words = r.i32()?;
        let count = r.i64()?;
        let (Ok(words), Ok(count)) = (u32::try_from(words), u64::try_from(count)) else {
            return r.fail(format!("{count} allocations of {words} words"));
        };
        allocations.push((words, count));
    }
    let mut thrown = Vec::new();
    for _ in 0..r.count()? {
        let mut names = Vec::new();
        for _ in 0..r.count()? {
            names.push(r.string()?);
        }
        thrown.push(names);
    }
    let mut arrivals = Vec::new();
    for _ in 0..r.count()? {
        let (node, pc, class, handler, count) = (r.i32()?, r.i32()?, r.i32()?, r.i32()?, r.i64()?);
        let known = usize::try_from(node).is_ok_and(|n| n < nodes.len())
            && usize::try_from(class).is_ok_and(|c| c < thrown.len());
        let (true, Ok(pc), Ok(count)) = (known, u32::try_from(pc), u64::try_from(count)) else {
            return r.fail(format!(
                "an arrival of thrown class {class} at pc {pc} of context {node}, {count} times"
            ));
        };
        arrivals.push((node as usize, pc, class as usize, u32::try_from(handler).ok(), count));
    }
    if r.at != bytes.len() {
        return r.fail("bytes after the arrivals");
    }
    if nodes.is_empty() {
        return r.fail("no contexts: the region never began");
    }

    // The methods' code, as the class files hold it; one MethodCode per method identity.
    let mut codes: Vec<std::sync::Arc<MethodCode>> = Vec::new();
    let mut by_name: HashMap<(String, String, String), usize> = HashMap::new();
    let mut code_of = Vec::with_capacity(methods.len());
    for m in &methods {
        let key = (m.info.class.clone(), m.info.name.clone(), m.info.descriptor.clone());
        if let Some(&k) = by_name.get(&key) {
            code_of.push(k);
            continue;
        }
        let mut info = m.info.clone();
        let (code, pool, handlers) = match m.class.map(|c| &classes[c]) {
            Some(cf) => match cf.method(&info.name, &info.descriptor) {
                Some(found) => {
                    info.native = found.access & ACC_NATIVE != 0;
                    info.synchronized = found.access & ACC_SYNCHRONIZED != 0;
                    let code = found.code.as_ref().map(|c| c.bytecode.clone()).unwrap_or_default();
                    let handlers = found
                        .code
                        .as_ref()
                        .map(|c| handler_entries(&c.exception_table, &cf.constant_pool))
                        .unwrap_or_default();
                    (code, cf.constant_pool.clone(), handlers)
                }
                None => (Vec::new(), Vec::new(), Vec::new()),
            },
            None => (Vec::new(), Vec::new(), Vec::new()),
        };
        info.bytecode_len = code.len() as u32;
        let k = codes.len();
        codes.push(std::sync::Arc::new(
            MethodCode::new(k as u32, info, code, &pool).with_handlers(handlers),
        ));
        by_name.insert(key, k);
        code_of.push(k);
    }

    let root = &codes[code_of[nodes[0].method]];
    let mut tree = Tree::new(root);
    for c in &codes {
        tree.register(c);
    }
    let mut ids = vec![0u32; nodes.len()];
    for (i, n) in nodes.iter().enumerate().skip(1) {
        let parent = ids[n.parent.expect("checked: only the root has none")];
        ids[i] = tree.child(parent, n.callsite, &codes[code_of[n.method]], n.op);
    }
    for (i, n) in nodes.iter().enumerate() {
        let id = ids[i];
        let m = &methods[n.method];
        let code = &codes[code_of[n.method]];
        if i > 0 {
            tree.enter_n(id, n.calls);
        }
        count_code(&mut tree, id, code, m, n);
        for &(op, value, count) in &n.operands {
            tree.count_operand_n(id, op, value, count);
        }
        if code.info.native && code.info.synchronized && n.calls > 0 {
            // A synchronized native's return releases the monitor it took on entry.
            tree.count_operand_n(id, routed::MONITOREXIT, routed::MONITOR_RELEASED, n.held_free);
            tree.count_operand_n(id, routed::MONITOREXIT, routed::MONITOR_NESTED, n.calls - n.held_free);
        }
    }
    for (k, e) in events.into_iter().enumerate() {
        if k == region_start {
            tree.mark_region_start();
        }
        tree.event(match e {
            Event::Invoke(n) => Event::Invoke(ids[n as usize]),
            other => other,
        });
    }
    for (words, count) in allocations {
        tree.count_allocation_n(words, count);
    }
    for (node, pc, class, handler, count) in arrivals {
        tree.count_arrival_n(ids[node], pc, &thrown[class], handler, count);
    }
    let mut profile = tree.into_profile(&benchmark, &region, complete);
    profile.region_nanos = region_nanos;
    routed::splice(&mut profile);
    Ok((profile, RawFacts { region_nanos, why }))
}

/// Counts the bytecodes of context `id` from its segments' counters.
fn count_code(tree: &mut Tree, id: u32, code: &MethodCode, m: &RawMethod, n: &RawNode) {
    let Ok(instructions) = decode(&code.code) else { return };
    if instructions.is_empty() {
        return;
    }
    // A method with code but no segments was not rewritten (Object's
    // constructor): it is straight-line, so every bytecode ran once a call.
    let segments: Vec<(u32, bool, u64)> = if m.segments.is_empty() {
        vec![(0, false, n.calls)]
    } else {
        m.segments
            .iter()
            .zip(&n.counters)
            .map(|(&s, &c)| (s & !HANDLER, s & HANDLER != 0, c))
            .collect()
    };
    let exits: BTreeMap<u32, u64> = n.exits.iter().copied().collect();
    let mut seg = 0usize;
    let mut running = 0u64;
    for ins in &instructions {
        while seg + 1 < segments.len() && segments[seg + 1].0 <= ins.pc {
            seg += 1;
        }
        let (start, handler, count) = segments[seg];
        if ins.pc == start {
            running = count;
            if handler && code.block_starting_at(start).is_none() && count > 0 {
                tree.count_handler_n(id, start, count);
            }
        }
        if running > 0 {
            // A pure bridge call the rewrite ran inline is its bytecode.
            let op = code.inlined_bridge_at(ins.pc).unwrap_or(code.code[ins.pc as usize]);
            tree.count_n(id, op, code.block_starting_at(ins.pc), running);
            if let Some((local, inc)) = code.iinc_at(ins.pc) {
                tree.count_iinc_n(id, local, inc, running);
            }
            if jopcal_profile::model::FIELD_OPCODES.contains(&op) {
                if let Some(kind) = code.field_kind_at(ins.pc) {
                    tree.count_field_n(id, op, kind, running);
                }
            }
        }
        // An implicit exception at this bytecode: what follows in the segment ran less.
        if let Some(&e) = exits.get(&ins.pc) {
            running = running.saturating_sub(e);
        }
    }
    let arms = n.counters.get(m.segments.len()..).unwrap_or_default();
    for (&(op, value), &count) in m.arms.iter().zip(arms) {
        if count > 0 {
            tree.count_operand_n(id, op, value, count);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn be32(v: i32) -> [u8; 4] {
        v.to_be_bytes()
    }

    fn string(out: &mut Vec<u8>, s: &str) {
        out.extend(be32(s.len() as i32));
        out.extend(s.as_bytes());
    }

    /// A raw file of one context of a method kept without a class file (a native).
    fn one_native() -> Vec<u8> {
        let mut b = MAGIC.to_vec();
        b.extend(be32(3)); // version
        b.push(1);
        string(&mut b, "");
        string(&mut b, "B");
        string(&mut b, "main");
        b.extend(1234i64.to_be_bytes());
        b.extend(be32(0)); // classes
        b.extend(be32(1)); // methods
        b.extend(be32(-1));
        string(&mut b, "t/T");
        string(&mut b, "main");
        string(&mut b, "([Ljava/lang/String;)V");
        b.push(1);
        b.extend(be32(0));
        b.extend(be32(0));
        b.extend(be32(1)); // nodes
        b.extend(be32(-1));
        b.extend(be32(0));
        b.extend(be32(-1));
        b.push(0);
        b.extend(1i64.to_be_bytes());
        b.extend(0i64.to_be_bytes());
        b.extend(be32(0));
        b.extend(be32(0));
        b.extend(be32(0));
        b.extend(be32(0)); // region start
        b.extend(be32(0)); // events
        b.extend(be32(0)); // allocations
        b.extend(TAIL);
        b
    }

    /// The thrown classes' and arrivals' counts, both 0: the file's end.
    const TAIL: [u8; 8] = [0; 8];

    #[test]
    fn a_raw_file_reads_into_a_profile_with_its_region_time() {
        let (p, facts) = read_raw(&one_native()).unwrap();
        assert!(p.complete);
        assert_eq!(p.region_nanos, 1234);
        assert_eq!(facts.region_nanos, 1234);
        assert_eq!(p.nodes.len(), 1);
        assert!(p.methods[0].native);
        p.validate().unwrap();
        assert!(p.allocations.is_empty());
        // Two sizes of allocation after the events.
        let mut b = one_native();
        b.truncate(b.len() - 12);
        b.extend(be32(2));
        for (words, count) in [(3, 7i64), (12, 1)] {
            b.extend(be32(words));
            b.extend(count.to_be_bytes());
        }
        b.extend(TAIL);
        let (p, _) = read_raw(&b).unwrap();
        assert_eq!(p.allocations, BTreeMap::from([(3, 7), (12, 1)]));
        // One class thrown, arriving twice at pc 4 of the root and caught at 9.
        b.truncate(b.len() - 8);
        b.extend(be32(1));
        b.extend(be32(2));
        string(&mut b, "t/E");
        string(&mut b, "java/lang/Object");
        b.extend(be32(1));
        for v in [0, 4, 0, 9] {
            b.extend(be32(v));
        }
        b.extend(2i64.to_be_bytes());
        let (p, _) = read_raw(&b).unwrap();
        assert_eq!(
            p.exceptions.thrown,
            vec![vec!["t/E".to_string(), "java/lang/Object".to_string()]]
        );
        let (a, n) = p.exceptions.arrivals.iter().next().unwrap();
        assert_eq!((a.node, a.pc, a.thrown, a.handler, *n), (0, 4, 0, Some(9), 2));
        // An arrival of a class never thrown.
        let at = b.len() - 16;
        b[at..at + 4].copy_from_slice(&be32(5));
        assert!(read_raw(&b).unwrap_err().message.contains("thrown class 5"));
    }

    #[test]
    fn a_bad_raw_file_names_the_byte() {
        let b = one_native();
        let e = read_raw(&b[..b.len() - 2]).unwrap_err();
        assert_eq!(e.offset, b.len() - 4, "the arrivals' count, two of its bytes missing");
        assert!(e.message.contains("truncated"), "{e}");
        let e = read_raw(b"JOPCALP\n").unwrap_err();
        assert_eq!(
            (e.offset, e.message.as_str()),
            (0, "not a raw profile of jopcal's instrumenting profiler")
        );
        let mut newer = b.clone();
        newer[11] = 4;
        assert!(read_raw(&newer).unwrap_err().message.contains("version 4"));
        // The events' count (before the allocations') made 1, its event 9.
        let mut bad_event = b[..b.len() - 16].to_vec();
        bad_event.extend(be32(1));
        bad_event.extend(be32(9));
        bad_event.extend(be32(0));
        bad_event.extend(TAIL);
        assert!(read_raw(&bad_event).unwrap_err().message.contains("names no node"));
        let mut negative = b[..b.len() - 12].to_vec();
        negative.extend(be32(1));
        negative.extend(be32(5));
        negative.extend((-1i64).to_be_bytes());
        negative.extend(TAIL);
        assert!(read_raw(&negative)
            .unwrap_err()
            .message
            .contains("-1 allocations of 5 words"));
    }
}
