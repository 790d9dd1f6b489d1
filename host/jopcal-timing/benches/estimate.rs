//! Estimator speed: method-cache replay throughput (events/s), estimating a
//! suite-sized set of synthetic profiles in all three cache modes, and one
//! calibration trial priced from a tally against a full estimate.
//! Run with `cargo bench -p jopcal-timing --bench estimate`.

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use jopcal_profile::{Event, MethodInfo, Node, Profile};
use jopcal_timing::cache::{CacheConfig, CacheMode, MethodCache};
use jopcal_timing::estimate::{estimate, Tally};
use jopcal_timing::TimingModel;
use std::path::Path;

/// A deterministic pseudo-random profile: `methods` methods, a tree of
/// `nodes` contexts, and a call/return stream of `calls` invocations.
fn synthetic(name: &str, methods: u32, nodes: u32, calls: u32, seed: u64) -> Profile {
    let mut x = seed;
    let mut next = move || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    };
    let methods: Vec<MethodInfo> = (0..methods)
        .map(|i| MethodInfo {
            class: "b/B".into(),
            name: format!("m{i}"),
            descriptor: "(I)I".into(),
            bytecode_len: 8 + (next() % 400) as u32,
            native: false,
            synchronized: false,
        })
        .collect();
    let mut tree = vec![Node {
        calls: 1,
        callsite: -1,
        ..Node::default()
    }];
    for i in 1..nodes {
        let parent = (next() % u64::from(i)) as u32;
        let mut n = Node {
            parent: Some(parent),
            method: (next() % methods.len() as u64) as u32,
            callsite: (next() % 100) as i32,
            invoke_opcode: 0xb6,
            ..Node::default()
        };
        for op in [0x1a_u8, 0x60, 0x2e, 0xb4, 0xa2, 0x84] {
            n.opcodes.insert(op, next() % 5000);
        }
        tree.push(n);
    }
    let children: Vec<Vec<u32>> = {
        let mut c = vec![Vec::new(); tree.len()];
        for (i, n) in tree.iter().enumerate().skip(1) {
            c[n.parent.unwrap() as usize].push(i as u32);
        }
        c
    };
    // A random walk down and up the tree.
    let mut events = Vec::with_capacity(calls as usize * 2);
    let mut stack = vec![0u32];
    let mut made = 0;
    while made < calls {
        let top = *stack.last().unwrap() as usize;
        if !children[top].is_empty() && (stack.len() < 2 || next() % 3 != 0) {
            let k = children[top][(next() % children[top].len() as u64) as usize];
            tree[k as usize].calls += 1;
            events.push(Event::Invoke(k));
            stack.push(k);
            made += 1;
        } else if stack.len() > 1 {
            stack.pop();
            events.push(Event::Return);
        } else {
            stack = vec![0];
        }
    }
    Profile {
        benchmark: name.into(),
        region: "harness".into(),
        complete: true,
        methods,
        nodes: tree,
        entry_stack: vec![0],
        region_start: 0,
        region_nanos: 0,
        allocations: Default::default(),
        heap_start: None,
        exceptions: Default::default(),
        events,
    }
}

fn model() -> TimingModel {
    TimingModel::load(&Path::new(env!("CARGO_MANIFEST_DIR")).join("../../calibration/jop-wcet.toml")).unwrap()
}

fn cache_replay(c: &mut Criterion) {
    let p = synthetic("replay", 200, 2000, 500_000, 7);
    let accesses: Vec<(u32, u32)> = p
        .events
        .iter()
        .filter_map(|e| match e {
            Event::Invoke(k) => {
                let m = p.nodes[*k as usize].method;
                Some((m, p.methods[m as usize].bytecode_len.div_ceil(4)))
            }
            _ => None,
        })
        .collect();
    let mut g = c.benchmark_group("method_cache");
    g.throughput(Throughput::Elements(accesses.len() as u64));
    for cfg in [
        CacheConfig { bytes: 1024, blocks: 4 },
        CacheConfig {
            bytes: 4096,
            blocks: 16,
        },
    ] {
        g.bench_with_input(
            BenchmarkId::new("replay", format!("{}B/{}", cfg.bytes, cfg.blocks)),
            &cfg,
            |b, cfg| {
                b.iter(|| {
                    let mut cache = MethodCache::new(*cfg);
                    for (m, w) in &accesses {
                        cache.access(*m, *w);
                    }
                    cache.misses
                })
            },
        );
    }
    g.finish();
}

fn estimate_suite(c: &mut Criterion) {
    // 15 benchmarks, as the built-in suite, each with 100k invocations.
    let suite: Vec<Profile> = (0..15)
        .map(|i| synthetic(&format!("b{i}"), 60, 400, 100_000, 11 + i))
        .collect();
    let m = model();
    let modes = [
        CacheMode::Hit,
        CacheMode::Miss,
        CacheMode::Fifo(CacheConfig {
            bytes: 1024,
            blocks: 16,
        }),
    ];
    let events: u64 = suite.iter().map(|p| p.events.len() as u64).sum::<u64>() * modes.len() as u64;
    let mut g = c.benchmark_group("estimate");
    g.throughput(Throughput::Elements(events));
    g.sample_size(10);
    g.bench_function("suite_15x100k_calls_3_modes", |b| {
        b.iter(|| {
            let mut total = 0.0;
            for p in &suite {
                for mode in modes {
                    total += estimate(p, &m, mode).cycles;
                }
            }
            total
        })
    });
    g.finish();
}

/// What a calibration pays per trial of the parameters: a full estimate
/// (replaying the call/return stream) against pricing a tally made once.
/// The ratio of the two is the speed-up of the fit's inner loop.
fn tally_against_estimate(c: &mut Criterion) {
    let p = synthetic("tally", 200, 2000, 500_000, 13);
    let m = model();
    let mode = CacheMode::Fifo(CacheConfig {
        bytes: 1024,
        blocks: 16,
    });
    let tally = Tally::new(&p, &m, mode, &|_| None);
    let mut g = c.benchmark_group("one_trial_of_the_parameters");
    g.sample_size(10);
    g.bench_function("full_estimate", |b| b.iter(|| estimate(&p, &m, mode).cycles));
    g.bench_function("tally_price", |b| b.iter(|| tally.price(&m)));
    g.bench_function("tally_make", |b| {
        b.iter(|| Tally::new(&p, &m, mode, &|_| None).buckets())
    });
    g.finish();
}

criterion_group!(benches, cache_replay, estimate_suite, tally_against_estimate);
criterion_main!(benches);
