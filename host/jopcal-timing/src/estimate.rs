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
//! JDK) is charged that cost per call, and its host bytecodes are not. Contexts the JVM entered on its
//! own (static initializers, class loading, exception constructors; invoke
//! opcode 0 in the profile) are not charged at all, nor anything below them:
//! JOP runs static initializers at boot and never loads classes, so that work
//! is the host JVM's and not the program's. Their bytecodes are reported as
//! `jvm_entered_bytecodes`.

use crate::cache::{words_of, CacheMode, MethodCache};
use crate::model::TimingModel;
use jopcal_classfile::opcode::{is_invoke, is_return, mnemonic};
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
    pub cache_hits: u64,
    pub cache_misses: u64,
    /// Per opcode mnemonic: (executions, cycles).
    pub per_opcode: BTreeMap<String, (u64, f64)>,
    /// Exclusive cycles per CCT node (index = node id).
    pub per_node: Vec<f64>,
    /// Bytecodes in contexts the host JVM entered on its own (not charged).
    pub jvm_entered_bytecodes: u64,
    /// Whether the profile was complete.
    pub complete: bool,
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

/// True when node `i` lies below a call of a JOP-native method.
fn inside_native(profile: &Profile, jop_native: &[Option<f64>], i: usize) -> bool {
    let mut at = profile.nodes[i].parent;
    while let Some(p) = at {
        let n = &profile.nodes[p as usize];
        if jop_native[n.method as usize].is_some() {
            return true;
        }
        at = n.parent;
    }
    false
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
    let mut e = Estimate {
        benchmark: profile.benchmark.clone(),
        model: model.name.clone(),
        cache: mode,
        cycles: 0.0,
        bytecodes: 0,
        java_dispatch_cycles: 0.0,
        java_routine_cycles: 0.0,
        invoke_return_cycles: 0.0,
        cache_hits: 0,
        cache_misses: 0,
        per_opcode: BTreeMap::new(),
        per_node: vec![0.0; profile.nodes.len()],
        jvm_entered_bytecodes: 0,
        complete: profile.complete,
    };
    let words: Vec<u32> = profile
        .methods
        .iter()
        .map(|m| size_of(m).unwrap_or_else(|| words_of(m.bytecode_len)))
        .collect();
    let jop_native: Vec<Option<f64>> = profile
        .methods
        .iter()
        .map(|m| {
            (m.class == JOP_NATIVE_CLASS)
                .then(|| model.native_cost(&format!("jopsys_{}", m.name)))
                .flatten()
                .or_else(|| model.method_cost(&m.qualified()))
        })
        .collect();
    // Nodes inside a JOP-native call are the host stand-in's code, and nodes
    // the JVM entered on its own are the host JVM's work: neither is charged.
    let mut skipped = vec![false; profile.nodes.len()];
    for (i, n) in profile.nodes.iter().enumerate() {
        let inside = n
            .parent
            .is_some_and(|p| skipped[p as usize] || jop_native[profile.nodes[p as usize].method as usize].is_some());
        skipped[i] = inside || n.entered_by_jvm();
        if skipped[i] && !inside_native(profile, &jop_native, i) {
            e.jvm_entered_bytecodes += n.bytecodes();
        }
    }
    let b_hit = model.load_cost(true, 0);
    // Accumulators indexed by opcode byte; JOP's own bytecodes are kept by name.
    let mut op_count = [0u64; 256];
    let mut op_cycles = [0f64; 256];
    let mut jop_ops: BTreeMap<String, (u64, f64)> = BTreeMap::new();
    // 1. Everything but invokes and returns: a fixed cost per execution.
    for (i, n) in profile.nodes.iter().enumerate() {
        if skipped[i] || jop_native[n.method as usize].is_some() {
            continue;
        }
        for (&op, &count) in &n.opcodes {
            if is_invoke(op) || is_return(op) {
                continue;
            }
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
    }
    // 2. Invokes and returns, event by event. Costs depend only on the node and
    // on hit or miss, so they are resolved once per node: [miss, hit].
    let mut invoke_cost = vec![[0.0f64; 2]; profile.nodes.len()];
    let mut return_cost = vec![[0.0f64; 2]; profile.nodes.len()];
    let mut return_op = vec![0u8; profile.nodes.len()];
    for (k, node) in profile.nodes.iter().enumerate().skip(1) {
        let m = node.method as usize;
        for hit in [false, true] {
            let b = model.load_cost(hit, words[m]);
            invoke_cost[k][usize::from(hit)] = model.cost(node.invoke_opcode, b, words[m]);
            if let Some(p) = node.parent {
                let caller = profile.nodes[p as usize].method as usize;
                let b = model.load_cost(hit, words[caller]);
                return_op[k] = profile.methods[m].return_opcode();
                return_cost[k][usize::from(hit)] = model.cost(return_op[k], b, words[caller]);
            }
        }
    }
    let unknown_caller_return: Vec<f64> = profile
        .methods
        .iter()
        .map(|m| model.cost(m.return_opcode(), b_hit, 0))
        .collect();
    let mut cache = match mode {
        CacheMode::Hit => CacheState::Hit,
        CacheMode::Miss => CacheState::Miss,
        CacheMode::Fifo(cfg) => CacheState::Fifo(MethodCache::new(cfg)),
    };
    let mut stack: Vec<u32> = if profile.entry_stack.is_empty() {
        vec![0]
    } else {
        profile.entry_stack.clone()
    };
    for id in &stack {
        let m = profile.nodes[*id as usize].method;
        cache.access(m, words[m as usize]);
    }
    let (mut hits, mut misses) = (0u64, 0u64);
    let region_start = profile.region_start as usize;
    // Cache effects only, before the region: charges go to scratch accumulators.
    let (mut scratch_hits, mut scratch_misses) = (0u64, 0u64);
    let mut scratch_count = [0u64; 256];
    let mut scratch_cycles = [0f64; 256];
    let mut scratch_node = vec![0f64; profile.nodes.len()];
    let mut scratch_jop: BTreeMap<String, (u64, f64)> = BTreeMap::new();
    for (k, ev) in profile.events.iter().enumerate() {
        let counted = k >= region_start;
        let (hits, misses, op_count, op_cycles, per_node, jop_ops) = if counted {
            (
                &mut hits,
                &mut misses,
                &mut op_count,
                &mut op_cycles,
                &mut e.per_node,
                &mut jop_ops,
            )
        } else {
            (
                &mut scratch_hits,
                &mut scratch_misses,
                &mut scratch_count,
                &mut scratch_cycles,
                &mut scratch_node,
                &mut scratch_jop,
            )
        };
        match *ev {
            Event::Invoke(k) => {
                let ku = k as usize;
                let node = &profile.nodes[ku];
                let caller = node.parent.unwrap_or(0) as usize;
                stack.push(k);
                if skipped[ku] {
                    continue;
                }
                if let Some(c) = jop_native[node.method as usize] {
                    let mi = &profile.methods[node.method as usize];
                    let name = if mi.class == JOP_NATIVE_CLASS {
                        format!("jopsys_{}", mi.name)
                    } else {
                        format!("method {}", mi.qualified())
                    };
                    let entry = jop_ops.entry(name).or_insert((0, 0.0));
                    entry.0 += 1;
                    entry.1 += c;
                    per_node[caller] += c;
                    continue;
                }
                let m = node.method;
                let hit = cache.access(m, words[m as usize]);
                if hit {
                    *hits += 1;
                } else {
                    *misses += 1;
                }
                let c = invoke_cost[ku][usize::from(hit)];
                op_count[node.invoke_opcode as usize] += 1;
                op_cycles[node.invoke_opcode as usize] += c;
                per_node[caller] += c;
            }
            Event::Return | Event::Unwind => {
                let Some(done) = stack.pop() else { continue };
                let du = done as usize;
                let node = &profile.nodes[du];
                if skipped[du] || jop_native[node.method as usize].is_some() {
                    continue;
                }
                let c = match stack.last() {
                    Some(&top) => {
                        let m = profile.nodes[top as usize].method;
                        let hit = cache.access(m, words[m as usize]);
                        if hit {
                            *hits += 1;
                        } else {
                            *misses += 1;
                        }
                        // The stack top is the caller context; when the stream
                        // and the tree disagree, cost the return by the method.
                        if node.parent == Some(top) {
                            return_cost[du][usize::from(hit)]
                        } else {
                            let b = model.load_cost(hit, words[m as usize]);
                            model.cost(
                                profile.methods[node.method as usize].return_opcode(),
                                b,
                                words[m as usize],
                            )
                        }
                    }
                    // Returning past the region's entry: the caller is unknown; assume it is cached.
                    None => unknown_caller_return[node.method as usize],
                };
                if matches!(ev, Event::Return) {
                    let op = profile.methods[node.method as usize].return_opcode();
                    op_count[op as usize] += 1;
                    op_cycles[op as usize] += c;
                    per_node[du] += c;
                }
            }
        }
    }
    e.cache_hits = hits;
    e.cache_misses = misses;
    for op in 0..=255u8 {
        let i = op as usize;
        if op_count[i] > 0 || op_cycles[i] != 0.0 {
            e.per_opcode
                .insert(mnemonic(op).unwrap_or("?").to_string(), (op_count[i], op_cycles[i]));
            if is_invoke(op) || is_return(op) {
                e.invoke_return_cycles += op_cycles[i];
            }
        }
    }
    for (name, v) in jop_ops {
        e.per_opcode.insert(name, v);
    }
    e.bytecodes = e.per_opcode.values().map(|v| v.0).sum();
    e.cycles = e.per_opcode.values().map(|v| v.1).sum();
    e
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

    #[test]
    fn methods_priced_as_a_whole_replace_their_host_code() {
        let dir = std::env::temp_dir().join(format!("jopcal-methods-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let base = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../calibration/jop-wcet.toml");
        let file = dir.join("m.toml");
        std::fs::write(
            &file,
            format!("[model]\nname = \"m\"\nbase = \"{}\"\n[params]\nf_cost = 500\n[methods]\n\"t.T.f(I)I\" = \"f_cost + r\"\n", base.display()),
        )
        .unwrap();
        let m = TimingModel::load(&file).unwrap();
        let p = two_calls();
        let e = estimate(&p, &m, CacheMode::Hit);
        // run's iadd (1) plus two calls of f at 501 each: no invoke, return or body costs.
        assert_eq!(e.cycles, 1.0 + 2.0 * 501.0);
        assert_eq!(e.per_opcode["method t.T.f(I)I"], (2, 1002.0));
        let _ = std::fs::remove_dir_all(&dir);
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

    #[test]
    fn native_rd_is_charged_as_jopsys_rd() {
        let mut p = two_calls();
        p.methods.push(MethodInfo {
            class: JOP_NATIVE_CLASS.into(),
            name: "rd".into(),
            descriptor: "(I)I".into(),
            bytecode_len: 30,
            native: false,
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
