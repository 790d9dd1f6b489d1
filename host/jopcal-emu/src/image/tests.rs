//! The image machine on images this project assembles itself (no JOP tree
//! needed): the layout a JOP linker writes (length, special pointers,
//! statics, code, method structures, a constant pool, the runtime's jump
//! table and helper), with tiny methods of our own. Cycles are checked
//! against the tree's table written out by hand here (r=1, w=2), not
//! against the model the machine reads.

use super::assemble::{exit_code, print, Cp, Method, TestImage};
use super::*;
use std::path::Path;

fn config(limit: u64) -> ImageConfig {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../calibration/jop-devel.toml");
    let mut cfg = BoardConfig::load(&path, &[]).expect("the tree's table");
    cfg.cycle_limit = limit;
    cfg
}

fn run(words: Vec<u32>, limit: u64) -> (Result<ImageRun, EmuError>, String) {
    let mut out = Vec::new();
    let r = run_image(&JopImage { words }, &config(limit), false, None, &mut |b| {
        out.extend_from_slice(b)
    });
    (r, String::from_utf8_lossy(&out).into_owned())
}

/// Cycles of `print(text)` in the tree's table: bipush 2, sipush 3, jopsys_wr 5+w.
fn print_cycles(text: &str) -> u64 {
    text.len() as u64 * (2 + 3 + 7)
}

fn method(code: &[u8], args: u32, locals: u32) -> Method {
    Method::new(code, args, locals)
}

fn image(methods: Vec<Method>, cp: Vec<Cp>) -> TestImage {
    TestImage {
        methods,
        cp,
        boot: 0,
        stub: method(&[177], 0, 0),
        helper: method(&exit_code(), 0, 0),
        statics: vec![0, 0],
        object_fields: vec![7, 8],
    }
}

#[test]
fn boot_runs_prints_and_ends_at_jvm_exit() {
    let mut code = print("ok\n");
    code.extend(exit_code());
    let img = image(vec![method(&code, 0, 0)], vec![]).build();
    let (r, out) = run(img.words, 1 << 30);
    let r = r.expect("runs");
    assert_eq!(out, "ok\nJVM exit!");
    // The first invoke (boot) is not charged; the loop after the exit never runs.
    assert_eq!(r.cycles, print_cycles("ok\nJVM exit!"));
    assert_eq!(r.all_bytecodes, 3 * 12);
}

#[test]
fn invokes_and_returns_are_charged_with_the_method_cache_as_the_tree_does() {
    // boot: f(6, 7) twice, prints its result as a character, exits.
    // f(a, b) = a * b + 1, a method of 7 words.
    let f = [26, 27, 104, 4, 96, 172]; // iload_0 iload_1 imul iconst_1 iadd ireturn
    let mut f_code = f.to_vec();
    f_code.extend([0; 22]); // padding to 7 words
    let mut boot = Vec::new();
    for _ in 0..2 {
        boot.extend([16, 6, 16, 7, 184, 0, 1, 17, 0xff, 0x91, 210]);
    }
    let boot_len = boot.len() + print("JVM exit!").len() + 3;
    boot.extend(exit_code());
    let img = image(vec![method(&boot, 0, 0), method(&f_code, 2, 0)], vec![Cp::Method(1)]).build();
    let (r, out) = run(img.words, 1 << 30);
    let r = r.expect("runs");
    assert_eq!(out, "++JVM exit!"); // 43 = '+'
    let boot_words = boot_len.div_ceil(4) as u64;
    let f_body: u64 = 1 + 1 + 19 + 1 + 1; // iload_0 iload_1 imul iconst_1 iadd
    let per_call_hit = 2 + 2 + 74 + f_body + 23 + 3 + 7; // bipush x2, invokestatic, f, ireturn, sipush, jopsys_wr
                                                         // First call: f misses (8 + 2n cycles of load, 37 hidden behind the
                                                         // invoke); the return finds boot still cached.
    let f_miss = (8 + 2 * 7_u64).saturating_sub(37);
    let expected = 2 * per_call_hit + f_miss + print_cycles("JVM exit!");
    assert_eq!(r.cycles, expected, "boot has {boot_words} words");
    assert_eq!(r.cache_cycles, f_miss);
}

#[test]
fn a_long_method_missing_on_invoke_and_return_pays_the_unhidden_load() {
    // boot (first, loaded at boot, uncharged) calls g, which calls 16 one-block methods evicting boot,
    // so g's return to boot misses.
    let mut methods = vec![];
    let mut boot = vec![184, 0, 1]; // invokestatic g
    boot.extend(exit_code());
    methods.push(method(&boot, 0, 0));
    let mut g = Vec::new();
    for k in 0..16u8 {
        g.extend([184, 0, 2 + k]);
    }
    g.push(177);
    methods.push(method(&g, 0, 0));
    for _ in 0..16 {
        methods.push(method(&[177], 0, 0));
    }
    let mut cp = vec![Cp::Method(1)];
    cp.extend((0..16).map(|k| Cp::Method(2 + k)));
    let img = image(methods, cp).build();
    let (r, out) = run(img.words, 1 << 30);
    let r = r.expect("runs");
    assert_eq!(out, "JVM exit!");
    let boot_words = (3 + print("JVM exit!").len() + 3).div_ceil(4) as u64;
    let g_words = (16 * 3 + 1_usize).div_ceil(4) as u64;
    let load = |n: u64| 8 + 2 * n;
    // 17 invokes at 74, all missing but short; 16 returns of one-word
    // methods into g: g is evicted by the 16th callee, so the last of them misses.
    let invokes = 17 * 74 + load(g_words).saturating_sub(37) + 16 * load(1).saturating_sub(37);
    let returns_into_g = 16 * 21 + load(g_words).saturating_sub(9);
    // g's return into boot: boot was evicted too.
    let return_into_boot = 21 + load(boot_words).saturating_sub(9);
    assert_eq!(
        r.cycles,
        invokes + returns_into_g + return_into_boot + print_cycles("JVM exit!")
    );
}

#[test]
fn a_bytecode_jop_runs_in_java_calls_its_routine_through_the_jump_table() {
    // lmul goes to the stub (jjp + 2 * 105), which returns at once (the
    // stack is left as it was: this checks the call, not the multiply).
    let mut boot = vec![105];
    boot.extend(exit_code());
    let img = image(vec![method(&boot, 0, 0)], vec![]).build();
    let (r, out) = run(img.words, 1 << 30);
    let r = r.expect("runs");
    assert_eq!(out, "JVM exit!");
    // The dispatch (80), the stub's return (21; boot still cached), uncharged invoke.
    assert_eq!(r.cycles, 80 + 21 + print_cycles("JVM exit!"));
}

#[test]
fn a_null_reference_raises_the_exception_through_the_runtimes_helper() {
    // getfield 0 of null: the next bytecode becomes the helper's invoke (sys_exc).
    let mut boot = vec![1, 180, 0, 0, 0];
    boot.extend(print("not reached"));
    let img = image(vec![method(&boot, 0, 0)], vec![]).build();
    let (r, out) = run(img.words, 1 << 30);
    assert_eq!(out, "JVM exit!");
    // aconst_null 1, getfield 10, sys_exc 80 (its invoke uncharged), then the helper's printing.
    assert_eq!(r.expect("runs").cycles, 1 + 10 + 80 + print_cycles("JVM exit!"));
}

#[test]
fn invokevirtual_dispatches_through_the_objects_method_table_and_fields_go_through_its_handle() {
    // boot: r = static 0; r.m() prints the object's field 1 (8) + '0'.
    let mut boot = vec![224, 0, 2, 182, 0, 1]; // getstatic_ref 2; invokevirtual #1
    boot.extend(exit_code());
    let mut m = vec![42, 180, 0, 1, 16, 48, 96, 17, 0xff, 0x91, 210, 177]; // aload_0 getfield 1 bipush '0' iadd ...
    m.extend([0; 4]);
    let img = image(
        vec![method(&boot, 0, 0), method(&m, 1, 0)],
        vec![Cp::Virtual { index: 1, args: 1 }],
    )
    .build();
    let (r, out) = run(img.words, 1 << 30);
    r.expect("runs");
    assert_eq!(out, "8JVM exit!");
}

#[test]
fn an_endless_loop_stops_at_the_cycle_limit_naming_the_method() {
    // nop; goto -1: a loop the board cannot tell from a long one.
    let img = image(vec![method(&[0, 167, 0xff, 0xff], 0, 0)], vec![]).build();
    let boot_struct = img.struct_of[0];
    let e = run(img.words, 100_000).0.unwrap_err();
    assert!(matches!(e, EmuError::CycleLimit { limit: 100_000, .. }), "{e}");
    assert!(e.to_string().contains(&format!("method at word {boot_struct}")), "{e}");
}

#[test]
fn a_jump_to_itself_stops_at_once_as_a_hang_naming_the_method() {
    // JOP's runtime parks a program it cannot go on with in `for (;;);`.
    let img = image(vec![method(&[0, 167, 0, 0], 0, 0)], vec![]).build();
    let boot_struct = img.struct_of[0];
    let e = run(img.words, 1 << 40).0.unwrap_err();
    assert!(matches!(e, EmuError::Hang { .. }), "{e}");
    let text = e.to_string();
    assert!(
        text.contains(&format!("method at word {boot_struct}")) && text.contains("bytecode index 1"),
        "{text}"
    );
}

#[test]
fn an_invoke_of_a_method_without_code_names_its_structure() {
    let boot = vec![184, 0, 1];
    let mut img = image(vec![method(&boot, 0, 0), method(&[177], 0, 0)], vec![Cp::Method(1)]).build();
    let missing = img.struct_of[1];
    img.words[missing as usize] = 0; // as the linker writes an abstract method
    let e = run(img.words, 1 << 30).0.unwrap_err();
    assert!(
        e.to_string().contains(&format!(
            "invoke of the method structure at word {missing}, which has no code"
        )),
        "{e}"
    );
}

#[test]
fn what_is_not_a_jop_image_is_refused_naming_the_word() {
    let short = run(vec![3, 1, 0], 1 << 30).0.unwrap_err();
    assert_eq!(
        short.to_string(),
        "word 0: an image of 3 words is too short to be a JOP image"
    );
    let mut words = vec![0u32; 20];
    words[0] = 20;
    words[1] = 0x4A43_4231; // a class bundle's magic
    let bundle = run(words, 1 << 30).0.unwrap_err();
    assert!(bundle
        .to_string()
        .starts_with("word 1: the special pointers at word 1245921841 lie outside the image"));
}

#[test]
fn code_that_jumps_out_of_its_method_is_stopped_where_it_jumps() {
    let img = image(vec![method(&[167, 0x10, 0], 0, 0)], vec![]).build();
    let e = run(img.words, 1 << 30).0.unwrap_err();
    assert!(
        e.to_string().contains("ran past the end of the method's 4 code bytes"),
        "{e}"
    );
}

#[test]
fn ldc_reads_the_constant_pool_of_the_running_method() {
    let mut boot = vec![18, 1, 17, 0xff, 0x91, 210]; // ldc #1; sipush -111; jopsys_wr
    boot.extend(exit_code());
    let img = image(vec![method(&boot, 0, 0)], vec![Cp::Int(i32::from(b'Z'))]).build();
    let (r, out) = run(img.words, 1 << 30);
    assert_eq!(out, "ZJVM exit!");
    // ldc costs 7 + r in the tree's table.
    assert_eq!(r.expect("runs").cycles, 8 + 3 + 7 + print_cycles("JVM exit!"));
}

#[test]
fn reads_of_the_microsecond_counter_are_kept_with_the_method_that_read_them() {
    // sipush -127 (IO_US_CNT); jopsys_rd; pop, twice; and the cycle counter once.
    let mut boot = vec![
        17, 0xff, 0x81, 209, 87, 17, 0xff, 0x81, 209, 87, 17, 0xff, 0x80, 209, 87,
    ];
    boot.extend(exit_code());
    let img = image(vec![method(&boot, 0, 0)], vec![]).build();
    let (r, out) = run(img.words, 1 << 30);
    assert_eq!(out, "JVM exit!");
    let r = r.expect("runs");
    assert_eq!(r.clock_reads.len(), 2, "{:?}", r.clock_reads);
    // Both from boot's code, at the counter's microseconds then.
    let code = r.clock_reads[0].0;
    assert!(r.clock_reads.iter().all(|&(m, _)| m == code));
    let us = |cycles: f64| (cycles / config(0).clock_mhz) as i32;
    assert!(r.clock_reads[0].1 <= r.clock_reads[1].1);
    assert!(r.clock_reads[1].1 <= us(r.cycles as f64));
}

#[test]
fn a_traced_run_takes_the_cycles_between_two_counter_reads_apart_by_opcode() {
    // sipush -128 (IO_CNT); jopsys_rd; pop; then iconst_1, pop three times;
    // the counter again.
    let mut boot = vec![17, 0xff, 0x80, 209, 87];
    for _ in 0..3 {
        boot.extend([4, 87]);
    }
    boot.extend([17, 0xff, 0x80, 209, 87]);
    boot.extend(exit_code());
    let img = image(vec![method(&boot, 0, 0)], vec![]).build();
    let mut out = Vec::new();
    let r = run_image(&JopImage { words: img.words }, &config(1 << 30), true, None, &mut |b| {
        out.extend_from_slice(b)
    })
    .expect("runs");
    assert_eq!(r.counter_reads.len(), 2);
    let measured = u64::from(r.counter_reads[1].value.wrapping_sub(r.counter_reads[0].value));
    let region = region_by_opcode(&r.counter_reads, measured).expect("the two reads");
    // From the first read's bytecode up to the second's.
    let counts: Vec<(usize, u64)> = (0..256)
        .filter(|&k| region[k].count > 0)
        .map(|k| (k, region[k].count))
        .collect();
    assert_eq!(counts, vec![(4, 3), (17, 1), (87, 4), (209, 1)]);
    assert_eq!(region.iter().map(|o| o.cycles).sum::<u64>(), measured);
    assert!(region_by_opcode(&r.counter_reads, measured + 1).is_none());
    // An untraced run keeps none.
    assert!(run(img_words_again(), 1 << 30)
        .0
        .expect("runs")
        .counter_reads
        .is_empty());
}

fn img_words_again() -> Vec<u32> {
    let mut boot = vec![17, 0xff, 0x80, 209, 87];
    boot.extend(exit_code());
    image(vec![method(&boot, 0, 0)], vec![]).build().words
}

#[test]
fn the_resolved_table_is_the_trees_for_every_opcode_an_image_can_hold() {
    // The tree's own table at r=1, w=2 (its WCETInstruction, with JopSim's
    // 80 for bytecodes it runs in Java), for the opcodes whose cost the
    // machine does not take from elsewhere; spot checks across each kind.
    let t = CycleTable::new(&config(1).model).unwrap();
    let tree = [
        (0u8, 1u32),
        (16, 2),
        (17, 3),
        (18, 8),
        (20, 17),
        (46, 9),
        (47, 47),
        (79, 14),
        (80, 52),
        (96, 1),
        (97, 26),
        (101, 38),
        (104, 19),
        (105, 80),
        (108, 80),
        (121, 28),
        (131, 8),
        (133, 5),
        (145, 80),
        (146, 2),
        (148, 85),
        (153, 4),
        (167, 4),
        (170, 80),
        (172, 23),
        (177, 21),
        (178, 6),
        (179, 7),
        (180, 10),
        (181, 12),
        (182, 100),
        (183, 74),
        (184, 74),
        (185, 115),
        (186, 80),
        (187, 80),
        (188, 80),
        (190, 7),
        (194, 19),
        (195, 20),
        (196, 80),
        (200, 80),
        (209, 5),
        (210, 7),
        (213, 3),
        (215, 3),
        (216, 4),
        (219, 15),
        (222, 80),
        (223, 5),
        (224, 6),
        (225, 80),
        (226, 10),
        (228, 17),
        (229, 19),
        (230, 28),
        (231, 34),
        (232, 80),
        (233, 11),
        (234, 15),
        (236, 80),
        (238, 7),
        (239, 8),
        (241, 80),
        (254, 80),
    ];
    for (op, cycles) in tree {
        assert_eq!(
            t.fixed[op as usize],
            cycles,
            "opcode {op} ({})",
            timing::opcode_name(op)
        );
    }
}

/// A working image (an invokestatic, a static, an invokevirtual, a routine
/// in Java, a field) with the words `edits` names overwritten (`at` taken
/// modulo its length): code, structures, pointers and constants all become
/// garbage somewhere.
fn damaged(edits: Vec<(usize, u32)>) -> Vec<u32> {
    let mut boot = vec![184, 0, 1, 224, 0, 2, 182, 0, 2, 105, 1, 180, 0, 0];
    boot.extend(exit_code());
    let mut words = image(
        vec![method(&boot, 0, 0), method(&[4, 172], 0, 0)],
        vec![Cp::Method(1), Cp::Virtual { index: 1, args: 1 }],
    )
    .build()
    .words;
    let n = words.len();
    for (at, v) in edits {
        words[at % n] = v;
    }
    words
}

/// The run of `words` on the fast path and on the handlers alone (a traced
/// run stops for attention at every bytecode, so it never takes the fast
/// path): the same cycles, bytecodes, cache loads, output and error.
fn runs_alike(words: Vec<u32>, limit: u64) -> Result<ImageRun, EmuError> {
    let cfg = config(limit);
    let (mut fast_out, mut slow_out) = (Vec::new(), Vec::new());
    let fast = run_image(&JopImage { words: words.clone() }, &cfg, false, None, &mut |b| {
        fast_out.extend_from_slice(b)
    });
    let slow = run_image(&JopImage { words }, &cfg, true, None, &mut |b| {
        slow_out.extend_from_slice(b)
    });
    let slow = slow.map(|r| ImageRun {
        by_method: None,
        counter_reads: Vec::new(),
        ..r
    });
    assert_eq!(fast, slow, "the fast path and the handlers part");
    assert_eq!(String::from_utf8_lossy(&fast_out), String::from_utf8_lossy(&slow_out));
    fast
}

/// Bytecodes of the fast path, with operands that keep them mostly in
/// bounds (the rest go to their handlers, which must say the same).
fn fast_path_bytecode() -> impl proptest::strategy::Strategy<Value = Vec<u8>> {
    use proptest::prelude::*;
    prop_oneof![
        (0u8..=8).prop_map(|op| vec![op]),
        any::<u8>().prop_map(|v| vec![16, v]),
        any::<[u8; 2]>().prop_map(|[a, b]| vec![17, a, b]),
        (0u8..6).prop_map(|n| vec![21, n]),
        (26u8..=29).prop_map(|op| vec![op]),
        (0u8..6).prop_map(|n| vec![54, n]),
        (59u8..=62).prop_map(|op| vec![op]),
        (0u8..6, any::<u8>()).prop_map(|(n, d)| vec![132, n, d]),
        prop::sample::select(vec![87u8, 89, 96, 100, 104, 116, 120, 122, 124, 126, 128, 130]).prop_map(|op| vec![op]),
        prop::sample::select(vec![9u8, 10, 97, 101, 127, 129, 131, 133, 136, 88]).prop_map(|op| vec![op]),
        // The long shifts (a count pushed first, often past 63).
        (any::<u8>(), prop::sample::select(vec![121u8, 123, 125])).prop_map(|(n, op)| vec![16, n, op]),
        (0u8..2).prop_map(|n| vec![30 + n]),
        (0u8..2).prop_map(|n| vec![63 + n]),
        // The indexed (two-byte) loads and stores of every kind, and the
        // constant pool's loads: each length is its own form in the loop.
        (0u8..5, prop::sample::select(vec![22u8, 24, 55, 57])).prop_map(|(n, op)| vec![op, n]),
        (0u8..6, prop::sample::select(vec![23u8, 25, 56, 58])).prop_map(|(n, op)| vec![op, n]),
        (0u8..4).prop_map(|i| vec![18, i]),
        (0u8..4).prop_map(|i| vec![19, 0, i]),
        (153u8..=167, prop::sample::select(vec![3u8, 6])).prop_map(|(op, off)| vec![op, 0, off]),
        (0u8..12).prop_map(|a| vec![178, 0, a]),
        (2u8..12).prop_map(|a| vec![179, 0, a]),
        (0u8..3).prop_map(|f| vec![180, 0, f]),
        (0u8..3).prop_map(|f| vec![181, 0, f]),
        prop::sample::select(vec![46u8, 79, 190, 209, 210]).prop_map(|op| vec![op]),
        // A constant and an integer operation, which the loop fuses.
        (
            prop_oneof![
                (2u8..=8).prop_map(|op| vec![op]),
                any::<u8>().prop_map(|v| vec![16, v]),
                any::<[u8; 2]>().prop_map(|[a, b]| vec![17, a, b]),
            ],
            prop::sample::select(vec![96u8, 100, 104, 120, 122, 124, 126, 128, 130]),
        )
            .prop_map(|(mut c, op)| {
                c.push(op);
                c
            }),
        // The top's low byte printed, so that the values computed show.
        Just(vec![89, 17, 0xff, 0x91, 210]),
    ]
}

/// One method of a generated call chain: its arguments (`this` not
/// counted), its locals past them, what it returns (0 void, 1 int, 2 long,
/// 3 reference) and whether its caller invokes it virtually.
type ChainLink = (u32, u32, u8, bool);

/// An image whose boot calls a recursive method `depth` deep (one argument,
/// `rec_locals` locals past it: deep enough, its frames run off the
/// stack), then the first method of `chain`, each of which calls the next.
fn call_chain(depth: u8, rec_locals: u32, chain: &[ChainLink]) -> Vec<u32> {
    // Method 1, cp 1: r(n) = n == 0 ? 0 : r(n - 1) + 1.
    let rec = vec![26, 153, 0, 12, 26, 4, 100, 184, 0, 1, 4, 96, 172, 3, 172];
    let mut cp = vec![Cp::Method(1)];
    // Cp 2 + 2j: chain method j (method 2 + j) as static; 3 + 2j: as virtual.
    for (j, &(args, ..)) in chain.iter().enumerate() {
        cp.push(Cp::Method(2 + j));
        cp.push(Cp::Virtual {
            index: 2 + j as u32,
            args: args + 1,
        });
    }
    // The code that calls link j and drops what it returns.
    let call = |j: usize| -> Vec<u8> {
        let (args, _, kind, virt) = chain[j];
        let mut c = Vec::new();
        if virt {
            c.extend([224, 0, 2]); // getstatic_ref: the object
        }
        c.extend(std::iter::repeat_n(5u8, args as usize)); // iconst_2
        c.extend([if virt { 182 } else { 184 }, 0, (2 + 2 * j + usize::from(virt)) as u8]);
        match kind {
            1 | 3 => c.push(87),
            2 => c.push(88),
            _ => {}
        }
        c
    };
    let mut boot = vec![16, depth, 184, 0, 1, 87];
    if !chain.is_empty() {
        boot.extend(call(0));
    }
    boot.extend(exit_code());
    let mut methods = vec![method(&boot, 0, 4), method(&rec, 1, rec_locals)];
    for (j, &(args, locals, kind, virt)) in chain.iter().enumerate() {
        let mut c = if j + 1 < chain.len() { call(j + 1) } else { Vec::new() };
        // Touch the last local, past the arguments where there are some.
        let last = args + u32::from(virt) + locals;
        if last > 0 {
            c.extend([21, (last - 1) as u8, 87]);
        }
        c.extend(match kind {
            0 => vec![177],
            1 => vec![6, 172],
            2 => vec![10, 173],
            _ => vec![1, 176],
        });
        methods.push(method(&c, args + u32::from(virt), locals));
    }
    image(methods, cp).build().words
}

#[test]
fn a_recursion_runs_as_its_handlers_do_to_the_stacks_end() {
    // Shallow: it returns.
    let r = runs_alike(call_chain(5, 2, &[(2, 1, 2, false), (0, 3, 3, true)]), 1 << 20).expect("runs");
    assert!(r.all_bytecodes > 5 * 6, "{} bytecodes", r.all_bytecodes);
    // Deep: its frames run off the 256-word stack, the same way on both.
    let e = runs_alike(call_chain(120, 3, &[]), 1 << 20).unwrap_err();
    assert!(e.to_string().contains("stack"), "{e}");
}

#[test]
fn a_loop_of_fast_path_bytecodes_runs_as_its_handlers_do() {
    // sum = 0; for (i = 0; i < 3000; i++) { sum += i * 3 ^ sum; static 1 = sum; }
    // then prints sum & 63 + '0' and exits.
    let mut boot = vec![
        3, 59, // iconst_0 istore_0 (sum)
        3, 60, // iconst_0 istore_1 (i)
        // loop at 4:
        27, 17, 0x0b, 0xb8, 162, 0, 24, // iload_1 sipush 3000 if_icmpge +24 (to 32)
        26, 27, 6, 104, 26, 130, 96, 59, // sum = sum + (i * 3 ^ sum)
        26, 179, 0, 3, // putstatic 3
        132, 1, 1, // iinc 1 1
        167, 0xff, 0xea, // goto -22 (to 4)
        0, 0, 0, // nop x3 (never run)
        // 32:
        178, 0, 3, 16, 63, 126, 16, 48, 96, 17, 0xff, 0x91, 210,
    ];
    boot.extend(exit_code());
    let img = image(vec![method(&boot, 0, 4)], vec![]).build();
    let r = runs_alike(img.words, 1 << 30).expect("runs");
    assert!(r.all_bytecodes > 3000 * 15, "{} bytecodes", r.all_bytecodes);
}

#[test]
fn a_long_load_onto_its_own_low_word_reads_it_after_the_push_on_both_ways() {
    // Found by the property tests (CI): with the top popped down to the
    // frame's lowest (`vp + 4`), `lload 4` pushes its high word onto local
    // 5 before it reads it; the fast path read both words first.
    let mut code = vec![
        16, b'A', 54, 4, 16, b'B', 54, 5, 88, 88, 88, 22, 4, 89, 17, 255, 145, 210,
    ];
    code.extend(exit_code());
    let img = image(vec![method(&code, 0, 6)], vec![]).build();
    let _ = runs_alike(img.words.clone(), 50_000);
    let (_, out) = run(img.words, 50_000);
    assert!(out.starts_with('A'), "{out:?}");
}

#[test]
fn a_method_without_code_bytes_stops_at_its_first_fetch_on_both_ways() {
    // Found by the property tests: a method of no code words left the fast
    // path's bounds wrapping below 0.
    let img = image(vec![method(&[], 0, 0)], vec![]).build();
    let e = runs_alike(img.words, 20_000).unwrap_err();
    assert!(
        e.to_string().contains("ran past the end of the method's 0 code bytes"),
        "{e}"
    );
}

mod fast_path {
    use super::*;
    use proptest::prelude::*;

    /// `x + 1`, `x << 3`, `x & 0x1f0`, `x - -7`: the fused constant and
    /// operation compute what the two bytecodes do, in their cycles.
    #[test]
    fn a_constant_and_its_operation_run_as_one() {
        let show = [89u8, 17, 0xff, 0x91, 210];
        let mut code = vec![16, 40, 4, 96];
        code.extend(show);
        code.extend([6, 120]);
        code.extend(show);
        code.extend([17, 1, 0xf0, 126]);
        code.extend(show);
        code.extend([16, 0xf9, 100]);
        code.extend(show);
        code.extend(exit_code());
        let img = image(vec![method(&code, 0, 0)], vec![]).build();
        let _ = runs_alike(img.words.clone(), 50_000);
        let (_, out) = run(img.words, 50_000);
        // 41, 328 (0x148: 'H'), 0x140 ('@'), 0x147 ('G').
        assert!(out.starts_with(")H@G"), "{out:?}");
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(300))]

        /// Straight-line code of the fast path's bytecodes, some of them
        /// out of bounds, underflowing the stack, or raising.
        #[test]
        fn runs_as_the_handlers_do(code in proptest::collection::vec(fast_path_bytecode(), 0..48)) {
            let mut boot: Vec<u8> = vec![16, 5, 16, 9, 16, 2];
            boot.extend(code.concat());
            boot.extend(exit_code());
            let img = image(vec![method(&boot, 0, 6)], vec![]).build();
            let _ = runs_alike(img.words, 50_000);
        }

        /// Pushes to the stack's end and past (the handlers fault there),
        /// then straight-line code: the loop leaves the top's last words
        /// to the handlers.
        #[test]
        fn runs_to_the_stacks_end_as_the_handlers_do(
            pushes in proptest::collection::vec(prop_oneof![Just(vec![4u8]), Just(vec![89u8]), Just(vec![26u8]), Just(vec![10u8])], 200..300),
            code in proptest::collection::vec(fast_path_bytecode(), 0..16),
        ) {
            let mut boot: Vec<u8> = vec![16, 5, 16, 9, 16, 2];
            boot.extend(pushes.concat());
            boot.extend(code.concat());
            boot.extend(exit_code());
            let img = image(vec![method(&boot, 0, 6)], vec![]).build();
            let _ = runs_alike(img.words, 50_000);
        }

        /// Calls and returns: a recursion of any depth (to the stack's end
        /// and past), then a chain of methods of any arguments, locals and
        /// return kinds, invoked statically and virtually.
        #[test]
        fn runs_calls_as_the_handlers_do(
            depth in any::<u8>(),
            rec_locals in 0u32..4,
            chain in proptest::collection::vec((0u32..4, 0u32..4, 0u8..4, any::<bool>()), 0..6),
        ) {
            let _ = runs_alike(call_chain(depth, rec_locals, &chain), 1 << 20);
        }

        /// A working image with words overwritten, as `never_panics` makes them.
        #[test]
        fn runs_damaged_images_as_the_handlers_do(edits in proptest::collection::vec((any::<usize>(), any::<u32>()), 1..8)) {
            let _ = runs_alike(damaged(edits), 20_000);
        }
    }
}

mod never_panics {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(200))]

        /// Any words at all: an error or a run, never a crash.
        #[test]
        fn on_any_words(words in proptest::collection::vec(any::<u32>(), 0..64)) {
            let _ = run(words, 20_000);
        }

        /// A working image with words overwritten: code, structures,
        /// pointers and constants all become garbage somewhere.
        #[test]
        fn on_a_damaged_image(edits in proptest::collection::vec((any::<usize>(), any::<u32>()), 1..8)) {
            let _ = run(damaged(edits), 20_000);
        }
    }
}
