//! The `.jopprof` binary format, version 10 (versions 2, without the `iinc`
//! operand counts, 3, without the field kinds, 4, without the operands
//! of bytecodes whose microcode path depends on one, 5, without the
//! region's wall time, 6, without the allocations, and 7, whose
//! `lookupswitch` operands do not tell a default from a match and which
//! has no `checkcast` and `instanceof` operands, and 8, whose `checkcast`
//! and `instanceof` operands are superclass steps only, no failed walk nor
//! interface, and 9, without the exceptions' arrivals, still read). All integers are unsigned LEB128
//! varints unless said otherwise; strings are a varint byte length and UTF-8.
//!
//! ```text
//! magic        8 bytes "JOPCALP\n"
//! version      varint (9)
//! flags        varint (bit 0: complete)
//! benchmark    string
//! region       string ("harness" or "main")
//! methods      varint count, then per method:
//!                class string, name string, descriptor string,
//!                bytecode_len varint, flags byte (bit 0: native, bit 1:
//!                synchronized; version 2: 0 or 1, native)
//! nodes        varint count, then per node (node 0 is the root):
//!                parent varint (0 = none, else parent + 1), method varint,
//!                callsite zigzag varint (-1 at the root), invoke_opcode byte
//!                (0 at the root and where the JVM entered the method itself),
//!                calls varint,
//!                opcodes varint count, then (opcode byte, count varint)...
//!                blocks varint count, then (start_pc varint, count varint)...
//!                iinc varint count, then (local varint, increment zigzag
//!                varint, count varint)... (version 3 on)
//!                fields varint count, then (opcode byte 0xb2..=0xb5, kind
//!                byte: 0 reference, 1 long or double, count varint)...
//!                (version 4 on)
//!                operands varint count, then (opcode byte, operand byte,
//!                count varint)... (version 5 on; see
//!                `routed_ops::operand_max` for what each opcode's means)
//! entry_stack  varint count, then node ids
//! region_start varint: index of the first event inside the region (the
//!              events before it were tracked for the method cache only)
//! region_nanos varint: the region's wall time under the profiler, in ns
//!              (0: not recorded; version 6 on)
//! allocations  varint count, then (words varint, count varint)...: the
//!              region's allocations by their size in JOP's heap (version 7 on)
//! thrown       varint count, then per class thrown: varint count, then
//!              names (the class, its superclasses up to java/lang/Object)
//!              (version 10 on, as the two below)
//! arrivals     varint count, then (node varint, pc varint, thrown varint,
//!              handler varint (0: none, else its pc + 1), count varint)...:
//!              the frames an exception arrived in, where, and the handler
//!              the JVM entered there
//! tables       varint count, then (method varint, entries varint count,
//!              then (start varint, end varint, handler varint, catch string
//!              (empty: every exception))...): the exception tables searched
//! events       varint count, then per event: 0 = return, 1 = unwind,
//!                k + 2 = invoke entering node k
//! ```
//! Nothing may follow the events. A reader rejects a newer version, and any
//! truncation or inconsistency, naming the byte offset.

pub use crate::error::ProfileError;
use crate::model::{Event, FieldKind, MethodInfo, Node, Profile};
use jopcal_classfile::opcode::mnemonic;
use serde_json::{json, Map, Value};
use std::path::{Path, PathBuf};

pub const MAGIC: &[u8; 8] = b"JOPCALP\n";
pub const FORMAT_VERSION: u64 = 10;
/// The oldest version this reader accepts.
pub const OLDEST_VERSION: u64 = 2;
/// File extension of binary profiles.
pub const EXTENSION: &str = "jopprof";

fn put(out: &mut Vec<u8>, mut v: u64) {
    loop {
        let b = (v & 0x7f) as u8;
        v >>= 7;
        if v == 0 {
            out.push(b);
            return;
        }
        out.push(b | 0x80);
    }
}

/// The event count and the events, the file's last part.
fn put_events(o: &mut Vec<u8>, events: &[Event]) {
    put(o, events.len() as u64);
    for e in events {
        put(
            o,
            match e {
                Event::Return => 0,
                Event::Unwind => 1,
                Event::Invoke(k) => u64::from(*k) + 2,
            },
        );
    }
}

/// The exceptions' sections (version 10).
fn put_exceptions(o: &mut Vec<u8>, x: &crate::model::Exceptions) {
    put(o, x.thrown.len() as u64);
    for names in &x.thrown {
        put(o, names.len() as u64);
        for n in names {
            put_str(o, n);
        }
    }
    put(o, x.arrivals.len() as u64);
    for (a, c) in &x.arrivals {
        put(o, u64::from(a.node));
        put(o, u64::from(a.pc));
        put(o, u64::from(a.thrown));
        put(o, a.handler.map_or(0, |h| u64::from(h) + 1));
        put(o, *c);
    }
    put(o, x.tables.len() as u64);
    for (m, entries) in &x.tables {
        put(o, u64::from(*m));
        put(o, entries.len() as u64);
        for e in entries {
            put(o, u64::from(e.start));
            put(o, u64::from(e.end));
            put(o, u64::from(e.handler));
            put_str(o, e.catch.as_deref().unwrap_or(""));
        }
    }
}

fn put_str(out: &mut Vec<u8>, s: &str) {
    put(out, s.len() as u64);
    out.extend_from_slice(s.as_bytes());
}

fn zigzag(v: i64) -> u64 {
    ((v << 1) ^ (v >> 63)) as u64
}

fn unzigzag(v: u64) -> i64 {
    ((v >> 1) as i64) ^ -((v & 1) as i64)
}

/// Encodes a profile.
pub fn encode(p: &Profile) -> Vec<u8> {
    let mut o = Vec::with_capacity(64 + p.events.len() * 2 + p.nodes.len() * 16);
    o.extend_from_slice(MAGIC);
    put(&mut o, FORMAT_VERSION);
    put(&mut o, u64::from(p.complete));
    put_str(&mut o, &p.benchmark);
    put_str(&mut o, &p.region);
    put(&mut o, p.methods.len() as u64);
    for m in &p.methods {
        put_str(&mut o, &m.class);
        put_str(&mut o, &m.name);
        put_str(&mut o, &m.descriptor);
        put(&mut o, u64::from(m.bytecode_len));
        o.push(u8::from(m.native) | u8::from(m.synchronized) << 1);
    }
    put(&mut o, p.nodes.len() as u64);
    for n in &p.nodes {
        put(&mut o, n.parent.map_or(0, |x| u64::from(x) + 1));
        put(&mut o, u64::from(n.method));
        put(&mut o, zigzag(i64::from(n.callsite)));
        o.push(n.invoke_opcode);
        put(&mut o, n.calls);
        put(&mut o, n.opcodes.len() as u64);
        for (op, c) in &n.opcodes {
            o.push(*op);
            put(&mut o, *c);
        }
        put(&mut o, n.blocks.len() as u64);
        for (pc, c) in &n.blocks {
            put(&mut o, u64::from(*pc));
            put(&mut o, *c);
        }
        put(&mut o, n.iinc.len() as u64);
        for ((local, inc), c) in &n.iinc {
            put(&mut o, u64::from(*local));
            put(&mut o, zigzag(i64::from(*inc)));
            put(&mut o, *c);
        }
        put(&mut o, n.fields.len() as u64);
        for ((op, kind), c) in &n.fields {
            o.push(*op);
            o.push(match kind {
                FieldKind::Reference => 0,
                FieldKind::Wide => 1,
            });
            put(&mut o, *c);
        }
        put(&mut o, n.operands.len() as u64);
        for ((op, value), c) in &n.operands {
            o.push(*op);
            o.push(*value);
            put(&mut o, *c);
        }
    }
    put(&mut o, p.entry_stack.len() as u64);
    for id in &p.entry_stack {
        put(&mut o, u64::from(*id));
    }
    put(&mut o, p.region_start);
    put(&mut o, p.region_nanos);
    put(&mut o, p.allocations.len() as u64);
    for (words, c) in &p.allocations {
        put(&mut o, u64::from(*words));
        put(&mut o, *c);
    }
    put_exceptions(&mut o, &p.exceptions);
    put_events(&mut o, &p.events);
    o
}

struct Reader<'a> {
    data: &'a [u8],
    pos: usize,
}

type R<T> = Result<T, (usize, String)>;

impl Reader<'_> {
    fn fail<T>(&self, message: impl Into<String>) -> R<T> {
        Err((self.pos, message.into()))
    }

    fn byte(&mut self) -> R<u8> {
        match self.data.get(self.pos) {
            Some(b) => {
                self.pos += 1;
                Ok(*b)
            }
            None => self.fail("truncated profile"),
        }
    }

    fn var(&mut self) -> R<u64> {
        let start = self.pos;
        let mut v: u64 = 0;
        for shift in (0..70).step_by(7) {
            let b = self.byte()?;
            if shift == 63 && b > 1 {
                return Err((start, "varint overflows 64 bits".into()));
            }
            v |= u64::from(b & 0x7f) << shift;
            if b & 0x80 == 0 {
                return Ok(v);
            }
        }
        Err((start, "varint longer than 10 bytes".into()))
    }

    fn u32(&mut self, what: &str) -> R<u32> {
        let at = self.pos;
        let v = self.var()?;
        u32::try_from(v).map_err(|_| (at, format!("{what} {v} out of range")))
    }

    /// A count of items of at least `min_size` bytes each: bounded by what is left.
    fn count(&mut self, what: &str, min_size: usize) -> R<usize> {
        let at = self.pos;
        let n = self.var()?;
        let left = (self.data.len() - self.pos) / min_size.max(1);
        if n as u128 > left as u128 {
            return Err((at, format!("{what} count {n} exceeds the rest of the file")));
        }
        Ok(n as usize)
    }

    fn string(&mut self, what: &str) -> R<String> {
        let n = self.count(what, 1)?;
        let at = self.pos;
        let s = std::str::from_utf8(&self.data[self.pos..self.pos + n])
            .map_err(|_| (at, format!("{what} is not UTF-8")))?;
        self.pos += n;
        Ok(s.to_string())
    }
}

/// Why bytes are not a profile: the offset of the byte where it went wrong.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("byte {offset}: {message}")]
pub struct DecodeError {
    /// Offset of the offending byte in the file.
    pub offset: usize,
    /// What is wrong there.
    pub message: String,
}

/// Decodes a profile; the error names the byte.
pub fn decode(data: &[u8]) -> Result<Profile, DecodeError> {
    decode_at(data).map_err(|(offset, message)| DecodeError { offset, message })
}

/// [`decode`] with the reader's own `(offset, message)` errors.
fn decode_at(data: &[u8]) -> R<Profile> {
    if data.len() < MAGIC.len() || &data[..MAGIC.len()] != MAGIC {
        return Err((0, "not a jopcal profile (bad magic)".into()));
    }
    let mut r = Reader { data, pos: MAGIC.len() };
    let version = r.var()?;
    if !(OLDEST_VERSION..=FORMAT_VERSION).contains(&version) {
        return Err((
            8,
            format!(
                "profile format version {version}; this jopcal reads versions {OLDEST_VERSION} to {FORMAT_VERSION}"
            ),
        ));
    }
    let flags = r.var()?;
    let benchmark = r.string("benchmark name")?;
    let region = r.string("region")?;
    let n_methods = r.count("method", 5)?;
    let mut methods = Vec::with_capacity(n_methods);
    for _ in 0..n_methods {
        let class = r.string("class name")?;
        let name = r.string("method name")?;
        let descriptor = r.string("descriptor")?;
        let bytecode_len = r.u32("bytecode length")?;
        let flags = r.byte()?;
        let known = if version >= 3 { 0b11 } else { 0b1 };
        if flags & !known != 0 {
            return Err((r.pos - 1, format!("method flags {flags} name an unknown flag")));
        }
        let (native, synchronized) = (flags & 1 == 1, flags & 2 == 2);
        methods.push(MethodInfo {
            class,
            name,
            descriptor,
            bytecode_len,
            native,
            synchronized,
        });
    }
    let n_nodes = r.count("node", 7)?;
    let mut nodes = Vec::with_capacity(n_nodes);
    for _ in 0..n_nodes {
        let parent = match r.u32("parent")? {
            0 => None,
            p => Some(p - 1),
        };
        let method = r.u32("method index")?;
        let at = r.pos;
        let callsite = i32::try_from(unzigzag(r.var()?)).map_err(|_| (at, "call site out of range".to_string()))?;
        let invoke_opcode = r.byte()?;
        let calls = r.var()?;
        let n_ops = r.count("opcode", 2)?;
        let mut opcodes = std::collections::BTreeMap::new();
        for _ in 0..n_ops {
            let op = r.byte()?;
            let c = r.var()?;
            opcodes.insert(op, c);
        }
        let n_blocks = r.count("block", 2)?;
        let mut blocks = std::collections::BTreeMap::new();
        for _ in 0..n_blocks {
            let pc = r.u32("block start")?;
            let c = r.var()?;
            blocks.insert(pc, c);
        }
        let mut iinc = std::collections::BTreeMap::new();
        if version >= 3 {
            for _ in 0..r.count("iinc form", 3)? {
                let at = r.pos;
                let local = u16::try_from(r.var()?).map_err(|_| (at, "iinc local index out of range".to_string()))?;
                let at = r.pos;
                let inc =
                    i16::try_from(unzigzag(r.var()?)).map_err(|_| (at, "iinc increment out of range".to_string()))?;
                let c = r.var()?;
                iinc.insert((local, inc), c);
            }
        }
        let mut fields = std::collections::BTreeMap::new();
        if version >= 4 {
            for _ in 0..r.count("field kind", 3)? {
                let op = r.byte()?;
                let at = r.pos;
                let kind = match r.byte()? {
                    0 => FieldKind::Reference,
                    1 => FieldKind::Wide,
                    k => {
                        return Err((
                            at,
                            format!("field kind {k} is neither 0 (reference) nor 1 (long or double)"),
                        ))
                    }
                };
                let c = r.var()?;
                fields.insert((op, kind), c);
            }
        }
        let mut operands = std::collections::BTreeMap::new();
        if version >= 5 {
            for _ in 0..r.count("operand", 3)? {
                let op = r.byte()?;
                let value = r.byte()?;
                let c = r.var()?;
                operands.insert((op, value), c);
            }
        }
        nodes.push(Node {
            parent,
            method,
            callsite,
            invoke_opcode,
            calls,
            opcodes,
            blocks,
            iinc,
            fields,
            operands,
        });
    }
    let n_stack = r.count("entry stack", 1)?;
    let mut entry_stack = Vec::with_capacity(n_stack);
    for _ in 0..n_stack {
        entry_stack.push(r.u32("entry stack node")?);
    }
    let region_start = r.var()?;
    let region_nanos = if version >= 6 { r.var()? } else { 0 };
    let mut allocations = std::collections::BTreeMap::new();
    if version >= 7 {
        for _ in 0..r.count("allocation size", 2)? {
            let words = r.u32("allocation words")?;
            allocations.insert(words, r.var()?);
        }
    }
    let exceptions = if version >= 10 {
        read_exceptions(&mut r)?
    } else {
        crate::model::Exceptions::default()
    };
    let n_events = r.count("event", 1)?;
    let mut events = Vec::with_capacity(n_events);
    for _ in 0..n_events {
        events.push(match r.var()? {
            0 => Event::Return,
            1 => Event::Unwind,
            k => Event::Invoke(u32::try_from(k - 2).map_err(|_| (r.pos, "event node out of range".to_string()))?),
        });
    }
    if r.pos != data.len() {
        return Err((
            r.pos,
            format!("{} bytes after the end of the profile", data.len() - r.pos),
        ));
    }
    let p = Profile {
        benchmark,
        region,
        complete: flags & 1 == 1,
        methods,
        nodes,
        entry_stack,
        region_start,
        events,
        region_nanos,
        allocations,
        heap_start: None,
        exceptions,
    };
    p.validate().map_err(|m| (data.len(), m.to_string()))?;
    Ok(p)
}

/// The exceptions' sections (version 10).
fn read_exceptions(r: &mut Reader<'_>) -> R<crate::model::Exceptions> {
    let mut x = crate::model::Exceptions::default();
    for _ in 0..r.count("thrown class", 1)? {
        let n = r.count("thrown class name", 1)?;
        let mut names = Vec::with_capacity(n);
        for _ in 0..n {
            names.push(r.string("thrown class name")?);
        }
        x.thrown.push(names);
    }
    for _ in 0..r.count("arrival", 5)? {
        let node = r.u32("arrival node")?;
        let pc = r.u32("arrival pc")?;
        let at = r.pos;
        let thrown = r.u32("arrival class")?;
        if thrown as usize >= x.thrown.len() {
            return Err((at, format!("arrival names thrown class {thrown} of {}", x.thrown.len())));
        }
        let handler = match r.u32("arrival handler")? {
            0 => None,
            h => Some(h - 1),
        };
        let arrival = crate::model::Arrival {
            node,
            pc,
            thrown,
            handler,
        };
        let at = r.pos;
        if x.arrivals.insert(arrival, r.var()?).is_some() {
            return Err((at, "an arrival recorded twice".to_string()));
        }
    }
    for _ in 0..r.count("exception table", 2)? {
        let method = r.u32("exception table method")?;
        let mut entries = Vec::new();
        for _ in 0..r.count("exception table entry", 4)? {
            let start = r.u32("handler start")?;
            let end = r.u32("handler end")?;
            let handler = r.u32("handler pc")?;
            let catch = Some(r.string("handler class")?).filter(|c| !c.is_empty());
            entries.push(crate::model::HandlerEntry {
                start,
                end,
                handler,
                catch,
            });
        }
        let at = r.pos;
        if x.tables.insert(method, entries).is_some() {
            return Err((at, format!("the exception table of method {method} recorded twice")));
        }
    }
    Ok(x)
}

/// Reads one `.jopprof` file.
pub fn read_file(path: &Path) -> Result<Profile, ProfileError> {
    let data = std::fs::read(path).map_err(|source| ProfileError::Io {
        path: path.to_owned(),
        source,
    })?;
    decode(&data).map_err(|DecodeError { offset, message }| ProfileError::Corrupt {
        path: path.to_owned(),
        offset,
        message,
    })
}

/// Reads every `.jopprof` file of a directory, sorted by file name.
pub fn read_dir(dir: &Path) -> Result<Vec<Profile>, ProfileError> {
    let io = |source| ProfileError::Io {
        path: dir.to_owned(),
        source,
    };
    let mut paths: Vec<PathBuf> = std::fs::read_dir(dir)
        .map_err(io)?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == EXTENSION))
        .collect();
    paths.sort();
    if paths.is_empty() {
        return Err(ProfileError::Empty(dir.to_owned()));
    }
    paths.iter().map(|p| read_file(p)).collect()
}

/// The JSON view: the tree with, per node, `method`, `callsite`, `calls`,
/// `bytecodes`, `opcodes` (mnemonic → count), `iinc` (`[local, increment,
/// count]` triples), `fields` (`[opcode, kind, count]`) and `children`.
pub fn to_json(p: &Profile) -> Value {
    let mut built: Vec<Option<Value>> = vec![None; p.nodes.len()];
    let children = p.children();
    // Children have larger ids than their parents: build bottom-up, no recursion.
    for i in (0..p.nodes.len()).rev() {
        let n = &p.nodes[i];
        let mut ops = Map::new();
        for (op, c) in &n.opcodes {
            let name = mnemonic(*op).map_or_else(|| format!("opcode_{op}"), str::to_string);
            ops.insert(name, json!(c));
        }
        let kids: Vec<Value> = children[i].iter().filter_map(|k| built[*k as usize].take()).collect();
        built[i] = Some(json!({
            "method": p.methods[n.method as usize].qualified(),
            "callsite": n.callsite,
            "calls": n.calls,
            "bytecodes": n.bytecodes(),
            "opcodes": Value::Object(ops),
            "iinc": n.iinc.iter().map(|((l, i), c)| json!([l, i, c])).collect::<Vec<Value>>(),
            "fields": n.fields.iter().map(|((op, k), c)| json!([mnemonic(*op).unwrap_or("?"), match k {
                FieldKind::Reference => "reference",
                FieldKind::Wide => "long or double",
            }, c])).collect::<Vec<Value>>(),
            "operands": n.operands.iter().map(|((op, v), c)| json!([mnemonic(*op).unwrap_or("?"), v, c])).collect::<Vec<Value>>(),
            "children": kids,
        }));
    }
    json!({
        "format_version": FORMAT_VERSION,
        "benchmark": p.benchmark,
        "region": p.region,
        "complete": p.complete,
        "bytecodes": p.bytecodes(),
        "events": p.events.len(),
        "region_nanos": p.region_nanos,
        "allocations": p.allocations.iter().map(|(w, c)| json!([w, c])).collect::<Vec<Value>>(),
        "exceptions": p.exceptions.arrivals.iter().map(|(a, c)| json!({
            "node": a.node,
            "pc": a.pc,
            "class": p.exceptions.thrown.get(a.thrown as usize).and_then(|t| t.first()),
            "handler": a.handler,
            "count": c,
        })).collect::<Vec<Value>>(),
        "root": built[0].take().unwrap_or(Value::Null),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn sample() -> Profile {
        crate::examples::two_calls()
    }

    #[test]
    fn round_trip_and_json_view() {
        let p = sample();
        let bytes = encode(&p);
        assert_eq!(decode(&bytes).unwrap(), p);
        let j = to_json(&p);
        assert_eq!(j["root"]["callsite"], -1);
        assert_eq!(j["root"]["children"][0]["method"], "t.T.f(I)I");
        assert_eq!(j["root"]["children"][0]["opcodes"]["iload_0"], 2);
        assert_eq!(j["root"]["children"][0]["calls"], 2);
        assert_eq!(j["bytecodes"], 7);
    }

    #[test]
    fn iinc_operands_round_trip_and_version_2_still_reads() {
        let mut p = sample();
        p.nodes[1].opcodes.insert(0x84, 5);
        p.nodes[1].iinc.insert((3, 1), 4);
        p.nodes[1].iinc.insert((300, -200), 1);
        assert!(!p.runs_synchronized_code());
        p.methods[1].synchronized = true;
        assert!(p.runs_synchronized_code(), "f is called in the region and synchronized");
        let mut loading = p.clone();
        loading.nodes[1].invoke_opcode = 0; // entered by the JVM: class loading's locks are not the program's
        assert!(!loading.runs_synchronized_code());
        assert_eq!(decode(&encode(&p)).unwrap(), p);
        assert_eq!(to_json(&p)["root"]["children"][0]["iinc"][1], json!([300, -200, 1]));
        p.nodes[1].iinc.insert((0, 2), 1);
        assert!(decode(&encode(&p))
            .unwrap_err()
            .message
            .contains("6 iinc operand counts but executed 5 iinc"));
        // Version 2: one method, one node, no events.
        let mut v2 = MAGIC.to_vec();
        v2.extend([2, 1, 1, b'B', 7]);
        v2.extend(b"harness");
        v2.extend([1, 3, b't', b'/', b'T', 3, b'r', b'u', b'n', 3, b'(', b')', b'V', 4, 0]);
        v2.extend([1, 0, 0, 1, 0, 1, 1, 0x60, 1, 0]); // node: no parent, method 0, callsite -1, calls 1, iadd x1, no blocks
        v2.extend([1, 0, 0, 0]); // entry stack [0], region start 0, no events
        let old = decode(&v2).unwrap();
        assert_eq!(old.nodes[0].opcodes[&0x60], 1);
        assert!(old.nodes[0].iinc.is_empty());
        // Version 2 knows only the native flag.
        let flags_at = v2.iter().position(|b| *b == b'V').unwrap() + 2;
        v2[flags_at] = 2;
        assert_eq!(
            decode(&v2).unwrap_err(),
            DecodeError {
                offset: flags_at,
                message: "method flags 2 name an unknown flag".to_string()
            }
        );
    }

    #[test]
    fn field_kinds_round_trip_and_version_3_still_reads() {
        let mut p = sample();
        let n = p.nodes.iter().position(|n| n.opcodes.contains_key(&0xb4)).unwrap_or(1);
        p.nodes[n].opcodes.insert(0xb5, 7);
        p.nodes[n].fields.insert((0xb5, FieldKind::Reference), 5);
        p.nodes[n].fields.insert((0xb5, FieldKind::Wide), 1);
        let back = decode(&encode(&p)).unwrap();
        assert_eq!(back, p);
        assert_eq!(to_json(&p)["format_version"], json!(FORMAT_VERSION));
        // More typed accesses than executions are refused.
        p.nodes[n].fields.insert((0xb5, FieldKind::Wide), 3);
        assert!(decode(&encode(&p))
            .unwrap_err()
            .message
            .contains("8 typed field accesses of opcode 181 but executed 7"));
        // A version 3 file (no field kinds) reads with none.
        let mut v3 = MAGIC.to_vec();
        v3.extend([3, 1, 1, b'B', 7]);
        v3.extend(b"harness");
        v3.extend([1, 3, b't', b'/', b'T', 3, b'r', b'u', b'n', 3, b'(', b')', b'V', 4, 0]);
        v3.extend([1, 0, 0, 1, 0, 1, 1, 0xb5, 1, 0, 0]); // node: putfield x1, no blocks, no iinc forms
        v3.extend([1, 0, 0, 0]); // entry stack [0], region start 0, no events
        let old = decode(&v3).unwrap();
        assert_eq!(old.nodes[0].opcodes[&0xb5], 1);
        assert!(old.nodes[0].fields.is_empty());
    }

    #[test]
    fn operands_round_trip_and_version_4_still_reads() {
        let mut p = sample();
        p.nodes[1].opcodes.insert(0x79, 5); // lshl
        p.nodes[1].operands.insert((0x79, 0), 1);
        p.nodes[1].operands.insert((0x79, 40), 3);
        let back = decode(&encode(&p)).unwrap();
        assert_eq!(back, p);
        assert_eq!(
            to_json(&p)["root"]["children"][0]["operands"][1],
            json!(["lshl", 40, 3])
        );
        // More executions by operand than executions, a count past 63, or an
        // operand of a bytecode whose path no operand decides: refused.
        p.nodes[1].operands.insert((0x79, 1), 2);
        assert!(decode(&encode(&p))
            .unwrap_err()
            .message
            .contains("records 6 executions of opcode 121 by operand, but executed 5"));
        p.nodes[1].operands.remove(&(0x79, 1));
        p.nodes[1].operands.insert((0x79, 64), 1);
        assert!(decode(&encode(&p)).is_err());
        p.nodes[1].operands.remove(&(0x79, 64));
        p.nodes[1].opcodes.insert(0x60, 1);
        p.nodes[1].operands.insert((0x60, 1), 1);
        assert!(decode(&encode(&p)).is_err());
        // A version 4 file (no operands) reads with none.
        let mut v4 = MAGIC.to_vec();
        v4.extend([4, 1, 1, b'B', 7]);
        v4.extend(b"harness");
        v4.extend([1, 3, b't', b'/', b'T', 3, b'r', b'u', b'n', 3, b'(', b')', b'V', 4, 0]);
        v4.extend([1, 0, 0, 1, 0, 1, 1, 0x79, 1, 0, 0, 0]); // node: lshl x1, no blocks, iinc forms or fields
        v4.extend([1, 0, 0, 0]); // entry stack [0], region start 0, no events
        let old = decode(&v4).unwrap();
        assert_eq!(old.nodes[0].opcodes[&0x79], 1);
        assert!(old.nodes[0].operands.is_empty());
    }

    #[test]
    fn allocations_round_trip_and_version_6_reads_with_none() {
        let mut p = sample();
        p.allocations.insert(0, 8);
        p.allocations.insert(120, 1600);
        let back = decode(&encode(&p)).unwrap();
        assert_eq!(back.allocations, p.allocations);
        assert_eq!(to_json(&p)["allocations"][1], json!([120, 1600]));
        // The same file as version 6 (no allocations written) reads with none.
        let mut without = Vec::new();
        let plain = encode(&sample());
        // Version 7 writes an empty allocation table as one 0 byte after the
        // region's wall time, version 10 three empty exception tables after
        // it: the version 6 file is the same bytes without all four.
        let events = plain.len() - sample_events_len();
        without.extend_from_slice(&plain[..events - 4]);
        without.extend_from_slice(&plain[events..]);
        without[8] = 6;
        let old = decode(&without).unwrap();
        assert!(old.allocations.is_empty());
        assert_eq!(old.nodes, sample().nodes);
    }

    #[test]
    fn exceptions_round_trip_and_version_9_reads_with_none() {
        let mut p = sample();
        let t = p
            .exceptions
            .thrown_index(&["t/E".to_string(), "java/lang/Object".to_string()]);
        p.exceptions.arrivals.insert(
            crate::model::Arrival {
                node: 1,
                pc: 4,
                thrown: t,
                handler: Some(9),
            },
            3,
        );
        p.exceptions.arrivals.insert(
            crate::model::Arrival {
                node: 0,
                pc: 2,
                thrown: t,
                handler: None,
            },
            1,
        );
        p.exceptions.tables.insert(
            p.nodes[1].method,
            vec![crate::model::HandlerEntry {
                start: 0,
                end: 8,
                handler: 9,
                catch: Some("t/E".into()),
            }],
        );
        let back = decode(&encode(&p)).unwrap();
        assert_eq!(back.exceptions, p.exceptions);
        assert_eq!(to_json(&p)["exceptions"][1]["handler"], json!(9));
        // Version 9 has none of the three sections.
        let plain = encode(&sample());
        let events = plain.len() - sample_events_len();
        let mut v9 = plain[..events - 3].to_vec();
        v9.extend_from_slice(&plain[events..]);
        v9[8] = 9;
        assert_eq!(decode(&v9).unwrap().exceptions, Default::default());
        // An arrival of a class the file does not have names the byte.
        let mut bad = p.clone();
        bad.exceptions.thrown.clear();
        let e = decode(&encode(&bad)).unwrap_err();
        assert!(e.to_string().contains("thrown class 0 of 0"), "{e}");
    }

    /// The bytes of `sample()`'s event count and events.
    fn sample_events_len() -> usize {
        let mut o = Vec::new();
        put_events(&mut o, &sample().events);
        o.len()
    }

    #[test]
    fn corruption_names_the_byte() {
        let bytes = encode(&sample());
        assert_eq!(
            decode(&bytes[..bytes.len() - 1]).unwrap_err().message,
            "event count 4 exceeds the rest of the file"
        );
        assert_eq!(
            decode(b"JOPCALQ\n").unwrap_err().to_string(),
            "byte 0: not a jopcal profile (bad magic)"
        );
        let mut newer = bytes.clone();
        newer[8] = (FORMAT_VERSION + 1) as u8;
        assert_eq!(
            decode(&newer).unwrap_err().message,
            format!(
                "profile format version {}; this jopcal reads versions 2 to {FORMAT_VERSION}",
                FORMAT_VERSION + 1
            )
        );
        let mut extra = bytes.clone();
        extra.push(0);
        assert_eq!(
            decode(&extra).unwrap_err(),
            DecodeError {
                offset: bytes.len(),
                message: "1 bytes after the end of the profile".to_string()
            }
        );
    }

    #[test]
    fn files_and_directories() {
        let dir = tempfile::tempdir().unwrap();
        assert!(matches!(read_dir(dir.path()), Err(ProfileError::Empty(_))));
        std::fs::write(dir.path().join("T.jopprof"), encode(&sample())).unwrap();
        std::fs::write(dir.path().join("U.jopprof"), b"JOPCALP\n\x02").unwrap();
        let e = read_dir(dir.path()).unwrap_err().to_string();
        assert!(e.ends_with("U.jopprof: byte 9: truncated profile"), "{e}");
    }

    proptest! {
        #[test]
        fn corrupted_profiles_never_panic(pos in 0usize..200, byte in any::<u8>(), cut in 0usize..200) {
            let mut b = encode(&sample());
            let p = pos % b.len();
            b[p] = byte;
            b.truncate(cut.max(p + 1).min(b.len()));
            let _ = decode(&b);
        }

        #[test]
        fn arbitrary_bytes_never_panic(mut b in proptest::collection::vec(any::<u8>(), 0..200)) {
            let _ = decode(&b);
            if b.len() >= 9 {
                b[..8].copy_from_slice(MAGIC);
                b[8] = 1;
                let _ = decode(&b);
            }
        }
    }
}
