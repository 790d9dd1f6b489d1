//! Whether two profiles of the same run say the same thing, and where they
//! first differ: the check that the instrumenting profiler equals the
//! single-step oracle. Node ids and method indices are each profiler's own
//! order of discovery, so contexts are compared by their path (call site,
//! method and invoke opcode from the root) and the call/return stream by
//! the paths it enters.

use crate::model::{Event, Profile};
use std::collections::BTreeMap;
use std::fmt::Debug;

/// A context's path from the root: per step, (call site, `class.name
/// descriptor`, invoke opcode).
type Path = Vec<(i32, String, u8)>;

/// Where an exception arrived, by path: (context, pc, class, handler).
type ArrivalAt = (String, u32, String, Option<u32>);

fn method_name(p: &Profile, m: u32) -> String {
    p.methods.get(m as usize).map_or_else(
        || format!("method #{m}"),
        |m| format!("{}.{}{}", m.class, m.name, m.descriptor),
    )
}

fn paths(p: &Profile) -> Vec<Path> {
    let mut out: Vec<Path> = Vec::with_capacity(p.nodes.len());
    for n in &p.nodes {
        let mut path = n.parent.and_then(|q| out.get(q as usize).cloned()).unwrap_or_default();
        path.push((n.callsite, method_name(p, n.method), n.invoke_opcode));
        out.push(path);
    }
    out
}

/// How a path reads in a message: every step, descriptors left out but for
/// the innermost (whose own descriptor names the method exactly).
fn show(path: &Path) -> String {
    let last = path.len().saturating_sub(1);
    path.iter()
        .enumerate()
        .map(|(k, (site, m, op))| {
            let m = if k == last {
                m.as_str()
            } else {
                m.split('(').next().unwrap_or(m)
            };
            format!("{m}@{site}/{op:#04x}")
        })
        .collect::<Vec<_>>()
        .join(" > ")
}

fn differ<K: Debug + Ord, V: Debug + PartialEq>(what: &str, a: &BTreeMap<K, V>, b: &BTreeMap<K, V>) -> Option<String> {
    let keys: std::collections::BTreeSet<&K> = a.keys().chain(b.keys()).collect();
    keys.into_iter().find_map(|k| {
        let (x, y) = (a.get(k), b.get(k));
        (x != y).then(|| format!("{what} {k:?}: {x:?} against {y:?}"))
    })
}

/// What of two profiles is compared.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scope {
    /// Everything: every context, and the whole call/return stream,
    /// including what was only tracked before the region for the method
    /// cache's state.
    All,
    /// The region: the contexts it entered or counted in, and the stream
    /// from the region's start. (A profiler that runs Java code of its own
    /// in the JVM changes the JDK's class-loading state before the region,
    /// and so what is only tracked there.)
    Region,
    /// What of the region is the program's, which is all an estimate reads:
    /// [`Scope::Region`] without the contexts the JVM entered on its own
    /// (class loading, static initializers: `Profile::jvm_work`) and what
    /// ran below them. The JDK's class loader runs differently under each
    /// profiler, as their own classes are in its state (docs/notes/profilers.md).
    Program,
}

/// The first difference between `a` and `b` (as "a against b") within
/// `scope`, or `None` when they hold the same contexts with the same
/// counts, the same methods, and the same call/return stream.
pub fn first_difference(a: &Profile, b: &Profile, scope: Scope) -> Option<String> {
    if a.complete != b.complete {
        return Some(format!("complete: {} against {}", a.complete, b.complete));
    }
    if a.region != b.region {
        return Some(format!("region: {} against {}", a.region, b.region));
    }
    let (pa, pb) = (paths(a), paths(b));
    let region = scope != Scope::All;
    // The contexts left out: the JVM's own work, under Scope::Program.
    let left_out = |p: &Profile| match scope {
        Scope::Program => p.jvm_work(),
        _ => vec![false; p.nodes.len()],
    };
    let (oa, ob) = (left_out(a), left_out(b));
    // A context the region never entered nor counted in.
    let idle = |n: &crate::model::Node| n.calls == 0 && n.opcodes.is_empty() && n.operands.is_empty();
    let index_b: BTreeMap<&Path, usize> = pb.iter().enumerate().map(|(i, p)| (p, i)).collect();
    let index_a: BTreeMap<&Path, usize> = pa.iter().enumerate().map(|(i, p)| (p, i)).collect();
    for (i, path) in pa.iter().enumerate() {
        if oa[i] {
            continue;
        }
        let Some(&j) = index_b.get(path).filter(|&&j| !ob[j]) else {
            if region && idle(&a.nodes[i]) {
                continue;
            }
            return Some(format!(
                "context {} (calls {}) only in the first",
                show(path),
                a.nodes[i].calls
            ));
        };
        let (x, y) = (&a.nodes[i], &b.nodes[j]);
        let (ma, mb) = (&a.methods[x.method as usize], &b.methods[y.method as usize]);
        let at = || show(path);
        if (ma.bytecode_len, ma.native, ma.synchronized) != (mb.bytecode_len, mb.native, mb.synchronized) {
            return Some(format!(
                "{}: method (length, native, synchronized) {:?} against {:?}",
                at(),
                (ma.bytecode_len, ma.native, ma.synchronized),
                (mb.bytecode_len, mb.native, mb.synchronized)
            ));
        }
        if x.calls != y.calls {
            return Some(format!("{}: calls {} against {}", at(), x.calls, y.calls));
        }
        let found = differ("opcode", &x.opcodes, &y.opcodes)
            .or_else(|| differ("block", &x.blocks, &y.blocks))
            .or_else(|| differ("iinc", &x.iinc, &y.iinc))
            .or_else(|| differ("field", &x.fields, &y.fields))
            .or_else(|| differ("operand", &x.operands, &y.operands));
        if let Some(d) = found {
            return Some(format!("{}: {d}", at()));
        }
    }
    // Where exceptions arrived, and the tables searched there.
    let arrivals = |p: &Profile, paths: &[Path], out: &[bool]| -> BTreeMap<ArrivalAt, (u64, usize)> {
        let x = &p.exceptions;
        x.arrivals
            .iter()
            .filter(|(a, _)| !out.get(a.node as usize).copied().unwrap_or(false))
            .map(|(a, c)| {
                let path = paths.get(a.node as usize).map(show).unwrap_or_default();
                let class = x
                    .thrown
                    .get(a.thrown as usize)
                    .and_then(|t| t.first())
                    .cloned()
                    .unwrap_or_default();
                let method = p.nodes.get(a.node as usize).map_or(0, |n| n.method);
                let entries = x.tables.get(&method).map_or(0, Vec::len);
                ((path, a.pc, class, a.handler), (*c, entries))
            })
            .collect()
    };
    if let Some(d) = differ(
        "exception arrival (count, table entries)",
        &arrivals(a, &pa, &oa),
        &arrivals(b, &pb, &ob),
    ) {
        return Some(d);
    }
    if let Some((j, path)) = pb
        .iter()
        .enumerate()
        .find(|(j, p)| !(ob[*j] || index_a.get(p).is_some_and(|&i| !oa[i]) || region && idle(&b.nodes[*j])))
    {
        return Some(format!(
            "context {} (calls {}) only in the second",
            show(path),
            b.nodes[j].calls
        ));
    }
    let (sa, sb) = match scope {
        Scope::All => (0, 0),
        Scope::Region | Scope::Program => (a.region_start as usize, b.region_start as usize),
    };
    // From `start`, each event with its position and the path it enters,
    // but for the left-out contexts' invokes and their frames' exits.
    let stream = |p: &Profile, paths: &[Path], out: &[bool], start: usize| -> Vec<(usize, Event, Option<Path>)> {
        let mut inside_left_out = 0usize;
        let mut kept = Vec::new();
        for (k, e) in p.events.iter().enumerate().skip(start) {
            match e {
                Event::Invoke(n) if inside_left_out > 0 || out.get(*n as usize) == Some(&true) => {
                    inside_left_out += 1;
                }
                Event::Return | Event::Unwind if inside_left_out > 0 => inside_left_out -= 1,
                Event::Invoke(n) => kept.push((k, *e, paths.get(*n as usize).cloned())),
                _ => kept.push((k, *e, None)),
            }
        }
        kept
    };
    let (xa, xb) = (stream(a, &pa, &oa, sa), stream(b, &pb, &ob, sb));
    for ((k, x, u), (_, y, v)) in xa.iter().zip(&xb) {
        let same = match (x, y) {
            (Event::Invoke(_), Event::Invoke(_)) => u == v,
            _ => x == y,
        };
        if !same {
            let say = |e: &Event, p: &Option<Path>| match e {
                Event::Invoke(_) => format!("invoke of {}", p.as_ref().map(show).unwrap_or_default()),
                other => format!("{other:?}"),
            };
            return Some(format!("event {k}: {} against {}", say(x, u), say(y, v)));
        }
    }
    if xa.len() != xb.len() {
        return Some(format!("{} events against {}", xa.len(), xb.len()));
    }
    if scope == Scope::All && a.region_start != b.region_start {
        return Some(format!(
            "region start: event {} against {}",
            a.region_start, b.region_start
        ));
    }
    // The region's allocations (objects per size), last: a context that
    // differs names more than the totals do. A profile without any where
    // the other has some differs too (a JVM without heap sampling gives
    // the single-step agent none, and says so in its log).
    if a.allocations != b.allocations {
        let (na, wa) = crate::allocation_totals(&a.allocations);
        let (nb, wb) = crate::allocation_totals(&b.allocations);
        return Some(format!("allocations: {na} of {wa} words against {nb} of {wb} words"));
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_same_profile_has_no_difference_and_a_changed_count_is_named() {
        let a = crate::examples::two_calls();
        assert_eq!(first_difference(&a, &a, Scope::All), None);
        let mut b = a.clone();
        let (op, c) = b.nodes[1].opcodes.iter().next().map(|(o, c)| (*o, *c)).unwrap();
        b.nodes[1].opcodes.insert(op, c + 1);
        let d = first_difference(&a, &b, Scope::Region).unwrap();
        assert!(
            d.contains(&format!("opcode {op}: Some({c}) against Some({})", c + 1)),
            "{d}"
        );
        let mut shorter = a.clone();
        shorter.events.pop();
        assert!(first_difference(&a, &shorter, Scope::All)
            .unwrap()
            .contains("events against"));
        // Allocations count even where one profile has none.
        let mut allocating = a.clone();
        allocating.allocations.insert(3, 2);
        let d = first_difference(&a, &allocating, Scope::Region).unwrap();
        assert!(d.starts_with("allocations: 0 of 0 words against 2 of 6 words"), "{d}");
    }

    /// The JVM's own work (a class loaded between the two calls, with a call
    /// of its own) is left out of the program's scope, and only of it.
    #[test]
    fn the_jvms_own_work_is_left_out_of_the_programs_scope_alone() {
        let a = crate::examples::two_calls();
        let mut b = a.clone();
        let loader = |parent: u32, invoke_opcode: u8| crate::model::Node {
            parent: Some(parent),
            method: 0,
            callsite: if invoke_opcode == 0 { -1 } else { 4 },
            invoke_opcode,
            calls: 1,
            opcodes: BTreeMap::from([(0x2a, 5)]),
            ..Default::default()
        };
        b.nodes.push(loader(0, 0));
        b.nodes.push(loader(2, 0xb6));
        b.events = vec![
            Event::Invoke(1),
            Event::Return,
            Event::Invoke(2),
            Event::Invoke(3),
            Event::Return,
            Event::Return,
            Event::Invoke(1),
            Event::Return,
        ];
        assert_eq!(first_difference(&a, &b, Scope::Program), None);
        assert_eq!(first_difference(&b, &a, Scope::Program), None);
        let d = first_difference(&a, &b, Scope::Region).unwrap();
        assert!(d.contains("only in the second"), "{d}");
        // A difference in the program's own contexts still counts.
        let mut c = b.clone();
        c.nodes[1].calls += 1;
        let d = first_difference(&a, &c, Scope::Program).unwrap();
        assert!(d.contains("calls 2 against 3"), "{d}");
        // And so does its stream: the program's second call gone.
        let mut e = b.clone();
        e.events.truncate(6);
        let d = first_difference(&a, &e, Scope::Program).unwrap();
        assert!(d.contains("events against"), "{d}");
    }
}
