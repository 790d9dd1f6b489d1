//! Bytecodes JOP runs as Java routines of its runtime (`idiv`, the software
//! floating point), profiled on the host through those routines.
//!
//! The time such a routine takes depends on its operands (the division
//! loop's branches, the float's exponents), which a JVMTI profiler cannot
//! read. So a tree's host profile runs the routine itself: before the host
//! run, each of these bytecodes in the program's classes becomes a call of
//! jopcal's bridge ([`BRIDGE_CLASS`], one static method per bytecode, named
//! by its mnemonic), which passes the operands as JOP holds them (a float as
//! its bits) to the tree's own routine (`com.jopdesign.sys.JVM.f_<mnemonic>`)
//! compiled for the host. The agent records all of it; [`splice`] then makes
//! the profile say what JOP runs: the caller executed the bytecode, and the
//! routine is a context of the caller entered by that bytecode
//! (`Node::invoke_opcode` is the bytecode), with its own bytecodes, calls and
//! method-cache loads. The bridge and its conversions vanish.
//!
//! The long shifts and `lcmp` go through the bridge too ([`OBSERVED`]),
//! though JOP runs them in microcode: their path there depends on their
//! operands, which the profilers record with the caller (`Node::operands`):
//! the single-step agent from the arm of the switch on the operand the
//! bridge method runs in, the instrumenting one from its parameters. They
//! stay plain executions of the caller.

use crate::model::{Event, Profile};

pub use crate::routed_ops::*;

/// The prefix under which a JOP tree's version of a JDK method runs on the
/// host beside the JDK's own (`host_library`: the JVM runs the JDK's
/// `java.lang.Math.sin` as an intrinsic, never its bytecodes, so the tree's
/// `sin` is merged into the class as `jopcal$tree$sin`). [`splice`] drops
/// it: JOP runs that method by its own name.
pub const TREE_METHOD_PREFIX: &str = "jopcal$tree$";

/// JOP's clock: the class whose methods [`CLOCK_METHODS`] read the
/// microsecond counter (`Native.rd(Const.IO_US_CNT)` in the tree's
/// `System`). A tree suite's host run runs the tree's versions of them and
/// reads in them the values the target's counter gave.
pub const CLOCK_CLASS: &str = "java/lang/System";
/// The clock's methods (see [`CLOCK_CLASS`]).
pub const CLOCK_METHODS: [&str; 2] = ["currentTimeMillis", "nanoTime"];

/// Whether `name` of `class` (an internal name) is one of JOP's clock methods.
pub fn is_clock(class: &str, name: &str) -> bool {
    class == CLOCK_CLASS && CLOCK_METHODS.contains(&name)
}

/// Whether `method`, as a JOP link map names it
/// (`java.lang.System.currentTimeMillis()J`), is one of JOP's clock methods.
pub fn is_clock_named(method: &str) -> bool {
    crate::MethodInfo::split_qualified(method).is_some_and(|(class, name, _)| is_clock(&class, name))
}

/// `System.arraycopy`, which JOP runs as a Java loop of its runtime over the
/// elements (`Native.rdMem`/`wrMem`), the host as a native. Where the host
/// runs a tree's library, jopcal's stand-in of it (merged into the JDK's
/// `System` beside the clock, `jopcal_host::library`) copies with
/// the JDK's and then runs one `iinc` per element, so that the profile's
/// count of the stand-in's `iinc` is the elements copied
/// ([`copied_elements`]); the timing model prices the call as a whole by
/// them.
pub const ARRAYCOPY: (&str, &str, &str) = (
    "java/lang/System",
    "arraycopy",
    "(Ljava/lang/Object;ILjava/lang/Object;II)V",
);

/// Whether `m` is the method `(class, name, descriptor)` names.
fn is_method(m: &crate::MethodInfo, (class, name, descriptor): (&str, &str, &str)) -> bool {
    m.class == class && m.name == name && m.descriptor == descriptor
}

/// Whether `m` is [`ARRAYCOPY`].
pub fn is_arraycopy(m: &crate::MethodInfo) -> bool {
    is_method(m, ARRAYCOPY)
}

/// The elements the calls of `node` copied, where it is jopcal's stand-in
/// of [`ARRAYCOPY`] (the JDK's native counts none: 0).
pub fn copied_elements(p: &Profile, node: &crate::Node) -> u64 {
    const IINC: u8 = 0x84;
    if is_arraycopy(&p.methods[node.method as usize]) {
        node.opcodes.get(&IINC).copied().unwrap_or(0)
    } else {
        0
    }
}

/// The host's stand-in for JOP's serial line (a tree suite's host run,
/// `jopcal.host.SerialMain`): `System.out` prints through it, and its
/// `write(int)` runs once per character, which JOP's UART sends one by one.
pub const SERIAL_LINE_CLASS: &str = "jopcal/host/SerialLine";

/// Whether `m` is the serial line's per-character write.
pub fn is_serial_write(m: &crate::MethodInfo) -> bool {
    m.class == SERIAL_LINE_CLASS && m.name == "write" && m.descriptor == "(I)V"
}

/// What [`splice`] did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Spliced {
    /// Executions that ran the tree's routine (now contexts of their own).
    pub routed: u64,
    /// Executions the bridge ran on the host instead (a zero divisor): they
    /// count as plain executions of the bytecode.
    pub unrouted: u64,
}

/// Rewrites a profile recorded through the bridge into what JOP runs: each
/// call of a bridge method becomes an execution of its bytecode in the
/// caller, each call of the routine from the bridge a context of the caller
/// entered by that bytecode; the bridge's own bytecodes, its other calls
/// (the bit conversions) and their events are dropped. A profile without
/// bridge calls is left as it is. The tree's methods the host ran under
/// [`TREE_METHOD_PREFIX`] get their own names back.
pub fn splice(p: &mut Profile) -> Spliced {
    unshadow(p);
    for m in &mut p.methods {
        if let Some(name) = m.name.strip_prefix(TREE_METHOD_PREFIX) {
            m.name = name.to_string();
        }
    }
    let bridge_op: Vec<Option<u8>> = p
        .methods
        .iter()
        .map(|m| {
            (m.class == BRIDGE_CLASS)
                .then(|| {
                    routable_named(&m.name)
                        .map(|r| r.opcode)
                        .or_else(|| observed_named(&m.name).map(|o| o.opcode))
                })
                .flatten()
        })
        .collect();
    if !p.nodes.iter().skip(1).any(|n| bridge_op[n.method as usize].is_some()) {
        return Spliced::default();
    }
    let n = p.nodes.len();
    // Per node: gone with everything below it; a bridge call (gone, its
    // routine lifted to the caller); or kept, maybe under a new parent.
    let mut dead = vec![false; n];
    let mut bridge: Vec<Option<u8>> = vec![None; n];
    let mut lifted: Vec<Option<u8>> = vec![None; n];
    for i in 1..n {
        let Some(parent) = p.nodes[i].parent.map(|x| x as usize) else {
            continue;
        };
        let method = &p.methods[p.nodes[i].method as usize];
        if dead[parent] {
            dead[i] = true;
        } else if let Some(op) = bridge[parent] {
            let routine = routable(op).map(|r| format!("f_{}", r.mnemonic));
            if method.class == RUNTIME_CLASS && Some(&method.name) == routine.as_ref() {
                lifted[i] = Some(op);
            } else {
                dead[i] = true;
            }
        } else if let Some(op) = bridge_op[p.nodes[i].method as usize] {
            bridge[i] = Some(op);
        }
    }
    let mut done = Spliced::default();
    // The caller's invokestatic of the bridge is the bytecode itself.
    const INVOKESTATIC: u8 = 0xb8;
    for (i, op) in bridge.iter().enumerate() {
        let (Some(op), Some(caller)) = (*op, p.nodes[i].parent) else {
            continue;
        };
        let calls = p.nodes[i].calls;
        let routed: u64 = (0..n)
            .filter(|&k| lifted[k].is_some() && p.nodes[k].parent == Some(i as u32))
            .map(|k| p.nodes[k].calls)
            .sum();
        let unrouted = calls.saturating_sub(routed);
        done.routed += routed;
        done.unrouted += unrouted;
        let c = &mut p.nodes[caller as usize].opcodes;
        if let Some(v) = c.get_mut(&INVOKESTATIC) {
            *v = v.saturating_sub(calls);
            if *v == 0 {
                c.remove(&INVOKESTATIC);
            }
        }
        if unrouted > 0 {
            *c.entry(op).or_default() += unrouted;
        }
    }
    let kept: Vec<bool> = (0..n).map(|i| !dead[i] && bridge[i].is_none()).collect();
    prune(p, &kept, &lifted);
    done
}

/// Keeps the nodes `kept` says (a parent before its children, as before)
/// and their events. A node `lifted` with an opcode takes the place of its
/// parent (which is not kept): it hangs from the grandparent, at the
/// parent's call site, entered by that opcode.
fn prune(p: &mut Profile, kept: &[bool], lifted: &[Option<u8>]) {
    let n = p.nodes.len();
    let mut new_id = vec![u32::MAX; n];
    let mut next = 0u32;
    for (i, id) in new_id.iter_mut().enumerate() {
        if kept[i] {
            *id = next;
            next += 1;
        }
    }
    let old = std::mem::take(&mut p.nodes);
    for (i, mut node) in old.iter().cloned().enumerate() {
        if !kept[i] {
            continue;
        }
        if let Some(op) = lifted[i] {
            let b = old[i].parent.expect("a lifted node has the node it replaces above it") as usize;
            node.parent = old[b].parent.map(|c| new_id[c as usize]);
            node.callsite = old[b].callsite;
            node.invoke_opcode = op;
        } else {
            node.parent = node.parent.map(|x| new_id[x as usize]);
        }
        p.nodes.push(node);
    }
    // The events of the kept nodes only.
    let mut stack: Vec<u32> = p.entry_stack.clone();
    let mut events = Vec::with_capacity(p.events.len());
    let mut region_start = 0u64;
    for (k, ev) in p.events.iter().enumerate() {
        if k as u64 == p.region_start {
            region_start = events.len() as u64;
        }
        let node = match ev {
            Event::Invoke(x) => {
                stack.push(*x);
                *x as usize
            }
            Event::Return | Event::Unwind => match stack.pop() {
                Some(x) => x as usize,
                None => {
                    events.push(*ev);
                    continue;
                }
            },
        };
        if node >= n || !kept[node] {
            continue;
        }
        events.push(match ev {
            Event::Invoke(_) => Event::Invoke(new_id[node]),
            other => *other,
        });
    }
    if p.region_start >= p.events.len() as u64 {
        region_start = events.len() as u64;
    }
    p.region_start = region_start;
    p.events = events;
    p.entry_stack = p
        .entry_stack
        .iter()
        .filter(|&&x| (x as usize) < n && kept[x as usize])
        .map(|&x| new_id[x as usize])
        .collect();
    // The exceptions' arrivals in the kept nodes.
    let arrivals = std::mem::take(&mut p.exceptions.arrivals);
    for (mut a, c) in arrivals {
        if (a.node as usize) < n && kept[a.node as usize] {
            a.node = new_id[a.node as usize];
            *p.exceptions.arrivals.entry(a).or_default() += c;
        }
    }
}

/// jopcal's conversions between the host JDK's strings and the tree's
/// (`ShadowLibrary`'s `jopcal$tree$Strings`): not the program's work.
pub const SHADOW_STRINGS: &str = "java/lang/jopcal$tree$Strings";
/// The host's filling of a stack trace that `ShadowLibrary` puts into the
/// tree's `Throwable.fillInStackTrace` where it runs in the JDK's
/// `Throwable` (`java.lang.Throwable.fillInStackTrace(Throwable)`, static):
/// JOP's returns `this`, so the call is host work, dropped as a conversion.
pub const HOST_FILL: (&str, &str, &str) = (
    "java/lang/Throwable",
    "fillInStackTrace",
    "(Ljava/lang/Throwable;)Ljava/lang/Throwable;",
);

fn is_host_work(m: &crate::MethodInfo) -> bool {
    m.class == SHADOW_STRINGS || is_method(m, HOST_FILL)
}

/// The methods a shadowed class gets a bridge of with the JDK's signature
/// (`()Ljava/lang/String;`), through which the JDK's virtual calls reach it.
const SHADOW_BRIDGED: [&str; 3] = ["toString", "getMessage", "getLocalizedMessage"];

/// Whether `descriptor` is `main`'s: `([Ljava/lang/String;)V`, or with the
/// tree's String where the program runs with the tree's library under
/// shadow names.
pub fn is_main_descriptor(descriptor: &str) -> bool {
    MAIN_DESCRIPTORS.contains(&descriptor)
}

/// The descriptors [`is_main_descriptor`] accepts.
pub const MAIN_DESCRIPTORS: [&str; 2] = ["([Ljava/lang/String;)V", "([Ljava/lang/jopcal$tree$String;)V"];

/// Whether `class` (internal name) is a tree class the host ran under its
/// shadow name (`java/lang/jopcal$tree$String`).
pub fn is_shadow_class(class: &str) -> bool {
    class
        .rsplit('/')
        .next()
        .is_some_and(|simple| simple.starts_with(TREE_METHOD_PREFIX))
}

/// Whether `m` is a bridge `ShadowLibrary` wrote: a `toString` (or an
/// exception's message) with the JDK's signature in a shadowed or a
/// program's class, whose own has the tree's String.
fn is_shadow_bridge(m: &crate::MethodInfo) -> bool {
    let jdk = ["java/", "javax/", "jdk/", "sun/", "com/sun/", "jopcal/host/"]
        .iter()
        .any(|p| m.class.starts_with(p));
    SHADOW_BRIDGED.contains(&m.name.as_str())
        && m.descriptor == "()Ljava/lang/String;"
        && (is_shadow_class(&m.class) || !jdk)
}

/// Rewrites a profile of a run with the tree's library under shadow names
/// (`jopcal_host::shadow`) into what JOP runs: the conversions
/// and the host's stack-trace filling ([`HOST_FILL`]) vanish with
/// everything they called (and their `invokestatic` from the caller), a
/// bridge gives its place to the method it calls, and the classes and
/// descriptors lose the shadow prefix. Methods no node runs
/// any more are dropped. Returns the conversions dropped; a profile without
/// shadow classes is left as it is.
pub fn unshadow(p: &mut Profile) -> u64 {
    if !p.methods.iter().any(|m| is_shadow_class(&m.class) || is_host_work(m)) {
        return 0;
    }
    let conversion: Vec<bool> = p.methods.iter().map(is_host_work).collect();
    let bridge: Vec<bool> = p.methods.iter().map(is_shadow_bridge).collect();
    let n = p.nodes.len();
    let mut dead = vec![false; n];
    let mut through = vec![false; n];
    let mut lifted: Vec<Option<u8>> = vec![None; n];
    let mut dropped = 0u64;
    const INVOKESTATIC: u8 = 0xb8;
    for i in 0..n {
        let method = p.nodes[i].method as usize;
        let Some(parent) = p.nodes[i].parent.map(|x| x as usize) else {
            continue;
        };
        if dead[parent] || conversion[method] {
            dead[i] = true;
            if !dead[parent] && !through[parent] {
                dropped += p.nodes[i].calls;
                let calls = p.nodes[i].calls;
                let c = &mut p.nodes[parent].opcodes;
                if let Some(v) = c.get_mut(&INVOKESTATIC) {
                    *v = v.saturating_sub(calls);
                    if *v == 0 {
                        c.remove(&INVOKESTATIC);
                    }
                }
            }
        } else if through[parent] {
            lifted[i] = Some(p.nodes[parent].invoke_opcode);
        } else if bridge[method] {
            through[i] = true;
        }
    }
    let kept: Vec<bool> = (0..n).map(|i| !dead[i] && !through[i]).collect();
    prune(p, &kept, &lifted);
    for m in &mut p.methods {
        m.class = m.class.replace(TREE_METHOD_PREFIX, "");
        m.descriptor = m.descriptor.replace(TREE_METHOD_PREFIX, "");
    }
    // The methods still run, renumbered in their order.
    let mut used = vec![false; p.methods.len()];
    for node in &p.nodes {
        used[node.method as usize] = true;
    }
    let mut new_index = vec![u32::MAX; p.methods.len()];
    let mut next = 0u32;
    for (i, u) in used.iter().enumerate() {
        if *u {
            new_index[i] = next;
            next += 1;
        }
    }
    let methods = std::mem::take(&mut p.methods);
    p.methods = methods
        .into_iter()
        .zip(&used)
        .filter(|(_, u)| **u)
        .map(|(m, _)| m)
        .collect();
    for node in &mut p.nodes {
        node.method = new_index[node.method as usize];
    }
    let x = &mut p.exceptions;
    x.tables = std::mem::take(&mut x.tables)
        .into_iter()
        .filter(|(m, _)| used.get(*m as usize) == Some(&true))
        .map(|(m, mut entries)| {
            for e in &mut entries {
                if let Some(c) = &mut e.catch {
                    *c = c.replace(TREE_METHOD_PREFIX, "");
                }
            }
            (new_index[m as usize], entries)
        })
        .collect();
    for names in &mut x.thrown {
        for c in names.iter_mut() {
            *c = c.replace(TREE_METHOD_PREFIX, "");
        }
    }
    dropped
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{MethodInfo, Node};

    fn method(class: &str, name: &str, desc: &str) -> MethodInfo {
        MethodInfo {
            class: class.into(),
            name: name.into(),
            descriptor: desc.into(),
            bytecode_len: 10,
            native: false,
            synchronized: false,
        }
    }

    fn node(parent: Option<u32>, method: u32, site: i32, op: u8, calls: u64, ops: &[(u8, u64)]) -> Node {
        Node {
            parent,
            method,
            callsite: site,
            invoke_opcode: op,
            calls,
            opcodes: ops.iter().copied().collect(),
            ..Node::default()
        }
    }

    /// main divides 3 times through the bridge (once by zero: no routine
    /// call) and converts a float once; the bridge's fadd calls a native
    /// bit conversion besides the routine.
    fn bridged() -> Profile {
        Profile {
            benchmark: "b".into(),
            region: "main".into(),
            complete: true,
            methods: vec![
                method("Main", "main", "([Ljava/lang/String;)V"),
                method(BRIDGE_CLASS, "idiv", "(II)I"),
                method(RUNTIME_CLASS, "f_idiv", "(II)I"),
                method(BRIDGE_CLASS, "fadd", "(FF)F"),
                method("java/lang/Float", "floatToRawIntBits", "(F)I"),
                method(RUNTIME_CLASS, "f_fadd", "(II)I"),
                method("Main", "helper", "()V"),
            ],
            nodes: vec![
                node(None, 0, -1, 0, 1, &[(0xb8, 5), (0x60, 7), (0xb1, 1)]),
                node(Some(0), 1, 4, 0xb8, 3, &[(0x1a, 6), (0xb8, 2), (0xac, 3)]),
                node(Some(1), 2, 9, 0xb8, 2, &[(0x1a, 40), (0xac, 2)]),
                node(Some(0), 3, 8, 0xb8, 1, &[(0x22, 2), (0xb8, 4), (0xae, 1)]),
                node(Some(3), 4, 2, 0xb8, 2, &[]),
                node(Some(3), 5, 6, 0xb8, 1, &[(0x1a, 90), (0xac, 1)]),
                node(Some(0), 6, 12, 0xb8, 1, &[(0xb1, 1)]),
            ],
            entry_stack: vec![0],
            region_start: 0,
            region_nanos: 0,
            allocations: Default::default(),
            heap_start: None,
            exceptions: Default::default(),
            events: vec![
                Event::Invoke(1),
                Event::Invoke(2),
                Event::Return,
                Event::Return,
                Event::Invoke(1),
                Event::Unwind,
                Event::Invoke(1),
                Event::Invoke(2),
                Event::Return,
                Event::Return,
                Event::Invoke(3),
                Event::Invoke(4),
                Event::Return,
                Event::Invoke(4),
                Event::Invoke(5),
                Event::Return,
                Event::Return,
                Event::Invoke(6),
                Event::Return,
            ],
        }
    }

    /// main (with the tree's String in its descriptor) turns a literal into
    /// the tree's String (a conversion that runs the tree's constructor),
    /// calls toString through the JDK's Object, which reaches the shadowed
    /// Integer's through its bridge, and converts the result back.
    fn shadowed() -> Profile {
        let tree_string = "Ljava/lang/jopcal$tree$String;";
        Profile {
            benchmark: "b".into(),
            region: "main".into(),
            complete: true,
            methods: vec![
                method("demo/Words", "main", "([Ljava/lang/jopcal$tree$String;)V"),
                method(SHADOW_STRINGS, "literal", &format!("(Ljava/lang/String;){tree_string}")),
                method("java/lang/jopcal$tree$String", "<init>", "([C)V"),
                method("java/lang/jopcal$tree$Integer", "toString", "()Ljava/lang/String;"),
                method("java/lang/jopcal$tree$Integer", "toString", &format!("(){tree_string}")),
                method(SHADOW_STRINGS, "toHost", &format!("({tree_string})Ljava/lang/String;")),
                method(
                    SHADOW_STRINGS,
                    "fromHost",
                    &format!("(Ljava/lang/String;){tree_string}"),
                ),
            ],
            nodes: vec![
                node(None, 0, -1, 0, 1, &[(0xb8, 2), (0xb6, 1), (0x12, 1), (0xb1, 1)]),
                node(Some(0), 1, 3, 0xb8, 1, &[(0xb0, 1)]),
                node(Some(1), 2, 9, 0xb7, 1, &[(0xb1, 1)]),
                node(Some(0), 3, 7, 0xb6, 1, &[(0x2a, 1), (0xb6, 1), (0xb8, 1), (0xb0, 1)]),
                node(Some(3), 4, 1, 0xb6, 1, &[(0x2a, 1), (0xb0, 1)]),
                node(Some(3), 5, 4, 0xb8, 1, &[(0xb0, 1)]),
                node(Some(0), 6, 10, 0xb8, 1, &[(0xb0, 1)]),
            ],
            entry_stack: vec![0],
            region_start: 0,
            region_nanos: 0,
            allocations: Default::default(),
            heap_start: None,
            exceptions: Default::default(),
            events: vec![
                Event::Invoke(1),
                Event::Invoke(2),
                Event::Return,
                Event::Return,
                Event::Invoke(3),
                Event::Invoke(4),
                Event::Return,
                Event::Invoke(5),
                Event::Return,
                Event::Return,
                Event::Invoke(6),
                Event::Return,
            ],
        }
    }

    #[test]
    fn a_shadowed_profile_reads_as_the_trees_classes() {
        let mut p = shadowed();
        assert_eq!(unshadow(&mut p), 2, "the literal and the result's conversion");
        p.validate().unwrap();
        let names: Vec<String> = p
            .nodes
            .iter()
            .map(|n| {
                let m = &p.methods[n.method as usize];
                format!("{}.{}{}", m.class, m.name, m.descriptor)
            })
            .collect();
        assert_eq!(
            names,
            [
                "demo/Words.main([Ljava/lang/String;)V",
                "java/lang/Integer.toString()Ljava/lang/String;"
            ]
        );
        assert_eq!(
            p.methods.len(),
            2,
            "the conversions and the bridge are no method of the profile"
        );
        // main's invokestatic were the conversions; its invokevirtual stays
        // the call of toString, which enters the tree's method directly.
        assert_eq!(p.nodes[0].opcodes.get(&0xb8), None);
        assert_eq!(p.nodes[0].opcodes.get(&0xb6), Some(&1));
        let to_string = &p.nodes[1];
        assert_eq!(
            (to_string.parent, to_string.callsite, to_string.invoke_opcode),
            (Some(0), 7, 0xb6)
        );
        assert_eq!(to_string.opcodes.get(&0x2a), Some(&1));
        assert_eq!(p.events, [Event::Invoke(1), Event::Return]);
        // A profile without shadow classes is left as it is.
        let mut plain = bridged();
        let before = plain.clone();
        assert_eq!(unshadow(&mut plain), 0);
        assert_eq!(plain, before);
    }

    #[test]
    fn exceptions_follow_their_contexts_and_lose_the_shadow_names() {
        let mut p = shadowed();
        let shadow = |c: &str| format!("java/lang/jopcal$tree${c}");
        let t = p
            .exceptions
            .thrown_index(&[shadow("RuntimeException"), "java/lang/Object".into()]);
        let at = |node, handler| crate::model::Arrival {
            node,
            pc: 1,
            thrown: t,
            handler,
        };
        // In the tree's toString (node 4, lifted to node 1), and in the
        // tree's String constructor under a conversion (node 2, dropped).
        p.exceptions.arrivals.insert(at(4, Some(5)), 3);
        p.exceptions.arrivals.insert(at(2, None), 1);
        let entry = crate::model::HandlerEntry {
            start: 0,
            end: 4,
            handler: 5,
            catch: Some(shadow("RuntimeException")),
        };
        p.exceptions.tables.insert(4, vec![entry.clone()]);
        p.exceptions.tables.insert(2, vec![entry]);
        unshadow(&mut p);
        p.validate().unwrap();
        assert_eq!(
            p.exceptions.arrivals.into_iter().collect::<Vec<_>>(),
            [(at(1, Some(5)), 3)]
        );
        assert_eq!(p.exceptions.tables.keys().collect::<Vec<_>>(), [&1]);
        assert_eq!(
            p.exceptions.tables[&1][0].catch.as_deref(),
            Some("java/lang/RuntimeException")
        );
        assert_eq!(p.exceptions.thrown[0][0], "java/lang/RuntimeException");
    }

    /// main builds an exception (no shadow class in the profile): the
    /// tree's constructor calls the tree's fillInStackTrace, which hands
    /// `this` to the host's filling, which calls the JVM's native.
    #[test]
    fn the_hosts_stack_trace_filling_is_dropped_with_its_invokestatic() {
        let (class, name, descriptor) = HOST_FILL;
        let mut p = Profile {
            benchmark: "b".into(),
            region: "main".into(),
            complete: true,
            methods: vec![
                method("Main", "main", "([Ljava/lang/String;)V"),
                method(class, "<init>", "()V"),
                method(class, "fillInStackTrace", "()Ljava/lang/Throwable;"),
                method(class, name, descriptor),
                method(class, "fillInStackTrace", "(I)Ljava/lang/Throwable;"),
            ],
            nodes: vec![
                node(None, 0, -1, 0, 1, &[(0xbb, 1), (0xb7, 1), (0xb1, 1)]),
                node(Some(0), 1, 4, 0xb7, 1, &[(0x2a, 2), (0xb6, 1), (0xb1, 1)]),
                node(Some(1), 2, 9, 0xb6, 1, &[(0x2a, 1), (0xb8, 1), (0xb0, 1)]),
                node(Some(2), 3, 1, 0xb8, 1, &[(0x2a, 2), (0xb6, 1), (0xb0, 1)]),
                node(Some(3), 4, 5, 0xb6, 1, &[]),
            ],
            entry_stack: vec![0],
            events: vec![
                Event::Invoke(1),
                Event::Invoke(2),
                Event::Invoke(3),
                Event::Invoke(4),
                Event::Return,
                Event::Return,
                Event::Return,
                Event::Return,
            ],
            ..Profile::default()
        };
        assert_eq!(unshadow(&mut p), 1);
        p.validate().unwrap();
        assert_eq!(p.nodes.len(), 3, "{:?}", p.nodes);
        let fill = &p.nodes[2];
        assert_eq!(p.methods[fill.method as usize].descriptor, "()Ljava/lang/Throwable;");
        assert_eq!(fill.opcodes.get(&0xb8), None, "the host's call is gone");
        assert_eq!((fill.opcodes.get(&0x2a), fill.opcodes.get(&0xb0)), (Some(&1), Some(&1)));
        assert_eq!(
            p.events,
            [Event::Invoke(1), Event::Invoke(2), Event::Return, Event::Return]
        );
    }

    #[test]
    fn the_bridge_vanishes_and_the_routine_is_entered_by_its_bytecode() {
        let mut p = bridged();
        let done = splice(&mut p);
        assert_eq!(done, Spliced { routed: 3, unrouted: 1 });
        p.validate().unwrap();
        let names: Vec<_> = p
            .nodes
            .iter()
            .map(|n| p.methods[n.method as usize].name.as_str())
            .collect();
        assert_eq!(names, ["main", "f_idiv", "f_fadd", "helper"]);
        // main: 5 invokestatic less the 4 bridge calls; the zero divide stays an idiv.
        assert_eq!(p.nodes[0].opcodes.get(&0xb8), Some(&1));
        assert_eq!(p.nodes[0].opcodes.get(&0x6c), Some(&1));
        assert_eq!(p.nodes[0].opcodes.get(&0x62), None);
        let (div, add) = (&p.nodes[1], &p.nodes[2]);
        assert_eq!(
            (div.parent, div.invoke_opcode, div.callsite, div.calls),
            (Some(0), 0x6c, 4, 2)
        );
        assert_eq!(
            (add.parent, add.invoke_opcode, add.callsite, add.calls),
            (Some(0), 0x62, 8, 1)
        );
        assert_eq!(p.nodes[3].parent, Some(0));
        assert_eq!(
            p.events,
            [
                Event::Invoke(1),
                Event::Return,
                Event::Invoke(1),
                Event::Return,
                Event::Invoke(2),
                Event::Return,
                Event::Invoke(3),
                Event::Return
            ]
        );
        // The routines' own bytecodes are all that is left of the host's extra work.
        assert_eq!(p.bytecodes(), 13 - 4 + 1 + 42 + 91 + 1);
    }

    #[test]
    fn the_region_start_moves_with_the_events_before_it() {
        let mut p = bridged();
        p.region_start = 10; // the fadd and the helper are in the region
        splice(&mut p);
        assert_eq!(p.region_start, 4);
        assert_eq!(p.events[4], Event::Invoke(2));
    }

    #[test]
    fn a_profile_without_the_bridge_is_unchanged() {
        let mut p = crate::examples::two_calls();
        let before = p.clone();
        assert_eq!(splice(&mut p), Spliced::default());
        assert_eq!(p, before);
    }

    #[test]
    fn an_observed_shift_stays_the_callers_bytecode() {
        let mut p = bridged();
        p.methods.push(method(BRIDGE_CLASS, "lshl", "(JI)J"));
        p.nodes.push(node(
            Some(0),
            7,
            20,
            0xb8,
            2,
            &[(0x1e, 2), (0x1c, 2), (0x79, 2), (0xad, 2)],
        ));
        p.nodes[0].opcodes.insert(0xb8, 7);
        p.nodes[0].operands.insert((0x79, 8), 2);
        p.events
            .extend([Event::Invoke(7), Event::Return, Event::Invoke(7), Event::Return]);
        let done = splice(&mut p);
        assert_eq!(done.unrouted, 3);
        p.validate().unwrap();
        assert_eq!(p.nodes[0].opcodes.get(&0x79), Some(&2));
        assert_eq!(p.nodes.len(), 4);
        assert_eq!(p.events.len(), 8);
    }

    #[test]
    fn long_compares_fall_into_their_classes() {
        assert_eq!(long_compare_class(1, 2), 0);
        assert_eq!(long_compare_class(5, 5), 1);
        assert_eq!(long_compare_class(7, -3), 5);
        assert_eq!(long_compare_class(-7, 3), 6);
        assert_eq!(long_compare_class(i64::MIN, i64::MAX), 6);
        assert_eq!(long_compare_class(-1, -1), 10);
        assert_eq!(long_compare_class(-1, -2), 11);
        assert!((0..LONG_COMPARE_CLASSES).contains(&long_compare_class(i64::MIN, -1)));
    }

    #[test]
    fn the_clock_is_systems_two_methods_by_either_name() {
        assert!(is_clock("java/lang/System", "nanoTime"));
        assert!(!is_clock("java/lang/System", "arraycopy"));
        assert!(!is_clock("java/lang/Math", "nanoTime"));
        assert!(is_clock_named("java.lang.System.currentTimeMillis()J"));
        assert!(!is_clock_named("java.lang.System.nanoTimeX()J"));
        assert!(!is_clock_named("com.jopdesign.sys.Startup.getSpeed()I"));
        assert!(!is_clock_named("code at word 3602"));
    }

    #[test]
    fn the_table_names_each_opcode_by_its_mnemonic() {
        for r in ROUTABLE {
            assert_eq!(jopcal_classfile::opcode::mnemonic(r.opcode), Some(r.mnemonic), "{r:?}");
        }
        for o in OBSERVED {
            assert_eq!(jopcal_classfile::opcode::mnemonic(o.opcode), Some(o.mnemonic), "{o:?}");
        }
        let mut ops: Vec<u8> = ROUTABLE
            .iter()
            .map(|r| r.opcode)
            .chain(OBSERVED.iter().map(|o| o.opcode))
            .collect();
        ops.sort_unstable();
        ops.dedup();
        assert_eq!(ops.len(), ROUTABLE.len() + OBSERVED.len());
    }
}
